//! The server's execution statistics: `sys.dm_exec_query_stats` (one row per statement of a
//! batch, prepared statement, dynamic SQL or procedure text that ran), and
//! `sys.dm_exec_procedure_stats` (one row per procedure), with the texts their
//! `sql_handle`s name for `sys.dm_exec_sql_text`.
//!
//! SQL Server keeps these with its plan cache; Walden keeps plans per session, so it keeps
//! the counters in one store of its own, [`QueryStats`], shared by every session through
//! [`ServerCounters`](super::ServerCounters). A statement is counted under its text's
//! `sql_handle`, which names the text, not the session: the same text from any session (a
//! prepared statement every JDBC connection sends) is one row, as in SQL Server.
//!
//! The store is bounded: at most [`MAX_STATEMENTS`] statements, [`MAX_PROCEDURES`]
//! procedures and [`MAX_TEXT_BYTES`] of text; past either, the least recently run quarter
//! is forgotten at once (so a stream of one-off statements costs one sort per quarter of
//! the store, not a search per statement), as SQL Server's plan cache forgets plans under
//! memory pressure. A text longer than [`MAX_TEXT_LEN`] is not kept, nor its statements
//! counted.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use walden_engine::types::{Len, SqlType, Value};

use super::sessions::{module_handle, now_micros};
use super::{big, datetime, int, ColumnInfo, RowSet, ViewContext};

/// The most statements the store counts.
pub(crate) const MAX_STATEMENTS: usize = 5_000;
/// The most procedures the store counts.
pub(crate) const MAX_PROCEDURES: usize = 2_000;
/// The most text, in bytes, the store keeps for the statements' handles.
pub(crate) const MAX_TEXT_BYTES: usize = 32 << 20;
/// The longest text whose statements are counted.
pub(crate) const MAX_TEXT_LEN: usize = 1 << 20;

/// A text's identity: a 128-bit hash of it, which its `sql_handle` carries.
pub(crate) type TextHash = [u8; 16];

/// The hash of `text` that its `sql_handle` carries.
pub(crate) fn text_hash(text: &str) -> TextHash {
    let low = foldhash::quality::FixedState::with_seed(0x5741_4c44_454e).hash_one(text);
    let high = foldhash::quality::FixedState::with_seed(0x7371_6c5f_6861).hash_one(text);
    let mut hash = [0; 16];
    hash[..8].copy_from_slice(&low.to_be_bytes());
    hash[8..].copy_from_slice(&high.to_be_bytes());
    hash
}

/// A batch's or parameterized statement's `sql_handle`: 0x02 (SQL Server's first byte for a
/// batch's handle), three zero bytes, then the text's [`TextHash`]: 20 bytes, which
/// `sys.sysprocesses.sql_handle` (BINARY(20)) holds whole.
pub(crate) fn text_handle(hash: &TextHash) -> Vec<u8> {
    let mut handle = vec![0x02, 0, 0, 0];
    handle.extend_from_slice(hash);
    handle
}

/// The [`TextHash`] a [`text_handle`] carries.
pub(crate) fn parse_text_handle(handle: &[u8]) -> Option<TextHash> {
    match handle.split_at_checked(4) {
        Some(([0x02, 0, 0, 0], hash)) => hash.try_into().ok(),
        _ => None,
    }
}

/// What a statement's text is, for its row's `sql_handle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Source {
    /// A batch, a parameterized statement (`(@P0 int)SELECT ...`, as SQL Server shows
    /// one) or dynamic SQL, by its text's hash.
    Text(TextHash),
    /// A procedure's definition, by (database id, object id).
    Module(u32, u32),
}

/// The text a frame's statements are counted under, and how their spans map into it.
#[derive(Debug, Clone)]
pub(crate) struct StatsSource {
    pub(crate) source: Source,
    /// The text of a [`Source::Text`] (a module's is its definition in the catalog).
    pub(crate) text: Option<Arc<str>>,
    /// What to add to a statement's byte offsets in the text it was parsed from to have its
    /// offsets in `text` (a parameterized statement is parsed inside a procedure's text).
    pub(crate) shift: isize,
}

impl StatsSource {
    /// A batch's or dynamic SQL's text, parsed as it is; `None` for a text too long to
    /// keep ([`MAX_TEXT_LEN`]), whose statements are not counted.
    pub(crate) fn text(text: Arc<str>, hash: TextHash) -> Option<StatsSource> {
        (text.len() <= MAX_TEXT_LEN).then_some(StatsSource {
            source: Source::Text(hash),
            text: Some(text),
            shift: 0,
        })
    }

