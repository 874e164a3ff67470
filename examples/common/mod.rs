//! What several examples share: their first argument, and the GPU they report on.

use std::sync::Arc;
use sweepfan::{Error, GpuContext, Result};

/// The first argument as a count, or `default` when there is none; anything else is an error.
pub fn count_arg(default: usize) -> Result<usize> {
    match std::env::args().nth(1) {
        None => Ok(default),
        Some(s) => s
            .parse()
            .map_err(|_| Error::Config(format!("the count must be a whole number, got `{s}`"))),
    }
}

/// The default adapter, named on stdout.
pub fn open_gpu() -> Result<Arc<GpuContext>> {
    let ctx = Arc::new(GpuContext::default_adapter()?);
    println!("adapter: {}", ctx.info().name);
    Ok(ctx)
}
