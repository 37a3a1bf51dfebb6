//! Data definition: databases, tables, indexes, sequences, procedures, table variables.
//!
//! This file dispatches every DDL statement and runs the short ones; beside it are `table`
//! (CREATE TABLE, and the definitions table variables and table types share), `drop`,
//! `alter` (ALTER TABLE and `sp_rename`), `sequence` (CREATE and ALTER SEQUENCE), `user_types`
//! (CREATE TYPE), and the database's `files` and `database_state` (ALTER DATABASE).
//!
//! Object DDL runs in the statement's transaction (a user transaction may create and drop
//! tables and roll them back); the engine makes such commits fully durable (rule W7 of
//! `docs/recovery.md`). Database DDL (`CREATE`/`DROP`/`ALTER DATABASE`) is not allowed inside a
//! user transaction, as in SQL Server (error 226).

pub(super) mod alter;
pub(super) mod database_state;
mod drop;
pub(super) mod files;
mod sequence;
mod table;
pub(super) mod user_types;

use std::sync::Arc;

use walden_engine::catalog::ModuleOptions;
use walden_engine::objects::{IndexSpec, ModuleKind};
use walden_engine::types::{SqlType, Value};
use walden_engine::RecoveryModel;
use walden_log::policy::DatabaseDurability;

use crate::ast::{
    Clustering, CreateMode, DatabaseOption, DatabaseRef, DelayedDurability,
    RecoveryModel as AstRecovery, Statement, StatementKind,
};
use crate::exec::ddl::user_types::readonly_needed;
use crate::exec::scalar;
use crate::exec::scalar::collation::DEFAULT_COLLATION;
use crate::exec::session::Run;
use crate::exec::SqlError;
pub(crate) use table::{
    check_identity_type, check_key_types, column_collation, generated_name, TableParts,
};

fn in_transaction(what: &str) -> SqlError {
    SqlError::new(226, format!("{what} statement not allowed within multi-statement transaction."))
}

