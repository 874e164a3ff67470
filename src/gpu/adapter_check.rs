//! Proof of where a run is: [`GpuOptions::expect_adapter`](crate::gpu::GpuOptions) (the tool's
//! `SWEEPFAN_EXPECT_ADAPTER=<substring>`) makes opening a context fail unless the adapter wgpu
//! picked is the one named (docs/design.md §9.5). Without it, a machine
//! whose GPU driver is not exposed (an NVIDIA container without the graphics capability, a MIG
//! slice) runs every "GPU" test and the selftest on a software adapter, and nothing says so.

/// The variable naming (a case-insensitive substring of) the adapter a run must be on
/// ([`GpuOptions::from_vars`](crate::gpu::GpuOptions::from_vars)).
pub const EXPECT_ADAPTER_ENV: &str = "SWEEPFAN_EXPECT_ADAPTER";

/// Words that name a software (CPU) adapter: Mesa's llvmpipe (lavapipe), Google's SwiftShader
/// (its Subzero JIT), Microsoft's WARP ("Microsoft Basic Render Driver").
const CPU_ADAPTER_WORDS: [&str; 8] = [
    "llvm",
    "lavapipe",
    "swiftshader",
    "subzero",
    "warp",
    "basic render",
    "software",
    "cpu",
];

/// `'name' (type, backend; driver X version)`: the adapter and its driver, for messages.
pub fn adapter_label(info: &wgpu::AdapterInfo) -> String {
    let driver = format!("{} {}", info.driver, info.driver_info);
    let driver = driver.trim();
    format!(
        "'{}' ({:?}, {:?}; driver {})",
        info.name,
        info.device_type,
        info.backend,
        if driver.is_empty() { "unnamed" } else { driver }
    )
}

/// Why the adapter `info` is not the one `expected` names, or `None` when it is: its name must
/// contain `expected` (case-insensitive), and a CPU adapter passes only when `expected` itself
/// names a software adapter (`llvmpipe` expected and llvmpipe found is fine; `nvidia` expected
/// and a software adapter found is not, whatever its name holds).
pub fn adapter_mismatch(expected: &str, info: &wgpu::AdapterInfo) -> Option<String> {
    let wanted = expected.trim().to_lowercase();
    let found = adapter_label(info);
    if !info.name.to_lowercase().contains(&wanted) {
        return Some(format!(
            "{EXPECT_ADAPTER_ENV}={expected}, but the adapter is {found}, whose name does not \
             contain '{expected}' (`sweepfan info` lists the adapters; --adapter picks one)"
        ));
    }
    let names_cpu = CPU_ADAPTER_WORDS.iter().any(|w| wanted.contains(w));
    if info.device_type == wgpu::DeviceType::Cpu && !names_cpu {
        return Some(format!(
            "{EXPECT_ADAPTER_ENV}={expected}, but the adapter is {found}, a CPU (software) \
             adapter, and '{expected}' names none (name one: llvmpipe, SwiftShader, WARP)"
        ));
    }
    None
}

/// llvmpipe (lavapipe) stops an invocation after this many loop iterations in all, silently
/// (docs/design.md §6.1): a kernel whose loops could run longer is refused on a software
/// adapter.
pub(crate) const LAVAPIPE_LOOP_CAP: u64 = 65_535;

/// Loop iterations a polygon pair's test or contact takes at most on the device, for polygons
/// of `a` and `b` vertices: each edge of one against every vertex of the other, both ways
/// (`separation_by_an_edge_of` in `boxes/sat.wgsl`, `max_separation` in `contacts.wgsl`), and
/// the contact's extents, incident edge and clipping.
pub(crate) fn polygon_pair_loops(a: usize, b: usize) -> u64 {
    let (a, b) = (a as u64, b as u64);
    2 * a * b + 4 * (a + b) + 64
}

/// Refuses, on a software adapter, polygons whose pair tests could pass [`LAVAPIPE_LOOP_CAP`]:
/// the largest polygon (`sizes`: each polygon's vertices) beside the next largest. A GPU has no
/// such cap.
pub(crate) fn check_polygon_loops(
    ctx: &crate::gpu::GpuContext,
    sizes: impl Iterator<Item = usize>,
) -> crate::error::Result<()> {
    if ctx.info.device_type != wgpu::DeviceType::Cpu {
        return Ok(());
    }
    // The largest (index, vertices) and the next largest vertex count.
    let (mut first, mut second) = ((0, 0), 0);
    for (i, v) in sizes.enumerate() {
        if v > first.1 {
            second = first.1;
            first = (i, v);
        } else {
            second = second.max(v);
        }
    }
    let loops = polygon_pair_loops(first.1, second);
    if second == 0 || loops <= LAVAPIPE_LOOP_CAP {
        return Ok(());
    }
    Err(crate::error::Error::InvalidObject {
        index: first.0,
        problem: format!(
            "a polygon of {} vertices beside one of {second} on a software adapter: up to \
             {loops} loop iterations a pair, past llvmpipe's {LAVAPIPE_LOOP_CAP} (it would stop \
             the test silently); use the CPU backend or a GPU",
            first.1
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(name: &str, kind: wgpu::DeviceType, driver: &str) -> wgpu::AdapterInfo {
        let mut info = wgpu::AdapterInfo::new(kind, wgpu::Backend::Vulkan);
        info.name = name.into();
        info.driver = driver.into();
        info.driver_info = "Mesa 22.3.6 (LLVM 15.0.6)".into();
        info
    }

    #[test]
    fn the_expected_adapter_is_named_and_not_a_software_one() {
        use wgpu::DeviceType::{Cpu, DiscreteGpu};
        let lavapipe = adapter("llvmpipe (LLVM 15.0.6, 256 bits)", Cpu, "llvmpipe");
        let h100 = adapter("NVIDIA H100 80GB HBM3", DiscreteGpu, "NVIDIA");
        // A GPU expected, lavapipe found: both named in the message.
        let why = adapter_mismatch("nvidia", &lavapipe).expect("must differ");
        assert!(
            why.contains("nvidia") && why.contains("llvmpipe (LLVM") && why.contains("Mesa"),
            "{why}"
        );
        assert!(why.contains(EXPECT_ADAPTER_ENV), "{why}");
        // Named, case-insensitively.
        assert_eq!(adapter_mismatch("NVIDIA h100", &h100), None);
        assert_eq!(adapter_mismatch("llvmpipe", &lavapipe), None);
        assert_eq!(adapter_mismatch(" LLVMpipe ", &lavapipe), None);
        assert!(adapter_mismatch("h200", &h100).is_some());
        // In the software adapter's name, but naming no software adapter: a CPU adapter fails.
        let why = adapter_mismatch("256 bits", &lavapipe).expect("a CPU adapter");
        assert!(why.contains("CPU") && why.contains("256 bits"), "{why}");
        let sw = adapter("SwiftShader Device (Subzero)", Cpu, "SwiftShader driver");
        assert_eq!(adapter_mismatch("swiftshader", &sw), None);
        assert!(adapter_mismatch("device", &sw).is_some());
    }
}
