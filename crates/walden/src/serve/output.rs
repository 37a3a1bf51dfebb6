//! A batch's results as a TDS token stream: an [`Output`] that encodes COLMETADATA, ROW,
//! DONE, INFO and ERROR tokens and streams them to the client as packets of the negotiated
//! size, the last one of the response carrying EOM.

use std::io::{self, Write};
use std::sync::Arc;

use walden_engine::types::{SqlType, Value};
use walden_engine::DeferredCommits;
use walden_sql::exec::{ColumnInfo, Counted, Message, Output};
use walden_tds::packet::{PacketHeader, HEADER_LEN};
use walden_tds::{
    encode_row, Column, ColumnFlags, Done, DoneStatus, PacketStatus, PacketType, ServerMessage,
    TdsValue, TdsVersion, Token,
};

use super::convert::{column_type_info, for_version, to_wire, WireError};

/// The server name carried in ERROR and INFO tokens.
pub const SERVER_NAME: &str = "WALDEN";

/// DONE's CurCmd for a statement that returned rows (SELECT), as SQL Server sends it.
const CUR_CMD_SELECT: u16 = 0xC1;

/// DONE's CurCmd for a statement of this kind ([MS-TDS] 2.2.7.6 leaves the values to SQL
/// Server's command codes). Drivers such as mssql-jdbc only report a DONE's count as an update
/// count when CurCmd says INSERT, UPDATE, DELETE or SELECT INTO.
fn cur_cmd(kind: Counted) -> u16 {
    match kind {
        Counted::Select => CUR_CMD_SELECT,
        Counted::SelectInto => 0xC2,
        Counted::Insert => 0xC3,
        Counted::Delete => 0xC4,
        Counted::Update => 0xC5,
        // SQL Server's command code for MERGE.
        Counted::Merge => 0x117,
    }
}

/// Cuts a response into packets as it grows, so a large result never sits whole in memory.
#[derive(Debug)]
pub struct PacketSink<W: Write> {
    out: W,
    packet_size: usize,
    spid: u16,
    buf: Vec<u8>,
    packet_id: u8,
    /// The first write error; later writes are skipped and the connection ends.
    error: Option<io::Error>,
    /// The session's deferred commits, hardened before any packet leaves: the response may
    /// report them (see `walden_engine::deferred_commit`).
    deferred: Option<Arc<DeferredCommits>>,
}

impl<W: Write> PacketSink<W> {
    pub fn new(out: W, packet_size: usize, spid: u16) -> Self {
        PacketSink {
            out,
            packet_size,
            spid,
            buf: Vec::new(),
            packet_id: 1,
            error: None,
            deferred: None,
        }
    }

    /// Hardens `deferred` before each packet it sends. If that fails, nothing more is sent
    /// and the connection ends, so the client never reads that a commit it may lose
    /// succeeded.
    pub fn hardening(mut self, deferred: Arc<DeferredCommits>) -> Self {
        self.deferred = Some(deferred);
        self
    }

    /// The payload buffer tokens are appended to.
    fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Sends every whole packet's worth of the buffer, keeping the rest (at least one byte's
    /// worth is kept so that the final packet, with EOM, is never empty).
    fn flush_full(&mut self) {
        let chunk = self.packet_size - HEADER_LEN;
        if self.buf.len() <= chunk {
            return;
        }
        let whole = (self.buf.len() - 1) / chunk * chunk;
        // Taken out for the sends (which borrow `self`) and put back: no copy of the packets.
        let mut buf = std::mem::take(&mut self.buf);
        for part in buf[..whole].chunks(chunk) {
            self.send(part, PacketStatus::NONE);
        }
        buf.drain(..whole);
        self.buf = buf;
    }

