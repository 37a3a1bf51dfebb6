//! A database's life in the instance: `CREATE DATABASE` (from model's options), `DROP
//! DATABASE`, `ALTER DATABASE ... SET ONLINE | OFFLINE | READ_ONLY`, file and durability
//! changes, and the databases that could not be opened. Every change is recorded in master
//! before it is acted on, so a restart finds each database in the state last recorded; a
//! database that fails to open is kept as an [`UnavailableDatabase`] rather than taking the
//! instance down.

use std::sync::{Arc, PoisonError};

use walden_log::policy::DatabaseDurability;

use super::entry::DatabaseEntry;
use super::{
    announce_online, fold, is_system_database, open_entry, read_outcomes, Instance, DATABASES_ROOT,
    FIRST_USER_DB_ID, MASTER_ID, MODEL_ID, MSDB_ID,
};
use crate::database::{Database, DatabaseConfig, DatabaseFiles, RecoveryModel};
use crate::error::EngineError;
use crate::events::EventLevel;
use crate::files::{FileChange, FileLayout};
use crate::txn::Isolation;

impl Instance {
    /// ALTER DATABASE ... SET ONLINE: opens (and recovers) a database that could not be opened
    /// before. Already online: nothing to do. Offline after an I/O failure: error 5011-like,
    /// as its files are still held by the failed instance of it until a restart.
    pub fn set_online(&self, name: &str) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let key = fold(name);
        let pending =
            self.unavailable.read().unwrap_or_else(PoisonError::into_inner).get(&key).cloned();
        let Some(pending) = pending else {
            let db = self.database(name)?;
            return match db.check_online() {
                Ok(()) => Ok(()),
                Err(e) => Err(EngineError::Invalid(format!(
                    "Database '{}' went offline while open ({e}); restart the instance to \
                     recover it.",
                    db.name()
                ))),
            };
        };
        let events = &self.config.database.events;
        events.emit(
            EventLevel::Info,
            &format!("database {}: SET ONLINE: opening it again", pending.entry.name),
        );
        let (outcomes, _) = read_outcomes(&self.master)?;
        let entry = DatabaseEntry { offline: false, ..pending.entry.clone() };
        match open_entry(&self.vfs, &entry, &self.config, &outcomes) {
            Ok(db) => {
                if pending.offline {
                    // Online again, across restarts too.
                    self.master_put(&entry, false)?;
                }
                announce_online(&db);
                self.unavailable.write().unwrap_or_else(PoisonError::into_inner).remove(&key);
                self.databases.write().unwrap_or_else(PoisonError::into_inner).insert(key, db);
                Ok(())
            }
            Err(error) => {
                let u = UnavailableDatabase::new(pending.entry, &error);
                u.announce(events);
                let err = u.error();
                self.unavailable.write().unwrap_or_else(PoisonError::into_inner).insert(key, u);
                Err(err)
            }
        }
    }
}

impl Instance {
    pub(super) fn master_put(&self, entry: &DatabaseEntry, new: bool) -> Result<(), EngineError> {
        let mut tx = self.begin(Isolation::ReadCommitted, None);
        tx.mark_ddl(&self.master)?;
        let key = fold(&entry.name).into_bytes();
        if new {
            if !tx.tree_insert(&self.master, DATABASES_ROOT, &key, &entry.encode(&self.dir))? {
                return Err(EngineError::DatabaseExists(entry.name.clone()));
            }
        } else {
            tx.tree_update(&self.master, DATABASES_ROOT, &key, &entry.encode(&self.dir))?;
        }
        tx.commit(walden_log::policy::CommitOption::Unspecified)?;
        Ok(())
    }

    pub(super) fn entry_of(&self, db: &Database) -> DatabaseEntry {
        DatabaseEntry {
            id: db.id(),
            name: db.name().to_string(),
            files: db.files().clone(),
            delayed_durability: db.delayed_durability(),
            recovery_model: db.recovery_model(),
            layout: db.file_layout(),
            offline: false,
            read_only: db.is_read_only(),
        }
    }

