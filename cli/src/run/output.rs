//! Output files, every one of them (docs/design.md §8.3): checked before a run starts (so a long
//! run never ends in an unwritable path, and never overwrites its own input), then written
//! according to what the path is:
//! * `-` (or `/dev/stdout`): standard output;
//! * a regular file, or a path that does not exist yet: atomically (a temporary file beside it,
//!   fsync, rename over it; a failed or interrupted write leaves the old file or none, and no
//!   temporary); a symbolic link is followed, so the target is replaced and the link stays;
//! * anything else (a character device such as `/dev/null`, a FIFO, a process substitution's
//!   `/dev/fd/N`, a socket): opened and written in place, never replaced.
//!
//! A write error (a full device, a reader that went away) is an [`Error::Io`] naming the path.

use std::io::Write;
use std::path::{Path, PathBuf};
use sweepfan::error::{Error, Result};

mod signals;

/// The name errors give standard output (`main` tells a failed standard output by it).
pub const STDOUT: &str = "standard output";

/// Whether `path` means standard output: `-`, `/dev/stdout`, or descriptor 1 by its `/dev/fd`
/// or `/proc/self/fd` name (written through the process's own standard output, so a shell
/// redirection to a file is appended to, not replaced).
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-" || descriptor(path) == Some(1)
}

/// The descriptor a `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` or `/proc/self/fd/N` path names.
fn descriptor(path: &Path) -> Option<i32> {
    let s = path.to_str()?;
    match s {
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let n = s
        .strip_prefix("/dev/fd/")
        .or_else(|| s.strip_prefix("/proc/self/fd/"))?;
    n.parse().ok()
}

/// `Some(the OS error)` when `e` is a failed write to standard output (see [`STDOUT`]).
pub fn stdout_error(e: &Error) -> Option<&std::io::Error> {
    match e {
        Error::Io { path, source } if path.as_os_str() == STDOUT => Some(source),
        Error::Context { source, .. } => stdout_error(source),
        _ => None,
    }
}

/// How an output path is written.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// Standard output (`-`, `/dev/stdout`).
    Stdout,
    /// A regular file or a new path, written atomically at this path (symbolic links resolved).
    Atomic(PathBuf),
    /// Another open descriptor of this process (`/dev/fd/N`, a process substitution): written
    /// through a duplicate of it.
    Descriptor(i32),
    /// A character or block device, a FIFO: opened and written in place.
    InPlace,
    /// A Unix socket: connected to and written.
    Socket,
}

/// Whether `path` is written atomically (a regular file or a new path): a file that can be
/// written again and again as results arrive, each time whole, never seen half-written.
pub fn is_replaced_whole(path: &Path) -> bool {
    matches!(target(path), Ok(Target::Atomic(_)))
}

/// What `path` is, hence how it is written (docs/design.md §8.3).
fn target(path: &Path) -> std::io::Result<Target> {
    if is_stdout(path) {
        return Ok(Target::Stdout);
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {
            if let Some(fd) = descriptor(path) {
                // A shell redirection `3> file`: the descriptor's own offset, not a replacement.
                return Ok(Target::Descriptor(fd));
            }
            Ok(Target::Atomic(
                path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
            ))
        }
        Ok(m) if m.is_dir() => Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        )),
        Ok(m) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::FileTypeExt;
                if m.file_type().is_socket() {
                    return Ok(Target::Socket);
                }
            }
            #[cfg(not(unix))]
            let _ = m;
            Ok(match descriptor(path) {
                Some(fd) => Target::Descriptor(fd),
                None => Target::InPlace,
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(Target::Atomic(follow_dangling_links(path)?))
        }
        Err(e) => Err(e),
    }
}

/// The path a chain of symbolic links ends at, when that end does not exist yet (a link to a
/// file still to be written): the new file is created there and the link kept. A path that is
/// not a link is returned as it is.
fn follow_dangling_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                // A relative link is relative to the link's directory; `join` keeps an absolute one.
                p = match p.parent() {
                    Some(dir) => dir.join(link),
                    None => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
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

/// `Err(why)` when this process may not write `path` (`W_OK`), or, with `create`, create and
/// rename files in the directory `path` (`W_OK | X_OK`). Root passes except on a read-only
/// file system, as its writes do.
fn check_access(path: &Path, create: bool) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return Ok(()); // a NUL in the path: the write itself will say so
        };
        let mode = if create {
            libc::W_OK | libc::X_OK
        } else {
            libc::W_OK
        };
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        if unsafe { libc::access(c.as_ptr(), mode) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        match std::fs::metadata(path) {
            Ok(m) if m.permissions().readonly() && !create => Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "read-only",
            )),
            _ => Ok(()),
        }
    }
}

