//! `ALTER TABLE` and `sp_rename`: this file dispatches ALTER TABLE and runs its column
//! changes and drops; `add` has `ADD`, `rename` has `sp_rename`.
//!
//! A change of columns (`ADD` column, `DROP COLUMN`, `ALTER COLUMN`) rebuilds the table in the
//! statement's transaction through the engine's [`TableRebuild`]: each existing row is read,
//! converted here (defaults evaluated, values converted with the rules of an assignment, new
//! CHECK constraints tested) and stored in the new shape. A failure anywhere fails the
//! statement, whose rollback leaves the old table as it was. Constraint changes and renames
//! touch only the catalog entry.
//!
//! An added PRIMARY KEY or UNIQUE constraint builds its index as `CREATE INDEX` does (a
//! clustered primary key on a heap rebuilds the table in key order); dropping one rebuilds
//! the table without it (a heap, for the clustered index).
//!
//! Limits: a PRIMARY KEY or UNIQUE constraint declared on a column added by the same `ADD`
//! is refused (declare it as a table constraint in a second `ALTER TABLE`); a DEFAULT's name
//! is the one `sys.default_constraints` generates, not one given in `ADD CONSTRAINT name
//! DEFAULT`.

mod add;
mod rename;

use std::ops::Bound;
use std::sync::Arc;

use walden_engine::alter::TableRebuild;
use walden_engine::catalog::{ColumnDef, IndexDef, TableDef};
use walden_engine::lock::{LockMode, Resource};
use walden_engine::types::{Len, SqlType, Value};

use crate::ast::{AlterDrop, AlterTable, AlterTableAction, DataType, Expr, Ident};
use crate::exec::ddl::{check_identity_type, generated_name};
use crate::exec::execute::query::{display_name, table_cols, TableRef};
use crate::exec::session::Run;
use crate::exec::sysviews::default_constraint_name;
use crate::exec::SqlError;
use crate::lexer::{tokenize, Token, TokenKind};

/// Error 4902 for an `ALTER TABLE` of a table that does not exist.
fn cannot_find(name: &str) -> SqlError {
    SqlError::new(
        4902,
        format!(
            "Cannot find the object \"{name}\" because it does not exist or you do not have \
             permissions."
        ),
    )
}

/// Error 4924 for a column the table does not have (`verb`: `DROP COLUMN`, `ALTER COLUMN`).
fn no_such_column(verb: &str, column: &str, table: &str) -> SqlError {
    SqlError::new(
        4924,
        format!(
            "ALTER TABLE {verb} failed because column '{column}' does not exist in table \
             '{table}'."
        ),
    )
}

/// The error for what Walden's `ALTER TABLE` does not do.
fn unsupported(what: &str) -> SqlError {
    SqlError::new(50000, format!("ALTER TABLE {what} is not supported by Walden."))
}

/// Whether token `at` of `tokens` names column `column`: a word or delimited identifier
/// of that name that is not a function's (followed by `(`: `YEAR(d)` does not name a
/// column `year`).
fn is_column(tokens: &[Token<'_>], at: usize, column: &str) -> bool {
    let named = match &tokens[at].kind {
        TokenKind::Word => tokens[at].text.eq_ignore_ascii_case(column),
        TokenKind::QuotedIdent(name) => name.eq_ignore_ascii_case(column),
        _ => false,
    };
    named && tokens.get(at + 1).is_none_or(|next| next.kind != TokenKind::LParen)
}

/// Whether the SQL text `text` (a CHECK constraint) names column `column`.
pub(crate) fn names_column(text: &str, column: &str) -> bool {
    tokenize(text).is_ok_and(|tokens| (0..tokens.len()).any(|at| is_column(&tokens, at, column)))
}

/// Whether a change of a column from `old` to `new` only lengthens a variable-length type:
/// the one change SQL Server allows on a column an index or CHECK constraint depends on.
fn only_widens(old: SqlType, new: SqlType) -> bool {
    let wider = |a: Len, b: Len| match (a, b) {
        (_, Len::Max) => true,
        (Len::N(a), Len::N(b)) => b >= a,
        (Len::Max, Len::N(_)) => false,
    };
    match (old, new) {
        (SqlType::VarChar(a), SqlType::VarChar(b))
        | (SqlType::NVarChar(a), SqlType::NVarChar(b))
        | (SqlType::VarBinary(a), SqlType::VarBinary(b)) => wider(a, b),
        _ => false,
    }
}

/// The objects of `def` that depend on column `c`, as error 5074 names them.
/// What `ALTER COLUMN` changes a column to.
struct ColumnChange<'a> {
    data_type: &'a DataType,
    nullable: Option<bool>,
    /// `COLLATE name`; without it the column takes the default collation.
    collation: &'a Option<Ident>,
}

