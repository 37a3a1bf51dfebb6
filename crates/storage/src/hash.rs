//! The hasher of the maps keyed by page id (the buffer pool's page table, the trees' latches).
//!
//! Those maps are looked up on every page fetch and every tree operation, under a mutex, so
//! the hash is on the hot path of every insert. A page id is a small integer chosen by the
//! allocator, not by a user, so there is nothing to defend against hash flooding and SipHash
//! (std's default) buys nothing. `HashMap` takes bucket bits from the low end of the hash and
//! tag bits from the top seven, so the hash must spread the id into both: a multiply by an odd
//! constant (a bijection, so distinct ids never collide) moves low bits up, and folding the
//! high half back down mixes the top bits into the bucket bits.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::page::PageId;

/// A map keyed by page id, with [`PageIdHasher`].
pub(crate) type PageMap<V> = HashMap<PageId, V, BuildHasherDefault<PageIdHasher>>;

/// The hasher of [`PageMap`]: see the module docs.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PageIdHasher(u64);

impl Hasher for PageIdHasher {
    fn finish(&self) -> u64 {
        let h = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u32` is used for page ids; this keeps any other key correct.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 << 32) ^ u64::from(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn consecutive_ids_spread_over_buckets_and_tags() {
        let build = BuildHasherDefault::<PageIdHasher>::default();
        let hashes: Vec<u64> = (0..4096u32).map(|id| build.hash_one(id)).collect();
        let low: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 0xfff).collect();
        let top: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(low.len() > 2048, "only {} distinct low 12-bit patterns", low.len());
        assert_eq!(top.len(), 128, "tag bits do not vary");
    }
}
