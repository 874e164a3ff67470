//! WGSL composition. Each GPU stage has one source file under `shaders/` (the same path as its
//! Rust file under `src/gpu/`); shared pieces are files of their own, named where they are used
//! by two directives that are WGSL comments, so every file still parses on its own:
//!
//! * `// #import PATH`: the text of `shaders/PATH` in place of the line, once per module (a
//!   second import of the same file, directly or through another file, adds nothing);
//! * `// #unroll N STATEMENT`: N copies of STATEMENT, `{k}` replaced by 0, 1, ... N - 1 (the
//!   candidate walks visit N positions per loop iteration, docs/design.md §6.1).
//!
//! `// #import slots.wgsl` names no file either: it is the counter slots' constants, generated
//! from `gpu::slots` so that Rust and WGSL name each slot once. Nor do the imports of
//! `UNIFORM_IMPORTS` (`boxes/sat_params.wgsl`, ...; src/gpu/shader/uniform.rs): each is a
//! stage's uniform struct, declared once in Rust with `uniform_struct!` and imported where the
//! shader would declare it.
//!
//! `// #import math.wgsl` names no file of its own: it is `math_exact.wgsl` (the builtins) or,
//! with `SWEEPFAN_SLOPPY_MATH=1`, `math_sloppy.wgsl` (the same functions off by up to 2 ULP or
//! fused, as real GPUs may compute them; [`MathMode`], docs/design.md §9.11).
//!
//! Tried and not taken: WESL (the WGSL-with-modules compiler) composes at build time with real
//! module paths, but it adds a build script and a parser to every build of a crate whose
//! shaders need only inclusion and repetition; the two directives here do exactly that and keep
//! each file valid WGSL for naga and Tint.

use crate::error::{Error, Result};

mod uniform;
use uniform::UNIFORM_IMPORTS;
pub(crate) use uniform::uniform_struct;