fn dependents(def: &TableDef, c: usize) -> Vec<SqlError> {
    let column = &def.columns[c].name;
    let mut found = Vec::new();
    let mut indexes: Vec<&IndexDef> =
        def.indexes.iter().filter(|i| i.columns.contains(&c)).collect();
    indexes.sort_by_key(|i| i.id);
    for index in indexes {
        let kind = if index.primary_key || index.unique_constraint { "object" } else { "index" };
        found.push(SqlError::new(
            5074,
            format!("The {kind} '{}' is dependent on column '{column}'.", index.name),
        ));
    }
    if def.columns[c].default.is_some() {
        let name = default_constraint_name(def, c);
        found.push(SqlError::new(
            5074,
            format!("The object '{name}' is dependent on column '{column}'."),
        ));
    }
    for check in def.checks.iter().filter(|k| names_column(&k.text, column)) {
        found.push(SqlError::new(
            5074,
            format!("The object '{}' is dependent on column '{column}'.", check.name),
        ));
    }
    for other in def.columns.iter().filter(|o| {
        o.computed.as_ref().is_some_and(|k| o.name != *column && names_column(&k.text, column))
    }) {
        found.push(SqlError::new(
            5074,
            format!("The column '{}' is dependent on column '{column}'.", other.name),
        ));
    }
    for fk in def.foreign_keys.iter().filter(|fk| fk.columns.contains(&c)) {
        found.push(SqlError::new(
            5074,
            format!("The object '{}' is dependent on column '{column}'.", fk.name),
        ));
    }
    found
}

