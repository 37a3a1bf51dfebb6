//! `sys.fn_dblog(start_lsn, end_lsn)`: the records of the view's database's log, decoded.
//!
//! The log is read from disk, so the records shown are the hardened ones: a delayed commit
//! still in the log buffer appears once a flush has written it. Reading never forces a flush,
//! which would change the counters the scripts measure.

use std::collections::HashMap;

use walden_engine::catalog::Object;
use walden_engine::database::CATALOG_ROOT;
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::wal::{EngineRecord, Undo};
use walden_engine::{Database, EngineError};
use walden_log::{Durability, LogRecord, RecordKind};

use super::{datetime2_from_unix_micros, format_lsn, nstr, opt_nstr, View, ViewContext};
use crate::exec::{RowSet, SqlError};

/// One row of `fn_dblog`.
struct LogRow {
    lsn: u64,
    operation: &'static str,
    context: &'static str,
    txn: u64,
    len: usize,
    prev: u64,
    alloc_unit: Option<String>,
    page: Option<u32>,
    min_lsn: Option<u64>,
    end_time: Option<String>,
    description: Option<String>,
}

/// What a tree is, for the `AllocUnitName` and `Context` columns: by root page.
type AllocUnits = HashMap<u32, (String, &'static str)>;

/// The trees of the database's current catalog. A tree dropped or replaced since (TRUNCATE
/// gives every index a new tree) is no longer known and shows as "Unknown Alloc Unit".
fn alloc_units(db: &Database) -> AllocUnits {
    let mut units = AllocUnits::new();
    units.insert(CATALOG_ROOT, ("sys.sysschobjs.clst".to_string(), "LCX_CLUSTERED"));
    for object in db.catalog().objects() {
        let Object::Table(t) = &*object else { continue };
        for index in &t.indexes {
            let unit = if index.is_heap() {
                (format!("{}.{}", t.schema, t.name), "LCX_HEAP")
            } else if index.id == 1 {
                (format!("{}.{}.{}", t.schema, t.name, index.name), "LCX_CLUSTERED")
            } else {
                (format!("{}.{}.{}", t.schema, t.name, index.name), "LCX_INDEX_LEAF")
            };
            units.insert(index.root, unit);
        }
    }
    units
}

/// The operation a row record did, by the undo it carries, and the operation undoing it.
fn row_operation(undo: &Undo) -> (&'static str, &'static str) {
    match undo {
        Undo::Delete => ("LOP_INSERT_ROWS", "LOP_DELETE_ROWS"),
        Undo::Insert(_) => ("LOP_DELETE_ROWS", "LOP_INSERT_ROWS"),
        Undo::Restore(_) => ("LOP_MODIFY_ROW", "LOP_MODIFY_ROW"),
    }
}

/// `Error 9005`: an LSN argument that is not one.
fn bad_lsn() -> SqlError {
    SqlError::new(
        9005,
        "Either start LSN or end LSN specified in OpenRowset(DBLog, ...) is invalid.",
    )
}

/// Parses an LSN as `fn_dblog` accepts one: `0x` and hex parts (`0x00000020:00000010:0001`,
/// the form `Current LSN` shows with `0x` in front), decimal parts (`32:16:1`), or one number,
/// the byte offset itself. The slot part is ignored: Walden's LSNs are byte offsets.
pub(super) fn parse_lsn(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (text, 10),
    };
    let parts: Vec<u64> = digits
        .split(':')
        .map(|p| u64::from_str_radix(p, radix).ok())
        .collect::<Option<Vec<u64>>>()?;
    match parts.as_slice() {
        [lsn] => Some(*lsn),
        [high, low] | [high, low, _] if *low <= u64::from(u32::MAX) => {
            high.checked_mul(1 << 32).map(|h| h | low)
        }
        _ => None,
    }
}

fn lsn_arg(value: &Value) -> Result<Option<u64>, SqlError> {
    match value {
        Value::Null => Ok(None),
        Value::Str(s) | Value::NStr(s) => parse_lsn(s).map(Some).ok_or_else(bad_lsn),
        Value::TinyInt(v) => Ok(Some(u64::from(*v))),
        Value::SmallInt(v) => u64::try_from(*v).map(Some).map_err(|_| bad_lsn()),
        Value::Int(v) => u64::try_from(*v).map(Some).map_err(|_| bad_lsn()),
        Value::BigInt(v) => u64::try_from(*v).map(Some).map_err(|_| bad_lsn()),
        _ => Err(bad_lsn()),
    }
}

