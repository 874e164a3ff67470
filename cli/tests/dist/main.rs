//! `sweepfan dist` under `mpirun` (feature `mpi`, docs/design.md §2.11): the pairs of every
//! rank count, on CPU and GPU, equal an in-process brute force (or CPU grid on the larger
//! scene); 20 moving frames give an in-process `EventTracker`'s events frame by frame; a rank
//! that fails ends the run with exit 2 naming it. `.ci/run` runs this file with
//! `--features mpi`.
#![cfg(feature = "mpi")]

// The library suite's oracles (`tests/suite/common.rs`); not every one serves this file.
#[allow(dead_code)]
#[path = "../../../tests/suite/common.rs"]
mod oracles;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use sweepfan::{EventTracker, Method, Pair, Sphere, canonicalize};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir()
        .join(format!("sweepfan-dist-{}", std::process::id()))
        .join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `mpirun` with `args` (ranks, programs and theirs), ended after 300 s (a hang is a failure,
/// not a wait).
fn mpirun_with(args: &[&str]) -> Output {
    Command::new("timeout")
        .args([
            "-k",
            "5",
            "300",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
        ])
        .args(args)
        .output()
        .expect("mpirun (install openmpi-bin)")
}

/// `mpirun -np ranks sweepfan ARGS`.
fn mpirun(ranks: usize, args: &[&str]) -> Output {
    let ranks = ranks.to_string();
    let mut all = vec!["-np", &ranks, env!("CARGO_BIN_EXE_sweepfan")];
    all.extend_from_slice(args);
    mpirun_with(&all)
}

fn ok(out: Output, what: &str) -> Output {
    assert!(
        out.status.success(),
        "{what}: {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The standard error of a run that must end with exit 2 (a refusal, on every rank).
fn exit_2(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    stderr
}

/// `args` followed by `path` (a file the run reads or writes).
fn then_path<'a>(args: &[&'a str], path: &'a Path) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.push(path.to_str().unwrap());
    all
}

/// The pairs of a CSV `i,j` file.
fn read_pairs(path: &Path) -> Vec<Pair> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("i,j"), "{}", path.display());
    lines
        .map(|l| {
            let (i, j) = l.split_once(',').unwrap();
            [i.parse().unwrap(), j.parse().unwrap()]
        })
        .collect()
}

/// Asserts equal lists, saying how they differ (lengths, the first difference) rather than
/// printing them whole.
fn same(got: &[Pair], expected: &[Pair], what: &str) {
    if got != expected {
        let at = got.iter().zip(expected).position(|(a, b)| a != b);
        panic!(
            "{what}: {} pairs, expected {}; first difference at {at:?}: {:?} against {:?}",
            got.len(),
            expected.len(),
            at.and_then(|i| got.get(i)),
            at.and_then(|i| expected.get(i)),
        );
    }
}

fn brute(s: &[Sphere]) -> Vec<Pair> {
    oracles::brute_pairs(s, Sphere::touches)
}

fn cpu_grid(s: &[Sphere]) -> Vec<Pair> {
    let mut pairs = Vec::new();
    sweepfan::cpu::broad_phase(Method::Grid)
        .find_pairs(s, Some(&mut pairs))
        .unwrap();
    canonicalize(&mut pairs);
    pairs
}

/// Clustered, mixed radii, wide and giant scenes as files, with their pairs by brute force.
fn scenes() -> Vec<(&'static str, PathBuf, Vec<Pair>)> {
    let d = dir("scenes");
    [
        ("clusters", SceneKind::Clusters, 6000),
        ("mixed-radii", SceneKind::MixedRadii, 4000),
        ("wide", SceneKind::Wide, 6000),
        ("giant", SceneKind::Giant, 3000),
    ]
    .into_iter()
    .map(|(name, kind, n)| {
        let scene = Scene::generate(kind, &SceneParams::new(n, 7));
        let path = d.join(format!("{name}.csv"));
        scene.write_csv(&path).unwrap();
        (name, path, brute(&scene.spheres))
    })
    .collect()
}

