//! One process's share of a sphere scene file (docs/design.md §3.4): the lines that begin in one
//! of `parts` equal byte ranges of the file, read without the rest of the file, each problem
//! worded as the whole-file reader ([`files::read_spheres_csv`]) words it.
//!
//! Part k of n covers bytes `[len * k / n, len * (k + 1) / n)` and holds the lines whose first
//! byte lies there: it starts at the first line start at or after its first byte (after the
//! first LF at or after the byte before it) and ends at the first line start at or after its end
//! (or at the end of the file). Finding a line start reads at most [`MAX_LINE_BYTES`](files::MAX_LINE_BYTES) + 2 bytes
//! (a line's text and its CRLF), which in a file whose lines all fit [`MAX_LINE_BYTES`](files::MAX_LINE_BYTES) always
//! holds one. The parts of 0..n
//! therefore hold every line exactly once, and a line's number in the file is the sum of the
//! [`SphereChunk::lines`] of the parts before its own plus its number in its part.
//!
//! Where a line is longer than [`MAX_LINE_BYTES`](files::MAX_LINE_BYTES) and a part's first byte lies inside it with no
//! LF in reach, that part starts at its first byte, inside the line, and its line count is not
//! exact. The part where that line begins reports it (a problem), so every part before the first
//! part with a problem counts exactly, and the first problem of the file is located exactly.
//!
//! One difference from the whole-file reader ([`files::read_spheres_csv`]): that reader checks
//! line lengths and UTF-8 as it reads and parses the text afterwards, so in a file with several
//! problems it reports an over-long or non-UTF-8 line before a parse problem on an earlier line
//! (`sweepfan verify` names the later line); the parts report each their first problem by line,
//! and the first of those is the file's first problem by line (`sweepfan dist` names the
//! earlier line).

use crate::files::{self, LINE_READ_BYTES, SPHERE_HEADER};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use sweepfan::Validate;
use sweepfan::error::{Error, Result};
use sweepfan::geom::sphere::Sphere;

/// The spheres on the lines whose first byte lies in byte range `part` of `parts` equal ranges of
/// the file (`[len * part / parts, len * (part + 1) / parts)`), so that the chunks of parts
/// 0..parts hold every line exactly once. Only those bytes (plus the scan for the next line
/// start, at most [`MAX_LINE_BYTES`](files::MAX_LINE_BYTES) + 2 past each end) are read.
#[derive(Clone, Debug, PartialEq)]
pub struct SphereChunk {
    /// The spheres of the chunk's data lines, in file order, up to its first problem (the lines
    /// after a problem are counted, not parsed).
    pub spheres: Vec<Sphere>,
    /// Lines in the chunk (blank lines and, in the chunk that starts the file, the header
    /// included): the line numbers of later chunks start after the sum of these.
    pub lines: usize,
    /// The first problem in the chunk: (1-based line number counted from the chunk's first line,
    /// the problem as [`files::read_spheres_csv`] words it). The chunk's `lines` is still
    /// counted in full. A sphere that [`Validate::check`] refuses is named by its index among this
    /// chunk's spheres (the file's index only in the chunk that starts the file);
    /// [`SphereChunk::problem_in_file`] names it by its index in the file.
    pub problem: Option<(usize, String)>,
    /// The sphere [`Validate::check`] refused on the problem line, with its index among the
    /// chunk's spheres, so that the problem can be worded again with its index in the file.
    refused: Option<(usize, Sphere)>,
}

impl SphereChunk {
    /// The chunk's problem as [`files::read_spheres_csv`] reports it for the whole file, given
    /// the lines and the spheres of the chunks before this one (parts `0..part`): the line
    /// counted from the header, and a sphere that [`Validate::check`] refused named by its index
    /// in the file. Exact when no chunk before this one has a problem, as for the first chunk
    /// (in part order) that has one.
    pub fn problem_in_file(
        &self,
        lines_before: usize,
        spheres_before: usize,
    ) -> Option<(usize, String)> {
        let (line, problem) = self.problem.as_ref()?;
        let problem = match self.refused {
            Some((index, sphere)) => match sphere.check(spheres_before + index) {
                Err(e) => e.to_string(),
                Ok(()) => problem.clone(),
            },
            None => problem.clone(),
        };
        Some((lines_before + line, problem))
    }

