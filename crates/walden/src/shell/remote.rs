//! The `-S` backend: batches run on a server over TDS ([`crate::client`]), and the response's
//! events are replayed as the shell's [`Output`] calls, so that the printer cannot tell a
//! server from the embedded instance.
//!
//! The wire types and values map back to the engine's with the server's own conversions for
//! RPC parameters (`serve/convert.rs`): the nullable N-types to their base types, SMALLMONEY
//! to MONEY and SMALLDATETIME to DATETIME (Walden has neither), VARCHAR bytes read as Latin-1,
//! the code page of every Walden collation.

use walden_engine::types::{SqlType, Value};
use walden_sql::exec::{ColumnInfo, Message, Output};
use walden_tds::{Column, ColumnFlags, ServerMessage, TypeInfo};

use crate::client::{Client, ClientError, ConnectOptions, Event};
use crate::serve::convert::{self, from_wire};
use crate::shell::backend::Backend;

/// A session on a server.
#[derive(Debug)]
pub struct Remote {
    /// `None` once closed.
    client: Option<Client>,
}

impl Remote {
    /// Connects and logs in.
    pub fn connect(options: &ConnectOptions) -> Result<Remote, ClientError> {
        Ok(Remote { client: Some(Client::connect(options)?) })
    }
}

impl Backend for Remote {
    fn execute(&mut self, batch: &str, out: &mut dyn Output) -> Result<(), String> {
        let Some(client) = self.client.as_mut() else {
            return Err("the connection to the server is closed".into());
        };
        let mut relay = Relay { out, result: None, failure: None };
        let received = client.batch(batch, &mut |event| relay.event(event));
        // A response that stopped short still ends the result set it was in.
        relay.end_result();
        if let Err(e) = received {
            return Err(format!("Communication link failure: {e}"));
        }
        relay.failure.map_or(Ok(()), Err)
    }

    fn close(&mut self) -> Result<(), String> {
        // Dropping the connection ends the session; the server rolls back what it left open.
        self.client = None;
        Ok(())
    }
}

/// The result set being relayed.
struct Open {
    rows: u64,
    /// Each column's wire type: a VARCHAR's collation says its code page.
    types: Vec<walden_tds::TypeInfo>,
}

/// Replays events as [`Output`] calls.
struct Relay<'a> {
    out: &'a mut dyn Output,
    result: Option<Open>,
    /// The first value that could not be converted (it was shown as NULL).
    failure: Option<String>,
}

impl Relay<'_> {
    fn event(&mut self, event: Event) {
        match event {
            Event::Columns(columns) => {
                self.end_result();
                let infos: Vec<ColumnInfo> = columns.iter().map(column_info).collect();
                self.out.result_set(&infos);
                let types = columns.iter().map(|c| c.ty).collect();
                self.result = Some(Open { rows: 0, types });
            }
            Event::Row(values) => {
                let Some(open) = self.result.as_mut() else { return };
                let mut row = Vec::with_capacity(values.len());
                for (i, value) in values.into_iter().enumerate() {
                    let converted = match open.types.get(i) {
                        Some(ty) => convert::from_wire_typed(value, ty),
                        None => from_wire(value),
                    };
                    match converted {
                        Ok(v) => row.push(v),
                        Err(e) => {
                            self.failure.get_or_insert(e);
                            row.push(Value::Null);
                        }
                    }
                }
                open.rows += 1;
                self.out.row(&row);
            }
            Event::Done { count, .. } => {
                self.end_result();
                self.out.done(count);
            }
            Event::Message(m) => self.out.message(&to_message(m)),
            // The client keeps the transaction and packet size; a database change has its
            // own message (5701), which the shell prints like any other.
            Event::EnvChange(_) => {}
        }
    }

    fn end_result(&mut self) {
        if let Some(open) = self.result.take() {
            self.out.result_end(open.rows);
        }
    }
}

fn to_message(m: ServerMessage) -> Message {
    Message {
        number: m.number,
        severity: m.class,
        state: m.state,
        message: m.message,
        procedure: Some(m.procedure).filter(|p| !p.is_empty()),
        line: u32::try_from(m.line).unwrap_or(0),
    }
}

fn column_info(column: &Column) -> ColumnInfo {
    ColumnInfo {
        name: column.name.clone(),
        ty: sql_type(&column.ty),
        nullable: column.flags.contains(ColumnFlags::NULLABLE)
            || column.flags.contains(ColumnFlags::NULLABLE_UNKNOWN),
        collation: None,
        declared: None,
    }
}

