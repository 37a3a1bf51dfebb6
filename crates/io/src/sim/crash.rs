//! What a crash does to a change that was not synced: each pending write or resize is kept,
//! dropped, or torn, and a torn one lands as a subset of its 512-byte sectors (cut at absolute
//! sector boundaries), never as part of a sector. The choice comes from the file system's seeded
//! generator, so the same seed and workload give the same image after the crash.

use crate::mem;
use crate::{SplitMix64, SECTOR_SIZE};

/// One unsynced change, with ranges already checked to fit in memory when it was made.
pub(super) enum Change {
    Write {
        at: usize,
        data: Vec<u8>,
    },
    /// `preallocate`: grows to `len`, never shrinks.
    Grow {
        len: usize,
    },
    /// `set_len`: truncates or grows to `len`.
    SetLen {
        len: usize,
    },
}

/// What a crash did to one change.
pub(super) enum Outcome {
    Applied,
    Dropped,
    Torn,
}

impl Change {
    pub(super) fn apply(&self, image: &mut Vec<u8>) {
        match self {
            Change::Write { at, data } => mem::put(image, *at, data),
            Change::Grow { len } => {
                if image.len() < *len {
                    image.resize(*len, 0);
                }
            }
            Change::SetLen { len } => image.resize(*len, 0),
        }
    }

    /// Applies the change to `image` the way a power loss might.
    pub(super) fn apply_at_crash(&self, image: &mut Vec<u8>, rng: &mut SplitMix64) -> Outcome {
        match self {
            Change::Write { at, data } => crash_write(image, *at, data, rng),
            // Replayed against the crash image, whose length may differ from the one the call
            // saw if earlier changes were dropped.
            Change::Grow { len } => crash_resize(image, (*len).max(image.len()), rng),
            Change::SetLen { len } => crash_resize(image, *len, rng),
        }
    }
}

fn crash_write(image: &mut Vec<u8>, at: usize, data: &[u8], rng: &mut SplitMix64) -> Outcome {
    let pieces = sector_pieces(at, at + data.len());
    let choices = if pieces.len() > 1 { 3 } else { 2 };
    match rng.below(choices) {
        0 => {
            mem::put(image, at, data);
            Outcome::Applied
        }
        1 => Outcome::Dropped,
        _ => {
            let mut keep: Vec<bool> = pieces.iter().map(|_| rng.chance(1, 2)).collect();
            if keep.iter().all(|&k| k) || keep.iter().all(|&k| !k) {
                // Make the tear visible: flip one piece, so some land and some do not.
                let i = rng.below(keep.len() as u64) as usize;
                if let Some(k) = keep.get_mut(i) {
                    *k = !*k;
                }
            }
            for (&(start, end), _) in pieces.iter().zip(&keep).filter(|(_, &k)| k) {
                mem::put(image, start, &data[start - at..end - at]);
            }
            Outcome::Torn
        }
    }
}

fn crash_resize(image: &mut Vec<u8>, target: usize, rng: &mut SplitMix64) -> Outcome {
    let old = image.len();
    if target == old {
        // Nothing this change could add or lose at this point of the replay.
        return Outcome::Applied;
    }
    if target < old {
        // A truncation is a single metadata update: it happened or it did not.
        return if rng.chance(1, 2) {
            image.truncate(target);
            Outcome::Applied
        } else {
            Outcome::Dropped
        };
    }
    // A growth can stop at any sector boundary strictly between the old and new lengths.
    let first = (old / SECTOR_SIZE + 1) * SECTOR_SIZE;
    let boundaries = if first < target { (target - 1 - first) / SECTOR_SIZE + 1 } else { 0 };
    match rng.below(if boundaries > 0 { 3 } else { 2 }) {
        0 => {
            image.resize(target, 0);
            Outcome::Applied
        }
        1 => Outcome::Dropped,
        _ => {
            let len = first + SECTOR_SIZE * rng.below(boundaries as u64) as usize;
            image.resize(len, 0);
            Outcome::Torn
        }
    }
}

/// `[start, end)` cut at absolute sector boundaries.
pub(super) fn sector_pieces(start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut at = start;
    while at < end {
        let next = (at - at % SECTOR_SIZE).saturating_add(SECTOR_SIZE).min(end);
        pieces.push((at, next));
        at = next;
    }
    pieces
}
