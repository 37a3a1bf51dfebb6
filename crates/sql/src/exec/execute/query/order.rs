//! `ORDER BY`, `TOP` and `OFFSET ... FETCH`: the sort keys of a query's rows (by expression,
//! alias or ordinal), the collation each sorts by, SQL Server's order of values (NULLs
//! first), and the counts `TOP`, `OFFSET` and `FETCH` take.

use std::cmp::Ordering;

use walden_engine::types::{SqlType, Value};

use crate::ast::{Expr, ExprKind, OffsetFetch, OrderByItem, Select, SelectItem};
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{find_column, label_in, Col, Env};
use crate::exec::execute::external_sort::ExternalSort;
use crate::exec::scalar;
use crate::exec::scalar::collation;
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::Rows;

/// The output column an ORDER BY item names, by ordinal or alias (an alias when no source
/// column has the name, or when the output column has a name); None for an expression of
/// the source row.
fn output_column(
    o: &OrderByItem,
    out_cols: &[Col],
    cols: &[Col],
) -> Result<Option<usize>, SqlError> {
    if let Some(i) = ordinal(&o.expr, out_cols.len())? {
        return Ok(Some(i));
    }
    if let ExprKind::Column(parts) = &o.expr.kind {
        if parts.len() == 1 {
            let alias = out_cols.iter().position(|c| c.name.eq_ignore_ascii_case(&parts[0].value));
            if let Some(i) = alias {
                if find_column(cols, parts).ok().flatten().is_none() || !out_cols[i].name.is_empty()
                {
                    return Ok(Some(i));
                }
            }
        }
    }
    Ok(None)
}

/// Error 207, 209 or 4104 for an ORDER BY item of a block that is not grouped that names a
/// column neither its output (by alias or ordinal) nor its source row `cols` has: what SQL
/// Server refuses when it compiles the query, found before any row is read.
pub(crate) fn bind_order_by(
    order_by: &[OrderByItem],
    out_cols: &[Col],
    cols: &[Col],
) -> Result<(), SqlError> {
    for o in order_by {
        if output_column(o, out_cols, cols)?.is_none() {
            let env = crate::exec::eval::Env { cols, row: &[], outer: None, computed: &[] };
            super::bound(&[Some(&o.expr)], &env)?;
        }
    }
    Ok(())
}

/// The collation each ORDER BY key sorts by: its output column's, or its expression's.
pub(crate) fn order_collations(
    order_by: &[OrderByItem],
    out_cols: &[Col],
    cols: &[Col],
) -> Result<Vec<Option<&'static collation::Collation>>, SqlError> {
    order_by
        .iter()
        .map(|o| match output_column(o, out_cols, cols)? {
            Some(i) => Ok(out_cols[i].collation),
            None => Ok(label_in(&o.expr, cols)?.collation()),
        })
        .collect()
}

/// Where each ORDER BY key of a SELECT comes from, worked out once for all its rows (what
/// [`Run::order_key`] works out per row): an output column (by ordinal or alias), a column
/// of the source row, or an expression, prepared ([`Scalar`]).
pub(crate) struct KeySources<'a>(Vec<KeySource<'a>>);

enum KeySource<'a> {
    Output(usize),
    Source(usize),
    Eval(Scalar<'a>),
}

