//! `sp_describe_undeclared_parameters`: the types of a batch's parameters that its `@params`
//! does not declare, deduced from where they are used. mssql-jdbc's
//! `PreparedStatement.getParameterMetaData()` asks this way.
//!
//! Walden's deduction is SQL Server's simple cases: a parameter that is a value of an
//! `INSERT ... VALUES` row, or an item of an `INSERT ... SELECT`'s select list, takes its
//! column's type; one assigned to a column by `UPDATE ... SET` or a MERGE's `WHEN ... THEN
//! UPDATE SET` / `THEN INSERT`, the column's; one compared with a column (`=`, `<>`, `<`, `>`,
//! `<=`, `>=`, `IN`, `BETWEEN`, `LIKE`), or added to or subtracted from one, the column's.
//! The columns are those of the statement's tables and, inside a subquery (`IN (SELECT ...)`,
//! `EXISTS (...)`, a scalar subquery, a derived table), the subquery's own tables first. A
//! column declared with a type Walden holds as another (SMALLDATETIME, SMALLMONEY, TEXT,
//! NTEXT, IMAGE) types its parameter as the type it was declared with, as SQL Server does. A
//! parameter used nowhere that says its type is NVARCHAR(4000), the type drivers send text as.

use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, TableDef};
use walden_engine::types::{DeclaredType, Len, SqlType, Value};

use crate::ast::{
    Assignment, AssignmentTarget, BinaryOp, Expr, ExprKind, InsertSource, MergeAction, Query,
    QueryBody, Select, SelectItem, Statement, StatementKind, TableSource, TableTarget,
};
use crate::exec::dml::insert_targets;
use crate::exec::eval::is_comparison;
use crate::exec::execute::query::visit_children;
use crate::exec::session::Run;
use crate::exec::sysviews::{max_length, precision, scale};
use crate::exec::{ColumnInfo, RowSet, SqlError};
use crate::parse_batch;

/// A parameter's deduced type: the type Walden holds its values as, and the type its column
/// was declared with when that is another (a SMALLDATETIME column's DATETIME).
#[derive(Debug, Clone, Copy)]
struct ParamType {
    ty: SqlType,
    declared: Option<DeclaredType>,
}

impl ParamType {
    fn of_column(c: &ColumnDef) -> ParamType {
        ParamType { ty: c.ty, declared: c.declared }
    }
}

/// What a parameter was found to be: its name, where it first appears, and its type if the
/// context said.
struct Found {
    name: String,
    at: usize,
    ty: Option<ParamType>,
}

/// A table of the statement, by the names its columns may be qualified with.
#[derive(Clone)]
struct Scope {
    names: Vec<String>,
    def: Arc<TableDef>,
}

