//! GPU-resident use (docs/design.md §10): the example owns the device, a sphere buffer and a
//! compute pass of its own that moves the spheres every frame; sweepfan runs on that device,
//! reads the spheres from that buffer, and leaves pairs and frame events on the device, where
//! the example's second pass adds the event counts into running totals, and a third, its own
//! narrow phase, runs one thread per pair through sweepfan's indirect-dispatch arguments
//! (`resident_dispatch_args`: the pair count never leaves the device). No host copy happens
//! during the run. At the end one readback checks it all against the CPU: the same motion
//! replayed on the host, the CPU grid and `EventTracker`. Prints `verified`, exits 1 otherwise.
//! `cargo run --release --example gpu_resident -- [SPHERES (20000)] [FRAMES (40)]`

use rand::{Rng, SeedableRng};
use std::sync::Arc;
use sweepfan::{BroadPhase, EventTracker, GpuBroadPhase, GpuContext, Method, Sphere, cpu};
use wgpu::util::DeviceExt;

const SIDE: f32 = 100.0;
const RADIUS: f32 = 0.5;

/// The example's own kernels: motion (one add per axis, bounce by negation and clamp: exact,
/// so the host can replay it bit for bit) and the running event totals.
const SHADER: &str = r#"
struct Sim { n: u32, side: f32, radius: f32, pad: u32 }
@group(0) @binding(0) var<uniform> sim: Sim;
@group(0) @binding(1) var<storage, read_write> spheres: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> velocity: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> found_total: array<u32, 1>;
@group(0) @binding(4) var<storage, read> lost_total: array<u32, 1>;
@group(0) @binding(5) var<storage, read_write> sums: array<u32, 2>;

@compute @workgroup_size(64)
fn step(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= sim.n {
        return;
    }
    var s = spheres[i];
    var v = velocity[i];
    for (var k = 0u; k < 3u; k++) {
        s[k] = s[k] + v[k];
        if s[k] < sim.radius || s[k] > sim.side - sim.radius {
            v[k] = -v[k];
            s[k] = clamp(s[k], sim.radius, sim.side - sim.radius);
        }
    }
    spheres[i] = s;
    velocity[i] = v;
}

@compute @workgroup_size(1)
fn add_events() {
    sums[0] += found_total[0];
    sums[1] += lost_total[0];
}

// The narrow phase's stand-in: one thread per resident pair, in the groups sweepfan's
// indirect arguments give ([x, y, 1, pairs]); counts the pairs and a checksum of them.
@group(0) @binding(6) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read> pair_args: array<u32, 4>;
@group(0) @binding(8) var<storage, read_write> narrow: array<atomic<u32>, 2>;

@compute @workgroup_size(64)
fn narrow_phase(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let k = (group.y * groups.x + group.x) * 64u + local;
    if k >= pair_args[3] {
        return;
    }
    let p = pairs[k];
    atomicAdd(&narrow[0], 1u);
    atomicAdd(&narrow[1], p.x ^ p.y);
}
"#;

/// The host twin of `step`.
fn step(spheres: &mut [Sphere], velocity: &mut [[f32; 4]]) {
    for (s, v) in spheres.iter_mut().zip(velocity) {
        for (k, vk) in v.iter_mut().take(3).enumerate() {
            s.center[k] += *vk;
            if s.center[k] < RADIUS || s.center[k] > SIDE - RADIUS {
                *vk = -*vk;
                s.center[k] = s.center[k].clamp(RADIUS, SIDE - RADIUS);
            }
        }
    }
}