    /// Sends the whole buffer now as a packet that does not end the message (shorter than the
    /// packet size: [MS-TDS] only requires the last packet to carry EOM), and flushes the
    /// writer, so that the client sees it while the request goes on.
    fn flush_now(&mut self) {
        self.flush_full();
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            self.send(&rest, PacketStatus::NONE);
        }
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
    }

    /// Sends the rest of the buffer as the message's last packets.
    pub fn finish(&mut self) -> io::Result<()> {
        self.flush_full();
        let rest = std::mem::take(&mut self.buf);
        self.send(&rest, PacketStatus::EOM);
        self.packet_id = 1;
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn send(&mut self, part: &[u8], status: PacketStatus) {
        if self.error.is_some() {
            return;
        }
        if let Some(deferred) = self.deferred.as_ref().filter(|d| !d.settled()) {
            if let Err(e) = deferred.harden() {
                self.error = Some(io::Error::other(format!(
                    "the response reports commits whose log flush failed: {e}"
                )));
                return;
            }
        }
        let header = PacketHeader {
            ty: PacketType::TabularResult,
            status,
            // part.len() + HEADER_LEN <= packet_size <= 32767 by construction.
            length: (part.len() + HEADER_LEN) as u16,
            spid: self.spid,
            packet_id: self.packet_id,
            window: 0,
        };
        self.packet_id = self.packet_id.wrapping_add(1);
        let result = self.out.write_all(&header.encode()).and_then(|()| self.out.write_all(part));
        if let Err(e) = result {
            self.error = Some(e);
        }
    }
}

/// How DONE tokens are sent: plain DONE for a SQL batch, DONEINPROC inside an RPC (whose
/// end the caller marks with DONEPROC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Batch,
    Rpc,
}

/// Which token of the DONE family a held-back DONE goes out as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DoneKind {
    /// A statement of a batch.
    Done,
    /// A statement inside a procedure or an RPC.
    InProc,
    /// The end of a procedure a batch's `EXEC` ran.
    Proc,
}

/// The [`Output`] of one request.
#[derive(Debug)]
pub struct TdsOutput<W: Write> {
    sink: PacketSink<W>,
    mode: Mode,
    columns: Vec<Column>,
    types: Vec<SqlType>,
    /// Empty: the buffer a row's wire values are gathered in, kept to reuse its allocation.
    wire_row: Vec<TdsValue>,
    /// The last statement's DONE, held back until we know whether more follows (DONE_MORE).
    pending_done: Option<(DoneKind, Done)>,
    /// The held-back DONE is the statement's that is ending now (its `statement_end` has not
    /// come): the warnings it raised (8153, ...) go out ahead of it, as SQL Server sends a
    /// statement's INFO tokens before its DONE.
    done_is_current: bool,
    /// How many procedures a batch's `EXEC`s are inside (nested calls count); 0 in an RPC,
    /// whose procedure the connection ends itself.
    procedure_depth: usize,
    /// How many trigger bodies are running (nested ones count): their statements end with
    /// DONEINPROC.
    trigger_depth: usize,
    /// The return status of the outermost procedure a batch runs, once it returned.
    procedure_status: Option<i32>,
    /// An error was sent since the last DONE: the next one carries DONE_ERROR.
    error_since_done: bool,
    /// A severity 20+ error was sent since the last DONE: the next one carries DONE_SRVERROR.
    fatal_since_done: bool,
    /// The current statement has had its DONE (or had it deliberately left out):
    /// `statement_end` sends one only when it has not.
    statement_ended: bool,
    /// Any error in this request.
    pub any_error: bool,
    /// The current result set returned rows (for DONE's CurCmd).
    result_set_seen: bool,
    /// `SET TEXTSIZE`: `(max)` values are cut to this many bytes.
    text_size: usize,
    /// The TDS revision the client logged in with: tokens and types are laid out for it.
    version: TdsVersion,
}

impl<W: Write> TdsOutput<W> {
    pub fn new(sink: PacketSink<W>, mode: Mode) -> Self {
        TdsOutput {
            sink,
            mode,
            columns: Vec::new(),
            types: Vec::new(),
            wire_row: Vec::new(),
            pending_done: None,
            done_is_current: false,
            procedure_depth: 0,
            trigger_depth: 0,
            procedure_status: None,
            error_since_done: false,
            fatal_since_done: false,
            statement_ended: false,
            any_error: false,
            result_set_seen: false,
            text_size: i32::MAX as usize,
            version: TdsVersion::V7_4,
        }
    }

