//! The broad phase across processes and machines, over MPI (`sweepfan dist` under `mpirun`,
//! feature `mpi`; docs/design.md §2.11). Each rank loads only its share of the scene (a byte
//! range of the file, or an index range of a seeded scene), the objects go to the rank owning
//! their slab of space ([`sweepfan::partition::slabs`], balanced from a sample), each rank
//! receives the objects of later slabs within its reach as ghosts, runs any method on its own
//! backend (on the GPU, the `r`-th rank of a machine on its adapter `r mod count`) and keeps the pairs with an object of its own:
//! each pair is found on exactly one rank. Giants (the grid's rule, [`sweepfan::geom::radii`])
//! are sent to every rank and tested against each rank's objects.
//!
//! Moving scenes: each frame every rank moves its own objects, those that left its slab move
//! to their new owner, and the slabs are drawn again when a rank holds more than
//! [`DistOptions::rebalance`] times the mean. Frame events: each pair is sent to the rank its
//! indices hash to, which compares it with the same bucket of the previous frame, so events
//! are exact whichever rank found the pair.

mod bodies;
mod comm;
mod frame;
mod memory;
mod output;

pub use bodies::Bodies;
use comm::Comm;
use frame::World;

use mpi::traits::*;
use serde::Serialize;
use std::path::PathBuf;
use sweepfan::broadphase::Backend;
use sweepfan::error::{Error, Result};
use sweepfan_scenes::{SceneKind, SceneParams};

/// Where the objects come from.
#[derive(Clone, Debug)]
pub enum DistInput {
    /// A sphere CSV file (header `x,y,z,r`): each rank reads its byte range.
    File(PathBuf),
    /// A seeded scene: each rank makes its index range of the objects (`sweepfan_scenes::slice`).
    Generated(SceneKind, SceneParams),
}

/// A run of the distributed broad phase.
#[derive(Clone, Debug)]
pub struct DistOptions {
    pub input: DistInput,
    /// Any method name the registry knows.
    pub method: String,
    pub backend: Backend,
    /// Frames to run (moving scenes move between frames; files stay still).
    pub frames: u32,
    /// Where the last frame's pairs go: a directory (one `pairs-rank-R.csv` per rank, existing
    /// or named with a trailing `/`), or one file written by rank 0 with every pair, canonical.
    pub pairs_out: Option<PathBuf>,
    /// Frame events (`frame,event,i,j`), per rank (`events-rank-R.csv`) or gathered as
    /// `pairs_out`.
    pub events_out: Option<PathBuf>,
    /// Draw the slabs again when a rank holds more than this many times the mean.
    pub rebalance: f64,
    /// `--adapter`: the same adapter on every rank; otherwise the `r`-th rank of a machine uses
    /// its adapter `r mod count`.
    pub adapter: Option<String>,
    pub max_binding_bytes: Option<u64>,
}

/// One frame, summed (or the largest) over ranks.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FrameRow {
    pub frame: u32,
    pub pairs: u64,
    pub tests: u64,
    pub found: u64,
    pub lost: u64,
    /// Objects of the rank holding the most, and the mean.
    pub objects_max: u64,
    pub objects_mean: f64,
    /// Ghosts received, over all ranks.
    pub ghosts: u64,
    /// Objects that moved to another rank (migration or rebalance).
    pub migrated: u64,
    pub rebalanced: bool,
    /// Bytes the rank sending most sent to others this frame (ghosts, migration, events).
    pub bytes_sent_max: u64,
    /// Bytes sent to others this frame by all ranks.
    pub bytes_sent_total: u64,
    /// Wall time of the frame on the slowest rank.
    pub seconds: f64,
}

/// One rank, over the frames after the first (the first alone when there is one).
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct RankRow {
    pub rank: usize,
    /// The device the rank ran on ("cpu" on the CPU backend).
    pub device: String,
    pub objects: u64,
    pub ghosts: u64,
    /// Mean bytes per frame sent to other ranks for ghosts, and received.
    pub ghost_bytes_sent: f64,
    pub ghost_bytes_received: f64,
    /// Mean bytes per frame of objects moving between ranks, sent.
    pub migration_bytes_sent: f64,
    /// Mean bytes per frame of pairs sent for the events.
    pub event_bytes_sent: f64,
    /// Mean seconds per frame: moving and migrating, ghosts, the method, events.
    pub seconds_move: f64,
    pub seconds_ghosts: f64,
    pub seconds_find: f64,
    pub seconds_events: f64,
}

