//! `sp_describe_first_result_set @tsql [, @params [, @browse_information_mode]]` and the
//! table-valued function `sys.dm_exec_describe_first_result_set(@tsql, @params, @browse)`:
//! one row per column of the first result set a batch would send, described without sending
//! it. Tools and drivers ask this way for a query's columns before running it.
//!
//! The batch is not run, and no table is read. Its first statement that sends a result set (a
//! SELECT without INTO or variable assignments, looked for through `BEGIN ... END`, `TRY`
//! blocks and both branches of an `IF`) is described from its text and the catalog
//! (`Run::query_columns`): each column's type as the table declares it, an expression's type
//! by SQL Server's rules, after the batch's `DECLARE`s before it and the `@params`
//! declarations (both without their values, as SQL Server compiles them). Only a SELECT whose
//! columns cannot all be typed so (one over a view, a system view or a table-valued function,
//! or an expression whose type Walden knows only from its values) runs, under
//! `SET FMTONLY ON`, which sends no rows and changes nothing. A batch with no such statement
//! gives no rows.
//!
//! A column of a table (through derived tables too) says whether it is an identity column, a
//! computed column, and updatable (a table column that is neither, nor `rowversion`); an
//! expression is none of these. With `@browse_information_mode` 1 or 2 the `source_*`
//! columns name the table and column, `is_part_of_unique_key` says whether the column is in
//! a unique index or key, and the key columns of each table the SELECT reads that it does not
//! return are added after its columns with `is_hidden` 1, as SQL Server adds them for
//! browsing (`FOR BROWSE`). Mode 2 describes views as mode 1 does (Walden describes a view's
//! columns by running it, so they have no source).
//!
//! Errors are SQL Server's: a batch that does not parse gives the parse error and then 11501;
//! a statement that fails (an unknown table, 208; column, 207, found from the catalog
//! however many rows the table has) its error and then 11529. A browse mode other than 1 and
//! 2 describes as 0.
//!
//! Not described as SQL Server does: the first result set of a procedure or dynamic SQL the
//! batch EXECs (none is found there); a CTE's, table variable's and view's columns have no
//! source; the ORDER BY columns are NULL; `tds_collation_id` and `tds_collation_sort_id` are
//! NULL.

use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::types::{Len, SqlType, Value};

use crate::ast::{QueryBody, Select, SelectItem, Statement, StatementKind, TableSource};
use crate::exec::bind::describe::tds_type;
use crate::exec::bind::static_type::{table_sources, ColumnSource, StaticColumn};
use crate::exec::scalar;
use crate::exec::scalar::collation::DEFAULT_COLLATION;
use crate::exec::session::{Frame, Halt, Run, Step};
use crate::exec::sysviews::{max_length, precision, scale};
use crate::exec::{ColumnInfo, Message, Output, RowSet, SqlError};

/// The output of the described statement: its result set's columns, and the errors it
/// raised; nothing else reaches the client.
#[derive(Default)]
struct Described {
    columns: Option<Vec<ColumnInfo>>,
    errors: Vec<SqlError>,
}

impl Output for Described {
    fn result_set(&mut self, columns: &[ColumnInfo]) {
        if self.columns.is_none() {
            self.columns = Some(columns.to_vec());
        }
    }

    fn row(&mut self, _values: &[Value]) {}

    fn result_end(&mut self, _rows: u64) {}

    fn message(&mut self, message: &Message) {
        if !message.is_info() {
            self.errors.push(message.clone());
        }
    }

    fn done(&mut self, _rows: Option<u64>) {}
}

/// One described column: how the client would be told of it, where it comes from, and
/// whether it is a key column added for browsing.
struct DescribedColumn {
    info: ColumnInfo,
    /// The table column it is; None for an expression or where Walden does not know.
    source: Option<Arc<ColumnSource>>,
    /// Whether it is a column of a source, not an expression (with no `source`: a CTE's or
    /// table variable's, whose properties are not known; or not described statically).
    column: bool,
    hidden: bool,
}

impl DescribedColumn {
    fn of(c: StaticColumn, hidden: bool) -> DescribedColumn {
        let info = crate::exec::execute::query::column_info(&c.col);
        DescribedColumn { info, source: c.source, column: c.column, hidden }
    }
}

