//! Outer joins that the block's own conditions make inner (PostgreSQL's
//! `reduce_outer_joins`, SQL Server's outer-join simplification).
//!
//! A LEFT JOIN keeps each left row that no right row matches, its right columns NULL. When
//! a WHERE conjunct of the block, or an ON conjunct of an inner join around the outer join,
//! cannot hold of a row whose right columns are all NULL (`b.x = 5`, `c.id = b.cid`), every
//! such row is thrown away after the join: the join gives the same rows as an inner join.
//! As one, it is flattened with the block's other sources, so its sides are joined in the
//! order and by the algorithms the planner finds cheapest, and neither is held whole as an
//! outer join's leaf is. A RIGHT JOIN likewise when its left side's NULLs are rejected.
//!
//! A conjunct rejects a side's NULLs when it is a comparison (`=`, `<>`, `<`, `>`, `<=`,
//! `>=`), `[NOT] LIKE`, `[NOT] BETWEEN`, `[NOT] IN (list)` or `IS NOT NULL` whose tested value
//! is a column qualified by a name exposed inside that side (and nowhere else in the
//! block): that column is NULL in every NULL-extended row, and each of those is then
//! unknown or false. Only under `ANSI_NULLS ON`: with it off, `= NULL` holds of a NULL.
//! A join made inner by an ON conjunct around it adds its own ON conjuncts to those that
//! may make a join inside it inner (`a LEFT JOIN b ... LEFT JOIN c ON c.id = b.cid WHERE
//! c.x = 1`: both). The columns of the side that would have been NULL-extended stay
//! described as nullable, as SQL Server describes them from the query as written.

use crate::ast::{Expr, ExprKind, Join, JoinKind, TableSource};
use crate::exec::eval::is_comparison;
use crate::exec::session::Run;

use super::conjuncts;

/// The outer joins of one block that its conditions make inner.
#[derive(Default)]
pub(super) struct Reduced<'e> {
    joins: Vec<&'e Join>,
}

impl Reduced<'_> {
    /// Whether `j` joins as an inner join.
    pub(super) fn inner(&self, j: &Join) -> bool {
        self.joins.iter().any(|&p| std::ptr::eq(p, j))
    }
}

impl Run<'_> {
    /// The outer joins among `sources` (a block's FROM clause) that its WHERE conjuncts
    /// `parts`, those of an enclosing WHERE clause it may apply (`pushed`), and its inner
    /// joins' ON conjuncts make inner.
    pub(super) fn reduced_outer_joins<'e>(
        &self,
        sources: &'e [TableSource],
        parts: &[&'e Expr],
        pushed: &[&'e Expr],
    ) -> Reduced<'e> {
        let mut reduced = Reduced::default();
        if !self.s.opts.semantics.ansi_nulls || !sources.iter().any(has_outer_join) {
            return reduced;
        }
        let mut names = Vec::new();
        for src in sources {
            exposed_names(src, &mut names);
        }
        let mut rejecting: Vec<&Expr> = parts.iter().chain(pushed).copied().collect();
        for src in sources {
            inner_on(src, &mut rejecting);
        }
        for src in sources {
            reduce(src, &mut rejecting, &names, &mut reduced);
        }
        reduced
    }
}

impl Run<'_> {
    /// Whether `sel`'s FROM clause is more than one source once the outer joins its WHERE
    /// clause makes inner are: [`super::joins`], or one outer join made inner.
    pub(crate) fn joins_reduced(&self, sel: &crate::ast::Select) -> bool {
        if super::joins(sel) {
            return true;
        }
        let [TableSource::Join(j)] = sel.from.as_slice() else { return false };
        let mut parts = Vec::new();
        if let Some(w) = &sel.where_clause {
            conjuncts(w, &mut parts);
        }
        self.reduced_outer_joins(&sel.from, &parts, &[]).inner(j)
    }
}

