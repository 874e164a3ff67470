//! `sweepfan`: headless benchmarks, paper reproductions, verification and stress runs.
//!
//! With no arguments: the default benchmark (paper box, n = 5000, every method, CPU and GPU when
//! an adapter exists, every method verified against brute force) as a table on stdout.
//!
//! This file parses the command line and maps results to exit codes: 0 success, 1 a
//! verification failed, 2 an error (bad input, no adapter, too large). Each subcommand is one
//! file under `commands/`: its arguments and an `exec` that calls into the library.

#[macro_use]
mod args;
mod commands;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use commands::{
    auto_bench, bench, default, dist, info, reproduce, scene, selftest, shaders, sort_bench,
    stress, verify,
};
use sweepfan_cli::run::gpu::LazyGpu;

#[derive(Parser)]
#[command(
    name = "sweepfan",
    version,
    about = "GPU and CPU broad phase, SAT and sector CCD"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// GPU adapter: index from `sweepfan info` or a substring of its name.
    #[arg(long, global = true, conflicts_with = "adapters", value_parser = args::values::adapter)]
    adapter: Option<String>,
    /// Several GPU devices, frames spread over them in parts: `all`, or adapters by index or
    /// name, comma-separated (the same one twice: two devices on it).
    #[arg(long, global = true, value_name = "all|I,J,...")]
    adapters: Option<String>,
    /// Lower the bytes one GPU storage binding may hold (at least 65536): sphere frames past it
    /// run in parts (docs/design.md §2.10); box, rotating and world frames past it are refused.
    #[arg(long, global = true, value_name = "BYTES", value_parser = args::values::binding_bytes)]
    max_binding_bytes: Option<u64>,
}

#[derive(Subcommand)]
enum Command {
    /// Reproduce a paper's experiments, our numbers beside theirs.
    Reproduce {
        #[command(subcommand)]
        what: Reproduce,
    },
    /// Time methods on a scene.
    Bench(bench::BenchArgs),
    /// Time `auto` beside every method, scene by scene: what it chose and its ratio to the
    /// fastest.
    AutoBench(auto_bench::AutoBenchArgs),
    /// Find the touching pairs of a scene file, write them, and check them against brute force
    /// (above 20,000 objects, against the cheapest other exact CPU method, named).
    Verify(verify::VerifyArgs),
    /// Double n on the density scene until a time budget or --max-n, verifying every step.
    Stress(stress::StressArgs),
    /// The broad phase of one scene across MPI ranks: run under mpirun, built with
    /// --features mpi (each rank a slab of space, ghosts exchanged, pairs exact).
    Dist(dist::DistArgs),
    /// Write a generated scene as a CSV file (what --scene-file reads).
    Scene(scene::SceneArgs),
    /// Print the GPU adapters, limits and features.
    Info,
    /// Check every GPU stage against the CPU reference on this adapter (exit 1 on a mismatch).
    Selftest(selftest::SelftestArgs),
    /// Write every shader module as the pipelines compile it (for outside validators).
    Shaders(shaders::ShadersArgs),
    /// Time the GPU radix sort of (key, value) pairs per size and variant, the last repetition of each checked (sorted, stable, a permutation).
    SortBench(sort_bench::SortBenchArgs),
}

#[derive(Subcommand)]
enum Reproduce {
    /// Tables 1-7 of the serialization paper (n = 50 .. 5000, paper box).
    Broadphase(reproduce::BroadphaseArgs),
    /// Sector CCD (thesis chapter 3): Table 3.1 accuracy, Figs. 3.8/3.9 bins, Tables 3.2-3.6.
    Sector(reproduce::SectorArgs),
}

/// Makes the process fit a shell pipeline and a bare environment, before anything else runs
/// (no other thread exists yet):
/// * a closed pipe (`sweepfan info | head -1`) ends the process quietly, as it does `ls`,
///   instead of a panic in `println!` (any other failed write to standard output is exit 1
///   with a message, `args::stdout_failed`; the CLI prints only through `outln!`/`say!`);
/// * Ctrl-C during an atomic write of an output removes its temporary file;
/// * under an address-space limit (`ulimit -v`), glibc's allocator keeps one arena: each further
///   arena reserves 64 MB of address space that the limit counts, so the memory checks (which
///   read the limit less `VmSize`) saw almost nothing left once rayon's threads had allocated,
///   and refused a run that fitted, or let one through to an abort;
/// * libwayland, which the Vulkan loader loads, prints "error: XDG_RUNTIME_DIR is invalid or not
///   set" on every adapter probe when that variable is unset: a false alarm for a headless tool,
///   silenced with a private directory.
fn prepare_process() {
    // Ctrl-C (or SIGTERM, SIGHUP) during an atomic write removes its temporary file
    // (docs/design.md §8.3).
    sweepfan_cli::report::output::remove_temporaries_on_signals();
    #[cfg(unix)]
    {
        // SAFETY: restoring the default action of a signal; no handler code runs.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit writes the struct it is given; mallopt sets a tunable before
            // any other thread exists (first thing in main).
            unsafe {
                if libc::getrlimit(libc::RLIMIT_AS, &mut limit) == 0
                    && limit.rlim_cur != libc::RLIM_INFINITY
                {
                    libc::mallopt(libc::M_ARENA_MAX, 1);
                }
            }
        }
        let valid =
            std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| std::path::Path::new(&d).is_dir());
        if !valid {
            use std::os::unix::fs::DirBuilderExt;
            // SAFETY: getuid has no preconditions.
            let uid = unsafe { libc::getuid() };
            let dir = std::env::temp_dir().join(format!("sweepfan-xdg-{uid}"));
            let made = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir);
            // Only our own private directory: not a symbolic link, nor one another user made
            // first under the same name.
            use std::os::unix::fs::MetadataExt;
            let ours = std::fs::symlink_metadata(&dir)
                .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
            if made.is_ok() && ours {
                // SAFETY: single-threaded here (first thing in main), so no other thread reads
                // the environment concurrently.
                unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
            }
        }
    }
}

