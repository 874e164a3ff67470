//! The paper reproductions and the GPU self-test: each runs an experiment and returns its data
//! (rows, tables, scores, checks); formatting and printing belong to `report`.

pub mod broadphase_paper;
pub mod sector;
pub mod selftest;
