//! Reports: tables on stdout, JSON and CSV files, SVG plots.

pub mod auto;
pub mod bench;
#[cfg(feature = "mpi")]
pub mod dist;
pub mod output;
pub mod paper;
pub(crate) mod plot;
pub mod rows;
pub mod scene_file;
pub mod sector;
pub mod sector_free;
pub mod selftest;
pub(crate) mod table;

pub use crate::run::row::Row;
pub use rows::{write_csv, write_json};
pub use table::Table;

/// A unit test's scratch directory, created: `sweepfan-NAME-PID` under the system's temporary
/// directory (the test removes it when done).
#[cfg(test)]
pub(crate) fn test_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sweepfan-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
