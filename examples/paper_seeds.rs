use sweepfan::cpu::broad_phase;
use sweepfan::{Method, Scene, SceneKind, SceneParams};
fn main() {
    for n in [1000usize, 3000, 5000] {
        for seed in 0..8u64 {
            let mut scene = Scene::generate(SceneKind::Paper, &SceneParams::new(n, seed));
            let mut od = broad_phase(Method::OriginDistance);
            let mut xyz = broad_phase(Method::Xyz);
            let (mut a, mut b) = (0u64, 0u64);
            for _ in 0..10 {
                a += od.find_pairs(&scene.spheres, None).unwrap().tests;
                b += xyz.find_pairs(&scene.spheres, None).unwrap().tests;
                scene.step();
            }
            println!(
                "n {n} seed {seed}: od {:.0} xyz {:.0}",
                a as f64 / 10.0,
                b as f64 / 10.0
            );
        }
    }
}
