//! The records of leaf and internal pages and the search within one page: leaf records are
//! `u16 key_len, key, value`, internal records `u32 child, key`, both in key order, and an
//! internal page's first key is never read. The search guesses a slot from the first and last
//! keys, then gallops and bisects; the guess only decides where probing starts, so the answer
//! is a binary search's whatever the keys are, as long as they are in order.

use std::cmp::Ordering;
use std::ops::Bound;

use super::{Result, TreeError};
use crate::buffer::PinnedPage;
use crate::page::{Page, PageId};

/// Where a descent went: (page, slot of the child taken) from the root down, then the leaf.
pub(super) struct Path {
    pub(super) internal: Vec<(PageId, usize)>,
    pub(super) leaf: PinnedPage,
}

/// The outcome of searching a leaf.
pub(super) enum Found {
    At(usize),
    Before(usize),
}

pub(super) fn leaf_key(record: &[u8]) -> Result<&[u8]> {
    let n = record
        .get(0..2)
        .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
        .ok_or_else(|| TreeError::Corrupt { page_id: 0, detail: "short leaf record".into() })?;
    record
        .get(2..2 + n)
        .ok_or_else(|| TreeError::Corrupt { page_id: 0, detail: "leaf key past record".into() })
}

pub(super) fn leaf_split(record: &[u8]) -> Result<(&[u8], &[u8])> {
    let key = leaf_key(record)?;
    Ok((key, &record[2 + key.len()..]))
}

pub(super) fn internal_entry(record: &[u8]) -> Result<(PageId, &[u8])> {
    let child = record
        .get(0..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| TreeError::Corrupt { page_id: 0, detail: "short internal record".into() })?;
    Ok((child, &record[4..]))
}

fn internal_key(record: &[u8]) -> Result<&[u8]> {
    Ok(internal_entry(record)?.1)
}

pub(super) fn internal_record(child: PageId, key: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(4 + key.len());
    r.extend_from_slice(&child.to_le_bytes());
    r.extend_from_slice(key);
    r
}

/// Fewest slots a page must have before its search guesses where the key is (below it, a
/// plain binary search is as quick).
const GUESS_MIN_SLOTS: usize = 16;

/// Search of a leaf for `key`: the slot holding it, or the slot of the first greater key.
pub(super) fn search_leaf(page: &Page, key: &[u8]) -> Result<Found> {
    search_slots(page, key, 0, leaf_key)
}

/// The first slot of leaf `page` at or past the lower bound `from`.
pub(super) fn first_slot(page: &Page, from: &Bound<Vec<u8>>) -> Result<usize> {
    Ok(match from {
        Bound::Unbounded => 0,
        Bound::Included(k) => match search_leaf(page, k)? {
            Found::At(s) | Found::Before(s) => s,
        },
        Bound::Excluded(k) => match search_leaf(page, k)? {
            Found::At(s) => s + 1,
            Found::Before(s) => s,
        },
    })
}

/// The slot of the child of an internal page that covers `key`: the last entry whose key is
/// at or below it, entry 0 (whose key is not used) if none is.
pub(super) fn search_internal(page: &Page, key: &[u8]) -> Result<usize> {
    Ok(match search_slots(page, key, 1, internal_key)? {
        Found::At(slot) => slot,
        // `slot` is at least 1: the search starts there.
        Found::Before(slot) => slot - 1,
    })
}