    /// Lays the response out for a client speaking `version`.
    pub fn speaking(mut self, version: TdsVersion) -> Self {
        self.version = version;
        self
    }

    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// Sends `token` after the held-back DONE, which therefore gets DONE_MORE.
    pub fn token(&mut self, token: &Token) {
        self.release_done(true);
        self.raw(token);
    }

    /// Sends `token` ahead of the held-back DONE (ENVCHANGEs about the statement it ends).
    pub fn token_before_done(&mut self, token: &Token) {
        self.raw(token);
    }

    fn raw(&mut self, token: &Token) {
        if !token.exists_in(self.version) {
            return;
        }
        if let Err(e) = token.encode_for(&self.columns, self.version, self.sink.buf()) {
            log_line!(error, "cannot encode a {token:?} token: {e}");
        }
        self.sink.flush_full();
    }

    fn release_done(&mut self, more: bool) {
        self.done_is_current = false;
        if let Some((kind, mut done)) = self.pending_done.take() {
            if more {
                done.status |= DoneStatus::MORE;
            }
            self.raw(&done_token(kind, done));
        }
    }

    /// How the statement running now ends: DONEINPROC inside an RPC, a procedure or a
    /// trigger.
    fn statement_kind(&self) -> DoneKind {
        if self.mode == Mode::Rpc || self.procedure_depth > 0 || self.trigger_depth > 0 {
            DoneKind::InProc
        } else {
            DoneKind::Done
        }
    }

    /// Ends an RPC's statements: the held-back DONEINPROC goes out with DONE_MORE (a DONEPROC
    /// follows); returns whether the call raised an error since.
    pub fn end_statements(&mut self) -> bool {
        self.release_done(true);
        std::mem::take(&mut self.error_since_done) || self.any_error
    }

    /// Ends a batch: the last DONE goes out without DONE_MORE, and carries DONE_ERROR if the
    /// batch ended on an error. `extra` is added to its status (DONE_ATTN).
    pub fn end_batch(&mut self, extra: DoneStatus) {
        match self.pending_done.take() {
            Some((kind, mut done)) if !self.error_since_done => {
                done.status |= extra;
                self.raw(&done_token(kind, done));
            }
            pending => {
                self.pending_done = pending;
                self.release_done(true);
                let status = extra | self.error_status();
                self.raw(&Token::Done(Done { status, cur_cmd: 0, row_count: 0 }));
            }
        }
        self.error_since_done = false;
        self.fatal_since_done = false;
    }

    /// Starts the rows of an API server cursor (`sp_cursoropen`, `sp_cursorfetch`), whose
    /// columns are `columns` then the hidden ROWSTAT. `metadata` are the tokens that follow
    /// the COLMETADATA (TABNAME, COLINFO); `None` sends the NoMetaData COLMETADATA instead,
    /// for a client that asked for no metadata and describes the rows by the cursor's.
    pub fn cursor_columns(&mut self, columns: &[ColumnInfo], metadata: Option<&[Token]>) {
        let mut cols = wire_columns(columns, self.version);
        if let Some(rowstat) = cols.last_mut() {
            rowstat.flags = ColumnFlags::HIDDEN;
        }
        match metadata {
            Some(tokens) => {
                self.token(&Token::ColMetadata(cols.clone()));
                for token in tokens {
                    self.raw(token);
                }
            }
            None => self.token(&Token::NoMetadata),
        }
        self.types = columns.iter().map(|c| c.ty).collect();
        self.columns = cols;
        self.result_set_seen = true;
    }

    /// Sends the response's last packet.
    pub fn finish(mut self) -> io::Result<()> {
        self.sink.finish()
    }

    fn send_error(&mut self, number: i32, message: String) {
        let msg = ServerMessage {
            number,
            state: 1,
            class: 16,
            message,
            server: SERVER_NAME.to_string(),
            procedure: String::new(),
            line: 0,
        };
        self.token(&Token::Error(msg));
        self.error_since_done = true;
        self.any_error = true;
    }

