//! Sort keys shared by the CPU methods: f32 values mapped to order-preserving u32 bits, packed
//! with the object index into one u64 so a plain integer sort gives the (value, index) order the
//! method semantics require (ties broken by index, hence deterministic).

use rayon::slice::ParallelSliceMut;

pub use crate::broadphase::keys::ordered_bits;

/// `(value, index)` packed so that integer order is lexicographic order.
#[inline(always)]
pub fn pack(value: f32, index: u32) -> u64 {
    (u64::from(ordered_bits(value)) << 32) | u64::from(index)
}

/// The object index stored in the low half of a packed key.
#[inline(always)]
pub fn index_of(key: u64) -> u32 {
    key as u32
}

/// Below this many keys a parallel sort costs more in coordination than it saves.
const PARALLEL_SORT_MIN: usize = 1 << 14;

/// Sorts packed keys ascending (keys are unique, so unstable order is the order).
pub fn sort_keys(keys: &mut [u64]) {
    if keys.len() >= PARALLEL_SORT_MIN {
        keys.par_sort_unstable();
    } else {
        keys.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_bits_follow_float_order() {
        let values = [
            f32::NEG_INFINITY,
            -1e30,
            -2.5,
            -1.0,
            -f32::MIN_POSITIVE,
            0.0,
            f32::MIN_POSITIVE,
            1.0,
            2.5,
            1e30,
            f32::INFINITY,
        ];
        for w in values.windows(2) {
            assert!(ordered_bits(w[0]) < ordered_bits(w[1]), "{} {}", w[0], w[1]);
        }
        assert_eq!(ordered_bits(-0.0), ordered_bits(0.0));
    }

    #[test]
    fn packed_keys_sort_by_value_then_index() {
        let mut keys = vec![
            pack(1.0, 0),
            pack(-1.0, 5),
            pack(1.0, 2),
            pack(-0.0, 9),
            pack(0.0, 1),
        ];
        sort_keys(&mut keys);
        let order: Vec<u32> = keys.iter().map(|&k| index_of(k)).collect();
        assert_eq!(order, [5, 1, 9, 0, 2]);
    }
}
