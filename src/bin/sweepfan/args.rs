//! Arguments shared by several subcommands, and the progress bar.

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use sweepfan::{Backend, SceneKind};

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

#[derive(Args)]
pub struct Outputs {
    /// Write the rows as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the rows as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

impl Outputs {
    /// Writes `rows` to the `--json` and `--csv` paths given, if any.
    pub fn write(
        &self,
        rows: &[sweepfan::report::Row],
        extra: Option<serde_json::Value>,
    ) -> sweepfan::Result<()> {
        sweepfan::report::rows::write_outputs(
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

/// Fails before a long run when `path` cannot be written afterwards: its directory is missing
/// or it names a directory.
pub fn check_output_path(path: &std::path::Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "{}: directory {} does not exist",
            path.display(),
            dir.display()
        );
    }
    if path.is_dir() {
        anyhow::bail!("{}: is a directory", path.display());
    }
    Ok(())
}
