//! `EXECUTE`: stored procedures (arguments bound to parameters, OUTPUT parameters and the
//! return status), dynamic SQL (`EXEC (string)` and `sp_executesql`, which runs as the body
//! of a procedure its `@params` declares), the system procedures the session answers itself,
//! and `INSERT ... EXEC`, which keeps a call's result sets instead of sending them.
//!
//! A call runs in a frame of its own (`Frame`), with the database and SET options it had
//! restored when it returns.

use std::collections::HashMap;
use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::types::{SqlType, Value};
use walden_engine::Database;

use crate::ast::{
    AssignOp, Batch, CreateProcedure, ExecArgument, ExecProcedure, Execute, ExprKind, Ident,
    ObjectName, ProcedureParameter, ProcedureRef, StatementKind,
};
use crate::exec::eval::parse_object_name;
use crate::exec::execute::statistics::RunClock;
use crate::exec::procedure::dispatch::{self, Call, Runs};
use crate::exec::scalar;
use crate::exec::sysviews::query_stats::{text_hash, StatsSource};
use crate::exec::{Collected, ColumnInfo, Counted, Message, Output, RowSet, SqlError};
use crate::parse_batch_with;

use super::{Flow, Frame, Run, Step, Variable, MAX_NESTING};

/// The output of `INSERT ... EXEC`'s procedure: result sets are kept, everything else goes on
/// to the client's output.
struct Capture<'o> {
    forward: &'o mut dyn Output,
    /// The result sets (only those: the rest is forwarded).
    kept: Collected,
}

impl Output for Capture<'_> {
    fn result_set(&mut self, columns: &[ColumnInfo]) {
        self.kept.result_set(columns);
    }

    fn row(&mut self, values: &[Value]) {
        self.kept.row(values);
    }

    fn result_end(&mut self, _rows: u64) {}

    fn message(&mut self, message: &Message) {
        self.forward.message(message);
    }

    fn done(&mut self, rows: Option<u64>) {
        self.forward.done(rows);
    }

    fn done_counted(&mut self, kind: Counted, rows: Option<u64>) {
        // A SELECT's count goes with its rows into the table, as in SQL Server.
        if kind != Counted::Select {
            self.forward.done_counted(kind, rows);
        }
    }

    fn flush(&mut self) {
        self.forward.flush();
    }
}

