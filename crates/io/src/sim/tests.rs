//! The simulated file system's contract, case by case: what a crash keeps, drops or tears
//! (whole sectors only), what injected faults and power cuts do and do not change, and that
//! the same seed gives the same outcome.

use super::crash::sector_pieces;
use super::*;

fn read(f: &FileRef, offset: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    f.read_exact_at(&mut buf, offset).unwrap();
    buf
}

fn read_all(f: &FileRef) -> Vec<u8> {
    read(f, 0, f.len().unwrap() as usize)
}

/// Distinct bytes per position and generation, so a misplaced byte cannot pass for a right one.
fn pattern(generation: u8, offset: usize, len: usize) -> Vec<u8> {
    (offset..offset + len).map(|i| (i as u8).wrapping_mul(31) ^ generation).collect()
}

/// A file holding `old` durably, as a crash finds it.
fn synced_file(fs: &SimFs, path: &Path, old: &[u8]) -> FileRef {
    let f = fs.open(path, OpenMode::CreateNew).unwrap();
    f.write_all_at(old, 0).unwrap();
    f.sync_data().unwrap();
    f
}

fn reopen(fs: &SimFs, path: &Path) -> FileRef {
    fs.open(path, OpenMode::Existing).unwrap()
}

fn raw(result: io::Result<()>) -> Option<i32> {
    result.unwrap_err().raw_os_error()
}

#[test]
fn reads_see_unsynced_writes_and_sync_makes_them_durable() {
    let fs = SimFs::new(1);
    let p = Path::new("db/a");
    let f = fs.open(p, OpenMode::CreateNew).unwrap();
    f.write_all_at(b"hello", 0).unwrap();
    f.write_vectored_all_at(&[b", ", b"world"], 5).unwrap();
    assert_eq!(read_all(&f), b"hello, world");
    // Not durable yet: not even the file's entry.
    assert_eq!(fs.durable_image(p), None);
    f.sync_data().unwrap();
    assert_eq!(fs.durable_image(p).unwrap(), b"hello, world");
    f.write_all_at(b"W", 7).unwrap();
    assert_eq!(read_all(&f), b"hello, World");
    assert_eq!(fs.durable_image(p).unwrap(), b"hello, world");
    f.sync_all().unwrap();
    assert_eq!(fs.durable_image(p).unwrap(), b"hello, World");
    // Everything synced survives any crash, untouched.
    for _ in 0..20 {
        let report = fs.crash();
        assert_eq!(report, CrashReport::default());
        assert_eq!(read_all(&reopen(&fs, p)), b"hello, World");
    }
    assert_eq!(fs.writes(), 3);
    assert_eq!(fs.syncs(), 2);
    assert_eq!(fs.ops(), 5);
}

#[test]
fn crash_applies_drops_and_tears_whole_sectors_only() {
    let p = Path::new("f");
    let old = pattern(0xAA, 0, 4096);
    let (offset, len) = (700usize, 2900usize); // pieces [700,1024) ... [3584,3600)
    let new = pattern(0x55, offset, len);
    let mut seen = CrashReport::default();
    for seed in 0..200 {
        let fs = SimFs::new(seed);
        let f = synced_file(&fs, p, &old);
        f.write_all_at(&new, offset as u64).unwrap();
        let report = fs.crash();
        assert_eq!(report.writes_applied + report.writes_dropped + report.writes_torn, 1);
        let after = read_all(&reopen(&fs, p));
        assert_eq!(after.len(), 4096);
        // Outside the write nothing changed.
        assert_eq!(after[..offset], old[..offset]);
        assert_eq!(after[offset + len..], old[offset + len..]);
        let (mut kept, mut lost) = (0, 0);
        for (start, end) in sector_pieces(offset, offset + len) {
            if after[start..end] == new[start - offset..end - offset] {
                kept += 1;
            } else {
                assert_eq!(after[start..end], old[start..end], "seed {seed}: mixed sector");
                lost += 1;
            }
        }
        match (kept, lost) {
            (_, 0) => assert_eq!(report.writes_applied, 1, "seed {seed}"),
            (0, _) => assert_eq!(report.writes_dropped, 1, "seed {seed}"),
            _ => assert_eq!(report.writes_torn, 1, "seed {seed}"),
        }
        seen.writes_applied += report.writes_applied;
        seen.writes_dropped += report.writes_dropped;
        seen.writes_torn += report.writes_torn;
    }
    assert!(seen.writes_applied > 20, "{seen:?}");
    assert!(seen.writes_dropped > 20, "{seen:?}");
    assert!(seen.writes_torn > 20, "{seen:?}");
}

