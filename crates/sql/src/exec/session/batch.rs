//! Running a batch: [`Session::execute_batch`], where all T-SQL text comes in (the server's
//! requests, the shell, bcp; a bulk load's rows come in through `exec::bulk`). It parses the
//! text (through the session's parse cache), runs its statements in a frame of its own,
//! reports what stops them, sends a SHOWPLAN_XML document, and ends any autocommit
//! transaction. The parse cache is here too; procedures, `sp_executesql` and `EXEC (string)`
//! share it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::ast::{Batch, IsolationLevel};
use crate::exec::sysviews::query_stats::{text_hash, StatsSource};
use crate::exec::sysviews::EndState;
use crate::exec::{Output, SqlError};
use crate::parse_batch_with;

use super::{Frame, Halt, Run, Session, Step};

/// How many distinct batch texts a session keeps parsed.
const BATCH_CACHE_SIZE: usize = 128;

/// The most batch text the parse cache holds, in bytes: a client that sends many large
/// one-off batches (a load by 1,000-row INSERTs) must not keep their syntax trees, which
/// are many times larger than their text.
const BATCH_CACHE_BYTES: usize = 2 << 20;

impl Session {
    /// Runs one batch, reporting everything it produces to `out`.
    pub fn execute_batch(&mut self, text: &str, out: &mut dyn Output) {
        self.request(text, out, |s, out| s.run_batch(text, out));
    }

    /// A client's request (a batch, an RPC call, whose `text` the session's views show)
    /// with `work` doing its part: counted, refused once the session is killed, and shown
    /// in `sys.dm_exec_requests` while it runs.
    pub(super) fn request(
        &mut self,
        text: &str,
        out: &mut dyn Output,
        work: impl FnOnce(&mut Session, &mut dyn Output),
    ) {
        self.counters.record_batch();
        if self.activity.killed() {
            out.message(&SqlError::with_severity(
                596,
                21,
                "Cannot continue the execution because the session is in the kill state.",
            ));
            return;
        }
        let hash = text_hash(text);
        let text: Arc<str> = Arc::from(text);
        self.activity.batch_started(self.db.id(), &text, hash);
        self.request_text = (text, hash);
        out.text_size(self.opts.textsize);
        self.pending_bulk = None;
        self.pending_stats.begin();
        work(self, out);
        self.pending_stats.flush(&self.counters.query_stats);
        self.activity.batch_ended(&EndState {
            database_id: self.db.id(),
            open_transactions: self.trancount,
            row_count: self.rowcount,
            isolation: match self.opts.isolation_level {
                IsolationLevel::ReadUncommitted => 1,
                IsolationLevel::ReadCommitted => 2,
                IsolationLevel::RepeatableRead => 3,
                IsolationLevel::Serializable => 4,
                IsolationLevel::Snapshot => 5,
            },
            lock_timeout_ms: self
                .opts
                .lock_timeout
                .map_or(-1, |t| i64::try_from(t.as_millis()).unwrap_or(i64::MAX)),
            text_size: self.opts.textsize,
        });
        self.publish_options();
    }

    fn run_batch(&mut self, text: &str, out: &mut dyn Output) {
        // The thread's CPU time is a system call: only for STATISTICS TIME.
        let cpu_started = self.opts.statistics_time.then(walden_io::clock::thread_cpu_time);
        let parse_started = (Instant::now(), cpu_started);
        let batch = match self.parsed(text) {
            Ok(b) => b,
            Err(e) => {
                out.message(&e);
                return;
            }
        };
        if self.opts.statistics_time {
            let cpu = parse_started.1.map_or(Duration::ZERO, |then| {
                walden_io::clock::thread_cpu_time().saturating_sub(then)
            });
            out.message(&crate::exec::execute::statistics::parse_and_compile_time(
                cpu,
                parse_started.0.elapsed(),
            ));
        }
        let mut run = Run::new(self, out);
        let (text, hash) = run.s.request_text.clone();
        let stats = StatsSource::text(Arc::clone(&text), hash);
        run.s.frames.push(Frame { source: Some(text), stats, ..Frame::default() });
        let result = run.module_body(&batch.statements);
        run.end_request(result.map(|_| ()));
    }
}

impl Run<'_> {
    /// Ends a request's run, however its statements ended: reports the error that stopped
    /// them, ends its frames, sends a SHOWPLAN_XML document, ends an autocommit transaction.
    pub(super) fn end_request(&mut self, result: Step<()>) {
        let run = self;
        match result {
            Err(Halt::Error(e)) => run.report(e),
            // An attention ends the batch; only XACT_ABORT takes the transaction with it.
            Err(Halt::Cancelled) if run.s.opts.xact_abort && run.s.trancount > 0 => {
                run.rollback_all();
            }
            _ => {}
        }
        while !run.s.frames.is_empty() {
            run.pop_frame();
        }
        let described = std::mem::take(&mut run.s.showplan_xml);
        if !described.is_empty() {
            run.out.result_set(&[crate::exec::plan::showplan_xml::column()]);
            run.out.row(&[crate::exec::plan::showplan_xml::document(&described)]);
            run.out.result_end(1);
            run.out.done(None);
        }
        // An autocommit transaction never outlives its statement; a user one may span batches.
        run.finish_autocommit(false);
    }
}

impl Session {
    /// `text` parsed, from the cache when this session ran the same text before. Only
    /// batches that parse are kept, and at most `BATCH_CACHE_SIZE` of them holding at most
    /// `BATCH_CACHE_BYTES` of text: when full, the cache starts over, which keeps a session
    /// that never repeats a batch cheap.
    pub(crate) fn parsed(&mut self, text: &str) -> Result<Arc<Batch>, SqlError> {
        if let Some(batch) = self.batches.get(text) {
            return Ok(Arc::clone(batch));
        }
        let quoted_identifier = self.opts.semantics.quoted_identifier;
        let batch = Arc::new(parse_batch_with(text, quoted_identifier).map_err(SqlError::from)?);
        if self.batches.len() >= BATCH_CACHE_SIZE
            || self.batch_bytes + text.len() > BATCH_CACHE_BYTES
        {
            self.batches.clear();
            self.batch_bytes = 0;
            self.batch_cache_clears += 1;
        }
        self.batch_bytes += text.len();
        self.batches.insert(text.to_string(), Arc::clone(&batch));
        Ok(batch)
    }
}
