//! The few collectives the distributed broad phase needs, over MPI's world communicator
//! (docs/design.md §2.11): an all-to-all of 32-bit words in rounds (MPI counts are 32-bit),
//! sums, maxima, gathers, and the agreement on failure that ends every rank together.

use mpi::Count;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use sweepfan::error::{Error, Result};

/// Most words one all-to-all round moves into one rank, over all its sources: the receive
/// buffer's offsets must fit MPI's 32-bit counts.
/// 2^28 words (1 GiB): under the 2 GiB messages some MPI libraries mishandle.
const ROUND_WORDS: u64 = 1 << 28;

/// The world communicator, with the bytes this rank has sent to and received from others.
pub struct Comm {
    world: SimpleCommunicator,
    pub rank: usize,
    pub size: usize,
    /// This rank's index among the ranks sharing its machine.
    pub local_rank: usize,
    /// Bytes sent to other ranks (not to itself) by [`Comm::exchange`], since the last
    /// [`Comm::take_traffic`].
    sent: u64,
    received: u64,
}

impl Comm {
    pub fn new(world: SimpleCommunicator) -> Comm {
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        let local_rank = world.split_shared(world.rank()).rank() as usize;
        Comm {
            world,
            rank,
            size,
            local_rank,
            sent: 0,
            received: 0,
        }
    }

    /// `(sent, received)` bytes since the last call, and zero them.
    pub fn take_traffic(&mut self) -> (u64, u64) {
        let t = (self.sent, self.received);
        (self.sent, self.received) = (0, 0);
        t
    }

    /// Sends `to[r]` to rank `r` for every `r`; returns what every rank sent here, in rank
    /// order. Any length: lists past MPI's 32-bit counts go in rounds.
    pub fn exchange(&mut self, to: &[Vec<u32>]) -> Vec<u32> {
        let recv_len = self.incoming(to);
        self.exchange_known(to, &recv_len)
    }

    /// [`Comm::exchange`] where every rank first weighs the words coming to it with `admit`:
    /// where one refuses (what arrives would not fit its memory), every rank returns the same
    /// error before anything is received (no rank allocates what it cannot hold, none waits
    /// alone in the exchange).
    pub fn exchange_admitted(
        &mut self,
        to: &[Vec<u32>],
        admit: impl FnOnce(u64) -> Result<()>,
    ) -> Result<Vec<u32>> {
        let recv_len = self.incoming(to);
        self.agree(admit(recv_len.iter().sum()))?;
        Ok(self.exchange_known(to, &recv_len))
    }

    /// The words each rank sends here (the lengths exchanged, the traffic counted).
    fn incoming(&mut self, to: &[Vec<u32>]) -> Vec<u64> {
        debug_assert_eq!(to.len(), self.size);
        let send_len: Vec<u64> = to.iter().map(|v| v.len() as u64).collect();
        let mut recv_len = vec![0u64; self.size];
        self.world.all_to_all_into(&send_len[..], &mut recv_len[..]);
        for r in 0..self.size {
            if r != self.rank {
                self.sent += 4 * send_len[r];
                self.received += 4 * recv_len[r];
            }
        }
        recv_len
    }

    /// [`Comm::exchange`] once the lengths are known.
    fn exchange_known(&mut self, to: &[Vec<u32>], recv_len: &[u64]) -> Vec<u32> {
        let send_len: Vec<u64> = to.iter().map(|v| v.len() as u64).collect();
        // Each source gets an equal share of a round's receive buffer.
        let share = (ROUND_WORDS / self.size as u64).max(1);
        let longest = send_len.iter().chain(recv_len).copied().max().unwrap_or(0);
        let rounds = self.max_u64(longest.div_ceil(share)).max(1);
        let total: u64 = recv_len.iter().sum();
        let mut out = vec![0u32; total as usize];
        // Where each source's words go in `out`.
        let mut at: Vec<usize> = recv_len
            .iter()
            .scan(0usize, |s, &l| {
                let here = *s;
                *s += l as usize;
                Some(here)
            })
            .collect();
        for round in 0..rounds {
            let piece = |len: u64| {
                let lo = (round * share).min(len);
                lo as usize..((round + 1) * share).min(len) as usize
            };
            let mut send = Vec::new();
            let mut send_counts = Vec::with_capacity(self.size);
            for (r, list) in to.iter().enumerate() {
                let p = piece(send_len[r]);
                send_counts.push(p.len() as Count);
                send.extend_from_slice(&list[p]);
            }
            let recv_counts: Vec<Count> =
                recv_len.iter().map(|&l| piece(l).len() as Count).collect();
            let mut recv = vec![0u32; recv_counts.iter().map(|&c| c as usize).sum()];
            {
                let send_displs = displacements(&send_counts);
                let recv_displs = displacements(&recv_counts);
                let s = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
                let mut r = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
                self.world.all_to_all_varcount_into(&s, &mut r);
            }
            let mut from = 0usize;
            for (r, &c) in recv_counts.iter().enumerate() {
                let c = c as usize;
                out[at[r]..at[r] + c].copy_from_slice(&recv[from..from + c]);
                at[r] += c;
                from += c;
            }
        }
        out
    }

    /// Every rank's `words`, concatenated in rank order, on every rank.
    pub fn all_gather(&mut self, words: &[u32]) -> Vec<u32> {
        let to = vec![words.to_vec(); self.size];
        let (sent, received) = (self.sent, self.received);
        let out = self.exchange(&to);
        // Gathers are bookkeeping, not the exchange the model counts.
        (self.sent, self.received) = (sent, received);
        out
    }

