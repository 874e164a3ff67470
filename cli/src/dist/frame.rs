//! One rank's part of a distributed run (docs/design.md §2.11): loading, the slabs, and each
//! frame's moves, ghosts, pairs and events.

use super::bodies::{BODY_WORDS, Bodies, GHOST_WORDS, ghosts_from_words};
use super::comm::Comm;
use super::memory::{fits_on_this_rank, ghosts_past_memory};
use super::{DistInput, DistOptions, DistReport, FrameRow, RankRow};
use glam::Vec3;
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;
use sweepfan::broadphase::{Backend, BroadPhase, Pair};
use sweepfan::error::{Error, Result};
use sweepfan::geom::motion::step_in_cube;
use sweepfan::geom::radii::{BINS, Histogram, WHOLE_SCENE_GIANTS_MAX, bin};
use sweepfan::geom::sphere::Sphere;
use sweepfan::gpu::{GpuContext, GpuOptions};
use sweepfan::partition::slabs::{GhostRoutes, GlobalPair, Slabs, global_pair, slab_reach};
use sweepfan::registry;

/// Centres sampled over all ranks to draw the slabs.
const SAMPLE: u64 = 1 << 16;

/// Sums per rank over the frames that count (all after the first, or the first alone).
#[derive(Default)]
struct Sums {
    frames: u64,
    ghosts: u64,
    ghost_sent: u64,
    ghost_received: u64,
    migration_sent: u64,
    event_sent: u64,
    move_s: f64,
    ghosts_s: f64,
    find_s: f64,
    events_s: f64,
}

/// A rank's state across frames.
pub(super) struct World {
    /// The objects this rank owns, giants aside.
    bodies: Bodies,
    /// The giants this rank loaded (it moves them; every rank tests them).
    giants: Bodies,
    slabs: Slabs,
    /// The largest radius of the objects that are not giants, over all ranks.
    r_max: f32,
    half_extent: Option<f32>,
    scene: String,
    objects: u64,
    giant_count: u64,
    broad_phase: Box<dyn BroadPhase + Send>,
    device: String,
    track_events: bool,
    /// Whether the events are kept for `events_out` (not only counted).
    keep_events: bool,
    rebalance: f64,
    /// The pairs this rank found in the last frame, canonical.
    pairs: Vec<GlobalPair>,
    /// `(frame, 0 found | 1 lost, pair)`, kept for `events_out`.
    events: Vec<(u32, u32, GlobalPair)>,
    load_seconds: f64,
    sums: Sums,
    /// Pairs whose signs summed past one (a method returned a pair twice): an error.
    duplicates: u64,
    /// This rank's index among the ranks on its machine (picks its adapter).
    local_rank: usize,
}

