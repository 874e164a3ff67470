use std::time::Instant;
use sweepfan::cpu::WorldBatch;
use sweepfan::{Method, Scene, SceneKind, SceneParams, WorldPairs};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let worlds: usize = args.get(1).map_or(4096, |s| s.parse().unwrap());
    let n: usize = args.get(2).map_or(64, |s| s.parse().unwrap());
    let frames: usize = args.get(3).map_or(200, |s| s.parse().unwrap());
    let mut spheres = Vec::new();
    let mut ids = Vec::new();
    for k in 0..worlds {
        let p = SceneParams::new(n, 1 + k as u64);
        let s = Scene::generate(SceneKind::Paper, &p);
        ids.extend(std::iter::repeat_n(k as u32, s.spheres.len()));
        spheres.extend(s.spheres);
    }
    let m = args.get(4).map_or("sap".to_string(), |s| s.clone());
    let mut b = if m == "auto" {
        WorldBatch::auto()
    } else {
        WorldBatch::new(Method::parse(&m).unwrap())
    };
    let mut out = WorldPairs::new();
    let mut times = Vec::new();
    for _ in 0..frames {
        let t = Instant::now();
        let s = b.find_pairs(&spheres, &ids, Some(&mut out)).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        if times.len() == 1 {
            println!("tests {} stages {:?}", s.tests, s.stages);
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "median {:.3} ms, min {:.3}, pairs {}",
        times[frames / 2],
        times[0],
        out.pairs().len()
    );
}