    /// DONE_ERROR, with DONE_SRVERROR after a severity 20+ error, for the errors sent since
    /// the last DONE (which the caller is about to send).
    fn error_status(&self) -> DoneStatus {
        let mut status = DoneStatus::NONE;
        if self.error_since_done {
            status |= DoneStatus::ERROR;
        }
        if self.fatal_since_done {
            status |= DoneStatus::SRVERROR;
        }
        status
    }

    /// A statement ended: holds its DONE back (the next one decides DONE_MORE). `kind`:
    /// its CurCmd when the statement says what it was. `rows` is `None` when the count is
    /// not to be shown (NOCOUNT, or a statement that counts nothing): DONE_COUNT is clear.
    fn statement_done(&mut self, rows: Option<u64>, kind: Option<u16>) {
        self.statement_ended = true;
        // Inside an RPC, statements that neither count nor return rows (the parameter
        // DECLAREs and SETs the server adds) would only be noise; a result set always ends
        // with its DONEINPROC, NOCOUNT or not, so that the client can tell it from the next.
        if self.mode == Mode::Rpc
            && rows.is_none()
            && kind.is_none_or(|k| k != CUR_CMD_SELECT)
            && !self.result_set_seen
            && !self.error_since_done
        {
            return;
        }
        self.release_done(true);
        let mut status = self.error_status();
        if rows.is_some() {
            status |= DoneStatus::COUNT;
        }
        self.error_since_done = false;
        self.fatal_since_done = false;
        let seen = std::mem::take(&mut self.result_set_seen);
        let cur_cmd = kind.unwrap_or(if seen { CUR_CMD_SELECT } else { 0 });
        let done = Done { status, cur_cmd, row_count: rows.unwrap_or(0) };
        self.pending_done = Some((self.statement_kind(), done));
        self.done_is_current = true;
    }
}

/// A result set's columns as COLMETADATA describes them.
///
/// fNullable as the engine knows it: clear only for a column it knows never holds NULL (a NOT
/// NULL table column, a literal). The wire type is nullable either way, so a NULL the engine
/// did not foresee still encodes. A TEXT, NTEXT or IMAGE column carries a TableName:
/// mssql-jdbc refuses one of no parts (1 to 4, as SQL Server sends), and the engine does not
/// say which table a column comes from, so it is one empty part. usUpdateable is "unknown", as
/// SQL Server sends it for a result set's columns: "read-only" (0) makes mssql-jdbc's batch
/// insert through bulk copy (useBulkCopyForBatchInsert) skip every column of the table it
/// describes.
fn wire_columns(columns: &[ColumnInfo], version: TdsVersion) -> Vec<Column> {
    columns
        .iter()
        .map(|c| {
            let ty = for_version(column_type_info(c), version);
            let mut column = Column::new(&c.name, ty, c.nullable);
            column.flags |= ColumnFlags::UPDATEABLE_UNKNOWN;
            if column.ty.is_legacy_lob() {
                column.table_name = vec![String::new()];
            }
            column
        })
        .collect()
}

/// `value`, of a `(max)` type, cut to `limit` bytes as `SET TEXTSIZE` asks: a `varchar(max)`
/// to `limit` characters (one byte each in SQL Server's code page), an `nvarchar(max)` to
/// `limit / 2` UTF-16 code units, a `varbinary(max)` to `limit` bytes. Other values as they are.
fn cut_to_text_size(value: &Value, ty: SqlType, limit: usize) -> Value {
    use walden_engine::types::Len;
    match (value, ty) {
        (Value::Str(s), SqlType::VarChar(Len::Max)) if s.len() > limit => {
            Value::Str(s.chars().take(limit).collect())
        }
        (Value::NStr(s), SqlType::NVarChar(Len::Max)) if s.len() > limit / 2 => {
            let mut units = 0;
            let cut: String = s
                .chars()
                .take_while(|c| {
                    units += c.len_utf16();
                    units <= limit / 2
                })
                .collect();
            Value::NStr(cut)
        }
        (Value::Binary(b), SqlType::VarBinary(Len::Max)) if b.len() > limit => {
            Value::Binary(b[..limit].to_vec())
        }
        _ => value.clone(),
    }
}

