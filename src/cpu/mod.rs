//! CPU reference implementations: the oracle every GPU result is checked against.

pub mod sector_accuracy;
