//! Errors and messages: how one reaches the client ([`Run::report`]), how an engine error
//! becomes SQL Server's ([`Session::engine_error`]), and the errors a batch raises itself:
//! `THROW` (which rethrows the error a `CATCH` block handles) and `RAISERROR` with its
//! printf-style formatting, which `FORMATMESSAGE` shares.
//!
//! What an error stops is the dispatcher's business ("Errors and how far they reach" in
//! `statement`); this file only makes and sends them.

use walden_engine::lock::LockError;
use walden_engine::types::{SqlType, Value};
use walden_engine::EngineError;

use crate::ast::{Raiserror, RaiserrorOption};
use crate::exec::procedure::user_messages::find_message;
use crate::exec::scalar;
use crate::exec::SqlError;

use super::{Halt, Run, Session, Step};

impl Session {
    /// The SQL error for an engine error, with this session's id in lock messages.
    pub(crate) fn engine_error(&self, e: EngineError) -> SqlError {
        match &e {
            EngineError::Lock(l) => {
                let mut err =
                    SqlError::with_severity(l.number(), 13, l.sql_message(self.spid.into()));
                if matches!(l, LockError::Timeout { .. }) {
                    err.severity = 16;
                }
                err
            }
            _ => SqlError::from(e),
        }
    }
}

impl Run<'_> {
    /// Reports an error or message to the client.
    pub(crate) fn report(&mut self, e: SqlError) {
        let e = if e.line == 0 && self.line > 0 { e.at_line(self.line) } else { e };
        if !e.is_info() {
            self.s.last_error = e.number;
        }
        self.out.message(&e);
    }

    /// The procedure running now, for error messages.
    pub(super) fn procedure_name(&self) -> Option<String> {
        self.s.frames.last().and_then(|f| f.procedure.clone())
    }

    /// The error being handled by the innermost CATCH block.
    pub(crate) fn caught_error(&self) -> Option<&SqlError> {
        self.s.frames.iter().rev().find_map(|f| f.caught.last())
    }

    pub(super) fn throw(&mut self, t: Option<&crate::ast::Throw>) -> Result<SqlError, SqlError> {
        let Some(t) = t else {
            return self
                .s
                .frames
                .iter()
                .rev()
                .find_map(|f| f.caught.last().cloned())
                .map(|mut e| {
                    e.line = 0;
                    e
                })
                .ok_or_else(|| {
                    SqlError::with_severity(
                        10704,
                        15,
                        "To rethrow an error, a THROW statement must be used inside a CATCH block. Insert the THROW statement inside a CATCH block, or add error parameters to the THROW statement.",
                    )
                });
        };
        let number = int_of(self.value(&t.number)?)?;
        let message = self.value(&t.message)?;
        let state = int_of(self.value(&t.state)?)?;
        if number < 50000 {
            return Err(SqlError::new(
                35100,
                format!("Error number {number} in the THROW statement is outside the valid range. Specify an error number in the valid range of 50000 to 2147483647."),
            ));
        }
        let mut e = SqlError::new(number as i32, scalar::to_text(&message));
        e.state = state.clamp(0, 255) as u8;
        Ok(e)
    }

    pub(super) fn raiserror(&mut self, r: &Raiserror, line: u32) -> Step<()> {
        let msg = self.value(&r.message)?;
        let given = int_of(self.value(&r.severity)?)?;
        let mut severity = given.clamp(0, 25) as u8;
        let state = int_of(self.value(&r.state)?)?.clamp(0, 255) as u8;
        let mut args = Vec::with_capacity(r.arguments.len());
        for a in &r.arguments {
            args.push(self.value(a)?);
        }
        let (number, text) = match msg {
            Value::Int(n) if n < 13000 || n == 50000 => {
                return Err(Halt::Error(SqlError::catalogued(
                    2732,
                    &[&n.to_string(), "13000", "2147483647"],
                )));
            }
            Value::Int(n) => match find_message(&self.s.instance, n) {
                Some((template, catalogued)) => {
                    // A negative severity takes the message's own.
                    if given < 0 {
                        severity = catalogued;
                    }
                    (n, printf(&template, &args))
                }
                None => (
                    18054,
                    SqlError::catalogued(
                        18054,
                        &[&n.to_string(), &severity.to_string(), &state.to_string()],
                    )
                    .message,
                ),
            },
            other => (50000, printf(&scalar::to_text(&other), &args)),
        };
        // Severities 19 to 25 are the sysadmin's, and only with WITH LOG (the one login is
        // the sysadmin).
        let with_log = r.options.contains(&RaiserrorOption::Log);
        if severity > 18 && !with_log {
            return Err(Halt::Error(SqlError::new(
                2754,
                "Error severity levels greater than 18 can only be specified by members of the sysadmin role, using the WITH LOG option.",
            )));
        }
        let mut e = SqlError::with_severity(number, severity, text);
        e.state = state;
        e.line = line;
        e.procedure = self.procedure_name();
        if severity >= 20 {
            // Fatal: no CATCH takes it, the batch ends and so does the session.
            let mut notice = SqlError::new(
                2745,
                format!(
                    "Process ID {} has raised user error {number}, severity {severity}. SQL Server is terminating this process.",
                    self.s.spid
                ),
            );
            notice.state = 2;
            notice.line = line;
            self.report(notice);
            self.report(e);
            self.s.terminated = true;
            if self.s.trancount > 0 {
                self.rollback_all();
            }
            return Err(Halt::Aborted);
        }
        if severity <= 10 {
            self.out.message(&e);
            if r.options.contains(&RaiserrorOption::NoWait) {
                self.out.flush();
            }
            return Ok(());
        }
        Err(Halt::Error(e))
    }
}

