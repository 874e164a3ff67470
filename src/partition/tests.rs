//! The partition rule against an unpartitioned brute force: every pair exactly once, on
//! scenes that stress each part of the rule (ghosts, chunks, splits, giants, coincident
//! points, a wide range of coordinates), with one runner and several.

use super::*;
use crate::broadphase::canonicalize;
use crate::error::Exceeds;
use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Every touching pair of `spheres` by testing all of them: the oracle, and the runner.
pub(crate) fn brute(spheres: &[Sphere], out: &mut Vec<Pair>) -> Stats {
    out.clear();
    let n = spheres.len();
    for i in 0..n {
        for j in i + 1..n {
            if spheres[i].touches(&spheres[j]) {
                out.push([i as u32, j as u32]);
            }
        }
    }
    Stats {
        tests: (n * n.saturating_sub(1) / 2) as u64,
        pairs: out.len() as u64,
        stages: Vec::new(),
        chosen: None,
    }
}

/// A runner that refuses parts of more than `objects` objects or more than `pairs` pairs, as
/// a device's bindings (of spheres, of the pair list) do.
fn limited(
    objects: usize,
    pairs: usize,
) -> impl FnMut(&[Sphere], &mut Vec<Pair>) -> Result<Stats> + Send {
    move |part, out| {
        let binding = |needed, allowed| Exceeds::Binding { needed, allowed };
        refuse_over(part.len(), objects, binding, "objects")?;
        let stats = brute(part, out);
        let pair_list = |pairs: u64, allowed: u64| binding(pairs * 8, allowed * 8);
        refuse_over(out.len(), pairs, pair_list, "pairs")?;
        Ok(stats)
    }
}

/// A too-large error when `count` (of `what`) is over `allowed`: `exceeds(count, allowed)`
/// names the limit.
fn refuse_over(
    count: usize,
    allowed: usize,
    exceeds: impl Fn(u64, u64) -> Exceeds,
    what: &str,
) -> Result<()> {
    if count > allowed {
        return Err(Error::too_large(
            exceeds(count as u64, allowed as u64),
            format!("{count} {what}"),
        ));
    }
    Ok(())
}

fn expected(spheres: &[Sphere]) -> Vec<Pair> {
    let mut out = Vec::new();
    brute(spheres, &mut out);
    out
}

/// Runs the partitioned search and checks its pairs: equal to the brute force's, each once.
fn check(
    spheres: &[Sphere],
    max_objects: usize,
    runners: &mut [&mut PartRunner<'_>],
) -> PartsReport {
    let mut got = Vec::new();
    let (stats, report) =
        find_pairs(spheres, Some(&mut got), max_objects, u64::MAX, runners).unwrap();
    let before = got.len();
    canonicalize(&mut got);
    got.dedup();
    assert_eq!(got.len(), before, "a pair was found twice");
    assert_eq!(got, expected(spheres));
    assert_eq!(stats.pairs, got.len() as u64);
    // Count-only gives the same count.
    let (count, _) = find_pairs(spheres, None, max_objects, u64::MAX, runners).unwrap();
    assert_eq!(count.pairs, stats.pairs);
    report
}

pub(super) fn uniform(n: usize, side: f32, radius: f32, seed: u64) -> Vec<Sphere> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let c = Vec3::new(rng.random(), rng.random(), rng.random()) * side;
            Sphere::new(c, radius)
        })
        .collect()
}

pub(super) fn clustered(n: usize, seed: u64) -> Vec<Sphere> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let centres: Vec<Vec3> = (0..8)
        .map(|_| Vec3::new(rng.random(), rng.random(), rng.random()) * 100.0)
        .collect();
    (0..n)
        .map(|i| {
            let offset = Vec3::new(rng.random(), rng.random(), rng.random()) * 6.0;
            Sphere::new(centres[i % 8] + offset, 0.5)
        })
        .collect()
}

pub(super) fn mixed_radii(n: usize, seed: u64) -> Vec<Sphere> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let c = Vec3::new(rng.random(), rng.random(), rng.random()) * 60.0;
            let r = 0.1f32 * 100f32.powf(rng.random::<f32>());
            Sphere::new(c, r)
        })
        .collect()
}

