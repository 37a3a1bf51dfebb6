//! Set operations (`UNION [ALL]`, `INTERSECT`, `EXCEPT`) and the column types they, `CASE`
//! and computed columns settle on: each column typed by SQL Server's precedence and widening
//! rules over both operands or all its values, and its values made that type.

use walden_engine::types::{SqlType, Value};

use crate::ast::{QueryBody, SetOperator};
use crate::exec::eval::Env;
use crate::exec::scalar;
use crate::exec::scalar::collation;
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::Rows;

/// `l op r`: the rows of one set operation, each column typed by both operands.
fn set_operation(op: SetOperator, l: Rows, r: Rows) -> Result<Rows, SqlError> {
    let visible = l.cols.iter().filter(|c| !c.hidden).count();
    if visible != r.cols.iter().filter(|c| !c.hidden).count() {
        return Err(SqlError::new(
                205,
                "All queries combined using a UNION, INTERSECT or EXCEPT operator must have an equal number of expressions in their target lists.",
            ));
    }
    // Each column's type combines both branches' by SQL Server's precedence and
    // widening rules (`'a' UNION ALL 'bbb'` is varchar(3), `1 UNION 2.5` a
    // decimal); a branch whose column holds only NULLs does not constrain it.
    let types: Vec<SqlType> = (0..l.cols.len())
        .map(|i| {
            let only_nulls = |rows: &[Vec<Value>]| rows.iter().all(|r| r[i].is_null());
            let left = l.cols[i].ty;
            let right = r.cols.get(i).map_or(left, |c| c.ty);
            match (only_nulls(&l.rows), only_nulls(&r.rows)) {
                (true, false) => right,
                (false, true) => left,
                _ => scalar::common_type(left, right),
            }
        })
        .collect();
    // Rows are told apart by each column's collation: the left branch's, else the right's.
    let collations: Vec<_> = (0..l.cols.len())
        .map(|i| l.cols[i].collation.or(r.cols.get(i).and_then(|c| c.collation)))
        .collect();
    let key = |row: &[Value]| collation::group_key_under(row, &collations);
    let mut rows = match op {
        SetOperator::UnionAll => {
            let mut rows = l.rows;
            rows.extend(r.rows);
            rows
        }
        SetOperator::Union => {
            let mut seen = std::collections::HashSet::new();
            l.rows.into_iter().chain(r.rows).filter(|row| seen.insert(key(row))).collect()
        }
        SetOperator::Except | SetOperator::Intersect => {
            let right: std::collections::HashSet<String> = r.rows.iter().map(|x| key(x)).collect();
            let mut seen = std::collections::HashSet::new();
            let keep_in_right = op == SetOperator::Intersect;
            l.rows
                .into_iter()
                .filter(|row| {
                    let k = key(row);
                    right.contains(&k) == keep_in_right && seen.insert(k)
                })
                .collect()
        }
    };
    // A declared type (SMALLDATETIME, ...) stays where it is the branch's of higher
    // precedence: `d UNION SELECT NULL` is still SMALLDATETIME, `d UNION datetime` is not.
    let declared: Vec<_> = (0..l.cols.len())
        .map(|i| match r.cols.get(i) {
            Some(rc) => crate::exec::bind::static_type::shared_declared(
                (l.cols[i].ty, l.cols[i].declared),
                (rc.ty, rc.declared),
            ),
            None => None,
        })
        .collect();
    let mut cols = l.cols;
    for (i, ty) in types.into_iter().enumerate() {
        cols[i].ty = ty;
        cols[i].collation = collations[i];
        cols[i].declared = declared[i];
        unify_column(&mut rows, i, ty)?;
        cols[i].nullable = true;
    }
    Ok(Rows { cols, rows })
}

/// Whether a value already has the variant a column of type `ty` holds.
fn has_type(v: &Value, ty: SqlType) -> bool {
    matches!(
        (v, ty),
        (Value::Null, _)
            | (Value::TinyInt(_), SqlType::TinyInt)
            | (Value::SmallInt(_), SqlType::SmallInt)
            | (Value::Int(_), SqlType::Int)
            | (Value::BigInt(_), SqlType::BigInt)
            | (Value::Bit(_), SqlType::Bit)
            | (Value::Decimal(_), SqlType::Decimal { .. })
            | (Value::Float(_), SqlType::Float)
            | (Value::Real(_), SqlType::Real)
            | (Value::Money(_), SqlType::Money)
            | (Value::Str(_), SqlType::Char(_) | SqlType::VarChar(_))
            | (Value::NStr(_), SqlType::NChar(_) | SqlType::NVarChar(_))
            | (Value::Binary(_), SqlType::Binary(_) | SqlType::VarBinary(_))
            | (Value::Date(_), SqlType::Date)
            | (Value::Time(_), SqlType::Time(_))
            | (Value::DateTime(_), SqlType::DateTime)
            | (Value::DateTime2(_), SqlType::DateTime2(_))
            | (Value::DateTimeOffset(_), SqlType::DateTimeOffset(_))
            | (Value::Guid(_), SqlType::UniqueIdentifier)
    )
}

