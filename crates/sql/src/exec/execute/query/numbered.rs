//! Windows that number rows as they arrive, and the row goals that reach through them.
//!
//! Numbers-table scripts count rows with `ROW_NUMBER() OVER (ORDER BY (SELECT NULL))` over
//! a cross join of whatever is large (`sys.all_columns`, a CTE of cross joins) and keep the
//! first n: `SELECT TOP (n) ROW_NUMBER() OVER (...) FROM ...`, or a derived table or CTE of
//! numbers cut by the block that reads it, `SELECT TOP (n) x FROM nums ORDER BY x` or
//! `... WHERE x <= n`. SQL Server's plan for these stops its input after n rows (a Sequence
//! Project under a Top). Computing every number first would read the whole cross product:
//! millions of rows for sys.all_columns, four billion for the common CTE.
//!
//! A window *numbers in arrival order* when its value for a row depends only on the rows
//! before it: `ROW_NUMBER()`, `RANK()` or `DENSE_RANK()` over no partition, ordered by
//! constants alone. All rows are then peers; their stable sort keeps the order they came
//! in, ROW_NUMBER counts them, and the ranks are all 1. So the first n rows get the same
//! values whether the rows after them are read or not, and a plain `TOP (n)` may stop the
//! read at n rows (`Run::row_goal`); and a derived table of such numbers that its block
//! cuts to its first n (by `TOP (n)` in arrival or number order, or `WHERE x <= n` on a
//! ROW_NUMBER column) may itself stop at n ([`Run::numbered_source_cut`]).

use walden_engine::types::Value;

use crate::ast::{
    BinaryOp, Expr, ExprKind, FunctionArgs, Literal, OffsetFetch, OrderByItem, ParsedId, Query,
    QueryBody, Select, SelectItem, Span, TableSource, Top,
};
use crate::exec::bind::constants::is_statement_constant;
use crate::exec::execute::query::inline::bare_select;
use crate::exec::session::Run;

use super::grouping::{collect_aggregates, collect_windows, select_aggregates, select_windows};

/// Whether the window call `w` numbers its rows in arrival order (see the module's comment).
pub(super) fn numbers_in_arrival_order(w: &Expr) -> bool {
    ranking_in_arrival_order(w, &["ROW_NUMBER", "RANK", "DENSE_RANK"])
}

/// Whether `w` is a call of one of `names` (built-in, no arguments) over no partition,
/// ordered by constants alone.
fn ranking_in_arrival_order(w: &Expr, names: &[&str]) -> bool {
    let ExprKind::Function(f) = &w.kind else { return false };
    let Some(spec) = &f.over else { return false };
    let named = names.iter().any(|n| f.name.name.value.eq_ignore_ascii_case(n));
    f.name.schema.is_none()
        && named
        && matches!(&f.args, FunctionArgs::List { args, .. } if args.is_empty())
        && spec.partition_by.is_empty()
        && spec.frame.is_none()
        && !spec.order_by.is_empty()
        && spec.order_by.iter().all(|o| is_constant_key(&o.expr))
}

/// Whether a window's ORDER BY key has one value for every row of a read: a statement
/// constant, an `@@` variable (`@@SPID`: none changes while one read runs), or a subquery
/// without a FROM clause that selects one of those (`(SELECT NULL)`).
fn is_constant_key(e: &Expr) -> bool {
    if is_statement_constant(e) || matches!(e.kind, ExprKind::SystemVariable(_)) {
        return true;
    }
    let ExprKind::Subquery(q) = &e.kind else { return false };
    let QueryBody::Select(sel) = &q.body else { return false };
    q.ctes.is_empty()
        && sel.from.is_empty()
        && sel.where_clause.is_none()
        && matches!(sel.items.as_slice(), [SelectItem::Expr { expr, .. }] if is_constant_key(expr))
}

/// The SELECT of a query that numbers its rows: one bare SELECT with no grouping or
/// aggregate, with windows every one of which numbers in arrival order.
pub(super) fn numbering_select(q: &Query) -> Option<&Select> {
    let sel = arrival_select(q)?;
    (!select_windows(sel, &[]).is_empty()).then_some(sel)
}

/// The SELECT of a query whose first n rows are the same whether the rows after them are
/// computed or not: one bare SELECT with no grouping or aggregate, and no window but those
/// that number in arrival order.
fn arrival_select(q: &Query) -> Option<&Select> {
    let sel = bare_select(q)?;
    let arrival = select_windows(sel, &[]).iter().all(|w| numbers_in_arrival_order(w))
        && sel.group_by.is_empty()
        && sel.having.is_none()
        && select_aggregates(sel, &[]).is_empty();
    arrival.then_some(sel)
}

/// A derived table whose first n rows do not depend on the rest ([`arrival_select`]), and
/// the name of its output column that is a `ROW_NUMBER()` in arrival order, if one is.
fn numbered_source(src: &TableSource) -> Option<(&Select, Option<String>)> {
    let TableSource::Derived { query, columns, .. } = src else { return None };
    let inner = arrival_select(query)?;
    let row_number = inner.items.iter().enumerate().find_map(|(i, item)| match item {
        SelectItem::Expr { expr, alias } if ranking_in_arrival_order(expr, &["ROW_NUMBER"]) => {
            match columns.get(i) {
                Some(c) => Some(c.value.clone()),
                None if columns.is_empty() => alias.as_ref().map(|a| a.value.clone()),
                None => None,
            }
        }
        _ => None,
    });
    Some((inner, row_number))
}

/// Whether `e` names the derived table's column `name` (bare, or qualified by `alias`).
fn names_column(e: &Expr, alias: &str, name: &str) -> bool {
    let ExprKind::Column(parts) = &e.kind else { return false };
    match parts.as_slice() {
        [c] => c.value.eq_ignore_ascii_case(name),
        [q, c] => q.value.eq_ignore_ascii_case(alias) && c.value.eq_ignore_ascii_case(name),
        _ => false,
    }
}

