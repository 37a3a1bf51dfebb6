//! The SET options that change what statements compute (ANSI_NULLS, ANSI_WARNINGS,
//! CONCAT_NULL_YIELDS_NULL, ARITHABORT, QUOTED_IDENTIFIER, DATEFORMAT, LANGUAGE, ...): their
//! values in a session, how `SET` changes them, and how they show (`@@OPTIONS`,
//! `SESSIONPROPERTY`, `DBCC USEROPTIONS`, `sys.dm_exec_sessions`).
//!
//! Where an option acts:
//!
//! * the scalar operators and conversions read theirs from [`scalar::settings`], which
//!   the session installs before each statement ([`Semantics::scalar_settings`]);
//! * `ANSI_NULLS` is read by the comparison of a predicate (`eval.rs`) once per statement;
//! * `QUOTED_IDENTIFIER` by the parser, for the batches after the SET (`session/set_options.rs`);
//! * `ANSI_WARNINGS` by INSERT and UPDATE (string truncation) and the aggregates;
//! * `ANSI_NULL_DFLT_ON` / `_OFF` by CREATE TABLE and ALTER TABLE ADD (a column's default
//!   nullability);
//! * `TEXTSIZE` (kept with the other options in `session::Options`) by the server's output.

use walden_engine::types::Value;

use crate::exec::scalar::settings::{self, ArithErrors, Language, Settings};
use crate::exec::scalar::temporal::DateOrder;
use crate::exec::SqlError;

/// The options of this module, as a session has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Semantics {
    pub(crate) ansi_nulls: bool,
    pub(crate) ansi_warnings: bool,
    pub(crate) ansi_padding: bool,
    pub(crate) ansi_null_dflt_on: bool,
    pub(crate) ansi_null_dflt_off: bool,
    pub(crate) arithabort: bool,
    pub(crate) arithignore: bool,
    pub(crate) concat_null_yields_null: bool,
    pub(crate) quoted_identifier: bool,
    pub(crate) numeric_roundabort: bool,
    pub(crate) cursor_close_on_commit: bool,
    pub(crate) date_order: DateOrder,
    pub(crate) date_first: u8,
    pub(crate) language: &'static Language,
}

impl Default for Semantics {
    /// What SQL Server's drivers (ODBC, OLE DB, JDBC, the .NET client) leave a new session
    /// with: the ANSI options ON, ARITHABORT ON (as SSMS and Walden's own clients set it),
    /// us_english, mdy, DATEFIRST 7.
    fn default() -> Semantics {
        Semantics {
            ansi_nulls: true,
            ansi_warnings: true,
            ansi_padding: true,
            ansi_null_dflt_on: true,
            ansi_null_dflt_off: false,
            arithabort: true,
            arithignore: false,
            concat_null_yields_null: true,
            quoted_identifier: true,
            numeric_roundabort: false,
            cursor_close_on_commit: false,
            date_order: DateOrder::Mdy,
            date_first: 7,
            language: &settings::LANGUAGES[0],
        }
    }
}

/// `@@OPTIONS` bits of the options here (SQL Server's "user options" values).
const CURSOR_CLOSE_ON_COMMIT: i32 = 4;
const ANSI_WARNINGS: i32 = 8;
const ANSI_PADDING: i32 = 16;
const ANSI_NULLS: i32 = 32;
const ARITHABORT: i32 = 64;
const ARITHIGNORE: i32 = 128;
const QUOTED_IDENTIFIER: i32 = 256;
const ANSI_NULL_DFLT_ON: i32 = 1024;
const ANSI_NULL_DFLT_OFF: i32 = 2048;
const CONCAT_NULL_YIELDS_NULL: i32 = 4096;
const NUMERIC_ROUNDABORT: i32 = 8192;

