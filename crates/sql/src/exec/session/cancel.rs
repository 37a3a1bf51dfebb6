//! Cancellation, `KILL` and `WAITFOR`: what stops or pauses a running batch from outside its
//! statements.
//!
//! The client's signal is asked at cheap points the interpreter and the operators reach often
//! (statements, loop iterations, every [`ROWS_PER_INTERRUPTION_POINT`]th row, lock waits), so
//! these live apart from the statements that call them.
//!
//! A client may cancel the running batch (a TDS attention, which drivers send when a query
//! times out). The batch asks the [`CancelSignal`] given to [`Session::set_cancel`] before each
//! statement, at each `WHILE` iteration and while `WAITFOR` waits (through
//! [`CancelSignal::wait`], so the signal can end the wait at once), and stops there without
//! reporting anything: the protocol's acknowledgement is the client's only answer. As in SQL
//! Server, a cancelled batch leaves an open user transaction open, unless `XACT_ABORT` is ON,
//! which rolls it back. A statement is interrupted too while it waits for a lock (the
//! transaction's lock waits ask the signal), scans a table (every 1,024 rows) or joins (every
//! outer row), and its own changes are undone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use walden_engine::lock::Interrupt;
use walden_engine::types::{SqlType, Value};

use crate::ast::{Expr, Waitfor, WaitforKind};
use crate::exec::execute::query::ROWS_PER_INTERRUPTION_POINT;
use crate::exec::scalar;
use crate::exec::sysviews::SessionActivity;
use crate::exec::SqlError;

use super::errors::int_of;
use super::{Halt, Run, Session, Step, CANCELLED};

/// The longest `WAITFOR` waits on its [`CancelSignal`] before looking again.
const WAIT_SLICE: Duration = Duration::from_millis(20);

/// The longest `WAITFOR DELAY` (24 hours, exclusive) and the length of a day for `TIME`.
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// What tells a running batch that its client cancelled it (see the module's documentation).
/// The batch asks at every statement and loop iteration, so [`CancelSignal::cancelled`] must
/// be cheap.
pub trait CancelSignal: Send + Sync + std::fmt::Debug {
    /// Whether the running batch is cancelled.
    fn cancelled(&self) -> bool;

    /// Waits up to `timeout` for a cancel (`WAITFOR`), returning whether the batch is
    /// cancelled. The default sleeps and then asks.
    fn wait(&self, timeout: Duration) -> bool {
        std::thread::sleep(timeout);
        self.cancelled()
    }
}

/// Ends a lock wait when `KILL` ends the session, or the client cancels the batch that waits
/// (once the server has given the session a cancel signal).
#[derive(Debug)]
pub(super) struct CancelledLockWait(
    pub(super) Option<Arc<dyn CancelSignal>>,
    pub(super) Arc<SessionActivity>,
);

impl Interrupt for CancelledLockWait {
    fn interrupted(&self) -> bool {
        self.0.as_ref().is_some_and(|c| c.cancelled()) || self.1.killed()
    }
}

/// A flag another thread sets.
impl CancelSignal for AtomicBool {
    fn cancelled(&self) -> bool {
        self.load(Ordering::Relaxed)
    }
}

impl Session {
    /// Gives the session the signal that cancels its running batch (see the module's
    /// documentation). The signal is only asked: whoever owns it clears it before the next
    /// batch, which would otherwise stop before its first statement.
    pub fn set_cancel(&mut self, signal: Arc<dyn CancelSignal>) {
        let interrupt: Arc<dyn Interrupt> =
            Arc::new(CancelledLockWait(Some(Arc::clone(&signal)), Arc::clone(&self.activity)));
        if let Some(tx) = self.tx.as_mut() {
            tx.set_interrupt(Some(Arc::clone(&interrupt)));
        }
        self.lock_interrupt = interrupt;
        self.cancel = Some(signal);
    }
}

