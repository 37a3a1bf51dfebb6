//! API server cursors: the RPCs `sp_cursoropen`, `sp_cursorprepare`, `sp_cursorexecute`,
//! `sp_cursorprepexec`, `sp_cursorunprepare`, `sp_cursorfetch`, `sp_cursor`,
//! `sp_cursoroption` and `sp_cursorclose` ([MS-TDS] 2.2.6.6, ProcIDs 1 to 9), which
//! mssql-jdbc uses for scrollable and updatable result sets and `selectMethod=cursor`, and
//! ODBC drivers for their non-default cursor types.
//!
//! # A cursor is a global T-SQL cursor
//!
//! `sp_cursoropen` declares and opens a global T-SQL cursor named after its handle
//! (`__walden_api_cursor_<handle>`, a name no batch uses), so everything T-SQL cursors do
//! applies (see `walden_sql::exec::cursor`): its rows are fixed at open; one over tables
//! whose rows have keys (a key's columns, or a heap's row locator; inner joins too) keeps
//! each row's keys, reads the row again by them at each fetch (so it shows changes made
//! since, and reports a row deleted since as missing) and takes positioned changes, checked
//! first under optimistic concurrency (16934). A DYNAMIC one fixes nothing at open: each
//! fetch finds the rows next to its fetch buffer by key (`DynamicMove`). The cursor type the
//! client asked for is negotiated down to what that is, as SQL Server converts a cursor it
//! cannot honour: DYNAMIC stays DYNAMIC if the T-SQL cursor could be one, else becomes
//! KEYSET for a keyed cursor, as KEYSET does, and STATIC for another; STATIC and
//! FAST_FORWARD are read-only, and so is any cursor without keys. The type and concurrency used are returned through `scrollopt` and `ccopt`
//! when the client passes them as OUTPUT.
//!
//! # Result shapes
//!
//! `sp_cursoropen` returns the cursor's metadata (COLMETADATA, TABNAME, COLINFO: the columns,
//! then the hidden ROWSTAT int) and no rows; `sp_cursorfetch` returns a block of rows, each
//! with its ROWSTAT (1 fetched, 2 missing: deleted since open), after the NoMetaData
//! COLMETADATA when the call carries fNoMetaData. A fetch that would move before the first
//! row but returns the first block instead returns status 2, as SQL Server does (mssql-jdbc
//! repositions on it).
//!
//! # The fetch buffer
//!
//! A cursor remembers the rows its last fetch returned: `sp_cursor` addresses them by their
//! 1-based place in that block (0: every row of it), and NEXT, PREV and RELATIVE move from it.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use walden_engine::types::SqlType;
use walden_sql::exec::{CallArgument, CallTarget, Collected, CursorShape, Session, SqlError};
use walden_sql::{parse_batch, StatementKind};
use walden_tds::{
    ColInfo, ColInfoStatus, ColumnFlags, Done, DoneStatus, ParamStatus, ProcId, ReturnValue,
    ReturnValueStatus, RpcCall, RpcOptions, RpcParam, RpcProc, TdsValue, Token, TypeInfo,
};

use super::code_page::CodePage;
use super::output::TdsOutput;
use super::rpc::{self, RpcError};

mod buffer;

use buffer::{cursor_call, fetch_call};

/// `scrollopt` cursor types.
const KEYSET: i32 = 0x1;
const DYNAMIC: i32 = 0x2;
const FORWARD_ONLY: i32 = 0x4;
const STATIC: i32 = 0x8;
const FAST_FORWARD: i32 = 0x10;
/// The cursor types' bits of `scrollopt`, below its flags.
const SCROLL_TYPES: i32 = 0x1F;
/// `scrollopt` flag: the statement has parameters (`@params` and their values follow).
const PARAMETERIZED_STMT: i32 = 0x1000;

/// `ccopt` concurrency options.
const READ_ONLY: i32 = 0x1;
/// Optimistic by row version (SQL Server compares a timestamp column, else the values).
const OPTIMISTIC: i32 = 0x4;
/// Optimistic by values.
const OPTIMISTIC_VALUES: i32 = 0x8;
/// The concurrency bits of `ccopt` (READ_ONLY, SCROLL_LOCKS, OPTIMISTIC, OPTIMISTIC
/// values), below its flags.
const CONCURRENCY: i32 = 0xF;

/// The first handle: SQL Server's are large numbers too, which keeps a client from taking
/// a small integer for one by accident.
const FIRST_HANDLE: i32 = 180_150_000;

