//! A LEFT JOIN written before inner joins that do not read its inner side, moved after them:
//! `(a LEFT JOIN b ON q) JOIN c ON p` is `(a JOIN c ON p) LEFT JOIN b ON q` when `p` names
//! no column of `b` (outer joins associate so, and `q` can name no column of `c`). A RIGHT
//! JOIN is the LEFT JOIN of its sides swapped: `(b RIGHT JOIN a ON q) JOIN c ON p` becomes
//! `(a JOIN c ON p) LEFT JOIN b ON q` the same way.
//!
//! Written first, the outer join is one leaf among the block's sources, and its pairs are
//! held before the inner joins read them (`plan/join/outer.rs`). Moved last, it is the
//! block's one source: the inner joins are its left side, planned and ordered as any join,
//! and its pairs go to the block as they are made. SQL Server's optimizer reorders outer
//! joins the same way.
//!
//! An inner join's right operand that is an outer join is lifted the same way: `a JOIN (b
//! LEFT JOIN c ON q) ON p` is `(a JOIN b ON p) LEFT JOIN c ON q` when `p` names no column of
//! `c`.
//!
//! FROM items separated by commas are the cross join of their sources, which the WHERE
//! clause filters: `FROM a LEFT JOIN b ON q, c` is moved to `(a CROSS JOIN c) LEFT JOIN b ON
//! q` where `q` names only `a`'s and `b`'s qualified columns.
//!
//! Only where nothing could tell the two apart: the outer join on the left
//! spine of inner and cross joins, every ON condition of those joins free of subqueries and
//! naming only columns qualified by the other sources' names (an unqualified name might be
//! one of `b`'s). An unqualified `*` lists its columns in the FROM clause's order, so it is
//! written out as each source's `name.*` in that order, where every source has a name of its
//! own. The WHERE clause applies to the joined rows as before. An outer join
//! whose inner side a condition rejects is left to `plan/join/reduce.rs`, which makes it
//! an inner join instead.

use crate::ast::{Expr, ExprKind, Ident, Join, JoinKind, Select, SelectItem, TableSource};

use super::has_subquery;
use crate::exec::plan::join::exposed_names;

/// `sel` with the LEFT and RIGHT JOINs on its FROM clause's left spines moved after the
/// inner joins above them, or None where the module's conditions allow no move.
pub(super) fn pull_up_outer_join(sel: &Select) -> Option<Select> {
    let moved = outer_joins_pulled_up(&sel.from)?;
    let items = if sel.items.iter().any(|i| matches!(i, SelectItem::Wildcard(None))) {
        star_written_out(&sel.items, &sel.from)?
    } else {
        sel.items.clone()
    };
    Some(Select { from: vec![moved], items, ..sel.clone() })
}

/// The FROM items `from` as one source with their outer joins moved above the inner joins,
/// or None where nothing moves. The sources' columns come in another order: the caller
/// finds them by name (an UPDATE's or DELETE's search for its rows, which has no `*`).
pub(crate) fn outer_joins_pulled_up(from: &[TableSource]) -> Option<TableSource> {
    match from {
        [] => None,
        [one] => pull_up(one),
        items => pull_up(&comma_items_joined(items)?),
    }
}

/// FROM items `items` (two or more, `FROM a LEFT JOIN b ON q, c`) as one source: the first
/// that is an outer join, cross joined with the others in their order, which [`pull_up`]
/// then moves the outer join above (`(a CROSS JOIN c) LEFT JOIN b ON q`). Only where the
/// outer join's ON condition names only columns qualified by its own sources' names, and
/// has no subquery: a name of another item is an error there (4104), and must stay one.
fn comma_items_joined(items: &[TableSource]) -> Option<TableSource> {
    let first = items.iter().position(|item| {
        let TableSource::Join(j) = item else { return false };
        outer_sides(j).is_some()
            && j.on.as_ref().is_some_and(|on| names_only_of(on, &[&j.left, &j.right], &[]))
    })?;
    let mut joined = items[first].clone();
    for (i, item) in items.iter().enumerate() {
        if i != first {
            joined = TableSource::Join(Box::new(Join {
                left: joined,
                right: item.clone(),
                kind: JoinKind::Cross,
                on: None,
            }));
        }
    }
    Some(joined)
}

/// `src` with the outer join on its left spine moved after the inner joins above it, and
/// the same done again to what becomes its preserved side, so that LEFT JOINs written
/// between inner joins all end up above them, a chain whose pairs stream. An outer join at
/// the top has its preserved side rewritten so. None where nothing moves.
fn pull_up(src: &TableSource) -> Option<TableSource> {
    let TableSource::Join(top) = src else { return None };
    match top.kind {
        JoinKind::Inner | JoinKind::Cross => {
            if let Some(rotated) = outer_right_operand_lifted(top) {
                return Some(pull_up(&rotated).unwrap_or(rotated));
            }
        }
        // The ON conditions in a join's operands name only that operand's sources, so the
        // preserved side is rewritten on its own.
        JoinKind::LeftOuter => {
            let left = pull_up(&top.left)?;
            return Some(TableSource::Join(Box::new(Join { left, ..Join::clone(top) })));
        }
        JoinKind::RightOuter => {
            let right = pull_up(&top.right)?;
            return Some(TableSource::Join(Box::new(Join { right, ..Join::clone(top) })));
        }
        _ => return None,
    }
    // The spine: the inner and cross joins from the top down to the outer join.
    let mut spine: Vec<&Join> = Vec::new();
    let mut node: &Join = top;
    let (preserved, extended, outer_on) = loop {
        if !matches!(node.kind, JoinKind::Inner | JoinKind::Cross) {
            break outer_sides(node)?;
        }
        spine.push(node);
        let TableSource::Join(left) = &node.left else { return None };
        node = left;
    };
    let others: Vec<&TableSource> =
        std::iter::once(preserved).chain(spine.iter().map(|j| &j.right)).collect();
    let mut spine_ons = spine.iter().filter_map(|j| j.on.as_ref());
    if !spine_ons.all(|on| names_only_of(on, &others, &[extended])) {
        return None;
    }
    // The spine rebuilt from the bottom, the outer join's preserved side in its place.
    let mut joined = preserved.clone();
    for join in spine.iter().rev() {
        joined = TableSource::Join(Box::new(Join {
            left: joined,
            right: join.right.clone(),
            kind: join.kind,
            on: join.on.clone(),
        }));
    }
    // Another outer join below the moved one now has inner joins above it again.
    let joined = pull_up(&joined).unwrap_or(joined);
    Some(left_join(joined, extended, outer_on))
}

