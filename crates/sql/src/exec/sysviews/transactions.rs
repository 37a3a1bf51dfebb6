//! The open transactions: `sys.dm_tran_active_transactions`, `sys.dm_tran_session_transactions`,
//! `sys.dm_tran_database_transactions`, and what `DBCC OPENTRAN` reports.
//!
//! Two sources, read without stopping anyone: each session's user transaction (recorded by the
//! session when `BEGIN TRAN` or `IMPLICIT_TRANSACTIONS` opens it), and each database log's open
//! transactions (log rule 8), which carry the lock owner of the engine transaction that logged
//! them. An autocommit transaction shows up only once it has logged something, and a read-only
//! user transaction only through its session; SQL Server lists both from the start. Both
//! sources are read one after the other, so a transaction that ends meanwhile may appear in
//! one and not the other.

use std::collections::BTreeMap;

use walden_engine::lock::owner_session;
use walden_engine::types::{Decimal, Len, SqlType, Value};
use walden_log::Lsn;

use super::sessions::now_micros;
use super::{big, datetime, int, nstr, RowSet, View, ViewContext};

/// One open transaction, as the views and `DBCC OPENTRAN` show it.
#[derive(Debug, Clone)]
pub(crate) struct OpenTran {
    /// The engine's transaction id (its lock owner); for one the engine runs itself (recovery
    /// undoing a loser), the database's local transaction id.
    pub(crate) id: u64,
    /// The session (0: the system).
    pub(crate) session: u16,
    pub(crate) name: String,
    pub(crate) begin_micros: u64,
    /// `BEGIN TRAN` or `IMPLICIT_TRANSACTIONS` opened it.
    pub(crate) user: bool,
    /// The databases whose log it has written to, with where its log starts there.
    pub(crate) databases: Vec<(u32, Lsn)>,
}

impl OpenTran {
    /// The system's own (no session: recovery undoing a loser).
    fn system(&self) -> bool {
        self.session == 0
    }
}

/// Every open transaction, by id.
pub(crate) fn open_transactions(ctx: &ViewContext<'_>) -> Vec<OpenTran> {
    let sessions = ctx.counters.sessions.all();
    let mut by_id: BTreeMap<u64, OpenTran> = BTreeMap::new();
    for a in &sessions {
        if let Some(t) = a.user_transaction() {
            by_id.insert(
                t.id,
                OpenTran {
                    id: t.id,
                    session: a.spid(),
                    name: t.name,
                    begin_micros: t.begin_micros,
                    user: true,
                    databases: Vec::new(),
                },
            );
        }
    }
    for db in ctx.instance.databases() {
        for open in db.open_transactions() {
            let system = open.tag == 0;
            let id = if system { open.txn } else { open.tag };
            let entry = by_id.entry(id).or_insert_with(|| {
                let session = if system { 0 } else { owner_session(open.tag) };
                let activity = sessions.iter().find(|a| a.spid() == session && session != 0);
                OpenTran {
                    id,
                    session,
                    // An autocommit transaction is named after its statement, as in SQL Server.
                    name: activity.map_or("system", |a| a.command_name()).to_string(),
                    begin_micros: activity.map_or_else(now_micros, |a| a.request_start_micros()),
                    user: false,
                    databases: Vec::new(),
                }
            });
            entry.databases.push((db.id(), open.start));
        }
    }
    by_id.into_values().collect()
}

/// An LSN as SQL Server shows one in `numeric(25,0)` columns: the three parts of its text form
/// (`fn_dblog`'s `Current LSN`) as decimal digit groups, `aaaa bbbbbbbbbb ccccc`.
fn numeric_lsn(lsn: Lsn) -> Value {
    let (high, low, slot) = super::lsn_parts(lsn);
    let digits = i128::from(high) * 10i128.pow(15) + i128::from(low) * 100_000 + i128::from(slot);
    Decimal::new(digits, 0).map_or(Value::Null, Value::Decimal)
}

/// `numeric(25,0)`, SQL Server's type for LSNs in its views.
const LSN_NUMERIC: SqlType = SqlType::Decimal { precision: 25, scale: 0 };