fn main() {
    prepare_process();
    let cli = parse();
    // Ctrl-C stops the library's long calls at their next check (docs/design.md §9.18); every
    // request is checked against the system's memory before it is allocated (§9.14).
    let token = sweepfan_cli::run::stop_token();
    sweepfan_cli::report::output::stop_calls_on_interrupt(token.clone());
    let limits = sweepfan::Limits::new()
        .with_memory(sweepfan::MemoryBudget::System)
        .with_cancel(token.clone());
    let result = limits.run(|| run(cli));
    if token.is_cancelled() {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        args::note(format_args!("sweepfan: interrupted"));
        sweepfan_cli::report::output::end_as_interrupted();
    }
    // Whatever standard output still holds must reach it too (docs/design.md §8.3).
    if let Err(e) = std::io::Write::flush(&mut std::io::stdout()) {
        args::stdout_failed(&e);
    }
    match result {
        Ok(true) => {}
        Ok(false) => {
            args::note(format_args!("sweepfan: verification FAILED (see above)"));
            std::process::exit(1);
        }
        Err(e) => {
            // `--json -` (or `/dev/stdout`) that could not be written: as any other failed
            // write to standard output, exit 1 (quietly for a reader that went away).
            if let Some(io) = stdout_error(&e) {
                args::stdout_failed(io);
            }
            args::note(format_args!("sweepfan: error: {}", message(&e)));
            std::process::exit(2);
        }
    }
}

/// Whether the subcommand, as asked (`--backend cpu`), opens no GPU: the GPU options would be
/// ignored (issue 28's rule, which `scene` and `info` already follow).
fn runs_on_the_cpu_only(command: &Option<Command>) -> bool {
    use args::BackendChoice;
    use sweepfan::Backend;
    match command {
        Some(Command::Bench(a)) => a.backend == BackendChoice::Cpu,
        Some(Command::Reproduce {
            what: Reproduce::Broadphase(a),
        }) => a.backend == BackendChoice::Cpu,
        Some(Command::Verify(a)) => a.backend.0 == Backend::Cpu,
        Some(Command::Stress(a)) => a.backend.0 == Backend::Cpu,
        Some(Command::AutoBench(a)) => a.backend.0 == Backend::Cpu,
        Some(Command::Dist(a)) => a.backend.0 == Backend::Cpu,
        _ => false,
    }
}

