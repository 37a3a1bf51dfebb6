//! Views: `CREATE [OR ALTER] VIEW`, `ALTER VIEW`, and a view named in a query's FROM clause.
//!
//! A view is its text in the catalog ([`walden_engine::catalog::ViewDef`]). Wherever a query
//! names it, the text is parsed again and its query runs as a derived table would, in the
//! view's own database (so that its unqualified names mean what they meant at CREATE), without
//! the referring statement's common table expressions in scope. CREATE runs the query once to
//! check it and to name its columns, with SQL Server's errors for a bad column list. Views
//! nest up to 32 levels (error 217), which also stops a cycle made by ALTER VIEW. Rows are
//! changed through a view under the rules of updatable views (`dml_cte`).

use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, Object, ViewDef};
use walden_engine::objects::ModuleKind;
use walden_engine::Database;

use crate::ast::{CreateMode, CreateView, ObjectName, Query, QueryBody, StatementKind};
use crate::exec::eval::Col;
use crate::exec::execute::query::Rows;
use crate::exec::session::Run;
use crate::exec::SqlError;
use crate::parse_batch;

/// SQL Server's limit on nested modules, views included.
const MAX_NESTING: usize = 32;

/// The CREATE VIEW statement a view's stored text holds.
pub(crate) fn parse(text: &str) -> Option<CreateView> {
    let batch = parse_batch(text).ok()?;
    batch.statements.into_iter().find_map(|s| match s.kind {
        StatementKind::CreateView(v) => Some(*v),
        _ => None,
    })
}

/// The error for a view whose stored text does not parse (a text from an older version).
pub(crate) fn unparsable(view: &ViewDef) -> SqlError {
    SqlError::new(50000, format!("The stored definition of view '{}' no longer parses.", view.name))
}

/// Error 166: CREATE or ALTER of a `what` (VIEW, FUNCTION) names its database, which SQL
/// Server leaves to USE.
pub(crate) fn no_database_prefix(
    name: &ObjectName,
    mode: CreateMode,
    what: &str,
) -> Result<(), SqlError> {
    if name.database.is_none() {
        return Ok(());
    }
    let verb = if mode == CreateMode::Alter { "ALTER" } else { "CREATE" };
    Err(SqlError::new(
        166,
        format!("'{verb} {what}' does not allow specifying the database name as a prefix to the object name."),
    ))
}

/// Errors 4511 (a column without a name) and 4506 (a name twice) for the columns of view or
/// function `name`.
pub(crate) fn check_column_names(names: &[&str], name: &str) -> Result<(), SqlError> {
    for (i, n) in names.iter().enumerate() {
        if n.is_empty() {
            return Err(SqlError::new(
                4511,
                format!("Create View or Function failed because no column name was specified for column {}.", i + 1),
            ));
        }
        if names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)) {
            return Err(SqlError::new(
                4506,
                format!("Column names in each view or function must be unique. Column name '{n}' in view or function '{name}' is specified more than once."),
            ));
        }
    }
    Ok(())
}

/// Whether a query's ORDER BY is allowed in a view: only with TOP or OFFSET, which make it
/// choose rows rather than order them.
fn order_by_allowed(q: &Query) -> bool {
    q.order_by.is_empty()
        || q.offset.is_some()
        || matches!(&q.body, QueryBody::Select(s) if s.top.is_some())
}