    /// A procedure's definition.
    pub(crate) fn module(database_id: u32, object_id: u32) -> StatsSource {
        StatsSource { source: Source::Module(database_id, object_id), text: None, shift: 0 }
    }
}

/// What one run of a statement or procedure used, but CPU time (see [`Pending`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sample {
    pub(crate) elapsed: Duration,
    pub(crate) logical_reads: u64,
    pub(crate) physical_reads: u64,
    pub(crate) rows: u64,
}

/// A counter's total, last, least and greatest over the runs.
#[derive(Debug, Clone, Copy, Default)]
struct Quad {
    total: u64,
    last: u64,
    min: u64,
    max: u64,
}

impl Quad {
    fn add(&mut self, v: u64, first: bool) {
        self.merge(&Quad { total: v, last: v, min: v, max: v }, first);
    }

    /// Adds the runs `later` counts, which came after this one's.
    fn merge(&mut self, later: &Quad, first: bool) {
        self.total = self.total.saturating_add(later.total);
        self.last = later.last;
        self.min = if first { later.min } else { self.min.min(later.min) };
        self.max = self.max.max(later.max);
    }

    /// Each figure times `factor`.
    fn scaled(&self, factor: f64) -> Quad {
        let scale = |v: u64| (v as f64 * factor) as u64;
        Quad {
            total: scale(self.total),
            last: scale(self.last),
            min: scale(self.min),
            max: scale(self.max),
        }
    }

    fn values(&self) -> [Value; 4] {
        [big(self.total), big(self.last), big(self.min), big(self.max)]
    }
}

/// The counters of a statement or a procedure.
#[derive(Debug, Clone, Copy)]
struct Counters {
    database_id: u32,
    created_micros: u64,
    last_micros: u64,
    executions: u64,
    /// Microseconds, as SQL Server reports them (nanoseconds while [`Pending`]).
    worker: Quad,
    elapsed: Quad,
    logical_reads: Quad,
    physical_reads: Quad,
    rows: Quad,
}

impl Counters {
    fn new(database_id: u32, now: u64) -> Counters {
        Counters {
            database_id,
            created_micros: now,
            last_micros: now,
            executions: 0,
            worker: Quad::default(),
            elapsed: Quad::default(),
            logical_reads: Quad::default(),
            physical_reads: Quad::default(),
            rows: Quad::default(),
        }
    }

    /// Adds one run, its elapsed time in nanoseconds.
    fn add(&mut self, s: &Sample) {
        let first = self.executions == 0;
        self.executions += 1;
        let nanos = u64::try_from(s.elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.elapsed.add(nanos, first);
        self.logical_reads.add(s.logical_reads, first);
        self.physical_reads.add(s.physical_reads, first);
        self.rows.add(s.rows, first);
    }

    /// Adds the runs `later` counted (times in microseconds), last at `now`.
    fn merge(&mut self, later: &Counters, now: u64) {
        let first = self.executions == 0;
        self.executions += later.executions;
        self.last_micros = now;
        self.worker.merge(&later.worker, first);
        self.elapsed.merge(&later.elapsed, first);
        self.logical_reads.merge(&later.logical_reads, first);
        self.physical_reads.merge(&later.physical_reads, first);
        self.rows.merge(&later.rows, first);
    }
}

/// What a session counted and has not yet given to the server's store: the runs of each
/// statement and procedure since the window began, with their elapsed times.
///
/// Reading the thread's CPU clock is a system call, which around every statement made a
/// T-SQL loop of key lookups three times slower; so a window reads it only at its start and
/// its end (a request's, or every [`PENDING_ENTRIES`] statements in a long one), and each
/// run's worker time is its elapsed time times the window's CPU time over its elapsed time.
/// A statement run only in a window spent mostly waiting (for a lock, a page, the client)
/// is given less than its elapsed time, as the CPU clock would give it.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    entries: Vec<(PendingKey, Option<Arc<str>>, Counters)>,
    index: HashMap<PendingKey, usize, foldhash::fast::RandomState>,
    /// The entry the last run went to: a loop runs the same statement again.
    last: Option<usize>,
    /// When the window began, and the thread's CPU time then.
    window: Option<(std::time::Instant, Duration)>,
}

