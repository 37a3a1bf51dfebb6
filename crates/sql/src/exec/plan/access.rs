//! Access paths: how one table's rows are read for the predicates that constrain it.
//!
//! A predicate the planner can give to an index (a *search argument*) compares one key
//! column with a *probe*: an expression whose value is known before the table is read (a
//! literal, a variable, a column of an enclosing query, or, in an index nested loops join, a
//! column of the rows already joined). [`choose`] matches the search arguments to each index
//! and picks the cheapest of:
//!
//! * a seek: equality (`=`, `IN (...)`, `IS NULL`) on a prefix of the index key, then at most
//!   one range (`<`, `<=`, `>`, `>=`, `BETWEEN`, `LIKE 'prefix%'`) on the next key column;
//! * a scan of the whole table.
//!
//! [`Run::read_path`] turns a seek into byte ranges of the index's memcomparable keys (a
//! prefix of the key columns encodes to a prefix of the key, see `walden_engine::types::key`)
//! and reads them: the clustered index directly, a nonclustered index by its entries' row
//! ids (a key lookup per row).
//!
//! # Invariant: a seek returns a superset
//!
//! A seek returns every row the search arguments it used can accept, and may return more
//! (a bound it could not encode exactly is dropped, widening the range). The caller always
//! applies the predicates again to every row read, so a seek decides only how much is read,
//! never what is returned. The one exception is exact by construction: a kept plan
//! (`exec::plan_cache`) does not check again the integer equalities a seek of the
//! clustered key was made of (`AccessPath::exact_seek_conjuncts`). Where a probe's value cannot be represented in the key column's
//! type at all (a conversion error), [`Run::read_path`] answers `None` and the caller scans
//! instead, so that the scan's comparison reports what SQL Server would.
//!
//! # Locks
//!
//! The engine's cursors lock what a path reads (`docs/locking.md`): each row while it is read
//! under READ COMMITTED (unless no other transaction has a change in the tree: lock
//! avoidance); under SERIALIZABLE a seek's key ranges lock each key read and the key past the
//! range with RangeS-S (RangeS-U in an UPDATE's or DELETE's search of its target), and a seek
//! of a whole unique clustered key (`Transaction::seek_key`) locks its row, or the gap where
//! it would be. Since a seek reads a superset of the rows its predicates accept, those locks
//! cover every row the statement could see again. Only a path with no index (a scan of the
//! whole table) takes S on the table.
//!
//! # Estimates
//!
//! Estimates come from [`TableStats`] where the planner has the table's statistics: its
//! statistics objects (`statistics_objects.rs`) where they are built, otherwise a sample of
//! its indexes. A statistics object gives the rows and, from its density vector, how many
//! rows share each key prefix; its histogram estimates `=`, `IN` and ranges with constant
//! probes on its leading column (a variable or a column of another table is estimated by
//! the density, as SQL Server does for values it cannot see when it compiles). Without
//! statistics the estimates are SQLite's kind of guesses: a table of [`TABLE_ROWS`] rows,
//! each equality column keeping one row in [`EQ_SELECTIVITY`], and a range a tenth. They
//! only rank the paths; none of them is a promise.

mod histogram;
mod shape;

use std::ops::Bound;
use std::sync::Arc;
use std::time::{Duration, Instant};

use walden_engine::catalog::{IndexDef, TableDef};
use walden_engine::statistics::Histogram;
use walden_engine::types::{encode_key, encode_key_columns_ordered, SqlType, TextOrder, Value};

use crate::ast::{BinaryOp, Expr, ExprKind, Ident, Literal, UnaryOp};
use crate::exec::eval::{is_literal_or_variable, Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::query::TableRef;
use crate::exec::plan::showplan::PlanNode;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

pub(crate) use shape::PathShape;

/// The predicates a read applies to each row before it keeps it, so that a scan never
/// collects the rows they reject. `cols` describe the rows read (the table's columns and
/// its row locator); `outer` is the enclosing query's row, if any.
#[derive(Clone, Copy)]
pub(crate) struct RowFilter<'a> {
    pub(crate) cols: &'a [Col],
    pub(crate) exprs: &'a [&'a Expr],
    pub(crate) outer: Option<&'a Env<'a>>,
}

/// Flags true where both `a` and `b` are.
fn both(a: &[bool], b: &[bool]) -> Vec<bool> {
    a.iter().zip(b).map(|(&x, &y)| x && y).collect()
}

/// Where a read puts the rows it keeps: collected (`Vec`), or passed on at once (a
/// streamed SELECT's projection and output). `push` answers whether the read goes on.
pub(crate) trait RowSink {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError>;

    /// The columns of a scanned table's row that [`RowSink::wants`] does not read (true),
    /// or None if the sink has no such test: a scan then decodes the other columns only
    /// for the rows it wants.
    fn unread(&self, _n: usize) -> Option<Vec<bool>> {
        None
    }

    /// Whether `push` would do anything with `row`, judged from the columns that
    /// [`RowSink::unread`] does not mark alone (the others may be NULL): a row it does not
    /// want is never pushed. Asked only of a sink that answers `unread`, after the read's
    /// own filter; any error is one `push` would raise for the row.
    fn wants(&mut self, _run: &mut Run<'_>, _row: &[Value]) -> Result<bool, SqlError> {
        Ok(true)
    }
}

/// Collects rows until it holds `limit`.
struct Collect {
    rows: Vec<Vec<Value>>,
    limit: usize,
}

impl RowSink for Collect {
    fn push(&mut self, _: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        self.rows.push(row);
        Ok(self.rows.len() < self.limit)
    }
}

/// The row count assumed for a table whose size is unknown.
pub(crate) const TABLE_ROWS: f64 = 1_000_000.0;

/// The fraction of rows one equality on an index column keeps.
const EQ_SELECTIVITY: f64 = 0.01;

/// The fraction of rows a range on an index column keeps.
const RANGE_SELECTIVITY: f64 = 0.1;

/// The cost of reading a row through a nonclustered index (the entry, then the key
/// lookup), relative to reading it from the clustered index.
const LOOKUP_COST: f64 = 3.0;

/// At most this many seeks for one read (the product of the `IN` lists' lengths); beyond it
/// the path is not used.
const MAX_SEEKS: usize = 1024;

/// What the planner knows of a table's data: its rows, for each index how many rows share a
/// value of each prefix of its key (from its statistics object's density vector, or a sample
/// by `Transaction::sample_index`), and the histograms of its statistics objects by leading
/// column.
#[derive(Debug, Default)]
pub(crate) struct TableStats {
    pub(crate) rows: f64,
    pub(crate) indexes: Vec<(u16, Vec<f64>)>,
    pub(crate) histograms: Vec<(usize, Arc<Histogram>)>,
    /// Each column's distinct values, estimated from a sample of the rows
    /// (`Transaction::sample_column_distinct`); empty if the sample failed.
    pub(crate) distinct: Vec<Option<f64>>,
}

impl TableStats {
    /// Rows per value of the first `k` columns of index `id`, if known.
    pub(crate) fn rows_per_prefix(&self, id: u16, k: usize) -> Option<f64> {
        let (_, per) = self.indexes.iter().find(|(i, _)| *i == id)?;
        per.get(k.checked_sub(1)?).copied()
    }

