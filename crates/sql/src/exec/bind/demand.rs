//! Which columns of its tables a query block reads, so that a scan decodes only those.
//!
//! Decoding is most of what reading a row costs when a query needs a few columns of a wide
//! table (TPC-H's `lineitem` has sixteen, a query reads three or four). A [`Demand`] is the
//! set of names that column references of one SELECT block use: its select list, WHERE,
//! GROUP BY, HAVING, window clauses, its FROM clause's ON conditions and function
//! arguments, the ORDER BY of the query it belongs to, and every name written anywhere in a
//! subquery nested in them (a correlated subquery may name the block's columns). A table
//! leaf of the block decodes a column only if its name is in the set; the others are NULL
//! in its rows, which nothing reads, since nothing names them.
//!
//! The set may hold more names than the block reads (aliases, a subquery's own columns):
//! that costs a decode, never a wrong answer. What would be wrong is a reference that names
//! no column, so a block with `*` or `t.*` in its select list, or a function of `*` other
//! than COUNT (`CHECKSUM(*)`), reads every column. The demand applies to the leaves of the
//! block's own FROM clause only (`join.rs` passes it down explicitly): a view, a derived
//! table or a function in it runs its own query, with its own demand, and a table a change
//! reads is always decoded whole.
//!
//! Each name keeps the number of references to it, so that an operator that has applied
//! some of the block's predicates can tell which columns nothing after it reads
//! ([`Demand::without`]): an outer join that filtered its inner side by `o_comment NOT LIKE
//! ...` need not carry `o_comment` into every joined row.

use std::collections::HashMap;
use std::sync::Arc;

use walden_engine::catalog::TableDef;

use crate::ast::{
    Expr, ExprKind, FunctionArgs, OrderByItem, Query, Select, SelectItem, TableSource,
};
use crate::exec::execute::query::{visit_children, ROWID};
use crate::lexer::{tokenize, TokenKind};

/// The column names a query block's references use, lowercased (names compare without
/// regard to case), each with how many references use it.
#[derive(Debug)]
pub(crate) struct Demand {
    names: HashMap<String, usize>,
}

impl Demand {
    /// The demand of `sel` with its query's `order_by`; None if the block may read every
    /// column (a `*`, or something this does not know how to read).
    pub(crate) fn of_select(sel: &Select, order_by: &[OrderByItem]) -> Option<Demand> {
        Demand::of_block(sel, order_by, true)
    }

    /// The demand of a subquery that a semi-join reads: its select list counts only when
    /// `items` (an IN's member test reads it; EXISTS never does, `EXISTS (SELECT * ...)`
    /// included).
    pub(crate) fn of_semi_join(sel: &Select, items: bool) -> Option<Demand> {
        Demand::of_block(sel, &[], items)
    }

    fn of_block(sel: &Select, order_by: &[OrderByItem], items: bool) -> Option<Demand> {
        let mut d = Demand { names: HashMap::new() };
        for item in sel.items.iter().filter(|_| items) {
            match item {
                SelectItem::Wildcard(_) => return None,
                SelectItem::Expr { expr, .. } => d.expr(expr)?,
                SelectItem::Assign { value, .. } => d.expr(value)?,
            }
        }
        if let Some(t) = &sel.top {
            d.expr(&t.quantity)?;
        }
        for src in &sel.from {
            d.source(src)?;
        }
        for e in sel.where_clause.iter().chain(&sel.group_by).chain(&sel.having) {
            d.expr(e)?;
        }
        for o in order_by {
            d.expr(&o.expr)?;
        }
        Some(d)
    }

    /// Which columns of `def` to decode; None if every one is named.
    pub(crate) fn wanted(&self, def: &TableDef) -> Option<Arc<[bool]>> {
        let wanted: Vec<bool> = def.columns.iter().map(|c| self.reads(&c.name)).collect();
        if wanted.iter().all(|&w| w) {
            return None;
        }
        Some(wanted.into())
    }

    /// Whether some reference uses the column `name`.
    pub(crate) fn reads(&self, name: &str) -> bool {
        self.names.contains_key(&name.to_lowercase())
    }

    /// The demand of what is left of the block once the predicates `applied` have been
    /// applied: the names only they use are gone. Each of `applied` must be a part of the
    /// block this demand was made from, so that its references were counted here exactly
    /// as they are taken away; None (read everything) if they cannot have been.
    pub(crate) fn without(&self, applied: &[&Expr]) -> Option<Demand> {
        let mut taken = Demand { names: HashMap::new() };
        for e in applied {
            taken.expr(e)?;
        }
        let mut names = self.names.clone();
        for (name, n) in taken.names {
            match names.get_mut(&name) {
                Some(left) if *left > n => *left -= n,
                Some(left) if *left == n => {
                    names.remove(&name);
                }
                _ => return None,
            }
        }
        Some(Demand { names })
    }

    fn name(&mut self, name: &str) {
        *self.names.entry(name.to_lowercase()).or_default() += 1;
    }

    fn expr(&mut self, e: &Expr) -> Option<()> {
        match &e.kind {
            ExprKind::Column(parts) => {
                let last = parts.last().map(|p| p.value.as_str());
                // The row locator (a cursor's keyed query reads it): only a table read
                // whole keeps its rows' locators.
                if last == Some(ROWID) {
                    return None;
                }
                if let Some(last) = last {
                    self.name(last);
                }
            }
            ExprKind::Subquery(q) | ExprKind::Exists(q) => self.query(q)?,
            ExprKind::InSubquery { subquery, .. } | ExprKind::Quantified { subquery, .. } => {
                self.query(subquery)?
            }
            ExprKind::Function(f) => {
                if matches!(f.args, FunctionArgs::Star) {
                    let name = f.name.name.value.to_ascii_uppercase();
                    if name != "COUNT" && name != "COUNT_BIG" {
                        return None;
                    }
                }
                // The OVER and WITHIN GROUP clauses hold column references too: read
                // every name the call is written with.
                if f.over.is_some() || !f.within_group.is_empty() {
                    self.words(&e.to_string())?;
                }
            }
            _ => {}
        }
        let mut ok = true;
        visit_children(e, &mut |c| ok &= self.expr(c).is_some());
        ok.then_some(())
    }

    /// A nested query: every name written in it, since its references may be correlated
    /// ones to this block's columns.
    fn query(&mut self, q: &Query) -> Option<()> {
        self.words(&q.to_string())
    }

    fn source(&mut self, src: &TableSource) -> Option<()> {
        match src {
            TableSource::Table { .. } | TableSource::Variable { .. } => Some(()),
            TableSource::Join(j) => {
                self.source(&j.left)?;
                self.source(&j.right)?;
                match &j.on {
                    Some(on) => self.expr(on),
                    None => Some(()),
                }
            }
            // A derived table, a function's arguments, VALUES, PIVOT...: every name written
            // in it (APPLY's right side may name the block's columns).
            other => self.words(&other.to_string()),
        }
    }

    /// Every identifier in `sql` as written (reserved words included: harmless).
    fn words(&mut self, sql: &str) -> Option<()> {
        for t in tokenize(sql).ok()? {
            match t.kind {
                TokenKind::Word => self.name(t.text),
                TokenKind::QuotedIdent(name) => self.name(&name),
                _ => {}
            }
        }
        Some(())
    }
}