/// An open API cursor.
#[derive(Debug)]
struct ApiCursor {
    /// The T-SQL cursor's name.
    name: String,
    /// The cursor type used (one of the `scrollopt` types).
    scrollopt: i32,
    /// The concurrency used (one of the `ccopt` bits).
    ccopt: i32,
    shape: CursorShape,
    /// The fetch buffer: its first row (0 before the first row, `rows + 1` after the last)
    /// and how many rows it holds.
    buffer_start: usize,
    buffer_len: usize,
}

/// A statement `sp_cursorprepare` prepared.
#[derive(Debug, Clone)]
struct PreparedCursor {
    params: String,
    text: String,
    scrollopt: i32,
    ccopt: i32,
}

impl PreparedCursor {
    /// The request to open a cursor over the statement for `procedure`, with the call's
    /// parameter `values`, and the type and concurrency it asks for.
    fn request<'a>(
        self,
        procedure: &'static str,
        values: &'a [RpcParam],
        scrollopt: i32,
        ccopt: i32,
    ) -> Request<'a> {
        Request { procedure, text: self.text, params: self.params, values, scrollopt, ccopt }
    }
}

/// The API cursors and prepared cursor statements of one connection. Handles count up and
/// are never reused, so a stale handle finds nothing (16945) rather than another cursor.
#[derive(Debug, Default)]
pub struct ApiCursors {
    open: HashMap<i32, ApiCursor>,
    prepared: HashMap<i32, PreparedCursor>,
    last_handle: i32,
}

impl ApiCursors {
    /// Forgets every cursor and prepared statement (RESETCONNECTION, which deallocates the
    /// session's T-SQL cursors itself).
    pub fn clear(&mut self) {
        self.open.clear();
        self.prepared.clear();
    }

    fn next_handle(&mut self) -> Result<i32, RpcError> {
        let handle = if self.last_handle == 0 {
            FIRST_HANDLE
        } else {
            self.last_handle
                .checked_add(1)
                .ok_or_else(|| error(8009, "this connection has used up its cursor handles"))?
        };
        self.last_handle = handle;
        Ok(handle)
    }

    fn cursor(&mut self, handle: i32) -> Result<&mut ApiCursor, RpcError> {
        self.open.get_mut(&handle).ok_or_else(not_declared)
    }
}

/// The cursor procedure a call invokes, by number or by name (`sp_cursorfetch`,
/// `sys.sp_cursorfetch`...).
pub fn cursor_proc(proc: &RpcProc) -> Option<ProcId> {
    let id = match proc {
        RpcProc::Id(id) => *id,
        RpcProc::Name(name) => {
            let bare = name.rsplit('.').next().unwrap_or(name).trim_matches(['[', ']']);
            (1..=9u16)
                .filter_map(|id| ProcId::try_from(id).ok())
                .find(|p| p.name().eq_ignore_ascii_case(bare))?
        }
    };
    matches!(
        id,
        ProcId::Cursor
            | ProcId::CursorOpen
            | ProcId::CursorPrepare
            | ProcId::CursorExecute
            | ProcId::CursorPrepExec
            | ProcId::CursorUnprepare
            | ProcId::CursorFetch
            | ProcId::CursorOption
            | ProcId::CursorClose
    )
    .then_some(id)
}

/// A class 16 error on line 1.
fn error(number: i32, message: impl Into<String>) -> RpcError {
    RpcError { number, class: 16, state: 1, line: 1, message: message.into() }
}

/// 16945, for a cursor handle that names no open cursor.
fn not_declared() -> RpcError {
    error(16945, "The cursor was not declared.")
}

/// 16902, for a parameter value the procedure cannot take.
fn invalid(procedure: &str, parameter: &str) -> RpcError {
    error(16902, format!("{procedure}: The value of parameter '{parameter}' is invalid."))
}

/// What a cursor call has the connection run: T-SQL text as a batch (a positioned change),
/// or a statement with the request's parameters bound, as `sp_executesql` runs it.
pub enum CursorWork {
    Text(String),
    Bound { shown: Arc<str>, target: CallTarget, arguments: Vec<CallArgument> },
}

/// How a call runs its work: the connection's run, which reports the database and
/// transaction changes it makes.
pub type RunWork<'a, W> = dyn FnMut(&mut Session, CursorWork, &mut TdsOutput<W>) + 'a;

/// An OUTPUT parameter's value, returned after the call's RETURNSTATUS.
struct Returned {
    ordinal: u16,
    name: String,
    wire: TypeInfo,
    value: TdsValue,
}

