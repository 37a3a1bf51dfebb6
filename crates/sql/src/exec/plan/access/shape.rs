//! An access path without its borrows: each probe named by the conjunct it comes from and
//! its place there, so that a plan chosen once can be kept (`exec::plan_cache`) and bound
//! again to the same syntax tree's conjuncts at each execution for the price of a few
//! slice lookups, instead of matching every conjunct to every index again.

use walden_engine::catalog::TableDef;
use walden_engine::types::SqlType;

use crate::ast::{BinaryOp, Expr, ExprKind};

use super::{AccessPath, Fixed, Range};

/// Where a probe is: which operand of which conjunct (by its position in the list the path
/// was chosen for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct At {
    conjunct: usize,
    operand: Operand,
}

/// The operands of a search argument that can be probes (`collect_terms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operand {
    /// `a op b`'s `a`.
    Left,
    /// `a op b`'s `b`.
    Right,
    /// `x BETWEEN low AND high`'s `low`.
    Low,
    /// `x BETWEEN low AND high`'s `high`.
    High,
    /// `x LIKE pattern`'s `pattern`.
    Pattern,
    /// `x IN (list)`'s whole list.
    List,
}

/// [`Fixed`] with its probes named by place.
#[derive(Debug, Clone, Copy)]
enum FixedAt {
    Eq(At),
    In(At),
    Null,
}

/// An [`AccessPath`] whose probes are named by place (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct PathShape {
    index: Option<u16>,
    fixed: Vec<FixedAt>,
    lower: Option<(At, bool)>,
    upper: Option<(At, bool)>,
    like: Option<At>,
    rows: f64,
    cost: f64,
}

/// The operands of `c` that can be probes, with their names.
fn operands(c: &Expr) -> Vec<(Operand, &Expr)> {
    match &c.kind {
        ExprKind::Binary { left, right, .. } => {
            vec![(Operand::Left, &**left), (Operand::Right, &**right)]
        }
        ExprKind::Between { low, high, .. } => {
            vec![(Operand::Low, &**low), (Operand::High, &**high)]
        }
        ExprKind::Like { pattern, .. } => vec![(Operand::Pattern, &**pattern)],
        _ => Vec::new(),
    }
}

/// The place of `probe` among the operands of `conjuncts`: found by identity, not by
/// equality, since two conjuncts may hold equal expressions.
fn place(conjuncts: &[&Expr], probe: &Expr) -> Option<At> {
    conjuncts.iter().enumerate().find_map(|(conjunct, c)| {
        operands(c)
            .into_iter()
            .find(|(_, e)| std::ptr::eq(*e, probe))
            .map(|(operand, _)| At { conjunct, operand })
    })
}

/// The place of an IN list among `conjuncts`.
fn place_list(conjuncts: &[&Expr], list: &[Expr]) -> Option<At> {
    conjuncts.iter().position(|c| {
        matches!(&c.kind, ExprKind::InList { list: l, .. } if std::ptr::eq(l.as_slice(), list))
    })
    .map(|conjunct| At { conjunct, operand: Operand::List })
}

/// The probe at `at` among `conjuncts`, if it is there.
fn probe<'e>(conjuncts: &[&'e Expr], at: At) -> Option<&'e Expr> {
    let c: &'e Expr = conjuncts.get(at.conjunct)?;
    match (&c.kind, at.operand) {
        (ExprKind::Binary { left, .. }, Operand::Left) => Some(left),
        (ExprKind::Binary { right, .. }, Operand::Right) => Some(right),
        (ExprKind::Between { low, .. }, Operand::Low) => Some(low),
        (ExprKind::Between { high, .. }, Operand::High) => Some(high),
        (ExprKind::Like { pattern, .. }, Operand::Pattern) => Some(pattern),
        _ => None,
    }
}

/// The IN list at `at` among `conjuncts`, if it is there.
fn list<'e>(conjuncts: &[&'e Expr], at: At) -> Option<&'e [Expr]> {
    match &conjuncts.get(at.conjunct)?.kind {
        ExprKind::InList { list, .. } if at.operand == Operand::List => Some(list),
        _ => None,
    }
}

