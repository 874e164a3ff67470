//! The integration tests, one binary (each test binary links wgpu; one link instead of
//! fourteen). Each module is one area; `common` holds the oracles shared by several.
//! The peer-crate comparison (`tests/peers.rs`, feature `peers`) stays a binary of its own.

mod common;

mod auto;
mod bad_input;
mod box_pipeline;
mod cli;
mod cli_hostile;
mod cli_options;
mod cli_outputs;
mod cli_sector;
mod cli_selftest;
mod cpu_vs_brute;
mod csv_readers;
mod events;
mod fuzz_scenes;
mod gpu_counters;
mod gpu_errors;
mod gpu_events;
mod gpu_figures;
mod gpu_matches_cpu;
mod gpu_radix_sort;
mod gpu_sat;
mod gpu_vs_cpu;
mod host_copies;
mod host_waits;
mod layers;
mod memory_limits;
mod paper_counts;
mod partition;
mod readme_figures;
mod resident;
mod rotating;
mod sat_oracle;
mod sector_general;
mod sector_oracle;
mod turned_boxes;