impl Run<'_> {
    /// Whether the client has cancelled the batch.
    pub(super) fn cancelled(&self) -> bool {
        self.s.activity.killed() || self.s.cancel.as_ref().is_some_and(|signal| signal.cancelled())
    }

    /// A cancellation point inside a statement (a scan, a join): fails with [`CANCELLED`]
    /// once the client has cancelled the batch.
    pub(crate) fn interruption_point(&self) -> Result<(), SqlError> {
        if self.cancelled() {
            return Err(SqlError::with_severity(CANCELLED, 16, "The request was cancelled."));
        }
        Ok(())
    }

    /// An interruption point in a loop over rows, asking at every
    /// [`ROWS_PER_INTERRUPTION_POINT`]th row (`i` counts from 0): often enough to stop within
    /// milliseconds, rarely enough to cost nothing.
    pub(crate) fn row_interruption_point(&self, i: usize) -> Result<(), SqlError> {
        if i % ROWS_PER_INTERRUPTION_POINT == ROWS_PER_INTERRUPTION_POINT - 1 {
            self.interruption_point()?;
        }
        Ok(())
    }

    /// `WAITFOR DELAY` and `WAITFOR TIME`. The wait is cut into slices of at most
    /// [`WAIT_SLICE`], each a [`CancelSignal::wait`] that a cancel ends early.
    pub(super) fn waitfor(&mut self, w: &Waitfor) -> Step<()> {
        let value = self.value(&w.value)?;
        let Some(wait) = waitfor_duration(w.kind, value)? else { return Ok(()) };
        // Nobody waits for the session's deferred commits while it sleeps. A failed flush is
        // kept in them, for whoever reports them to the client.
        let _ = self.s.deferred.harden();
        let end = Instant::now() + wait;
        loop {
            if self.cancelled() {
                return Err(Halt::Cancelled);
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            let slice = left.min(WAIT_SLICE);
            match &self.s.cancel {
                Some(signal) => {
                    if signal.wait(slice) {
                        return Err(Halt::Cancelled);
                    }
                }
                None => std::thread::sleep(slice),
            }
        }
    }

    /// `KILL session_id`: ends another session (error 6104 for one's own, 6106 for an id no
    /// session has).
    pub(super) fn kill(&mut self, e: &Expr) -> Result<(), SqlError> {
        let v = self.value(e)?;
        let spid = match scalar::convert(v, SqlType::Int, None)? {
            Value::Int(n) => n,
            _ => -1,
        };
        if spid == i32::from(self.s.spid) {
            return Err(SqlError::new(6104, "Cannot use KILL to kill your own process."));
        }
        let target = u16::try_from(spid).ok().and_then(|id| self.s.counters.sessions.get(id));
        match target {
            Some(activity) => {
                activity.kill();
                Ok(())
            }
            None => {
                Err(SqlError::new(6106, format!("Process ID {spid} is not an active process ID.")))
            }
        }
    }
}

/// How long `WAITFOR` waits for `value`; `None` for NULL, which does not wait.
///
/// A string is read as a DATETIME and must not name a date other than 1900-01-01: for
/// `DELAY` its time of day is the duration, for `TIME` the moment of the day (in the clock
/// `GETDATE()` reads) to wait for, tomorrow's if it has passed. A DATETIME, DATETIME2 or
/// TIME variable works the same, except that `TIME` ignores its date. An integer variable is
/// a `DELAY` in seconds, as in SQL Server. Anything else, or a delay of 24 hours or more, is
/// error 148.
fn waitfor_duration(kind: WaitforKind, value: Value) -> Result<Option<Duration>, SqlError> {
    let bad = |v: &Value| {
        SqlError::with_severity(
            148,
            15,
            format!(
                "Incorrect time syntax in time string '{}' used with WAITFOR.",
                scalar::to_text(v)
            ),
        )
    };
    let of_day = match &value {
        Value::Null => return Ok(None),
        Value::TinyInt(_) | Value::SmallInt(_) | Value::Int(_) | Value::BigInt(_)
            if kind == WaitforKind::Delay =>
        {
            let seconds = int_of(value.clone())?;
            return match u64::try_from(seconds).map(Duration::from_secs) {
                Ok(wait) if wait < DAY => Ok(Some(wait)),
                _ => Err(bad(&value)),
            };
        }
        Value::Str(_)
        | Value::NStr(_)
        | Value::DateTime(_)
        | Value::DateTime2(_)
        | Value::DateTimeOffset(_)
        | Value::Time(_) => {
            let text = matches!(value, Value::Str(_) | Value::NStr(_));
            match scalar::convert(value.clone(), SqlType::DateTime, None) {
                Ok(Value::DateTime(d)) if d.days() == 0 || (kind == WaitforKind::Time && !text) => {
                    // DATETIME ticks are 1/300 s.
                    Duration::from_nanos(u64::from(d.ticks()) * 10_000_000 / 3)
                }
                _ => return Err(bad(&value)),
            }
        }
        _ => return Err(bad(&value)),
    };
    match kind {
        WaitforKind::Delay => Ok(Some(of_day)),
        WaitforKind::Time => {
            // The clock of GETDATE(): local time. A clock before 1970 reads as the epoch.
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
            let day = DAY.as_nanos();
            let local = scalar::to_local(now).as_nanos() % day;
            let wait = (of_day.as_nanos() + day - local) % day;
            // wait < one day's nanoseconds, which fit in u64.
            Ok(Some(Duration::from_nanos(u64::try_from(wait).unwrap_or(0))))
        }
    }
}

