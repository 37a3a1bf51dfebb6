//! The session's SET options that change what scalar operations compute: the date order and
//! first day of the week, the language's month and day names, string concatenation with
//! NULL, and what an arithmetic error does.
//!
//! The operators and conversions of this module tree are free functions of values, called
//! deep inside expression evaluation; rather than thread the session through every one of
//! them, the session installs its settings in a per-thread cell before each statement runs
//! ([`install`]). A connection runs its batches on its own thread, and every statement
//! installs the settings again, so sessions that share a thread (tests) never see each
//! other's. The cell is read only on the paths the options change (text to date, a NULL
//! operand of `+`, an arithmetic error), never per row otherwise.
//!
//! Arithmetic errors that the options turn into NULL leave a warning (SQL Server's 3607 and
//! 3606), and an aggregate that skips a NULL under `ANSI_WARNINGS ON` leaves 8153; the
//! statement sends them after it runs ([`take_warnings`]).

use std::cell::{Cell, RefCell};

use super::temporal::DateOrder;
use crate::exec::SqlError;

/// What a division by zero or an arithmetic overflow does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArithErrors {
    /// The error ends the statement (ARITHABORT or ANSI_WARNINGS ON, the defaults).
    Raise,
    /// The result is NULL and a warning is sent (both OFF).
    NullWithWarning,
    /// The result is NULL, silently (both OFF and ARITHIGNORE ON).
    Null,
}

/// The options scalar operations read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `SET DATEFORMAT`: the field order of numeric dates.
    pub(crate) date_order: DateOrder,
    /// `SET DATEFIRST`: 1 (Monday) to 7 (Sunday), the first day of the week.
    pub(crate) date_first: u8,
    /// `SET LANGUAGE`: names of months and days.
    pub(crate) language: &'static Language,
    /// `SET CONCAT_NULL_YIELDS_NULL`: OFF makes `'a' + NULL` `'a'`.
    pub(crate) concat_null_yields_null: bool,
    /// `SET ARITHABORT`, `ANSI_WARNINGS` and `ARITHIGNORE` together.
    pub(crate) arith_errors: ArithErrors,
    /// `SET ANSI_WARNINGS`: an aggregate skipping a NULL says so (warning 8153).
    pub(crate) ansi_warnings: bool,
    /// `SET NUMERIC_ROUNDABORT`: a decimal conversion that drops digits is an arithmetic
    /// overflow (8115, or NULL as `arith_errors` says) rather than rounded.
    pub(crate) numeric_roundabort: bool,
}

impl Settings {
    /// A new session's settings: us_english, mdy, DATEFIRST 7, errors raised.
    pub(crate) const DEFAULT: Settings = Settings {
        date_order: DateOrder::Mdy,
        date_first: 7,
        language: &LANGUAGES[0],
        concat_null_yields_null: true,
        arith_errors: ArithErrors::Raise,
        ansi_warnings: true,
        numeric_roundabort: false,
    };
}

thread_local! {
    static CURRENT: Cell<Settings> = const { Cell::new(Settings::DEFAULT) };
    static WARNINGS: RefCell<Vec<SqlError>> = const { RefCell::new(Vec::new()) };
}

/// Makes `s` the settings of what this thread evaluates next.
pub(crate) fn install(s: Settings) {
    CURRENT.with(|c| c.set(s));
}

/// The settings of the running statement.
pub(crate) fn current() -> Settings {
    CURRENT.with(Cell::get)
}

/// The warnings arithmetic left since the last call, in order, at most one of each kind (a
/// statement dividing by zero on a million rows says so once).
pub(crate) fn take_warnings() -> Vec<SqlError> {
    WARNINGS.with(|w| std::mem::take(&mut *w.borrow_mut()))
}

/// What an arithmetic error `e` (8134 division by zero, or an overflow: 8115, 220) becomes under the
/// settings: the error itself, or NULL (after noting SQL Server's warning).
pub(crate) fn arithmetic_error(e: SqlError) -> Result<walden_engine::types::Value, SqlError> {
    let mode = current().arith_errors;
    if mode == ArithErrors::Raise {
        return Err(e);
    }
    if mode == ArithErrors::NullWithWarning {
        let (number, text) = if e.number == 8134 {
            (3607, "Division by zero occurred.")
        } else {
            (3606, "Arithmetic overflow occurred.")
        };
        note(SqlError::with_severity(number, 0, text));
    }
    Ok(walden_engine::types::Value::Null)
}

/// An aggregate (other than `COUNT(*)`) left out a NULL: SQL Server's warning 8153 once per
/// statement, under `ANSI_WARNINGS ON` only. Called per skipped NULL; reads one cell.
pub(crate) fn null_eliminated() {
    if current().ansi_warnings {
        note_with(8153, || {
            SqlError::with_severity(
                8153,
                10,
                "Warning: Null value is eliminated by an aggregate or other SET operation.",
            )
        });
    }
}

/// Keeps `warning` for the end of the statement unless one of its number is kept already.
fn note(warning: SqlError) {
    note_with(warning.number, || warning);
}

/// [`note`], making the warning only when none of its `number` is kept: a warning noted
/// per row (8153) allocates its message once per statement.
fn note_with(number: i32, warning: impl FnOnce() -> SqlError) {
    WARNINGS.with(|w| {
        let mut w = w.borrow_mut();
        if !w.iter().any(|x| x.number == number) {
            w.push(warning());
        }
    });
}

