//! The tool's integration tests, one binary: the `sweepfan` binary's commands and outputs, and
//! the library's results through the tool's runs, reports and experiments. The library's own
//! suite is `tests/suite`, whose oracles this one shares (`common`).

// Not every oracle serves the tool's tests.
#[allow(dead_code)]
#[path = "../../../tests/suite/common.rs"]
mod oracles;

mod common;

mod auto;
mod box_aabb_sweep;
mod box_cli;
mod box_pipeline;
mod cli;
mod cli_hostile;
mod cli_options;
mod cli_outputs;
mod cli_sector;
mod cli_selftest;
mod events;
mod gpu_counters;
mod gpu_errors;
mod gpu_figures;
mod gpu_matches_cpu;
mod in_flight;
mod memory_limits;
mod partition;
mod readme_figures;
mod resident;
mod sector_general;
mod worlds;
