//! The command line under hostile arguments (issue "Hostile input"): every probe an exit-2
//! error naming the problem, or the exact answer; nothing silently clamped or ignored.

use crate::common::{
    exits_2, fails_naming, refused_before_running, succeed, sweepfan, temp_dir, two_spheres,
    write_file,
};

#[test]
fn sizes_beyond_indices_or_memory_are_refused_before_allocating() {
    fails_naming(&["bench", "--n", "10000000000"], "32 bits");
    fails_naming(&["bench", "--n", "1000000000"], "memory");
    fails_naming(&["bench", "--n", "0"], "empty scene");
    // Refused by the shared option rule (args/values.rs), naming the flag (issue 28).
    fails_naming(&["bench", "--scene", "rotating", "--boxes", "0"], "--boxes");
    fails_naming(&["bench", "--scene", "rotating", "--n", "0"], "--n");
    // Each timed frame's record is kept for the medians: frames past memory are refused before
    // the first (they grew to an abort), in every command that times frames.
    let huge = "1099511627776";
    for call in [
        &["bench", "--n", "10", "--methods", "grid", "--frames", huge][..],
        &[
            "bench",
            "--n",
            "10",
            "--backend",
            "gpu",
            "--methods",
            "grid",
            "--frames",
            huge,
        ],
        &[
            "auto-bench",
            "--scenes",
            "paper:10",
            "--methods",
            "grid",
            "--frames",
            huge,
        ],
        &[
            "reproduce",
            "broadphase",
            "--n",
            "50",
            "--frames-time",
            huge,
        ],
    ] {
        fails_naming(call, "use fewer frames");
    }
    // Generated scenes the file readers would refuse are not written.
    let dir = temp_dir("hostile", "generated");
    for shape in ["sphere", "obb"] {
        let out = dir.join(format!("{shape}.csv"));
        fails_naming(
            &[
                "scene",
                "--scene",
                "line-x",
                "--radius",
                "1e30",
                "--n",
                "10",
                "--shape",
                shape,
                "--out",
                out.to_str().unwrap(),
            ],
            "--radius",
        );
        assert!(!out.exists(), "{shape}: a refused scene was written");
    }
    // An adapter named must open, in the sector reproduction too (it measured without it).
    fails_naming(
        &[
            "--adapter",
            "no such adapter",
            "reproduce",
            "sector",
            "--rotations",
            "1",
            "--speed-runs",
            "1",
        ],
        "no adapter matches",
    );
    // --csv only where rows have a CSV form.
    for command in ["auto-bench", "sort-bench"] {
        fails_naming(&[command, "--csv", "x.csv"], "--csv");
    }
}

#[test]
fn options_are_never_silently_ignored() {
    fails_naming(&["bench", "--frames", "0"], "--frames");
    let dir = temp_dir("hostile", "options");
    let scene = two_spheres(&dir);
    let s = scene.to_str().unwrap();
    fails_naming(&["bench", "--scene-file", s, "--n", "10"], "--n");
    fails_naming(&["bench", "--scene-file", s, "--seed", "3"], "--seed");
    succeed(
        sweepfan()
            .args(["bench", "--scene-file", s, "--frames", "1"])
            .output(),
    );
}

