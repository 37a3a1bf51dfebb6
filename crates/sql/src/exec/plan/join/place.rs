//! Where each conjunct of a FROM clause is applied: the leaves its columns belong to, what
//! its ORs and equalities imply of single leaves, the WHERE conjuncts run as semi-joins or
//! placed beside an uncorrelated subquery's value, and the splitting of conditions into
//! conjuncts.

use super::{order, semi, Conjunct, Flat, Input, MAX_LEAVES};
use crate::ast::{BinaryOp, Expr, ExprKind, Ident};
use crate::exec::bind::constants::is_statement_constant;
use crate::exec::bind::static_type::first_refused;
use crate::exec::eval::{
    find_column, full_text_refusal, is_aggregate_call, is_comparison, unbound, Col, Env,
};
use crate::exec::execute::query::visit_children;
use crate::exec::scalar::registry::{self, Determinism};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Whether an expression may be evaluated once for many rows of the leaf it probes: no
/// subquery, aggregate, window or value that changes from row to row by itself.
pub(super) fn stable(e: &Expr) -> bool {
    let mut ok = stable_node(e);
    if ok {
        visit_children(e, &mut |c| ok &= stable(c));
    }
    ok
}

/// Whether `e` itself, apart from its operands, is [`stable`].
pub(super) fn stable_node(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Subquery(_)
        | ExprKind::Exists(_)
        | ExprKind::InSubquery { .. }
        | ExprKind::Quantified { .. }
        | ExprKind::NextValueFor(_) => false,
        ExprKind::Function(f) => {
            f.over.is_none()
                && !is_aggregate_call(f)
                && registry::lookup(&f.name.name.value)
                    .is_none_or(|b| b.determinism != Determinism::PerCall)
        }
        _ => true,
    }
}