    /// ALTER DATABASE ... SET OFFLINE: checkpoints and closes the database, which then
    /// refuses every use (942) and shows as OFFLINE, recorded in master so that it stays
    /// offline across restarts until SET ONLINE. The caller has ended the sessions using it.
    /// Already offline: nothing to do.
    pub fn set_offline(&self, name: &str) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let key = fold(name);
        if let Some(u) = self.unavailable.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return if u.offline { Ok(()) } else { Err(u.error()) };
        }
        let db = self.database(name)?;
        if is_system_database(db.id()) {
            return Err(EngineError::FileRefused {
                number: 5058,
                message: format!("Option 'OFFLINE' cannot be set in database '{}'.", db.name()),
            });
        }
        let entry = DatabaseEntry { offline: true, ..self.entry_of(&db) };
        self.master_put(&entry, false)?;
        self.databases.write().unwrap_or_else(PoisonError::into_inner).remove(&key);
        self.unavailable
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, UnavailableDatabase::set_offline(entry));
        db.persist_caches()?;
        db.close()?;
        self.config
            .database
            .events
            .emit(EventLevel::Info, &format!("database {}: SET OFFLINE", db.name()));
        Ok(())
    }

    /// ALTER DATABASE ... SET READ_ONLY (true) or READ_WRITE, recorded in master.
    pub fn set_read_only(&self, name: &str, read_only: bool) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let db = self.database(name)?;
        if is_system_database(db.id()) {
            let option = if read_only { "READ_ONLY" } else { "READ_WRITE" };
            return Err(EngineError::FileRefused {
                number: 5058,
                message: format!("Option '{option}' cannot be set in database '{}'.", db.name()),
            });
        }
        db.set_read_only(read_only);
        self.master_put(&self.entry_of(&db), false)
    }

    /// CREATE DATABASE; `files` default to `<dir>/<name>.mdf` and `<dir>/<name>_log.ldf`,
    /// their sizes and growth to the instance's (`model`'s).
    pub fn create_database(
        &self,
        name: &str,
        files: Option<DatabaseFiles>,
    ) -> Result<Arc<Database>, EngineError> {
        self.create_database_with(name, files, self.config.database.files.clone())
    }

    /// CREATE DATABASE ... ON (...) LOG ON (...): like [`Instance::create_database`], with
    /// the files' names, sizes, growth and maximum sizes given.
    pub fn create_database_with(
        &self,
        name: &str,
        files: Option<DatabaseFiles>,
        layout: FileLayout,
    ) -> Result<Arc<Database>, EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        if !matches!(self.database(name), Err(EngineError::NoSuchDatabase(_))) {
            return Err(EngineError::DatabaseExists(name.to_string()));
        }
        let files = files.unwrap_or_else(|| DatabaseFiles {
            data: self.dir.join(format!("{name}.mdf")),
            log: self.dir.join(format!("{name}_log.ldf")),
        });
        // Ids of databases that could not be opened stay taken: their files still carry them.
        let id = self
            .databases()
            .iter()
            .map(|d| d.id())
            .chain(self.unavailable_databases().iter().map(|u| u.entry.id))
            .max()
            .unwrap_or(0)
            .max(FIRST_USER_DB_ID - 1)
            + 1;
        let model = self.database("model").ok().filter(|m| m.check_online().is_ok());
        self.create_registered(name, id, files, layout, model.as_deref())
    }

    /// Gives new database `db` the options of `model`, as SQL Server makes each new database
    /// from model: its recovery model, DELAYED_DURABILITY and AUTO_CREATE/AUTO_UPDATE_STATISTICS
    /// (model's objects are not copied; see docs/COMPAT.md). The caller records the first two
    /// in master.
    fn copy_model_options(&self, db: &Arc<Database>, model: &Database) -> Result<(), EngineError> {
        db.set_recovery_model(model.recovery_model());
        db.set_delayed_durability(model.delayed_durability());
        let statistics = (model.auto_create_statistics(), model.auto_update_statistics());
        if statistics != (db.auto_create_statistics(), db.auto_update_statistics()) {
            let mut tx = self.begin(Isolation::ReadCommitted, None);
            tx.set_statistics_options(db, statistics.0, statistics.1)?;
            tx.commit(walden_log::policy::CommitOption::Unspecified)?;
        }
        Ok(())
    }

    /// Creates model and msdb if master does not list them (a new instance, or a data
    /// directory from before they existed). A name already taken, by a user database or by
    /// one that could not be opened, is left as it is.
    pub(super) fn add_missing_system_databases(&self) {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        for (name, id, data, log) in [
            ("model", MODEL_ID, "model.mdf", "modellog.ldf"),
            ("msdb", MSDB_ID, "MSDBData.mdf", "MSDBLog.ldf"),
        ] {
            if !matches!(self.database(name), Err(EngineError::NoSuchDatabase(_))) {
                continue;
            }
            let files = DatabaseFiles { data: self.dir.join(data), log: self.dir.join(log) };
            let events = &self.config.database.events;
            let layout = self.config.database.files.clone();
            match self.create_registered(name, id, files, layout, None) {
                Ok(_) => events.emit(
                    EventLevel::Info,
                    &format!("database {name}: created (database id {id})"),
                ),
                // Without it the instance still serves master and the user databases; a use
                // of it is error 911 until the cause (files left by an interrupted first
                // start, say, which are never overwritten) is cleared and the server restarts.
                Err(error) => events.emit(
                    EventLevel::Warn,
                    &format!("database {name}: could not be created: {error}"),
                ),
            }
        }
    }

    /// Creates database `name` with id `id` on `files`, with `model`'s options if given, and
    /// records it in master; on failure nothing of it is left. The caller holds `ddl` and has
    /// checked that the name is free.
    fn create_registered(
        &self,
        name: &str,
        id: u32,
        files: DatabaseFiles,
        layout: FileLayout,
        model: Option<&Database>,
    ) -> Result<Arc<Database>, EngineError> {
        let db = Database::create(
            Arc::clone(&self.vfs),
            name,
            id,
            files.clone(),
            DatabaseConfig { files: layout, ..self.config.database.clone() },
        );
        let db = match db {
            Ok(db) => Arc::new(db),
            Err(e) => {
                if !matches!(e, EngineError::FileExists(_)) {
                    let _ = self.vfs.remove(&files.data);
                    let _ = self.vfs.remove(&files.log);
                }
                return Err(e);
            }
        };
        let registered = match model {
            Some(model) => self.copy_model_options(&db, model),
            None => Ok(()),
        }
        .and_then(|()| self.master_put(&self.entry_of(&db), true));
        if let Err(e) = registered {
            let _ = db.close();
            let _ = self.vfs.remove(&files.data);
            let _ = self.vfs.remove(&files.log);
            return Err(e);
        }
        self.databases
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(fold(name), Arc::clone(&db));
        Ok(db)
    }

    /// DROP DATABASE: fails with 3702 while a transaction other than the caller's uses it.
    pub fn drop_database(&self, name: &str) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let key = fold(name);
        if self.unavailable.read().unwrap_or_else(PoisonError::into_inner).contains_key(&key) {
            // Its files are left alone: they could not be opened, may be another instance's,
            // and are what an operator would want to look at.
            let mut tx = self.begin(Isolation::ReadCommitted, None);
            tx.mark_ddl(&self.master)?;
            tx.tree_delete(&self.master, DATABASES_ROOT, key.as_bytes())?;
            tx.commit(walden_log::policy::CommitOption::Unspecified)?;
            if let Some(u) =
                self.unavailable.write().unwrap_or_else(PoisonError::into_inner).remove(&key)
            {
                self.config.database.events.emit(
                    EventLevel::Info,
                    &format!(
                        "database {} dropped while {}; its files {} and {} were left in place",
                        u.entry.name,
                        u.state_desc(),
                        u.entry.files.data.display(),
                        u.entry.files.log.display()
                    ),
                );
            }
            return Ok(());
        }
        let db = self.database(name)?;
        if is_system_database(db.id()) {
            return Err(EngineError::FileRefused {
                number: 3708,
                message: format!(
                    "Cannot drop the database '{name}' because it is a system database."
                ),
            });
        }
        if Arc::strong_count(&db) > 3 {
            return Err(EngineError::InUse(format!(
                "Cannot drop database \"{name}\" because it is currently in use."
            )));
        }
        let mut tx = self.begin(Isolation::ReadCommitted, None);
        tx.mark_ddl(&self.master)?;
        tx.tree_delete(&self.master, DATABASES_ROOT, fold(name).as_bytes())?;
        tx.commit(walden_log::policy::CommitOption::Unspecified)?;
        self.databases.write().unwrap_or_else(PoisonError::into_inner).remove(&fold(name));
        db.space().pool().discard();
        let _ = db.close();
        self.vfs.remove(&db.files().data).map_err(|e| EngineError::Io(e.to_string()))?;
        self.vfs.remove(&db.files().log).map_err(|e| EngineError::Io(e.to_string()))?;
        Ok(())
    }

    /// ALTER DATABASE ... SET DELAYED_DURABILITY.
    pub fn set_delayed_durability(
        &self,
        name: &str,
        setting: DatabaseDurability,
    ) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let db = self.database(name)?;
        db.set_delayed_durability(setting);
        if db.is_temp() || db.id() == MASTER_ID {
            return Ok(());
        }
        self.master_put(&self.entry_of(&db), false)
    }

    /// ALTER DATABASE ... MODIFY FILE (NAME = `file`, SIZE | MAXSIZE | FILEGROWTH = ...):
    /// `file` is a logical name. Error 5041 if the database has no such file.
    pub fn modify_file(
        &self,
        name: &str,
        file: &str,
        change: FileChange,
    ) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let db = self.database(name)?;
        let kind = db.file_by_name(file).ok_or_else(|| EngineError::FileRefused {
            number: 5041,
            message: format!("MODIFY FILE failed. File '{file}' does not exist."),
        })?;
        db.modify_file(kind, change)?;
        if db.is_temp() || db.id() == MASTER_ID {
            return Ok(());
        }
        self.master_put(&self.entry_of(&db), false)
    }

    /// ALTER DATABASE ... SET RECOVERY.
    pub fn set_recovery_model(&self, name: &str, model: RecoveryModel) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let db = self.database(name)?;
        db.set_recovery_model(model);
        if db.is_temp() || db.id() == MASTER_ID {
            return Ok(());
        }
        self.master_put(&self.entry_of(&db), false)
    }
}

