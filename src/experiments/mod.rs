//! The paper reproductions: each runs an experiment and returns its data (rows, tables,
//! scores); formatting and printing belong to `report`.

pub mod broadphase_paper;
pub mod sector;
