//! Run-time errors: what a statement raises while it runs, numbered, graded and worded like
//! SQL Server's (`Msg 8134, Level 16, State 1, Line 3` / `Divide by zero error encountered.`).
//!
//! Compile errors ([`ParseError`](crate::ParseError)) become run-time errors of the same
//! number when a batch is handed to the session, so a client sees one kind of error.

use std::fmt;

use walden_engine::EngineError;

use crate::ParseError;

/// An error raised while a batch runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    /// SQL Server's message number (50000 for `RAISERROR` with a message text).
    pub number: i32,
    /// Severity: 0-10 informational, 11-16 user errors, 17-25 resource and system errors.
    pub severity: u8,
    /// State, 0-255.
    pub state: u8,
    /// The message text.
    pub message: String,
    /// The procedure the error was raised in, if any.
    pub procedure: Option<String>,
    /// 1-based line within the batch or procedure; 0 until the statement is known.
    pub line: u32,
}

impl SqlError {
    /// An error of severity 16, state 1.
    pub fn new(number: i32, message: impl Into<String>) -> SqlError {
        SqlError::with_severity(number, 16, message)
    }

    /// An error with the given severity and state 1.
    pub fn with_severity(number: i32, severity: u8, message: impl Into<String>) -> SqlError {
        SqlError { number, severity, state: 1, message: message.into(), procedure: None, line: 0 }
    }

    /// Error 8134.
    pub fn divide_by_zero() -> SqlError {
        SqlError::catalogued(8134, &[])
    }

    /// Error 8115: `Arithmetic overflow error converting expression to data type %ls.`
    pub fn overflow(type_name: &str) -> SqlError {
        SqlError::catalogued(8115, &[type_name])
    }

    /// Error 245: `Conversion failed when converting the %ls value '%.*ls' to data type %ls.`
    pub fn conversion(from_type: &str, value: &str, to_type: &str) -> SqlError {
        SqlError::catalogued(245, &[from_type, value, to_type])
    }

    /// Error 208: `Invalid object name '%.*ls'.`
    pub fn invalid_object(name: &str) -> SqlError {
        SqlError::catalogued(208, &[name])
    }

    /// Error 207: `Invalid column name '%.*ls'.`
    pub fn invalid_column(name: &str) -> SqlError {
        SqlError::catalogued(207, &[name])
    }

    /// Error 137: `Must declare the scalar variable "%.*ls".`
    pub fn undeclared_variable(name: &str) -> SqlError {
        SqlError::catalogued(137, &[name])
    }

    /// Whether the error is only informational (severity 10 or less): a message, not an error.
    pub fn is_info(&self) -> bool {
        self.severity <= 10
    }

    /// The error at a line, unless it already has one.
    pub fn at_line(mut self, line: u32) -> SqlError {
        if self.line == 0 {
            self.line = line;
        }
        self
    }
}

impl fmt::Display for SqlError {
    /// `Msg 8134, Level 16, State 1, Line 3` (with `Procedure p, ` when raised in one), a
    /// newline, and the message: what `sqlcmd` prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Msg {}, Level {}, State {}, ", self.number, self.severity, self.state)?;
        if let Some(p) = &self.procedure {
            write!(f, "Procedure {p}, ")?;
        }
        write!(f, "Line {}\n{}", self.line, self.message)
    }
}

impl std::error::Error for SqlError {}

impl From<ParseError> for SqlError {
    fn from(e: ParseError) -> SqlError {
        SqlError {
            number: e.number,
            severity: e.severity,
            state: e.state,
            message: e.message,
            procedure: None,
            line: e.line,
        }
    }
}

impl From<EngineError> for SqlError {
    fn from(e: EngineError) -> SqlError {
        SqlError::with_severity(e.number(), e.severity(), e.to_string())
    }
}
