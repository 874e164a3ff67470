//! The sector ("fan") experiments: accuracy (tables 3.1), speed (tables 3.2-3.6), and the
//! rotating scene (docs/design.md, sector CCD).

pub mod accuracy;
pub mod rotating;
pub mod speed;
