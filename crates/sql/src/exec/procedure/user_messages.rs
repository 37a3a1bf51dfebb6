//! User-defined messages: `sp_addmessage`, `sp_dropmessage`, their rows in `sys.messages`,
//! and the lookup `RAISERROR(msg_id, ...)` and `FORMATMESSAGE(msg_id, ...)` make.
//!
//! SQL Server keeps these messages server-wide, in master. So does Walden: each is one of
//! master's extended-property entries, of a class no property has ([`MESSAGE_CLASS`]), changed
//! in the session's transaction like any DDL and durable as the catalog is (see
//! `docs/format/catalog.md`, "User-defined messages"). `sys.extended_properties` and
//! `fn_listextendedproperty` never show them.
//!
//! A message is keyed by number and language (the language's LCID, as `sys.messages.
//! language_id` shows it). As in SQL Server, a message in another language needs its
//! us_english version first (15279), and that version goes last (15280).

use std::sync::Arc;

use walden_engine::catalog::ExtendedProperty;
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::Instance;

use crate::ast::ExecProcedure;
use crate::exec::messages::messages;
use crate::exec::scalar::{self, settings};
use crate::exec::session::Run;
use crate::exec::{ColumnInfo, RowSet, SqlError};

/// The extended-property class of a user-defined message: above SQL Server's classes (0 to
/// 27), which Walden's properties use 0, 1, 3 and 7 of.
pub(crate) const MESSAGE_CLASS: u8 = 250;

/// us_english's LCID, the language every message has a version in.
const ENGLISH: u32 = 1033;

/// The first number `sp_addmessage` takes.
const FIRST_USER_MESSAGE: i64 = 50001;

/// A message as `sys.messages` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserMessage {
    pub(crate) number: i32,
    pub(crate) language: u32,
    pub(crate) severity: u8,
    pub(crate) logged: bool,
    pub(crate) text: String,
}

impl UserMessage {
    /// The message an entry of [`MESSAGE_CLASS`] holds: the number is its major id; its
    /// minor id packs the LCID (bits 16 and up), the WITH_LOG flag (bit 8) and the severity
    /// (bits 0 to 7); the value is the text.
    fn of(e: &ExtendedProperty) -> Option<UserMessage> {
        (e.class == MESSAGE_CLASS).then(|| UserMessage {
            number: i32::try_from(e.major_id).unwrap_or(i32::MAX),
            language: e.minor_id >> 16,
            severity: (e.minor_id & 0xFF) as u8,
            logged: e.minor_id & 0x100 != 0,
            text: scalar::to_text(&e.value),
        })
    }

    fn entry(&self) -> ExtendedProperty {
        ExtendedProperty {
            class: MESSAGE_CLASS,
            major_id: self.number as u32,
            minor_id: self.language << 16 | u32::from(self.logged) << 8 | u32::from(self.severity),
            name: String::new(),
            value: Value::NStr(self.text.clone()),
        }
    }
}

/// Every user-defined message, by number and language.
pub(crate) fn user_messages(instance: &Instance) -> Vec<UserMessage> {
    instance.master().extended_properties().iter().filter_map(UserMessage::of).collect()
}

/// The text and severity of message `number` in the session's language, else in us_english:
/// Walden's own (us_english only) or a user-defined one.
pub(crate) fn find_message(instance: &Instance, number: i32) -> Option<(String, u8)> {
    if number < FIRST_USER_MESSAGE as i32 {
        return crate::exec::messages::message(number).map(|m| (m.text.to_string(), m.severity));
    }
    let language = settings::current().language.lcid as u32;
    let all = user_messages(instance);
    let pick = |lang: u32| all.iter().find(|m| m.number == number && m.language == lang);
    pick(language).or_else(|| pick(ENGLISH)).map(|m| (m.text.clone(), m.severity))
}

/// `sys.messages`: Walden's messages (us_english), then the user-defined ones.
pub(crate) fn messages_view(instance: &Instance) -> RowSet {
    let column = |name: &str, ty: SqlType| ColumnInfo {
        name: name.to_string(),
        ty,
        nullable: false,
        collation: None,
        declared: None,
    };
    let columns = vec![
        column("message_id", SqlType::Int),
        column("language_id", SqlType::SmallInt),
        column("severity", SqlType::TinyInt),
        column("is_event_logged", SqlType::Bit),
        column("text", SqlType::NVarChar(Len::N(2048))),
    ];
    let row = |number: i32, language: u32, severity: u8, logged: bool, text: &str| {
        vec![
            Value::Int(number),
            Value::SmallInt(i16::try_from(language).unwrap_or(i16::MAX)),
            Value::TinyInt(severity),
            Value::Bit(logged),
            Value::NStr(text.to_string()),
        ]
    };
    let mut rows: Vec<Vec<Value>> =
        messages().iter().map(|m| row(m.number, ENGLISH, m.severity, false, m.text)).collect();
    rows.extend(
        user_messages(instance)
            .iter()
            .map(|m| row(m.number, m.language, m.severity, m.logged, &m.text)),
    );
    RowSet { columns, rows }
}