impl World {
    /// Loads this rank's share, sets the giants aside, draws the slabs, sends every object to
    /// its slab and opens the method.
    pub fn open(options: &DistOptions, comm: &mut Comm) -> Result<World> {
        let start = Instant::now();
        let (mut bodies, half_extent, scene) = load(&options.input, comm)?;
        let objects = comm.sum_u64(&[bodies.len() as u64])[0];
        if objects == 0 {
            // Every rank read nothing: the file (or the scene) is what is empty.
            return Err(Error::Config(format!(
                "{scene}: {} (on all {} ranks)",
                Error::EmptyScene,
                comm.size
            )));
        }
        // The giants rule on the histogram of every rank's radii (mergeable: counts add,
        // largest radii take the maximum).
        let mut h = Histogram::default();
        bodies.spheres.iter().for_each(|s| h.add(s.radius));
        let counts = comm.sum_u64(&h.count.map(|c| c as u64));
        let max_bits = comm.max_u32s(&h.max_bits);
        for b in 0..BINS {
            // The rule compares counts with its budget only: capped there, billions of objects
            // in a bin cannot overflow its sums. Each giant meets every object here, so the
            // budget is the whole-scene one.
            h.count[b] = counts[b].min(WHOLE_SCENE_GIANTS_MAX as u64 + 1) as u32;
            h.max_bits[b] = max_bits[b];
        }
        let (split, _) = h.decide_within(WHOLE_SCENE_GIANTS_MAX);
        let mut giants = Bodies::default();
        if split < 255 {
            let mut out = vec![Vec::new()];
            let giant: Vec<bool> = bodies
                .spheres
                .iter()
                .map(|s| bin(s.radius) as u32 > split)
                .collect();
            bodies.split_off_where(|i| giant[i].then_some(0), &mut out);
            giants.extend_from_words(&out[0]);
        }
        let giant_count = comm.sum_u64(&[giants.len() as u64])[0];
        let r_max = comm.max_f64(
            bodies
                .spheres
                .iter()
                .map(|s| s.radius)
                .fold(0.0f32, f32::max) as f64,
        ) as f32;
        let slabs = draw_slabs(&bodies, objects - giant_count, 0, comm);
        let mut world = World {
            bodies,
            giants,
            slabs,
            r_max,
            half_extent,
            scene,
            objects,
            giant_count,
            broad_phase: sweepfan::cpu::broad_phase(sweepfan::broadphase::Method::BruteForce),
            device: "cpu".into(),
            track_events: options.events_out.is_some() || options.frames > 1,
            keep_events: options.events_out.is_some(),
            rebalance: options.rebalance,
            pairs: Vec::new(),
            events: Vec::new(),
            load_seconds: 0.0,
            sums: Sums::default(),
            duplicates: 0,
            local_rank: comm.local_rank,
        };
        world.send_to_owners(comm)?;
        let opened = open_method(options, world.local_rank);
        let (broad_phase, device) = comm.agree(opened)?;
        (world.broad_phase, world.device) = (broad_phase, device);
        comm.take_traffic();
        world.load_seconds = comm.max_f64(start.elapsed().as_secs_f64());
        Ok(world)
    }

    /// Sends every body whose slab is another rank's there; returns how many left.
    fn send_to_owners(&mut self, comm: &mut Comm) -> Result<u64> {
        let mut to = vec![Vec::new(); comm.size];
        let (slabs, rank) = (&self.slabs, comm.rank);
        let bodies = &self.bodies;
        let owners: Vec<usize> = (0..bodies.len())
            .into_par_iter()
            .map(|i| slabs.owner(bodies.spheres[i].center, bodies.ids[i]))
            .collect();
        let left = self
            .bodies
            .split_off_where(|i| (owners[i] != rank).then_some(owners[i]), &mut to);
        let kept = self.bodies.len();
        let arrived = comm.exchange_admitted(&to, |words| {
            let arriving = words as usize / BODY_WORDS;
            fits_on_this_rank(kept + arriving, false)
        })?;
        self.bodies.extend_from_words(&arrived);
        Ok(left)
    }

