//! Deadlock detection: the search of the waits-for graph, the check under locks, the victim.
//!
//! The graph is never stored. Its nodes are owners; an owner that waits has an edge to each
//! owner its request waits for (`LockEntry::blockers`: the incompatible holders and, for a new
//! request, every live request queued ahead), read from the lock table when the search
//! reaches it. The search is a depth-first walk from the requester, holding the waits map and
//! one shard at a time, looking only for a cycle back to the requester: any other cycle closed
//! when one of its own members began to wait, and that member's search (or its periodic
//! re-check) finds it.

use parking_lot::MutexGuard;
use std::collections::HashSet;

use super::manager::{lock_mutex, LockManager, ShardState, TableKey, Waits};
use super::{OwnerId, Resource};
use walden_storage::hash::FastBuild;

/// How many cycles one search may break (or find gone) before it leaves the rest to the next
/// periodic check. Each broken cycle costs another owner its transaction, so a bound here is
/// only a guard against a search running on while the graph keeps changing under it.
const MAX_ROUNDS: usize = 8;

/// `waiter` waits on `resource` for `blocker`.
struct Edge {
    waiter: OwnerId,
    resource: Resource,
    blocker: OwnerId,
}

impl LockManager {
    /// Searches for deadlocks through `requester`'s waiting requests and breaks each one found
    /// by failing one victim's request, until none is left or the requester is the victim.
    pub(super) fn detect(&self, requester: OwnerId) {
        let waits = lock_mutex(&self.waits);
        for _ in 0..MAX_ROUNDS {
            let Some(cycle) = self.find_cycle(&waits, requester) else {
                return;
            };
            if self.break_cycle(&cycle, requester) == Some(requester) {
                return;
            }
        }
    }

    /// The edges out of `owner`: for each request it waits with, the owners it waits for.
    fn out_edges(&self, waits: &Waits, owner: OwnerId) -> Vec<(Resource, OwnerId)> {
        let mut out = Vec::new();
        for res in waits.get(&owner).into_iter().flatten() {
            let key = TableKey::of(res);
            let guard = lock_mutex(self.shard(&key));
            let Some(entry) = guard.table.get(&key) else {
                continue;
            };
            for (at, w) in entry.queue.iter().enumerate() {
                if w.owner == owner && !w.victim {
                    out.extend(entry.blockers(at).into_iter().map(|b| (res.clone(), b)));
                }
            }
        }
        out
    }

    /// A cycle of waits from `start` back to it, as its edges in order, if the search finds
    /// one. Each node is expanded once: a node whose edges were all explored without reaching
    /// `start` cannot reach it along another path either.
    fn find_cycle(&self, waits: &Waits, start: OwnerId) -> Option<Vec<Edge>> {
        struct Frame {
            owner: OwnerId,
            out: Vec<(Resource, OwnerId)>,
            next: usize,
        }
        let mut visited: HashSet<OwnerId, FastBuild> = HashSet::default();
        visited.insert(start);
        let mut frames = vec![Frame { owner: start, out: self.out_edges(waits, start), next: 0 }];
        // The edges from the root to the top frame: one fewer than the frames.
        let mut path: Vec<Edge> = Vec::new();
        while let Some(frame) = frames.last_mut() {
            let Some((resource, blocker)) = frame.out.get(frame.next).cloned() else {
                frames.pop();
                path.pop();
                continue;
            };
            frame.next += 1;
            let edge = Edge { waiter: frame.owner, resource, blocker };
            if blocker == start {
                path.push(edge);
                return Some(path);
            }
            if visited.insert(blocker) {
                let out = self.out_edges(waits, blocker);
                path.push(edge);
                frames.push(Frame { owner: blocker, out, next: 0 });
            }
        }
        None
    }

    /// Checks every edge of `cycle` again while holding all its shards at once (invariant 8)
    /// and, if the cycle is still there, marks the victim's request and wakes it. Returns the
    /// victim, or `None` if the cycle was gone.
    fn break_cycle(&self, cycle: &[Edge], requester: OwnerId) -> Option<OwnerId> {
        let keys: Vec<TableKey> = cycle.iter().map(|e| TableKey::of(&e.resource)).collect();
        let mut indexes: Vec<usize> = keys.iter().map(TableKey::shard).collect();
        indexes.sort_unstable();
        indexes.dedup();
        // Ascending order, like every thread that holds more than one shard (invariant 7).
        let mut guards: Vec<MutexGuard<'_, ShardState>> =
            indexes.iter().map(|&i| lock_mutex(&self.shards[i].0)).collect();
        let slot = |key: &TableKey| indexes.binary_search(&key.shard()).ok();
        // Each member of the cycle with the deadlock priority its waiting request carries.
        let mut members = Vec::with_capacity(cycle.len());
        for (edge, key) in cycle.iter().zip(&keys) {
            let entry = guards.get(slot(key)?)?.table.get(key)?;
            let (_, w) = entry.queue.iter().enumerate().find(|&(at, w)| {
                w.owner == edge.waiter && !w.victim && entry.blockers(at).contains(&edge.blocker)
            })?;
            members.push((w.owner, w.priority));
        }
        let victim = choose_victim(&members, requester);
        let (_, key) = cycle.iter().zip(&keys).find(|(e, _)| e.waiter == victim)?;
        let entry = guards.get_mut(slot(key)?)?.table.get_mut(key)?;
        for w in entry.queue.iter_mut().filter(|w| w.owner == victim && !w.victim) {
            w.victim = true;
            w.cv.notify_one();
        }
        Some(victim)
    }
}

/// The victim among a cycle's `members` (owner, deadlock priority): the lowest priority; among
/// equals the requester, whose request closed the cycle (SQL Server picks the transaction
/// cheapest to roll back, which the lock manager cannot know; the requester is the one whose
/// thread is here, and its request is the newest edge); otherwise the youngest transaction,
/// the highest id.
fn choose_victim(members: &[(OwnerId, i32)], requester: OwnerId) -> OwnerId {
    let lowest = members.iter().map(|m| m.1).min().unwrap_or(0);
    if members.iter().any(|&(o, p)| o == requester && p == lowest) {
        return requester;
    }
    members.iter().filter(|m| m.1 == lowest).map(|m| m.0).max().unwrap_or(requester)
}
