//! `PIVOT` and `UNPIVOT`: a source's rows turned into columns by grouping, and columns back
//! into rows. Both are table operators of `FROM`, applied to the rows of the source before
//! them.

use std::collections::HashMap;

use walden_engine::types::{SqlType, Value};

use crate::ast::{ExprKind, FunctionArgs};
use crate::exec::eval::{is_aggregate_call, Col, Env};
use crate::exec::execute::aggregate::aggregate_rows;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::grouping::group_key;
use super::{infer_type, Rows};

/// `UNPIVOT`: each source row once per listed column whose value is not NULL, with the
/// source's other visible columns, the column's name and its value.
pub(super) fn unpivot(rows: Rows, u: &crate::ast::Unpivot) -> Result<Rows, SqlError> {
    let mut listed = Vec::with_capacity(u.columns.len());
    for c in &u.columns {
        let at = rows
            .cols
            .iter()
            .position(|col| !col.hidden && col.name.eq_ignore_ascii_case(&c.value))
            .ok_or_else(|| SqlError::invalid_column(&c.value))?;
        listed.push(at);
    }
    let keys: Vec<usize> = rows.visible().into_iter().filter(|i| !listed.contains(i)).collect();
    let value_ty =
        listed.iter().map(|&i| rows.cols[i].ty).reduce(scalar::common_type).unwrap_or(SqlType::Int);
    let mut out = Vec::new();
    for row in &rows.rows {
        for &at in &listed {
            if row[at].is_null() {
                continue;
            }
            let mut r: Vec<Value> = keys.iter().map(|&k| row[k].clone()).collect();
            r.push(Value::NStr(rows.cols[at].name.clone()));
            r.push(scalar::convert(row[at].clone(), value_ty, None)?);
            out.push(r);
        }
    }
    let alias = u.alias.value.as_str();
    let mut cols: Vec<Col> = keys
        .iter()
        .map(|&k| Col { qual: Some(alias.to_string()), ..rows.cols[k].clone() })
        .collect();
    cols.push(Col {
        nullable: false,
        ..Col::new(Some(alias), &u.name.value, SqlType::NVarChar(walden_engine::types::Len::N(128)))
    });
    cols.push(Col { nullable: false, ..Col::new(Some(alias), &u.value.value, value_ty) });
    Ok(Rows { cols, rows: out })
}

impl Run<'_> {
    /// `PIVOT`: the source's rows grouped by every visible column but the pivot and value
    /// columns, with one column per listed value holding the aggregate over the group's rows
    /// that have that value.
    pub(super) fn pivot(
        &mut self,
        rows: Rows,
        p: &crate::ast::Pivot,
        outer: Option<&Env<'_>>,
    ) -> Result<Rows, SqlError> {
        let ExprKind::Function(f) = &p.aggregate.kind else {
            return Err(SqlError::new(
                8114,
                "The PIVOT operator takes an aggregate function of a column.",
            ));
        };
        if !is_aggregate_call(f) {
            return Err(SqlError::new(
                8114,
                "The PIVOT operator takes an aggregate function of a column.",
            ));
        }
        let position = |name: &str| {
            rows.cols.iter().position(|c| !c.hidden && c.name.eq_ignore_ascii_case(name))
        };
        let pivot_at = position(&p.pivot_column.value)
            .ok_or_else(|| SqlError::invalid_column(&p.pivot_column.value))?;
        let mut used = vec![pivot_at];
        if let FunctionArgs::List { args, .. } = &f.args {
            for a in args {
                if let ExprKind::Column(parts) = &a.kind {
                    let name = parts.last().map(|i| i.value.as_str()).unwrap_or_default();
                    used.push(position(name).ok_or_else(|| SqlError::invalid_column(name))?);
                }
            }
        }
        let keys: Vec<usize> = rows.visible().into_iter().filter(|i| !used.contains(i)).collect();
        let pivot_ty = rows.cols[pivot_at].ty;
        let mut targets = Vec::with_capacity(p.values.len());
        for v in &p.values {
            targets.push(scalar::convert(Value::NStr(v.value.clone()), pivot_ty, None)?);
        }
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for (i, row) in rows.rows.iter().enumerate() {
            let key: Vec<Value> = keys.iter().map(|&k| row[k].clone()).collect();
            let at = *index.entry(group_key(&key)).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[at].push(i);
        }
        let mut out_rows = Vec::with_capacity(groups.len());
        for g in &groups {
            let mut row: Vec<Value> = keys.iter().map(|&k| rows.rows[g[0]][k].clone()).collect();
            for target in &targets {
                let matching: Vec<&[Value]> = g
                    .iter()
                    .map(|&i| rows.rows[i].as_slice())
                    .filter(|r| {
                        scalar::compare(&r[pivot_at], target).ok().flatten()
                            == Some(std::cmp::Ordering::Equal)
                    })
                    .collect();
                // Over no rows, as over an empty group: NULL, or 0 for COUNT.
                row.push(aggregate_rows(
                    self,
                    &p.aggregate,
                    &rows.cols,
                    matching.into_iter(),
                    outer,
                )?);
            }
            out_rows.push(row);
        }
        let qual = Some(p.alias.value.clone());
        let mut cols: Vec<Col> =
            keys.iter().map(|&k| Col { qual: qual.clone(), ..rows.cols[k].clone() }).collect();
        for (i, v) in p.values.iter().enumerate() {
            let ty = infer_type(&out_rows, keys.len() + i);
            cols.push(Col { nullable: true, ..Col::new(Some(&p.alias.value), &v.value, ty) });
        }
        Ok(Rows { cols, rows: out_rows })
    }
}
