//! A scope's variables, and how a reference finds one without comparing names.
//!
//! A frame's variables are a list in declaration order (parameters first, then what its
//! DECLAREs hoist), found by name, case-insensitively, the first match winning. Every list
//! carries a *layout*: a number that stands for the names it holds in their order, taken
//! from a process-wide counter each time a name is added or removed, and kept by a copy of
//! the list (a cursor's copy of its declaring scope), whose names are the same. A layout
//! number therefore never stands for two different name lists.
//!
//! A [`VarRef`] (the node of `@x` in a statement) remembers `layout << SLOT_BITS | slot`
//! after a search; the next time it is resolved in a list of the same layout, the slot is
//! the answer, with no name compared: a statement in a loop, or a cached batch's statement
//! run again in its frame, finds its variables by index. In any other list (another call of
//! the module, another session running the same cached tree) the memo does not match, the
//! name is searched and the memo replaced. The memo is one word, so a reader sees one
//! writer's whole memo, and each memo is true of its layout for good.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::ast::VarRef;

use super::Variable;

/// The bits of a memo that hold the slot; the rest hold the layout.
const SLOT_BITS: u32 = 16;

/// Layout numbers handed out so far. Layouts past what a memo can hold are 0, which no memo
/// matches: such lists are searched by name, as they always were.
static LAYOUTS: AtomicU64 = AtomicU64::new(0);

fn fresh_layout() -> u64 {
    let n = LAYOUTS.fetch_add(1, Ordering::Relaxed) + 1;
    if n < 1 << (64 - SLOT_BITS) {
        n
    } else {
        0
    }
}

/// The variables of one scope (see the module comment).
#[derive(Debug, Clone, Default)]
pub(crate) struct Variables {
    list: Vec<Variable>,
    /// The layout of `list`'s names (0: not to be memoised; an empty list has nothing to
    /// find).
    layout: u64,
}

impl Variables {
    /// Adds `v` after the others.
    pub(crate) fn push(&mut self, v: Variable) {
        self.list.push(v);
        self.layout = fresh_layout();
    }

    /// Adds `vars` after the others.
    pub(crate) fn extend(&mut self, vars: impl IntoIterator<Item = Variable>) {
        self.list.extend(vars);
        self.layout = fresh_layout();
    }

    /// Keeps only the variables `keep` accepts.
    pub(crate) fn retain(&mut self, keep: impl FnMut(&Variable) -> bool) {
        self.list.retain(keep);
        self.layout = fresh_layout();
    }

    /// How many there are: the slot the next [`Variables::push`] fills.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// The variables in declaration order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Variable> {
        self.list.iter()
    }

    /// The variable in `slot`.
    pub(crate) fn get(&self, slot: usize) -> Option<&Variable> {
        self.list.get(slot)
    }

    /// The variable in `slot`, to change its value.
    pub(crate) fn get_mut(&mut self, slot: usize) -> Option<&mut Variable> {
        self.list.get_mut(slot)
    }

    /// The slot of the variable called `name` (case-insensitively, the first of that name).
    pub(crate) fn slot_of(&self, name: &str) -> Option<usize> {
        self.list.iter().position(|v| v.name.eq_ignore_ascii_case(name))
    }

    /// The slot of the variable `r` names: its memo when made in this layout, else found by
    /// name and memoised. The memo's check is inlined into the callers (every variable read
    /// and assignment), the search is not.
    #[inline]
    pub(crate) fn slot(&self, r: &VarRef) -> Option<usize> {
        let memo = r.memo();
        if self.layout != 0 && memo >> SLOT_BITS == self.layout {
            return Some((memo & ((1 << SLOT_BITS) - 1)) as usize);
        }
        self.search(r)
    }

    /// [`Variables::slot`] by name, memoised.
    #[inline(never)]
    fn search(&self, r: &VarRef) -> Option<usize> {
        let slot = self.slot_of(&r.name)?;
        if self.layout != 0 && slot < 1 << SLOT_BITS {
            r.set_memo(self.layout << SLOT_BITS | slot as u64);
        }
        Some(slot)
    }
}
