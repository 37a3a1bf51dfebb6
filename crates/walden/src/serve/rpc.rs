//! RPC requests as calls with values. A call's parameters are bound here to what it calls
//! (a parameterized statement's declarations, by position then by name, or a procedure's
//! arguments as the client named them), converted from the wire, and handed to
//! [`Session::execute_call`](walden_sql::exec::Session::execute_call) as values: nothing is
//! printed as T-SQL text, and the statement's text, the same at every call, is parsed once
//! by the session's parse cache. The call gives back its OUTPUT parameters and return status,
//! which the connection sends as RETURNVALUE and RETURNSTATUS tokens.
//!
//! Prepared statements (`sp_prepare`, `sp_execute`, `sp_prepexec`, `sp_unprepare`) live in the
//! connection's [`Prepared`]: a handle names the statement text and its parsed parameter
//! declarations. Preparing checks that the statement parses with its declarations, so a
//! syntax error is reported at prepare time as SQL Server does. `sp_prepare` describes the
//! statement's result sets by running it as a batch under `SET FMTONLY ON`.
//!
//! A table-valued parameter's rows are the one part still sent to the session as text (a
//! `DECLARE` and `INSERT ... VALUES` of the table variable, see [`table_argument`]).

use std::collections::HashMap;
use std::sync::Arc;

use walden_engine::types::{DeclaredType, SqlType};
use walden_sql::ast::DeclarationKind;
use walden_sql::exec::scalar::data_type;
use walden_sql::exec::{CallArgument, CallTarget, CallValue, SqlError};
use walden_sql::{parse_batch, ParseError, StatementKind};
use walden_tds::{
    ParamStatus, ProcId, RpcCall, RpcParam, RpcProc, ServerMessage, TableValue, TdsValue, TypeInfo,
};

use super::code_page::CodePage;
use super::convert::{from_wire_typed, literal, sql_type};
use super::output::SERVER_NAME;

/// An OUTPUT parameter of a call, as RETURNVALUE sends it back.
#[derive(Debug)]
pub struct Param {
    /// The position in the RPC (RETURNVALUE's ordinal).
    pub ordinal: u16,
    /// The name the client used (`@P1`), or a generated one for a positional parameter.
    pub name: String,
    pub sql: SqlType,
    /// The wire type the client sent, which RETURNVALUE echoes ([`returned_type`]).
    pub wire: TypeInfo,
}

/// What a call runs.
#[derive(Debug)]
pub enum Work {
    /// Nothing (`sp_unprepare`).
    Nothing,
    /// A batch: `sp_prepare` describing its statement's result sets under `SET FMTONLY ON`,
    /// which the connection turns off after it, however the batch ended.
    Describe(String),
    /// A statement or procedure with its arguments; `shown` is the request's text as the
    /// session's views show it (`(@P0 int)SELECT ...` for a statement, as SQL Server does).
    Call { shown: Arc<str>, target: CallTarget, arguments: Vec<CallArgument> },
}

/// A call bound to its parameters.
#[derive(Debug)]
pub struct Plan {
    pub work: Work,
    /// The OUTPUT parameters, in the order of the call's OUTPUT arguments, which the
    /// session's [`CallOutcome`](walden_sql::exec::CallOutcome) gives their values in.
    pub outputs: Vec<Param>,
    /// The handle `sp_prepare` / `sp_prepexec` created, for their first parameter when the
    /// client passed it as OUTPUT. It is returned ahead of `outputs`, as parameters are
    /// returned in order.
    pub handle: Option<(Param, i32)>,
}

/// Why a call cannot run, as the ERROR token the client gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    pub number: i32,
    pub class: u8,
    pub state: u8,
    pub line: u32,
    pub message: String,
}

impl RpcError {
    /// A class 16 error on line 1.
    fn new(number: i32, message: impl Into<String>) -> Self {
        RpcError { number, class: 16, state: 1, line: 1, message: message.into() }
    }

    /// A request Walden cannot carry out: 8009, the number SQL Server uses for RPC streams it
    /// cannot handle.
    fn unsupported(message: impl Into<String>) -> Self {
        RpcError::new(8009, message)
    }

