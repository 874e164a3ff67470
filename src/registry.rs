//! Method names to broad-phase values, for the CLI, the benchmarks and the tests.

use crate::broadphase::{Backend, BroadPhase, Method};
use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use std::sync::Arc;

/// The name of the method chosen per scene (`broadphase::auto`).
pub const AUTO: &str = "auto";

/// Names accepted by `--methods` besides [`Method`] names (only with the `peers` feature).
pub const PEER_NAMES: [&str; 3] = ["peer-parry", "peer-rstar", "peer-broccoli"];

/// Builds a broad phase by name on a backend. GPU methods need a context.
pub fn broad_phase(
    name: &str,
    backend: Backend,
    gpu: Option<&Arc<GpuContext>>,
) -> Result<Box<dyn BroadPhase + Send>> {
    if PEER_NAMES.contains(&name) {
        if backend != Backend::Cpu {
            return Err(Error::invalid_argument(
                "backend",
                format!("{name} runs on the CPU only"),
            ));
        }
        return peer(name);
    }
    let method = Method::parse(name)?;
    match backend {
        Backend::Cpu => Ok(crate::cpu::broad_phase(method)),
        Backend::Gpu => crate::gpu::broad_phase(gpu_context(name, gpu)?, method),
    }
}

/// The context a GPU method named `name` runs on.
fn gpu_context(name: &str, gpu: Option<&Arc<GpuContext>>) -> Result<Arc<GpuContext>> {
    // The caller's omission, not a missing adapter: a caller that falls back to the CPU on
    // `NoAdapter` must not take this for one.
    gpu.cloned().ok_or_else(|| {
        Error::invalid_argument(
            "gpu",
            format!("{name} on the GPU needs a context: pass the GpuContext to run on"),
        )
    })
}

#[cfg(feature = "peers")]
fn peer(name: &str) -> Result<Box<dyn BroadPhase + Send>> {
    crate::cpu::peers::peer(name).ok_or_else(|| Error::UnknownName {
        what: "peer",
        name: name.to_string(),
        known: crate::cpu::peers::PEER_NAMES.map(str::to_string).to_vec(),
        note: String::new(),
    })
}

/// A peer's name in a build without them: unknown here, and the note says where it is known.
#[cfg(not(feature = "peers"))]
fn peer(name: &str) -> Result<Box<dyn BroadPhase + Send>> {
    let mut error = unknown_method(name, false);
    if let Error::UnknownName { note, .. } = &mut error {
        *note = format!("; {name} needs the peer crates: build with `--features peers`");
    }
    Err(error)
}

/// The error for a method name nothing knows, listing every name a method may be given by
/// (`auto` included), and with `in_list` the words only lists take.
pub fn unknown_method(name: &str, in_list: bool) -> Error {
    let lists = match (in_list, cfg!(feature = "peers")) {
        (false, _) => "",
        (true, false) => "; lists also take all",
        (true, true) => "; lists also take all, peers",
    };
    let known = Method::ALL.map(|m| m.name()).into_iter().chain([AUTO]);
    Error::UnknownName {
        what: "method",
        name: name.to_string(),
        known: known.map(str::to_string).collect(),
        note: lists.to_string(),
    }
}

#[cfg(test)]
mod tests {
    /// A peer's name in a build without the peers is an unknown method whose message says
    /// which build knows it.
    #[cfg(not(feature = "peers"))]
    #[test]
    fn a_peer_without_the_feature_is_unknown_and_says_where_it_is_known() {
        let err = super::broad_phase("peer-rstar", crate::Backend::Cpu, None)
            .err()
            .expect("no peers in this build");
        assert!(
            matches!(&err, crate::Error::UnknownName { what: "method", name, .. } if name == "peer-rstar"),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.starts_with("unknown method 'peer-rstar'"),
            "{message}"
        );
        assert!(message.contains("--features peers"), "{message}");
    }

    /// Every constructor that takes a `Method` takes `Auto`: the CPU's and the registry's run
    /// the chosen rule (named in the stats), the world batch is `auto`'s; the GPU's one-rule
    /// type refuses it by name, pointing at `gpu::broad_phase`.
    #[test]
    fn auto_is_a_method_every_constructor_takes() {
        use crate::geom::sphere::Sphere;
        use crate::{Backend, Error, Method};
        let spheres: Vec<Sphere> = (0..50)
            .map(|i| Sphere::new(glam::Vec3::new(i as f32 * 1.5, 0.0, 0.0), 1.0))
            .collect();
        for mut bp in [
            crate::cpu::broad_phase(Method::Auto),
            crate::registry::broad_phase("auto", Backend::Cpu, None).unwrap(),
        ] {
            assert_eq!(bp.name(), "auto");
            let mut pairs = Vec::new();
            let stats = bp.find_pairs(&spheres, Some(&mut pairs)).unwrap();
            assert_eq!(pairs.len(), 49);
            assert!(
                stats
                    .chosen
                    .expect("auto names its choice")
                    .method
                    .is_rule()
            );
        }
        assert_eq!(crate::cpu::WorldBatch::new(Method::Auto).name(), "auto");
        let Some(ctx) = crate::gpu::context::test_gpu() else {
            return;
        };
        let ctx = std::sync::Arc::new(ctx);
        let mut gpu = crate::gpu::broad_phase(ctx.clone(), Method::Auto).unwrap();
        assert_eq!((gpu.name(), gpu.backend()), ("auto", Backend::Gpu));
        assert_eq!(gpu.find_pairs(&spheres, None).unwrap().pairs, 49);
        match crate::gpu::GpuBroadPhase::new(ctx.clone(), Method::Auto) {
            Err(Error::InvalidArgument {
                argument: "method",
                message,
            }) => assert!(message.contains("gpu::broad_phase"), "{message}"),
            Err(e) => panic!("expected an invalid method, got {e}"),
            Ok(_) => panic!("a GpuBroadPhase runs one rule"),
        }
        let batch = crate::gpu::GpuWorldBatch::new(ctx, Method::Auto).unwrap();
        assert_eq!(batch.name(), "auto");
    }
}
