//! The library's test oracles and helpers (`tests/suite/common.rs`, shared), and the tool's:
//! running the `sweepfan` binary of this build and reading what it writes.

pub use crate::oracles::*;

/// The `sweepfan` binary of this build.
pub fn sweepfan() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_sweepfan"))
}

/// The `sweepfan` binary with SIGINT, SIGTERM and SIGHUP at their default disposition, whatever
/// this process inherited: a suite started in the background (`nohup scripts/test.sh &`)
/// ignores SIGINT (and SIGHUP), a child keeps an inherited ignore (as it should), and a test
/// that sends a signal must set what it relies on.
#[cfg(unix)]
pub fn sweepfan_catching_sigint() -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut cmd = sweepfan();
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            // SIGHUP too: under `nohup` the test's own process ignores it.
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                if libc::signal(signal, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    cmd
}

/// Waits at most `limit` for `child` to end; past it, kills it and fails naming `what`.
pub fn wait_at_most(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}, killed");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The output of a command that must succeed (its stderr in the failure message).
pub fn succeed(output: std::io::Result<std::process::Output>) -> std::process::Output {
    let out = output.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `sweepfan verify --scene-file SCENE --pairs-out PAIRS`.
pub fn verify(scene: &std::path::Path, pairs: &std::path::Path) -> std::process::Command {
    let mut cmd = sweepfan();
    cmd.args(["verify", "--scene-file"])
        .arg(scene)
        .arg("--pairs-out")
        .arg(pairs);
    cmd
}

/// `cmd` (a `verify`) with the next frame `next`: `--next-scene-file NEXT --found-out FOUND
/// --lost-out LOST`.
pub fn with_next_frame<'a>(
    cmd: &'a mut std::process::Command,
    next: &std::path::Path,
    found: &std::path::Path,
    lost: &std::path::Path,
) -> &'a mut std::process::Command {
    cmd.arg("--next-scene-file")
        .arg(next)
        .arg("--found-out")
        .arg(found)
        .arg("--lost-out")
        .arg(lost)
}

