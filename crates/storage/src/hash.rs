//! The hasher of the engine's internal maps: the buffer pool's page table and the trees'
//! latches. (The lock table, busier still, packs its
//! resources' ids into fewer words itself and finishes them with the same [`fmix64`].)
//!
//! They are looked up on every page fetch, tree operation and lock, under a mutex, so the hash
//! is on the hot path of every insert. Their keys are a few small integers chosen by the engine
//! (page ids, transaction ids, lock resources), not by a user, so there is nothing to defend
//! against hash flooding and SipHash (std's default) buys nothing. It need not be stable, only
//! quick, so it is a multiply-rotate step per integer (FxHash's) finished with a full avalanche
//! (MurmurHash3's `fmix64`): `HashMap` takes bucket bits from the low end of the hash and tag
//! bits from the top seven, and both must vary.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::page::PageId;

/// A map keyed by page id, with [`FastHasher`].
pub(crate) type PageMap<V> = HashMap<PageId, V, FastBuild>;

/// MurmurHash3's 64-bit finalizer: every input bit flips about half the output bits.
pub fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The engine's table hasher (see the module doc).
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

/// Builds [`FastHasher`]s for the engine's maps.
pub type FastBuild = BuildHasherDefault<FastHasher>;

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        fmix64(self.0)
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn consecutive_ids_spread_over_buckets_and_tags() {
        let build = FastBuild::default();
        let hashes: Vec<u64> = (0..4096u32).map(|id| build.hash_one(id)).collect();
        let low: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 0xfff).collect();
        let top: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(low.len() > 2048, "only {} distinct low 12-bit patterns", low.len());
        assert_eq!(top.len(), 128, "tag bits do not vary");
    }
}
