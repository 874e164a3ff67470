//! Every pair list the library returns is canonical (README, docs/design.md §2.14): the shape
//! pipelines' pairs and candidates on both backends, the box job behind its trait, the sweep's
//! one-call form and a partitioned run, each sorted with `i < j` and equal, as a set, to the
//! all-pairs oracles (boxes: the f64 oracle of `sat_oracle.rs`; polygons: exact integers); the
//! `_unordered` twins give the same set.

use crate::common::{polygon_oracle, shared_gpu};
use crate::sat_oracle::obb_expected;
use sweepfan::cpu::aabb_sweep;
use sweepfan::cpu::sat::CpuBoxPipeline;
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan::partition::{self, PartRunner, PartsReport};
use sweepfan::{Aabb, AabbOverlaps, Method, Obb, Pair, ShapeOverlaps, Sphere, Stats, cpu};
use sweepfan_scenes::boxes::{generate_polygons, random_boxes};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// Every pair `(i, j)`, `i < j`, that `touch` keeps, ascending: the oracle's list.
fn all_pairs(n: usize, touch: impl Fn(usize, usize) -> bool) -> Vec<Pair> {
    (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| touch(i, j))
        .map(|(i, j)| [i as u32, j as u32])
        .collect()
}

/// `got` is exactly `want` (canonical), with a message naming the list.
fn same(got: &[Pair], want: &[Pair], what: &str) {
    assert!(got.is_sorted(), "{what}: not in canonical order");
    assert_eq!(got, want, "{what}");
}

/// The same set as `want`, in another order (an `_unordered` list: the premise that the
/// ordered call's sort is what puts its list in order).
fn same_set(got: &[Pair], want: &[Pair], what: &str) {
    assert!(
        !got.is_sorted(),
        "{what}: sorted already, so the test cannot fail"
    );
    let mut sorted = got.to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, want, "{what}");
}

/// Candidates: canonical, without duplicates, every touching pair among them.
fn candidates_of(got: &[Pair], touching: &[Pair], what: &str) {
    assert!(
        got.windows(2).all(|w| w[0] < w[1]),
        "{what}: not in canonical order"
    );
    assert!(got.iter().all(|p| p[0] < p[1]), "{what}: a pair not i < j");
    assert!(
        touching.iter().all(|p| got.binary_search(p).is_ok()),
        "{what}: a touching pair is not a candidate"
    );
}

