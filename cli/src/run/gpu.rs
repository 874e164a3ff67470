//! The GPU context, opened on first use so CPU-only runs never touch the driver.

use std::sync::Arc;
use sweepfan::error::Result;
use sweepfan::gpu::{GpuContext, GpuOptions};

/// The device of every output that times or checks a GPU: `name (type, backend)`, and on a
/// CPU-type adapter (lavapipe, SwiftShader) `, software: not GPU times` in the parentheses. One
/// function and one wording for every command and format (text, JSON, CSV), so that one search
/// finds them all (`sort-bench`, `selftest`, the sector experiments and `dist` each wrote their
/// own, some without the mark).
pub fn device_label(ctx: &GpuContext) -> String {
    let soft = if ctx.is_software() {
        ", software: not GPU times"
    } else {
        ""
    };
    let info = ctx.info();
    format!(
        "{} ({:?}, {:?}{soft})",
        info.name, info.device_type, info.backend
    )
}

/// `options` with what the process's environment asks for (`WGPU_BACKEND`,
/// `SWEEPFAN_EXPECT_ADAPTER`, `SWEEPFAN_SLOPPY_MATH`: [`GpuOptions::from_vars`]): the library
/// reads no variable itself, the tool maps them onto its options here, just before a context
/// opens, so that a CPU-only run never reads them.
pub fn with_env(options: GpuOptions) -> Result<GpuOptions> {
    let env = GpuOptions::from_vars(|name| std::env::var(name).ok())?;
    Ok(GpuOptions {
        backends: options.backends.or(env.backends),
        expect_adapter: options.expect_adapter.or(env.expect_adapter),
        math: env.math,
        ..options
    })
}

/// The tool's unit tests: a context on the adapter the environment asks for, or `None` where
/// `SWEEPFAN_NO_GPU=1` opts out (`sweepfan::gpu::test_gpu_with`, the library's feature
/// `testing`, which only the test builds turn on).
#[cfg(test)]
pub fn test_gpu() -> Option<GpuContext> {
    sweepfan::gpu::test_gpu_with(|name| std::env::var(name).ok())
}

/// A GPU context opened on the first [`LazyGpu::get`], then shared.
pub struct LazyGpu {
    options: GpuOptions,
    /// Several devices (`--adapters`): each adapter named, opened once per mention.
    devices: Option<Vec<String>>,
    ctx: Option<Arc<GpuContext>>,
}

