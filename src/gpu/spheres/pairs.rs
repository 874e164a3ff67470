//! Pair emission: one thread per object walks its candidates, counts sphere tests and touching
//! pairs into u64 totals (`counters[0..4]`), and, when storing, appends each touching pair at an
//! atomic slot. Appends past the capacity are counted but not written; the caller compares the
//! total with the capacity and re-runs with a larger list, so no pair is lost.

use crate::error::Result;
use crate::gpu::frame::{FLAG_STORE, FLAG_WORLDS, Params, Recorder};

/// Which walk `sweep` does (`SWEEP_*` in `shaders/spheres/pairs.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Sweep {
    /// Forward while lo_j <= hi_i on a given axis (x/xy/xyz, last axis).
    Axis = 0,
    /// Same on the axis of largest spread, boxes must also overlap on the other two axes.
    Sap = 1,
    /// Forward while |c_j| - |c_i| <= 2 r_max + ORIGIN_KEY_SLACK |c_j|.
    OriginDistance = 2,
    /// Many worlds only: every later object of the world.
    All = 3,
}

// With subgroups, the walks end per subgroup, not at a workgroup barrier (docs/design.md
// §9.17): the module is `ctx.shader_file`'s.
crate::gpu::context::entry_pipelines! {
    pub struct PairKernels = "spheres/pairs.wgsl" [
        brute, sweep, world_origin_sweep, grid, grid_giants, owner, owner_shared
    ]
}

/// Where pairs go: the shared counters and (when `store`) a list of `capacity` pairs.
pub struct PairSink<'a> {
    pub counters: &'a wgpu::Buffer,
    pub ext: &'a wgpu::Buffer,
    pub pairs: &'a wgpu::Buffer,
    pub capacity: u32,
    pub store: bool,
}

impl<'a> PairSink<'a> {
    /// The bindings every sorted walk uses, plus one kernel-specific extra.
    fn with_order(
        &self,
        order: &SortedOrder<'a>,
        extra: Option<(u32, &'a wgpu::Buffer)>,
    ) -> Vec<(u32, &'a wgpu::Buffer)> {
        let mut buffers = vec![
            (1, self.counters),
            (2, self.ext),
            (4, order.sorted),
            (5, order.keys),
            (6, order.values),
            (7, self.pairs),
        ];
        buffers.extend(extra);
        buffers
    }

    /// [`Self::params`] for a batch of worlds when `shared_from` is given (`FLAG_WORLDS`, the
    /// first sorted position, or rank, of the shared objects), else for one world.
    fn world_params(&self, n: u32, shared_from: Option<u32>) -> Params {
        let base = self.params(n);
        Params {
            flags: base.flags
                | if shared_from.is_some() {
                    FLAG_WORLDS
                } else {
                    0
                },
            shared_from: shared_from.unwrap_or(u32::MAX),
            ..base
        }
    }

    fn params(&self, n: u32) -> Params {
        Params {
            n,
            cap: self.capacity,
            flags: if self.store { FLAG_STORE } else { 0 },
            ..Default::default()
        }
    }
}

impl PairKernels {
    /// All n(n-1)/2 pairs of `spheres` (original order).
    pub fn brute(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        spheres: &wgpu::Buffer,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        let buffers = [(1, sink.counters), (3, spheres), (7, sink.pairs)];
        rec.launch(
            &self.brute,
            sink.params(n),
            &buffers,
            (n as u64).div_ceil(2),
        )
    }

    /// A forward sweep over the sorted order ([`Sweep::Sap`], [`Sweep::Axis`] on `axis`,
    /// [`Sweep::OriginDistance`] in one world (many worlds: [`Self::world_origin_sweep`]) or,
    /// many worlds only, [`Sweep::All`]). Many worlds
    /// (docs/design.md §2.13; `shared_from`: the first sorted position of the shared objects):
    /// the order is (world, lo, index), `order.keys` the world ranks; each walk ends at its
    /// world's end, and every object before `shared_from` then walks the shared run.
    pub fn sweep(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        (mode, axis): (Sweep, u32),
        shared_from: Option<u32>,
        order: &SortedOrder<'_>,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        let params = Params {
            mode: mode as u32,
            axis,
            ..sink.world_params(n, shared_from)
        };
        let buffers = sink.with_order(order, None);
        rec.launch(&self.sweep, params, &buffers, n as u64)
    }

