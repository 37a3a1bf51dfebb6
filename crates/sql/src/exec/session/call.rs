//! Remote procedure calls: [`Session::execute_call`], where a client's RPC (a parameterized
//! statement by `sp_executesql` or a prepared handle, or a procedure by name) comes in with
//! its arguments as values, not as T-SQL text to parse.
//!
//! The call runs as `EXEC` runs it: its arguments are variables of a frame of its own (the
//! request's), passed to the procedure (or to the statement, which runs as `sp_executesql`
//! runs it, see `execute::parameterized`), OUTPUT arguments copied back into them and the
//! return status into one more. Only the statement's text is parsed, through the session's
//! parse cache: a statement repeated with other values is the same text, parsed once, and
//! its parsed nodes keep their plans (`exec::plan_cache`).

use std::sync::Arc;

use walden_engine::types::{DeclaredType, SqlType, Value};

use crate::ast::{
    ExecArgument, ExecProcedure, Execute, Expr, ExprKind, Ident, ObjectName, ProcedureParameter,
    ProcedureRef, Span,
};
use crate::exec::eval::{conversion_overflow, parse_object_name};
use crate::exec::{scalar, Output, SqlError};
use crate::parse_batch_with;

use super::{Frame, Run, Session, Step, Variable};

/// What an RPC calls.
#[derive(Debug, Clone)]
pub enum CallTarget {
    /// A parameterized statement (`sp_executesql`, a prepared statement): `params` declares
    /// the parameters (`@P0 int, @P1 nvarchar(10) OUTPUT`) that `text` uses.
    Statement { params: Arc<str>, text: Arc<str> },
    /// A stored procedure (or a system procedure the session answers), by its name as the
    /// client sent it (`dbo.p`, `[s].[p]`).
    Procedure(String),
}

/// An argument's value.
#[derive(Debug, Clone)]
pub enum CallValue {
    /// A value, converted to the argument's type as `CAST` converts it.
    Value(Value),
    /// `DEFAULT`: the parameter's declared default.
    Default,
    /// A table-valued parameter: the T-SQL that declares the argument's variable as a table
    /// variable of its table type and fills it with the rows sent.
    Table(String),
    /// A table-valued parameter sent without its table type's name to a procedure: the T-SQL
    /// that fills the argument's variable, which is declared of the table type of the
    /// procedure's parameter it is passed to, as SQL Server takes the type from the
    /// procedure.
    UntypedTable(String),
}

/// One argument of a call.
#[derive(Debug, Clone)]
pub struct CallArgument {
    /// The parameter it is passed to (`@p`); `None` for the next one in order.
    pub name: Option<String>,
    /// The variable that holds it for the call (with its `@`), unique in the call.
    pub variable: String,
    pub value: CallValue,
    /// The type the value takes (unused for a table-valued parameter).
    pub ty: SqlType,
    /// The type it was declared with, when held as `ty` (SMALLDATETIME as DATETIME...): the
    /// value is fitted to it, as `SET` fits a variable's.
    pub declared: Option<DeclaredType>,
    /// Passed as OUTPUT: the parameter's value when the call returns comes back.
    pub output: bool,
}

/// What a call that ran to its end gives back.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The procedure's return status (0 for a statement).
    pub status: i32,
    /// The values of the OUTPUT arguments after the call, in the arguments' order.
    pub outputs: Vec<Value>,
}

/// The variable holding a procedure's return status, in the call's frame.
const STATUS_VARIABLE: &str = "@__walden_call_status";

impl Session {
    /// Runs one RPC call with `arguments`, reporting what it produces to `out` as a batch's
    /// output is. `shown` is the text `sys.dm_exec_requests` and `sys.dm_exec_sql_text` show
    /// for the request. `None` when an error ended the call before it returned (the error
    /// was reported): its OUTPUT parameters and status are then not set.
    pub fn execute_call(
        &mut self,
        shown: &str,
        target: &CallTarget,
        arguments: Vec<CallArgument>,
        out: &mut dyn Output,
    ) -> Option<CallOutcome> {
        let mut outcome = None;
        self.request(shown, out, |s, out| {
            let mut run = Run::new(s, out);
            let source = Some(Arc::clone(&run.s.request_text.0));
            run.s.frames.push(Frame { source, ..Frame::default() });
            let result = run.call(target, arguments);
            let (result, returned) = match result {
                Ok(returned) => (Ok(()), Some(returned)),
                Err(halt) => (Err(halt), None),
            };
            outcome = returned;
            run.end_request(result);
        });
        outcome
    }
}