/// What a call returns after its statements: its return status and OUTPUT parameters.
#[derive(Default)]
struct Outcome {
    status: i32,
    returned: Vec<Returned>,
}

impl Outcome {
    /// Returns `value` through parameter `index` if the client passed it as OUTPUT.
    fn output(&mut self, params: &[RpcParam], index: usize, value: i32) {
        let Some(p) = params.get(index).filter(|p| p.is_output()) else { return };
        let wire = match p.ty {
            TypeInfo::Int4 | TypeInfo::IntN(4) => p.ty,
            _ => TypeInfo::IntN(4),
        };
        self.returned.push(Returned {
            ordinal: u16::try_from(index).unwrap_or(u16::MAX),
            name: p.name.clone(),
            wire,
            value: TdsValue::Int(value),
        });
    }
}

/// Runs the cursor RPC `call` (`id` is [`cursor_proc`]'s) and sends its whole response, up to
/// its DONEPROC (with `more`).
pub fn call<W: Write>(
    cursors: &mut ApiCursors,
    session: &mut Session,
    id: ProcId,
    call: &RpcCall,
    more: DoneStatus,
    out: &mut TdsOutput<W>,
    run: &mut RunWork<'_, W>,
) {
    let params = call.params.as_slice();
    let no_metadata = call.options.contains(RpcOptions::NO_METADATA);
    let result = match id {
        ProcId::CursorOpen => open_call(cursors, session, params, out, run),
        ProcId::CursorPrepare => prepare_call(cursors, params),
        ProcId::CursorExecute => execute_call(cursors, session, params, out, run),
        ProcId::CursorPrepExec => prep_exec_call(cursors, session, params, out, run),
        ProcId::CursorUnprepare => unprepare_call(cursors, params),
        ProcId::CursorFetch => fetch_call(cursors, session, params, no_metadata, out),
        ProcId::Cursor => cursor_call(cursors, session, params, out, run),
        ProcId::CursorOption => option_call(cursors, session, params),
        ProcId::CursorClose => close_call(cursors, session, params),
        _ => Err(error(8009, format!("{} is not a cursor procedure", id.name()))),
    };
    let failed = match &result {
        Ok(_) => out.end_statements(),
        Err(e) => {
            out.token(&Token::Error(e.to_message()));
            out.any_error = true;
            let _ = out.end_statements();
            true
        }
    };
    if let Ok(mut outcome) = result {
        out.token(&Token::ReturnStatus(outcome.status));
        // RETURNVALUE tokens go out in parameter order, whatever order the call set them in.
        outcome.returned.sort_by_key(|r| r.ordinal);
        for r in outcome.returned {
            out.token(&Token::ReturnValue(ReturnValue {
                ordinal: r.ordinal,
                name: r.name,
                status: ReturnValueStatus::OUTPUT_PARAM,
                user_type: 0,
                flags: ColumnFlags::NULLABLE,
                ty: r.wire,
                value: r.value,
            }));
        }
    }
    let mut status = more;
    if failed {
        status |= DoneStatus::ERROR;
    }
    out.token(&Token::DoneProc(Done { status, cur_cmd: 0, row_count: 0 }));
}

/// A cursor procedure's parameters as sent, read by position; a missing or unusable one is
/// SQL Server's error naming the procedure and the parameter.
struct Params<'a> {
    procedure: &'static str,
    sent: &'a [RpcParam],
}

impl<'a> Params<'a> {
    fn new(procedure: &'static str, sent: &'a [RpcParam]) -> Self {
        Params { procedure, sent }
    }

    /// 201 for the first of the procedure's leading parameters `names` that was not sent.
    fn require(&self, names: &[&str]) -> Result<(), RpcError> {
        match names.get(self.sent.len()) {
            Some(name) => Err(missing(self.procedure, name)),
            None => Ok(()),
        }
    }

    /// 16902 for parameter `name`.
    fn invalid(&self, name: &str) -> RpcError {
        invalid(self.procedure, name)
    }

    /// An int parameter: `None` when it is absent, NULL or sent as DEFAULT.
    fn int(&self, index: usize, name: &str) -> Result<Option<i32>, RpcError> {
        let Some(p) = self.sent.get(index) else { return Ok(None) };
        if p.status.contains(ParamStatus::DEFAULT) {
            return Ok(None);
        }
        if matches!(p.value, TdsValue::Null) {
            return Ok(None);
        }
        let wide = rpc::integer(&p.value).ok_or_else(|| self.invalid(name))?;
        i32::try_from(wide).map(Some).map_err(|_| self.invalid(name))
    }

