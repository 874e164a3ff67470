//! Shader modules and compute pipelines on the context's device: compiled inside error scopes
//! of their own, so a failure comes back as an [`Error::Gpu`] naming the module, the entry
//! point, the adapter and the driver (docs/design.md §6.1), and once per context: a second
//! broad phase, sort or check that asks for the same module (by its source) or the same
//! pipeline (module, entry point, constants, workgroup memory) gets the first one's.
//! Compilation takes 0.1 to 4 s a pipeline on the software drivers of the driver matrix,
//! which reuse nothing across pipeline objects, and every broad phase made its own.

use super::block::caught;
use super::{GpuContext, WorkgroupMemory};
use crate::error::{Error, Result};
use std::collections::HashMap;

/// What makes two compute pipelines the same: the module, the entry point, the overridden
/// constants (by name, as bits) and whether workgroup memory starts zeroed.
type PipelineKey = (wgpu::ShaderModule, String, Vec<(String, u64)>, bool);

/// The modules (by source text) and pipelines a context has made.
#[derive(Default)]
pub(super) struct Compiled {
    modules: HashMap<String, wgpu::ShaderModule>,
    pipelines: HashMap<PipelineKey, wgpu::ComputePipeline>,
}

impl GpuContext {
    /// Compute pipelines for `entries` of `module` (labelled `label`, its path), in order; a
    /// failure is an [`Error::Gpu`] naming the module, the entry point, the adapter and the
    /// driver (see [`Self::pipeline_with`]).
    pub(crate) fn pipelines<const N: usize>(
        &self,
        label: &str,
        module: &wgpu::ShaderModule,
        entries: [&str; N],
    ) -> Result<[wgpu::ComputePipeline; N]> {
        let mut made = Vec::with_capacity(N);
        for entry in entries {
            made.push(self.make_pipeline(
                Some(label),
                module,
                entry,
                &[],
                WorkgroupMemory::Zeroed,
            )?);
        }
        Ok(made
            .try_into()
            .unwrap_or_else(|_: Vec<wgpu::ComputePipeline>| unreachable!("one per entry")))
    }

    /// The module of `shaders/PATH`, composed (see `crate::gpu::shader`), with the subgroup
    /// twins of its appends and walk ends where the device has `SUBGROUP` (docs/design.md
    /// §9.17).
    pub(crate) fn shader_file(&self, path: &str) -> Result<wgpu::ShaderModule> {
        let source = if self.has_subgroups() {
            crate::gpu::shader::compose_subgroup(path, self.math)?
        } else {
            crate::gpu::shader::compose(path, self.math)?
        };
        self.shader(path, &source)
    }

    /// Compiles a WGSL module, or returns the one this context compiled from the same source;
    /// compilation errors come back as [`Error::Gpu`] naming the file.
    pub(crate) fn shader(&self, label: &str, source: &str) -> Result<wgpu::ShaderModule> {
        if let Some(module) = self.compiled().modules.get(source) {
            return Ok(module.clone());
        }
        // A driver compiles for up to seconds (lavapipe, first frames): the caller's token is
        // looked at before each new module and pipeline (docs/design.md §9.18).
        crate::broadphase::cancel::check(&crate::broadphase::cancel::current())?;
        let (module, error) = caught(&self.device, &[wgpu::ErrorFilter::Validation], || {
            self.device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(label),
                    source: wgpu::ShaderSource::Wgsl(source.into()),
                })
        });
        if let Some(e) = error {
            return Err(Error::gpu(
                crate::error::GpuFailure::Shader,
                format!("shader {label} on {}: {e}", self.adapter_label()),
            ));
        }
        self.compiled()
            .modules
            .insert(source.to_owned(), module.clone());
        Ok(module)
    }

    /// Drops the modules and pipelines kept so far: the next request compiles again (the
    /// compile report times each pipeline from its module's source).
    pub(crate) fn forget_compiled(&self) {
        *self.compiled() = Compiled::default();
    }

    fn compiled(&self) -> std::sync::MutexGuard<'_, Compiled> {
        self.compiled.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A compute pipeline with an automatic layout and zero-filled workgroup memory.
    pub(crate) fn pipeline(
        &self,
        module: &wgpu::ShaderModule,
        entry: &str,
        constants: &[(&str, f64)],
    ) -> Result<wgpu::ComputePipeline> {
        self.pipeline_with(module, entry, constants, WorkgroupMemory::Zeroed)
    }

    /// A compute pipeline with an automatic layout; `memory` says whether wgpu zero-fills the
    /// kernel's workgroup memory first. Its creation runs inside error scopes of its own
    /// (validation, internal, out of memory; wgpu keeps scopes per thread), so a failure is
    /// returned here as an [`Error::Gpu`] naming the entry point, the adapter and the driver,
    /// not recorded as the context's first error for a later [`Self::check`] (docs/design.md
    /// §6.1).
    pub(crate) fn pipeline_with(
        &self,
        module: &wgpu::ShaderModule,
        entry: &str,
        constants: &[(&str, f64)],
        memory: WorkgroupMemory,
    ) -> Result<wgpu::ComputePipeline> {
        self.make_pipeline(None, module, entry, constants, memory)
    }

    fn make_pipeline(
        &self,
        module_label: Option<&str>,
        module: &wgpu::ShaderModule,
        entry: &str,
        constants: &[(&str, f64)],
        memory: WorkgroupMemory,
    ) -> Result<wgpu::ComputePipeline> {
        let key: PipelineKey = (
            module.clone(),
            entry.to_owned(),
            constants
                .iter()
                .map(|&(name, value)| (name.to_owned(), value.to_bits()))
                .collect(),
            memory == WorkgroupMemory::Zeroed,
        );
        if let Some(pipeline) = self.compiled().pipelines.get(&key) {
            return Ok(pipeline.clone());
        }
        crate::broadphase::cancel::check(&crate::broadphase::cancel::current())?;
        let filters = [
            wgpu::ErrorFilter::Validation,
            wgpu::ErrorFilter::Internal,
            wgpu::ErrorFilter::OutOfMemory,
        ];
        let (pipeline, error) = caught(&self.device, &filters, || {
            self.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: None,
                module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants,
                    zero_initialize_workgroup_memory: memory == WorkgroupMemory::Zeroed,
                },
                cache: None,
            })
        });
        match error {
            None => {
                self.compiled().pipelines.insert(key, pipeline.clone());
                Ok(pipeline)
            }
            Some(e) => Err(Error::gpu(
                crate::error::GpuFailure::Shader,
                format!(
                    "compute pipeline '{entry}'{} on {}: {e}",
                    module_label.map_or(String::new(), |m| format!(" of {m}")),
                    self.adapter_label()
                ),
            )),
        }
    }
}