/// Runs `cmd`, which must succeed (`what`, its stdout and its stderr in the failure
/// message); its stdout.
pub fn succeed_stdout(cmd: &mut std::process::Command, what: &str) -> String {
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs `cmd`, which must end with exit 2 (a refused request); its output.
fn refused(cmd: &mut std::process::Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{cmd:?} should be refused (exit 2): stdout {} stderr {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `cmd`, which must end with exit 2 (a refused request); its stderr.
pub fn exits_2(cmd: &mut std::process::Command) -> String {
    String::from_utf8_lossy(&refused(cmd).stderr).into_owned()
}

/// Runs `cmd`, which must be refused before it runs anything: exit 2 naming `text` on stderr,
/// nothing on stdout (a run prints its title or first line there first).
pub fn refused_before_running(cmd: &mut std::process::Command, text: &str) {
    let out = refused(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(text),
        "{cmd:?} must name {text:?}: {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "{cmd:?} wrote {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Runs `cmd`, which must end with exit 2 naming `text` on stderr; its stderr.
pub fn exits_2_naming(cmd: &mut std::process::Command, text: &str) -> String {
    let stderr = exits_2(cmd);
    assert!(
        stderr.contains(text),
        "{cmd:?} must name {text:?}: {stderr}"
    );
    stderr
}

/// `dir/name` holding `text`.
pub fn write_file(dir: &std::path::Path, name: &str, text: impl AsRef<[u8]>) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A scene file `dir/scene.csv` of two touching unit spheres.
pub fn two_spheres(dir: &std::path::Path) -> std::path::PathBuf {
    write_file(dir, "scene.csv", "x,y,z,r\n0,0,0,1\n1,0,0,1\n")
}

/// Runs `sweepfan ARGS`, which must fail with an error naming `text` on stderr.
pub fn fails_naming(args: &[&str], text: &str) {
    let out = sweepfan().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(stderr.contains(text), "{args:?}: stderr was {stderr}");
}

/// The lines past the header of the CSV file at `path`, whose header must be `header`.
pub fn csv_rows(path: &std::path::Path, header: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(header), "{}", path.display());
    lines.map(str::to_owned).collect()
}

/// The pairs of a CSV `i,j` file (`verify --pairs-out`, `--found-out`, `--lost-out`), in the
/// file's order.
pub fn read_pairs(path: &std::path::Path) -> Vec<sweepfan::Pair> {
    csv_rows(path, "i,j")
        .iter()
        .map(|l| {
            let (i, j) = l.split_once(',').unwrap();
            [i.parse().unwrap(), j.parse().unwrap()]
        })
        .collect()
}

/// Runs `sweepfan bench FLAG ARGS` for each `(ARGS, text)` of `cases`: each must fail with an
/// error naming `text` (what the mode `FLAG` cannot do, refused).
pub fn bench_mode_refuses(flag: &str, cases: &[(&[&str], &str)]) {
    for (args, text) in cases {
        let mut all = vec!["bench", flag];
        all.extend_from_slice(args);
        fails_naming(&all, text);
    }
}

/// The `rows` of a JSON file written by `--json`.
pub fn json_rows(path: &std::path::Path) -> Vec<serde_json::Value> {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["rows"].as_array().unwrap().clone()
}

/// The rows of `sweepfan bench ARGS --json F`, a run that must succeed.
pub fn bench_rows(args: &[&str]) -> Vec<serde_json::Value> {
    bench_run(args).1
}

/// `sweepfan bench ARGS --json F`, a run that must succeed: its output and rows.
pub fn bench_run(args: &[&str]) -> (std::process::Output, Vec<serde_json::Value>) {
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = temp_dir("bench", &run.to_string());
    let json = dir.join("rows.json");
    let out = succeed(
        sweepfan()
            .arg("bench")
            .args(args)
            .arg("--json")
            .arg(&json)
            .output(),
    );
    let rows = json_rows(&json);
    std::fs::remove_dir_all(&dir).ok();
    (out, rows)
}

/// The GPU rows of `bench` on a 30,000-sphere density scene (`grid,sap,auto`) over `frames`
/// frames, with `extra` arguments.
pub fn gpu_density_rows(frames: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec![
        "--scene",
        "density",
        "--n",
        "30000",
        "--methods",
        "grid,sap,auto",
        "--backend",
        "gpu",
        "--frames",
        frames,
    ];
    args.extend(extra);
    bench_rows(&args)
}

/// Two runs' rows `a` and `b` of the same frames: the same method, `b` verified and finding
/// the same tests and pairs (some), `what` naming the two runs in a failure.
pub fn assert_same_frames(a: &serde_json::Value, b: &serde_json::Value, what: (&str, &str)) {
    assert_eq!(a["method"], b["method"]);
    assert_eq!(b["verified"], true, "{b}");
    for field in ["tests_per_frame", "pairs_per_frame"] {
        assert_eq!(
            a[field], b[field],
            "{field}: {} {a}\n{} {b}",
            what.0, what.1
        );
    }
    assert!(b["pairs_per_frame"].as_f64().unwrap() > 0.0, "{b}");
}

/// The rows of `gpu_density_rows(frames, &[])` and of the same run with `flag` (a mode of
/// frames on the GPU: `--in-flight`, `--resident`), three each, `what` naming the two runs
/// (the second as the mode's device names it, `… (in flight)`): row by row the same frames
/// (`assert_same_frames`) on the mode's device, its waits timed, and the same method chosen.
pub fn gpu_mode_rows(
    frames: &str,
    flag: &str,
    what: (&str, &str),
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let (host, mode) = (
        gpu_density_rows(frames, &[]),
        gpu_density_rows(frames, &[flag]),
    );
    assert_eq!(mode.len(), 3);
    let device = format!("({})", what.1);
    for (h, r) in host.iter().zip(&mode) {
        assert_same_frames(h, r, what);
        assert!(r["device"].as_str().unwrap().ends_with(&device), "{r}");
        assert!(r["host_ms"]["wait"].as_f64().is_some(), "{r}");
    }
    assert_eq!(mode[2]["chosen"]["method"], host[2]["chosen"]["method"]);
    (host, mode)
}

/// `bench --shape SHAPE --scene SCENE --n N --frames 2` on both backends where a GPU is, the
/// CPU alone elsewhere: its rows, one a backend, each checked for the shape, n and `verified`.
pub fn bench_shape_rows(shape: &str, scene: &str, n: usize) -> Vec<serde_json::Value> {
    let backend = if crate::common::test_gpu().is_some() {
        "both"
    } else {
        "cpu"
    };
    let n_text = n.to_string();
    let rows = bench_rows(&[
        "--shape",
        shape,
        "--scene",
        scene,
        "--n",
        &n_text,
        "--frames",
        "2",
        "--backend",
        backend,
    ]);
    assert_eq!(rows.len(), if backend == "both" { 2 } else { 1 });
    for r in &rows {
        assert_eq!(r["shape"], shape);
        assert_eq!(r["n"], n);
        assert_eq!(r["verified"], true);
    }
    rows
}

/// A context on the adapter the test environment names, or `None` where `SWEEPFAN_NO_GPU=1`
/// opts out (the library's test knob, feature `testing`).
pub fn test_gpu() -> Option<sweepfan::GpuContext> {
    sweepfan::gpu::test_gpu_with(|name| std::env::var(name).ok())
}

/// The GPU options the environment asks for, as the tool maps them (`with_env`).
pub fn test_options() -> sweepfan::gpu::GpuOptions {
    sweepfan_cli::run::gpu::with_env(Default::default()).expect("the environment's GPU options")
}