    /// A required int parameter (201 when it is absent, NULL or DEFAULT).
    fn required_int(&self, index: usize, name: &str) -> Result<i32, RpcError> {
        self.int(index, name)?.ok_or_else(|| missing(self.procedure, name))
    }

    /// A text parameter (NULL or absent: empty).
    fn text(&self, index: usize, name: &str) -> Result<String, RpcError> {
        let Some(p) = self.sent.get(index) else { return Ok(String::new()) };
        match &p.value {
            TdsValue::NVarChar(s) => Ok(s.clone()),
            TdsValue::VarChar(b) => {
                Ok(CodePage::of(p.ty.collation().unwrap_or_default()).decode(b))
            }
            TdsValue::Null => Ok(String::new()),
            _ => Err(self.invalid(name)),
        }
    }

    /// The parameters from position `index` on (the statement's values).
    fn from(&self, index: usize) -> &'a [RpcParam] {
        self.sent.get(index..).unwrap_or_default()
    }

    /// The statement `sp_cursorprepare` and `sp_cursorprepexec` prepare: `params` and `stmt`
    /// at `params_at` and after it, then `scrollopt` and `ccopt` at 4 and 5 (in both), once
    /// the statement parses.
    fn prepared(&self, params_at: usize) -> Result<PreparedCursor, RpcError> {
        let statement = PreparedCursor {
            params: self.text(params_at, "params")?,
            text: self.text(params_at + 1, "stmt")?,
            scrollopt: self.int(4, "scrollopt")?.unwrap_or(KEYSET),
            ccopt: self.int(5, "ccopt")?.unwrap_or(READ_ONLY),
        };
        parse_batch(&statement.text)?;
        Ok(statement)
    }
}

/// 201, for a required parameter that was not sent.
fn missing(procedure: &str, parameter: &str) -> RpcError {
    error(
        201,
        format!(
            "Procedure or function '{procedure}' expects parameter '@{parameter}', which was \
             not supplied."
        ),
    )
}

/// `[name]`, with `]` doubled.
fn quote(name: &str) -> String {
    format!("[{}]", name.replace(']', "]]"))
}

/// A statement to open a cursor over, with its parameters and the options asked for.
struct Request<'a> {
    procedure: &'static str,
    text: String,
    params: String,
    values: &'a [RpcParam],
    scrollopt: i32,
    ccopt: i32,
}

/// An opened cursor's handle and `rowcount` (0 and -1 when the statement ran directly),
/// and the type and concurrency used.
struct Opened {
    handle: i32,
    rows: i32,
    scrollopt: i32,
    ccopt: i32,
}

/// The type a cursor asked for as `scrollopt` gets (see "A cursor is a global T-SQL
/// cursor"), `dynamic` saying whether the T-SQL cursor is one.
fn negotiated_type(requested: i32, keyed: bool, dynamic: bool) -> i32 {
    match requested & SCROLL_TYPES {
        t if t & DYNAMIC != 0 && dynamic => DYNAMIC,
        t if t & (KEYSET | DYNAMIC) != 0 => {
            if keyed {
                KEYSET
            } else {
                STATIC
            }
        }
        t if t & FORWARD_ONLY != 0 => FORWARD_ONLY,
        t if t & FAST_FORWARD != 0 => FAST_FORWARD,
        _ => STATIC,
    }
}

/// The concurrency a cursor of type `ty` asked for as `ccopt` gets.
fn negotiated_concurrency(requested: i32, ty: i32, keyed: bool) -> i32 {
    let asked = requested & CONCURRENCY;
    if asked & READ_ONLY != 0 || asked == 0 || !keyed || ty == STATIC || ty == FAST_FORWARD {
        READ_ONLY
    } else {
        lowest_concurrency(requested)
    }
}

/// The lowest concurrency bit of `ccopt`: READ_ONLY, SCROLL_LOCKS, OPTIMISTIC or OPTIMISTIC
/// values, the one a request that names several gets.
fn lowest_concurrency(ccopt: i32) -> i32 {
    let asked = ccopt & CONCURRENCY;
    asked & asked.wrapping_neg()
}

/// Whether `text` is one SELECT a cursor can be declared for.
fn is_cursor_query(text: &str) -> Result<bool, RpcError> {
    let batch = parse_batch(text)?;
    Ok(match batch.statements.as_slice() {
        [statement] => match &statement.kind {
            StatementKind::Select(select) => match &select.query.body {
                walden_sql::ast::QueryBody::Select(s) => s.into.is_none(),
                _ => true,
            },
            _ => false,
        },
        _ => false,
    })
}

