//! The registry of built-in functions: one entry per function, saying everything the engine
//! asks about it.
//!
//! An entry ([`Builtin`]) gives a function's name, how many arguments it takes (SQL Server's
//! error 174 or 189 otherwise), which argument is written as a bare word (DATEADD's datepart),
//! the rule for its result type when no value tells it ([`Returns`], for `SELECT ... INTO` over
//! no rows), whether it is deterministic ([`Determinism`]), and how it runs ([`Kind`]): from its
//! argument values alone, with the session (OBJECT_ID, DB_NAME, ...), from its argument
//! expressions (IIF, a trigger's UPDATE(column)), or as an aggregate or window function, which
//! `aggregate.rs` and `window.rs` compute over groups and partitions.
//!
//! A name is looked up once ([`lookup`]: case-insensitively, without allocating) and the entry
//! is kept: prepared expressions (`prepared.rs`, `filter.rs`) hold it, so that evaluating a row
//! does no name lookup at all, and the interpreter looks a call up once per evaluation instead
//! of walking the names of every kind of function in turn. A name that is not here, called
//! without a schema or in `sys`, is error 195 (with another schema it names a user-defined
//! function, `function.rs`).

use std::collections::HashMap;
use std::sync::OnceLock;

use walden_engine::types::{Len, SqlType, Value};

use super::functions::{
    abs, atn2, char_of, charindex, choose, coalesce, concat, concat_ws, datalength,
    first_char_code, float_fn, floor_ceiling, hashbytes, isdate, isnull, isnumeric, left_right,
    len, log, map_text, new_guid, nullif, parsename, power, quotename, rand, replace, replicate,
    round, sign, space, sql_variant_property, str_fn, stuff, substring, translate, trim,
};
use super::{dates, json, more, session_functions as session};
use crate::ast::{Expr, ExprKind};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// A function of its argument values.
pub(crate) type Pure = fn(Vec<Value>) -> Result<Value, SqlError>;

/// A function the session or the catalog answers; its arguments are evaluated.
pub(crate) type Session = fn(&mut Run<'_>, &[Value]) -> Result<Value, SqlError>;

/// How a built-in function runs.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// From its arguments' values alone.
    Pure(Pure),
    /// With the session: the catalog, the running transaction, the caught error.
    Session(Session),
    /// From its argument expressions, by the evaluator (`Run::function` in `eval.rs`).
    Form(Form),
    /// An aggregate, computed over a group by `aggregate.rs` (and over a window by
    /// `window.rs`); in a scalar context it is error 147.
    Aggregate,
    /// A ranking, offset or distribution function, computed by `window.rs`; it needs OVER
    /// (or WITHIN GROUP) and is not a scalar function.
    Window,
}

/// The functions whose arguments are expressions rather than values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `IIF(condition, then, else)`: the condition is a predicate, one branch is evaluated.
    Iif,
    /// `IDENTITY(type [, seed, increment])`: only in `SELECT ... INTO`'s select list.
    Identity,
    /// `UPDATE(column)`, `COLUMNS_UPDATED()`, `TRIGGER_NESTLEVEL()`, `EVENTDATA()`: what the
    /// running trigger knows (`Run::trigger_function`).
    Trigger,
    /// `NEWSEQUENTIALID()`: only as a UNIQUEIDENTIFIER column's whole DEFAULT
    /// (`sequential_guid`).
    SequentialGuid,
}

/// Whether a function gives the same result for the same arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Determinism {
    /// Always the same result for the same arguments (and the same database contents).
    Deterministic,
    /// Reads the clock, the session or the catalog: the same within a row, not across
    /// statements (SQL Server's nondeterministic functions, GETDATE among them).
    Nondeterministic,
    /// A new value at every call, even twice in one row (NEWID, RAND): an expression holding
    /// one cannot be moved, copied or evaluated fewer times than written.
    PerCall,
}

/// How a call's result type is known without a value (`Run::static_type`).
#[derive(Clone, Copy)]
pub(crate) enum Returns {
    /// Only its values tell.
    Values,
    /// Always this type.
    Fixed(SqlType),
    /// The type of argument `i`.
    Arg(usize),
    /// A rule over the arguments' types.
    Rule(fn(&dyn Fn(usize) -> Option<SqlType>) -> Option<SqlType>),
    /// The type of its `WITHIN GROUP (ORDER BY x)` expression (PERCENTILE_DISC).
    WithinGroup,
}

