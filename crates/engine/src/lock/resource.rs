//! Lockable resources and the hashing the lock table uses.
//!
//! Two hashes serve it. [`fnv1a`], here, is the *stable* one: it turns key bytes into the
//! 64-bit value a KEY resource carries, so the same key always names the same lock, across
//! runs and builds. The *table* hash, which picks a resource's shard and bucket in the lock
//! table, need not be stable, only quick: it is computed in `manager/table.rs` from the
//! resource's ids and finished with [`walden_storage::hash::fmix64`].

use std::fmt;
use std::hash::Hash;

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
    /// An application lock (`sp_getapplock`): SQL Server's APPLICATION resource, named by a
    /// stable hash of the application's resource name, compared as bytes.
    Application {
        /// The database id.
        db: u32,
        /// The stable hash of the name ([`Resource::application`]).
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

    /// The KEY resource past the last key of index `index` of table `object`: what a
    /// SERIALIZABLE range that runs to the end of the index locks as its next key, and what
    /// an insert after the last key tests, as SQL Server's end-of-index key
    /// (`resource_description` `(ffffffffffff)`). Its hash is all ones; a real key hashing
    /// there would share its lock, which costs concurrency, never correctness.
    pub fn key_end(db: u32, object: u32, index: u32) -> Resource {
        Resource::Key { db, object, index, hash: END_OF_INDEX }
    }

    /// The APPLICATION resource `sp_getapplock` locks for `name` in database `db`. Like SQL
    /// Server's, the name is case-sensitive: its bytes are hashed as they are.
    pub fn application(db: u32, name: &str) -> Resource {
        Resource::Application { db, hash: fnv1a(name.as_bytes()) }
    }

    /// The `sys.dm_tran_locks.resource_type` name. Internal resources show as METADATA, the
    /// type SQL Server uses for locks on catalog entities.
    pub fn type_name(&self) -> &'static str {
        match self {
            Resource::Database(_) => "DATABASE",
            Resource::Object { .. } => "OBJECT",
            Resource::Key { .. } => "KEY",
            Resource::Application { .. } => "APPLICATION",
            Resource::Other { .. } => "METADATA",
        }
    }

    /// The database the resource belongs to.
    pub fn database(&self) -> u32 {
        match *self {
            Resource::Database(db)
            | Resource::Object { db, .. }
            | Resource::Key { db, .. }
            | Resource::Application { db, .. }
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
            Resource::Application { db, hash } => write!(f, "APPLICATION: {db}:({hash:016x})"),
            Resource::Other { db, name } => write!(f, "METADATA: {db}:{name}"),
        }
    }
}

/// The hash of [`Resource::key_end`].
pub const END_OF_INDEX: u64 = u64::MAX;

/// 64-bit FNV-1a: stable across runs, platforms and Rust versions, which `std`'s hashers are
/// not promised to be.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}