#[test]
fn one_runner_matches_brute_force_on_every_scene() {
    let scenes = [
        ("uniform", uniform(2000, 40.0, 1.0, 1)),
        ("clustered", clustered(1500, 2)),
        ("mixed radii", mixed_radii(1500, 3)),
        (
            "line",
            (0..800)
                .map(|i| Sphere::new(Vec3::new(i as f32 * 1.5, 0.0, 0.0), 1.0))
                .collect(),
        ),
    ];
    for (name, spheres) in &scenes {
        for max_objects in [2, 7, 64, 300, 5000] {
            let mut run = |p: &[Sphere], o: &mut Vec<Pair>| Ok(brute(p, o));
            let report = check(spheres, max_objects, &mut [&mut run]);
            assert!(report.parts >= 1, "{name}");
            if max_objects < 300 {
                assert!(report.parts > 2, "{name} at {max_objects}: {report:?}");
            }
        }
    }
}

#[test]
fn parts_that_do_not_fit_are_split_until_they_do() {
    let spheres = clustered(1200, 4);
    let mut run = limited(40, 60);
    let report = check(&spheres, 1000, &mut [&mut run]);
    assert!(report.splits > 0 && report.largest <= 40, "{report:?}");
}

#[test]
fn coincident_points_split_their_ghosts() {
    // Every pair touches: a block's ghosts are every later object, in chunks.
    let spheres = vec![Sphere::new(Vec3::splat(3.0), 0.0); 300];
    let mut run = limited(64, 500);
    let report = check(&spheres, 64, &mut [&mut run]);
    assert!(report.ghosts > 0 && report.splits > 0, "{report:?}");
}

#[test]
fn giants_are_tested_in_their_own_pass() {
    let mut spheres = uniform(1500, 50.0, 0.5, 5);
    spheres[10] = Sphere::new(Vec3::splat(25.0), 20.0);
    spheres[900] = Sphere::new(Vec3::splat(30.0), 15.0);
    spheres.push(Sphere::new(Vec3::splat(-200.0), 40.0)); // a giant touching nothing
    let mut run = |p: &[Sphere], o: &mut Vec<Pair>| Ok(brute(p, o));
    let report = check(&spheres, 100, &mut [&mut run]);
    assert_eq!(report.giants, 3);
}

#[test]
fn pairs_at_the_edge_of_touching_are_found_once() {
    // Spheres exactly touching across many part boundaries, at large and small scales.
    for scale in [1e-20f32, 1.0, 3e5] {
        let spheres: Vec<Sphere> = (0..500)
            .map(|i| Sphere::new(Vec3::new(i as f32 * 2.0 * scale, 0.0, 0.0), scale))
            .collect();
        let mut run = |p: &[Sphere], o: &mut Vec<Pair>| Ok(brute(p, o));
        check(&spheres, 10, &mut [&mut run]);
        // Neighbours touch where the products are exact (most of them at every scale).
        assert!(expected(&spheres).len() > 300, "scale {scale}");
    }
}

#[test]
fn several_runners_share_the_parts() {
    let spheres = mixed_radii(2000, 6);
    let mut a = limited(120, 400);
    let mut b = limited(120, 400);
    let mut c = |p: &[Sphere], o: &mut Vec<Pair>| Ok(brute(p, o));
    let report = check(&spheres, 100, &mut [&mut a, &mut b, &mut c]);
    assert_eq!(report.devices, 3);
}

#[test]
fn a_runner_error_ends_the_run() {
    let spheres = uniform(500, 20.0, 1.0, 7);
    // A runner that fails on its second part (which runner takes which part is up to the
    // threads, so both fail alike).
    let failing = || {
        let mut calls = 0;
        move |p: &[Sphere], o: &mut Vec<Pair>| -> Result<Stats> {
            calls += 1;
            if calls == 2 {
                return Err(Error::gpu(crate::error::GpuFailure::Device, "device lost"));
            }
            Ok(brute(p, o))
        }
    };
    let (mut a, mut b) = (failing(), failing());
    let err = find_pairs(&spheres, None, 50, u64::MAX, &mut [&mut a, &mut b]).unwrap_err();
    assert!(err.to_string().contains("device lost"), "{err}");
    // A runner that cannot take even two objects: TooLarge, named.
    let mut tiny = limited(1, 0);
    let err = find_pairs(&spheres, None, 50, u64::MAX, &mut [&mut tiny]).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
}

#[test]
fn a_runner_that_panics_ends_the_run_with_its_panic() {
    let spheres = uniform(500, 20.0, 1.0, 8);
    // Both runners hold a part before one panics; the other then runs out of parts while the
    // panicked one still counts as running.
    let both = std::sync::Barrier::new(2);
    let mut panicking = |_: &[Sphere], _: &mut Vec<Pair>| -> Result<Stats> {
        both.wait();
        panic!("boom")
    };
    let mut first = true;
    let mut fine = |p: &[Sphere], o: &mut Vec<Pair>| {
        if std::mem::take(&mut first) {
            both.wait();
        }
        Ok(brute(p, o))
    };
    // The other runner must not wait forever for the part that panicked.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        find_pairs(
            &spheres,
            None,
            20,
            u64::MAX,
            &mut [&mut panicking, &mut fine],
        )
    }));
    let payload = outcome.expect_err("the panic reaches the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
}