    /// The histogram whose leading column is table column `column`, if any.
    fn histogram(&self, column: usize) -> Option<&Histogram> {
        self.histograms.iter().find(|(c, _)| *c == column).map(|(_, h)| &**h)
    }

    /// Rows the histogram of `column` expects for what `fixed` (or, with no `fixed`, `range`)
    /// says of the column, scaled to the table's rows now; None where a probe is not a
    /// constant or there is no histogram.
    fn histogram_rows(
        &self,
        column: usize,
        fixed: Option<&Fixed<'_>>,
        range: &Range<'_>,
    ) -> Option<f64> {
        let h = self.histogram(column)?;
        let key = |e: &Expr| constant_key(e, h.key_type);
        let fraction = match fixed {
            Some(Fixed::Eq(e)) => histogram::equal(h, &key(e)?),
            Some(Fixed::In(list)) => {
                let mut sum = 0.0;
                for e in *list {
                    sum += histogram::equal(h, &key(e)?);
                }
                sum
            }
            Some(Fixed::Null) => histogram::equal(h, &[0]),
            None => {
                if range.like.is_some() {
                    return None;
                }
                let lower = match range.lower {
                    Some((e, inclusive)) => Some((key(e)?, inclusive)),
                    None => None,
                };
                let upper = match range.upper {
                    Some((e, inclusive)) => Some((key(e)?, inclusive)),
                    None => None,
                };
                histogram::between(h, lower.as_ref(), upper.as_ref())
            }
        };
        Some(fraction * self.rows)
    }
}

/// The key (`types::key`) of a constant probe in type `ty`: a literal, or a negated number.
fn constant_key(e: &Expr, ty: SqlType) -> Option<Vec<u8>> {
    let value = match &e.kind {
        ExprKind::Literal(lit) => scalar::literal(lit).ok()?,
        ExprKind::Unary { op: UnaryOp::Minus, operand } => match &operand.kind {
            ExprKind::Literal(Literal::Integer(s)) => {
                scalar::literal(&Literal::Integer(format!("-{s}"))).ok()?
            }
            ExprKind::Literal(Literal::Decimal(s)) => {
                scalar::literal(&Literal::Decimal(format!("-{s}"))).ok()?
            }
            _ => return None,
        },
        _ => return None,
    };
    let value = key_value(value, ty).ok()??;
    let mut key = Vec::new();
    encode_key(&[ty], std::slice::from_ref(&value), &mut key).ok()?;
    Some(key)
}

/// What fixes one key column of a seek.
#[derive(Debug, Clone, Copy)]
enum Fixed<'e> {
    /// `column = probe`.
    Eq(&'e Expr),
    /// `column IN (probe, ...)`.
    In(&'e [Expr]),
    /// `column IS NULL`.
    Null,
}

/// A range on the key column after the fixed ones.
#[derive(Debug, Clone, Copy, Default)]
struct Range<'e> {
    /// The lower bound's probe and whether it is inclusive.
    lower: Option<(&'e Expr, bool)>,
    /// The upper bound's probe and whether it is inclusive.
    upper: Option<(&'e Expr, bool)>,
    /// `column LIKE probe`: the pattern's literal prefix bounds the range.
    like: Option<&'e Expr>,
}

impl Range<'_> {
    fn is_empty(&self) -> bool {
        self.lower.is_none() && self.upper.is_none() && self.like.is_none()
    }
}

/// The index id of a path that reads a row by its locator (`ROWID = probe`, which a keyed
/// cursor reads a heap's row again with, and a positioned change finds it by): the locator
/// is the row's key in the table's own tree (a heap's, or a non-unique clustered index's
/// with its uniquifier), so that one key is read. No index has this id.
const LOCATOR: u16 = u16::MAX;

/// How a table is read.
#[derive(Debug, Clone)]
pub(crate) struct AccessPath<'e> {
    /// The index sought, or None for a scan of the whole table; [`LOCATOR`] for a read of
    /// the row whose locator is `fixed`'s one value.
    index: Option<u16>,
    /// The values of the index's leading key columns.
    fixed: Vec<Fixed<'e>>,
    /// A range on the next key column.
    range: Range<'e>,
    /// Rows the path is expected to read.
    pub(crate) rows: f64,
    /// Its cost, in rows read from the clustered index.
    pub(crate) cost: f64,
}

impl AccessPath<'_> {
    /// A scan of the whole table.
    pub(crate) fn scan() -> AccessPath<'static> {
        AccessPath {
            index: None,
            fixed: Vec::new(),
            range: Range::default(),
            rows: TABLE_ROWS,
            cost: TABLE_ROWS,
        }
    }

    /// Whether the path reads the whole table.
    pub(crate) fn is_scan(&self) -> bool {
        self.index.is_none()
    }

    /// Whether the path reads rows in the order of the table columns `order` (ascending):
    /// a seek whose fixed columns are each one value reads its index in key order, so the
    /// key columns after them; a scan reads the clustered key's order.
    pub(crate) fn delivers_order(&self, def: &TableDef, order: &[usize]) -> bool {
        let Some(index) = def.index(self.index.unwrap_or(1)) else { return false };
        if self.fixed.iter().any(|f| matches!(f, Fixed::In(_))) {
            return false;
        }
        let rest = index.columns.get(self.fixed.len()..).unwrap_or_default();
        order.len() <= rest.len() && rest.iter().zip(order).all(|(k, o)| k == o)
    }

    /// Whether any probe of the path satisfies `test`.
    pub(crate) fn any_probe(&self, test: &mut dyn FnMut(&Expr) -> bool) -> bool {
        let fixed = self.fixed.iter().any(|f| match f {
            Fixed::Eq(e) => test(e),
            Fixed::In(list) => list.iter().any(&mut *test),
            Fixed::Null => false,
        });
        let r = &self.range;
        fixed
            || r.lower.is_some_and(|(e, _)| test(e))
            || r.upper.is_some_and(|(e, _)| test(e))
            || r.like.is_some_and(&mut *test)
    }
}

/// What a search argument says about one column.
#[derive(Debug, Default)]
struct ColumnTerms<'e> {
    fixed: Option<Fixed<'e>>,
    range: Range<'e>,
}