    /// 8179, for an unknown prepared handle.
    fn no_handle(handle: i64) -> Self {
        RpcError::new(8179, format!("Could not find prepared statement with handle {handle}."))
    }

    /// 201, for a required parameter that was not sent.
    fn missing(procedure: &str, parameter: &str) -> Self {
        RpcError::new(
            201,
            format!(
                "Procedure or function '{procedure}' expects parameter '{parameter}', which was \
                 not supplied."
            ),
        )
    }

    /// 8144, for parameters beyond the procedure's.
    fn too_many(procedure: &str) -> Self {
        RpcError::new(
            8144,
            format!("Procedure or function {procedure} has too many arguments specified."),
        )
    }

    pub fn to_message(&self) -> ServerMessage {
        ServerMessage {
            number: self.number,
            state: self.state,
            class: self.class,
            message: self.message.clone(),
            server: SERVER_NAME.to_string(),
            procedure: String::new(),
            line: i32::try_from(self.line).unwrap_or(i32::MAX),
        }
    }
}

impl From<ParseError> for RpcError {
    fn from(e: ParseError) -> Self {
        RpcError {
            number: e.number,
            class: e.severity,
            state: e.state,
            line: e.line,
            message: e.message,
        }
    }
}

impl From<SqlError> for RpcError {
    fn from(e: SqlError) -> Self {
        RpcError {
            number: e.number,
            class: e.severity,
            state: e.state,
            line: e.line.max(1),
            message: e.message,
        }
    }
}

/// One declaration of a parameterized statement's `@params`.
#[derive(Debug, Clone, PartialEq)]
struct Decl {
    /// With its `@`.
    name: String,
    /// The type; `None` for a `READONLY` parameter of a table type, whose name is `written`.
    sql: Option<SqlType>,
    /// The type as written.
    written: String,
    output: bool,
}

/// A parameterized statement: `sp_executesql`'s arguments, or a prepared statement.
#[derive(Debug, Clone, PartialEq)]
struct Statement {
    /// The `@params` text as the client sent it (error 8178 quotes it).
    params: Arc<str>,
    decls: Arc<[Decl]>,
    text: Arc<str>,
    /// `(@params)text`, as SQL Server shows a parameterized statement's text.
    shown: Arc<str>,
}

impl Statement {
    fn new(params: String, text: String) -> Result<Self, RpcError> {
        let decls = parse_declarations(&params)?.into();
        let shown = Arc::from(format!("({params}){text}"));
        Ok(Statement { params: Arc::from(params), decls, text: Arc::from(text), shown })
    }

    fn target(&self) -> CallTarget {
        CallTarget::Statement { params: Arc::clone(&self.params), text: Arc::clone(&self.text) }
    }

    /// Checks that the statement parses with its parameters declared: the prologue of
    /// declarations is on the statement's first line, so that a syntax error is the one (and
    /// on the line) an execution would report.
    fn validate(&self) -> Result<(), RpcError> {
        let mut batch = String::new();
        for d in self.decls.iter() {
            batch.push_str(&format!("DECLARE {} {}; ", d.name, d.written));
        }
        batch.push_str(&self.text);
        parse_batch(&batch)?;
        Ok(())
    }
}

/// The prepared statements of one connection, by handle. Handles count up from 1 and are
/// never reused within a connection (not even after RESETCONNECTION empties the table), so
/// a client holding a stale handle gets error 8179 instead of running another statement.
///
/// It also keeps the statements `sp_executesql` ran lately, by text: a driver that sends
/// every statement so (mssql-jdbc before a statement's second execution, BenchBase's
/// TPC-C always) repeats a few texts, whose parameter declarations were parsed again at
/// every call (5% of the server's CPU in that TPC-C).
#[derive(Debug, Default)]
pub struct Prepared {
    statements: HashMap<i32, Statement>,
    last_handle: i32,
    /// At most [`RECENT_STATEMENTS`] of them, holding at most [`RECENT_BYTES`] of text; when
    /// full, it starts over.
    recent: HashMap<Arc<str>, Statement>,
    recent_bytes: usize,
}

/// How many `sp_executesql` statements a connection keeps parsed.
const RECENT_STATEMENTS: usize = 128;