    /// One frame: move (after the first), migrate, rebalance, ghosts, pairs, events.
    pub fn frame(&mut self, frame: u32, comm: &mut Comm) -> Result<FrameRow> {
        let start = Instant::now();
        let mut migrated = 0u64;
        let mut rebalanced = false;
        if frame > 0
            && let Some(half) = self.half_extent
        {
            step_in_cube(&mut self.bodies.spheres, &mut self.bodies.velocities, half);
            step_in_cube(&mut self.giants.spheres, &mut self.giants.velocities, half);
            migrated += self.send_to_owners(comm)?;
        }
        let counts = comm.all_gather_u64(self.bodies.len() as u64);
        let mean = counts.iter().sum::<u64>() as f64 / comm.size as f64;
        let most = counts.iter().copied().max().unwrap_or(0);
        if comm.size > 1 && most as f64 > self.rebalance * mean {
            self.slabs = draw_slabs(&self.bodies, counts.iter().sum(), frame as u64 + 1, comm);
            migrated += self.send_to_owners(comm)?;
            rebalanced = true;
        }
        let (migration_sent, _) = comm.take_traffic();
        let moved = Instant::now();

        // Ghosts: every rank's reach, then each object to the earlier ranks it reaches.
        let reach = slab_reach(&self.bodies.spheres, self.slabs.axis, self.r_max);
        let routes = GhostRoutes::new(comm.all_gather_f64(reach));
        let mut to = vec![Vec::new(); comm.size];
        for i in 0..self.bodies.len() {
            let low = self.slabs.low_end(&self.bodies.spheres[i]);
            routes.ranks_for(comm.rank, low, |r| self.bodies.write_ghost(i, &mut to[r]));
        }
        let own = self.bodies.len();
        // The ghosts count in this rank's memory as its own objects do: objects far larger than
        // the rest (past the giants set aside) or at one place reach every earlier slab, and
        // rank 0 received the whole scene, past what it could hold, to an abort.
        let arrived = comm.exchange_admitted(&to, |words| {
            let ghosts = words as usize / GHOST_WORDS;
            fits_on_this_rank(own + ghosts, false).map_err(|e| ghosts_past_memory(e, own, ghosts))
        })?;
        drop(to);
        let mut local = self.bodies.spheres.clone();
        let mut ghost_ids = Vec::with_capacity(arrived.len() / GHOST_WORDS);
        ghosts_from_words(&arrived, &mut local, &mut ghost_ids);
        let ghosts = ghost_ids.len() as u64;
        let (ghost_sent, ghost_received) = comm.take_traffic();
        let mut giant_words = Vec::new();
        (0..self.giants.len()).for_each(|i| self.giants.write_ghost(i, &mut giant_words));
        let all_giants = comm.all_gather(&giant_words);
        let (mut giant_spheres, mut giant_ids) = (Vec::new(), Vec::new());
        ghosts_from_words(&all_giants, &mut giant_spheres, &mut giant_ids);
        let ghosted = Instant::now();

        // The method over own objects and ghosts; a pair is this rank's when one of its
        // objects is its own (owned objects come first).
        let found = self.find(&local, own, &ghost_ids);
        let (pairs, mut tests) = comm.agree(found)?;
        let before = std::mem::replace(&mut self.pairs, pairs);
        tests += self.giant_pairs(&giant_spheres, &giant_ids, comm.rank == 0);
        drop(local);
        let searched = Instant::now();

        let (found_count, lost_count) = if self.track_events {
            self.events(frame, &before, comm)
        } else {
            // Untracked only in a run of one frame: its pairs are all found, against none
            // before (as `bench --events` counts a first frame).
            debug_assert!(before.is_empty(), "events are tracked past the first frame");
            (self.pairs.len() as u64, 0)
        };
        let duplicated = if self.duplicates > 0 {
            Err(Error::Config(format!(
                "{} pairs were found twice in frame {frame}: the method returned duplicates",
                self.duplicates
            )))
        } else {
            Ok(())
        };
        comm.agree(duplicated)?;
        let (event_sent, _) = comm.take_traffic();
        let done = Instant::now();

        if frame > 0 || self.sums.frames == 0 {
            if frame == 1 {
                // The first frame loads and warms up: the means are over the frames after it.
                self.sums = Sums::default();
            }
            let s = &mut self.sums;
            s.frames += 1;
            s.ghosts += ghosts;
            s.ghost_sent += ghost_sent;
            s.ghost_received += ghost_received;
            s.migration_sent += migration_sent;
            s.event_sent += event_sent;
            s.move_s += (moved - start).as_secs_f64();
            s.ghosts_s += (ghosted - moved).as_secs_f64();
            s.find_s += (searched - ghosted).as_secs_f64();
            s.events_s += (done - searched).as_secs_f64();
        }
        let sent = migration_sent + ghost_sent + event_sent;
        let totals = comm.sum_u64(&[
            self.pairs.len() as u64,
            tests,
            found_count,
            lost_count,
            ghosts,
            migrated,
            sent,
        ]);
        let objects = comm.all_gather_u64(own as u64);
        Ok(FrameRow {
            frame,
            pairs: totals[0],
            tests: totals[1],
            found: totals[2],
            lost: totals[3],
            objects_max: objects.iter().copied().max().unwrap_or(0),
            objects_mean: objects.iter().sum::<u64>() as f64 / comm.size as f64,
            ghosts: totals[4],
            migrated: totals[5],
            rebalanced,
            bytes_sent_max: comm.max_u64(sent),
            bytes_sent_total: totals[6],
            seconds: comm.max_f64(start.elapsed().as_secs_f64()),
        })
    }