/// The type of a computed column: the widest of its values' types.
pub(crate) fn infer_type(rows: &[Vec<Value>], i: usize) -> SqlType {
    let mut ty = ValueType::default();
    for r in rows {
        ty.see(&r[i]);
    }
    ty.get().unwrap_or(SqlType::Int)
}

/// The type of a column typed by its values ([`infer_type`]), folded in one value at a time:
/// the first non-NULL value's, widened by later ones for the types that widen (the lengths
/// of VARCHAR, NVARCHAR and VARBINARY, the digits of DECIMAL).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ValueType(Option<SqlType>);

impl ValueType {
    pub(crate) fn see(&mut self, v: &Value) {
        if v.is_null() {
            return;
        }
        let t = scalar::type_of(v);
        self.0 = Some(match (self.0, t) {
            (None, t) => t,
            (Some(SqlType::VarChar(a)), SqlType::VarChar(b)) => SqlType::VarChar(wider(a, b)),
            (Some(SqlType::NVarChar(a)), SqlType::NVarChar(b)) => SqlType::NVarChar(wider(a, b)),
            (Some(SqlType::VarBinary(a)), SqlType::VarBinary(b)) => SqlType::VarBinary(wider(a, b)),
            (
                Some(SqlType::Decimal { precision: p1, scale: s1 }),
                SqlType::Decimal { precision: p2, scale: s2 },
            ) => {
                let scale = s1.max(s2);
                let int = (p1 - s1).max(p2 - s2);
                SqlType::Decimal { precision: (int + scale).min(38), scale }
            }
            (Some(t0), _) => t0,
        });
    }

    /// The type so far; None while only NULLs were seen.
    pub(crate) fn get(&self) -> Option<SqlType> {
        self.0
    }

    /// Whether the type is known and no later value can change it.
    pub(crate) fn is_final(&self) -> bool {
        self.0.is_some_and(|t| {
            !matches!(
                t,
                SqlType::VarChar(_)
                    | SqlType::NVarChar(_)
                    | SqlType::VarBinary(_)
                    | SqlType::Decimal { .. }
            )
        })
    }
}

fn wider(a: walden_engine::types::Len, b: walden_engine::types::Len) -> walden_engine::types::Len {
    use walden_engine::types::Len;
    match (a, b) {
        (Len::N(x), Len::N(y)) => Len::N(x.max(y)),
        _ => Len::Max,
    }
}

/// Makes every value of a column the variant its type says (CASE and UNION may mix types).
pub(crate) fn unify_column(rows: &mut [Vec<Value>], i: usize, ty: SqlType) -> Result<(), SqlError> {
    for r in rows.iter_mut() {
        unify_value(&mut r[i], ty)?;
    }
    Ok(())
}

/// Makes `v` the variant type `ty` says, as [`unify_column`] does for a column.
pub(crate) fn unify_value(v: &mut Value, ty: SqlType) -> Result<(), SqlError> {
    if !has_type(v, ty) {
        let taken = std::mem::replace(v, Value::Null);
        *v = scalar::coerce(taken, ty, true)?;
    }
    Ok(())
}

impl Run<'_> {
    /// A chain of set operations, which the parser builds left-deep (`a UNION b UNION c` is
    /// `(a UNION b) UNION c`), evaluated left to right down its left spine in a loop: by
    /// recursion, a long chain such as the 1,000 `SELECT 1 UNION ALL ...` go-mssqldb's tests
    /// send would overflow a worker's stack and abort the server.
    pub(super) fn set_operations(
        &mut self,
        body: &QueryBody,
        outer: Option<&Env<'_>>,
    ) -> Result<Rows, SqlError> {
        let mut spine = Vec::new();
        let mut first = body;
        while let QueryBody::SetOperation { op, left, right } = first {
            spine.push((*op, &**right));
            first = left;
        }
        let mut rows = self.body(first, &[], None, outer)?;
        for (op, right) in spine.into_iter().rev() {
            let r = self.body(right, &[], None, outer)?;
            rows = set_operation(op, rows, r)?;
        }
        Ok(rows)
    }
}