/// The most statement and parameter text a connection keeps parsed, in bytes.
const RECENT_BYTES: usize = 1 << 20;

impl Prepared {
    /// Drops every prepared statement (RESETCONNECTION).
    pub fn clear(&mut self) {
        self.statements.clear();
    }

    /// The statement `text` with parameters `params`, parsed: as kept from an earlier call,
    /// or parsed now and kept.
    fn recent_statement(&mut self, params: String, text: String) -> Result<Statement, RpcError> {
        if let Some(kept) = self.recent.get(text.as_str()) {
            if *kept.params == *params {
                return Ok(kept.clone());
            }
        }
        let statement = Statement::new(params, text)?;
        let size = statement.params.len() + statement.text.len();
        if self.recent.len() >= RECENT_STATEMENTS || self.recent_bytes + size > RECENT_BYTES {
            self.recent.clear();
            self.recent_bytes = 0;
        }
        if size <= RECENT_BYTES {
            self.recent_bytes += size;
            let replaced = self.recent.insert(Arc::clone(&statement.text), statement.clone());
            if let Some(old) = replaced {
                self.recent_bytes -= old.params.len() + old.text.len();
            }
        }
        Ok(statement)
    }

    fn insert(&mut self, statement: Statement) -> Result<i32, RpcError> {
        let handle = self.last_handle.checked_add(1).ok_or_else(|| {
            RpcError::unsupported("this connection has used up its prepared statement handles")
        })?;
        self.last_handle = handle;
        self.statements.insert(handle, statement);
        Ok(handle)
    }

    fn get(&self, handle: i32) -> Result<&Statement, RpcError> {
        self.statements.get(&handle).ok_or_else(|| RpcError::no_handle(handle.into()))
    }

    fn remove(&mut self, handle: i32) -> Result<Statement, RpcError> {
        self.statements.remove(&handle).ok_or_else(|| RpcError::no_handle(handle.into()))
    }
}

pub fn plan(call: &RpcCall, prepared: &mut Prepared) -> Result<Plan, RpcError> {
    let params = call.params.as_slice();
    let id = match &call.proc {
        RpcProc::Id(id) => *id,
        RpcProc::Name(name) => match system_procedure(name) {
            Some(id) => id,
            None => return exec_procedure(name, params),
        },
    };
    match id {
        ProcId::ExecuteSql => execute_sql(params, prepared),
        ProcId::Prepare => prepare(params, prepared),
        ProcId::Execute => execute(params, prepared),
        ProcId::PrepExec => prep_exec(params, prepared),
        ProcId::Unprepare => unprepare(params, prepared),
        other => {
            Err(RpcError::unsupported(format!("{} is not supported by Walden yet", other.name())))
        }
    }
}

/// The well-known procedure a call by name invokes (`sp_prepare`, `sys.sp_execute`...).
fn system_procedure(name: &str) -> Option<ProcId> {
    (1..=15u16).filter_map(|id| ProcId::try_from(id).ok()).find(|p| is_proc(name, p.name()))
}

/// Whether the call is `sp_reset_connection`, which the connection carries out itself.
pub fn is_reset_connection(proc: &RpcProc) -> bool {
    matches!(proc, RpcProc::Name(name) if is_proc(name, "sp_reset_connection"))
}

fn is_proc(name: &str, wanted: &str) -> bool {
    let bare = name.rsplit('.').next().unwrap_or(name).trim_matches(['[', ']']);
    bare.eq_ignore_ascii_case(wanted)
}

fn text_param(p: Option<&RpcParam>, procedure: &str, what: &str) -> Result<String, RpcError> {
    match p.map(|p| &p.value) {
        Some(TdsValue::NVarChar(s)) => Ok(s.clone()),
        Some(TdsValue::VarChar(b)) => {
            let collation = p.and_then(|p| p.ty.collation()).unwrap_or_default();
            Ok(CodePage::of(collation).decode(b))
        }
        Some(TdsValue::Null) | None => Ok(String::new()),
        Some(other) => Err(RpcError::unsupported(format!(
            "{procedure}: {what} must be text, not {}",
            other.kind()
        ))),
    }
}

