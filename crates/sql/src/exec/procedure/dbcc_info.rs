//! `DBCC TRACESTATUS` and `DBCC DBINFO`, which DBA scripts (`sp_Blitz`, `sp_BlitzIndex`) read
//! into tables with `INSERT ... EXEC`.

use std::sync::Arc;

use walden_engine::types::{Len, SqlType, Value};

use crate::ast::DbccArgument;
use crate::exec::scalar::convert;
use crate::exec::session::Run;
use crate::exec::{ColumnInfo, RowSet, SqlError};

/// What `DBCC DBINFO` shows for a date Walden has never recorded, as SQL Server shows one
/// that never happened (`dbi_dbccLastKnownGood` of a database never checked).
const NEVER: &str = "1900-01-01 00:00:00.000";

impl Run<'_> {
    /// `DBCC TRACESTATUS [(flag, ... [, -1])]`: Walden has no trace flags, so none is on. With
    /// no flag or only -1 (global flags) there are no rows; each flag named has a row showing
    /// it off (`Status`, `Global` and `Session` 0), as SQL Server lists a flag that is off.
    pub(crate) fn dbcc_tracestatus(&mut self, args: &[DbccArgument]) -> Result<(), SqlError> {
        let mut flags = Vec::new();
        for arg in args {
            let DbccArgument::Value(e) = arg else {
                return Err(crate::exec::procedure::dbcc::incorrect());
            };
            match convert(self.value(e)?, SqlType::Int, None)? {
                Value::Int(-1) => {}
                Value::Int(n) if n >= 0 => flags.push(n),
                _ => return Err(crate::exec::procedure::dbcc::incorrect()),
            }
        }
        let column = |name: &str| ColumnInfo::not_null(name, SqlType::Int);
        let set = RowSet {
            columns: vec![
                column("TraceFlag"),
                column("Status"),
                column("Global"),
                column("Session"),
            ],
            rows: flags
                .into_iter()
                .map(|f| vec![Value::Int(f), Value::Int(0), Value::Int(0), Value::Int(0)])
                .collect(),
        };
        self.out.row_set(&set);
        Ok(())
    }

    /// `DBCC DBINFO [(database)] WITH TABLERESULTS`: the fields of the database's boot page
    /// that Walden has, as (ParentObject, Object, Field, VALUE) rows. Walden records no
    /// CHECKDB or log backup, so `dbi_dbccLastKnownGood` and `dbi_LastLogBackupTime` are
    /// 1900-01-01, "never", as SQL Server shows them for a database never checked or backed
    /// up. Without TABLERESULTS SQL Server prints the page only under trace flag 3604, which
    /// Walden does not have: nothing is shown.
    pub(crate) fn dbcc_dbinfo(
        &mut self,
        args: &[DbccArgument],
        tableresults: bool,
    ) -> Result<(), SqlError> {
        let db = match args {
            [] => Arc::clone(&self.s.db),
            [arg] => self.dbcc_database(arg)?,
            _ => return Err(crate::exec::procedure::dbcc::incorrect()),
        };
        db.check_online().map_err(|e| self.s.engine_error(e))?;
        if !tableresults {
            return Ok(());
        }
        let fields: Vec<(&str, String)> = vec![
            ("dbi_dbname", db.name().to_string()),
            ("dbi_dbid", db.id().to_string()),
            ("dbi_cmptlevel", "160".into()),
            ("dbi_dbccLastKnownGood", NEVER.into()),
            ("dbi_LastLogBackupTime", NEVER.into()),
        ];
        let column = |name: &str| ColumnInfo::not_null(name, SqlType::VarChar(Len::N(255)));
        let set = RowSet {
            columns: vec![
                column("ParentObject"),
                column("Object"),
                column("Field"),
                column("VALUE"),
            ],
            rows: fields
                .into_iter()
                .map(|(field, value)| {
                    vec![
                        Value::Str("DBINFO STRUCTURE:".into()),
                        Value::Str("DBINFO @0x0000000000000000".into()),
                        Value::Str(field.into()),
                        Value::Str(value),
                    ]
                })
                .collect(),
        };
        self.out.row_set(&set);
        Ok(())
    }
}