/// The most statements and procedures a window counts before it is given to the store.
const PENDING_ENTRIES: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum PendingKey {
    Statement(StatementKey),
    Procedure(u32, u32),
}

impl Pending {
    /// Begins a window (a request's start).
    pub(crate) fn begin(&mut self) {
        self.window = Some((std::time::Instant::now(), walden_io::clock::thread_cpu_time()));
    }

    /// Counts one run of the statement at bytes `start..end` of the text `source`'s frame
    /// parsed, in database `database_id`.
    pub(crate) fn statement(
        &mut self,
        source: &StatsSource,
        (start, end): (usize, usize),
        database_id: u32,
        sample: &Sample,
    ) {
        let offset = |at: usize| u32::try_from(at.saturating_add_signed(source.shift)).ok();
        let (Some(start), Some(end)) = (offset(start), offset(end)) else { return };
        let key = PendingKey::Statement(StatementKey { source: source.source, start, end });
        self.add(key, || source.text.clone(), database_id, sample);
    }

    /// Counts one call of procedure `object_id` of database `database_id`.
    pub(crate) fn procedure(&mut self, database_id: u32, object_id: u32, sample: &Sample) {
        self.add(PendingKey::Procedure(database_id, object_id), || None, database_id, sample);
    }

    fn add(
        &mut self,
        key: PendingKey,
        text: impl FnOnce() -> Option<Arc<str>>,
        database_id: u32,
        sample: &Sample,
    ) {
        if self.window.is_none() {
            return;
        }
        let at = match self.last.filter(|&i| self.entries.get(i).is_some_and(|e| e.0 == key)) {
            Some(i) => i,
            None => match self.index.get(&key) {
                Some(&i) => i,
                None => {
                    self.entries.push((key, text(), Counters::new(database_id, 0)));
                    self.index.insert(key, self.entries.len() - 1);
                    self.entries.len() - 1
                }
            },
        };
        self.last = Some(at);
        self.entries[at].2.add(sample);
    }

    /// Whether the window is full: it should be given to the store now.
    pub(crate) fn full(&self) -> bool {
        self.entries.len() >= PENDING_ENTRIES
    }

    /// Ends the window: its runs, their worker times worked out, go to `stats`.
    pub(crate) fn flush(&mut self, stats: &QueryStats) {
        let Some((began, cpu)) = self.window.take() else { return };
        self.last = None;
        self.index.clear();
        if self.entries.is_empty() {
            return;
        }
        let elapsed = began.elapsed().as_secs_f64();
        let used = walden_io::clock::thread_cpu_time().saturating_sub(cpu).as_secs_f64();
        let busy = if elapsed > 0.0 { (used / elapsed).min(1.0) } else { 1.0 };
        let now = now_micros();
        let mut store = stats.store();
        for (key, text, mut counters) in self.entries.drain(..) {
            // Nanoseconds to microseconds.
            counters.worker = counters.elapsed.scaled(busy / 1000.0);
            counters.elapsed = counters.elapsed.scaled(1.0 / 1000.0);
            match key {
                PendingKey::Statement(key) => store.count_statement(key, text, &counters, now),
                PendingKey::Procedure(db, object) => {
                    store.count_procedure(db, object, &counters, now)
                }
            }
        }
    }
}

/// A statement: its text and its byte offsets in it (start, one past the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct StatementKey {
    source: Source,
    start: u32,
    end: u32,
}

/// A kept text and how many counted statements name it.
#[derive(Debug)]
struct KeptText {
    text: Arc<str>,
    /// The database its first counted statement ran in (`dbid` of its plan).
    database_id: u32,
    statements: usize,
}

#[derive(Debug, Default)]
struct Store {
    statements: HashMap<StatementKey, Counters, foldhash::fast::RandomState>,
    procedures: HashMap<(u32, u32), Counters, foldhash::fast::RandomState>,
    texts: HashMap<TextHash, KeptText, foldhash::fast::RandomState>,
    text_bytes: usize,
}

/// The server's execution statistics (see the module's documentation).
#[derive(Debug, Default)]
pub struct QueryStats(Mutex<Store>);

impl QueryStats {
    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The kept text whose handle carries `hash`.
    pub(crate) fn text(&self, hash: &TextHash) -> Option<Arc<str>> {
        self.store().texts.get(hash).map(|t| Arc::clone(&t.text))
    }

    /// `DBCC FREEPROCCACHE`: forgets every statement, procedure and text.
    pub(crate) fn clear(&self) {
        *self.store() = Store::default();
    }

