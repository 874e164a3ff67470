//! Pairs and events of a distributed run, written per rank (`DIR/rank-R.csv`) or gathered to
//! rank 0 in one canonical file (docs/design.md §2.11).

use super::comm::Comm;
use std::io::Write;
use std::path::{Path, PathBuf};
use sweepfan::error::{Error, Result};
use sweepfan::partition::slabs::GlobalPair;

/// Where a rank writes.
enum Target {
    /// Its own file in a directory.
    PerRank(PathBuf),
    /// Everything gathered to rank 0, which writes the one file.
    Gathered,
}

/// A path that is a directory on any rank, or ends in `/`, is a directory on every rank
/// (made where missing), each rank writing `KIND-rank-R.csv` there ([`write_own_file`]); any
/// other path is the one file rank 0 writes.
fn target(path: &Path, kind: &str, comm: &mut Comm) -> Result<Target> {
    let named_dir = path.as_os_str().to_string_lossy().ends_with('/');
    let dirs = comm.sum_u64(&[(named_dir || path.is_dir()) as u64])[0];
    if dirs == 0 {
        return Ok(Target::Gathered);
    }
    let made = std::fs::create_dir_all(path).map_err(|e| Error::io(path, e));
    comm.agree(made)?;
    Ok(Target::PerRank(
        path.join(format!("{kind}-rank-{}.csv", comm.rank)),
    ))
}

/// Removes every `KIND-rank-R.csv` in `dir` with `R >= size`: an earlier run's with more ranks
/// (its numbering may have gaps, where one of its ranks failed), which the directory's union
/// would count again.
fn remove_stale(dir: &Path, kind: &str, size: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("{kind}-rank-");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let rank = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|n| n.strip_suffix(".csv"))
            // Only the names this writes (`7`, not `+7` or `007`, which a user may have made).
            .and_then(|r| r.parse::<usize>().ok().filter(|n| n.to_string() == r));
        if rank.is_some_and(|r| r >= size) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Refuses a gather larger than a quarter of rank 0's available memory (its answer is
