//! Equalities the conjuncts imply by transitivity: from `c_nationkey = s_nationkey AND
//! s_nationkey = n_nationkey` (TPC-H Q5), also `c_nationkey = n_nationkey`.
//!
//! Without it the join order can only reach `customer` through `supplier`, the one leaf the
//! written conjuncts connect it to, so a plan that starts from the selective `region` and
//! `nation` must join `supplier` and `customer` to each other on their nation (a fan-out of
//! every supplier with every customer of its nation) before `orders` and `lineitem` narrow
//! anything. With the implied equality `customer` joins `nation` directly, and `supplier`
//! can come last, checked by its key. PostgreSQL gets the same from its equivalence classes
//! and SQL Server from its transitive predicates.
//!
//! The implied conjuncts are placed like written ones: each filters the rows once its two
//! leaves are joined, where it always holds (the equalities it follows from hold by then
//! or are checked in the same step), so results do not change; it only adds join paths.
//!
//! Equality is transitive only where the comparisons convert nothing that could make two
//! values equal to a third but not to each other, so a column joins a class only with
//! columns of its own kind: exact numbers (integers, BIT, DECIMAL, MONEY) with each other,
//! text with text of the same collation (an equality of two collations is compared under
//! one of them, and case-insensitive equal is not case-sensitive equal) and the same
//! Unicode-ness, anything else only with its own type (FLOAT, REAL, DATETIME with
//! DATETIME2, BINARY with VARBINARY would round or pad; SQL_VARIANT and XML never).

use super::{family, Flat};
use crate::ast::{BinaryOp, Expr, ExprKind};
use crate::exec::eval::{find_column, Col};
use walden_engine::types::SqlType;

/// Implied equalities added to one FROM clause at most (a class of k columns on k leaves
/// implies k(k-1)/2 pairs; a bound keeps a pathological WHERE clause from growing).
const MAX_IMPLIED: usize = 64;

/// A column of a leaf: (leaf, position), and the expression that names it.
type Member<'e> = ((usize, usize), &'e Expr);

impl Flat<'_> {
    /// The equalities between columns of different leaves that `parts` imply by
    /// transitivity and do not state (see the module's documentation).
    pub(super) fn implied_equalities(&self, parts: &[&Expr]) -> Vec<Expr> {
        let mut members: Vec<Member<'_>> = Vec::new();
        // Union-find over `members`' positions.
        let mut parent: Vec<usize> = Vec::new();
        let mut stated: Vec<((usize, usize), (usize, usize))> = Vec::new();
        for &p in parts {
            let ExprKind::Binary { op: BinaryOp::Eq, left, right } = &p.kind else { continue };
            let (Some(a), Some(b)) = (self.column_at(left), self.column_at(right)) else {
                continue;
            };
            if a == b || !transitive(self.col(a), self.col(b)) {
                continue;
            }
            stated.push((a, b));
            let ia = member(&mut members, &mut parent, a, left);
            let ib = member(&mut members, &mut parent, b, right);
            let (ra, rb) = (root(&mut parent, ia), root(&mut parent, ib));
            parent[ra] = rb;
        }
        let mut implied = Vec::new();
        for i in 0..members.len() {
            for j in i + 1..members.len() {
                let ((a, ea), (b, eb)) = (members[i], members[j]);
                if a.0 == b.0
                    || root(&mut parent, i) != root(&mut parent, j)
                    || stated.contains(&(a, b))
                    || stated.contains(&(b, a))
                    // Every member of a class is transitive with the one it was joined
                    // through, but the kinds above are not one relation across classes of
                    // different kinds: check the pair itself.
                    || !transitive(self.col(a), self.col(b))
                {
                    continue;
                }
                if implied.len() == MAX_IMPLIED {
                    return implied;
                }
                let kind = ExprKind::Binary {
                    op: BinaryOp::Eq,
                    left: Box::new(ea.clone()),
                    right: Box::new(eb.clone()),
                };
                implied.push(Expr { kind, span: ea.span });
            }
        }
        implied
    }

    /// The leaf and position of the column a plain column reference names.
    fn column_at(&self, e: &Expr) -> Option<(usize, usize)> {
        let ExprKind::Column(parts) = &e.kind else { return None };
        let leaf = self.leaf_of(parts)??;
        let c = find_column(self.leaves[leaf].read_cols(), parts).ok()??;
        Some((leaf, c))
    }

    fn col(&self, (leaf, c): (usize, usize)) -> &Col {
        &self.leaves[leaf].read_cols()[c]
    }
}

/// Whether equality between columns `a` and `b` is transitive with equalities among their
/// kind (see the module's documentation).
fn transitive(a: &Col, b: &Col) -> bool {
    match (family(a.ty), family(b.ty)) {
        (1, 1) => true,
        (2, 2) => a.collation == b.collation && unicode(a.ty) == unicode(b.ty),
        _ => a.ty == b.ty && !matches!(a.ty, SqlType::Variant | SqlType::Xml),
    }
}

/// Whether a text type is Unicode: a SQL collation compares VARCHAR by its own rules and
/// NVARCHAR by Windows' rules, so equal under one need not be equal under the other.
fn unicode(ty: SqlType) -> bool {
    matches!(ty, SqlType::NChar(_) | SqlType::NVarChar(_))
}

/// The position of column `at` among `members`, added (as a class of its own) if new.
fn member<'e>(
    members: &mut Vec<Member<'e>>,
    parent: &mut Vec<usize>,
    at: (usize, usize),
    e: &'e Expr,
) -> usize {
    if let Some(i) = members.iter().position(|(m, _)| *m == at) {
        return i;
    }
    members.push((at, e));
    parent.push(parent.len());
    members.len() - 1
}

fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}