    /// Parses one line of the chunk, its `lines`-th, read as the whole-file reader reads it (at
    /// most [`MAX_LINE_BYTES`](files::MAX_LINE_BYTES) + 2 bytes, its CRLF or LF included, not over-long);
    /// `first_in_file` says it is the header. A problem is kept in `problem`.
    fn parse_line(&mut self, line: &[u8], first_in_file: bool) {
        let at = self.lines;
        let Ok(text) = std::str::from_utf8(line) else {
            self.problem = Some((at, files::NOT_UTF8.to_string()));
            return;
        };
        if first_in_file {
            if let Err(problem) = files::data_lines(text, &SPHERE_HEADER) {
                self.problem = Some(problem);
            }
            return;
        }
        // The line without its LF or CRLF, as `str::lines` gives it in the whole file.
        let data = text.lines().next().unwrap_or("");
        if data.trim().is_empty() {
            return;
        }
        match files::parse_sphere_line(data) {
            Err(problem) => self.problem = Some((at, problem)),
            Ok(sphere) => {
                let index = self.spheres.len();
                match sphere.check(index) {
                    Ok(()) => self.spheres.push(sphere),
                    Err(e) => {
                        self.problem = Some((at, e.to_string()));
                        self.refused = Some((index, sphere));
                    }
                }
            }
        }
    }
}

/// Refuses, before opening it, a path that is not a regular file: a directory, or a pipe or a
/// device, which has no length to cut into byte ranges (and whose opening or reading may wait
/// forever: a FIFO without a writer, `/dev/zero`).
fn check_regular_file(path: &Path) -> Result<()> {
    if path.as_os_str() == files::STDIN {
        return Err(Error::Config(
            "standard input (`-`): each part reads a byte range of the file, so save it to a \
             file first"
                .into(),
        ));
    }
    let metadata = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if metadata.is_dir() {
        return Err(Error::Parse {
            path: path.to_path_buf(),
            line: 1,
            problem: files::IS_A_DIRECTORY.to_string(),
        });
    }
    if !metadata.is_file() {
        return Err(Error::Config(format!(
            "{}: not a regular file (a pipe or a device): each part reads a byte range of the \
             file, so save it to a file first",
            path.display()
        )));
    }
    Ok(())
}

