//! The tables `bench`, `stress` and the default run print.

use crate::report::table::{Table, count, ms};
use crate::run::row::Row;
use crate::run::row::device_lines;
use sweepfan::broadphase::Backend;

/// One line per (method, backend); with frame events, their totals too.
pub fn rows_table(rows: &[Row]) -> String {
    let events = rows.iter().any(|r| r.events.is_some());
    let mut header = vec![
        "method",
        "backend",
        "n",
        "tests/frame",
        "pairs/frame",
        "ms/frame",
        "vs brute",
        "verified",
    ];
    if events {
        header.extend(["found", "lost"]);
    }
    let at = header.len();
    with_parts(rows, header, at, |r| {
        let mut cells = vec![
            r.method.clone(),
            r.backend.as_str().to_string(),
            r.n.to_string(),
            count(r.tests_per_frame),
            count(r.pairs_per_frame),
            ms(r.ms_per_frame),
            r.speedup_vs_brute_force
                .map(|s| format!("{s:.1}x"))
                .unwrap_or_else(|| "-".into()),
            match r.verified {
                Some(true) => "yes".into(),
                Some(false) => "NO".into(),
                None => "-".into(),
            },
        ];
        if events {
            let (found, lost) = r.events.as_ref().map_or(("-".into(), "-".into()), |e| {
                (count(e.found as f64), count(e.lost as f64))
            });
            cells.extend([found, lost]);
        }
        cells
    }) + &device_lines(rows.iter().map(|r| (r.backend.as_str(), r.device.as_str())))
        + &choice_lines(rows)
        + &host_lines(rows)
        + &traffic_lines(rows)
        + &creation_lines(rows)
}

/// For `auto` rows: what it chose and why, a line each (`auto [cpu]: grid (uniform radii, 0.13
/// spheres a cell, 0.3 tests an object)`); empty when no row ran `auto`.
pub fn choice_lines(rows: &[Row]) -> String {
    rows.iter()
        .filter_map(|r| {
            let c = r.chosen.as_ref()?;
            Some(format!("{} [{}]: {c}\n", r.method, r.backend.as_str()))
        })
        .collect()
}

/// The host steps of a GPU frame in the order they run (docs/design.md §9.16), as a bench
/// row's `host_ms` names them.
pub const HOST_STEPS: [&str; 8] = [
    "check",
    "encode",
    "upload",
    "submit",
    "wait",
    "read-back",
    "finish",
    "other",
];

/// For GPU rows: the host side of a frame by step, medians (`host_ms`); empty when no row has
/// them.
pub fn host_lines(rows: &[Row]) -> String {
    under_heading(
        "\nhost side of a GPU frame, median ms by step (the device works during `wait`):\n",
        rows.iter().filter_map(|r| {
            let host = r.host_ms.as_ref()?;
            let known = HOST_STEPS
                .iter()
                .filter_map(|&k| host.get(k).map(|v| (k, *v)));
            let rest = host
                .iter()
                .filter(|(k, _)| !HOST_STEPS.contains(&k.as_str()))
                .map(|(k, v)| (k.as_str(), *v));
            let steps: Vec<String> = known
                .chain(rest)
                .map(|(k, v)| format!("{k} {}", ms(v)))
                .collect();
            Some(format!(
                "  {}: {} (frame {})\n",
                label(r),
                steps.join(", "),
                ms(r.ms_per_frame)
            ))
        }),
    )
}

/// A row in the lines under a table: `method [backend] n = N`.
fn label(r: &Row) -> String {
    format!("{} [{}] n = {}", r.method, r.backend.as_str(), r.n)
}

/// `heading`, then `lines` (each ending in a newline); empty when there are no lines.
fn under_heading(heading: &str, lines: impl Iterator<Item = String>) -> String {
    let lines: String = lines.collect();
    if lines.is_empty() {
        lines
    } else {
        format!("{heading}{lines}")
    }
}