/// `sel` with its one source, a derived table whose SELECT is `inner`, given `top`. Both
/// are copies, which no cache may take for the parsed nodes they were.
fn cut_to(sel: &Select, inner: &Select, top: Top) -> Select {
    let mut cut = Select { parsed: ParsedId::NONE, ..sel.clone() };
    if let TableSource::Derived { query, .. } = &mut cut.from[0] {
        let inner = Select { top: Some(top), parsed: ParsedId::NONE, ..inner.clone() };
        query.body = QueryBody::Select(Box::new(inner));
    }
    cut
}

/// `TOP (n)` of a count known now, written where the bound it comes from is.
fn top_of(n: i64, span: Span) -> Top {
    let digits = n.max(0).to_string();
    Top {
        quantity: Expr { kind: ExprKind::Literal(Literal::Integer(digits)), span },
        percent: false,
        with_ties: false,
    }
}

impl Run<'_> {
    /// `sel` with the derived table it reads cut to the rows `sel` can use, when that
    /// table's first n rows do not depend on the rest (no grouping or aggregate, windows
    /// only in arrival order; see the module's comment), it is `sel`'s one source, and
    /// `sel` uses at most its first n, by either
    ///
    /// * a conjunct `x <= n`, `x < n`, `n >= x`, `n > x` or `x BETWEEN m AND n` of its
    ///   WHERE on the table's ROW_NUMBER column x, with n a statement constant of an integer
    ///   type: rows after the n-th have larger numbers and fail it, whatever `sel` then does
    ///   with the rows that pass (group, aggregate, sort them); or
    /// * no WHERE, a plain `TOP (n)` of a statement constant, and no ORDER BY or one led by
    ///   that ROW_NUMBER column ascending: any n rows of a table, or its n smallest numbers,
    ///   are its first n. `sel` has no grouping, aggregate, DISTINCT or OFFSET then, no
    ///   window but in arrival order, and one of the two numbers.
    ///
    /// The table's query then gets `TOP (n)` itself, whose row goal stops its read. None
    /// when nothing is cut.
    pub(super) fn numbered_source_cut(
        &mut self,
        sel: &Select,
        order_by: &[OrderByItem],
        offset: Option<&OffsetFetch>,
    ) -> Option<Select> {
        let [src @ TableSource::Derived { alias, .. }] = sel.from.as_slice() else { return None };
        let (inner, row_number) = numbered_source(src)?;
        if let Some(w) = &sel.where_clause {
            let n = self.numbered_bound(w, &alias.value, row_number.as_deref()?)?;
            return Some(cut_to(sel, inner, top_of(n, w.span)));
        }
        let (mut aggregates, mut windows) = (Vec::new(), Vec::new());
        for item in &sel.items {
            if let SelectItem::Expr { expr: e, .. } | SelectItem::Assign { value: e, .. } = item {
                collect_aggregates(e, &mut aggregates);
                collect_windows(e, &mut windows);
            }
        }
        for o in order_by {
            collect_aggregates(&o.expr, &mut aggregates);
            collect_windows(&o.expr, &mut windows);
        }
        // Where neither numbers, the table is left to be inlined (`inline.rs`), which lets
        // the row goal reach its tables by itself.
        let numbering = !windows.is_empty() || !select_windows(inner, &[]).is_empty();
        if !numbering
            || !aggregates.is_empty()
            || !windows.iter().all(|w| numbers_in_arrival_order(w))
            || sel.distinct
            || !sel.group_by.is_empty()
            || sel.having.is_some()
            || offset.is_some()
        {
            return None;
        }
        let top = sel.top.as_ref().filter(|t| !t.percent && !t.with_ties)?;
        let in_order = match (order_by.first(), &row_number) {
            (None, _) => true,
            (Some(o), Some(x)) => !o.descending && names_column(&o.expr, &alias.value, x),
            (Some(_), None) => false,
        };
        if !in_order || !is_statement_constant(&top.quantity) {
            return None;
        }
        Some(cut_to(sel, inner, top.clone()))
    }

    /// The largest ROW_NUMBER value `w`'s conjuncts let through, where one of them bounds
    /// the column `x` of the derived table `alias` from above by an integer constant.
    fn numbered_bound(&mut self, w: &Expr, alias: &str, x: &str) -> Option<i64> {
        let mut parts = Vec::new();
        crate::exec::plan::join::conjuncts(w, &mut parts);
        let mut bound: Option<i64> = None;
        for part in parts {
            let (limit, below) = match &part.kind {
                ExprKind::Binary { op, left, right } => match op {
                    BinaryOp::LtEq if names_column(left, alias, x) => (&**right, 0),
                    BinaryOp::Lt if names_column(left, alias, x) => (&**right, 1),
                    BinaryOp::GtEq if names_column(right, alias, x) => (&**left, 0),
                    BinaryOp::Gt if names_column(right, alias, x) => (&**left, 1),
                    _ => continue,
                },
                ExprKind::Between { expr, negated: false, high, .. }
                    if names_column(expr, alias, x) =>
                {
                    (&**high, 0)
                }
                _ => continue,
            };
            let n = match self.statement_constant(limit) {
                Some(Value::TinyInt(n)) => i64::from(n),
                Some(Value::SmallInt(n)) => i64::from(n),
                Some(Value::Int(n)) => i64::from(n),
                Some(Value::BigInt(n)) => n,
                _ => continue,
            };
            let n = n.saturating_sub(below);
            bound = Some(bound.map_or(n, |b| b.min(n)));
        }
        bound
    }
}
