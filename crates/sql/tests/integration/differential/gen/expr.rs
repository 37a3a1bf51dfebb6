//! Expressions and predicates over the tables a query has in scope: columns, literals,
//! scalar expressions, comparisons, LIKE patterns, join conditions and aggregates.

use super::tables::WORDS;
use super::{Bound, Gen, SubKind};
use crate::differential::model::*;

impl<'a> Gen<'a> {
    /// The columns of `scope` of type `ty` (any type if None), as (scope position, ordinal).
    fn columns(&self, scope: &[Bound], ty: Option<Ty>, keys_only: bool) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, b) in scope.iter().enumerate() {
            let table = &self.tab(b.table);
            for (c, column) in table.columns.iter().enumerate() {
                if ty.is_none_or(|t| t == column.ty) && (!keys_only || table.is_key_column(c)) {
                    out.push((i, c));
                }
            }
        }
        out
    }

    /// A column of `scope`, preferring primary-key and indexed columns half of the time, since
    /// predicates on those are what index seeks and index joins serve.
    pub(super) fn column(&mut self, scope: &[Bound], ty: Option<Ty>) -> Option<(Expr, Column)> {
        let keys = self.columns(scope, ty, true);
        let all = self.columns(scope, ty, false);
        let pool = if !keys.is_empty() && self.rng.chance(50) { keys } else { all };
        if pool.is_empty() {
            return None;
        }
        let (i, c) = *self.rng.pick(&pool);
        let column = self.tab(scope[i].table).columns[c].clone();
        Some((Expr::column(&scope[i].alias, &column.name), column))
    }

    /// A literal of `ty`, mostly from the column's domain (so it matches some rows), sometimes
    /// just outside it.
    pub(super) fn literal(&mut self, ty: Ty, column: Option<&Column>) -> Cell {
        if let Some(column) = column {
            if column.ty == ty && self.rng.chance(85) {
                return self.rng.pick(&column.domain).clone();
            }
        }
        match ty {
            Ty::Int => Cell::Int(self.rng.range(-4, 30)),
            Ty::Str => Cell::Str(self.rng.pick(&WORDS).to_string()),
        }
    }

    /// A column of `ty` if `scope` has one, else a literal.
    fn column_or_literal(&mut self, ty: Ty, scope: &[Bound]) -> (Expr, Option<Column>) {
        match self.column(scope, Some(ty)) {
            Some((e, c)) if self.rng.chance(95) => (e, Some(c)),
            _ => (Expr::Literal(self.literal(ty, None)), None),
        }
    }

    /// A column of `ty` that can never be NULL (NOT NULL and not null-extended), else a literal.
    fn non_null_operand(&mut self, ty: Ty, scope: &[Bound]) -> Expr {
        let pool: Vec<(usize, usize)> = self
            .columns(scope, Some(ty), false)
            .into_iter()
            .filter(|&(i, c)| {
                !scope[i].null_extended && !self.tab(scope[i].table).columns[c].nullable
            })
            .collect();
        if pool.is_empty() || self.rng.chance(10) {
            return Expr::Literal(self.literal(ty, None));
        }
        let (i, c) = *self.rng.pick(&pool);
        Expr::column(&scope[i].alias, &self.tab(scope[i].table).columns[c].name)
    }

    /// A type that `scope` has a column of (a predicate on a literal alone filters nothing
    /// interesting), else any.
    fn scope_ty(&mut self, scope: &[Bound]) -> Ty {
        let ty = self.any_ty();
        let other = if ty == Ty::Int { Ty::Str } else { Ty::Int };
        if self.columns(scope, Some(ty), false).is_empty()
            && !self.columns(scope, Some(other), false).is_empty()
        {
            other
        } else {
            ty
        }
    }

    pub(super) fn any_ty(&mut self) -> Ty {
        if self.rng.chance(65) {
            Ty::Int
        } else {
            Ty::Str
        }
    }

    /// A scalar expression of `ty` over `scope`, without aggregates or subqueries.
    pub(super) fn scalar(&mut self, ty: Ty, scope: &[Bound], depth: u32) -> Expr {
        let roll = if depth == 0 { self.rng.below(8) } else { self.rng.below(12) };
        match roll {
            0..=6 => self.column_or_literal(ty, scope).0,
            7 => Expr::Literal(self.literal(ty, None)),
            8 | 9 => {
                let (a, column) = self.column_or_literal(ty, scope);
                match ty {
                    Ty::Int => {
                        let op = if self.rng.chance(50) { ArithOp::Add } else { ArithOp::Sub };
                        let b = if self.rng.chance(50) {
                            self.column_or_literal(ty, scope).0
                        } else {
                            Expr::Literal(Cell::Int(self.rng.range(-3, 3)))
                        };
                        Expr::Arith(op, Box::new(a), Box::new(b))
                    }
                    Ty::Str if self.features.concat => {
                        let b = Expr::Literal(self.literal(ty, column.as_ref()));
                        Expr::Concat(Box::new(a), Box::new(b))
                    }
                    Ty::Str => a,
                }
            }
            10 => {
                let (a, column) = self.column_or_literal(ty, scope);
                let b = Expr::Literal(self.literal(ty, column.as_ref()));
                Expr::Coalesce(Box::new(a), Box::new(b))
            }
            _ if self.features.case_expr => {
                let when = self.pred(scope, 0, 0);
                let then = self.scalar(ty, scope, depth - 1);
                let otherwise = self.scalar(ty, scope, depth - 1);
                Expr::Case(Box::new(when), Box::new(then), Box::new(otherwise))
            }
            _ => self.column_or_literal(ty, scope).0,
        }
    }

    /// A predicate over `scope`; `depth` bounds AND/OR/NOT nesting, `subqueries` bounds the
    /// nesting of subqueries.
    pub(super) fn pred(&mut self, scope: &[Bound], depth: u32, subqueries: u32) -> Pred {
        let kinds = if subqueries > 0 { 17 } else { 12 };
        match self.rng.below(kinds) {
            10 => match self.key_pred(scope) {
                Some(p) => p,
                None => self.pred(scope, depth, subqueries),
            },
            11 if self.features.like => {
                let (expr, column) = self.column_or_literal(Ty::Str, scope);
                let pattern = self.pattern(column.as_ref());
                Pred::Like { expr, pattern, negated: self.rng.chance(25) }
            }
            8 | 9 if depth > 0 => {
                let a = self.pred(scope, depth - 1, subqueries);
                match self.rng.below(5) {
                    0 => a.not(),
                    1 | 2 => {
                        Pred::Or(Box::new(a), Box::new(self.pred(scope, depth - 1, subqueries)))
                    }
                    _ => a.and(self.pred(scope, depth - 1, subqueries)),
                }
            }
            12 | 13 if self.features.exists_subquery => {
                let query = self.subquery(scope, SubKind::Exists, subqueries - 1);
                Pred::Exists { query: Box::new(query), negated: self.rng.chance(50) }
            }
            14 | 15 if self.features.in_subquery => {
                let ty = self.scope_ty(scope);
                let expr = if self.features.nullable_in_operand {
                    self.column_or_literal(ty, scope).0
                } else {
                    self.non_null_operand(ty, scope)
                };
                let query = self.subquery(scope, SubKind::In(ty), subqueries - 1);
                let negated = self.features.not_in_subquery && self.rng.chance(50);
                Pred::InSubquery { expr, query: Box::new(query), negated }
            }
            16 if self.features.scalar_subquery => {
                let ty = self.scope_ty(scope);
                let (expr, _) = self.column_or_literal(ty, scope);
                let query = self.subquery(scope, SubKind::Scalar(ty), subqueries - 1);
                let op = *self.rng.pick(&CmpOp::ALL);
                Pred::Cmp(op, expr, Expr::Subquery(Box::new(query)))
            }
            3 | 4 => {
                let ty = self.scope_ty(scope);
                let (a, _) = self.column_or_literal(ty, scope);
                let b = self.scalar(ty, scope, 1);
                Pred::Cmp(*self.rng.pick(&CmpOp::ALL), a, b)
            }
            5 => {
                let ty = self.scope_ty(scope);
                let (expr, column) = self.column_or_literal(ty, scope);
                let mut low = self.literal(ty, column.as_ref());
                let mut high = self.literal(ty, column.as_ref());
                // Mostly a non-empty range; an inverted one now and then, which matches nothing.
                if low > high && self.rng.chance(80) {
                    std::mem::swap(&mut low, &mut high);
                }
                let negated = self.rng.chance(20);
                Pred::Between { expr, low: Expr::Literal(low), high: Expr::Literal(high), negated }
            }
            6 => {
                let ty = self.scope_ty(scope);
                let (expr, column) = self.column_or_literal(ty, scope);
                let mut list: Vec<Expr> = (0..self.rng.range(1, 4))
                    .map(|_| Expr::Literal(self.literal(ty, column.as_ref())))
                    .collect();
                if self.features.null_in_list && self.rng.chance(20) {
                    list.push(Expr::Literal(Cell::Null));
                }
                Pred::InList { expr, list, negated: self.rng.chance(35) }
            }
            7 => {
                let ty = self.scope_ty(scope);
                let expr = self.scalar(ty, scope, 1);
                Pred::IsNull { expr, negated: self.rng.chance(50) }
            }
            _ => {
                // The commonest shape: a column against a literal, as index seeks serve it.
                let ty = self.scope_ty(scope);
                let (a, column) = self.column_or_literal(ty, scope);
                let b = Expr::Literal(self.literal(ty, column.as_ref()));
                let op = if self.rng.chance(40) { CmpOp::Eq } else { *self.rng.pick(&CmpOp::ALL) };
                Pred::Cmp(op, a, b)
            }
        }
    }

    /// An equality between a column of `right` and a column of the same type in `left`, the
    /// usual join predicate; a comparison with a literal when the types never match.
    pub(super) fn join_pred(&mut self, left: &[Bound], right: &Bound) -> Pred {
        if self.rng.chance(40) {
            if let Some(p) = self.key_join_pred(left, right) {
                return p;
            }
        }
        let right_scope = std::slice::from_ref(right);
        for _ in 0..4 {
            let Some((r, _)) = self.column(right_scope, None) else { break };
            let ty = self.type_of(&r, right_scope);
            if let Some((l, _)) = self.column(left, Some(ty)) {
                let op = if self.rng.chance(85) { CmpOp::Eq } else { *self.rng.pick(&CmpOp::ALL) };
                return if self.rng.chance(50) { Pred::Cmp(op, l, r) } else { Pred::Cmp(op, r, l) };
            }
        }
        self.pred(right_scope, 0, 0)
    }

    /// The columns of the primary key or of one index of `table`, in key order.
    fn some_key(&mut self, table: usize) -> Option<Vec<usize>> {
        let table = self.tab(table);
        let mut keys: Vec<Vec<usize>> = table.indexes.iter().map(|i| i.columns.clone()).collect();
        if !table.primary_key.is_empty() {
            keys.push(table.primary_key.clone());
        }
        if keys.is_empty() {
            return None;
        }
        Some(self.rng.pick(&keys).clone())
    }

    /// Equalities between a prefix of a key of `right` and columns of `left`: the join an index
    /// nested loops join or a merge join on the key serves.
    fn key_join_pred(&mut self, left: &[Bound], right: &Bound) -> Option<Pred> {
        let key = self.some_key(right.table)?;
        let len = self.rng.range(1, key.len() as i64) as usize;
        let mut p: Option<Pred> = None;
        for &c in &key[..len] {
            let column = &self.tab(right.table).columns[c];
            let r = Expr::column(&right.alias, &column.name);
            let Some((l, _)) = self.column(left, Some(column.ty)) else { break };
            let q = Pred::Cmp(CmpOp::Eq, l, r);
            p = Some(match p {
                Some(p) => p.and(q),
                None => q,
            });
        }
        p
    }

    /// A predicate an index seek serves: equalities on a prefix of a key of one table, then an
    /// equality, a range or an IN list on the next key column.
    fn key_pred(&mut self, scope: &[Bound]) -> Option<Pred> {
        let b = self.rng.pick(scope).clone();
        let key = self.some_key(b.table)?;
        let len = self.rng.range(1, key.len() as i64) as usize;
        let mut p: Option<Pred> = None;
        for (i, &c) in key[..len].iter().enumerate() {
            let column = self.tab(b.table).columns[c].clone();
            let e = Expr::column(&b.alias, &column.name);
            let lit = |g: &mut Self| Expr::Literal(g.literal(column.ty, Some(&column)));
            let q = if i + 1 < len {
                Pred::Cmp(CmpOp::Eq, e, lit(self))
            } else {
                match self.rng.below(5) {
                    0 => Pred::Cmp(CmpOp::Eq, e, lit(self)),
                    1 => {
                        let op = *self.rng.pick(&[CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]);
                        Pred::Cmp(op, e, lit(self))
                    }
                    2 => Pred::Between { expr: e, low: lit(self), high: lit(self), negated: false },
                    3 => {
                        let list = (0..self.rng.range(1, 4)).map(|_| lit(self)).collect();
                        Pred::InList { expr: e, list, negated: false }
                    }
                    _ => {
                        let low = if self.rng.chance(50) { CmpOp::Gt } else { CmpOp::Ge };
                        let high = if self.rng.chance(50) { CmpOp::Lt } else { CmpOp::Le };
                        Pred::Cmp(low, e.clone(), lit(self)).and(Pred::Cmp(high, e, lit(self)))
                    }
                }
            };
            p = Some(match p {
                Some(p) => p.and(q),
                None => q,
            });
        }
        p
    }

    /// A LIKE pattern: mostly a prefix of a value followed by `%` (which an index seek can
    /// serve), sometimes with `_` or a leading `%`. Only letters, `%` and `_`, which both engines
    /// read alike (SQL Server's `[` is special, SQLite's is not).
    fn pattern(&mut self, column: Option<&Column>) -> String {
        let word = match self.literal(Ty::Str, column) {
            Cell::Str(s) => s,
            _ => String::new(),
        };
        let cut = self.rng.range(0, word.len() as i64) as usize;
        match self.rng.below(6) {
            0..=2 => format!("{}%", &word[..cut]),
            3 => format!("%{}", &word[cut..]),
            4 if !word.is_empty() => format!(
                "{}_{}",
                &word[..cut.min(word.len() - 1)],
                &word[(cut + 1).min(word.len())..]
            ),
            _ => word,
        }
    }

    fn type_of(&self, column: &Expr, scope: &[Bound]) -> Ty {
        let Expr::Column { alias, column } = column else { return Ty::Int };
        let b = scope.iter().find(|b| &b.alias == alias).expect("alias in scope");
        let table = &self.tab(b.table);
        table.columns.iter().find(|c| &c.name == column).expect("column in table").ty
    }

    /// An aggregate over `scope` of type `ty`, or of any type if None.
    pub(super) fn aggregate(&mut self, scope: &[Bound], ty: Option<Ty>) -> Expr {
        let ty = ty.unwrap_or_else(|| self.any_ty());
        let funcs: &[AggFunc] = match ty {
            Ty::Int => &[AggFunc::Count, AggFunc::Count, AggFunc::Sum, AggFunc::Min, AggFunc::Max],
            Ty::Str => &[AggFunc::Min, AggFunc::Max],
        };
        let func = *self.rng.pick(funcs);
        if func == AggFunc::Count && self.rng.chance(40) {
            return Expr::Agg { func, distinct: false, arg: None };
        }
        let arg_ty = if func == AggFunc::Count { self.any_ty() } else { ty };
        let arg = self.scalar(arg_ty, scope, 1);
        let distinct = self.features.count_distinct
            && matches!(func, AggFunc::Count | AggFunc::Sum)
            && self.rng.chance(20);
        Expr::Agg { func, distinct, arg: Some(Box::new(arg)) }
    }
}