impl Semantics {
    /// Sets the boolean option `name` (upper-cased); false if it is not one of these.
    /// `ANSI_DEFAULTS` sets the group SQL Server's does (IMPLICIT_TRANSACTIONS, the
    /// session's, is the caller's); ANSI_NULL_DFLT_ON and _OFF exclude each other.
    pub(crate) fn set_flag(&mut self, name: &str, on: bool) -> bool {
        match name {
            "ANSI_NULLS" => self.ansi_nulls = on,
            "ANSI_WARNINGS" => self.ansi_warnings = on,
            "ANSI_PADDING" => self.ansi_padding = on,
            "ANSI_NULL_DFLT_ON" => {
                self.ansi_null_dflt_on = on;
                if on {
                    self.ansi_null_dflt_off = false;
                }
            }
            "ANSI_NULL_DFLT_OFF" => {
                self.ansi_null_dflt_off = on;
                if on {
                    self.ansi_null_dflt_on = false;
                }
            }
            "ARITHABORT" => self.arithabort = on,
            "ARITHIGNORE" => self.arithignore = on,
            "CONCAT_NULL_YIELDS_NULL" => self.concat_null_yields_null = on,
            "QUOTED_IDENTIFIER" => self.quoted_identifier = on,
            "NUMERIC_ROUNDABORT" => self.numeric_roundabort = on,
            "CURSOR_CLOSE_ON_COMMIT" => self.cursor_close_on_commit = on,
            "ANSI_DEFAULTS" => {
                self.ansi_nulls = on;
                self.ansi_warnings = on;
                self.ansi_padding = on;
                self.set_flag("ANSI_NULL_DFLT_ON", on);
                self.quoted_identifier = on;
                self.cursor_close_on_commit = on;
            }
            _ => return false,
        }
        true
    }

    /// The `@@OPTIONS` bits of these options.
    pub(crate) fn bits(&self) -> i32 {
        let bit = |on: bool, value: i32| if on { value } else { 0 };
        bit(self.cursor_close_on_commit, CURSOR_CLOSE_ON_COMMIT)
            | bit(self.ansi_warnings, ANSI_WARNINGS)
            | bit(self.ansi_padding, ANSI_PADDING)
            | bit(self.ansi_nulls, ANSI_NULLS)
            | bit(self.arithabort, ARITHABORT)
            | bit(self.arithignore, ARITHIGNORE)
            | bit(self.quoted_identifier, QUOTED_IDENTIFIER)
            | bit(self.ansi_null_dflt_on, ANSI_NULL_DFLT_ON)
            | bit(self.ansi_null_dflt_off, ANSI_NULL_DFLT_OFF)
            | bit(self.concat_null_yields_null, CONCAT_NULL_YIELDS_NULL)
            | bit(self.numeric_roundabort, NUMERIC_ROUNDABORT)
    }

    /// Whether `ANSI_DEFAULTS` holds: every option it sets is ON (`sys.dm_exec_sessions`).
    pub(crate) fn ansi_defaults(&self, implicit_transactions: bool) -> bool {
        self.ansi_nulls
            && self.ansi_warnings
            && self.ansi_padding
            && self.ansi_null_dflt_on
            && self.quoted_identifier
            && self.cursor_close_on_commit
            && implicit_transactions
    }

    /// What the scalar operators and conversions are to read while a statement runs.
    pub(crate) fn scalar_settings(&self) -> Settings {
        // SQL Server ends the statement when either ARITHABORT or ANSI_WARNINGS is ON.
        let arith_errors = if self.arithabort || self.ansi_warnings {
            ArithErrors::Raise
        } else if self.arithignore {
            ArithErrors::Null
        } else {
            ArithErrors::NullWithWarning
        };
        Settings {
            date_order: self.date_order,
            date_first: self.date_first,
            language: self.language,
            concat_null_yields_null: self.concat_null_yields_null,
            arith_errors,
            ansi_warnings: self.ansi_warnings,
            numeric_roundabort: self.numeric_roundabort,
        }
    }

    /// Whether a new column written without NULL or NOT NULL allows NULL: ANSI_NULL_DFLT_ON
    /// says yes, ANSI_NULL_DFLT_OFF no, and with neither the database's `ANSI_NULL_DEFAULT`,
    /// which is OFF in Walden as in a new SQL Server database.
    pub(crate) fn new_column_nullable(&self) -> bool {
        self.ansi_null_dflt_on
    }

    /// `SET DATEFORMAT`: 2741 for an unknown order.
    pub(crate) fn set_date_format(&mut self, text: &str) -> Result<(), SqlError> {
        self.date_order = DateOrder::named(text.trim()).ok_or_else(|| {
            SqlError::new(
                2741,
                format!("SET DATEFORMAT date order '{}' is invalid.", text.to_ascii_lowercase()),
            )
        })?;
        Ok(())
    }

