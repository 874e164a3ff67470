//! `sweepfan shaders`: every shader module exactly as the pipelines compile it, one `.wgsl`
//! file each, for validators other than wgpu's own (Tint: `scripts/tint.sh`).

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ShadersArgs {
    /// Directory to write into (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Subgroup size the constants are generated for (power of two, 4..=128).
    #[arg(long, default_value_t = 32)]
    subgroup_size: u32,
    /// Write `enable subgroups;` first in modules that use subgroup builtins (Tint needs it;
    /// naga rejects it).
    #[arg(long)]
    enable_subgroups: bool,
}

pub fn exec(a: ShadersArgs) -> Result<bool> {
    let written =
        sweepfan::gpu::shader::write_modules(&a.out, a.subgroup_size, a.enable_subgroups)?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(true)
}