#[test]
fn outliers_do_not_choose_the_split_axis() {
    // A slab thin in x with two far outliers on x: split along x, every block would reach
    // every later object. The parts must stay near their size.
    let mut spheres = uniform(4000, 200.0, 1.0, 9);
    for s in &mut spheres {
        s.center.x *= 0.01;
    }
    spheres.push(Sphere::new(Vec3::new(-1e6, 0.0, 0.0), 1.0));
    spheres.push(Sphere::new(Vec3::new(1e6, 0.0, 0.0), 1.0));
    let mut run = |p: &[Sphere], o: &mut Vec<Pair>| Ok(brute(p, o));
    let report = check(&spheres, 200, &mut [&mut run]);
    assert!(report.ghosts < 4000, "{report:?}");
}

/// Parts past [`PARALLEL_PART`] objects and pairs (gathered and kept in parallel), on a
/// shuffled chain along x: spheres every 1.5, of radius 1 but every 97th of radius 6, whose
/// reach gives the parts ghosts that touch each other (pairs no part may keep twice). The
/// runner and the oracle are a sweep along x of this test's own.
#[test]
fn large_parts_gathered_in_parallel_keep_every_pair_once() {
    fn sweep(part: &[Sphere], out: &mut Vec<Pair>) -> Result<Stats> {
        out.clear();
        let x = |i: u32| part[i as usize].center.x;
        let mut by_x: Vec<u32> = (0..part.len() as u32).collect();
        by_x.sort_unstable_by(|&a, &b| x(a).total_cmp(&x(b)));
        for (k, &a) in by_x.iter().enumerate() {
            // No radius exceeds 6: centres more than 12 apart do not touch.
            for &b in by_x[k + 1..].iter().take_while(|&&b| x(b) - x(a) <= 12.0) {
                if part[a as usize].touches(&part[b as usize]) {
                    out.push([a.min(b), a.max(b)]);
                }
            }
        }
        Ok(Stats {
            pairs: out.len() as u64,
            ..Stats::default()
        })
    }
    let n = 300_000usize;
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    // A random permutation: position k of the chain is object `chain[k]`.
    let mut chain: Vec<u32> = (0..n as u32).collect();
    for k in (1..n).rev() {
        chain.swap(k, rng.random_range(0..=k));
    }
    let mut spheres = vec![Sphere::default(); n];
    for (k, &i) in chain.iter().enumerate() {
        let radius = if k % 97 == 0 { 6.0 } else { 1.0 };
        spheres[i as usize] = Sphere::new(Vec3::new(k as f32 * 1.5, 0.0, 0.0), radius);
    }
    let mut expected = Vec::new();
    sweep(&spheres, &mut expected).unwrap();
    canonicalize(&mut expected);
    let mut got = Vec::new();
    let runners = &mut [&mut sweep as &mut PartRunner];
    let (stats, report) = find_pairs(&spheres, Some(&mut got), 200_000, u64::MAX, runners).unwrap();
    assert!(report.largest as usize >= PARALLEL_PART, "{report:?}");
    assert!(report.ghosts >= 3, "{report:?}");
    canonicalize(&mut got);
    assert_eq!(got.len(), expected.len());
    assert_eq!(got, expected);
    assert_eq!(stats.pairs, expected.len() as u64);
    let (count, _) = find_pairs(&spheres, None, 200_000, u64::MAX, runners).unwrap();
    assert_eq!(count.pairs, expected.len() as u64);
    // A runner that fails on its first part, while the part it took after it is gathered
    // beside it, ends the run with its error, alone or beside another runner (none waits for
    // a part taken ahead). With two, both hold parts before the failure (a barrier).
    for two in [false, true] {
        let both = std::sync::Barrier::new(2);
        let mut failing = |_: &[Sphere], _: &mut Vec<Pair>| -> Result<Stats> {
            if two {
                both.wait();
            }
            Err(Error::gpu(crate::error::GpuFailure::Device, "device lost"))
        };
        let mut first = true;
        let mut other = |part: &[Sphere], out: &mut Vec<Pair>| {
            if std::mem::take(&mut first) {
                both.wait();
            }
            sweep(part, out)
        };
        let mut runners: Vec<&mut PartRunner> = vec![&mut failing];
        if two {
            runners.push(&mut other);
        }
        let err = find_pairs(&spheres, None, 140_000, u64::MAX, &mut runners).unwrap_err();
        assert!(err.to_string().contains("device lost"), "{err}");
    }
}

