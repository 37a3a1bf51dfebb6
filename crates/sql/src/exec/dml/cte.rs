//! Common table expressions of INSERT, UPDATE, DELETE and MERGE.
//!
//! The statement's CTEs are materialized before it runs and stay in scope (in
//! [`Run::ctes`]) while its sources are read, as a SELECT's are.
//!
//! A CTE may also be the *target* of an UPDATE or DELETE (`WITH c AS (SELECT TOP (10) * FROM
//! t ORDER BY id) DELETE FROM c`), as a view may in SQL Server, when it is a SELECT of one
//! base table or table variable: the statement then changes the rows of the base table the
//! CTE selects. So may a derived table that is the statement's only FROM source (`DELETE d
//! FROM (SELECT ...) AS d WHERE ...`). Its rows are computed here with their row locators, so
//! the change goes through the same engine calls (locks, log, indexes) as any UPDATE or
//! DELETE. A view is changed under the same rules (INSERT too, through its column names), in
//! its own database.
//!
//! The select list may hold expressions besides base columns (`ROW_NUMBER() OVER (...) AS
//! rn`, `a + 1 AS b`): they are read-only columns of the rows, computed (window functions
//! over all the rows the SELECT's WHERE keeps) before the first row changes, so `UPDATE c
//! SET ord = rn` numbers the rows as they were. Setting one is error 4406 (4421 for a derived
//! table), as in SQL Server.

use crate::exec::execute::row_queue::QueuedRows;
use std::sync::Arc;

use walden_engine::catalog::ViewDef;
use walden_engine::Database;

use crate::ast::{
    Cte, Expr, ExprKind, Ident, ObjectName, QueryBody, Select, SelectItem, TableSource, TableTarget,
};
use crate::exec::dml::Qualified;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::query::{
    infer_type, select_aggregates, select_windows, sort_by_keys, table_cols, Relation, Rows,
    TableRef,
};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;
use walden_engine::types::{SqlType, Value};

/// What an UPDATE or DELETE changes.
pub(crate) enum DmlTarget {
    /// A table, whose rows the statement's own WHERE (and FROM) qualify.
    Table(TableRef),
    /// A CTE or view over one base table: the base table and the rows of it the CTE or view
    /// selects, shaped as the statement needs them: the base table's columns under the
    /// CTE's names (those it does not select are hidden), then the row locator.
    Through(TableRef, Box<Qualified>, Updatable),
}

/// The CTE, view or derived table an UPDATE or DELETE changes rows through.
pub(crate) struct Updatable {
    /// Its name (a derived table's alias).
    name: String,
    /// A derived table in FROM rather than a CTE or view: SQL Server reports its derived
    /// columns with another error.
    derived_table: bool,
}

impl Updatable {
    /// The error for setting a column of the rows that is no base table column: 4406, or
    /// 4421 for a derived table.
    pub(crate) fn derived_field(&self) -> SqlError {
        if self.derived_table {
            SqlError::new(
                4421,
                format!("Derived table '{}' is not updatable because a column of the derived table is derived or constant.", self.name),
            )
        } else {
            derived_field(&self.name)
        }
    }
}