#[test]
fn a_write_inside_one_sector_never_tears() {
    let p = Path::new("f");
    for seed in 0..100 {
        let fs = SimFs::new(seed);
        let f = synced_file(&fs, p, &[1u8; 1024]);
        f.write_all_at(&[2u8; 500], 520).unwrap();
        let report = fs.crash();
        assert_eq!(report.writes_torn, 0);
        let after = read_all(&reopen(&fs, p));
        let want = if report.writes_applied == 1 { 2 } else { 1 };
        assert!(after[520..1020].iter().all(|&b| b == want), "seed {seed}");
    }
}

#[test]
fn torn_growth_covers_the_applied_pieces_and_zero_fills_gaps() {
    let p = Path::new("f");
    let new = pattern(0x33, 1000, 2000); // [1000, 3000): 5 pieces past the old end
    let mut lengths = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let fs = SimFs::new(seed);
        let f = synced_file(&fs, p, &[9u8; 100]);
        f.write_all_at(&new, 1000).unwrap();
        fs.crash();
        let after = read_all(&reopen(&fs, p));
        assert_eq!(after[..100], [9u8; 100]);
        let len = after.len();
        lengths.insert(len);
        // The file ends exactly at the end of its last kept piece (or where it was).
        let ends: Vec<usize> =
            sector_pieces(1000, 3000).iter().map(|&(_, end)| end).chain([100]).collect();
        assert!(ends.contains(&len), "seed {seed}: length {len}");
        for (start, end) in sector_pieces(1000, 3000).into_iter().filter(|&(s, _)| s < len) {
            let got = &after[start..end];
            assert!(
                got == &new[start - 1000..end - 1000] || got.iter().all(|&b| b == 0),
                "seed {seed}: piece at {start}"
            );
        }
        // Whatever landed past the old end sits on zeros, not on stale bytes.
        assert!(after[100..len.min(1000)].iter().all(|&b| b == 0));
    }
    // Dropped, whole, and several torn lengths all happen.
    assert!(lengths.contains(&100) && lengths.contains(&3000) && lengths.len() >= 4);
}

#[test]
fn unsynced_preallocate_and_set_len_are_kept_dropped_or_torn() {
    let p = Path::new("f");
    let mut lengths = std::collections::BTreeSet::new();
    for seed in 0..100 {
        let fs = SimFs::new(seed);
        let f = synced_file(&fs, p, &[7u8; 600]);
        f.preallocate(4096).unwrap();
        f.preallocate(1000).unwrap(); // never shrinks, records nothing
        assert_eq!(f.len().unwrap(), 4096);
        let report = fs.crash();
        assert_eq!(report.writes_applied + report.writes_dropped + report.writes_torn, 1);
        let after = read_all(&reopen(&fs, p));
        assert!([600, 1024, 1536, 2048, 2560, 3072, 3584, 4096].contains(&after.len()));
        assert_eq!(after[..600], [7u8; 600]);
        assert!(after[600..].iter().all(|&b| b == 0));
        lengths.insert(after.len());
        // A truncation is all or nothing.
        let f = reopen(&fs, p);
        f.set_len(10).unwrap();
        let before = after.len();
        fs.crash();
        let len = reopen(&fs, p).len().unwrap() as usize;
        assert!(len == 10 || len == before, "seed {seed}: {len}");
    }
    assert!(lengths.contains(&600) && lengths.contains(&4096) && lengths.len() >= 4);
    // A synced preallocation is durable.
    let fs = SimFs::new(0);
    let f = synced_file(&fs, p, b"x");
    f.preallocate(2048).unwrap();
    f.sync_data().unwrap();
    fs.crash();
    assert_eq!(reopen(&fs, p).len().unwrap(), 2048);
}

