//! Lock modes: SQL Server's compatibility matrix, the "covers" order and the join used for
//! conversions.
//!
//! The six resource modes form a lattice under "covers" (holding `a` already grants `b`):
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
//! SQL Server's key-range modes (`RangeT-K`, taken on KEY resources under SERIALIZABLE) lock
//! two things at once: the *range* between the key and the key before it (part `T`: RangeS,
//! RangeI or RangeX) and the key itself (part `K`: one of the resource modes above, or N,
//! nothing). Walden models every mode as such a pair, a plain mode being the pair with no
//! range part:
//!
//! * two modes are compatible when their range parts are and their key parts are (N is
//!   compatible with everything; range parts: RangeS with RangeS, RangeI with RangeI, and
//!   none of RangeS, RangeI, RangeX with RangeX or with each other);
//! * `a` covers `b` when `a`'s range part covers `b`'s (`none < RangeS, RangeI < RangeX`)
//!   and `a`'s key part covers `b`'s;
//! * the join is the pair of joins (RangeS with RangeI joins to RangeX, as SQL Server's
//!   RangeI-N with RangeS-S converts to RangeX-S), rounded up to a mode SQL Server names
//!   where the pair has no name (RangeS-S with X: RangeX-X).
//!
//! Compatibility is anti-monotone in that order, in each part and so in the pair: a stronger
//! held mode is compatible with no more modes than a weaker one. That is what makes a
//! conversion to the join safe to check against the other owners' modes one by one, and why
//! the lock manager's rules (FIFO, conversions first, the waits-for graph) need nothing
//! special for range modes. The tables below are computed once, at compile time, from the
//! two small tables of the parts.

use std::fmt;

/// A lock mode, with SQL Server's names and meanings.
///
/// The derived `Ord` is declaration order, for sorting only; the lock order that matters is
/// [`LockMode::covers`].
// The variant names are SQL Server's (`sys.dm_tran_locks.request_mode`), acronyms included;
// a range mode's hyphen (RangeS-S) is left out of its variant's name.
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
    /// RangeS-S: a key read by a SERIALIZABLE scan, and the range below it (no key may be
    /// inserted there).
    RangeSS,
    /// RangeS-U: the same for a scan that may change the key.
    RangeSU,
    /// RangeI-N: the range below a key, tested before a key is inserted into it; the key
    /// itself is not locked.
    RangeIN,
    /// RangeI-S: RangeI-N held with S (a conversion only).
    RangeIS,
    /// RangeI-U: RangeI-N held with U (a conversion only).
    RangeIU,
    /// RangeI-X: RangeI-N held with X (a conversion only).
    RangeIX,
    /// RangeX-S: RangeI-N held with RangeS-S (a conversion only).
    RangeXS,
    /// RangeX-U: RangeI-N held with RangeS-U (a conversion only).
    RangeXU,
    /// RangeX-X: a key changed (deleted or updated) by a SERIALIZABLE transaction, and the
    /// range below it.
    RangeXX,
}

use LockMode::{
    RangeIN, RangeIS, RangeIU, RangeIX, RangeSS, RangeSU, RangeXS, RangeXU, RangeXX, IS, IX, S,
    SIX, U, X,
};

/// How many modes there are.
const MODES: usize = 15;

/// The range part of a mode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Range {
    /// A plain resource mode: no range.
    Not,
    /// RangeS: no key may be inserted into the range.
    Shared,
    /// RangeI: a key is being inserted into the range.
    Insert,
    /// RangeX: the range is the owner's alone.
    Exclusive,
}

/// Compatibility of range parts, in `Range` order: RangeS and RangeI each with themselves,
/// every part with none, nothing with RangeX.
const fn range_compatible(a: Range, b: Range) -> bool {
    matches!(
        (a, b),
        (Range::Not, _)
            | (_, Range::Not)
            | (Range::Shared, Range::Shared)
            | (Range::Insert, Range::Insert)
    )
}

/// Whether range part `a` covers `b`: none below RangeS and RangeI, both below RangeX.
const fn range_covers(a: Range, b: Range) -> bool {
    matches!((a, b), (_, Range::Not) | (Range::Exclusive, _))
        || matches!((a, b), (Range::Shared, Range::Shared) | (Range::Insert, Range::Insert))
}

