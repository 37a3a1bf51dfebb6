//! `DBCC`: the integrity checks (`CHECKDB`, `CHECKTABLE`) over the engine's B-tree check,
//! `SQLPERF(LOGSPACE)`, `OPENTRAN`, `LOGINFO`, `USEROPTIONS` and `DROPCLEANBUFFERS`, with SQL
//! Server's messages and numbers.
//!
//! A check holds a shared lock on each table while it checks the table's trees, so writers
//! wait and every index of the table is seen at the same moment (SQL Server reads an internal
//! snapshot instead; the result is the same, the waiting is not). It checks each tree's
//! invariants (key order and ranges, levels, the leaf chain, page checksums on the way in)
//! and that every index has as many entries as the table has rows.

use std::sync::Arc;

use walden_engine::catalog::{Object, TableDef};
use walden_engine::lock::{LockMode, Resource};
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::Database;

use crate::ast::{Dbcc, DbccArgument, ExprKind, Literal, ObjectName};
use crate::exec::eval::parse_object_name;
use crate::exec::execute::query::display_name;
use crate::exec::scalar::convert;
use crate::exec::session::Run;
use crate::exec::sysviews::{datetime, lsn_parts, open_transactions, ViewContext, Vlf};
use crate::exec::{ColumnInfo, SqlError};

/// Error 2526, which SQL Server gives for a DBCC command or option it does not know.
pub(crate) fn incorrect() -> SqlError {
    SqlError::new(
        2526,
        "Incorrect DBCC statement. Check the documentation for the correct DBCC syntax and options.",
    )
}

/// An informational message (severity 0) with SQL Server's number.
fn info(number: i32, text: String) -> SqlError {
    SqlError::with_severity(number, 0, text)
}

/// Message 2528, which ends a DBCC command's informational messages.
fn completed() -> SqlError {
    info(
        2528,
        "DBCC execution completed. If DBCC printed error messages, contact your system \
         administrator."
            .into(),
    )
}

/// The table a DBCC command's argument names: an identifier or a string.
pub(crate) fn table_argument(arg: &DbccArgument) -> Result<ObjectName, SqlError> {
    match arg {
        DbccArgument::Name(name) => Ok(name.clone()),
        DbccArgument::Value(e) => match &e.kind {
            ExprKind::Literal(Literal::String { value, .. }) => {
                parse_object_name(value).ok_or_else(|| no_such_table(value))
            }
            _ => Err(incorrect()),
        },
    }
}

/// One tree's check: its (entries, pages), or the 8939 error it failed with.
pub(crate) type TreeResult = Result<(u64, u64), SqlError>;

/// What one table's check found.
struct TableReport {
    rows: u64,
    pages: u64,
    /// Consistency errors, each already worded as the message to send.
    errors: Vec<SqlError>,
}