    /// The database of the statements or procedure counted under `source`, if any are (a
    /// plan handle names them).
    fn database_of(&self, source: Source) -> Option<u32> {
        let store = self.store();
        match source {
            Source::Module(db, object) => {
                store.procedures.get(&(db, object)).map(|c| c.database_id)
            }
            Source::Text(hash) => store.texts.get(&hash).map(|t| t.database_id),
        }
    }
}

impl Store {
    /// Adds the runs `counters` counts to statement `key`'s, the last at `now`.
    fn count_statement(
        &mut self,
        key: StatementKey,
        text: Option<Arc<str>>,
        counters: &Counters,
        now: u64,
    ) {
        if let Some(kept) = self.statements.get_mut(&key) {
            kept.merge(counters, now);
            return;
        }
        if self.statements.len() >= MAX_STATEMENTS {
            self.forget_statements();
        }
        if let (Source::Text(hash), Some(text)) = (key.source, &text) {
            self.keep_text(hash, text, counters.database_id);
        }
        let mut kept = Counters::new(counters.database_id, now);
        kept.merge(counters, now);
        self.statements.insert(key, kept);
    }

    /// Adds the calls `counters` counts to procedure `object_id`'s, the last at `now`.
    fn count_procedure(&mut self, database_id: u32, object_id: u32, counters: &Counters, now: u64) {
        if self.procedures.len() >= MAX_PROCEDURES
            && !self.procedures.contains_key(&(database_id, object_id))
        {
            forget_oldest(&mut self.procedures, |_| {});
        }
        self.procedures
            .entry((database_id, object_id))
            .or_insert_with(|| Counters::new(database_id, now))
            .merge(counters, now);
    }

    /// Keeps `text` for its handle, forgetting the least recently run statements first
    /// while the texts would pass [`MAX_TEXT_BYTES`].
    fn keep_text(&mut self, hash: TextHash, text: &Arc<str>, database_id: u32) {
        if let Some(kept) = self.texts.get_mut(&hash) {
            kept.statements += 1;
            return;
        }
        while self.text_bytes + text.len() > MAX_TEXT_BYTES && !self.statements.is_empty() {
            self.forget_statements();
        }
        self.text_bytes += text.len();
        let kept = KeptText { text: Arc::clone(text), database_id, statements: 1 };
        self.texts.insert(hash, kept);
    }

    /// Forgets the least recently run quarter of the statements, and the texts no statement
    /// left names.
    fn forget_statements(&mut self) {
        let mut released = Vec::new();
        forget_oldest(&mut self.statements, |key| {
            if let Source::Text(hash) = key.source {
                released.push(hash);
            }
        });
        for hash in released {
            if let Some(kept) = self.texts.get_mut(&hash) {
                kept.statements -= 1;
                if kept.statements == 0 {
                    self.text_bytes -= kept.text.len();
                    self.texts.remove(&hash);
                }
            }
        }
    }
}

/// Removes the least recently run quarter (at least one) of `map`'s entries, telling
/// `forgotten` each key removed.
fn forget_oldest<K: Copy + Eq + std::hash::Hash, S: BuildHasher>(
    map: &mut HashMap<K, Counters, S>,
    mut forgotten: impl FnMut(&K),
) {
    let mut by_age: Vec<(u64, K)> = map.iter().map(|(k, c)| (c.last_micros, *k)).collect();
    let count = (by_age.len() / 4).max(1);
    by_age.select_nth_unstable_by_key(count - 1, |(at, _)| *at);
    for (_, key) in &by_age[..count] {
        map.remove(key);
        forgotten(key);
    }
}

const HANDLE: SqlType = SqlType::VarBinary(Len::N(64));
const HASH: SqlType = SqlType::Binary(8);

/// The execution counters `sys.dm_exec_query_stats`, `dm_exec_procedure_stats`,
/// `dm_exec_function_stats` and `dm_exec_trigger_stats` share after their leading columns,
/// in SQL Server's order (`max_elapsed_time` follows them in each view).
const EXEC_COUNTERS: [&str; 20] = [
    "execution_count",
    "total_worker_time",
    "last_worker_time",
    "min_worker_time",
    "max_worker_time",
    "total_physical_reads",
    "last_physical_reads",
    "min_physical_reads",
    "max_physical_reads",
    "total_logical_writes",
    "last_logical_writes",
    "min_logical_writes",
    "max_logical_writes",
    "total_logical_reads",
    "last_logical_reads",
    "min_logical_reads",
    "max_logical_reads",
    "total_elapsed_time",
    "last_elapsed_time",
    "min_elapsed_time",
];