/// A runner that starts parts, as a GPU does: `start` takes a part (refusing one of more than
/// `objects` objects, as a binding limit does), `finish` runs the oldest one started (the
/// part it is handed must be that one). `fail_at`: the finish that fails as a lost device.
#[derive(Default)]
struct Starting {
    objects: usize,
    started: std::collections::VecDeque<Vec<Sphere>>,
    most_started: usize,
    finishes: usize,
    fail_at: Option<usize>,
}

impl RunsParts for Starting {
    fn run(&mut self, _: &[Sphere], _: &mut Vec<Pair>) -> Result<Stats> {
        Err(Error::OutOfOrder(
            "a part this runner started was run instead".into(),
        ))
    }

    fn start(&mut self, part: &[Sphere]) -> Result<bool> {
        let binding = |needed, allowed| Exceeds::Binding { needed, allowed };
        refuse_over(part.len(), self.objects, binding, "objects")?;
        self.started.push_back(part.to_vec());
        self.most_started = self.most_started.max(self.started.len());
        Ok(true)
    }

    fn finish(&mut self, part: &[Sphere], out: &mut Vec<Pair>) -> Result<Stats> {
        let oldest = self.started.pop_front().expect("a part started");
        assert!(
            oldest == part,
            "finished a part other than the oldest started"
        );
        self.finishes += 1;
        if self.fail_at == Some(self.finishes) {
            return Err(Error::gpu(crate::error::GpuFailure::Device, "device lost"));
        }
        // As a GPU's frame does: its host side by step.
        let mut stats = brute(part, out);
        stats.stage("wait", 0.001, Clock::Host);
        Ok(stats)
    }
}

#[test]
fn a_runner_that_starts_parts_has_the_next_one_started_before_it_finishes_one() {
    let spheres = uniform(3000, 40.0, 1.0, 101);
    // Parts planned at 400 objects, refused at their start above 250: split, started again.
    let mut one = Starting {
        objects: 250,
        ..Default::default()
    };
    let report = check(&spheres, 400, &mut [&mut one as &mut PartRunner]);
    assert!(report.splits > 0, "{report:?}");
    // The parts' host steps, summed, and the partition's own.
    let (stats, report) = find_pairs(
        &spheres,
        None,
        400,
        u64::MAX,
        &mut [&mut one as &mut PartRunner],
    )
    .unwrap();
    let host = |step: &str| {
        let s = stats.stages.iter().filter(|s| s.clock == Clock::Host);
        s.filter(|s| s.stage == step)
            .map(|s| s.seconds)
            .sum::<f64>()
    };
    assert!(
        (host("wait") - 0.001 * report.parts as f64).abs() < 1e-9,
        "{stats:?}"
    );
    for step in ["tiles", "gather", "keep", "giants"] {
        assert_eq!(
            stats.stages.iter().filter(|s| s.stage == step).count(),
            1,
            "{step}: {stats:?}"
        );
    }
    // A runner without host steps (the CPU's) adds none.
    let (plain, _) = find_pairs(
        &spheres,
        None,
        400,
        u64::MAX,
        &mut [&mut limited(400, 1 << 20) as &mut PartRunner],
    )
    .unwrap();
    assert!(
        plain.stages.iter().all(|s| s.clock != Clock::Host),
        "{plain:?}"
    );
    assert_eq!(
        one.most_started, 2,
        "the next part started before one finished"
    );
    assert!(one.started.is_empty(), "every part started was finished");
    // Two such runners share the parts (which takes how many depends on the threads).
    let (mut a, mut b) = (Starting::default(), Starting::default());
    (a.objects, b.objects) = (300, 300);
    check(&spheres, 300, &mut [&mut a as &mut PartRunner, &mut b]);
    assert!(a.started.is_empty() && b.started.is_empty());
    // A finish that fails ends the run with its error; the part started after it is
    // finished too (nothing left on the device), its result dropped.
    let mut failing = Starting {
        objects: 300,
        fail_at: Some(2),
        ..Default::default()
    };
    let err = find_pairs(
        &spheres,
        None,
        300,
        u64::MAX,
        &mut [&mut failing as &mut PartRunner],
    )
    .unwrap_err();
    assert!(err.to_string().contains("device lost"), "{err}");
    assert!(
        failing.started.is_empty(),
        "a started part was left in flight"
    );
    assert_eq!(failing.finishes, 3);
}