/// Runs a fixed mixed workload and returns every file's image and the report after a crash.
fn workload_then_crash(seed: u64) -> (Vec<(PathBuf, Vec<u8>)>, CrashReport) {
    let fs = SimFs::new(seed);
    for name in ["a", "b", "c"] {
        let p = Path::new("d").join(name);
        let f = synced_file(&fs, &p, &pattern(1, 0, 3000));
        for i in 0..6usize {
            f.write_all_at(&pattern(i as u8 + 2, i * 777, 1500), (i * 777) as u64).unwrap();
        }
        f.preallocate(9000).unwrap();
        f.write_vectored_all_at(&[&[1u8; 600], &[2u8; 700]], 8500).unwrap();
    }
    let report = fs.crash();
    let images = fs
        .file_names()
        .into_iter()
        .map(|p| {
            let image = read_all(&reopen(&fs, &p));
            assert_eq!(fs.durable_image(&p).unwrap(), image);
            (p, image)
        })
        .collect();
    (images, report)
}

#[test]
fn same_seed_same_outcome() {
    let mut outcomes = Vec::new();
    for seed in [3, 4, 5, 6] {
        let first = workload_then_crash(seed);
        assert_eq!(first, workload_then_crash(seed), "seed {seed}");
        assert_eq!(first.1.writes_applied + first.1.writes_dropped + first.1.writes_torn, 24);
        outcomes.push(first);
    }
    // And the seed matters.
    outcomes.dedup();
    assert!(outcomes.len() > 1);
}

#[test]
fn handles_from_before_a_crash_are_dead() {
    let fs = SimFs::new(7);
    let p = Path::new("a");
    let old = synced_file(&fs, p, b"durable");
    old.write_all_at(b"DURABLE", 0).unwrap();
    fs.crash();
    let check = |e: io::Error| {
        assert_eq!(e.kind(), io::ErrorKind::Other);
        assert_eq!(e.to_string(), DEAD_HANDLE);
    };
    check(old.read_exact_at(&mut [0u8; 1], 0).unwrap_err());
    check(old.write_all_at(b"x", 0).unwrap_err());
    check(old.write_vectored_all_at(&[b"x"], 0).unwrap_err());
    check(old.sync_data().unwrap_err());
    check(old.sync_all().unwrap_err());
    check(old.len().unwrap_err());
    check(old.is_empty().unwrap_err());
    check(old.preallocate(4096).unwrap_err());
    check(old.set_len(0).unwrap_err());
    assert_eq!(old.path(), p);
    // None of that reached the file, and a new handle works on the post-crash image.
    let new = reopen(&fs, p);
    let image = read_all(&new);
    assert!(image == b"durable" || image == b"DURABLE");
    new.write_all_at(b"!", 7).unwrap();
    assert_eq!(new.len().unwrap(), 8);
    assert_eq!(fs.writes(), 3);
}

#[test]
fn never_synced_new_files_vanish_on_crash() {
    let fs = SimFs::new(11);
    let dir = Path::new("/db");
    let by_sync = fs.open(&dir.join("by_sync"), OpenMode::CreateNew).unwrap();
    by_sync.write_all_at(b"synced", 0).unwrap();
    by_sync.sync_data().unwrap();
    let by_dir = fs.open(&dir.join("by_dir"), OpenMode::OpenOrCreate).unwrap();
    by_dir.write_all_at(b"data", 0).unwrap();
    fs.sync_dir(dir).unwrap();
    // sync_dir covers the files in the directory at the time, not later ones.
    let late = fs.open(&dir.join("late"), OpenMode::CreateNew).unwrap();
    late.write_all_at(b"late", 0).unwrap();
    let lost = fs.open(Path::new("/elsewhere/lost"), OpenMode::CreateNew).unwrap();
    lost.write_all_at(b"lost", 0).unwrap();
    assert_eq!(fs.file_names().len(), 4);
    assert_eq!(fs.durable_image(&dir.join("by_dir")).unwrap(), b"");
    assert_eq!(fs.durable_image(&dir.join("late")), None);

    let report = fs.crash();
    assert_eq!(report.files_dropped, 2);
    assert_eq!(report.writes_applied + report.writes_dropped, 1); // by_dir's write
    assert_eq!(fs.file_names(), vec![dir.join("by_dir"), dir.join("by_sync")]);
    assert_eq!(fs.list(dir).unwrap(), fs.file_names());
    assert!(!fs.exists(&dir.join("late")));
    assert!(!fs.exists(Path::new("/elsewhere/lost")));
    assert_eq!(read_all(&reopen(&fs, &dir.join("by_sync"))), b"synced");
    let by_dir = read_all(&reopen(&fs, &dir.join("by_dir")));
    assert!(by_dir.is_empty() || by_dir == b"data");
    // Survivors are durable entries now; a second crash keeps them.
    assert_eq!(fs.crash().files_dropped, 0);
    assert_eq!(fs.file_names().len(), 2);
}