/// shared, so every rank returns the same error).
fn check_gather(path: &Path, rows: u64, row_bytes: u64, comm: &mut Comm) -> Result<()> {
    let total = comm.sum_u64(&[rows])[0];
    let need = total.saturating_mul(row_bytes).saturating_mul(2);
    let budget = if comm.rank == 0 {
        sweepfan::broadphase::limits::available_bytes().map_or(u64::MAX, |b| b / 4)
    } else {
        0
    };
    let budget = comm.max_u64(budget);
    if need > budget {
        return Err(Error::too_large(
            sweepfan::Exceeds::HostMemory {
                needed: need,
                usable: Some(budget),
            },
            format!(
                "{}: gathering {total} rows on rank 0 needs about {need} bytes, more than a \
                 quarter of its available memory ({budget}): name a directory (a trailing /) to \
                 write one file per rank",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// The rows `rows` as CSV under `header`, to `path` as every command writes its outputs
/// (`run::output::write_with`): a regular or new file atomically (a failed run leaves no
/// half-written file), a device, FIFO or the target of a link in place, `-` to standard output.
fn write_csv(path: &Path, header: &str, rows: impl Iterator<Item = String>) -> Result<()> {
    crate::run::output::write_with(path, |w| {
        let mut w = std::io::BufWriter::new(w);
        writeln!(w, "{header}")?;
        for row in rows {
            writeln!(w, "{row}")?;
        }
        w.flush()
    })
}

fn pair_words(p: &GlobalPair, out: &mut Vec<u32>) {
    out.extend_from_slice(&[
        p[0] as u32,
        (p[0] >> 32) as u32,
        p[1] as u32,
        (p[1] >> 32) as u32,
    ]);
}

fn pair_of(w: &[u32]) -> GlobalPair {
    [
        w[0] as u64 | (w[1] as u64) << 32,
        w[2] as u64 | (w[3] as u64) << 32,
    ]
}

/// This rank's rows to its own `file` of a directory, the set replaced whole: every rank
/// writes a part file beside it first and renames it once every rank has written its own, then
/// rank 0 removes the `kind` files of ranks past the last (an earlier run's with more ranks,
/// which the directory's union would count again); where a write failed, the parts go and the
/// files of the run before stay as they were (a set of two runs' files, whose union is neither
/// run's, was left after a write failed on one rank). A rename failing on one rank after
/// others' succeeded (the directory removed between the two) still leaves a mixed set, reported
/// as the error.
fn write_own_file(
    file: &Path,
    kind: &str,
    header: &str,
    rows: impl Iterator<Item = String>,
    comm: &mut Comm,
) -> Result<()> {
    let name = file
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    let part = file.with_file_name(format!(".{name}.part"));
    // Named as the file the user asked for, not its part.
    let written = write_csv(&part, header, rows).map_err(|e| match e {
        Error::Io { source, .. } => Error::io(file, source),
        e => e,
    });
    if let Err(e) = comm.agree(written) {
        let _ = std::fs::remove_file(&part);
        return Err(e);
    }
    let renamed = std::fs::rename(&part, file).map_err(|e| Error::io(file, e));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    comm.agree(renamed)?;
    if comm.rank == 0
        && let Some(dir) = file.parent()
    {
        remove_stale(dir, kind, comm.size);
    }
    Ok(())
}

/// This rank's pairs (canonical), to its own file or gathered to rank 0's.
pub fn write_pairs(path: &Path, pairs: &[GlobalPair], comm: &mut Comm) -> Result<()> {
    let header = "i,j";
    let row = |p: &GlobalPair| format!("{},{}", p[0], p[1]);
    let file = match target(path, "pairs", comm)? {
        Target::PerRank(file) => {
            return write_own_file(&file, "pairs", header, pairs.iter().map(row), comm);
        }
        Target::Gathered => path,
    };
    check_gather(file, pairs.len() as u64, 16, comm)?;
    let mut words = Vec::with_capacity(pairs.len() * 4);
    pairs.iter().for_each(|p| pair_words(p, &mut words));
    let gathered = comm.gather_to_root(&words);
    drop(words);
    let written = if comm.rank == 0 {
        let mut all: Vec<GlobalPair> = gathered.chunks_exact(4).map(pair_of).collect();
        all.sort_unstable();
        write_csv(file, header, all.iter().map(row))
    } else {
        Ok(())
    };
    comm.agree(written)
}

/// The name of an event kind in the files.
fn kind_name(kind: u32) -> &'static str {
    if kind == 0 { "found" } else { "lost" }
}

/// This rank's events `(frame, 0 found | 1 lost, pair)`, to its own file or gathered to rank
/// 0's; rows sorted by frame, kind (found first), pair.
pub fn write_events(path: &Path, events: &[(u32, u32, GlobalPair)], comm: &mut Comm) -> Result<()> {
    let header = "frame,event,i,j";
    let row =
        |e: &(u32, u32, GlobalPair)| format!("{},{},{},{}", e.0, kind_name(e.1), e.2[0], e.2[1]);
    let file = match target(path, "events", comm)? {
        Target::PerRank(file) => {
            let mut mine = events.to_vec();
            mine.sort_unstable();
            return write_own_file(&file, "events", header, mine.iter().map(row), comm);
        }
        Target::Gathered => path,
    };
    check_gather(file, events.len() as u64, 24, comm)?;
    let mut words = Vec::with_capacity(events.len() * 6);
    for e in events {
        words.extend_from_slice(&[e.0, e.1]);
        pair_words(&e.2, &mut words);
    }
    let gathered = comm.gather_to_root(&words);
    drop(words);
    let written = if comm.rank == 0 {
        let mut all: Vec<(u32, u32, GlobalPair)> = gathered
            .chunks_exact(6)
            .map(|w| (w[0], w[1], pair_of(&w[2..])))
            .collect();
        all.sort_unstable();
        write_csv(file, header, all.iter().map(row))
    } else {
        Ok(())
    };
    comm.agree(written)
}

/// A rank's pairs too many to store, in dist's words: `dist` keeps every pair (it has no
/// count-only run), so more ranks share them; the message from the kind's own counts (the
/// library's words advise counting, which dist does not do). Other errors as they are.
pub fn keeps_every_pair(e: Error) -> Error {
    let Error::TooLarge { exceeds, .. } = &e else {
        return e;
    };
    let past = match *exceeds {
        sweepfan::Exceeds::PairList { pairs, allowed } => {
            format!("{pairs} touching pairs exceed the {allowed} a call stores")
        }
        sweepfan::Exceeds::PairListMemory { pairs, needed, .. } => {
            format!("{pairs} touching pairs need {needed} bytes as a list, past the memory left")
        }
        _ => return e,
    };
    Error::too_large(
        *exceeds,
        format!(
            "{past}: dist keeps every pair, so run more ranks (each keeps the pairs of its own slab)"
        ),
    )
}