impl Run<'_> {
    /// Binds the arguments to variables of the call's frame (the innermost), runs the
    /// target, and reads back the OUTPUT arguments and the status.
    fn call(&mut self, target: &CallTarget, arguments: Vec<CallArgument>) -> Step<CallOutcome> {
        let mut exec_arguments = Vec::with_capacity(arguments.len());
        let mut tables = Vec::new();
        // The frame's variables, by position, that hold the OUTPUT arguments.
        let mut outputs = Vec::new();
        // The procedure's parameters, when an argument takes its table type from them.
        let untyped = arguments.iter().any(|a| matches!(a.value, CallValue::UntypedTable(_)));
        let parameters = match target {
            CallTarget::Procedure(name) if untyped => parse_object_name(name)
                .map(|name| self.procedure_parameters(&name))
                .transpose()?
                .flatten(),
            _ => None,
        };
        for (position, argument) in arguments.into_iter().enumerate() {
            let value = match argument.value {
                CallValue::Default => {
                    exec_arguments.push(exec_argument(argument.name, ExprKind::Default, false));
                    continue;
                }
                CallValue::UntypedTable(fill) => {
                    let ty = table_parameter_type(
                        parameters.as_deref(),
                        argument.name.as_deref(),
                        position,
                    )?;
                    tables.push(format!("DECLARE {} {ty}; {fill}", argument.variable));
                    let variable = ExprKind::Variable(argument.variable.into());
                    exec_arguments.push(exec_argument(argument.name, variable, false));
                    continue;
                }
                CallValue::Table(declaration) => {
                    tables.push(declaration);
                    let variable = ExprKind::Variable(argument.variable.into());
                    exec_arguments.push(exec_argument(argument.name, variable, false));
                    continue;
                }
                CallValue::Value(v) => v,
            };
            let value = scalar::convert(value, argument.ty, None).or_else(conversion_overflow)?;
            let value = Variable::convert(value, argument.ty, argument.declared)?;
            let frame = self.frame();
            if argument.output {
                outputs.push(frame.vars.len());
            }
            frame.vars.push(Variable {
                name: argument.variable.clone(),
                ty: argument.ty,
                declared: argument.declared,
                value,
            });
            let variable = ExprKind::Variable(argument.variable.into());
            exec_arguments.push(exec_argument(argument.name, variable, argument.output));
        }
        if !tables.is_empty() {
            // The tables' INSERTs count rows the client must not see as a result of its call.
            let nocount = std::mem::replace(&mut self.s.opts.nocount, true);
            let filled = self.fill_tables(&tables);
            self.s.opts.nocount = nocount;
            filled?;
        }
        let status = match target {
            CallTarget::Statement { params, text } => {
                let exec = ExecProcedure {
                    return_status: None,
                    procedure: ProcedureRef::Name(ObjectName::simple(Ident::new("sp_executesql"))),
                    arguments: Vec::new(),
                };
                let db = Arc::clone(&self.s.db);
                self.parameterized(&exec, text, params, &exec_arguments, db)?;
                None
            }
            CallTarget::Procedure(name) => {
                let procedure = parse_object_name(name).ok_or_else(|| {
                    SqlError::new(2812, format!("Could not find stored procedure '{name}'."))
                })?;
                let status_index = self.frame().vars.len();
                self.frame().vars.push(Variable {
                    name: STATUS_VARIABLE.to_string(),
                    ty: SqlType::Int,
                    declared: None,
                    value: Value::Null,
                });
                let exec = ExecProcedure {
                    return_status: Some(STATUS_VARIABLE.to_string()),
                    procedure: ProcedureRef::Name(procedure),
                    arguments: exec_arguments,
                };
                self.execute(&Execute::Procedure(exec))?;
                Some(status_index)
            }
        };
        let frame = self.frame();
        let value_at = |i: usize| frame.vars.get(i).map_or(Value::Null, |v| v.value.clone());
        let status = match status.map(value_at) {
            Some(Value::Int(s)) => s,
            _ => 0,
        };
        Ok(CallOutcome { status, outputs: outputs.into_iter().map(value_at).collect() })
    }

    /// Runs the declarations of the call's table-valued parameters in the call's frame.
    fn fill_tables(&mut self, tables: &[String]) -> Step<()> {
        let quoted_identifier = self.s.opts.semantics.quoted_identifier;
        for text in tables {
            // Not through the parse cache: the rows are in the text, which is not repeated.
            let batch = parse_batch_with(text, quoted_identifier).map_err(SqlError::from)?;
            self.module_body(&batch.statements)?;
        }
        Ok(())
    }
}

/// The table type of the procedure parameter an argument is passed to, by `name` or else at
/// `position`, for a table-valued argument sent without its type's name. Error 8009 when the
/// procedure has no such table-valued parameter, which leaves the argument's type unknown.
fn table_parameter_type(
    parameters: Option<&[ProcedureParameter]>,
    name: Option<&str>,
    position: usize,
) -> Result<String, SqlError> {
    let parameter = parameters.and_then(|ps| match name {
        Some(name) => ps.iter().find(|p| p.name.eq_ignore_ascii_case(name)),
        None => ps.get(position),
    });
    match parameter {
        Some(p) if p.readonly => Ok(p.data_type.to_string()),
        _ => Err(SqlError::new(
            8009,
            format!(
                "The incoming tabular data stream (TDS) remote procedure call (RPC) protocol \
                 stream is incorrect. Table-valued parameter {}: the table type's name is \
                 missing.",
                name.map_or_else(|| (position + 1).to_string(), str::to_string)
            ),
        )),
    }
}

fn exec_argument(name: Option<String>, kind: ExprKind, output: bool) -> ExecArgument {
    ExecArgument { name, value: Expr { kind, span: Span::default() }, output }
}
