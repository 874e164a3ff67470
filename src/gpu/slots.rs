//! Slots of the counter buffers that Rust and WGSL both index, named once: the WGSL constants
//! are generated from [`SLOTS`] and composed where a shader writes `// #import slots.wgsl`
//! (`gpu::shader`), so `counters[SPHERE_APPEND]` means the same word on both sides. The sector
//! accuracy histograms' bins are indexed by the membership bits ([`SECTOR_BITS`]), generated
//! the same way.

use crate::geom::sector::classify::bits;

/// Every named slot, with its index (a u64 total takes its slot and the next).
pub const SLOTS: [(&str, u32); 9] = [
    ("SPHERE_TESTS", SPHERE_TESTS),
    ("SPHERE_PAIRS", SPHERE_PAIRS),
    ("SPHERE_APPEND", SPHERE_APPEND),
    ("SPHERE_CUT_SHORT", SPHERE_CUT_SHORT),
    ("SPHERE_PAPER_MIN_AXIS", SPHERE_PAPER_MIN_AXIS),
    ("SWEEP_APPEND", SWEEP_APPEND),
    ("SWEEP_WRAPS", SWEEP_WRAPS),
    ("SWEEP_CUT_SHORT", SWEEP_CUT_SHORT),
    ("SWEEP_BAD_OFFSETS", SWEEP_BAD_OFFSETS),
];

/// The sphere frame's counters: sphere tests (u64).
pub const SPHERE_TESTS: u32 = 0;
/// Touching pairs found (u64), also past the list's capacity.
pub const SPHERE_PAIRS: u32 = 2;
/// The pair list's append slot (counts past capacity).
pub const SPHERE_APPEND: u32 = 4;
/// Walks the device cut short (lavapipe's loop cap): an error, never a short list.
pub const SPHERE_CUT_SHORT: u32 = 5;
/// The paper's min_axis test count (u64): the smallest forward counts summed.
pub const SPHERE_PAPER_MIN_AXIS: u32 = 6;
/// Words of the sphere frame's counters.
pub const SPHERE_COUNTERS: u32 = 8;

/// The AABB sweep's counters (`boxes/aabb_sap.wgsl`): the candidate list's append slot.
pub const SWEEP_APPEND: u32 = 0;
/// Times the append slot wrapped past 2^32 (the count's high word).
pub const SWEEP_WRAPS: u32 = 1;
/// Loops the device cut short.
pub const SWEEP_CUT_SHORT: u32 = 2;
/// Polygons with malformed vertex offsets.
pub const SWEEP_BAD_OFFSETS: u32 = 3;

/// The sector accuracy experiments' membership bits (`geom::sector::classify::bits`): a grid
/// point's mask is its histogram bin. `SECTOR` is the thesis's sector in its pose, the union
/// of the sub-piece sectors in the general one.
pub const SECTOR_BITS: [(&str, u32); 6] = [
    ("REFERENCE", bits::REFERENCE),
    ("SPECULATIVE", bits::SPECULATIVE),
    ("SPECULATIVE_ENDPOINTS", bits::SPECULATIVE_ENDPOINTS),
    ("SECTOR", bits::SECTOR),
    ("CONSERVATIVE_SECTOR", bits::CONSERVATIVE_SECTOR),
    ("EXACT_SWEEP", bits::EXACT_SWEEP),
];

/// The WGSL text of [`SLOTS`] and [`SECTOR_BITS`]: one `const NAME: u32 = Ku;` each.
pub fn wgsl() -> String {
    let mut text = String::from("// Generated from src/gpu/slots.rs.\n");
    for (name, slot) in SLOTS.iter().chain(&SECTOR_BITS) {
        text.push_str(&format!("const {name}: u32 = {slot}u;\n"));
    }
    text
}