/// The values of [`EXEC_COUNTERS`] and `max_elapsed_time`, which follows them. Walden does not count logical
/// writes per statement (0).
fn counter_values(c: &Counters, row: &mut Vec<Value>) {
    row.push(big(c.executions));
    row.extend(c.worker.values());
    row.extend(c.physical_reads.values());
    row.extend([big(0), big(0), big(0), big(0)]);
    row.extend(c.logical_reads.values());
    row.extend(c.elapsed.values());
}

/// A `total_`, `last_`, `min_` and `max_` BIGINT column for each counter, in that order.
fn add_quads(columns: &mut Vec<ColumnInfo>, counters: &[&str]) {
    for counter in counters {
        for kind in ["total", "last", "min", "max"] {
            columns.push(ColumnInfo::new(format!("{kind}_{counter}"), SqlType::BigInt));
        }
    }
}

fn columns(leading: &[(&str, SqlType)], trailing: &[(&str, SqlType)]) -> Vec<ColumnInfo> {
    let mut columns: Vec<ColumnInfo> = leading
        .iter()
        .chain(EXEC_COUNTERS.iter().map(|c| (*c, SqlType::BigInt)).collect::<Vec<_>>().iter())
        .chain(std::iter::once(&("max_elapsed_time", SqlType::BigInt)))
        .chain(trailing)
        .map(|(name, ty)| ColumnInfo::new((*name).to_string(), *ty))
        .collect();
    for c in &mut columns {
        c.nullable = true;
    }
    columns
}

/// A source's `sql_handle`.
fn sql_handle(source: Source) -> Value {
    Value::Binary(match source {
        Source::Text(hash) => text_handle(&hash),
        Source::Module(db, object) => module_handle(db, object),
    })
}

/// A source's `plan_handle`: 0x06 (SQL Server's first byte for an ad hoc or prepared
/// plan's handle) or 0x05 (a procedure's), three zero bytes, then what its `sql_handle`
/// carries after its own first four bytes. Walden keeps one plan per text.
fn plan_handle(source: Source) -> Vec<u8> {
    let (kind, tail) = match source {
        Source::Text(hash) => (0x06, hash.to_vec()),
        Source::Module(db, object) => (0x05, module_handle(db, object)[4..].to_vec()),
    };
    let mut handle = vec![kind, 0, 0, 0];
    handle.extend_from_slice(&tail);
    handle
}

/// The source a [`plan_handle`] names.
fn parse_plan_handle(handle: &[u8]) -> Option<Source> {
    let (head, tail) = handle.split_at_checked(4)?;
    match head {
        [0x06, 0, 0, 0] => tail.try_into().ok().map(Source::Text),
        [0x05, 0, 0, 0] if tail.len() == 8 => Some(Source::Module(
            u32::from_be_bytes(tail[..4].try_into().ok()?),
            u32::from_be_bytes(tail[4..].try_into().ok()?),
        )),
        _ => None,
    }
}

/// A statement's offset in its text as SQL Server gives it: bytes of UTF-16 before
/// `byte_offset`.
fn utf16_offset(text: Option<&str>, byte_offset: u32) -> i64 {
    let at = byte_offset as usize;
    match text.and_then(|t| t.get(..at)) {
        Some(before) => 2 * before.encode_utf16().count() as i64,
        None => 2 * i64::from(byte_offset),
    }
}

/// The text a statement's offsets index: its kept text, or its module's definition.
fn text_of(ctx: &ViewContext<'_>, store: &Store, source: Source) -> Option<Arc<str>> {
    match source {
        Source::Text(hash) => store.texts.get(&hash).map(|t| Arc::clone(&t.text)),
        Source::Module(db, object) => ctx
            .instance
            .database_by_id(i64::from(db))
            .and_then(|d| d.object_by_id(object))
            .and_then(|o| o.module_text().map(Arc::from)),
    }
}

/// An 8-byte hash of a statement's text (`query_hash`, `query_plan_hash`).
fn statement_hash(text: Option<&str>, key: &StatementKey) -> Value {
    let piece = text.and_then(|t| t.get(key.start as usize..key.end as usize));
    let hash = match piece {
        Some(piece) => foldhash::quality::FixedState::with_seed(0x7168).hash_one(piece),
        None => foldhash::quality::FixedState::with_seed(0x7168).hash_one(key),
    };
    Value::Binary(hash.to_be_bytes().to_vec())
}