/// Reads chunk `part` of `parts` of the sphere CSV file at `path` (see [`SphereChunk`]).
///
/// Errors only for what stops the read: `parts == 0` or `part >= parts`
/// ([`Error::Config`]), a directory ([`Error::Parse`] at line 1, as the whole-file reader says
/// it), a pipe or device (no length to cut: [`Error::Config`]), an I/O failure ([`Error::Io`]). Problems in the text are kept in
/// [`SphereChunk::problem`], so that the lines of all chunks can be counted before the file's
/// first problem is reported with its line number in the file. An empty file is a problem of
/// part 0 at line 1; a file holding only the header has no spheres and no problem.
pub fn read_spheres_csv_chunk(path: &Path, part: usize, parts: usize) -> Result<SphereChunk> {
    if parts == 0 {
        return Err(Error::Config(format!(
            "{}: a file is read in at least one part, not 0",
            path.display()
        )));
    }
    if part >= parts {
        return Err(Error::Config(format!(
            "{}: there is no part {part} of {parts}: parts are numbered from 0 to {}",
            path.display(),
            parts - 1
        )));
    }
    let io = |e: std::io::Error| Error::io(path, e);
    check_regular_file(path)?;
    let mut file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    // The first byte of part k: len * k / parts, without overflow.
    let share_start = |k: usize| (u128::from(len) * k as u128 / parts as u128) as u64;
    let start = line_start_at_or_after(&mut file, share_start(part), len).map_err(io)?;
    let end = line_start_at_or_after(&mut file, share_start(part + 1), len).map_err(io)?;
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut reader = BufReader::new(file);
    let mut chunk = SphereChunk {
        spheres: Vec::new(),
        lines: 0,
        problem: None,
        refused: None,
    };
    let mut line = Vec::new();
    let mut pos = start;
    while pos < end {
        if chunk.problem.is_some() {
            // Past the first problem, lines are counted, not read.
            let skipped = skip_line(&mut reader, end - pos).map_err(io)?;
            if skipped == 0 {
                break;
            }
            pos += skipped;
            chunk.lines += 1;
            continue;
        }
        line.clear();
        let read = (&mut reader)
            .take(LINE_READ_BYTES as u64)
            .read_until(b'\n', &mut line)
            .map_err(io)?;
        if read == 0 {
            break; // the file is shorter than when it was opened
        }
        let first_in_file = pos == 0;
        pos += read as u64;
        chunk.lines += 1;
        if let Some(problem) = files::over_long_line(&line) {
            chunk.problem = Some((chunk.lines, problem));
            // The rest of the line, up to the chunk's end.
            pos += skip_line(&mut reader, end.saturating_sub(pos)).map_err(io)?;
            continue;
        }
        chunk.parse_line(&line, first_in_file);
    }
    if len == 0
        && part == 0
        && let Err(problem) = files::data_lines("", &SPHERE_HEADER)
    {
        chunk.problem = Some(problem);
    }
    Ok(chunk)
}

/// The first line start at or after byte `at` of a file of `len` bytes: 0 for 0, `len` at or
/// past the end, else the byte after the first LF at or after `at - 1`, looked for in at most
/// [`MAX_LINE_BYTES`](files::MAX_LINE_BYTES) + 2 bytes. Where there is none in reach (a line longer than
/// [`MAX_LINE_BYTES`](files::MAX_LINE_BYTES)), `at` itself, so that the two parts meeting there agree.
fn line_start_at_or_after(file: &mut File, at: u64, len: u64) -> std::io::Result<u64> {
    if at == 0 || at >= len {
        return Ok(at.min(len));
    }
    file.seek(SeekFrom::Start(at - 1))?;
    let mut window = Vec::with_capacity(LINE_READ_BYTES);
    (&mut *file)
        .take(LINE_READ_BYTES as u64)
        .read_to_end(&mut window)?;
    Ok(match window.iter().position(|&b| b == b'\n') {
        Some(i) => at + i as u64,
        None if at - 1 + window.len() as u64 >= len => len,
        None => at,
    })
}