#[test]
fn remove_is_immediate_and_durable_and_open_handles_keep_the_data() {
    let fs = SimFs::new(12);
    let p = Path::new("a");
    let f = synced_file(&fs, p, b"abc");
    fs.remove(p).unwrap();
    assert!(!fs.exists(p));
    assert_eq!(fs.remove(p).unwrap_err().kind(), io::ErrorKind::NotFound);
    assert_eq!(fs.open(p, OpenMode::Existing).unwrap_err().kind(), io::ErrorKind::NotFound);
    f.write_all_at(b"d", 3).unwrap();
    f.sync_data().unwrap();
    assert_eq!(read_all(&f), b"abcd");
    assert_eq!(fs.durable_image(p), None);
    assert_eq!(fs.crash(), CrashReport::default());
    assert!(fs.file_names().is_empty());
}

#[test]
fn fail_nth_write_returns_the_error_and_has_no_effect() {
    for (kind, code) in [(FaultKind::Eio, libc::EIO), (FaultKind::Enospc, libc::ENOSPC)] {
        let fs = SimFs::new(13);
        let p = Path::new("a");
        let f = synced_file(&fs, p, b"0123");
        let g = fs.open(Path::new("b"), OpenMode::CreateNew).unwrap();
        let writes = fs.writes();
        // Every kind of write call counts, on any file.
        fs.fail_nth_write(4, kind);
        f.write_all_at(b"a", 0).unwrap();
        g.preallocate(100).unwrap();
        f.set_len(5).unwrap();
        assert_eq!(raw(f.write_vectored_all_at(&[b"x", b"y"], 0)), Some(code));
        assert_eq!(read_all(&f), b"a123\0");
        assert_eq!(fs.writes(), writes + 3);
        // Only that one call fails.
        f.write_all_at(b"b", 1).unwrap();
        assert_eq!(read_all(&f), b"ab23\0");
        for fail in [
            |f: &FileRef| f.write_all_at(b"zz", 10),
            |f: &FileRef| f.preallocate(4096),
            |f: &FileRef| f.set_len(0),
        ] {
            fs.fail_nth_write(1, kind);
            assert_eq!(raw(fail(&f)), Some(code));
            assert_eq!(read_all(&f), b"ab23\0");
        }
        // The failed calls left nothing for a crash to apply.
        f.sync_data().unwrap();
        fs.crash();
        assert_eq!(read_all(&reopen(&fs, p)), b"ab23\0");
    }
}

#[test]
fn fail_nth_sync_makes_nothing_durable_and_loses_the_writes() {
    for (kind, code) in [(FaultKind::Eio, libc::EIO), (FaultKind::Enospc, libc::ENOSPC)] {
        let fs = SimFs::new(14);
        let p = Path::new("a");
        let f = synced_file(&fs, p, b"old!");
        let g = fs.open(Path::new("new"), OpenMode::CreateNew).unwrap();
        f.write_all_at(b"NEW", 0).unwrap();
        g.write_all_at(b"g", 0).unwrap();
        let syncs = fs.syncs();
        fs.fail_nth_sync(2, kind);
        f.sync_all().unwrap();
        f.write_all_at(b"lost", 4).unwrap();
        // The new file's first sync fails: its entry stays volatile.
        assert_eq!(raw(g.sync_data()), Some(code));
        assert_eq!(fs.durable_image(Path::new("new")), None);
        assert_eq!(fs.syncs(), syncs + 1);
        // A failed sync of `f` itself: reads still see the write...
        fs.fail_nth_sync(1, kind);
        assert_eq!(raw(f.sync_data()), Some(code));
        assert_eq!(read_all(&f), b"NEW!lost");
        assert_eq!(fs.durable_image(p).unwrap(), b"NEW!");
        // ...but a retried sync "succeeds" without saving it (fsyncgate).
        f.sync_data().unwrap();
        assert_eq!(fs.durable_image(p).unwrap(), b"NEW!");
        // Writes after the failure are saved by a later sync as usual.
        f.write_all_at(b"+", 8).unwrap();
        f.sync_data().unwrap();
        assert_eq!(fs.durable_image(p).unwrap(), b"NEW!\0\0\0\0+");
        let report = fs.crash();
        assert_eq!(report.files_dropped, 1);
        assert_eq!(read_all(&reopen(&fs, p)), b"NEW!\0\0\0\0+");
    }
}