/// A handle parameter's value; `None` for NULL. A value outside INT is reported as the
/// unknown handle it is.
fn handle_value(p: &RpcParam, procedure: &str) -> Result<Option<i32>, RpcError> {
    if matches!(p.value, TdsValue::Null) {
        return Ok(None);
    }
    let wide = integer(&p.value).ok_or_else(|| {
        RpcError::unsupported(format!(
            "{procedure}: @handle must be an int, not {}",
            p.value.kind()
        ))
    })?;
    i32::try_from(wide).map(Some).map_err(|_| RpcError::no_handle(wide))
}

/// An integer of any width (tinyint to bigint), widened; `None` for any other value, NULL
/// included.
pub(super) fn integer(value: &TdsValue) -> Option<i64> {
    match value {
        TdsValue::TinyInt(x) => Some(i64::from(*x)),
        TdsValue::SmallInt(x) => Some(i64::from(*x)),
        TdsValue::Int(x) => Some(i64::from(*x)),
        TdsValue::BigInt(x) => Some(*x),
        _ => None,
    }
}

/// One declaration of the `@params` text: name, type text, OUTPUT, READONLY.
fn declarations(text: &str) -> Result<Vec<(String, String, bool, bool)>, RpcError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
        .into_iter()
        .map(|part| {
            let part = part.trim();
            let Some((name, rest)) = part.split_once(char::is_whitespace) else {
                let near = if part.is_empty() { "," } else { part };
                return Err(RpcError {
                    class: 15,
                    ..RpcError::new(102, format!("Incorrect syntax near '{near}'."))
                });
            };
            let mut ty = rest.trim();
            let (mut output, mut readonly) = (false, false);
            for suffix in [" output", " out", " readonly"] {
                let lower = ty.to_ascii_lowercase();
                if lower.ends_with(suffix) {
                    output |= suffix != " readonly";
                    readonly |= suffix == " readonly";
                    ty = ty[..ty.len() - suffix.len()].trim_end();
                }
            }
            let ty = ty.strip_prefix_ci("as ").unwrap_or(ty);
            Ok((name.to_string(), ty.to_string(), output, readonly))
        })
        .collect()
}

/// The declarations of `@params`, their types resolved as a `DECLARE` would resolve them
/// (aliases such as `sysname`, SQL Server's defaults and errors: 2715 for an unknown type...).
fn parse_declarations(text: &str) -> Result<Vec<Decl>, RpcError> {
    let parts = declarations(text)?;
    if parts.is_empty() {
        return Ok(Vec::new());
    }
    let list: Vec<String> = parts.iter().map(|(name, ty, ..)| format!("{name} {ty}")).collect();
    let source = format!("DECLARE {}", list.join(", "));
    let batch = parse_batch(&source)?;
    let declared = match batch.statements.as_slice() {
        [one] => match &one.kind {
            StatementKind::Declare(declared) if declared.len() == parts.len() => declared,
            _ => return Err(syntax_error(text)),
        },
        _ => return Err(syntax_error(text)),
    };
    parts
        .into_iter()
        .zip(declared)
        .map(|((name, written, output, readonly), d)| match &d.kind {
            // A table type's name is resolved when the batch declares the variable.
            DeclarationKind::Scalar { value: None, .. } if readonly => {
                Ok(Decl { name, sql: None, written, output })
            }
            DeclarationKind::Scalar { data_type: dt, value: None } => {
                Ok(Decl { name, sql: Some(data_type(dt)?), written, output })
            }
            _ => Err(syntax_error(&name)),
        })
        .collect()
}

fn syntax_error(near: &str) -> RpcError {
    RpcError { class: 15, ..RpcError::new(102, format!("Incorrect syntax near '{near}'.")) }
}

trait StripPrefixCi {
    fn strip_prefix_ci(&self, prefix: &str) -> Option<&str>;
}

impl StripPrefixCi for str {
    fn strip_prefix_ci(&self, prefix: &str) -> Option<&str> {
        let head = self.get(..prefix.len())?;
        head.eq_ignore_ascii_case(prefix).then(|| &self[prefix.len()..])
    }
}