/// `sys.dm_exec_query_stats`: one row per statement counted, with SQL Server's columns.
/// Walden counts executions, worker (CPU) and elapsed time, logical and physical page reads
/// and rows; the columns of what it has no notion of (CLR time, parallelism, grants,
/// columnstore, spills, page servers) are 0, as SQL Server shows them for a statement
/// that used none.
pub(super) fn query_stats(ctx: &ViewContext<'_>) -> RowSet {
    let mut columns = columns(
        &[
            ("sql_handle", HANDLE),
            ("statement_start_offset", SqlType::Int),
            ("statement_end_offset", SqlType::Int),
            ("plan_generation_num", SqlType::BigInt),
            ("plan_handle", HANDLE),
            ("creation_time", SqlType::DateTime),
            ("last_execution_time", SqlType::DateTime),
        ],
        &[
            ("query_hash", HASH),
            ("query_plan_hash", HASH),
            ("total_rows", SqlType::BigInt),
            ("last_rows", SqlType::BigInt),
            ("min_rows", SqlType::BigInt),
            ("max_rows", SqlType::BigInt),
            ("statement_sql_handle", HANDLE),
            ("statement_context_id", SqlType::BigInt),
        ],
    );
    let zeros: &[&str] = &[
        "clr_time",
        "dop",
        "grant_kb",
        "used_grant_kb",
        "ideal_grant_kb",
        "reserved_threads",
        "used_threads",
        "columnstore_segment_reads",
        "columnstore_segment_skips",
        "spills",
        "num_physical_reads",
        "page_server_reads",
        "num_page_server_reads",
    ];
    add_quads(&mut columns, zeros);
    let store = ctx.counters.query_stats.store();
    let mut rows = Vec::with_capacity(store.statements.len());
    for (key, c) in &store.statements {
        let text = text_of(ctx, &store, key.source);
        let text = text.as_deref();
        let mut row = vec![
            sql_handle(key.source),
            int(utf16_offset(text, key.start)),
            // The offset of the statement's last character, as SQL Server's end offset is.
            int(utf16_offset(text, key.end).max(utf16_offset(text, key.start) + 2) - 2),
            big(1),
            Value::Binary(plan_handle(key.source)),
            datetime(c.created_micros),
            datetime(c.last_micros),
        ];
        counter_values(c, &mut row);
        let hash = statement_hash(text, key);
        row.extend([hash.clone(), hash]);
        row.extend(c.rows.values());
        row.extend([Value::Null, Value::Null]);
        for counter in zeros {
            // One thread at degree of parallelism 1, as a serial plan shows.
            let v = if matches!(*counter, "dop") { 1 } else { 0 };
            row.extend([big(v), big(v), big(v), big(v)]);
        }
        rows.push(row);
    }
    RowSet { columns, rows }
}

/// `sys.dm_exec_procedure_stats`: one row per procedure counted (a call by `EXEC` or RPC).
pub(super) fn procedure_stats(ctx: &ViewContext<'_>) -> RowSet {
    let store = ctx.counters.query_stats.store();
    let rows = store
        .procedures
        .iter()
        .filter_map(|((db, object), c)| {
            let database = ctx.instance.database_by_id(i64::from(*db))?;
            // A dropped procedure's counters go with it.
            database.object_by_id(*object)?;
            let source = Source::Module(*db, *object);
            let mut row = vec![
                int(i64::from(*db)),
                int(i64::from(*object)),
                Value::Str("P ".into()),
                Value::NStr("SQL_STORED_PROCEDURE".into()),
                sql_handle(source),
                Value::Binary(plan_handle(source)),
                datetime(c.created_micros),
                datetime(c.last_micros),
            ];
            counter_values(c, &mut row);
            row.extend(std::iter::repeat_n(big(0), 16));
            Some(row)
        })
        .collect();
    RowSet { columns: module_columns(), rows }
}

/// `sys.dm_exec_function_stats` and `dm_exec_trigger_stats`: no rows; Walden counts
/// procedures only.
pub(super) fn uncounted_modules() -> RowSet {
    RowSet { columns: module_columns(), rows: Vec::new() }
}