#[test]
fn power_off_after_stops_every_effect_until_the_crash() {
    let fs = SimFs::new(15);
    let dir = Path::new("d");
    let p = dir.join("a");
    let f = synced_file(&fs, &p, b"0000");
    let other = synced_file(&fs, &dir.join("b"), b"b");
    let ops = fs.ops();
    fs.power_off_after(2);
    f.write_all_at(b"1", 0).unwrap();
    f.sync_data().unwrap();
    assert_eq!(fs.ops(), ops + 2);
    // The machine is off: nothing takes effect, reads still work.
    assert_eq!(raw(f.write_all_at(b"2", 1)), Some(libc::EIO));
    assert_eq!(raw(f.write_vectored_all_at(&[b"2"], 1)), Some(libc::EIO));
    assert_eq!(raw(f.preallocate(4096)), Some(libc::EIO));
    assert_eq!(raw(f.set_len(0)), Some(libc::EIO));
    assert_eq!(raw(f.sync_data()), Some(libc::EIO));
    assert_eq!(raw(f.sync_all()), Some(libc::EIO));
    assert_eq!(raw(fs.sync_dir(dir)), Some(libc::EIO));
    assert_eq!(raw(fs.remove(&dir.join("b"))), Some(libc::EIO));
    assert_eq!(
        fs.open(&dir.join("c"), OpenMode::CreateNew).unwrap_err().raw_os_error(),
        Some(libc::EIO)
    );
    assert_eq!(read_all(&f), b"1000");
    assert_eq!(read_all(&other), b"b");
    assert!(fs.exists(&dir.join("b")));
    assert_eq!(fs.ops(), ops + 2);
    // Power-off refusals do not use up an armed fault.
    fs.fail_nth_write(1, FaultKind::Enospc);
    assert_eq!(raw(f.write_all_at(b"3", 2)), Some(libc::EIO));
    assert_eq!(fs.crash(), CrashReport::default());
    // The crash turns the power back on.
    let f = reopen(&fs, &p);
    assert_eq!(read_all(&f), b"1000");
    assert_eq!(raw(f.write_all_at(b"4", 3)), Some(libc::ENOSPC));
    f.write_all_at(b"4", 3).unwrap();
    f.sync_data().unwrap();
    assert_eq!(fs.durable_image(&p).unwrap(), b"1004");
    // A cut at zero is immediate.
    fs.power_off_after(0);
    assert_eq!(raw(f.write_all_at(b"5", 0)), Some(libc::EIO));
}

#[test]
fn unsynced_writes_before_a_power_cut_may_still_land_or_tear() {
    let p = Path::new("a");
    let mut seen = CrashReport::default();
    for seed in 0..60 {
        let fs = SimFs::new(seed);
        let f = synced_file(&fs, p, &[0u8; 2048]);
        fs.power_off_after(1);
        f.write_all_at(&[1u8; 2048], 0).unwrap();
        assert!(f.sync_data().is_err());
        let report = fs.crash();
        seen.writes_applied += report.writes_applied;
        seen.writes_dropped += report.writes_dropped;
        seen.writes_torn += report.writes_torn;
    }
    assert!(seen.writes_applied > 0 && seen.writes_dropped > 0 && seen.writes_torn > 0);
}

#[test]
fn impossible_ranges_fail_without_effect_or_panic() {
    let fs = SimFs::new(16);
    let f = synced_file(&fs, Path::new("a"), b"ok");
    let writes = fs.writes();
    assert!(f.write_all_at(b"x", u64::MAX).is_err());
    assert!(f.write_vectored_all_at(&[b"x", b"y"], u64::MAX - 1).is_err());
    assert!(f.set_len(u64::MAX).is_err());
    assert!(f.preallocate(u64::MAX).is_err());
    assert_eq!(
        f.read_exact_at(&mut [0u8; 4], u64::MAX - 1).unwrap_err().kind(),
        io::ErrorKind::UnexpectedEof
    );
    f.write_all_at(b"", u64::MAX).unwrap();
    assert_eq!(read_all(&f), b"ok");
    assert_eq!(fs.writes(), writes + 1);
    fs.crash();
    assert_eq!(fs.durable_image(Path::new("a")).unwrap(), b"ok");
}