/// Every WGSL file, by its path under `shaders/`, with its text.
macro_rules! wgsl_files {
    ($($(#[$attr:meta])* $path:literal),+ $(,)?) => {
        &[$($(#[$attr])* ($path, include_str!(concat!("../../shaders/", $path)))),+]
    };
}

/// Every WGSL file, by its path under `shaders/`.
const FILES: &[(&str, &str)] = wgsl_files![
    "dispatch.wgsl",
    "dispatch_grid.wgsl",
    "frame.wgsl",
    "append.wgsl",
    "append_subgroup.wgsl",
    "events.wgsl",
    "ordered_float.wgsl",
    "hash.wgsl",
    "held_pairs.wgsl",
    "math_exact.wgsl",
    "math_sloppy.wgsl",
    "sort/pass_params.wgsl",
    "sort/scan.wgsl",
    "sort/ballot.wgsl",
    "sort/radix_sort.wgsl",
    "sort/radix_sort_subgroup.wgsl",
    "sort/radix_tiles.wgsl",
    "sort/keys.wgsl",
    "spheres/cascade.wgsl",
    "spheres/touch_exact.wgsl",
    "spheres/min_axis.wgsl",
    "spheres/pairs.wgsl",
    "spheres/walk_flush.wgsl",
    "spheres/walk_flush_subgroup.wgsl",
    "spheres/world_runs.wgsl",
    "spheres/dispatch_args.wgsl",
    "spheres/motion.wgsl",
    "boxes/sat.wgsl",
    "boxes/aabb_sap.wgsl",
    "contacts.wgsl",
    "sector/sector_sphere.wgsl",
    "sector/rotating.wgsl",
    // The paper experiments' kernels (feature `paper`).
    #[cfg(feature = "paper")]
    "sector/accuracy.wgsl",
    #[cfg(feature = "paper")]
    "sector/grid_rows.wgsl",
    #[cfg(feature = "paper")]
    "sector/free_accuracy.wgsl",
];

const IMPORT: &str = "// #import ";
const UNROLL: &str = "// #unroll ";
/// The import that names no file: [`MathMode::file`] chooses it.
const MATH_IMPORT: &str = "math.wgsl";
/// The import generated from Rust: the counter slots (`gpu::slots`).
const SLOTS_IMPORT: &str = "slots.wgsl";
/// The variable [`GpuOptions::from_vars`](crate::gpu::GpuOptions::from_vars) reads the math
/// mode from: [`MathMode::Sloppy`] when set to anything but empty or `0`.
pub const SLOPPY_MATH_ENV: &str = "SWEEPFAN_SLOPPY_MATH";

/// How the float operations whose rounding WGSL leaves to the device (`sqrt`, `inverseSqrt`,
/// `length`, f32 division and remainder, the touch test's dot product) are composed
/// (docs/design.md §9.11). Kernels call them as `m_sqrt`, `m_div`, ... from `math.wgsl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MathMode {
    /// The builtins: exact and unfused on lavapipe, as on the CPU.
    #[default]
    Exact,
    /// Off by up to 2 ULP (a hash of the operands' bits picks how far) or fused, as real GPUs are
    /// allowed to compute them: lavapipe runs that show what a real device's rounding changes.
    Sloppy,
}

impl MathMode {
    /// The mode a value of [`SLOPPY_MATH_ENV`] asks for: [`MathMode::Sloppy`] for anything but
    /// empty or `0`.
    pub fn from_switch(value: &str) -> MathMode {
        if value.is_empty() || value == "0" {
            MathMode::Exact
        } else {
            MathMode::Sloppy
        }
    }

    /// The file composed where a shader imports `math.wgsl`.
    fn file(self) -> &'static str {
        match self {
            MathMode::Exact => "math_exact.wgsl",
            MathMode::Sloppy => "math_sloppy.wgsl",
        }
    }
}

/// The composed source of `shaders/PATH`, with the math of `math`.
pub fn compose(path: &str, math: MathMode) -> Result<String> {
    composed(math, |c| c.append(path))
}

/// What `fill` appends to a fresh [`Composer`] with the math of `math`.
fn composed(math: MathMode, fill: impl FnOnce(&mut Composer) -> Result<()>) -> Result<String> {
    let mut c = Composer::new(math);
    fill(&mut c)?;
    Ok(c.out)
}

/// The pieces with a subgroup twin (docs/design.md §9.17): the appends every appending kernel
/// reserves its slots with, and the counts every walk kernel of `spheres/pairs.wgsl` ends with.
/// Each twin is imported in its piece's place where the device has `SUBGROUP`.
pub const SUBGROUP_TWINS: [(&str, &str); 2] = [
    ("append.wgsl", "append_subgroup.wgsl"),
    (
        "spheres/walk_flush.wgsl",
        "spheres/walk_flush_subgroup.wgsl",
    ),
];

/// The composed source of `shaders/PATH` with the [`SUBGROUP_TWINS`] in their pieces' places,
/// with the math of `math`; the same as [`compose`] for a file that imports none of the pieces.
pub fn compose_subgroup(path: &str, math: MathMode) -> Result<String> {
    composed(math, |c| {
        c.swaps = &SUBGROUP_TWINS;
        c.append(path)
    })
}

/// `text` with its directives expanded (for sources made in code, such as tests' kernels), with
/// the math of `math`.
#[cfg(test)]
pub fn compose_text(text: &str, math: MathMode) -> Result<String> {
    composed(math, |c| c.expand(text))
}

fn file(path: &str) -> Result<&'static str> {
    FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
        .ok_or_else(|| {
            Error::gpu(
                crate::error::GpuFailure::Shader,
                format!("no shader file shaders/{path}"),
            )
        })
}

/// One module being composed: its text so far and the files already in it.
struct Composer {
    math: MathMode,
    /// Imports read from other files: (named, read).
    swaps: &'static [(&'static str, &'static str)],
    seen: Vec<String>,
    out: String,
}

impl Composer {
    fn new(math: MathMode) -> Self {
        Composer {
            math,
            swaps: &[],
            seen: Vec::new(),
            out: String::new(),
        }
    }

    fn append(&mut self, path: &str) -> Result<()> {
        let path = if path == MATH_IMPORT {
            self.math.file()
        } else {
            self.swaps
                .iter()
                .find(|(named, _)| *named == path)
                .map_or(path, |(_, read)| *read)
        };
        if self.seen.iter().any(|s| s == path) {
            return Ok(());
        }
        self.seen.push(path.to_string());
        if path == SLOTS_IMPORT {
            self.out.push_str(&crate::gpu::slots::wgsl());
            return Ok(());
        }
        if let Some((_, text)) = UNIFORM_IMPORTS.iter().find(|(name, _)| *name == path) {
            self.out.push_str(text);
            return Ok(());
        }
        self.expand(file(path)?)
    }

    fn expand(&mut self, text: &str) -> Result<()> {
        for line in text.lines() {
            let trimmed = line.trim_start();
            if let Some(path) = trimmed.strip_prefix(IMPORT) {
                self.append(path.trim())?;
            } else if let Some(rest) = trimmed.strip_prefix(UNROLL) {
                let indent = &line[..line.len() - trimmed.len()];
                let (count, statement) = rest.split_once(' ').ok_or_else(|| {
                    Error::gpu(
                        crate::error::GpuFailure::Shader,
                        format!("'{line}': #unroll needs N and a statement"),
                    )
                })?;
                let count: u32 = count.parse().map_err(|_| {
                    Error::gpu(
                        crate::error::GpuFailure::Shader,
                        format!("'{line}': #unroll needs a count"),
                    )
                })?;
                for k in 0..count {
                    self.out.push_str(indent);
                    self.out.push_str(&statement.replace("{k}", &k.to_string()));
                    self.out.push('\n');
                }
            } else {
                self.out.push_str(line);
                self.out.push('\n');
            }
        }
        Ok(())
    }
}

/// One shader module exactly as a pipeline compiles it.
#[derive(Debug, Clone)]
pub struct Module {
    /// A file name for it: the path under `shaders/`, with the variant before `.wgsl` where one
    /// file gives several modules.
    pub name: String,
    /// Whether it uses subgroup builtins (WGSL validators outside wgpu need `enable subgroups;`).
    pub uses_subgroups: bool,
    /// The composed source, generated constants included.
    pub source: String,
}

/// Every module the pipelines compile, on an adapter whose subgroups all have `subgroup_size`
/// lanes (it decides the constants of the subgroup sort scatter): the files with entry points,
/// composed, and the scatter in each matching variant it can take there. For validators other
/// than naga (`sweepfan shaders`, `scripts/tint.sh`), with the math of `math`.
pub fn modules(subgroup_size: u32, math: MathMode) -> Result<Vec<Module>> {
    if !(4..=128).contains(&subgroup_size) || !subgroup_size.is_power_of_two() {
        return Err(Error::invalid_argument(
            "subgroup_size",
            format!("subgroup size must be a power of two in 4..=128, got {subgroup_size}"),
        ));
    }
    let mut out = Vec::new();
    for (path, text) in FILES {
        if !text.contains("@compute") {
            continue; // a piece other files import
        }
        if *path == "sort/radix_sort_subgroup.wgsl" {
            use crate::gpu::sort::radix_sort_subgroup::{constants_for_size, source};
            let (chunks, broadcast) = constants_for_size(subgroup_size);
            let mut variants = vec![("ballots", 0)];
            if broadcast != 0 {
                variants.push(("broadcasts", broadcast));
            }
            for (variant, lanes) in variants {
                out.push(Module {
                    name: path.replace(".wgsl", &format!(".{variant}.wgsl")),
                    uses_subgroups: true,
                    source: source(
                        crate::gpu::sort::radix_sort::DEFAULT_ROUNDS,
                        chunks,
                        lanes,
                        math,
                    )?,
                });
            }
            continue;
        }
        if *path == "sort/radix_tiles.wgsl" {
            use crate::gpu::sort::radix_tiles::{items_choices, source};
            for items in items_choices() {
                out.push(Module {
                    name: path.replace(".wgsl", &format!(".{items}.wgsl")),
                    uses_subgroups: false,
                    source: source(items, super::sort::radix_tiles::MAX_SHARES, math)?,
                });
            }
            continue;
        }
        let source = compose(path, math)?;
        let twin = compose_subgroup(path, math)?;
        if twin != source {
            out.push(Module {
                name: path.replace(".wgsl", ".subgroup.wgsl"),
                uses_subgroups: true,
                source: twin,
            });
        }
        out.push(Module {
            name: path.to_string(),
            uses_subgroups: uses_subgroups(&source),
            source,
        });
    }
    Ok(out)
}

/// Whether WGSL code (comments aside) names a subgroup builtin.
fn uses_subgroups(source: &str) -> bool {
    source
        .lines()
        .any(|line| line.split("//").next().unwrap_or("").contains("subgroup"))
}

/// Every module of `modules` as a file to write: its path relative to the output directory
/// (its name) and its text, with `enable subgroups;` first where `with_enable` asks and the
/// module uses subgroups (Tint needs it; naga rejects it). `sweepfan shaders --out` writes them
/// through the output module (docs/design.md §8.3).
pub fn module_files(
    subgroup_size: u32,
    math: MathMode,
    with_enable: bool,
) -> Result<Vec<(String, String)>> {
    Ok(modules(subgroup_size, math)?
        .into_iter()
        .map(|module| {
            let mut text = String::new();
            if with_enable && module.uses_subgroups {
                text.push_str("enable subgroups;\n");
            }
            text.push_str(&module.source);
            (module.name, text)
        })
        .collect())
}

/// Bytes of the uniform variable `name` of the composed `shaders/PATH`, by naga's layouter:
/// what the shader reads, to compare with the Rust side's encase layout.
#[cfg(test)]
pub(crate) fn wgsl_uniform_size(path: &str, name: &str) -> u64 {
    let module = naga::front::wgsl::parse_str(&compose(path, MathMode::Exact).unwrap()).unwrap();
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).unwrap();
    let (_, var) = module
        .global_variables
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("{path}: no global {name}"));
    assert_eq!(var.space, naga::AddressSpace::Uniform, "{path}: {name}");
    layouter[var.ty].size as u64
}

