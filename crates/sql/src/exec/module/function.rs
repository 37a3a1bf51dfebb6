//! User-defined functions: `CREATE [OR ALTER] FUNCTION`, `ALTER FUNCTION`, a scalar one called
//! as `schema.name(arguments)` in an expression, and an inline table-valued one
//! (`RETURNS TABLE AS RETURN query`) named in a FROM clause, whose query runs as a view's
//! (`exec::view`) with the parameters as variables of a frame of its own.
//!
//! A function is its text in the catalog ([`walden_engine::catalog::FunctionDef`]). A call
//! parses it (through the session's cache of parsed texts), binds the arguments to the
//! parameters (`DEFAULT` takes a parameter's default), and runs the body in a frame of its
//! own, in the function's database, until `RETURN value`, whose value is converted to the
//! declared type; a body that ends without one returns NULL. The body runs inside the calling
//! statement: its statements do not commit that statement's transaction, and an error ends
//! the function and fails the caller's statement, as in SQL Server (`function_depth`).
//!
//! CREATE refuses what SQL Server refuses in a function body: a change to a table, PRINT,
//! RAISERROR, EXEC, transaction statements, DDL, TRY...CATCH (error 443), a SELECT that
//! returns rows (444), and a body whose last statement is not RETURN (455). A call must be
//! schema-qualified; nesting stops at 32 levels (217).

use std::sync::Arc;

use walden_engine::catalog::{FunctionDef, Object};
use walden_engine::objects::ModuleKind;
use walden_engine::types::{SqlType, Value};
use walden_engine::Database;

use crate::ast::{
    Batch, CreateFunction, CreateMode, ExprKind, FunctionArgs, FunctionBody, FunctionCall,
    ObjectName, Query, SelectItem, Statement, StatementKind, TableElement, TableTarget,
};
use crate::exec::eval::Col;
use crate::exec::eval::Env;
use crate::exec::execute::query::Rows;
use crate::exec::session::{Frame, Halt, Run, Variable, CANCELLED, MAX_NESTING};
use crate::exec::SqlError;

