//! `sp_describe_undeclared_parameters`: the types of a batch's parameters that its `@params`
//! does not declare, deduced from where they are used. mssql-jdbc's
//! `PreparedStatement.getParameterMetaData()` asks this way.
//!
//! Walden's deduction is SQL Server's simple cases: a parameter that is a value of an
//! `INSERT ... VALUES` row takes its column's type; one assigned to a column by `UPDATE ... SET`
//! the column's; one compared with a column (`=`, `<>`, `<`, `>`, `<=`, `>=`, `IN`, `BETWEEN`,
//! `LIKE`), or added to or subtracted from one, the column's. The columns are those of the
//! statement's tables. A parameter used nowhere that says its type is NVARCHAR(4000), the type
//! drivers send text as.

use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, TableDef};
use walden_engine::types::{Len, SqlType, Value};

use crate::ast::{
    AssignmentTarget, BinaryOp, Expr, ExprKind, InsertSource, QueryBody, SelectItem, Statement,
    StatementKind, TableSource, TableTarget,
};
use crate::exec::dml::insert_targets;
use crate::exec::eval::is_comparison;
use crate::exec::query::visit_children;
use crate::exec::session::Run;
use crate::exec::sysviews::{max_length, precision, scale};
use crate::exec::{ColumnInfo, RowSet, SqlError};
use crate::parse_batch;

/// What a parameter was found to be: its name, where it first appears, and its type if the
/// context said.
struct Found {
    name: String,
    at: usize,
    ty: Option<SqlType>,
}

/// A table of the statement, by the names its columns may be qualified with.
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
        let mut parameters: Vec<(String, Option<SqlType>)> = Vec::new();
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
                        for row in rows {
                            for (i, e) in row.iter().enumerate() {
                                match (&e.kind, columns.get(i)) {
                                    (ExprKind::Variable(v), Some(c)) => found.push(Found {
                                        name: v.name.clone(),
                                        at: e.span.start,
                                        ty: Some(c.ty),
                                    }),
                                    _ => deduce(e, &[&scope], found),
                                }
                            }
                        }
                    }
                    InsertSource::Query(q) => {
                        if let QueryBody::Select(sel) = &q.body {
                            let scopes = self.scopes_of(&sel.from)?;
                            select_parameters(sel, &scopes, found);
                        }
                    }
                    _ => {}
                }
            }
            StatementKind::Update(update) => {
                let scopes = self.scopes_with_target(&update.from, &update.target)?;
                let refs: Vec<&Scope> = scopes.iter().collect();
                for a in &update.assignments {
                    let column = match &a.target {
                        AssignmentTarget::Column(parts)
                        | AssignmentTarget::VariableAndColumn { column: parts, .. } => {
                            column_type(parts, &refs)
                        }
                        AssignmentTarget::Variable(_) => None,
                    };
                    match (&a.value.kind, column) {
                        (ExprKind::Variable(v), Some(ty)) => found.push(Found {
                            name: v.name.clone(),
                            at: a.value.span.start,
                            ty: Some(ty),
                        }),
                        _ => deduce(&a.value, &refs, found),
                    }
                }
                if let Some(w) = &update.where_clause {
                    deduce(w, &refs, found);
                }
            }
            StatementKind::Delete(delete) => {
                let scopes = self.scopes_with_target(&delete.from, &delete.target)?;
                let refs: Vec<&Scope> = scopes.iter().collect();
                if let Some(w) = &delete.where_clause {
                    deduce(w, &refs, found);
                }
            }
            StatementKind::Select(s) => {
                if let QueryBody::Select(sel) = &s.query.body {
                    let scopes = self.scopes_of(&sel.from)?;
                    select_parameters(sel, &scopes, found);
                }
            }
            StatementKind::Block(body) => {
                for st in body {
                    self.describe_statement(st, found)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The tables of an UPDATE's or DELETE's FROM clause and the table it changes, when that
    /// is a table of the database.
    fn scopes_with_target(
        &mut self,
        from: &[TableSource],
        target: &TableTarget,
    ) -> Result<Vec<Scope>, SqlError> {
        let mut scopes = self.scopes_of(from)?;
        if let TableTarget::Table(name) = target {
            let t = self.resolve_table(name, &name.name.value)?;
            scopes.push(Scope { names: vec![name.name.value.to_ascii_lowercase()], def: t.def });
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

/// The parameters of a SELECT's items, joins, WHERE and HAVING.
fn select_parameters(sel: &crate::ast::Select, scopes: &[Scope], found: &mut Vec<Found>) {
    let refs: Vec<&Scope> = scopes.iter().collect();
    for item in &sel.items {
        if let SelectItem::Expr { expr, .. } = item {
            deduce(expr, &refs, found);
        }
    }
    let mut pending: Vec<&TableSource> = sel.from.iter().collect();
    while let Some(source) = pending.pop() {
        if let TableSource::Join(j) = source {
            if let Some(on) = &j.on {
                deduce(on, &refs, found);
            }
            pending.push(&j.left);
            pending.push(&j.right);
        }
    }
    for e in sel.where_clause.iter().chain(&sel.having) {
        deduce(e, &refs, found);
    }
}

/// Every parameter of `e`, typed from a column it is compared with or combined with.
fn deduce(e: &Expr, scopes: &[&Scope], found: &mut Vec<Found>) {
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
        _ => {}
    }
    visit_children(e, &mut |child| deduce(child, scopes, found));
}

/// The operators whose operands take each other's type for a parameter: comparisons, `+`, `-`.
fn typing_op(op: BinaryOp) -> bool {
    is_comparison(op) || matches!(op, BinaryOp::Add | BinaryOp::Subtract)
}

/// The type of the column `parts` names among `scopes` (`t.c` by table name or alias, `c` in
/// any of them).
fn column_type(parts: &[crate::ast::Ident], scopes: &[&Scope]) -> Option<SqlType> {
    let (qualifier, column) = match parts {
        [.., q, c] => (Some(q.value.to_ascii_lowercase()), c),
        [c] => (None, c),
        [] => return None,
    };
    scopes
        .iter()
        .filter(|s| qualifier.as_ref().is_none_or(|q| s.names.contains(q)))
        .find_map(|s| s.def.columns.iter().find(|d| d.name.eq_ignore_ascii_case(&column.value)))
        .map(|d| d.ty)
}

/// NVARCHAR(4000): what a parameter nothing types is taken as.
fn default_type() -> SqlType {
    SqlType::NVarChar(Len::N(4000))
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

/// One row of the result: parameter `ordinal` named `name`, of type `ty`.
fn parameter_row(ordinal: usize, name: &str, ty: SqlType) -> Vec<Value> {
    let id = i32::from(ty.system_type_id());
    let max_length = max_length(ty);
    vec![
        Value::Int(i32::try_from(ordinal).unwrap_or(i32::MAX)),
        Value::NStr(name.to_string()),
        Value::Int(id),
        Value::NStr(ty.to_string()),
        Value::SmallInt(i16::try_from(max_length).unwrap_or(-1)),
        Value::TinyInt(precision(ty)),
        Value::TinyInt(scale(ty)),
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
        // TDS describes every parameter by its own type id; the nullable forms drivers send.
        Value::Int(i32::from(tds_type_id(ty))),
        Value::Int(i32::try_from(max_length).unwrap_or(-1)),
    ]
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