/// The value of the constant `name` of the composed `shaders/PATH`, a literal: for tests that a
/// WGSL constant is the Rust side's.
#[cfg(test)]
pub(crate) fn wgsl_constant(path: &str, name: &str) -> f64 {
    use naga::Literal;
    let module = naga::front::wgsl::parse_str(&compose(path, MathMode::Exact).unwrap()).unwrap();
    let (_, constant) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("{path}: no constant {name}"));
    match module.global_expressions[constant.init] {
        naga::Expression::Literal(Literal::U32(v)) => f64::from(v),
        naga::Expression::Literal(Literal::I32(v)) => f64::from(v),
        naga::Expression::Literal(Literal::F32(v)) => f64::from(v),
        ref e => panic!("{path}: {name} is {e:?}, not a literal"),
    }
}

/// A test that the Rust uniform struct `$ty` (encase layout) has the size naga gives the
/// uniform variable `$var` of `shaders/$path`.
#[cfg(test)]
macro_rules! uniform_layout_test {
    ($ty:ty, $path:literal, $var:literal) => {
        #[test]
        fn uniform_layout_is_the_shaders() {
            let wgsl = $crate::gpu::shader::wgsl_uniform_size($path, $var);
            assert_eq!(<$ty as $crate::gpu::context::Uniform>::uniform_size(), wgsl);
        }
    };
}
#[cfg(test)]
pub(crate) use uniform_layout_test;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_come_once_and_unrolls_repeat() {
        let text = "// #import ordered_float.wgsl\n// #import ordered_float.wgsl\n  \
                    // #unroll 3 f(x + {k}u);\nlet y = 1;";
        let out = compose_text(text, MathMode::Exact).unwrap();
        let float = file("ordered_float.wgsl").unwrap();
        assert_eq!(out.matches(float.lines().next().unwrap()).count(), 1);
        assert!(out.ends_with("  f(x + 0u);\n  f(x + 1u);\n  f(x + 2u);\nlet y = 1;\n"));
    }

    #[test]
    fn unknown_files_and_bad_unrolls_are_errors() {
        assert!(compose("nosuch.wgsl", MathMode::Exact).is_err());
        assert!(compose_text("// #unroll x f();", MathMode::Exact).is_err());
        assert!(compose_text("// #unroll 4", MathMode::Exact).is_err());
    }

    #[test]
    fn every_file_under_shaders_is_listed() {
        fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, root, out);
                } else if path.extension().is_some_and(|e| e == "wgsl") {
                    let rel = path.strip_prefix(root).unwrap();
                    out.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
        let mut on_disk = Vec::new();
        walk(&root, &root, &mut on_disk);
        on_disk.sort();
        let mut listed: Vec<String> = FILES.iter().map(|(p, _)| p.to_string()).collect();
        listed.sort();
        assert_eq!(on_disk, listed);
    }

    #[test]
    fn modules_cover_every_entry_file_and_both_scatter_matchings() {
        let names = |size| -> Vec<String> {
            modules(size, MathMode::Exact)
                .unwrap()
                .into_iter()
                .map(|m| m.name)
                .collect()
        };
        let entry_files = FILES.iter().filter(|(_, t)| t.contains("@compute")).count();
        // The scatter file gives two modules at 8 lanes (ballots, broadcasts), one at 32; the
        // four appending files two at every size (their portable and subgroup appends); the
        // tiled sort two (8 and 16 keys an invocation).
        assert_eq!(names(8).len(), entry_files + 6);
        assert_eq!(names(32).len(), entry_files + 5);
        assert!(names(32).contains(&"sort/radix_sort_subgroup.ballots.wgsl".to_string()));
        for items in [8, 16] {
            assert!(names(32).contains(&format!("sort/radix_tiles.{items}.wgsl")));
        }
        let all = modules(4, MathMode::Exact).unwrap();
        let appends = |name: &str| {
            let m = all.iter().find(|m| m.name == name).unwrap();
            (
                m.uses_subgroups,
                m.source
                    .contains("atomic<u32>;\nvar<workgroup> append_base"),
            )
        };
        for file in [
            "spheres/pairs",
            "boxes/sat",
            "boxes/aabb_sap",
            "sector/rotating",
        ] {
            assert_eq!(appends(&format!("{file}.wgsl")), (false, true), "{file}");
            assert_eq!(
                appends(&format!("{file}.subgroup.wgsl")),
                (true, false),
                "{file}"
            );
        }
        assert!(modules(6, MathMode::Exact).is_err() && modules(256, MathMode::Exact).is_err());
        let scatter = modules(16, MathMode::Exact)
            .unwrap()
            .into_iter()
            .find(|m| m.name == "sort/radix_sort_subgroup.ballots.wgsl")
            .unwrap();
        assert!(scatter.uses_subgroups);
        let scan = modules(16, MathMode::Exact)
            .unwrap()
            .into_iter()
            .find(|m| m.name == "sort/scan.wgsl");
        assert!(!scan.unwrap().uses_subgroups, "comments only");
        assert!(
            scatter
                .source
                .starts_with("const CHUNK: u32 = 4096u;\nconst CHUNKS: u32 = 4u;")
        );
    }

    #[test]
    fn every_file_composes_without_directives_left() {
        for (path, _) in FILES {
            for math in [MathMode::Exact, MathMode::Sloppy] {
                let out = compose(path, math).unwrap();
                assert!(!out.contains(IMPORT) && !out.contains(UNROLL), "{path}");
            }
        }
    }

    /// Each generated uniform import names no file, is imported by a file, and is its struct's
    /// declaration, fields in order and docs as comments.
    #[test]
    fn uniform_imports_are_generated_declarations() {
        for (name, text) in UNIFORM_IMPORTS {
            assert!(file(name).is_err(), "{name} is also a file");
            let line = format!("{IMPORT}{name}");
            let imports = |t: &str| t.lines().any(|l| l.trim() == line);
            assert!(
                FILES.iter().any(|(_, t)| imports(t)),
                "{name} is imported nowhere"
            );
            assert!(
                text.starts_with("struct ") && text.ends_with(",\n}\n"),
                "{name}"
            );
        }
        assert_eq!(
            crate::gpu::spheres::motion::Params::WGSL,
            "struct Params {\n    n: u32,\n    half_extent: f32,\n}\n"
        );
        let events = crate::gpu::events::EventParams::WGSL;
        assert!(events.starts_with("struct EventParams {\n    // Slots of this frame's pair list"));
        let composed = compose("events.wgsl", MathMode::Exact).unwrap();
        assert_eq!(composed.matches(events).count(), 1);
    }

    /// The wrappers every kernel calls (math_exact.wgsl, math_sloppy.wgsl).
    const WRAPPERS: [&str; 7] = [
        "fn m_sqrt(",
        "fn m_inverse_sqrt(",
        "fn m_length2(",
        "fn m_length3(",
        "fn m_div(",
        "fn m_rem(",
        "fn m_dot3(",
    ];

    #[test]
    fn the_math_import_follows_the_mode() {
        let users = [
            "frame.wgsl",
            "spheres/pairs.wgsl",
            "sort/keys.wgsl",
            "sector/sector_sphere.wgsl",
            "sector/rotating.wgsl",
            "sector/accuracy.wgsl",
        ];
        for path in users {
            let exact = compose(path, MathMode::Exact).unwrap();
            let sloppy = compose(path, MathMode::Sloppy).unwrap();
            for f in WRAPPERS {
                assert_eq!(exact.matches(f).count(), 1, "{path}: {f}");
                assert_eq!(sloppy.matches(f).count(), 1, "{path}: {f}");
            }
            assert!(!exact.contains("fn sloppy_"), "{path}");
            for f in ["fn sloppy_nudge(", "fn sloppy_fma(", "fn sloppy_mix("] {
                assert_eq!(sloppy.matches(f).count(), 1, "{path}: {f}");
            }
            assert!(sloppy.contains("return sloppy_nudge(a / b,"), "{path}");
        }
        // Made in code too, and once however often it is imported.
        let text = "// #import math.wgsl\n// #import frame.wgsl\n// #import math.wgsl";
        let sloppy = compose_text(text, MathMode::Sloppy).unwrap();
        assert_eq!(sloppy.matches("fn m_div(").count(), 1);
        assert!(sloppy.contains("fn sloppy_fma("));
        let exact = compose_text(text, MathMode::Exact).unwrap();
        assert_eq!(exact.matches("fn m_div(").count(), 1);
        assert!(!exact.contains("fn sloppy_"));
    }

    /// Both maths are valid WGSL for naga in every module that imports them (Tint:
    /// `scripts/tint.sh` on `sweepfan shaders` output, which follows the switch).
    #[test]
    fn both_maths_validate_where_they_are_imported() {
        use naga::valid::{Capabilities, ValidationFlags, Validator};
        let mut checked = 0;
        for (path, text) in FILES {
            if !text.contains("@compute") || *path == "sort/radix_sort_subgroup.wgsl" {
                continue; // a piece, or the scatter with its generated constants
            }
            for math in [MathMode::Exact, MathMode::Sloppy] {
                let source = compose(path, math).unwrap();
                if !source.contains("fn m_div(") {
                    continue;
                }
                let module = naga::front::wgsl::parse_str(&source)
                    .unwrap_or_else(|e| panic!("{path} {math:?}: {}", e.emit_to_string(&source)));
                Validator::new(ValidationFlags::all(), Capabilities::all())
                    .validate(&module)
                    .unwrap_or_else(|e| panic!("{path} {math:?}: {e:?}"));
                checked += 1;
            }
        }
        assert!(checked >= 12, "{checked}");
    }

    /// No kernel calls a builtin whose rounding WGSL leaves to the device except through
    /// math.wgsl, so the sloppy switch covers every such call (docs/design.md §9.11). Float
    /// division cannot be told from integer division by its text: §9.11 lists each one.
    #[test]
    fn device_rounded_builtins_are_called_through_math_wgsl_only() {
        const BUILTINS: [&str; 18] = [
            "sqrt",
            "inverseSqrt",
            "length",
            "distance",
            "normalize",
            "fma",
            "atan",
            "atan2",
            "acos",
            "asin",
            "sin",
            "cos",
            "tan",
            "exp",
            "exp2",
            "log",
            "log2",
            "pow",
        ];
        for (path, text) in FILES {
            if path.starts_with("math_") {
                continue;
            }
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for name in BUILTINS {
                    let called = code.match_indices(&format!("{name}(")).any(|(at, _)| {
                        !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    });
                    assert!(
                        !called,
                        "shaders/{path}:{}: {name} outside math.wgsl",
                        n + 1
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod math_tests;
#[cfg(test)]
mod origin_key_tests;