/// Whether `path` is (or links to) a character device.
fn is_char_device(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Checks every output (`flag`, path) before a run: its directory exists, it is not a
/// directory, it is not one of `inputs`, no two outputs are the same file, at most one is
/// standard output, and it can be written: a regular or new file needs a directory this process
/// may create files in (the atomic write puts a temporary file there), a device or FIFO needs
/// write permission on itself. `dirs` are output directories (plots, shader modules): created
/// here if missing (their parent must exist), and writable.
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
        let kind = match target(path) {
            Ok(kind) => kind,
            Err(e) => return bad(flag, path, e.to_string()),
        };
        match &kind {
            Target::Atomic(real) => {
                let dir = match real.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                if let Err(e) = check_access(dir, true) {
                    return bad(
                        flag,
                        path,
                        format!(
                            "cannot create files in directory {}: {e} (an output is written \
                             to a temporary file there, then renamed)",
                            dir.display()
                        ),
                    );
                }
            }
            Target::InPlace | Target::Socket => {
                if let Err(e) = check_access(path, false) {
                    return bad(flag, path, format!("cannot write: {e}"));
                }
            }
            Target::Stdout | Target::Descriptor(_) => {}
        }
        // Two outputs to one regular file would overwrite each other; two to a character
        // device (`/dev/null`) are fine.
        let device = matches!(kind, Target::InPlace) && is_char_device(path);
        if !device && let Some((other, _)) = seen.iter().find(|(_, p)| *p == abs) {
            return bad(flag, path, format!("is also the {other} output"));
        }
        seen.push((flag, abs));
    }
    for &(flag, dir) in dirs {
        if dir.exists() && !dir.is_dir() {
            return bad(flag, dir, "exists and is not a directory".into());
        }
        // A file output named as this directory would be written into it, as a file per rank
        // would, not as the one file asked for.
        if let Some(abs) = absolute(dir)
            && let Some((other, _)) = seen.iter().find(|(_, p)| *p == abs)
        {
            return bad(flag, dir, format!("is also the {other} output (a file)"));
        }
        // One inside it, named as the run names its files there, could be one of them.
        if let (Some(abs), Some((part, ending))) = (absolute(dir), written_in(flag))
            && let Some((other, path)) = seen.iter().find(|(_, p)| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default();
                p.parent() == Some(abs.as_path()) && name.contains(part) && name.ends_with(ending)
            })
        {
            return bad(
                other,
                path,
                format!(
                    "lies in the {flag} directory {}, among the {ending} files the run writes \
                     there; name it otherwise or put it elsewhere",
                    dir.display()
                ),
            );
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
        // Made now, and files must go into it: checked before the run, not after it (a
        // directory under /proc or a read-only one failed once the run had ended).
        if !dir.exists()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            return bad(flag, dir, format!("cannot create it: {e}"));
        }
        if let Err(e) = check_access(dir, true) {
            return bad(flag, dir, format!("cannot create files in it: {e}"));
        }
    }
    Ok(())
}

/// How the files a run writes into its output directory `flag` are named, (a part of the name,
/// its ending) (`--plots`: SVG plots, `--out`: shader modules, dist's `KIND-rank-R.csv`): a
/// file output there so named could be one of them.
fn written_in(flag: &str) -> Option<(&'static str, &'static str)> {
    match flag {
        "--plots" => Some(("", ".svg")),
        "--out" => Some(("", ".wgsl")),
        "--pairs-out" | "--events-out" => Some(("-rank-", ".csv")),
        _ => None,
    }
}

/// A writer that fails once the tool's token is cancelled (`crate::run::interrupted`), with an
/// error of its own kind (`write_all` retries `ErrorKind::Interrupted`).
struct StopOnInterrupt<'a>(&'a mut dyn Write);

impl Write for StopOnInterrupt<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if crate::run::interrupted() {
            return Err(std::io::Error::other("interrupted"));
        }
        self.0.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Writes what `fill` produces to `path`: atomically for a regular or new file, in place for a
/// device, FIFO or socket, to standard output for `-` (see the module's documentation). The
/// error of a failed write names `path` ([`STDOUT`] for standard output).
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    // Ctrl-C stops a long write (a scene of 10^8 rows) at its next block, as it stops the
    // library's calls (docs/design.md §9.18): the write fails, the temporary goes.
    let fill = |w: &mut dyn Write| fill(&mut StopOnInterrupt(w));
    let kind = target(path).map_err(|e| Error::io(path, e))?;
    match kind {
        Target::Stdout => {
            // Buffered: standard output's own writer flushes every line (two system calls a
            // pair: 1.1M pairs took 2.0 s, 0.13 s to a file).
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            fill(&mut out)
                .and_then(|()| out.flush())
                .map_err(|e| Error::io(STDOUT, e))
        }
        Target::Atomic(real) => write_atomically(&real, fill).map_err(|e| Error::io(path, e)),
        Target::Descriptor(fd) => {
            write_in_place(|| duplicate(fd), fill).map_err(|e| Error::io(path, e))
        }
        Target::InPlace => {
            write_in_place(|| std::fs::OpenOptions::new().append(true).open(path), fill)
                .map_err(|e| Error::io(path, e))
        }
        Target::Socket => {
            #[cfg(unix)]
            {
                write_in_place(|| std::os::unix::net::UnixStream::connect(path), fill)
                    .map_err(|e| Error::io(path, e))
            }
            #[cfg(not(unix))]
            {
                let _ = fill;
                Err(Error::io(
                    path,
                    std::io::Error::other("sockets are not supported here"),
                ))
            }
        }
    }
}