fn done_token(kind: DoneKind, done: Done) -> Token {
    match kind {
        DoneKind::Done => Token::Done(done),
        DoneKind::InProc => Token::DoneInProc(done),
        DoneKind::Proc => Token::DoneProc(done),
    }
}

/// A message as an ERROR (severity above 10) or INFO token.
pub fn server_message(m: &Message) -> Token {
    let msg = ServerMessage {
        number: m.number,
        state: m.state,
        class: m.severity,
        message: m.message.clone(),
        server: SERVER_NAME.to_string(),
        procedure: m.procedure.clone().unwrap_or_default(),
        line: i32::try_from(m.line).unwrap_or(i32::MAX),
    };
    if m.severity > 10 {
        Token::Error(msg)
    } else {
        Token::Info(msg)
    }
}

impl<W: Write> Output for TdsOutput<W> {
    fn result_set(&mut self, columns: &[ColumnInfo]) {
        self.types = columns.iter().map(|c| c.ty).collect();
        let cols = wire_columns(columns, self.version);
        self.token(&Token::ColMetadata(cols.clone()));
        self.columns = cols;
        self.result_set_seen = true;
    }

    fn row(&mut self, values: &[Value]) {
        let mut wire = std::mem::take(&mut self.wire_row);
        let mut failure = None;
        for ((value, ty), col) in values.iter().zip(&self.types).zip(&self.columns) {
            match to_wire(*ty, &col.ty, cut_to_text_size(value, *ty, self.text_size)) {
                Ok(v) => wire.push(v),
                Err(e) => {
                    failure.get_or_insert(e);
                    wire.push(TdsValue::Null);
                }
            }
        }
        if let Some(WireError { number, message }) = failure {
            // The row still goes out, with NULL for what could not be converted, so that the
            // stream stays well formed; the error says which value was lost.
            self.send_error(number, message);
        }
        self.release_done(true);
        let encoded = encode_row(&self.columns, &wire, self.sink.buf());
        wire.clear();
        self.wire_row = wire;
        if let Err(e) = encoded {
            self.send_error(0, format!("a row could not be encoded: {e}"));
        }
        self.sink.flush_full();
    }

    fn text_size(&mut self, bytes: i64) {
        self.text_size = usize::try_from(bytes).unwrap_or(i32::MAX as usize);
    }

    fn result_end(&mut self, _rows: u64) {}

    fn message(&mut self, message: &Message) {
        if message.severity > 10 {
            self.error_since_done = true;
            self.any_error = true;
        }
        if message.severity >= 20 {
            self.fatal_since_done = true;
        }
        if message.severity <= 10 && self.done_is_current {
            // A warning of the statement whose DONE is held: before that DONE.
            self.raw(&server_message(message));
        } else {
            self.token(&server_message(message));
        }
    }

    fn done(&mut self, rows: Option<u64>) {
        self.statement_done(rows, None);
    }

    fn flush(&mut self) {
        self.sink.flush_now();
    }

    fn done_counted(&mut self, kind: Counted, rows: Option<u64>) {
        self.statement_done(rows, Some(cur_cmd(kind)));
    }

    fn procedure_start(&mut self) {
        if self.mode == Mode::Rpc {
            return;
        }
        if self.procedure_depth == 0 {
            self.procedure_status = None;
        }
        self.procedure_depth += 1;
    }

    fn procedure_return(&mut self, status: i32) {
        if self.procedure_depth == 1 {
            self.procedure_status = Some(status);
        }
    }

    /// The outermost procedure of a batch ends as an RPC's does: its statements' last
    /// DONEINPROC, RETURNSTATUS, then a DONEPROC held back as a statement's DONE is (the
    /// batch's last token when nothing follows). One that an error ended gets neither: the
    /// error and the batch's DONE follow.
    fn procedure_end(&mut self, completed: bool) {
        if self.procedure_depth == 0 {
            return;
        }
        self.procedure_depth -= 1;
        if self.procedure_depth > 0 || !completed {
            return;
        }
        self.release_done(true);
        let returned = self.procedure_status.take().unwrap_or(0);
        self.raw(&Token::ReturnStatus(returned));
        let status = self.error_status();
        self.error_since_done = false;
        self.fatal_since_done = false;
        self.pending_done = Some((DoneKind::Proc, Done { status, cur_cmd: 0, row_count: 0 }));
    }

