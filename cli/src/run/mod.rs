//! What the CLI, the examples and the benches share: the method registry, running frames and
//! measuring them ([`bench`](mod@bench)), the stress loop, and verification against the CPU oracle
//! (spheres in [`verify`], boxes and polygons in [`verify_shapes`]).

pub mod auto_bench;
pub mod bench;
pub mod boxes;
pub mod gpu;

pub mod resident;
pub mod row;
pub mod sort_bench;
pub mod stress;
pub mod verify;
pub mod verify_shapes;