/// What rank 0 reports of a run.
#[derive(Clone, Debug, Serialize)]
pub struct DistReport {
    pub ranks: usize,
    pub method: String,
    pub backend: Backend,
    pub scene: String,
    pub objects: u64,
    pub giants: u64,
    /// The slab axis (0 = x) at the end.
    pub axis: usize,
    /// Seconds to load the scene and send every object to its slab.
    pub load_seconds: f64,
    pub frames: Vec<FrameRow>,
    pub per_rank: Vec<RankRow>,
}

/// How a run ended on this rank. MPI stays initialised until [`DistOutcome::finish`]: rank 0
/// reports (a failure too) first, since `mpirun` ends every process as soon as one exits with
/// an error, which could cut rank 0's message short.
pub struct DistOutcome {
    pub rank: usize,
    /// Rank 0's report (`None` on the others), or the failure every rank shares (on rank 0
    /// with every failed rank's own message, [`Error::Rank`]).
    pub result: Result<Option<DistReport>>,
    universe: Option<mpi::environment::Universe>,
}

impl DistOutcome {
    /// Waits for every rank (all have reported), then finalises MPI.
    pub fn finish(mut self) {
        if let Some(universe) = self.universe.take() {
            universe.world().barrier();
        }
    }
}

/// What rank 0 reports as a run goes (for a progress bar): the scene loaded and spread over
/// the ranks, then each frame done (of how many).
pub enum DistProgress {
    Loaded,
    Frame { done: u32, of: u32 },
}

/// Runs the distributed broad phase on this process, one of the ranks `mpirun` started (alone
/// it is a run of one rank). Every rank returns together: with the report on rank 0, or with
/// the same failure ([`Error::Rank`], naming each failed rank and why on rank 0). `progress`
/// is called on rank 0 only.
pub fn run(options: &DistOptions, progress: Option<&dyn Fn(DistProgress)>) -> DistOutcome {
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        return DistOutcome {
            rank: 0,
            result: Err(Error::Config(
                "MPI is already initialised in this process".into(),
            )),
            universe: None,
        };
    };
    let mut comm = Comm::new(universe.world());
    let rank = comm.rank;
    // A panic on one rank would leave the others waiting in a collective: end them all.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        eprintln!("sweepfan dist: rank {rank} panicked: ending every rank");
        mpi::traits::Communicator::abort(&mpi::topology::SimpleCommunicator::world(), 2);
    }));
    let progress = progress.filter(|_| rank == 0);
    let result = run_ranks(options, &mut comm, progress);
    DistOutcome {
        rank,
        result,
        universe: Some(universe),
    }
}

fn run_ranks(
    options: &DistOptions,
    comm: &mut Comm,
    progress: Option<&dyn Fn(DistProgress)>,
) -> Result<Option<DistReport>> {
    if options.frames == 0 {
        return Err(Error::Config("--frames must be at least 1".into()));
    }
    if options.rebalance.is_nan() || options.rebalance <= 1.0 {
        return Err(Error::Config(format!(
            "--rebalance {}: must be above 1 (a rank holding more than this many times the \
             mean sends the slabs to be drawn again)",
            options.rebalance
        )));
    }
    // Every rank must run the same collectives: started with other arguments (an MPMD launch),
    // a rank would wait in one the others never join.
    let same = comm.all_gather_u64(fingerprint(options));
    if let Some(r) = same.iter().position(|&h| h != same[0]) {
        return Err(Error::Config(format!(
            "rank {r} was started with other dist arguments than rank 0: every rank must run \
             the same command"
        )));
    }
    let mut world = World::open(options, comm)?;
    let report = |p| {
        if let Some(f) = progress {
            f(p)
        }
    };
    report(DistProgress::Loaded);
    let mut rows = Vec::new();
    for frame in 0..options.frames {
        rows.push(world.frame(frame, comm)?);
        report(DistProgress::Frame {
            done: frame + 1,
            of: options.frames,
        });
    }
    world.write_outputs(options, comm)?;
    Ok(world.report(options, rows, comm))
}

/// A hash of everything that shapes the collectives (the adapter excepted: ranks may name
/// their own).
fn fingerprint(options: &DistOptions) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let o = DistOptions {
        adapter: None,
        ..options.clone()
    };
    format!("{o:?}").hash(&mut h);
    h.finish()
}