/// For GPU rows: what each frame created on the device and moved to and from the host, once
/// sizes are stable (docs/design.md §9.16); empty when no row counts them.
pub fn creation_lines(rows: &[Row]) -> String {
    // With two frames or fewer there is no steady frame: the counts are the last frame's, which
    // still builds what the first ones do.
    let fewest = rows
        .iter()
        .filter(|r| r.steady.is_some())
        .map(|r| r.frames)
        .min();
    let heading = match fewest {
        Some(frames) if frames <= 2 => {
            "per GPU frame, the last of too few to be steady (3 or more give the steady state)"
        }
        _ => "per GPU frame after the first two (four in flight)",
    };
    steady_lines(heading, rows.iter().map(|r| (label(r), r.steady)))
}

/// Under `heading`, a line per labelled row that has counts.
fn steady_lines(
    heading: &str,
    rows: impl Iterator<Item = (String, Option<crate::run::row::SteadyCounts>)>,
) -> String {
    under_heading(
        &format!("\n{heading} (counts, any device): objects created; bytes to and from the host\n"),
        rows.filter_map(|(label, steady)| {
            let s = steady?;
            let c = s.created_per_frame;
            Some(format!(
                "  {label}: {} bind groups, {} buffers, {} query sets, {} pipelines; {:.1} KiB to \
                 host, {:.1} KiB from host; {} compute passes\n",
                c.bind_groups,
                c.buffers,
                c.query_sets,
                c.pipelines,
                s.bytes_to_host_per_frame / 1024.0,
                s.bytes_from_host_per_frame / 1024.0,
                s.compute_passes_per_frame
            ))
        }),
    )
}

/// For GPU rows with a device-traffic model (docs/design.md §9.9): one line each, its total and
/// its stages in bytes per object, beside the floor; empty when no row has one.
pub fn traffic_lines(rows: &[Row]) -> String {
    under_heading(
        &format!(
            "\ndevice traffic model, bytes per object per frame (a prediction, not a \
             measurement; floor {:.0}: each sphere read once):\n",
            sweepfan::gpu::instrument::FLOOR_BYTES_PER_OBJECT
        ),
        rows.iter().filter_map(|r| {
            let (Some(total), Some(stages)) = (r.device_bytes_per_object, &r.device_traffic) else {
                return None;
            };
            let parts: Vec<String> = stages
                .iter()
                .map(|s| format!("{} {:.1}", s.stage, s.bytes_per_object))
                .collect();
            Some(format!(
                "  {}: {total:.0} ({})\n",
                label(r),
                parts.join(", ")
            ))
        }),
    )
}

/// One line per method, CPU and GPU side by side (the default run).
pub fn wide_table(rows: &[Row]) -> String {
    let has_gpu = rows.iter().any(|r| r.backend == Backend::Gpu);
    let mut header = vec![
        "method",
        "tests/frame",
        "pairs/frame",
        "cpu ms",
        "cpu vs brute",
    ];
    if has_gpu {
        header.extend(["gpu ms", "gpu vs brute", "gpu tests = cpu"]);
    }
    header.push("verified");
    let mut t = Table::new(header);
    let speed = |r: Option<&Row>| {
        r.and_then(|r| r.speedup_vs_brute_force)
            .map_or("-".to_string(), |s| format!("{s:.1}x"))
    };
    let mut methods: Vec<&str> = rows.iter().map(|r| r.method.as_str()).collect();
    methods.dedup();
    methods.sort_by_key(|m| rows.iter().position(|r| r.method == *m));
    methods.dedup();
    for m in methods {
        let cpu = rows
            .iter()
            .find(|r| r.method == m && r.backend == Backend::Cpu);
        let gpu = rows
            .iter()
            .find(|r| r.method == m && r.backend == Backend::Gpu);
        let first = cpu.or(gpu).expect("a row per listed method");
        let mut cells = vec![
            m.to_string(),
            count(first.tests_per_frame),
            count(first.pairs_per_frame),
            cpu.map_or("-".into(), |r| ms(r.ms_per_frame)),
            speed(cpu),
        ];
        if has_gpu {
            cells.push(gpu.map_or("-".into(), |r| ms(r.ms_per_frame)));
            cells.push(speed(gpu));
            cells.push(match (cpu, gpu) {
                (Some(c), Some(g)) if c.tests_per_frame == g.tests_per_frame => "yes".into(),
                (Some(_), Some(_)) => "DIFFERS".into(),
                _ => "-".into(),
            });
        }
        let verified = [cpu, gpu]
            .iter()
            .flatten()
            .all(|r| r.verified != Some(false));
        cells.push(if verified { "yes".into() } else { "NO".into() });
        t.row(cells);
    }
    t.render()
}

