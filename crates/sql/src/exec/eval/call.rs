//! Calls and names an expression reaches outside itself: system variables (`@@...`),
//! built-in functions through the registry (`scalar::registry`) with their arguments, and
//! the helpers calls share (IN over values, object names given as text, rowversion values).

use super::*;

impl Run<'_> {
    pub(super) fn system_variable(&mut self, name: &str) -> Result<Value, SqlError> {
        let upper = name.to_ascii_uppercase();
        Ok(match upper.as_str() {
            "@@ROWCOUNT" => Value::Int(i32::try_from(self.s.rowcount).unwrap_or(i32::MAX)),
            "@@TRANCOUNT" => Value::Int(self.s.trancount as i32),
            "@@ERROR" => Value::Int(self.s.last_error),
            "@@FETCH_STATUS" => Value::Int(self.s.fetch_status()),
            "@@CURSOR_ROWS" => Value::Int(self.s.cursor_rows()),
            "@@IDENTITY" => {
                self.s.identity.map_or(Value::Null, |v| Value::Decimal(Decimal::from_i64(v)))
            }
            "@@SPID" => Value::SmallInt(self.s.spid as i16),
            "@@DBTS" => rowversion_bytes(self.s.db.rowversion_current()),
            "@@VERSION" => Value::NStr(VERSION.to_string()),
            "@@SERVERNAME" | "@@SERVICENAME" => Value::NStr("walden".to_string()),
            "@@LANGUAGE" => Value::NStr(self.s.opts.semantics.language.name.to_string()),
            "@@MAX_PRECISION" => Value::TinyInt(38),
            // SQL Server's figure: the most connections its configuration can allow (the
            // server's own limit is `walden serve --max-connections`).
            "@@MAX_CONNECTIONS" => Value::Int(32767),
            "@@NESTLEVEL" => Value::Int(self.s.frames.len().saturating_sub(1) as i32),
            "@@PROCID" => Value::Int(self.s.frames.last().map_or(0, |f| f.module_id)),
            "@@LOCK_TIMEOUT" => Value::Int(
                self.s
                    .opts
                    .lock_timeout
                    .map_or(-1, |d| i32::try_from(d.as_millis()).unwrap_or(i32::MAX)),
            ),
            // SQL Server's bits (`options.rs`); drivers read bit 2 to learn the transaction
            // mode.
            "@@OPTIONS" => Value::Int(self.s.options_bits()),
            "@@TEXTSIZE" => Value::Int(i32::try_from(self.s.opts.textsize).unwrap_or(i32::MAX)),
            "@@DATEFIRST" => Value::TinyInt(self.s.opts.semantics.date_first),
            "@@LANGID" => Value::SmallInt(self.s.opts.semantics.language.langid),
            // The version LOGINACK announces (16.0.1000), as major << 24 | minor << 16 | build:
            // what tools compare instead of parsing @@VERSION.
            "@@MICROSOFTVERSION" => Value::Int(16 << 24 | 1000),
            _ => {
                return Err(SqlError::with_severity(
                    137,
                    15,
                    format!("Must declare the scalar variable \"{name}\"."),
                ))
            }
        })
    }

    /// A call's argument values, in order; argument `bare` is a bare word passed as its text
    /// when it is written as one.
    fn args(
        &mut self,
        f: &FunctionCall,
        bare: Option<usize>,
        env: &Env<'_>,
    ) -> Result<Vec<Value>, SqlError> {
        match &f.args {
            FunctionArgs::None | FunctionArgs::Star => Ok(Vec::new()),
            FunctionArgs::List { args, .. } => {
                let mut out = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    match bare_word(a).filter(|_| bare == Some(i)) {
                        Some(word) => out.push(Value::Str(word.to_string())),
                        None => out.push(self.eval(a, env)?),
                    }
                }
                Ok(out)
            }
        }
    }

    /// The value of a function call: a user-defined function's, or a built-in one's as its
    /// registry entry says.
    pub(super) fn function(&mut self, f: &FunctionCall, env: &Env<'_>) -> Result<Value, SqlError> {
        let builtin = registry::lookup(&f.name.name.value);
        if f.over.is_some() || builtin.is_some_and(|b| matches!(b.kind, Kind::Aggregate)) {
            let upper = f.name.name.value.to_ascii_uppercase();
            return Err(SqlError::new(
                147,
                format!(
                    "An aggregate may not appear in the WHERE clause unless it is in a subquery contained in a HAVING clause or a select list, and the column being aggregated is an outer reference. ({upper})"
                ),
            ));
        }
        if let Some(b @ Builtin { kind: Kind::Form(form), .. }) = builtin {
            let list = match &f.args {
                FunctionArgs::List { args, .. } => Some(args.as_slice()),
                _ => None,
            };
            match form {
                Form::Iif => {
                    return match list {
                        Some([condition, then, otherwise]) => {
                            let c = self.predicate(condition, env)?;
                            self.eval(if c == Some(true) { then } else { otherwise }, env)
                        }
                        _ => Err(b.arity_error()),
                    };
                }
                Form::Identity if f.name.schema.is_none() => {
                    return Err(SqlError::new(
                        177,
                        "The IDENTITY function can only be used when the SELECT statement has an INTO clause.",
                    ));
                }
                Form::SequentialGuid if f.name.schema.is_none() => {
                    b.check_arity(list.map_or(0, <[Expr]>::len))?;
                    return if self.in_default {
                        Ok(Value::Guid(sequential_guid::next()))
                    } else {
                        Err(sequential_guid::misuse())
                    };
                }
                Form::Trigger if f.name.schema.is_none() => {
                    if let Some(v) = list.and_then(|args| self.trigger_function(b.name, args)) {
                        return v;
                    }
                }
                _ => {}
            }
        }
        if let Some(v) = self.user_function(f, env)? {
            return Ok(v);
        }
        match builtin {
            Some(b) => self.call_builtin(b, f, env),
            None => Err(not_a_builtin(f)),
        }
    }

    /// Runs built-in function `b` for call `f`, which names it.
    pub(crate) fn call_builtin(
        &mut self,
        b: &'static Builtin,
        f: &FunctionCall,
        env: &Env<'_>,
    ) -> Result<Value, SqlError> {
        match b.kind {
            Kind::Pure(run) => {
                let args = self.args(f, b.bare_word, env)?;
                b.check_arity(args.len())?;
                b.apply(run, args)
            }
            Kind::Session(run) => {
                let args = self.args(f, b.bare_word, env)?;
                b.check_arity(args.len())?;
                run(self, &args)
            }
            // A trigger function the trigger did not answer (an argument it does not take).
            Kind::Form(_) => {
                let n = match &f.args {
                    FunctionArgs::List { args, .. } => args.len(),
                    _ => 0,
                };
                b.check_arity(n)?;
                Err(not_a_builtin(f))
            }
            // Not a scalar function: a window function without OVER (an aggregate was refused
            // before).
            Kind::Aggregate | Kind::Window => Err(not_a_builtin(f)),
        }
    }
}