#[test]
fn every_rank_count_finds_exactly_the_pairs_of_one_process_for_every_method_and_backend() {
    let out_dir = dir("pairs");
    for (name, path, expected) in scenes() {
        assert!(!expected.is_empty(), "{name}");
        for backend in ["cpu", "gpu"] {
            // `default`: no --method, which is `auto` (docs/design.md §2.12).
            for method in ["grid", "sap", "brute_force", "default"] {
                // Every method on 3 ranks; the grid on 1, 2 and 4 as well.
                let counts: &[usize] = if method == "grid" {
                    &[1, 2, 3, 4]
                } else {
                    &[3]
                };
                for &ranks in counts {
                    let file = out_dir.join(format!("{name}-{backend}-{method}-{ranks}.csv"));
                    let what = format!("{name} {method} [{backend}] on {ranks} ranks");
                    let mut args = vec!["dist", "--scene-file", path.to_str().unwrap()];
                    if method != "default" {
                        args.extend(["--method", method]);
                    }
                    args.extend(["--backend", backend, "--pairs-out", file.to_str().unwrap()]);
                    ok(mpirun(ranks, &args), &what);
                    same(&read_pairs(&file), &expected, &what);
                }
            }
        }
        // The gathered file is byte for byte what one process's `verify` writes.
        let one = out_dir.join(format!("{name}-verify.csv"));
        ok(
            Command::new(env!("CARGO_BIN_EXE_sweepfan"))
                .args([
                    "verify",
                    "--scene-file",
                    path.to_str().unwrap(),
                    "--method",
                    "grid",
                ])
                .args(["--pairs-out", one.to_str().unwrap()])
                .output()
                .unwrap(),
            "verify",
        );
        assert_eq!(
            std::fs::read(&one).unwrap(),
            std::fs::read(out_dir.join(format!("{name}-cpu-grid-3.csv"))).unwrap(),
            "{name}: dist and verify files differ"
        );
    }
}

#[test]
fn one_to_four_ranks_agree_and_per_rank_files_hold_each_pair_once() {
    let scene = Scene::generate(SceneKind::Clusters, &SceneParams::new(200_000, 3));
    let d = dir("ranks");
    let path = d.join("clusters-200k.csv");
    scene.write_csv(&path).unwrap();
    let expected = cpu_grid(&scene.spheres);
    for ranks in 1..=4 {
        for backend in ["cpu", "gpu"] {
            let per_rank = d.join(format!("np{ranks}-{backend}/"));
            let what = format!("{ranks} ranks [{backend}]");
            let out = ok(
                mpirun(
                    ranks,
                    &[
                        "dist",
                        "--scene-file",
                        path.to_str().unwrap(),
                        "--backend",
                        backend,
                        "--pairs-out",
                        per_rank.to_str().unwrap(),
                    ],
                ),
                &what,
            );
            let mut all = Vec::new();
            for r in 0..ranks {
                let mine = read_pairs(&per_rank.join(format!("pairs-rank-{r}.csv")));
                assert!(mine.windows(2).all(|w| w[0] < w[1]), "{what}: rank {r}");
                all.extend(mine);
            }
            let found = all.len();
            canonicalize(&mut all);
            all.dedup();
            assert_eq!(all.len(), found, "{what}: a pair on two ranks");
            same(&all, &expected, &what);
            // The same directory for the events: their own files beside the pairs'.
            if ranks == 4 && backend == "cpu" {
                let again = mpirun(
                    2,
                    &[
                        "dist",
                        "--scene-file",
                        path.to_str().unwrap(),
                        "--pairs-out",
                        per_rank.to_str().unwrap(),
                        "--events-out",
                        per_rank.to_str().unwrap(),
                    ],
                );
                ok(again, "2 ranks into the directory of 4");
                // Rank 2 and 3's files of the run before are gone: the union is this run's.
                assert!(!per_rank.join("pairs-rank-2.csv").exists());
                assert!(!per_rank.join("pairs-rank-3.csv").exists());
                let mut two = read_pairs(&per_rank.join("pairs-rank-0.csv"));
                two.extend(read_pairs(&per_rank.join("pairs-rank-1.csv")));
                canonicalize(&mut two);
                same(&two, &expected, "2 ranks");
                let events = read_events(&per_rank.join("events-rank-0.csv"), 1);
                let more = read_events(&per_rank.join("events-rank-1.csv"), 1);
                let mut found = events[0].0.clone();
                found.extend(&more[0].0);
                canonicalize(&mut found);
                same(&found, &expected, "frame 0 events: every pair found");
            }
            // The table reports the run on rank 0 only, once.
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert_eq!(stdout.matches("dist: auto").count(), 1, "{what}: {stdout}");
        }
    }
}