/// A frame's parts and devices, for a table: "98 on 2 dev" (docs/design.md §2.10); "-" for a
/// frame run whole.
fn parts_cell(r: &Row) -> String {
    r.parts
        .map_or("-".into(), |p| format!("{} on {} dev", p.parts, p.devices))
}

/// The table of `header` and each row's `cells`, rendered, with a parts column (see
/// [`parts_cell`]) at column `at` when any row ran in parts.
fn with_parts(
    rows: &[Row],
    mut header: Vec<&str>,
    at: usize,
    cells: impl Fn(&Row) -> Vec<String>,
) -> String {
    let parts = rows.iter().any(|r| r.parts.is_some());
    if parts {
        header.insert(at, "parts");
    }
    let mut t = Table::new(header);
    for r in rows {
        let mut row = cells(r);
        if parts {
            row.insert(at, parts_cell(r));
        }
        t.row(row);
    }
    t.render()
}

/// One line per stress step (a parts column when a step ran in parts).
pub fn stress_table(rows: &[Row]) -> String {
    let header = vec![
        "n",
        "pairs/frame",
        "ms/frame",
        "verified",
        "resident B/obj",
        "host B/obj model",
        "stages (median ms)",
    ];
    with_parts(rows, header, 4, |r| {
        vec![
            r.n.to_string(),
            count(r.pairs_per_frame),
            ms(r.ms_per_frame),
            if r.verified == Some(true) {
                "yes".into()
            } else {
                "NO".into()
            },
            r.gpu_bytes_per_object
                .map_or("-".into(), |b| format!("{b:.1}")),
            r.host_bytes_per_object
                .map_or("-".into(), |b| format!("{b:.1}")),
            r.stage_ms
                .iter()
                .map(|(k, v)| format!("{k} {}", ms(*v)))
                .collect::<Vec<_>>()
                .join(", "),
        ]
    }) + &device_lines(rows.iter().map(|r| (r.backend.as_str(), r.device.as_str())))
        + &choice_lines(rows)
        + &host_lines(rows)
        + &traffic_lines(rows)
        + &creation_lines(rows)
}

/// `sort-bench`: one line per (size, configuration).
pub fn sort_table(rows: &[crate::run::sort_bench::SortRow]) -> String {
    let mut t = Table::new([
        "n",
        "config",
        "variant",
        "rounds",
        "ms",
        "G pairs/s",
        "clock",
        "passes",
        "dispatches",
        "model B/pair",
        "model ms",
        "sectors/key",
        "verified",
    ]);
    for r in rows {
        t.row([
            count(r.n as f64),
            r.config.clone(),
            r.variant.clone(),
            r.rounds.to_string(),
            format!("{:.3}", r.ms),
            format!("{:.3}", r.gpairs_per_s),
            r.clock.to_string(),
            r.passes_run.to_string(),
            r.dispatches.to_string(),
            format!("{:.1}", r.model_bytes_per_pair),
            r.model_ms.map_or("-".into(), |m| format!("{m:.3}")),
            format!("{:.3}", r.write_sectors_per_key),
            if r.verified {
                "yes".into()
            } else {
                "NO".into()
            },
        ]);
    }
    t.render()
        + &steady_lines(
            "per sort after the first two timed",
            rows.iter()
                .map(|r| (format!("n = {} {}", r.n, r.config), r.steady)),
        )
}
