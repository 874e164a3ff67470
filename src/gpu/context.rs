//! The wgpu context, split by job: here the device with the adapter's own limits, optional
//! features, error capture and buffers; `choice` (adapters, backends, the environment),
//! `creation` (counted creation, passes, dispatches, bind groups kept across frames), `compile`
//! (shaders and pipelines), `limits` (bindings, counts, dispatch grids) and `read` (read-back).
//! `device`, `queue`, `info`, `limits` and `features` stay public fields: a simulation that
//! shares its device ([`GpuContext::from_device`]) records its own work on them.

use crate::error::{Error, Exceeds, GpuFailure, Result};
use crate::gpu::adapter_check::EXPECT_ADAPTER_ENV;
use crate::gpu::shader::{MathMode, SLOPPY_MATH_ENV};
use encase::internal::WriteInto;
use encase::{ShaderSize, ShaderType, UniformBuffer};
use std::sync::{Arc, Mutex};

/// A parameter struct a shader reads as a uniform. encase's `ShaderType` derive lays it out by
/// WGSL's rules (offsets, alignment, padding and size, checked against the uniform address
/// space's constraints on every write), so neither the Rust nor the WGSL side pads by hand
/// (docs/design.md §8.2).
pub trait Uniform: ShaderType + ShaderSize + WriteInto {
    /// Bytes of the WGSL struct.
    fn uniform_size() -> u64 {
        Self::SHADER_SIZE.get()
    }

    /// The value in WGSL's uniform layout.
    fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut bytes = vec![0; Self::uniform_size() as usize];
        self.write_to(&mut bytes)?;
        Ok(bytes)
    }

    /// Writes the value in WGSL's uniform layout at the start of `out` (at least
    /// [`Self::uniform_size`] bytes), without allocating: for per-dispatch parameter slots.
    fn write_to(&self, out: &mut [u8]) -> Result<()> {
        UniformBuffer::new(out)
            .write(self)
            .map_err(|e| Error::gpu(GpuFailure::Internal, format!("uniform layout: {e}")))
    }
}

impl<T: ShaderType + ShaderSize + WriteInto> Uniform for T {}

/// How to pick the adapter.
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// `None`: wgpu's default choice (high performance). Otherwise an index into
    /// [`list_adapters`] or a case-insensitive substring of the adapter name.
    pub adapter: Option<String>,
    /// A lower binding limit than the adapter's (at least [`MIN_BINDING_CAP`]): every size
    /// check and partition plan follows it (`--max-binding-bytes`, docs/design.md §2.10).
    pub max_binding_bytes: Option<u64>,
    /// Opens the device without `SUBGROUP` even where the adapter offers it: every kernel then
    /// takes its portable variant (tests run both on one adapter; a driver whose subgroups
    /// misbehave can be avoided).
    pub without_subgroups: bool,
    /// The backends tried; `None`: Vulkan, Metal, DX12 and WebGPU (OpenGL only when asked: its
    /// compute support is partial, and probing EGL on a headless machine only prints noise).
    pub backends: Option<wgpu::Backends>,
    /// Proof of where a run is (docs/design.md §9.5): opening fails unless the adapter's name
    /// contains this (case-insensitive), and a software adapter passes only when this names
    /// one (`gpu::adapter_check::adapter_mismatch`).
    pub expect_adapter: Option<String>,
    /// How the kernels round what WGSL leaves to the device: exact (the default), or sloppy
    /// as real GPUs may be, for tests on a software adapter (docs/design.md §9.11).
    pub math: MathMode,
}

impl GpuOptions {
    /// The options a process's environment asks for, each variable read through `var` (the
    /// library reads none itself: a tool passes a lookup of its process's environment):
    /// `WGPU_BACKEND` (backends, comma-separated), [`EXPECT_ADAPTER_ENV`] (the adapter a run
    /// must be on) and [`SLOPPY_MATH_ENV`] (the math mode). A value naming no backend is
    /// [`Error::Environment`] naming the variable.
    ///
    /// ```
    /// use sweepfan::gpu::{GpuOptions, MathMode};
    /// let vars = |name: &str| match name {
    ///     "WGPU_BACKEND" => Some("vulkan".to_string()),
    ///     "SWEEPFAN_SLOPPY_MATH" => Some("1".to_string()),
    ///     _ => None,
    /// };
    /// let options = GpuOptions::from_vars(vars)?;
    /// assert_eq!(options.backends, Some(wgpu::Backends::VULKAN));
    /// assert_eq!(options.math, MathMode::Sloppy);
    /// assert!(GpuOptions::from_vars(|_| Some("bogus".to_string())).is_err());
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        Ok(Self {
            backends: var(BACKEND_ENV)
                .map(|list| choice::parse_backends(&list))
                .transpose()?,
            expect_adapter: var(EXPECT_ADAPTER_ENV)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty()),
            math: var(SLOPPY_MATH_ENV).map_or(MathMode::Exact, |v| MathMode::from_switch(&v)),
            ..Self::default()
        })
    }
}

