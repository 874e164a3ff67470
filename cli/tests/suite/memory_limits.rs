//! Memory limits (docs/design.md §9.14): a request too large for the memory this process may
//! use ends with exit 2 and a message naming the size, the limit that binds and what to do,
//! never with an abort in an allocation (SIGABRT, exit 134 in a shell). The address-space limit
//! (`ulimit -v`) binds as much as free memory: these runs happen under one of 2 GiB, set in the
//! child before `exec`. CPU only: a GPU context's loader reserves address space of its own.
#![cfg(unix)]

use crate::common::{sweepfan, temp_dir};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Output;
use sweepfan::cpu::BoxSweep;
use sweepfan::geom::aabb::Aabb;

/// The address-space limit of the children: far below what each request needs, far above what
/// the binary needs to start and run small scenes.
const ADDRESS_SPACE: libc::rlim_t = 2 << 30;

/// `sweepfan ARGS` under [`ADDRESS_SPACE`], with a rayon pool of 2 threads and at most 2 malloc
/// arenas: each thread's arena reserves 64 MiB of address space, which on a many-core machine
/// would otherwise take much of the limit whatever the code under test does.
fn under_address_space_limit(args: &[&str]) -> Output {
    let mut cmd = sweepfan();
    cmd.env("RAYON_NUM_THREADS", "2")
        .env("MALLOC_ARENA_MAX", "2");
    under_limit(cmd, args, ADDRESS_SPACE)
}

/// `cmd ARGS` under an address-space limit of `bytes`.
fn under_limit(mut cmd: std::process::Command, args: &[&str], bytes: libc::rlim_t) -> Output {
    let limit = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: bytes,
    };
    let set_limit = move || {
        // SAFETY: setrlimit reads one `rlimit` from a live local; it is async-signal-safe.
        if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    cmd.args(args);
    // SAFETY: the closure runs in the child between fork and exec and only calls setrlimit.
    unsafe { cmd.pre_exec(set_limit) };
    cmd.output().unwrap()
}