impl Run<'_> {
    /// Runs a DDL statement.
    pub(crate) fn ddl(&mut self, st: &Statement) -> Result<(), SqlError> {
        match &st.kind {
            StatementKind::CreateDatabase(c) => {
                if self.s.trancount > 0 {
                    return Err(in_transaction("CREATE DATABASE"));
                }
                let other = c.collation.as_ref().map(|n| other_collation(&n.value));
                if let Some(name) = other.transpose()?.flatten() {
                    return Err(SqlError::new(
                        50000,
                        format!(
                            "CREATE DATABASE failed: Walden databases have the server's \
                             collation, {DEFAULT_COLLATION}; COLLATE {name} is not supported."
                        ),
                    ));
                }
                let (files, layout) = self.database_files(c)?;
                self.s
                    .instance
                    .create_database_with(&c.name.value, files, layout)
                    .map_err(|e| self.s.engine_error(e))?;
                Ok(())
            }
            StatementKind::AlterDatabase(a) => {
                if self.s.trancount > 0 {
                    return Err(in_transaction("ALTER DATABASE"));
                }
                let name = match &a.database {
                    DatabaseRef::Name(n) => n.value.clone(),
                    DatabaseRef::Current => self.s.db.name().to_string(),
                };
                if let Some(change) = &a.file {
                    return self.alter_database_file(&name, change);
                }
                if let Some(collation) = &a.collation {
                    self.s.instance.database(&name).map_err(|e| self.s.engine_error(e))?;
                    return match other_collation(&collation.value)? {
                        None => Ok(()),
                        Some(given) => Err(SqlError::new(
                            5072,
                            format!(
                                "ALTER DATABASE failed. The default collation of database \
                                 '{name}' cannot be set to {given}."
                            ),
                        )),
                    };
                }
                // Every option is applied in order; the first that fails stops the rest, as
                // SQL Server applies a list of options one by one.
                for option in &a.options {
                    let r = match option {
                        DatabaseOption::DelayedDurability(d) => {
                            let setting = match d {
                                DelayedDurability::Disabled => DatabaseDurability::Disabled,
                                DelayedDurability::Allowed => DatabaseDurability::Allowed,
                                DelayedDurability::Forced => DatabaseDurability::Forced,
                            };
                            self.s.instance.set_delayed_durability(&name, setting)
                        }
                        DatabaseOption::Recovery(m) => {
                            let model = match m {
                                AstRecovery::Simple => RecoveryModel::Simple,
                                // BULK_LOGGED keeps the log as FULL does; Walden has no
                                // minimally logged operations to treat differently.
                                AstRecovery::Full | AstRecovery::BulkLogged => RecoveryModel::Full,
                            };
                            self.s.instance.set_recovery_model(&name, model)
                        }
                        // Nothing to keep but the statistics options; the database must exist.
                        DatabaseOption::Accepted(text) => match self.statistics_option(&name, text)
                        {
                            Some(r) => r,
                            None => self.s.instance.database(&name).map(|_| ()),
                        },
                        DatabaseOption::Online => self.s.instance.set_online(&name),
                        DatabaseOption::Offline => {
                            self.take_database_offline(&name, a.termination.as_deref())
                        }
                        DatabaseOption::ReadOnly(on) => {
                            self.set_database_read_only(&name, *on, a.termination.as_deref())
                        }
                    };
                    r.map_err(|e| self.s.engine_error(e))?;
                }
                Ok(())
            }
            StatementKind::CreateTable(c) => self.create_table(c, st.span.line),
            StatementKind::AlterTable(a) => self.alter_table(a, st.span.line),
            StatementKind::TruncateTable(name) => {
                let t = self.resolve_table(name, &name.name.value)?;
                self.refuse_if_referenced(&t.db, &t.def, true)?;
                let db = Arc::clone(&t.db);
                self.tx().truncate_table(&db, &t.def).map_err(|e| self.s.engine_error(e))?;
                Ok(())
            }
            StatementKind::CreateIndex(ci) => {
                let mut t = self.resolve_table(&ci.table, &ci.table.name.value)?;
                if ci.drop_existing {
                    t = self.drop_existing_index(t, ci)?;
                }
                let mut columns = Vec::with_capacity(ci.columns.len());
                for c in &ci.columns {
                    columns.push(
                        t.def
                            .column(&c.name.value)
                            .ok_or_else(|| SqlError::invalid_column(&c.name.value))?,
                    );
                }
                check_key_types(&t.def.name, &t.def.columns, &columns)?;
                let clustered = ci.clustering == Some(Clustering::Clustered);
                let spec = IndexSpec {
                    name: ci.name.value.clone(),
                    columns,
                    unique: ci.unique,
                    clustered,
                    primary_key: false,
                    unique_constraint: false,
                    ignore_dup_key: ignore_dup_key_of(ci.ignore_dup_key, ci.unique)?,
                };
                let db = Arc::clone(&t.db);
                if clustered {
                    if let Some(existing) = t.def.indexes.iter().find(|i| i.id == 1 && !i.is_heap())
                    {
                        return Err(SqlError::new(
                            1902,
                            format!(
                                "Cannot create more than one clustered index on table '{}'. Drop \
                                 the existing clustered index '{}' before creating another.",
                                t.def.name, existing.name
                            ),
                        ));
                    }
                    let def = self
                        .tx()
                        .create_clustered_index(&db, &t.def, &spec)
                        .map_err(|e| self.s.engine_error(e))?;
                    return self.index_created(&db, &def, 1);
                }
                let def = self
                    .tx()
                    .create_index(&db, &t.def, &spec)
                    .map_err(|e| self.s.engine_error(e))?;
                if let Some(ix) = def.indexes.last() {
                    self.index_created(&db, &def, ix.id)?;
                }
                Ok(())
            }
            StatementKind::CreateSequence(cs) => self.create_sequence(&cs.name, &cs.options),
            StatementKind::AlterSequence(s) => self.alter_sequence(&s.name, &s.options),
            StatementKind::CreateType(ct) => self.create_type(ct),
            StatementKind::CreateProcedure(p) => {
                let temp = p.name.name.value.starts_with('#');
                let (db, stored) = if temp {
                    self.temp_procedure_target(&p.name.name.value, p.mode)?
                } else {
                    (self.database_of(p.name.database.as_ref())?, p.name.name.value.clone())
                };
                let schema = match &p.name.schema {
                    Some(s) if !temp => s.value.as_str(),
                    _ => "dbo",
                };
                // The engine refuses a name another object has (2714); only ALTER of a
                // procedure that does not exist is for the SQL layer to refuse.
                if p.mode == CreateMode::Alter && db.find_object(schema, &stored).is_none() {
                    return Err(SqlError::invalid_object(&p.name.name.value));
                }
                if let Some(param) = p
                    .parameters
                    .iter()
                    .find(|q| !q.readonly && self.is_table_type(&db, &q.data_type))
                {
                    return Err(readonly_needed(&param.name));
                }
                let names: Vec<&str> = p.parameters.iter().map(|q| q.name.as_str()).collect();
                crate::exec::session::check_declarations(&names, &p.body)?;
                let or_alter = p.mode != CreateMode::Create;
                let options = ModuleOptions {
                    ansi_nulls: self.s.opts.semantics.ansi_nulls,
                    quoted_identifier: self.s.opts.semantics.quoted_identifier,
                };
                self.tx()
                    .put_module(
                        &db,
                        ModuleKind::Procedure(options),
                        schema,
                        &stored,
                        &p.definition,
                        or_alter,
                    )
                    .map_err(|e| self.s.engine_error(e))?;
                if temp {
                    self.temp_procedure_created(&p.name.name.value, stored);
                }
                Ok(())
            }
            StatementKind::CreateView(v) => self.create_view(v),
            StatementKind::CreateFunction(f) => self.create_function(f),
            StatementKind::CreateTrigger(t) => self.create_trigger(t),
            StatementKind::CreateSchema { name, .. } => {
                let db = Arc::clone(&self.s.db);
                self.tx().create_schema(&db, &name.value).map_err(|e| self.s.engine_error(e))
            }
            StatementKind::EnableTrigger(e) => self.enable_trigger(e),
            StatementKind::Drop(d) => {
                for name in &d.names {
                    self.drop(d.kind, name, d.if_exists)?;
                }
                Ok(())
            }
            StatementKind::DropIndex(d) => {
                for index in &d.indexes {
                    self.drop_index(index, d.if_exists)?;
                }
                Ok(())
            }
            other => Err(SqlError::new(
                50000,
                format!("statement not supported: {:?}", std::mem::discriminant(other)),
            )),
        }
    }

    fn int_constant(&mut self, e: &crate::ast::Expr) -> Result<i64, SqlError> {
        match scalar::convert(self.value(e)?, SqlType::BigInt, None)? {
            Value::BigInt(v) => Ok(v),
            _ => Err(SqlError::new(50000, "expected an integer constant")),
        }
    }

    fn number_constant(&mut self, e: &crate::ast::Expr) -> Result<i128, SqlError> {
        let v = self.value(e)?;
        match scalar::convert(v, SqlType::Decimal { precision: 38, scale: 0 }, None)? {
            Value::Decimal(d) => Ok(d.mantissa()),
            _ => Err(SqlError::new(50000, "expected a numeric constant")),
        }
    }
}

/// `IGNORE_DUP_KEY = ON` as an index keeps it: only a unique index may have it (1916).
fn ignore_dup_key_of(on: bool, unique: bool) -> Result<bool, SqlError> {
    if on && !unique {
        return Err(SqlError::new(
            1916,
            "CREATE INDEX options nonunique and ignore_dup_key are mutually exclusive.",
        ));
    }
    Ok(on)
}

/// A database's `COLLATE name` (CREATE or ALTER DATABASE): error 448 for a name SQL Server
/// does not have; None for the server's collation, which every database has; the name of
/// another, which the caller refuses (a database's default collation is not kept).
fn other_collation(name: &str) -> Result<Option<String>, SqlError> {
    let c = scalar::collation::collation_ref(name)?;
    Ok((c.name != DEFAULT_COLLATION).then(|| c.name.clone()))
}
