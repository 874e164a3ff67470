//! A rank's objects and their wire forms (docs/design.md §2.11): a body (an object a rank
//! owns and moves: sphere, velocity, global index) is 9 words; a ghost (a copy another rank
//! reads: sphere and index) 6.

use glam::Vec3;
use sweepfan::geom::sphere::Sphere;

/// Words of a body on the wire: centre, radius, velocity, global index (low, high).
pub const BODY_WORDS: usize = 9;
/// Words of a ghost on the wire: centre, radius, global index (low, high).
pub const GHOST_WORDS: usize = 6;

/// Objects a rank owns, as parallel lists (the layout `geom::motion::step_in_cube` moves).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bodies {
    pub spheres: Vec<Sphere>,
    pub velocities: Vec<Vec3>,
    pub ids: Vec<u64>,
}

impl Bodies {
    pub fn len(&self) -> usize {
        self.spheres.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spheres.is_empty()
    }

    pub fn push(&mut self, sphere: Sphere, velocity: Vec3, id: u64) {
        self.spheres.push(sphere);
        self.velocities.push(velocity);
        self.ids.push(id);
    }

    /// Body `i` appended to `out` as `BODY_WORDS` words.
    pub fn write_body(&self, i: usize, out: &mut Vec<u32>) {
        let (s, v, id) = (self.spheres[i], self.velocities[i], self.ids[i]);
        out.extend_from_slice(&[
            s.center.x.to_bits(),
            s.center.y.to_bits(),
            s.center.z.to_bits(),
            s.radius.to_bits(),
            v.x.to_bits(),
            v.y.to_bits(),
            v.z.to_bits(),
            id as u32,
            (id >> 32) as u32,
        ]);
    }

    /// Body `i` appended to `out` as a ghost, `GHOST_WORDS` words.
    pub fn write_ghost(&self, i: usize, out: &mut Vec<u32>) {
        let (s, id) = (self.spheres[i], self.ids[i]);
        out.extend_from_slice(&[
            s.center.x.to_bits(),
            s.center.y.to_bits(),
            s.center.z.to_bits(),
            s.radius.to_bits(),
            id as u32,
            (id >> 32) as u32,
        ]);
    }

    /// Appends the bodies of `words` (whole bodies, as [`Bodies::write_body`] wrote them).
    pub fn extend_from_words(&mut self, words: &[u32]) {
        let f = f32::from_bits;
        for w in words.chunks_exact(BODY_WORDS) {
            self.push(
                Sphere::new(Vec3::new(f(w[0]), f(w[1]), f(w[2])), f(w[3])),
                Vec3::new(f(w[4]), f(w[5]), f(w[6])),
                w[7] as u64 | (w[8] as u64) << 32,
            );
        }
    }

    /// Keeps the bodies for which `keep(i)` holds, in order; the others are written to
    /// `out(i)`'s list, in order. Returns how many left.
    pub fn split_off_where(
        &mut self,
        mut keep: impl FnMut(usize) -> Option<usize>,
        out: &mut [Vec<u32>],
    ) -> u64 {
        let mut kept = Bodies::default();
        let mut left = 0u64;
        for i in 0..self.len() {
            match keep(i) {
                None => kept.push(self.spheres[i], self.velocities[i], self.ids[i]),
                Some(to) => {
                    self.write_body(i, &mut out[to]);
                    left += 1;
                }
            }
        }
        *self = kept;
        left
    }
}

/// The ghosts of `words` (as [`Bodies::write_ghost`] wrote them): spheres and global indices.
pub fn ghosts_from_words(words: &[u32], spheres: &mut Vec<Sphere>, ids: &mut Vec<u64>) {
    let f = f32::from_bits;
    for w in words.chunks_exact(GHOST_WORDS) {
        spheres.push(Sphere::new(Vec3::new(f(w[0]), f(w[1]), f(w[2])), f(w[3])));
        ids.push(w[4] as u64 | (w[5] as u64) << 32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_and_ghosts_round_trip_bit_for_bit() {
        let mut b = Bodies::default();
        b.push(
            Sphere::new(Vec3::new(-0.0, 1e-30, f32::MAX), 3.5),
            Vec3::new(0.25, -0.5, 1e-7),
            (7u64 << 32) | 9,
        );
        b.push(Sphere::new(Vec3::ONE, 0.0), Vec3::ZERO, u64::MAX);
        let mut words = Vec::new();
        (0..2).for_each(|i| b.write_body(i, &mut words));
        assert_eq!(words.len(), 2 * BODY_WORDS);
        let mut back = Bodies::default();
        back.extend_from_words(&words);
        assert_eq!(back.ids, b.ids);
        assert_eq!(back.velocities, b.velocities);
        assert!(
            back.spheres
                .iter()
                .zip(&b.spheres)
                .all(|(x, y)| x.center.to_array().map(f32::to_bits)
                    == y.center.to_array().map(f32::to_bits)
                    && x.radius == y.radius)
        );
        let mut ghost_words = Vec::new();
        b.write_ghost(0, &mut ghost_words);
        let (mut spheres, mut ids) = (Vec::new(), Vec::new());
        ghosts_from_words(&ghost_words, &mut spheres, &mut ids);
        assert_eq!((spheres[0].radius, ids[0]), (3.5, (7u64 << 32) | 9));
        // Splitting sends every other body away, keeping order on both sides.
        let mut out = vec![Vec::new(), Vec::new()];
        let left = b.split_off_where(|i| (i == 0).then_some(1), &mut out);
        assert_eq!((left, b.ids.clone()), (1, vec![u64::MAX]));
        assert_eq!(out[1], words[..BODY_WORDS]);
    }
}