/// `statement` with the request's parameters bound, as `sp_executesql` runs it.
fn bound(request: &Request<'_>, statement: String) -> Result<CursorWork, RpcError> {
    let mut params = vec![
        RpcParam {
            name: String::new(),
            status: ParamStatus::NONE,
            ty: TypeInfo::NVarChar { max_len: 0xFFFF, collation: Default::default() },
            value: TdsValue::NVarChar(statement),
        },
        RpcParam {
            name: String::new(),
            status: ParamStatus::NONE,
            ty: TypeInfo::NVarChar { max_len: 0xFFFF, collation: Default::default() },
            value: TdsValue::NVarChar(request.params.clone()),
        },
    ];
    params.extend(request.values.iter().cloned());
    let call = RpcCall { proc: RpcProc::Id(ProcId::ExecuteSql), options: RpcOptions::NONE, params };
    match rpc::plan(&call, &mut rpc::Prepared::default())?.work {
        rpc::Work::Call { shown, target, arguments } => {
            Ok(CursorWork::Bound { shown, target, arguments })
        }
        // sp_executesql always plans a call: anything else is a fault in `rpc::plan`, reported
        // rather than run as nothing.
        rpc::Work::Nothing | rpc::Work::Describe(_) => Err(error(
            50000,
            format!("{}: Walden planned no statement for the cursor's query.", request.procedure),
        )),
    }
}

/// Opens a cursor over the request's statement and sends its metadata; a statement that is
/// not one SELECT runs directly instead, after the information message 16954, as SQL Server
/// does.
fn open<W: Write>(
    cursors: &mut ApiCursors,
    session: &mut Session,
    request: &Request<'_>,
    out: &mut TdsOutput<W>,
    run: &mut RunWork<'_, W>,
) -> Result<Opened, RpcError> {
    if request.text.trim().is_empty() {
        return Err(invalid(request.procedure, "stmt"));
    }
    let requested = request.scrollopt & SCROLL_TYPES;
    if requested == 0 || requested & (requested - 1) != 0 {
        return Err(invalid(request.procedure, "scrollopt"));
    }
    if !is_cursor_query(&request.text)? {
        out.token(&Token::Info(walden_tds::ServerMessage {
            number: 16954,
            state: 1,
            class: 10,
            message: "Executing SQL directly; no cursor.".into(),
            server: super::output::SERVER_NAME.to_string(),
            procedure: request.procedure.to_string(),
            line: 1,
        }));
        let work = bound(request, request.text.clone())?;
        run(session, work, out);
        return Ok(Opened {
            handle: 0,
            rows: -1,
            scrollopt: request.scrollopt,
            ccopt: request.ccopt,
        });
    }
    let handle = cursors.next_handle()?;
    let name = format!("__walden_api_cursor_{handle}");
    let scroll = if requested & (FORWARD_ONLY | FAST_FORWARD) != 0 {
        "FORWARD_ONLY"
    } else if requested & DYNAMIC != 0 {
        "SCROLL DYNAMIC"
    } else {
        "SCROLL"
    };
    let read_only =
        request.ccopt & CONCURRENCY & READ_ONLY != 0 || requested & (STATIC | FAST_FORWARD) != 0;
    // OPTIMISTIC (by row version or by values): the T-SQL cursor checks the row is as it
    // was fetched before a positioned change (16934), which Walden does by values for both.
    let concurrency = if read_only {
        " READ_ONLY"
    } else if lowest_concurrency(request.ccopt) & (OPTIMISTIC | OPTIMISTIC_VALUES) != 0 {
        " OPTIMISTIC"
    } else {
        ""
    };
    let declare = format!(
        "DECLARE {} CURSOR GLOBAL {scroll}{concurrency} FOR {}\n;OPEN {}",
        quote(&name),
        request.text,
        quote(&name)
    );
    let work = bound(request, declare)?;
    let errors_before = out.any_error;
    run(session, work, out);
    let shape = match session.cursor_shape(&name) {
        Ok(shape) if !out.any_error || errors_before => shape,
        // The query failed: its error went out (and marks the call's DONEPROC), nothing of
        // the cursor is left, and the handle returned is 0.
        _ => {
            session.execute_batch(
                &format!("IF CURSOR_STATUS('global', N'{name}') >= -1 DEALLOCATE {}", quote(&name)),
                &mut Collected::default(),
            );
            return Ok(Opened {
                handle: 0,
                rows: 0,
                scrollopt: request.scrollopt,
                ccopt: request.ccopt,
            });
        }
    };
    let scrollopt = negotiated_type(requested, shape.keyed, shape.dynamic);
    let ccopt = negotiated_concurrency(request.ccopt, scrollopt, shape.keyed);
    send_metadata(out, &shape, true);
    let rows = row_count(scrollopt, &shape);
    cursors.open.insert(
        handle,
        ApiCursor { name, scrollopt, ccopt, shape, buffer_start: 0, buffer_len: 0 },
    );
    Ok(Opened { handle, rows, scrollopt, ccopt })
}