impl Run<'_> {
    /// `sp_describe_undeclared_parameters @tsql [, @params]`: one row per parameter of `tsql`
    /// that `params` does not declare, in order of first use.
    pub(crate) fn describe_undeclared_parameters(
        &mut self,
        tsql: &str,
        params: &str,
    ) -> Result<RowSet, SqlError> {
        let batch = parse_batch(tsql).map_err(SqlError::from)?;
        let declared: Vec<String> = params
            .split(',')
            .filter_map(|p| p.split_whitespace().next())
            .map(str::to_ascii_lowercase)
            .collect();
        let mut found = Vec::new();
        for st in &batch.statements {
            self.describe_statement(st, &mut found)?;
        }
        found.retain(|f| !declared.contains(&f.name.to_ascii_lowercase()));
        found.sort_by_key(|f| f.at);
        // Each parameter once, in order of first use; a later use may say the type an earlier
        // one did not.
        let mut parameters: Vec<(String, Option<ParamType>)> = Vec::new();
        for f in found {
            match parameters.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(&f.name)) {
                Some((_, ty)) => *ty = ty.or(f.ty),
                None => parameters.push((f.name, f.ty)),
            }
        }
        let rows = parameters
            .iter()
            .enumerate()
            .map(|(i, (name, ty))| parameter_row(i + 1, name, ty.unwrap_or(default_type())))
            .collect();
        Ok(RowSet { columns: parameter_columns(), rows })
    }

    fn describe_statement(
        &mut self,
        st: &Statement,
        found: &mut Vec<Found>,
    ) -> Result<(), SqlError> {
        match &st.kind {
            StatementKind::Insert(insert) => {
                let TableTarget::Table(name) = &insert.target else { return Ok(()) };
                let t = self.resolve_table(name, &name.name.value)?;
                // The columns the statement itself would fill, so that describing it fails
                // as running it would (207, 544, 8101).
                let targets = insert_targets(&t, &insert.columns, self.identity_insert_on(&t))?;
                let scope = Scope { names: vec![name.name.value.to_ascii_lowercase()], def: t.def };
                let columns: Vec<&ColumnDef> =
                    targets.iter().map(|&c| &scope.def.columns[c]).collect();
                match &insert.source {
                    InsertSource::Values(rows) => {
                        let scopes = [scope.clone()];
                        for row in rows {
                            self.values_parameters(row, &columns, &scopes, found)?;
                        }
                    }
                    InsertSource::Query(q) => {
                        // A select list's bare parameter takes the type of the column its
                        // position fills.
                        if let QueryBody::Select(sel) = &q.body {
                            for (item, c) in sel.items.iter().zip(&columns) {
                                if let SelectItem::Expr { expr, .. } = item {
                                    if let ExprKind::Variable(v) = &expr.kind {
                                        found.push(Found {
                                            name: v.name.clone(),
                                            at: expr.span.start,
                                            ty: Some(ParamType::of_column(c)),
                                        });
                                    }
                                }
                            }
                        }
                        self.query_parameters(q, &[], found)?;
                    }
                    _ => {}
                }
            }
            StatementKind::Update(update) => {
                let scopes = self.scopes_with_target(&update.from, &update.target, None)?;
                self.assignment_parameters(&update.assignments, &scopes, found)?;
                self.expr_parameters(update.where_clause.iter(), &scopes, found)?;
            }
            StatementKind::Delete(delete) => {
                let scopes = self.scopes_with_target(&delete.from, &delete.target, None)?;
                self.expr_parameters(delete.where_clause.iter(), &scopes, found)?;
            }
            StatementKind::Merge(merge) => {
                let TableTarget::Table(name) = &merge.target else { return Ok(()) };
                let t = self.resolve_table(name, &name.name.value)?;
                let targets = self.scopes_with_target(
                    std::slice::from_ref(&merge.source),
                    &merge.target,
                    merge.alias.as_ref(),
                )?;
                self.source_parameters(std::slice::from_ref(&merge.source), &[], found)?;
                self.expr_parameters([&merge.on], &targets, found)?;
                for clause in &merge.clauses {
                    self.expr_parameters(clause.condition.iter(), &targets, found)?;
                    match &clause.action {
                        MergeAction::Update(assignments) => {
                            self.assignment_parameters(assignments, &targets, found)?
                        }
                        MergeAction::Insert { columns, values: Some(values) } => {
                            let filled = insert_targets(&t, columns, self.identity_insert_on(&t))?;
                            let columns: Vec<&ColumnDef> =
                                filled.iter().map(|&c| &t.def.columns[c]).collect();
                            self.values_parameters(values, &columns, &targets, found)?;
                        }
                        MergeAction::Insert { values: None, .. } | MergeAction::Delete => {}
                    }
                }
            }
            StatementKind::Select(s) => self.query_parameters(&s.query, &[], found)?,
            StatementKind::Block(body) => {
                for st in body {
                    self.describe_statement(st, found)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The parameters of a row of values filling `columns`: a bare parameter takes its
    /// column's type, one inside an expression what the expression says.
    fn values_parameters(
        &mut self,
        row: &[Expr],
        columns: &[&ColumnDef],
        scopes: &[Scope],
        found: &mut Vec<Found>,
    ) -> Result<(), SqlError> {
        for (i, e) in row.iter().enumerate() {
            match (&e.kind, columns.get(i)) {
                (ExprKind::Variable(v), Some(c)) => found.push(Found {
                    name: v.name.clone(),
                    at: e.span.start,
                    ty: Some(ParamType::of_column(c)),
                }),
                _ => self.expr_parameters([e], scopes, found)?,
            }
        }
        Ok(())
    }

    /// The parameters of `SET` items: one assigned to a column takes the column's type.
    fn assignment_parameters(
        &mut self,
        assignments: &[Assignment],
        scopes: &[Scope],
        found: &mut Vec<Found>,
    ) -> Result<(), SqlError> {
        let refs: Vec<&Scope> = scopes.iter().collect();
        for a in assignments {
            let column = match &a.target {
                AssignmentTarget::Column(parts)
                | AssignmentTarget::VariableAndColumn { column: parts, .. } => {
                    column_type(parts, &refs)
                }
                AssignmentTarget::Variable(_) => None,
            };
            match (&a.value.kind, column) {
                (ExprKind::Variable(v), Some(ty)) => {
                    found.push(Found { name: v.name.clone(), at: a.value.span.start, ty: Some(ty) })
                }
                _ => self.expr_parameters([&a.value], scopes, found)?,
            }
        }
        Ok(())
    }

    /// The parameters of expressions over `scopes`, then those of their subqueries, each
    /// over its own tables and `scopes` (outer references).
    fn expr_parameters<'e>(
        &mut self,
        exprs: impl IntoIterator<Item = &'e Expr>,
        scopes: &[Scope],
        found: &mut Vec<Found>,
    ) -> Result<(), SqlError> {
        let refs: Vec<&Scope> = scopes.iter().collect();
        let mut subqueries = Vec::new();
        for e in exprs {
            deduce(e, &refs, found, &mut subqueries);
        }
        for q in subqueries {
            self.query_parameters(q, scopes, found)?;
        }
        Ok(())
    }

    /// The parameters of a query whose outer references see `outer`.
    fn query_parameters(
        &mut self,
        q: &Query,
        outer: &[Scope],
        found: &mut Vec<Found>,
    ) -> Result<(), SqlError> {
        self.body_parameters(&q.body, outer, found)
    }

    fn body_parameters(
        &mut self,
        body: &QueryBody,
        outer: &[Scope],
        found: &mut Vec<Found>,
    ) -> Result<(), SqlError> {
        match body {
            QueryBody::Select(sel) => {
                // The query's own tables first: an unqualified name is theirs before an
                // outer table's.
                let mut scopes = self.scopes_of(&sel.from)?;
                scopes.extend(outer.iter().cloned());
                self.select_parameters(sel, &scopes, found)
            }
            QueryBody::SetOperation { left, right, .. } => {
                self.body_parameters(left, outer, found)?;
                self.body_parameters(right, outer, found)
            }
            QueryBody::Parenthesized(q) => self.query_parameters(q, outer, found),
        }
    }

    /// The parameters of a SELECT's items, FROM clause, WHERE and HAVING.
    fn select_parameters(
        &mut self,
        sel: &Select,
        scopes: &[Scope],
        found: &mut Vec<Found>,
    ) -> Result<(), SqlError> {
        let items = sel.items.iter().filter_map(|item| match item {
            SelectItem::Expr { expr, .. } => Some(expr),
            _ => None,
        });
        self.expr_parameters(items, scopes, found)?;
        self.source_parameters(&sel.from, scopes, found)?;
        self.expr_parameters(sel.where_clause.iter().chain(&sel.having), scopes, found)
    }

    /// The parameters of a FROM clause's sources: their joins' `ON` conditions and their derived
    /// tables' queries, over `scopes`.
    fn source_parameters(
        &mut self,
        from: &[TableSource],
        scopes: &[Scope],
        found: &mut Vec<Found>,
    ) -> Result<(), SqlError> {
        let mut pending: Vec<&TableSource> = from.iter().collect();
        while let Some(source) = pending.pop() {
            match source {
                TableSource::Join(j) => {
                    self.expr_parameters(j.on.iter(), scopes, found)?;
                    pending.push(&j.left);
                    pending.push(&j.right);
                }
                TableSource::Derived { query, .. } => {
                    self.query_parameters(query, scopes, found)?
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The tables of an UPDATE's, DELETE's or MERGE's FROM (USING) clause and the table it
    /// changes, under its name and `alias`, when that is a table of the database.
    fn scopes_with_target(
        &mut self,
        from: &[TableSource],
        target: &TableTarget,
        alias: Option<&crate::ast::Ident>,
    ) -> Result<Vec<Scope>, SqlError> {
        let mut scopes = self.scopes_of(from)?;
        if let TableTarget::Table(name) = target {
            let t = self.resolve_table(name, &name.name.value)?;
            let mut names = vec![name.name.value.to_ascii_lowercase()];
            names.extend(alias.map(|a| a.value.to_ascii_lowercase()));
            scopes.push(Scope { names, def: t.def });
        }
        Ok(scopes)
    }

    /// The named tables of a FROM clause (joins included), by name and alias.
    fn scopes_of(&mut self, from: &[TableSource]) -> Result<Vec<Scope>, SqlError> {
        let mut out = Vec::new();
        let mut pending: Vec<&TableSource> = from.iter().collect();
        while let Some(source) = pending.pop() {
            match source {
                TableSource::Table { name, alias, .. } => {
                    let t = self.resolve_table(name, &name.name.value)?;
                    let mut names = vec![name.name.value.to_ascii_lowercase()];
                    names.extend(alias.iter().map(|a| a.value.to_ascii_lowercase()));
                    out.push(Scope { names, def: t.def });
                }
                TableSource::Join(j) => {
                    pending.push(&j.left);
                    pending.push(&j.right);
                }
                _ => {}
            }
        }
        Ok(out)
    }
}

/// Every parameter of `e`, typed from a column it is compared with or combined with; the
/// subqueries met are left in `subqueries`, for the caller to describe over their own
/// tables.
fn deduce<'e>(
    e: &'e Expr,
    scopes: &[&Scope],
    found: &mut Vec<Found>,
    subqueries: &mut Vec<&'e Query>,
) {
    let partner = |a: &Expr, b: &Expr| match (&a.kind, &b.kind) {
        (ExprKind::Variable(v), ExprKind::Column(parts)) => {
            Some(Found { name: v.name.clone(), at: a.span.start, ty: column_type(parts, scopes) })
        }
        _ => None,
    };
    match &e.kind {
        ExprKind::Binary { op, left, right } if typing_op(*op) => {
            found.extend(partner(left, right));
            found.extend(partner(right, left));
        }
        ExprKind::InList { expr, list, .. } => {
            found.extend(list.iter().filter_map(|item| partner(item, expr)));
        }
        ExprKind::Between { expr, low, high, .. } => {
            found.extend(partner(low, expr));
            found.extend(partner(high, expr));
        }
        ExprKind::Like { expr, pattern, .. } => found.extend(partner(pattern, expr)),
        ExprKind::Variable(v) => {
            found.push(Found { name: v.name.clone(), at: e.span.start, ty: None })
        }
        ExprKind::InSubquery { subquery, .. }
        | ExprKind::Exists(subquery)
        | ExprKind::Subquery(subquery) => subqueries.push(subquery),
        _ => {}
    }
    visit_children(e, &mut |child| deduce(child, scopes, found, subqueries));
}

/// The operators whose operands take each other's type for a parameter: comparisons, `+`, `-`.
fn typing_op(op: BinaryOp) -> bool {
    is_comparison(op) || matches!(op, BinaryOp::Add | BinaryOp::Subtract)
}

/// The type of the column `parts` names among `scopes` (`t.c` by table name or alias, `c` in
/// the first that has it).
fn column_type(parts: &[crate::ast::Ident], scopes: &[&Scope]) -> Option<ParamType> {
    let (qualifier, column) = match parts {
        [.., q, c] => (Some(q.value.to_ascii_lowercase()), c),
        [c] => (None, c),
        [] => return None,
    };
    scopes
        .iter()
        .filter(|s| qualifier.as_ref().is_none_or(|q| s.names.contains(q)))
        .find_map(|s| s.def.columns.iter().find(|d| d.name.eq_ignore_ascii_case(&column.value)))
        .map(ParamType::of_column)
}

/// NVARCHAR(4000): what a parameter nothing types is taken as.
fn default_type() -> ParamType {
    ParamType { ty: SqlType::NVarChar(Len::N(4000)), declared: None }
}
/// `sp_describe_undeclared_parameters`' columns, in SQL Server's order.
fn parameter_columns() -> Vec<ColumnInfo> {
    let col = |name: &str, ty: SqlType, nullable: bool| ColumnInfo {
        name: name.into(),
        ty,
        nullable,
        collation: None,
        declared: None,
    };
    let sysname = SqlType::NVarChar(Len::N(128));
    vec![
        col("parameter_ordinal", SqlType::Int, false),
        col("name", sysname, false),
        col("suggested_system_type_id", SqlType::Int, false),
        col("suggested_system_type_name", SqlType::NVarChar(Len::N(256)), true),
        col("suggested_max_length", SqlType::SmallInt, false),
        col("suggested_precision", SqlType::TinyInt, false),
        col("suggested_scale", SqlType::TinyInt, false),
        col("suggested_user_type_id", SqlType::Int, true),
        col("suggested_user_type_database", sysname, true),
        col("suggested_user_type_schema", sysname, true),
        col("suggested_user_type_name", sysname, true),
        col("suggested_assembly_qualified_type_name", SqlType::NVarChar(Len::N(4000)), true),
        col("suggested_xml_collection_id", SqlType::Int, true),
        col("suggested_xml_collection_database", sysname, true),
        col("suggested_xml_collection_schema", sysname, true),
        col("suggested_xml_collection_name", sysname, true),
        col("suggested_is_xml_document", SqlType::Bit, false),
        col("suggested_is_case_sensitive", SqlType::Bit, false),
        col("suggested_is_fixed_length_clr_type", SqlType::Bit, false),
        col("suggested_is_input", SqlType::Bit, false),
        col("suggested_is_output", SqlType::Bit, false),
        col("formal_parameter_name", sysname, true),
        col("suggested_tds_type_id", SqlType::Int, false),
        col("suggested_tds_length", SqlType::Int, false),
    ]
}

/// One row of the result: parameter `ordinal` named `name`, of type `ty`, described as the
/// type it was declared with.
fn parameter_row(ordinal: usize, name: &str, ty: ParamType) -> Vec<Value> {
    let (id, type_name, max_length, (precision, scale)) = match ty.declared {
        Some(d) => (d.system_type_id(), d.name().to_string(), d.max_length(), d.precision_scale()),
        None => (
            ty.ty.system_type_id(),
            ty.ty.to_string(),
            i16::try_from(max_length(ty.ty)).unwrap_or(-1),
            (precision(ty.ty), scale(ty.ty)),
        ),
    };
    let id = i32::from(id);
    let (tds_type, tds_length) = tds_type(ty.ty, ty.declared);
    vec![
        Value::Int(i32::try_from(ordinal).unwrap_or(i32::MAX)),
        Value::NStr(name.to_string()),
        Value::Int(id),
        Value::NStr(type_name),
        Value::SmallInt(max_length),
        Value::TinyInt(precision),
        Value::TinyInt(scale),
        Value::Int(id),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Bit(false),
        Value::Bit(false),
        Value::Bit(false),
        Value::Bit(true),
        Value::Bit(false),
        Value::Null,
        Value::Int(tds_type),
        Value::Int(tds_length),
    ]
}

/// The TDS type ([MS-TDS] 2.2.5.4) and length a value of `ty`, declared as `declared`, goes
/// out with: the nullable types, their byte length (-1 for a PLP `MAX` type, the text types'
/// 2^31 - 1 or 2^30 - 1 characters).
pub(crate) fn tds_type(ty: SqlType, declared: Option<DeclaredType>) -> (i32, i32) {
    match declared {
        Some(DeclaredType::SmallDateTime) => (0x6F, 4),
        Some(DeclaredType::SmallMoney) => (0x6E, 4),
        Some(DeclaredType::Text) => (0x23, i32::MAX),
        Some(DeclaredType::NText) => (0x63, i32::MAX - 1),
        Some(DeclaredType::Image) => (0x22, i32::MAX),
        None => (i32::from(tds_type_id(ty)), i32::try_from(max_length(ty)).unwrap_or(-1)),
    }
}

/// The TDS type id ([MS-TDS] 2.2.5.4) a value of `ty` travels as in a parameter.
pub(crate) fn tds_type_id(ty: SqlType) -> u8 {
    match ty {
        SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt => 0x26,
        SqlType::Bit => 0x68,
        SqlType::Real | SqlType::Float => 0x6D,
        SqlType::Money => 0x6E,
        SqlType::DateTime => 0x6F,
        SqlType::Decimal { .. } => 0x6A,
        SqlType::Date => 0x28,
        SqlType::Time(_) => 0x29,
        SqlType::DateTime2(_) => 0x2A,
        SqlType::DateTimeOffset(_) => 0x2B,
        SqlType::UniqueIdentifier => 0x24,
        SqlType::Char(_) => 0xAF,
        SqlType::VarChar(_) => 0xA7,
        SqlType::NChar(_) => 0xEF,
        SqlType::NVarChar(_) => 0xE7,
        SqlType::Binary(_) => 0xAD,
        SqlType::VarBinary(_) => 0xA5,
        SqlType::Variant => 0x62,
        SqlType::Xml => 0xF1,
    }
}