/// `x IN (...)` over values: true if one equals, UNKNOWN if none does but one is NULL.
pub(crate) fn in_values<'v>(
    v: &Value,
    items: impl Iterator<Item = &'v Value>,
) -> Result<Option<bool>, SqlError> {
    in_values_collated(v, items, None)
}

/// [`in_values`] with text compared under `collation` (None: the default).
pub(crate) fn in_values_collated<'v>(
    v: &Value,
    items: impl Iterator<Item = &'v Value>,
    collation: Option<&Collation>,
) -> Result<Option<bool>, SqlError> {
    let mut items = items.peekable();
    // Nothing is in an empty list, NULL included: `NULL IN (empty subquery)` is false.
    if items.peek().is_none() {
        return Ok(Some(false));
    }
    if v.is_null() {
        return Ok(None);
    }
    let mut unknown = false;
    for x in items {
        match compare_collated(v, x, collation)? {
            Some(Ordering::Equal) => return Ok(Some(true)),
            None => unknown = true,
            _ => {}
        }
    }
    Ok(if unknown { None } else { Some(false) })
}

/// Parses `[db.][schema.]name` as written in a string argument (OBJECT_ID('dbo.t')).
/// A name the parser does not take whole is split as SQL Server splits such a string: on the
/// dots outside brackets and double quotes, each undelimited part taken as written, spaces
/// included (`OBJECT_ID('dbo.Order Details')` finds `[Order Details]`).
pub(crate) fn parse_object_name(text: &str) -> Option<crate::ast::ObjectName> {
    let parsed = crate::parse_batch(&format!("TRUNCATE TABLE {text}")).ok().and_then(|batch| {
        match batch.statements.into_iter().next()?.kind {
            crate::ast::StatementKind::TruncateTable(n) => Some(n),
            _ => None,
        }
    });
    parsed.or_else(|| split_object_name(text))
}

/// `text` split into up to four dot-separated parts (see [`parse_object_name`]); `None` for
/// an empty last part, more than four parts, or an unterminated or trailing-garbage delimited
/// part.
fn split_object_name(text: &str) -> Option<crate::ast::ObjectName> {
    use crate::ast::{Ident, ObjectName};
    let mut parts: Vec<String> = Vec::new();
    let mut chars = text.trim().chars().peekable();
    loop {
        let mut part = String::new();
        match chars.peek() {
            Some(&open @ ('[' | '"')) => {
                let close = if open == '[' { ']' } else { '"' };
                chars.next();
                loop {
                    match chars.next()? {
                        c if c == close && chars.peek() == Some(&close) => {
                            chars.next();
                            part.push(c);
                        }
                        c if c == close => break,
                        c => part.push(c),
                    }
                }
                if !matches!(chars.peek(), None | Some('.')) {
                    return None;
                }
            }
            _ => {
                while let Some(&c) = chars.peek() {
                    if c == '.' {
                        break;
                    }
                    part.push(c);
                    chars.next();
                }
                part = part.trim().to_string();
            }
        }
        parts.push(part);
        if chars.next().is_none() {
            break;
        }
    }
    if parts.len() > 4 || parts.last().is_none_or(String::is_empty) {
        return None;
    }
    let mut parts = parts.into_iter().rev();
    let name = Ident::new(parts.next()?);
    let mut prefix = || parts.next().filter(|p| !p.is_empty()).map(Ident::new);
    let schema = prefix();
    let database = prefix();
    let server = prefix();
    Some(ObjectName { server, database, schema, name })
}

/// A row version as SQL Server shows it: eight bytes, big-endian, so that byte order is
/// version order.
pub(crate) fn rowversion_bytes(v: i64) -> Value {
    Value::Binary(v.to_be_bytes().to_vec())
}

/// Error 195 for a call of a name that is no built-in function.
fn not_a_builtin(f: &FunctionCall) -> SqlError {
    SqlError::with_severity(
        195,
        15,
        format!("'{}' is not a recognized built-in function name.", f.name.name.value),
    )
}

/// The word an argument is written as when it is a bare word: a datepart, `DATEDIFF(ms, a,
/// b)`, or ISJSON's type, `ISJSON(x, ARRAY)`, which parse as column names.
pub(crate) fn bare_word(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Column(parts) if parts.len() == 1 => Some(&parts[0].value),
        _ => None,
    }
}