/// Chooses how to read `def`'s rows for `conjuncts` (each a predicate all of whose rows
/// must hold). `column` names the table column a reference is to, if it is one of this
/// table's; `probe` says whether an expression's value is known before the table is read.
pub(crate) fn choose<'e>(
    def: &TableDef,
    wanted: Option<&[bool]>,
    conjuncts: &[&'e Expr],
    column: &dyn Fn(&[Ident]) -> Option<usize>,
    probe: &dyn Fn(&Expr) -> bool,
    stats: Option<&TableStats>,
) -> AccessPath<'e> {
    let table_rows = stats.map_or(TABLE_ROWS, |s| s.rows.max(1.0));
    if let Some(value) = conjuncts.iter().find_map(|c| locator_probe(c, def, column, probe)) {
        let fixed = vec![Fixed::Eq(value)];
        return AccessPath {
            index: Some(LOCATOR),
            fixed,
            rows: 1.0,
            cost: 1.0,
            ..AccessPath::scan()
        };
    }
    let mut terms: Vec<ColumnTerms<'e>> = Vec::new();
    terms.resize_with(def.columns.len(), ColumnTerms::default);
    for c in conjuncts {
        collect_terms(c, column, probe, &mut terms);
    }
    let mut best = AccessPath { rows: table_rows, cost: table_rows, ..AccessPath::scan() };
    for index in &def.indexes {
        if index.columns.is_empty() {
            continue;
        }
        let mut fixed = Vec::new();
        let mut range = Range::default();
        let mut seeks = 1usize;
        for &c in &index.columns {
            if let Some(f) = terms[c].fixed {
                seeks = seeks.saturating_mul(match f {
                    Fixed::In(list) => list.len().max(1),
                    _ => 1,
                });
                fixed.push(f);
                continue;
            }
            range = terms[c].range;
            break;
        }
        if (fixed.is_empty() && range.is_empty()) || seeks > MAX_SEEKS {
            continue;
        }
        let whole_key = fixed.len() == index.columns.len();
        let leading = index.columns[0];
        let from_histogram = match (stats, fixed.len()) {
            (Some(s), 0) => s.histogram_rows(leading, None, &range),
            (Some(s), 1) => {
                // The histogram counts the leading column's rows; a range on the next
                // column keeps a part of them.
                let narrow = if range.is_empty() { 1.0 } else { RANGE_SELECTIVITY };
                s.histogram_rows(leading, fixed.first(), &Range::default()).map(|r| r * narrow)
            }
            _ => None,
        };
        let rows = if whole_key && index.unique {
            seeks as f64
        } else if let Some(rows) = from_histogram {
            rows.max(1.0)
        } else {
            let per_seek = stats
                .and_then(|s| s.rows_per_prefix(index.id, fixed.len()))
                .unwrap_or_else(|| table_rows * EQ_SELECTIVITY.powi(fixed.len() as i32));
            let mut rows = if fixed.is_empty() { table_rows } else { per_seek };
            if !range.is_empty() {
                rows *= RANGE_SELECTIVITY;
            }
            (rows * seeks as f64).max(1.0)
        };
        // A nonclustered index that holds every column read needs no lookup of the row.
        let lookups = index.id != 1 && Covering::of(def, index, wanted).is_none();
        let cost = if lookups { rows * LOOKUP_COST } else { rows } + seeks as f64;
        if cost < best.cost {
            best = AccessPath { index: Some(index.id), fixed, range, rows, cost };
        }
    }
    if best.is_scan() {
        // Nothing to seek: a nonclustered index that holds every column read is read whole
        // instead of the table, as SQL Server scans the narrowest covering index. Its entries
        // are narrower than the rows by the columns it leaves out.
        let clustered = def.primary().map_or(0, |p| p.columns.len());
        for index in def.indexes.iter().filter(|i| i.id != 1) {
            let held = index.columns.len() + clustered;
            if held >= def.columns.len() || Covering::of(def, index, wanted).is_none() {
                continue;
            }
            let cost = table_rows * held as f64 / def.columns.len() as f64;
            if cost < best.cost {
                best = AccessPath {
                    index: Some(index.id),
                    rows: table_rows,
                    cost,
                    ..AccessPath::scan()
                };
            }
        }
    }
    best
}

/// Where an index-only read of a nonclustered index finds each column a query reads: in
/// the index's key, or in the row id its entry points with (the clustered key). A column
/// counts only if its value can be read back from its key bytes (`key_decodable`: not text,
/// whose key is folded).
#[derive(Debug)]
pub(crate) struct Covering {
    /// The index key's column types, and which of them to read.
    key_types: Vec<SqlType>,
    key_read: Vec<bool>,
    /// The table column of each index key column.
    key_columns: Vec<usize>,
    /// The same for the clustered key, which the row id starts with.
    id_types: Vec<SqlType>,
    id_read: Vec<bool>,
    id_columns: Vec<usize>,
    /// The table's column count.
    width: usize,
}

impl Covering {
    /// How `index` covers the columns `wanted` marks (every column if None); None if it
    /// does not, or if `index` is the clustered index (which holds the rows themselves).
    pub(crate) fn of(
        def: &TableDef,
        index: &IndexDef,
        wanted: Option<&[bool]>,
    ) -> Option<Covering> {
        if index.id == 1 {
            return None;
        }
        let clustered = def.primary().ok().map_or(&[][..], |p| p.columns.as_slice());
        let is_wanted = |c: usize| wanted.is_none_or(|w| w.get(c).copied().unwrap_or(true));
        let decodable = |c: usize| walden_engine::types::key_decodable(def.columns[c].ty);
        let mut key_read = vec![false; index.columns.len()];
        let mut id_read = vec![false; clustered.len()];
        for c in (0..def.columns.len()).filter(|&c| is_wanted(c)) {
            if let Some(k) = index.columns.iter().position(|&k| k == c).filter(|_| decodable(c)) {
                key_read[k] = true;
            } else if let Some(k) = clustered.iter().position(|&k| k == c).filter(|_| decodable(c))
            {
                id_read[k] = true;
            } else {
                return None;
            }
        }
        let types = |cols: &[usize]| cols.iter().map(|&c| def.columns[c].ty).collect();
        Some(Covering {
            key_types: types(&index.columns),
            key_read,
            key_columns: index.columns.clone(),
            id_types: types(clustered),
            id_read,
            id_columns: clustered.to_vec(),
            width: def.columns.len(),
        })
    }

    /// The row an index entry stands for: the columns read from `key` and `row_id`, NULL
    /// for the others (which no one reads). None if the entry does not decode.
    fn row(&self, key: &[u8], row_id: &[u8]) -> Option<Vec<Value>> {
        use walden_engine::types::decode_key_columns;
        let mut row = vec![Value::Null; self.width];
        let from_key = decode_key_columns(&self.key_types, &self.key_read, key)?;
        let from_id = if self.id_read.iter().any(|&r| r) {
            decode_key_columns(&self.id_types, &self.id_read, row_id)?
        } else {
            Vec::new()
        };
        for (v, &c) in from_key.into_iter().zip(&self.key_columns) {
            if !v.is_null() {
                row[c] = v;
            }
        }
        for (v, &c) in from_id.into_iter().zip(&self.id_columns) {
            if !v.is_null() {
                row[c] = v;
            }
        }
        Some(row)
    }
}

/// The probe of conjunct `c` when it is `locator = probe` (either way round): the table's row
/// locator, the position past `def`'s columns, equal to a value known before the table is
/// read.
fn locator_probe<'e>(
    c: &'e Expr,
    def: &TableDef,
    column: &dyn Fn(&[Ident]) -> Option<usize>,
    probe: &dyn Fn(&Expr) -> bool,
) -> Option<&'e Expr> {
    let ExprKind::Binary { op: BinaryOp::Eq, left, right } = &c.kind else { return None };
    let is_locator = |e: &Expr| match &e.kind {
        ExprKind::Column(parts) => column(parts) == Some(def.columns.len()),
        _ => false,
    };
    if is_locator(left) && probe(right) {
        Some(right)
    } else if is_locator(right) && probe(left) {
        Some(left)
    } else {
        None
    }
}