impl Run<'_> {
    /// `ALTER TABLE`, the statement at `line`.
    pub(crate) fn alter_table(&mut self, a: &AlterTable, line: u32) -> Result<(), SqlError> {
        let shown = a.table.name.value.clone();
        let t = self
            .resolve_table(&a.table, &shown)
            .map_err(|_| cannot_find(&display_name(&a.table)))?;
        // The definition the change starts from must be the one in force under the table's X
        // lock: resolved again once the lock is held.
        let object = Resource::Object { db: t.db.id(), object: t.def.id };
        self.tx().lock(&object, LockMode::X).map_err(|e| self.s.engine_error(e))?;
        let t = self
            .resolve_table(&a.table, &shown)
            .map_err(|_| cannot_find(&display_name(&a.table)))?;
        match &a.action {
            AlterTableAction::Add { nocheck, items } => {
                self.alter_add(&t, &shown, *nocheck, items, line)
            }
            AlterTableAction::AlterColumn { column, data_type, nullable, collation } => {
                let change = ColumnChange { data_type, nullable: *nullable, collation };
                self.alter_column(&t, &shown, column, change, line)
            }
            AlterTableAction::Drop(items) => self.alter_drop(&t, &shown, items, line),
            AlterTableAction::CheckConstraints { with_check, enable, names } => {
                self.toggle_constraints(&t, *with_check, *enable, names.as_deref())
            }
        }
    }

    /// `{CHECK | NOCHECK} CONSTRAINT {ALL | name, ...}`: enables or disables FOREIGN KEY
    /// constraints; `WITH CHECK` checks the existing rows against those it enables. CHECK
    /// constraints are always enforced: naming one is refused rather than ignored, and ALL
    /// leaves them on.
    fn toggle_constraints(
        &mut self,
        t: &TableRef,
        with_check: bool,
        enable: bool,
        names: Option<&[Ident]>,
    ) -> Result<(), SqlError> {
        let mut new = TableDef::clone(&t.def);
        let mut chosen = Vec::new();
        match names {
            None => chosen.extend(0..new.foreign_keys.len()),
            Some(names) => {
                for name in names {
                    let name = &name.value;
                    if let Some(k) =
                        new.foreign_keys.iter().position(|f| f.name.eq_ignore_ascii_case(name))
                    {
                        chosen.push(k);
                    } else if new.checks.iter().any(|c| c.name.eq_ignore_ascii_case(name)) {
                        return Err(unsupported("NOCHECK of a CHECK constraint"));
                    } else {
                        return Err(SqlError::new(
                            4917,
                            format!("Constraint '{name}' does not exist."),
                        ));
                    }
                }
            }
        }
        for &k in &chosen {
            new.foreign_keys[k].disabled = !enable;
        }
        let db = Arc::clone(&t.db);
        self.tx()
            .alter_table_metadata(&db, &t.def, new.clone())
            .map_err(|e| self.s.engine_error(e))?;
        if enable && with_check {
            let fks: Vec<_> = chosen.iter().map(|&k| new.foreign_keys[k].clone()).collect();
            let now = TableRef {
                db,
                def: Arc::new(new),
                qual: t.qual.clone(),
                view_check: None,
                wanted: None,
            };
            self.check_table_keys(&now, &fks)?;
        }
        Ok(())
    }

    /// Sends errors that precede the one a statement at `line` fails with (5074 before
    /// 4922, 1781 before 1750), as SQL Server sends several for one failure.
    fn report_all(&mut self, errors: Vec<SqlError>, line: u32) {
        for e in errors {
            self.report(e.at_line(line));
        }
    }

    /// Rebuilds `t` as `new`: every row through `convert`, then the CHECK constraints
    /// `checks`, then into the new trees.
    fn rebuild(
        &mut self,
        t: &TableRef,
        new: TableDef,
        checks: &[(String, Arc<Expr>)],
        mut convert: impl FnMut(&mut Self, Vec<Value>) -> Result<Vec<Value>, SqlError>,
    ) -> Result<(), SqlError> {
        let db = Arc::clone(&t.db);
        let mut rebuild: TableRebuild =
            self.tx().begin_rebuild(&db, &t.def, new).map_err(|e| self.s.engine_error(e))?;
        let def = rebuild.def().clone();
        let cols = if checks.is_empty() { Vec::new() } else { table_cols(&def, &def.name) };
        let mut cursor = self
            .tx()
            .scan_table(&db, &t.def, Bound::Unbounded, Bound::Unbounded)
            .map_err(|e| self.s.engine_error(e))?;
        while let Some((row_id, values)) =
            cursor.next_row(self.tx()).map_err(|e| self.s.engine_error(e))?
        {
            let values = convert(self, values)?;
            self.check_row(&def, &cols, checks, &values, "ALTER TABLE")?;
            rebuild.insert(self.tx(), &row_id, values).map_err(|e| self.s.engine_error(e))?;
        }
        rebuild.finish(self.tx()).map_err(|e| self.s.engine_error(e))?;
        Ok(())
    }

    /// Tests `checks` on every row of `t` (error 547), for constraints added without a
    /// change of columns.
    fn check_existing_rows(
        &mut self,
        t: &TableRef,
        checks: &[(String, Arc<Expr>)],
    ) -> Result<(), SqlError> {
        let db = Arc::clone(&t.db);
        let cols = table_cols(&t.def, &t.def.name);
        self.for_each_row(&db, &t.def, |run, _, values| {
            run.check_row(&t.def, &cols, checks, &values, "ALTER TABLE")
        })
    }

    /// A constraint name not yet taken in `def`: `name` as written (error 2714 and 1750 when
    /// taken), or a generated `CK__` name.
    fn check_name(
        &mut self,
        def: &TableDef,
        written: Option<&Ident>,
        generated: &str,
        line: u32,
    ) -> Result<String, SqlError> {
        let taken = |n: &str| {
            def.checks.iter().any(|c| c.name.eq_ignore_ascii_case(n))
                || def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n))
        };
        if let Some(name) = written {
            if taken(&name.value) {
                let taken =
                    format!("There is already an object named '{}' in the database.", name.value);
                self.report_all(vec![SqlError::new(2714, taken)], line);
                return Err(SqlError::new(
                    1750,
                    "Could not create constraint or index. See previous errors.",
                ));
            }
            return Ok(name.value.clone());
        }
        let db = self.s.db.name().to_string();
        let mut name = generated.to_string();
        let mut seq = def.checks.len() as u64 + 1;
        while taken(&name) {
            seq += 1;
            name = generated_name("CK", &db, &def.name, seq);
        }
        Ok(name)
    }

    /// `ALTER TABLE ... ALTER COLUMN`: a new type and nullability; existing values are
    /// converted as by an assignment.
    fn alter_column(
        &mut self,
        t: &TableRef,
        shown: &str,
        column: &Ident,
        change: ColumnChange<'_>,
        line: u32,
    ) -> Result<(), SqlError> {
        let ColumnChange { data_type, nullable, collation } = change;
        let Some(c) = t.def.column(&column.value) else {
            return Err(no_such_column("ALTER COLUMN", &column.value, shown));
        };
        let ty = self.resolve_type(data_type)?;
        // Without COLLATE a text column takes the database's default, as in SQL Server.
        let collation = match collation {
            Some(name) => crate::exec::ddl::column_collation(&name.value, ty)?,
            None => None,
        };
        let old = &t.def.columns[c];
        // Index keys (and what CHECK constraints and computed columns compare) follow the
        // collation: SQL Server refuses the change while they depend on the column.
        let collation_changed = ty.is_text()
            && old.ty.is_text()
            && !collation
                .as_deref()
                .unwrap_or_default()
                .eq_ignore_ascii_case(old.collation.as_deref().unwrap_or_default());
        if old.computed.is_some() {
            return Err(SqlError::new(
                4928,
                format!("Cannot alter column '{}' because it is 'COMPUTED'.", old.name),
            ));
        }
        let identity = old.identity.is_some();
        if identity {
            check_identity_type(ty, &old.name)?;
        }
        // Without NULL or NOT NULL the session's ANSI_NULL_DFLT_ON / _OFF decide, as in SQL
        // Server; an identity column stays NOT NULL.
        let nullable = !identity && nullable.unwrap_or(self.s.opts.semantics.new_column_nullable());
        let in_primary_key = t.def.indexes.iter().any(|i| i.primary_key && i.columns.contains(&c));
        let mut depended = dependents(&t.def, c);
        depended.extend(self.statistics_on_column(&t.db, &t.def, c));
        let default_only = depended.len() == 1 && old.default.is_some();
        let allowed = depended.is_empty()
            || default_only
            || (!in_primary_key
                && !collation_changed
                && nullable == old.nullable
                && only_widens(old.ty, ty));
        if !allowed {
            let name = old.name.clone();
            self.report_all(depended, line);
            return Err(SqlError::new(
                4922,
                format!(
                    "ALTER TABLE ALTER COLUMN {name} failed because one or more objects access \
                     this column."
                ),
            ));
        }
        self.auto_statistics_dropped(&t.db, &t.def, c as u16)?;
        let mut new = TableDef::clone(&t.def);
        let declared = crate::exec::ddl::user_types::declared_as(data_type);
        new.columns[c] = ColumnDef { ty, nullable, collation, declared, ..old.clone() };
        let def = new.clone();
        let table = format!("{}.{}.{}", self.s.db.name(), t.def.schema, shown);
        self.rebuild(t, new, &[], |run, mut row| {
            let v = std::mem::replace(&mut row[c], Value::Null);
            let v = if v.is_null() { v } else { run.store(&def, c, v)? };
            if v.is_null() && !nullable {
                return Err(SqlError::new(
                    515,
                    format!(
                        "Cannot insert the value NULL into column '{}', table '{table}'; column \
                         does not allow nulls. UPDATE fails.",
                        def.columns[c].name
                    ),
                ));
            }
            row[c] = v;
            Ok(row)
        })
    }

    /// `ALTER TABLE ... DROP`: columns and PRIMARY KEY or UNIQUE constraints (rebuilding the
    /// table), CHECK and DEFAULT constraints (in the catalog only).
    fn alter_drop(
        &mut self,
        t: &TableRef,
        shown: &str,
        items: &[AlterDrop],
        line: u32,
    ) -> Result<(), SqlError> {
        let mut new = TableDef::clone(&t.def);
        let mut dropped: Vec<String> = Vec::new();
        let mut indexes_changed = false;
        for item in items.iter().filter(|i| !i.column) {
            let name = &item.name.value;
            if let Some(k) = new.checks.iter().position(|c| c.name.eq_ignore_ascii_case(name)) {
                new.checks.remove(k);
            } else if let Some(k) =
                new.foreign_keys.iter().position(|f| f.name.eq_ignore_ascii_case(name))
            {
                new.foreign_keys.remove(k);
            } else if let Some(c) = (0..new.columns.len()).find(|&c| {
                new.columns[c].default.is_some()
                    && default_constraint_name(&t.def, c).eq_ignore_ascii_case(name)
            }) {
                new.columns[c].default = None;
            } else if let Some(k) = new.indexes.iter().position(|i| {
                (i.primary_key || i.unique_constraint) && i.name.eq_ignore_ascii_case(name)
            }) {
                let index_id = new.indexes[k].id;
                let referencing = t.db.referencing(t.def.id).into_iter().find_map(|other| {
                    let fk = other.foreign_keys.iter().find(|fk| {
                        fk.ref_table == t.def.id && fk.ref_index == index_id && other.id != t.def.id
                    })?;
                    Some((other.name.clone(), fk.name.clone()))
                });
                if let Some((table, fk)) = referencing {
                    let cause = SqlError::new(
                        3725,
                        format!("The constraint '{}' is being referenced by table '{table}', foreign key constraint '{fk}'.", new.indexes[k].name),
                    );
                    self.report_all(vec![cause], line);
                    return Err(SqlError::new(
                        3727,
                        "Could not drop constraint. See previous errors.",
                    ));
                }
                // The index goes with its constraint; without its clustered index the table
                // becomes a heap (the rebuild below gives the rows locators).
                if new.indexes[k].id == 1 {
                    new.indexes[k] = IndexDef::heap(new.indexes[k].root);
                } else {
                    new.indexes.remove(k);
                }
                indexes_changed = true;
            } else if !item.if_exists {
                let missing = SqlError::new(3728, format!("'{name}' is not a constraint."));
                self.report_all(vec![missing], line);
                return Err(SqlError::new(3727, "Could not drop constraint. See previous errors."));
            }
        }
        for item in items.iter().filter(|i| i.column) {
            let name = &item.name.value;
            let Some(c) = new.column(name) else {
                if item.if_exists {
                    continue;
                }
                return Err(no_such_column("DROP COLUMN", name, shown));
            };
            let mut depended = dependents(&new, c);
            // Statistics name the columns' positions before this statement.
            let before = t.def.column(name).unwrap_or(c);
            depended.extend(self.statistics_on_column(&t.db, &t.def, before));
            if !depended.is_empty() {
                let column = new.columns[c].name.clone();
                self.report_all(depended, line);
                return Err(SqlError::new(
                    4922,
                    format!(
                        "ALTER TABLE DROP COLUMN {column} failed because one or more objects \
                         access this column."
                    ),
                ));
            }
            if new.columns.len() == 1 {
                return Err(SqlError::new(
                    4923,
                    format!(
                        "ALTER TABLE DROP COLUMN failed because '{}' is the only data column in \
                         table '{shown}'. A table must have at least one data column.",
                        new.columns[c].name
                    ),
                ));
            }
            dropped.push(new.columns[c].name.clone());
            new.columns.remove(c);
            let key_columns = new.indexes.iter_mut().map(|i| &mut i.columns);
            for columns in key_columns.chain(new.foreign_keys.iter_mut().map(|f| &mut f.columns)) {
                for k in columns {
                    if *k > c {
                        *k -= 1;
                    }
                }
            }
        }
        let db = Arc::clone(&t.db);
        self.statistics_indexes_dropped(&db, &t.def, &new)?;
        if dropped.is_empty() && !indexes_changed {
            self.tx().alter_table_metadata(&db, &t.def, new).map_err(|e| self.s.engine_error(e))?;
            return Ok(());
        }
        // The old row's values, less the dropped columns, in order.
        let keep: Vec<bool> = t
            .def
            .columns
            .iter()
            .map(|col| !dropped.iter().any(|d| d.eq_ignore_ascii_case(&col.name)))
            .collect();
        self.rebuild(t, new, &[], |_, row| {
            Ok(row.into_iter().zip(&keep).filter(|(_, k)| **k).map(|(v, _)| v).collect())
        })?;
        let gone: Vec<u32> = (1..).zip(&keep).filter(|(_, k)| !**k).map(|(c, _)| c).collect();
        let positions: Vec<usize> = gone.iter().map(|&c| c as usize - 1).collect();
        self.statistics_columns_dropped(&db, t.def.id, &positions)?;
        self.columns_dropped(&db, t.def.id, &gone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_texts_find_their_columns() {
        assert!(names_column("([qty] >= 0 AND b < 1)", "QTY"));
        assert!(!names_column("'qty' <> name", "qty"));
    }

    #[test]
    fn only_a_longer_variable_length_type_is_a_widening() {
        let vc = |n| SqlType::VarChar(Len::N(n));
        assert!(only_widens(vc(10), vc(20)));
        assert!(only_widens(vc(10), SqlType::VarChar(Len::Max)));
        assert!(!only_widens(vc(20), vc(10)));
        assert!(!only_widens(vc(10), SqlType::NVarChar(Len::N(20))));
        assert!(!only_widens(SqlType::Int, SqlType::BigInt));
    }
}
