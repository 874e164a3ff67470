//! `sweepfan auto-bench`: auto's time and choice beside every method's, scene by scene
//! (`run::auto_bench`).

use crate::args::values;
use crate::args::{BackendArg, JsonOutput, progress_bar};
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use sweepfan::Backend;
use sweepfan_cli::report::auto::auto_table;
use sweepfan_cli::report::rows::{json_document, write_json_value};
use sweepfan_cli::run::auto_bench::{
    AutoBenchConfig, DEFAULT_SCENES, auto_bench, candidate_methods, generate, parse_scenes,
};
use sweepfan_cli::run::gpu::LazyGpu;
use sweepfan_scenes::Scene;

#[derive(Args)]
pub struct AutoBenchArgs {
    /// Generated scenes as KIND:N, comma-separated (default: the scenes auto is tuned on).
    #[arg(long, default_value = DEFAULT_SCENES)]
    pub scenes: String,
    /// CSV scene files (header x,y,z,r; `-`: standard input) measured after the generated
    /// scenes; repeatable.
    #[arg(long)]
    pub scene_file: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = BackendArg(Backend::Cpu))]
    pub backend: BackendArg,
    /// The methods auto is compared with (`all`: every method, brute force only up to 100,000
    /// objects unless named).
    #[arg(long, default_value = "all")]
    pub methods: String,
    /// Frames timed per method (after one untimed frame).
    #[arg(long, default_value_t = 5, value_parser = values::count)]
    pub frames: usize,
    /// Rounds: auto and every method timed once a round, each keeping its best round.
    #[arg(long, default_value_t = 2, value_parser = values::count)]
    pub rounds: usize,
    /// A method whose faster of two untimed frames takes longer than this (and than auto's
    /// frame) is not timed further: it cannot be the fastest.
    #[arg(long, default_value_t = 10.0, value_parser = values::seconds)]
    pub budget_s: f64,
    #[arg(long, default_value_t = 1, value_parser = values::seed)]
    pub seed: u64,
    #[command(flatten)]
    pub out: JsonOutput,
}

pub fn exec(a: AutoBenchArgs, gpu: &mut LazyGpu) -> Result<bool> {
    // The scene files are inputs: an output of the same name would overwrite them.
    let inputs: Vec<Option<&std::path::Path>> =
        a.scene_file.iter().map(|p| Some(p.as_path())).collect();
    a.out.check(&inputs)?;
    let methods = candidate_methods(&a.methods).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut scenes = generate(&parse_scenes(&a.scenes)?, a.seed);
    for f in &a.scene_file {
        scenes.push(Scene::from_csv(f)?);
    }
    if scenes.is_empty() {
        bail!("--scenes: no scene named (and no --scene-file)");
    }
    let cfg = AutoBenchConfig {
        scenes,
        backend: a.backend.0,
        methods,
        frames: a.frames,
        rounds: a.rounds,
        budget_s: a.budget_s,
        brute_force_named: a.methods.split(',').any(|m| m.trim() == "brute_force"),
    };
    let bar = progress_bar((cfg.scenes.len() * (1 + cfg.rounds * (cfg.methods.len() + 1))) as u64);
    let rows = auto_bench(&cfg, gpu, |what| {
        bar.set_message(what.to_string());
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    say!(
        a.out.stdout_taken(),
        "auto against every method, median ms per frame of {} frames, best of {} rounds, pairs \
         stored; ratio = auto / fastest",
        a.frames,
        a.rounds
    );
    say!(a.out.stdout_taken(), "{}", auto_table(&rows));
    if let Some(path) = &a.out.json {
        let doc = json_document(serde_json::json!({
            "rows": rows,
        }));
        write_json_value(path, &doc)?;
    }
    Ok(rows.iter().all(|r| r.verified != Some(false)))
}