/// A parameter value bound to the variable the call holds it in.
struct Bound<'a> {
    /// The position in the RPC.
    ordinal: u16,
    /// The parameter's name: RETURNVALUE's, and a procedure's argument's.
    name: String,
    /// The argument's name: `None` where passed by position.
    passed_as: Option<String>,
    /// Its type; `None` for a table-valued parameter.
    sql: Option<SqlType>,
    /// The type it was declared with when Walden holds it as `sql` (SMALLDATETIME...), which
    /// the variable is declared as, so that its values are fitted to it.
    declared: Option<DeclaredType>,
    /// The table type a statement's `@params` declared, for a table-valued parameter whose
    /// client named none.
    table_type: Option<String>,
    output: bool,
    param: &'a RpcParam,
}

/// Binds `params` (the call's parameters from index `first` on) to the statement's
/// declarations: positionally, then by name once a name is used, as SQL Server does. Every
/// declared parameter must be given a value (8178).
fn bind<'a>(
    procedure: &str,
    statement: &Statement,
    params: &'a [RpcParam],
    first: usize,
) -> Result<Vec<Bound<'a>>, RpcError> {
    let mut slots: Vec<Option<(usize, &RpcParam)>> = vec![None; statement.decls.len()];
    let mut named = false;
    for (index, p) in params.iter().enumerate().skip(first) {
        let position = if p.name.is_empty() {
            if named {
                return Err(RpcError::new(
                    119,
                    format!(
                        "Must pass parameter number {} and subsequent parameters as '@name = \
                         value'. After the form '@name = value' has been used, all subsequent \
                         parameters must be passed in the form '@name = value'.",
                        index + 1
                    ),
                ));
            }
            let position = index - first;
            if position >= slots.len() {
                return Err(RpcError::too_many(procedure));
            }
            position
        } else {
            named = true;
            statement.decls.iter().position(|d| d.name.eq_ignore_ascii_case(&p.name)).ok_or_else(
                || {
                    RpcError::new(
                        8145,
                        format!("{} is not a parameter for procedure {procedure}.", p.name),
                    )
                },
            )?
        };
        if slots[position].is_some() {
            let name = &statement.decls[position].name;
            return Err(RpcError::new(
                8143,
                format!("Parameter '{name}' was supplied multiple times."),
            ));
        }
        slots[position] = Some((index, p));
    }
    statement
        .decls
        .iter()
        .zip(slots)
        .map(|(d, slot)| match slot {
            Some((index, p)) => Ok(Bound {
                ordinal: ordinal(index)?,
                name: d.name.clone(),
                // Bound in the declarations' order, which the statement's procedure takes.
                passed_as: None,
                sql: d.sql,
                declared: d.sql.and(DeclaredType::of_name(d.written.trim())),
                table_type: d.sql.is_none().then(|| d.written.clone()),
                output: d.output || p.is_output(),
                param: p,
            }),
            None => Err(RpcError::new(
                8178,
                format!(
                    "The parameterized query '({}){}' expects the parameter '{}', which was not \
                     supplied.",
                    statement.params, statement.text, d.name
                ),
            )),
        })
        .collect()
}

fn execute_sql(params: &[RpcParam], prepared: &mut Prepared) -> Result<Plan, RpcError> {
    const PROC: &str = "sp_executesql";
    let text = text_param(params.first(), PROC, "the statement")?;
    let declared = text_param(params.get(1), PROC, "@params")?;
    let statement = prepared.recent_statement(declared, text)?;
    let bound = bind(PROC, &statement, params, 2)?;
    build(Arc::clone(&statement.shown), statement.target(), bound)
}

/// The statement `sp_prepare` and `sp_prepexec` prepare, in their parameters 1 (`@params`)
/// and 2 (`@stmt`), added to `prepared`. A handle passed in parameter 0 is a statement the
/// client re-prepares, which is dropped first, as SQL Server does.
fn prepare_statement(
    procedure: &str,
    params: &[RpcParam],
    prepared: &mut Prepared,
) -> Result<(Statement, Param, i32), RpcError> {
    let Some(handle_param) = params.first() else {
        return Err(RpcError::missing(procedure, "@handle"));
    };
    if params.len() < 3 {
        let missing = if params.len() < 2 { "@params" } else { "@stmt" };
        return Err(RpcError::missing(procedure, missing));
    }
    if let Ok(Some(old)) = handle_value(handle_param, procedure) {
        // An unknown handle (0, the usual "none yet") is no error: the client asked for it
        // to be gone.
        let _ = prepared.remove(old);
    }
    let statement = Statement::new(
        text_param(params.get(1), procedure, "@params")?,
        text_param(params.get(2), procedure, "@stmt")?,
    )?;
    statement.validate()?;
    let handle = prepared.insert(statement.clone())?;
    // RETURNVALUE carries the handle in the type the client declared, if it can hold an int.
    let (sql, wire) = match sql_type(&handle_param.ty) {
        Some(sql) => (sql, handle_param.ty),
        None => (SqlType::Int, TypeInfo::IntN(4)),
    };
    let param = Param { ordinal: 0, name: handle_param.name.clone(), sql, wire };
    Ok((statement, param, handle))
}

