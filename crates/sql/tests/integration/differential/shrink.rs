//! Reduction of a failing query: a generated query that shows a bug is usually ten times larger
//! than the bug, and a smaller one saves its reader the bisection. Greedy: take the first simpler
//! variant that still fails, start again from it, until none does.

use super::model::{Expr, From, Pred, Select};

/// The smallest variant of `query` for which `fails` holds, trying at most `budget` variants.
/// `fails` must reject a variant that either engine cannot run (a dropped join whose alias is
/// still named, say).
pub fn shrink(query: &Select, budget: usize, fails: &mut dyn FnMut(&Select) -> bool) -> Select {
    let mut current = query.clone();
    let mut tried = 0;
    'outer: while tried < budget {
        for candidate in candidates(&current) {
            tried += 1;
            if fails(&candidate) {
                current = candidate;
                continue 'outer;
            }
            if tried >= budget {
                break 'outer;
            }
        }
        break;
    }
    current
}

/// Variants of `q` one step simpler, the coarsest first.
fn candidates(q: &Select) -> Vec<Select> {
    let mut out = Vec::new();
    let mut with = |f: &dyn Fn(&mut Select)| {
        let mut c = q.clone();
        f(&mut c);
        out.push(c);
    };
    if q.filter.is_some() {
        with(&|c| c.filter = None);
    }
    if q.having.is_some() {
        with(&|c| c.having = None);
    }
    if q.top.is_some() || !q.order_by.is_empty() {
        with(&|c| {
            c.top = None;
            c.order_by.clear();
        });
    }
    if q.distinct {
        with(&|c| c.distinct = false);
    }
    match &q.from {
        From::Joins { joins, .. } if !joins.is_empty() => {
            with(&|c| {
                if let From::Joins { joins, .. } = &mut c.from {
                    joins.pop();
                }
            });
        }
        From::Comma(tables) if tables.len() > 1 => {
            with(&|c| {
                if let From::Comma(tables) = &mut c.from {
                    tables.pop();
                }
            });
        }
        _ => {}
    }
    for i in 0..q.items.len() {
        if q.items.len() > 1 {
            let mut c = q.clone();
            c.items.remove(i);
            // The remaining items keep their order; ORDER BY still names them all if it did.
            c.order_by.retain(|&(j, _)| j != i);
            for (j, _) in &mut c.order_by {
                if *j > i {
                    *j -= 1;
                }
            }
            for (n, item) in c.items.iter_mut().enumerate() {
                item.alias = format!("x{n}");
            }
            out.push(c);
        }
    }
    for (i, item) in q.items.iter().enumerate() {
        if let Expr::Subquery(sub) = &item.expr {
            for smaller in candidates(sub) {
                let mut c = q.clone();
                c.items[i].expr = Expr::Subquery(Box::new(smaller));
                out.push(c);
            }
        }
    }
    // A derived table read as its base table: the derived table keeps the base's column names.
    let mut tables = Vec::new();
    match &q.from {
        From::Joins { first, joins } => {
            tables.push(first);
            tables.extend(joins.iter().map(|j| &j.table));
        }
        From::Comma(list) => tables.extend(list.iter()),
    }
    for (n, t) in tables.iter().enumerate() {
        let Some(derived) = &t.derived else { continue };
        let base = match &derived.from {
            From::Joins { first, .. } => first.table.clone(),
            From::Comma(list) => list[0].table.clone(),
        };
        let mut c = q.clone();
        let target = match &mut c.from {
            From::Joins { first, joins } if n == 0 => Some(first),
            From::Joins { joins, .. } => joins.get_mut(n - 1).map(|j| &mut j.table),
            From::Comma(list) => list.get_mut(n),
        };
        if let Some(target) = target {
            target.table = base;
            target.derived = None;
            target.cte = false;
            out.push(c);
        }
        for smaller in candidates(derived) {
            let mut c = q.clone();
            let target = match &mut c.from {
                From::Joins { first, .. } if n == 0 => Some(first),
                From::Joins { joins, .. } => joins.get_mut(n - 1).map(|j| &mut j.table),
                From::Comma(list) => list.get_mut(n),
            };
            if let Some(target) = target {
                target.derived = Some(Box::new(smaller));
                out.push(c);
            }
        }
    }
    if let From::Joins { joins, .. } = &q.from {
        for (n, join) in joins.iter().enumerate() {
            for on in preds(&join.on) {
                let mut c = q.clone();
                if let From::Joins { joins, .. } = &mut c.from {
                    joins[n].on = on;
                }
                out.push(c);
            }
        }
    }
    if let Some(filter) = &q.filter {
        for p in preds(filter) {
            let mut c = q.clone();
            c.filter = Some(p);
            out.push(c);
        }
    }
    if let Some(having) = &q.having {
        for p in preds(having) {
            let mut c = q.clone();
            c.having = Some(p);
            out.push(c);
        }
    }
    out
}

/// Variants of a predicate one step simpler: a conjunct or disjunct alone, a negation dropped, a
/// subquery simplified.
fn preds(p: &Pred) -> Vec<Pred> {
    let mut out = Vec::new();
    match p {
        Pred::And(a, b) | Pred::Or(a, b) => {
            out.push((**a).clone());
            out.push((**b).clone());
            let rebuild = |x: Pred, y: Pred| match p {
                Pred::And(..) => x.and(y),
                _ => Pred::Or(Box::new(x), Box::new(y)),
            };
            for a2 in preds(a) {
                out.push(rebuild(a2, (**b).clone()));
            }
            for b2 in preds(b) {
                out.push(rebuild((**a).clone(), b2));
            }
        }
        Pred::Not(a) => {
            out.push((**a).clone());
            out.extend(preds(a).into_iter().map(Pred::not));
        }
        Pred::Exists { query, negated } => {
            for q in candidates(query) {
                out.push(Pred::Exists { query: Box::new(q), negated: *negated });
            }
        }
        Pred::Cmp(op, a, Expr::Subquery(query)) => {
            for q in candidates(query) {
                out.push(Pred::Cmp(*op, a.clone(), Expr::Subquery(Box::new(q))));
            }
        }
        Pred::InSubquery { expr, query, negated } => {
            for q in candidates(query) {
                out.push(Pred::InSubquery {
                    expr: expr.clone(),
                    query: Box::new(q),
                    negated: *negated,
                });
            }
        }
        _ => {}
    }
    out
}