#[test]
fn stress_budgets_and_max_n() {
    for budget in ["0", "NaN", "-1", "inf"] {
        let arg = format!("--budget-s={budget}");
        fails_naming(&["stress", "--backend", "cpu", &arg], "--budget-s");
    }
    fails_naming(&["stress", "--backend", "cpu", "--frames", "0"], "--frames");
    // The last step is --max-n itself, not the last doubling below it.
    let out = succeed(
        sweepfan()
            .args([
                "stress",
                "--backend",
                "cpu",
                "--start-n",
                "1000",
                "--max-n",
                "3000",
            ])
            .args(["--budget-s", "100", "--frames", "1"])
            .output(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("reached --max-n 3000") && stdout.contains("largest n verified: 3000"),
        "{stdout}"
    );
}

#[test]
fn scene_files_that_are_not_scenes() {
    let dir = temp_dir("hostile", "files");
    let pairs = dir.join("pairs.csv");
    let p = pairs.to_str().unwrap();
    if std::path::Path::new("/dev/zero").exists() {
        fails_naming(
            &["verify", "--scene-file", "/dev/zero", "--pairs-out", p],
            "longer than 4096 bytes",
        );
    }
    let d = dir.to_str().unwrap();
    fails_naming(
        &["verify", "--scene-file", d, "--pairs-out", p],
        "directory",
    );
    let big = write_file(&dir, "big.csv", "x,y,z,r\n1e39,0,0,1\n");
    fails_naming(
        &[
            "verify",
            "--scene-file",
            big.to_str().unwrap(),
            "--pairs-out",
            p,
        ],
        "overflows f32",
    );
}

#[test]
fn the_environment_gets_honest_messages() {
    // No XDG_RUNTIME_DIR: no libwayland "error:" lines, a normal listing (or, on a machine
    // without an adapter, exit 2 with that one error: issue 28).
    let out = sweepfan()
        .arg("info")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        assert!(!stderr.contains("error"), "{stderr}");
    } else {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("no GPU adapter") && !stderr.contains("XDG_RUNTIME_DIR"),
            "{stderr}"
        );
    }
    // A backend name wgpu does not know is named as such, not "install a driver".
    let stderr = exits_2(sweepfan().arg("info").env("WGPU_BACKEND", "nosuch"));
    assert!(
        stderr.contains("WGPU_BACKEND") && stderr.contains("nosuch"),
        "{stderr}"
    );
    // An adapter asked for where none exists (Metal on this machine) is an error.
    if cfg!(target_os = "linux") {
        let mut metal = sweepfan();
        metal
            .args(["--adapter", "0", "info"])
            .env("WGPU_BACKEND", "metal");
        assert!(exits_2(&mut metal).contains("--adapter 0"));
    }
}

/// `sweepfan info | head -1`: the closed pipe ends the process quietly (SIGPIPE), no panic.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = sweepfan()
        .arg("info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // (A machine without an adapter prints nothing on stdout: `info` is then exit 2.)
    let no_adapter = out.status.code() == Some(2) && stderr.contains("no GPU adapter");
    assert!(
        out.status.success() || out.status.signal() == Some(13) || no_adapter,
        "{:?}: {stderr}",
        out.status
    );
}

#[test]
fn messages_say_each_thing_once_and_what_to_do() {
    let dir = temp_dir("hostile", "messages");
    let stderr = exits_2(
        sweepfan()
            .args([
                "verify",
                "--scene-file",
                "/nonexistent/scene.csv",
                "--pairs-out",
            ])
            .arg(dir.join("p.csv")),
    );
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
    // 288M pairs exceed the stored-pair limit: the message names --count-only.
    fails_naming(
        &[
            "bench",
            "--scene",
            "one-point",
            "--n",
            "24000",
            "--methods",
            "sap",
            "--frames",
            "1",
        ],
        "--count-only",
    );
}

/// Above 5,000 shapes the CPU pipeline is the reference: its own row says so and is checked on
/// a sample against the all-pairs SAT, not "verified" against itself.
#[test]
fn the_cpu_shape_reference_is_not_verified_against_itself() {
    let dir = temp_dir("hostile", "shapes");
    for (n, against) in [("1000", "all-pairs SAT"), ("6000", "reference itself")] {
        let json = dir.join(format!("{n}.json"));
        succeed(
            sweepfan()
                .args([
                    "bench", "--shape", "obb", "--n", n, "--frames", "1", "--json",
                ])
                .arg(&json)
                .output(),
        );
        let rows = crate::common::json_rows(&json);
        let cpu = &rows[0];
        assert_eq!(cpu["backend"], "cpu");
        assert_eq!(cpu["verified"], true);
        let text = cpu["verified_against"].as_str().unwrap();
        assert!(text.contains(against), "n = {n}: {text}");
    }
}