/// One built-in function.
#[derive(Clone, Copy)]
pub(crate) struct Builtin {
    /// Upper case.
    pub(crate) name: &'static str,
    pub(crate) min_args: usize,
    /// `usize::MAX`: no limit.
    pub(crate) max_args: usize,
    /// The argument written as a bare word and passed as its text (`DATEADD(day, ...)`,
    /// `ISJSON(x, ARRAY)`).
    pub(crate) bare_word: Option<usize>,
    pub(crate) determinism: Determinism,
    pub(crate) returns: Returns,
    pub(crate) kind: Kind,
    /// Whether an xml value may be an argument (a function that passes a value through, and
    /// DATALENGTH); the others would read it as text, which SQL Server refuses (8116).
    pub(crate) takes_xml: bool,
}

const fn entry(name: &'static str, min_args: usize, max_args: usize, kind: Kind) -> Builtin {
    Builtin {
        name,
        min_args,
        max_args,
        bare_word: None,
        determinism: Determinism::Deterministic,
        returns: Returns::Values,
        kind,
        takes_xml: false,
    }
}

const fn pure(name: &'static str, min_args: usize, max_args: usize, f: Pure) -> Builtin {
    entry(name, min_args, max_args, Kind::Pure(f))
}

/// Session functions read state that changes between statements.
const fn session(name: &'static str, min_args: usize, max_args: usize, f: Session) -> Builtin {
    entry(name, min_args, max_args, Kind::Session(f)).nondeterministic()
}

const fn form(name: &'static str, min_args: usize, max_args: usize, f: Form) -> Builtin {
    entry(name, min_args, max_args, Kind::Form(f))
}

const fn aggregate(name: &'static str, min_args: usize, max_args: usize) -> Builtin {
    entry(name, min_args, max_args, Kind::Aggregate)
}

const fn window(name: &'static str, min_args: usize, max_args: usize) -> Builtin {
    entry(name, min_args, max_args, Kind::Window)
}

impl Builtin {
    const fn returns(mut self, r: Returns) -> Builtin {
        self.returns = r;
        self
    }

    const fn fixed(self, ty: SqlType) -> Builtin {
        self.returns(Returns::Fixed(ty))
    }

    const fn bare(mut self, i: usize) -> Builtin {
        self.bare_word = Some(i);
        self
    }

    const fn nondeterministic(mut self) -> Builtin {
        self.determinism = Determinism::Nondeterministic;
        self
    }

    const fn per_call(mut self) -> Builtin {
        self.determinism = Determinism::PerCall;
        self
    }

    const fn xml(mut self) -> Builtin {
        self.takes_xml = true;
        self
    }

    /// Error 174 or 189 if this function does not take `n` arguments.
    pub(crate) fn check_arity(&self, n: usize) -> Result<(), SqlError> {
        if (self.min_args..=self.max_args).contains(&n) {
            Ok(())
        } else {
            Err(self.arity_error())
        }
    }

    /// SQL Server's error for a call with a number of arguments this function does not take:
    /// 174 for a fixed count, 189 for a range.
    pub(crate) fn arity_error(&self) -> SqlError {
        let (min, max) = (self.min_args, self.max_args);
        let lower = self.name.to_ascii_lowercase();
        if min == max {
            SqlError::with_severity(
                174,
                15,
                format!("The {lower} function requires {min} argument(s)."),
            )
        } else if max == usize::MAX {
            SqlError::with_severity(
                189,
                15,
                format!("The {lower} function requires at least {min} argument(s)."),
            )
        } else {
            SqlError::with_severity(
                189,
                15,
                format!("The {lower} function requires {min} to {max} arguments."),
            )
        }
    }

    /// Runs a [`Kind::Pure`] function on arguments whose count [`check_arity`] accepted:
    /// error 8116 for an xml argument it does not take.
    ///
    /// [`check_arity`]: Builtin::check_arity
    pub(crate) fn apply(&self, f: Pure, args: Vec<Value>) -> Result<Value, SqlError> {
        if !self.takes_xml {
            if let Some(i) = args.iter().position(|a| matches!(a, Value::Xml(_))) {
                return Err(SqlError::new(
                    8116,
                    format!(
                        "Argument data type xml is invalid for argument {} of {} function.",
                        i + 1,
                        self.name.to_ascii_lowercase()
                    ),
                ));
            }
        }
        f(args)
    }