impl Run<'_> {
    /// `sp_addmessage @msgnum, @severity, @msgtext [, @lang [, @with_log [, @replace]]]`.
    pub(crate) fn sp_addmessage(&mut self, p: &ExecProcedure) -> Result<(), SqlError> {
        let args = self.procedure_arguments(
            "sp_addmessage",
            p,
            &["@msgnum", "@severity", "@msgtext", "@lang", "@with_log", "@replace"],
        )?;
        let int = |v: &Option<Value>| -> Result<Option<i64>, SqlError> {
            match v {
                None | Some(Value::Null) => Ok(None),
                Some(v) => crate::exec::session::int_of(v.clone()).map(Some),
            }
        };
        let text = |v: &Option<Value>| {
            v.as_ref().filter(|v| !v.is_null()).map(|v| scalar::to_text(v).trim().to_string())
        };
        let (Some(number), Some(severity), Some(message)) =
            (int(&args[0])?, int(&args[1])?, args[2].as_ref().filter(|v| !v.is_null()))
        else {
            return Err(SqlError::catalogued(15071, &[]));
        };
        if number < FIRST_USER_MESSAGE || number > i64::from(i32::MAX) {
            return Err(SqlError::catalogued(15040, &[]));
        }
        if !(1..=25).contains(&severity) {
            return Err(SqlError::catalogued(15041, &[]));
        }
        let language = self.message_language(text(&args[3]))?;
        let logged = match text(&args[4]).map(|t| t.to_ascii_lowercase()).as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => return Err(SqlError::catalogued(15271, &[])),
        };
        let replace = text(&args[5]).is_some_and(|r| r.eq_ignore_ascii_case("replace"));
        let message = UserMessage {
            number: number as i32,
            language: language.lcid as u32,
            severity: severity as u8,
            logged,
            text: scalar::to_text(message),
        };
        let master = Arc::clone(self.s.instance.master());
        let mut entries = master.extended_properties();
        let same = |e: &ExtendedProperty| {
            UserMessage::of(e)
                .is_some_and(|m| m.number == message.number && m.language == message.language)
        };
        if entries.iter().any(same) && !replace {
            return Err(SqlError::catalogued(15043, &[]));
        }
        let has_english = entries
            .iter()
            .filter_map(UserMessage::of)
            .any(|m| m.number == message.number && m.language == ENGLISH);
        if message.language != ENGLISH && !has_english {
            return Err(SqlError::catalogued(15279, &[language.name]));
        }
        entries.retain(|e| !same(e));
        if message.language == ENGLISH {
            // Replacing the us_english version sets every version's severity, as in SQL
            // Server: a message has one severity whatever its language.
            for e in entries.iter_mut() {
                if let Some(mut m) = UserMessage::of(e).filter(|m| m.number == message.number) {
                    m.severity = message.severity;
                    *e = m.entry();
                }
            }
        }
        entries.push(message.entry());
        self.tx().set_extended_properties(&master, entries).map_err(|e| self.s.engine_error(e))
    }

    /// `sp_dropmessage @msgnum [, @lang]`: `@lang = 'all'` drops every version.
    pub(crate) fn sp_dropmessage(&mut self, p: &ExecProcedure) -> Result<(), SqlError> {
        let args = self.procedure_arguments("sp_dropmessage", p, &["@msgnum", "@lang"])?;
        let number = match &args[0] {
            None | Some(Value::Null) => return Err(SqlError::catalogued(15178, &[])),
            Some(v) => crate::exec::session::int_of(v.clone())?,
        };
        if number < FIRST_USER_MESSAGE || number > i64::from(i32::MAX) {
            return Err(SqlError::catalogued(15178, &[]));
        }
        let number = number as i32;
        let lang = args[1]
            .as_ref()
            .filter(|v| !v.is_null())
            .map(|v| scalar::to_text(v).trim().to_string());
        let all = lang.as_deref().is_some_and(|l| l.eq_ignore_ascii_case("all"));
        let language = if all { None } else { Some(self.message_language(lang)?.lcid as u32) };
        let master = Arc::clone(self.s.instance.master());
        let mut entries = master.extended_properties();
        let versions: Vec<UserMessage> =
            entries.iter().filter_map(UserMessage::of).filter(|m| m.number == number).collect();
        let dropped = |m: &UserMessage| language.is_none_or(|l| m.language == l);
        if !versions.iter().any(dropped) {
            return Err(SqlError::catalogued(15179, &[&number.to_string()]));
        }
        if language == Some(ENGLISH) && versions.iter().any(|m| m.language != ENGLISH) {
            return Err(SqlError::catalogued(15280, &[]));
        }
        entries.retain(|e| !UserMessage::of(e).is_some_and(|m| m.number == number && dropped(&m)));
        self.tx().set_extended_properties(&master, entries).map_err(|e| self.s.engine_error(e))
    }

    /// The language `@lang` names (NULL: the session's), 15033 for one Walden does not know.
    fn message_language(
        &self,
        name: Option<String>,
    ) -> Result<&'static settings::Language, SqlError> {
        match name {
            None => Ok(settings::current().language),
            Some(name) => {
                settings::language(&name).ok_or_else(|| SqlError::catalogued(15033, &[&name]))
            }
        }
    }
}
