//! Recursive common table expressions: a CTE whose query names the CTE itself.
//!
//! SQL Server's shape: anchor members (which do not name the CTE, combined with any set
//! operators), then `UNION ALL` and recursive members, each a plain SELECT naming the CTE
//! exactly once in its FROM clause. The anchor runs once; then every recursive member runs
//! against the rows the previous step produced (the anchor's, then the first level's, ...),
//! until a step produces none. The columns take the anchor's names and types. A statement's
//! `OPTION (MAXRECURSION n)` (default 100, 0 for no limit) bounds the levels that produce
//! rows; one more is error 530.

use std::sync::Arc;

use walden_engine::types::Value;

use crate::ast::{
    Cte, Expr, ExprKind, Query, QueryBody, Select, SelectItem, SetOperator, TableSource,
};
use crate::exec::eval::{is_aggregate_call, Col, Env};
use crate::exec::execute::query::{visit_children, Rows};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::{ColumnInfo, RowSet, SqlError};

/// SQL Server's recursion limit when the statement sets none.
const DEFAULT_MAX_RECURSION: u16 = 100;

/// How a query names a CTE.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Uses {
    /// References in FROM clauses, derived tables included.
    from: usize,
    /// Whether one of them is an input of an outer join.
    outer_join: bool,
    /// References inside subqueries (in expressions).
    subquery: usize,
}

impl Uses {
    fn any(self) -> bool {
        self.from + self.subquery > 0
    }
}

/// Counts the references to CTE `name` (lower case) in `q`.
fn query_uses(q: &Query, name: &str, in_subquery: bool, uses: &mut Uses) {
    // A nested WITH of the same name hides the outer CTE.
    if q.ctes.iter().any(|c| c.name.value.eq_ignore_ascii_case(name)) {
        return;
    }
    for cte in &q.ctes {
        query_uses(&cte.query, name, in_subquery, uses);
    }
    body_uses(&q.body, name, in_subquery, uses);
    for o in &q.order_by {
        expr_uses(&o.expr, name, uses);
    }
}

fn body_uses(body: &QueryBody, name: &str, in_subquery: bool, uses: &mut Uses) {
    match body {
        QueryBody::Select(sel) => select_uses(sel, name, in_subquery, uses),
        QueryBody::SetOperation { left, right, .. } => {
            body_uses(left, name, in_subquery, uses);
            body_uses(right, name, in_subquery, uses);
        }
        QueryBody::Parenthesized(q) => query_uses(q, name, in_subquery, uses),
    }
}

fn select_uses(sel: &Select, name: &str, in_subquery: bool, uses: &mut Uses) {
    for src in &sel.from {
        source_uses(src, name, in_subquery, false, uses);
    }
    let exprs = sel
        .items
        .iter()
        .filter_map(|item| match item {
            SelectItem::Expr { expr, .. } => Some(expr),
            SelectItem::Assign { value, .. } => Some(value),
            SelectItem::Wildcard(_) => None,
        })
        .chain(&sel.where_clause)
        .chain(&sel.group_by)
        .chain(&sel.having);
    for e in exprs {
        expr_uses(e, name, uses);
    }
}

fn source_uses(src: &TableSource, name: &str, in_subquery: bool, outer: bool, uses: &mut Uses) {
    match src {
        TableSource::Table { name: table, .. } => {
            let unqualified = table.schema.is_none() && table.database.is_none();
            if unqualified && table.name.value.eq_ignore_ascii_case(name) {
                if in_subquery {
                    uses.subquery += 1;
                } else {
                    uses.from += 1;
                    uses.outer_join |= outer;
                }
            }
        }
        TableSource::Derived { query, .. } => query_uses(query, name, in_subquery, uses),
        TableSource::Join(j) => {
            let (left_outer, right_outer) = j.kind.null_extended();
            source_uses(&j.left, name, in_subquery, outer || left_outer, uses);
            source_uses(&j.right, name, in_subquery, outer || right_outer, uses);
            if let Some(on) = &j.on {
                expr_uses(on, name, uses);
            }
        }
        TableSource::Function { args, .. } | TableSource::OpenJson { args, .. } => {
            args.iter().for_each(|a| expr_uses(a, name, uses))
        }
        TableSource::Values { rows, .. } => {
            rows.iter().flatten().for_each(|e| expr_uses(e, name, uses))
        }
        TableSource::Pivot(p) => source_uses(&p.source, name, in_subquery, outer, uses),
        TableSource::Unpivot(u) => source_uses(&u.source, name, in_subquery, outer, uses),
        TableSource::Variable { .. } | TableSource::OpenRowsetBulk { .. } => {}
        TableSource::XmlNodes { target, .. } => expr_uses(target, name, uses),
    }
}