/// The engine type of a wire type's values.
pub fn sql_type(ty: &TypeInfo) -> SqlType {
    // The codec refuses NULLTYPE result columns; a bare NULL's type is INT in SQL Server.
    convert::sql_type(ty).unwrap_or(SqlType::Int)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use walden_engine::types::Len;
    use walden_sql::exec::Collected;
    use walden_tds::{Collation, ServerMessage, TdsValue};

    use super::*;

    #[test]
    fn wire_types_map_back_to_the_servers_column_types() {
        let collation = Collation::SQL_LATIN1_GENERAL_CP1_CI_AS;
        let cases = [
            (TypeInfo::IntN(1), SqlType::TinyInt),
            (TypeInfo::IntN(8), SqlType::BigInt),
            (TypeInfo::BitN, SqlType::Bit),
            (
                TypeInfo::Decimal { precision: 10, scale: 2 },
                SqlType::Decimal { precision: 10, scale: 2 },
            ),
            (TypeInfo::FltN(4), SqlType::Real),
            (TypeInfo::MoneyN(4), SqlType::Money),
            (TypeInfo::BigChar { len: 5, collation }, SqlType::Char(5)),
            (TypeInfo::varchar(None), SqlType::VarChar(Len::Max)),
            (TypeInfo::NChar { len: 6, collation }, SqlType::NChar(3)),
            (TypeInfo::nvarchar(Some(20)), SqlType::NVarChar(Len::N(20))),
            (TypeInfo::varbinary(Some(16)), SqlType::VarBinary(Len::N(16))),
            (TypeInfo::Time { scale: 3 }, SqlType::Time(3)),
            (TypeInfo::DateTimeN(8), SqlType::DateTime),
            (TypeInfo::DateTime2 { scale: 7 }, SqlType::DateTime2(7)),
            (TypeInfo::Guid, SqlType::UniqueIdentifier),
            (TypeInfo::DateTimeOffset { scale: 0 }, SqlType::DateTimeOffset(0)),
        ];
        for (wire, sql) in cases {
            assert_eq!(sql_type(&wire), sql, "{wire:?}");
        }
    }

    #[test]
    fn values_convert_back() {
        let t = |increments, scale| walden_tds::Time { increments, scale };
        assert_eq!(
            from_wire(TdsValue::VarChar(vec![b'a', 0xE9])).unwrap(),
            Value::Str("aé".into())
        );
        let v = from_wire(TdsValue::DateTime2 { date: 738_000, time: t(1234, 3) }).unwrap();
        assert_eq!(v.to_string(), "2021-07-30 00:00:01.2340000");
        let v = from_wire(TdsValue::SmallDateTime { days: 1, minutes: 61 });
        assert_eq!(v.unwrap().to_string(), "1900-01-02 01:01:00.000");
        // 23:30 UTC at +01:00 is 00:30 the next day, local time.
        let dto = TdsValue::DateTimeOffset {
            date: 738_000,
            time: t(23 * 3600 + 1800, 0),
            offset_minutes: 60,
        };
        let v = from_wire(dto).unwrap();
        assert_eq!(v.to_string(), "2021-07-31 00:30:00.0000000 +01:00");
        assert!(from_wire(TdsValue::Date(u32::MAX)).is_err());
    }

    #[test]
    fn events_replay_as_the_embedded_session_reports_them() {
        let mut out = Collected::default();
        let mut relay = Relay { out: &mut out, result: None, failure: None };
        relay.event(Event::Columns(vec![Column::new("x", TypeInfo::IntN(4), false)]));
        relay.event(Event::Row(vec![TdsValue::Int(1)]));
        relay.event(Event::Row(vec![TdsValue::Null]));
        relay.event(Event::Done { count: Some(2), error: false });
        relay.event(Event::Message(ServerMessage {
            number: 8134,
            state: 1,
            class: 16,
            message: "Divide by zero error encountered.".into(),
            server: "WALDEN".into(),
            procedure: String::new(),
            line: 3,
        }));
        relay.event(Event::Done { count: None, error: true });
        assert!(relay.failure.is_none());
        assert_eq!(out.results.len(), 1);
        assert!(!out.results[0].columns[0].nullable);
        assert_eq!(out.results[0].rows, vec![vec![Value::Int(1)], vec![Value::Null]]);
        assert_eq!(out.counts, vec![2]);
        let error = &out.messages[0];
        assert_eq!((error.number, error.severity, error.line), (8134, 16, 3));
        assert_eq!(error.procedure, None);
    }
}