impl Run<'_> {
    /// A view's rows, its columns qualified by `qual` and named as the view names them.
    pub(crate) fn view_rows(
        &mut self,
        db: Arc<Database>,
        view: &ViewDef,
        qual: &str,
    ) -> Result<Rows, SqlError> {
        // Through the session's cache of parsed texts: a view in a correlated subquery is
        // read once per outer row.
        let batch = self.s.parsed(&view.text)?;
        let def = batch
            .statements
            .iter()
            .find_map(|s| match &s.kind {
                StatementKind::CreateView(v) => Some(&**v),
                _ => None,
            })
            .ok_or_else(|| unparsable(view))?;
        let mut rows = self.view_query(db, &def.query)?;
        if !def.columns.is_empty() {
            if def.columns.len() != rows.cols.len() {
                return Err(SqlError::new(
                    4502,
                    format!(
                        "View or function '{}' has {} column names specified than columns defined.",
                        view.name,
                        if def.columns.len() > rows.cols.len() { "more" } else { "fewer" }
                    ),
                ));
            }
            for (c, n) in rows.cols.iter_mut().zip(&def.columns) {
                c.name = n.value.clone();
            }
        }
        for c in &mut rows.cols {
            c.qual = Some(qual.to_string());
        }
        Ok(rows)
    }

    /// The columns of `db`'s views, by view id, as their queries return them now (a view
    /// whose query fails, say over a dropped table, has none): what `sys.columns` and
    /// `INFORMATION_SCHEMA.COLUMNS` list for views.
    pub(crate) fn view_columns(&mut self, db: &Arc<Database>) -> Vec<(u32, Vec<ColumnDef>)> {
        let views: Vec<ViewDef> = db
            .catalog()
            .objects()
            .iter()
            .filter_map(|o| match &**o {
                Object::View(v) => Some(v.clone()),
                _ => None,
            })
            .collect();
        views
            .into_iter()
            .filter_map(|v| Some((v.id, self.view_column_defs(Arc::clone(db), &v).ok()?)))
            .collect()
    }

    /// The columns view `view` of `db` returns now, as column definitions (names, types,
    /// nullability; no identity or default).
    pub(crate) fn view_column_defs(
        &mut self,
        db: Arc<Database>,
        view: &ViewDef,
    ) -> Result<Vec<ColumnDef>, SqlError> {
        let rows = self.view_rows(db, view, &view.name)?;
        Ok(rows
            .cols
            .into_iter()
            .map(|c| ColumnDef {
                name: c.name,
                ty: c.ty,
                nullable: c.nullable,
                identity: None,
                default: None,
                computed: None,
                rowversion: false,
                collation: crate::exec::scalar::collation::stored(c.collation, c.ty),
                declared: c.declared,
            })
            .collect())
    }

    /// Runs `body` as a view's text runs: in the view's database `db`, outside the caller's
    /// CTEs, one nesting level deeper (error 217 past 32).
    pub(crate) fn in_view_scope<T>(
        &mut self,
        db: Arc<Database>,
        body: impl FnOnce(&mut Self) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        if self.s.view_depth >= MAX_NESTING {
            return Err(SqlError::new(
                217,
                "Maximum stored procedure, function, trigger, or view nesting level exceeded (limit 32).",
            ));
        }
        let caller_db = std::mem::replace(&mut self.s.db, db);
        let caller_ctes = std::mem::take(&mut self.ctes);
        self.s.view_depth += 1;
        let result = body(self);
        self.s.view_depth -= 1;
        self.ctes = caller_ctes;
        self.s.db = caller_db;
        result
    }

    /// Runs a view's query in its scope, keeping the columns a client would see.
    fn view_query(&mut self, db: Arc<Database>, query: &Query) -> Result<Rows, SqlError> {
        let rows = self.in_view_scope(db, |r| r.query(query, None))?;
        let visible = rows.visible();
        let cols: Vec<Col> = visible.iter().map(|&i| rows.cols[i].clone()).collect();
        let rows = rows.rows.into_iter().map(|r| visible.iter().map(|&i| r[i].clone()).collect());
        Ok(Rows { cols, rows: rows.collect() })
    }

    /// `CREATE [OR ALTER] VIEW` / `ALTER VIEW`: checks the query by running it and stores the
    /// text.
    pub(crate) fn create_view(&mut self, v: &CreateView) -> Result<(), SqlError> {
        no_database_prefix(&v.name, v.mode, "VIEW")?;
        let db = Arc::clone(&self.s.db);
        let schema = v.name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let name = &v.name.name.value;
        let existing = db.find_object(schema, name);
        if v.mode == CreateMode::Alter && !matches!(existing.as_deref(), Some(Object::View(_))) {
            return Err(SqlError::invalid_object(name));
        }
        if !order_by_allowed(&v.query) {
            return Err(SqlError::new(
                1033,
                "The ORDER BY clause is invalid in views, inline functions, derived tables, subqueries, and common table expressions, unless TOP, OFFSET or FOR XML is also specified.",
            ));
        }
        self.s.checking_module = true;
        let rows = self.view_query(Arc::clone(&db), &v.query);
        self.s.checking_module = false;
        let rows = rows?;
        let names: Vec<String> = if v.columns.is_empty() {
            rows.cols.iter().map(|c| c.name.clone()).collect()
        } else if v.columns.len() > rows.cols.len() {
            return Err(SqlError::new(
                8159,
                format!("'{name}' has fewer columns than were specified in the column list."),
            ));
        } else if v.columns.len() < rows.cols.len() {
            return Err(SqlError::new(
                8158,
                format!("'{name}' has more columns than were specified in the column list."),
            ));
        } else {
            v.columns.iter().map(|c| c.value.clone()).collect()
        };
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        check_column_names(&names, name)?;
        let or_alter = v.mode != CreateMode::Create;
        self.tx()
            .put_module(&db, ModuleKind::View, schema, name, &v.definition, or_alter)
            .map_err(|e| self.s.engine_error(e))
    }
}
