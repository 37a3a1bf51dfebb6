//! The `OUTPUT` clause of INSERT, UPDATE and DELETE: each changed row's values after the
//! change (`INSERTED`) and before it (`DELETED`), returned as a result set or inserted into a
//! table (`OUTPUT ... INTO`).
//!
//! The rows are collected while the statement changes the table and delivered when it has
//! finished, so a statement that fails part way (and is undone) returns none, and `INTO` a
//! table the statement also reads never sees its own output.

use walden_engine::catalog::TableDef;
use walden_engine::types::Value;

use crate::ast::{Expr, ExprKind, OutputClause, SelectItem};
use crate::exec::dml::{column_count_mismatch, insert_targets};
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::query::{expr_name, infer_type, table_cols, unify_column};
use crate::exec::session::Run;
use crate::exec::{ColumnInfo, SqlError};

/// Which of `INSERTED` and `DELETED` a statement has: INSERT the first, DELETE the second,
/// UPDATE both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed {
    Inserted,
    Deleted,
    Both,
}

/// One value of an output row.
enum Item<'c> {
    /// A column of `DELETED` or `INSERTED`, by its place in the row the items read.
    Column(usize),
    /// Any other expression over those columns.
    Expr(&'c Expr),
}

/// An OUTPUT clause resolved against its statement's table, and the rows produced so far.
pub(crate) struct OutputRows<'c> {
    clause: &'c OutputClause,
    /// `DELETED`'s columns, then `INSERTED`'s, for the pseudo-tables the statement has, then
    /// the statement's own extra columns (MERGE's `$action` and source columns).
    cols: Vec<Col>,
    changed: Changed,
    /// The values of the extra columns for the next row (see [`OutputRows::set_extra`]).
    extra: Vec<Value>,
    width: usize,
    items: Vec<Item<'c>>,
    names: Vec<String>,
    rows: Vec<Vec<Value>>,
}

