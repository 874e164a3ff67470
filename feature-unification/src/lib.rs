//! No code: see this crate's `Cargo.toml`. It exists for the features its dependencies turn on.