#[cfg(test)]
mod tests {
    use walden_engine::Instance;

    use super::*;

    fn text(s: &str) -> Value {
        Value::Str(s.to_string())
    }

    /// Runs `sql` and sets the session's cancel flag from another thread after `after`;
    /// returns what the batch reported and how long it ran.
    fn cancel_after(
        session: &mut Session,
        sql: &str,
        after: Duration,
    ) -> (crate::exec::Collected, Duration) {
        let flag = Arc::new(AtomicBool::new(false));
        session.set_cancel(flag.clone());
        let setter = std::thread::spawn(move || {
            std::thread::sleep(after);
            flag.store(true, Ordering::Relaxed);
        });
        let mut out = crate::exec::Collected::default();
        let start = Instant::now();
        session.execute_batch(sql, &mut out);
        let took = start.elapsed();
        assert!(setter.join().is_ok());
        (out, took)
    }

    #[test]
    fn a_cancel_ends_the_batch_silently_and_keeps_the_transaction_unless_xact_abort() {
        let dir = tempfile::tempdir().expect("temp dir");
        let instance =
            Instance::open(dir.path(), walden_engine::InstanceConfig::default()).expect("open");
        let mut s = Session::new(Arc::clone(&instance));
        let wait = Duration::from_millis(100);

        let (out, took) =
            cancel_after(&mut s, "BEGIN TRAN WAITFOR DELAY '00:00:30' PRINT 'after'", wait);
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(out.messages.is_empty(), "{:?}", out.messages);
        assert_eq!(s.transaction_count(), 1);

        // The flag is still set: the next batch stops before its first statement.
        let mut out = crate::exec::Collected::default();
        s.execute_batch("PRINT 'skipped'", &mut out);
        assert!(out.messages.is_empty());

        let (out, took) =
            cancel_after(&mut s, "DECLARE @i INT = 0 WHILE 1 = 1 SET @i += 1 PRINT 'after'", wait);
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(out.messages.is_empty(), "{:?}", out.messages);
        assert_eq!(s.transaction_count(), 1);

        let (_, _) = cancel_after(&mut s, "SET XACT_ABORT ON WAITFOR DELAY '00:00:30'", wait);
        assert_eq!(s.transaction_count(), 0);
        assert_eq!(s.last_transaction_committed(), Some(false));
        s.close();
        drop(s);
        assert!(instance.close().is_ok());
    }

    #[test]
    fn a_cancel_ends_a_long_aggregate_filter_and_sort() {
        let dir = tempfile::tempdir().expect("temp dir");
        let instance =
            Instance::open(dir.path(), walden_engine::InstanceConfig::default()).expect("open");
        let mut s = Session::new(Arc::clone(&instance));
        // Each row builds a string of up to 100,000 characters: seconds of work in each loop.
        let heavy = "LEN(REPLICATE(CAST('x' AS VARCHAR(MAX)), value % 100000))";
        for sql in [
            format!("SELECT SUM({heavy}) FROM GENERATE_SERIES(1, 400000)"),
            format!("SELECT COUNT(*) FROM GENERATE_SERIES(1, 400000) WHERE {heavy} > 7"),
            format!("SELECT TOP (1) value FROM GENERATE_SERIES(1, 400000) ORDER BY {heavy}"),
        ] {
            let (out, took) = cancel_after(&mut s, &sql, Duration::from_millis(100));
            assert!(took < Duration::from_secs(5), "{sql}: {took:?}");
            assert!(out.results.is_empty() && out.messages.is_empty(), "{sql}: {out:?}");
            s.set_cancel(Arc::new(AtomicBool::new(false)));
        }
        s.close();
        drop(s);
        assert!(instance.close().is_ok());
    }