impl<'e> AccessPath<'e> {
    /// This path with its probes named by their places among `conjuncts` (those it was
    /// chosen for); None if a probe is not an operand of one of them.
    pub(crate) fn shape(&self, conjuncts: &[&'e Expr]) -> Option<PathShape> {
        let mut fixed = Vec::with_capacity(self.fixed.len());
        for f in &self.fixed {
            fixed.push(match f {
                Fixed::Eq(e) => FixedAt::Eq(place(conjuncts, e)?),
                Fixed::In(l) => FixedAt::In(place_list(conjuncts, l)?),
                Fixed::Null => FixedAt::Null,
            });
        }
        let bound = |b: Option<(&Expr, bool)>| match b {
            None => Some(None),
            Some((e, inclusive)) => place(conjuncts, e).map(|at| Some((at, inclusive))),
        };
        let like = match self.range.like {
            None => None,
            Some(e) => Some(place(conjuncts, e)?),
        };
        Some(PathShape {
            index: self.index,
            fixed,
            lower: bound(self.range.lower)?,
            upper: bound(self.range.upper)?,
            like,
            rows: self.rows,
            cost: self.cost,
        })
    }
}

impl<'e> AccessPath<'e> {
    /// The positions among `conjuncts` (those the path was chosen for, on `def`) of the
    /// equalities its seek of the clustered index fixes an integer key column with. A row
    /// the seek finds has that column equal to the probe's value (the key is read with the
    /// row, so it is the row's value; a nonclustered entry's row is read after it, and may
    /// have changed): the seek keeps a probe only if its value converts
    /// to the column's type and compares equal to what it converted to, by the comparison
    /// the conjunct itself makes, and integers encode one key per value. So the conjunct
    /// holds for every row found and need not be checked again; a probe that cannot be
    /// converted makes the read a scan, which must check every conjunct.
    pub(crate) fn exact_seek_conjuncts(
        &self,
        def: &TableDef,
        conjuncts: &[&'e Expr],
    ) -> Vec<usize> {
        let Some(index) = self.index.filter(|&id| id == 1).and_then(|id| def.index(id)) else {
            return Vec::new();
        };
        let mut exact = Vec::new();
        for (k, f) in self.fixed.iter().enumerate() {
            let Fixed::Eq(probe) = f else { continue };
            let integer = index.columns.get(k).and_then(|&c| def.columns.get(c)).is_some_and(|c| {
                matches!(
                    c.ty,
                    SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt
                )
            });
            let Some(at) = place(conjuncts, probe).filter(|_| integer) else { continue };
            let equality =
                matches!(conjuncts[at.conjunct].kind, ExprKind::Binary { op: BinaryOp::Eq, .. });
            if equality && !exact.contains(&at.conjunct) {
                exact.push(at.conjunct);
            }
        }
        exact
    }
}

impl AccessPath<'_> {
    /// Whether the path is a seek of a nonclustered index that answers every one of
    /// `conjuncts` (those it was chosen for, on `def`) exactly, read index-only: each is an
    /// equality that fixes an integer key column, and nothing else is asked. Then the
    /// entries the seek finds are the rows that hold them all (an index-only read takes
    /// each entry's key as the row's value, proved committed as `IndexCursor::next_covered`
    /// says), and counting them counts those rows (see `Run::count_seek`).
    pub(crate) fn answers_exactly(&self, def: &TableDef, conjuncts: &[&Expr]) -> bool {
        let Some(index) = self.index.filter(|&id| id != 1).and_then(|id| def.index(id)) else {
            return false;
        };
        if !self.range.is_empty() || self.fixed.len() != conjuncts.len() {
            return false;
        }
        let mut answered = vec![false; conjuncts.len()];
        for (k, f) in self.fixed.iter().enumerate() {
            let Fixed::Eq(probe) = f else { return false };
            let integer = index.columns.get(k).and_then(|&c| def.columns.get(c)).is_some_and(|c| {
                matches!(
                    c.ty,
                    SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt
                )
            });
            let Some(at) = place(conjuncts, probe).filter(|_| integer) else { return false };
            let equality =
                matches!(conjuncts[at.conjunct].kind, ExprKind::Binary { op: BinaryOp::Eq, .. });
            if !equality || answered[at.conjunct] {
                return false;
            }
            answered[at.conjunct] = true;
        }
        answered.iter().all(|&a| a)
    }
}

impl PathShape {
    /// For a path that fixes one column of its index by one equality, and asks nothing
    /// else: the index, and the probe among `conjuncts` (as [`PathShape::path`] would
    /// borrow it).
    pub(crate) fn single_probe<'e>(&self, conjuncts: &[&'e Expr]) -> Option<(u16, &'e Expr)> {
        match (self.index, self.fixed.as_slice(), self.lower, self.upper, self.like) {
            (Some(index), [FixedAt::Eq(at)], None, None, None) => {
                Some((index, probe(conjuncts, *at)?))
            }
            _ => None,
        }
    }

    /// The path again, its probes borrowed from `conjuncts` (the same syntax tree's
    /// conjuncts, in the same order, as the path was chosen for); None if they are not.
    pub(crate) fn path<'e>(&self, conjuncts: &[&'e Expr]) -> Option<AccessPath<'e>> {
        let mut fixed = Vec::with_capacity(self.fixed.len());
        for f in &self.fixed {
            fixed.push(match *f {
                FixedAt::Eq(at) => Fixed::Eq(probe(conjuncts, at)?),
                FixedAt::In(at) => Fixed::In(list(conjuncts, at)?),
                FixedAt::Null => Fixed::Null,
            });
        }
        let bound = |b: Option<(At, bool)>| match b {
            None => Some(None),
            Some((at, inclusive)) => probe(conjuncts, at).map(|e| Some((e, inclusive))),
        };
        let like = match self.like {
            None => None,
            Some(at) => Some(probe(conjuncts, at)?),
        };
        Some(AccessPath {
            index: self.index,
            fixed,
            range: Range { lower: bound(self.lower)?, upper: bound(self.upper)?, like },
            rows: self.rows,
            cost: self.cost,
        })
    }
}