/// The variable [`GpuOptions::from_vars`] reads the backends from.
pub const BACKEND_ENV: &str = "WGPU_BACKEND";

/// Environment variable that opts out of GPU tests on a machine known to have no Vulkan at all.
/// Only the test helpers read it; the library never skips silently. (Feature `testing`.)
#[cfg(any(test, feature = "testing"))]
pub const NO_GPU_ENV: &str = "SWEEPFAN_NO_GPU";

/// A device and queue plus what we learned about the adapter.
pub struct GpuContext {
    /// The adapter the device was opened on.
    pub(crate) adapter: wgpu::Adapter,
    /// The device.
    pub(crate) device: wgpu::Device,
    /// The device's queue.
    pub(crate) queue: wgpu::Queue,
    /// The adapter's name, type, backend and driver.
    pub(crate) info: wgpu::AdapterInfo,
    /// Limits granted to the device: the adapter's own, not WebGPU's defaults.
    pub(crate) limits: wgpu::Limits,
    /// Features enabled on the device (a subset of what the adapter offers; see [`Self::new`]).
    pub(crate) features: wgpu::Features,
    /// Nanoseconds per timestamp tick (meaningful only when timestamps are enabled).
    pub(crate) timestamp_period_ns: f32,
    /// First uncaptured validation or out-of-memory error, or the device's loss, returned by
    /// [`Self::check`] instead of wgpu's default handler, which panics.
    errors: Arc<Mutex<Option<Error>>>,
    /// Blocking waits for the device ([`Self::wait`]) so far.
    host_waits: std::sync::atomic::AtomicU64,
    /// Compute dispatches recorded so far ([`Self::note_dispatch`]).
    dispatches: std::sync::atomic::AtomicU64,
    /// Set when a wait was abandoned under a cancelled token, its work still queued
    /// ([`Self::settle`]).
    abandoned: std::sync::atomic::AtomicBool,
    /// Objects created and bytes moved so far (`context/creation.rs`).
    totals: creation::Totals,
    /// Bind groups kept across frames (`context/creation.rs`).
    bind_groups: Mutex<creation::BindGroups>,
    /// Shader modules and pipelines made so far, for the next one that asks for the same
    /// (`context/compile.rs`).
    compiled: Mutex<compile::Compiled>,
    /// Other devices that a broad phase made on this context spreads its frames over, in
    /// parts (`--adapters`, [`Self::with_peers`]).
    peers: Vec<Arc<GpuContext>>,
    /// The device is the caller's ([`Self::from_device`]): sweepfan's work on it runs inside
    /// error scopes (`context/creation.rs`, `captured`), the caller's handler left alone.
    scoped: bool,
    /// The kernels' math ([`GpuOptions::math`]).
    math: MathMode,
}

impl GpuContext {
    /// Opens the chosen adapter. Requests the adapter's full limits (so large scenes can bind
    /// large buffers) and, when offered, `TIMESTAMP_QUERY` (+ inside encoders) for per-pass times
    /// and `SUBGROUP` for the faster sort variants. Nothing optional is required. An adapter
    /// that [`GpuOptions::expect_adapter`] does not name is an error (`gpu::adapter_check`).
    ///
    /// Blocks until the device is open: not in a browser, where it is [`Error::Unsupported`]
    /// ([`Self::new_async`] is the call there).
    pub fn new(options: &GpuOptions) -> Result<Self> {
        block::block_on(
            "opening a device (GpuContext::new)",
            Self::new_async(options),
        )?
    }

