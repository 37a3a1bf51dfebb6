//! Where `walden bcp` sends and reads rows: a server over TDS (the bulk load through the
//! client, queries as batches), or an instance opened in this process (the session's own
//! bulk load and batches).

use std::io;
use std::sync::Arc;

use walden_engine::types::{SqlType, Value};
use walden_sql::exec::bulk::{BulkRows, BulkStop};
use walden_sql::exec::{Collected, ColumnInfo, Counted, Message, Output, Session};
use walden_tds::{Column, TdsValue};

use super::BcpArgs;
use crate::client::{Client, ConnectOptions, Event};
use crate::serve::convert::{from_wire, to_wire, type_info};

/// Takes one row of a query (the result's column types, the row's values) and writes it.
pub(super) type RowWriter<'a> = dyn FnMut(&[SqlType], Vec<Value>) -> io::Result<()> + 'a;

/// Where rows go and come from: a server, or an embedded instance.
pub(super) trait Target {
    /// The names and types of the columns of `table`.
    fn columns(&mut self, table: &str) -> Result<Vec<(String, SqlType)>, String>;
    /// Runs `statement` (an `INSERT BULK`), then loads the rows `next` gives; the number
    /// loaded, or the server's errors as text.
    fn load(
        &mut self,
        statement: &str,
        columns: &[(String, SqlType)],
        next: &mut dyn FnMut() -> Option<Vec<Value>>,
    ) -> Result<u64, String>;
    /// Runs `query`, handing each row to `row`; its column types come first.
    fn query(&mut self, query: &str, row: &mut RowWriter<'_>) -> Result<(), String>;
    fn close(&mut self) -> Result<(), String>;
}

/// The engine type of a result column's wire type (a bare NULL column is INT, as in SQL
/// Server).
fn wire_type(ty: &walden_tds::TypeInfo) -> SqlType {
    crate::serve::convert::sql_type(ty).unwrap_or(SqlType::Int)
}

fn message_text(number: i32, class: u8, state: u8, text: &str) -> String {
    format!("Msg {number}, Level {class}, State {state}: {text}")
}

/// A connection to a server.
pub(super) struct Remote {
    client: Client,
}

impl Remote {
    pub(super) fn connect(server: &str, args: &BcpArgs) -> Result<Remote, String> {
        let password = crate::shell::login_password(args.password.as_deref());
        let mut options =
            ConnectOptions::new(server, args.user.as_deref().unwrap_or("sa"), &password)?;
        options.app_name = "walden bcp".into();
        options.database = args.database.clone().unwrap_or_default();
        let client = Client::connect(&options).map_err(|e| e.to_string())?;
        Ok(Remote { client })
    }
}

impl Target for Remote {
    fn columns(&mut self, table: &str) -> Result<Vec<(String, SqlType)>, String> {
        let answer = self
            .client
            .batch_collect(&format!("SET FMTONLY ON; SELECT * FROM {table}; SET FMTONLY OFF"))
            .map_err(|e| e.to_string())?;
        if let Some(m) = answer.errors().next() {
            return Err(message_text(m.number, m.class, m.state, &m.message));
        }
        let set = answer.result_sets.first().ok_or("the table returned no columns")?;
        Ok(set.columns.iter().map(|c| (c.name.clone(), wire_type(&c.ty))).collect())
    }

    fn load(
        &mut self,
        statement: &str,
        columns: &[(String, SqlType)],
        next: &mut dyn FnMut() -> Option<Vec<Value>>,
    ) -> Result<u64, String> {
        let wire: Vec<Column> =
            columns.iter().map(|(name, ty)| Column::new(name, type_info(*ty), true)).collect();
        let mut load =
            match self.client.bulk_load(statement, wire.clone()).map_err(|e| e.to_string())? {
                Ok(load) => load,
                Err(refused) => {
                    let m = refused
                        .errors()
                        .next()
                        .map(|m| message_text(m.number, m.class, m.state, &m.message));
                    return Err(m.unwrap_or_default());
                }
            };
        let mut values: Vec<TdsValue> = Vec::with_capacity(columns.len());
        while let Some(row) = next() {
            values.clear();
            for ((v, (_, ty)), c) in row.into_iter().zip(columns).zip(&wire) {
                values.push(to_wire(*ty, &c.ty, v)?);
            }
            load.row(&values).map_err(|e| e.to_string())?;
        }
        let answer = load.finish().map_err(|e| e.to_string())?;
        if let Some(m) = answer.errors().next() {
            return Err(message_text(m.number, m.class, m.state, &m.message));
        }
        Ok(answer.counts.iter().sum())
    }

