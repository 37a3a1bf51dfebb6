//! The log file's size: growth by FILEGROWTH steps ahead of need, MAXSIZE (new work refused
//! with `LogError::Full`, the layers' 9002), room again after truncation, after raising the
//! maximum or after the disk frees up, and shrinking the unused tail.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use walden_io::{FileGrowth, GrowthStep, SimFs, Vfs};
use walden_log::{Durability, LogConfig, LogError, LogManager};

const SEGMENT: u64 = 64 * 1024;

fn config(step_segments: u64, max_segments: Option<u64>) -> LogConfig {
    LogConfig {
        growth: FileGrowth {
            step: GrowthStep::Bytes(step_segments * SEGMENT),
            max_bytes: max_segments.map(|m| m * SEGMENT),
        },
        ..small_config()
    }
}

/// Appends fully durable transactions of 1 KB until `check_room` refuses one; returns how
/// many went in.
fn fill(log: &LogManager, first_id: u64) -> u64 {
    let mut n = 0;
    loop {
        match log.check_room(4096) {
            Ok(()) => {}
            Err(LogError::Full) => return n,
            Err(e) => panic!("{e}"),
        }
        let id = first_id + n;
        log.append_payload(id, &[7; 1024]).unwrap();
        log.append_commit(id, Durability::Full).unwrap();
        n += 1;
        assert!(n < 100_000, "the log never filled");
    }
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn the_writer_grows_the_file_by_whole_steps_ahead_of_the_log() {
    let vfs = mem();
    let log = open(&vfs, config(4, None));
    assert_eq!(log.file_bytes(), 4096 + 2 * SEGMENT);
    for id in 1..=200 {
        log.append_payload(id, &[1; 1024]).unwrap();
        log.append_commit(id, Durability::Full).unwrap();
    }
    // 200 KB of log crossed into segment 3: the writer added steps of 4 segments ahead.
    wait_for("growth", || log.stats().segments_total >= 6);
    let s = log.stats();
    let slots = s.segments_total;
    // A flush that outran the writer grows by one segment itself; the writer by steps.
    let by_writer = slots - 2 - s.growths_on_flush_path;
    assert_eq!(by_writer % 4, 0, "grown by whole steps: {slots} slots, {s:?}");
    assert!(by_writer > 0);
    assert_eq!(log.file_bytes(), 4096 + slots * SEGMENT);
    assert_eq!(log.room_limit(), u64::MAX);
}

#[test]
fn maxsize_refuses_new_work_until_it_is_raised_or_the_log_truncates() {
    let vfs = mem();
    let log = open(&vfs, config(1, Some(4)));
    let n = fill(&log, 1);
    assert!(n > 100, "{n} transactions fit in 4 segments");
    assert!(log.stats().segments_total <= 4, "never grown past MAXSIZE");
    // Rollback-style appends are not checked: they still go in.
    log.append_payload(n + 1, &[0; 512]).unwrap();
    log.append_abort(n + 1).unwrap();
    // A larger maximum makes room at once.
    log.set_growth(FileGrowth { step: GrowthStep::Bytes(SEGMENT), max_bytes: Some(6 * SEGMENT) });
    log.check_room(4096).unwrap();
    let more = fill(&log, 10_000);
    assert!(more > 0);
    // Truncation (a checkpoint under SIMPLE recovery) frees the old segments for reuse.
    log.set_truncation_lsn(log.end_lsn());
    log.check_room(4096).unwrap();
    assert!(fill(&log, 20_000) > 100);
    assert!(log.stats().segments_total <= 6);
}

#[test]
fn a_full_disk_stops_growth_without_failing_the_log_and_it_resumes_once_freed() {
    let sim = Arc::new(SimFs::new(3));
    let vfs: Arc<dyn Vfs> = sim.clone();
    let log = open(&vfs, config(2, None));
    // Room for the header and three segments only: the writer's growth of two segments,
    // asked for once the log reaches its second segment, fails.
    sim.set_space_limit(Some(4096 + 3 * SEGMENT));
    let mut id = 0;
    while log.stats().segments_active < 2 {
        id += 1;
        log.append_payload(id, &[7; 1024]).unwrap();
        log.append_commit(id, Durability::Full).unwrap();
    }
    wait_for("the failed growth", || log.room_limit() != u64::MAX);
    let n = fill(&log, 1000);
    assert!(n > 10, "the rest of the second segment filled: {n}");
    assert!(log.failure().is_none(), "running out of disk while growing ahead is not fatal");
    sim.set_space_limit(None);
    // The refused request asked the writer to try again; it now succeeds.
    wait_for("growth after the disk freed up", || log.check_room(4096).is_ok());
    for id in 10_000..10_200 {
        log.check_room(4096).unwrap();
        log.append_payload(id, &[7; 1024]).unwrap();
        log.append_commit(id, Durability::Full).unwrap();
    }
    assert!(log.stats().segments_total > 3);
    assert!(log.failure().is_none());
}

#[test]
fn shrink_cuts_the_unused_tail_and_keeps_what_is_needed() {
    let vfs = mem();
    let log = open(&vfs, config(8, None));
    for id in 1..=300 {
        log.append_payload(id, &[1; 1024]).unwrap();
        log.append_commit(id, Durability::Full).unwrap();
    }
    wait_for("growth", || log.stats().segments_total >= 10);
    let before = log.file_bytes();
    // Nothing truncated: only never-used slots at the end go.
    let kept = log.shrink(0).unwrap();
    assert!(kept < before);
    let end = log.end_lsn();
    let needed = end.div_ceil(SEGMENT - 512);
    assert!(kept >= 4096 + needed * SEGMENT, "every segment holding log stays");
    // After truncation the old segments are free, but the one holding the log's end keeps
    // the file as long as it is (as SQL Server's active virtual log file does), until the
    // log moves on into a reused slot at the front.
    log.set_truncation_lsn(end);
    assert_eq!(log.shrink(0).unwrap(), kept);
    let mut id = 1000;
    while log.end_lsn() < end + SEGMENT {
        id += 1;
        log.append_payload(id, &[2; 1024]).unwrap();
        log.append_commit(id, Durability::Full).unwrap();
    }
    log.set_truncation_lsn(log.end_lsn());
    let small = log.shrink(0).unwrap();
    assert!(small < kept, "{small} < {kept}");
    log.close().unwrap();
    drop(log);
    let again = open(&vfs, config(8, None));
    assert_eq!(committed(&again).last(), Some(&id));
}
