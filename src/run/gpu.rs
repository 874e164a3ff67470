//! The GPU context, opened on first use so CPU-only runs never touch the driver.

use crate::error::Result;
use crate::gpu::{GpuContext, GpuOptions};
use std::sync::Arc;

/// A GPU context opened on the first [`LazyGpu::get`], then shared.
pub struct LazyGpu {
    adapter: Option<String>,
    ctx: Option<Arc<GpuContext>>,
}

impl LazyGpu {
    /// `adapter`: index from `sweepfan info` or a substring of the adapter's name.
    pub fn new(adapter: Option<String>) -> Self {
        Self { adapter, ctx: None }
    }

    /// The context, opened now if it is not yet.
    pub fn get(&mut self) -> Result<Arc<GpuContext>> {
        if let Some(ctx) = &self.ctx {
            return Ok(ctx.clone());
        }
        let ctx = Arc::new(GpuContext::new(&GpuOptions {
            adapter: self.adapter.clone(),
        })?);
        self.ctx = Some(ctx.clone());
        Ok(ctx)
    }

    /// Adapter name, type and backend, for the `device` column.
    pub fn device(&self) -> String {
        match &self.ctx {
            Some(c) => {
                let soft = if c.info.device_type == wgpu::DeviceType::Cpu {
                    ", software: not GPU times"
                } else {
                    ""
                };
                format!(
                    "{} ({:?}, {:?}{soft})",
                    c.info.name, c.info.device_type, c.info.backend
                )
            }
            None => "gpu (not opened)".into(),
        }
    }
}