#[test]
fn shape_pipelines_and_the_box_job_return_canonical_lists() {
    let boxes = random_boxes(2_000, 17);
    let aabbs: Vec<Aabb> = boxes.iter().map(Obb::aabb).collect();
    let aabb_want = all_pairs(aabbs.len(), |i, j| aabbs[i].overlaps(&aabbs[j]));
    // The f64 oracle of `sat_oracle.rs` on the pairs whose bounds meet (no pair in its band).
    let box_want: Vec<Pair> = aabb_want
        .iter()
        .copied()
        .filter(|&[i, j]| {
            let answer = obb_expected(&boxes[i as usize], &boxes[j as usize]);
            answer.expect("a pair in the oracle's band")
        })
        .collect();
    let polygons = generate_polygons(SceneKind::Density, &SceneParams::new(2_000, 5)).unwrap();
    let polygon_want = all_pairs(polygons.len(), |i, j| {
        polygon_oracle(polygons[i].vertices(), polygons[j].vertices())
    });
    // Premises: lists long enough that an order of finding is not the sorted one by chance.
    assert!(box_want.len() > 500 && aabb_want.len() > box_want.len());
    assert!(polygon_want.len() > 500, "{}", polygon_want.len());

    // The shape job on either backend through its trait: the caller's list reused, counting
    // without one.
    let shape_job = |name: &str, pipeline: &mut dyn ShapeOverlaps| {
        let mut got = vec![[7, 7]];
        let stats = pipeline.obb_overlaps(&boxes, Some(&mut got)).unwrap();
        same(&got, &box_want, &format!("{name} obb_overlaps"));
        assert_eq!(stats.pairs, box_want.len() as u64, "{name}");
        let counted = pipeline.obb_overlaps(&boxes, None).unwrap();
        assert_eq!(counted.pairs, box_want.len() as u64, "{name}: counting");
        pipeline
            .polygon_overlaps(&polygons, Some(&mut got))
            .unwrap();
        same(&got, &polygon_want, &format!("{name} polygon_overlaps"));
        pipeline.obb_overlaps(&[], Some(&mut got)).unwrap();
        assert!(got.is_empty(), "{name}: no boxes, no pairs");
    };
    let mut cpu = CpuBoxPipeline::new();
    shape_job("cpu", &mut cpu);
    let mut got = Vec::new();
    cpu.aabb_overlaps(&aabbs, &mut got).unwrap();
    same(&got, &aabb_want, "cpu aabb_overlaps");
    aabb_sweep(&aabbs, &mut got).unwrap();
    same(&got, &aabb_want, "aabb_sweep");
    let mut sweep = cpu::BoxSweep::new();
    AabbOverlaps::aabb_overlaps(&mut sweep, &aabbs, &mut got).unwrap();
    same(&got, &aabb_want, "cpu box job");
    sweep.aabb_overlaps_unordered(&aabbs, &mut got).unwrap();
    same_set(&got, &aabb_want, "cpu box job, unordered");

    let Some(ctx) = shared_gpu() else { return };
    let mut gpu = GpuBoxPipeline::new(ctx, Proxy::Aabb).unwrap();
    shape_job("gpu", &mut gpu);
    // Candidates (bounds with margins, docs/design.md §4.3): sorted, and every touching pair.
    gpu.polygon_candidates(&polygons, &mut got).unwrap();
    candidates_of(&got, &polygon_want, "gpu polygon_candidates");
    gpu.obb_candidates(&boxes, &mut got).unwrap();
    candidates_of(&got, &box_want, "gpu obb_candidates");
    GpuBoxPipeline::aabb_overlaps(&mut gpu, &aabbs, &mut got).unwrap();
    same(&got, &aabb_want, "gpu aabb_overlaps");
    AabbOverlaps::aabb_overlaps(&mut gpu, &aabbs, &mut got).unwrap();
    same(&got, &aabb_want, "gpu box job");
    gpu.aabb_overlaps_unordered(&aabbs, &mut got).unwrap();
    same_set(&got, &aabb_want, "gpu box job, unordered");
}

#[test]
fn a_partitioned_run_returns_a_canonical_list() {
    let scene = Scene::generate(SceneKind::Clusters, &SceneParams::new(3_000, 4));
    let spheres: &[Sphere] = &scene.spheres;
    let want = all_pairs(spheres.len(), |i, j| {
        crate::common::touch_oracle(&spheres[i], &spheres[j])
    });
    assert!(want.len() > 1000, "{}", want.len());
    // Each part's list in the method's own order: the join is not sorted unless sorted.
    let mut sap = cpu::broad_phase(Method::Sap);
    let mut run = |part: &[Sphere], out: &mut Vec<Pair>| sap.find_pairs_unordered(part, Some(out));
    let mut got = Vec::new();
    // `partition::find_pairs` or its `_unordered` twin.
    type FindPairs = fn(
        &[Sphere],
        Option<&mut Vec<Pair>>,
        usize,
        u64,
        &mut [&mut PartRunner<'_>],
    ) -> sweepfan::Result<(Stats, PartsReport)>;
    // The list's check: the canonical list, or the same set in the parts' order.
    type Check = fn(&[Pair], &[Pair], &str);
    let calls: [(FindPairs, Check, &str); 2] = [
        (partition::find_pairs, same, "partition::find_pairs"),
        (
            partition::find_pairs_unordered,
            same_set,
            "partition::find_pairs_unordered",
        ),
    ];
    for (find, check, what) in calls {
        let (stats, report) = find(
            spheres,
            Some(&mut got),
            400,
            u64::MAX,
            &mut [&mut run as &mut PartRunner],
        )
        .unwrap();
        assert!(report.parts > 4, "{what}: {}", report.parts);
        assert_eq!(stats.pairs, want.len() as u64, "{what}");
        check(&got, &want, what);
    }
}