fn returned_handle(handle_param: &RpcParam, param: Param, handle: i32) -> Option<(Param, i32)> {
    handle_param.is_output().then_some((param, handle))
}

fn prepare(params: &[RpcParam], prepared: &mut Prepared) -> Result<Plan, RpcError> {
    const PROC: &str = "sp_prepare";
    // @options (RETURN_METADATA) may follow; nothing else.
    if params.len() > 4 {
        return Err(RpcError::too_many(PROC));
    }
    let (statement, param, handle) = prepare_statement(PROC, params, prepared)?;
    // The statement's result sets are described (COLMETADATA, no rows), as SQL Server's
    // sp_prepare does, by running it under FMTONLY with its parameters declared.
    let mut text = String::new();
    for d in statement.decls.iter() {
        text.push_str(&format!("DECLARE {} {}; ", d.name, d.written));
    }
    text.push_str("SET FMTONLY ON; ");
    text.push_str(&statement.text);
    Ok(Plan {
        work: Work::Describe(text),
        outputs: Vec::new(),
        handle: params.first().and_then(|p| returned_handle(p, param, handle)),
    })
}

fn prep_exec(params: &[RpcParam], prepared: &mut Prepared) -> Result<Plan, RpcError> {
    const PROC: &str = "sp_prepexec";
    let (statement, param, handle) = prepare_statement(PROC, params, prepared)?;
    let bound = match bind(PROC, &statement, params, 3) {
        Ok(bound) => bound,
        Err(e) => {
            // The call fails as a whole: the client gets no handle, so none is kept.
            let _ = prepared.remove(handle);
            return Err(e);
        }
    };
    let mut plan = match build(Arc::clone(&statement.shown), statement.target(), bound) {
        Ok(plan) => plan,
        Err(e) => {
            let _ = prepared.remove(handle);
            return Err(e);
        }
    };
    plan.handle = params.first().and_then(|p| returned_handle(p, param, handle));
    Ok(plan)
}

fn execute(params: &[RpcParam], prepared: &Prepared) -> Result<Plan, RpcError> {
    const PROC: &str = "sp_execute";
    let Some(handle_param) = params.first() else {
        return Err(RpcError::missing(PROC, "@handle"));
    };
    let handle = handle_value(handle_param, PROC)?.unwrap_or(0);
    let statement = prepared.get(handle)?;
    let bound = bind(PROC, statement, params, 1)?;
    build(Arc::clone(&statement.shown), statement.target(), bound)
}

fn unprepare(params: &[RpcParam], prepared: &mut Prepared) -> Result<Plan, RpcError> {
    const PROC: &str = "sp_unprepare";
    let Some(handle_param) = params.first() else {
        return Err(RpcError::missing(PROC, "@handle"));
    };
    if params.len() > 1 {
        return Err(RpcError::too_many(PROC));
    }
    prepared.remove(handle_value(handle_param, PROC)?.unwrap_or(0))?;
    Ok(Plan { work: Work::Nothing, outputs: Vec::new(), handle: None })
}

fn ordinal(index: usize) -> Result<u16, RpcError> {
    u16::try_from(index).map_err(|_| RpcError::unsupported("too many parameters"))
}