impl Run<'_> {
    pub(super) fn execute(&mut self, e: &Execute) -> Step<()> {
        match e {
            Execute::Sql(expr) => {
                let text = scalar::to_text(&self.value(expr)?);
                let batch = self.s.parsed(&text)?;
                // Dynamic SQL runs in a scope of its own: it sees no variables of the caller,
                // and a USE in it lasts until it ends (`sp_MSforeachdb 'USE [?]; ...'`).
                let saved_db = Arc::clone(&self.s.db);
                let text: Arc<str> = Arc::from(text);
                let stats = StatsSource::text(Arc::clone(&text), text_hash(&text));
                let frame = Frame { source: Some(text), stats, ..Frame::default() };
                let r = self.run_scope(frame, |r| r.module_body(&batch.statements));
                if self.s.db.id() != saved_db.id() {
                    self.s.db = saved_db;
                    self.s.activity.database_changed(self.s.db.id());
                }
                r.map(|_| ())
            }
            Execute::Procedure(p) => {
                self.out.procedure_start();
                let result = self.call_procedure(p);
                self.out.procedure_end(result.is_ok());
                result
            }
        }
    }

    /// `INSERT ... EXEC`'s source: runs the procedure or dynamic SQL with its result sets'
    /// rows kept instead of sent (messages still go to the client), and returns them.
    pub(crate) fn execute_captured(&mut self, e: &Execute) -> Step<Vec<RowSet>> {
        if self.s.in_insert_exec {
            return Err(SqlError::new(8164, "An INSERT EXEC statement cannot be nested.").into());
        }
        let mut capture = Capture { forward: &mut *self.out, kept: Collected::default() };
        let mut inner = Run {
            s: &mut *self.s,
            out: &mut capture,
            try_depth: self.try_depth,
            ctes: Vec::new(),
            row_sequences: None,
            line: self.line,
            subqueries: HashMap::new(),
            assignments: 0,
            seek_spare: None,
            in_default: false,
        };
        inner.s.in_insert_exec = true;
        let result = inner.execute(e);
        inner.s.in_insert_exec = false;
        result?;
        Ok(capture.kept.results)
    }

    fn call_procedure(&mut self, p: &ExecProcedure) -> Step<()> {
        let name = match &p.procedure {
            ProcedureRef::Name(n) => n.clone(),
            ProcedureRef::Variable(v) => {
                let text = scalar::to_text(&self.variable(v)?.value);
                parse_object_name(&text).ok_or_else(|| SqlError::invalid_object(&text))?
            }
        };
        let lower = name.name.value.to_ascii_lowercase();
        if let Some(runs) = dispatch::system_procedure(&lower) {
            let call = Call { name: &lower, database: name.database.as_ref(), procedure: p };
            return self.run_system_procedure(runs, &call);
        }
        let (db, object) = self.find_procedure(&name)?;
        let Some(Object::Procedure(def)) = object.as_deref() else {
            return Err(SqlError::new(
                2812,
                format!("Could not find stored procedure '{}'.", name.name.value),
            )
            .into());
        };
        // Parsed and run under the options it was created with.
        let batch = if def.options.quoted_identifier == self.s.opts.semantics.quoted_identifier {
            self.s.parsed(&def.text)?
        } else {
            let parsed = parse_batch_with(&def.text, def.options.quoted_identifier);
            Arc::new(parsed.map_err(SqlError::from)?)
        };
        let procedure = defined_procedure(&batch).ok_or_else(|| {
            SqlError::new(50000, "a stored procedure's text is not CREATE PROCEDURE")
        })?;
        // Counted under the database that holds it (tempdb for a temporary procedure).
        let home = db.id();
        // A temporary procedure lives in tempdb but, as in SQL Server, runs in the caller's
        // database: its unqualified names are the caller's tables.
        let db = if name.name.value.starts_with('#') { Arc::clone(&self.s.db) } else { db };
        let caller_ansi_nulls =
            std::mem::replace(&mut self.s.opts.semantics.ansi_nulls, def.options.ansi_nulls);
        let clock = RunClock::start();
        let module = Some((def.name.clone(), def.id));
        let stats = Some(StatsSource::module(home, def.id));
        let result = self.invoke(p, &p.arguments, procedure, module, stats, db);
        self.s.opts.semantics.ansi_nulls = caller_ansi_nulls;
        if result.is_ok() {
            self.s.pending_stats.procedure(home, def.id, &clock.sample(0));
        }
        result
    }

    /// Runs a system procedure as the table says (`procedure::dispatch`), and sets the
    /// return status it leaves.
    fn run_system_procedure(&mut self, runs: Runs, call: &Call<'_>) -> Step<()> {
        let status = match runs {
            Runs::ExecuteSql => {
                // `db.sys.sp_executesql` runs its statement in database `db`, as SQL Server's
                // does: maintenance scripts reach each database's catalog views this way.
                let target = match call.database {
                    Some(d) => Some(self.database_of(Some(d))?),
                    None => None,
                };
                return self.execute_sql_with_parameters(call.procedure, target);
            }
            Runs::Status(run) => run(self, call)?,
            Runs::Session(run) => {
                run(self, call)?;
                0
            }
            Runs::Committed(run) => {
                run(self, call)?;
                self.finish_autocommit(true);
                0
            }
            Runs::Query(build) => {
                let query = build(self, call)?;
                self.run_system_query(&query)?;
                self.finish_autocommit(true);
                0
            }
        };
        self.set_return_status(call.procedure, status)?;
        Ok(())
    }

    /// `sys.sp_flush_log` (SQL Server's): forces the log of the database the name is
    /// qualified with (else the current one) to disk.
    pub(crate) fn sp_flush_log(&mut self, database: Option<&Ident>) -> Result<(), SqlError> {
        let db = self.database_of(database)?;
        db.flush_log().map_err(|e| self.s.engine_error(e))?;
        Ok(())
    }

    /// The object procedure `name` names (a temporary procedure, else one of its database),
    /// if there is one, and that database.
    fn find_procedure(
        &self,
        name: &ObjectName,
    ) -> Result<(Arc<Database>, Option<Arc<Object>>), SqlError> {
        if let Some(found) = self.temp_procedure(&name.name.value) {
            return Ok(found);
        }
        let db = self.database_of(name.database.as_ref())?;
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let object = db.find_object(schema, &name.name.value);
        Ok((db, object))
    }

    /// The parameters procedure `name` was created with; `None` when there is no such
    /// procedure.
    pub(super) fn procedure_parameters(
        &self,
        name: &ObjectName,
    ) -> Result<Option<Vec<ProcedureParameter>>, SqlError> {
        let (_, object) = self.find_procedure(name)?;
        let Some(Object::Procedure(def)) = object.as_deref() else { return Ok(None) };
        let batch =
            parse_batch_with(&def.text, def.options.quoted_identifier).map_err(SqlError::from)?;
        Ok(defined_procedure(&batch).map(|p| p.parameters.clone()))
    }

    /// Runs a procedure body with `arguments` bound to its parameters, then copies OUTPUT
    /// parameters back and sets the return status. `module`: the procedure's name, which errors
    /// report (none for `sp_executesql`'s dynamic SQL); `stats`: the text its statements are
    /// counted under in `sys.dm_exec_query_stats`.
    fn invoke(
        &mut self,
        p: &ExecProcedure,
        arguments: &[ExecArgument],
        procedure: &CreateProcedure,
        module: Option<(String, u32)>,
        stats: Option<StatsSource>,
        db: Arc<Database>,
    ) -> Step<()> {
        let proc_name = procedure.name.name.value.as_str();
        if self.s.frames.len() > MAX_NESTING {
            return Err(SqlError::new(
                217,
                "Maximum stored procedure, function, trigger, or view nesting level exceeded (limit 32).",
            )
            .into());
        }
        // Bind arguments to parameters: positional first, then by name.
        let params = &procedure.parameters;
        let mut values: Vec<Option<Value>> = vec![None; params.len()];
        let mut table_arguments: Vec<Option<String>> = vec![None; params.len()];
        let table_params: Vec<bool> =
            params.iter().map(|p| self.is_table_type(&db, &p.data_type)).collect();
        let mut outputs: Vec<(usize, String)> = Vec::new();
        let mut named = false;
        for (i, arg) in arguments.iter().enumerate() {
            let index = match &arg.name {
                Some(n) => {
                    named = true;
                    params.iter().position(|q| q.name.eq_ignore_ascii_case(n)).ok_or_else(|| {
                        SqlError::new(
                            8145,
                            format!("{n} is not a parameter for procedure {proc_name}."),
                        )
                    })?
                }
                None if named => {
                    return Err(SqlError::new(
                        119,
                        "Must pass parameter number 2 and subsequent parameters as '@name = value'. After the form '@name = value' has been used, all subsequent parameters must be passed in the form '@name = value'.",
                    )
                    .into())
                }
                None => {
                    if i >= params.len() {
                        return Err(SqlError::new(
                            8144,
                            format!("Procedure or function {proc_name} has too many arguments specified."),
                        )
                        .into());
                    }
                    i
                }
            };
            if table_params[index] {
                table_arguments[index] = Some(self.table_argument(arg, &params[index])?);
                continue;
            }
            let v = self.argument_value(arg)?;
            if arg.output && params[index].output {
                if let ExprKind::Variable(var) = &arg.value.kind {
                    outputs.push((index, var.name.clone()));
                }
            }
            values[index] = v;
        }
        // The text is copied only where a DDL trigger may want a statement of it (a procedure
        // runs far more often than it does DDL).
        let mut frame = Frame {
            module_id: module.as_ref().map_or(0, |(_, id)| *id as i32),
            procedure: module.map(|(name, _)| name),
            source: db.has_database_triggers().then(|| Arc::from(procedure.definition.as_str())),
            stats,
            ..Frame::default()
        };
        let mut omitted_tables = Vec::new();
        for (((param, v), table), is_table) in
            params.iter().zip(values).zip(table_arguments).zip(table_params)
        {
            if is_table {
                // The parameter names the caller's table variable for the call; left out,
                // it is an empty table of its type, as in SQL Server.
                let key = param.name.to_ascii_lowercase();
                match table {
                    Some(internal) => {
                        let hidden = self.s.temp_tables.insert(key.clone(), internal);
                        frame.hidden_tables.push((key, hidden, true));
                    }
                    None => omitted_tables.push(param.clone()),
                }
                // A placeholder keeps parameters and variables at the same positions.
                frame.vars.push(Variable {
                    name: param.name.clone(),
                    ty: SqlType::Int,
                    declared: None,
                    value: Value::Null,
                });
                continue;
            }
            let ty = self.resolve_type(&param.data_type)?;
            let v = match v {
                Some(v) => v,
                None => match &param.default {
                    Some(d) => self.value(d)?,
                    None => {
                        return Err(SqlError::new(
                            201,
                            format!(
                                "Procedure or function '{proc_name}' expects parameter '{}', which was not supplied.",
                                param.name
                            ),
                        )
                        .into())
                    }
                },
            };
            let declared = crate::exec::ddl::user_types::declared_as(&param.data_type);
            let v = Variable::convert(v, ty, declared)?;
            if param.not_null && v.is_null() {
                return Err(SqlError::new(
                    50000,
                    format!(
                        "Parameter '{}' of '{proc_name}' is declared NOT NULL and cannot be \
                         passed a NULL value.",
                        param.name
                    ),
                )
                .into());
            }
            frame.vars.push(Variable { name: param.name.clone(), ty, declared, value: v });
        }
        let saved_db = Arc::clone(&self.s.db);
        // SET options the body changes (NOCOUNT, XACT_ABORT...) last until it returns, as in
        // SQL Server.
        let saved_opts = self.s.opts.clone();
        self.s.db = Arc::clone(&db);
        let outcome = self.run_scope(frame, |r| {
            for param in &omitted_tables {
                r.declare_of_table_type(&param.name, &param.data_type)?;
                let key = param.name.to_ascii_lowercase();
                r.frame().hidden_tables.push((key, None, true));
            }
            let module_id = r.frame().module_id;
            let caller_module = (module_id != 0)
                .then(|| r.s.activity.enter_module(Some((db.id(), module_id as u32))));
            let result = r.module_body(&procedure.body);
            if let Some(caller) = caller_module {
                r.s.activity.enter_module(caller);
            }
            let flow = result?;
            let out_values: Vec<(String, Value)> = match r.s.frames.last() {
                Some(f) => outputs
                    .iter()
                    .filter_map(|(i, var)| f.vars.get(*i).map(|v| (var.clone(), v.value.clone())))
                    .collect(),
                None => Vec::new(),
            };
            Ok((flow, out_values))
        });
        self.s.opts = saved_opts;
        self.s.db = saved_db;
        let (flow, out_values) = outcome?;
        let status = match flow {
            Flow::Return(s) => s,
            _ => 0,
        };
        for (var, v) in out_values {
            self.assign(&var, AssignOp::Assign, v)?;
        }
        self.set_return_status(p, status)?;
        Ok(())
    }

    /// `EXEC sp_executesql @stmt [, @params [, arguments...]]`: the statement runs as the body
    /// of a procedure whose parameters `@params` declares, so arguments bind (by position or
    /// name, with OUTPUT) exactly as they do for a stored procedure.
    ///
    /// The statement may be named `@stmt` or `@statement` (SQL Server's own name for it, which
    /// its messages use). A statement that must begin its batch (`CREATE PROCEDURE`, `VIEW`,
    /// `FUNCTION`, `TRIGGER`) runs as a batch of its own, as `EXEC (string)` runs it: that is
    /// how scripts create such objects conditionally, and it cannot use parameters anyway.
    fn execute_sql_with_parameters(
        &mut self,
        p: &ExecProcedure,
        target: Option<Arc<Database>>,
    ) -> Step<()> {
        let db = target.unwrap_or_else(|| Arc::clone(&self.s.db));
        let first = p.arguments.first();
        let stmt_arg = leading_argument(first, "@stmt").or(leading_argument(first, "@statement"));
        let Some(stmt_arg) = stmt_arg else {
            return Err(SqlError::new(
                201,
                "Procedure or function 'sp_executesql' expects parameter '@statement', which was \
                 not supplied.",
            )
            .into());
        };
        let stmt = scalar::to_text(&self.value(&stmt_arg.value)?);
        let (params, rest) = match leading_argument(p.arguments.get(1), "@params") {
            Some(a) => (scalar::to_text(&self.value(&a.value)?), &p.arguments[2..]),
            None => (String::new(), &p.arguments[1..]),
        };
        self.parameterized(p, &stmt, &params, rest, db)
    }

    /// Runs `stmt` as `sp_executesql` does, with `params` declaring its parameters and
    /// `arguments` bound to them: the in-language `EXEC sp_executesql` and an RPC's
    /// parameterized statement (`sp_executesql`, a prepared statement) both come here, so
    /// the procedure text it builds is the same at every call with the same statement, and
    /// its parse (and the plans made for the parsed nodes) are reused.
    pub(super) fn parameterized(
        &mut self,
        p: &ExecProcedure,
        stmt: &str,
        params: &str,
        arguments: &[ExecArgument],
        db: Arc<Database>,
    ) -> Step<()> {
        // A statement that does not parse alone is left to the procedure form, whose error
        // is the one to report.
        let parsed_alone = self.s.parsed(stmt).ok();
        // A statement that begins with a procedure's bare name calls it, as the first
        // statement of any batch does (mssql-jdbc prepares `#proc` so); inside the procedure
        // form below it is not first, so it gets an EXEC there.
        let calls = parsed_alone.as_ref().is_some_and(|batch| {
            batch.statements.first().is_some_and(|s| {
                matches!(&s.kind, StatementKind::Execute(e) if matches!(**e, Execute::Procedure(_)))
            })
        });
        let alone = parsed_alone.filter(|batch| {
            batch.statements.first().is_some_and(|s| {
                matches!(
                    s.kind,
                    StatementKind::CreateProcedure(_)
                        | StatementKind::CreateView(_)
                        | StatementKind::CreateFunction(_)
                        | StatementKind::CreateTrigger(_)
                )
            })
        });
        if let Some(alone) = alone {
            let caller_db = std::mem::replace(&mut self.s.db, db);
            let frame = Frame { source: Some(Arc::from(stmt)), ..Frame::default() };
            let r = self.run_scope(frame, |r| r.module_body(&alone.statements));
            self.s.db = caller_db;
            r?;
            return self.set_return_status(p, 0).map_err(Into::into);
        }
        // The statement follows `AS` on the same line, so that its line numbers are the
        // client's.
        let head = format!("CREATE PROCEDURE sp_executesql {params} AS ");
        let stats = self.parameterized_source(params, stmt, head.len());
        let text = head + stmt;
        let batch = match self.s.parsed(&text) {
            Err(e) if calls => self
                .s
                .parsed(&format!("CREATE PROCEDURE sp_executesql {params} AS EXEC {stmt}"))
                .map_err(|_| e)?,
            parsed => parsed?,
        };
        let Some(procedure) = defined_procedure(&batch) else {
            return Err(SqlError::new(102, "Incorrect syntax near 'sp_executesql'.").into());
        };
        self.invoke(p, arguments, procedure, None, stats, db)
    }

    /// The text a parameterized statement's statements are counted under: `(params)stmt`, as
    /// SQL Server shows it, which is the request's own text when an RPC sent the statement
    /// (so that `sys.dm_exec_requests.sql_handle` names the same text). `head` is how many
    /// bytes the procedure text it runs as puts before `stmt`.
    fn parameterized_source(&self, params: &str, stmt: &str, head: usize) -> Option<StatsSource> {
        let (request, hash) = &self.s.request_text;
        let is_request = request.len() == params.len() + 2 + stmt.len()
            && request
                .strip_prefix('(')
                .and_then(|r| r.strip_prefix(params))
                .and_then(|r| r.strip_prefix(')'))
                == Some(stmt);
        let mut source = if is_request {
            StatsSource::text(Arc::clone(request), *hash)
        } else {
            let text: Arc<str> = Arc::from(format!("({params}){stmt}"));
            let hash = text_hash(&text);
            StatsSource::text(text, hash)
        }?;
        source.shift = (params.len() + 2) as isize - head as isize;
        Some(source)
    }

    fn set_return_status(&mut self, p: &ExecProcedure, status: i32) -> Result<(), SqlError> {
        self.out.procedure_return(status);
        if let Some(var) = &p.return_status {
            self.assign(var, AssignOp::Assign, Value::Int(status))?;
        }
        Ok(())
    }

    pub(super) fn argument_value(&mut self, arg: &ExecArgument) -> Result<Option<Value>, SqlError> {
        match &arg.value.kind {
            ExprKind::Default => Ok(None),
            // A lone name is a string, as in `EXEC sp_help t`.
            ExprKind::Column(parts) if parts.len() == 1 => {
                Ok(Some(Value::NStr(parts[0].value.clone())))
            }
            _ => Ok(Some(self.value(&arg.value)?)),
        }
    }

    /// The database a name's prefix names, else the current one.
    pub(crate) fn database_of(
        &self,
        name: Option<&crate::ast::Ident>,
    ) -> Result<Arc<Database>, SqlError> {
        match name {
            Some(d) => self.s.instance.database(&d.value).map_err(|e| self.s.engine_error(e)),
            None => Ok(Arc::clone(&self.s.db)),
        }
    }
}

/// `arg` if it is positional or named `name`: `sp_executesql`'s leading arguments.
fn leading_argument<'a>(arg: Option<&'a ExecArgument>, name: &str) -> Option<&'a ExecArgument> {
    arg.filter(|a| a.name.as_deref().is_none_or(|n| n.eq_ignore_ascii_case(name)))
}

/// The procedure a `CREATE PROCEDURE` batch (a stored procedure's text, the one
/// `sp_executesql` builds) defines.
fn defined_procedure(batch: &Batch) -> Option<&CreateProcedure> {
    batch.statements.iter().find_map(|s| match &s.kind {
        StatementKind::CreateProcedure(p) => Some(&**p),
        _ => None,
    })
}
