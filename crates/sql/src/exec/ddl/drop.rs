//! DROP of objects, schemas and indexes, with SQL Server's errors for what is missing, and
//! `IF EXISTS`.

use std::sync::Arc;

use walden_engine::catalog::{Object, SequenceDef};
use walden_engine::{Database, EngineError};

use super::in_transaction;
use crate::ast::{DropKind, Expr, ExprKind, IndexRef, ObjectName};
use crate::exec::execute::query::{display_name, visit_children, TableRef};
use crate::exec::session::Run;
use crate::exec::sysviews::default_constraint_name;
use crate::exec::SqlError;

/// `DROP SYNONYM`: Walden has no synonyms, so the name is never found; SQL Server's 3701, or
/// nothing with IF EXISTS (scripts drop theirs before making them again).
fn drop_missing_synonym(name: &ObjectName, if_exists: bool) -> Result<(), SqlError> {
    if if_exists {
        return Ok(());
    }
    Err(SqlError::new(
        3701,
        format!(
            "Cannot drop the synonym '{}', because it does not exist or you do not have permission.",
            crate::exec::execute::query::display_name(name)
        ),
    ))
}

impl Run<'_> {
    pub(super) fn drop(
        &mut self,
        kind: DropKind,
        name: &ObjectName,
        if_exists: bool,
    ) -> Result<(), SqlError> {
        match kind {
            DropKind::Database => {
                if self.s.trancount > 0 {
                    return Err(in_transaction("DROP DATABASE"));
                }
                let n = &name.name.value;
                // An offline database (or one that could not be opened) is still dropped.
                if matches!(self.s.instance.database(n), Err(EngineError::NoSuchDatabase(_))) {
                    if if_exists {
                        return Ok(());
                    }
                    return Err(SqlError::new(3701, format!("Cannot drop the database '{n}', because it does not exist or you do not have permission.")));
                }
                if self.s.db.name().eq_ignore_ascii_case(n) {
                    return Err(SqlError::new(
                        3702,
                        format!("Cannot drop database \"{n}\" because it is currently in use."),
                    ));
                }
                self.s.instance.drop_database(n).map_err(|e| self.s.engine_error(e))
            }
            DropKind::Table => {
                let temp = name.name.value.starts_with('#');
                let resolved = self.resolve_table_object(name);
                let (db, o) = match resolved {
                    Ok(x) => x,
                    Err(_) if if_exists => return Ok(()),
                    Err(_) => {
                        return Err(SqlError::new(3701, format!("Cannot drop the table '{}', because it does not exist or you do not have permission.", display_name(name))))
                    }
                };
                if let Object::Table(def) = &*o {
                    self.refuse_if_referenced(&db, def, false)?;
                }
                self.tx().drop_object(&db, o.id()).map_err(|e| self.s.engine_error(e))?;
                if temp {
                    self.s.temp_tables.remove(&name.name.value.to_ascii_lowercase());
                }
                Ok(())
            }
            DropKind::Trigger => self.drop_trigger(name, if_exists),
            DropKind::DatabaseTrigger => self.drop_database_trigger(name, if_exists),
            DropKind::ServerTrigger => {
                crate::exec::module::ddl_trigger::drop_server_trigger(name, if_exists)
            }
            DropKind::Synonym => drop_missing_synonym(name, if_exists),
            DropKind::Statistics => self.drop_statistics(name),
            DropKind::Schema => self.drop_schema(&name.name.value, if_exists),
            DropKind::Type => {
                let db = self.database_of(name.database.as_ref())?;
                let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
                let found = db
                    .find_object(schema, &name.name.value)
                    .filter(|o| matches!(**o, Object::Type(_)));
                match found {
                    Some(o) => {
                        self.tx().drop_object(&db, o.id()).map_err(|e| self.s.engine_error(e))
                    }
                    None if if_exists => Ok(()),
                    None => Err(SqlError::new(
                        218,
                        format!(
                            "Could not find the type '{}'. Either it does not exist or you do \
                             not have the necessary permission.",
                            display_name(name)
                        ),
                    )),
                }
            }
            DropKind::Procedure if name.name.value.starts_with('#') => {
                self.drop_temp_procedure(name, if_exists)
            }
            DropKind::Sequence | DropKind::Procedure | DropKind::View | DropKind::Function => {
                let db = self.database_of(name.database.as_ref())?;
                let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
                let found = db.find_object(schema, &name.name.value).filter(|o| match kind {
                    DropKind::Sequence => matches!(**o, Object::Sequence(_)),
                    DropKind::View => matches!(**o, Object::View(_)),
                    DropKind::Function => matches!(**o, Object::Function(_)),
                    _ => matches!(**o, Object::Procedure(_)),
                });
                let Some(o) = found else {
                    if if_exists {
                        return Ok(());
                    }
                    let what = match kind {
                        DropKind::Sequence => "sequence",
                        DropKind::View => "view",
                        DropKind::Function => "function",
                        _ => "procedure",
                    };
                    return Err(SqlError::new(3701, format!("Cannot drop the {what} '{}', because it does not exist or you do not have permission.", display_name(name))));
                };
                if let Object::Sequence(seq) = &*o {
                    if let Some(user) = self.default_drawing_from(&db, seq)? {
                        let shown = display_name(name);
                        return Err(SqlError::catalogued(3729, &["DROP SEQUENCE", &shown, &user]));
                    }
                }
                self.tx().drop_object(&db, o.id()).map_err(|e| self.s.engine_error(e))
            }
        }
    }

    /// The name of the first DEFAULT constraint of `db` whose expression draws from `seq`
    /// (`NEXT VALUE FOR`): SQL Server refuses to drop a sequence a default uses (3729).
    fn default_drawing_from(
        &mut self,
        db: &Arc<Database>,
        seq: &SequenceDef,
    ) -> Result<Option<String>, SqlError> {
        for o in db.catalog().objects() {
            let Object::Table(table) = &*o else { continue };
            for (c, column) in table.columns.iter().enumerate() {
                let Some(text) = &column.default else { continue };
                if draws_from(&*self.stored_expr(text)?, seq) {
                    return Ok(Some(default_constraint_name(table, c)));
                }
            }
        }
        Ok(None)
    }

    /// `DROP SCHEMA [IF EXISTS] name`: a schema made with CREATE SCHEMA that no object is in
    /// (3729 names one that is; 3701 for a schema there is no CREATE SCHEMA of).
    fn drop_schema(&mut self, name: &str, if_exists: bool) -> Result<(), SqlError> {
        let db = Arc::clone(&self.s.db);
        let Some(schema) = db.find_object("", name) else {
            if if_exists {
                return Ok(());
            }
            return Err(SqlError::new(3701, format!("Cannot drop the schema '{name}', because it does not exist or you do not have permission.")));
        };
        let objects = db.catalog().objects();
        let used = objects
            .iter()
            .find(|o| !matches!(***o, Object::Schema(_)) && o.name().0.eq_ignore_ascii_case(name));
        if let Some(o) = used {
            return Err(SqlError::catalogued(3729, &["drop schema", name, o.name().1]));
        }
        self.tx().drop_object(&db, schema.id()).map_err(|e| self.s.engine_error(e))
    }

    /// `DROP INDEX index ON table`: a nonclustered index that no constraint owns.
    pub(super) fn drop_index(&mut self, index: &IndexRef, if_exists: bool) -> Result<(), SqlError> {
        let qualified = format!("{}.{}", index.table.name.value, index.name.value);
        let missing = || {
            SqlError::new(
                3701,
                format!(
                    "Cannot drop the index '{qualified}', because it does not exist or you do \
                     not have permission."
                ),
            )
        };
        let t = match self.resolve_table(&index.table, &index.table.name.value) {
            Ok(t) => t,
            Err(_) if if_exists => return Ok(()),
            Err(_) => return Err(missing()),
        };
        let Some(def) =
            t.def.indexes.iter().find(|i| i.name.eq_ignore_ascii_case(&index.name.value))
        else {
            return if if_exists { Ok(()) } else { Err(missing()) };
        };
        if def.primary_key || def.unique_constraint {
            let constraint = if def.primary_key { "PRIMARY KEY" } else { "UNIQUE KEY" };
            return Err(SqlError::new(
                3723,
                format!(
                    "An explicit DROP INDEX is not allowed on index '{qualified}'. It is being \
                     used for {constraint} constraint enforcement."
                ),
            ));
        }
        let referenced = t.db.referencing(t.def.id).iter().any(|other| {
            other.foreign_keys.iter().any(|fk| fk.ref_table == t.def.id && fk.ref_index == def.id)
        });
        if referenced {
            return Err(SqlError::new(
                3723,
                format!(
                    "An explicit DROP INDEX is not allowed on index '{qualified}'. It is being \
                     used for FOREIGN KEY constraint enforcement."
                ),
            ));
        }
        if def.id == 1 {
            return Err(SqlError::new(
                50000,
                format!(
                    "DROP INDEX of the clustered index '{qualified}' is not supported by Walden \
                     yet: it would rebuild the table as a heap."
                ),
            ));
        }
        let (db, id) = (Arc::clone(&t.db), def.id);
        self.tx().drop_index(&db, &t.def, id).map_err(|e| self.s.engine_error(e))?;
        Ok(())
    }

    /// `CREATE INDEX ... WITH (DROP_EXISTING = ON)`: drops the index of that name on `t`
    /// (7999 if there is none) so that the statement builds it again, and returns the table
    /// as it is without it. Only a nonclustered index that no constraint owns can be rebuilt
    /// so, as only those can be dropped.
    pub(super) fn drop_existing_index(
        &mut self,
        t: TableRef,
        ci: &crate::ast::CreateIndex,
    ) -> Result<TableRef, SqlError> {
        if !t.def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(&ci.name.value)) {
            return Err(SqlError::new(
                7999,
                format!(
                    "Could not find any index named '{}' for table '{}'.",
                    ci.name.value, ci.table.name.value
                ),
            ));
        }
        let index = IndexRef { table: ci.table.clone(), name: ci.name.clone() };
        self.drop_index(&index, false)?;
        self.resolve_table(&ci.table, &ci.table.name.value)
    }
}

/// Whether `e` draws a value from `seq`: a `NEXT VALUE FOR` naming it (in `dbo` when no
/// schema is written, as a default's sequence resolves).
fn draws_from(e: &Expr, seq: &SequenceDef) -> bool {
    if let ExprKind::NextValueFor(next) = &e.kind {
        let schema = next.sequence.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        return schema.eq_ignore_ascii_case(&seq.schema)
            && next.sequence.name.value.eq_ignore_ascii_case(&seq.name);
    }
    let mut found = false;
    visit_children(e, &mut |c| found |= draws_from(c, seq));
    found
}