impl<'a> KeySources<'a> {
    pub(crate) fn new(
        order_by: &'a [OrderByItem],
        out_cols: &[Col],
        cols: &[Col],
    ) -> Result<KeySources<'a>, SqlError> {
        KeySources::computed(order_by, out_cols, cols, &[])
    }

    /// [`KeySources::new`] over rows whose `computed` columns hold aggregate and window
    /// values (as [`Env::computed`] says).
    pub(crate) fn computed(
        order_by: &'a [OrderByItem],
        out_cols: &[Col],
        cols: &[Col],
        computed: &[(usize, usize)],
    ) -> Result<KeySources<'a>, SqlError> {
        let mut sources = Vec::with_capacity(order_by.len());
        for o in order_by {
            sources.push(match output_column(o, out_cols, cols)? {
                Some(i) => KeySource::Output(i),
                // A name that is not one of the row's columns (an outer reference), or is
                // ambiguous, is left to the interpreter, which resolves or refuses it.
                None => match &o.expr.kind {
                    ExprKind::Column(parts) => match find_column(cols, parts) {
                        Ok(Some(i)) => KeySource::Source(i),
                        _ => KeySource::Eval(Scalar::Expr(&o.expr)),
                    },
                    _ => KeySource::Eval(Scalar::prepare_computed(&o.expr, cols, computed)),
                },
            });
        }
        Ok(KeySources(sources))
    }

    /// The source column each key's value is, when every key is one: a column of the
    /// source row, or an output column that copies one (`copies`, per output column).
    pub(crate) fn source_columns(&self, copies: &[Option<usize>]) -> Option<Vec<usize>> {
        self.0
            .iter()
            .map(|k| match *k {
                KeySource::Source(c) => Some(c),
                KeySource::Output(i) => copies.get(i).copied().flatten(),
                KeySource::Eval(_) => None,
            })
            .collect()
    }
}

impl Run<'_> {
    /// The value ORDER BY item `i` (`o`) sorts the row of `env`, whose output is `out`, by.
    pub(crate) fn order_key_of(
        &mut self,
        sources: &KeySources<'_>,
        i: usize,
        o: &OrderByItem,
        out: &[Value],
        env: &Env<'_>,
    ) -> Result<Value, SqlError> {
        match sources.0.get(i) {
            Some(KeySource::Output(c)) => Ok(out[*c].clone()),
            Some(KeySource::Source(c)) => Ok(env.row.get(*c).cloned().unwrap_or(Value::Null)),
            Some(KeySource::Eval(s)) => self.eval_prepared(s, env),
            None => self.eval(&o.expr, env),
        }
    }
}

/// Compares sort keys: NULLs first, as SQL Server sorts them.
pub(crate) fn compare_keys(a: &[Value], b: &[Value], desc: &[bool]) -> Result<Ordering, SqlError> {
    compare_key_values(a.iter(), b, desc)
}

/// [`compare_keys`] of the values of `row` at `positions` (not copied out of it) against
/// the keys `b`.
pub(crate) fn compare_row_keys(
    row: &[Value],
    positions: &[usize],
    b: &[Value],
    desc: &[bool],
) -> Result<Ordering, SqlError> {
    compare_key_values(positions.iter().map(|&i| &row[i]), b, desc)
}

fn compare_key_values<'v>(
    a: impl Iterator<Item = &'v Value>,
    b: &[Value],
    desc: &[bool],
) -> Result<Ordering, SqlError> {
    for ((x, y), d) in a.zip(b).zip(desc) {
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => scalar::compare(x, y)?.unwrap_or(Ordering::Equal),
        };
        let o = if *d { o.reverse() } else { o };
        if o != Ordering::Equal {
            return Ok(o);
        }
    }
    Ok(Ordering::Equal)
}

/// Sorts `items` by their keys, stably; the first comparison error wins.
pub(crate) fn sort_by_keys<T>(
    items: &mut [(Vec<Value>, T)],
    desc: &[bool],
) -> Result<(), SqlError> {
    let mut error = None;
    items.sort_by(|a, b| match compare_keys(&a.0, &b.0, desc) {
        Ok(o) => o,
        Err(e) => {
            error.get_or_insert(e);
            Ordering::Equal
        }
    });
    error.map_or(Ok(()), Err)
}

/// The name a select-list expression gets without an alias: a column's name, else none.
/// Whether ORDER BY item `o` names a column of the FROM clause's rows: a column name that
/// is no select-list alias (SQL Server sorts by an alias first).
pub(crate) fn sorts_by_source_column(sel: &Select, o: &OrderByItem) -> bool {
    match &o.expr.kind {
        ExprKind::Column(parts) => !sel.items.iter().any(|i| match i {
            SelectItem::Expr { alias: Some(a), .. } => {
                parts.last().is_some_and(|p| p.value.eq_ignore_ascii_case(&a.value))
            }
            _ => false,
        }),
        _ => false,
    }
}