/// A language of `sys.syslanguages`: its names, and the date order and first weekday that
/// `SET LANGUAGE` sets.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Language {
    pub(crate) langid: i16,
    pub(crate) name: &'static str,
    pub(crate) alias: &'static str,
    pub(crate) date_order: DateOrder,
    pub(crate) date_first: u8,
    pub(crate) lcid: i32,
    pub(crate) msglangid: i16,
    /// January to December.
    pub(crate) months: [&'static str; 12],
    pub(crate) short_months: [&'static str; 12],
    /// Monday to Sunday, as `sys.syslanguages.days` lists them.
    pub(crate) days: [&'static str; 7],
}

impl Language {
    /// The name of a weekday, 0 for Sunday.
    pub(crate) fn day_name(&self, sunday_based: u32) -> &'static str {
        self.days[((sunday_based + 6) % 7) as usize]
    }
}

const ENGLISH_SHORT_MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const ENGLISH_DAYS: [&str; 7] =
    ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// The languages Walden knows, with SQL Server's ids, names, aliases, date orders, first
/// weekdays and locale ids. Messages stay English whatever the language.
pub(crate) static LANGUAGES: [Language; 7] = [
    Language {
        langid: 0,
        name: "us_english",
        alias: "English",
        date_order: DateOrder::Mdy,
        date_first: 7,
        lcid: 1033,
        msglangid: 1033,
        months: super::text::MONTHS,
        short_months: ENGLISH_SHORT_MONTHS,
        days: ENGLISH_DAYS,
    },
    Language {
        langid: 1,
        name: "Deutsch",
        alias: "German",
        date_order: DateOrder::Dmy,
        date_first: 1,
        lcid: 1031,
        msglangid: 1031,
        months: [
            "Januar",
            "Februar",
            "März",
            "April",
            "Mai",
            "Juni",
            "Juli",
            "August",
            "September",
            "Oktober",
            "November",
            "Dezember",
        ],
        short_months: [
            "Jan", "Feb", "Mär", "Apr", "Mai", "Jun", "Jul", "Aug", "Sep", "Okt", "Nov", "Dez",
        ],
        days: ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"],
    },
    Language {
        langid: 2,
        name: "Français",
        alias: "French",
        date_order: DateOrder::Dmy,
        date_first: 1,
        lcid: 1036,
        msglangid: 1036,
        months: [
            "janvier",
            "février",
            "mars",
            "avril",
            "mai",
            "juin",
            "juillet",
            "août",
            "septembre",
            "octobre",
            "novembre",
            "décembre",
        ],
        short_months: [
            "janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov",
            "déc",
        ],
        days: ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
    },
    Language {
        langid: 5,
        name: "Español",
        alias: "Spanish",
        date_order: DateOrder::Dmy,
        date_first: 1,
        lcid: 3082,
        msglangid: 3082,
        months: [
            "Enero",
            "Febrero",
            "Marzo",
            "Abril",
            "Mayo",
            "Junio",
            "Julio",
            "Agosto",
            "Septiembre",
            "Octubre",
            "Noviembre",
            "Diciembre",
        ],
        short_months: [
            "Ene", "Feb", "Mar", "Abr", "May", "Jun", "Jul", "Ago", "Sep", "Oct", "Nov", "Dic",
        ],
        days: ["Lunes", "Martes", "Miércoles", "Jueves", "Viernes", "Sábado", "Domingo"],
    },
    Language {
        langid: 6,
        name: "Italiano",
        alias: "Italian",
        date_order: DateOrder::Dmy,
        date_first: 1,
        lcid: 1040,
        msglangid: 1040,
        months: [
            "gennaio",
            "febbraio",
            "marzo",
            "aprile",
            "maggio",
            "giugno",
            "luglio",
            "agosto",
            "settembre",
            "ottobre",
            "novembre",
            "dicembre",
        ],
        short_months: [
            "gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic",
        ],
        days: ["lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"],
    },
    Language {
        langid: 7,
        name: "Nederlands",
        alias: "Dutch",
        date_order: DateOrder::Dmy,
        date_first: 1,
        lcid: 1043,
        msglangid: 1043,
        months: [
            "januari",
            "februari",
            "maart",
            "april",
            "mei",
            "juni",
            "juli",
            "augustus",
            "september",
            "oktober",
            "november",
            "december",
        ],
        short_months: [
            "jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep", "okt", "nov", "dec",
        ],
        days: ["maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag"],
    },
    Language {
        langid: 23,
        name: "British",
        alias: "British English",
        date_order: DateOrder::Dmy,
        date_first: 1,
        lcid: 2057,
        msglangid: 1033,
        months: super::text::MONTHS,
        short_months: ENGLISH_SHORT_MONTHS,
        days: ENGLISH_DAYS,
    },
];

/// The language `name` names, by its name or alias, case-insensitively (SQL Server's
/// `SET LANGUAGE` and `@@LANGUAGE` use the name).
pub(crate) fn language(name: &str) -> Option<&'static Language> {
    let name = name.trim();
    LANGUAGES.iter().find(|l| {
        l.name.to_lowercase() == name.to_lowercase() || l.alias.eq_ignore_ascii_case(name)
    })
}
