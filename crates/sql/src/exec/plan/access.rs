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
mod read;
mod scan;
mod shape;
mod stats;

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
pub(crate) use stats::CachedStats;

/// The predicates a read applies to each row before it keeps it, so that a scan never
/// collects the rows they reject. `cols` describe the rows read (the table's columns and
/// its row locator); `outer` is the enclosing query's row, if any.
#[derive(Clone, Copy)]
pub(crate) struct RowFilter<'a> {
    pub(crate) cols: &'a [Col],
    pub(crate) exprs: &'a [&'a Expr],
    pub(crate) outer: Option<&'a Env<'a>>,
}

/// Where a read puts the rows it keeps: collected (`Vec`), or passed on at once (a
/// streamed SELECT's projection and output). `push` answers whether the read goes on.
pub(crate) trait RowSink {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError>;

    /// Whether the sink keeps nothing of a row past [`RowSink::push_borrowed`] (a hash
    /// aggregate folds it, a streamed SELECT projects it): a scan then lends it each row and
    /// decodes the next into the same allocation, instead of making and dropping a row
    /// per row read.
    fn borrows(&self) -> bool {
        false
    }

    /// [`RowSink::push`] of a lent row; asked only of a sink that [`RowSink::borrows`].
    fn push_borrowed(&mut self, run: &mut Run<'_>, row: &[Value]) -> Result<bool, SqlError> {
        self.push(run, row.to_vec())
    }

    /// The columns of a scanned table's row that [`RowSink::wants`] does not read (true),
    /// or None if the sink has no such test: a scan then decodes the other columns only
    /// for the rows it wants.
    fn unread(&self, _n: usize) -> Option<Vec<bool>> {
        None
    }

    /// Whether `push` would do anything with `row`, judged from the columns that
    /// [`RowSink::unread`] does not mark alone (the others may be NULL): a row it does not
    /// want is never pushed. Asked only of a sink that answers `unread`, after the read's
    /// own filter unless [`RowSink::test_may_go_first`]; any error is one `push` would
    /// raise for the row.
    fn wants(&mut self, _run: &mut Run<'_>, _row: &[Value]) -> Result<bool, SqlError> {
        Ok(true)
    }

    /// Whether [`RowSink::wants`] raises no error and changes nothing a later row sees, so
    /// that a read may ask it of rows its own filter rejects, and before that filter where
    /// it keeps fewer rows (`access/read.rs`, `TestOrder`).
    fn test_may_go_first(&self) -> bool {
        false
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
/// lookup), relative to reading it from the clustered index. Measured over TPC-H's lineitem
/// at scale factor 0.1 (600,572 rows, all pages cached), `SUM` of a column the index does
/// not hold: 92,040 rows of a one-year `l_shipdate` range through its index 124-146 ms of
/// CPU, the whole table scanned and filtered 60-62 ms: 13 to 16 times as much a row, of
/// which this is a little under, so that a seek of a few percent of a table still wins.
const LOOKUP_COST: f64 = 12.0;

/// The lookup cost weighed against a range whose size is a guess ([`RANGE_SELECTIVITY`]): as
/// before the lookups were measured, so that a guess does not turn a seek of a range into a
/// scan of the table.
const GUESSED_LOOKUP_COST: f64 = 3.0;

/// What one more seek costs a join that seeks an index per outer row (index nested loops,
/// a semi-join's probe), besides the rows it reads: a descent of the B-tree from its root,
/// as a key lookup is.
pub(crate) const SEEK_COST: f64 = LOOKUP_COST;

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
    /// (`Transaction::sample_columns`); empty if the sample failed.
    pub(crate) distinct: Vec<Option<f64>>,
    /// The same sample's values of each character column, None for the others: what a
    /// `LIKE` that is no prefix keeps of them estimates what it keeps of the table.
    pub(crate) text: Vec<Option<Vec<Value>>>,
}

impl TableStats {
    /// Rows per value of the first `k` columns of index `id`, if known.
    pub(crate) fn rows_per_prefix(&self, id: u16, k: usize) -> Option<f64> {
        let (_, per) = self.indexes.iter().find(|(i, _)| *i == id)?;
        per.get(k.checked_sub(1)?).copied()
    }

