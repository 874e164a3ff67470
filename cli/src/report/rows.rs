//! Writing result rows ([`Row`]) as JSON and CSV.
//!
//! Stable keys (do not rename): `n`, `method`, `backend`, `tests_per_frame` (mean),
//! `pairs_per_frame` (mean), `ms_per_frame` (median). Everything else is extra.

use crate::run::row::{Machine, Row};
use serde::Serialize;
use std::path::Path;
use sweepfan::broadphase::Pair;
use sweepfan::error::{Error, Result};

/// The document written by `--json`.
#[derive(Serialize)]
pub struct Document<'a> {
    pub tool: &'static str,
    pub version: &'static str,
    pub command: String,
    pub machine: Machine,
    pub rows: &'a [Row],
}

/// Writes `{ tool, version, command, machine, rows }` as pretty JSON.
pub fn write_json(path: &Path, rows: &[Row]) -> Result<()> {
    let doc = Document {
        tool: "sweepfan",
        version: env!("CARGO_PKG_VERSION"),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        machine: Machine::this(),
        rows,
    };
    write_json_value(path, &doc)
}

/// Writes any serialisable value as pretty JSON.
pub fn write_json_value<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Config(format!("JSON encoding: {e}")))?;
    super::output::write_bytes(path, (text + "\n").as_bytes())
}

/// Writes one CSV line per row; stages as `stage=ms` joined by `;`, then the reference the row
/// was checked against, its shape (`sphere` unless another), auto's chosen method, the events'
/// found and lost totals and the parts run, each empty where the row has none.
pub fn write_csv(path: &Path, rows: &[Row]) -> Result<()> {
    #[derive(Serialize)]
    struct Flat<'a> {
        scene: &'a str,
        n: usize,
        method: &'a str,
        backend: &'static str,
        device: &'a str,
        frames: usize,
        tests_per_frame: f64,
        pairs_per_frame: f64,
        ms_per_frame: f64,
        ms_per_frame_min: f64,
        speedup_vs_brute_force: Option<f64>,
        verified: Option<bool>,
        gpu_bytes_per_object: Option<f64>,
        stage_ms: String,
        // After the first columns (kept in place): what tells rows of other shapes, auto's
        // choice, events and parts apart, empty where a row has none.
        verified_against: Option<&'a str>,
        shape: &'a str,
        chosen: Option<String>,
        found: Option<u64>,
        lost: Option<u64>,
        parts: Option<u64>,
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        let stage_ms = r
            .stage_ms
            .iter()
            .map(|(k, v)| format!("{k}={v:.4}"))
            .collect::<Vec<_>>()
            .join(";");
        w.serialize(Flat {
            scene: &r.scene,
            n: r.n,
            method: &r.method,
            backend: r.backend.as_str(),
            device: &r.device,
            frames: r.frames,
            tests_per_frame: r.tests_per_frame,
            pairs_per_frame: r.pairs_per_frame,
            ms_per_frame: r.ms_per_frame,
            ms_per_frame_min: r.ms_per_frame_min,
            speedup_vs_brute_force: r.speedup_vs_brute_force,
            verified: r.verified,
            gpu_bytes_per_object: r.gpu_bytes_per_object,
            stage_ms,
            verified_against: r.verified_against.as_deref(),
            shape: r.shape.as_deref().unwrap_or("sphere"),
            chosen: r.chosen.as_ref().map(|c| c.method.to_string()),
            found: r.events.as_ref().map(|e| e.found),
            lost: r.events.as_ref().map(|e| e.lost),
            parts: r.parts.as_ref().map(|p| p.parts),
        })
        .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
    super::output::write_bytes(path, &bytes)
}

/// A `--json` document: the tool, its version and the command line, then `fields`' keys (an
/// object).
pub fn json_document(fields: serde_json::Value) -> serde_json::Value {
    let mut doc = serde_json::json!({
        "tool": "sweepfan",
        "version": env!("CARGO_PKG_VERSION"),
        "command": std::env::args().collect::<Vec<_>>().join(" "),
    });
    if let (serde_json::Value::Object(fields), Some(obj)) = (fields, doc.as_object_mut()) {
        obj.extend(fields);
    }
    doc
}

/// Writes the rows as `--json` (with the command line, the machine and `extra`'s keys) and
/// `--csv`, each when asked for.
pub fn write_outputs(
    json: Option<&Path>,
    csv: Option<&Path>,
    rows: &[Row],
    extra: Option<serde_json::Value>,
) -> Result<()> {
    if let Some(path) = json {
        let mut doc = json_document(serde_json::json!({
            "machine": Machine::this(),
            "rows": rows,
        }));
        if let (Some(serde_json::Value::Object(extra)), Some(obj)) = (extra, doc.as_object_mut()) {
            obj.extend(extra);
        }
        write_json_value(path, &doc)?;
        if !super::output::is_stdout(path) {
            eprintln!("wrote {}", path.display());
        }
    }
    if let Some(path) = csv {
        write_csv(path, rows)?;
        if !super::output::is_stdout(path) {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// Writes contacts beside their pairs as CSV (docs/design.md §4.8): `i,j,nx,ny,nz,depth,count`,
/// then per point `pKx,pKy,pKz,dK` for K = 0..3, empty past `count`.
pub fn write_contacts_csv(
    path: &Path,
    pairs: &[Pair],
    contacts: &[sweepfan::Contact],
) -> Result<()> {
    super::output::write_with(path, |w| {
        write!(w, "i,j,nx,ny,nz,depth,count")?;
        for k in 0..sweepfan::geom::contact::MAX_CONTACT_POINTS {
            write!(w, ",p{k}x,p{k}y,p{k}z,d{k}")?;
        }
        writeln!(w)?;
        for (p, c) in pairs.iter().zip(contacts) {
            let n = c.normal;
            write!(
                w,
                "{},{},{},{},{},{},{}",
                p[0], p[1], n.x, n.y, n.z, c.depth, c.count
            )?;
            for k in 0..sweepfan::geom::contact::MAX_CONTACT_POINTS {
                if k < c.count as usize {
                    let q = c.points[k];
                    write!(w, ",{},{},{},{}", q.x, q.y, q.z, c.depths[k])?;
                } else {
                    write!(w, ",,,,")?;
                }
            }
            writeln!(w)?;
        }
        Ok(())
    })
}

/// Writes pairs as CSV `i,j` (the order given).
pub fn write_pairs_csv(path: &Path, pairs: &[Pair]) -> Result<()> {
    super::output::write_with(path, |w| {
        writeln!(w, "i,j")?;
        for p in pairs {
            writeln!(w, "{},{}", p[0], p[1])?;
        }
        Ok(())
    })
}
