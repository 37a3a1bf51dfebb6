//! `SET STATISTICS IO ON` and `SET STATISTICS TIME ON`: what each statement read and how
//! long it took, sent as the informational messages SQL Server sends (3615 per table, 3612
//! per statement, 3613 per batch's parse), so the habits of reading a slow query in SSMS's
//! Messages tab work here.
//!
//! Page reads are counted by the buffer pool per thread (`walden_storage::io_stats`); a read
//! of one table (a scan, a seek, a nonclustered index range with its key lookups) snapshots
//! the counters around itself and adds the difference to that table's line. CPU time is the
//! thread's own (`CLOCK_THREAD_CPUTIME_ID`), so other sessions' work is never counted.
//!
//! The page counters and the elapsed time, taken around every query and DML statement and
//! every procedure call, feed `sys.dm_exec_query_stats` and `sys.dm_exec_procedure_stats`
//! ([`RunClock`]).

use std::time::{Duration, Instant};

use walden_engine::catalog::TableDef;
use walden_storage::{page_reads, PageReads};

use crate::exec::execute::query::TableRef;
use crate::exec::session::Run;
use crate::exec::sysviews::query_stats::Sample;
use crate::exec::SqlError;

/// One table's reads in the running statement.
#[derive(Debug, Clone)]
pub(crate) struct TableIo {
    name: String,
    /// Scans and seeks started (a nested loops join seeks once per outer row).
    scans: u64,
    reads: PageReads,
}

/// What a statement had used when it started, for the messages at its end.
pub(crate) struct StatementStart {
    elapsed: Instant,
    cpu: Duration,
    /// The enclosing statement's table lines (a trigger's statements report their own).
    outer_io: Vec<TableIo>,
}

/// What a statement or procedure had used when it started, for `sys.dm_exec_query_stats`
/// and `sys.dm_exec_procedure_stats`: its elapsed time and page reads (its CPU time is the
/// request's, shared out by `query_stats::Pending`).
pub(crate) struct RunClock {
    elapsed: Instant,
    reads: PageReads,
}

impl RunClock {
    pub(crate) fn start() -> RunClock {
        RunClock { elapsed: Instant::now(), reads: page_reads() }
    }

    /// What was used since the start, by a run that returned `rows` rows or changed them.
    pub(crate) fn sample(&self, rows: u64) -> Sample {
        let reads = page_reads().since(self.reads);
        Sample {
            elapsed: self.elapsed.elapsed(),
            logical_reads: reads.logical,
            physical_reads: reads.physical,
            rows,
        }
    }
}

fn info(number: i32, text: String) -> SqlError {
    let mut m = SqlError::with_severity(number, 0, text);
    m.state = 1;
    m
}

/// Message 3613, sent before a batch runs: what parsing it took.
pub(crate) fn parse_and_compile_time(cpu: Duration, elapsed: Duration) -> SqlError {
    info(
        3613,
        format!(
            "SQL Server parse and compile time: \n   CPU time = {} ms, elapsed time = {} ms.",
            cpu.as_millis(),
            elapsed.as_millis()
        ),
    )
}

impl Run<'_> {
    /// Whether statements report their reads or times.
    pub(crate) fn statistics_on(&self) -> bool {
        self.s.opts.statistics_io || self.s.opts.statistics_time
    }

    /// Starts counting a statement's reads and time.
    pub(crate) fn statistics_start(&mut self) -> StatementStart {
        StatementStart {
            elapsed: Instant::now(),
            cpu: walden_io::clock::thread_cpu_time(),
            outer_io: std::mem::take(&mut self.s.statement_io),
        }
    }

    /// Sends the messages of a statement that began at `start`: one 3615 per table it read,
    /// in the order it first read them, then 3612 with its times.
    pub(crate) fn statistics_end(&mut self, start: StatementStart) {
        let tables = std::mem::replace(&mut self.s.statement_io, start.outer_io);
        if self.s.opts.statistics_io {
            for t in tables {
                self.out.message(&info(
                    3615,
                    format!(
                        "Table '{}'. Scan count {}, logical reads {}, physical reads {}, \
                         page server reads 0, read-ahead reads 0, page server read-ahead \
                         reads 0, lob logical reads 0, lob physical reads 0, lob page server \
                         reads 0, lob read-ahead reads 0, lob page server read-ahead reads 0.",
                        t.name, t.scans, t.reads.logical, t.reads.physical
                    ),
                ));
            }
        }
        if self.s.opts.statistics_time {
            let cpu = walden_io::clock::thread_cpu_time().saturating_sub(start.cpu);
            self.out.message(&info(
                3612,
                format!(
                    " SQL Server Execution Times:\n   CPU time = {} ms,  elapsed time = {} ms.",
                    cpu.as_millis(),
                    start.elapsed.elapsed().as_millis()
                ),
            ));
        }
    }

    /// The page counters before a read of one table, when STATISTICS IO is on: the
    /// thread's reads not yet counted to any table (see `Session::io_noted`).
    pub(crate) fn io_mark(&self) -> Option<PageReads> {
        self.s.opts.statistics_io.then(|| page_reads().since(self.s.io_noted))
    }

    /// Adds one scan or seek of `t`, begun at `mark`, to the statement's reads.
    pub(crate) fn io_note(&mut self, t: &TableRef, mark: Option<PageReads>) {
        self.io_note_of(&t.def, mark);
    }

    /// [`Run::io_note`] of the table `def` defines.
    pub(crate) fn io_note_of(&mut self, def: &TableDef, mark: Option<PageReads>) {
        let Some(before) = mark else { return };
        // Less the reads other tables' reads counted meanwhile.
        let reads = page_reads().since(self.s.io_noted).since(before);
        self.s.io_noted.logical = self.s.io_noted.logical.wrapping_add(reads.logical);
        self.s.io_noted.physical = self.s.io_noted.physical.wrapping_add(reads.physical);
        let name = &def.name;
        let io = &mut self.s.statement_io;
        let at = match io.iter().position(|e| e.name == *name) {
            Some(at) => at,
            None => {
                io.push(TableIo { name: name.clone(), scans: 0, reads: PageReads::default() });
                io.len() - 1
            }
        };
        let e = &mut io[at];
        e.scans += 1;
        e.reads.logical += reads.logical;
        e.reads.physical += reads.physical;
    }
}
