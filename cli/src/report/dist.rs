//! The distributed run's tables (`sweepfan dist`, docs/design.md §2.11): one row per frame,
//! one per rank.

use super::table::Table;
use crate::dist::{DistReport, FrameRow, RankRow};

/// Bytes as KiB with one decimal.
fn kib(bytes: f64) -> String {
    format!("{:.1}", bytes / 1024.0)
}

/// Seconds as milliseconds with two decimals.
fn millis(seconds: f64) -> String {
    format!("{:.2}", seconds * 1e3)
}

/// A column: its header and its cell for an item.
type Column<T> = (&'static str, fn(&T) -> String);

/// A table of `columns` with a row per item, rendered.
fn table<T>(columns: &[Column<T>], items: &[T]) -> String {
    let mut t = Table::new(columns.iter().map(|c| c.0));
    for item in items {
        t.row(columns.iter().map(|c| (c.1)(item)));
    }
    t.render()
}

/// The frames, then the ranks (means over the frames after the first).
pub fn dist_tables(r: &DistReport) -> String {
    let frames: [Column<FrameRow>; 13] = [
        ("frame", |f| f.frame.to_string()),
        ("pairs", |f| f.pairs.to_string()),
        ("tests", |f| f.tests.to_string()),
        ("found", |f| f.found.to_string()),
        ("lost", |f| f.lost.to_string()),
        ("objects max", |f| f.objects_max.to_string()),
        ("objects mean", |f| format!("{:.0}", f.objects_mean)),
        ("ghosts", |f| f.ghosts.to_string()),
        ("migrated", |f| f.migrated.to_string()),
        ("rebalanced", |f| {
            if f.rebalanced { "yes" } else { "" }.to_string()
        }),
        ("KiB sent max", |f| kib(f.bytes_sent_max as f64)),
        ("KiB sent all", |f| kib(f.bytes_sent_total as f64)),
        ("ms", |f| millis(f.seconds)),
    ];
    let ranks: [Column<RankRow>; 12] = [
        ("rank", |p| p.rank.to_string()),
        ("device", |p| p.device.clone()),
        ("objects", |p| p.objects.to_string()),
        ("ghosts", |p| p.ghosts.to_string()),
        ("ghost KiB sent", |p| kib(p.ghost_bytes_sent)),
        ("ghost KiB recv", |p| kib(p.ghost_bytes_received)),
        ("migration KiB", |p| kib(p.migration_bytes_sent)),
        ("event KiB", |p| kib(p.event_bytes_sent)),
        ("ms move", |p| millis(p.seconds_move)),
        ("ms ghosts", |p| millis(p.seconds_ghosts)),
        ("ms method", |p| millis(p.seconds_find)),
        ("ms events", |p| millis(p.seconds_events)),
    ];
    format!(
        "{}\nper rank (means over the frames after the first; bytes to other ranks):\n{}",
        table(&frames, &r.frames),
        table(&ranks, &r.per_rank)
    )
}