/// The rows a cursor of type `scrollopt` reports (`rowcount`): -1 for a forward-only or
/// dynamic one, whose rows are not known before they are fetched.
fn row_count(scrollopt: i32, shape: &CursorShape) -> i32 {
    if scrollopt & (FORWARD_ONLY | FAST_FORWARD | DYNAMIC) != 0 {
        -1
    } else {
        i32::try_from(shape.rows).unwrap_or(i32::MAX)
    }
}

/// The cursor's columns, then ROWSTAT.
fn with_rowstat(shape: &CursorShape) -> Vec<walden_sql::exec::ColumnInfo> {
    let mut columns = shape.columns.clone();
    columns.push(walden_sql::exec::ColumnInfo::not_null("ROWSTAT", SqlType::Int));
    columns
}

/// Sends the cursor's columns: COLMETADATA, TABNAME and COLINFO when `full`, else the
/// NoMetaData COLMETADATA.
fn send_metadata<W: Write>(out: &mut TdsOutput<W>, shape: &CursorShape, full: bool) {
    let columns = with_rowstat(shape);
    if !full {
        out.cursor_columns(&columns, None);
        return;
    }
    let tables: Vec<Vec<String>> =
        shape.tables.iter().map(|(schema, name)| vec![schema.clone(), name.clone()]).collect();
    let mut infos: Vec<ColInfo> = Vec::with_capacity(columns.len());
    for (i, c) in shape.columns.iter().enumerate() {
        let (table, mut status, base_name) = match shape.sources.get(i).cloned().flatten() {
            Some((table, base)) => {
                let base_name = (!base.eq_ignore_ascii_case(&c.name)).then_some(base);
                // TABNAME's 1-based table number, one byte like the column's.
                (column_number(table), ColInfoStatus::NONE, base_name)
            }
            None => (0, ColInfoStatus::EXPRESSION, None),
        };
        if shape.key.get(i).copied().unwrap_or(false) {
            status |= ColInfoStatus::KEY;
        }
        infos.push(ColInfo { column: column_number(i), table, status, base_name });
    }
    infos.push(ColInfo {
        column: column_number(shape.columns.len()),
        table: 0,
        status: ColInfoStatus::HIDDEN | ColInfoStatus::EXPRESSION,
        base_name: None,
    });
    let tokens = [Token::TabName(tables), Token::ColInfo(infos)];
    out.cursor_columns(&columns, Some(&tokens));
}

/// COLINFO's 1-based column number, which is one byte: columns past 255 share 255.
fn column_number(index: usize) -> u8 {
    u8::try_from(index + 1).unwrap_or(u8::MAX)
}

/// Opens a cursor over `request` (see [`open`]) and returns its handle, type, concurrency and
/// rows through the call's OUTPUT parameters at positions `at`, in that order (each opening
/// procedure has its own positions).
fn open_returning<W: Write>(
    cursors: &mut ApiCursors,
    session: &mut Session,
    request: &Request<'_>,
    out: &mut TdsOutput<W>,
    run: &mut RunWork<'_, W>,
    params: &[RpcParam],
    at: [usize; 4],
) -> Result<Outcome, RpcError> {
    let opened = open(cursors, session, request, out, run)?;
    let mut outcome = Outcome::default();
    let values = [opened.handle, opened.scrollopt, opened.ccopt, opened.rows];
    for (index, value) in at.into_iter().zip(values) {
        outcome.output(params, index, value);
    }
    Ok(outcome)
}

