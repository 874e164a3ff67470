//! Prints the sector speed tables (thesis tables 3.2-3.6) as JSON, ours beside the thesis's.
//! Usage: cargo run --release --example sector_speed -- [runs] [tests_per_run]

use sweepfan_cli::experiments::sector::speed::{SpeedConfig, run_speed_tables};

fn main() -> sweepfan::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut cfg = SpeedConfig::default();
    let parse = |s: String| {
        s.parse::<usize>()
            .map_err(|e| sweepfan::Error::Config(format!("bad number {s:?}: {e}")))
    };
    if let Some(runs) = args.next() {
        cfg.runs = parse(runs)?;
    }
    if let Some(n) = args.next() {
        cfg.tests_per_run = parse(n)?;
    }
    let report = run_speed_tables(&cfg)?;
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| sweepfan::Error::Config(format!("serialising the report: {e}")))?;
    println!("{json}");
    Ok(())
}
