//! Lockable resources and the hashing the lock table uses.
//!
//! Two hashes live here. [`fnv1a`] is the *stable* one: it turns key bytes into the 64-bit
//! value a KEY resource carries, so the same key always names the same lock, across runs and
//! builds. [`FastHasher`] is the *table* hash: it feeds the lock table's and the owner table's
//! `HashMap`s and picks shards. It need not be stable, only quick on the few integers a
//! resource is made of, so it is a multiply-rotate step per integer (FxHash's) finished with
//! a full avalanche (MurmurHash3's `fmix64`): `HashMap` takes bucket bits from the low end and
//! tag bits from the high end, and both must vary.

use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// Something a transaction can lock. The engine's lock hierarchy is database, object (a
/// table), key (a row); see `docs/locking.md`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Resource {
    /// A database: SQL Server's DATABASE lock (every session holds S on its database).
    Database(u32),
    /// A table: SQL Server's OBJECT lock.
    Object {
        /// The database id.
        db: u32,
        /// The object id.
        object: u32,
    },
    /// A row, named by its key in one index: SQL Server's KEY lock.
    Key {
        /// The database id.
        db: u32,
        /// The object id of the table.
        object: u32,
        /// The index id within the table.
        index: u32,
        /// The stable hash of the key bytes ([`Resource::key`]).
        hash: u64,
    },
    /// An internal resource (sequence allocation and the like); `name` is chosen by its user.
    Other {
        /// The database id.
        db: u32,
        /// The resource's name within the database.
        name: u64,
    },
}

impl Resource {
    /// A KEY resource for `key_bytes` in index `index` of table `object`.
    ///
    /// Like SQL Server's, the lock names a hash of the key, not the key: two keys can collide
    /// and then share a lock. That costs concurrency, never correctness, and with 64 bits it
    /// does not happen in practice.
    pub fn key(db: u32, object: u32, index: u32, key_bytes: &[u8]) -> Resource {
        Resource::Key { db, object, index, hash: fnv1a(key_bytes) }
    }

    /// The `sys.dm_tran_locks.resource_type` name. Internal resources show as METADATA, the
    /// type SQL Server uses for locks on catalog entities.
    pub fn type_name(&self) -> &'static str {
        match self {
            Resource::Database(_) => "DATABASE",
            Resource::Object { .. } => "OBJECT",
            Resource::Key { .. } => "KEY",
            Resource::Other { .. } => "METADATA",
        }
    }

    /// The database the resource belongs to.
    pub fn database(&self) -> u32 {
        match *self {
            Resource::Database(db)
            | Resource::Object { db, .. }
            | Resource::Key { db, .. }
            | Resource::Other { db, .. } => db,
        }
    }
}

impl fmt::Display for Resource {
    /// `TYPE: db:object:index (hash)`, after `sys.dm_tran_locks.resource_description`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Database(db) => write!(f, "DATABASE: {db}"),
            Resource::Object { db, object } => write!(f, "OBJECT: {db}:{object}"),
            Resource::Key { db, object, index, hash } => {
                write!(f, "KEY: {db}:{object}:{index} ({hash:016x})")
            }
            Resource::Other { db, name } => write!(f, "METADATA: {db}:{name}"),
        }
    }
}

/// 64-bit FNV-1a: stable across runs, platforms and Rust versions, which `std`'s hashers are
/// not promised to be.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

/// MurmurHash3's 64-bit finalizer: every input bit flips about half the output bits.
pub(crate) fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The lock table's hasher (see the module doc).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

/// Builds [`FastHasher`]s for the lock manager's maps.
pub(crate) type FastBuild = BuildHasherDefault<FastHasher>;

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

/// The table hash of one value.
pub(crate) fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = FastHasher::default();
    value.hash(&mut h);
    h.finish()
}
