//! The type of a select-list expression read from the expression itself, for a column whose
//! values say nothing: `SELECT start_time = GETDATE(), * INTO #m FROM ... WHERE 1 = 0`
//! creates `start_time` as `datetime` in SQL Server, and so must Walden, though no row was
//! produced to look at.
//!
//! A computed column's type is otherwise taken from its values (`query::infer_type`); this
//! is only asked when every value is NULL or there are none, so it covers the expressions
//! scripts write there (literals, columns, casts, variables, arithmetic, CASE, and built-in
//! functions by their registry entry's rule) rather than every rule of SQL Server's type
//! derivation. What it cannot tell stays `int`, SQL Server's type for an untyped NULL.

use walden_engine::types::{Len, SqlType, MAX_BYTE_LEN, MAX_NCHAR_LEN};

use crate::ast::{BinaryOp, Expr, ExprKind, FunctionArgs, Literal};
use crate::exec::eval::{find_column, Col};
use crate::exec::scalar::registry::{self, Returns};
use crate::exec::scalar::{common_type, declared_len};
use crate::exec::session::Run;

/// The length of `sysname`, which `@@SERVERNAME` returns.
const SYSNAME: SqlType = SqlType::NVarChar(Len::N(128));

impl Run<'_> {
    /// The type `e` has whatever its value, if the expression says; `cols` are the columns
    /// its column references name.
    pub(crate) fn static_type(&self, e: &Expr, cols: &[Col]) -> Option<SqlType> {
        match &e.kind {
            ExprKind::Literal(l) => literal_type(l),
            ExprKind::Column(parts) => find_column(cols, parts).ok().flatten().map(|i| cols[i].ty),
            ExprKind::Cast(_) | ExprKind::Convert(_) | ExprKind::Variable(_) => {
                self.declared_type(e)
            }
            ExprKind::SystemVariable(name) => system_variable_type(name),
            ExprKind::XmlMethod { method, args, .. } => match method.as_str() {
                "exist" => Some(SqlType::Bit),
                "query" => Some(SqlType::Xml),
                "value" => match args.get(1).map(|a| &a.kind) {
                    Some(ExprKind::Literal(Literal::String { value, .. })) => {
                        crate::exec::scalar::xml::value_type(value).ok()
                    }
                    _ => None,
                },
                _ => None,
            },
            ExprKind::JsonObject { .. } | ExprKind::JsonArray { .. } => {
                Some(SqlType::NVarChar(walden_engine::types::Len::Max))
            }
            // The input's fractional digits: a DATETIME's three, else its own scale.
            ExprKind::AtTimeZone { expr, .. } => {
                Some(SqlType::DateTimeOffset(match self.static_type(expr, cols) {
                    Some(SqlType::DateTime) => 3,
                    Some(SqlType::DateTime2(s) | SqlType::DateTimeOffset(s) | SqlType::Time(s)) => {
                        s
                    }
                    _ => 7,
                }))
            }
            ExprKind::Unary { operand, .. } => self.static_type(operand, cols),
            ExprKind::Binary { op, left, right } => {
                let arithmetic = matches!(
                    op,
                    BinaryOp::Add
                        | BinaryOp::Subtract
                        | BinaryOp::Multiply
                        | BinaryOp::Divide
                        | BinaryOp::Modulo
                );
                if !arithmetic {
                    return None;
                }
                match (self.static_type(left, cols), self.static_type(right, cols)) {
                    (Some(l), Some(r)) => Some(combined(l, r)),
                    (l, r) => l.or(r),
                }
            }
            ExprKind::Case(c) => c
                .branches
                .iter()
                .map(|b| &b.result)
                .chain(c.else_result.as_ref())
                .filter_map(|r| self.static_type(r, cols))
                .reduce(common_type),
            ExprKind::Function(f) if f.name.schema.is_some() => self.user_function_type(f),
            ExprKind::Function(f) => {
                let b = registry::lookup(&f.name.name.value)?;
                // The value PERCENTILE_DISC picks is its WITHIN GROUP expression's.
                if matches!(b.returns, Returns::WithinGroup) {
                    return match f.within_group.as_slice() {
                        [o] => self.static_type(&o.expr, cols),
                        _ => None,
                    };
                }
                let args = match &f.args {
                    FunctionArgs::List { args, .. } => args.as_slice(),
                    FunctionArgs::None | FunctionArgs::Star => &[],
                };
                b.result_type(&|i: usize| args.get(i).and_then(|a| self.static_type(a, cols)))
            }
            _ => None,
        }
    }
}

fn literal_type(l: &Literal) -> Option<SqlType> {
    Some(match l {
        Literal::Null => return None,
        Literal::String { value, national: false } => {
            SqlType::VarChar(declared_len(value.len(), MAX_BYTE_LEN))
        }
        Literal::String { value, national: true } => {
            SqlType::NVarChar(declared_len(value.encode_utf16().count(), MAX_NCHAR_LEN))
        }
        Literal::Integer(digits) if digits.parse::<i32>().is_ok() => SqlType::Int,
        Literal::Integer(digits) => decimal(digits.len(), 0),
        Literal::Decimal(text) => {
            let (int, frac) = text.split_once('.').unwrap_or((text, ""));
            decimal(int.len() + frac.len(), frac.len())
        }
        Literal::Float(_) => SqlType::Float,
        Literal::Money(_) => SqlType::Money,
        Literal::Binary(bytes) => SqlType::VarBinary(declared_len(bytes.len(), MAX_BYTE_LEN)),
    })
}

fn decimal(digits: usize, scale: usize) -> SqlType {
    let precision = u8::try_from(digits.clamp(1, 38)).unwrap_or(38);
    let scale = u8::try_from(scale).unwrap_or(38).min(precision);
    SqlType::Decimal { precision, scale }
}

fn system_variable_type(name: &str) -> Option<SqlType> {
    Some(match name.to_ascii_uppercase().as_str() {
        "@@SPID" => SqlType::SmallInt,
        "@@ROWCOUNT" | "@@TRANCOUNT" | "@@ERROR" | "@@FETCH_STATUS" | "@@NESTLEVEL"
        | "@@PROCID" => SqlType::Int,
        "@@SERVERNAME" | "@@SERVICENAME" => SYSNAME,
        "@@VERSION" => SqlType::NVarChar(Len::N(300)),
        "@@DBTS" => SqlType::VarBinary(Len::N(8)),
        _ => return None,
    })
}

/// The type of `l op r` for arithmetic and string concatenation: two strings concatenate;
/// otherwise the operand of lower precedence converts to the other's type, widened as
/// [`common_type`] widens it.
fn combined(l: SqlType, r: SqlType) -> SqlType {
    let text_len = |t: SqlType| match t {
        SqlType::Char(n) | SqlType::NChar(n) => Some(Len::N(n)),
        SqlType::VarChar(len) | SqlType::NVarChar(len) => Some(len),
        _ => None,
    };
    if let (Some(a), Some(b)) = (text_len(l), text_len(r)) {
        let national = matches!(l, SqlType::NChar(_) | SqlType::NVarChar(_))
            || matches!(r, SqlType::NChar(_) | SqlType::NVarChar(_));
        let max = if national { MAX_NCHAR_LEN } else { MAX_BYTE_LEN };
        let len = match (a, b) {
            (Len::N(a), Len::N(b)) => declared_len(usize::from(a) + usize::from(b), max),
            _ => Len::Max,
        };
        return if national { SqlType::NVarChar(len) } else { SqlType::VarChar(len) };
    }
    common_type(l, r)
}