    fn trigger_start(&mut self) {
        self.trigger_depth += 1;
    }

    fn trigger_end(&mut self) {
        self.trigger_depth = self.trigger_depth.saturating_sub(1);
    }

    fn statement_end(&mut self) {
        if !std::mem::take(&mut self.statement_ended) {
            self.statement_done(None, None);
            self.statement_ended = false;
        }
        // Whatever comes next belongs to the next statement, even the DONE just held.
        self.done_is_current = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use walden_tds::{decode_tokens, MessageReader};

    fn tokens(bytes: &[u8]) -> Vec<Token> {
        let mut reader = MessageReader::new();
        reader.push(bytes);
        let message = reader.next_message().ok().flatten().map(|m| m.payload).unwrap_or_default();
        decode_tokens(&message).unwrap_or_default()
    }

    #[test]
    fn a_select_becomes_metadata_rows_and_a_final_done() {
        let mut wire = Vec::new();
        let mut out = TdsOutput::new(PacketSink::new(&mut wire, 512, 51), Mode::Batch);
        out.result_set(&[ColumnInfo::new("x", SqlType::Int)]);
        for i in 0..200 {
            out.row(&[Value::Int(i)]);
        }
        out.result_end(200);
        out.done(Some(200));
        out.done(None);
        out.end_batch(DoneStatus::NONE);
        assert!(out.finish().is_ok());
        let got = tokens(&wire);
        assert_eq!(got.len(), 1 + 200 + 2);
        assert_eq!(got[1], Token::Row(vec![TdsValue::Int(0)]));
        assert_eq!(
            got[201],
            Token::Done(Done {
                status: DoneStatus::COUNT | DoneStatus::MORE,
                cur_cmd: CUR_CMD_SELECT,
                row_count: 200
            })
        );
        assert_eq!(
            got[202],
            Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 })
        );
    }

    #[test]
    fn a_statements_warning_goes_before_its_done() {
        let mut wire = Vec::new();
        let mut out = TdsOutput::new(PacketSink::new(&mut wire, 4096, 51), Mode::Batch);
        let warning = Message::with_severity(
            8153,
            10,
            "Warning: Null value is eliminated by an aggregate or other SET operation.",
        );
        out.result_set(&[ColumnInfo::new("s", SqlType::Int)]);
        out.row(&[Value::Int(3)]);
        out.result_end(1);
        out.done(Some(1));
        out.message(&warning);
        out.statement_end();
        // A PRINT of the next statement comes after the first one's DONE.
        out.message(&Message::with_severity(0, 0, "next"));
        out.done(None);
        out.statement_end();
        out.end_batch(DoneStatus::NONE);
        assert!(out.finish().is_ok());
        let got = tokens(&wire);
        assert!(matches!(&got[0], Token::ColMetadata(_)));
        assert!(matches!(&got[1], Token::Row(_)));
        assert!(matches!(&got[2], Token::Info(m) if m.number == 8153 && m.class == 10));
        assert_eq!(
            got[3],
            Token::Done(Done {
                status: DoneStatus::COUNT | DoneStatus::MORE,
                cur_cmd: CUR_CMD_SELECT,
                row_count: 1
            })
        );
        assert!(matches!(&got[4], Token::Info(m) if m.message == "next"));
        assert!(matches!(got[5], Token::Done(_)));
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn an_error_at_the_end_marks_the_final_done() {
        let mut wire = Vec::new();
        let mut out = TdsOutput::new(PacketSink::new(&mut wire, 4096, 51), Mode::Batch);
        out.done(Some(1));
        out.message(&Message::new(208, "Invalid object name 'nope'."));
        out.end_batch(DoneStatus::NONE);
        assert!(out.finish().is_ok());
        let got = tokens(&wire);
        assert!(matches!(&got[1], Token::Error(m) if m.number == 208 && m.class == 16));
        assert_eq!(
            got[2],
            Token::Done(Done { status: DoneStatus::ERROR, cur_cmd: 0, row_count: 0 })
        );
    }
}