    /// `SET DATEFIRST`: 1 to 7; 2742 otherwise.
    pub(crate) fn set_date_first(&mut self, n: i64) -> Result<(), SqlError> {
        match u8::try_from(n) {
            Ok(d @ 1..=7) => {
                self.date_first = d;
                Ok(())
            }
            _ => Err(SqlError::new(2742, format!("SET DATEFIRST {n} is out of range."))),
        }
    }

    /// `SET LANGUAGE`: the language and, as SQL Server's languages do, its date order and
    /// first weekday; 2740 for a language `sys.syslanguages` does not list. Naming the
    /// language already in force changes nothing: SQL Server keeps a `SET DATEFIRST` or
    /// `SET DATEFORMAT` made before it, which drivers rely on (tedious sends `set datefirst`
    /// and `set dateformat` before `set language us_english` in its login batch).
    pub(crate) fn set_language(&mut self, name: &str) -> Result<&'static Language, SqlError> {
        let language = find_language(name)?;
        if language.langid == self.language.langid {
            return Ok(language);
        }
        self.language = language;
        self.date_order = language.date_order;
        self.date_first = language.date_first;
        Ok(language)
    }

    /// `SESSIONPROPERTY(option)`: 1 or 0 for the options SQL Server answers, NULL otherwise.
    pub(crate) fn session_property(&self, option: &str) -> Value {
        let on = match option.trim().to_ascii_uppercase().as_str() {
            "ANSI_NULLS" => self.ansi_nulls,
            "ANSI_PADDING" => self.ansi_padding,
            "ANSI_WARNINGS" => self.ansi_warnings,
            "ARITHABORT" => self.arithabort,
            "CONCAT_NULL_YIELDS_NULL" => self.concat_null_yields_null,
            "NUMERIC_ROUNDABORT" => self.numeric_roundabort,
            "QUOTED_IDENTIFIER" => self.quoted_identifier,
            _ => return Value::Null,
        };
        Value::Int(i32::from(on))
    }
}

/// The language `name` names (name or alias), or SQL Server's error 2740.
pub(crate) fn find_language(name: &str) -> Result<&'static Language, SqlError> {
    settings::language(name).ok_or_else(|| {
        SqlError::new(
            2740,
            format!(
                "SET LANGUAGE failed because '{name}' is not an official language name or a \
                 language alias on this SQL Server."
            ),
        )
    })
}

/// `DBCC USEROPTIONS`'s rows: the session's options as SQL Server lists them, in its order,
/// those that are OFF left out. `session` holds the options kept in `session::Options`.
pub(crate) fn user_options(
    o: &Semantics,
    session: &SessionListed,
) -> Vec<(&'static str, Option<String>)> {
    let on = |set: bool| set.then(|| "SET".to_string());
    vec![
        ("textsize", Some(session.textsize.to_string())),
        ("language", Some(o.language.name.into())),
        ("dateformat", Some(o.date_order.name().into())),
        ("datefirst", Some(o.date_first.to_string())),
        ("lock_timeout", Some(session.lock_timeout.to_string())),
        ("implicit_transactions", on(session.implicit_transactions)),
        ("cursor_close_on_commit", on(o.cursor_close_on_commit)),
        ("quoted_identifier", on(o.quoted_identifier)),
        ("arithabort", on(o.arithabort)),
        ("arithignore", on(o.arithignore)),
        ("nocount", on(session.nocount)),
        ("ansi_null_dflt_on", on(o.ansi_null_dflt_on)),
        ("ansi_null_dflt_off", on(o.ansi_null_dflt_off)),
        ("xact_abort", on(session.xact_abort)),
        ("ansi_warnings", on(o.ansi_warnings)),
        ("ansi_padding", on(o.ansi_padding)),
        ("ansi_nulls", on(o.ansi_nulls)),
        ("concat_null_yields_null", on(o.concat_null_yields_null)),
        ("numeric_roundabort", on(o.numeric_roundabort)),
        ("isolation level", Some(session.isolation.into())),
    ]
}

/// The options `DBCC USEROPTIONS` lists that the session keeps itself.
pub(crate) struct SessionListed {
    pub(crate) textsize: i64,
    pub(crate) lock_timeout: i64,
    pub(crate) implicit_transactions: bool,
    pub(crate) nocount: bool,
    pub(crate) xact_abort: bool,
    pub(crate) isolation: &'static str,
}
