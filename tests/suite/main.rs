//! The library's integration tests, one binary (each test binary links wgpu; one link instead
//! of one per area). Each module is one area; `common` holds the oracles shared by several (and
//! by the tool's suite, `cli/tests/suite`). The peer-crate comparison (`tests/peers.rs`, feature
//! `peers`) stays a binary of its own.

mod common;

mod bad_input;
mod box_ids;
mod canonical_lists;
mod contacts;
mod cpu_vs_brute;
mod csv_readers;
mod fuzz_scenes;
mod gpu_contacts;
mod gpu_contacts_frame;
mod gpu_events;
mod gpu_in_flight;
mod gpu_radix_sort;
mod gpu_sat;
mod gpu_vs_cpu;
mod gpu_worlds;
mod host_copies;
mod host_waits;
mod layers;
mod narrow_by_id;
mod narrow_phase;
mod paper_counts;
mod polygon_contacts_far;
mod rotating;
mod sat_oracle;
mod sector_oracle;
mod sphere_frame;
mod turned_boxes;
mod worlds;