/// SQL Server's `End Time` format, in local time: `2024/01/31 12:34:56:789`.
fn format_time(us: u64) -> Option<String> {
    let value = datetime2_from_unix_micros(us)?;
    let (y, mo, d) = value.date.ymd();
    let (h, mi, s, ticks) = value.time.hms();
    Some(format!("{y:04}/{mo:02}/{d:02} {h:02}:{mi:02}:{s:02}:{:03}", ticks / 10_000))
}

/// `sys.fn_dblog(start_lsn, end_lsn)`: one row per record of the view's database's log from
/// `start_lsn` (NULL: the start of the active log) to `end_lsn` (NULL: its hardened end),
/// both inclusive. tempdb has no log: no rows.
pub(super) fn fn_dblog(ctx: &ViewContext<'_>, args: &[Value]) -> Result<RowSet, SqlError> {
    let start = lsn_arg(&args[0])?;
    let end = lsn_arg(&args[1])?;
    let mut rows = Vec::new();
    if let Some(log) = ctx.database.log() {
        let units = alloc_units(ctx.database);
        // Reading starts at the active log even when `start_lsn` is later, so that each
        // transaction's chain (`Previous LSN`, what a compensation undid) is known.
        let active_start = log.truncation_lsn().max(log.start_lsn());
        let from = start.unwrap_or(0);
        let mut reader = Reader { units: &units, prev: HashMap::new(), undo: HashMap::new() };
        for record in log.scan(active_start.min(from.saturating_sub(1))) {
            let record = record.map_err(|e| SqlError::from(EngineError::from(e)))?;
            if end.is_some_and(|end| record.lsn > end) {
                break;
            }
            let row = reader.row(&record);
            if record.lsn >= from {
                rows.push(row);
            }
        }
    }
    let lsn = SqlType::NVarChar(Len::N(23));
    Ok(View::<LogRow>::new()
        .col("Current LSN", lsn, |r| nstr(format_lsn(r.lsn)))
        .col("Operation", SqlType::NVarChar(Len::N(31)), |r| nstr(r.operation))
        .col("Context", SqlType::NVarChar(Len::N(31)), |r| nstr(r.context))
        .col("Transaction ID", SqlType::NVarChar(Len::N(14)), |r| {
            nstr(format!("{:04x}:{:08x}", r.txn >> 32, r.txn & 0xffff_ffff))
        })
        .col("Log Record Length", SqlType::Int, |r| {
            Value::Int(i32::try_from(r.len).unwrap_or(i32::MAX))
        })
        .col("Previous LSN", lsn, |r| nstr(format_lsn(r.prev)))
        .opt("AllocUnitName", SqlType::NVarChar(Len::N(387)), |r| opt_nstr(r.alloc_unit.clone()))
        .opt("Page ID", SqlType::NVarChar(Len::N(14)), |r| {
            opt_nstr(r.page.map(|p| format!("0001:{p:08x}")))
        })
        .opt("Minimum LSN", lsn, |r| opt_nstr(r.min_lsn.map(format_lsn)))
        .opt("End Time", SqlType::NVarChar(Len::N(24)), |r| opt_nstr(r.end_time.clone()))
        .opt("Description", SqlType::NVarChar(Len::N(256)), |r| opt_nstr(r.description.clone()))
        .rows(&rows))
}

/// Decodes records in log order, following each transaction's chain of records.
struct Reader<'a> {
    units: &'a AllocUnits,
    /// Transaction -> the LSN of its last record so far (`Previous LSN`).
    prev: HashMap<u64, u64>,
    /// Transaction -> its row changes not yet undone: (LSN, operation undoing it, tree), so a
    /// compensation record shows the operation it performed and on which tree.
    undo: HashMap<u64, Vec<(u64, &'static str, u32)>>,
}