/// Room the allocator refuses for the pairs is the pair list's memory error, not an abort
/// (under `ulimit -v` the pair list's growth once aborted a run in parts).
#[test]
fn pairs_the_allocator_cannot_hold_are_an_error() {
    let mut list: Vec<crate::broadphase::Pair> = vec![[0, 1]];
    let err = super::reserve_pairs(&mut list, usize::MAX / 16).unwrap_err();
    assert!(
        matches!(
            err,
            crate::error::Error::TooLarge {
                exceeds: crate::error::Exceeds::PairListMemory { pairs, .. },
                ..
            } if pairs == 1 + (usize::MAX / 16) as u64
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("storing the pairs found"), "{err}");
    assert_eq!(list, [[0, 1]]);
    super::reserve_pairs(&mut list, 10).unwrap();
    assert!(list.capacity() >= 11);
}

/// A run cancelled while its parts go to a device starts no part more and ends interrupted
/// (docs/design.md §9.18): the caller cancels during the runner's third start.
#[test]
fn a_cancelled_run_starts_no_more_parts() {
    use crate::broadphase::cancel::CancelToken;
    struct Cancelling {
        inner: Starting,
        token: CancelToken,
        starts: usize,
        after: usize,
    }
    impl RunsParts for Cancelling {
        fn run(&mut self, part: &[Sphere], out: &mut Vec<Pair>) -> Result<Stats> {
            self.after += usize::from(self.token.is_cancelled());
            self.inner.run(part, out)
        }
        fn start(&mut self, part: &[Sphere]) -> Result<bool> {
            self.after += usize::from(self.token.is_cancelled());
            self.starts += 1;
            if self.starts == 3 {
                self.token.cancel();
            }
            self.inner.start(part)
        }
        fn finish(&mut self, part: &[Sphere], out: &mut Vec<Pair>) -> Result<Stats> {
            self.inner.finish(part, out)
        }
    }
    let spheres = uniform(3000, 40.0, 1.0, 101);
    let token = CancelToken::new();
    let mut runner = Cancelling {
        inner: Starting {
            objects: 10_000,
            ..Default::default()
        },
        token: token.clone(),
        starts: 0,
        after: 0,
    };
    let e = crate::broadphase::limits::Limits::new()
        .with_cancel(token)
        .run(|| {
            find_pairs(
                &spheres,
                None,
                400,
                u64::MAX,
                &mut [&mut runner as &mut PartRunner],
            )
        })
        .unwrap_err();
    assert!(matches!(e, Error::Interrupted), "{e}");
    assert_eq!(
        (runner.starts, runner.after),
        (3, 0),
        "parts started after the cancel"
    );
}

/// The merged list meets the call's pair limit: one pair more than the limit is refused (the
/// stored-pair error), counting alone is not limited; a part past its method's own pair limit
/// ends the run instead of splitting (smaller parts do not lower a count: a limit of 10 once
/// split 1,000 coincident spheres part by part and then stored all 499,500 pairs).
#[test]
fn the_pair_limit_holds_over_all_parts() {
    let spheres = uniform(3000, 40.0, 1.0, 102);
    let want = expected(&spheres).len() as u64;
    let runners = || limited(400, 1 << 20);
    let mut got = Vec::new();
    let (stats, _) =
        find_pairs(&spheres, Some(&mut got), 400, want, &mut [&mut runners()]).unwrap();
    assert_eq!((stats.pairs, got.len() as u64), (want, want));
    let err = find_pairs(
        &spheres,
        Some(&mut got),
        400,
        want - 1,
        &mut [&mut runners()],
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::TooLarge { exceeds: Exceeds::PairList { pairs, allowed }, .. }
            if pairs == want && allowed == want - 1),
        "{err}"
    );
    let (count, _) = find_pairs(&spheres, None, 400, 0, &mut [&mut runners()]).unwrap();
    assert_eq!(count.pairs, want);
    // A method whose own limit is 10 pairs, on 1,000 coincident spheres: refused once.
    let same = vec![Sphere::new(Vec3::ZERO, 1.0); 1000];
    let mut runs = 0;
    let mut ten = |part: &[Sphere], out: &mut Vec<Pair>| {
        runs += 1;
        let stats = brute(part, out);
        let pair_list = |pairs, allowed| Exceeds::PairList { pairs, allowed };
        refuse_over(out.len(), 10, pair_list, "pairs")?;
        Ok(stats)
    };
    let err = find_pairs(&same, Some(&mut got), 1000, u64::MAX, &mut [&mut ten]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooLarge {
                exceeds: Exceeds::PairList { .. },
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(runs, 1, "the part was split");
}