/// `list` cut at its commas outside parentheses and brackets: adapter names hold commas there
/// (`llvmpipe (LLVM 15.0.6, 256 bits)`, as `info` prints it), and stay whole.
fn split_outside_brackets(list: &str) -> Result<Vec<&str>> {
    let (mut items, mut from, mut depth) = (Vec::new(), 0, 0usize);
    for (i, c) in list.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    sweepfan::error::Error::Config(format!(
                        "--adapters {}: a '{c}' closes nothing",
                        sweepfan::error::shown(list)
                    ))
                })?;
            }
            ',' if depth == 0 => {
                items.push(&list[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err(sweepfan::error::Error::Config(format!(
            "--adapters {}: a '(' or '[' is not closed",
            sweepfan::error::shown(list)
        )));
    }
    items.push(&list[from..]);
    Ok(items)
}

impl LazyGpu {
    /// `adapter`: index from `sweepfan info` or a substring of the adapter's name.
    pub fn new(adapter: Option<String>) -> Self {
        Self::with_options(
            GpuOptions {
                adapter,
                ..Default::default()
            },
            None,
        )
    }

    /// Any [`GpuOptions`] (the binding limit), and with `devices` several devices: one context
    /// per entry (an index or part of a name, as `adapter`; the same one twice opens two
    /// devices on it), the first carrying the others as its peers (docs/design.md §2.10).
    pub fn with_options(options: GpuOptions, devices: Option<Vec<String>>) -> Self {
        Self {
            options,
            devices,
            ctx: None,
        }
    }

    /// `--adapters all|I,J,...`: every adapter wgpu lists, or the entries named.
    pub fn parse_devices(list: &str) -> Result<Vec<String>> {
        let list = list.trim();
        if list.eq_ignore_ascii_case("all") {
            let n = sweepfan::gpu::list_adapters(&with_env(GpuOptions::default())?).len();
            if n == 0 {
                return Err(sweepfan::error::Error::NoAdapter(
                    "--adapters all: no adapter found (install a Vulkan driver)".into(),
                ));
            }
            return Ok((0..n).map(|i| i.to_string()).collect());
        }
        let items: Vec<String> = split_outside_brackets(list)?
            .into_iter()
            .map(|s| s.trim().to_string())
            .collect();
        let expected = "expected 'all' or adapters separated by commas (indices from \
                        `sweepfan info`, or parts of names)";
        if items.iter().all(|s| s.is_empty()) {
            return Err(sweepfan::error::Error::Config(format!(
                "--adapters: {expected}"
            )));
        }
        if let Some(k) = items.iter().position(|s| s.is_empty()) {
            return Err(sweepfan::error::Error::Config(format!(
                "--adapters {list}: entry {} is empty; {expected}",
                k + 1
            )));
        }
        if items.len() > 1 && items.iter().any(|s| s.eq_ignore_ascii_case("all")) {
            return Err(sweepfan::error::Error::Config(format!(
                "--adapters {list}: 'all' stands alone (every adapter), not in a list"
            )));
        }
        Ok(items)
    }

    /// The context, opened now if it is not yet (with several devices: the first, carrying
    /// the others).
    pub fn get(&mut self) -> Result<Arc<GpuContext>> {
        if let Some(ctx) = &self.ctx {
            return Ok(ctx.clone());
        }
        let options = with_env(self.options.clone())?;
        let open = |adapter: Option<String>| {
            GpuContext::new(&GpuOptions {
                adapter,
                ..options.clone()
            })
        };
        let ctx = match &self.devices {
            None => open(self.options.adapter.clone())?,
            Some(list) => {
                let mut peers = Vec::with_capacity(list.len());
                for name in &list[1..] {
                    peers.push(Arc::new(open(Some(name.clone()))?));
                }
                open(Some(list[0].clone()))?.with_peers(peers)
            }
        };
        let ctx = Arc::new(ctx);
        self.ctx = Some(ctx.clone());
        Ok(ctx)
    }

    /// Whether the run was told which adapter it must be on (`--adapter`, `--adapters`,
    /// `SWEEPFAN_EXPECT_ADAPTER`): it then fails without it rather than leaving the GPU out
    /// (docs/design.md §9.5).
    pub fn expects_adapter(&self) -> bool {
        self.options.adapter.is_some()
            || self.devices.is_some()
            || with_env(self.options.clone()).is_ok_and(|o| o.expect_adapter.is_some())
    }

    /// [`device_label`], with the devices beside it, for the `device` column.
    pub fn device(&self) -> String {
        match &self.ctx {
            Some(c) => {
                let more = match c.peers().len() {
                    0 => String::new(),
                    k => format!(" + {k} more device{}", if k == 1 { "" } else { "s" }),
                };
                format!("{}{more}", device_label(c))
            }
            None => "gpu (not opened)".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LazyGpu;

    /// Adapter names keep the commas inside their brackets, as `info` prints them; lists split
    /// at the others; unbalanced brackets are refused.
    #[test]
    fn adapter_lists_split_outside_brackets() {
        let got =
            LazyGpu::parse_devices("llvmpipe (LLVM 15.0.6, 256 bits), 1 ,GPU [x, y]").unwrap();
        assert_eq!(got, ["llvmpipe (LLVM 15.0.6, 256 bits)", "1", "GPU [x, y]"]);
        assert_eq!(LazyGpu::parse_devices("0,0").unwrap(), ["0", "0"]);
        for bad in ["a (b, c", "a), b"] {
            let e = LazyGpu::parse_devices(bad).unwrap_err().to_string();
            assert!(e.contains("--adapters"), "{e}");
        }
        // An empty entry is a slip, not an adapter left out; 'all' is the whole list.
        for (bad, says) in [
            ("0,,0", "entry 2 is empty"),
            ("0,", "entry 2 is empty"),
            (" , ", "expected 'all'"),
            ("all,0", "'all' stands alone"),
        ] {
            let e = LazyGpu::parse_devices(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
