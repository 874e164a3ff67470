//! The distributed run's tables (`sweepfan dist`, docs/design.md §2.11): one row per frame,
//! one per rank.

use super::table::Table;
use crate::dist::DistReport;

/// Bytes as KiB with one decimal.
fn kib(bytes: f64) -> String {
    format!("{:.1}", bytes / 1024.0)
}

/// The frames, then the ranks (means over the frames after the first).
pub fn dist_tables(r: &DistReport) -> String {
    let mut frames = Table::new([
        "frame",
        "pairs",
        "tests",
        "found",
        "lost",
        "objects max",
        "objects mean",
        "ghosts",
        "migrated",
        "rebalanced",
        "KiB sent max",
        "KiB sent all",
        "ms",
    ]);
    for f in &r.frames {
        frames.row([
            f.frame.to_string(),
            f.pairs.to_string(),
            f.tests.to_string(),
            f.found.to_string(),
            f.lost.to_string(),
            f.objects_max.to_string(),
            format!("{:.0}", f.objects_mean),
            f.ghosts.to_string(),
            f.migrated.to_string(),
            if f.rebalanced { "yes" } else { "" }.to_string(),
            kib(f.bytes_sent_max as f64),
            kib(f.bytes_sent_total as f64),
            format!("{:.2}", f.seconds * 1e3),
        ]);
    }
    let mut ranks = Table::new([
        "rank",
        "device",
        "objects",
        "ghosts",
        "ghost KiB sent",
        "ghost KiB recv",
        "migration KiB",
        "event KiB",
        "ms move",
        "ms ghosts",
        "ms method",
        "ms events",
    ]);
    for p in &r.per_rank {
        ranks.row([
            p.rank.to_string(),
            p.device.clone(),
            p.objects.to_string(),
            p.ghosts.to_string(),
            kib(p.ghost_bytes_sent),
            kib(p.ghost_bytes_received),
            kib(p.migration_bytes_sent),
            kib(p.event_bytes_sent),
            format!("{:.2}", p.seconds_move * 1e3),
            format!("{:.2}", p.seconds_ghosts * 1e3),
            format!("{:.2}", p.seconds_find * 1e3),
            format!("{:.2}", p.seconds_events * 1e3),
        ]);
    }
    format!(
        "{}\nper rank (means over the frames after the first; bytes to other ranks):\n{}",
        frames.render(),
        ranks.render()
    )
}