impl Run<'_> {
    /// Runs a `DBCC` statement.
    pub(crate) fn dbcc(&mut self, d: &Dbcc) -> Result<(), SqlError> {
        if d.command.value.eq_ignore_ascii_case("SHOW_STATISTICS") {
            // Its options choose result sets (`statistics_show.rs`).
            if self.dbcc_show_statistics(d)? {
                self.out.message(&completed());
            }
            return Ok(());
        }
        let mut infomsgs = true;
        let mut tableresults = false;
        for option in &d.options {
            match option.value.to_ascii_uppercase().as_str() {
                "NO_INFOMSGS" => infomsgs = false,
                "TABLERESULTS" => tableresults = true,
                // Accepted: every check is already all of these (shared table locks, all
                // errors reported, physical and logical checks together).
                "ALL_ERRORMSGS"
                | "TABLOCK"
                | "PHYSICAL_ONLY"
                | "DATA_PURITY"
                | "EXTENDED_LOGICAL_CHECKS" => {}
                _ => return Err(incorrect()),
            }
        }
        match d.command.value.to_ascii_uppercase().as_str() {
            "CHECKDB" => self.dbcc_checkdb(&d.arguments, infomsgs)?,
            "CHECKTABLE" => self.dbcc_checktable(&d.arguments, infomsgs)?,
            "SQLPERF" => self.dbcc_sqlperf(&d.arguments)?,
            "OPENTRAN" => self.dbcc_opentran(&d.arguments, tableresults, infomsgs)?,
            "LOGINFO" => self.dbcc_loginfo(&d.arguments)?,
            "USEROPTIONS" if d.arguments.is_empty() => self.dbcc_useroptions(),
            // Any plan handle, SQL handle or pool name empties the whole cache.
            "FREEPROCCACHE" => {
                crate::exec::plan::plan_cache::free_proc_cache();
                self.s.plans.clear();
                self.s.counters.query_stats.clear();
            }
            // Server-wide, as in SQL Server: every database's clean, unpinned pages.
            "DROPCLEANBUFFERS" if d.arguments.is_empty() => {
                self.s.instance.frame_pool().drop_clean_pages();
            }
            "CHECKIDENT" => self.dbcc_checkident(&d.arguments, infomsgs)?,
            "INPUTBUFFER" => self.dbcc_inputbuffer(&d.arguments)?,
            "SHRINKFILE" => self.dbcc_shrinkfile(&d.arguments)?,
            "SHRINKDATABASE" => self.dbcc_shrinkdatabase(&d.arguments)?,
            "TRACESTATUS" => self.dbcc_tracestatus(&d.arguments)?,
            "DBINFO" => self.dbcc_dbinfo(&d.arguments, tableresults)?,
            _ => return Err(incorrect()),
        }
        if infomsgs {
            self.out.message(&completed());
        }
        Ok(())
    }

    /// `DBCC CHECKDB [(database | database_id | 0)]`: every table of the database and its
    /// catalog.
    fn dbcc_checkdb(&mut self, args: &[DbccArgument], infomsgs: bool) -> Result<(), SqlError> {
        let db = match args {
            [] => Arc::clone(&self.s.db),
            [arg, ..] => self.dbcc_database(arg)?,
        };
        db.check_online().map_err(|e| self.s.engine_error(e))?;
        if infomsgs {
            self.out.message(&info(2536, format!("DBCC results for '{}'.", db.name())));
        }
        let mut errors = 0;
        if let Err(e) = db.check_catalog() {
            errors += 1;
            self.out.message(&SqlError::new(
                8939,
                format!(
                    "Table error: the catalog of database '{}' failed its check: {e}.",
                    db.name()
                ),
            ));
        }
        for object in db.catalog().objects() {
            let Object::Table(def) = &*object else { continue };
            let report = self.check_table(&db, def)?;
            errors += self.report_table(def, &report, infomsgs);
        }
        if infomsgs || errors > 0 {
            self.out.message(&info(
                8989,
                format!(
                    "CHECKDB found 0 allocation errors and {errors} consistency errors in database '{}'.",
                    db.name()
                ),
            ));
        }
        Ok(())
    }

    /// The table a DBCC command's first argument names (a name or a string).
    fn dbcc_table_name(args: &[DbccArgument]) -> Result<ObjectName, SqlError> {
        args.first().map_or_else(|| Err(incorrect()), table_argument)
    }

    /// `DBCC CHECKIDENT (table [, NORESEED | RESEED [, value]])`: reports the current identity
    /// value and the largest in the column; `RESEED` with a value sets the current value,
    /// without one raises it to the column's largest when it is below (error 7997 for a
    /// table without an identity column).
    fn dbcc_checkident(&mut self, args: &[DbccArgument], infomsgs: bool) -> Result<(), SqlError> {
        let name = Self::dbcc_table_name(args)?;
        let shown = display_name(&name);
        let (db, object) = self.resolve_table_object(&name).map_err(|_| no_such_table(&shown))?;
        let Object::Table(def) = &*object else { return Err(no_such_table(&shown)) };
        let Some((col, _, inc)) = def.identity_column() else {
            return Err(SqlError::new(
                7997,
                format!("'{}' does not contain an identity column.", name.name.value),
            ));
        };
        let action = match args.get(1) {
            None => None,
            Some(DbccArgument::Name(n)) if n.name.value.eq_ignore_ascii_case("NORESEED") => None,
            Some(DbccArgument::Name(n)) if n.name.value.eq_ignore_ascii_case("RESEED") => {
                match args.get(2) {
                    None => Some(None),
                    Some(DbccArgument::Value(e)) => {
                        match convert(self.value(e)?, SqlType::BigInt, None)? {
                            Value::BigInt(v) => Some(Some(v)),
                            _ => return Err(incorrect()),
                        }
                    }
                    Some(DbccArgument::Name(_)) => return Err(incorrect()),
                }
            }
            Some(_) => return Err(incorrect()),
        };
        if args.len() > 3 {
            return Err(incorrect());
        }
        let current = db.identity_current(def);
        let shown_value = |v: Option<i64>| v.map_or_else(|| "NULL".to_string(), |v| v.to_string());
        let reseed = match action {
            Some(Some(value)) => Some(value),
            None | Some(None) => {
                let largest = self.largest_identity(&db, def, col, inc)?;
                if infomsgs {
                    self.out.message(&info(
                        7998,
                        format!(
                            "Checking identity information: current identity value '{}', current column value '{}'.",
                            shown_value(current),
                            shown_value(largest)
                        ),
                    ));
                }
                let behind = |c: i64, l: i64| if inc > 0 { c < l } else { c > l };
                match (action, current, largest) {
                    (Some(None), Some(c), Some(l)) if behind(c, l) => Some(l),
                    (Some(None), None, Some(l)) => Some(l),
                    _ => None,
                }
            }
        };
        if let Some(value) = reseed {
            if infomsgs && matches!(action, Some(Some(_))) {
                self.out.message(&info(
                    7998,
                    format!(
                        "Checking identity information: current identity value '{}'.",
                        shown_value(current)
                    ),
                ));
            }
            db.reseed_identity(def, value).map_err(|e| self.s.engine_error(e))?;
        }
        Ok(())
    }

    /// The identity column's largest value (smallest for a negative increment), read under
    /// the session's isolation; `None` for an empty table.
    fn largest_identity(
        &mut self,
        db: &Arc<Database>,
        def: &TableDef,
        col: usize,
        inc: i64,
    ) -> Result<Option<i64>, SqlError> {
        let mut best: Option<i64> = None;
        self.for_each_row(db, def, |_, _, row| {
            if let Some(v) = walden_engine::objects::identity_integer(&row[col]) {
                best = Some(match best {
                    Some(b) if (inc > 0 && b >= v) || (inc < 0 && b <= v) => b,
                    _ => v,
                });
            }
            Ok(())
        })?;
        Ok(best)
    }

    /// `DBCC CHECKTABLE (table)`.
    fn dbcc_checktable(&mut self, args: &[DbccArgument], infomsgs: bool) -> Result<(), SqlError> {
        let name = Self::dbcc_table_name(args)?;
        let shown = display_name(&name);
        let (db, object) = self.resolve_table_object(&name).map_err(|_| no_such_table(&shown))?;
        let Object::Table(def) = &*object else { return Err(no_such_table(&shown)) };
        let report = self.check_table(&db, def)?;
        self.report_table(def, &report, infomsgs);
        Ok(())
    }

    /// Checks every tree of table `def` under a shared lock on the table (released afterwards
    /// unless the transaction held it already).
    fn check_table(&mut self, db: &Arc<Database>, def: &TableDef) -> Result<TableReport, SqlError> {
        let mut report = TableReport { rows: 0, pages: 0, errors: Vec::new() };
        let mut base_rows = None;
        for (index, checked) in def.indexes.iter().zip(self.check_trees(db, def)?) {
            match checked {
                Ok((entries, pages)) => {
                    report.pages += pages;
                    let rows = *base_rows.get_or_insert(entries);
                    if index.id == 1 {
                        report.rows = entries;
                    } else if entries != rows {
                        report.errors.push(SqlError::new(
                            8951,
                            format!(
                                "Table error: table '{}' (ID {}). The index '{}' (ID {}) has {} \
                                 entries where the table has {rows} rows.",
                                def.name, def.id, index.name, index.id, entries
                            ),
                        ));
                    }
                }
                Err(e) => report.errors.push(e),
            }
        }
        Ok(report)
    }

    /// Checks each tree of table `def`, in the order of its indexes, under a shared lock on
    /// the table (released afterwards unless the transaction held it already), so that all of
    /// them are seen at one moment: each tree's (entries, pages), or error 8939 for a tree that
    /// fails its check.
    pub(crate) fn check_trees(
        &mut self,
        db: &Arc<Database>,
        def: &TableDef,
    ) -> Result<Vec<TreeResult>, SqlError> {
        let resource = Resource::Object { db: db.id(), object: def.id };
        let newly = self.tx().lock(&resource, LockMode::S).map_err(|e| self.s.engine_error(e))?;
        let checks = def
            .indexes
            .iter()
            .map(|index| {
                db.space().tree(index.root).check().map(|c| (c.rows, c.pages)).map_err(|e| {
                    SqlError::new(
                        8939,
                        format!(
                            "Table error: Object ID {}, index ID {}. Test failed: {e}.",
                            def.id, index.id
                        ),
                    )
                })
            })
            .collect();
        if newly {
            self.tx().unlock(&resource);
        }
        Ok(checks)
    }

    /// Sends a table's results; returns its number of consistency errors.
    fn report_table(&mut self, def: &TableDef, report: &TableReport, infomsgs: bool) -> usize {
        for e in &report.errors {
            self.out.message(e);
        }
        if !report.errors.is_empty() {
            self.out.message(&info(
                8990,
                format!(
                    "CHECKDB found 0 allocation errors and {} consistency errors in table '{}' (object ID {}).",
                    report.errors.len(),
                    def.name,
                    def.id
                ),
            ));
        } else if infomsgs {
            self.out.message(&info(2536, format!("DBCC results for '{}'.", def.name)));
            self.out.message(&info(
                2593,
                format!(
                    "There are {} rows in {} pages for object \"{}\".",
                    report.rows, report.pages, def.name
                ),
            ));
        }
        report.errors.len()
    }

    /// A database named by a DBCC argument: a name, a string, an id, or 0 for the current one.
    pub(crate) fn dbcc_database(&mut self, arg: &DbccArgument) -> Result<Arc<Database>, SqlError> {
        let name = match arg {
            DbccArgument::Name(name) if name.schema.is_none() && name.database.is_none() => {
                name.name.value.clone()
            }
            DbccArgument::Name(_) => return Err(incorrect()),
            DbccArgument::Value(e) => match self.value(e)? {
                Value::Str(text) | Value::NStr(text) => text,
                v => match convert(v, SqlType::BigInt, None)? {
                    Value::BigInt(0) => return Ok(Arc::clone(&self.s.db)),
                    Value::BigInt(id) => {
                        return self
                            .s
                            .instance
                            .database_by_id(id)
                            .ok_or_else(|| no_such_database(&id.to_string()));
                    }
                    _ => return Err(incorrect()),
                },
            },
        };
        self.s.instance.database(&name).map_err(|_| no_such_database(&name))
    }

    /// `DBCC SQLPERF(LOGSPACE)`: each database's log size and how much of it is in use.
    fn dbcc_sqlperf(&mut self, args: &[DbccArgument]) -> Result<(), SqlError> {
        let logspace = matches!(args, [DbccArgument::Name(n)]
            if n.schema.is_none() && n.name.value.eq_ignore_ascii_case("LOGSPACE"));
        if !logspace {
            return Err(incorrect());
        }
        let columns = [
            ColumnInfo {
                name: "Database Name".into(),
                ty: SqlType::NVarChar(Len::N(128)),
                nullable: false,
                collation: None,
                declared: None,
            },
            ColumnInfo {
                name: "Log Size (MB)".into(),
                ty: SqlType::Real,
                nullable: false,
                collation: None,
                declared: None,
            },
            ColumnInfo {
                name: "Log Space Used (%)".into(),
                ty: SqlType::Real,
                nullable: false,
                collation: None,
                declared: None,
            },
            ColumnInfo {
                name: "Status".into(),
                ty: SqlType::Int,
                nullable: false,
                collation: None,
                declared: None,
            },
        ];
        self.out.result_set(&columns);
        let mut n = 0;
        for db in self.s.instance.databases() {
            let (size_mb, used_percent) = crate::exec::sysviews::log_space_mb(&db);
            self.out.row(&[
                Value::NStr(db.name().to_string()),
                Value::Real(size_mb as f32),
                Value::Real(used_percent as f32),
                Value::Int(0),
            ]);
            n += 1;
        }
        self.out.result_end(n);
        Ok(())
    }

    /// The database a DBCC command's optional first argument names (the current one without).
    fn dbcc_database_arg(&mut self, args: &[DbccArgument]) -> Result<Arc<Database>, SqlError> {
        match args {
            [] => Ok(Arc::clone(&self.s.db)),
            [arg] => self.dbcc_database(arg),
            _ => Err(incorrect()),
        }
    }

    /// `DBCC OPENTRAN [(database | id | 0)] [WITH TABLERESULTS]`: the oldest transaction open
    /// in the database's log, which is what keeps the log from being truncated.
    fn dbcc_opentran(
        &mut self,
        args: &[DbccArgument],
        tableresults: bool,
        infomsgs: bool,
    ) -> Result<(), SqlError> {
        let db = self.dbcc_database_arg(args)?;
        let ctx = ViewContext {
            instance: &self.s.instance,
            database: &db,
            counters: &self.s.counters,
            session_id: self.s.spid,
            view_columns: &[],
            current_transaction: None,
        };
        let oldest = open_transactions(&ctx)
            .into_iter()
            .filter_map(|t| {
                let start = t.databases.iter().find(|(id, _)| *id == db.id())?.1;
                Some((start, t))
            })
            .min_by_key(|(start, t)| (*start, t.id));
        let Some((start, t)) = oldest else {
            if infomsgs {
                self.out.message(&info(7969, "No active open transactions.".into()));
            }
            return Ok(());
        };
        let (high, low, slot) = lsn_parts(start);
        let lsn = format!("({high}:{low}:{slot})");
        let started = convert(datetime(t.begin_micros), SqlType::VarChar(Len::N(30)), Some(109))
            .map(|v| match v {
                Value::Str(s) => s,
                _ => String::new(),
            })
            .unwrap_or_default();
        let fields: [(&str, &str, String); 6] = [
            ("OLDACT_SPID", "SPID (server process ID)", t.session.to_string()),
            ("OLDACT_UID", "UID (user ID) ", "-1".into()),
            ("OLDACT_NAME", "Name          ", t.name.clone()),
            ("OLDACT_LSN", "LSN           ", lsn),
            ("OLDACT_STARTTIME", "Start time    ", started),
            ("OLDACT_SID", "SID           ", "0x01".into()),
        ];
        if tableresults {
            let columns = [
                ColumnInfo {
                    name: "ResultPropertyName".into(),
                    ty: SqlType::VarChar(Len::N(100)),
                    nullable: false,
                    collation: None,
                    declared: None,
                },
                ColumnInfo {
                    name: "Value".into(),
                    ty: SqlType::VarChar(Len::N(100)),
                    nullable: false,
                    collation: None,
                    declared: None,
                },
            ];
            self.out.result_set(&columns);
            for (property, _, value) in &fields {
                self.out.row(&[Value::Str((*property).into()), Value::Str(value.clone())]);
            }
            self.out.result_end(fields.len() as u64);
            return Ok(());
        }
        let mut text = format!(
            "Transaction information for database '{}'.\n\nOldest active transaction:",
            db.name()
        );
        for (_, label, value) in &fields {
            text.push_str(&format!("\n    {label}: {value}"));
        }
        self.out.message(&info(7977, text));
        Ok(())
    }

    /// `DBCC INPUTBUFFER (session_id)`: the last batch the session sent (7940 for a session
    /// that does not exist).
    fn dbcc_inputbuffer(&mut self, args: &[DbccArgument]) -> Result<(), SqlError> {
        let [DbccArgument::Value(e)] = args else {
            return Err(incorrect());
        };
        let spid = match convert(self.value(e)?, SqlType::Int, None)? {
            Value::Int(n) => n,
            _ => -1,
        };
        let activity = u16::try_from(spid).ok().and_then(|id| self.s.counters.sessions.get(id));
        let Some(activity) = activity else {
            return Err(SqlError::new(7940, format!("Invalid SPID {spid} specified.")));
        };
        let set = crate::exec::sysviews::input_buffer_rows(
            Some(activity.batch().1),
            "EventType",
            "Parameters",
            "EventInfo",
        );
        self.out.row_set(&set);
        Ok(())
    }

    /// `DBCC USEROPTIONS`: the session's SET options as SQL Server lists them, one row each
    /// ("Set Option", "Value"), in its order; options that are OFF are not listed, as in SQL
    /// Server.
    fn dbcc_useroptions(&mut self) {
        use crate::ast::IsolationLevel;
        use crate::exec::options::{user_options, SessionListed};
        let opts = &self.s.opts;
        let session = SessionListed {
            textsize: opts.textsize,
            lock_timeout: opts
                .lock_timeout
                .map_or(-1, |t| i64::try_from(t.as_millis()).unwrap_or(i64::MAX)),
            implicit_transactions: opts.implicit_transactions,
            nocount: opts.nocount,
            xact_abort: opts.xact_abort,
            isolation: match opts.isolation_level {
                IsolationLevel::ReadUncommitted => "read uncommitted",
                IsolationLevel::ReadCommitted => "read committed",
                IsolationLevel::RepeatableRead => "repeatable read",
                IsolationLevel::Serializable => "serializable",
                IsolationLevel::Snapshot => "snapshot",
            },
        };
        let rows = user_options(&opts.semantics, &session);
        let column = |name: &str| ColumnInfo {
            name: name.into(),
            ty: SqlType::NVarChar(Len::N(128)),
            nullable: false,
            collation: None,
            declared: None,
        };
        self.out.result_set(&[column("Set Option"), column("Value")]);
        let mut n = 0;
        for (option, value) in rows {
            if let Some(value) = value {
                self.out.row(&[Value::NStr(option.into()), Value::NStr(value)]);
                n += 1;
            }
        }
        self.out.result_end(n);
    }

    /// `DBCC LOGINFO [(database | id | 0)]`: the log's segments as SQL Server lists its virtual
    /// log files (the older form of `sys.dm_db_log_info`).
    fn dbcc_loginfo(&mut self, args: &[DbccArgument]) -> Result<(), SqlError> {
        let db = self.dbcc_database_arg(args)?;
        let column = ColumnInfo::not_null;
        let columns = [
            column("RecoveryUnitId", SqlType::Int),
            column("FileId", SqlType::Int),
            column("FileSize", SqlType::BigInt),
            column("StartOffset", SqlType::BigInt),
            column("FSeqNo", SqlType::Int),
            column("Status", SqlType::Int),
            column("Parity", SqlType::TinyInt),
            column("CreateLSN", SqlType::Decimal { precision: 25, scale: 0 }),
        ];
        self.out.result_set(&columns);
        let segments = db.log().map(|log| log.segments()).unwrap_or_default();
        for s in &segments {
            let int = |v: u64| Value::BigInt(i64::try_from(v).unwrap_or(i64::MAX));
            let vlf = Vlf::of(s);
            self.out.row(&[
                Value::Int(0),
                Value::Int(2),
                int(s.size),
                int(s.file_offset),
                Value::Int(i32::try_from(vlf.number).unwrap_or(i32::MAX)),
                Value::Int(vlf.status),
                Value::TinyInt(vlf.parity),
                Value::Decimal(walden_engine::types::Decimal::ZERO),
            ]);
        }
        self.out.result_end(segments.len() as u64);
        Ok(())
    }
}

/// Error 2501, for a table CHECKTABLE cannot find.
pub(crate) fn no_such_table(name: &str) -> SqlError {
    SqlError::new(
        2501,
        format!("Cannot find a table or object with the name '{name}'. Check the system catalog."),
    )
}

/// Error 2520, for a database CHECKDB cannot find.
fn no_such_database(name: &str) -> SqlError {
    SqlError::new(
        2520,
        format!(
            "Could not find database '{name}'. The database either does not exist, or was \
             dropped before a statement tried to use it. Verify if the database exists by \
             querying the sys.databases catalog view."
        ),
    )
}