/// `sys.dm_tran_active_transactions`.
pub(super) fn active_transactions(ctx: &ViewContext<'_>) -> RowSet {
    let zero = |_: &OpenTran| int(0);
    View::<OpenTran>::new()
        .col("transaction_id", SqlType::BigInt, |t| big(t.id))
        .col("name", SqlType::NVarChar(Len::N(32)), |t| nstr(t.name.as_str()))
        .col("transaction_begin_time", SqlType::DateTime, |t| datetime(t.begin_micros))
        // 1 read/write, 2 read-only, 3 system.
        .col("transaction_type", SqlType::Int, |t| {
            int(if t.system() {
                3
            } else if t.databases.is_empty() {
                2
            } else {
                1
            })
        })
        .opt("transaction_uow", SqlType::UniqueIdentifier, |_| Value::Null)
        // 2: active.
        .col("transaction_state", SqlType::Int, |_| int(2))
        .col("transaction_status", SqlType::Int, zero)
        .col("transaction_status2", SqlType::Int, zero)
        .col("dtc_state", SqlType::Int, zero)
        .col("dtc_status", SqlType::Int, zero)
        .col("dtc_isolation_level", SqlType::Int, zero)
        .opt("filestream_transaction_id", SqlType::VarBinary(Len::N(128)), |_| Value::Null)
        .rows(&open_transactions(ctx))
}

/// `sys.dm_tran_session_transactions`: the transactions sessions have open.
pub(super) fn session_transactions(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<OpenTran> =
        open_transactions(ctx).into_iter().filter(|t| t.session != 0).collect();
    View::<OpenTran>::new()
        .col("session_id", SqlType::Int, |t| int(t.session.into()))
        .col("transaction_id", SqlType::BigInt, |t| big(t.id))
        .opt("transaction_descriptor", SqlType::Binary(8), |t| {
            Value::Binary(t.id.to_le_bytes().to_vec())
        })
        .col("enlist_count", SqlType::Int, |_| int(1))
        .col("is_user_transaction", SqlType::Bit, |t| Value::Bit(t.user))
        .col("is_local", SqlType::Bit, |_| Value::Bit(true))
        .col("is_enlisted", SqlType::Bit, |_| Value::Bit(false))
        .col("is_bound", SqlType::Bit, |_| Value::Bit(false))
        .col("open_transaction_count", SqlType::Int, |_| int(1))
        .rows(&rows)
}

/// `sys.dm_tran_current_transaction`: the transaction the reading statement runs in (its own
/// autocommit one outside a user transaction). Walden has no snapshot isolation, so the
/// snapshot columns are 0 or NULL.
pub(super) fn current_transaction(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<u64> = ctx.current_transaction.into_iter().collect();
    let none = |_: &u64| Value::Null;
    View::<u64>::new()
        .col("transaction_id", SqlType::BigInt, |id| big(*id))
        .col("transaction_sequence_num", SqlType::BigInt, |_| big(0))
        .col("transaction_is_snapshot", SqlType::Bit, |_| Value::Bit(false))
        .opt("first_snapshot_sequence_num", SqlType::BigInt, none)
        .opt("last_transaction_sequence_num_at_begin", SqlType::BigInt, none)
        .opt("first_useful_sequence_num", SqlType::BigInt, none)
        .rows(&rows)
}

/// One transaction in one database it has logged in.
struct DatabaseTran {
    id: u64,
    begin_micros: u64,
    system: bool,
    database: u32,
    start: Lsn,
}

/// `sys.dm_tran_database_transactions`: one row per transaction and database whose log it
/// has written to.
pub(super) fn database_transactions(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<DatabaseTran> = open_transactions(ctx)
        .iter()
        .flat_map(|t| {
            t.databases.iter().map(|&(database, start)| DatabaseTran {
                id: t.id,
                begin_micros: t.begin_micros,
                system: t.system(),
                database,
                start,
            })
        })
        .collect();
    let unknown = |_: &DatabaseTran| Value::Null;
    View::<DatabaseTran>::new()
        .col("transaction_id", SqlType::BigInt, |r| big(r.id))
        .col("database_id", SqlType::Int, |r| int(r.database.into()))
        .opt("database_transaction_begin_time", SqlType::DateTime, |r| datetime(r.begin_micros))
        // 1 read/write (3 system).
        .col("database_transaction_type", SqlType::Int, |r| int(if r.system { 3 } else { 1 }))
        // 4: has generated log records.
        .col("database_transaction_state", SqlType::Int, |_| int(4))
        .col("database_transaction_status", SqlType::Int, |_| int(0))
        .col("database_transaction_status2", SqlType::Int, |_| int(0))
        .opt("database_transaction_log_record_count", SqlType::BigInt, unknown)
        .opt("database_transaction_log_bytes_used", SqlType::BigInt, unknown)
        .opt("database_transaction_begin_lsn", LSN_NUMERIC, |r| numeric_lsn(r.start))
        .rows(&rows)
}