    /// The result type of a call whose argument `i` has the static type `arg(i)`; `None` if
    /// only values tell ([`Returns::WithinGroup`] is the caller's to read).
    pub(crate) fn result_type(&self, arg: &dyn Fn(usize) -> Option<SqlType>) -> Option<SqlType> {
        match self.returns {
            Returns::Values | Returns::WithinGroup => None,
            Returns::Fixed(ty) => Some(ty),
            Returns::Arg(i) => arg(i),
            Returns::Rule(rule) => rule(arg),
        }
    }
}

/// The entry for built-in function `name` (any case), if there is one.
pub(crate) fn lookup(name: &str) -> Option<&'static Builtin> {
    // Upper-cased into a buffer on the stack: no name is longer.
    const LONGEST: usize = 32;
    let bytes = name.as_bytes();
    if bytes.len() > LONGEST {
        return None;
    }
    let mut buf = [0u8; LONGEST];
    for (d, s) in buf.iter_mut().zip(bytes) {
        // Bytes of multi-byte characters are not ASCII and stay as they are, so the buffer
        // is still UTF-8.
        *d = s.to_ascii_uppercase();
    }
    let key = std::str::from_utf8(&buf[..bytes.len()]).ok()?;
    index().get(key).copied()
}

fn index() -> &'static HashMap<&'static str, &'static Builtin> {
    static INDEX: OnceLock<HashMap<&'static str, &'static Builtin>> = OnceLock::new();
    INDEX.get_or_init(|| BUILTINS.iter().map(|b| (b.name, b)).collect())
}

/// Calls the [`Kind::Pure`] function `name` (any case) with evaluated arguments; `None` if
/// `name` is not one. A wrong number of arguments is error 174 or 189.
pub fn call(name: &str, args: Vec<Value>) -> Option<Result<Value, SqlError>> {
    let b = lookup(name)?;
    let Kind::Pure(f) = b.kind else { return None };
    Some(b.check_arity(args.len()).and_then(|()| b.apply(f, args)))
}

/// Whether every built-in function `e` calls is deterministic: what SQL Server asks of a
/// computed column that is PERSISTED (error 4936 otherwise). User-defined functions are taken
/// as deterministic.
pub(crate) fn is_deterministic(e: &Expr) -> bool {
    if let ExprKind::Function(f) = &e.kind {
        let nondeterministic = f.name.schema.is_none()
            && lookup(&f.name.name.value)
                .is_some_and(|b| b.determinism != Determinism::Deterministic);
        if nondeterministic {
            return false;
        }
    }
    let mut deterministic = true;
    crate::exec::execute::query::visit_children(e, &mut |c| deterministic &= is_deterministic(c));
    deterministic
}

/// The length of `sysname`, which the metadata functions return.
const SYSNAME: SqlType = SqlType::NVarChar(Len::N(128));

/// SWITCHOFFSET keeps its argument's fractional digits.
fn switchoffset_type(arg: &dyn Fn(usize) -> Option<SqlType>) -> Option<SqlType> {
    Some(match arg(0) {
        Some(SqlType::DateTimeOffset(s) | SqlType::DateTime2(s)) => SqlType::DateTimeOffset(s),
        _ => SqlType::DateTimeOffset(7),
    })
}

use Returns::Arg;
use SqlType::{BigInt, Date, DateTime, Int};