/// An integer argument (THROW's number and state, RAISERROR's severity).
pub(crate) fn int_of(v: Value) -> Result<i64, SqlError> {
    match scalar::convert(v, SqlType::BigInt, None)? {
        Value::BigInt(i) => Ok(i),
        _ => Ok(0),
    }
}

/// RAISERROR's printf-style formatting: `%d %i %u %s %x %X %o %%` with optional flags,
/// width and precision (`%5d`, `%-10s`, `%.3s`, `%I64d`, `%ld`).
pub(crate) fn printf(format: &str, args: &[Value]) -> String {
    let mut out = String::with_capacity(format.len());
    let mut args = args.iter();
    let chars: Vec<char> = format.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        if i < chars.len() && chars[i] == '%' {
            out.push('%');
            i += 1;
            continue;
        }
        let mut left = false;
        let mut zero = false;
        while i < chars.len() && matches!(chars[i], '-' | '+' | '0' | ' ' | '#') {
            left |= chars[i] == '-';
            zero |= chars[i] == '0';
            i += 1;
        }
        let mut width = 0usize;
        // `*` takes the width (or precision) from the next argument, as in C's printf.
        let from_argument = |args: &mut std::slice::Iter<'_, Value>| {
            args.next().and_then(|v| int_of(v.clone()).ok()).map_or(0, |n| n.max(0) as usize)
        };
        if chars.get(i) == Some(&'*') {
            width = from_argument(&mut args);
            i += 1;
        }
        while i < chars.len() && chars[i].is_ascii_digit() {
            width = width * 10 + chars[i].to_digit(10).unwrap_or(0) as usize;
            i += 1;
        }
        let mut precision = None;
        if i < chars.len() && chars[i] == '.' {
            i += 1;
            let mut p = 0usize;
            if chars.get(i) == Some(&'*') {
                p = from_argument(&mut args);
                i += 1;
            }
            while i < chars.len() && chars[i].is_ascii_digit() {
                p = p * 10 + chars[i].to_digit(10).unwrap_or(0) as usize;
                i += 1;
            }
            precision = Some(p);
        }
        // Size prefixes change nothing for Walden's 64-bit integers.
        while i < chars.len() && matches!(chars[i], 'l' | 'h' | 'I' | '6' | '4') {
            i += 1;
        }
        let Some(&conv) = chars.get(i) else { break };
        i += 1;
        let arg = args.next();
        let text = match (conv, arg) {
            (_, None) => "(null)".to_string(),
            (_, Some(Value::Null)) => "(null)".to_string(),
            ('d' | 'i' | 'u', Some(v)) => scalar::to_text(v),
            ('x', Some(v)) => match int_of(v.clone()) {
                Ok(n) => format!("{n:x}"),
                Err(_) => scalar::to_text(v),
            },
            ('X', Some(v)) => match int_of(v.clone()) {
                Ok(n) => format!("{n:X}"),
                Err(_) => scalar::to_text(v),
            },
            ('o', Some(v)) => match int_of(v.clone()) {
                Ok(n) => format!("{n:o}"),
                Err(_) => scalar::to_text(v),
            },
            (_, Some(v)) => {
                let t = scalar::to_text(v);
                match precision {
                    Some(p) => t.chars().take(p).collect(),
                    None => t,
                }
            }
        };
        let len = text.chars().count();
        if len < width {
            let pad = width - len;
            if left {
                out.push_str(&text);
                out.extend(std::iter::repeat_n(' ', pad));
            } else {
                let fill = if zero && matches!(conv, 'd' | 'i' | 'u' | 'x' | 'X' | 'o') {
                    '0'
                } else {
                    ' '
                };
                out.extend(std::iter::repeat_n(fill, pad));
                out.push_str(&text);
            }
        } else {
            out.push_str(&text);
        }
    }
    out
}