/// `frame,event,i,j` rows by frame: (found, lost).
fn read_events(path: &Path, frames: usize) -> Vec<(Vec<Pair>, Vec<Pair>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("frame,event,i,j"));
    let mut out = vec![(Vec::new(), Vec::new()); frames];
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let frame: usize = f[0].parse().unwrap();
        let pair = [f[2].parse().unwrap(), f[3].parse().unwrap()];
        match f[1] {
            "found" => out[frame].0.push(pair),
            "lost" => out[frame].1.push(pair),
            other => panic!("event {other}"),
        }
    }
    out
}

#[test]
fn moving_frames_give_the_events_of_one_process_on_every_frame() {
    let frames = 20;
    for (kind, n, rebalance) in [
        (SceneKind::Paper, 5000, "1.5"),
        // A limit just above 1 draws the slabs again every frame.
        (SceneKind::MixedRadii, 4000, "1.0001"),
    ] {
        let params = SceneParams::new(n, 9);
        let mut scene = Scene::generate(kind, &params);
        let mut tracker = EventTracker::new();
        let mut expected = Vec::new();
        for f in 0..frames {
            if f > 0 {
                scene.step();
            }
            let e = tracker.update(brute(&scene.spheres));
            expected.push((e.found, e.lost));
        }
        let d = dir("events");
        let events = d.join(format!("{}.csv", kind.name()));
        let json = d.join(format!("{}.json", kind.name()));
        ok(
            mpirun(
                3,
                &[
                    "dist",
                    "--scene",
                    kind.name(),
                    "--n",
                    &n.to_string(),
                    "--seed",
                    "9",
                    "--frames",
                    &frames.to_string(),
                    "--rebalance",
                    rebalance,
                    "--events-out",
                    events.to_str().unwrap(),
                    "--json",
                    json.to_str().unwrap(),
                ],
            ),
            kind.name(),
        );
        let got = read_events(&events, frames);
        for f in 0..frames {
            same(
                &got[f].0,
                &expected[f].0,
                &format!("{kind:?} frame {f} found"),
            );
            same(
                &got[f].1,
                &expected[f].1,
                &format!("{kind:?} frame {f} lost"),
            );
        }
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let rows = report["frames"].as_array().unwrap();
        let moved: u64 = rows.iter().map(|r| r["migrated"].as_u64().unwrap()).sum();
        assert!(
            moved > 0,
            "{kind:?}: no object changed rank in {frames} frames"
        );
        let rebalanced = rows.iter().filter(|r| r["rebalanced"] == true).count();
        if rebalance == "1.0001" {
            assert!(
                rebalanced >= frames / 2,
                "{kind:?}: {rebalanced} rebalances"
            );
        }
    }
}