    /// This rank's pairs among `local` (own objects first, then ghosts with `ghost_ids`) by
    /// the method, with its tests.
    fn find(
        &mut self,
        local: &[Sphere],
        own: usize,
        ghost_ids: &[u64],
    ) -> Result<(Vec<GlobalPair>, u64)> {
        if local.is_empty() {
            return Ok((Vec::new(), 0));
        }
        if local.len() > u32::MAX as usize {
            return Err(Error::past_u32(
                local.len() as u64,
                format!(
                    "{} objects with ghosts on one rank: at most 2^32 - 1; run more ranks",
                    local.len()
                ),
            ));
        }
        let mut found: Vec<Pair> = Vec::new();
        let stats = self
            .broad_phase
            .find_pairs(local, Some(&mut found))
            .map_err(super::output::keeps_every_pair)?;
        let ids = &self.bodies.ids;
        let id = |p: u32| {
            let p = p as usize;
            if p < own { ids[p] } else { ghost_ids[p - own] }
        };
        // Global pairs take twice the local ones' bytes: the memory is asked for first (the
        // collect aborted the process where it did not fit), then filled in place.
        let mut pairs: Vec<GlobalPair> = Vec::new();
        let needed = (found.len() * std::mem::size_of::<GlobalPair>()) as u64;
        let usable = sweepfan::MemoryBudget::System.usable_bytes();
        if usable.is_some_and(|u| needed > u) || pairs.try_reserve_exact(found.len()).is_err() {
            return Err(Error::too_large(
                sweepfan::error::Exceeds::HostMemory { needed, usable },
                format!(
                    "{} touching pairs on one rank: their global list needs {} bytes; run more \
                     ranks",
                    found.len(),
                    needed
                ),
            ));
        }
        // In parallel without a second list: each piece of `found` counted, then written to
        // its place.
        let own_pair = |&[a, b]: &Pair| (a.min(b) as usize) < own;
        let pieces: Vec<&[Pair]> = found.chunks(1 << 16).collect();
        let counts: Vec<usize> = pieces
            .par_iter()
            .map(|p| p.iter().filter(|q| own_pair(q)).count())
            .collect();
        pairs.resize(counts.iter().sum(), [0, 0]);
        let mut rest = &mut pairs[..];
        let mut places = Vec::with_capacity(pieces.len());
        for &count in &counts {
            let (place, after) = rest.split_at_mut(count);
            places.push(place);
            rest = after;
        }
        places
            .into_par_iter()
            .zip(pieces)
            .for_each(|(place, piece)| {
                let kept = piece.iter().filter(|q| own_pair(q));
                for (slot, &[a, b]) in place.iter_mut().zip(kept) {
                    *slot = global_pair(id(a), id(b));
                }
            });
        pairs.par_sort_unstable();
        Ok((pairs, stats.tests))
    }

