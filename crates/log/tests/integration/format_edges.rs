//! One named test per edge of the log format, in the manner of LevelDB's `log_test.cc`.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::Arc;

use common::*;
use walden_io::{OpenMode, Vfs};
use walden_log::{Durability, LogConfig, LogError, LogManager, RecordKind};

/// File offset of stream position `lsn` for a log whose segment 0 is in slot 0 (a fresh log).
fn offset_in_first_segment(lsn: u64) -> u64 {
    4096 + 512 + lsn
}

fn corrupt(vfs: &Arc<dyn Vfs>, offset: u64, bytes: &[u8]) {
    let f = vfs.open(&log_path(), OpenMode::Existing).unwrap();
    f.write_all_at(bytes, offset).unwrap();
}

fn read(vfs: &Arc<dyn Vfs>, offset: u64, len: usize) -> Vec<u8> {
    let f = vfs.open(&log_path(), OpenMode::Existing).unwrap();
    let mut b = vec![0; len];
    f.read_exact_at(&mut b, offset).unwrap();
    b
}

#[test]
fn empty_log_opens_at_lsn_zero() {
    let vfs = mem();
    let (log, report) = LogManager::open(Arc::clone(&vfs), &log_path(), small_config()).unwrap();
    assert!(report.created);
    assert_eq!((report.start_lsn, report.end_lsn), (0, 0));
    log.close().unwrap();
    let (log, report) = LogManager::open(Arc::clone(&vfs), &log_path(), small_config()).unwrap();
    assert!(!report.created);
    assert_eq!(report.end_lsn, 0);
    assert!(records(&log).is_empty());
}

#[test]
fn small_full_commit_is_one_sector() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    log.append_begin(1).unwrap();
    log.append_payload(1, &[1; 100]).unwrap();
    let r = log.append_commit(1, Durability::Full).unwrap();
    // 32 (block) + 16 (begin) + 116 (payload) + 32 (commit) = 196 bytes, one 512-byte sector.
    assert_eq!(r.lsn, 196);
    assert_eq!(log.hardened_lsn(), 512);
    assert_eq!(log.stats().bytes_flushed, 512);
    let recs = records(&log);
    assert_eq!(recs.iter().map(|r| r.lsn).collect::<Vec<_>>(), vec![48, 164, 196]);
    assert_eq!(recs[2].commit().unwrap().durability, Durability::Full);
}

#[test]
fn next_block_starts_at_the_next_sector_after_a_sealed_block() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    log.append_commit(1, Durability::Full).unwrap();
    let r = log.append_commit(2, Durability::Full).unwrap();
    assert_eq!(r.lsn, 512 + 32 + 32);
    assert_eq!(committed(&log), vec![1, 2]);
}

#[test]
fn record_exactly_filling_a_block() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    // A 60 KB block holds 61,440 - 32 header bytes: one record of that size exactly.
    let body = vec![9u8; 61_440 - 32 - 16];
    let lsn = log.append_payload(1, &body).unwrap();
    assert_eq!(lsn, 61_440);
    let next = log.append_payload(2, b"x").unwrap();
    assert_eq!(next, 61_440 + 32 + 17, "the next record opens a new block");
    log.flush_log().unwrap();
    let recs = records(&log);
    assert_eq!(recs[0].body, body);
    assert_eq!(recs[1].body, b"x");
}

#[test]
fn record_spanning_blocks_is_fragmented_and_reassembled() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    let body: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    log.append_payload(7, b"before").unwrap();
    log.append_payload(7, &body).unwrap();
    log.append_payload(7, b"after").unwrap();
    log.close().unwrap();
    let log = open(&vfs, small_config());
    let recs = records(&log);
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[1].body, body);
    assert_eq!(recs[2].body, b"after");
}

