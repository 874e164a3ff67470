//! Arguments shared by several subcommands, and the progress bar.

pub mod values;

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use sweepfan::Backend;
use sweepfan_scenes::SceneKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    Cpu,
    Gpu,
    Both,
}

impl BackendChoice {
    pub fn backends(self) -> Vec<Backend> {
        match self {
            BackendChoice::Cpu => vec![Backend::Cpu],
            BackendChoice::Gpu => vec![Backend::Gpu],
            BackendChoice::Both => vec![Backend::Cpu, Backend::Gpu],
        }
    }
}

/// `--json` alone, for the commands whose rows have no CSV form (auto-bench, sort-bench).
#[derive(Args)]
pub struct JsonOutput {
    /// Write the rows as JSON (`-`: standard output, the table then goes to stderr).
    #[arg(long)]
    pub json: Option<PathBuf>,
}

impl JsonOutput {
    /// Checks `--json` before the run, as [`Outputs::check`] does.
    pub fn check(&self, inputs: &[Option<&std::path::Path>]) -> anyhow::Result<()> {
        check_outputs(&[("--json", self.json.as_deref())], &[], inputs)
    }

    /// Whether `--json -` takes standard output.
    pub fn stdout_taken(&self) -> bool {
        takes_stdout(self.json.as_deref())
    }
}

#[derive(Args)]
pub struct Outputs {
    /// Write the rows as JSON (`-`: standard output, the table then goes to stderr).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the rows as CSV (`-`: standard output, the table then goes to stderr).
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

impl Outputs {
    /// Checks `--json` and `--csv` before the run: writable, not an input, not the same file.
    pub fn check(&self, inputs: &[Option<&std::path::Path>]) -> anyhow::Result<()> {
        check_outputs(
            &[
                ("--json", self.json.as_deref()),
                ("--csv", self.csv.as_deref()),
            ],
            &[],
            inputs,
        )
    }

    /// Whether `--json -` or `--csv -` takes standard output.
    pub fn stdout_taken(&self) -> bool {
        [&self.json, &self.csv]
            .iter()
            .any(|p| takes_stdout(p.as_deref()))
    }

    /// Writes `rows` to the `--json` and `--csv` paths given, if any.
    pub fn write(
        &self,
        rows: &[sweepfan_cli::report::Row],
        extra: Option<serde_json::Value>,
    ) -> sweepfan::Result<()> {
        sweepfan_cli::report::rows::write_outputs(
            self.json.as_deref(),
            self.csv.as_deref(),
            rows,
            extra,
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shape {
    Sphere,
    Obb,
    Polygon,
    /// Axis-aligned boxes: the box broad phase alone (`bench` only).
    Aabb,
}

impl Shape {
    /// The `--shape` value.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Sphere => "sphere",
            Shape::Obb => "obb",
            Shape::Polygon => "polygon",
            Shape::Aabb => "aabb",
        }
    }

    /// The objects, plural: "spheres", "boxes", "polygons".
    pub fn plural(self) -> &'static str {
        match self {
            Shape::Sphere => "spheres",
            Shape::Obb => "boxes",
            Shape::Polygon => "polygons",
            Shape::Aabb => "axis-aligned boxes",
        }
    }
}

/// A bar on stderr (hidden when stderr is not a terminal).
pub fn progress_bar(len: u64) -> ProgressBar {
    let p = ProgressBar::new(len);
    p.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    p
}

/// `--backend cpu|gpu` (the library's [`Backend`] carries no clap derive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackendArg(pub Backend);

impl ValueEnum for BackendArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[BackendArg(Backend::Cpu), BackendArg(Backend::Gpu)]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.as_str()))
    }
}

/// `--scene NAME`: every [`SceneKind`], by its report name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SceneArg(pub SceneKind);

impl ValueEnum for SceneArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [SceneArg; SceneKind::ALL.len()] = {
            let mut out = [SceneArg(SceneKind::Paper); SceneKind::ALL.len()];
            let mut i = 0;
            while i < out.len() {
                out[i] = SceneArg(SceneKind::ALL[i]);
                i += 1;
            }
            out
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.summary()))
    }
}

/// Lets every numeric option of `cmd`'s subcommands, at any depth, take a value that starts with
/// `-`: `--radius -1` then reaches the option's parser and is refused as negative (see
/// [`values`]) instead of being read as an unknown flag `-1`.
pub fn negative_numbers_reach_parsers(cmd: clap::Command) -> clap::Command {
    use std::any::TypeId;
    let numeric = [
        TypeId::of::<usize>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<f32>(),
        TypeId::of::<f64>(),
    ];
    cmd.mut_subcommands(|sub| {
        negative_numbers_reach_parsers(sub).mut_args(|a| {
            let parsed = a.get_value_parser().type_id();
            let is_numeric = numeric.iter().any(|t| parsed == *t);
            a.allow_negative_numbers(is_numeric)
        })
    })
}

