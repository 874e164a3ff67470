//! The device counters (docs/design.md §6.9): every creation and host write under `src/` goes
//! through the context's counted methods (`gpu/context/creation.rs`), and the counts reach the
//! GPU rows.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `.device.create_X(` or `.queue.write_buffer(`, whitespace (line breaks) allowed around the
/// dots, outside the one file that wraps them.
#[test]
fn no_creation_or_host_write_bypasses_the_counters() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("python/src"), &mut files);
    let wrapped = [
        ("device", "create_bind_group"),
        ("device", "create_buffer"),
        ("device", "create_buffer_init"),
        ("device", "create_query_set"),
        ("device", "create_compute_pipeline"),
        ("queue", "write_buffer"),
    ];
    let mut found = Vec::new();
    for file in &files {
        if file.ends_with("gpu/context/creation.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let squeezed: String = text.split_whitespace().collect();
        for (owner, call) in wrapped {
            if squeezed.contains(&format!(".{owner}.{call}(")) {
                found.push(format!("{}: .{owner}.{call}(", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "uncounted: {found:#?}");
}

/// A frame's creations and traffic are counted: a GPU frame reads its pairs back and writes its
/// spheres, and a buffer made through the context counts once.
#[test]
fn the_context_counts_what_it_creates_and_moves() {
    use sweepfan::{BroadPhase, Method, Scene, SceneKind, SceneParams};
    let ctx = std::sync::Arc::new(sweepfan::gpu::GpuContext::new(&Default::default()).unwrap());
    let before = ctx.counts();
    let buffer = ctx
        .storage_buffer("counted", 64, wgpu::BufferUsages::empty())
        .unwrap();
    ctx.write_buffer(&buffer, 0, &[1; 16]);
    let after = ctx.counts().since(before);
    assert_eq!((after.buffers, after.bytes_from_host), (1, 16));
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(3000, 1));
    let mut bp = sweepfan::gpu::GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    let mut pairs = Vec::new();
    let before = ctx.counts();
    let stats = bp.find_pairs(&scene.spheres, Some(&mut pairs)).unwrap();
    let frame = ctx.counts().since(before);
    // 16 bytes a sphere up, and at least the pairs (8 bytes each) down.
    assert!(frame.bytes_from_host >= 16 * 3000, "{frame:?}");
    assert!(frame.bytes_to_host >= 8 * stats.pairs, "{frame:?}");
    assert!(frame.dispatches > 0 && frame.host_waits > 0, "{frame:?}");
}