#[test]
fn blocks_never_cross_a_segment_end() {
    let vfs = mem();
    // 8 KiB segments: 7,680 data bytes each, so blocks are cut at segment ends.
    let config = LogConfig { segment_size: 8192, ..small_config() };
    let log = open(&vfs, config.clone());
    for id in 0..100 {
        log.append_payload(id, &[id as u8; 300]).unwrap();
    }
    log.flush_log().unwrap();
    assert!(log.stats().segments_active >= 4, "counted as segments are activated");
    log.close().unwrap();
    let log = open(&vfs, config);
    let recs = records(&log);
    assert_eq!(recs.len(), 100);
    assert!(recs.iter().enumerate().all(|(i, r)| r.body == vec![i as u8; 300]));
    assert!(log.stats().segments_active >= 4);
}

#[test]
fn record_longer_than_the_limit_is_refused() {
    let log = open(&mem(), small_config());
    let err = log.append_payload(1, &vec![0; walden_log::MAX_RECORD_LEN + 1]).unwrap_err();
    assert!(matches!(err, LogError::RecordTooLarge { .. }));
    log.append_payload(1, b"the log still works").unwrap();
}

#[test]
fn torn_tail_is_truncated_and_earlier_blocks_are_kept() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    log.append_commit(1, Durability::Full).unwrap();
    let second = log.append_commit(2, Durability::Full).unwrap();
    assert_eq!(second.lsn, 512 + 64);
    log.close().unwrap();
    // Tear the second block: its body changes, its checksum no longer matches.
    corrupt(&vfs, offset_in_first_segment(512 + 40), &[0xff; 8]);
    let (log, report) = LogManager::open(Arc::clone(&vfs), &log_path(), small_config()).unwrap();
    assert_eq!(report.end_lsn, 512, "the end is before the torn block");
    assert_eq!(committed(&log), vec![1]);
    let r = log.append_commit(3, Durability::Full).unwrap();
    assert_eq!(r.lsn, 512 + 64, "new writes go where the torn block was");
    log.close().unwrap();
    assert_eq!(committed(&open(&vfs, small_config())), vec![1, 3]);
}

/// The (lsn, flush_lsn) of each block, read from a fresh log's first segment.
fn block_headers(vfs: &Arc<dyn Vfs>, end: u64) -> Vec<(u64, u64)> {
    let mut blocks = Vec::new();
    let mut p = 0;
    while p < end {
        let h = read(vfs, offset_in_first_segment(p), 32);
        assert_eq!(&h[0..4], b"WBLK");
        let used = u64::from(u32::from_le_bytes(h[4..8].try_into().unwrap()));
        let flush_lsn = u64::from_le_bytes(h[16..24].try_into().unwrap());
        blocks.push((p, flush_lsn));
        p += used.div_ceil(512) * 512;
    }
    blocks
}

/// Writes a log whose last write carried several blocks; returns it with the first block of
/// that write. A slow disk makes appends seal several blocks while a flush syncs.
fn log_ending_in_a_multi_block_write(config: &LogConfig) -> (Arc<dyn Vfs>, u64) {
    for _ in 0..20 {
        let vfs: Arc<dyn Vfs> = Arc::new(SlowFs {
            inner: walden_io::MemFs::new(),
            delay: std::time::Duration::from_millis(20),
        });
        let log = open(&vfs, config.clone());
        log.append_commit(1, Durability::Full).unwrap();
        for id in 2..10 {
            log.append_payload(id, &vec![id as u8; 61_000]).unwrap();
        }
        let end = log.flush_log().unwrap();
        log.close().unwrap();
        let blocks = block_headers(&vfs, end);
        let last_write = blocks.last().unwrap().1;
        if blocks.iter().filter(|b| b.1 == last_write).count() >= 2 {
            return (vfs, last_write);
        }
    }
    panic!("could not make a write of several blocks");
}