/// Outputs are checked before the run, never overwrite an input or each other, and `-` is
/// standard output (the human table then goes to stderr).
#[test]
fn outputs_are_checked_up_front_and_dash_is_stdout() {
    let dir = temp_dir("hostile", "outputs");
    let scene = two_spheres(&dir);
    let s = scene.to_str().unwrap();
    fails_naming(
        &["verify", "--scene-file", s, "--pairs-out", s],
        "is an input",
    );
    assert_eq!(
        std::fs::read_to_string(&scene).unwrap(),
        "x,y,z,r\n0,0,0,1\n1,0,0,1\n"
    );
    let j = dir.join("r.json");
    let j = j.to_str().unwrap();
    let same = format!("{}/./r.json", dir.display());
    fails_naming(
        &["bench", "--n", "50", "--json", j, "--csv", &same],
        "also the --json",
    );
    fails_naming(
        &["bench", "--n", "50", "--json", "/no/such/dir/r.json"],
        "does not exist",
    );
    fails_naming(
        &["bench", "--n", "50", "--json", "-", "--csv", "-"],
        "standard output",
    );
    // A plots path that is a file fails before minutes of reproduction, not after.
    fails_naming(
        &["reproduce", "broadphase", "--plots", s],
        "not a directory",
    );
    let out = succeed(
        sweepfan()
            .args([
                "bench",
                "--n",
                "100",
                "--frames",
                "1",
                "--methods",
                "grid",
                "--json",
                "-",
            ])
            .output(),
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is the JSON");
    assert_eq!(doc["rows"].as_array().unwrap().len(), 1);
    let out = succeed(
        sweepfan()
            .args(["verify", "--scene-file", s, "--pairs-out", "-"])
            .output(),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "i,j\n0,1\n");
    // No file named "-" appears.
    assert!(!std::path::Path::new("-").exists());
}

/// A bench call of about 20 s on one CPU frame.
const BRUTE_FORCE_300K: [&str; 6] = [
    "--scene",
    "density",
    "--n",
    "300000",
    "--methods",
    "brute_force",
];

/// Ctrl-C during a long CPU call stops it at its next check (docs/design.md §9.18): the process
/// says so and ends as the signal would (status: killed by SIGINT), within the 2 s the handler
/// allows before it ends the process itself (which prints another line). Brute force, and a
/// degenerate grid (every centre in one cell: one chunk of objects ran for seconds unchecked).
#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_long_cli_call_through_the_library() {
    let one_cpu_frame = ["--backend", "cpu", "--frames", "1"];
    for call in [
        BRUTE_FORCE_300K,
        ["--scene", "one-point", "--n", "200000", "--methods", "grid"],
    ] {
        stop_with_ctrl_c(&[&["bench"], &call[..], &one_cpu_frame].concat());
    }
}

/// Ctrl-C between frames and in a device wait: frames too short to reach the library's checks
/// (the sector CCD on the CPU, ten spheres on the GPU) stop between frames; a GPU frame stopped
/// in its wait no longer waits for the device when the process ends (dropping the device waited
/// for the abandoned brute force, and the 2 s alarm ended the process without a word).
#[cfg(unix)]
#[test]
fn ctrl_c_stops_frame_loops_and_device_waits() {
    for call in [
        &["--scene", "rotating", "--n", "2000", "--boxes", "1000"][..],
        &["--backend", "gpu", "--n", "10", "--methods", "grid"],
    ] {
        stop_with_ctrl_c(&[&["bench"], call, &["--frames", "10000000"]].concat());
    }
    // The sector experiments on the CPU looked at no token: the 2 s alarm ended them silently.
    for call in [
        &["--rotations", "400000"][..],
        &["--pose", "free", "--body", "hull", "--rotations", "200000"],
        &["--speed-runs", "100000"],
    ] {
        stop_with_ctrl_c(&[&["reproduce", "sector", "--backend", "cpu"], call].concat());
    }
    stop_with_ctrl_c(&[
        "bench",
        "--backend",
        "gpu",
        "--scene",
        "density",
        "--n",
        "200000",
        "--methods",
        "brute_force",
        "--frames",
        "1",
        "--count-only",
    ]);
}

/// The tool with `call`, stopped by SIGINT once it runs.
#[cfg(unix)]
fn stop_with_ctrl_c(call: &[&str]) {
    stop_with(libc::SIGINT, call, "sweepfan: interrupted");
}

/// SIGTERM and SIGHUP end a run at once, as their default would, saying so (docs/design.md
/// §8.3).
#[cfg(unix)]
#[test]
fn termination_signals_end_a_run_saying_so() {
    let one_cpu_frame = ["--backend", "cpu", "--frames", "1"];
    let long = [&["bench"], &BRUTE_FORCE_300K[..], &one_cpu_frame].concat();
    stop_with(libc::SIGTERM, &long, "sweepfan: terminated (SIGTERM)");
    stop_with(libc::SIGHUP, &long, "sweepfan: hung up (SIGHUP)");
}