/// Search of the slots from `base` on of a page, whose records `key_of` reads the keys of,
/// in order, for `key`: the slot holding it, or the slot of the first greater key.
///
/// A page read by a point lookup is often not in the CPU's caches, and each probe of a
/// binary search costs two cache misses (the slot, then the record). So the search first
/// reads the first and last keys and guesses where `key` lies between them, as if keys
/// were spread evenly (they are, for the dense integer keys of most tables: then the guess
/// is exact), then gallops from the guess to bracket the key and binary-searches the
/// bracket. The guess only decides where probing starts: the answer is the binary search's
/// whatever the keys are, as long as they are in order.
fn search_slots(
    page: &Page,
    key: &[u8],
    base: usize,
    key_of: impl Fn(&[u8]) -> Result<&[u8]>,
) -> Result<Found> {
    let n = page.slot_count();
    let probe =
        |slot: usize| -> Result<Ordering> { Ok(compare_keys(key_of(page.get(slot)?)?, key)) };
    if n < base + GUESS_MIN_SLOTS {
        return bisect(probe, base, n);
    }
    // The first and last keys bound the search and then place the guess: each read once.
    let first = key_of(page.get(base)?)?;
    match compare_keys(first, key) {
        Ordering::Greater => return Ok(Found::Before(base)),
        Ordering::Equal => return Ok(Found::At(base)),
        Ordering::Less => {}
    }
    let last = key_of(page.get(n - 1)?)?;
    match compare_keys(last, key) {
        Ordering::Less => return Ok(Found::Before(n)),
        Ordering::Equal => return Ok(Found::At(n - 1)),
        Ordering::Greater => {}
    }
    // Invariant from here: every slot below `lo` holds a smaller key, every slot from `hi`
    // on a greater one.
    let (mut lo, mut hi) = (base + 1, n - 1);
    let guess = (base + guess_slot(first, last, key, n - 1 - base)).clamp(lo, hi - 1);
    match probe(guess)? {
        Ordering::Equal => return Ok(Found::At(guess)),
        Ordering::Less => {
            lo = guess + 1;
            let mut step = 1;
            while lo < hi {
                let at = (guess + step).min(hi - 1);
                match probe(at)? {
                    Ordering::Equal => return Ok(Found::At(at)),
                    Ordering::Less => lo = at + 1,
                    Ordering::Greater => {
                        hi = at;
                        break;
                    }
                }
                step *= 2;
            }
        }
        Ordering::Greater => {
            hi = guess;
            let mut step = 1;
            while lo < hi {
                let at = guess.saturating_sub(step).max(lo);
                match probe(at)? {
                    Ordering::Equal => return Ok(Found::At(at)),
                    Ordering::Greater => hi = at,
                    Ordering::Less => {
                        lo = at + 1;
                        break;
                    }
                }
                step *= 2;
            }
        }
    }
    bisect(probe, lo, hi)
}

/// `a` against `b` as `<[u8]>::cmp` orders them. Most keys are a few bytes (an encoded
/// integer or two), which a loop here compares in fewer cycles than a call to the C library's
/// `memcmp`, which `<[u8]>::cmp` makes; longer keys still go to it. A page's search compares
/// a key at every probe.
#[inline]
fn compare_keys(a: &[u8], b: &[u8]) -> Ordering {
    const SHORT: usize = 16;
    if a.len() > SHORT || b.len() > SHORT {
        return a.cmp(b);
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Binary search of the slots `lo..hi`, every slot below `lo` holding a smaller key than the
/// one sought and every slot from `hi` on a greater one; `probe` compares a slot's key with
/// it.
fn bisect(
    probe: impl Fn(usize) -> Result<Ordering>,
    mut lo: usize,
    mut hi: usize,
) -> Result<Found> {
    while lo < hi {
        let mid = (lo + hi) / 2;
        match probe(mid)? {
            Ordering::Less => lo = mid + 1,
            Ordering::Greater => hi = mid,
            Ordering::Equal => return Ok(Found::At(mid)),
        }
    }
    Ok(Found::Before(lo))
}

/// Where `key` would be among `span + 1` keys running evenly from `first` (slot 0) to `last`
/// (slot `span`), with `first < key < last`: each key read as the number its eight bytes
/// after the prefix `first` and `last` share make (missing bytes as zeros), which keeps
/// their order. Only a starting point for [`search_slots`].
fn guess_slot(first: &[u8], last: &[u8], key: &[u8], span: usize) -> usize {
    let shared = first.iter().zip(last).take_while(|(a, b)| a == b).count();
    // Byte by byte, not by copying a slice of run-time length into an array: that copy is
    // a call to `memcpy`, three of them per page searched.
    let number = |k: &[u8]| {
        let tail = k.get(shared..).unwrap_or_default();
        let mut n = 0u64;
        for i in 0..8 {
            n = (n << 8) | u64::from(tail.get(i).copied().unwrap_or(0));
        }
        n
    };
    let (low, high) = (number(first), number(last));
    if high <= low {
        return span / 2;
    }
    let at = number(key).clamp(low, high) - low;
    // At most `span`: `at <= high - low`.
    (u128::from(at) * span as u128 / u128::from(high - low)) as usize
}

pub(super) fn corrupt(page_id: PageId, detail: impl Into<String>) -> TreeError {
    TreeError::Corrupt { page_id, detail: detail.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_as_byte_slices_do() {
        let keys: [&[u8]; 10] = [
            b"",
            b"\x00",
            b"\x00\x00",
            b"\x01",
            b"\x80\x00\x00\x05",
            b"\x80\x00\x00\x05\x00",
            b"\xff",
            b"0123456789abcdef",
            b"0123456789abcdefg",
            b"0123456789abcdeg",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(compare_keys(a, b), a.cmp(b), "{a:?} against {b:?}");
            }
        }
    }
}