/// Writes `bytes` to `path` (see [`write_with`]).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Writes `files` (paths relative to `dir`, and their text) under `dir`, creating it and the
/// subdirectories as needed, each file through [`write_bytes`]. Returns the paths written.
pub fn write_tree(dir: &Path, files: &[(String, String)]) -> Result<Vec<PathBuf>> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::Config(format!(
            "{}: exists and is not a directory",
            dir.display()
        )));
    }
    let mut written = Vec::with_capacity(files.len());
    for (name, text) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                let why = if e.kind() == std::io::ErrorKind::AlreadyExists
                    || e.kind() == std::io::ErrorKind::NotADirectory
                {
                    std::io::Error::other("a path on the way exists and is not a directory")
                } else {
                    e
                };
                Error::io(parent, why)
            })?;
        }
        write_bytes(&path, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// The atomic write: a new temporary file in `path`'s directory (registered for removal on
/// Ctrl-C), filled, given the mode of the file it replaces, synced, renamed over `path`. Any
/// failure removes the temporary.
fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    // The file itself may exist where no file can be created (`/proc/version`): say that the
    // new file beside it failed, not only the system's "No such file".
    let (tmp, file) = create_temporary(path, name).map_err(|e| {
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(d) => d.display().to_string(),
            None => ".".to_string(),
        };
        std::io::Error::new(
            e.kind(),
            format!("cannot create the new file in {dir} that replaces it in one step: {e}"),
        )
    })?;
    let guard = Temporary::new(tmp);
    let mut w = std::io::BufWriter::new(file);
    fill(&mut w)?;
    let file = w.into_inner().map_err(|e| e.into_error())?;
    if let Ok(old) = std::fs::metadata(path) {
        file.set_permissions(old.permissions())?;
    }
    file.sync_all()?;
    drop(file);
    std::fs::rename(&guard.path, path)?;
    guard.keep();
    // The rename itself reaches the disk when the directory is synced; a file system that
    // cannot sync a directory has still renamed.
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A new file `.NAME.PID.K.tmp` beside `path` (created exclusively: never an existing file or a
/// link someone placed there).
fn create_temporary(
    path: &Path,
    name: &std::ffi::OsStr,
) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    loop {
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}.{k}.tmp", std::process::id()));
        let tmp = path.with_file_name(tmp_name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && k < 1_000_000 => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A temporary file, removed when dropped unless [`Temporary::keep`] (it was renamed), and
/// while it exists listed for the signal handler (see [`remove_temporaries_on_signals`]).
struct Temporary {
    path: PathBuf,
    slot: Option<usize>,
    kept: bool,
}

impl Temporary {
    fn new(path: PathBuf) -> Self {
        let slot = signals::register(&path);
        Temporary {
            path,
            slot,
            kept: false,
        }
    }

    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            signals::unregister(slot);
        }
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Writes in place: `open` (a device, a FIFO, a socket, a duplicated descriptor), `fill`
/// through a buffer, flush. A reader that went away is an error (`Broken pipe`), not the
/// silent end `SIGPIPE` gives a pipe on standard output (docs/design.md §8.3).
fn write_in_place<W: Write>(
    open: impl FnOnce() -> std::io::Result<W>,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let _pipe = signals::PipeErrorsAsErrors::new();
    let mut w = std::io::BufWriter::new(open()?);
    fill(&mut w)?;
    w.flush()
}

/// A new file handle on this process's descriptor `fd` (`/dev/fd/N`).
fn duplicate(fd: i32) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd;
        // SAFETY: dup has no memory preconditions; a bad descriptor is an error return.
        let new = unsafe { libc::dup(fd) };
        if new < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `new` is a descriptor this process just opened and owns alone.
        Ok(unsafe { std::fs::File::from_raw_fd(new) })
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        Err(std::io::Error::other(
            "descriptor paths are not supported here",
        ))
    }
}

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the temporary files of the
/// atomic writes in progress, say on standard error what ended the process (`sweepfan:
/// terminated (SIGTERM)`, ...), then end it as the signal would have (docs/design.md §8.3). A
/// signal the process ignores (`nohup`, a background job) stays ignored. For the
/// binary's `main`, before any other thread starts; a library caller may call it too.
pub fn remove_temporaries_on_signals() {
    signals::install();
}

/// After [`remove_temporaries_on_signals`]: the first SIGINT cancels `token` instead, so that
/// a call run under it (`sweepfan::Limits::with_cancel`) stops at its next check and returns
/// `Error::Interrupted`; the process ends as the signal would after 2 s if it has not (a second
/// SIGINT ends it at once). Unix only (elsewhere nothing changes). Docs/design.md §9.18.
pub fn stop_calls_on_interrupt(token: sweepfan::CancelToken) {
    signals::stop_calls_on_interrupt(token);
}

/// Ends the process as an uncaught SIGINT would (status 130 in a shell), the temporaries of
/// atomic writes in progress removed: after a call stopped by [`stop_calls_on_interrupt`].
pub fn end_as_interrupted() -> ! {
    signals::end_as_interrupted()
}

#[cfg(test)]
mod tests;