#[test]
fn a_failing_rank_ends_every_rank_with_exit_2_naming_it() {
    // 3000 good lines, then a NaN near the end: in the last rank's byte range of three.
    let d = dir("bad");
    let path = d.join("nan-late.csv");
    let mut text = String::from("x,y,z,r\n");
    for i in 0..3000 {
        text.push_str(&format!("{},0,0,1\n", i as f32 * 1.5));
    }
    text.push_str("1,NaN,0,1\n");
    text.push_str("5,5,5,1\n");
    std::fs::write(&path, text).unwrap();
    let stderr = exit_2(mpirun(
        3,
        &[
            "dist",
            "--scene-file",
            path.to_str().unwrap(),
            "--method",
            "grid",
        ],
    ));
    assert!(stderr.contains("rank 2 of 3"), "{stderr}");
    // The line number is the file's (header = line 1), as one process reports it.
    assert!(stderr.contains("line 3002"), "{stderr}");
    assert!(!stderr.contains("rank 0 of 3:"), "{stderr}");

    // Bad lines in two ranks' ranges: the file's first is reported, once, as one process
    // reports it; the later one is not repeated by its own rank.
    let two = d.join("two-bad.csv");
    let mut text = String::from("x,y,z,r\n");
    for i in 0..3000 {
        let line = match i {
            1500 => "1,2,3,1e30".to_string(),
            2900 => "1,abc,3,1".to_string(),
            _ => format!("{},0,0,1", i as f32 * 1.5),
        };
        text.push_str(&line);
        text.push('\n');
    }
    std::fs::write(&two, text).unwrap();
    let stderr = exit_2(mpirun(3, &["dist", "--scene-file", two.to_str().unwrap()]));
    assert!(
        stderr.contains("rank 1 of 3: ") && stderr.contains("line 1502: object 1500:"),
        "{stderr}"
    );
    assert!(!stderr.contains("rank 2 of 3: "), "{stderr}");
    assert!(!stderr.contains("line 2902"), "{stderr}");

    // A generated scene that the parameters place outside the accepted range: named by its
    // parameters as one process names it, by one rank, not by each rank with its own object 0.
    let args = [
        "--scene", "line-x", "--n", "3000", "--radius", "1e17", "--method", "grid",
    ];
    let bin = env!("CARGO_BIN_EXE_sweepfan");
    let alone = Command::new(bin)
        .arg("bench")
        .args(args.iter().map(|a| a.replace("--method", "--methods")))
        .output()
        .unwrap();
    let alone = String::from_utf8_lossy(&alone.stderr);
    let why = alone
        .split("error: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no error: {alone}"))
        .trim()
        .to_string();
    assert!(
        why.contains("--radius 1e17") && why.contains("object 0:"),
        "{why}"
    );
    let mut dist = vec!["dist"];
    dist.extend(args);
    let stderr = exit_2(mpirun(3, &dist));
    assert!(stderr.contains(&format!("rank 0 of 3: {why}")), "{stderr}");
    assert_eq!(
        stderr.matches(" of 3: the line-x scene").count(),
        1,
        "{stderr}"
    );

    // A missing adapter on one rank only (MPMD: rank 2 asks for an adapter that is not there).
    let scene = dir("bad").join("ok.csv");
    Scene::generate(SceneKind::Paper, &SceneParams::new(500, 1))
        .write_csv(&scene)
        .unwrap();
    let bin = env!("CARGO_BIN_EXE_sweepfan");
    let common = [
        "dist",
        "--scene-file",
        scene.to_str().unwrap(),
        "--backend",
        "gpu",
    ];
    let mut args = vec!["-np", "2", bin];
    args.extend(common);
    args.extend([":", "-np", "1", bin, "--adapter", "no-such-adapter"]);
    args.extend(common);
    let stderr = exit_2(mpirun_with(&args));
    assert!(stderr.contains("rank 2 of 3"), "{stderr}");
    assert!(stderr.contains("no-such-adapter"), "{stderr}");

    // Ranks that read different files under one name (MPMD: rank 2 started in another
    // directory): refused by the files' lengths and digests, naming the rank, not run to pairs
    // that match neither file. The same length with other bytes too.
    let (here, there) = (dir("copy-a"), dir("copy-b"));
    let text = std::fs::read_to_string(&scene).unwrap();
    std::fs::write(here.join("s.csv"), &text).unwrap();
    for (other, says) in [
        (
            text.replacen("x,y,z,r\n", "x,y,z,r\n0,0,0,1\n", 1),
            "bytes)",
        ),
        (text.replacen('1', "2", 1), "same length, other bytes"),
    ] {
        std::fs::write(there.join("s.csv"), other).unwrap();
        let (a, b) = (here.to_str().unwrap(), there.to_str().unwrap());
        let stderr = exit_2(mpirun_with(&[
            "-np",
            "2",
            "--wdir",
            a,
            bin,
            "dist",
            "--scene-file",
            "s.csv",
            ":",
            "-np",
            "1",
            "--wdir",
            b,
            bin,
            "dist",
            "--scene-file",
            "s.csv",
        ]));
        assert!(
            stderr.contains("the ranks read different files: rank 2 ("),
            "{stderr}"
        );
        assert!(stderr.contains(says), "{stderr}");
    }

    // Ranks started with other arguments would run other collectives: refused, not hung.
    let stderr = exit_2(mpirun_with(&[
        "-np", "2", bin, "dist", "--frames", "3", ":", "-np", "1", bin, "dist", "--frames", "4",
    ]));
    assert!(
        stderr.contains("rank 2 was started with other dist arguments"),
        "{stderr}"
    );
}