#[test]
fn torn_write_followed_by_blocks_of_the_same_write_is_a_torn_tail() {
    let config = LogConfig { segment_size: 1 << 20, ..small_config() };
    let (vfs, damaged) = log_ending_in_a_multi_block_write(&config);
    // Damage the first block of the last write; its later blocks are intact.
    corrupt(&vfs, offset_in_first_segment(damaged + 100), &[0xaa; 4]);
    let (log, report) = LogManager::open(Arc::clone(&vfs), &log_path(), config.clone()).unwrap();
    assert_eq!(report.end_lsn, damaged);
    let (at, remnants_end) = report.torn_tail_zeroed.expect("remnants zeroed");
    assert_eq!(at, damaged);
    assert!(remnants_end > damaged + 512);
    assert_eq!(committed(&log), vec![1]);
    drop(log);
    let (_, report) = LogManager::open(Arc::clone(&vfs), &log_path(), config).unwrap();
    assert_eq!(report.torn_tail_zeroed, None, "a second open finds the same clean end");
    assert_eq!(report.end_lsn, damaged);
}

#[test]
fn damage_followed_by_a_later_write_refuses_to_open() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    log.append_commit(1, Durability::Full).unwrap();
    log.append_commit(2, Durability::Full).unwrap();
    log.append_commit(3, Durability::Full).unwrap();
    log.close().unwrap();
    // The second block was hardened by its own flush, and the third by a later one.
    corrupt(&vfs, offset_in_first_segment(512 + 36), &[1, 2, 3]);
    let err = LogManager::open(Arc::clone(&vfs), &log_path(), small_config()).unwrap_err();
    assert!(matches!(err, LogError::Corrupt { lsn: 512, .. }), "{err}");
}

#[test]
fn misdirected_block_is_not_accepted() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    log.append_commit(1, Durability::Full).unwrap();
    log.close().unwrap();
    // Copy the valid block 0 to where block 1 would be, fixing up its LSN field: the
    // checksum still binds it to its original offset.
    let mut block = read(&vfs, offset_in_first_segment(0), 512);
    block[8..16].copy_from_slice(&512u64.to_le_bytes());
    corrupt(&vfs, offset_in_first_segment(512), &block);
    let (log, report) = LogManager::open(Arc::clone(&vfs), &log_path(), small_config()).unwrap();
    assert_eq!(report.end_lsn, 512);
    assert_eq!(committed(&log), vec![1]);
}

#[test]
fn stale_blocks_of_a_reused_segment_are_not_read_as_new() {
    let vfs = mem();
    let config = LogConfig { segment_size: 8192, initial_segments: 2, ..small_config() };
    let log = open(&vfs, config.clone());
    for id in 0..200 {
        log.append_commit(id, Durability::Full).unwrap();
        log.set_truncation_lsn(log.hardened_lsn());
    }
    let end = log.end_lsn();
    log.close().unwrap();
    let log = open(&vfs, config);
    assert_eq!(log.end_lsn(), end, "the end is found among reused segments");
    assert_eq!(committed(&log).last(), Some(&199));
}

#[test]
fn not_a_log_file_is_refused() {
    let vfs = mem();
    let f = vfs.open(&log_path(), OpenMode::CreateNew).unwrap();
    f.write_all_at(&[0x42; 8192], 0).unwrap();
    let err = LogManager::open(Arc::clone(&vfs), &log_path(), small_config()).unwrap_err();
    assert!(matches!(err, LogError::Corrupt { .. }), "{err}");
}

#[test]
fn scan_after_an_lsn_skips_earlier_records() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    let mut lsns = Vec::new();
    for id in 0..50 {
        lsns.push(log.append_payload(id, &vec![1; 5000]).unwrap());
    }
    log.flush_log().unwrap();
    let after = lsns[20];
    let got: Vec<u64> = log.scan(after).map(|r| r.unwrap().txn).collect();
    assert_eq!(got, (21..50).collect::<Vec<_>>());
    let all = records(&log);
    assert!(all.iter().all(|r| r.kind == RecordKind::Payload));
}