/// `n` in `ORDER BY n`: a 1-based ordinal of the select list.
fn ordinal(e: &Expr, width: usize) -> Result<Option<usize>, SqlError> {
    if let ExprKind::Literal(crate::ast::Literal::Integer(text)) = &e.kind {
        let n: usize = text.parse().unwrap_or(0);
        if n == 0 || n > width {
            return Err(SqlError::with_severity(
                108,
                15,
                format!("The ORDER BY position number {text} is out of range of the number of items in the select list."),
            ));
        }
        return Ok(Some(n - 1));
    }
    Ok(None)
}

impl Run<'_> {
    /// ORDER BY and OFFSET over a query's output columns (set operations, parentheses).
    pub(super) fn order_output(
        &mut self,
        mut rows: Rows,
        order_by: &[OrderByItem],
        offset: Option<&OffsetFetch>,
        outer: Option<&Env<'_>>,
    ) -> Result<Rows, SqlError> {
        if !order_by.is_empty() {
            let desc: Vec<bool> = order_by.iter().map(|o| o.descending).collect();
            // Each key's collation: its output column's, or its own.
            let mut collations = Vec::with_capacity(order_by.len());
            for o in order_by {
                collations.push(match ordinal(&o.expr, rows.cols.len())? {
                    Some(i) => rows.cols[i].collation,
                    None => label_in(&o.expr, &rows.cols)?.collation(),
                });
            }
            let mut sorter = ExternalSort::new(self.memory_grant(), &desc, false);
            for (i, row) in std::mem::take(&mut rows.rows).into_iter().enumerate() {
                self.row_interruption_point(i)?;
                let mut keys = Vec::with_capacity(order_by.len());
                for (o, c) in order_by.iter().zip(&collations) {
                    let key = match ordinal(&o.expr, rows.cols.len())? {
                        Some(i) => row[i].clone(),
                        None => self.eval(&o.expr, &Env::new(&rows.cols, &row, outer))?,
                    };
                    keys.push(collation::sort_value(key, *c));
                }
                sorter.push(self, keys, row)?;
            }
            rows.rows = self.sorted_rows(sorter)?;
        }
        if let Some(off) = offset {
            rows.rows = self.apply_offset(std::mem::take(&mut rows.rows), off)?;
        }
        Ok(rows)
    }

    pub(super) fn apply_offset(
        &mut self,
        rows: Vec<Vec<Value>>,
        off: &OffsetFetch,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let skip = self.count_value(&off.offset)?;
        let take = match &off.fetch {
            Some(f) => self.count_value(f)?,
            None => usize::MAX,
        };
        Ok(rows.into_iter().skip(skip).take(take).collect())
    }

    pub(crate) fn order_key(
        &mut self,
        o: &OrderByItem,
        out_cols: &[Col],
        out: &[Value],
        env: &Env<'_>,
    ) -> Result<Value, SqlError> {
        match output_column(o, out_cols, env.cols)? {
            Some(i) => Ok(out[i].clone()),
            None => self.eval(&o.expr, env),
        }
    }

    /// A SELECT's `TOP` quantity (rows, or a percentage): not negative, else error 1060.
    pub(crate) fn top_quantity(&mut self, t: &crate::ast::Top) -> Result<f64, SqlError> {
        let n = self.value(&t.quantity)?;
        match scalar::convert(n, SqlType::Float, None)? {
            Value::Float(f) if f >= 0.0 => Ok(f),
            _ => Err(SqlError::new(1060, "The number of rows provided for a TOP or FETCH clauses row count parameter must be an integer.")),
        }
    }

    /// A row count (TOP of a change, OFFSET, FETCH): a non-negative integer, else error 1060.
    pub(crate) fn count_value(&mut self, e: &Expr) -> Result<usize, SqlError> {
        let v = self.value(e)?;
        match scalar::convert(v, SqlType::BigInt, None)? {
            Value::BigInt(n) if n >= 0 => Ok(n as usize),
            _ => Err(SqlError::new(1060, "The number of rows provided for a TOP or FETCH clauses row count parameter must be an integer.")),
        }
    }
}
