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

use std::sync::Arc;

use walden_engine::catalog::{Object, TableDef};
use walden_engine::types::{DeclaredType, Len, SqlType, MAX_BYTE_LEN, MAX_NCHAR_LEN};

use crate::ast::{
    BinaryOp, Expr, ExprKind, FunctionArgs, Ident, JoinKind, Literal, Query, QueryBody, Select,
    SelectItem, TableSource, UnaryOp,
};
use crate::exec::ddl::user_types::declared_as;
use crate::exec::eval::{find_column, label_in, Col};
use crate::exec::execute::query::{expr_name, table_cols, visit_children};
use crate::exec::scalar::collation::collation_ref;
use crate::exec::scalar::registry::{self, Returns};
use crate::exec::scalar::{common_type, declared_len, precedence};
use crate::exec::session::Run;
use crate::exec::SqlError;

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
    /// * a scalar subquery: its column's ([`Run::query_columns`]);
    /// * anything else (SUM and AVG of SMALLMONEY are MONEY, other functions): none, the
    ///   held type is the expression's type.
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
            ExprKind::Variable(v) => self.variable_at(v).ok().and_then(|v| v.declared),
            ExprKind::Subquery(q) => self.query_columns(q, cols, false)?.first()?.col.declared,
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

/// Where a result column's values come from when it is a table's column: what
/// `sp_describe_first_result_set` tells of it (its `source_*` and `is_*` columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColumnSource {
    pub(crate) database: String,
    pub(crate) schema: String,
    pub(crate) table: String,
    pub(crate) column: String,
    pub(crate) identity: bool,
    pub(crate) computed: bool,
    /// A `rowversion` column, which no statement may set.
    pub(crate) rowversion: bool,
    /// Part of a unique index, primary key or unique constraint.
    pub(crate) unique_key: bool,
}

/// A column of a query typed from the query's text and the catalog, without reading a row.
/// `col.hidden` marks a column whose type cannot be told so.
#[derive(Debug, Clone)]
pub(crate) struct StaticColumn {
    pub(crate) col: Col,
    /// The table column it is, when it is one of a table's.
    pub(crate) source: Option<Arc<ColumnSource>>,
    /// Whether it is a column of a source (a table's, a CTE's, a table variable's...) rather
    /// than an expression's value.
    pub(crate) column: bool,
}

impl StaticColumn {
    fn unknown(name: String) -> StaticColumn {
        StaticColumn { col: Col::hidden(&name, SqlType::Int), source: None, column: false }
    }

    fn of_source(col: Col, source: Option<Arc<ColumnSource>>) -> StaticColumn {
        StaticColumn { col, source, column: true }
    }

    fn expression(col: Col) -> StaticColumn {
        StaticColumn { col, source: None, column: false }
    }
}

