//! `FROM` sources: a table, view, CTE, system view, derived table, table-valued function or
//! variable resolved by name and read as rows (`source`), and the name resolution that DML,
//! DDL and the planner share (`resolve_table`, `resolve_relation`). Joining several sources
//! is `exec::join`'s; this file makes the rows of one.

use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::types::Value;
use walden_engine::Database;

use crate::ast::{Expr, ExprKind, JoinKind, ObjectName, TableSource};
use crate::exec::eval::{Col, Env};
use crate::exec::scalar::collation;
use crate::exec::session::Run;
use crate::exec::sysviews::{self, ViewContext};
use crate::exec::{RowSet, SqlError};

use super::pivot::unpivot;
use super::table_functions::{openjson, openjson_with, string_split};
use super::{infer_type, unify_column, Relation, Rows, TableRef};

impl Run<'_> {
    /// A CTE in scope or a system view that `name` names, as rows qualified by `qual`.
    pub(crate) fn named_rowset(
        &mut self,
        name: &ObjectName,
        qual: &str,
    ) -> Result<Option<Rows>, SqlError> {
        if name.schema.is_none() && name.database.is_none() {
            let lower = name.name.value.to_ascii_lowercase();
            if let Some((_, set)) = self.ctes.iter().rev().find(|(n, _)| *n == lower) {
                let set = Arc::clone(set);
                return Ok(Some(rowset_rows(&set, qual)));
            }
        }
        Ok(self.system_rowset(name, &[])?.map(|set| rowset_rows(&set, qual)))
    }

    pub(crate) fn source(
        &mut self,
        src: &TableSource,
        filter: Option<&Expr>,
        outer: Option<&Env<'_>>,
    ) -> Result<Rows, SqlError> {
        match src {
            TableSource::Table { name, alias, hints } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                if let Some(rows) = self.named_rowset(name, &qual)? {
                    return Ok(rows);
                }
                match self.resolve_relation(name, &qual)? {
                    Relation::Table(t) => {
                        self.apply_table_hints(&t, hints, false)?;
                        self.table_rows(&t, filter)
                    }
                    Relation::View(db, view) => self.view_rows(db, &view, &qual),
                }
            }
            TableSource::Variable { name, alias } => {
                let qual = alias.as_ref().map_or(name.clone(), |a| a.value.clone());
                let t = self.resolve_table_variable(name, &qual)?;
                self.table_rows(&t, filter)
            }
            TableSource::XmlNodes { target, xquery, alias, column } => match outer {
                Some(env) => self.xml_nodes(target, xquery, alias, column, env),
                None => self.xml_nodes(target, xquery, alias, column, &Env::empty()),
            },
            TableSource::Function { name, args, alias, columns } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                if let Some((db, def)) = self.find_table_function(name)? {
                    let mut values = Vec::with_capacity(args.len());
                    for a in args {
                        values.push(match (&a.kind, outer) {
                            (ExprKind::Default, _) => None,
                            (_, Some(env)) => Some(self.eval(a, env)?),
                            (_, None) => Some(self.eval(a, &Env::empty())?),
                        });
                    }
                    let mut rows = self.table_function_rows(&def, values, db, &qual)?;
                    for (c, n) in rows.cols.iter_mut().zip(columns) {
                        c.name = n.value.clone();
                    }
                    return Ok(rows);
                }
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    let env = match outer {
                        Some(e) => *e,
                        None => Env::empty(),
                    };
                    // DEFAULT: what a system function takes for an argument left out.
                    values.push(match a.kind {
                        ExprKind::Default => Value::Null,
                        _ => self.eval(a, &env)?,
                    });
                }
                let builtin =
                    |f: &str| name.schema.is_none() && name.name.value.eq_ignore_ascii_case(f);
                let in_sys =
                    name.schema.as_ref().is_none_or(|s| s.value.eq_ignore_ascii_case("sys"));
                let set =
                    if in_sys && name.name.value.eq_ignore_ascii_case("fn_listextendedproperty") {
                        self.list_extended_properties(&values)?
                    } else if in_sys && name.name.value.eq_ignore_ascii_case("fn_my_permissions") {
                        self.my_permissions(&values)?
                    } else if in_sys
                        && name.name.value.eq_ignore_ascii_case("dm_exec_describe_first_result_set")
                    {
                        self.describe_first_result_set_function(&values)?
                    } else if builtin("GENERATE_SERIES") {
                        self.generate_series(&values)?
                    } else if builtin("STRING_SPLIT") {
                        string_split(&values)?
                    } else if builtin("OPENJSON") {
                        openjson(&values)?
                    } else {
                        match self.system_rowset(name, &values)? {
                            Some(s) => s,
                            None => return Err(SqlError::invalid_object(&name.name.value)),
                        }
                    };
                let mut rows = rowset_rows(&set, &qual);
                for (c, n) in rows.cols.iter_mut().zip(columns) {
                    c.name = n.value.clone();
                }
                Ok(rows)
            }
            TableSource::Pivot(p) => {
                let rows = self.source(&p.source, None, outer)?;
                self.pivot(rows, p, outer)
            }
            TableSource::Unpivot(u) => {
                let rows = self.source(&u.source, None, outer)?;
                unpivot(rows, u)
            }
            TableSource::OpenJson { args, schema, alias } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(match outer {
                        Some(env) => self.eval(a, env)?,
                        None => self.eval(a, &Env::empty())?,
                    });
                }
                let qual = alias.as_ref().map_or("OPENJSON", |a| a.value.as_str());
                openjson_with(&values, schema, qual)
            }
            TableSource::Derived { query, alias, columns } => {
                let mut rows = self.query(query, outer)?;
                for c in rows.cols.iter_mut() {
                    c.qual = Some(alias.value.clone());
                }
                for (c, n) in rows.cols.iter_mut().filter(|c| !c.hidden).zip(columns) {
                    c.name = n.value.clone();
                }
                for c in &rows.cols {
                    if c.name.is_empty() && !c.hidden {
                        return Err(SqlError::with_severity(
                            8155,
                            16,
                            format!(
                                "No column name was specified for column of '{}'.",
                                alias.value
                            ),
                        ));
                    }
                }
                Ok(rows)
            }
            TableSource::OpenRowsetBulk { file, kind, alias, columns } => {
                self.openrowset_bulk(file, *kind, alias.as_ref(), columns)
            }
            TableSource::Values { rows: values, alias, columns } => {
                let mut out = Vec::with_capacity(values.len());
                let env = match outer {
                    Some(e) => *e,
                    None => Env::empty(),
                };
                for r in values {
                    let mut row = Vec::with_capacity(r.len());
                    for e in r {
                        row.push(self.eval(e, &env)?);
                    }
                    out.push(row);
                }
                let width = out.first().map_or(0, Vec::len);
                let mut cols = Vec::with_capacity(width);
                for i in 0..width {
                    let name = columns.get(i).map_or(String::new(), |c| c.value.clone());
                    let ty = infer_type(&out, i);
                    unify_column(&mut out, i, ty)?;
                    cols.push(Col::new(Some(&alias.value), &name, ty));
                }
                Ok(Rows { cols, rows: out })
            }
            TableSource::Join(j) => {
                if !matches!(j.kind, JoinKind::CrossApply | JoinKind::OuterApply) {
                    return Ok(self.plan_from(std::slice::from_ref(src), None, outer, None)?.0);
                }
                let left = self.source(&j.left, None, outer)?;
                let mut cols: Option<Vec<Col>> = None;
                let mut rows = Vec::new();
                for l in &left.rows {
                    self.interruption_point()?;
                    let env = Env::new(&left.cols, l, outer);
                    let right = self.source(&j.right, None, Some(&env))?;
                    if cols.is_none() {
                        let mut c = left.cols.clone();
                        c.extend(right.cols.iter().cloned());
                        cols = Some(c);
                    }
                    if right.rows.is_empty() && j.kind == JoinKind::OuterApply {
                        let mut row = l.clone();
                        row.extend(std::iter::repeat_n(Value::Null, right.cols.len()));
                        rows.push(row);
                    }
                    for r in right.rows {
                        let mut row = l.clone();
                        row.extend(r);
                        rows.push(row);
                    }
                }
                if cols.is_none() {
                    // No left row: the right side's columns are still the result's, for the
                    // names the rest of the query binds (`pa.attribute` over an empty
                    // `sys.dm_exec_query_stats`). They are learned by applying it once to a
                    // row of NULLs; its rows, and any error it raises there, are not the
                    // query's, as SQL Server applies it to no row.
                    let nulls = vec![Value::Null; left.cols.len()];
                    let env = Env::new(&left.cols, &nulls, outer);
                    if let Ok(right) = self.source(&j.right, None, Some(&env)) {
                        let mut c = left.cols.clone();
                        c.extend(right.cols);
                        cols = Some(c);
                    }
                }
                let left_width = left.cols.len();
                let mut cols = cols.unwrap_or(left.cols);
                crate::exec::plan::join::null_extended(&mut cols, left_width, j.kind);
                Ok(Rows { cols, rows })
            }
        }
    }

    /// A system view or table-valued function named `name`, if it is one.
    pub(crate) fn system_rowset(
        &mut self,
        name: &ObjectName,
        args: &[Value],
    ) -> Result<Option<RowSet>, SqlError> {
        // msdb's backup history and Agent tables (`sysviews::msdb`), named in msdb or from it.
        if args.is_empty()
            && name.schema.as_ref().is_none_or(|s| s.value.eq_ignore_ascii_case("dbo"))
        {
            if let Some(set) = sysviews::msdb::history_table(&name.name.value) {
                if self.database_of(name.database.as_ref())?.id()
                    == walden_engine::instance::MSDB_ID
                {
                    return Ok(Some(set));
                }
            }
        }
        if name.name.value.eq_ignore_ascii_case("spt_values")
            && args.is_empty()
            && name.schema.as_ref().is_none_or(|s| s.value.eq_ignore_ascii_case("dbo"))
            && self.database_of(name.database.as_ref())?.id() == walden_engine::instance::MASTER_ID
        {
            return Ok(Some(sysviews::spt_values()));
        }
        // SQL Server 2000's system tables are still found without the `sys` schema, or in
        // `dbo`, as old scripts name them: `IF EXISTS (SELECT * FROM sysobjects ...)`,
        // `master..sysprocesses`.
        let compat_table = args.is_empty()
            && name.schema.as_ref().is_none_or(|s| s.value.eq_ignore_ascii_case("dbo"))
            && [
                "sysobjects",
                "syscolumns",
                "sysprocesses",
                "sysdatabases",
                "systypes",
                "syslanguages",
                "syslogins",
                "sysusers",
            ]
            .iter()
            .any(|t| name.name.value.eq_ignore_ascii_case(t));
        let information_schema = match &name.schema {
            Some(schema) if schema.value.eq_ignore_ascii_case("INFORMATION_SCHEMA") => true,
            Some(schema) if schema.value.eq_ignore_ascii_case("sys") => false,
            _ if compat_table => false,
            // SQL Server resolves its `fn_` table-valued functions without the schema too:
            // `SELECT * FROM fn_dblog(NULL, NULL)`.
            None if !args.is_empty() && name.name.value.eq_ignore_ascii_case("fn_dblog") => false,
            None if name.name.value.eq_ignore_ascii_case("fn_helpcollations") => false,
            _ => return Ok(None),
        };
        let db = self.database_of(name.database.as_ref())?;
        let view_columns = if sysviews::lists_columns(&name.name.value, information_schema) {
            self.view_columns(&db)
        } else {
            Vec::new()
        };
        let current_transaction = (!information_schema
            && name.name.value.eq_ignore_ascii_case("dm_tran_current_transaction"))
        .then(|| self.tx().id());
        let ctx = ViewContext {
            instance: &self.s.instance,
            database: &db,
            counters: &self.s.counters,
            session_id: self.s.spid,
            view_columns: &view_columns,
            current_transaction,
        };
        if information_schema {
            return match sysviews::information_schema_view(&ctx, &name.name.value, args) {
                Some(r) => r.map(Some),
                None => Err(SqlError::invalid_object(&format!(
                    "INFORMATION_SCHEMA.{}",
                    name.name.value
                ))),
            };
        }
        // The plan cache is the session's (`exec::plan_cache`), not the instance's.
        if name.name.value.eq_ignore_ascii_case("dm_exec_cached_plans") && args.is_empty() {
            return Ok(Some(self.s.plans.view()));
        }
        match sysviews::system_view(&ctx, &name.name.value, args) {
            Some(r) => r.map(Some),
            None => Err(SqlError::invalid_object(&format!("sys.{}", name.name.value))),
        }
    }

    /// Resolves a table name (temporary tables included) to its database and definition.
    pub(crate) fn resolve_table_object(
        &mut self,
        name: &ObjectName,
    ) -> Result<(Arc<Database>, Arc<Object>), SqlError> {
        match self.resolve_relation_object(name)? {
            (db, o) if matches!(*o, Object::Table(_)) => Ok((db, o)),
            _ => Err(SqlError::invalid_object(&display_name(name))),
        }
    }

    /// Resolves a table or view name (temporary tables included) to its database and
    /// definition, in one catalog lookup.
    pub(crate) fn resolve_relation_object(
        &self,
        name: &ObjectName,
    ) -> Result<(Arc<Database>, Arc<Object>), SqlError> {
        let user = &name.name.value;
        if let Some(internal) = self.pseudo_table(name) {
            let tempdb = Arc::clone(self.s.instance.tempdb());
            let o = tempdb
                .find_object("dbo", &internal)
                .ok_or_else(|| SqlError::invalid_object(user))?;
            return Ok((tempdb, o));
        }
        if user.starts_with('#') {
            if self.s.checking_module || self.s.function_depth > 0 {
                return Err(SqlError::new(
                    4508,
                    "Views or functions are not allowed on temporary tables. Table names that begin with '#' denote temporary tables.",
                ));
            }
            let internal = self
                .s
                .temp_tables
                .get(&user.to_ascii_lowercase())
                .cloned()
                .ok_or_else(|| SqlError::invalid_object(user))?;
            let tempdb = Arc::clone(self.s.instance.tempdb());
            let o = tempdb
                .find_object("dbo", &internal)
                .ok_or_else(|| SqlError::invalid_object(user))?;
            return Ok((tempdb, o));
        }
        // A table of a database that does not exist is a missing table, 208, as in SQL Server
        // (not USE's 911).
        let db = self.database_of(name.database.as_ref()).map_err(|e| match e.number {
            911 => SqlError::invalid_object(&display_name(name)),
            _ => e,
        })?;
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        match db.find_object(schema, user) {
            Some(o) if matches!(*o, Object::Table(_) | Object::View(_)) => Ok((db, o)),
            _ => Err(SqlError::invalid_object(&display_name(name))),
        }
    }

    /// [`crate::exec::eval::rebind_unknown_column`] of `err` over the FROM clause `from`, the
    /// catalog telling which of its tables have the column named.
    pub(crate) fn rebind_unknown_column(&self, err: SqlError, from: &[TableSource]) -> SqlError {
        let has_column = |s: &TableSource, c: &str| self.source_has_column(s, c);
        crate::exec::eval::rebind_unknown_column(err, from, &has_column)
    }

    /// Whether `source`, a table of a FROM clause, has a column named `column`: what tells an
    /// unknown column of a source (207) from a source out of scope (4104). False for any
    /// other kind of source, and for a name that does not resolve.
    fn source_has_column(&self, source: &TableSource, column: &str) -> bool {
        let TableSource::Table { name, .. } = source else { return false };
        match self.resolve_relation_object(name) {
            Ok((_, object)) => match &*object {
                Object::Table(def) => {
                    def.columns.iter().any(|c| c.name.eq_ignore_ascii_case(column))
                }
                _ => false,
            },
            Err(_) => false,
        }
    }

    /// The table or view `name` names, its columns qualified by `qual`.
    pub(crate) fn resolve_relation(
        &mut self,
        name: &ObjectName,
        qual: &str,
    ) -> Result<Relation, SqlError> {
        let (db, o) = self.resolve_relation_object(name)?;
        match &*o {
            Object::Table(def) => Ok(Relation::Table(TableRef {
                db,
                def: Arc::clone(def),
                qual: qual.to_string(),
                view_check: None,
                wanted: None,
            })),
            Object::View(v) => Ok(Relation::View(db, v.clone())),
            _ => Err(SqlError::invalid_object(&display_name(name))),
        }
    }

    pub(crate) fn resolve_table(
        &mut self,
        name: &ObjectName,
        qual: &str,
    ) -> Result<TableRef, SqlError> {
        match self.resolve_relation(name, qual)? {
            Relation::Table(t) => Ok(t),
            Relation::View(..) => Err(SqlError::invalid_object(&display_name(name))),
        }
    }

    pub(crate) fn resolve_table_variable(
        &self,
        name: &str,
        qual: &str,
    ) -> Result<TableRef, SqlError> {
        let internal =
            self.s.temp_tables.get(&name.to_ascii_lowercase()).cloned().ok_or_else(|| {
                SqlError::with_severity(
                    1087,
                    15,
                    format!("Must declare the table variable \"{name}\"."),
                )
            })?;
        let tempdb = Arc::clone(self.s.instance.tempdb());
        match tempdb.find_object("dbo", &internal).as_deref() {
            Some(Object::Table(def)) => Ok(TableRef {
                db: tempdb,
                def: Arc::clone(def),
                qual: qual.to_string(),
                view_check: None,
                wanted: None,
            }),
            _ => Err(SqlError::with_severity(
                1087,
                15,
                format!("Must declare the table variable \"{name}\"."),
            )),
        }
    }
}

/// A CTE's or system view's rows as a source: its columns keep their collation (a CTE's
/// text column compares as the column or COLLATE it came from) and declared type.
fn rowset_rows(set: &RowSet, qual: &str) -> Rows {
    Rows {
        cols: set
            .columns
            .iter()
            .map(|c| Col {
                nullable: c.nullable,
                collation: c.collation.and_then(|name| collation::collation_ref(name).ok()),
                declared: c.declared,
                ..Col::new(Some(qual), &c.name, c.ty)
            })
            .collect(),
        rows: set.rows.clone(),
    }
}

/// `db.schema.name` as written, for error messages.
pub(crate) fn display_name(name: &ObjectName) -> String {
    let mut parts = Vec::new();
    if let Some(d) = &name.database {
        parts.push(d.value.as_str());
    }
    if let Some(s) = &name.schema {
        parts.push(s.value.as_str());
    }
    parts.push(name.name.value.as_str());
    parts.join(".")
}