/// Why a batch could not be described: the errors it raised, the last of them 11501 (it
/// does not parse) or 11529 (every statement that would send the first result set fails).
pub(crate) struct Undescribed {
    errors: Vec<SqlError>,
}

impl Run<'_> {
    /// `sp_describe_first_result_set @tsql [, @params]`: the description, or the errors
    /// reported (the last one returned, for the caller to report as the procedure's).
    pub(crate) fn describe_first_result_set(
        &mut self,
        tsql: &str,
        params: Option<&str>,
        browse: &Value,
    ) -> Step<RowSet> {
        let browse = browse_mode(browse);
        match self.describe_first(tsql, params, browse)? {
            Ok(columns) => {
                let rows =
                    columns.iter().enumerate().map(|(i, c)| column_row(i + 1, c, browse)).collect();
                Ok(RowSet { columns: result_columns(), rows })
            }
            Err(Undescribed { mut errors }) => {
                let last = errors.pop().unwrap_or_else(|| SqlError::catalogued(11529, &[]));
                for e in errors {
                    self.report(e);
                }
                Err(last.into())
            }
        }
    }

    /// `sys.dm_exec_describe_first_result_set(@tsql, @params, @include_browse_information)`:
    /// the same rows with six more columns, `error_number` ... `error_type_desc`, NULL; or for
    /// a batch that cannot be described, one row of NULLs with its first error in them
    /// (`error_type` 2, SYNTAX, for a batch that does not parse, else 1, MISC). It raises no
    /// error but a cancel's.
    pub(crate) fn describe_first_result_set_function(
        &mut self,
        args: &[Value],
    ) -> Result<RowSet, SqlError> {
        let text =
            |i: usize| args.get(i).filter(|v| !v.is_null()).map(crate::exec::scalar::to_text);
        let mut columns = result_columns();
        columns.extend([
            ColumnInfo::new("error_number", SqlType::Int),
            ColumnInfo::new("error_severity", SqlType::Int),
            ColumnInfo::new("error_state", SqlType::Int),
            ColumnInfo::new("error_message", SqlType::NVarChar(Len::N(4000))),
            ColumnInfo::new("error_type", SqlType::Int),
            ColumnInfo::new("error_type_desc", SqlType::NVarChar(Len::N(60))),
        ]);
        let Some(tsql) = text(0) else {
            return Ok(RowSet { columns, rows: Vec::new() });
        };
        // @include_browse_information: a bit, mode 1 when set.
        let browse = match args.get(2).map(|v| scalar::convert(v.clone(), SqlType::Int, None)) {
            Some(Ok(Value::Int(n))) if n != 0 => 1,
            _ => 0,
        };
        let described = match self.describe_first(&tsql, text(1).as_deref(), browse) {
            Ok(d) => d,
            Err(Halt::Error(e)) => return Err(e),
            // Cancelled: the interruption point says so.
            Err(_) => {
                self.interruption_point()?;
                Ok(Vec::new())
            }
        };
        let rows = match described {
            Ok(described) => described
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let mut row = column_row(i + 1, c, browse);
                    row.extend(std::iter::repeat_n(Value::Null, 6));
                    row
                })
                .collect(),
            Err(Undescribed { errors }) => {
                let syntax = errors.last().is_some_and(|e| e.number == 11501);
                let first = &errors[0];
                let mut row = vec![Value::Null; columns.len() - 6];
                row.extend([
                    Value::Int(first.number),
                    Value::Int(i32::from(first.severity)),
                    Value::Int(i32::from(first.state)),
                    Value::NStr(first.message.clone()),
                    Value::Int(if syntax { 2 } else { 1 }),
                    Value::NStr(if syntax { "SYNTAX" } else { "MISC" }.into()),
                ]);
                vec![row]
            }
        };
        Ok(RowSet { columns, rows })
    }

    /// The columns of `tsql`'s first result set (see the module documentation), or why there
    /// are none to tell.
    fn describe_first(
        &mut self,
        tsql: &str,
        params: Option<&str>,
        browse: u8,
    ) -> Step<Result<Vec<DescribedColumn>, Undescribed>> {
        let batch = match crate::parse_batch(tsql) {
            Ok(batch) => batch,
            Err(e) => {
                let errors = vec![SqlError::from(e), SqlError::catalogued(11501, &[])];
                return Ok(Err(Undescribed { errors }));
            }
        };
        let mut statements = Vec::new();
        if !first_result_statements(&batch.statements, &mut statements) {
            return Ok(Ok(Vec::new()));
        }
        let mut body = match params.map(str::trim).filter(|p| !p.is_empty()) {
            Some(p) => match crate::parse_batch(&format!("DECLARE {p}")) {
                Ok(b) => b.statements,
                Err(e) => {
                    let errors = vec![SqlError::from(e), SqlError::catalogued(11501, &[])];
                    return Ok(Err(Undescribed { errors }));
                }
            },
            None => Vec::new(),
        };
        body.extend(statements);
        // The SELECT is the last statement; the DECLAREs before it declare its variables.
        let Some((select, declarations)) = body.split_last() else {
            return Ok(Ok(Vec::new()));
        };
        let mut described = Described::default();
        let mut columns = None;
        let result = {
            let mut inner = Run::new(&mut *self.s, &mut described);
            let fmtonly = std::mem::replace(&mut inner.s.opts.fmtonly, true);
            // The batch's variables are its own: a new scope, dropped after.
            inner.s.frames.push(Frame::default());
            let r = inner.module_body(declarations).and_then(|_| {
                if let Some(e) = inner.unbound_in(select) {
                    return Err(e.at_line(select.span.line).into());
                }
                columns = inner.static_description(select, browse);
                if columns.is_some() {
                    return Ok(crate::exec::session::Flow::Next);
                }
                inner.module_body(std::slice::from_ref(select))
            });
            inner.pop_frame();
            inner.s.opts.fmtonly = fmtonly;
            r
        };
        match result {
            Ok(_) | Err(Halt::Aborted | Halt::ScopeEnded) => {}
            Err(Halt::Error(e)) => described.errors.push(e),
            Err(Halt::Cancelled) => return Err(Halt::Cancelled),
        }
        if described.errors.is_empty() {
            let ran = || {
                let infos = described.columns.unwrap_or_default();
                infos
                    .into_iter()
                    .map(|info| DescribedColumn { info, source: None, column: true, hidden: false })
                    .collect()
            };
            return Ok(Ok(columns.unwrap_or_else(ran)));
        }
        let mut errors = described.errors;
        errors.push(SqlError::catalogued(11529, &[]));
        Ok(Err(Undescribed { errors }))
    }

    /// A column reference of `select` that binds to nothing (207, 4104), found from the
    /// catalog as SQL Server's compilation finds it, whatever rows the tables hold.
    fn unbound_in(&self, select: &Statement) -> Option<SqlError> {
        let StatementKind::Select(s) = &select.kind else { return None };
        self.unbound_column(&s.query.body)
    }

    /// `select`'s columns from its text and the catalog, if every one can be typed so; with
    /// `browse` 1 or 2, the key columns it leaves out after them, hidden.
    fn static_description(&self, select: &Statement, browse: u8) -> Option<Vec<DescribedColumn>> {
        let StatementKind::Select(s) = &select.kind else { return None };
        let columns = self.query_columns(&s.query, &[], true)?;
        if columns.iter().any(|c| c.col.hidden) {
            return None;
        }
        let mut out: Vec<DescribedColumn> =
            columns.into_iter().map(|c| DescribedColumn::of(c, false)).collect();
        if let (1 | 2, QueryBody::Select(sel)) = (browse, &s.query.body) {
            out.extend(self.browse_keys(sel, &out));
        }
        Some(out)
    }

    /// The key columns (the primary key's, else the first unique index's) of each table
    /// `sel` reads that are not among `shown`: what SQL Server adds to a result set described
    /// for browsing, hidden.
    fn browse_keys(&self, sel: &Select, shown: &[DescribedColumn]) -> Vec<DescribedColumn> {
        let mut tables = Vec::new();
        let mut pending: Vec<&TableSource> = sel.from.iter().collect();
        while let Some(source) = pending.pop() {
            match source {
                TableSource::Table { name, alias, .. } => tables.push((name, alias)),
                TableSource::Join(j) => {
                    pending.push(&j.right);
                    pending.push(&j.left);
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        for (name, alias) in tables.into_iter().rev() {
            let Ok((db, object)) = self.resolve_relation_object(name) else { continue };
            let Object::Table(def) = &*object else { continue };
            let key = def
                .indexes
                .iter()
                .find(|ix| ix.primary_key)
                .or_else(|| def.indexes.iter().find(|ix| ix.unique));
            let qual = &alias.as_ref().unwrap_or(&name.name).value;
            let cols = crate::exec::execute::query::table_cols(def, qual);
            let sources = table_sources(db.name(), def);
            for &i in key.map_or(&[][..], |k| k.columns.as_slice()) {
                let (Some(col), Some(source)) = (cols.get(i), sources.get(i)) else { continue };
                let listed = shown.iter().chain(&out).any(|s| s.source.as_ref() == Some(source));
                if !listed {
                    let c = StaticColumn {
                        col: col.clone(),
                        source: Some(Arc::clone(source)),
                        column: true,
                    };
                    out.push(DescribedColumn::of(c, true));
                }
            }
        }
        out
    }
}

/// `@browse_information_mode`: 1 or 2; 0 for NULL, 0 and any other value.
fn browse_mode(v: &Value) -> u8 {
    match scalar::convert(v.clone(), SqlType::Int, None) {
        Ok(Value::Int(n @ 1..=2)) => n as u8,
        _ => 0,
    }
}

/// Appends to `out` the statements of `statements` that lead to the first one sending a
/// result set, and that one: the `DECLARE`s before it (its variables' types), searched
/// through blocks, `TRY` blocks and both branches of an `IF`. Whether one was found.
fn first_result_statements(statements: &[Statement], out: &mut Vec<Statement>) -> bool {
    for st in statements {
        let found = match &st.kind {
            StatementKind::Declare(_) => {
                out.push(st.clone());
                false
            }
            StatementKind::Select(s) if sends_rows(&s.query.body) => {
                out.push(st.clone());
                true
            }
            StatementKind::Block(inner) => first_result_statements(inner, out),
            StatementKind::TryCatch(t) => first_result_statements(&t.try_block, out),
            StatementKind::If(i) => {
                first_result_statements(std::slice::from_ref(&i.then_branch), out)
                    || first_result_statements(i.else_branch.as_slice(), out)
            }
            _ => false,
        };
        if found {
            return true;
        }
    }
    false
}

/// Whether a SELECT sends its rows to the client: not `INTO` a table, not assigning variables.
fn sends_rows(body: &QueryBody) -> bool {
    match body {
        QueryBody::Select(s) => {
            s.into.is_none() && !s.items.iter().any(|i| matches!(i, SelectItem::Assign { .. }))
        }
        QueryBody::SetOperation { left, .. } => sends_rows(left),
        QueryBody::Parenthesized(q) => sends_rows(&q.body),
    }
}

/// The columns of `sp_describe_first_result_set`'s result, in SQL Server's order.
pub(crate) fn result_columns() -> Vec<ColumnInfo> {
    let sysname = SqlType::NVarChar(Len::N(128));
    let col = |name: &str, ty: SqlType, nullable: bool| ColumnInfo {
        name: name.into(),
        ty,
        nullable,
        collation: None,
        declared: None,
    };
    vec![
        col("is_hidden", SqlType::Bit, false),
        col("column_ordinal", SqlType::Int, false),
        col("name", sysname, true),
        col("is_nullable", SqlType::Bit, false),
        col("system_type_id", SqlType::Int, false),
        col("system_type_name", SqlType::NVarChar(Len::N(256)), true),
        col("max_length", SqlType::SmallInt, false),
        col("precision", SqlType::TinyInt, false),
        col("scale", SqlType::TinyInt, false),
        col("collation_name", sysname, true),
        col("user_type_id", SqlType::Int, true),
        col("user_type_database", sysname, true),
        col("user_type_schema", sysname, true),
        col("user_type_name", sysname, true),
        col("assembly_qualified_type_name", SqlType::NVarChar(Len::N(4000)), true),
        col("xml_collection_id", SqlType::Int, true),
        col("xml_collection_database", sysname, true),
        col("xml_collection_schema", sysname, true),
        col("xml_collection_name", sysname, true),
        col("is_xml_document", SqlType::Bit, false),
        col("is_case_sensitive", SqlType::Bit, false),
        col("is_fixed_length_clr_type", SqlType::Bit, false),
        col("source_server", sysname, true),
        col("source_database", sysname, true),
        col("source_schema", sysname, true),
        col("source_table", sysname, true),
        col("source_column", sysname, true),
        col("is_identity_column", SqlType::Bit, true),
        col("is_part_of_unique_key", SqlType::Bit, true),
        col("is_updateable", SqlType::Bit, true),
        col("is_computed_column", SqlType::Bit, true),
        col("is_sparse_column_set", SqlType::Bit, true),
        col("ordinal_in_order_by_list", SqlType::SmallInt, true),
        col("order_by_list_length", SqlType::SmallInt, true),
        col("order_by_is_descending", SqlType::SmallInt, true),
        col("tds_type_id", SqlType::Int, false),
        col("tds_length", SqlType::Int, false),
        col("tds_collation_id", SqlType::Int, true),
        col("tds_collation_sort_id", SqlType::TinyInt, true),
    ]
}

/// The row describing result column `d`, the `ordinal`th, for browse mode `browse`.
fn column_row(ordinal: usize, d: &DescribedColumn, browse: u8) -> Vec<Value> {
    let c = &d.info;
    let text = |s: &str| Value::NStr(s.to_string());
    let (type_id, type_name, max_len, (prec, sc)) = match c.declared {
        Some(d) => (d.system_type_id(), d.name().to_string(), d.max_length(), d.precision_scale()),
        None => (
            c.ty.system_type_id(),
            c.ty.to_string(),
            i16::try_from(max_length(c.ty)).unwrap_or(-1),
            (precision(c.ty), scale(c.ty)),
        ),
    };
    // IMAGE is held as VARBINARY(MAX), TEXT and NTEXT as the character MAX types.
    let character = matches!(
        c.ty,
        SqlType::Char(_) | SqlType::VarChar(_) | SqlType::NChar(_) | SqlType::NVarChar(_)
    );
    let collation = character.then(|| c.collation.unwrap_or(DEFAULT_COLLATION));
    let case_sensitive = collation.is_some_and(|n| {
        let upper = n.to_ascii_uppercase();
        upper.contains("_CS") || upper.contains("_BIN")
    });
    let (tds_type, tds_length) = tds_type(c.ty, c.declared);
    let source = d.source.as_deref();
    let browsed = |f: &dyn Fn(&ColumnSource) -> Value| match (browse, source) {
        (1 | 2, Some(s)) => f(s),
        _ => Value::Null,
    };
    // Whether the column is a table column with a property; an expression has none. A
    // column of a CTE or table variable (no source) cannot be told: NULL.
    let property = |f: fn(&ColumnSource) -> bool| match source {
        Some(s) => Value::Bit(f(s)),
        None if d.column => Value::Null,
        None => Value::Bit(false),
    };
    vec![
        Value::Bit(d.hidden),
        Value::Int(i32::try_from(ordinal).unwrap_or(i32::MAX)),
        if c.name.is_empty() { Value::Null } else { text(&c.name) },
        Value::Bit(c.nullable),
        Value::Int(i32::from(type_id)),
        text(&type_name),
        Value::SmallInt(max_len),
        Value::TinyInt(prec),
        Value::TinyInt(sc),
        collation.map_or(Value::Null, text),
        // user_type_*, assembly_qualified_type_name, xml_collection_*: no CLR or alias
        // types, no typed XML.
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Bit(false),
        Value::Bit(case_sensitive),
        Value::Bit(false),
        // source_server: the table is local.
        Value::Null,
        browsed(&|s| text(&s.database)),
        browsed(&|s| text(&s.schema)),
        browsed(&|s| text(&s.table)),
        browsed(&|s| text(&s.column)),
        property(|s| s.identity),
        // is_part_of_unique_key: only for browsing.
        match browse {
            1 | 2 => property(|s| s.unique_key),
            _ => Value::Null,
        },
        property(|s| !s.identity && !s.computed && !s.rowversion),
        property(|s| s.computed),
        // is_sparse_column_set: Walden has no sparse columns.
        Value::Bit(false),
        // ordinal_in_order_by_list, order_by_list_length, order_by_is_descending.
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Int(tds_type),
        Value::Int(tds_length),
        Value::Null,
        Value::Null,
    ]
}