    /// [`Self::new`] as a future: what a browser's page awaits (docs/design.md §8.5); natively
    /// any executor runs it.
    pub async fn new_async(options: &GpuOptions) -> Result<Self> {
        let backends = options.backends.unwrap_or_else(default_backends);
        let instance = instance(backends);
        let adapter = match &options.adapter {
            None => instance
                .request_adapter(&wgpu::RequestAdapterOptions {
                    power_preference: wgpu::PowerPreference::HighPerformance,
                    ..Default::default()
                })
                .await
                .map_err(|e| {
                Error::NoAdapter(format!(
                    "{e}. Install a Vulkan driver (on Debian: apt-get install mesa-vulkan-drivers \
                     for the software driver lavapipe) or check WGPU_BACKEND"
                ))
            })?,
            Some(wanted) => {
                let adapters = instance.enumerate_adapters(backends).await;
                let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
                let pick = match wanted.parse::<usize>() {
                    Ok(i) => adapters.into_iter().nth(i),
                    Err(_) => {
                        let w = wanted.to_lowercase();
                        adapters
                            .into_iter()
                            .find(|a| a.get_info().name.to_lowercase().contains(&w))
                    }
                };
                pick.ok_or_else(|| {
                    Error::NoAdapter(format!(
                        "no adapter matches '{}' (available: {})",
                        crate::error::shown(wanted),
                        if names.is_empty() {
                            "none".to_string()
                        } else {
                            names
                                .iter()
                                .enumerate()
                                .map(|(i, n)| format!("{i}: {n}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ))
                })?
            }
        };
        let info = adapter.get_info();
        if let Some(why) = options
            .expect_adapter
            .as_deref()
            .and_then(|expected| crate::gpu::adapter_check::adapter_mismatch(expected, &info))
        {
            return Err(Error::NoAdapter(why));
        }
        let offered = adapter.features();
        let mut wanted = wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::SUBGROUP;
        if options.without_subgroups {
            wanted.remove(wgpu::Features::SUBGROUP);
        }
        let features = offered & wanted;
        let mut limits = adapter.limits();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("sweepfan"),
                required_features: features,
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| {
                Error::gpu(
                    GpuFailure::Device,
                    format!("request_device on '{}': {e}", info.name),
                )
            })?;
        if let Some(cap) = options.max_binding_bytes {
            // The limits sweepfan plans with (the device keeps the adapter's).
            limits = limits::capped_binding(limits, cap)?;
        }
        let errors: Arc<Mutex<Option<Error>>> = Arc::default();
        let sink = errors.clone();
        let name = info.name.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut slot = sink.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert_with(|| device_error(&name, e));
        }));
        let lost = errors.clone();
        let adapter_name = info.name.clone();
        device.set_device_lost_callback(move |reason, message| {
            // The loss replaces an error recorded before it: it is what the caller must act on
            // (the validation errors of calls on a lost device follow from it).
            let mut slot = lost.lock().unwrap_or_else(|p| p.into_inner());
            *slot = Some(Error::DeviceLost {
                adapter: adapter_name.clone(),
                reason: format!("{reason:?}: {message}"),
            });
        });
        let mut ctx = Self::from_parts(adapter, device, queue, limits, features, errors);
        ctx.math = options.math;
        Ok(ctx)
    }

    /// A context on the caller's own device and queue (no second device): for a simulation
    /// whose buffers sweepfan reads and writes in place (`GpuBroadPhase::encode_from_buffer`).
    /// Limits and features are the device's (`SUBGROUP` and `TIMESTAMP_QUERY` used when it
    /// has them). The caller's error handler stays in place: sweepfan installs none on a device
    /// it did not make. Its own work there (buffers, bind groups, uploads, pipelines, every
    /// submission it finishes) runs inside error scopes instead, so its validation,
    /// out-of-memory and internal errors become [`Error`]s ([`Self::check`], the call's
    /// result) and never reach the caller's handler (wgpu's default panics); the caller's own
    /// errors still do. Not in a browser, where popping a scope is a wait: there they reach the
    /// device's handler. What sweepfan records into an encoder it hands back unsubmitted
    /// (`encode_from_buffer`) is the caller's to finish, and its errors the caller's.
    ///
    /// ```
    /// # let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    /// // The simulation's own adapter and device (here the default ones, where one exists).
    /// let Ok(adapter) = pollster::block_on(instance.request_adapter(&Default::default())) else {
    ///     return Ok(());
    /// };
    /// let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))
    ///     .expect("device");
    /// let ctx = sweepfan::GpuContext::from_device(adapter, device.clone(), queue.clone());
    /// assert_eq!(ctx.device(), &device); // the same device, shared
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn from_device(adapter: wgpu::Adapter, device: wgpu::Device, queue: wgpu::Queue) -> Self {
        let limits = device.limits();
        let features = device.features();
        let mut ctx = Self::from_parts(adapter, device, queue, limits, features, Arc::default());
        ctx.scoped = !cfg!(target_arch = "wasm32");
        ctx
    }

    fn from_parts(
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        limits: wgpu::Limits,
        features: wgpu::Features,
        errors: Arc<Mutex<Option<Error>>>,
    ) -> Self {
        let info = adapter.get_info();
        let timestamp_period_ns = queue.get_timestamp_period();
        Self {
            adapter,
            device,
            queue,
            info,
            limits,
            features,
            timestamp_period_ns,
            errors,
            host_waits: Default::default(),
            dispatches: Default::default(),
            abandoned: Default::default(),
            totals: Default::default(),
            bind_groups: Default::default(),
            compiled: Default::default(),
            peers: Vec::new(),
            math: MathMode::Exact,
            scoped: false,
        }
    }

    /// The adapter the device was opened on.
    pub fn adapter(&self) -> &wgpu::Adapter {
        &self.adapter
    }

    /// The device, for a caller that shares it (a renderer beside the broad phase): sweepfan's
    /// own errors on it come back as [`Error`]s ([`Self::check`]), the caller's go to its
    /// handler.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The device's queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The adapter's name, type, backend and driver.
    pub fn info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// Limits granted to the device: the adapter's own, not WebGPU's defaults.
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// Features enabled on the device (a subset of what the adapter offers; see [`Self::new`]).
    pub fn features(&self) -> wgpu::Features {
        self.features
    }

    /// How this context's kernels round what WGSL leaves to the device ([`GpuOptions::math`];
    /// exact on a caller's own device).
    pub fn math(&self) -> MathMode {
        self.math
    }

    /// This context with other devices beside it: a `GpuBroadPhase` made on it spreads every
    /// frame over all of them in parts (docs/design.md §2.10). Two contexts on one adapter
    /// stand in for two GPUs.
    pub fn with_peers(mut self, peers: Vec<Arc<GpuContext>>) -> Self {
        self.peers = peers;
        self
    }

    /// The other devices of [`Self::with_peers`].
    pub fn peers(&self) -> &[Arc<GpuContext>] {
        &self.peers
    }

    /// The default adapter, or [`Error::NoAdapter`].
    pub fn default_adapter() -> Result<Self> {
        Self::new(&GpuOptions::default())
    }

    /// True when per-pass timestamp queries are available.
    pub fn has_timestamps(&self) -> bool {
        self.features.contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Whether the adapter is a CPU emulating a GPU (lavapipe, SwiftShader): a correctness
    /// target whose times are not GPU times.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// True when the device was opened with `SUBGROUP` (kernels take their subgroup variants).
    pub fn has_subgroups(&self) -> bool {
        self.features.contains(wgpu::Features::SUBGROUP)
    }

    /// Returns the first GPU error recorded since the last call: [`Error::Gpu`] (validation),
    /// [`Error::TooLarge`] of [`crate::error::Exceeds::DeviceMemory`] (out of memory) or
    /// [`Error::DeviceLost`]. Call after each submission's wait. A loss is for good: once the
    /// device is lost every later check reports it again (and every later call on the context
    /// fails with it), so a caller that kept the context learns to open a new one.
    pub fn check(&self) -> Result<()> {
        let mut slot = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        match slot.take() {
            Some(Error::DeviceLost { adapter, reason }) => {
                *slot = Some(Error::DeviceLost {
                    adapter: adapter.clone(),
                    reason: reason.clone(),
                });
                Err(Error::DeviceLost { adapter, reason })
            }
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether the device was lost ([`Error::DeviceLost`]): no call on this context can succeed
    /// again; open a new one.
    pub fn is_lost(&self) -> bool {
        let slot = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        matches!(*slot, Some(Error::DeviceLost { .. }))
    }

    /// Waits, dispatches, creations and traffic so far (see
    /// [`crate::broadphase::DeviceCounts`]).
    pub fn counts(&self) -> crate::broadphase::DeviceCounts {
        use std::sync::atomic::Ordering::Relaxed;
        let t = &self.totals;
        crate::broadphase::DeviceCounts {
            host_waits: self.host_waits.load(Relaxed),
            dispatches: self.dispatches.load(Relaxed),
            bind_groups: t.bind_groups.load(Relaxed),
            buffers: t.buffers.load(Relaxed),
            query_sets: t.query_sets.load(Relaxed),
            pipelines: t.pipelines.load(Relaxed),
            bytes_to_host: t.bytes_to_host.load(Relaxed),
            bytes_from_host: t.bytes_from_host.load(Relaxed),
            compute_passes: t.compute_passes.load(Relaxed),
        }
    }

    /// Counts one compute dispatch (every `dispatch_workgroups` of the library calls it).
    pub(crate) fn note_dispatch(&self) {
        self.dispatches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Fails with a clear message when a storage binding of `bytes` exceeds the device limit.
    pub fn check_binding(&self, what: &str, bytes: u64) -> Result<()> {
        let max = self.max_binding_bytes();
        if bytes > max {
            let whose = self.whose_binding_limit();
            return Err(Error::too_large(
                Exceeds::Binding {
                    needed: bytes,
                    allowed: max,
                },
                format!("{what} needs a {bytes}-byte storage buffer; {whose}"),
            ));
        }
        Ok(())
    }

    /// Whose binding limit holds, in words, for messages: the adapter's, or one set lower for
    /// this context (`GpuOptions::max_binding_bytes`, the CLI's --max-binding-bytes), never the
    /// adapter blamed for the caller's limit.
    pub(crate) fn whose_binding_limit(&self) -> String {
        let max = self.max_binding_bytes();
        if self.binding_capped() {
            format!(
                "the limit set for this run (max_binding_bytes, --max-binding-bytes) is {max} \
                 bytes per binding, below the {} bytes of the adapter '{}'",
                max_binding_bytes_of(&self.adapter.limits()),
                self.info.name
            )
        } else {
            format!(
                "the adapter '{}' allows {max} bytes per binding",
                self.info.name
            )
        }
    }

    /// Whether the binding limit was set below the adapter's for this context
    /// ([`GpuOptions::max_binding_bytes`]).
    pub fn binding_capped(&self) -> bool {
        self.max_binding_bytes() < max_binding_bytes_of(&self.adapter.limits())
    }

    /// A clear error when `what` needs 1D workgroups of `size` invocations and the adapter
    /// allows fewer.
    pub(crate) fn check_workgroup(&self, what: &str, size: u32) -> Result<()> {
        let l = &self.limits;
        if l.max_compute_invocations_per_workgroup < size || l.max_compute_workgroup_size_x < size {
            return Err(Error::too_large(
                Exceeds::Dispatch,
                format!(
                    "{what} needs {size}-invocation workgroups; the adapter '{}' allows {} (x at \
                 most {})",
                    self.info.name,
                    l.max_compute_invocations_per_workgroup,
                    l.max_compute_workgroup_size_x
                ),
            ));
        }
        Ok(())
    }

    /// The largest storage buffer one binding can hold on this device: see
    /// `max_binding_bytes_of`.
    pub fn max_binding_bytes(&self) -> u64 {
        max_binding_bytes_of(&self.limits)
    }

    /// Returns `slot` if it holds at least `bytes`, else a new storage buffer of `bytes` grown
    /// by half again (so a slowly growing input does not reallocate every call), checked
    /// against the binding limit.
    pub(crate) fn ensure_storage<'a>(
        &self,
        slot: &'a mut Option<wgpu::Buffer>,
        label: &str,
        bytes: u64,
    ) -> Result<&'a wgpu::Buffer> {
        let bytes = bytes.max(4).next_multiple_of(4);
        if slot.as_ref().is_none_or(|b| b.size() < bytes) {
            self.check_binding(label, bytes)?;
            let size = grown_bytes(bytes, self.max_binding_bytes());
            *slot = Some(self.storage_buffer(label, size)?);
        }
        Ok(slot.as_ref().expect("just filled"))
    }

    /// A uniform buffer of `bytes`, written with `queue.write_buffer`.
    pub(crate) fn uniform_buffer(&self, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
        self.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// A storage buffer of `bytes` (at least 4, so empty inputs still bind), checked against the
    /// binding limit.
    pub(crate) fn storage_buffer(&self, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
        self.storage_buffer_with(label, bytes, wgpu::BufferUsages::empty())
    }

    /// [`Self::storage_buffer`] with `extra` usages (`INDIRECT` for dispatch arguments).
    pub(crate) fn storage_buffer_with(
        &self,
        label: &str,
        bytes: u64,
        extra: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer> {
        let bytes = bytes.max(4).next_multiple_of(4);
        self.check_binding(label, bytes)?;
        self.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC
                | extra,
            mapped_at_creation: false,
        })
    }

    /// Splits `groups` workgroups into a 2D grid that respects
    /// `max_compute_workgroups_per_dimension` (65,535 on most devices). Shaders recover the flat
    /// group index as `id.y * num_workgroups.x + id.x` and guard against the overshoot.
    pub(crate) fn dispatch_2d(&self, groups: u32) -> (u32, u32) {
        dispatch_2d(groups, self.limits.max_compute_workgroups_per_dimension)
    }

    /// The adapter and its driver, for error messages: `'name' (type, backend; driver X
    /// version)`.
    pub fn adapter_label(&self) -> String {
        crate::gpu::adapter_check::adapter_label(&self.info)
    }
}

/// Whether wgpu zero-fills a kernel's workgroup memory before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkgroupMemory {
    /// wgpu zero-fills the workgroup memory first.
    Zeroed,
    /// The kernel initialises its workgroup tables itself (the fill would be another pass).
    AsLeft,
}

/// For tests: a context on the adapter the environment read through `var` asks for
/// ([`GpuOptions::from_vars`]: backends, expected adapter, math). A missing adapter fails the
/// test (panics with the reason) unless `var(NO_GPU_ENV)` is `1`, the opt-out for a machine
/// known to have no Vulkan at all, in which case this returns `None` and says so on stderr. An
/// adapter other than the expected one fails the test too, and an expected adapter beside the
/// opt-out is a contradiction that fails it. (Feature `testing`: the workspace's suites.)
#[cfg(any(test, feature = "testing"))]
pub fn test_gpu_with(var: impl Fn(&str) -> Option<String>) -> Option<GpuContext> {
    let options = GpuOptions::from_vars(&var).unwrap_or_else(|e| panic!("GPU test: {e}"));
    if var(NO_GPU_ENV).is_some_and(|v| v == "1") {
        if let Some(expected) = &options.expect_adapter {
            panic!("{NO_GPU_ENV}=1 opts out of GPU tests, but {EXPECT_ADAPTER_ENV}={expected}");
        }
        eprintln!("{NO_GPU_ENV}=1: GPU test not run");
        return None;
    }
    match GpuContext::new(&options) {
        Ok(ctx) => Some(ctx),
        Err(e @ Error::NoAdapter(_)) => {
            panic!("GPU test needs an adapter ({NO_GPU_ENV}=1 opts out): {e}")
        }
        Err(e) => panic!("GPU test: {e}"),
    }
}

/// [`test_gpu_with`] on the process's environment, for the unit tests.
#[cfg(test)]
pub(crate) fn test_gpu() -> Option<GpuContext> {
    test_gpu_with(|name| std::env::var(name).ok())
}

/// A device's error as sweepfan reports it: running out of memory is [`Error::TooLarge`],
/// anything else [`Error::Gpu`].
fn device_error(adapter: &str, e: wgpu::Error) -> Error {
    match e {
        wgpu::Error::OutOfMemory { .. } => Error::too_large(
            crate::error::Exceeds::DeviceMemory,
            format!("the device '{adapter}' ran out of memory: {e}"),
        ),
        e => Error::gpu(GpuFailure::Validation, e.to_string()),
    }
}

pub(crate) mod block;
pub(crate) use block::block_on;

/// `struct Name { a: ComputePipeline, b: ... }` for entry points `a`, `b`, ... of
/// `shaders/PATH`, with `new`, which compiles them on a context ([`GpuContext::shader_file`],
/// [`GpuContext::pipelines`] labelled with the path): each entry point is named once, the
/// fields are named as the entry points.
macro_rules! entry_pipelines {
    ($(#[$meta:meta])* $vis:vis struct $name:ident = $path:literal [$($entry:ident),+ $(,)?]) => {
        $(#[$meta])*
        $vis struct $name {
            $($entry: wgpu::ComputePipeline,)+
        }

        impl $name {
            /// Compiles the pipelines of the entry points on `ctx`.
            $vis fn new(ctx: &$crate::gpu::context::GpuContext) -> $crate::error::Result<Self> {
                let module = ctx.shader_file($path)?;
                let [$($entry),+] = ctx.pipelines($path, &module, [$(stringify!($entry)),+])?;
                Ok(Self { $($entry),+ })
            }
        }
    };
}
pub(crate) use entry_pipelines;
mod choice;
mod compile;
mod creation;
pub use creation::FrameScope;
mod limits;
mod read;
mod wait;
use choice::{default_backends, instance};
pub use choice::{hardware_adapter, list_adapters};
pub(crate) use limits::count_u32;
#[cfg(test)]
use limits::{BINDING_ALIGN, MAX_BINDING_BYTES};
pub use limits::{MIN_BINDING_CAP, dispatch_2d, grown_bytes, is_size_limit, max_binding_bytes_of};

#[cfg(test)]
mod tests;