impl Flat<'_> {
    /// The leaves an expression's columns belong to; None if it cannot be placed (a
    /// subquery may read any leaf; an ambiguous name is for the caller to report). Names no
    /// leaf has belong to an enclosing query.
    pub(super) fn leaves_of(&self, e: &Expr) -> Option<u64> {
        match &e.kind {
            ExprKind::Column(parts) => self.leaf_of(parts).map_or(Some(0), |l| l.map(|l| 1 << l)),
            // Each operand is checked by the recursion below: `stable` of the whole would
            // walk every subtree again at each level.
            _ if !stable_node(e) => None,
            _ => {
                let mut mask = Some(0u64);
                visit_children(e, &mut |c| {
                    mask = match (mask, self.leaves_of(c)) {
                        (Some(a), Some(b)) => Some(a | b),
                        _ => None,
                    }
                });
                mask
            }
        }
    }

    /// What the ORs among `parts` imply of single leaves: for `(n1.name = 'FRANCE' AND
    /// n2.name = 'GERMANY') OR (n1.name = 'GERMANY' AND n2.name = 'FRANCE')` (TPC-H Q7),
    /// `n1.name = 'FRANCE' OR n1.name = 'GERMANY'` and the same of `n2`. An OR of several
    /// leaves can only be checked once they are joined; what it implies of one leaf filters
    /// that leaf before it is joined (and may seek it). Each branch of the OR must have a
    /// conjunct of that leaf alone, or the OR implies nothing of it. The OR itself is still
    /// applied: the implied conjuncts only ever drop rows it would drop.
    pub(super) fn implied_by_ors(&self, parts: &[&Expr]) -> Vec<Expr> {
        let mut implied = Vec::new();
        if self.leaves.len() < 2 || self.leaves.len() > MAX_LEAVES {
            return implied;
        }
        for &p in parts {
            if !matches!(p.kind, ExprKind::Binary { op: BinaryOp::Or, .. }) {
                continue;
            }
            let Some(mask) = self.leaves_of(p) else { continue };
            if mask.count_ones() < 2 {
                continue;
            }
            let branches = or_branches(p);
            for leaf in 0..self.leaves.len() {
                let bit = 1u64 << leaf;
                if mask & bit == 0 {
                    continue;
                }
                let own: Option<Vec<Expr>> = branches
                    .iter()
                    .map(|parts| {
                        parts
                            .iter()
                            .filter(|e| self.leaves_of(e) == Some(bit))
                            .map(|&e| e.clone())
                            .reduce(|a, b| binary(BinaryOp::And, a, b))
                    })
                    .collect();
                if let Some(e) =
                    own.and_then(|o| o.into_iter().reduce(|a, b| binary(BinaryOp::Or, a, b)))
                {
                    implied.push(e);
                }
            }
        }
        implied
    }

    /// What the WHERE conjuncts `parts` and the inner joins' ON conjuncts `on` imply beyond
    /// themselves: of single leaves through ORs ([`Flat::implied_by_ors`]), and equalities
    /// by transitivity (`equivalence.rs`). None with one leaf, or too many to place.
    pub(super) fn implied(&self, parts: &[&Expr], on: &[&Expr]) -> Vec<Expr> {
        let mut implied = self.implied_by_ors(parts);
        if (2..=MAX_LEAVES).contains(&self.leaves.len()) {
            let all: Vec<&Expr> = parts.iter().chain(on).copied().collect();
            implied.extend(self.implied_equalities(&all));
        }
        implied
    }

    /// Error 7601 if a WHERE conjunct (`parts`) or ON conjunct holds a full-text predicate.
    pub(super) fn refuse_full_text(&self, parts: &[&Expr], on: &[&Expr]) -> Result<(), SqlError> {
        let sources: Vec<&[Col]> = self.leaves.iter().map(|l| l.cols.as_slice()).collect();
        parts.iter().chain(on).try_for_each(|part| full_text_refusal(part, &sources))
    }

    /// Whether every column `e` names is one of these leaves' (none an enclosing query's),
    /// and `e` can be placed.
    pub(super) fn owns_all_columns(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Column(parts) => matches!(self.leaf_of(parts), Some(Some(_))),
            _ if !stable_node(e) => false,
            _ => {
                let mut all = true;
                visit_children(e, &mut |c| all &= self.owns_all_columns(c));
                all
            }
        }
    }

    /// The error SQL Server gives when it binds the block, before anything is read, for the
    /// first name of its conjuncts that no source in scope has: an inner join's ON condition
    /// sees only the leaves of that join's operands (`FROM c, a JOIN b ON b.id = c.id` is
    /// 4104), the WHERE clause's `parts` every leaf; both see the enclosing queries'
    /// columns. Without this a name nothing has was found only when a row reached it, and a
    /// query over empty tables succeeded. Subqueries are bound when they run.
    pub(super) fn unbound_name(
        &self,
        parts: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Option<SqlError> {
        let refused = |e: &Expr, scope: std::ops::Range<usize>| {
            first_refused(e, &|name| self.refused_in(scope.clone(), name, outer))
        };
        let on = self.on_scopes.iter().find_map(|(scope, e)| refused(e, scope.clone()));
        on.or_else(|| parts.iter().find_map(|e| refused(e, 0..self.leaves.len())))
    }

    /// The error for column reference `name` in a conjunct that may name the leaves `scope`
    /// and the enclosing queries' columns: None if exactly one of them has it.
    fn refused_in(
        &self,
        scope: std::ops::Range<usize>,
        name: &[Ident],
        outer: Option<&Env<'_>>,
    ) -> Option<SqlError> {
        match self.leaf_in(scope.clone(), name) {
            Some(Some(_)) => return None,
            Some(None) => {
                let column = name.last().map_or("", |n| n.value.as_str());
                return Some(SqlError::catalogued(209, &[column]));
            }
            None => {}
        }
        let enclosing = outer.map(|env| env.column(name));
        match enclosing {
            Some(Ok(_)) => None,
            Some(Err(e)) if e.number == 209 => Some(e),
            _ => {
                let mut cols: Vec<&[Col]> =
                    self.leaves[scope].iter().map(|l| l.cols.as_slice()).collect();
                let mut env = outer;
                while let Some(e) = env {
                    cols.push(e.cols);
                    env = e.outer;
                }
                Some(unbound(cols, name))
            }
        }
    }

    /// Which leaf a column reference names: None if no leaf has it, Some(None) if it is
    /// ambiguous.
    pub(super) fn leaf_of(&self, parts: &[Ident]) -> Option<Option<usize>> {
        self.leaf_in(0..self.leaves.len(), parts)
    }

    /// [`Flat::leaf_of`] among the leaves `scope` only.
    fn leaf_in(&self, scope: std::ops::Range<usize>, parts: &[Ident]) -> Option<Option<usize>> {
        let mut found = None;
        for (i, leaf) in self.leaves.iter().enumerate().take(scope.end).skip(scope.start) {
            match find_column(&leaf.cols, parts) {
                Ok(Some(_)) if found.is_some() => return Some(None),
                Ok(Some(_)) => found = Some(i),
                Ok(None) => {}
                Err(_) => return Some(None),
            }
        }
        found.map(Some)
    }
}

