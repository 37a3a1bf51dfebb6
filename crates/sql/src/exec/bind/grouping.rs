//! SQL Server's rule for a grouped query (one with GROUP BY or an aggregate): every column of
//! the block's own FROM clause that its select list or HAVING reads outside an aggregate is
//! a GROUP BY column, or inside an expression the GROUP BY lists whole. Anything else is
//! error 8120 (select list) or 8121 (HAVING), raised before a row is read, as SQL Server
//! raises it at compile time.
//!
//! A column of an enclosing query (an outer reference) is constant within the block and
//! always allowed; so is anything inside an aggregate, a window function or a subquery,
//! which Walden leaves unchecked rather than refuse a query SQL Server runs.

use crate::ast::{Expr, ExprKind, Select, SelectItem};
use crate::exec::eval::{find_column, is_aggregate_call, Col};
use crate::exec::execute::query::visit_children;
use crate::exec::SqlError;

/// Checks the grouped block `sel`, whose FROM clause has the columns `cols`.
pub(crate) fn check_grouped(sel: &Select, cols: &[Col]) -> Result<(), SqlError> {
    let keys: Vec<&Expr> =
        sel.group_by.iter().chain(sel.grouping_sets.iter().flatten().flatten()).collect();
    let grouped = Grouped::new(&keys, cols);
    for item in &sel.items {
        let ungrouped = match item {
            SelectItem::Expr { expr, .. } | SelectItem::Assign { value: expr, .. } => {
                grouped.ungrouped(expr, cols)
            }
            SelectItem::Wildcard(qualifier) => {
                let of = qualifier.as_ref().and_then(|q| q.last()).map(|q| q.value.as_str());
                cols.iter().enumerate().find_map(|(i, c)| {
                    let named = of.is_none_or(|of| {
                        c.qual.as_deref().is_some_and(|q| q.eq_ignore_ascii_case(of))
                    });
                    (named && !c.hidden && !grouped.columns.contains(&i)).then(|| shown(c))
                })
            }
        };
        if let Some(column) = ungrouped {
            return Err(SqlError::catalogued(8120, &[&column]));
        }
    }
    if let Some(column) = sel.having.as_ref().and_then(|h| grouped.ungrouped(h, cols)) {
        return Err(SqlError::catalogued(8121, &[&column]));
    }
    Ok(())
}

/// What the GROUP BY lists: the FROM columns it names, and its other expressions' text.
struct Grouped {
    columns: Vec<usize>,
    expressions: Vec<String>,
}

impl Grouped {
    fn new(keys: &[&Expr], cols: &[Col]) -> Grouped {
        let mut grouped = Grouped { columns: Vec::new(), expressions: Vec::new() };
        for key in keys {
            match &key.kind {
                ExprKind::Column(parts) => {
                    if let Ok(Some(i)) = find_column(cols, parts) {
                        grouped.columns.push(i);
                    }
                }
                _ => grouped.expressions.push(text(key)),
            }
        }
        grouped
    }

    /// The first column of the FROM clause `e` reads outside an aggregate and outside any
    /// expression the GROUP BY lists, as SQL Server names it in the message.
    fn ungrouped(&self, e: &Expr, cols: &[Col]) -> Option<String> {
        match &e.kind {
            // A name that does not resolve here is an outer reference (or an error the
            // binding of names reports).
            ExprKind::Column(parts) => match find_column(cols, parts) {
                Ok(Some(i)) if !self.columns.contains(&i) => Some(shown(&cols[i])),
                _ => None,
            },
            ExprKind::Function(f) if f.over.is_some() || is_aggregate_call(f) => None,
            ExprKind::Subquery(_)
            | ExprKind::Exists(_)
            | ExprKind::InSubquery { .. }
            | ExprKind::Quantified { .. } => None,
            _ if !self.expressions.is_empty() && self.expressions.contains(&text(e)) => None,
            _ => {
                let mut found = None;
                visit_children(e, &mut |c| {
                    if found.is_none() {
                        found = self.ungrouped(c, cols);
                    }
                });
                found
            }
        }
    }
}

/// An expression's text as the GROUP BY and the select list are compared: as Walden prints
/// it (so spacing does not matter), case-insensitive.
fn text(e: &Expr) -> String {
    e.to_string().to_lowercase()
}

/// A column as SQL Server's message names it: its table's exposed name, a dot, its name.
fn shown(c: &Col) -> String {
    match &c.qual {
        Some(q) => format!("{q}.{}", c.name),
        None => c.name.clone(),
    }
}