    /// The histogram whose leading column is table column `column`, if any.
    pub(crate) fn histogram(&self, column: usize) -> Option<&Histogram> {
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
        known: Known<'_>,
    ) -> Option<f64> {
        let h = self.histogram(column)?;
        let key = |e: &Expr| constant_key(e, h.key_type, known);
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

impl TableStats {
    /// The fraction of the table's rows a filter conjunct `e` keeps by the histogram of the
    /// column it compares with constants: `=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN` and `IS
    /// NULL`; None for any other conjunct, a probe that is not a constant, or a column
    /// without a histogram. `column` gives the table position of an expression that is a
    /// column of this table. A histogram's fractions are of the rows it was built over, as
    /// a seek's estimate takes them.
    pub(crate) fn filter_fraction(
        &self,
        e: &Expr,
        column: &dyn Fn(&Expr) -> Option<usize>,
        known: Known<'_>,
    ) -> Option<f64> {
        let h = |c: usize| self.histogram(c);
        let key = |c: usize, x: &Expr| constant_key(x, h(c)?.key_type, known);
        let fraction = match &e.kind {
            ExprKind::Binary { op, left, right } => {
                // The column on the left: `5 < c` is `c > 5`.
                let (c, probe, op) = match (column(left), column(right)) {
                    (Some(c), None) => (c, &**right, *op),
                    (None, Some(c)) => (c, &**left, flipped(*op)?),
                    _ => return None,
                };
                let k = key(c, probe)?;
                let hist = h(c)?;
                match op {
                    BinaryOp::Eq => histogram::equal(hist, &k),
                    BinaryOp::Lt => histogram::between(hist, None, Some(&(k, false))),
                    BinaryOp::LtEq => histogram::between(hist, None, Some(&(k, true))),
                    BinaryOp::Gt => histogram::between(hist, Some(&(k, false)), None),
                    BinaryOp::GtEq => histogram::between(hist, Some(&(k, true)), None),
                    _ => return None,
                }
            }
            ExprKind::Between { expr, negated: false, low, high } => {
                let c = column(expr)?;
                let (lo, hi) = ((key(c, low)?, true), (key(c, high)?, true));
                histogram::between(h(c)?, Some(&lo), Some(&hi))
            }
            ExprKind::InList { expr, negated: false, list } => {
                let c = column(expr)?;
                let mut sum = 0.0;
                for x in list {
                    sum += histogram::equal(h(c)?, &key(c, x)?);
                }
                sum.min(1.0)
            }
            ExprKind::IsNull { expr, negated: false } => histogram::equal(h(column(expr)?)?, &[0]),
            _ => return None,
        };
        Some(fraction)
    }
}

/// `op` with its operands swapped, for the comparisons.
fn flipped(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Eq => BinaryOp::Eq,
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        _ => return None,
    })
}

/// The values of a statement's constants (`bind/constants.rs`) that the caller evaluated:
/// a driver's parameters, `DATEADD(dd, -90, '1998-12-01')`.
pub(crate) type Known<'k> = &'k dyn Fn(&Expr) -> Option<Value>;

/// The key (`types::key`) of a constant probe in type `ty`: a literal, a negated number, or
/// a statement constant `known` has the value of.
fn constant_key(e: &Expr, ty: SqlType, known: Known<'_>) -> Option<Vec<u8>> {
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
        _ => known(e)?,
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
    known: Known<'_>,
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
            (Some(s), 0) => s.histogram_rows(leading, None, &range, known),
            (Some(s), 1) => {
                // The histogram counts the leading column's rows; a range on the next
                // column keeps a part of them.
                let narrow = if range.is_empty() { 1.0 } else { RANGE_SELECTIVITY };
                s.histogram_rows(leading, fixed.first(), &Range::default(), known)
                    .map(|r| r * narrow)
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
        // A range whose size is only guessed (no histogram, or a bound not known before the
        // read, a `LIKE` prefix) keeps the seek it always had: the lookups' cost is weighed
        // only against a size the statistics give.
        let lookups = index.id != 1 && Covering::of(def, index, wanted).is_none();
        let guessed = !range.is_empty() && from_histogram.is_none();
        let lookup_cost = if guessed { GUESSED_LOOKUP_COST } else { LOOKUP_COST };
        let cost = if lookups { rows * lookup_cost } else { rows } + seeks as f64;
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

    /// Decodes the row an index entry stands for into `row`: the columns read from `key`
    /// and `row_id`, NULL for the others (which no one reads), and a place for the row's
    /// locator after them, which the caller sets. A row of another length (new, or given
    /// away) is first made one of NULLs; otherwise only the columns read are written, since
    /// the others are still NULL from the entry before. None if the entry does not decode.
    fn row_into(&self, key: &[u8], row_id: &[u8], row: &mut Vec<Value>) -> Option<()> {
        use walden_engine::types::decode_key_columns_into;
        if row.len() != self.width + 1 {
            row.clear();
            row.resize(self.width + 1, Value::Null);
        }
        decode_key_columns_into(&self.key_types, &self.key_read, key, &mut |i, v| {
            row[self.key_columns[i]] = v;
        })?;
        if self.id_read.iter().any(|&r| r) {
            decode_key_columns_into(&self.id_types, &self.id_read, row_id, &mut |i, v| {
                row[self.id_columns[i]] = v;
            })?;
        }
        Some(())
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
pub(crate) fn key_value(v: Value, ty: SqlType) -> Result<Option<Value>, SqlError> {
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

impl AccessPath<'_> {
    /// The plan operators that read `t` by this path, as SQL Server names them: a table or
    /// clustered index scan, a clustered index seek, or an index seek joined to a key lookup
    /// of each row it finds. `residual` are the predicates checked on each row read.
    pub(crate) fn plan(&self, t: &TableRef, residual: &[&Expr]) -> PlanNode {
        self.plan_read(t, residual, false)
    }

    /// [`AccessPath::plan`] for a read whose order its consumer needs (a merge join's
    /// input): a scan says `ORDERED FORWARD` too, as SQL Server's does there.
    pub(crate) fn plan_in_order(&self, t: &TableRef, residual: &[&Expr]) -> PlanNode {
        self.plan_read(t, residual, true)
    }

    fn plan_read(&self, t: &TableRef, residual: &[&Expr], ordered: bool) -> PlanNode {
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
        match sought.filter(|_| physical != "Index Scan") {
            Some(ix) => args.push(format!("SEEK:({}) ORDERED FORWARD", self.seek_text(t, ix))),
            None if ordered => args.push("ORDERED FORWARD".into()),
            None => {}
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