impl Run<'_> {
    /// Places the conjuncts of a flattened FROM clause: `parts` (the WHERE clause's),
    /// `implied` (what they imply, `Flat::implied`), `on` (the
    /// inner joins' ON conditions) and those of `pushed` (an enclosing WHERE clause's) that
    /// name only these leaves, each tagged with the leaves it needs; WHERE conjuncts with a
    /// subquery that can be decorrelated become semi-joins. Samples the tables' statistics
    /// where there is a join order to choose. Returns the semi-joins and the positions in
    /// `parts` of the WHERE conjuncts it could not place (no leaf set: a subquery it cannot
    /// decorrelate, or too many leaves), which the join does not apply. With
    /// `run_subqueries` (not when the plan is only explained) an uncorrelated `IN
    /// (subquery)` or a comparison with an uncorrelated scalar subquery is run to place it
    /// What the planner's estimates for `flat`, whose conjuncts are `parts`, read: each
    /// table leaf's statistics, and the values of the statement constants its conjuncts
    /// compare columns with (`Flat::constants`). With one source there is no order to
    /// choose, and a seek of a key beats a scan whatever the sizes: only joins pay for
    /// statistics, and a single table whose range a nonclustered index could seek. There the
    /// choice is between reading that range's rows each through a key lookup and scanning the
    /// table, which only the range's size decides (`l_shipdate <= '1998-09-02'` keeps 98% of
    /// lineitem). Every way a single table is planned (`place`, a streamed block, a table
    /// read with a filter) gathers them the same, so SHOWPLAN shows the plan that runs.
    pub(super) fn gather_estimates<'e>(&mut self, flat: &mut Flat<'e>, parts: &[&'e Expr]) {
        let single_range = flat.leaves.len() == 1
            && matches!(&flat.leaves[0].input, Input::Table(t)
                if t.def.indexes.iter().any(|i| i.id != 1))
            && parts.iter().any(|e| has_range(e));
        if flat.leaves.len() > 1 || single_range {
            let mut estimated = Vec::new();
            for e in parts {
                estimated_columns(flat, e, &mut estimated);
            }
            for (i, leaf) in flat.leaves.iter_mut().enumerate() {
                if let Input::Table(t) = &leaf.input {
                    let columns: Vec<usize> =
                        estimated.iter().filter(|(l, _)| *l == i).map(|&(_, c)| c).collect();
                    self.auto_create_statistics(t, &columns);
                    leaf.stats = self.table_stats(t);
                }
            }
        }
        if flat.leaves.iter().any(|l| l.stats.is_some()) {
            let mut compared = Vec::new();
            for e in parts {
                compared_constants(e, &mut compared);
            }
            flat.constants = compared
                .into_iter()
                .filter_map(|e| Some((e as *const Expr as usize, self.statement_constant(e)?)))
                .collect();
        }
    }

    /// (`uncorrelated_filter`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn place<'e>(
        &mut self,
        flat: &mut Flat<'e>,
        mut parts: Vec<&'e Expr>,
        implied: &'e [Expr],
        on: Vec<&'e Expr>,
        pushed: &[&'e Expr],
        outer: Option<&Env<'_>>,
        run_subqueries: bool,
    ) -> (Vec<(usize, semi::SemiJoin<'e>)>, Vec<usize>) {
        let all: Vec<&'e Expr> = parts
            .iter()
            .copied()
            .chain(implied)
            .chain(on.iter().copied())
            .chain(pushed.iter().copied())
            .collect();
        self.gather_estimates(flat, &all);
        let where_count = parts.len();
        // Implied conjuncts are WHERE conjuncts that are always placed (they name one
        // leaf, or two by an equality): never residual, never a semi-join.
        let not_on = where_count + implied.len();
        parts.extend(implied);
        parts.extend(on);
        for (i, expr) in parts.into_iter().enumerate() {
            let from_on = i >= not_on;
            let leaves = if flat.leaves.len() > MAX_LEAVES { None } else { flat.leaves_of(expr) };
            flat.conjuncts.push(Conjunct { expr, leaves, from_on, semi: false, applied: false });
        }
        if flat.leaves.len() <= MAX_LEAVES {
            for &expr in pushed {
                if flat.owns_all_columns(expr) {
                    let leaves = flat.leaves_of(expr);
                    flat.conjuncts.push(Conjunct {
                        expr,
                        leaves,
                        from_on: false,
                        semi: false,
                        applied: false,
                    });
                }
            }
        }
        let mut semis = Vec::new();
        if flat.leaves.len() <= MAX_LEAVES {
            for i in 0..where_count {
                if flat.conjuncts[i].leaves.is_some() {
                    continue;
                }
                let expr = flat.conjuncts[i].expr;
                if let Some((semi, mask)) = self.semi_join(flat, expr, outer) {
                    flat.conjuncts[i].leaves = Some(mask);
                    flat.conjuncts[i].semi = true;
                    semis.push((i, semi));
                }
            }
        }
        if run_subqueries && flat.leaves.len() <= MAX_LEAVES {
            for i in 0..where_count {
                if flat.conjuncts[i].leaves.is_none() {
                    flat.conjuncts[i].leaves = self.uncorrelated_filter(flat, i);
                }
            }
        }
        let residual = (0..where_count).filter(|&i| flat.conjuncts[i].leaves.is_none()).collect();
        (semis, residual)
    }

    /// The leaves of WHERE conjunct `i` if every subquery in it reads no enclosing row
    /// (each is run once here, its rows kept for the statement as `subquery.rs` keeps
    /// them): it is then placed like any conjunct on the leaves its other columns belong
    /// to, evaluated (a lookup in a subquery's hashed values, a comparison with its cached
    /// value) as soon as they are read, rather than on every joined row at the end. TPC-H
    /// Q18's `o_orderkey IN (SELECT l_orderkey ... GROUP BY l_orderkey HAVING ...)` filters
    /// `orders` before it is joined. The rows of an `IN` subquery also estimate what it
    /// keeps (`own_rows`).
    ///
    /// Only a conjunct that evaluates its subqueries on every row anyway is taken (a
    /// comparison, `[NOT] IN`, `ALL`/`ANY`, `[NOT] EXISTS`): in an OR or a CASE one might
    /// never run, and running it here could cost what the query never would.
    pub(super) fn uncorrelated_filter(&mut self, flat: &Flat<'_>, i: usize) -> Option<u64> {
        let e = flat.conjuncts[i].expr;
        let test = match &e.kind {
            ExprKind::Unary { op: crate::ast::UnaryOp::Not, operand } => operand,
            _ => e,
        };
        let always = match &test.kind {
            ExprKind::Binary { op, .. } => crate::exec::eval::is_comparison(*op),
            ExprKind::InSubquery { .. } | ExprKind::Quantified { .. } | ExprKind::Exists(_) => true,
            _ => false,
        };
        if !always {
            return None;
        }
        let mut found = false;
        let mask = self.leaves_beside_subqueries(flat, e, &mut found)?;
        found.then_some(mask)
    }

    /// `Flat::leaves_of`, but taking a subquery that reads no enclosing row as a constant
    /// (None for a correlated one) where operators lead to it; `found` is set where there
    /// is one.
    pub(super) fn leaves_beside_subqueries(
        &mut self,
        flat: &Flat<'_>,
        e: &Expr,
        found: &mut bool,
    ) -> Option<u64> {
        let mut mask = 0u64;
        match &e.kind {
            ExprKind::Subquery(q) | ExprKind::Exists(q) => {
                self.uncorrelated_rows(q)?;
                *found = true;
                return Some(0);
            }
            ExprKind::InSubquery { expr: x, subquery, .. }
            | ExprKind::Quantified { left: x, subquery, .. } => {
                self.uncorrelated_rows(subquery)?;
                *found = true;
                return self.leaves_beside_subqueries(flat, x, found);
            }
            // Operators evaluate every operand; anything else (CASE, IIF, COALESCE) may not,
            // so a subquery there is not run here.
            ExprKind::Binary { .. } | ExprKind::Unary { .. } => {}
            _ => return flat.leaves_of(e),
        }
        let mut children = Vec::new();
        visit_children(e, &mut |c| children.push(c));
        for c in children {
            mask |= self.leaves_beside_subqueries(flat, c, found)?;
        }
        Some(mask)
    }
}

