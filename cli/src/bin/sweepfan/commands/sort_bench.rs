//! `sweepfan sort-bench`: the GPU radix sort timed per size (`run::sort_bench`).

use crate::args::JsonOutput;
use crate::args::values;
use anyhow::{Result, bail};
use clap::Args;
use sweepfan_cli::report::bench::sort_table;
use sweepfan_cli::report::rows::{json_document, write_json_value};
use sweepfan_cli::run::gpu::LazyGpu;
use sweepfan_cli::run::sort_bench::{SortBenchConfig, run_sort_bench};

#[derive(Args)]
pub struct SortBenchArgs {
    /// Pair counts, comma-separated; a suffix K or M multiplies by 2^10 or 2^20.
    #[arg(long, default_value = "1M,4M,16M")]
    pub sizes: String,
    /// Timed repetitions per size and configuration (after one warm-up); the median is shown.
    #[arg(long, default_value_t = 10, value_parser = values::count)]
    pub reps: usize,
    #[arg(long, default_value_t = 1, value_parser = values::seed)]
    pub seed: u64,
    /// Random keys below 2^K (1..=32), sorted on all 32 bits: below 2^24 the tiled sort skips
    /// the top byte's pass on the device.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub key_bits: u32,
    /// Device bandwidth in GB/s for the model's times (default: the adapter's where known:
    /// H100, H200).
    #[arg(long, value_parser = bandwidth)]
    pub bandwidth: Option<f64>,
    /// Configurations, comma-separated: plan (what the library runs), portable, subgroup;
    /// default every one the adapter runs.
    #[arg(long, value_delimiter = ',')]
    pub configs: Vec<String>,
    #[command(flatten)]
    pub out: JsonOutput,
}

/// A bandwidth in GB/s: finite and positive.
fn bandwidth(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "'{}' is not a bandwidth in GB/s (a positive number such as 3350)",
            sweepfan::error::shown(s)
        )),
    }
}

/// "4M" -> 4 x 2^20; "1000" -> 1000.
fn parse_size(s: &str) -> Result<usize> {
    let s = s.trim();
    let (digits, unit) = match s.char_indices().last() {
        Some((i, 'K' | 'k')) => (&s[..i], 1usize << 10),
        Some((i, 'M' | 'm')) => (&s[..i], 1 << 20),
        _ => (s, 1),
    };
    let why = match digits.parse::<usize>().map(|d| d.checked_mul(unit)) {
        Ok(Some(n)) if n >= 2 => return Ok(n),
        Ok(Some(_)) => "is below 2",
        Ok(None) => "is too large",
        // Digits past usize: too large, not malformed.
        Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            "is too large"
        }
        Err(_) if digits.starts_with('-') => "is negative",
        // `5G`: digits, then letters.
        Err(_)
            if digits.bytes().next().is_some_and(|b| b.is_ascii_digit())
                && digits
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .bytes()
                    .all(|b| b.is_ascii_alphabetic()) =>
        {
            "has a suffix other than K or M"
        }
        // `1.5M`, `1e6`, `1_000`.
        Err(_) if digits.bytes().next().is_some_and(|b| b.is_ascii_digit()) => {
            "is not a whole number"
        }
        Err(_) => "is not a number",
    };
    bail!(
        "--sizes: '{}' {why}: a pair count of at least 2 (such as 1000, 64K or 16M)",
        sweepfan::error::shown(s)
    )
}

pub fn exec(a: SortBenchArgs, gpu: &mut LazyGpu) -> Result<bool> {
    a.out.check(&[])?;
    let sizes = a
        .sizes
        .split(',')
        .map(parse_size)
        .collect::<Result<Vec<_>>>()?;
    let ctx = gpu.get()?;
    let cfg = SortBenchConfig {
        sizes,
        reps: a.reps,
        seed: a.seed,
        key_bits: a.key_bits,
        bandwidth: a.bandwidth,
        configs: a.configs,
    };
    let (rows, note) = run_sort_bench(&ctx, &cfg)?;
    say!(
        a.out.stdout_taken(),
        "radix sort of (u32 key, u32 value) pairs, random keys below 2^{}, sorted on 32 bits, \
         on {}; median of {} after one warm-up",
        a.key_bits,
        gpu.device(),
        a.reps
    );
    say!(a.out.stdout_taken(), "{}", sort_table(&rows));
    if !note.is_empty() {
        say!(a.out.stdout_taken(), "{note}");
    }
    if let Some(path) = &a.out.json {
        let doc = json_document(serde_json::json!({
            "note": note,
            "rows": rows,
        }));
        write_json_value(path, &doc)?;
        if !sweepfan_cli::report::output::is_stdout(path) {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(rows.iter().all(|r| r.verified))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_with_suffixes() {
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert_eq!(parse_size("64K").unwrap(), 65_536);
        assert_eq!(parse_size(" 16M").unwrap(), 16 << 20);
        for (bad, why) in [
            ("", "is not a number"),
            ("M", "is not a number"),
            ("1", "is below 2"),
            ("x", "is not a number"),
            ("-3", "is negative"),
            ("99999999999999999999", "is too large"),
            ("99999999999999999999M", "is too large"),
            ("17592186044416M", "is too large"),
            ("5G", "has a suffix other than K or M"),
            ("1.5M", "is not a whole number"),
            ("1e6", "is not a whole number"),
            ("1_000", "is not a whole number"),
        ] {
            let e = parse_size(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("'{bad}' {why}:")), "{bad}: {e}");
        }
    }
}