#[test]
fn growth_without_fallocate_writes_a_byte_per_block_and_can_stop_part_way() {
    let p = Path::new("a");
    // Every write counts: growing 600 -> 8192 with 4096-byte blocks is two writes, the
    // first at 600 + (7592 - 1) % 4096 = 4095, the last at 8191.
    let fs = SimFs::new(20);
    fs.without_fallocate(4096);
    let f = synced_file(&fs, p, &[7u8; 600]);
    let writes = fs.writes();
    f.preallocate(8192).unwrap();
    assert_eq!(fs.writes(), writes + 2);
    assert_eq!(f.len().unwrap(), 8192);
    assert!(read_all(&f)[600..].iter().all(|&b| b == 0));
    // A fault on the second write leaves the file one block longer than it was.
    fs.fail_nth_write(2, FaultKind::Enospc);
    assert_eq!(raw(f.preallocate(3 * 8192)), Some(libc::ENOSPC));
    assert_eq!(f.len().unwrap(), 8192 + 4096);
    // A crash during an unsynced growth keeps any subset of the bytes.
    let mut lengths = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let fs = SimFs::new(seed);
        fs.without_fallocate(4096);
        let f = synced_file(&fs, p, &[1u8; 8192]);
        f.preallocate(4 * 8192).unwrap();
        fs.crash();
        let len = reopen(&fs, p).len().unwrap();
        assert_eq!(len % 4096, 0);
        lengths.insert(len);
    }
    assert!(lengths.iter().any(|l| l % 8192 != 0), "{lengths:?}");
}

#[test]
fn a_space_limit_refuses_growth_past_it_with_enospc() {
    let fs = SimFs::new(21);
    let a = synced_file(&fs, Path::new("a"), &[1u8; 1000]);
    let b = synced_file(&fs, Path::new("b"), &[2u8; 1000]);
    fs.set_space_limit(Some(4000));
    // Overwrites inside the file need no space.
    a.write_all_at(&[3u8; 1000], 0).unwrap();
    assert_eq!(raw(a.write_all_at(&[3u8; 10], 2995)), Some(libc::ENOSPC));
    assert_eq!(raw(b.preallocate(3001)), Some(libc::ENOSPC));
    assert_eq!(raw(b.set_len(3001)), Some(libc::ENOSPC));
    b.preallocate(3000).unwrap();
    // Without fallocate the growth goes as far as the space does.
    fs.without_fallocate(512);
    a.set_len(0).unwrap();
    assert_eq!(raw(a.preallocate(2048)), Some(libc::ENOSPC));
    assert_eq!(a.len().unwrap(), 512);
    fs.set_space_limit(None);
    a.preallocate(2048).unwrap();
    assert_eq!(a.len().unwrap(), 2048);
}

#[test]
fn sector_pieces_cut_at_absolute_boundaries() {
    assert_eq!(sector_pieces(700, 1700), vec![(700, 1024), (1024, 1536), (1536, 1700)]);
    assert_eq!(sector_pieces(512, 1024), vec![(512, 1024)]);
    assert_eq!(sector_pieces(0, 1), vec![(0, 1)]);
    assert!(sector_pieces(5, 5).is_empty());
}

#[test]
fn concurrent_writers_and_a_crash_neither_panic_nor_lose_synced_data() {
    let fs = SimFs::new(17);
    // Every thread opens its file before the crash, or a late one would never stop.
    let opened = Arc::new(std::sync::Barrier::new(5));
    let threads: Vec<_> = (0..4u8)
        .map(|t| {
            let fs = fs.clone();
            let opened = Arc::clone(&opened);
            std::thread::spawn(move || {
                let f = fs.open(Path::new(&format!("t{t}")), OpenMode::CreateNew).unwrap();
                opened.wait();
                let mut synced = 0u64;
                // Fail stop at the first error: the crash kills this handle.
                for i in 0..u64::MAX {
                    let step = f.write_all_at(&[t; 512], i * 512).and_then(|()| f.sync_data());
                    if step.is_err() {
                        break;
                    }
                    synced = i + 1;
                }
                synced
            })
        })
        .collect();
    opened.wait();
    while fs.syncs() < 200 {
        std::thread::yield_now();
    }
    fs.crash();
    for (t, thread) in threads.into_iter().enumerate() {
        let synced = thread.join().unwrap() as usize;
        let p = PathBuf::from(format!("t{t}"));
        let image = fs.durable_image(&p).unwrap_or_default();
        assert!(image.len() >= synced * 512 && image.len() <= (synced + 1) * 512);
        assert!(image.iter().all(|&b| b == t as u8));
    }
}