impl Run<'_> {
    /// The columns `q` returns, each typed from the text and the catalog as SQL Server types
    /// it (a table column's declared type, precision and length; a scalar subquery's the type
    /// of its column), without running it; `outer` are the enclosing query's columns. With
    /// `loose`, an expression's type may be [`Run::static_type`]'s estimate; without, only the
    /// types that [`Run::exact_type`] knows are exactly the values' types, so that values can be
    /// made that type without changing them. None when a source cannot be described so (a
    /// view, a system view, a function): the caller goes by the values.
    pub(crate) fn query_columns(
        &self,
        q: &Query,
        outer: &[Col],
        loose: bool,
    ) -> Option<Vec<StaticColumn>> {
        if !q.ctes.is_empty() || q.for_json.is_some() || q.for_xml.is_some() {
            return None;
        }
        self.body_columns(&q.body, outer, loose)
    }

    fn body_columns(
        &self,
        body: &QueryBody,
        outer: &[Col],
        loose: bool,
    ) -> Option<Vec<StaticColumn>> {
        match body {
            QueryBody::Select(sel) => self.select_columns(sel, outer, loose),
            QueryBody::Parenthesized(q) => self.query_columns(q, outer, loose),
            QueryBody::SetOperation { left, right, .. } => {
                let left = self.body_columns(left, outer, loose)?;
                let right = self.body_columns(right, outer, loose)?;
                if left.len() != right.len() {
                    return None;
                }
                // As `set_operations` types them at run time: the types' common type, the
                // declared type of the side of higher precedence, the left side's name.
                let shared = left.into_iter().zip(right).map(|(l, r)| {
                    let (a, b) = (l.col, r.col);
                    let declared = shared_declared((a.ty, a.declared), (b.ty, b.declared));
                    let col = Col {
                        ty: common_type(a.ty, b.ty),
                        hidden: a.hidden || b.hidden,
                        nullable: a.nullable || b.nullable,
                        collation: a.collation.or(b.collation),
                        declared,
                        ..a
                    };
                    StaticColumn::expression(col)
                });
                Some(shared.collect())
            }
        }
    }

    fn select_columns(
        &self,
        sel: &Select,
        outer: &[Col],
        loose: bool,
    ) -> Option<Vec<StaticColumn>> {
        let mut from: Vec<StaticColumn> = Vec::new();
        for src in &sel.from {
            from.extend(self.source_columns(src, outer, loose)?);
        }
        // Expressions are typed over the known columns only (a reference to one of unknown
        // type has no type); names are looked up among all of them.
        let cols: Vec<Col> = from.iter().map(|c| c.col.clone()).collect();
        let named: Vec<Col> = cols.iter().map(|c| Col { hidden: false, ..c.clone() }).collect();
        let mut out = Vec::new();
        for item in &sel.items {
            match item {
                SelectItem::Wildcard(qual) => {
                    let last = qual.as_ref().and_then(|q| q.last());
                    for c in &from {
                        let wanted = last.is_none_or(|q| {
                            c.col
                                .qual
                                .as_deref()
                                .is_some_and(|cq| cq.eq_ignore_ascii_case(&q.value))
                        });
                        if wanted {
                            out.push(StaticColumn {
                                col: Col { qual: None, ..c.col.clone() },
                                ..c.clone()
                            });
                        }
                    }
                }
                SelectItem::Expr { expr, alias } => {
                    let name = alias.as_ref().map_or_else(|| expr_name(expr), |a| a.value.clone());
                    let column = match &expr.kind {
                        ExprKind::Column(parts) => match find_column(&named, parts).ok()? {
                            Some(i) => Some(from[i].clone()),
                            // A column of the enclosing query.
                            None => find_column(outer, parts)
                                .ok()?
                                .map(|i| StaticColumn::of_source(outer[i].clone(), None)),
                        },
                        _ => None,
                    };
                    let column = match column {
                        Some(c) => StaticColumn { col: Col { qual: None, name, ..c.col }, ..c },
                        None => {
                            let ty = self
                                .exact_type(expr, &cols)
                                .or_else(|| loose.then(|| self.static_type(expr, &cols)).flatten());
                            let collation =
                                label_in(expr, &cols).ok().and_then(|label| label.collation());
                            let col = Col {
                                qual: None,
                                name,
                                ty: ty.unwrap_or(SqlType::Int),
                                // A literal other than NULL is never NULL.
                                nullable: !matches!(
                                    &expr.kind,
                                    ExprKind::Literal(l) if *l != Literal::Null
                                ),
                                hidden: ty.is_none(),
                                collation,
                                declared: self.declared_type_of(expr, &cols),
                            };
                            StaticColumn::expression(col)
                        }
                    };
                    out.push(column);
                }
                SelectItem::Assign { .. } => return None,
            }
        }
        Some(out)
    }

    fn source_columns(
        &self,
        src: &TableSource,
        outer: &[Col],
        loose: bool,
    ) -> Option<Vec<StaticColumn>> {
        match src {
            TableSource::Table { name, alias, .. } => {
                let qual = &alias.as_ref().unwrap_or(&name.name).value;
                if name.schema.is_none() && name.database.is_none() {
                    let lower = name.name.value.to_ascii_lowercase();
                    if let Some((_, set)) = self.ctes.iter().rev().find(|(n, _)| *n == lower) {
                        return Some(set.columns.iter().map(|c| cte_column(c, qual)).collect());
                    }
                }
                let (db, object) = self.resolve_relation_object(name).ok()?;
                let Object::Table(def) = &*object else { return None };
                let sources = table_sources(db.name(), def);
                Some(
                    table_cols(def, qual)
                        .into_iter()
                        .zip(sources)
                        .map(|(col, source)| StaticColumn::of_source(col, Some(source)))
                        .collect(),
                )
            }
            TableSource::Variable { name, alias } => {
                let qual = alias.as_ref().map_or(name.as_str(), |a| a.value.as_str());
                let t = self.resolve_table_variable(name, qual).ok()?;
                Some(
                    table_cols(&t.def, qual)
                        .into_iter()
                        .map(|col| StaticColumn::of_source(col, None))
                        .collect(),
                )
            }
            TableSource::Derived { query, alias, columns } => {
                let mut cols = self.query_columns(query, outer, loose)?;
                for c in &mut cols {
                    c.col.qual = Some(alias.value.clone());
                }
                for (c, n) in cols.iter_mut().zip(columns) {
                    c.col.name = n.value.clone();
                }
                Some(cols)
            }
            TableSource::Values { rows, alias, columns } => {
                let width = rows.first().map_or(0, Vec::len);
                Some(
                    (0..width)
                        .map(|i| {
                            let name = columns.get(i).map_or(String::new(), |c| c.value.clone());
                            let ty = loose
                                .then(|| {
                                    rows.iter()
                                        .filter_map(|r| r.get(i))
                                        .filter_map(|e| self.static_type(e, &[]))
                                        .reduce(common_type)
                                })
                                .flatten();
                            match ty {
                                Some(ty) => StaticColumn::expression(Col::new(
                                    Some(&alias.value),
                                    &name,
                                    ty,
                                )),
                                None => StaticColumn::unknown(name),
                            }
                        })
                        .collect(),
                )
            }
            TableSource::Join(j) => {
                let mut left = self.source_columns(&j.left, outer, loose)?;
                let applied = matches!(j.kind, JoinKind::CrossApply | JoinKind::OuterApply);
                // APPLY's right side sees the left side's columns.
                let right_outer: Vec<Col> = if applied {
                    left.iter().map(|c| c.col.clone()).chain(outer.iter().cloned()).collect()
                } else {
                    outer.to_vec()
                };
                let mut right = self.source_columns(&j.right, &right_outer, loose)?;
                let (left_null, right_null) = j.kind.null_extended();
                for c in left.iter_mut().filter(|_| left_null) {
                    c.col.nullable = true;
                }
                for c in right.iter_mut().filter(|_| right_null) {
                    c.col.nullable = true;
                }
                left.extend(right);
                Some(left)
            }
            _ => None,
        }
    }

    /// The type of `e`'s values when the expression alone says it exactly, whatever the
    /// values: a column, variable, CAST or CONVERT; MIN and MAX of one; COUNT; SUM and AVG by
    /// SQL Server's rules ("SUM", "AVG" in the T-SQL reference); a scalar subquery's column
    /// when that is one of these. `cols` are the columns its column references name.
    pub(crate) fn exact_type(&self, e: &Expr, cols: &[Col]) -> Option<SqlType> {
        match &e.kind {
            ExprKind::Column(parts) => find_column(cols, parts).ok().flatten().map(|i| cols[i].ty),
            ExprKind::Cast(_) | ExprKind::Convert(_) | ExprKind::Variable(_) => {
                self.declared_type(e)
            }
            ExprKind::Subquery(q) => {
                let first = self.query_columns(q, cols, false)?.into_iter().next()?;
                (!first.col.hidden).then_some(first.col.ty)
            }
            ExprKind::Function(f)
                if f.name.schema.is_none() && f.over.is_none() && f.within_group.is_empty() =>
            {
                let args = match &f.args {
                    FunctionArgs::List { args, .. } => args.as_slice(),
                    FunctionArgs::None | FunctionArgs::Star => &[],
                };
                match (f.name.name.value.to_ascii_uppercase().as_str(), args) {
                    ("COUNT", _) => Some(SqlType::Int),
                    ("COUNT_BIG", _) => Some(SqlType::BigInt),
                    ("MIN" | "MAX", [arg]) => self.exact_type(arg, cols),
                    ("SUM", [arg]) => match self.exact_type(arg, cols)? {
                        SqlType::TinyInt | SqlType::SmallInt | SqlType::Int => Some(SqlType::Int),
                        SqlType::Decimal { scale, .. } => {
                            Some(SqlType::Decimal { precision: 38, scale })
                        }
                        t @ (SqlType::BigInt | SqlType::Money | SqlType::Float) => Some(t),
                        SqlType::Real => Some(SqlType::Float),
                        _ => None,
                    },
                    ("AVG", [arg]) => match self.exact_type(arg, cols)? {
                        SqlType::TinyInt | SqlType::SmallInt | SqlType::Int => Some(SqlType::Int),
                        t @ (SqlType::BigInt | SqlType::Money | SqlType::Float) => Some(t),
                        SqlType::Real => Some(SqlType::Float),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// A CTE's column (its rows are made before the statement runs) as a column of `qual`.
fn cte_column(c: &crate::exec::ColumnInfo, qual: &str) -> StaticColumn {
    let col = Col {
        nullable: c.nullable,
        collation: c.collation.and_then(|n| collation_ref(n).ok()),
        declared: c.declared,
        ..Col::new(Some(qual), &c.name, c.ty)
    };
    StaticColumn::of_source(col, None)
}

/// Where each column of table `def` of database `database` comes from.
pub(crate) fn table_sources(database: &str, def: &TableDef) -> Vec<Arc<ColumnSource>> {
    def.columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            Arc::new(ColumnSource {
                database: database.to_string(),
                schema: def.schema.clone(),
                table: def.name.clone(),
                column: c.name.clone(),
                identity: c.identity.is_some(),
                computed: c.computed.is_some(),
                rowversion: c.rowversion,
                unique_key: def.indexes.iter().any(|ix| ix.unique && ix.columns.contains(&i)),
            })
        })
        .collect()
}

impl Run<'_> {
    /// A column reference in `body`'s SELECTs (their select lists, ON, WHERE, GROUP BY and
    /// HAVING clauses, subqueries left out) that names no column of their sources, as SQL
    /// Server's error 207 or 4104 at compile time (209 for an ambiguous one); None when every
    /// one binds, or when a source cannot be described from the catalog (the statement's run
    /// reports it then).
    pub(crate) fn unbound_column(&self, body: &QueryBody) -> Option<SqlError> {
        match body {
            QueryBody::Select(sel) => {
                let mut cols = Vec::new();
                for src in &sel.from {
                    let source = self.source_columns(src, &[], true)?;
                    cols.extend(source.into_iter().map(|c| Col { hidden: false, ..c.col }));
                }
                let mut exprs: Vec<&Expr> = sel
                    .items
                    .iter()
                    .filter_map(|i| match i {
                        SelectItem::Expr { expr, .. } => Some(expr),
                        _ => None,
                    })
                    .collect();
                exprs.extend(sel.where_clause.iter().chain(&sel.group_by).chain(&sel.having));
                let mut pending: Vec<&TableSource> = sel.from.iter().collect();
                while let Some(source) = pending.pop() {
                    if let TableSource::Join(j) = source {
                        exprs.extend(j.on.iter());
                        pending.push(&j.left);
                        pending.push(&j.right);
                    }
                }
                exprs.into_iter().find_map(|e| first_unbound(e, &cols))
            }
            QueryBody::SetOperation { left, right, .. } => {
                self.unbound_column(left).or_else(|| self.unbound_column(right))
            }
            QueryBody::Parenthesized(q) => self.unbound_column(&q.body),
        }
    }
}

/// The error of the first column reference in `e` that names none of `cols`.
fn first_unbound(e: &Expr, cols: &[Col]) -> Option<SqlError> {
    first_refused(e, &|parts| match find_column(cols, parts) {
        Ok(Some(_)) => None,
        Ok(None) if parts.len() == 1 => {
            Some(SqlError::new(207, format!("Invalid column name '{}'.", parts[0].value)))
        }
        Ok(None) => {
            let name: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
            Some(SqlError::new(
                4104,
                format!("The multi-part identifier \"{}\" could not be bound.", name.join(".")),
            ))
        }
        Err(e) => Some(e),
    })
}

/// The error `resolve` gives for the first column reference in `e` that it refuses,
/// subqueries left out, as are the names that are no column: `$IDENTITY` and `$ROWGUID`
/// (the table's identity or ROWGUIDCOL column), a function's bare-word argument
/// (`DATEADD(day, ...)`) and the IDENTITY function's type.
pub(crate) fn first_refused(
    e: &Expr,
    resolve: &dyn Fn(&[Ident]) -> Option<SqlError>,
) -> Option<SqlError> {
    match &e.kind {
        ExprKind::Column(parts) => {
            if parts.last().is_none_or(|p| p.value.starts_with('$')) {
                return None;
            }
            resolve(parts)
        }
        // `IDENTITY(INT, 1, 1)` names a type, and is refused (177) where it does not belong.
        ExprKind::Function(f)
            if f.name.schema.is_none() && f.name.name.value.eq_ignore_ascii_case("IDENTITY") =>
        {
            None
        }
        ExprKind::Function(f) => {
            let FunctionArgs::List { args, .. } = &f.args else { return None };
            let bare = registry::lookup(&f.name.name.value)
                .filter(|_| f.name.schema.is_none())
                .and_then(|b| b.bare_word);
            args.iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != bare)
                .find_map(|(_, a)| first_refused(a, resolve))
        }
        _ => {
            let mut found = None;
            visit_children(e, &mut |child| {
                if found.is_none() {
                    found = first_refused(child, resolve);
                }
            });
            found
        }
    }
}
