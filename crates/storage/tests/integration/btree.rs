#![allow(clippy::unwrap_used)]
// Test code, helpers included: a failed unwrap is a failed test.

//! B+tree tests: a random workload against a model, with the integrity check after each
//! phase, on a pool much smaller than the tree; and redo: replaying the logged page changes on
//! an empty file rebuilds the same tree.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use walden_io::{MemFs, SplitMix64, Vfs};
use walden_storage::btree::{
    BTree, Change, ChangeKind, EntryBatch, LeafHint, TreeError, TreeLog, TreeSpace,
};
use walden_storage::buffer::{BufferPool, NoWal, PoolConfig};
use walden_storage::redo::PageOp;
use walden_storage::{DataFile, Lsn, PageType};

/// One logged record: its LSN, kind, and (page, encoded ops) per page.
type Logged = (Lsn, ChangeKind, Vec<(u32, Vec<u8>)>);

/// Keeps every logged change, like a log would, with increasing LSNs.
#[derive(Default)]
struct MemLog {
    records: Vec<Logged>,
    next: Lsn,
}

impl TreeLog for MemLog {
    fn log(&mut self, kind: ChangeKind, changes: &[Change<'_>]) -> Result<Lsn, TreeError> {
        self.next += 100;
        let pages = changes.iter().map(|c| (c.after.page_id(), c.ops.to_vec())).collect();
        self.records.push((self.next, kind, pages));
        Ok(self.next)
    }
}

fn space(vfs: &dyn Vfs, path: &Path, frames: usize) -> TreeSpace {
    let file = DataFile::create(vfs, path, 1, 16).expect("create the data file");
    let config = PoolConfig { frames, writer_interval_ms: 0, ..PoolConfig::default() };
    TreeSpace::new(BufferPool::new(Arc::new(file), Arc::new(NoWal), config).expect("a pool"))
}

/// A formatted data file at `path` holding one empty tree: the space, the log of everything
/// done so far, and the tree's root.
fn with_tree(vfs: &dyn Vfs, path: &str, frames: usize) -> (TreeSpace, MemLog, u32) {
    let space = space(vfs, Path::new(path), frames);
    let mut log = MemLog::default();
    space.format(&mut log).unwrap();
    let root = space.create_tree(&mut log, 5, 1).unwrap();
    (space, log, root)
}

/// [`with_tree`] on a file system of its own: for the tests that need no second file. (An
/// open file keeps its contents, so the file system may go.)
fn fresh_tree(frames: usize) -> (TreeSpace, MemLog, u32) {
    with_tree(&MemFs::new(), "t.mdf", frames)
}

fn key(n: u64) -> Vec<u8> {
    format!("key{n:08}").into_bytes()
}

fn value(rng: &mut SplitMix64) -> Vec<u8> {
    let len = rng.below(300) as usize;
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// The entries of `lower..upper` read batch after batch of at most `max` entries through
/// [`BTree::copy_range`] (or, given a `hint` held by the caller from read to read,
/// [`BTree::copy_range_hinted`]), each batch starting past the last one's last key (as the
/// engine's cursors read), checking that a batch says the range is done only at its end.
fn copied(
    tree: &BTree<'_>,
    mut hint: Option<&mut LeafHint>,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    max: usize,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut batch = EntryBatch::new();
    let mut from = lower;
    let mut all = Vec::new();
    loop {
        batch.clear();
        let done = match hint.as_deref_mut() {
            Some(hint) => tree.copy_range_hinted(&from, &upper, max, &mut batch, Some(hint)),
            None => tree.copy_range(&from, &upper, max, &mut batch),
        }
        .unwrap();
        assert!(batch.len() <= max, "a batch of {} entries, at most {max} asked", batch.len());
        all.extend((0..batch.len()).map(|i| {
            let (k, v) = batch.get(i);
            (k.to_vec(), v.to_vec())
        }));
        match batch.last_key() {
            _ if done => return all,
            Some(last) => from = Bound::Excluded(last.to_vec()),
            None => panic!("an empty batch of a range not done"),
        }
    }
}

/// Inserts `k` and `v` into `tree` and `model`: a key the model holds is refused as a
/// duplicate and changes neither.
fn insert_checked(
    tree: &BTree<'_>,
    log: &mut MemLog,
    model: &mut BTreeMap<Vec<u8>, Vec<u8>>,
    k: Vec<u8>,
    v: Vec<u8>,
) {
    let r = tree.insert(log, &k, &v);
    if let std::collections::btree_map::Entry::Vacant(e) = model.entry(k) {
        r.unwrap();
        e.insert(v);
    } else {
        assert!(matches!(r, Err(TreeError::DuplicateKey)));
    }
}

#[test]
fn random_workload_matches_a_model_and_stays_consistent() {
    let (space, mut log, root) = fresh_tree(16);
    let tree = space.tree(root);
    let mut model = BTreeMap::new();
    let mut rng = SplitMix64::new(7);
    for round in 0..6 {
        for _ in 0..3000 {
            let k = key(rng.below(4000));
            match rng.below(10) {
                0..=5 => {
                    let v = value(&mut rng);
                    insert_checked(&tree, &mut log, &mut model, k, v);
                }
                6 | 7 => {
                    let v = value(&mut rng);
                    let old = tree.update(&mut log, &k, &v).unwrap();
                    assert_eq!(old.as_ref(), model.get(&k));
                    if old.is_some() {
                        model.insert(k, v);
                    }
                }
                _ => {
                    let old = tree.delete(&mut log, &k).unwrap();
                    assert_eq!(old, model.remove(&k));
                }
            }
        }
        let check = tree.check().unwrap();
        assert_eq!(check.rows, model.len() as u64, "round {round}");
        assert_eq!(tree.count().unwrap(), check, "the cheap count agrees, round {round}");
        let all: Vec<(Vec<u8>, Vec<u8>)> = tree.scan().map(Result::unwrap).collect();
        let want: Vec<(Vec<u8>, Vec<u8>)> = model.clone().into_iter().collect();
        assert_eq!(all, want, "round {round}");
    }
    // Ranges and point reads.
    let lo = key(1000);
    let hi = key(2000);
    let got: Vec<Vec<u8>> = tree
        .range(Bound::Included(lo.clone()), Bound::Excluded(hi.clone()))
        .map(|r| r.unwrap().0)
        .collect();
    let want: Vec<Vec<u8>> = model.range(lo..hi).map(|(k, _)| k.clone()).collect();
    assert_eq!(got, want);
    for (k, v) in model.iter().take(50) {
        assert_eq!(tree.get(k).unwrap().as_ref(), Some(v));
    }
    // Batches copied into one buffer, of sizes below, at and above a leaf's entries, with
    // every kind of bound, hold the model's entries (a bound on a key present and absent).
    let bounds = |n: u64| [Bound::Included(key(n)), Bound::Excluded(key(n)), Bound::Unbounded];
    for (lo, hi) in [(1000, 2000), (17, 3999), (2500, 2501)] {
        for lower in bounds(lo) {
            for upper in bounds(hi) {
                let want: Vec<(Vec<u8>, Vec<u8>)> = model
                    .range::<Vec<u8>, _>((lower.clone(), upper.clone()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                for max in [1, 7, 256, 100_000] {
                    let got = copied(&tree, None, lower.clone(), upper.clone(), max);
                    assert_eq!(got, want, "{lower:?}..{upper:?} in batches of {max}");
                }
            }
        }
    }
    // Deleting everything leaves an empty, consistent tree whose pages went back to the free
    // list.
    for k in model.keys() {
        tree.delete(&mut log, k).unwrap().unwrap();
    }
    let check = tree.check().unwrap();
    assert_eq!(check.rows, 0);
    let (_, free) = space.allocation().unwrap();
    assert!(free > 10, "merges and releases freed only {free} pages");
    assert!(space.pool().stats().evictions > 0, "the pool never evicted");
}

#[test]
fn ascending_inserts_fill_pages_and_split_at_the_end() {
    let (space, mut log, root) = fresh_tree(64);
    let tree = space.tree(root);
    for n in 0..20_000 {
        tree.insert(&mut log, &(n as u64).to_be_bytes(), &[7; 40]).unwrap();
    }
    let check = tree.check().unwrap();
    // 20,000 rows of 2 + 8 + 40 bytes and a slot: about 150 to a page if pages stay full.
    assert!(
        check.pages < 20_000 / 140 + 10,
        "{} pages: end splits left pages half empty",
        check.pages
    );
    assert_eq!(tree.last_key().unwrap(), Some(19_999u64.to_be_bytes().to_vec()));
}

/// Applies `records`' page changes, in order, to `space`, as recovery's redo does.
fn redo(space: &TreeSpace, records: &[Logged]) {
    for (lsn, _, changes) in records {
        for (page_id, ops) in changes {
            let mut rest = &ops[..];
            let (first, _) = PageOp::decode(rest).unwrap();
            let pinned = if first.is_image() {
                space.pool().fetch_new(*page_id, PageType::Free).unwrap()
            } else {
                space.pool().fetch(*page_id).unwrap()
            };
            let mut page = pinned.write();
            while !rest.is_empty() {
                let (op, tail) = PageOp::decode(rest).unwrap();
                op.apply(&mut page).unwrap();
                rest = tail;
            }
            page.mark_dirty(*lsn);
        }
    }
}

#[test]
fn replaying_the_log_on_an_empty_file_rebuilds_the_tree() {
    let fs = MemFs::new();
    let (space1, mut log, root) = with_tree(&fs, "a.mdf", 32);
    let tree = space1.tree(root);
    let mut rng = SplitMix64::new(11);
    for _ in 0..5000 {
        let k = key(rng.below(2000));
        if rng.below(10) < 7 {
            let _ = tree.insert(&mut log, &k, &value(&mut rng));
        } else {
            tree.delete(&mut log, &k).unwrap();
        }
    }
    let original: Vec<(Vec<u8>, Vec<u8>)> = tree.scan().map(Result::unwrap).collect();

    // Redo every change, in log order, on a fresh file.
    let space2 = space(&fs, Path::new("b.mdf"), 32);
    redo(&space2, &log.records);
    let tree2 = space2.tree(root);
    tree2.check().unwrap();
    let replayed: Vec<(Vec<u8>, Vec<u8>)> = tree2.scan().map(Result::unwrap).collect();
    assert_eq!(replayed, original);
}

#[test]
fn structure_changes_are_single_records_and_rows_are_single_ops() {
    let (space, mut log, root) = fresh_tree(32);
    let tree = space.tree(root);
    for n in 0..2000u64 {
        tree.insert(&mut log, &n.to_be_bytes(), &[1; 100]).unwrap();
    }
    let rows: Vec<_> = log.records.iter().filter(|r| r.1 == ChangeKind::Row).collect();
    assert_eq!(rows.len(), 2000);
    assert!(rows.iter().all(|r| r.2.len() == 1));
    let splits = log.records.iter().filter(|r| r.1 == ChangeKind::Structure && r.2.len() > 1);
    assert!(splits.count() > 10);
}

/// A crash may keep the row change that empties a leaf and lose the structure change that
/// releases it (a rollback's compensation, never undone, leaves it so): the tree stays
/// consistent and usable with the empty leaf, and a merge absorbs it later.
#[test]
fn a_leaf_emptied_without_its_release_is_consistent_and_usable() {
    let fs = MemFs::new();
    let (space1, mut log, root) = with_tree(&fs, "a.mdf", 32);
    let tree = space1.tree(root);
    for n in 0..300 {
        tree.insert(&mut log, &key(n), &[7; 100]).unwrap();
    }
    // Delete from the middle until a delete's row change is followed by a structure change
    // releasing an emptied leaf; cut the log between the two.
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = (0..300).map(|n| (key(n), vec![7; 100])).collect();
    let mut cut = None;
    for n in 100..300 {
        let before = log.records.len();
        tree.delete(&mut log, &key(n)).unwrap().unwrap();
        model.remove(&key(n));
        let leaf = log.records[before].2[0].0;
        let released = log.records.len() > before + 1
            && space1.pool().fetch(leaf).unwrap().read().page_type() == Some(PageType::Free);
        if released {
            cut = Some((before + 1, n, leaf));
            break;
        }
    }
    let (cut, last_deleted, leaf) = cut.expect("no delete released a leaf");
    let space2 = space(&fs, Path::new("b.mdf"), 32);
    redo(&space2, &log.records[..cut]);
    {
        let emptied = space2.pool().fetch(leaf).unwrap();
        let page = emptied.read();
        assert_eq!((page.page_type(), page.slot_count()), (Some(PageType::BTreeLeaf), 0));
    }
    let tree2 = space2.tree(root);
    let check = tree2.check().unwrap();
    assert_eq!(check.rows, model.len() as u64);
    let scanned: Vec<Vec<u8>> = tree2.scan().map(|r| r.unwrap().0).collect();
    assert_eq!(scanned, model.keys().cloned().collect::<Vec<_>>());
    // A batch copy follows the leaf chain across the empty leaf, and one starting in it
    // goes on to the next leaf.
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.clone().into_iter().collect();
    assert_eq!(copied(&tree2, None, Bound::Unbounded, Bound::Unbounded, 1000), want);
    assert_eq!(copied(&tree2, None, Bound::Unbounded, Bound::Unbounded, 5), want);
    let past: Vec<(Vec<u8>, Vec<u8>)> =
        model.range(key(last_deleted)..).map(|(k, v)| (k.clone(), v.clone())).collect();
    let from = Bound::Included(key(last_deleted));
    assert_eq!(copied(&tree2, None, from, Bound::Unbounded, 3), past);

    // Usable: the emptied leaf's range takes an insert again, the rest deletes and merges.
    let mut log2 = MemLog { records: Vec::new(), next: log.records[cut - 1].0 };
    tree2.insert(&mut log2, &key(last_deleted), &[8; 100]).unwrap();
    model.insert(key(last_deleted), vec![8; 100]);
    tree2.check().unwrap();
    for k in model.keys() {
        tree2.delete(&mut log2, k).unwrap().unwrap();
    }
    assert_eq!(tree2.check().unwrap().rows, 0);
    assert_eq!(tree2.scan().count(), 0);
}

/// Keys spread in ways that make a page's guessed position (a search guesses from the page's
/// first and last keys) exact, near, or far off: every key present is found, every key
/// absent is not, and a range from an absent key starts at the next key present.
#[test]
fn point_lookups_find_every_key_however_keys_are_spread() {
    let dense: Vec<Vec<u8>> = (0..3000u64).map(|n| n.to_be_bytes().to_vec()).collect();
    // Runs of neighbours far apart: a leaf spanning two runs guesses far from its keys.
    let clustered: Vec<Vec<u8>> = (0..3000u64)
        .map(|n| ((n / 100) * 1_000_000_007 + n % 100).to_be_bytes().to_vec())
        .collect();
    // Squares: ever wider gaps.
    let squares: Vec<Vec<u8>> = (0..3000u64).map(|n| (n * n).to_be_bytes().to_vec()).collect();
    // Keys of every length that are prefixes of one another, and keys alike in their first
    // twelve bytes (past the eight the guess reads) that differ after.
    let mut prefixes: Vec<Vec<u8>> = (1..400).map(|n| vec![b'a'; n]).collect();
    prefixes.extend((0..2000u32).map(|n| {
        let mut k = b"samesamesame".to_vec();
        k.extend_from_slice(&n.to_be_bytes());
        k
    }));
    prefixes.extend((0..600u32).map(|n| format!("{}", n * 7).into_bytes()));
    // Long keys alike in their first 56 bytes (the guess reads the eight bytes after the
    // prefix a page's keys share): few to a page, so the tree has two levels of internal
    // pages, whose searches guess too.
    let long: Vec<Vec<u8>> = (0..40_000u64)
        .map(|n| {
            let mut k = vec![b'k'; 56];
            k.extend_from_slice(&(n * 3).to_be_bytes());
            k
        })
        .collect();
    for (name, mut keys) in [
        ("dense", dense),
        ("clustered", clustered),
        ("squares", squares),
        ("prefixes", prefixes),
        ("long", long),
    ] {
        keys.sort();
        keys.dedup();
        let (space, mut log, root) = fresh_tree(64);
        let tree = space.tree(root);
        // Every other key goes in: the ones left out are the absent keys.
        for k in keys.iter().step_by(2) {
            tree.insert(&mut log, k, &k[k.len() - 1..]).unwrap();
        }
        let shape = tree.check().unwrap();
        if name == "long" {
            assert!(shape.depth >= 3, "long keys make a tree of {} levels", shape.depth);
        }
        for (i, k) in keys.iter().enumerate() {
            let got = tree.get(k).unwrap();
            if i % 2 == 0 {
                assert_eq!(got.as_deref(), Some(&k[k.len() - 1..]), "{name}: key {i} not found");
                continue;
            }
            assert_eq!(got, None, "{name}: absent key {i} found");
            let next = tree.range(Bound::Included(k.clone()), Bound::Unbounded).next();
            let next = next.map(|entry| entry.unwrap().0);
            assert_eq!(next.as_ref(), keys.get(i + 1), "{name}: range from absent key {i}");
        }
        // Below the first key and above the last.
        assert_eq!(tree.get(&[]).unwrap(), None, "{name}");
        assert_eq!(tree.get(&[0xff; 20]).unwrap(), None, "{name}");
    }
}

/// The catalog's case that left a database SUSPECT: a leaf of small entries, then a large one
/// at its end (a statistics object's first 4,000-byte chunk), then a large key inserted just
/// before that one. The split's midpoint falls on the last slot; the separator must then be
/// a key that moved right, never the new key, or the large entry stays on the left below a
/// separator it sorts after, and a scan (which follows the leaf chain and refills by descent)
/// skips the entries between.
#[test]
fn a_split_whose_midpoint_is_the_last_slot_keeps_every_key_in_its_leaf() {
    let (space, mut log, root) = fresh_tree(64);
    let tree = space.tree(root);
    let mut model = BTreeMap::new();
    let mut put = |tree: &walden_storage::btree::BTree<'_>, k: Vec<u8>, len: usize| {
        let v = vec![k[k.len() - 1]; len];
        tree.insert(&mut log, &k, &v).unwrap();
        model.insert(k, v);
    };
    for id in 0..8u8 {
        put(&tree, vec![0, 0, 3, id], 250);
    }
    put(&tree, vec![0xFF, 0xFE, 1], 1054);
    put(&tree, vec![0xFF, 0xFE, 9], 4000);
    put(&tree, vec![0xFF, 0xFE, 8], 4000);
    tree.check().unwrap();
    let scanned: Vec<(Vec<u8>, Vec<u8>)> = tree.scan().map(Result::unwrap).collect();
    let expected: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
    assert_eq!(scanned.len(), expected.len());
    assert_eq!(scanned, expected);
}

/// `BTree::append_run`: a run of ascending keys fills leaves whole, one row record of several
/// inserts per leaf; a key not above the tree's last (or a run that stops ascending) is left
/// to the caller; the tree passes its check and holds exactly what was appended.
#[test]
fn append_run_fills_leaves_and_stops_where_it_must() {
    use walden_storage::btree::AppendRun;
    let (space, mut log, root) = fresh_tree(32);
    let tree = space.tree(root);
    let mut rng = SplitMix64::new(7);
    let mut model = BTreeMap::new();
    let mut run = AppendRun::new();
    for n in 0..3000u64 {
        let v = value(&mut rng);
        run.push(&key(n), &v).unwrap();
        model.insert(key(n), v);
    }
    let rows_before = log.records.iter().filter(|r| r.1 == ChangeKind::Row).count();
    let mut from = 0;
    while from < run.len() {
        let n = tree.append_run(&mut log, &run, from).unwrap();
        assert!(n > 0, "entry {from} refused");
        from += n;
    }
    let rows: Vec<_> =
        log.records.iter().filter(|r| r.1 == ChangeKind::Row).skip(rows_before).collect();
    assert!(rows.len() < 3000 / 10, "{} row records for 3000 keys", rows.len());
    assert!(rows.iter().all(|r| r.2.len() == 1), "a row record changes one page");
    assert_eq!(tree.check().unwrap().rows, 3000);
    let all = copied(&tree, None, Bound::Unbounded, Bound::Unbounded, 256);
    assert_eq!(all, model.into_iter().collect::<Vec<_>>());
    // Not above the last key: nothing appended, nothing logged.
    let logged = log.records.len();
    let mut again = AppendRun::new();
    again.push(&key(2999), b"dup").unwrap();
    again.push(&key(5000), b"x").unwrap();
    assert_eq!(tree.append_run(&mut log, &again, 0).unwrap(), 0);
    assert_eq!(log.records.len(), logged);
    // A run that stops ascending is appended up to there.
    let mut broken = AppendRun::new();
    broken.push(&key(6000), b"a").unwrap();
    broken.push(&key(5999), b"b").unwrap();
    assert_eq!(tree.append_run(&mut log, &broken, 0).unwrap(), 1);
    assert_eq!(tree.append_run(&mut log, &broken, 1).unwrap(), 0);
    assert_eq!(tree.check().unwrap().rows, 3001);
    // Too large for a tree: refused when pushed.
    assert!(AppendRun::new().push(&[0; 901], b"").is_err());
}

/// Short range reads in key order through one held leaf hint, as a join's seeks make them
/// (each starts in the leaf the previous one's descent reached, without a descent, when its
/// key lies within that leaf's keys), between changes that split leaves, empty them and
/// release them: every read finds what the model holds. A hint noted in another tree is
/// never used for this one.
#[test]
fn hinted_seeks_in_key_order_between_changes_find_what_the_model_holds() {
    let (space, mut log, root) = fresh_tree(16);
    let tree = space.tree(root);
    let other_root = space.create_tree(&mut log, 6, 1).unwrap();
    let other = space.tree(other_root);
    let mut model = BTreeMap::new();
    let mut rng = SplitMix64::new(11);
    for n in 0..3000 {
        let (k, v) = (key(n * 2), value(&mut rng));
        tree.insert(&mut log, &k, &v).unwrap();
        model.insert(k, v);
    }
    for n in 0..100 {
        other.insert(&mut log, &key(n * 60), b"other").unwrap();
    }
    let mut hint = LeafHint::default();
    for round in 0..24 {
        // Every fourth round deletes whole runs of keys, so that leaves empty and go.
        let deletes = if round % 4 == 3 { 9 } else { 1 };
        for _ in 0..300 {
            let k = key(rng.below(6000));
            if rng.below(10) < deletes {
                let start = rng.below(6000);
                for n in start..(start + 40).min(6000) {
                    let k = key(n);
                    assert_eq!(tree.delete(&mut log, &k).unwrap(), model.remove(&k));
                }
            } else {
                let v = value(&mut rng);
                insert_checked(&tree, &mut log, &mut model, k, v);
            }
        }
        // Ten keys per prefix (`key0000123` holds key00001230 to key00001239), in order.
        let mut p = rng.below(20);
        while p < 600 {
            let prefix = format!("key{p:07}").into_bytes();
            let mut upper = prefix.clone();
            *upper.last_mut().unwrap() += 1;
            let got = copied(
                &tree,
                Some(&mut hint),
                Bound::Included(prefix.clone()),
                Bound::Excluded(upper.clone()),
                64,
            );
            let want: Vec<(Vec<u8>, Vec<u8>)> =
                model.range(prefix..upper).map(|(k, v)| (k.clone(), v.clone())).collect();
            assert_eq!(got, want, "round {round}, prefix {p}");
            // Now and then a read of the other tree with the same hint: it finds that
            // tree's entries, and leaves the hint to it.
            if p.is_multiple_of(97) {
                let from = key(p * 10);
                let got = copied(
                    &other,
                    Some(&mut hint),
                    Bound::Included(from.clone()),
                    Bound::Unbounded,
                    64,
                );
                assert_eq!(got.len(), 100 - (p * 10).div_ceil(60) as usize, "other tree");
                assert!(got.iter().all(|(_, v)| v == b"other"));
            }
            p += 1 + rng.below(3);
        }
        let all = copied(&tree, None, Bound::Unbounded, Bound::Unbounded, 256);
        assert_eq!(all.len(), model.len(), "round {round}");
    }
}

/// What [`leaf_sampled`] saw: the entries copied, and the entries and leaves passed over.
type Sampled = (Vec<(Vec<u8>, Vec<u8>)>, u64, u64);

/// Every call of [`BTree::copy_leaf_sample`] from the first key on, each starting after the
/// last one's `resume`.
fn leaf_sampled(tree: &BTree<'_>, max_leaves: usize, pick: &mut dyn FnMut() -> bool) -> Sampled {
    let mut batch = EntryBatch::new();
    let (mut entries, mut leaves) = (0, 0);
    let mut after: Option<Vec<u8>> = None;
    loop {
        let seen = tree.copy_leaf_sample(after.as_deref(), max_leaves, pick, &mut batch).unwrap();
        assert!(seen.leaves as usize <= max_leaves, "{} leaves in one call", seen.leaves);
        entries += seen.entries;
        leaves += seen.leaves;
        match seen.resume {
            Some(key) => after = Some(key),
            None => break,
        }
    }
    let copied = (0..batch.len()).map(|i| (batch.get(i).0.to_vec(), batch.get(i).1.to_vec()));
    (copied.collect(), entries, leaves)
}

#[test]
fn a_leaf_sample_passes_every_entry_once_and_copies_the_leaves_it_picks_whole() {
    let (space, mut log, root) = fresh_tree(64);
    let tree = space.tree(root);
    let mut rng = SplitMix64::new(11);
    let mut model = BTreeMap::new();
    for _ in 0..5_000 {
        insert_checked(&tree, &mut log, &mut model, key(rng.below(50_000)), value(&mut rng));
    }
    let all: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
    let leaves = tree.check().unwrap().pages - 1;

    let (copied, entries, visited) = leaf_sampled(&tree, 3, &mut || true);
    assert_eq!(copied, all, "picking every leaf copies every entry, in key order");
    assert_eq!((entries, visited), (all.len() as u64, leaves));

    let (copied, entries, visited) = leaf_sampled(&tree, 3, &mut || false);
    assert!(copied.is_empty());
    assert_eq!((entries, visited), (all.len() as u64, leaves));

    // Every other leaf: about half the entries, each a run of neighbours in the tree.
    let mut flip = false;
    let (copied, entries, _) = leaf_sampled(&tree, 5, &mut || {
        flip = !flip;
        flip
    });
    assert_eq!(entries, all.len() as u64);
    assert!(copied.len() > all.len() / 4 && copied.len() < all.len() * 3 / 4, "{}", copied.len());
    assert!(copied.windows(2).all(|w| w[0].0 < w[1].0), "copied in key order");
    assert!(copied.iter().all(|e| all.binary_search(e).is_ok()), "only entries the tree holds");
}
