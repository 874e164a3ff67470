//! The output module's tests: checks before a run, atomic writes.
use super::*;

fn temporaries_in(dir: &Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect()
}

#[test]
fn outputs_are_checked_before_the_run() {
    let dir = crate::run::test_dir("output");
    let input = dir.join("scene.csv");
    std::fs::write(&input, "x").unwrap();
    let a = dir.join("a.json");
    let ok = check_outputs(&[("--json", &a)], &[], &[&input]);
    assert!(ok.is_ok());
    let e = check_outputs(&[("--pairs-out", &input)], &[], &[&input]).unwrap_err();
    assert!(e.to_string().contains("input"), "{e}");
    // The same file by another spelling.
    let again = dir.join(".").join("a.json");
    let e = check_outputs(&[("--json", &a), ("--csv", &again)], &[], &[]).unwrap_err();
    assert!(e.to_string().contains("also the --json"), "{e}");
    let e = check_outputs(&[("--json", &dir.join("no/such/x.json"))], &[], &[]).unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    let e = check_outputs(&[("--json", &dir)], &[], &[]).unwrap_err();
    assert!(e.to_string().contains("directory"), "{e}");
    let dash = Path::new("-");
    let e = check_outputs(&[("--json", dash), ("--csv", dash)], &[], &[]).unwrap_err();
    assert!(e.to_string().contains("standard output"), "{e}");
    let stdout = Path::new("/dev/stdout");
    let e = check_outputs(&[("--json", dash), ("--csv", stdout)], &[], &[]).unwrap_err();
    assert!(e.to_string().contains("standard output"), "{e}");
    let e = check_outputs(&[], &[("--plots", &input)], &[]).unwrap_err();
    assert!(e.to_string().contains("not a directory"), "{e}");
    // A file output named as a new directory output (`dist --pairs-out q --events-out q/`):
    // the file would have been written into the directory, a file per rank.
    let q = dir.join("q");
    let q_dir = PathBuf::from(format!("{}/", q.display()));
    let e = check_outputs(&[("--pairs-out", &q)], &[("--events-out", &q_dir)], &[]);
    let e = e.unwrap_err().to_string();
    assert!(
        e.contains("--events-out") && e.contains("also the --pairs-out"),
        "{e}"
    );
    assert!(!q.exists(), "the directory is not made");
    // A file output among the files a directory output gets (`--plots p --json p/a.svg`).
    let plots = dir.join("plots");
    std::fs::create_dir(&plots).unwrap();
    let svg = plots.join("time_vs_n.svg");
    let e = check_outputs(&[("--json", &svg)], &[("--plots", &plots)], &[]);
    let e = e.unwrap_err().to_string();
    assert!(
        e.contains("--json") && e.contains("--plots directory"),
        "{e}"
    );
    let beside = plots.join("rows.json");
    check_outputs(&[("--json", &beside)], &[("--plots", &plots)], &[]).unwrap();
    // Atomic write: the content lands whole, no temporary file is left.
    write_bytes(&a, b"{}\n").unwrap();
    assert_eq!(std::fs::read(&a).unwrap(), b"{}\n");
    assert!(temporaries_in(&dir).is_empty());
    // A failed fill leaves the old file and no temporary.
    let e = write_with(&a, |w| {
        w.write_all(b"half")?;
        Err(std::io::Error::other("fill failed"))
    })
    .unwrap_err();
    assert!(e.to_string().contains("a.json"), "{e}");
    assert_eq!(std::fs::read(&a).unwrap(), b"{}\n");
    assert!(temporaries_in(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn what_each_path_is() {
    assert_eq!(target(Path::new("-")).unwrap(), Target::Stdout);
    assert_eq!(target(Path::new("/dev/stdout")).unwrap(), Target::Stdout);
    assert_eq!(target(Path::new("/dev/fd/1")).unwrap(), Target::Stdout);
    assert!(stdout_error(&Error::io(STDOUT, std::io::Error::other("x"))).is_some());
    assert!(stdout_error(&Error::io("a.json", std::io::Error::other("x"))).is_none());
    if Path::new("/dev/null").exists() {
        assert_eq!(target(Path::new("/dev/null")).unwrap(), Target::InPlace);
    }
    let dir = crate::run::test_dir("target");
    let dir = dir.canonicalize().unwrap();
    assert!(target(&dir).is_err());
    let new = dir.join("new.json");
    assert_eq!(target(&new).unwrap(), Target::Atomic(new.clone()));
    #[cfg(unix)]
    {
        // A link to a file to be made: the file is made there, the link stays.
        let link = dir.join("link.json");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("made.json", &link).unwrap();
        assert_eq!(
            target(&link).unwrap(),
            Target::Atomic(dir.join("made.json"))
        );
        // Made there first; once it exists, replaced through the link.
        for content in [b"1\n", b"2\n"] {
            write_bytes(&link, content).unwrap();
            assert!(
                std::fs::symlink_metadata(&link)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
            assert_eq!(std::fs::read(dir.join("made.json")).unwrap(), content);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The files of `write_tree`, and an existing file where its directory should be.
#[test]
fn trees_need_a_directory() {
    let dir = crate::run::test_dir("tree");
    let files = vec![("a/b.wgsl".to_string(), "x".to_string())];
    let out = dir.join("out");
    let written = write_tree(&out, &files).unwrap();
    assert_eq!(written, vec![out.join("a/b.wgsl")]);
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let e = write_tree(&file, &files).unwrap_err().to_string();
    assert!(e.contains("file") && e.contains("not a directory"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What the Ctrl-C handler does to a write in progress: its temporary is removed, and the
/// write's own clean-up then has nothing left to free.
#[cfg(unix)]
#[test]
fn the_signal_handler_removes_temporaries() {
    let dir = crate::run::test_dir("signal");
    let tmp = dir.join(".x.json.tmp");
    std::fs::write(&tmp, "partial").unwrap();
    let guard = Temporary::new(tmp.clone());
    let slot = guard.slot.expect("a free slot");
    signals::remove_slot_as_the_handler_does(slot);
    assert!(!tmp.exists());
    drop(guard);
    std::fs::remove_dir_all(&dir).unwrap();
}