impl Run<'_> {
    /// `CREATE [OR ALTER] FUNCTION` / `ALTER FUNCTION`: checks the body and stores the text.
    pub(crate) fn create_function(&mut self, f: &CreateFunction) -> Result<(), SqlError> {
        crate::exec::module::view::no_database_prefix(&f.name, f.mode, "FUNCTION")?;
        for p in &f.parameters {
            self.resolve_type(&p.data_type)?;
        }
        let mut names: Vec<&str> = f.parameters.iter().map(|p| p.name.as_str()).collect();
        let kind = match &f.body {
            FunctionBody::Scalar { returns, statements } => {
                self.resolve_type(returns)?;
                check_body(statements)?;
                crate::exec::session::check_declarations(&names, statements)?;
                let last = statements.last().map(|s| &s.kind);
                if !matches!(last, Some(StatementKind::Return(Some(_)))) {
                    return Err(SqlError::new(
                        455,
                        "The last statement included within a function must be a return statement.",
                    ));
                }
                ModuleKind::Function
            }
            FunctionBody::InlineTable(query) => {
                // Checked as a view's query is: it must name its columns, once each. Its
                // parameters are NULL here, which any query accepts.
                self.check_table_function(f, query)?;
                ModuleKind::TableFunction
            }
            FunctionBody::MultiTable { variable, elements, statements } => {
                // The returned table's definition is checked as DECLARE checks it.
                self.table_elements(variable, elements)?;
                check_body(statements)?;
                names.push(variable);
                crate::exec::session::check_declarations(&names, statements)?;
                match statements.last().map(|s| &s.kind) {
                    Some(StatementKind::Return(None)) => {}
                    Some(StatementKind::Return(Some(_))) => return Err(SqlError::with_severity(
                        178,
                        15,
                        "A RETURN statement with a return value cannot be used in this context.",
                    )),
                    _ => return Err(SqlError::new(
                        455,
                        "The last statement included within a function must be a return statement.",
                    )),
                }
                ModuleKind::MultiTableFunction
            }
        };
        let db = Arc::clone(&self.s.db);
        let schema = f.name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let name = &f.name.name.value;
        let existing = db.find_object(schema, name);
        if f.mode == CreateMode::Alter && !matches!(existing.as_deref(), Some(Object::Function(_)))
        {
            return Err(SqlError::invalid_object(name));
        }
        let or_alter = f.mode != CreateMode::Create;
        self.tx()
            .put_module(&db, kind, schema, name, &f.definition, or_alter)
            .map_err(|e| self.s.engine_error(e))
    }

    /// The value of `call` if it names a user-defined function (a schema-qualified name
    /// outside `sys`); `None` for every other call, which the built-ins then take.
    pub(crate) fn user_function(
        &mut self,
        call: &FunctionCall,
        env: &Env<'_>,
    ) -> Result<Option<Value>, SqlError> {
        let name = &call.name;
        let Some(schema) = &name.schema else { return Ok(None) };
        if schema.value.eq_ignore_ascii_case("sys") || call.over.is_some() {
            return Ok(None);
        }
        let db = self.database_of(name.database.as_ref())?;
        let found = db.find_object(&schema.value, &name.name.value);
        let Some(Object::Function(def)) = found.as_deref().filter(|o| o.type_code() == "FN") else {
            return Err(SqlError::new(
                4121,
                format!("Cannot find either column \"{}\" or the user-defined function or aggregate \"{}.{}\", or the name is ambiguous.", schema.value, schema.value, name.name.value),
            ));
        };
        let mut args = Vec::new();
        if let FunctionArgs::List { args: list, .. } = &call.args {
            for a in list {
                args.push(match a.kind {
                    ExprKind::Default => None,
                    _ => Some(self.eval(a, env)?),
                });
            }
        }
        self.invoke_function(def, args, db).map(Some)
    }

    /// The type a call of a user-defined function returns, as its CREATE declares it.
    pub(crate) fn user_function_type(&self, call: &FunctionCall) -> Option<SqlType> {
        let name = &call.name;
        let schema = name.schema.as_ref()?;
        let db = self.database_of(name.database.as_ref()).ok()?;
        let found = db.find_object(&schema.value, &name.name.value);
        let Some(Object::Function(def)) = found.as_deref() else { return None };
        let batch = crate::parse_batch(&def.text).ok()?;
        batch.statements.iter().find_map(|s| match &s.kind {
            StatementKind::CreateFunction(f) => match &f.body {
                FunctionBody::Scalar { returns, .. } => self.resolve_type(returns).ok(),
                FunctionBody::InlineTable(_) | FunctionBody::MultiTable { .. } => None,
            },
            _ => None,
        })
    }

    /// The table function `name` names in a FROM clause, if it names one (with its
    /// database); a name without a schema is looked for in `dbo`.
    pub(crate) fn find_table_function(
        &mut self,
        name: &ObjectName,
    ) -> Result<Option<(Arc<Database>, FunctionDef)>, SqlError> {
        let db = self.database_of(name.database.as_ref())?;
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let found = db.find_object(schema, &name.name.value);
        Ok(match found.as_deref() {
            Some(Object::Function(f)) if f.returns_table => Some((Arc::clone(&db), f.clone())),
            _ => None,
        })
    }

    /// The rows of inline table-valued function `def` called with `args` (`None`: DEFAULT),
    /// its columns qualified by `qual`: its query, run as a view's in its database, with its
    /// parameters as variables.
    pub(crate) fn table_function_rows(
        &mut self,
        def: &FunctionDef,
        args: Vec<Option<Value>>,
        db: Arc<Database>,
        qual: &str,
    ) -> Result<Rows, SqlError> {
        let (batch, frame) = self.bind_function(def, args)?;
        let query = match function_of(&batch).map(|f| &f.body) {
            Some(FunctionBody::InlineTable(query)) => query,
            Some(FunctionBody::MultiTable { variable, elements, statements }) => {
                return self.multi_table_rows(frame, db, variable, elements, statements, qual);
            }
            _ => return Err(not_create_function(def)),
        };
        self.s.frames.push(frame);
        self.s.function_depth += 1;
        let result = self.in_view_scope(db, |r| r.query(query, None));
        self.s.function_depth -= 1;
        self.pop_frame();
        let rows = result?;
        let visible = rows.visible();
        let mut cols: Vec<Col> = visible.iter().map(|&i| rows.cols[i].clone()).collect();
        for c in &mut cols {
            c.qual = Some(qual.to_string());
        }
        let rows = rows.rows.into_iter().map(|r| visible.iter().map(|&i| r[i].clone()).collect());
        Ok(Rows { cols, rows: rows.collect() })
    }

    /// A multi-statement table-valued function's rows: in its database, in `frame` (its
    /// parameters bound), the table variable `variable` is declared, the body fills it, and
    /// its rows, columns qualified by `qual`, are the result. The variable goes with the
    /// frame; a caller's table variable of the same name is set aside meanwhile.
    fn multi_table_rows(
        &mut self,
        frame: Frame,
        db: Arc<Database>,
        variable: &str,
        elements: &[TableElement],
        statements: &[Statement],
        qual: &str,
    ) -> Result<Rows, SqlError> {
        let key = variable.to_ascii_lowercase();
        let callers = self.s.temp_tables.remove(&key);
        let caller_db = std::mem::replace(&mut self.s.db, db);
        self.s.frames.push(frame);
        self.s.function_depth += 1;
        let result = self
            .declare_table_variable(variable, elements)
            .and_then(|()| self.function_body(statements))
            .and_then(|()| {
                let t = self.resolve_table_variable(variable, qual)?;
                self.table_rows(&t, None)
            });
        // The frame goes first: dropping its table variable must not end the calling
        // statement's transaction, which it would outside a function.
        self.pop_frame();
        self.s.function_depth -= 1;
        self.s.db = caller_db;
        if let Some(callers) = callers {
            self.s.temp_tables.insert(key, callers);
        }
        let rows = result?;
        let visible = rows.visible();
        let cols: Vec<Col> = visible.iter().map(|&i| rows.cols[i].clone()).collect();
        let rows = rows.rows.into_iter().map(|r| visible.iter().map(|&i| r[i].clone()).collect());
        Ok(Rows { cols, rows: rows.collect() })
    }

    /// An inline table-valued function's query at CREATE: run once with NULL parameters to
    /// check it, and its columns named once each (4511, 4506), as a view's are.
    fn check_table_function(&mut self, f: &CreateFunction, query: &Query) -> Result<(), SqlError> {
        let mut frame = Frame::default();
        for p in &f.parameters {
            let ty = self.resolve_type(&p.data_type)?;
            let declared = crate::exec::ddl::user_types::declared_as(&p.data_type);
            frame.vars.push(Variable { name: p.name.clone(), ty, declared, value: Value::Null });
        }
        self.s.frames.push(frame);
        self.s.function_depth += 1;
        let db = Arc::clone(&self.s.db);
        self.s.checking_module = true;
        let result = self.in_view_scope(db, |r| r.query(query, None));
        self.s.checking_module = false;
        self.s.function_depth -= 1;
        self.pop_frame();
        let rows = result?;
        let names: Vec<&str> =
            rows.visible().into_iter().map(|i| rows.cols[i].name.as_str()).collect();
        crate::exec::module::view::check_column_names(&names, &f.name.name.value)
    }

    /// Parses function `def` and binds `args` (`None`: DEFAULT) to its parameters in a new
    /// frame: errors 8144, 313 and 217.
    fn bind_function(
        &mut self,
        def: &FunctionDef,
        args: Vec<Option<Value>>,
    ) -> Result<(Arc<Batch>, Frame), SqlError> {
        let qualified = format!("{}.{}", def.schema, def.name);
        if self.s.frames.len() > MAX_NESTING {
            return Err(SqlError::new(
                217,
                "Maximum stored procedure, function, trigger, or view nesting level exceeded (limit 32).",
            ));
        }
        let batch = self.s.parsed(&def.text)?;
        let function = function_of(&batch).ok_or_else(|| not_create_function(def))?;
        let params = &function.parameters;
        let too_few = || {
            SqlError::new(
                313,
                format!("An insufficient number of arguments were supplied for the procedure or function {qualified}."),
            )
        };
        if args.len() > params.len() {
            return Err(SqlError::new(
                8144,
                format!("Procedure or function {qualified} has too many arguments specified."),
            ));
        }
        if args.len() < params.len() {
            return Err(too_few());
        }
        let mut frame = Frame {
            procedure: Some(def.name.clone()),
            module_id: def.id as i32,
            ..Frame::default()
        };
        for (param, arg) in params.iter().zip(args) {
            let ty = self.resolve_type(&param.data_type)?;
            let v = match (arg, &param.default) {
                (Some(v), _) => v,
                (None, Some(d)) => self.value(d)?,
                (None, None) => return Err(too_few()),
            };
            let declared = crate::exec::ddl::user_types::declared_as(&param.data_type);
            let value = Variable::convert(v, ty, declared)?;
            frame.vars.push(Variable { name: param.name.clone(), ty, declared, value });
        }
        Ok((Arc::clone(&batch), frame))
    }

    /// Runs scalar function `def` with `args` (`None`: DEFAULT) in database `db`.
    fn invoke_function(
        &mut self,
        def: &FunctionDef,
        args: Vec<Option<Value>>,
        db: Arc<Database>,
    ) -> Result<Value, SqlError> {
        let (batch, mut frame) = self.bind_function(def, args)?;
        let Some(FunctionBody::Scalar { returns, statements }) =
            function_of(&batch).map(|f| &f.body)
        else {
            return Err(not_create_function(def));
        };
        frame.returns = Some(self.resolve_type(returns)?);
        let caller_db = std::mem::replace(&mut self.s.db, db);
        self.s.frames.push(frame);
        self.s.function_depth += 1;
        let result = self.function_body(statements);
        self.s.function_depth -= 1;
        let returned = self.s.frames.last_mut().and_then(|f| f.returned.take());
        self.pop_frame();
        self.s.db = caller_db;
        result?;
        Ok(returned.unwrap_or(Value::Null))
    }

    /// Runs a function's body as one TRY block would: an error is not reported here but
    /// ends the function and goes to the calling statement. Its statements report no row
    /// counts.
    fn function_body(&mut self, body: &[Statement]) -> Result<(), SqlError> {
        let nocount = std::mem::replace(&mut self.s.opts.nocount, true);
        let result = self.as_in_try(|r| r.module_body(body));
        self.s.opts.nocount = nocount;
        match result {
            Ok(_) => Ok(()),
            Err(Halt::Error(e)) => Err(e),
            Err(Halt::Cancelled) => Err(SqlError::with_severity(CANCELLED, 16, "The request was cancelled.")),
            // Already reported, which for a function body cannot happen: nothing in it
            // aborts the batch outside the error path above.
            Err(Halt::Aborted | Halt::ScopeEnded) => Err(SqlError::new(
                3616,
                "An error was raised during trigger or function execution. The batch has been aborted.",
            )),
        }
    }
}