/// `sp_cursoropen cursor OUTPUT, stmt, scrollopt [OUTPUT], ccopt [OUTPUT], rowcount OUTPUT
/// [, params, values...]`.
fn open_call<W: Write>(
    cursors: &mut ApiCursors,
    session: &mut Session,
    params: &[RpcParam],
    out: &mut TdsOutput<W>,
    run: &mut RunWork<'_, W>,
) -> Result<Outcome, RpcError> {
    const PROC: &str = "sp_cursoropen";
    let p = Params::new(PROC, params);
    p.require(&["cursor", "stmt"])?;
    let text = p.text(1, "stmt")?;
    let scrollopt = p.int(2, "scrollopt")?.unwrap_or(KEYSET);
    let ccopt = p.int(3, "ccopt")?.unwrap_or(READ_ONLY);
    let parameterized = scrollopt & PARAMETERIZED_STMT != 0 || params.len() > 5;
    let (param_text, values) =
        if parameterized { (p.text(5, "params")?, p.from(6)) } else { (String::new(), &[][..]) };
    let request = Request { procedure: PROC, text, params: param_text, values, scrollopt, ccopt };
    open_returning(cursors, session, &request, out, run, params, [0, 2, 3, 4])
}

/// `sp_cursorprepare prepared_handle OUTPUT, params, stmt, options [, scrollopt [OUTPUT]
/// [, ccopt [OUTPUT]]]`: keeps the statement once it parses.
fn prepare_call(cursors: &mut ApiCursors, params: &[RpcParam]) -> Result<Outcome, RpcError> {
    let p = Params::new("sp_cursorprepare", params);
    p.require(&["prepared_handle", "params", "stmt"])?;
    let statement = p.prepared(1)?;
    let handle = cursors.next_handle()?;
    let mut outcome = Outcome::default();
    outcome.output(params, 0, handle);
    outcome.output(params, 4, statement.scrollopt);
    outcome.output(params, 5, statement.ccopt);
    cursors.prepared.insert(handle, statement);
    Ok(outcome)
}

/// `sp_cursorexecute prepared_handle, cursor OUTPUT [, scrollopt [OUTPUT] [, ccopt [OUTPUT]
/// [, rowcount OUTPUT [, values...]]]]`.
fn execute_call<W: Write>(
    cursors: &mut ApiCursors,
    session: &mut Session,
    params: &[RpcParam],
    out: &mut TdsOutput<W>,
    run: &mut RunWork<'_, W>,
) -> Result<Outcome, RpcError> {
    const PROC: &str = "sp_cursorexecute";
    let p = Params::new(PROC, params);
    let prepared_handle = p.required_int(0, "prepared_handle")?;
    let statement = cursors
        .prepared
        .get(&prepared_handle)
        .cloned()
        .ok_or_else(|| p.invalid("prepared_handle"))?;
    let scrollopt = p.int(2, "scrollopt")?.unwrap_or(statement.scrollopt);
    let ccopt = p.int(3, "ccopt")?.unwrap_or(statement.ccopt);
    let request = statement.request(PROC, p.from(5), scrollopt, ccopt);
    open_returning(cursors, session, &request, out, run, params, [1, 2, 3, 4])
}

/// `sp_cursorprepexec prepared_handle OUTPUT, cursor OUTPUT, params, stmt, scrollopt
/// [OUTPUT], ccopt [OUTPUT], rowcount OUTPUT [, values...]`.
fn prep_exec_call<W: Write>(
    cursors: &mut ApiCursors,
    session: &mut Session,
    params: &[RpcParam],
    out: &mut TdsOutput<W>,
    run: &mut RunWork<'_, W>,
) -> Result<Outcome, RpcError> {
    const PROC: &str = "sp_cursorprepexec";
    let p = Params::new(PROC, params);
    p.require(&["prepared_handle", "cursor", "params", "stmt"])?;
    let statement = p.prepared(2)?;
    let prepared_handle = cursors.next_handle()?;
    cursors.prepared.insert(prepared_handle, statement.clone());
    let (scrollopt, ccopt) = (statement.scrollopt, statement.ccopt);
    let request = statement.request(PROC, p.from(7), scrollopt, ccopt);
    let mut outcome = open_returning(cursors, session, &request, out, run, params, [1, 4, 5, 6])?;
    outcome.output(params, 0, prepared_handle);
    Ok(outcome)
}

/// `sp_cursorunprepare prepared_handle`.
fn unprepare_call(cursors: &mut ApiCursors, params: &[RpcParam]) -> Result<Outcome, RpcError> {
    let p = Params::new("sp_cursorunprepare", params);
    let handle = p.required_int(0, "prepared_handle")?;
    cursors.prepared.remove(&handle).ok_or_else(|| p.invalid("prepared_handle"))?;
    Ok(Outcome::default())
}

