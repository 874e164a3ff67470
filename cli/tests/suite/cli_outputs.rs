//! Outputs of every kind (issue "Hostile input, round 2", items 1 and 2; docs/design.md §8.3):
//! a device, a FIFO, a descriptor, a symbolic link and a read-only folder each get what they
//! should, a failed write is an error naming the path, and a failed write to standard output is
//! exit 1 with a message (never a panic, never exit 0).

#![cfg(target_os = "linux")]

use crate::common::{exits_2, rust_files, succeed, sweepfan, temp_dir, two_spheres, verify};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::process::{Output, Stdio};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Standard output on `/dev/full` (every write fails with ENOSPC).
fn full_device() -> std::fs::File {
    std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux")
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// A new FIFO at `path` (any old file there removed), opened for reading first without
/// blocking: the writer's open then returns at once, and a run that never writes to the FIFO
/// leaves it empty (end of file) instead of hanging.
fn fifo_reader(path: &Path) -> std::fs::File {
    let _ = std::fs::remove_file(path);
    mkfifo(path);
    std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .unwrap()
}

fn is_fifo(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// `--json /dev/full`: an error naming the device and the reason, exit 2; the device is written
/// in place, not replaced by a regular file (which root could do, and once did).
#[cfg(target_os = "linux")]
#[test]
fn a_full_device_is_an_error_naming_it_and_stays_a_device() {
    assert!(
        Path::new("/dev/full").exists(),
        "premise: Linux has /dev/full"
    );
    let out = sweepfan()
        .args(["bench", "--n", "100", "--frames", "1", "--methods", "grid"])
        .args(["--backend", "cpu", "--json", "/dev/full"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/dev/full") && err.contains("No space left on device"),
        "{err}"
    );
    let meta = std::fs::symlink_metadata("/dev/full").unwrap();
    assert!(meta.file_type().is_char_device(), "/dev/full was replaced");
    // The same for a pair file.
    let dir = temp_dir("outputs", "full");
    let out = verify(&two_spheres(&dir), Path::new("/dev/full"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/dev/full: No space left on device"), "{err}");
}

/// A FIFO (what `mkfifo` makes, what a pipeline reads) gets the output and stays a FIFO.
#[test]
fn a_fifo_gets_the_output_and_stays_a_fifo() {
    let dir = temp_dir("outputs", "fifo");
    let fifo = dir.join("pairs.fifo");
    let mut reader = fifo_reader(&fifo);
    let out = verify(&two_spheres(&dir), &fifo).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut got = String::new();
    reader.read_to_string(&mut got).unwrap();
    assert_eq!(got, "i,j\n0,1\n");
    assert!(is_fifo(&fifo), "the FIFO was replaced");
}

/// A FIFO whose reader leaves mid-run: `Broken pipe`, naming the FIFO, exit 2 (not a silent
/// death by SIGPIPE, not exit 0).
#[cfg(target_os = "linux")]
#[test]
fn a_fifo_whose_reader_left_is_an_error_naming_it() {
    let dir = temp_dir("outputs", "fifo-gone");
    // 600 overlapping spheres: 179,700 pairs, about 1.4 MB of CSV, far more than a pipe holds
    // (64 KiB), so the run is still writing when the reader leaves.
    let scene = dir.join("crowd.csv");
    let mut text = String::from("x,y,z,r\n");
    for i in 0..600 {
        text.push_str(&format!("{},0,0,1\n", f64::from(i) * 0.001));
    }
    std::fs::write(&scene, text).unwrap();
    let fifo = dir.join("pairs.fifo");
    let mut reader = fifo_reader(&fifo);
    let mut child = verify(&scene, &fifo)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let mut first = 0;
    let mut buf = [0u8; 4096];
    while first == 0 {
        match reader.read(&mut buf) {
            Ok(n) => first = n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("reading the FIFO: {e}"),
        }
        if first > 0
            || child.try_wait().unwrap().is_some()
            || start.elapsed() > std::time::Duration::from_secs(120)
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(reader);
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(first > 0, "nothing reached the FIFO: {err}");
    assert_eq!(out.status.code(), Some(2), "{:?}: {err}", out.status);
    assert!(
        err.contains(&fifo.display().to_string()) && err.contains("Broken pipe"),
        "{err}"
    );
    assert!(is_fifo(&fifo));
}

/// `--pairs-out /dev/fd/N` on a pipe, as `>(jq .)` gives: written through the descriptor.
#[cfg(target_os = "linux")]
#[test]
fn a_process_substitution_gets_the_output() {
    use std::os::fd::FromRawFd;
    use std::os::unix::process::CommandExt;
    let dir = temp_dir("outputs", "procsub");
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors; both close on exec in other children.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let (r, w) = (fds[0], fds[1]);
    let mut cmd = verify(&two_spheres(&dir), Path::new(&format!("/dev/fd/{w}")));
    // SAFETY: only fcntl, async-signal-safe, between fork and exec: the write end stays open
    // in this child alone.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(w, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    // SAFETY: our copy of the write end, closed once (the reader then sees the child's end).
    unsafe { libc::close(w) };
    let child = child.unwrap();
    // SAFETY: `r` is ours alone from here.
    let mut reader = unsafe { std::fs::File::from_raw_fd(r) };
    let mut got = String::new();
    reader.read_to_string(&mut got).unwrap();
    let out = succeed(child.wait_with_output());
    assert_eq!(got, "i,j\n0,1\n");
    // Standard output kept the report only.
    assert!(!String::from_utf8_lossy(&out.stdout).contains("i,j"));
}

/// A symbolic link is followed: its target is replaced (atomically), the link stays a link; a
/// link to a file not yet there creates that file.
#[test]
fn a_symbolic_link_is_followed() {
    let dir = temp_dir("outputs", "link");
    let scene = two_spheres(&dir);
    // `verify` writing through `dir/link`, a fresh link to `target`: the link stays a link and
    // the target holds the pairs.
    let through_link = |link: &str, target: &str| {
        let link = dir.join(link);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, &link).unwrap();
        succeed(verify(&scene, &link).output());
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link was replaced"
        );
        let got = std::fs::read_to_string(dir.join(target)).unwrap();
        assert_eq!(got, "i,j\n0,1\n");
    };
    std::fs::write(dir.join("real.csv"), "old\n").unwrap();
    through_link("link.csv", "real.csv");
    let _ = std::fs::remove_file(dir.join("made.csv"));
    through_link("dangling.csv", "made.csv");
    // No temporary file is left anywhere in the folder.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(!name.to_string_lossy().ends_with(".tmp"), "{name:?} left");
    }
}

/// A folder this user may not write to: refused before the run, naming the flag, the folder
/// and why. Root passes permission checks, so as root the tool runs as `nobody` (uid and gid
/// 65534), which may read the scene but not write the folder; where root cannot become
/// `nobody` or `nobody` cannot reach the binary (a container without the capability, a
/// checkout in a private folder), the test says so and does not run.
#[test]
fn a_read_only_folder_is_refused_before_the_run() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = temp_dir("outputs", "read-only");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let scene = two_spheres(&dir);
    let ro = dir.join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut command = verify(&scene, &ro.join("pairs.csv"));
    if is_root() {
        let as_nobody = |c: &mut std::process::Command| {
            // SAFETY: setgroups, setgid and setuid are async-signal-safe, called in the child
            // between fork and exec, touching no memory of the parent's.
            unsafe {
                c.pre_exec(|| {
                    let nobody = 65534;
                    if libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(nobody) != 0
                        || libc::setuid(nobody) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        };
        let mut reach = std::process::Command::new("/bin/sh");
        reach
            .args(["-c", r#"test -x "$0" && test -r "$1" && test -x "$2""#])
            .arg(command.get_program())
            .args([&scene, &dir]);
        as_nobody(&mut reach);
        if !reach.status().is_ok_and(|s| s.success()) {
            eprintln!("running as root, which cannot run the tool as nobody here: test not run");
            return;
        }
        as_nobody(&mut command);
    }
    let out = command.output().unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--pairs-out")
            && err.contains("cannot create files in directory")
            && err.contains(&ro.display().to_string())
            && err.contains("Permission denied"),
        "{err}"
    );
    // Refused before any work: no report line on stdout.
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A character device of our own (`mknod`, /dev/null's numbers 1:3) in a temporary folder: as
/// root, the old atomic write replaced it with a regular file. Premise: root, and a file system
/// that allows opening device nodes (not mounted `nodev`).
#[cfg(target_os = "linux")]
#[test]
fn a_private_device_node_stays_a_device() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    if !is_root() {
        eprintln!("not root, so no device node can be made: test not run");
        return;
    }
    let dir = temp_dir("outputs", "mknod");
    let node = dir.join("null");
    let _ = std::fs::remove_file(&node);
    let c = std::ffi::CString::new(node.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if made != 0 || std::fs::File::options().write(true).open(&node).is_err() {
        eprintln!(
            "no usable device node here ({}): test not run",
            std::io::Error::last_os_error()
        );
        return;
    }
    let rdev = std::fs::metadata(&node).unwrap().rdev();
    succeed(verify(&two_spheres(&dir), &node).output());
    let meta = std::fs::symlink_metadata(&node).unwrap();
    assert!(meta.file_type().is_char_device(), "the node was replaced");
    assert_eq!(meta.rdev(), rdev);
    // Two outputs to one character device are fine (both to /dev/null).
    let out = sweepfan()
        .args(["bench", "--n", "100", "--frames", "1", "--methods", "grid"])
        .args(["--backend", "cpu", "--json"])
        .arg(&node)
        .arg("--csv")
        .arg(&node)
        .output();
    succeed(out);
    assert!(
        std::fs::symlink_metadata(&node)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    std::fs::remove_file(&node).unwrap();
}

/// Standard output on a full device: exit 1 and one line saying so, for the report and for
/// `--pairs-out -`; never a panic (exit 101).
#[cfg(target_os = "linux")]
#[test]
fn a_full_standard_output_is_exit_1_with_a_message() {
    let dir = temp_dir("outputs", "stdout-full");
    let scene = two_spheres(&dir);
    let runs: [Vec<std::ffi::OsString>; 3] = [
        // The report on standard output.
        vec![
            "verify".into(),
            "--scene-file".into(),
            scene.clone().into(),
            "--pairs-out".into(),
            dir.join("p.csv").into(),
        ],
        // The pairs themselves on standard output.
        vec![
            "verify".into(),
            "--scene-file".into(),
            scene.clone().into(),
            "--pairs-out".into(),
            "-".into(),
        ],
        // A table.
        ["bench", "--n", "100", "--frames", "1", "--methods", "grid"]
            .iter()
            .map(|s| std::ffi::OsString::from(*s))
            .collect(),
    ];
    for args in &runs {
        let out = sweepfan()
            .args(args)
            .stdout(full_device())
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("sweepfan: cannot write to standard output: No space left on device"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// `--help` and `--version` check their write too: clap's own exit reported success on a full
/// device. On a working standard output they still exit 0.
#[cfg(target_os = "linux")]
#[test]
fn help_and_version_on_a_full_device_fail() {
    for flag in ["--help", "--version"] {
        let out = sweepfan().arg(flag).stdout(full_device()).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(err.contains("cannot write to standard output"), "{err}");
        let out = succeed(sweepfan().arg(flag).output());
        assert!(!out.stdout.is_empty());
    }
    let out = sweepfan()
        .args(["bench", "--help"])
        .stdout(full_device())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // A usage error still goes to stderr with exit 2.
    let out = sweepfan().arg("--no-such-flag").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `shaders --out` an existing regular file: the path and "not a directory", not "File exists".
#[test]
fn shaders_out_on_a_file_says_it_is_not_a_directory() {
    let dir = temp_dir("outputs", "shaders");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let err = exits_2(sweepfan().args(["shaders", "--out"]).arg(&file));
    assert!(
        err.contains(&file.display().to_string()) && err.contains("not a directory"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"");
}

/// The CLI writes standard output only through checked writes (`outln!`, `out!`, `say!` in
/// `src/bin/sweepfan/args.rs`): a `println!` or `print!` would panic on a full device.
#[test]
fn the_cli_prints_only_through_checked_writes() {
    let mut all = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin"),
        &mut all,
    );
    assert!(!all.is_empty());
    let mut bad = Vec::new();
    for file in all {
        let text = std::fs::read_to_string(&file).unwrap();
        for (k, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let unchecked = ["println!", "print!"].iter().any(|m| {
                code.match_indices(m)
                    .any(|(at, _)| !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
            });
            if unchecked {
                bad.push(format!("{}:{}: {line}", file.display(), k + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "unchecked writes to stdout:\n{}",
        bad.join("\n")
    );
}