/// Whether the output `path` (`--json -`) takes standard output: the human report then goes
/// to stderr ([`say`]).
pub fn takes_stdout(path: Option<&std::path::Path>) -> bool {
    path.is_some_and(sweepfan_cli::report::output::is_stdout)
}

/// Checks output files and directories before a run (see `report::output::check_outputs`).
pub fn check_outputs(
    files: &[(&str, Option<&std::path::Path>)],
    dirs: &[(&str, Option<&std::path::Path>)],
    inputs: &[Option<&std::path::Path>],
) -> anyhow::Result<()> {
    let files: Vec<(&str, &std::path::Path)> = files
        .iter()
        .filter_map(|&(f, p)| p.map(|p| (f, p)))
        .collect();
    let dirs: Vec<(&str, &std::path::Path)> = dirs
        .iter()
        .filter_map(|&(f, p)| p.map(|p| (f, p)))
        .collect();
    // Standard input (`-`) is read once, and is no file an output could overwrite.
    let stdin = |p: &std::path::Path| p.as_os_str() == sweepfan_scenes::files::STDIN;
    let (read, inputs): (Vec<&std::path::Path>, Vec<&std::path::Path>) =
        inputs.iter().flatten().copied().partition(|p| stdin(p));
    if read.len() > 1 {
        anyhow::bail!("standard input (`-`) is given as two inputs: it can be read once");
    }
    sweepfan_cli::report::output::check_outputs(&files, &dirs, &inputs)?;
    Ok(())
}

/// `println!` for the human report, to stderr when `$taken` (an output file is `-`); a failed
/// write to standard output ends the process (see [`write_stdout`]).
macro_rules! say {
    ($taken:expr, $($arg:tt)*) => {
        $crate::args::say($taken, format_args!($($arg)*))
    };
}

/// `println!` with the write checked: the CLI prints to standard output only through this,
/// `out!` and `say!` (docs/design.md §8.3; `cli/tests/suite/cli_outputs.rs` fails on a
/// `println!` under `src/bin/`).
macro_rules! outln {
    () => {
        $crate::args::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::args::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Prints a line of the human report: on stdout, or on stderr when an output file is `-`
/// (standard output then carries that file alone, ready for a pipe).
pub fn say(stdout_taken: bool, text: impl std::fmt::Display) {
    if stdout_taken {
        note(format_args!("{text}"));
    } else {
        write_stdout(format_args!("{text}\n"));
    }
}

/// Writes `text` to standard output and flushes it; a failure ends the process there
/// ([`stdout_failed`]): `println!` would panic (exit 101), and a report that lost its lines must
/// not end in exit 0.
pub fn write_stdout(text: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(text).and_then(|()| out.flush()) {
        drop(out);
        stdout_failed(&e);
    }
}

/// Ends the process after a failed write to standard output (docs/design.md §8.3): a reader
/// that went away (`sweepfan info | head -1`) ends it quietly, as SIGPIPE does; anything else
/// (a full device) with exit 1 and `sweepfan: cannot write to standard output: WHY`.
pub fn stdout_failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        #[cfg(unix)]
        {
            // SAFETY: restoring a signal's default action and raising it; no handler code runs.
            unsafe {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::raise(libc::SIGPIPE);
            }
        }
        std::process::exit(1);
    }
    note(format_args!(
        "sweepfan: cannot write to standard output: {}",
        os_message(e)
    ));
    std::process::exit(1);
}

/// A line on stderr, as `eprintln!` writes it but without its panic when stderr itself fails
/// (there is nowhere left to report that).
pub fn note(text: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// An OS error as a person reads it: "No space left on device", without " (os error 28)".
pub fn os_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(k) if e.raw_os_error().is_some() => text[..k].to_string(),
        _ => text,
    }
}

/// A rotating body kind (`reproduce sector --body`, `bench --scene rotating --body`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BodyChoice {
    Box,
    Capsule,
    Cylinder,
    Hull,
}

impl BodyChoice {
    pub fn kind(self) -> sweepfan_scenes::free_bodies::BodyKind {
        match self {
            BodyChoice::Box => sweepfan_scenes::free_bodies::BodyKind::Box,
            BodyChoice::Capsule => sweepfan_scenes::free_bodies::BodyKind::Capsule,
            BodyChoice::Cylinder => sweepfan_scenes::free_bodies::BodyKind::Cylinder,
            BodyChoice::Hull => sweepfan_scenes::free_bodies::BodyKind::Hull,
        }
    }
}