/// The columns of `sys.dm_exec_procedure_stats`, `dm_exec_function_stats` and
/// `dm_exec_trigger_stats`.
fn module_columns() -> Vec<ColumnInfo> {
    let mut columns = columns(
        &[
            ("database_id", SqlType::Int),
            ("object_id", SqlType::Int),
            ("type", SqlType::Char(2)),
            ("type_desc", super::DESC),
            ("sql_handle", HANDLE),
            ("plan_handle", HANDLE),
            ("cached_time", SqlType::DateTime),
            ("last_execution_time", SqlType::DateTime),
        ],
        &[],
    );
    add_quads(
        &mut columns,
        &["spills", "num_physical_reads", "page_server_reads", "num_page_server_reads"],
    );
    columns
}

/// The source and database of the counted statements or procedure the plan handle in
/// `args` names; `None` for NULL or any other handle.
fn counted_plan(ctx: &ViewContext<'_>, args: &[Value]) -> Option<(Source, u32)> {
    let source = match args.first() {
        Some(Value::Binary(handle)) => parse_plan_handle(handle)?,
        _ => return None,
    };
    Some((source, ctx.counters.query_stats.database_of(source)?))
}

/// The rows of `sys.dm_exec_query_plan(plan_handle)` and `sys.dm_exec_text_query_plan`: a
/// row for a plan handle of a counted statement or procedure, with its database and
/// object, and a NULL plan: Walden does not keep the plans it ran as XML
/// (`SET SHOWPLAN_XML ON` shows a statement's). No row for any other handle.
pub(super) fn query_plan(ctx: &ViewContext<'_>, args: &[Value]) -> Vec<Vec<Value>> {
    let Some((source, db)) = counted_plan(ctx, args) else { return Vec::new() };
    let object = match source {
        Source::Module(_, object) => int(i64::from(object)),
        Source::Text(_) => Value::Null,
    };
    vec![vec![
        Value::SmallInt(db as i16),
        object,
        Value::SmallInt(1),
        Value::Bit(false),
        Value::Null,
    ]]
}

/// The rows of `sys.dm_exec_plan_attributes(plan_handle)` for the plan handle of a counted
/// statement or procedure: SQL Server's attributes, as (attribute, value, is_cache_key).
/// `dbid` and `objectid` are the plan's (an ad hoc plan's `objectid` is a number from its
/// text's hash, as SQL Server's is), `sql_handle` its text's; the session settings are
/// SQL Server's defaults (Walden keeps one plan per text whatever the settings) and the
/// execution-context and cursor counters 0. No rows for any other handle.
pub(super) fn plan_attributes(ctx: &ViewContext<'_>, args: &[Value]) -> Vec<Vec<Value>> {
    let Some((source, db)) = counted_plan(ctx, args) else { return Vec::new() };
    let object = match source {
        Source::Module(_, object) => i64::from(object),
        Source::Text(hash) => {
            i64::from(u32::from_be_bytes([hash[0], hash[1], hash[2], hash[3]]) >> 1)
        }
    };
    let db = i64::from(db);
    let mut rows: Vec<(&str, Value, bool)> = vec![
        ("set_options", int(4347), true),
        ("objectid", int(object), true),
        ("dbid", int(db), true),
        ("dbid_execute", int(db), true),
        ("user_id", int(1), true),
        ("language_id", int(0), true),
        ("date_format", int(1), true),
        ("date_first", int(7), true),
        ("compat_level", int(160), true),
        ("status", int(0), true),
        ("required_cursor_options", int(0), true),
        ("acceptable_cursor_options", int(0), true),
        ("merge_action_type", Value::SmallInt(0), false),
        ("is_replication_specific", int(0), true),
        ("optional_spid", Value::SmallInt(0), true),
        ("optional_clr_trigger_dbid", int(0), true),
        ("optional_clr_trigger_objid", int(0), true),
        ("parent_plan_handle", Value::Null, false),
    ];
    for counter in [
        "inuse_exec_context",
        "free_exec_context",
        "hits_exec_context",
        "misses_exec_context",
        "removed_exec_context",
        "inuse_cursors",
        "free_cursors",
        "hits_cursors",
        "misses_cursors",
        "removed_cursors",
    ] {
        rows.push((counter, int(0), false));
    }
    rows.push(("sql_handle", sql_handle(source), false));
    rows.into_iter()
        .map(|(attribute, value, key)| {
            vec![Value::NStr(attribute.to_string()), value, Value::Bit(key)]
        })
        .collect()
}