fn expr_uses(e: &Expr, name: &str, uses: &mut Uses) {
    match &e.kind {
        ExprKind::Subquery(q) | ExprKind::Exists(q) => query_uses(q, name, true, uses),
        ExprKind::InSubquery { subquery, .. } | ExprKind::Quantified { subquery, .. } => {
            query_uses(subquery, name, true, uses)
        }
        _ => {}
    }
    visit_children(e, &mut |c| expr_uses(c, name, uses));
}

/// Whether `e` calls an aggregate outside subqueries (window aggregates excluded).
pub(crate) fn has_aggregate(e: &Expr) -> bool {
    if let ExprKind::Function(f) = &e.kind {
        if is_aggregate_call(f) {
            return true;
        }
    }
    let mut found = false;
    visit_children(e, &mut |c| found |= has_aggregate(c));
    found
}

/// A recursive member's SELECT, checked against SQL Server's restrictions.
fn recursive_member<'q>(member: &'q QueryBody, cte: &str) -> Result<&'q Select, SqlError> {
    let sel = match member {
        QueryBody::Select(sel) => sel,
        QueryBody::Parenthesized(q) if q.ctes.is_empty() && q.order_by.is_empty() => {
            return recursive_member(&q.body, cte)
        }
        _ => return Err(no_union_all(cte)),
    };
    let restricted = |number: i32, what: &str| {
        Err(SqlError::new(
            number,
            format!("{what} not allowed in the recursive part of a recursive common table expression '{cte}'."),
        ))
    };
    let lower = cte.to_ascii_lowercase();
    let mut uses = Uses::default();
    select_uses(sel, &lower, false, &mut uses);
    if uses.subquery > 0 {
        return Err(SqlError::new(465, "Recursive references are not allowed in subqueries."));
    }
    if uses.from > 1 {
        return Err(SqlError::new(
            253,
            format!("Recursive member of a common table expression '{cte}' has multiple recursive references."),
        ));
    }
    if uses.outer_join {
        return restricted(462, "Outer join is");
    }
    if sel.distinct {
        return restricted(460, "DISTINCT operator is");
    }
    if sel.top.is_some() {
        return restricted(461, "The TOP or OFFSET operator is");
    }
    let aggregates = sel.items.iter().any(|item| match item {
        SelectItem::Expr { expr, .. } => has_aggregate(expr),
        SelectItem::Assign { value, .. } => has_aggregate(value),
        SelectItem::Wildcard(_) => false,
    });
    if aggregates || !sel.group_by.is_empty() || sel.having.is_some() {
        return restricted(467, "GROUP BY, HAVING, or aggregate functions are");
    }
    Ok(sel)
}

fn no_union_all(cte: &str) -> SqlError {
    SqlError::new(
        252,
        format!("Recursive common table expression '{cte}' does not contain a top-level UNION ALL operator."),
    )
}