/// The one base table (or table variable) of an updatable SELECT.
enum Base<'q> {
    Table(&'q ObjectName),
    Variable(&'q str),
}

/// A column an updatable CTE or view exposes, under the CTE's name for it.
enum Exposed<'q> {
    /// A column of the base table, by its position there.
    Base(usize),
    /// Any other select list item: read-only.
    Derived(&'q Expr),
}

impl Run<'_> {
    /// Runs `body` with `ctes` materialized and in scope; they go out of scope after it,
    /// whether it succeeds or not.
    pub(crate) fn with_ctes<T, E: From<SqlError>>(
        &mut self,
        ctes: &[Cte],
        body: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let base = self.ctes.len();
        let result = match self.push_ctes(ctes, None) {
            Ok(()) => body(self),
            Err(e) => Err(e.into()),
        };
        self.ctes.truncate(base);
        result
    }

    /// What an UPDATE or DELETE changes: a table, or, when `target` names one of the
    /// statement's `ctes` or a view, the base table it stands for and the rows of it the CTE
    /// or view selects (see [`DmlTarget::Through`]).
    pub(crate) fn dml_target(
        &mut self,
        ctes: &[Cte],
        target: &TableTarget,
        from: &[TableSource],
    ) -> Result<DmlTarget, SqlError> {
        if let TableTarget::Table(name) = target {
            if name.schema.is_none() && name.database.is_none() {
                let lower = &name.name.value;
                let cte = ctes.iter().rev().find(|c| c.name.value.eq_ignore_ascii_case(lower));
                if let Some(cte) = cte {
                    let (t, rows) = self.updatable_rows(cte, ctes, from)?;
                    let through = Updatable { name: cte.name.value.clone(), derived_table: false };
                    return Ok(DmlTarget::Through(t, Box::new(rows), through));
                }
                // UPDATE d SET ... FROM (SELECT ...) AS d: the derived table behaves as a CTE
                // of the statement when it is the only source.
                if let [TableSource::Derived { query, alias, columns }] = from {
                    if alias.value.eq_ignore_ascii_case(lower) {
                        let cte = Cte {
                            name: alias.clone(),
                            columns: columns.clone(),
                            query: (**query).clone(),
                            max_recursion: None,
                        };
                        let (t, rows) = self.updatable_rows(&cte, ctes, &[])?;
                        let through = Updatable { name: alias.value.clone(), derived_table: true };
                        return Ok(DmlTarget::Through(t, Box::new(rows), through));
                    }
                }
            }
        }
        match self.target_relation(target, from)? {
            Relation::Table(t) => Ok(DmlTarget::Table(t)),
            Relation::View(db, view) => {
                let (cte, check) = view_cte(&view)?;
                let (mut t, rows) =
                    self.in_view_scope(db, |r| r.updatable_rows(&cte, &[], from))?;
                t.view_check = check;
                let through = Updatable { name: view.name.clone(), derived_table: false };
                Ok(DmlTarget::Through(t, Box::new(rows), through))
            }
        }
    }

    /// The rows of `cte` (a CTE of the statement, or a view as one) an UPDATE or DELETE
    /// changes, under SQL Server's rules for updatable views.
    fn updatable_rows(
        &mut self,
        cte: &Cte,
        ctes: &[Cte],
        from: &[TableSource],
    ) -> Result<(TableRef, Qualified), SqlError> {
        let cte_name = cte.name.value.as_str();
        let multiple = || {
            SqlError::new(
                4405,
                format!("View or function '{cte_name}' is not updatable because the modification affects multiple base tables."),
            )
        };
        // With a FROM clause the CTE would be one source among several: SQL Server's view
        // rules apply to the whole join, which Walden does not resolve.
        if !from.is_empty() {
            return Err(multiple());
        }
        let (sel, base, qual) = self.updatable_select(cte, ctes)?;
        let t = self.resolve_base(base, &qual)?;
        let Rows { mut cols, rows } = self.table_rows(&t, sel.where_clause.as_ref())?;
        let rowid = t.def.columns.len();

        // The CTE's rows: its WHERE, then its window functions over all the rows WHERE keeps,
        // then its ORDER BY, OFFSET and TOP.
        let mut rows: Vec<Vec<Value>> = match &sel.where_clause {
            Some(w) => {
                let mut kept = Vec::with_capacity(rows.len());
                for row in rows {
                    if self.predicate(w, &Env::new(&cols, &row, None))? == Some(true) {
                        kept.push(row);
                    }
                }
                kept
            }
            None => rows,
        };
        let mut computed = Vec::new();
        let windows = select_windows(sel, &cte.query.order_by);
        if !windows.is_empty() {
            rows = self.windows(&mut cols, rows, &mut computed, &windows, None)?;
        }
        if !cte.query.order_by.is_empty() {
            let mut keyed = Vec::with_capacity(rows.len());
            for row in rows {
                let env = Env { cols: &cols, row: &row, outer: None, computed: &computed };
                let mut keys = Vec::with_capacity(cte.query.order_by.len());
                for o in &cte.query.order_by {
                    keys.push(self.eval(&o.expr, &env)?);
                }
                keyed.push((keys, row));
            }
            let desc: Vec<bool> = cte.query.order_by.iter().map(|o| o.descending).collect();
            sort_by_keys(&mut keyed, &desc)?;
            rows = keyed.into_iter().map(|(_, r)| r).collect();
        }
        if let Some(off) = &cte.query.offset {
            let skip = self.count_value(&off.offset)?;
            rows.drain(..skip.min(rows.len()));
            if let Some(fetch) = &off.fetch {
                let take = self.count_value(fetch)?;
                rows.truncate(take);
            }
        }
        if let Some(top) = &sel.top {
            let limit = if top.percent {
                let v = self.value(&top.quantity)?;
                let pct = match scalar::convert(v, SqlType::Float, None)? {
                    Value::Float(f) if (0.0..=100.0).contains(&f) => f,
                    _ => {
                        return Err(SqlError::new(
                            1031,
                            "Percent values must be between 0 and 100.",
                        ))
                    }
                };
                (rows.len() as f64 * pct / 100.0).ceil() as usize
            } else {
                self.count_value(&top.quantity)?
            };
            rows.truncate(limit);
        }

        // The CTE's columns: its base columns under the CTE's names for them (the others
        // hidden), the row locator, the window values (hidden), then its derived columns,
        // each computed once per row here.
        let exposed = exposed_columns(cte, sel, &cols[..rowid])?;
        let mut names: Vec<Option<String>> = vec![None; rowid];
        let mut derived = Vec::new();
        for (e, name) in exposed {
            match e {
                Exposed::Base(i) => names[i] = Some(name),
                Exposed::Derived(expr) => derived.push((expr, name)),
            }
        }
        let width = cols.len();
        for row in &mut rows {
            let mut values = Vec::with_capacity(derived.len());
            let env = Env { cols: &cols, row, outer: None, computed: &computed };
            for (expr, _) in &derived {
                values.push(self.eval(expr, &env)?);
            }
            row.extend(values);
        }
        let mut shaped: Vec<Col> = Vec::with_capacity(width + derived.len());
        for (i, c) in cols.into_iter().enumerate() {
            shaped.push(match names.get_mut(i).and_then(Option::take) {
                Some(name) => Col { qual: Some(cte_name.to_string()), name, ..c },
                None => Col { hidden: true, ..c },
            });
        }
        for (k, (_, name)) in derived.into_iter().enumerate() {
            shaped.push(Col::new(Some(cte_name), &name, infer_type(&rows, width + k)));
        }
        Ok((t, Qualified { cols: shaped, rows: QueuedRows::held(rows), rowid }))
    }

    /// The SELECT of an updatable CTE or view, its one base table (or table variable) and
    /// that table's name in it: errors 4405 (not one base table) and 4403 (aggregates,
    /// DISTINCT, GROUP BY).
    fn updatable_select<'q>(
        &mut self,
        cte: &'q Cte,
        ctes: &[Cte],
    ) -> Result<(&'q Select, Base<'q>, String), SqlError> {
        let cte_name = cte.name.value.as_str();
        let multiple = || {
            SqlError::new(
                4405,
                format!("View or function '{cte_name}' is not updatable because the modification affects multiple base tables."),
            )
        };
        let QueryBody::Select(sel) = &cte.query.body else { return Err(multiple()) };
        let (base, qual) = match sel.from.as_slice() {
            [TableSource::Table { name, alias, .. }] => {
                let names_a_cte = name.schema.is_none()
                    && name.database.is_none()
                    && (ctes.iter().any(|c| c.name.value.eq_ignore_ascii_case(&name.name.value))
                        || self.ctes.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name.name.value)));
                if names_a_cte || self.names_view(name) {
                    return Err(multiple());
                }
                (Base::Table(name), alias.as_ref().unwrap_or(&name.name).value.clone())
            }
            [TableSource::Variable { name, alias }] => {
                self.refuse_readonly_table(name)?;
                (
                    Base::Variable(name),
                    alias.as_ref().map_or_else(|| name.clone(), |a| a.value.clone()),
                )
            }
            _ => return Err(multiple()),
        };
        let aggregates = !select_aggregates(sel, &[]).is_empty();
        if aggregates || sel.distinct || !sel.group_by.is_empty() || sel.having.is_some() {
            return Err(SqlError::new(
                4403,
                format!("Cannot update the view or function '{cte_name}' because it contains aggregates, or a DISTINCT or GROUP BY clause, or PIVOT or UNPIVOT operator."),
            ));
        }
        Ok((sel, base, qual))
    }

    /// The table an updatable SELECT reads, known in it as `qual`.
    fn resolve_base(&mut self, base: Base<'_>, qual: &str) -> Result<TableRef, SqlError> {
        match base {
            Base::Table(name) => self.resolve_table(name, qual),
            Base::Variable(name) => self.resolve_table_variable(name, qual),
        }
    }

    /// Whether `name` names a view (of a database that exists).
    fn names_view(&mut self, name: &ObjectName) -> bool {
        matches!(self.resolve_relation(name, ""), Ok(Relation::View(..)))
    }

    /// INSERT into view `view` of database `db`: its base table and the base columns the
    /// insert list (or, without one, every view column but an identity) stands for. The
    /// mapped list then goes through the table's own rules (`insert_targets`).
    pub(crate) fn view_insert_target(
        &mut self,
        db: Arc<Database>,
        view: &ViewDef,
        columns: &[Ident],
    ) -> Result<(TableRef, Vec<Ident>), SqlError> {
        let (cte, check) = view_cte(view)?;
        self.in_view_scope(db, |r| {
            let (sel, base, qual) = r.updatable_select(&cte, &[])?;
            let mut t = r.resolve_base(base, &qual)?;
            t.view_check = check;
            let cols = table_cols(&t.def, &qual);
            // An INSERT sets every column it names (without a list, every column): none of
            // them may be derived.
            let mut exposed = Vec::new();
            for (e, name) in exposed_columns(&cte, sel, &cols)? {
                match e {
                    Exposed::Base(i) => exposed.push((i, name)),
                    Exposed::Derived(_) => {
                        let named = columns.iter().any(|c| c.value.eq_ignore_ascii_case(&name));
                        if columns.is_empty() || named {
                            return Err(derived_field(&cte.name.value));
                        }
                    }
                }
            }
            let identity = t.def.identity_column().map(|(c, _, _)| c);
            let base_name = |i: usize| Ident::new(t.def.columns[i].name.clone());
            let mapped = if columns.is_empty() {
                exposed
                    .iter()
                    .filter(|(i, _)| Some(*i) != identity)
                    .map(|&(i, _)| base_name(i))
                    .collect()
            } else {
                let mut mapped = Vec::with_capacity(columns.len());
                for c in columns {
                    let Some(&(i, _)) =
                        exposed.iter().find(|(_, n)| n.eq_ignore_ascii_case(&c.value))
                    else {
                        return Err(SqlError::invalid_column(&c.value));
                    };
                    mapped.push(base_name(i));
                }
                mapped
            };
            Ok((t, mapped))
        })
    }

    /// The rows of a CTE or view target (see [`Run::dml_target`]) the statement's WHERE keeps.
    pub(crate) fn cte_rows(
        &mut self,
        q: Qualified,
        where_clause: Option<&Expr>,
    ) -> Result<Qualified, SqlError> {
        let Some(w) = where_clause else { return Ok(q) };
        let Qualified { cols, mut rows, rowid } = q;
        let mut kept = Vec::new();
        while let Some(row) = rows.next()? {
            if self.predicate(w, &Env::new(&cols, &row, None))? == Some(true) {
                kept.push(row);
            }
        }
        Ok(Qualified { cols, rows: QueuedRows::held(kept), rowid })
    }
}