const fn range_join(a: Range, b: Range) -> Range {
    if range_covers(a, b) {
        a
    } else if range_covers(b, a) {
        b
    } else {
        Range::Exclusive
    }
}

/// SQL Server's compatibility matrix of the six resource modes, rows and columns in
/// declaration order (IS, IX, S, SIX, U, X). Symmetric.
const BASE_COMPATIBLE: [[bool; 6]; 6] = [
    //  IS     IX     S      SIX    U      X
    [true, true, true, true, true, false],      // IS
    [true, true, false, false, false, false],   // IX
    [true, false, true, false, true, false],    // S
    [true, false, false, false, false, false],  // SIX
    [true, false, true, false, false, false],   // U
    [false, false, false, false, false, false], // X
];

/// `BASE_COVERS[held][wanted]`: holding resource mode `held` already grants `wanted`.
const BASE_COVERS: [[bool; 6]; 6] = [
    //  IS     IX     S      SIX    U      X
    [true, false, false, false, false, false], // IS
    [true, true, false, false, false, false],  // IX
    [true, false, true, false, false, false],  // S
    [true, true, true, true, false, false],    // SIX
    [true, false, true, false, true, false],   // U
    [true, true, true, true, true, true],      // X
];

/// The key part of a mode: one of the six resource modes (by index), or `NONE` (RangeI-N's N).
const NONE: usize = 6;

/// Each mode as its (range part, key part), in declaration order.
const PARTS: [(Range, usize); MODES] = [
    (Range::Not, 0),       // IS
    (Range::Not, 1),       // IX
    (Range::Not, 2),       // S
    (Range::Not, 3),       // SIX
    (Range::Not, 4),       // U
    (Range::Not, 5),       // X
    (Range::Shared, 2),    // RangeS-S
    (Range::Shared, 4),    // RangeS-U
    (Range::Insert, NONE), // RangeI-N
    (Range::Insert, 2),    // RangeI-S
    (Range::Insert, 4),    // RangeI-U
    (Range::Insert, 5),    // RangeI-X
    (Range::Exclusive, 2), // RangeX-S
    (Range::Exclusive, 4), // RangeX-U
    (Range::Exclusive, 5), // RangeX-X
];

const fn key_compatible(a: usize, b: usize) -> bool {
    a == NONE || b == NONE || BASE_COMPATIBLE[a][b]
}

const fn key_covers(a: usize, b: usize) -> bool {
    b == NONE || (a != NONE && BASE_COVERS[a][b])
}

const fn covers_at(a: usize, b: usize) -> bool {
    range_covers(PARTS[a].0, PARTS[b].0) && key_covers(PARTS[a].1, PARTS[b].1)
}

const fn build_compatible() -> [[bool; MODES]; MODES] {
    let mut table = [[false; MODES]; MODES];
    let mut a = 0;
    while a < MODES {
        let mut b = 0;
        while b < MODES {
            table[a][b] =
                range_compatible(PARTS[a].0, PARTS[b].0) && key_compatible(PARTS[a].1, PARTS[b].1);
            b += 1;
        }
        a += 1;
    }
    table
}

const fn build_covers() -> [[bool; MODES]; MODES] {
    let mut table = [[false; MODES]; MODES];
    let mut a = 0;
    while a < MODES {
        let mut b = 0;
        while b < MODES {
            table[a][b] = covers_at(a, b);
            b += 1;
        }
        a += 1;
    }
    table
}

/// The weakest mode covering both `a` and `b`: the join of the parts, or, where no mode has
/// exactly that pair, the weakest mode covering it. Of the resource modes, S with IX gives
/// SIX and U with IX or SIX gives X (SQL Server would use UIX, which Walden does not have;
/// X is the next mode up and only costs concurrency).
const fn join_at(a: usize, b: usize) -> usize {
    if covers_at(a, b) {
        return a;
    }
    if covers_at(b, a) {
        return b;
    }
    let range = range_join(PARTS[a].0, PARTS[b].0);
    let (ka, kb) = (PARTS[a].1, PARTS[b].1);
    // The join of the key parts, among the six resource modes (N is the identity).
    let key = if ka == NONE {
        kb
    } else if kb == NONE || BASE_COVERS[ka][kb] {
        ka
    } else if BASE_COVERS[kb][ka] {
        kb
    } else if (ka == 2 && kb == 1) || (ka == 1 && kb == 2) {
        3 // S with IX: SIX
    } else {
        5 // X
    };
    // The weakest named mode covering (range, key): the first in this order that does.
    // The order lists each mode after every mode it covers, so the first found is the
    // least.
    const ORDER: [usize; MODES] = [0, 1, 2, 4, 3, 5, 8, 6, 9, 7, 10, 11, 12, 13, 14];
    let mut i = 0;
    while i < MODES {
        let m = ORDER[i];
        if range_covers(PARTS[m].0, range) && key_covers(PARTS[m].1, key) {
            return m;
        }
        i += 1;
    }
    14 // RangeX-X covers every mode.
}

