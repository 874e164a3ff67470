//! Reports: tables on stdout, JSON and CSV files, SVG plots.

pub mod auto;
pub mod bench;
#[cfg(feature = "mpi")]
pub mod dist;
/// Files written atomically or in place (the module lives in `run`, below `dist`, which writes
/// through it too).
pub use crate::run::output;
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