impl Run<'_> {
    /// The rows of `cte` if its query names itself, `None` for an ordinary CTE. The caller
    /// names the columns and binds the result as it does for any CTE.
    pub(crate) fn recursive_cte(
        &mut self,
        cte: &Cte,
        outer: Option<&Env<'_>>,
    ) -> Result<Option<Rows>, SqlError> {
        let name = &cte.name.value;
        let lower = name.to_ascii_lowercase();
        let mut uses = Uses::default();
        query_uses(&cte.query, &lower, false, &mut uses);
        if !uses.any() {
            return Ok(None);
        }
        // The set operations' left spine, from the top: ((anchor UNION ALL r1) UNION ALL r2).
        let mut members = Vec::new();
        let mut anchor = &cte.query.body;
        loop {
            let mut found = Uses::default();
            body_uses(anchor, &lower, false, &mut found);
            if !found.any() {
                break;
            }
            match anchor {
                QueryBody::SetOperation { op, left, right } => {
                    members.push((*op, &**right));
                    anchor = left;
                }
                _ if members.is_empty() => return Err(no_union_all(name)),
                _ => {
                    return Err(SqlError::new(
                        246,
                        format!("No anchor member was found in recursive query \"{name}\"."),
                    ))
                }
            }
        }
        members.reverse();
        let mut selects = Vec::with_capacity(members.len());
        for (op, member) in members {
            if op != SetOperator::UnionAll {
                return Err(no_union_all(name));
            }
            let mut found = Uses::default();
            body_uses(member, &lower, false, &mut found);
            if !found.any() {
                // An anchor member after a recursive one.
                return Err(no_union_all(name));
            }
            selects.push(recursive_member(member, name)?);
        }
        let anchor_query = Query {
            ctes: Vec::new(),
            body: anchor.clone(),
            order_by: Vec::new(),
            offset: None,
            for_json: None,
            for_xml: None,
            xml_namespaces: Vec::new(),
        };
        let first = self.query(&anchor_query, outer)?;
        let visible = first.visible();
        let mut cols: Vec<Col> = visible
            .iter()
            .map(|&i| Col { qual: None, nullable: true, hidden: false, ..first.cols[i].clone() })
            .collect();
        for (c, n) in cols.iter_mut().zip(&cte.columns) {
            c.name = n.value.clone();
        }
        let columns: Vec<ColumnInfo> = cols
            .iter()
            .map(|c| ColumnInfo { nullable: true, ..crate::exec::execute::query::column_info(c) })
            .collect();
        let project = |rows: Vec<Vec<Value>>, visible: &[usize]| -> Vec<Vec<Value>> {
            rows.into_iter().map(|r| visible.iter().map(|&i| r[i].clone()).collect()).collect()
        };
        let mut all = project(first.rows, &visible);
        let mut previous = all.clone();
        let limit = cte.max_recursion.unwrap_or(DEFAULT_MAX_RECURSION);
        let mut level: u32 = 0;
        while !previous.is_empty() {
            self.interruption_point()?;
            level += 1;
            let working = Arc::new(RowSet { columns: columns.clone(), rows: previous });
            let base = self.ctes.len();
            self.ctes.push((lower.clone(), working));
            let step = (|| {
                let mut produced = Vec::new();
                for sel in &selects {
                    let rows = self.select(sel, &[], None, outer)?;
                    let visible = rows.visible();
                    if visible.len() != cols.len() {
                        return Err(SqlError::new(
                            205,
                            "All queries combined using a UNION, INTERSECT or EXCEPT operator must have an equal number of expressions in their target lists.",
                        ));
                    }
                    produced.extend(project(rows.rows, &visible));
                }
                Ok::<_, SqlError>(produced)
            })();
            self.ctes.truncate(base);
            let mut produced = step?;
            if !produced.is_empty() && limit != 0 && level > u32::from(limit) {
                return Err(SqlError::new(
                    530,
                    format!("The statement terminated. The maximum recursion {limit} has been exhausted before statement completion."),
                ));
            }
            // Recursive rows take the anchor's types, as stored values do.
            for row in &mut produced {
                for (v, c) in row.iter_mut().zip(&cols) {
                    if !v.is_null() {
                        *v = scalar::coerce(std::mem::replace(v, Value::Null), c.ty, false)?;
                    }
                }
            }
            all.extend(produced.iter().cloned());
            previous = produced;
        }
        Ok(Some(Rows { cols, rows: all }))
    }
}