    /// The giants against this rank's objects (and, on `first`, against each other): their
    /// pairs join this rank's; returns the tests.
    fn giant_pairs(&mut self, spheres: &[Sphere], ids: &[u64], first: bool) -> u64 {
        let g = spheres.len();
        if g == 0 {
            return 0;
        }
        let bodies = &self.bodies;
        let mut extra: Vec<GlobalPair> = (0..bodies.len())
            .into_par_iter()
            .flat_map_iter(|i| {
                let s = bodies.spheres[i];
                (0..g)
                    .filter(move |&k| spheres[k].touches(&s))
                    .map(move |k| global_pair(ids[k], bodies.ids[i]))
            })
            .collect();
        let mut tests = (bodies.len() * g) as u64;
        if first {
            for a in 0..g {
                for b in a + 1..g {
                    if spheres[a].touches(&spheres[b]) {
                        extra.push(global_pair(ids[a], ids[b]));
                    }
                }
            }
            tests += (g * (g - 1) / 2) as u64;
        }
        if !extra.is_empty() {
            self.pairs.extend(extra);
            self.pairs.par_sort_unstable();
        }
        tests
    }

    /// The frame's events, exact whichever rank found each pair (docs/design.md §2.11): this
    /// rank's own difference with its previous pairs (`before`), each changed pair sent with
    /// its sign (+1 gained here, -1 gone from here) to the rank its indices hash to, which sums
    /// them: a pair found by one rank now and by another before nets 0. Returns the hash
    /// rank's `(found, lost)` counts.
    fn events(&mut self, frame: u32, before: &[GlobalPair], comm: &mut Comm) -> (u64, u64) {
        let mut to = vec![Vec::new(); comm.size];
        let mut send = |p: &GlobalPair, sign: u32| {
            let r = (mix(p[0] ^ mix(p[1])) % comm.size as u64) as usize;
            to[r].extend_from_slice(&[
                p[0] as u32,
                (p[0] >> 32) as u32,
                p[1] as u32,
                (p[1] >> 32) as u32,
                sign,
            ]);
        };
        sweepfan::events::merge_changes(before, &self.pairs, |p, gained| send(p, gained as u32));
        let words = comm.exchange(&to);
        let mut changes: Vec<(GlobalPair, u32)> = words
            .chunks_exact(5)
            .map(|w| {
                let p = [
                    w[0] as u64 | (w[1] as u64) << 32,
                    w[2] as u64 | (w[3] as u64) << 32,
                ];
                (p, w[4])
            })
            .collect();
        changes.par_sort_unstable();
        let (mut found, mut lost) = (0u64, 0u64);
        for same in changes.chunk_by(|a, b| a.0 == b.0) {
            let net: i64 = same.iter().map(|c| if c.1 == 1 { 1 } else { -1 }).sum();
            let kind = match net {
                1 => 0,
                -1 => 1,
                0 => continue,
                // A pair gained twice: some rank's method returned it twice.
                _ => {
                    self.duplicates += 1;
                    continue;
                }
            };
            if kind == 0 {
                found += 1;
            } else {
                lost += 1;
            }
            if self.keep_events {
                self.events.push((frame, kind, same[0].0));
            }
        }
        (found, lost)
    }

    /// Writes the last frame's pairs and the events where the options say.
    pub fn write_outputs(&self, options: &DistOptions, comm: &mut Comm) -> Result<()> {
        if let Some(path) = &options.pairs_out {
            super::output::write_pairs(path, &self.pairs, comm)?;
        }
        if let Some(path) = &options.events_out {
            super::output::write_events(path, &self.events, comm)?;
        }
        Ok(())
    }