fn exec_procedure(name: &str, params: &[RpcParam]) -> Result<Plan, RpcError> {
    let mut values = Vec::new();
    for (index, p) in params.iter().enumerate() {
        let passed_as = (!p.name.is_empty()).then(|| p.name.clone());
        // fDefaultValue ([MS-TDS] 2.2.6.6): the procedure's declared default, as `DEFAULT`
        // passes it; the value sent is ignored. An OUTPUT parameter needs a variable to return
        // through, so it keeps the value sent.
        if p.status.contains(ParamStatus::DEFAULT) && !p.is_output() {
            values.push(Binding::Default(passed_as));
            continue;
        }
        let sql = match p.ty {
            TypeInfo::Tvp => None,
            _ => Some(sql_type(&p.ty).ok_or_else(|| {
                RpcError::unsupported(format!(
                    "parameter {}: unsupported type {}",
                    p.name,
                    p.ty.name()
                ))
            })?),
        };
        values.push(Binding::Value(Bound {
            ordinal: ordinal(index)?,
            // RETURNVALUE names the parameter as the client did.
            name: p.name.clone(),
            passed_as,
            sql,
            // The procedure's parameter, of its own type, takes the value from here.
            declared: None,
            table_type: None,
            output: p.is_output(),
            param: p,
        }));
    }
    let shown: Arc<str> = Arc::from(name);
    build_bindings(shown, CallTarget::Procedure(name.to_string()), values)
}

/// An argument of a procedure called by name.
enum Binding<'a> {
    Value(Bound<'a>),
    /// Passed as `DEFAULT`, by position or under the name.
    Default(Option<String>),
}

fn build(shown: Arc<str>, target: CallTarget, values: Vec<Bound<'_>>) -> Result<Plan, RpcError> {
    build_bindings(shown, target, values.into_iter().map(Binding::Value).collect())
}

/// The call's arguments from the parameters bound: each value converted from the wire, each
/// table-valued parameter's rows written as the table variable's declaration.
fn build_bindings(
    shown: Arc<str>,
    target: CallTarget,
    values: Vec<Binding<'_>>,
) -> Result<Plan, RpcError> {
    let mut arguments = Vec::with_capacity(values.len());
    let mut outputs = Vec::new();
    for binding in values {
        let bound = match binding {
            Binding::Value(bound) => bound,
            Binding::Default(name) => {
                arguments.push(CallArgument {
                    name,
                    variable: String::new(),
                    value: CallValue::Default,
                    ty: SqlType::Int,
                    declared: None,
                    output: false,
                });
                continue;
            }
        };
        let Bound { ordinal, name, passed_as, sql, declared, table_type, output, param: p } = bound;
        let variable = format!("@__walden_rpc_p{ordinal}");
        if let TdsValue::Table(table) = &p.value {
            if output {
                return Err(RpcError::new(
                    352,
                    format!("The table-valued parameter \"{name}\" must be declared with the READONLY option."),
                ));
            }
            let procedure = matches!(target, CallTarget::Procedure(_));
            let value = table_argument(&variable, table, table_type.as_deref(), procedure)?;
            arguments.push(CallArgument {
                name: passed_as,
                variable,
                value,
                ty: SqlType::Int,
                declared: None,
                output: false,
            });
            continue;
        }
        let Some(sql) = sql else {
            let declared = table_type.unwrap_or_else(|| "a table type".into());
            return Err(RpcError::new(
                206,
                format!("Operand type clash: {} is incompatible with {declared}", p.ty.name()),
            ));
        };
        let value = from_wire_typed(p.value.clone(), &p.ty)
            .map_err(|e| RpcError::unsupported(format!("parameter {name}: {e}")))?;
        if output {
            outputs.push(Param { ordinal, name, sql, wire: returned_type(p.ty) });
        }
        arguments.push(CallArgument {
            name: passed_as,
            variable,
            value: CallValue::Value(value),
            ty: sql,
            declared,
            output,
        });
    }
    Ok(Plan { work: Work::Call { shown, target, arguments }, outputs, handle: None })
}

/// The type RETURNVALUE describes an OUTPUT parameter sent as `sent` with: the type sent,
/// except a SQL_VARIANT's maximum length, which is SQL Server's 8,016 whatever the client
/// declared. mssql-jdbc sends a NULL SQL_VARIANT OUTPUT parameter with a maximum length of 0,
/// which no value fits.
fn returned_type(sent: TypeInfo) -> TypeInfo {
    match sent {
        TypeInfo::Variant { .. } => TypeInfo::Variant { max_len: walden_tds::VARIANT_MAX_LEN },
        other => other,
    }
}