/// The CREATE FUNCTION a function's stored text holds.
fn function_of(batch: &Batch) -> Option<&CreateFunction> {
    batch.statements.iter().find_map(|s| match &s.kind {
        StatementKind::CreateFunction(f) => Some(&**f),
        _ => None,
    })
}

fn not_create_function(def: &FunctionDef) -> SqlError {
    SqlError::new(
        50000,
        format!("The stored text of '{}.{}' is not CREATE FUNCTION.", def.schema, def.name),
    )
}

/// Error 443 (or 444) for the first statement of `body` a function may not contain.
fn check_body(body: &[Statement]) -> Result<(), SqlError> {
    for st in body {
        check_statement(st)?;
    }
    Ok(())
}

fn check_statement(st: &Statement) -> Result<(), SqlError> {
    let side_effect = |what: &str| {
        Err(SqlError::new(
            443,
            format!("Invalid use of a side-effecting operator '{what}' within a function."),
        ))
    };
    let table = |t: &TableTarget| matches!(t, TableTarget::Table(_));
    match &st.kind {
        StatementKind::Block(list) => check_body(list),
        StatementKind::If(i) => {
            check_statement(&i.then_branch)?;
            i.else_branch.as_ref().map_or(Ok(()), check_statement)
        }
        StatementKind::While(w) => check_statement(&w.body),
        StatementKind::Select(s) => {
            let assigns = match &s.query.body {
                crate::ast::QueryBody::Select(sel) => {
                    sel.into.is_none()
                        && sel.items.iter().all(|i| matches!(i, SelectItem::Assign { .. }))
                }
                _ => false,
            };
            if assigns {
                Ok(())
            } else {
                Err(SqlError::new(
                    444,
                    "Select statements included within a function cannot return data to a client.",
                ))
            }
        }
        StatementKind::Insert(i) if table(&i.target) => side_effect("INSERT"),
        StatementKind::Update(u) if table(&u.target) => side_effect("UPDATE"),
        StatementKind::Delete(d) if table(&d.target) => side_effect("DELETE"),
        StatementKind::Merge(_) => side_effect("MERGE"),
        StatementKind::BulkInsert(_) => side_effect("BULK INSERT"),
        StatementKind::Print(_) => side_effect("PRINT"),
        StatementKind::Raiserror(_) => side_effect("RAISERROR"),
        StatementKind::Throw(_) => side_effect("THROW"),
        StatementKind::Execute(_) => side_effect("EXECUTE"),
        StatementKind::TryCatch(_) => side_effect("BEGIN TRY"),
        StatementKind::Transaction(_) => side_effect("TRANSACTION"),
        StatementKind::Use(_) => side_effect("USE"),
        StatementKind::Set(s) if !matches!(**s, crate::ast::SetStatement::Variable { .. }) => {
            side_effect("SET OPTION ON")
        }
        StatementKind::Checkpoint(_)
        | StatementKind::UpdateStatistics(_)
        | StatementKind::CreateStatistics { .. }
        | StatementKind::AlterIndex { .. }
        | StatementKind::Reconfigure { .. }
        | StatementKind::Dbcc(_)
        | StatementKind::Kill(_)
        | StatementKind::Waitfor(_)
        | StatementKind::Atomic(_)
        | StatementKind::CreateDatabase(_)
        | StatementKind::AlterDatabase(_)
        | StatementKind::CreateTable(_)
        | StatementKind::TruncateTable(_)
        | StatementKind::CreateIndex(_)
        | StatementKind::CreateSequence(_)
        | StatementKind::AlterSequence(_)
        | StatementKind::CreateType(_)
        | StatementKind::CreateProcedure(_)
        | StatementKind::CreateView(_)
        | StatementKind::CreateFunction(_)
        | StatementKind::CreateTrigger(_)
        | StatementKind::EnableTrigger(_)
        | StatementKind::Drop(_)
        | StatementKind::DropIndex(_)
        | StatementKind::AlterTable(_) => side_effect(statement_word(st)),
        _ => Ok(()),
    }
}

/// The statement's first keyword, for error 443.
fn statement_word(st: &Statement) -> &'static str {
    match &st.kind {
        StatementKind::Drop(_) | StatementKind::DropIndex(_) => "DROP",
        StatementKind::TruncateTable(_) => "TRUNCATE TABLE",
        StatementKind::Checkpoint(_) => "CHECKPOINT",
        StatementKind::UpdateStatistics(_) => "UPDATE STATISTICS",
        StatementKind::CreateStatistics { .. } => "CREATE STATISTICS",
        StatementKind::AlterIndex { .. } => "ALTER INDEX",
        StatementKind::Dbcc(_) => "DBCC",
        StatementKind::Kill(_) => "KILL",
        StatementKind::Waitfor(_) => "WAITFOR",
        StatementKind::Reconfigure { .. } => "RECONFIGURE",
        StatementKind::AlterDatabase(_) | StatementKind::AlterTable(_) => "ALTER",
        _ => "CREATE",
    }
}
