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
    decls: Vec<Decl>,
    text: Arc<str>,
    /// `(@params)text`, as SQL Server shows a parameterized statement's text.
    shown: Arc<str>,
}

impl Statement {
    fn new(params: String, text: String) -> Result<Self, RpcError> {
        let decls = parse_declarations(&params)?;
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
        for d in &self.decls {
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
#[derive(Debug, Default)]
pub struct Prepared {
    statements: HashMap<i32, Statement>,
    last_handle: i32,
}

impl Prepared {
    /// Drops every prepared statement (RESETCONNECTION).
    pub fn clear(&mut self) {
        self.statements.clear();
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
        ProcId::ExecuteSql => execute_sql(params),
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

fn execute_sql(params: &[RpcParam]) -> Result<Plan, RpcError> {
    const PROC: &str = "sp_executesql";
    let text = text_param(params.first(), PROC, "the statement")?;
    let statement = Statement::new(text_param(params.get(1), PROC, "@params")?, text)?;
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
    for d in &statement.decls {
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
mod tests {
    use super::*;
    use walden_engine::types::Value;
    use walden_tds::{RpcOptions, TvpColumn};

    fn call(proc: ProcId, params: Vec<RpcParam>) -> RpcCall {
        RpcCall { proc: RpcProc::Id(proc), options: RpcOptions::NONE, params }
    }

    fn text(s: &str) -> RpcParam {
        RpcParam::input("", TdsValue::NVarChar(s.into()))
    }

    fn handle_out(value: TdsValue) -> RpcParam {
        let mut p = RpcParam::input("", value);
        p.ty = TypeInfo::IntN(4);
        p.status = ParamStatus::BY_REF;
        p
    }

    fn number(r: Result<Plan, RpcError>) -> Option<i32> {
        r.err().map(|e| e.number)
    }

    #[test]
    fn declarations_split_at_top_level_commas() {
        let d = declarations(
            "@P1 int, @P2 decimal(10, 2) OUTPUT,@P3 nvarchar(max), @P4 dbo.IdList READONLY",
        );
        assert_eq!(
            d,
            Ok(vec![
                ("@P1".to_string(), "int".to_string(), false, false),
                ("@P2".to_string(), "decimal(10, 2)".to_string(), true, false),
                ("@P3".to_string(), "nvarchar(max)".to_string(), false, false),
                ("@P4".to_string(), "dbo.IdList".to_string(), false, true),
            ])
        );
        assert_eq!(declarations("  "), Ok(Vec::new()));
        assert_eq!(declarations("@a int,").map_err(|e| e.number), Err(102));
    }

    #[test]
    fn declared_types_resolve_like_declare() {
        let decls = parse_declarations("@a sysname, @b decimal(10, 2) OUT, @c varchar");
        let decls = decls.map(|d| d.into_iter().map(|d| (d.sql, d.output)).collect::<Vec<_>>());
        assert_eq!(
            decls,
            Ok(vec![
                (Some(SqlType::NVarChar(walden_engine::types::Len::N(128))), false),
                (Some(SqlType::Decimal { precision: 10, scale: 2 }), true),
                (Some(SqlType::VarChar(walden_engine::types::Len::N(1))), false),
            ])
        );
        let unknown = parse_declarations("@a nosuchtype").map_err(|e| (e.number, e.message));
        assert_eq!(
            unknown,
            Err((
                2715,
                "Column, parameter, or variable #1: Cannot find data type nosuchtype.".into()
            ))
        );
    }

    /// The call a plan runs: what the session's views show, and its arguments.
    fn call_of(plan: Result<Plan, RpcError>) -> Result<(String, Vec<CallArgument>), i32> {
        match plan.map_err(|e| e.number)?.work {
            Work::Call { shown, arguments, .. } => Ok((shown.to_string(), arguments)),
            other => panic!("not a call: {other:?}"),
        }
    }

    /// The text declaring and filling each table-valued argument of a plan's call.
    fn tables_of(plan: Result<Plan, RpcError>) -> Result<Vec<String>, i32> {
        let (_, arguments) = call_of(plan)?;
        Ok(arguments
            .into_iter()
            .filter_map(|a| match a.value {
                CallValue::Table(text) => Some(text),
                _ => None,
            })
            .collect())
    }

    /// (name passed as, value, OUTPUT) of each argument.
    fn values_of(arguments: &[CallArgument]) -> Vec<(Option<&str>, Option<&Value>, bool)> {
        arguments
            .iter()
            .map(|a| {
                let value = match &a.value {
                    CallValue::Value(v) => Some(v),
                    _ => None,
                };
                (a.name.as_deref(), value, a.output)
            })
            .collect()
    }

    #[test]
    fn sp_executesql_binds_values_to_its_declarations() {
        let mut out = RpcParam::input("@o", TdsValue::Null);
        out.ty = TypeInfo::IntN(4);
        out.status = ParamStatus::BY_REF;
        let call = call(
            ProcId::ExecuteSql,
            vec![
                text("SET @o = @a + 1"),
                text("@a int, @o int OUTPUT"),
                RpcParam::input("@a", TdsValue::Int(41)),
                out,
            ],
        );
        let planned = plan(&call, &mut Prepared::default());
        let outputs = planned.as_ref().map(|p| {
            p.outputs.iter().map(|o| (o.ordinal, o.name.clone(), o.sql)).collect::<Vec<_>>()
        });
        assert_eq!(outputs.ok(), Some(vec![(3, "@o".to_string(), SqlType::Int)]));
        let target = planned.as_ref().ok().map(|p| match &p.work {
            Work::Call { target: CallTarget::Statement { params, text }, .. } => {
                (params.to_string(), text.to_string())
            }
            other => panic!("{other:?}"),
        });
        assert_eq!(
            target,
            Some(("@a int, @o int OUTPUT".to_string(), "SET @o = @a + 1".to_string()))
        );
        let (shown, arguments) = call_of(planned).unwrap_or_default();
        assert_eq!(shown, "(@a int, @o int OUTPUT)SET @o = @a + 1");
        // In the declarations' order, by position; the values as sent.
        assert_eq!(
            values_of(&arguments),
            vec![(None, Some(&Value::Int(41)), false), (None, Some(&Value::Null), true)]
        );
        assert_eq!(arguments.iter().map(|a| a.ty).collect::<Vec<_>>(), [SqlType::Int; 2]);
    }

    /// A `dbo.IdList (id INT, name NVARCHAR(10))` parameter with the given rows.
    fn id_list(name: &str, rows: Vec<Vec<Option<TdsValue>>>) -> RpcParam {
        let column = |ty| TvpColumn { user_type: 0, flags: 1, ty };
        let table = TableValue {
            database: String::new(),
            schema: "dbo".into(),
            type_name: "IdList".into(),
            columns: vec![column(TypeInfo::IntN(4)), column(TypeInfo::nvarchar(Some(10)))],
            rows,
        };
        let mut p = RpcParam::input(name, TdsValue::Table(Box::new(table)));
        p.ty = TypeInfo::Tvp;
        p
    }

    #[test]
    fn a_table_valued_parameter_becomes_a_filled_table_variable() {
        let row = |id, name: Option<&str>| {
            let name = name.map_or(TdsValue::Null, |n| TdsValue::NVarChar(n.into()));
            vec![Some(TdsValue::Int(id)), Some(name)]
        };
        let rows = vec![row(1, Some("a")), row(2, None)];
        let call = RpcCall {
            proc: RpcProc::Name("dbo.take".into()),
            options: RpcOptions::NONE,
            params: vec![id_list("@ids", rows)],
        };
        let planned = plan(&call, &mut Prepared::default());
        assert_eq!(
            tables_of(planned),
            Ok(vec!["DECLARE @__walden_rpc_p0 [dbo].[IdList]; INSERT @__walden_rpc_p0 VALUES \
                 (CAST(1 AS int), CAST(N'a' AS nvarchar(10))), (CAST(2 AS int), CAST(NULL AS \
                 nvarchar(10))); "
                .to_string()])
        );
        let (_, arguments) = call_of(plan(&call, &mut Prepared::default())).unwrap_or_default();
        assert_eq!(arguments.first().and_then(|a| a.name.as_deref()), Some("@ids"));

        // 2,500 rows take three INSERTs; an empty table none.
        let many = (0..2500).map(|i| row(i, Some("x"))).collect();
        let call =
            call_sql("SELECT COUNT(*) FROM @t", "@t dbo.IdList READONLY", id_list("@t", many));
        let tables = tables_of(plan(&call, &mut Prepared::default())).unwrap_or_default();
        assert_eq!(tables.concat().matches("INSERT @__walden_rpc_p2 VALUES").count(), 3);
        let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", id_list("@t", Vec::new()));
        assert_eq!(
            tables_of(plan(&call, &mut Prepared::default())),
            Ok(vec!["DECLARE @__walden_rpc_p2 [dbo].[IdList]; ".to_string()])
        );
    }

    fn call_sql(statement: &str, params: &str, value: RpcParam) -> RpcCall {
        call(ProcId::ExecuteSql, vec![text(statement), text(params), value])
    }

    #[test]
    fn a_column_sent_as_default_is_left_out_of_the_values() {
        let mut p = id_list("@t", vec![vec![None, Some(TdsValue::NVarChar("x".into()))]]);
        if let TdsValue::Table(t) = &mut p.value {
            t.columns[0].flags |= walden_tds::tvp::COLUMN_DEFAULT;
        }
        let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", p.clone());
        let text = tables_of(plan(&call, &mut Prepared::default())).map(|t| t.concat());
        assert!(
            text.as_ref().is_ok_and(
                |t| t.contains("INSERT @__walden_rpc_p2 VALUES (CAST(N'x' AS nvarchar(10)))")
            ),
            "{text:?}"
        );
        // Every column a default: a row is DEFAULT VALUES.
        if let TdsValue::Table(t) = &mut p.value {
            t.columns[1].flags |= walden_tds::tvp::COLUMN_DEFAULT;
            t.rows[0][1] = None;
        }
        let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", p);
        let text = tables_of(plan(&call, &mut Prepared::default())).map(|t| t.concat());
        assert!(
            text.as_ref().is_ok_and(|t| t.contains("INSERT @__walden_rpc_p2 DEFAULT VALUES;")),
            "{text:?}"
        );
    }

    #[test]
    fn table_valued_parameter_errors() {
        let mut output = id_list("@t", Vec::new());
        output.status = ParamStatus::BY_REF;
        let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", output);
        assert_eq!(number(plan(&call, &mut Prepared::default())), Some(352));
        let scalar = RpcParam::input("@t", TdsValue::Int(1));
        let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", scalar);
        assert_eq!(number(plan(&call, &mut Prepared::default())), Some(206));
        let mut unnamed = id_list("@t", Vec::new());
        if let TdsValue::Table(t) = &mut unnamed.value {
            t.schema.clear();
            t.type_name.clear();
        }
        // Unnamed, it takes the type its declaration gives; a database name is refused.
        let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", unnamed.clone());
        assert_eq!(
            tables_of(plan(&call, &mut Prepared::default())),
            Ok(vec!["DECLARE @__walden_rpc_p2 dbo.IdList; ".to_string()])
        );
        if let TdsValue::Table(t) = &mut unnamed.value {
            t.database = "elsewhere".into();
        }
        let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", unnamed);
        assert_eq!(number(plan(&call, &mut Prepared::default())), Some(8009));
    }

    #[test]
    fn parameters_bind_by_position_then_by_name() {
        let statement = Statement::new("@a int, @b int".into(), "SELECT @a, @b".into());
        let Ok(statement) = statement else { panic!("{statement:?}") };
        let names = |params: &[RpcParam]| {
            bind("sp_execute", &statement, params, 0)
                .map(|b| b.into_iter().map(|b| (b.ordinal, b.name)).collect::<Vec<_>>())
                .map_err(|e| e.number)
        };
        let both = [RpcParam::input("", TdsValue::Int(1)), RpcParam::input("@B", TdsValue::Int(2))];
        assert_eq!(names(&both), Ok(vec![(0, "@a".to_string()), (1, "@b".to_string())]));
        let swapped =
            [RpcParam::input("@b", TdsValue::Int(2)), RpcParam::input("@a", TdsValue::Int(1))];
        assert_eq!(names(&swapped), Ok(vec![(1, "@a".to_string()), (0, "@b".to_string())]));
        assert_eq!(names(&both[..1]), Err(8178));
        let after_named = [RpcParam::input("@a", TdsValue::Int(1)), text("x")];
        assert_eq!(names(&after_named), Err(119));
        let twice =
            [RpcParam::input("", TdsValue::Int(1)), RpcParam::input("@a", TdsValue::Int(1))];
        assert_eq!(names(&twice), Err(8143));
        let three = [text("1"), text("2"), text("3")];
        assert_eq!(names(&three), Err(8144));
        assert_eq!(names(&[RpcParam::input("@z", TdsValue::Int(1))]), Err(8145));
    }

    #[test]
    fn prepare_execute_unprepare() {
        let mut prepared = Prepared::default();
        let prepare = call(
            ProcId::Prepare,
            vec![handle_out(TdsValue::Null), text("@x int"), text("SELECT @x + 1"), text("1")],
        );
        let first = plan(&prepare, &mut prepared);
        let first = first.map(|p| {
            let described = match p.work {
                Work::Describe(text) => text,
                other => panic!("{other:?}"),
            };
            (described, p.handle.map(|(param, h)| (param.ordinal, h)))
        });
        let described = "DECLARE @x int; SET FMTONLY ON; SELECT @x + 1".to_string();
        assert_eq!(first, Ok((described, Some((0, 1)))));
        let second = plan(&prepare, &mut prepared).map(|p| p.handle.map(|(_, h)| h));
        assert_eq!(second, Ok(Some(2)));

        let execute = call(ProcId::Execute, vec![text("unused"), RpcParam::input("", 5.into())]);
        assert_eq!(number(plan(&execute, &mut prepared)), Some(8009));
        let execute = call(
            ProcId::Execute,
            vec![RpcParam::input("", TdsValue::Int(1)), RpcParam::input("", TdsValue::Int(5))],
        );
        let (shown, arguments) = call_of(plan(&execute, &mut prepared)).unwrap_or_default();
        assert_eq!(shown, "(@x int)SELECT @x + 1");
        assert_eq!(values_of(&arguments), vec![(None, Some(&Value::Int(5)), false)]);

        let unprepare = call(ProcId::Unprepare, vec![RpcParam::input("", TdsValue::Int(1))]);
        assert!(plan(&unprepare, &mut prepared).is_ok());
        assert_eq!(number(plan(&unprepare, &mut prepared)), Some(8179));
        assert_eq!(number(plan(&execute, &mut prepared)), Some(8179));

        // Re-preparing with handle 2 drops it; handles are not reused.
        let reprepare =
            call(ProcId::Prepare, vec![handle_out(TdsValue::Int(2)), text(""), text("SELECT 1")]);
        let third = plan(&reprepare, &mut prepared).map(|p| p.handle.map(|(_, h)| h));
        assert_eq!(third, Ok(Some(3)));
        assert_eq!(prepared.statements.keys().copied().collect::<Vec<_>>(), vec![3]);
        prepared.clear();
        assert!(prepared.statements.is_empty());
        let fourth = plan(&reprepare, &mut prepared).map(|p| p.handle.map(|(_, h)| h));
        assert_eq!(fourth, Ok(Some(4)));
    }

    #[test]
    fn prepare_reports_syntax_errors_and_keeps_nothing() {
        let mut prepared = Prepared::default();
        let bad = call(
            ProcId::Prepare,
            vec![handle_out(TdsValue::Null), text("@x int"), text("SELECT @x FROM WHERE")],
        );
        let error = plan(&bad, &mut prepared).err();
        let error = error.map(|e| (e.number, e.class, e.line, e.message));
        assert_eq!(
            error,
            Some((156, 15, 1, "Incorrect syntax near the keyword 'WHERE'.".to_string()))
        );
        let bad_line = call(
            ProcId::PrepExec,
            vec![handle_out(TdsValue::Null), text(""), text("SELECT 1\nSELECT 'x")],
        );
        let error = plan(&bad_line, &mut prepared).err().map(|e| (e.number, e.line));
        assert_eq!(error, Some((105, 2)));
        assert!(prepared.statements.is_empty());
        // sp_prepexec whose values do not fit keeps no handle either.
        let missing = call(
            ProcId::PrepExec,
            vec![handle_out(TdsValue::Null), text("@x int"), text("SELECT @x")],
        );
        assert_eq!(number(plan(&missing, &mut prepared)), Some(8178));
        assert!(prepared.statements.is_empty());
        let short = call(ProcId::Prepare, vec![handle_out(TdsValue::Null), text("")]);
        assert_eq!(number(plan(&short, &mut prepared)), Some(201));
    }

    #[test]
    fn a_parameter_sent_as_default_passes_default() {
        let mut named = RpcParam::input("@b", TdsValue::Null);
        named.status = ParamStatus::DEFAULT;
        let mut positional = RpcParam::input("", TdsValue::Int(9));
        positional.status = ParamStatus::DEFAULT;
        let call = RpcCall {
            proc: RpcProc::Name("dbo.p".into()),
            options: RpcOptions::NONE,
            params: vec![RpcParam::input("", TdsValue::Int(1)), positional, named],
        };
        let (shown, arguments) = call_of(plan(&call, &mut Prepared::default())).unwrap_or_default();
        assert_eq!(shown, "dbo.p");
        assert_eq!(
            values_of(&arguments),
            vec![
                (None, Some(&Value::Int(1)), false),
                (None, None, false),
                (Some("@b"), None, false)
            ]
        );
        assert!(matches!(arguments[1].value, CallValue::Default));
        assert!(is_reset_connection(&RpcProc::Name("sys.sp_reset_connection".into())));
        assert!(!is_reset_connection(&RpcProc::Name("sp_reset".into())));
    }

    #[test]
    fn procedures_by_name() {
        assert_eq!(system_procedure("sp_prepexec"), Some(ProcId::PrepExec));
        assert_eq!(system_procedure("[sys].[SP_UNPREPARE]"), Some(ProcId::Unprepare));
        assert_eq!(system_procedure("master..sp_execute"), Some(ProcId::Execute));
        assert_eq!(system_procedure("sp_prepared_things"), None);
        let rpc = call(ProcId::PrepExecRpc, Vec::new());
        let error = plan(&rpc, &mut Prepared::default()).err().map(|e| (e.number, e.message));
        assert_eq!(error, Some((8009, "sp_prepexecrpc is not supported by Walden yet".into())));
    }
}