    /// Rank 0's report: the frames, and every rank's row.
    pub fn report(
        &self,
        options: &DistOptions,
        frames: Vec<FrameRow>,
        comm: &mut Comm,
    ) -> Option<DistReport> {
        let s = &self.sums;
        let per = |x: f64| x / s.frames.max(1) as f64;
        let row = RankRow {
            rank: comm.rank,
            device: self.device.clone(),
            objects: self.bodies.len() as u64,
            ghosts: (per(s.ghosts as f64)).round() as u64,
            ghost_bytes_sent: per(s.ghost_sent as f64),
            ghost_bytes_received: per(s.ghost_received as f64),
            migration_bytes_sent: per(s.migration_sent as f64),
            event_bytes_sent: per(s.event_sent as f64),
            seconds_move: per(s.move_s),
            seconds_ghosts: per(s.ghosts_s),
            seconds_find: per(s.find_s),
            seconds_events: per(s.events_s),
        };
        let text = serde_json::to_string(&row).unwrap_or_default();
        let rows = comm.gather_texts(&text);
        (comm.rank == 0).then(|| DistReport {
            ranks: comm.size,
            method: options.method.clone(),
            backend: options.backend,
            scene: self.scene.clone(),
            objects: self.objects,
            giants: self.giant_count,
            axis: self.slabs.axis,
            load_seconds: self.load_seconds,
            frames,
            per_rank: rows
                .iter()
                .filter_map(|t| serde_json::from_str::<RankRow>(t).ok())
                .collect(),
        })
    }
}

/// A well-mixed 64-bit hash (the splitmix64 finaliser).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Slabs balanced from a sample of every rank's bodies: those whose global index hashes (with
/// the `draw`) to a multiple of one stride, the same rule on every rank, so each rank is
/// sampled at the same rate.
fn draw_slabs(bodies: &Bodies, total: u64, draw: u64, comm: &mut Comm) -> Slabs {
    let stride = (total / SAMPLE).max(1);
    let mut words = Vec::new();
    for i in 0..bodies.len() {
        // By a hash of the id, another for each draw: ids a multiple of the stride apart
        // (every other line of a file from two places) all fell in the sample, which drew one
        // slab over both places, and every later redraw drew it again.
        if (mix(bodies.ids[i] ^ mix(draw))).is_multiple_of(stride) {
            let (c, id) = (bodies.spheres[i].center, bodies.ids[i]);
            words.extend_from_slice(&[
                c.x.to_bits(),
                c.y.to_bits(),
                c.z.to_bits(),
                id as u32,
                (id >> 32) as u32,
            ]);
        }
    }
    let all = comm.all_gather(&words);
    let sample: Vec<(Vec3, u64)> = all
        .chunks_exact(5)
        .map(|w| {
            let f = f32::from_bits;
            (
                Vec3::new(f(w[0]), f(w[1]), f(w[2])),
                w[3] as u64 | (w[4] as u64) << 32,
            )
        })
        .collect();
    Slabs::balanced(&sample, comm.size)
}

/// This rank's share of the input, with global indices; the walls' half extent of a moving
/// scene, and the scene's name.
fn load(input: &DistInput, comm: &mut Comm) -> Result<(Bodies, Option<f32>, String)> {
    let mut bodies = Bodies::default();
    match input {
        DistInput::File(path) => {
            same_file_on_every_rank(path, comm)?;
            let chunk = sweepfan_scenes::chunks::read_spheres_csv_chunk(path, comm.rank, comm.size);
            // Line numbers and indices continue those of the earlier ranks' chunks: counted
            // by every rank, even one whose chunk failed.
            let (lines, count) = match &chunk {
                Ok(c) => (c.lines as u64, c.spheres.len() as u64),
                Err(_) => (0, 0),
            };
            let first_line = comm.exclusive_prefix(lines);
            let first_id = comm.exclusive_prefix(count);
            let checked = chunk.and_then(|c| {
                match c.problem_in_file(first_line as usize, first_id as usize) {
                    Some((line, problem)) => Err(Error::Parse {
                        path: path.clone(),
                        line,
                        problem,
                    }),
                    None => Ok(c.spheres),
                }
            });
            let spheres = comm.agree_first(checked)?;
            let fits = fits_on_this_rank(spheres.len(), false);
            comm.agree(fits)?;
            for (k, s) in spheres.into_iter().enumerate() {
                bodies.push(s, Vec3::ZERO, first_id + k as u64);
            }
            Ok((bodies, None, path.display().to_string()))
        }
        DistInput::Generated(kind, params) => {
            let n = params.n;
            let (r, size) = (comm.rank, comm.size);
            // In 128 bits: n up to 2^48 times a rank number past 2^16 passes 64.
            let share = |r: usize| (n as u128 * r as u128 / size as u128) as usize;
            let range = share(r)..share(r + 1);
            let first = range.start as u64;
            // The rotating scene's spheres are drawn whole on every rank, its range kept.
            let whole = *kind == sweepfan_scenes::SceneKind::Rotating;
            let fits = fits_on_this_rank(if whole { n } else { range.len() }, whole);
            comm.agree(fits)?;
            let scene = sweepfan_scenes::slice::generate_range(*kind, params, range);
            let valid = crate::run::scene_size::check_generated(
                *kind,
                params,
                &scene.spheres,
                first as usize,
            );
            comm.agree_first(valid)?;
            for (k, (s, v)) in scene.spheres.iter().zip(&scene.velocities).enumerate() {
                bodies.push(*s, *v, first + k as u64);
            }
            Ok((bodies, scene.half_extent, scene.name))
        }
    }
}

