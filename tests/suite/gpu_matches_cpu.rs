//! Every method: GPU pairs and test counts equal the CPU reference's, at the sizes the issue
//! names (paper box n = 50, 1000, 5000; density n = 200k), over two frames (one at 200k) so
//! resident buffers are reused. Fails (not skips) without an adapter unless SWEEPFAN_NO_GPU=1.

use std::sync::Arc;
use sweepfan::gpu::GpuBroadPhase;
use sweepfan::gpu::context::test_gpu;
use sweepfan::run::verify::compare_pairs;
use sweepfan::{BroadPhase, Method, Scene, SceneKind, SceneParams, canonicalize};

fn check_scene(
    ctx: &Arc<sweepfan::gpu::GpuContext>,
    scene: &Scene,
    methods: &[Method],
    frames: usize,
) {
    for &m in methods {
        let mut cpu = sweepfan::cpu::broad_phase(m);
        let mut gpu = GpuBroadPhase::new(ctx.clone(), m).unwrap();
        let mut s = scene.clone();
        for frame in 0..frames {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let sa = cpu.find_pairs(&s.spheres, Some(&mut a)).unwrap();
            let sb = gpu.find_pairs(&s.spheres, Some(&mut b)).unwrap();
            canonicalize(&mut a);
            canonicalize(&mut b);
            let cmp = compare_pairs(&s.spheres, &a, &b);
            assert!(
                cmp.is_ok(),
                "{m} {} n={} frame {frame}: {}",
                scene.name,
                s.len(),
                cmp.summary()
            );
            // Near-touching pairs may differ between devices; counts then differ by as many.
            if cmp.near_touching.is_empty() {
                assert_eq!(
                    sa.tests,
                    sb.tests,
                    "{m} {} n={} frame {frame}",
                    scene.name,
                    s.len()
                );
                assert_eq!(sa.pairs, sb.pairs);
            }
            assert!(sb.stages.iter().any(|st| st.stage == "total"));
            s.step();
        }
    }
}

#[test]
fn paper_box_every_method_gpu_equals_cpu() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    for n in [50, 1000, 5000] {
        let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(n, 11));
        check_scene(&ctx, &scene, &Method::ALL, 2);
    }
}

#[test]
fn density_200k_gpu_equals_cpu() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    let scene = Scene::generate(SceneKind::Density, &SceneParams::new(200_000, 5));
    // brute_force (2e10 tests a frame) is left to smaller scenes.
    let methods: Vec<Method> = Method::ALL
        .into_iter()
        .filter(|&m| m != Method::BruteForce)
        .collect();
    // One frame: about a minute on lavapipe already.
    check_scene(&ctx, &scene, &methods, 1);
}

#[test]
fn adversarial_scenes_gpu_equals_cpu() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    for kind in [
        SceneKind::Clusters,
        SceneKind::LineX,
        SceneKind::MixedRadii,
        SceneKind::Giant,
    ] {
        let scene = Scene::generate(kind, &SceneParams::new(3000, 2));
        check_scene(&ctx, &scene, &Method::ALL, 2);
    }
}