fn main() -> sweepfan::Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let frames: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(40);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let start: Vec<Sphere> = (0..n)
        .map(|_| {
            let mut c = [0.0f32; 3];
            for x in &mut c {
                *x = RADIUS + rng.random::<f32>() * (SIDE - 2.0 * RADIUS);
            }
            Sphere::new(c.into(), RADIUS)
        })
        .collect();
    let start_velocity: Vec<[f32; 4]> = (0..n)
        .map(|_| {
            [0, 1, 2, 3].map(|k| {
                if k < 3 {
                    rng.random::<f32>() - 0.5
                } else {
                    0.0
                }
            })
        })
        .collect();

    // The simulation's own device.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .map_err(|e| sweepfan::Error::NoAdapter(e.to_string()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|e| sweepfan::Error::gpu(sweepfan::GpuFailure::Device, e.to_string()))?;
    let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
    let spheres_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("simulation spheres"),
        contents: bytemuck::cast_slice(&start),
        usage: storage,
    });
    let velocity_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("simulation velocity"),
        contents: bytemuck::cast_slice(&start_velocity),
        usage: storage,
    });
    let sums_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("event sums"),
        contents: &[0; 8],
        usage: storage,
    });
    let narrow_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("narrow phase totals"),
        contents: &[0; 8],
        usage: storage,
    });
    let sim = [n as u32, SIDE.to_bits(), RADIUS.to_bits(), 0];
    let sim_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("sim"),
        contents: bytemuck::cast_slice(&sim),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("simulation"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let pipeline = |entry: &str| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let (step_pipeline, add_pipeline) = (pipeline("step"), pipeline("add_events"));
    let narrow_pipeline = pipeline("narrow_phase");

    // sweepfan on that device: no second device, the spheres read where they are.
    let ctx = Arc::new(GpuContext::from_device(
        adapter,
        device.clone(),
        queue.clone(),
    ));
    let mut grid = GpuBroadPhase::new(ctx.clone(), Method::Grid)?;
    grid.track_events(true)?;
    grid.set_pair_capacity(4 * n as u64)?;
    // Arguments for a pass of 64-thread workgroups over the pairs, written on the device.
    grid.enable_dispatch_args(64)?;
    // The example's own bind groups, on the shared device, with wgpu's own calls.
    let bind = |pipeline: &wgpu::ComputePipeline, entries: &[(u32, &wgpu::Buffer)]| {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = entries
            .iter()
            .map(|&(binding, buffer)| wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("simulation"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    };
    let step_group = bind(
        &step_pipeline,
        &[(0, &sim_buf), (1, &spheres_buf), (2, &velocity_buf)],
    );
    for _ in 0..frames {
        // sweepfan's frame (pairs and events of the current positions), then the example's
        // passes: add this frame's event counts, move the spheres. One submission, no wait.
        let mut enc = grid.encode_from_buffer(&spheres_buf, n as u32)?;
        let events = grid.resident_events().expect("tracked");
        let (_, _, found_total, lost_total) = events.buffers();
        let add_group = bind(
            &add_pipeline,
            &[(3, found_total), (4, lost_total), (5, &sums_buf)],
        );
        let args = grid.resident_dispatch_args().expect("enabled");
        let narrow_group = bind(
            &narrow_pipeline,
            &[
                (6, grid.resident_pairs().pairs),
                (7, args),
                (8, &narrow_buf),
            ],
        );
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&add_pipeline);
            pass.set_bind_group(0, &add_group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
            pass.set_pipeline(&narrow_pipeline);
            pass.set_bind_group(0, &narrow_group, &[]);
            pass.dispatch_workgroups_indirect(args, 0);
            pass.set_pipeline(&step_pipeline);
            pass.set_bind_group(0, &step_group, &[]);
            pass.dispatch_workgroups((n as u32).div_ceil(64), 1, 1);
        }
        queue.submit([enc.finish()]);
    }
    let waits_during_run = ctx.counts().host_waits;

    // The end of the run: one check, one readback.
    grid.check_resident()?;
    let final_spheres: Vec<Sphere> = ctx.read(&spheres_buf, n)?;
    let sums: Vec<u32> = ctx.read(&sums_buf, 2)?;
    let narrow: Vec<u32> = ctx.read(&narrow_buf, 2)?;

    // The host replay: same motion, CPU grid, tracker.
    let mut spheres = start.clone();
    let mut velocity = start_velocity.clone();
    let mut cpu_grid = cpu::broad_phase(Method::Grid);
    let mut tracker = EventTracker::new();
    let (mut found, mut lost) = (0u64, 0u64);
    let (mut pair_count, mut checksum) = (0u32, 0u32);
    let mut pairs = Vec::new();
    for _ in 0..frames {
        cpu_grid.find_pairs(&spheres, Some(&mut pairs))?;
        for p in &pairs {
            pair_count = pair_count.wrapping_add(1);
            checksum = checksum.wrapping_add(p[0] ^ p[1]);
        }
        let e = tracker.update(std::mem::take(&mut pairs));
        found += e.found.len() as u64;
        lost += e.lost.len() as u64;
        step(&mut spheres, &mut velocity);
    }
    let same_motion = final_spheres == spheres;
    let same_events = sums[0] as u64 == found && sums[1] as u64 == lost;
    let same_pairs = narrow == [pair_count, checksum];
    println!(
        "{n} spheres, {frames} frames on '{}': device events {} found, {} lost; host replay {found} \
         found, {lost} lost; the narrow phase's indirect pass saw {} pairs (host {pair_count}); \
         host waits during the run: {waits_during_run}",
        ctx.info().name,
        sums[0],
        sums[1],
        narrow[0]
    );
    if same_motion && same_events && same_pairs && waits_during_run == 0 {
        println!("verified");
        Ok(())
    } else {
        eprintln!(
            "MISMATCH: motion equal {same_motion}, events equal {same_events}, pairs equal \
             {same_pairs}, waits {waits_during_run}"
        );
        std::process::exit(1);
    }
}
