//! One module per subcommand: its arguments and an `exec` that calls into the library.

pub mod auto_bench;
pub mod bench;
pub mod default;
pub mod dist;
pub mod info;
pub mod reproduce;
pub mod scene;
pub mod selftest;
pub mod shaders;
pub mod sort_bench;
pub mod stress;
pub mod verify;
pub mod verify_worlds;