impl Reader<'_> {
    fn unit(&self, root: u32) -> (String, &'static str) {
        self.units
            .get(&root)
            .cloned()
            .unwrap_or_else(|| ("Unknown Alloc Unit".to_string(), "LCX_INDEX_LEAF"))
    }

    fn row(&mut self, record: &LogRecord) -> LogRow {
        let prev =
            if record.txn == 0 { 0 } else { self.prev.insert(record.txn, record.lsn).unwrap_or(0) };
        let mut row = LogRow {
            lsn: record.lsn,
            operation: record.kind.operation_name(),
            context: "LCX_NULL",
            txn: record.txn,
            len: record.len(),
            prev,
            alloc_unit: None,
            page: None,
            min_lsn: None,
            end_time: None,
            description: None,
        };
        match record.kind {
            RecordKind::Begin => {}
            RecordKind::Commit => {
                self.finish(record.txn);
                if let Some(body) = record.commit() {
                    row.end_time = format_time(body.commit_time_us);
                    row.description = Some(
                        match body.durability {
                            Durability::Full => "full",
                            Durability::Delayed => "delayed",
                        }
                        .to_string(),
                    );
                }
            }
            RecordKind::Abort => self.finish(record.txn),
            RecordKind::Payload => self.payload(record, &mut row),
        }
        row
    }

    /// A transaction ended: its chain is complete.
    fn finish(&mut self, txn: u64) {
        self.prev.remove(&txn);
        self.undo.remove(&txn);
    }

    fn payload(&mut self, record: &LogRecord, row: &mut LogRow) {
        let decoded = match EngineRecord::decode(&record.body) {
            Ok(decoded) => decoded,
            Err(e) => {
                row.description = Some(e.to_string());
                return;
            }
        };
        match decoded {
            EngineRecord::Row { root, undo, change, .. } => {
                let (operation, inverse) = row_operation(&undo);
                let (unit, context) = self.unit(root);
                self.undo.entry(record.txn).or_default().push((record.lsn, inverse, root));
                row.operation = operation;
                row.context = context;
                row.alloc_unit = Some(unit);
                row.page = Some(change.page);
            }
            EngineRecord::Rows { root, change, .. } => {
                // Its keys are undone one by one, and their compensations name this record
                // until its first key is undone: one entry undoes the whole run.
                let (unit, context) = self.unit(root);
                self.undo.entry(record.txn).or_default().push((
                    record.lsn,
                    "LOP_DELETE_ROWS",
                    root,
                ));
                row.operation = "LOP_INSERT_ROWS";
                row.context = context;
                row.alloc_unit = Some(unit);
                row.page = Some(change.page);
            }
            EngineRecord::Compensation { undo_next, change } => {
                // It undid the transaction's latest change not yet undone: the one after
                // `undo_next`, the next change left to undo.
                let undone = self.undo.get_mut(&record.txn).and_then(|stack| {
                    if stack.last().is_some_and(|entry| entry.0 > undo_next) {
                        stack.pop()
                    } else {
                        None
                    }
                });
                row.operation = "LOP_MODIFY_ROW";
                if let Some((_, inverse, root)) = undone {
                    let (unit, context) = self.unit(root);
                    row.operation = inverse;
                    row.context = context;
                    row.alloc_unit = Some(unit);
                }
                row.page = Some(change.page);
                row.description = Some("COMPENSATION".to_string());
            }
            EngineRecord::Structure { changes } => {
                row.operation = if !changes.is_empty() && changes.iter().all(|c| c.image) {
                    "LOP_FORMAT_PAGE"
                } else {
                    "LOP_MODIFY_HEADER"
                };
                row.page = changes.first().map(|c| c.page);
                let pages: Vec<String> = changes.iter().map(|c| c.page.to_string()).collect();
                row.description = Some(format!("pages {}", pages.join(", ")));
            }
            EngineRecord::Checkpoint(body) => {
                row.operation = "LOP_END_CKPT";
                row.min_lsn = Some(body.scan_start);
                row.description = Some(format!(
                    "redo point {}, next transaction {}",
                    format_lsn(body.redo_point),
                    body.next_txn
                ));
            }
            EngineRecord::Prepare { gtid } => {
                row.operation = "LOP_PREP_XACT";
                row.description = Some(format!("global transaction {gtid}"));
            }
        }
    }
}