/// Consumes bytes up to and including the next LF, at most `limit` of them (fewer at the end of
/// the file), without keeping them; returns how many.
fn skip_line(reader: &mut impl BufRead, limit: u64) -> std::io::Result<u64> {
    let mut skipped = 0u64;
    while skipped < limit {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        let room = usize::try_from(limit - skipped)
            .map_or(available.len(), |left| left.min(available.len()));
        let (used, found) = match available[..room].iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (room, false),
        };
        reader.consume(used);
        skipped += used as u64;
        if found {
            break;
        }
    }
    Ok(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::{MAX_LINE_BYTES, read_spheres_csv};
    use std::path::PathBuf;

    /// A file in the temporary directory, removed when dropped.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str, bytes: &[u8]) -> Self {
            let path = std::env::temp_dir()
                .join(format!("sweepfan-chunks-{}-{name}.csv", std::process::id()));
            std::fs::write(&path, bytes).unwrap();
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// Chunks 0..parts of the file.
    fn read_chunks(path: &Path, parts: usize) -> Vec<SphereChunk> {
        (0..parts)
            .map(|part| read_spheres_csv_chunk(path, part, parts).unwrap())
            .collect()
    }

    /// Lines in `bytes` as the readers count them: LFs, plus a last line without one.
    fn line_count(bytes: &[u8]) -> usize {
        let lfs = bytes.iter().filter(|&&b| b == b'\n').count();
        lfs + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
    }

    /// `count` sphere lines with varied values, some with spaces around the fields.
    fn sphere_lines(count: usize) -> Vec<Vec<u8>> {
        (0..count)
            .map(|i| {
                let f = i as f32;
                let (x, y, z) = (f * 0.37 - 150.0, (f * 1.7) % 91.0 - 45.5, -f / 7.0);
                let r = 0.25 + (i % 13) as f32 * 0.5;
                let line = if i % 5 == 0 {
                    format!(" {x} , {y},{z} ,{r} ")
                } else {
                    format!("{x},{y},{z},{r}")
                };
                line.into_bytes()
            })
            .collect()
    }

    /// The header, then `data`, with a blank line (every other one holding spaces) after every
    /// `blank_every` data lines (none for 0).
    fn with_header(header: &str, data: &[Vec<u8>], blank_every: usize) -> Vec<Vec<u8>> {
        let mut lines = vec![header.as_bytes().to_vec()];
        for (i, line) in data.iter().enumerate() {
            lines.push(line.clone());
            if blank_every > 0 && (i + 1) % blank_every == 0 {
                let blank: &[u8] = if (i / blank_every).is_multiple_of(2) {
                    b""
                } else {
                    b"  "
                };
                lines.push(blank.to_vec());
            }
        }
        lines
    }

    /// The file's bytes: a byte-order mark if `bom`, the lines joined by `eol`, and `eol` after
    /// the last one if `final_eol`.
    fn file_bytes(lines: &[Vec<u8>], eol: &str, bom: bool, final_eol: bool) -> Vec<u8> {
        let mut bytes = Vec::new();
        if bom {
            bytes.extend_from_slice("\u{feff}".as_bytes());
        }
        bytes.extend_from_slice(&lines.join(eol.as_bytes()));
        if final_eol {
            bytes.extend_from_slice(eol.as_bytes());
        }
        bytes
    }

    /// The spheres of all chunks, in part order.
    fn all_spheres(chunks: &[SphereChunk]) -> Vec<Sphere> {
        chunks
            .iter()
            .flat_map(|c| c.spheres.iter().copied())
            .collect()
    }

    /// The line and problem the whole-file reader reports.
    fn whole_file_problem(path: &Path) -> (usize, String) {
        match read_spheres_csv(path) {
            Err(Error::Parse { line, problem, .. }) => (line, problem),
            other => panic!("{}: expected a parse error, got {other:?}", path.display()),
        }
    }

    /// `good` with line `at` (from 1) replaced by `bad`, written with `eol` after every line to
    /// the temporary file `name`; checks that the whole-file reader reports line `at`, and returns
    /// the file, its bytes and the reader's problem.
    fn file_with_bad_line(
        good: &[Vec<u8>],
        at: usize,
        bad: &[u8],
        eol: &str,
        name: &str,
    ) -> (TempFile, Vec<u8>, String) {
        let mut lines = good.to_vec();
        lines[at - 1] = bad.to_vec();
        let bytes = file_bytes(&lines, eol, false, true);
        let file = TempFile::new(name, &bytes);
        let (line, problem) = whole_file_problem(&file.0);
        assert_eq!(line, at, "{:?}: {problem}", String::from_utf8_lossy(bad));
        (file, bytes, problem)
    }

    /// The first chunk (in part order) with a problem, with the lines and spheres before it.
    fn first_problem(chunks: &[SphereChunk]) -> Option<(usize, usize, usize)> {
        let k = chunks.iter().position(|c| c.problem.is_some())?;
        let lines_before: usize = chunks[..k].iter().map(|c| c.lines).sum();
        let spheres_before: usize = chunks[..k].iter().map(|c| c.spheres.len()).sum();
        Some((k, lines_before, spheres_before))
    }

    #[test]
    fn chunks_hold_every_line_once() {
        let data = sphere_lines(1000);
        let variants = [
            ("lf", "x,y,z,r", "\n", false, true, 0),
            ("crlf", "x,y,z,r", "\r\n", false, true, 0),
            ("bom-blanks", " X ,y, Z,r", "\n", true, true, 37),
            ("no-final-eol", "x,y,z,r", "\n", false, false, 0),
            ("all", "x, y, z, R", "\r\n", true, false, 11),
            ("blank-last", "x,y,z,r", "\n", false, true, 100),
        ];
        for (name, header, eol, bom, final_eol, blank_every) in variants {
            let lines = with_header(header, &data, blank_every);
            let bytes = file_bytes(&lines, eol, bom, final_eol);
            let file = TempFile::new(&format!("whole-{name}"), &bytes);
            let expected = read_spheres_csv(&file.0).unwrap();
            assert_eq!(expected.len(), 1000, "{name}");
            for parts in 1..=7 {
                let chunks = read_chunks(&file.0, parts);
                let what = format!("{name}, {parts} parts");
                assert_eq!(all_spheres(&chunks), expected, "{what}");
                let lines: usize = chunks.iter().map(|c| c.lines).sum();
                assert_eq!(lines, line_count(&bytes), "{what}");
                assert!(chunks.iter().all(|c| c.problem.is_none()), "{what}");
            }
        }
    }

    #[test]
    fn a_bad_line_is_reported_once_at_its_line_in_the_file() {
        let data = sphere_lines(1000);
        let good = with_header("x,y,z,r", &data, 23);
        let bad_lines = [
            "1,2,NaN,1",
            "1,2,3,-1",
            "1,2,3",
            "1,2,3,4,5",
            "1,abc,3,1",
            "1e39,0,0,1",
            // Refused by `Sphere::check`, whose message names the sphere's index.
            "3e18,0,0,1",
            "1e-35,0,0,1",
        ];
        let at_lines = [1, 2, 400, good.len() - 1, good.len()];
        for bad in bad_lines {
            for at in at_lines {
                for eol in ["\n", "\r\n"] {
                    let (file, bytes, problem) =
                        file_with_bad_line(&good, at, bad.as_bytes(), eol, "bad-line");
                    for parts in 1..=7 {
                        let what = format!("{bad:?} at line {at}, {eol:?}, {parts} parts");
                        let chunks = read_chunks(&file.0, parts);
                        let with_problem = chunks.iter().filter(|c| c.problem.is_some()).count();
                        assert_eq!(with_problem, 1, "{what}");
                        let (k, lines_before, spheres_before) = first_problem(&chunks).unwrap();
                        let (local, text) = chunks[k].problem.clone().unwrap();
                        assert_eq!(lines_before + local, at, "{what}");
                        if chunks[k].refused.is_none() || spheres_before == 0 {
                            assert_eq!(text, problem, "{what}");
                        }
                        assert_eq!(
                            chunks[k].problem_in_file(lines_before, spheres_before),
                            Some((at, problem.clone())),
                            "{what}"
                        );
                        let total: usize = chunks.iter().map(|c| c.lines).sum();
                        assert_eq!(total, line_count(&bytes), "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn long_and_binary_lines_are_named_as_the_whole_file_reader_names_them() {
        let data = sphere_lines(300);
        let good = with_header("x,y,z,r", &data, 0);
        let bad_lines = [
            "7".repeat(5000).into_bytes(),
            "1,2,3,4\r".repeat(600).into_bytes(),
            b"1,2,\xff\xfe,4".to_vec(),
        ];
        for (n, bad) in bad_lines.iter().enumerate() {
            for at in [1, 2, 150, good.len()] {
                let (file, _, problem) = file_with_bad_line(&good, at, bad, "\n", "long-line");
                for parts in 1..=7 {
                    let what = format!("bad line {n} at line {at}, {parts} parts");
                    let chunks = read_chunks(&file.0, parts);
                    // Parts starting inside an over-long line may report more problems, after
                    // the first.
                    let (k, lines_before, spheres_before) = first_problem(&chunks).unwrap();
                    let (local, text) = chunks[k].problem.clone().unwrap();
                    assert_eq!(
                        (lines_before + local, text),
                        (at, problem.clone()),
                        "{what}"
                    );
                    assert_eq!(
                        chunks[k].problem_in_file(lines_before, spheres_before),
                        Some((at, problem.clone())),
                        "{what}"
                    );
                }
            }
        }
    }

    /// The limit is the line's text, whatever its line ending: a line of exactly
    /// [`MAX_LINE_BYTES`](files::MAX_LINE_BYTES) is read in an LF and a CRLF file alike, by the whole-file reader and
    /// in every split, and one byte more is refused as over-long in both, not said to end in
    /// bare CRs (a CRLF file's line of 4,096 bytes was refused so).
    #[test]
    fn the_longest_line_is_the_same_with_lf_and_crlf() {
        let data = sphere_lines(200);
        let fields = ",2.5,-1,0.75";
        for eol in ["\n", "\r\n"] {
            for extra in [0, 1] {
                let len = MAX_LINE_BYTES + extra;
                let long = format!("{}{fields}", "0".repeat(len - fields.len() - 1) + "7");
                assert_eq!(long.len(), len);
                let mut lines = with_header("x,y,z,r", &data, 0);
                lines.insert(101, long.into_bytes());
                let bytes = file_bytes(&lines, eol, false, true);
                let file = TempFile::new(&format!("limit-{}-{extra}", eol.len()), &bytes);
                let what = format!("{eol:?}, a line of {len} bytes");
                match extra {
                    0 => {
                        let whole = read_spheres_csv(&file.0).expect(&what);
                        assert_eq!(whole.len(), 201, "{what}");
                        assert_eq!(whole[100], Sphere::new([7.0, 2.5, -1.0].into(), 0.75));
                        for parts in 1..=7 {
                            let chunks = read_chunks(&file.0, parts);
                            assert!(chunks.iter().all(|c| c.problem.is_none()), "{what}");
                            assert_eq!(all_spheres(&chunks), whole, "{what}, {parts} parts");
                        }
                    }
                    _ => {
                        let (line, problem) = whole_file_problem(&file.0);
                        assert_eq!(line, 102, "{what}");
                        assert!(
                            problem.contains("longer than 4096") && !problem.contains("carriage"),
                            "{what}: {problem}"
                        );
                        for parts in 1..=7 {
                            let chunks = read_chunks(&file.0, parts);
                            let (k, lines_before, _) = first_problem(&chunks).unwrap();
                            let (local, text) = chunks[k].problem.clone().unwrap();
                            assert_eq!((lines_before + local, text), (line, problem.clone()));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tiny_files_split_into_more_parts_than_lines() {
        let files = [
            ("one", "x,y,z,r\n1,2,3,1\n"),
            ("header", "x,y,z,r"),
            ("header-lf", "x,y,z,r\n"),
            ("blank-no-lf", "x,y,z,r\r\n\r\n0.5,0,0,2"),
            ("bom", "\u{feff}x,y,z,r\n1,1,1,1"),
        ];
        for (name, text) in files {
            let file = TempFile::new(&format!("tiny-{name}"), text.as_bytes());
            let expected = read_spheres_csv(&file.0).unwrap();
            for parts in 1..=40 {
                let what = format!("{name}, {parts} parts");
                let chunks = read_chunks(&file.0, parts);
                assert_eq!(all_spheres(&chunks), expected, "{what}");
                let lines: usize = chunks.iter().map(|c| c.lines).sum();
                assert_eq!(lines, line_count(text.as_bytes()), "{what}");
                assert!(chunks.iter().all(|c| c.problem.is_none()), "{what}");
            }
        }
    }

    #[test]
    fn an_empty_file_is_a_problem_of_part_0() {
        let file = TempFile::new("empty", b"");
        let (line, problem) = whole_file_problem(&file.0);
        assert_eq!(
            (line, problem.as_str()),
            (1, "empty file: expected header `x,y,z,r`")
        );
        for parts in 1..=4 {
            let chunks = read_chunks(&file.0, parts);
            assert_eq!(chunks[0].problem, Some((line, problem.clone())));
            assert_eq!(
                chunks[0].problem_in_file(0, 0),
                Some((line, problem.clone()))
            );
            assert!(chunks.iter().all(|c| c.lines == 0 && c.spheres.is_empty()));
            assert!(chunks[1..].iter().all(|c| c.problem.is_none()));
        }
    }

    #[test]
    fn bad_parts_a_directory_and_a_missing_file_are_errors() {
        let file = TempFile::new("arguments", b"x,y,z,r\n1,2,3,1\n");
        let e = read_spheres_csv_chunk(&file.0, 0, 0).unwrap_err();
        assert!(matches!(e, Error::Config(_)), "{e}");
        let e = read_spheres_csv_chunk(&file.0, 3, 3).unwrap_err();
        assert!(matches!(e, Error::Config(_)), "{e}");
        let e = read_spheres_csv_chunk(&std::env::temp_dir(), 0, 1).unwrap_err();
        let directory =
            matches!(&e, Error::Parse { line: 1, problem, .. } if problem == files::IS_A_DIRECTORY);
        assert!(
            directory || (!cfg!(unix) && matches!(e, Error::Io { .. })),
            "{e}"
        );
        let missing = file.0.with_extension("missing");
        let e = read_spheres_csv_chunk(Path::new("-"), 0, 1).unwrap_err();
        assert!(e.to_string().contains("standard input (`-`)"), "{e}");
        let e = read_spheres_csv_chunk(&missing, 0, 1).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
    }
}

/// The length and a digest of the whole file's bytes (64-bit SipHash with fixed keys, the same
/// in every process of one build): what the ranks of a distributed run compare to show that
/// they read the same scene (docs/design.md §2.11). Reads the file once, in 1 MiB blocks.
pub fn file_digest(path: &Path) -> Result<(u64, u64)> {
    use std::hash::Hasher;
    let io = |e: std::io::Error| Error::io(path, e);
    check_regular_file(path)?;
    let mut file = File::open(path).map_err(io)?;
    let mut hasher = std::hash::DefaultHasher::new();
    let mut block = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let read = file.read(&mut block).map_err(io)?;
        if read == 0 {
            break;
        }
        hasher.write(&block[..read]);
        len += read as u64;
    }
    Ok((len, hasher.finish()))
}

#[cfg(test)]
mod digest_tests {
    use super::file_digest;

    /// Equal files give equal digests; one byte changed, or one more byte, changes them.
    #[test]
    fn digests_tell_copies_from_other_files() {
        let dir = std::env::temp_dir().join(format!("sweepfan-digest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text: String = (0..200_000).map(|i| format!("{i},0,0,1\n")).collect();
        let write = |name: &str, body: &str| {
            let p = dir.join(name);
            std::fs::write(&p, body).unwrap();
            file_digest(&p).unwrap()
        };
        let a = write("a.csv", &text);
        assert_eq!(a.0, text.len() as u64);
        assert_eq!(a, write("copy.csv", &text));
        let mut edited = text.clone().into_bytes();
        edited[1_500_000] = b'7';
        assert_ne!(
            a,
            write("edited.csv", std::str::from_utf8(&edited).unwrap())
        );
        assert_ne!(a, write("longer.csv", &format!("{text}\n")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
