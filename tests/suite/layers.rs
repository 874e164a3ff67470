//! The layering of the library's `src/` and the tool's `cli/src/` (docs/design.md §8): each layer
//! names only the layers to its left.
//!
//! The library: `error` <- `geom` <- `broadphase` <- `events`, `partition`, `test_scenes` (the
//! unit tests' view of `sweepfan-scenes`) <- `cpu`, `gpu` <- `registry`. The tool, on the whole
//! library: `run` <- `experiments`, `dist` <- `report` <- `bin`. Siblings (`events`,
//! `partition` and `test_scenes`; `cpu` and `gpu`;
//! `experiments` and `dist`) never name each other. Every `crate::` path in a file counts, in
//! code, tests and doc links alike. (The library cannot name the tool: it does not depend on it.)

use crate::common::rust_files;
use std::path::Path;

/// Layer rank of a top-level module of the library; siblings share a rank.
fn library_rank(module: &str) -> Option<u32> {
    Some(match module {
        "error" => 0,
        "geom" => 1,
        "broadphase" => 2,
        "test_scenes" | "events" | "partition" => 3,
        "cpu" | "gpu" => 4,
        "registry" | "boxes" => 5,
        _ => return None,
    })
}

/// Layer rank of a top-level module of the tool (`cli/src`); siblings share a rank.
fn tool_rank(module: &str) -> Option<u32> {
    Some(match module {
        "run" => 0,
        "experiments" | "dist" => 1,
        "report" => 2,
        _ => return None,
    })
}

/// The top-level module a re-export at the crate root (`crate::Sphere`) comes from.
fn root_item(name: &str) -> Option<&'static str> {
    Some(match name {
        "Error" | "Result" => "error",
        "Sphere" | "validate_spheres" | "Polygon" | "PolygonFault" => "geom",
        "Backend" | "BroadPhase" | "Method" | "Pair" | "Stats" | "canonicalize" | "FrameEvents"
        | "Limits" | "MemoryBudget" | "CancelToken" | "SphereFrame" | "NarrowPhase"
        | "ShapeOverlaps" | "Id" | "IdPair" => "broadphase",
        "EventTracker" => "events",
        _ => return None,
    })
}

/// Every `crate::NAME` in `text`, with its line number.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (line, l) in text.lines().enumerate() {
        let mut rest = l;
        while let Some(k) = rest.find("crate::") {
            let before = rest[..k].chars().last();
            let tail = &rest[k + "crate::".len()..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && !name.is_empty() {
                out.push((line + 1, name));
            }
            rest = tail;
        }
    }
    out
}

fn violations(src: &Path, rank: fn(&str) -> Option<u32>) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut bad = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let own = first.trim_end_matches(".rs").to_string();
        let Some(own_rank) = rank(&own) else {
            continue; // lib.rs (the root) and bin/ (which uses `sweepfan_cli::`, not `crate::`)
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, name) in crate_paths(&text) {
            let target = root_item(&name).map(str::to_string).unwrap_or(name);
            let Some(target_rank) = rank(&target) else {
                bad.push(format!(
                    "{}:{line}: unknown module crate::{target}",
                    rel.display()
                ));
                continue;
            };
            if target != own && target_rank >= own_rank {
                bad.push(format!(
                    "{}:{line}: {own} names crate::{target}, which is not to its left",
                    rel.display()
                ));
            }
        }
    }
    bad
}

#[test]
fn no_module_names_a_layer_to_its_right() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bad = violations(&root.join("src"), library_rank);
    bad.extend(violations(&root.join("cli/src"), tool_rank));
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn the_check_sees_a_violation() {
    let dir = std::env::temp_dir().join(format!("sweepfan-layers-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("geom")).unwrap();
    std::fs::write(
        dir.join("geom/a.rs"),
        "use crate::cpu::sat::obb_overlaps;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("gpu.rs"),
        "/// [`crate::cpu::Grid`]\nuse crate::Sphere;\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("run")).unwrap();
    std::fs::write(dir.join("run/b.rs"), "use crate::report::table;\n").unwrap();
    let bad = violations(&dir, library_rank);
    let tool_bad = violations(&dir, tool_rank);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(tool_bad.len(), 1, "{tool_bad:?}");
    assert!(tool_bad[0].contains("run names crate::report"));
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[0].contains("geom names crate::cpu") || bad[1].contains("geom names crate::cpu"));
    assert!(bad.iter().any(|b| b.contains("gpu names crate::cpu")));
}