/// Records what conjunct `c` says of a column of the table, if it is a search argument.
fn collect_terms<'e>(
    c: &'e Expr,
    column: &dyn Fn(&[Ident]) -> Option<usize>,
    probe: &dyn Fn(&Expr) -> bool,
    terms: &mut [ColumnTerms<'e>],
) {
    // A position past the table's columns is its row locator (a cursor's positioned change
    // names it), which no index keys: not a search argument.
    let width = terms.len();
    let col = |e: &Expr| match &e.kind {
        ExprKind::Column(parts) => column(parts).filter(|&i| i < width),
        _ => None,
    };
    match &c.kind {
        ExprKind::Binary { op, left, right } => {
            let (i, op, value) = match (col(left), col(right)) {
                (Some(i), _) if probe(right) => (i, *op, &**right),
                (_, Some(i)) if probe(left) => (i, flip(*op), &**left),
                _ => return,
            };
            // `c = 'x' COLLATE name` compares by a collation the index's keys may not
            // follow: not a search argument.
            if matches!(value.kind, ExprKind::Collate { .. }) {
                return;
            }
            let t = &mut terms[i];
            match op {
                BinaryOp::Eq if !matches!(t.fixed, Some(Fixed::Eq(_))) => {
                    t.fixed = Some(Fixed::Eq(value));
                }
                BinaryOp::Gt | BinaryOp::GtEq if t.range.lower.is_none() => {
                    t.range.lower = Some((value, op == BinaryOp::GtEq));
                }
                BinaryOp::Lt | BinaryOp::LtEq if t.range.upper.is_none() => {
                    t.range.upper = Some((value, op == BinaryOp::LtEq));
                }
                _ => {}
            }
        }
        ExprKind::Between { expr, negated: false, low, high } => {
            if let Some(i) = col(expr).filter(|_| probe(low) && probe(high)) {
                let t = &mut terms[i];
                t.range.lower.get_or_insert((low, true));
                t.range.upper.get_or_insert((high, true));
            }
        }
        ExprKind::InList { expr, negated: false, list } => {
            if let Some(i) = col(expr).filter(|_| list.iter().all(probe)) {
                if terms[i].fixed.is_none() {
                    terms[i].fixed = Some(Fixed::In(list));
                }
            }
        }
        ExprKind::IsNull { expr, negated: false } => {
            if let Some(i) = col(expr) {
                terms[i].fixed.get_or_insert(Fixed::Null);
            }
        }
        ExprKind::Like { expr, negated: false, pattern, escape: None } => {
            if let Some(i) = col(expr).filter(|_| probe(pattern)) {
                terms[i].range.like.get_or_insert(pattern);
            }
        }
        _ => {}
    }
}

/// `a op b` as `b op' a`.
fn flip(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::GtEq => BinaryOp::LtEq,
        other => other,
    }
}

/// The smallest byte string above every string that starts with `prefix`, or None if there
/// is none (an empty prefix, or one of 0xFF bytes only).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// A probe's value converted to a key column's type, if it converts without changing: a
/// value that cannot be the column's (2.5 for an INT) gives `Ok(None)`, one that cannot be
/// converted at all an error.
fn key_value(v: Value, ty: SqlType) -> Result<Option<Value>, SqlError> {
    // An integer of the column's own type is its key as it is (a loop's lookup by an INT
    // variable, most often).
    if matches!(
        (&v, ty),
        (Value::Int(_), SqlType::Int)
            | (Value::BigInt(_), SqlType::BigInt)
            | (Value::SmallInt(_), SqlType::SmallInt)
            | (Value::TinyInt(_), SqlType::TinyInt)
    ) {
        return Ok(Some(v));
    }
    let k = scalar::coerce(v.clone(), ty, false)?;
    Ok((scalar::compare(&k, &v)? == Some(std::cmp::Ordering::Equal)).then_some(k))
}

/// The literal prefix of a LIKE pattern: its characters up to the first wildcard.
fn like_prefix(pattern: &str) -> &str {
    let end = pattern.find(['%', '_', '[']).unwrap_or(pattern.len());
    &pattern[..end]
}