/// An inner or cross join `j` whose right operand is an outer join, written the other way
/// round: `a JOIN (b LEFT JOIN c ON q) ON p` is `(a JOIN b ON p) LEFT JOIN c ON q` when `p`
/// names no column of `c` (and a RIGHT JOIN's preserved side takes `b`'s place). Only where
/// `p` names only columns qualified by `a`'s and `b`'s names and has no subquery. The left
/// operand is lifted first, so a left spine of such joins ends as a chain of outer joins.
fn outer_right_operand_lifted(j: &Join) -> Option<TableSource> {
    let left = match &j.left {
        TableSource::Join(l) if matches!(l.kind, JoinKind::Inner | JoinKind::Cross) => {
            outer_right_operand_lifted(l)
        }
        _ => None,
    };
    let sides = match &j.right {
        TableSource::Join(r) => outer_sides(r),
        _ => None,
    };
    let Some((preserved, extended, outer_on)) = sides else {
        // Only the left operand changed: the join over it, as written.
        return left.map(|left| TableSource::Join(Box::new(Join { left, ..j.clone() })));
    };
    let left = left.unwrap_or_else(|| j.left.clone());
    if let Some(on) = &j.on {
        if !names_only_of(on, &[&left, preserved], &[extended]) {
            return None;
        }
    }
    let inner = Join { left, right: preserved.clone(), kind: j.kind, on: j.on.clone() };
    Some(left_join(TableSource::Join(Box::new(inner)), extended, outer_on))
}

/// A LEFT or RIGHT JOIN's preserved side, the side it NULL-extends, and its ON condition;
/// None for any other join.
fn outer_sides(j: &Join) -> Option<(&TableSource, &TableSource, &Option<Expr>)> {
    match j.kind {
        JoinKind::LeftOuter => Some((&j.left, &j.right, &j.on)),
        JoinKind::RightOuter => Some((&j.right, &j.left, &j.on)),
        _ => None,
    }
}

/// `preserved LEFT JOIN extended ON on`.
fn left_join(preserved: TableSource, extended: &TableSource, on: &Option<Expr>) -> TableSource {
    TableSource::Join(Box::new(Join {
        left: preserved,
        right: extended.clone(),
        kind: JoinKind::LeftOuter,
        on: on.clone(),
    }))
}

/// Whether the ON condition `on` has no subquery and names only columns qualified by a
/// name that exactly one of `sources` exposes and none of `excluded` does: it reads those
/// sources and nothing a move could take away from it or put beside it.
fn names_only_of(on: &Expr, sources: &[&TableSource], excluded: &[&TableSource]) -> bool {
    let mut names = Vec::new();
    sources.iter().for_each(|s| exposed_names(s, &mut names));
    let mut excluded_names = Vec::new();
    excluded.iter().for_each(|s| exposed_names(s, &mut excluded_names));
    let unique = |n: &String| {
        !excluded_names.iter().any(|e| e.eq_ignore_ascii_case(n))
            && names.iter().filter(|m| m.eq_ignore_ascii_case(n)).count() == 1
    };
    !has_subquery(on) && names_only(on, &names, &unique)
}

/// `items` with each unqualified `*` replaced by `name.*` for every source of the FROM
/// items `from`, in their order; None unless every source has a name no other has (a `*`
/// would otherwise lose a source's columns or list another's twice).
fn star_written_out(items: &[SelectItem], from: &[TableSource]) -> Option<Vec<SelectItem>> {
    let mut names = Vec::new();
    from.iter().for_each(|item| exposed_names(item, &mut names));
    let distinct = names
        .iter()
        .enumerate()
        .all(|(i, n)| !names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)));
    if names.len() != from.iter().map(sources).sum::<usize>() || !distinct {
        return None;
    }
    let mut out = Vec::new();
    for item in items {
        if matches!(item, SelectItem::Wildcard(None)) {
            out.extend(names.iter().map(|n| SelectItem::Wildcard(Some(vec![Ident::new(n)]))));
        } else {
            out.push(item.clone());
        }
    }
    Some(out)
}

/// The tables, views, derived tables and other row sources `src` joins.
fn sources(src: &TableSource) -> usize {
    match src {
        TableSource::Join(j) => sources(&j.left) + sources(&j.right),
        _ => 1,
    }
}

/// Whether every column `e` names is qualified by one of `names` that `unique` accepts.
fn names_only(e: &Expr, names: &[String], unique: &dyn Fn(&String) -> bool) -> bool {
    match &e.kind {
        ExprKind::Column(parts) => {
            let Some(qual) = parts.len().checked_sub(2).map(|i| &parts[i].value) else {
                return false;
            };
            names.iter().any(|n| n.eq_ignore_ascii_case(qual) && unique(n))
        }
        _ => {
            let mut all = true;
            crate::exec::execute::query::visit_children(e, &mut |c| {
                all = all && names_only(c, names, unique);
            });
            all
        }
    }
}
