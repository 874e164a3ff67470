//! Output files: checked before a run starts (so a long run never ends in an unwritable path,
//! and never overwrites its own input), written atomically (a temporary file in the same
//! directory, renamed over the target: a failed write leaves the old file or none), and `-`
//! meaning standard output.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Whether `path` means standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The absolute form of `path` for comparisons: canonical when it exists, else its canonical
/// directory joined with its name.
fn absolute(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(dir.canonicalize().ok()?.join(path.file_name()?))
}

/// Checks every output (`flag`, path) before a run: its directory exists, it is not a
/// directory, it is not one of `inputs`, no two outputs are the same file, and at most one is
/// `-` (standard output). `dirs` are output directories (plots): created if missing, which
/// needs their parent to exist.
pub fn check_outputs(
    files: &[(&str, &Path)],
    dirs: &[(&str, &Path)],
    inputs: &[&Path],
) -> Result<()> {
    let bad = |flag: &str, path: &Path, why: String| {
        Err(Error::Config(format!("{flag} {}: {why}", path.display())))
    };
    let mut seen: Vec<(&str, PathBuf)> = Vec::new();
    let mut stdout_flag: Option<&str> = None;
    for &(flag, path) in files {
        if is_stdout(path) {
            if let Some(other) = stdout_flag {
                return bad(
                    flag,
                    path,
                    format!("{other} already writes to standard output"),
                );
            }
            stdout_flag = Some(flag);
            continue;
        }
        if path.is_dir() {
            return bad(flag, path, "is a directory".into());
        }
        let Some(abs) = absolute(path) else {
            let dir = path.parent().unwrap_or(Path::new("."));
            return bad(
                flag,
                path,
                format!("directory {} does not exist", dir.display()),
            );
        };
        for input in inputs {
            if absolute(input).is_some_and(|i| i == abs) {
                return bad(
                    flag,
                    path,
                    "is an input of this run; it would be overwritten".into(),
                );
            }
        }
        if let Some((other, _)) = seen.iter().find(|(_, p)| *p == abs) {
            return bad(flag, path, format!("is also the {other} output"));
        }
        seen.push((flag, abs));
    }
    for &(flag, dir) in dirs {
        if dir.exists() && !dir.is_dir() {
            return bad(flag, dir, "exists and is not a directory".into());
        }
        let parent = match dir.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.exists() && !parent.is_dir() {
            return bad(
                flag,
                dir,
                format!("directory {} does not exist", parent.display()),
            );
        }
    }
    Ok(())
}

/// Writes what `fill` produces to `path` atomically, or to standard output for `-`.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        return fill(&mut out)
            .and_then(|()| out.flush())
            .map_err(|e| Error::io("standard output", e));
    }
    let name = path
        .file_name()
        .ok_or_else(|| Error::Config(format!("{}: not a file name", path.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::new(file);
        fill(&mut w)?;
        w.flush()?;
        w.get_ref().sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Writes `bytes` to `path` (see [`write_with`]).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_checked_before_the_run() {
        let dir = std::env::temp_dir().join(format!("sweepfan-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
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
        let e = check_outputs(&[], &[("--plots", &input)], &[]).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
        // Atomic write: the content lands whole, no temporary file is left.
        write_bytes(&a, b"{}\n").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"{}\n");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
            .collect();
        assert!(left.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