/// The subcommand, with the GPU options every subcommand shares.
fn run(cli: Cli) -> anyhow::Result<bool> {
    let options = sweepfan::GpuOptions {
        adapter: cli.adapter.clone(),
        max_binding_bytes: cli.max_binding_bytes,
        ..Default::default()
    };
    // Refused where they would be ignored (issue 28's rule).
    match &cli.command {
        Some(Command::Reproduce {
            what: Reproduce::Sector(_),
        }) if cli.adapters.is_some() || cli.max_binding_bytes.is_some() => anyhow::bail!(
            "reproduce sector runs on one adapter (--adapter) with buffers of its own size: \
             --adapters and --max-binding-bytes are not used there"
        ),
        Some(Command::Dist(_)) if cli.adapters.is_some() => anyhow::bail!(
            "dist runs one device per rank (the r-th rank of a machine on its adapter r mod count, or --adapter): \
             --adapters is not used there; start more ranks instead"
        ),
        Some(Command::Scene(_))
            if cli.adapter.is_some()
                || cli.adapters.is_some()
                || cli.max_binding_bytes.is_some() =>
        {
            anyhow::bail!(
                "scene writes a file on the CPU: --adapter, --adapters and --max-binding-bytes \
                 are not used there"
            )
        }
        Some(Command::Bench(a))
            if a.resident && (cli.adapters.is_some() || cli.max_binding_bytes.is_some()) =>
        {
            anyhow::bail!(
                "bench --resident runs whole frames on one device: --adapters and \
                 --max-binding-bytes (frames in parts) are not used there"
            )
        }
        Some(Command::Bench(a))
            if cli.adapters.is_some()
                && (a.shape != args::Shape::Sphere
                    || (a.scene_file.is_none()
                        && a.scene.0 == sweepfan_scenes::SceneKind::Rotating)) =>
        {
            anyhow::bail!(
                "--adapters spreads sphere frames over several devices in parts; box, polygon \
                 and rotating frames run on one device (--adapter picks it): leave --adapters out"
            )
        }
        Some(Command::Verify(a)) if cli.adapters.is_some() && a.shape != args::Shape::Sphere => {
            anyhow::bail!(
                "--adapters spreads sphere frames over several devices in parts; box and polygon \
                 frames run on one device (--adapter picks it): leave --adapters out"
            )
        }
        Some(Command::Shaders(a))
            if !a.opens_a_device()
                && (cli.adapter.is_some()
                    || cli.adapters.is_some()
                    || cli.max_binding_bytes.is_some()) =>
        {
            anyhow::bail!(
                "shaders --out writes the modules without a device: --adapter, --adapters and \
                 --max-binding-bytes are used by --compile-report only"
            )
        }
        Some(Command::Shaders(_)) if cli.adapters.is_some() => anyhow::bail!(
            "shaders --compile-report builds on one device: --adapters is not used there \
             (--adapter picks the device)"
        ),
        Some(Command::SortBench(_)) if cli.adapters.is_some() => anyhow::bail!(
            "sort-bench times one device's sort: --adapters is not used there (--adapter picks \
             the device)"
        ),
        Some(Command::Info) if cli.adapters.is_some() => anyhow::bail!(
            "info lists every adapter; --adapters is not used there (--adapter picks the one \
             whose limits it prints)"
        ),
        _ => {}
    }
    if runs_on_the_cpu_only(&cli.command) {
        for (given, flag) in [
            (cli.adapter.is_some(), "--adapter"),
            (cli.adapters.is_some(), "--adapters"),
            (cli.max_binding_bytes.is_some(), "--max-binding-bytes"),
        ] {
            if given {
                anyhow::bail!(
                    "{flag}: --backend cpu opens no GPU, so {flag} would be ignored; add \
                     --backend gpu (or both), or leave {flag} out"
                );
            }
        }
    }
    let devices = cli
        .adapters
        .as_deref()
        .map(LazyGpu::parse_devices)
        .transpose()?;
    let mut gpu = LazyGpu::with_options(options.clone(), devices);
    let result = match cli.command {
        None => default::exec(&mut gpu),
        Some(Command::Reproduce {
            what: Reproduce::Broadphase(a),
        }) => reproduce::broadphase(a, &mut gpu),
        Some(Command::Reproduce {
            what: Reproduce::Sector(a),
        }) => reproduce::sector(a, cli.adapter.clone()),
        Some(Command::Bench(a)) => bench::exec(a, &mut gpu),
        Some(Command::AutoBench(a)) => auto_bench::exec(a, &mut gpu),
        Some(Command::Verify(a)) => verify::exec(a, &mut gpu),
        Some(Command::Stress(a)) => stress::exec(a, &mut gpu),
        Some(Command::Dist(a)) => dist::exec(a, cli.adapter.clone(), cli.max_binding_bytes),
        Some(Command::Scene(a)) => scene::exec(a),
        Some(Command::Info) => info::exec(&options),
        Some(Command::Selftest(a)) => selftest::exec(a, &mut gpu),
        Some(Command::Shaders(a)) => shaders::exec(a, &mut gpu),
        Some(Command::SortBench(a)) => sort_bench::exec(a, &mut gpu),
    };
    if sweepfan_cli::run::interrupted() {
        // A call stopped in its device wait leaves the work running; dropping the device would
        // wait for it (wgpu waits for an idle queue: minutes of a software adapter's brute
        // force, and the 2 s alarm ended the process without a word). The process ends now.
        std::mem::forget(gpu);
    }
    result
}

/// The command line, or the end of the process: `--help` and `--version` are written to
/// standard output with the write checked (exit 0, or 1 on a full device: clap's own `exit`
/// ignores a failed write and exits 0), usage errors to stderr with exit 2 as clap does.
fn parse() -> Cli {
    let mut cmd = args::negative_numbers_reach_parsers(Cli::command());
    let parsed = cmd
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|mut m| Cli::from_arg_matches_mut(&mut m).map_err(|e| e.format(&mut cmd)));
    match parsed {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => e.exit(),
        Err(e) => {
            let written = e
                .print()
                .and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
            match written {
                Ok(()) => std::process::exit(0),
                Err(io) => args::stdout_failed(&io),
            }
        }
    }
}

/// The failed write to standard output somewhere in `e`'s chain, if that is what `e` is.
fn stdout_error(e: &anyhow::Error) -> Option<&std::io::Error> {
    e.chain()
        .filter_map(|cause| cause.downcast_ref::<sweepfan::Error>())
        .find_map(sweepfan_cli::report::output::stdout_error)
}

/// The error and its causes, each once: the library's errors already include their source in
/// their own text (an OS error would otherwise be printed twice).
fn message(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    text
}