impl Run<'_> {
    /// Reads the rows of `t` that `path` can find (at most `limit`), each followed by its
    /// row locator; the probes are evaluated in `env`. `Ok(None)` when a probe's value
    /// cannot be converted to its key column's type: the caller scans instead.
    pub(crate) fn read_path(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        env: &Env<'_>,
        limit: usize,
        keep: Option<RowFilter<'_>>,
    ) -> Result<Option<Vec<Vec<Value>>>, SqlError> {
        if limit == 0 {
            return Ok(Some(Vec::new()));
        }
        let mut rows = Collect { rows: Vec::new(), limit };
        Ok(self.read_path_into(t, path, env, keep, &mut rows)?.then_some(rows.rows))
    }

    /// [`Run::read_path`], giving each row `keep` accepts to `sink` until it says stop.
    /// False (and no row given) when a probe's value cannot be converted to its key
    /// column's type.
    ///
    /// Under `SET FMTONLY ON` it reads nothing and takes no lock: SQL Server processes no
    /// row then, and describes a table another transaction holds exclusively without waiting
    /// (mssql-jdbc's bulk copy asks for its target's columns that way, `SET FMTONLY ON
    /// SELECT * FROM t`, while the table may be locked by `TABLOCKX`).
    pub(crate) fn read_path_into(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        env: &Env<'_>,
        keep: Option<RowFilter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        if self.s.opts.fmtonly {
            return Ok(true);
        }
        let mut filter = keep.map(Filter::new);
        let keep = filter.as_mut();
        if let (Some(LOCATOR), [Fixed::Eq(probe)]) = (path.index, path.fixed.as_slice()) {
            let key = match self.eval(probe, env)? {
                Value::Binary(key) => key,
                // `= NULL` holds for no row.
                Value::Null => return Ok(true),
                _ => return Ok(false),
            };
            self.scan_rows(t, Bound::Included(key.clone()), Bound::Included(key), keep, sink)?;
            return Ok(true);
        }
        let Some(index) = path.index.and_then(|id| t.def.index(id)) else {
            self.scan_rows(t, Bound::Unbounded, Bound::Unbounded, keep, sink)?;
            return Ok(true);
        };
        if index.id == 1
            && index.unique
            && path.range.is_empty()
            && path.fixed.len() == index.columns.len()
            && path.fixed.iter().all(|f| matches!(f, Fixed::Eq(_)))
        {
            return self.seek_row(t, index, path, env, keep, sink);
        }
        let types: Vec<SqlType> = index.columns.iter().map(|&c| t.def.columns[c].ty).collect();
        // Text keys are encoded by their column's collation, as the index encodes them.
        let orders: Vec<TextOrder> =
            index.columns.iter().map(|&c| t.def.columns[c].text_order()).collect();
        // Every combination of the fixed columns' values, as encoded key prefixes.
        let mut prefixes: Vec<Vec<u8>> = vec![Vec::new()];
        let ansi_nulls = self.s.opts.semantics.ansi_nulls;
        for (k, f) in path.fixed.iter().enumerate() {
            let probes: Vec<Value> = match f {
                Fixed::Null => vec![Value::Null],
                Fixed::Eq(e) => vec![self.eval(e, env)?],
                Fixed::In(list) => {
                    let mut values = Vec::with_capacity(list.len());
                    for e in *list {
                        values.push(self.eval(e, env)?);
                    }
                    values
                }
            };
            let mut next = Vec::with_capacity(prefixes.len() * probes.len());
            for v in probes {
                // `= NULL` holds for no row; only IS NULL seeks the NULL key, and `= NULL`
                // or `= @null` under ANSI_NULLS OFF (`eval.rs`, `null_comparison`).
                let v = match (f, v.is_null()) {
                    (Fixed::Null, _) => Value::Null,
                    (Fixed::Eq(e), true) if !ansi_nulls && is_literal_or_variable(e) => Value::Null,
                    (_, true) => continue,
                    (_, false) => match key_value(v, types[k]) {
                        Ok(Some(v)) => v,
                        Ok(None) => continue,
                        Err(_) => return Ok(false),
                    },
                };
                for p in &prefixes {
                    let mut key = p.clone();
                    if encode_key_columns_ordered([(types[k], orders[k], &v)], &mut key).is_err() {
                        return Ok(false);
                    }
                    next.push(key);
                }
            }
            prefixes = next;
        }
        // Key order, and each key once (`IN (1, 1)` seeks once).
        prefixes.sort();
        prefixes.dedup();
        let ranged = path.fixed.len();
        let mut keep = keep;
        for prefix in prefixes {
            let column = types.get(ranged).map(|&ty| (ty, orders[ranged]));
            let Some((lower, upper)) = self.key_range(&prefix, path, column, env)? else {
                continue;
            };
            let unique_key = index.unique && ranged == index.columns.len();
            let more = if index.id == 1 {
                if unique_key {
                    // The key is the row id: a lookup, not a range (which under
                    // SERIALIZABLE locks the gap where the row would be if there is none).
                    let mark = self.io_mark();
                    let found = self
                        .tx()
                        .seek_key(&t.db, &t.def, &prefix, t.wanted.as_deref())
                        .map_err(|e| self.s.engine_error(e))?;
                    self.io_note(t, mark);
                    match found {
                        Some(mut values) => {
                            values.push(Value::Binary(prefix));
                            self.keep_row(values, keep.as_deref_mut(), sink)?
                        }
                        None => true,
                    }
                } else {
                    self.scan_rows(t, lower, upper, keep.as_deref_mut(), sink)?
                }
            } else {
                self.index_rows(t, index.id, lower, upper, keep.as_deref_mut(), sink)?
            };
            if !more {
                break;
            }
        }
        Ok(true)
    }

    /// [`Run::read_path_into`] for a path that fixes every column of the clustered index's
    /// unique key by `=`: one key lookup, its key encoded as each probe is evaluated, with
    /// none of a seek's key sets or ranges. What it reads, and what it answers, are what the
    /// general path would: each probe is evaluated and converted in order even once one has
    /// made the key impossible (a NULL, a value its column cannot hold), so the same errors
    /// surface, and a probe whose conversion fails sends the read back to a scan.
    fn seek_row(
        &mut self,
        t: &TableRef,
        index: &IndexDef,
        path: &AccessPath<'_>,
        env: &Env<'_>,
        keep: Option<&mut Filter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        let ansi_nulls = self.s.opts.semantics.ansi_nulls;
        let mut key = Vec::new();
        let mut possible = true;
        for (f, &c) in path.fixed.iter().zip(&index.columns) {
            let Fixed::Eq(e) = f else {
                return Err(SqlError::new(50000, "Walden's key lookup was given a non-equality."));
            };
            let column = &t.def.columns[c];
            let v = self.eval(e, env)?;
            // As in `read_path_into`: `= NULL` finds no row but under ANSI_NULLS OFF.
            let v = if v.is_null() {
                if ansi_nulls || !is_literal_or_variable(e) {
                    possible = false;
                    continue;
                }
                Value::Null
            } else {
                match key_value(v, column.ty) {
                    Ok(Some(v)) => v,
                    Ok(None) => {
                        possible = false;
                        continue;
                    }
                    Err(_) => return Ok(false),
                }
            };
            if possible
                && encode_key_columns_ordered([(column.ty, column.text_order(), &v)], &mut key)
                    .is_err()
            {
                return Ok(false);
            }
        }
        if !possible {
            return Ok(true);
        }
        // The key is the row id: a lookup, not a range (which under SERIALIZABLE locks the
        // gap where the row would be if there is none).
        let mark = self.io_mark();
        let (tx, plans) = self.tx_and_plans();
        let found = tx.seek_key_with(&t.db, &t.def, &key, plans.point_decoder(t));
        let found = found.map_err(|e| self.s.engine_error(e))?;
        self.io_note(t, mark);
        if let Some(mut values) = found {
            values.push(Value::Binary(key));
            self.keep_row(values, keep, sink)?;
        }
        Ok(true)
    }

    /// The key range one seek reads: the keys that start with `prefix` and whose next
    /// column is within the path's range. None if no key can be in it (a NULL bound).
    fn key_range(
        &mut self,
        prefix: &[u8],
        path: &AccessPath<'_>,
        column: Option<(SqlType, TextOrder)>,
        env: &Env<'_>,
    ) -> Result<Option<KeyRange>, SqlError> {
        let whole = |p: &[u8]| match prefix_end(p) {
            Some(end) => Bound::Excluded(end),
            None => Bound::Unbounded,
        };
        let (mut lower, mut upper) = if prefix.is_empty() {
            (Bound::Unbounded, Bound::Unbounded)
        } else {
            (Bound::Included(prefix.to_vec()), whole(prefix))
        };
        let (Some((ty, order)), false) = (column, path.range.is_empty()) else {
            return Ok(Some((lower, upper)));
        };
        // A comparison holds for no NULL: start after the NULL keys (marker 00; a value's
        // marker is 01).
        let mut non_null = prefix.to_vec();
        non_null.push(1);
        lower = Bound::Included(non_null);
        let encoded = |v: &Value| {
            let mut key = prefix.to_vec();
            encode_key_columns_ordered([(ty, order, v)], &mut key).ok().map(|()| key)
        };
        if let Some((e, inclusive)) = path.range.lower {
            match self.bound_value(e, ty, env)? {
                BoundValue::Never => return Ok(None),
                BoundValue::Unknown => {}
                BoundValue::Value(v) => {
                    if let Some(key) = encoded(&v) {
                        // `> v` skips every key that starts with v's encoding.
                        lower = if inclusive {
                            Bound::Included(key)
                        } else {
                            match prefix_end(&key) {
                                Some(end) => Bound::Included(end),
                                None => return Ok(None),
                            }
                        };
                    }
                }
            }
        }
        if let Some((e, inclusive)) = path.range.upper {
            match self.bound_value(e, ty, env)? {
                BoundValue::Never => return Ok(None),
                BoundValue::Unknown => {}
                BoundValue::Value(v) => {
                    if let Some(key) = encoded(&v) {
                        upper = if inclusive { whole(&key) } else { Bound::Excluded(key) };
                    }
                }
            }
        }
        if let Some(e) = path.range.like {
            if let Some(p) = self.like_range(e, ty, order, prefix, env)? {
                let end = whole(&p);
                if lower_below(&lower, &p) {
                    lower = Bound::Included(p);
                }
                if upper_above(&upper, &end) {
                    upper = end;
                }
            }
        }
        Ok(Some((lower, upper)))
    }

    /// A range bound's value in the key column's type.
    fn bound_value(
        &mut self,
        e: &Expr,
        ty: SqlType,
        env: &Env<'_>,
    ) -> Result<BoundValue, SqlError> {
        let v = self.eval(e, env)?;
        if v.is_null() {
            return Ok(BoundValue::Never);
        }
        // A bound that does not convert exactly is dropped: the range only widens.
        Ok(match key_value(v, ty) {
            Ok(Some(v)) => BoundValue::Value(v),
            _ => BoundValue::Unknown,
        })
    }

    /// The key prefix every row matching `column LIKE pattern` starts with: `prefix`, then
    /// the encoding of the pattern's literal prefix without its terminator. Under a column
    /// collation (`order`) the key's first level is the text's letters (binary: its
    /// characters), each character's bytes after the last's, and a string LIKE matches under
    /// that collation has the literal's letters first; so the literal's first level, up to
    /// the `00` that ends it, bounds the range (wider than the matches: the LIKE still
    /// filters the rows read).
    fn like_range(
        &mut self,
        pattern: &Expr,
        ty: SqlType,
        order: TextOrder,
        prefix: &[u8],
        env: &Env<'_>,
    ) -> Result<Option<Vec<u8>>, SqlError> {
        if !ty.is_text() {
            return Ok(None);
        }
        let (Value::Str(p) | Value::NStr(p)) = self.eval(pattern, env)? else {
            return Ok(None);
        };
        let literal = like_prefix(&p).trim_end_matches(' ');
        if literal.is_empty() {
            return Ok(None);
        }
        let Ok(Some(v)) = key_value(Value::NStr(literal.to_string()), ty) else {
            return Ok(None);
        };
        // A pattern with its own COLLATE matches under that collation, whose matches need
        // not share the key's prefix (an accent-insensitive pattern on an accent-keeping
        // key, a case-insensitive one on a binary key): no range then.
        if matches!(
            crate::exec::eval::label_in(pattern, &[]),
            Ok(crate::exec::eval::Label::Explicit(_))
        ) {
            return Ok(None);
        }
        let mut key = prefix.to_vec();
        if order.is_default() {
            if encode_key(&[ty], std::slice::from_ref(&v), &mut key).is_err() {
                return Ok(None);
            }
            // A text key ends with the terminator 00 01; without it, the bytes are a prefix
            // of the key of every string that starts with the literal.
            key.truncate(key.len().saturating_sub(2));
            return Ok(Some(key));
        }
        if encode_key_columns_ordered([(ty, order, &v)], &mut key).is_err() {
            return Ok(None);
        }
        // After the marker byte, the first level runs to the first 00 that is not an
        // escaped NUL (00 FF): the level separator 00 02 or the terminator 00 01.
        let level = prefix.len() + 1;
        let end = (level..key.len().saturating_sub(1))
            .find(|&i| key[i] == 0 && key[i + 1] != 0xFF)
            .unwrap_or(key.len());
        key.truncate(end);
        Ok(Some(key))
    }

    /// Rows of the clustered index (or heap) with row ids in `lower..upper`, at most
    /// `limit` of them.
    /// Gives `sink` the rows of the clustered key range `lower..upper` that `keep` accepts,
    /// until it says stop; answers whether it would take more.
    fn scan_rows(
        &mut self,
        t: &TableRef,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        mut keep: Option<&mut Filter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        let mark = self.io_mark();
        // A join's seek per outer row starts from the last seek's cursor (`Run::seek_spare`).
        let spare = self.seek_spare.as_mut().and_then(|s| s.cursor.take());
        let mut cursor = self
            .tx()
            .reseek_table_only(spare, &t.db, &t.def, lower, upper, t.wanted.as_deref())
            .map_err(|e| self.s.engine_error(e))?;
        // A table read for a SELECT's demand: nothing reads its rows' locators (only a
        // change does, and a change reads without a demand), so none is copied out per row.
        if t.wanted.is_some() {
            cursor.without_locators();
        }
        // The columns neither the filter nor the sink's test reads are decoded only for the
        // rows they keep.
        let n = t.def.columns.len();
        let sink_unread = sink.unread(n);
        let tests = sink_unread.is_some();
        let later = match (keep.as_deref(), sink_unread) {
            (Some(f), Some(s)) => f.unread(n).map(|f| both(&f, &s)),
            (Some(f), None) => f.unread(n),
            (None, s) => s,
        };
        if let Some(later) = later {
            cursor.defer(&later);
        }
        let mut read = 0;
        let mut more = true;
        // One row decoded into again and again: a row `keep` rejects leaves its allocations
        // to the next one; only a row given to `sink` is replaced.
        let mut row = Vec::new();
        while more {
            match cursor.next_row_into(self.tx(), &mut row) {
                Ok(true) => {
                    self.row_interruption_point(read)?;
                    read += 1;
                    if let Some(f) = keep.as_deref_mut() {
                        if !self.filter_holds(f, &row)? {
                            continue;
                        }
                    }
                    if tests && !sink.wants(self, &row)? {
                        continue;
                    }
                    cursor.finish_row(&mut row).map_err(|e| self.s.engine_error(e))?;
                    more = sink.push(self, std::mem::take(&mut row))?;
                }
                Ok(false) => break,
                Err(e) => return Err(self.s.engine_error(e)),
            }
        }
        self.io_note(t, mark);
        if let Some(spare) = &mut self.seek_spare {
            spare.cursor = Some(cursor);
        }
        Ok(more)
    }

    /// Gives `sink` the rows a nonclustered index holds for keys in `lower..upper` that
    /// `keep` accepts, until it says stop; answers whether it would take more.
    fn index_rows(
        &mut self,
        t: &TableRef,
        index: u16,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        mut keep: Option<&mut Filter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        let mark = self.io_mark();
        let mut cursor = self
            .tx()
            .scan_index(&t.db, &t.def, index, lower, upper)
            .map_err(|e| self.s.engine_error(e))?;
        let mut read = 0;
        let mut more = true;
        let covering =
            t.def.index(index).and_then(|ix| Covering::of(&t.def, ix, t.wanted.as_deref()));
        if let Some(covering) = covering {
            // Index-only: each row's columns come from its entry; no lookup of the row.
            while more {
                let (key, id) = match cursor.next_covered(self.tx()) {
                    Ok(Some(entry)) => entry,
                    Ok(None) => break,
                    Err(e) => return Err(self.s.engine_error(e)),
                };
                self.row_interruption_point(read)?;
                read += 1;
                let Some(mut values) = covering.row(&key, &id) else {
                    return Err(SqlError::new(
                        50000,
                        format!("An entry of index {index} of '{}' does not decode.", t.def.name),
                    ));
                };
                values.push(Value::Binary(id));
                more = self.keep_row(values, keep.as_deref_mut(), sink)?;
            }
            self.io_note(t, mark);
            return Ok(more);
        }
        while more {
            let next = cursor.next_row_id(self.tx());
            let id = match next {
                Ok(Some(id)) => id,
                Ok(None) => break,
                Err(e) => return Err(self.s.engine_error(e)),
            };
            self.row_interruption_point(read)?;
            read += 1;
            if let Some(mut values) = self.read_row_by_id(t, &id)? {
                values.push(Value::Binary(id));
                more = self.keep_row(values, keep.as_deref_mut(), sink)?;
            }
        }
        self.io_note(t, mark);
        Ok(more)
    }

    /// Gives `row` to `sink` if `keep` accepts it; answers whether the read goes on.
    fn keep_row(
        &mut self,
        row: Vec<Value>,
        keep: Option<&mut Filter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        if let Some(f) = keep {
            if !self.filter_holds(f, &row)? {
                return Ok(true);
            }
        }
        sink.push(self, row)
    }

    fn read_row_by_id(&mut self, t: &TableRef, id: &[u8]) -> Result<Option<Vec<Value>>, SqlError> {
        let wanted = t.wanted.as_deref();
        self.tx().read_row_only(&t.db, &t.def, id, wanted).map_err(|e| self.s.engine_error(e))
    }

    /// The number of rows `path` finds, counted as index entries without decoding a row,
    /// where the path answers all of `conjuncts` exactly
    /// ([`AccessPath::answers_exactly`]) and each probe's value is an integer (or NULL,
    /// which `=` matches with nothing); None otherwise, for the caller to read the rows.
    /// The probes are evaluated in `env`, in order, as [`Run::read_path`] evaluates them.
    pub(crate) fn count_seek(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        conjuncts: &[&Expr],
        env: &Env<'_>,
    ) -> Result<Option<u64>, SqlError> {
        if !path.answers_exactly(&t.def, conjuncts) {
            return Ok(None);
        }
        let Some(index) = path.index.and_then(|id| t.def.index(id)) else { return Ok(None) };
        let mut prefix = Vec::new();
        let mut possible = true;
        for (f, &c) in path.fixed.iter().zip(&index.columns) {
            let Fixed::Eq(e) = f else { return Ok(None) };
            let v = self.eval(e, env)?;
            // `= NULL` finds no row, but under ANSI_NULLS OFF, left to the general read.
            if v.is_null() {
                if !self.s.opts.semantics.ansi_nulls {
                    return Ok(None);
                }
                possible = false;
                continue;
            }
            // Another type's probe converts first, which the general read weighs.
            if crate::exec::plan::join::integer_key(&v).is_none() {
                return Ok(None);
            }
            let column = &t.def.columns[c];
            match key_value(v, column.ty) {
                Ok(Some(v)) => {
                    let order = column.text_order();
                    if encode_key_columns_ordered([(column.ty, order, &v)], &mut prefix).is_err() {
                        return Ok(None);
                    }
                }
                // An integer the column's type cannot hold: no row has it.
                Ok(None) | Err(_) => possible = false,
            }
        }
        if !possible {
            return Ok(Some(0));
        }
        let upper = match prefix_end(&prefix) {
            Some(end) => Bound::Excluded(end),
            None => Bound::Unbounded,
        };
        let mut n = 0u64;
        self.index_keys(t, index.id, Bound::Included(prefix), upper, &mut |_| {
            n += 1;
            true
        })?;
        Ok(Some(n))
    }

    /// Gives `each` the key of every entry of nonclustered index `index` of `t` in
    /// `lower..upper`, in key order, until it answers false: an index-only read (locked as
    /// [`Run::read_path`]'s) that decodes nothing and allocates nothing per entry.
    pub(crate) fn index_keys(
        &mut self,
        t: &TableRef,
        index: u16,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        each: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<(), SqlError> {
        // As `read_path_into`: FMTONLY reads no row.
        if self.s.opts.fmtonly {
            return Ok(());
        }
        let mark = self.io_mark();
        let mut cursor = self
            .tx()
            .scan_index(&t.db, &t.def, index, lower, upper)
            .map_err(|e| self.s.engine_error(e))?;
        let mut read = 0;
        loop {
            self.row_interruption_point(read)?;
            read += 1;
            match cursor.next_covered_ref(self.tx()) {
                Ok(Some((key, _))) => {
                    if !each(key) {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => return Err(self.s.engine_error(e)),
            }
        }
        self.io_note(t, mark);
        Ok(())
    }
}

/// The lower and upper bounds of a range of keys.
type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// Entries sampled from each index for its statistics.
const STATS_SAMPLE: usize = 512;

/// How long a table's statistics are used before they are looked at again: long enough that
/// a join in a loop samples once, short enough to follow a table's growth. Changes to a
/// fifth of the table's rows end it sooner ([`changes_tolerated`]; a statistics object may
/// have become stale).
const STATS_MAX_AGE: Duration = Duration::from_secs(2);

/// A session's cached statistics of one table: when gathered, its index 1's root page then,
/// the table's modification count then, and what (see [`Run::table_stats`]).
pub(crate) type CachedStats = (Instant, u32, u64, Arc<TableStats>);

/// How many rows of a table of about `rows` rows may change before statistics sampled from
/// it are looked at again (within [`STATS_MAX_AGE`]): a fifth, as SQL Server's automatic
/// update waits for 20% of a table's rows to change. Sampling again at every change would
/// cost a busy table's every query a sample (TPC-C's tables change at every transaction);
/// an empty table's sample is looked at again at its first change, so a table just filled
/// is planned with its rows.
fn changes_tolerated(rows: f64) -> u64 {
    (rows / 5.0) as u64
}

/// At most this many tables' statistics are kept per session.
const STATS_CACHED_TABLES: usize = 1024;

impl Run<'_> {
    /// A table's statistics: from its statistics objects where they are built (stale ones
    /// rebuilt first, `Run::current_statistics`), from a sample of each other index
    /// (`Transaction::sample_index`); looked at again at most every [`STATS_MAX_AGE`] per
    /// session, or when the table was modified. None if a sample failed (the planner then
    /// guesses).
    pub(crate) fn table_stats(&mut self, t: &TableRef) -> Option<Arc<TableStats>> {
        let key = (t.db.id(), t.def.id);
        let root = t.def.primary().ok()?.root;
        let modified = t.db.modifications(t.def.id);
        if let Some((at, r, m, stats)) = self.s.table_stats.get(&key) {
            let changed = modified.saturating_sub(*m);
            if *r == root
                && changed <= changes_tolerated(stats.rows)
                && at.elapsed() < STATS_MAX_AGE
            {
                return Some(Arc::clone(stats));
            }
        }
        let objects = self.current_statistics(t);
        let built = |id: u32| {
            objects
                .iter()
                .find(|s| s.index && s.id == id)
                .and_then(|s| s.object.as_ref()?.histogram.clone())
        };
        let mut stats = TableStats::default();
        for index in &t.def.indexes {
            let per_prefix = match built(u32::from(index.id)) {
                Some(h) => {
                    let rows = h.rows as f64;
                    if index.id == 1 {
                        stats.rows = rows;
                    }
                    let last = index.columns.len();
                    (1..=h.density.len())
                        .map(|k| {
                            if index.unique && k == last {
                                1.0
                            } else {
                                (rows * h.density[k - 1]).max(1.0)
                            }
                        })
                        .collect()
                }
                None => {
                    let sample =
                        self.tx().sample_index(&t.db, &t.def, index.id, STATS_SAMPLE).ok()?;
                    if index.id == 1 {
                        stats.rows = sample.rows;
                    }
                    sample.rows_per_prefix
                }
            };
            stats.indexes.push((index.id, per_prefix));
        }
        for s in &objects {
            if let (Some(&c), Some(h)) =
                (s.columns.first(), s.object.as_ref().and_then(|o| o.histogram.clone()))
            {
                if stats.histogram(c).is_none() {
                    stats.histograms.push((c, h));
                }
            }
        }
        stats.distinct =
            self.tx().sample_column_distinct(&t.db, &t.def, STATS_SAMPLE).unwrap_or_default();
        let stats = Arc::new(stats);
        if self.s.table_stats.len() >= STATS_CACHED_TABLES {
            self.s.table_stats.clear();
        }
        self.s.table_stats.insert(key, (Instant::now(), root, modified, Arc::clone(&stats)));
        Some(stats)
    }
}

/// A range bound's value.
enum BoundValue {
    /// NULL: the comparison holds for no row.
    Never,
    /// Not exactly a value of the key column's type: no bound.
    Unknown,
    Value(Value),
}

/// Whether `bound` lets in keys below `key`.
fn lower_below(bound: &Bound<Vec<u8>>, key: &[u8]) -> bool {
    match bound {
        Bound::Unbounded => true,
        Bound::Included(b) | Bound::Excluded(b) => b.as_slice() < key,
    }
}

/// Whether `bound` lets in keys above what `end` lets in.
fn upper_above(bound: &Bound<Vec<u8>>, end: &Bound<Vec<u8>>) -> bool {
    match (bound, end) {
        (_, Bound::Unbounded) => false,
        (Bound::Unbounded, _) => true,
        (Bound::Included(b) | Bound::Excluded(b), Bound::Included(e) | Bound::Excluded(e)) => b > e,
    }
}

impl AccessPath<'_> {
    /// The plan operators that read `t` by this path, as SQL Server names them: a table or
    /// clustered index scan, a clustered index seek, or an index seek joined to a key lookup
    /// of each row it finds. `residual` are the predicates checked on each row read.
    pub(crate) fn plan(&self, t: &TableRef, residual: &[&Expr]) -> PlanNode {
        let table = format!("[{}].[{}].[{}]", t.db.name(), t.def.schema, t.def.name);
        let object = |index: Option<&walden_engine::catalog::IndexDef>| match index {
            Some(ix) => format!("OBJECT:({table}.[{}] AS [{}])", ix.name, t.qual),
            None => format!("OBJECT:({table} AS [{}])", t.qual),
        };
        let clustered = t.def.index(1).filter(|ix| !ix.columns.is_empty());
        if self.index == Some(LOCATOR) {
            // SQL Server reads a heap's row by its RID so; Walden's locator is the same for a
            // table whose clustered index is not unique.
            let mut args = vec![object(None), "SEEK:([Bmk1000]) LOOKUP ORDERED FORWARD".into()];
            let filter: Vec<String> = residual.iter().map(|e| e.to_string()).collect();
            if !filter.is_empty() {
                args.push(format!("WHERE:({})", filter.join(" AND ")));
            }
            return PlanNode::new("RID Lookup", "RID Lookup", args.join(", "), 1.0);
        }
        let mut args = Vec::new();
        let sought = self.index.and_then(|id| t.def.index(id));
        let (physical, index) = match sought {
            None if clustered.is_some() => ("Clustered Index Scan", clustered),
            None => ("Table Scan", None),
            Some(ix) if ix.id == 1 => ("Clustered Index Seek", Some(ix)),
            Some(ix) if self.fixed.is_empty() && self.range.is_empty() => ("Index Scan", Some(ix)),
            Some(ix) => ("Index Seek", Some(ix)),
        };
        args.push(object(index));
        if let Some(ix) = sought.filter(|_| physical != "Index Scan") {
            args.push(format!("SEEK:({}) ORDERED FORWARD", self.seek_text(t, ix)));
        }
        let filter: Vec<String> = residual.iter().map(|e| e.to_string()).collect();
        let filter = (!filter.is_empty()).then(|| format!("WHERE:({})", filter.join(" AND ")));
        let covered =
            sought.is_some_and(|ix| Covering::of(&t.def, ix, t.wanted.as_deref()).is_some());
        match sought {
            Some(ix) if ix.id != 1 && !covered => {
                // The nonclustered index gives row locators; each row is then looked up in
                // the clustered index (or heap) and checked there.
                let seek = PlanNode::new(physical, physical, args.join(", "), self.rows);
                let mut lookup_args = vec![object(clustered)];
                lookup_args.push("LOOKUP ORDERED FORWARD".into());
                lookup_args.extend(filter);
                let lookup = PlanNode::new("Key Lookup", "Key Lookup", lookup_args.join(", "), 1.0);
                PlanNode::join("Nested Loops", "Inner Join", String::new(), self.rows, seek, lookup)
            }
            _ => {
                args.extend(filter);
                PlanNode::new(physical, physical, args.join(", "), self.rows)
            }
        }
    }

    /// The seek predicate: each fixed key column's value(s), then the range.
    fn seek_text(&self, t: &TableRef, ix: &walden_engine::catalog::IndexDef) -> String {
        let column = |k: usize| format!("[{}].[{}]", t.qual, t.def.columns[ix.columns[k]].name);
        let mut parts = Vec::new();
        for (k, f) in self.fixed.iter().enumerate() {
            parts.push(match f {
                Fixed::Eq(e) => format!("{}={e}", column(k)),
                Fixed::In(list) => {
                    let values: Vec<String> = list.iter().map(ToString::to_string).collect();
                    format!("{} IN ({})", column(k), values.join(", "))
                }
                Fixed::Null => format!("{} IS NULL", column(k)),
            });
        }
        let k = self.fixed.len();
        if let Some((e, inclusive)) = self.range.lower {
            parts.push(format!("{} {} {e}", column(k), if inclusive { ">=" } else { ">" }));
        }
        if let Some((e, inclusive)) = self.range.upper {
            parts.push(format!("{} {} {e}", column(k), if inclusive { "<=" } else { "<" }));
        }
        if let Some(e) = self.range.like {
            parts.push(format!("{} LIKE prefix of {e}", column(k)));
        }
        parts.join(" AND ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_is_the_first_string_past_the_prefix() {
        assert_eq!(prefix_end(&[1, 2]), Some(vec![1, 3]));
        assert_eq!(prefix_end(&[1, 0xFF]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xFF, 0xFF]), None);
        assert_eq!(prefix_end(&[]), None);
    }

    #[test]
    fn like_prefix_stops_at_the_first_wildcard() {
        assert_eq!(like_prefix("abc%"), "abc");
        assert_eq!(like_prefix("a_c%"), "a");
        assert_eq!(like_prefix("[a]bc"), "");
        assert_eq!(like_prefix("plain"), "plain");
    }
}