/// A database registered in master that could not be opened: SQL Server's RECOVERY_PENDING
/// (its files could not be opened or read) or SUSPECT (recovery ran and found damage).
#[derive(Debug, Clone)]
pub struct UnavailableDatabase {
    /// Its entry in master.
    pub entry: DatabaseEntry,
    /// Recovery found damage (SUSPECT), rather than could not start (RECOVERY_PENDING).
    pub suspect: bool,
    /// Set OFFLINE (`ALTER DATABASE ... SET OFFLINE`): not a failure, nothing to announce.
    pub offline: bool,
    /// Why it could not be opened.
    pub reason: String,
}

impl UnavailableDatabase {
    pub(super) fn new(entry: DatabaseEntry, error: &EngineError) -> Self {
        UnavailableDatabase {
            entry,
            suspect: matches!(error, EngineError::Corrupt(_)),
            offline: false,
            reason: error.to_string(),
        }
    }

    /// A database set OFFLINE.
    pub(super) fn set_offline(entry: DatabaseEntry) -> Self {
        UnavailableDatabase {
            entry,
            suspect: false,
            offline: true,
            reason: "set OFFLINE".to_string(),
        }
    }

    /// `sys.databases.state_desc`.
    pub fn state_desc(&self) -> &'static str {
        if self.offline {
            "OFFLINE"
        } else if self.suspect {
            "SUSPECT"
        } else {
            "RECOVERY_PENDING"
        }
    }

    /// `sys.databases.state`: 3 RECOVERY_PENDING, 4 SUSPECT, 6 OFFLINE.
    pub fn state(&self) -> u8 {
        if self.offline {
            6
        } else if self.suspect {
            4
        } else {
            3
        }
    }

    /// The error a request for it gets.
    pub fn error(&self) -> EngineError {
        if self.offline {
            return EngineError::DatabaseSetOffline(self.entry.name.clone());
        }
        EngineError::DatabaseUnavailable {
            database: self.entry.name.clone(),
            reason: self.reason.clone(),
            suspect: self.suspect,
        }
    }

    pub(super) fn announce(&self, events: &crate::events::EventLog) {
        events.emit(
            EventLevel::Error,
            &format!(
                "database {} is {}: {}; the other databases are not affected. Fix the cause and \
                 run ALTER DATABASE [{}] SET ONLINE",
                self.entry.name,
                self.state_desc(),
                self.reason,
                self.entry.name
            ),
        );
    }
}