/// The stderr of a run that must have been refused with exit 2 and a "too large" message naming
/// the limit that binds, and each of `names`.
fn refused(args: &[&str], names: &[&str]) -> String {
    let out = under_address_space_limit(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_ne!(
        out.status.signal(),
        Some(libc::SIGABRT),
        "{args:?} aborted: {stderr}"
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {:?}: {stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(stderr.contains("too large"), "{args:?}: {stderr}");
    let limits = ["address-space limit", "cgroup", "MemAvailable"];
    assert!(
        limits.iter().any(|l| stderr.contains(l)),
        "{args:?}: no limit named: {stderr}"
    );
    for name in names {
        assert!(stderr.contains(name), "{args:?}: no {name:?} in {stderr}");
    }
    stderr
}

/// A CSV file of `n` copies of `line` under `header`.
fn copies(dir: &std::path::Path, name: &str, header: &str, line: &str, n: usize) -> String {
    let path = dir.join(name);
    let mut text = format!("{header}\n");
    for _ in 0..n {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// 30,000 spheres at one point: 449,985,000 touching pairs, 3.4 GiB as a list, past what the
/// address space holds (and past the 2^28 stored pairs that aborted there before). The CPU refuses
/// before it grows a buffer past the memory it may use, as the GPU does past a binding.
#[test]
fn cpu_one_point_pairs_past_the_address_space_are_refused_not_aborted() {
    let stderr = refused(
        &[
            "bench",
            "--backend",
            "cpu",
            "--scene",
            "one-point",
            "--n",
            "30000",
            "--methods",
            "sap",
            "--frames",
            "1",
            "--no-verify",
        ],
        &["449985000 touching pairs", "--count-only"],
    );
    assert!(stderr.contains("this run may allocate"), "{stderr}");

    let dir = temp_dir("memory", "one-point");
    let scene = copies(&dir, "one-point.csv", "x,y,z,r", "0,0,0,1", 30_000);
    let pairs = dir.join("pairs.csv");
    refused(
        &[
            "verify",
            "--backend",
            "cpu",
            "--scene-file",
            &scene,
            "--pairs-out",
            pairs.to_str().unwrap(),
        ],
        // verify cannot count alone: the message says where to (bench --count-only).
        &[
            "449985000 touching pairs",
            "verify compares every pair",
            "--count-only",
        ],
    );
    assert!(!pairs.exists(), "no pair list may be written");
    std::fs::remove_dir_all(&dir).ok();
}

/// 30,000 identical boxes: 449,985,000 AABB candidate pairs on the CPU pipeline (3.6 GB as a
/// list): refused once counting passes what memory holds, before the list is stored.
#[test]
fn cpu_identical_boxes_past_the_address_space_are_refused_not_aborted() {
    let dir = temp_dir("memory", "boxes");
    let boxes = copies(
        &dir,
        "boxes.csv",
        "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz",
        "0,0,0,1,1,1,1,0,0,0",
        30_000,
    );
    let pairs = dir.join("pairs.csv");
    refused(
        &[
            "verify",
            "--shape",
            "obb",
            "--backend",
            "cpu",
            "--scene-file",
            &boxes,
            "--pairs-out",
            pairs.to_str().unwrap(),
        ],
        &["30000 shapes", "AABB candidate pairs", "fewer shapes"],
    );
    // The bench's boxes placed like one point's spheres: every pair a candidate.
    refused(
        &[
            "bench",
            "--backend",
            "cpu",
            "--shape",
            "obb",
            "--scene",
            "one-point",
            "--n",
            "30000",
            "--frames",
            "1",
            "--no-verify",
        ],
        &["AABB candidate pairs", "fewer shapes"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Counts from flags are checked before anything is allocated for them: a billion rotations
/// (328 GB) or a trillion speed runs; a hundred million objects (25.6 GB at 256 bytes each).
#[test]
fn counts_from_flags_past_the_address_space_are_refused_before_allocating() {
    let stderr = refused(
        &["reproduce", "sector", "--rotations", "1000000000"],
        &[
            "--rotations 1000000000",
            "328.0 GB",
            "use fewer --rotations",
        ],
    );
    assert!(stderr.contains("fit"), "{stderr}");
    refused(
        &["reproduce", "sector", "--speed-runs", "1000000000000"],
        &["--speed-runs", "use fewer --speed-runs"],
    );
    refused(
        &[
            "reproduce",
            "broadphase",
            "--backend",
            "cpu",
            "--n",
            "100000000",
        ],
        &["100000000 objects", "use a smaller n"],
    );
    refused(
        &[
            "bench",
            "--backend",
            "cpu",
            "--n",
            "100000000",
            "--methods",
            "grid",
            "--frames",
            "1",
        ],
        &["100000000 objects", "use a smaller n"],
    );
    // Rotating hulls take 4 KiB each (points and face planes), not a box's 256 bytes: 2M of
    // them (8.2 GB) are refused before one is drawn.
    refused(
        &[
            "bench",
            "--scene",
            "rotating",
            "--body",
            "hull",
            "--boxes",
            "2000000",
            "--n",
            "10",
            "--backend",
            "cpu",
            "--frames",
            "1",
        ],
        &["2000000 hulls"],
    );
    refused(
        &[
            "reproduce",
            "sector",
            "--pose",
            "free",
            "--body",
            "hull",
            "--rotations",
            "1000000000",
        ],
        &["--rotations 1000000000", "use fewer --rotations"],
    );
    // Written with an exponent: refused as a count (exit 2), whether or not it is read as one.
    let out = under_address_space_limit(&["reproduce", "sector", "--rotations", "1e9"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{:?}: {stderr}", out.status);
    assert!(stderr.contains("--rotations"), "{stderr}");
}

/// The sweep's own check, through the library: identical boxes make every candidate a pair; a
/// limit one below their number is refused with the count past it and the sweep's bound, the
/// list left empty; their number exactly is stored whole.
#[test]
fn the_box_sweep_refuses_past_its_limit_and_stores_up_to_it() {
    let n = 2000u64; // 1,999,000 candidates: past the 2^20 stored unchecked
    let all = n * (n - 1) / 2;
    let same = vec![Aabb::new(glam::Vec3::ZERO, glam::Vec3::ONE); n as usize];
    let mut sweep = BoxSweep::new();
    let mut out = vec![[7, 7]];
    let e = sweep
        .pairs_at_most(&same, &mut out, || all - 1)
        .unwrap_err();
    assert!(e.at_least > all - 1 && e.at_least <= all, "{e:?}");
    // The sweep's bound is an upper bound on the candidates (a box may be entered in several
    // columns of the plan), never below their number.
    assert!(e.bound >= all, "{e:?}");
    assert!(out.is_empty());
    assert_eq!(sweep.pairs_at_most(&same, &mut out, || all), Ok(()));
    assert_eq!(out.len() as u64, all);
    // Without a limit, as before.
    let mut unlimited = Vec::new();
    sweep.pairs(&same, &mut unlimited).unwrap();
    assert_eq!(unlimited.len() as u64, all);
}

/// `bench` of one CPU grid frame of a generated scene, unverified, its row as JSON on stdout.
fn cpu_grid_frame<'a>(scene: &'a str, n: &'a str) -> [&'a str; 14] {
    [
        "bench",
        "--backend",
        "cpu",
        "--scene",
        scene,
        "--n",
        n,
        "--methods",
        "grid",
        "--frames",
        "1",
        "--no-verify",
        "--json",
        "-",
    ]
}

/// Where memory holds the scene but not a whole CPU frame (256 B per object), the CPU runs the
/// frame in parts (docs/design.md §2.10): the same pairs as a whole run without the limit.
#[test]
fn cpu_frames_past_memory_run_in_parts() {
    let args = cpu_grid_frame("density", "8000000");
    let row = |out: &Output| -> serde_json::Value {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{:?}: {stderr}", out.status);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        json["rows"][0].clone()
    };
    let limited = row(&under_address_space_limit(&args));
    let whole = row(&sweepfan()
        .args(args)
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .unwrap());
    assert!(whole.get("parts").is_none(), "{whole}");
    assert!(
        limited["parts"]["parts"].as_u64().unwrap() >= 2,
        "{limited}"
    );
    assert_eq!(limited["pairs_per_frame"], whole["pairs_per_frame"]);
    assert!(
        whole["pairs_per_frame"].as_f64().unwrap() > 300_000.0,
        "{whole}"
    );
}

/// Under limits around what a CPU run in parts needs, with the machine's own threads and the
/// allocator as the binary sets it: each run ends with its pairs (those of a run without the
/// limit) or with exit 2, never an abort. At 425 MB a run of 2M clustered spheres once aborted
/// growing its pair list (while 400 and 450 ran), and at 180 MB 1M were refused ("1.4 MB
/// available": glibc's per-thread arenas had reserved the rest of the address space).
#[test]
fn cpu_runs_in_parts_end_with_their_pairs_or_a_refusal() {
    let args = cpu_grid_frame("clusters", "2000000");
    let pairs = |out: &Output| -> u64 {
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        json["rows"][0]["pairs_per_frame"].as_f64().unwrap() as u64
    };
    let whole = sweepfan().args(args).output().unwrap();
    assert!(whole.status.success());
    let mut ran = 0;
    for mb in [300, 400, 435, 450, 600] {
        let out = under_limit(sweepfan(), &args, mb << 20);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.signal(), None, "{mb} MB: {stderr}");
        match out.status.code() {
            Some(0) => {
                assert_eq!(pairs(&out), pairs(&whole), "{mb} MB");
                ran += 1;
            }
            Some(2) => assert!(stderr.contains("too large"), "{mb} MB: {stderr}"),
            other => panic!("{mb} MB: exit {other:?}: {stderr}"),
        }
    }
    assert!(ran >= 3, "runs that fitted were refused");
}