/// The conjuncts of a condition (`a AND b AND c`).
pub(crate) fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary { op: BinaryOp::And, left, right } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        ExprKind::Binary { op: BinaryOp::Or, .. } => {
            out.extend(common_factors(e));
            out.push(e);
        }
        _ => out.push(e),
    }
}

/// The operands of a chain of `op` (`a AND b AND c`), left to right.
pub(super) fn operands<'e>(e: &'e Expr, op: BinaryOp, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary { op: o, left, right } if *o == op => {
            operands(left, op, out);
            operands(right, op, out);
        }
        _ => out.push(e),
    }
}

/// The branches of an OR, each as its ANDed parts: `(a AND b) OR c` is `[[a, b], [c]]`.
pub(super) fn or_branches(e: &Expr) -> Vec<Vec<&Expr>> {
    let mut ors = Vec::new();
    operands(e, BinaryOp::Or, &mut ors);
    ors.into_iter()
        .map(|b| {
            let mut parts = Vec::new();
            operands(b, BinaryOp::And, &mut parts);
            parts
        })
        .collect()
}

/// `left op right`, spanning both.
pub(super) fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    let span = left.span;
    Expr { kind: ExprKind::Binary { op, left: Box::new(left), right: Box::new(right) }, span }
}

/// The conjuncts every branch of an OR has (`a.k = b.k` in `(a.k = b.k AND x) OR (a.k = b.k
/// AND y)`, TPC-H Q19's shape), as written in its first branch. The OR implies each of
/// them, so applying them as well never drops a row it keeps, and lets the plan use them
/// (as a join's hash key, or a seek) where the OR alone would be a filter on a cross
/// product. Branches are compared by their text; an OR with a branch that is a single
/// predicate is left alone (its only factor would be that whole branch).
pub(super) fn common_factors(e: &Expr) -> Vec<&Expr> {
    let split = or_branches(e);
    // A plain OR of single predicates (`a = 1 OR b = 2`), the common case, has no factor
    // worth the texts: this runs every time the clause is planned.
    if split.iter().any(|parts| parts.len() < 2) {
        return Vec::new();
    }
    let texts: Vec<Vec<String>> =
        split[1..].iter().map(|parts| parts.iter().map(|p| p.to_string()).collect()).collect();
    split[0]
        .iter()
        .copied()
        .filter(|c| {
            let text = c.to_string();
            texts.iter().all(|branch| branch.contains(&text))
        })
        .collect()
}