/// Every rank reads its byte range of its own copy of the scene file: shown to be one file by
/// its length and digest agreed by all ranks (`sweepfan_scenes::chunks::file_digest`), else every rank
/// stops with the same error naming the ranks whose copy differs from rank 0's (a stale copy
/// on one node, another working directory): their pairs would match neither file.
fn same_file_on_every_rank(path: &std::path::Path, comm: &mut Comm) -> Result<()> {
    // A file missing or unreadable is one problem of the input: the lowest rank says it.
    let digest = comm.agree_first(sweepfan_scenes::chunks::file_digest(path))?;
    let lengths = comm.all_gather_u64(digest.0);
    let digests = comm.all_gather_u64(digest.1);
    let differ: Vec<String> = (1..comm.size)
        .filter(|&r| (lengths[r], digests[r]) != (lengths[0], digests[0]))
        .map(|r| {
            if lengths[r] == lengths[0] {
                format!("rank {r} (same length, other bytes)")
            } else {
                format!("rank {r} ({} bytes)", lengths[r])
            }
        })
        .collect();
    if differ.is_empty() {
        return Ok(());
    }
    Err(Error::Config(format!(
        "{}: the ranks read different files: {} against rank 0's {} bytes; every rank must \
         read the same scene (copy the file to every node, or start the ranks in one directory)",
        path.display(),
        differ.join(", "),
        lengths[0]
    )))
}

/// The method on this rank's backend: on the GPU, `--adapter` or adapter `local mod count`
/// (`local`: the rank's index among the ranks on its machine).
fn open_method(options: &DistOptions, rank: usize) -> Result<(Box<dyn BroadPhase + Send>, String)> {
    match options.backend {
        Backend::Cpu => Ok((
            registry::broad_phase(&options.method, Backend::Cpu, None)?,
            "cpu".into(),
        )),
        Backend::Gpu => {
            let gpu_options = crate::run::gpu::with_env(GpuOptions {
                max_binding_bytes: options.max_binding_bytes,
                ..Default::default()
            })?;
            let adapter = match &options.adapter {
                Some(a) => a.clone(),
                None => {
                    let count = sweepfan::gpu::list_adapters(&gpu_options).len();
                    if count == 0 {
                        return Err(Error::NoAdapter(
                            "no GPU adapter on this rank's machine (install a Vulkan driver, or \
                             run --backend cpu)"
                                .into(),
                        ));
                    }
                    (rank % count).to_string()
                }
            };
            let ctx = Arc::new(GpuContext::new(&GpuOptions {
                adapter: Some(adapter),
                ..gpu_options
            })?);
            let device = crate::run::gpu::device_label(&ctx);
            Ok((
                registry::broad_phase(&options.method, Backend::Gpu, Some(&ctx))?,
                device,
            ))
        }
    }
}