    /// Every rank's `words` on rank 0 (empty elsewhere), in rank order.
    pub fn gather_to_root(&mut self, words: &[u32]) -> Vec<u32> {
        let mut to = vec![Vec::new(); self.size];
        to[0] = words.to_vec();
        let (sent, received) = (self.sent, self.received);
        let out = self.exchange(&to);
        (self.sent, self.received) = (sent, received);
        out
    }

    /// Element-wise sums over ranks.
    pub fn sum_u64(&self, values: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; values.len()];
        self.world
            .all_reduce_into(values, &mut out[..], SystemOperation::sum());
        out
    }

    /// Element-wise maxima over ranks.
    pub fn max_u32s(&self, values: &[u32]) -> Vec<u32> {
        let mut out = vec![0u32; values.len()];
        self.world
            .all_reduce_into(values, &mut out[..], SystemOperation::max());
        out
    }

    /// Every rank's text on rank 0, in rank order (empty elsewhere).
    pub fn gather_texts(&mut self, text: &str) -> Vec<String> {
        let gathered = self.gather_to_root(&words_of(text.as_bytes()));
        texts_of(&gathered)
    }

    pub fn max_u64(&self, value: u64) -> u64 {
        let mut out = 0u64;
        self.world
            .all_reduce_into(&value, &mut out, SystemOperation::max());
        out
    }

    pub fn max_f64(&self, value: f64) -> f64 {
        let mut out = 0f64;
        self.world
            .all_reduce_into(&value, &mut out, SystemOperation::max());
        out
    }

    /// One value from every rank, in rank order.
    pub fn all_gather_u64(&self, value: u64) -> Vec<u64> {
        let mut out = vec![0u64; self.size];
        self.world.all_gather_into(&value, &mut out[..]);
        out
    }

    pub fn all_gather_f64(&self, value: f64) -> Vec<f64> {
        let mut out = vec![0f64; self.size];
        self.world.all_gather_into(&value, &mut out[..]);
        out
    }

    /// The sum of `value` over the ranks before this one.
    pub fn exclusive_prefix(&self, value: u64) -> u64 {
        self.all_gather_u64(value)[..self.rank].iter().sum()
    }

    /// [`Comm::agree`], reporting only the lowest failing rank's error: for a problem that one
    /// process reading the whole input reports once (the file's first bad line, the scene's
    /// first bad object), whose later occurrences on other ranks would repeat it.
    pub fn agree_first<T>(&mut self, local: Result<T>) -> Result<T> {
        self.agreed(local, true)
    }

    /// Every rank's outcome of a step that may fail, agreed: `Ok` where every rank succeeded,
    /// otherwise the same error on every rank, naming each rank that failed and why (the
    /// others' messages reach rank 0, which reports them). No rank goes on alone to wait in a
    /// collective the failed one never joins.
    pub fn agree<T>(&mut self, local: Result<T>) -> Result<T> {
        self.agreed(local, false)
    }

    /// [`Comm::agree`], or with `first_only` [`Comm::agree_first`].
    fn agreed<T>(&mut self, local: Result<T>, first_only: bool) -> Result<T> {
        let failed = self.all_gather_u64(local.is_err() as u64);
        let count = failed.iter().sum::<u64>();
        if count == 0 {
            return local;
        }
        let reported = !first_only || failed.iter().position(|&f| f == 1) == Some(self.rank);
        let message = match &local {
            Err(e) if reported => format!("rank {} of {}: {e}", self.rank, self.size),
            _ => String::new(),
        };
        let messages: Vec<String> = self
            .gather_texts(&message)
            .into_iter()
            .filter(|m| !m.is_empty())
            .collect();
        let failed: Vec<u32> = failed
            .iter()
            .enumerate()
            .filter(|(_, f)| **f == 1)
            .map(|(r, _)| r as u32)
            .collect();
        // A rank Ctrl-C stopped ends as an interrupted run (`sweepfan: interrupted`, the
        // signal's status), not as a failed one, once every rank has agreed.
        if crate::run::interrupted() {
            return Err(Error::Interrupted);
        }
        let message = if self.rank == 0 {
            messages.join("; ")
        } else {
            let names: Vec<String> = failed.iter().map(u32::to_string).collect();
            format!(
                "rank {} of {} ended: rank {} failed (rank 0 reports why)",
                self.rank,
                self.size,
                names.join(", ")
            )
        };
        Err(Error::Rank { failed, message })
    }
}

/// Offsets of consecutive lists of the given lengths.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0 as Count, |s, &c| {
            let here = *s;
            *s += c;
            Some(here)
        })
        .collect()
}

/// Text as words: its length, then its bytes padded to whole words.
fn words_of(bytes: &[u8]) -> Vec<u32> {
    let mut out = vec![bytes.len() as u32];
    out.extend(bytes.chunks(4).map(|c| {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        u32::from_le_bytes(w)
    }));
    out
}

/// The texts [`words_of`] made, one after another.
fn texts_of(words: &[u32]) -> Vec<String> {
    let mut texts = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let len = words[at] as usize;
        let bytes: Vec<u8> = words[at + 1..at + 1 + len.div_ceil(4)]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .take(len)
            .collect();
        at += 1 + len.div_ceil(4);
        texts.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    texts
}
