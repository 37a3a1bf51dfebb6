//! The log file's space: the truncation point below which segments may be reused, the room
//! check that raises error 9002 before the log is full, and the file's growth (`FILEGROWTH` up
//! to `MAXSIZE`, ahead of need from the writer thread) and shrinking. A growth that runs out of
//! disk leaves the file unable to grow until a later growth succeeds; it never fails the log.

use std::path::Path;
use std::sync::atomic::Ordering;

use parking_lot::MutexGuard;
use std::time::Instant;

use walden_io::{FileGrowth, FileRef, OpenMode, Vfs};

use super::flush::fail;
use super::{
    fresh_random, now_us, LogConfig, LogManager, SegmentInfo, Shared, GROWTH_RETRY_INTERVAL,
};
use crate::format::{FileHeader, FILE_HEADER_SIZE, SECTOR};
use crate::segment::SegmentMap;
use crate::{LogError, Lsn};

impl LogManager {
    /// Tells the log that the layers above need nothing before `lsn` any more (SIMPLE recovery
    /// after a checkpoint), so segments wholly below it may be reused. Under FULL recovery the
    /// caller passes the oldest LSN a log backup still needs instead.
    pub fn set_truncation_lsn(&self, lsn: Lsn) {
        let hardened = self.hardened_lsn();
        let mut map = self.shared.segments.lock();
        map.truncation_lsn = map.truncation_lsn.max(lsn.min(hardened));
        self.shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
    }

    /// Turns away new work when the log is full: `Err(LogError::Full)` if appending `reserve`
    /// more bytes would take the log past the most it may hold (the maximum size, or the
    /// file as it is when it cannot grow) before a checkpoint or a log backup frees some.
    /// The caller passes, besides what the work itself may log, room for rolling back what
    /// its transaction logged so far: only new work is checked, so rollbacks always find
    /// room. Takes no lock while the log has no limit.
    pub fn check_room(&self, reserve: u64) -> Result<(), LogError> {
        let limit = self.shared.room_limit.load(Ordering::Relaxed);
        if limit == u64::MAX {
            return Ok(());
        }
        let end = self.shared.end_hint.load(Ordering::Relaxed);
        if end.saturating_add(reserve) <= limit {
            return Ok(());
        }
        // A file that could not grow for want of disk may be able to now: ask the writer to
        // try again, at most once a second (each try zero-fills until the disk is full).
        let map = self.shared.segments.lock();
        if map.out_of_disk {
            drop(map);
            let now = Instant::now();
            let mut st = self.shared.state.lock();
            if st.next_growth_retry.is_none_or(|at| now >= at) {
                st.next_growth_retry = Some(now + GROWTH_RETRY_INTERVAL);
                st.grow_wanted = true;
                st.retry_growth = true;
                self.shared.wake_writer.notify_one();
            }
        }
        Err(LogError::Full)
    }

    /// How far the log may run before new work is refused ([`LogManager::check_room`]);
    /// `u64::MAX` when nothing limits it.
    pub fn room_limit(&self) -> Lsn {
        self.shared.room_limit.load(Ordering::Relaxed)
    }

    /// The end of the appended log, read without the lock (it may be a moment old).
    pub fn end_hint(&self) -> Lsn {
        self.shared.end_hint.load(Ordering::Relaxed)
    }

    /// The growth policy in force.
    pub fn growth(&self) -> FileGrowth {
        self.shared.segments.lock().growth
    }

    /// Changes the growth policy (`ALTER DATABASE ... MODIFY FILE`): the maximum, the step,
    /// and a file that could not grow for want of disk tries again.
    pub fn set_growth(&self, growth: FileGrowth) {
        let mut map = self.shared.segments.lock();
        map.growth = growth;
        map.out_of_disk = false;
        self.shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
        let grow = map.spare_slots() < self.shared.config.spare_segments as usize;
        drop(map);
        if grow {
            self.shared.state.lock().grow_wanted = true;
            self.shared.wake_writer.notify_one();
        }
    }

    /// Grows the file now until it is at least `bytes` long (`MODIFY FILE (SIZE = ...)`),
    /// within the maximum; returns the new length.
    pub fn grow_to(&self, bytes: u64) -> Result<u64, LogError> {
        let mut map = self.shared.segments.lock();
        let want = bytes.saturating_sub(FILE_HEADER_SIZE).div_ceil(map.segment_size);
        let want = want.min(map.max_slots());
        if want > u64::from(map.slots) {
            let add = u32::try_from(want - u64::from(map.slots)).unwrap_or(u32::MAX);
            let result = map.grow(&self.shared.file, add);
            if let Err(e) = result {
                self.note_grow_error(&mut map, e.clone());
                return Err(e);
            }
            map.out_of_disk = false;
        }
        self.shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
        let total = u64::from(map.slots);
        let len = map.slot_offset(map.slots);
        drop(map);
        self.shared.state.lock().stats.segments_total = total;
        Ok(len)
    }

    /// `DBCC SHRINKFILE` of the log: frees the segments wholly below the truncation point and
    /// cuts free slots off the file's end down to `target_bytes` (the segment holding the
    /// log's end and everything after the truncation point stay). Returns the new length.
    pub fn shrink(&self, target_bytes: u64) -> Result<u64, LogError> {
        self.shared.state.lock().check_usable()?;
        let mut map = self.shared.segments.lock();
        let target = target_bytes.saturating_sub(FILE_HEADER_SIZE).div_ceil(map.segment_size);
        let slots = map.shrink(&self.shared.file, u32::try_from(target).unwrap_or(u32::MAX))?;
        self.shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
        let (active, len) = (map.active.len() as u64, map.slot_offset(slots));
        drop(map);
        let mut st = self.shared.state.lock();
        st.stats.segments_active = active;
        st.stats.segments_total = u64::from(slots);
        Ok(len)
    }