    fn query(&mut self, query: &str, row: &mut RowWriter<'_>) -> Result<(), String> {
        let mut types = Vec::new();
        let mut failure: Option<String> = None;
        self.client
            .batch(query, &mut |event| match event {
                Event::Columns(columns) => {
                    types = columns.iter().map(|c| wire_type(&c.ty)).collect();
                }
                Event::Row(values) if failure.is_none() => {
                    let values: Result<Vec<Value>, String> =
                        values.into_iter().map(from_wire).collect();
                    let written = values.and_then(|v| row(&types, v).map_err(|e| e.to_string()));
                    if let Err(e) = written {
                        failure = Some(e);
                    }
                }
                Event::Message(m) if m.class > 10 && failure.is_none() => {
                    failure = Some(message_text(m.number, m.class, m.state, &m.message));
                }
                _ => {}
            })
            .map_err(|e| e.to_string())?;
        failure.map_or(Ok(()), Err)
    }

    fn close(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// An instance opened in this process.
pub(super) struct Embedded {
    instance: Arc<walden_engine::Instance>,
    session: Session,
}

impl Embedded {
    pub(super) fn open(args: &BcpArgs) -> Result<Embedded, String> {
        let dir = crate::shell::embedded_data_dir(args.data.as_deref());
        let instance =
            walden_engine::Instance::open(&dir, walden_engine::InstanceConfig::default())
                .map_err(|e| format!("cannot open the data directory {}: {e}", dir.display()))?;
        let mut session = Session::new(Arc::clone(&instance));
        if let Some(db) = &args.database {
            let mut out = Collected::default();
            session.execute_batch(&format!("USE [{}]", db.replace(']', "]]")), &mut out);
            first_error(&out)?;
        }
        Ok(Embedded { instance, session })
    }
}

fn first_error(out: &Collected) -> Result<(), String> {
    match out.errors().next() {
        Some(m) => Err(message_text(m.number, m.severity, m.state, &m.message)),
        None => Ok(()),
    }
}

/// The rows of a load from a closure, for the embedded session.
struct FnRows<'a>(&'a mut dyn FnMut() -> Option<Vec<Value>>);

impl BulkRows for FnRows<'_> {
    fn next_row(&mut self, row: &mut Vec<Value>) -> Result<bool, BulkStop> {
        Ok((self.0)().map(|next| *row = next).is_some())
    }
}

/// An [`Output`] that hands rows over as they come, for the embedded session's `out`.
struct RowSink<'a> {
    types: Vec<SqlType>,
    row: &'a mut RowWriter<'a>,
    failure: Option<String>,
}

impl Output for RowSink<'_> {
    fn result_set(&mut self, columns: &[ColumnInfo]) {
        self.types = columns.iter().map(|c| c.ty).collect();
    }

    fn row(&mut self, values: &[Value]) {
        if self.failure.is_none() {
            if let Err(e) = (self.row)(&self.types, values.to_vec()) {
                self.failure = Some(e.to_string());
            }
        }
    }

    fn result_end(&mut self, _rows: u64) {}

    fn message(&mut self, m: &Message) {
        if !m.is_info() && self.failure.is_none() {
            self.failure = Some(message_text(m.number, m.severity, m.state, &m.message));
        }
    }

    fn done(&mut self, _rows: Option<u64>) {}

    fn done_counted(&mut self, _kind: Counted, _rows: Option<u64>) {}
}

impl Target for Embedded {
    fn columns(&mut self, table: &str) -> Result<Vec<(String, SqlType)>, String> {
        let mut out = Collected::default();
        self.session.execute_batch(
            &format!("SET FMTONLY ON; SELECT * FROM {table}; SET FMTONLY OFF"),
            &mut out,
        );
        first_error(&out)?;
        let set = out.results.first().ok_or("the table returned no columns")?;
        Ok(set.columns.iter().map(|c| (c.name.clone(), c.ty)).collect())
    }

    fn load(
        &mut self,
        statement: &str,
        _columns: &[(String, SqlType)],
        next: &mut dyn FnMut() -> Option<Vec<Value>>,
    ) -> Result<u64, String> {
        let mut out = Collected::default();
        self.session.execute_batch(statement, &mut out);
        first_error(&out)?;
        self.session.bulk_load(&mut FnRows(next), &mut out);
        first_error(&out)?;
        Ok(out.counts.iter().sum())
    }

    fn query(&mut self, query: &str, row: &mut RowWriter<'_>) -> Result<(), String> {
        let mut sink = RowSink { types: Vec::new(), row, failure: None };
        self.session.execute_batch(query, &mut sink);
        sink.failure.map_or(Ok(()), Err)
    }

    fn close(&mut self) -> Result<(), String> {
        self.session.close();
        self.instance.close().map_err(|e| format!("closing the instance: {e}"))
    }
}