/// Whether `e`, or a conjunct of it, is a range comparison (`<`, `<=`, `>`, `>=`,
/// `BETWEEN`): what a seek of an index's range can read.
fn has_range(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Binary { op: BinaryOp::And, left, right } => has_range(left) || has_range(right),
        ExprKind::Binary { op, .. } => {
            matches!(op, BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq)
        }
        ExprKind::Between { negated: false, .. } => true,
        _ => false,
    }
}

/// The (leaf, column) pairs whose statistics the estimates of conjunct `e` use: a table
/// column compared with a constant (or statement constant), or equal to another leaf's
/// column, within ANDs and ORs. `Run::auto_create_statistics` makes statistics on those
/// that no statistics lead, as SQL Server does for the predicates it estimates.
pub(super) fn estimated_columns(flat: &Flat<'_>, e: &Expr, out: &mut Vec<(usize, usize)>) {
    let constant = |x: &Expr| flat.leaves_of(x) == Some(0);
    let mut push = |x: &Expr| {
        if let Some(lc) = order::column_of(flat, x) {
            if !out.contains(&lc) {
                out.push(lc);
            }
        }
    };
    match &e.kind {
        ExprKind::Binary { op: BinaryOp::And | BinaryOp::Or, left, right } => {
            estimated_columns(flat, left, out);
            estimated_columns(flat, right, out);
        }
        ExprKind::Binary { op, left, right } if is_comparison(*op) => {
            let (a, b) = (order::column_of(flat, left), order::column_of(flat, right));
            let joined = matches!((a, b), (Some(x), Some(y)) if x.0 != y.0);
            if joined || constant(right) {
                push(left);
            }
            if joined || constant(left) {
                push(right);
            }
        }
        ExprKind::Between { expr, low, high, .. } if constant(low) && constant(high) => push(expr),
        ExprKind::InList { expr, list, .. } if list.iter().all(constant) => push(expr),
        ExprKind::IsNull { expr, .. } => push(expr),
        ExprKind::Like { expr, pattern, .. } if constant(pattern) => push(expr),
        _ => {}
    }
}

/// The sides of `e`'s comparisons (within its ANDs) that are statement constants other
/// than literals (`bind/constants.rs`), which a seek's estimate may read a histogram with.
fn compared_constants<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    let mut side = |s: &'e Expr| {
        if !matches!(s.kind, ExprKind::Literal(_)) && is_statement_constant(s) {
            out.push(s);
        }
    };
    match &e.kind {
        ExprKind::Binary { op: BinaryOp::And, left, right } => {
            compared_constants(left, out);
            compared_constants(right, out);
        }
        ExprKind::Binary { op, left, right } if is_comparison(*op) => {
            side(left);
            side(right);
        }
        ExprKind::Between { low, high, .. } => {
            side(low);
            side(high);
        }
        ExprKind::InList { list, .. } => list.iter().for_each(side),
        ExprKind::Like { pattern, .. } => side(pattern),
        _ => {}
    }
}