/// The columns an updatable CTE or view exposes, in order, under the CTE's names for them:
/// each a column of its base table (`cols`, without the row locator) or a derived column.
/// Error 8155 for a derived column without a name; 4406 for one base column exposed twice.
fn exposed_columns<'q>(
    cte: &Cte,
    sel: &'q Select,
    cols: &[Col],
) -> Result<Vec<(Exposed<'q>, String)>, SqlError> {
    let cte_name = cte.name.value.as_str();
    let mut exposed: Vec<(Exposed<'q>, String)> = Vec::new();
    for item in &sel.items {
        let picked: Vec<(Exposed<'q>, String)> = match item {
            SelectItem::Wildcard(_) => {
                cols.iter().enumerate().map(|(i, c)| (Exposed::Base(i), c.name.clone())).collect()
            }
            SelectItem::Expr { expr, alias } => match &expr.kind {
                ExprKind::Column(parts) => {
                    let Some(i) = crate::exec::eval::find_column(cols, parts)? else {
                        let last = parts.last().map(|p| p.value.as_str()).unwrap_or_default();
                        return Err(SqlError::invalid_column(last));
                    };
                    let name =
                        alias.as_ref().map_or_else(|| cols[i].name.clone(), |a| a.value.clone());
                    vec![(Exposed::Base(i), name)]
                }
                _ => {
                    let name = alias.as_ref().map(|a| a.value.clone()).unwrap_or_default();
                    vec![(Exposed::Derived(expr), name)]
                }
            },
            SelectItem::Assign { .. } => return Err(derived_field(cte_name)),
        };
        for (e, name) in picked {
            let name = cte.columns.get(exposed.len()).map_or(name, |c| c.value.clone());
            if name.is_empty() {
                return Err(SqlError::with_severity(
                    8155,
                    16,
                    format!(
                        "No column name was specified for column {} of '{cte_name}'.",
                        exposed.len() + 1
                    ),
                ));
            }
            // One base column under two names cannot be one column of the rows here.
            if let Exposed::Base(i) = e {
                if exposed.iter().any(|(x, _)| matches!(x, Exposed::Base(j) if *j == i)) {
                    return Err(derived_field(cte_name));
                }
            }
            exposed.push((e, name));
        }
    }
    Ok(exposed)
}

/// A view as the CTE it behaves as when it is the target of a change, with its WHERE when it
/// is `WITH CHECK OPTION` (a view without WHERE lets every row through).
fn view_cte(view: &ViewDef) -> Result<(Cte, Option<Expr>), SqlError> {
    let def = crate::exec::module::view::parse(&view.text)
        .ok_or_else(|| crate::exec::module::view::unparsable(view))?;
    let check = match &def.query.body {
        QueryBody::Select(sel) if def.check_option => sel.where_clause.clone(),
        _ => None,
    };
    let cte = Cte {
        name: Ident::new(view.name.clone()),
        columns: def.columns,
        query: def.query,
        max_recursion: None,
    };
    Ok((cte, check))
}

/// Error 4406: the CTE has a column that is no base table column.
fn derived_field(cte: &str) -> SqlError {
    SqlError::new(
        4406,
        format!("Update or insert of view or function '{cte}' failed because it contains a derived or constant field."),
    )
}
