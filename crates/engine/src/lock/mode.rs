//! Lock modes: SQL Server's compatibility matrix, the "covers" order and the join used for
//! conversions.
//!
//! The six modes form a lattice under "covers" (holding `a` already grants `b`):
//!
//! ```text
//!            X
//!          /   \
//!        SIX    U
//!       /   \  /
//!     IX     S
//!       \   /
//!        IS
//! ```
//!
//! Compatibility is anti-monotone in that order: a stronger held mode is compatible with no
//! more modes than a weaker one. That is what makes a conversion to the join safe to check
//! against the other owners' modes one by one.

use std::fmt;

/// A lock mode, with SQL Server's names and meanings.
///
/// The derived `Ord` is declaration order, for sorting only; the lock order that matters is
/// [`LockMode::covers`].
// The variant names are SQL Server's (`sys.dm_tran_locks.request_mode`), acronyms included.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockMode {
    /// Intent shared: the owner reads (and S-locks) parts of the resource.
    IS,
    /// Intent exclusive: the owner changes (and X-locks) parts of the resource.
    IX,
    /// Shared: the owner reads the whole resource.
    S,
    /// Shared with intent exclusive: reads all of it, changes parts of it.
    SIX,
    /// Update: read now, maybe change later. Only one owner at a time, so two readers that
    /// both intend to write do not deadlock converting S to X.
    U,
    /// Exclusive.
    X,
}

use LockMode::{IS, IX, S, SIX, U, X};

/// SQL Server's compatibility matrix, rows and columns in declaration order
/// (IS, IX, S, SIX, U, X). Symmetric.
const COMPATIBLE: [[bool; 6]; 6] = [
    //  IS     IX     S      SIX    U      X
    [true, true, true, true, true, false],      // IS
    [true, true, false, false, false, false],   // IX
    [true, false, true, false, true, false],    // S
    [true, false, false, false, false, false],  // SIX
    [true, false, true, false, false, false],   // U
    [false, false, false, false, false, false], // X
];

/// `COVERS[held][wanted]`: holding `held` already grants `wanted`.
const COVERS: [[bool; 6]; 6] = [
    //  IS     IX     S      SIX    U      X
    [true, false, false, false, false, false], // IS
    [true, true, false, false, false, false],  // IX
    [true, false, true, false, false, false],  // S
    [true, true, true, true, false, false],    // SIX
    [true, false, true, false, true, false],   // U
    [true, true, true, true, true, true],      // X
];

impl LockMode {
    /// Every mode, in declaration order.
    pub const ALL: [LockMode; 6] = [IS, IX, S, SIX, U, X];

    fn index(self) -> usize {
        match self {
            IS => 0,
            IX => 1,
            S => 2,
            SIX => 3,
            U => 4,
            X => 5,
        }
    }

    /// The name `sys.dm_tran_locks.request_mode` shows.
    pub fn name(self) -> &'static str {
        match self {
            IS => "IS",
            IX => "IX",
            S => "S",
            SIX => "SIX",
            U => "U",
            X => "X",
        }
    }

    /// Whether two owners may hold `self` and `other` on one resource at once.
    pub fn compatible(self, other: LockMode) -> bool {
        COMPATIBLE[self.index()][other.index()]
    }

    /// Whether holding `self` already grants `wanted`.
    pub fn covers(self, wanted: LockMode) -> bool {
        COVERS[self.index()][wanted.index()]
    }

    /// The weakest mode covering both: what a conversion asks for. S and IX join to SIX; U
    /// with IX or SIX joins to X (SQL Server would use its UIX mode, which Walden does not
    /// have; X is the next mode up and only costs concurrency).
    pub fn join(self, other: LockMode) -> LockMode {
        if self.covers(other) {
            self
        } else if other.covers(self) {
            other
        } else if matches!((self, other), (S, IX) | (IX, S)) {
            SIX
        } else {
            X
        }
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
