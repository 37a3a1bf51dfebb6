//! A reference to a variable (`@x`) that the executor reads or assigns, with room for the
//! executor to remember where it found it.

use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};

/// `@x` where a statement reads or assigns it: the name as written, with its `@`, and a memo
/// the executor keeps on the node of where the variable was last found (a slot of a scope's
/// variables), so a statement run again, in a loop or from a cached plan, finds it without
/// comparing names. The tree stays syntactic: the memo is an opaque number, 0 until the
/// executor writes one, that never takes part in comparisons; a clone starts with the
/// original's memo, which stays only a hint the executor checks before it trusts it.
///
/// The memo is atomic because a cached batch or module is one tree that sessions run at the
/// same time; the executor packs all it needs into the one word, so a reader never sees half
/// of one session's memo and half of another's.
pub struct VarRef {
    /// The name, with its `@`.
    pub name: String,
    memo: AtomicU64,
}

impl VarRef {
    /// A reference to `name` (with its `@`), not yet resolved.
    pub fn new(name: String) -> VarRef {
        VarRef { name, memo: AtomicU64::new(0) }
    }

    /// What the executor last remembered here (0: nothing).
    pub fn memo(&self) -> u64 {
        self.memo.load(Ordering::Relaxed)
    }

    /// Remembers `memo`, replacing what was there.
    pub fn set_memo(&self, memo: u64) {
        self.memo.store(memo, Ordering::Relaxed);
    }
}

impl Clone for VarRef {
    fn clone(&self) -> VarRef {
        VarRef { name: self.name.clone(), memo: AtomicU64::new(self.memo()) }
    }
}

/// Two references are equal when they name the same variable, as written: the memo is the
/// executor's cache, not part of the syntax.
impl PartialEq for VarRef {
    fn eq(&self, other: &VarRef) -> bool {
        self.name == other.name
    }
}

impl Eq for VarRef {}

impl fmt::Debug for VarRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.name, f)
    }
}

impl fmt::Display for VarRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// A reference reads as its name wherever a name is wanted.
impl Deref for VarRef {
    type Target = str;

    fn deref(&self) -> &str {
        &self.name
    }
}

impl From<String> for VarRef {
    fn from(name: String) -> VarRef {
        VarRef::new(name)
    }
}

impl From<&str> for VarRef {
    fn from(name: &str) -> VarRef {
        VarRef::new(name.to_owned())
    }
}