static BUILTINS: &[Builtin] = &[
    // Dates and times.
    pure("GETDATE", 0, 0, dates::getdate).fixed(DateTime).nondeterministic(),
    pure("CURRENT_TIMESTAMP", 0, 0, dates::getdate).fixed(DateTime).nondeterministic(),
    pure("GETUTCDATE", 0, 0, dates::getutcdate).fixed(DateTime).nondeterministic(),
    pure("SYSDATETIME", 0, 0, dates::sysdatetime).fixed(SqlType::DateTime2(7)).nondeterministic(),
    pure("SYSUTCDATETIME", 0, 0, dates::sysutcdatetime)
        .fixed(SqlType::DateTime2(7))
        .nondeterministic(),
    pure("SYSDATETIMEOFFSET", 0, 0, dates::sysdatetimeoffset)
        .fixed(SqlType::DateTimeOffset(7))
        .nondeterministic(),
    pure("TODATETIMEOFFSET", 2, 2, dates::todatetimeoffset).fixed(SqlType::DateTimeOffset(7)),
    pure("SWITCHOFFSET", 2, 2, dates::switchoffset).returns(Returns::Rule(switchoffset_type)),
    pure("DATEADD", 3, 3, dates::dateadd).bare(0).returns(Arg(2)),
    pure("DATEDIFF", 3, 3, |a| dates::datediff(a, false)).bare(0).fixed(Int),
    pure("DATEDIFF_BIG", 3, 3, |a| dates::datediff(a, true)).bare(0).fixed(BigInt),
    pure("DATEPART", 2, 2, dates::datepart).bare(0).fixed(Int),
    // DATENAME's month and weekday names follow SET LANGUAGE.
    pure("DATENAME", 2, 2, dates::datename).bare(0).fixed(SYSNAME).nondeterministic(),
    pure("YEAR", 1, 1, |a| dates::year_month_day(a, "YEAR")).fixed(Int),
    pure("MONTH", 1, 1, |a| dates::year_month_day(a, "MONTH")).fixed(Int),
    pure("DAY", 1, 1, |a| dates::year_month_day(a, "DAY")).fixed(Int),
    pure("EOMONTH", 1, 2, dates::eomonth).fixed(Date),
    pure("DATEFROMPARTS", 3, 3, dates::datefromparts).fixed(Date),
    pure("DATETIMEFROMPARTS", 7, 7, more::datetimefromparts),
    pure("DATETIME2FROMPARTS", 8, 8, more::datetime2fromparts),
    pure("DATETIMEOFFSETFROMPARTS", 10, 10, more::datetimeoffsetfromparts),
    pure("TIMEFROMPARTS", 5, 5, more::timefromparts),
    pure("DATETRUNC", 2, 2, more::datetrunc).bare(0).returns(Arg(1)),
    pure("DATE_BUCKET", 3, 4, more::date_bucket).bare(0).returns(Arg(2)),
    // ISDATE reads text by SET DATEFORMAT.
    pure("ISDATE", 1, 1, isdate).nondeterministic(),
    // Strings.
    pure("LEN", 1, 1, len).fixed(Int),
    pure("DATALENGTH", 1, 1, datalength).fixed(Int).xml(),
    pure("LEFT", 2, 2, |a| left_right(a, false)).returns(Arg(0)),
    pure("RIGHT", 2, 2, |a| left_right(a, true)).returns(Arg(0)),
    pure("SUBSTRING", 3, 3, substring).returns(Arg(0)),
    pure("LTRIM", 1, 2, |a| trim(a, true, false)).returns(Arg(0)),
    pure("RTRIM", 1, 2, |a| trim(a, false, true)).returns(Arg(0)),
    // TRIM(string, chars) is what `TRIM(chars FROM string)` parses to.
    pure("TRIM", 1, 2, |a| trim(a, true, true)).returns(Arg(0)),
    pure("UPPER", 1, 1, |a| map_text(a, str::to_uppercase)).returns(Arg(0)),
    pure("LOWER", 1, 1, |a| map_text(a, str::to_lowercase)).returns(Arg(0)),
    pure("REVERSE", 1, 1, |a| map_text(a, |s| s.chars().rev().collect())).returns(Arg(0)),
    pure("REPLACE", 3, 3, replace),
    pure("CHARINDEX", 2, 3, charindex).fixed(Int),
    pure("PATINDEX", 2, 2, |a| {
        Ok(super::compare::patindex(&a[0], &a[1]).map_or(Value::Null, |i| Value::Int(i as i32)))
    })
    .fixed(Int),
    pure("CONCAT", 2, 254, concat),
    pure("CONCAT_WS", 3, 254, concat_ws),
    pure("REPLICATE", 2, 2, replicate),
    pure("SPACE", 1, 1, space),
    pure("STR", 1, 3, str_fn),
    pure("STUFF", 4, 4, stuff),
    pure("ASCII", 1, 1, |a| first_char_code(a, false)).fixed(Int),
    pure("UNICODE", 1, 1, |a| first_char_code(a, true)).fixed(Int),
    pure("CHAR", 1, 1, |a| char_of(a, false)),
    pure("NCHAR", 1, 1, |a| char_of(a, true)),
    pure("QUOTENAME", 1, 2, quotename),
    pure("PARSENAME", 2, 2, parsename).fixed(SqlType::NVarChar(Len::N(128))),
    pure("TRANSLATE", 3, 3, translate),
    pure("FORMAT", 2, 3, super::format::format).fixed(SqlType::NVarChar(Len::N(4000))),
    pure("STRING_ESCAPE", 2, 2, more::string_escape),
    pure("SOUNDEX", 1, 1, more::soundex),
    pure("DIFFERENCE", 2, 2, more::difference),
    pure("CHECKSUM", 1, 254, |a| Ok(more::checksum(&a, false))).fixed(Int),
    pure("BINARY_CHECKSUM", 1, 254, |a| Ok(more::checksum(&a, true))).fixed(Int),
    pure("HASHBYTES", 2, 2, hashbytes).fixed(SqlType::VarBinary(Len::N(8000))),
    // Mathematics.
    pure("ABS", 1, 1, abs).returns(Arg(0)),
    pure("ROUND", 2, 3, round).returns(Arg(0)),
    pure("FLOOR", 1, 1, |a| floor_ceiling(a, false)).returns(Arg(0)),
    pure("CEILING", 1, 1, |a| floor_ceiling(a, true)).returns(Arg(0)),
    pure("POWER", 2, 2, power),
    pure("SIGN", 1, 1, sign),
    pure("SQRT", 1, 1, |a| float_fn(a, f64::sqrt)),
    pure("SQUARE", 1, 1, |a| float_fn(a, |x| x * x)),
    pure("EXP", 1, 1, |a| float_fn(a, f64::exp)),
    pure("LOG", 1, 2, log),
    pure("LOG10", 1, 1, |a| float_fn(a, |x| if x > 0.0 { x.log10() } else { f64::NAN })),
    pure("SIN", 1, 1, |a| float_fn(a, f64::sin)),
    pure("COS", 1, 1, |a| float_fn(a, f64::cos)),
    pure("TAN", 1, 1, |a| float_fn(a, f64::tan)),
    pure("ASIN", 1, 1, |a| float_fn(a, f64::asin)),
    pure("ACOS", 1, 1, |a| float_fn(a, f64::acos)),
    pure("ATAN", 1, 1, |a| float_fn(a, f64::atan)),
    pure("ATN2", 2, 2, atn2),
    pure("COT", 1, 1, |a| float_fn(a, |x| 1.0 / x.tan())),
    pure("RADIANS", 1, 1, |a| float_fn(a, f64::to_radians)),
    pure("DEGREES", 1, 1, |a| float_fn(a, f64::to_degrees)),
    pure("PI", 0, 0, |_| Ok(Value::Float(std::f64::consts::PI))),
    pure("RAND", 0, 1, rand).per_call(),
    pure("GREATEST", 1, 254, |a| more::extreme(a, true)),
    pure("LEAST", 1, 254, |a| more::extreme(a, false)),
    // NULLs, choices and the rest.
    pure("NEWID", 0, 0, |_| Ok(Value::Guid(new_guid())))
        .fixed(SqlType::UniqueIdentifier)
        .per_call(),
    pure("ISNULL", 2, 2, isnull).returns(Arg(0)).xml(),
    pure("COALESCE", 1, usize::MAX, coalesce).returns(Arg(0)).xml(),
    pure("NULLIF", 2, 2, nullif).returns(Arg(0)),
    pure("ISNUMERIC", 1, 1, isnumeric).fixed(Int),
    pure("CHOOSE", 2, 254, choose).xml(),
    pure("SQL_VARIANT_PROPERTY", 2, 2, sql_variant_property).fixed(SqlType::Variant),
    // JSON.
    pure("ISJSON", 1, 2, json::isjson).bare(1).fixed(Int),
    pure("JSON_PATH_EXISTS", 2, 2, json::json_path_exists).fixed(Int),
    pure("JSON_VALUE", 2, 2, json::json_value).fixed(SqlType::NVarChar(Len::N(4000))),
    pure("JSON_QUERY", 1, 2, json::json_query).fixed(SqlType::NVarChar(Len::Max)),
    pure("JSON_MODIFY", 3, 3, json::json_modify).fixed(SqlType::NVarChar(Len::Max)),
    // Answered by the session and the catalog.
    session("DB_ID", 0, 1, session::db_id).fixed(Int),
    session("FORMATMESSAGE", 1, 21, session::formatmessage).fixed(SqlType::NVarChar(Len::N(2048))),
    session("DB_NAME", 0, 1, session::db_name).fixed(SYSNAME),
    session("STATS_DATE", 2, 2, session::stats_date).fixed(DateTime),
    session("SESSIONPROPERTY", 1, 1, session::sessionproperty),
    session("OBJECT_ID", 1, 2, session::object_id).fixed(Int),
    session("OBJECT_NAME", 1, 2, session::object_name).fixed(SYSNAME),
    session("OBJECT_SCHEMA_NAME", 1, 2, session::object_schema_name).fixed(SYSNAME),
    session("OBJECT_DEFINITION", 1, 1, session::object_definition)
        .fixed(SqlType::NVarChar(Len::Max)),
    session("OBJECTPROPERTY", 2, 2, session::objectproperty),
    session("OBJECTPROPERTYEX", 2, 2, session::objectproperty),
    session("COLUMNPROPERTY", 3, 3, session::columnproperty),
    session("COL_NAME", 2, 2, session::col_name),
    session("SCHEMA_NAME", 0, 1, session::schema_name).fixed(SYSNAME),
    session("SCHEMA_ID", 0, 1, session::schema_id).fixed(Int),
    session("TYPE_NAME", 1, 1, session::type_name).fixed(SYSNAME),
    session("TYPE_ID", 1, 1, session::type_id).fixed(Int),
    session("COLLATIONPROPERTY", 2, 2, session::collationproperty),
    session("DATABASEPROPERTYEX", 2, 2, session::databasepropertyex),
    session("SERVERPROPERTY", 1, 1, session::serverproperty),
    session("IS_SRVROLEMEMBER", 1, 2, session::is_srvrolemember),
    session("IS_MEMBER", 1, 1, session::is_member),
    session("IS_ROLEMEMBER", 1, 2, session::is_member),
    session("HAS_DBACCESS", 1, 1, session::has_dbaccess),
    session("HAS_PERMS_BY_NAME", 3, 5, session::has_perms_by_name),
    session("SUSER_SNAME", 0, 1, session::login_name).fixed(SYSNAME),
    session("SUSER_NAME", 0, 1, session::login_name).fixed(SYSNAME),
    session("ORIGINAL_LOGIN", 0, 0, session::login_name).fixed(SYSNAME),
    session("SYSTEM_USER", 0, 0, session::login_name).fixed(SYSNAME),
    session("USER_NAME", 0, 1, session::user_name).fixed(SYSNAME),
    session("CURRENT_USER", 0, 0, session::user_name).fixed(SYSNAME),
    session("SESSION_USER", 0, 0, session::user_name).fixed(SYSNAME),
    session("USER", 0, 0, session::user_name).fixed(SYSNAME),
    session("HOST_NAME", 0, 0, session::host_name).fixed(SYSNAME),
    session("APP_NAME", 0, 0, session::app_name).fixed(SYSNAME),
    session("SESSION_CONTEXT", 1, 1, session::session_context),
    session("MIN_ACTIVE_ROWVERSION", 0, 0, session::min_active_rowversion),
    session("APPLOCK_MODE", 3, 3, session::applock_mode),
    session("APPLOCK_TEST", 4, 4, session::applock_test),
    session("CURSOR_STATUS", 2, 2, session::cursor_status),
    session("CURRENT_TRANSACTION_ID", 0, 0, session::current_transaction_id).fixed(BigInt),
    session("SCOPE_IDENTITY", 0, 0, session::scope_identity),
    session("IDENT_CURRENT", 1, 1, session::ident_current),
    session("ERROR_NUMBER", 0, 0, session::error_number),
    session("ERROR_MESSAGE", 0, 0, session::error_message),
    session("ERROR_SEVERITY", 0, 0, session::error_severity),
    session("ERROR_STATE", 0, 0, session::error_state),
    session("ERROR_LINE", 0, 0, session::error_line),
    session("ERROR_PROCEDURE", 0, 0, session::error_procedure),
    session("XACT_STATE", 0, 0, session::xact_state),
    // Forms over their argument expressions.
    form("IIF", 3, 3, Form::Iif),
    form("IDENTITY", 1, 3, Form::Identity),
    form("UPDATE", 1, 1, Form::Trigger),
    form("COLUMNS_UPDATED", 0, 0, Form::Trigger),
    form("TRIGGER_NESTLEVEL", 0, 0, Form::Trigger).nondeterministic(),
    form("EVENTDATA", 0, 0, Form::Trigger).fixed(SqlType::Xml).nondeterministic(),
    form("NEWSEQUENTIALID", 0, 0, Form::SequentialGuid).fixed(SqlType::UniqueIdentifier).per_call(),
    // Aggregates (`aggregate.rs`).
    aggregate("COUNT", 1, 1).fixed(Int),
    aggregate("COUNT_BIG", 1, 1).fixed(BigInt),
    aggregate("SUM", 1, 1).returns(Arg(0)),
    aggregate("AVG", 1, 1).returns(Arg(0)),
    aggregate("MIN", 1, 1).returns(Arg(0)),
    aggregate("MAX", 1, 1).returns(Arg(0)),
    aggregate("STRING_AGG", 2, 2),
    aggregate("GROUPING", 1, 1).fixed(SqlType::TinyInt),
    aggregate("GROUPING_ID", 1, 32).fixed(Int),
    aggregate("APPROX_COUNT_DISTINCT", 1, 1).fixed(BigInt),
    aggregate("STDEV", 1, 1).fixed(SqlType::Float),
    aggregate("STDEVP", 1, 1).fixed(SqlType::Float),
    aggregate("VAR", 1, 1).fixed(SqlType::Float),
    aggregate("VARP", 1, 1).fixed(SqlType::Float),
    // Window functions (`window.rs`).
    window("ROW_NUMBER", 0, 0).fixed(BigInt),
    window("RANK", 0, 0).fixed(BigInt),
    window("DENSE_RANK", 0, 0).fixed(BigInt),
    window("NTILE", 1, 1).fixed(BigInt),
    window("PERCENT_RANK", 0, 0),
    window("CUME_DIST", 0, 0),
    window("LAG", 1, 3),
    window("LEAD", 1, 3),
    window("FIRST_VALUE", 1, 1),
    window("LAST_VALUE", 1, 1),
    window("PERCENTILE_CONT", 1, 1).fixed(SqlType::Float),
    window("PERCENTILE_DISC", 1, 1).returns(Returns::WithinGroup),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn get(name: &str) -> &'static Builtin {
        lookup(name).unwrap_or_else(|| panic!("{name} is not in the registry"))
    }

    #[test]
    fn names_are_upper_case_unique_and_found_in_any_case() {
        let mut seen = std::collections::HashSet::new();
        for b in BUILTINS {
            assert_eq!(b.name, b.name.to_ascii_uppercase(), "{}", b.name);
            assert!(seen.insert(b.name), "{} is listed twice", b.name);
            assert!(std::ptr::eq(get(&b.name.to_ascii_lowercase()), b), "{}", b.name);
        }
        assert!(std::ptr::eq(get("DateAdd"), get("DATEADD")));
        assert!(lookup("NO_SUCH_FUNCTION").is_none());
        assert!(lookup("").is_none());
        assert!(lookup(&"X".repeat(100)).is_none());
        assert!(lookup("LEN\u{e9}").is_none());
    }

    #[test]
    fn every_entry_refuses_the_argument_counts_it_does_not_take() {
        for b in BUILTINS {
            assert!(b.min_args <= b.max_args, "{}", b.name);
            assert!(b.check_arity(b.min_args).is_ok(), "{}", b.name);
            if b.max_args != usize::MAX {
                assert!(b.check_arity(b.max_args).is_ok(), "{}", b.name);
            }
            let lower = b.name.to_ascii_lowercase();
            let mut wrong: Vec<usize> = Vec::new();
            if b.min_args > 0 {
                wrong.push(b.min_args - 1);
            }
            if b.max_args != usize::MAX {
                wrong.push(b.max_args + 1);
            }
            for n in wrong {
                let e = b.check_arity(n).unwrap_err();
                assert_eq!(e.severity, 15, "{}", b.name);
                if b.min_args == b.max_args {
                    assert_eq!(e.number, 174, "{}", b.name);
                    assert_eq!(
                        e.message,
                        format!("The {lower} function requires {} argument(s).", b.min_args)
                    );
                } else {
                    assert_eq!(e.number, 189, "{}", b.name);
                    assert!(e.message.starts_with(&format!("The {lower} function requires ")));
                }
            }
        }
        assert_eq!(
            get("EOMONTH").check_arity(3).unwrap_err().message,
            "The eomonth function requires 1 to 2 arguments."
        );
        assert_eq!(
            get("COALESCE").check_arity(0).unwrap_err().message,
            "The coalesce function requires at least 1 argument(s)."
        );
    }

    /// Every function of values, called with its fewest and its most arguments (at most 4),
    /// all NULL, answers with a value or an error, never a panic; with one argument too many
    /// it answers error 174 or 189 through [`call`].
    #[test]
    fn every_function_of_values_takes_nulls_and_counts_its_arguments() {
        for b in BUILTINS {
            let Kind::Pure(_) = b.kind else { continue };
            for n in [b.min_args, b.max_args.min(b.min_args.max(4))] {
                let _ = call(b.name, vec![Value::Null; n]).expect(b.name);
            }
            if b.max_args != usize::MAX {
                let e = call(b.name, vec![Value::Null; b.max_args + 1]).unwrap().unwrap_err();
                assert!(matches!(e.number, 174 | 189), "{}", b.name);
            }
        }
    }

    #[test]
    fn result_types_bare_words_and_determinism() {
        let none = |_: usize| None;
        let date = |_: usize| Some(SqlType::Date);
        assert_eq!(get("LEN").result_type(&none), Some(Int));
        assert_eq!(get("GETDATE").result_type(&none), Some(DateTime));
        assert_eq!(get("DATEADD").result_type(&date), Some(Date));
        assert_eq!(get("DATEADD").result_type(&none), None);
        assert_eq!(
            get("SWITCHOFFSET").result_type(&|_| Some(SqlType::DateTime2(3))),
            Some(SqlType::DateTimeOffset(3))
        );
        assert_eq!(get("SWITCHOFFSET").result_type(&none), Some(SqlType::DateTimeOffset(7)));
        assert_eq!(get("OBJECT_NAME").result_type(&none), Some(SYSNAME));
        assert_eq!(get("REPLACE").result_type(&date), None);
        assert!(matches!(get("PERCENTILE_DISC").returns, Returns::WithinGroup));

        assert_eq!(get("DATEADD").bare_word, Some(0));
        assert_eq!(get("DATE_BUCKET").bare_word, Some(0));
        assert_eq!(get("ISJSON").bare_word, Some(1));
        assert_eq!(get("LEN").bare_word, None);

        assert_eq!(get("LEN").determinism, Determinism::Deterministic);
        assert_eq!(get("GETDATE").determinism, Determinism::Nondeterministic);
        assert_eq!(get("OBJECT_ID").determinism, Determinism::Nondeterministic);
        assert_eq!(get("NEWID").determinism, Determinism::PerCall);
        assert_eq!(get("RAND").determinism, Determinism::PerCall);

        assert!(matches!(get("DB_NAME").kind, Kind::Session(_)));
        assert!(matches!(get("SUM").kind, Kind::Aggregate));
        assert!(matches!(get("ROW_NUMBER").kind, Kind::Window));
        assert!(matches!(get("IIF").kind, Kind::Form(Form::Iif)));
    }

    #[test]
    fn determinism_of_expressions() {
        let expr = |text: &str| {
            let batch = crate::parse_batch(&format!("SELECT {text}")).expect("parses");
            match batch.statements.into_iter().next().map(|s| s.kind) {
                Some(crate::ast::StatementKind::Select(q)) => match q.query.body {
                    crate::ast::QueryBody::Select(sel) => match sel.items.into_iter().next() {
                        Some(crate::ast::SelectItem::Expr { expr, .. }) => expr,
                        _ => panic!("no item"),
                    },
                    _ => panic!("not a select"),
                },
                _ => panic!("not a query"),
            }
        };
        assert!(is_deterministic(&expr("a * 2 + LEN(UPPER(b))")));
        assert!(is_deterministic(&expr("DATEADD(day, 1, d)")));
        assert!(!is_deterministic(&expr("a + DATEDIFF(day, GETDATE(), d)")));
        assert!(!is_deterministic(&expr("CASE WHEN a > 1 THEN NEWID() END")));
        assert!(!is_deterministic(&expr("ISNULL(b, DB_NAME())")));
    }

    #[test]
    fn xml_goes_only_to_the_functions_that_take_it() {
        let x = || Value::Xml(walden_engine::types::Xml::new("<a/>"));
        assert!(call("ISNULL", vec![x(), Value::Null]).unwrap().is_ok());
        let e = call("LEN", vec![x()]).unwrap().unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (8116, "Argument data type xml is invalid for argument 1 of len function.")
        );
    }

    /// docs/COMPAT.md names every function the registry has, and so says what is supported.
    #[test]
    fn compat_lists_every_function() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/COMPAT.md");
        let text = std::fs::read_to_string(path).expect("docs/COMPAT.md");
        let words: std::collections::HashSet<&str> =
            text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).collect();
        let missing: Vec<&str> =
            BUILTINS.iter().map(|b| b.name).filter(|n| !words.contains(n)).collect();
        assert!(missing.is_empty(), "not in docs/COMPAT.md: {missing:?}");
    }
}