/// `sp_cursoroption cursor, code, value`.
fn option_call(
    cursors: &mut ApiCursors,
    session: &mut Session,
    params: &[RpcParam],
) -> Result<Outcome, RpcError> {
    let p = Params::new("sp_cursoroption", params);
    let handle = p.required_int(0, "cursor")?;
    let code = p.required_int(1, "code")?;
    let cursor = cursors.cursor(handle)?;
    let mut outcome = Outcome::default();
    match code {
        // TEXTPTR_ONLY and TEXTDATA: Walden has no text pointers, so text, ntext and image
        // columns always come back as their data, which is what TEXTDATA asks for.
        1 | 3 => {}
        // CURSOR_NAME: the name T-SQL's WHERE CURRENT OF knows the cursor by.
        2 => {
            let name = p.text(2, "value")?;
            if name.trim().is_empty() {
                return Err(p.invalid("value"));
            }
            session.rename_cursor(&cursor.name, &name).map_err(RpcError::from)?;
            cursor.name = name;
        }
        // SCROLLOPT and CCOPT: an open cursor's type and concurrency are those it was opened
        // with; asking for them again is accepted.
        4 | 5 => {
            let value = p.required_int(2, "value")?;
            let current = if code == 4 {
                value & SCROLL_TYPES == cursor.scrollopt
            } else {
                value & CONCURRENCY == cursor.ccopt
            };
            if !current {
                return Err(p.invalid("value"));
            }
        }
        // ROWCOUNT: the cursor's rows, through `value`.
        6 => outcome.output(params, 2, row_count(cursor.scrollopt, &cursor.shape)),
        _ => return Err(p.invalid("code")),
    }
    Ok(outcome)
}

/// `sp_cursorclose cursor`: closes and deallocates the cursor.
fn close_call(
    cursors: &mut ApiCursors,
    session: &mut Session,
    params: &[RpcParam],
) -> Result<Outcome, RpcError> {
    let handle = Params::new("sp_cursorclose", params).required_int(0, "cursor")?;
    let cursor = cursors.open.remove(&handle).ok_or_else(not_declared)?;
    let mut sink = Collected::default();
    session.execute_batch(&format!("DEALLOCATE {}", quote(&cursor.name)), &mut sink);
    match sink.messages.into_iter().find(|m| m.severity > 10) {
        Some(m) => Err(RpcError::from(SqlError::new(m.number, m.message))),
        None => Ok(Outcome::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_stays_dynamic_else_becomes_keyset_or_static() {
        assert_eq!(negotiated_type(KEYSET, true, false), KEYSET);
        assert_eq!(negotiated_type(DYNAMIC, true, true), DYNAMIC);
        assert_eq!(negotiated_type(DYNAMIC, false, true), DYNAMIC);
        assert_eq!(negotiated_type(DYNAMIC, true, false), KEYSET);
        assert_eq!(negotiated_type(DYNAMIC | PARAMETERIZED_STMT, false, false), STATIC);
        assert_eq!(negotiated_type(FAST_FORWARD, true, false), FAST_FORWARD);
        assert_eq!(negotiated_type(FORWARD_ONLY, false, false), FORWARD_ONLY);
        assert_eq!(negotiated_type(STATIC, true, false), STATIC);
    }

    #[test]
    fn only_keyed_dynamic_cursors_keep_their_concurrency() {
        // mssql-jdbc's CONCUR_UPDATABLE: OPTIMISTIC | UPDT_IN_PLACE | ALLOW_DIRECT.
        let updatable = 0x4 | 0x4000 | 0x2000;
        assert_eq!(negotiated_concurrency(updatable, KEYSET, true), 0x4);
        assert_eq!(negotiated_concurrency(updatable, KEYSET, false), READ_ONLY);
        assert_eq!(negotiated_concurrency(updatable, STATIC, true), READ_ONLY);
        assert_eq!(negotiated_concurrency(READ_ONLY | 0x2000, KEYSET, true), READ_ONLY);
    }

    #[test]
    fn cursor_procedures_by_number_and_name() {
        assert_eq!(cursor_proc(&RpcProc::Id(ProcId::CursorFetch)), Some(ProcId::CursorFetch));
        assert_eq!(
            cursor_proc(&RpcProc::Name("sys.sp_cursoropen".into())),
            Some(ProcId::CursorOpen)
        );
        assert_eq!(cursor_proc(&RpcProc::Name("[sp_cursor]".into())), Some(ProcId::Cursor));
        assert_eq!(cursor_proc(&RpcProc::Id(ProcId::ExecuteSql)), None);
        assert_eq!(cursor_proc(&RpcProc::Name("sp_executesql".into())), None);
    }
}
