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

use walden_engine::types::{DeclaredType, Len, SqlType, MAX_BYTE_LEN, MAX_NCHAR_LEN};

use crate::ast::{BinaryOp, Expr, ExprKind, FunctionArgs, Literal, UnaryOp};
use crate::exec::eval::{find_column, Col};
use crate::exec::scalar::registry::{self, Returns};
use crate::exec::scalar::{common_type, declared_len, precedence};
use crate::exec::session::Run;
use crate::exec::user_types::declared_as;

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

impl Run<'_> {
    /// The type `e` has when it is one Walden holds as another (SMALLDATETIME as DATETIME,
    /// SMALLMONEY as MONEY, TEXT, NTEXT and IMAGE as the MAX types): what a client is told a
    /// select-list column is, by SQL Server's rules for the result type of an expression:
    ///
    /// * a column, variable, CAST or CONVERT: the type it was declared with;
    /// * arithmetic (`d + 1`, `m * 2`) and CASE, COALESCE, IIF: the type of highest data
    ///   type precedence among the operands or results ([`declared_precedence`]), so
    ///   SMALLDATETIME + INT is SMALLDATETIME and SMALLMONEY + MONEY is MONEY; TEXT, NTEXT
    ///   and IMAGE are no arithmetic operands in SQL Server, so they never type one;
    /// * ISNULL and NULLIF: the first argument's type (ISNULL's second's when the first is
    ///   a literal NULL); MIN and MAX keep their argument's type; DATEADD its date's;
    /// * anything else (SUM and AVG of SMALLMONEY are MONEY, other functions, subqueries):
    ///   none, the held type is the expression's type.
    ///
    /// `cols` are the columns its column references name. Sources: "Data type precedence",
    /// "ISNULL", "NULLIF", "MIN", "MAX", "SUM", "AVG", "DATEADD" in the T-SQL reference.
    pub(crate) fn declared_type_of(&self, e: &Expr, cols: &[Col]) -> Option<DeclaredType> {
        match &e.kind {
            ExprKind::Column(parts) => {
                find_column(cols, parts).ok().flatten().and_then(|i| cols[i].declared)
            }
            ExprKind::Cast(c) => declared_as(&c.data_type),
            ExprKind::Convert(c) => declared_as(&c.data_type),
            ExprKind::Variable(v) => self.variable(v).ok().and_then(|v| v.declared),
            ExprKind::Unary { op: UnaryOp::Plus | UnaryOp::Minus, operand } => {
                self.declared_type_of(operand, cols).filter(|d| is_numeric_or_temporal(*d))
            }
            ExprKind::Binary {
                op:
                    BinaryOp::Add
                    | BinaryOp::Subtract
                    | BinaryOp::Multiply
                    | BinaryOp::Divide
                    | BinaryOp::Modulo,
                left,
                right,
            } => self
                .by_precedence([left.as_ref(), right.as_ref()], cols)
                .filter(|d| is_numeric_or_temporal(*d)),
            ExprKind::Case(c) => {
                let results = c.branches.iter().map(|b| &b.result).chain(c.else_result.as_ref());
                self.by_precedence(results, cols)
            }
            ExprKind::Function(f) if f.name.schema.is_none() && f.within_group.is_empty() => {
                let args = match &f.args {
                    FunctionArgs::List { args, .. } => args.as_slice(),
                    FunctionArgs::None | FunctionArgs::Star => &[],
                };
                let name = f.name.name.value.to_ascii_uppercase();
                match (name.as_str(), args) {
                    ("ISNULL", [first, second]) if is_null(first) => {
                        self.declared_type_of(second, cols)
                    }
                    ("ISNULL" | "NULLIF", [first, _]) | ("MIN" | "MAX", [first]) => {
                        self.declared_type_of(first, cols)
                    }
                    ("DATEADD", [_, _, date]) => self.declared_type_of(date, cols),
                    ("COALESCE", args) => self.by_precedence(args.iter(), cols),
                    ("IIF", [_, then, otherwise]) => self.by_precedence([then, otherwise], cols),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The declared type of the expression of highest precedence among `exprs` (literal
    /// NULLs left out), if it is one; none if any other's type is unknown, since it might be
    /// the higher.
    fn by_precedence<'e>(
        &self,
        exprs: impl IntoIterator<Item = &'e Expr>,
        cols: &[Col],
    ) -> Option<DeclaredType> {
        let mut best: Option<(u8, Option<DeclaredType>)> = None;
        for e in exprs.into_iter().filter(|e| !is_null(e)) {
            let declared = self.declared_type_of(e, cols);
            let rank = match declared {
                Some(d) => declared_precedence(d),
                None => 4 * precedence(&self.static_type(e, cols)?),
            };
            if best.is_none_or(|(r, _)| rank > r) {
                best = Some((rank, declared));
            }
        }
        best?.1
    }
}

/// The declared type of a column two sides share (a UNION's, EXCEPT's or INTERSECT's), each
/// of type `ty` declared as `declared`: the side's of higher precedence, if it is declared.
pub(crate) fn shared_declared(
    a: (SqlType, Option<DeclaredType>),
    b: (SqlType, Option<DeclaredType>),
) -> Option<DeclaredType> {
    let rank = |(ty, declared): (SqlType, Option<DeclaredType>)| {
        declared.map_or_else(|| 4 * precedence(&ty), declared_precedence)
    };
    if rank(a) >= rank(b) {
        a.1
    } else {
        b.1
    }
}

/// SQL Server's data type precedence with the declared types in their places, four steps a
/// type of [`precedence`] apart: SMALLDATETIME just below DATETIME, SMALLMONEY just below
/// MONEY, and NTEXT, TEXT and IMAGE (in that order) between BIT and UNIQUEIDENTIFIER.
fn declared_precedence(d: DeclaredType) -> u8 {
    match d {
        DeclaredType::SmallDateTime => 4 * precedence(&SqlType::DateTime) - 2,
        DeclaredType::SmallMoney => 4 * precedence(&SqlType::Money) - 2,
        DeclaredType::NText => 4 * precedence(&SqlType::Bit) - 1,
        DeclaredType::Text => 4 * precedence(&SqlType::Bit) - 2,
        DeclaredType::Image => 4 * precedence(&SqlType::Bit) - 3,
    }
}

/// Whether arithmetic keeps the type: SMALLDATETIME and SMALLMONEY; the text and image
/// types are not arithmetic operands in SQL Server (Walden concatenates their values as the
/// MAX types they are held as).
fn is_numeric_or_temporal(d: DeclaredType) -> bool {
    matches!(d, DeclaredType::SmallDateTime | DeclaredType::SmallMoney)
}

fn is_null(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Literal(Literal::Null))
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