    /// The file's length now.
    pub fn file_bytes(&self) -> u64 {
        let map = self.shared.segments.lock();
        map.slot_offset(map.slots)
    }

    /// A growth failed: out of disk marks the file unable to grow (new work gets 9002 until a
    /// growth succeeds); anything else fails the log (rule 6).
    fn note_grow_error(&self, map: &mut SegmentMap, e: LogError) {
        note_grow_error(&self.shared, map, e);
    }

    /// Bytes per segment, header sector included, as the file was created with (the
    /// configuration's `segment_size` applies only to new files).
    pub fn segment_size(&self) -> u64 {
        self.shared.data_size + SECTOR
    }

    /// Every slot of the file, by file offset: what `sys.dm_db_log_info` lists as SQL Server
    /// lists its virtual log files.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        let map = self.shared.segments.lock();
        let mut by_slot: Vec<SegmentInfo> = (0..map.slots)
            .map(|slot| SegmentInfo {
                file_offset: map.slot_offset(slot),
                size: map.segment_size,
                sequence: None,
                active: false,
            })
            .collect();
        for (&sequence, slot) in &map.active {
            if let Some(info) = by_slot.get_mut(slot.index as usize) {
                info.sequence = Some(sequence);
                // Still needed: it holds log at or after the truncation point.
                info.active = (sequence + 1) * map.data_size > map.truncation_lsn;
            }
        }
        by_slot
    }

    /// The truncation point set by [`LogManager::set_truncation_lsn`] (0 until one is set):
    /// the log before it is no longer needed and its segments may be reused.
    pub fn truncation_lsn(&self) -> Lsn {
        self.shared.segments.lock().truncation_lsn
    }

    /// The oldest position the file still holds: reading may start there.
    pub fn start_lsn(&self) -> Lsn {
        let map = self.shared.segments.lock();
        map.start_lsn().unwrap_or_else(|| self.end_lsn())
    }
}

/// Grows the file by the policy's step while fewer than the configured spare segments are
/// ready and the policy allows (`retry`: also if the last growth ran out of disk). A step is
/// zero-filled a slot at a time, each under the segment map's lock: a flush that reaches the
/// end of its segment meanwhile waits for one slot's zero-fill at most, not a whole step's
/// (64 MB by default).
pub(super) fn grow_ahead(shared: &Shared, retry: bool) {
    let mut map = shared.segments.lock();
    if retry {
        map.out_of_disk = false;
    }
    'steps: while map.spare_slots() < shared.config.spare_segments as usize {
        let add = map.growth_slots();
        if add == 0 {
            break;
        }
        for _ in 0..add {
            if let Err(e) = map.grow(&shared.file, 1) {
                note_grow_error(shared, &mut map, e);
                break 'steps;
            }
            shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
            MutexGuard::unlocked_fair(&mut map, || {});
        }
    }
    shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
    let total = u64::from(map.slots);
    drop(map);
    shared.state.lock().stats.segments_total = total;
}

/// See [`LogManager::note_grow_error`].
fn note_grow_error(shared: &Shared, map: &mut SegmentMap, e: LogError) {
    match &e {
        LogError::Io { op: "grow", os_code: Some(code), .. }
            if std::io::Error::from_raw_os_error(*code).kind()
                == std::io::ErrorKind::StorageFull =>
        {
            map.out_of_disk = true;
            shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
        }
        _ => fail(shared, &mut shared.state.lock(), e),
    }
}

/// Creates a log file: header, zero-filled initial segments, all durable.
pub(super) fn create_file(
    vfs: &dyn Vfs,
    path: &Path,
    config: &LogConfig,
) -> Result<(FileRef, FileHeader), LogError> {
    let header = FileHeader {
        segment_size: config.segment_size,
        log_id: fresh_random(),
        created_us: now_us(),
    };
    let file = vfs.open(path, OpenMode::CreateNew).map_err(|e| LogError::from_io("create", e))?;
    let len = FILE_HEADER_SIZE + u64::from(config.initial_segments) * config.segment_size;
    file.preallocate(len).map_err(|e| LogError::from_io("grow", e))?;
    file.write_all_at(&header.encode(), 0).map_err(|e| LogError::from_io("write", e))?;
    file.sync_all().map_err(|e| LogError::from_io("sync", e))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        vfs.sync_dir(dir).map_err(|e| LogError::from_io("sync", e))?;
    }
    Ok((file, header))
}

/// Zeroes stream positions `[from, to)` (a torn tail's remnants) in the active segments.
pub(super) fn zero_range(
    file: &FileRef,
    map: &SegmentMap,
    from: Lsn,
    to: Lsn,
) -> Result<(), LogError> {
    let mut p = from;
    while p < to {
        let n = SegmentMap::room_in_segment(map.data_size, p).min(to - p);
        if let Some((offset, _)) = map.locate(p) {
            let zeros = vec![0u8; n as usize];
            file.write_all_at(&zeros, offset).map_err(|e| LogError::from_io("write", e))?;
        }
        p += n;
    }
    Ok(())
}