#[test]
fn bad_arguments_fail_with_exit_2_naming_the_problem() {
    let bin = env!("CARGO_BIN_EXE_sweepfan");
    let d = dir("args");
    let scene = d.join("s.csv");
    Scene::generate(SceneKind::Paper, &SceneParams::new(100, 1))
        .write_csv(&scene)
        .unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--rebalance".into(), "1".into()], "--rebalance 1"),
        (vec!["--rebalance".into(), "NaN".into()], "--rebalance"),
        (vec!["--method".into(), "nope".into()], "nope"),
        (vec!["--frames".into(), "0".into()], "--frames"),
        (vec!["--frames".into(), "4294967297".into()], "--frames"),
        (
            vec!["--pairs-out".into(), "-".into()],
            "not standard output",
        ),
        (
            vec!["--pairs-out".into(), "/nonexistent/dir/p.csv".into()],
            "/nonexistent/dir",
        ),
        (
            vec!["--scene-file".into(), "/dev/null".into()],
            "not a regular file",
        ),
        (
            vec!["--scene-file".into(), d.to_str().unwrap().into()],
            "directory",
        ),
    ];
    for (args, want) in cases {
        // Alone (a run of one rank) and under mpirun.
        let alone = Command::new(bin).arg("dist").args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&alone.stderr);
        assert_eq!(alone.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        let mut full = vec!["dist".to_string()];
        full.extend(args.iter().cloned());
        let refs: Vec<&str> = full.iter().map(String::as_str).collect();
        let out = mpirun(2, &refs);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?} under mpirun: {stderr}"
        );
        assert!(stderr.contains(want), "{args:?} under mpirun: {stderr}");
    }
    // A share larger than a rank's memory (2 GB of address space): refused before it is made.
    let limited = format!("ulimit -v 2000000; exec {bin} dist --scene density --n 100000000");
    let stderr = exit_2(mpirun_with(&["-np", "2", "bash", "-c", &limited]));
    assert!(stderr.contains("rank 1 of 2: too large"), "{stderr}");
    assert!(stderr.contains("start more ranks"), "{stderr}");
    // A missing scene file is one problem of the input, said once, by the lowest rank (every
    // rank said it).
    let missing = d.join("missing.csv");
    let stderr = exit_2(mpirun(
        3,
        &["dist", "--scene-file", missing.to_str().unwrap()],
    ));
    assert!(
        stderr.contains("rank 0 of 3") && stderr.contains("missing.csv"),
        "{stderr}"
    );
    assert!(!stderr.contains("rank 1 of 3"), "{stderr}");
    // An empty scene file: every rank has nothing.
    let empty = d.join("empty.csv");
    std::fs::write(&empty, "x,y,z,r\n").unwrap();
    let stderr = exit_2(mpirun(
        3,
        &["dist", "--scene-file", empty.to_str().unwrap()],
    ));
    assert!(stderr.contains("empty scene"), "{stderr}");
    assert!(
        stderr.contains("empty.csv") && stderr.contains("all 3 ranks"),
        "{stderr}"
    );
}

/// A run of one frame tracks no events, yet its row counts the frame's pairs as found (none
/// before it), as `bench --events` counts a first frame and a run of two frames counts its
/// frame 0 (it said 0).
#[test]
fn the_first_frame_finds_its_pairs() {
    let d = dir("first_frame");
    for frames in ["1", "2"] {
        let json = d.join(format!("f{frames}.json"));
        let args = then_path(
            &["dist", "--n", "1000", "--frames", frames, "--json"],
            &json,
        );
        ok(mpirun(2, &args), "first frame");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let row = &report["frames"][0];
        assert!(row["pairs"].as_u64().unwrap() > 0, "{row}");
        assert_eq!(row["found"], row["pairs"], "{frames} frames: {row}");
        assert_eq!(row["lost"], 0, "{frames} frames: {row}");
    }
}

mod files;