const fn build_join() -> [[u8; MODES]; MODES] {
    let mut table = [[0u8; MODES]; MODES];
    let mut a = 0;
    while a < MODES {
        let mut b = 0;
        while b < MODES {
            table[a][b] = join_at(a, b) as u8;
            b += 1;
        }
        a += 1;
    }
    table
}

/// `COMPATIBLE[a][b]`: two owners may hold `a` and `b` on one resource at once.
const COMPATIBLE: [[bool; MODES]; MODES] = build_compatible();

/// `COVERS[held][wanted]`: holding `held` already grants `wanted`.
const COVERS: [[bool; MODES]; MODES] = build_covers();

/// `JOIN[a][b]`: the index of the weakest mode covering both.
const JOIN: [[u8; MODES]; MODES] = build_join();

impl LockMode {
    /// Every mode, in declaration order.
    pub const ALL: [LockMode; MODES] = [
        IS, IX, S, SIX, U, X, RangeSS, RangeSU, RangeIN, RangeIS, RangeIU, RangeIX, RangeXS,
        RangeXU, RangeXX,
    ];

    /// The position of the mode in [`LockMode::ALL`].
    pub fn index(self) -> usize {
        self as usize
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
            RangeSS => "RangeS-S",
            RangeSU => "RangeS-U",
            RangeIN => "RangeI-N",
            RangeIS => "RangeI-S",
            RangeIU => "RangeI-U",
            RangeIX => "RangeI-X",
            RangeXS => "RangeX-S",
            RangeXU => "RangeX-U",
            RangeXX => "RangeX-X",
        }
    }

    /// Whether the mode locks a range of keys (a key-range mode), not only a resource.
    pub fn is_range(self) -> bool {
        !matches!(PARTS[self.index()].0, Range::Not)
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
    /// have; X is the next mode up and only costs concurrency). RangeI-N joins S, U and X to
    /// RangeI-S, RangeI-U and RangeI-X, and RangeS-S and RangeS-U to RangeX-S and RangeX-U,
    /// as in SQL Server; a range mode with a key part SQL Server has no pair for rounds up
    /// (RangeS-S with X: RangeX-X).
    pub fn join(self, other: LockMode) -> LockMode {
        LockMode::ALL[usize::from(JOIN[self.index()][other.index()])]
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_declaration_order() {
        for (i, m) in LockMode::ALL.iter().enumerate() {
            assert_eq!(m.index(), i, "{m}");
        }
    }

    #[test]
    fn covers_is_a_partial_order_and_compatibility_is_anti_monotone() {
        for a in LockMode::ALL {
            assert!(a.covers(a), "{a}");
            for b in LockMode::ALL {
                assert_eq!(a.compatible(b), b.compatible(a), "{a} {b}");
                if a.covers(b) && b.covers(a) {
                    assert_eq!(a, b);
                }
                for c in LockMode::ALL {
                    if a.covers(b) && b.covers(c) {
                        assert!(a.covers(c), "{a} {b} {c}");
                    }
                    // A stronger mode is compatible with no more modes.
                    if a.covers(b) && a.compatible(c) {
                        assert!(b.compatible(c), "{a} covers {b} but is compatible with {c}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_join_is_the_least_cover() {
        for a in LockMode::ALL {
            for b in LockMode::ALL {
                let j = a.join(b);
                assert_eq!(j, b.join(a), "{a} {b}");
                assert!(j.covers(a) && j.covers(b), "{a} {b} -> {j}");
                // No mode covering both is strictly weaker than the join, except where
                // the join had to round up (then it is still minimal).
                for c in LockMode::ALL {
                    if c.covers(a) && c.covers(b) && j.covers(c) {
                        assert_eq!(c, j, "{a} {b}: {c} is below {j}");
                    }
                }
            }
        }
    }
}