/// Rows a table-valued parameter's INSERT lists at most, as `VALUES` allows (10738).
const ROWS_PER_INSERT: usize = 1000;

/// A table-valued parameter as the call's argument: `DECLARE name type; INSERT name VALUES
/// (...), ...;`, a table variable of the parameter's table type (or of `declared`, the type a
/// statement's `@params` gave it, when the client named none) holding its rows. All on one
/// line, as the rest of the prologue. Sent without a type's name to a procedure called by
/// name (`procedure`), only the INSERTs: the session declares the variable of the type of the
/// procedure's parameter, as SQL Server takes the type from the procedure.
fn table_argument(
    name: &str,
    table: &TableValue,
    declared: Option<&str>,
    procedure: bool,
) -> Result<CallValue, RpcError> {
    let stream_error = |what: &str| {
        RpcError::unsupported(format!(
            "The incoming tabular data stream (TDS) remote procedure call (RPC) protocol stream \
             is incorrect. Table-valued parameter {name}: {what}"
        ))
    };
    if !table.database.is_empty() {
        return Err(stream_error(
            "a database name is not allowed with a table-valued parameter, only schema name and \
             type name are valid.",
        ));
    }
    let bracket = |part: &str| format!("[{}]", part.replace(']', "]]"));
    let ty = match (table.schema.as_str(), table.type_name.as_str(), declared) {
        ("", "", Some(declared)) => Some(declared.to_string()),
        ("", "", None) if procedure => None,
        (_, "", _) => return Err(stream_error("the table type's name is missing.")),
        ("", type_name, _) => Some(bracket(type_name)),
        (schema, type_name, _) => Some(format!("{}.{}", bracket(schema), bracket(type_name))),
    };
    // Each value is written as the type the client sent it as, except that a DECIMAL keeps
    // its scale at the largest precision: python-tds types a column by its first row, and the
    // table type's column, not the TVP's, decides what fits.
    let types = table
        .columns
        .iter()
        .map(|c| match sql_type(&c.ty) {
            Some(SqlType::Decimal { scale, .. }) => Ok(SqlType::Decimal { precision: 38, scale }),
            Some(sql) => Ok(sql),
            None => Err(stream_error(&format!("column type {}", c.ty.name()))),
        })
        .collect::<Result<Vec<SqlType>, RpcError>>()?;
    let mut text = ty.as_ref().map_or_else(String::new, |ty| format!("DECLARE {name} {ty}; "));
    let value = |text: String| match ty {
        Some(_) => CallValue::Table(text),
        None => CallValue::UntypedTable(text),
    };
    // Columns sent as defaults (fDefault) are left out of the VALUES, which a column list does
    // not follow: as in SQL Server, that list skips the table type's identity column, the one
    // drivers send that way (go-mssqldb's `tvp:"@identity"`), which then takes its next value.
    let sent: Vec<(usize, SqlType)> = table
        .columns
        .iter()
        .zip(types)
        .enumerate()
        .filter(|(_, (c, _))| !c.is_default())
        .map(|(i, (_, sql))| (i, sql))
        .collect();
    if sent.is_empty() {
        for _ in &table.rows {
            text.push_str(&format!("INSERT {name} DEFAULT VALUES; "));
        }
        return Ok(value(text));
    }
    for rows in table.rows.chunks(ROWS_PER_INSERT) {
        let mut tuples = Vec::with_capacity(rows.len());
        for row in rows {
            let mut values = Vec::with_capacity(sent.len());
            for &(i, sql) in &sent {
                let value = row.get(i).cloned().flatten().unwrap_or(TdsValue::Null);
                let value =
                    from_wire_typed(value, &table.columns[i].ty).map_err(|e| stream_error(&e))?;
                values.push(literal(&value, sql));
            }
            tuples.push(format!("({})", values.join(", ")));
        }
        text.push_str(&format!("INSERT {name} VALUES {}; ", tuples.join(", ")));
    }
    Ok(value(text))
}

#[cfg(test)]
mod tests;