/// The tool with `call`, sent `signal` once it handles it: it ends by that signal within 2 s,
/// its standard error holding `says`.
#[cfg(unix)]
fn stop_with(signal: libc::c_int, call: &[&str], says: &str) {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};
    let mut child = crate::common::sweepfan_catching_sigint()
        .args(call)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A signal before the handler is installed would end the process silently: on Linux wait
    // until it catches the signal (`SigCgt` in /proc), elsewhere the sleep alone.
    let status = format!("/proc/{}/status", child.id());
    let waited = Instant::now();
    while waited.elapsed() < Duration::from_secs(30) {
        let Ok(text) = std::fs::read_to_string(&status) else {
            break;
        };
        let caught = text
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .is_some_and(|mask| mask & 1 << (signal - 1) != 0);
        if caught {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "{call:?} ended in 1.5 s"
    );
    // SAFETY: a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let signalled = Instant::now();
    let status = crate::common::wait_at_most(&mut child, Duration::from_secs(30), "after a signal");
    let after = signalled.elapsed();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.signal(), Some(signal), "{call:?}: {status}");
    assert!(stderr.contains(says), "{call:?}: {stderr}");
    assert!(
        after < Duration::from_secs(2),
        "{call:?}: stopped {after:?} after the signal"
    );
}

/// Messages a user can act on (issue 61, round 4): each names the argument or the file at
/// fault, never an object the user did not write or a file that exists.
#[test]
fn refusals_name_what_the_user_can_change() {
    let dir = temp_dir("hostile", "messages");
    let header_only = dir.join("header_only.csv");
    std::fs::write(&header_only, "x,y,z,r\n").unwrap();
    let two = dir.join("two.csv");
    std::fs::write(&two, "x,y,z,r\n0,0,0,1\n1,0,0,1\n").unwrap();
    let h = header_only.to_str().unwrap();
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["bench", "--n", "1e20"],
            &["--n", "too large", "at most 4294967294"],
        ),
        (
            &["bench", "--adapter", "", "--n", "10"],
            &["--adapter", "is empty"],
        ),
        (
            &[
                "bench", "--scene", "density", "--radius", "1e17", "--n", "100",
            ],
            &["--radius", "density scene"],
        ),
        (
            // What times a scene needs one (verify gives such a file no pairs).
            &["bench", "--scene-file", h],
            &["header_only.csv", "line 2", "no spheres"],
        ),
        (
            &[
                "bench",
                "--scene",
                "boulders",
                "--n",
                "100",
                "--boulders",
                "200",
            ],
            &["--boulders 200 exceeds --n 100"],
        ),
        (
            &["bench", "--scene", "paper", "--boulders", "3"],
            &["--boulders", "boulders scene"],
        ),
    ];
    for (args, want) in cases {
        let out = sweepfan().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        for w in want {
            assert!(stderr.contains(w), "{args:?} must name {w:?}: {stderr}");
        }
        assert!(
            !stderr.contains("object 0:") || stderr.contains("--radius"),
            "{stderr}"
        );
    }
    // A file that exists where no new file can be made: not "No such file" alone.
    #[cfg(target_os = "linux")]
    {
        let out = sweepfan()
            .args([
                "verify",
                "--scene-file",
                two.to_str().unwrap(),
                "--pairs-out",
            ])
            .arg("/proc/version")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            stderr.contains("cannot create the new file in /proc"),
            "{stderr}"
        );
    }
}

/// An output directory that cannot be made is refused before the run, naming its flag (it
/// failed after every rotation had run, and after the JSON was written).
#[cfg(target_os = "linux")]
#[test]
fn output_directories_that_cannot_be_made_are_refused_before_the_run() {
    // Before the run: nothing of it reported (a run prints its table's title first).
    refused_before_running(
        crate::common::sweepfan()
            .args(["reproduce", "sector", "--rotations", "2000000"])
            .args(["--plots", "/proc/sweepfan-no-such-dir"]),
        "--plots /proc/sweepfan-no-such-dir: cannot create it",
    );
}

/// A sort-bench size past a binding is refused before any size runs, naming it (the table
/// once stopped before it with a note and exit status 0).
#[test]
fn sort_bench_refuses_a_size_past_a_binding_before_running() {
    refused_before_running(
        crate::common::sweepfan().args([
            "--max-binding-bytes",
            "65536",
            "sort-bench",
            "--sizes",
            "1K,64K",
        ]),
        "--sizes 65536",
    );
}