impl Run<'_> {
    /// Resolves `clause` for a statement changing table `def`: `INSERTED.*`, `DELETED.col`,
    /// expressions. A qualifier other than the statement's pseudo-tables is error 4104.
    pub(crate) fn output_plan<'c>(
        &mut self,
        clause: &'c OutputClause,
        def: &TableDef,
        changed: Changed,
    ) -> Result<OutputRows<'c>, SqlError> {
        self.output_plan_with(clause, def, changed, Vec::new())
    }

    /// [`Run::output_plan`] with `extra` columns the items may name besides the
    /// pseudo-tables' (MERGE's `$action` and source columns); each row's values for them are
    /// given by [`OutputRows::set_extra`] before the row is produced.
    pub(crate) fn output_plan_with<'c>(
        &mut self,
        clause: &'c OutputClause,
        def: &TableDef,
        changed: Changed,
        extra: Vec<Col>,
    ) -> Result<OutputRows<'c>, SqlError> {
        let mut cols = Vec::new();
        if changed != Changed::Inserted {
            cols.extend(table_cols(def, "deleted"));
        }
        if changed != Changed::Deleted {
            cols.extend(table_cols(def, "inserted"));
        }
        cols.extend(extra);
        let mut items = Vec::new();
        let mut names = Vec::new();
        for item in &clause.items {
            match item {
                SelectItem::Wildcard(qualifier) => {
                    let wanted =
                        qualifier.as_ref().and_then(|q| q.last()).map(|q| q.value.as_str());
                    let mut any = false;
                    for (i, c) in cols.iter().enumerate().filter(|(_, c)| !c.hidden) {
                        let matches = wanted.is_none_or(|w| {
                            c.qual.as_deref().is_some_and(|q| q.eq_ignore_ascii_case(w))
                        });
                        if matches {
                            any = true;
                            items.push(Item::Column(i));
                            names.push(c.name.clone());
                        }
                    }
                    if !any {
                        let text = wanted.unwrap_or("*");
                        return Err(SqlError::new(
                            4104,
                            format!("The multi-part identifier \"{text}\" could not be bound."),
                        ));
                    }
                }
                SelectItem::Expr { expr, alias } => {
                    let name = alias.as_ref().map_or_else(|| expr_name(expr), |a| a.value.clone());
                    let item = match &expr.kind {
                        ExprKind::Column(parts) => match find_column(&cols, parts)? {
                            Some(i) => Item::Column(i),
                            None => return Err(crate::exec::eval::unbound([&cols[..]], parts)),
                        },
                        _ => Item::Expr(expr),
                    };
                    items.push(item);
                    names.push(name);
                }
                SelectItem::Assign { .. } => {
                    return Err(SqlError::with_severity(102, 15, "Incorrect syntax near '='."));
                }
            }
        }
        Ok(OutputRows {
            clause,
            cols,
            changed,
            extra: Vec::new(),
            width: def.columns.len(),
            items,
            names,
            rows: Vec::new(),
        })
    }

    /// Computes the output row of one changed row: its values before (`deleted`) and after
    /// (`inserted`) the change, each given when the statement has that pseudo-table.
    pub(crate) fn output_row(
        &mut self,
        out: &mut OutputRows<'_>,
        deleted: Option<&[Value]>,
        inserted: Option<&[Value]>,
    ) -> Result<(), SqlError> {
        let mut row = Vec::with_capacity(out.cols.len());
        let nulls = || std::iter::repeat_n(Value::Null, out.width);
        if out.changed != Changed::Inserted {
            match deleted {
                Some(values) => row.extend_from_slice(values),
                None => row.extend(nulls()),
            }
        }
        if out.changed != Changed::Deleted {
            match inserted {
                Some(values) => row.extend_from_slice(values),
                None => row.extend(nulls()),
            }
        }
        row.extend(out.extra.iter().cloned());
        let env = Env::new(&out.cols, &row, None);
        let mut values = Vec::with_capacity(out.items.len());
        for item in &out.items {
            values.push(match item {
                Item::Column(i) => row[*i].clone(),
                Item::Expr(e) => self.eval(e, &env)?,
            });
        }
        out.rows.push(values);
        Ok(())
    }

    /// Delivers the rows: as a result set, or into the `INTO` table.
    pub(crate) fn output_finish(&mut self, mut out: OutputRows<'_>) -> Result<(), SqlError> {
        if let Some(into) = &out.clause.into {
            let t = self.target(&into.target, &[])?;
            self.output_allowed(&t, true)?;
            let targets = insert_targets(&t, &into.columns, self.identity_insert_on(&t))?;
            if targets.len() != out.items.len() {
                return Err(column_count_mismatch());
            }
            let rows = out.rows.into_iter().map(|r| r.into_iter().map(Some).collect()).collect();
            self.insert_rows(&t, &targets, rows, usize::MAX, None, None)?;
            return Ok(());
        }
        let mut columns = Vec::with_capacity(out.items.len());
        for (i, item) in out.items.iter().enumerate() {
            let (ty, nullable) = match item {
                Item::Column(c) => (out.cols[*c].ty, out.cols[*c].nullable),
                // An expression's column has the widest type of its values, as in a SELECT.
                Item::Expr(_) => {
                    let ty = infer_type(&out.rows, i);
                    unify_column(&mut out.rows, i, ty)?;
                    (ty, true)
                }
            };
            columns.push(ColumnInfo {
                name: out.names[i].clone(),
                ty,
                nullable,
                collation: None,
                declared: None,
            });
        }
        self.out.result_set(&columns);
        for r in &out.rows {
            self.out.row(r);
        }
        self.out.result_end(out.rows.len() as u64);
        Ok(())
    }
}

impl OutputRows<'_> {
    /// Sets the values of the extra columns (see [`Run::output_plan_with`]) for the rows
    /// produced next.
    pub(crate) fn set_extra(&mut self, values: Vec<Value>) {
        self.extra = values;
    }
}