    /// Many worlds under origin_distance (docs/design.md §2.13): the forward sweep over the
    /// (world, |c|, index) order, `order.keys` the world ranks and `origins` each sorted
    /// position's ordered `|c|` (`Keys::origin_of_sorted`); each walk ends at its world's end or
    /// where `D_q - D_p > 2 r_max + 1e-5 D_q`, then every object before `shared_from` walks the
    /// shared run.
    pub fn world_origin_sweep(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        shared_from: u32,
        order: &SortedOrder<'_>,
        origins: &wgpu::Buffer,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        let params = Params {
            mode: Sweep::OriginDistance as u32,
            ..sink.world_params(n, Some(shared_from))
        };
        let buffers = sink.with_order(order, Some((8, origins)));
        rec.launch(&self.world_origin_sweep, params, &buffers, n as u64)
    }

    /// Grid neighbour walk: `order.keys` are sorted bucket ids, `starts` the bucket starts,
    /// `occupied` the occupancy map `make_keys` set (docs/design.md §9.9). With `world_rank` (a
    /// batch of worlds, docs/design.md §2.13: each object's rank by index, and the shared
    /// objects' rank, `u32::MAX` for none) each key holds its object's world rank above the
    /// bucket as far as it fits, buckets hash the cell with the world, a walk meets its own world
    /// only (the candidate's rank read by index, from `starts` past its `buckets` words, where
    /// the caller copied the ranks: eight storage buffers, WebGPU's guaranteed number) and the
    /// shared objects walk nothing (grid_giants).
    #[allow(clippy::too_many_arguments)]
    pub fn grid(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        buckets: u32,
        world_rank: Option<(&wgpu::Buffer, u32)>,
        order: &SortedOrder<'_>,
        starts: &wgpu::Buffer,
        occupied: &wgpu::Buffer,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        let params = Params {
            buckets,
            ..sink.world_params(n, world_rank.map(|(_, shared)| shared))
        };
        let mut buffers = sink.with_order(order, Some((8, starts)));
        buffers.push((10, occupied));
        rec.launch(&self.grid, params, &buffers, n as u64)
    }

    /// The grid's giants (docs/design.md §2.7): every object of `spheres` (original order)
    /// against the giants `make_keys` listed in `sink.ext`, each object's cell computed from
    /// its sphere. Returns at once in every workgroup when there are none. With `world_rank`
    /// (a batch of worlds: the ranks and the shared objects' rank) the list holds the shared
    /// objects too, and two objects meet when of one world or either is shared.
    pub fn grid_giants(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        spheres: &wgpu::Buffer,
        world_rank: Option<(&wgpu::Buffer, u32)>,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        let buffers = [
            (1, sink.counters),
            (2, sink.ext),
            (3, spheres),
            (7, sink.pairs),
            // Read only with FLAG_WORLDS; any buffer otherwise.
            (11, world_rank.map_or(spheres, |(ranks, _)| ranks)),
        ];
        let params = sink.world_params(n, world_rank.map(|(_, shared)| shared));
        rec.launch(&self.grid_giants, params, &buffers, n as u64)
    }

    /// min_axis owners of `axis`: `order` is that axis's sorted lo keys, indices and spheres,
    /// `choice` the (m, axis) choices in the same order. Many worlds (`shared_from`: the first
    /// sorted position of the shared objects): the order is (world, lo, index), the keys world
    /// ranks (docs/design.md §2.13).
    #[allow(clippy::too_many_arguments)]
    pub fn owner(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        axis: u32,
        order: &SortedOrder<'_>,
        choice: &wgpu::Buffer,
        shared_from: Option<u32>,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        let params = Params {
            axis,
            ..sink.world_params(n, shared_from)
        };
        let buffers = sink.with_order(order, Some((9, choice)));
        rec.launch(&self.owner, params, &buffers, n as u64)
    }

    /// Many worlds under min_axis, after the owner walks: every object before `shared_from`
    /// (in `order`, any axis's) tests the shared run whole.
    pub fn owner_shared(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        shared_from: u32,
        order: &SortedOrder<'_>,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        let params = sink.world_params(n, Some(shared_from));
        let buffers = [
            (1, sink.counters),
            (4, order.sorted),
            (6, order.values),
            (7, sink.pairs),
        ];
        rec.launch(&self.owner_shared, params, &buffers, n as u64)
    }
}

/// Objects in sorted order: the gathered spheres, their sort keys and original indices.
#[derive(Clone, Copy)]
pub struct SortedOrder<'a> {
    pub sorted: &'a wgpu::Buffer,
    pub keys: &'a wgpu::Buffer,
    pub values: &'a wgpu::Buffer,
}
