//! Counters: what the log did, with SQL Server's names where SQL Server has the counter.
//!
//! They are plain integers updated under the log's state lock, which every path that changes
//! them holds anyway, so leaving them on costs a few additions per flush and per commit.

use std::time::Duration;

/// Why a flush happened. Each is one of the flush triggers of the durability contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlushReason {
    /// A fully durable commit (hardening every earlier delayed commit with it).
    Commit,
    /// A log block filled (60 KB, or the end of a segment).
    BlockFull,
    /// The log buffer filled and an appender had to wait (`LOGBUFFER`).
    BufferFull,
    /// `flush_to(lsn)`: the buffer pool's write-ahead rule before writing a dirty page.
    WalRule,
    /// `flush_log()`: `sys.sp_flush_log`.
    FlushLog,
    /// The time bound on delayed commits (`max_delay_ms`).
    TimeBound,
    /// A clean shutdown.
    Shutdown,
}

impl FlushReason {
    /// Every reason, in the order of [`LogStats::flushes_by_reason`].
    pub const ALL: [FlushReason; 7] = [
        FlushReason::Commit,
        FlushReason::BlockFull,
        FlushReason::BufferFull,
        FlushReason::WalRule,
        FlushReason::FlushLog,
        FlushReason::TimeBound,
        FlushReason::Shutdown,
    ];

    pub(crate) fn index(self) -> usize {
        match self {
            FlushReason::Commit => 0,
            FlushReason::BlockFull => 1,
            FlushReason::BufferFull => 2,
            FlushReason::WalRule => 3,
            FlushReason::FlushLog => 4,
            FlushReason::TimeBound => 5,
            FlushReason::Shutdown => 6,
        }
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            FlushReason::Commit => "commit",
            FlushReason::BlockFull => "block_full",
            FlushReason::BufferFull => "buffer_full",
            FlushReason::WalRule => "wal_rule",
            FlushReason::FlushLog => "flush_log",
            FlushReason::TimeBound => "time_bound",
            FlushReason::Shutdown => "shutdown",
        }
    }
}

/// Upper bounds of the commits-per-flush histogram buckets: 1, 2, 4, ... 1024, and the rest.
pub const COMMITS_PER_FLUSH_BUCKETS: usize = 12;

/// A wait statistic, as in `sys.dm_os_wait_stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WaitStat {
    /// `waiting_tasks_count`.
    pub count: u64,
    /// `wait_time_ms`, in microseconds.
    pub total_us: u64,
    /// `max_wait_time_ms`, in microseconds.
    pub max_us: u64,
}

impl WaitStat {
    pub(crate) fn record(&mut self, waited: Duration) {
        let us = u64::try_from(waited.as_micros()).unwrap_or(u64::MAX);
        self.count += 1;
        self.total_us = self.total_us.saturating_add(us);
        self.max_us = self.max_us.max(us);
    }
}

/// A snapshot of the log's counters. Counts are cumulative since the log was opened, as SQL
/// Server's `.../sec` counters are in `sys.dm_os_performance_counters`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogStats {
    /// `Log Flushes/sec`: writes of log blocks followed by a sync.
    pub flushes: u64,
    /// Flushes by trigger, indexed as [`FlushReason::ALL`].
    pub flushes_by_reason: [u64; 7],
    /// `Log Bytes Flushed/sec`: stream bytes hardened (block headers and sector padding
    /// included: what went to the disk).
    pub bytes_flushed: u64,
    /// `Log Flush Waits/sec`: commits that waited for a flush.
    pub flush_waits: u64,
    /// `Log Flush Wait Time`, in microseconds: time commits spent waiting for flushes.
    pub flush_wait_time_us: u64,
    /// `Log Flush Write Time (ms)`, in microseconds: time spent writing and syncing.
    pub flush_write_time_us: u64,
    /// Wait type `WRITELOG`: every wait for the log to be hardened (commits, `flush_to`,
    /// `flush_log`).
    pub writelog: WaitStat,
    /// Wait type `LOGBUFFER`: appenders waiting for space in the log buffer.
    pub logbuffer: WaitStat,
    /// `sys.dm_io_virtual_file_stats.num_of_writes` for the log file.
    pub file_writes: u64,
    /// `num_of_bytes_written` for the log file (segment headers and growth included).
    pub file_bytes_written: u64,
    /// `io_stall_write_ms`, in microseconds: time in write and sync calls.
    pub file_write_stall_us: u64,
    /// Commits appended, fully durable.
    pub commits_full: u64,
    /// Commits appended, delayed.
    pub commits_delayed: u64,
    /// Histogram of commits hardened per flush: bucket `i` counts flushes that hardened up
    /// to `2^i` commits (and more than the previous bucket); the last bucket the rest. Flushes
    /// that hardened no commit are not counted.
    pub commits_per_flush: [u64; COMMITS_PER_FLUSH_BUCKETS],
    /// Commits hardened in all (the histogram's total mass).
    pub commits_hardened: u64,
    /// Delayed commits that stayed unhardened longer than `max_delay_ms`.
    pub max_delay_exceeded: u64,
    /// Every byte before this LSN is on disk.
    pub hardened_lsn: u64,
    /// The end of the appended log.
    pub end_lsn: u64,
    /// The LSN of the last commit record appended (0 if none since open).
    pub last_commit_lsn: u64,
    /// Commits appended but not yet hardened.
    pub unhardened_commits: u64,
    /// Age of the oldest of them, in microseconds (0 if none).
    pub oldest_unhardened_us: u64,
    /// Segments holding log (active segments).
    pub segments_active: u64,
    /// Slots in the file.
    pub segments_total: u64,
    /// Times a flush had to grow the file itself because no spare segment was ready.
    pub growths_on_flush_path: u64,
}

impl LogStats {
    /// Flushes for one trigger.
    pub fn flushes_for(&self, reason: FlushReason) -> u64 {
        self.flushes_by_reason[reason.index()]
    }

    /// Mean commits hardened per flush that hardened any.
    pub fn avg_commits_per_flush(&self) -> f64 {
        let flushes: u64 = self.commits_per_flush.iter().sum();
        if flushes == 0 {
            0.0
        } else {
            self.commits_hardened as f64 / flushes as f64
        }
    }
}

impl LogStats {
    /// Records a wait for hardening: `WRITELOG`, and for a commit `Log Flush Waits`.
    pub(crate) fn record_hardening_wait(&mut self, commit: bool, waited: Duration) {
        self.writelog.record(waited);
        if commit {
            self.flush_waits += 1;
            self.flush_wait_time_us += waited.as_micros() as u64;
        }
    }
}

/// The histogram bucket for a flush that hardened `commits` (> 0) commits.
pub(crate) fn bucket(commits: u64) -> usize {
    let log2_ceil = 64 - (commits.max(1) - 1).leading_zeros() as usize;
    log2_ceil.min(COMMITS_PER_FLUSH_BUCKETS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_powers_of_two() {
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(2), 1);
        assert_eq!(bucket(3), 2);
        assert_eq!(bucket(4), 2);
        assert_eq!(bucket(5), 3);
        assert_eq!(bucket(1024), 10);
        assert_eq!(bucket(1025), 11);
        assert_eq!(bucket(u64::MAX), 11);
    }
}