/// Whether `src` holds a LEFT or RIGHT JOIN among the sources its block flattens.
fn has_outer_join(src: &TableSource) -> bool {
    match src {
        TableSource::Join(j) => match j.kind {
            JoinKind::LeftOuter | JoinKind::RightOuter => true,
            JoinKind::Inner | JoinKind::Cross => {
                has_outer_join(&j.left) || has_outer_join(&j.right)
            }
            _ => false,
        },
        _ => false,
    }
}

/// The ON conjuncts of the inner joins in `src` that are not inside an outer join.
fn inner_on<'e>(src: &'e TableSource, out: &mut Vec<&'e Expr>) {
    if let TableSource::Join(j) = src {
        if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) {
            if let Some(on) = &j.on {
                conjuncts(on, out);
            }
            inner_on(&j.left, out);
            inner_on(&j.right, out);
        }
    }
}

/// Notes in `reduced` each outer join of `src` that a conjunct of `rejecting` makes inner,
/// outermost first, each one made inner adding its ON conjuncts for those inside it.
fn reduce<'e>(
    src: &'e TableSource,
    rejecting: &mut Vec<&'e Expr>,
    block: &[String],
    reduced: &mut Reduced<'e>,
) {
    let TableSource::Join(j) = src else { return };
    let extended = match j.kind {
        JoinKind::Inner | JoinKind::Cross => None,
        JoinKind::LeftOuter => Some(&j.right),
        JoinKind::RightOuter => Some(&j.left),
        _ => return,
    };
    if let Some(side) = extended {
        let mut names = Vec::new();
        exposed_names(side, &mut names);
        // A name the block exposes twice is not known to be this side's.
        names.retain(|n| block.iter().filter(|b| b.eq_ignore_ascii_case(n)).count() == 1);
        if !rejecting.iter().any(|e| rejects_nulls_of(e, &names)) {
            return;
        }
        reduced.joins.push(j);
        if let Some(on) = &j.on {
            conjuncts(on, rejecting);
        }
    }
    reduce(&j.left, rejecting, block, reduced);
    reduce(&j.right, rejecting, block, reduced);
}

/// The names by which the columns of `src`'s sources are qualified: aliases, or a table's
/// or variable's own name.
pub(crate) fn exposed_names(src: &TableSource, out: &mut Vec<String>) {
    let name = match src {
        TableSource::Table { name, alias, .. } => {
            alias.as_ref().unwrap_or(&name.name).value.clone()
        }
        TableSource::Variable { name, alias } => {
            alias.as_ref().map_or_else(|| name.clone(), |a| a.value.clone())
        }
        TableSource::Derived { alias, .. } | TableSource::Values { alias, .. } => {
            alias.value.clone()
        }
        TableSource::Function { alias: Some(alias), .. } => alias.value.clone(),
        TableSource::Join(j) => {
            exposed_names(&j.left, out);
            exposed_names(&j.right, out);
            return;
        }
        _ => return,
    };
    out.push(name);
}

/// Whether `e` is unknown or false whenever the columns qualified by `names` are NULL.
fn rejects_nulls_of(e: &Expr, names: &[String]) -> bool {
    let tested = match &e.kind {
        ExprKind::Binary { op, left, right } => {
            return is_comparison(*op) && (column_of(left, names) || column_of(right, names));
        }
        ExprKind::Like { expr, .. }
        | ExprKind::Between { expr, .. }
        | ExprKind::InList { expr, .. } => expr,
        ExprKind::IsNull { expr, negated: true } => expr,
        _ => return false,
    };
    column_of(tested, names)
}

/// Whether `e` is a column qualified by one of `names`.
fn column_of(e: &Expr, names: &[String]) -> bool {
    match &e.kind {
        ExprKind::Column(parts) if parts.len() >= 2 => {
            let qual = &parts[parts.len() - 2].value;
            names.iter().any(|n| n.eq_ignore_ascii_case(qual))
        }
        _ => false,
    }
}