    #[test]
    fn a_cancel_ends_a_lock_wait_and_undoes_only_the_waiting_statement() {
        let dir = tempfile::tempdir().expect("temp dir");
        let instance =
            Instance::open(dir.path(), walden_engine::InstanceConfig::default()).expect("open");
        let mut holder = Session::new(Arc::clone(&instance));
        let mut out = crate::exec::Collected::default();
        holder.execute_batch(
            "CREATE TABLE t (k INT PRIMARY KEY, v VARCHAR(10)) \
             INSERT t VALUES (1, 'a'), (2, 'a') \
             BEGIN TRAN UPDATE t SET v = 'held' WHERE k = 2",
            &mut out,
        );
        assert_eq!(out.errors().count(), 0, "{:?}", out.messages);

        let mut waiter = Session::new(Arc::clone(&instance));
        let mut out = crate::exec::Collected::default();
        waiter.execute_batch("BEGIN TRAN INSERT t VALUES (3, 'mine')", &mut out);
        assert_eq!(out.errors().count(), 0, "{:?}", out.messages);
        // The INSERT adds row 4, then waits for row 2's lock; no CATCH sees the cancel.
        let (out, took) = cancel_after(
            &mut waiter,
            "BEGIN TRY INSERT t VALUES (4, 'b'), (2, 'b') END TRY \
             BEGIN CATCH PRINT 'caught' END CATCH PRINT 'after'",
            Duration::from_millis(200),
        );
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(out.messages.is_empty(), "{:?}", out.messages);
        assert_eq!(waiter.transaction_count(), 1);

        // The holder's row lock is released; the waiter's transaction still has its first
        // INSERT (row 3) and not the cancelled one's row 4.
        let mut out = crate::exec::Collected::default();
        holder.execute_batch("ROLLBACK", &mut out);
        let flag = Arc::new(AtomicBool::new(false));
        waiter.set_cancel(flag);
        let mut out = crate::exec::Collected::default();
        waiter.execute_batch("SELECT k, v FROM t ORDER BY k COMMIT", &mut out);
        assert_eq!(out.errors().count(), 0, "{:?}", out.messages);
        let rows: Vec<String> = out.results[0].rows.iter().map(|r| format!("{:?}", r)).collect();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows[0].contains("\"a\""), "{rows:?}");
        assert!(rows[2].contains("mine"), "{rows:?}");
        holder.close();
        waiter.close();
        drop((holder, waiter));
        assert!(instance.close().is_ok());
    }

    #[test]
    fn waitfor_delay_reads_a_time_of_day_as_a_duration() {
        let wait = |v| waitfor_duration(WaitforKind::Delay, v).map_err(|e| e.number);
        assert_eq!(wait(text("00:00:01.5")), Ok(Some(Duration::from_millis(1500))));
        assert_eq!(wait(text("01:30")), Ok(Some(Duration::from_secs(90 * 60))));
        assert_eq!(wait(text("23:59:59")), Ok(Some(DAY - Duration::from_secs(1))));
        assert_eq!(wait(Value::Int(3)), Ok(Some(Duration::from_secs(3))));
        assert_eq!(wait(Value::Null), Ok(None));
        for bad in [text("24:00:00"), text("2024-01-01 00:00:01"), text("soon"), Value::Int(-1)] {
            assert_eq!(wait(bad), Err(148));
        }
        assert_eq!(wait(Value::Int(86_400)), Err(148));
    }

    #[test]
    fn waitfor_time_waits_until_that_time_of_day_tomorrow_if_it_has_passed() {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let of_day = Duration::from_secs(now.as_secs() % DAY.as_secs());
        let at = |d: Duration| {
            let s = d.as_secs();
            text(&format!("{:02}:{:02}:{:02}", s / 3600 % 24, s / 60 % 60, s % 60))
        };
        let soon = waitfor_duration(WaitforKind::Time, at(of_day + Duration::from_secs(120)));
        let soon = soon.ok().flatten().unwrap_or_default();
        assert!(soon > Duration::from_secs(118) && soon <= Duration::from_secs(120), "{soon:?}");
        let past = waitfor_duration(WaitforKind::Time, at(of_day + DAY - Duration::from_secs(120)));
        let past = past.ok().flatten().unwrap_or_default();
        assert!(past > DAY - Duration::from_secs(122), "{past:?}");
        // A DATETIME variable's date does not matter to TIME; a string's does.
        let tomorrow = scalar::convert(text("1900-01-02 10:00"), SqlType::DateTime, None);
        let tomorrow = tomorrow.unwrap_or(Value::Null);
        assert!(matches!(waitfor_duration(WaitforKind::Time, tomorrow), Ok(Some(_))));
        assert!(waitfor_duration(WaitforKind::Time, text("1900-01-02 10:00")).is_err());
    }
}
