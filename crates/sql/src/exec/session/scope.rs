//! Scopes: the frame of a batch and of each procedure, function, trigger or dynamic SQL
//! call, and what lives in one: variables (`DECLARE`, which a module hoists as SQL Server
//! compiles it, with its 134 checks, and assignment), `SCOPE_IDENTITY()`, and the temporary
//! tables and table variables that end with it.
//!
//! A frame is pushed by whoever starts a scope (the batch, `execute`, `exec::function`,
//! `exec::trigger`) and popped here, by [`Run::pop_frame`], which drops what the scope made.

use std::sync::Arc;

use walden_engine::types::Value;

use crate::ast::{
    AssignOp, BinaryOp, Declaration, DeclarationKind, Statement, StatementKind, VarRef,
};
use crate::exec::scalar;
use crate::exec::SqlError;

use super::{Flow, Frame, Halt, Run, Step, Variable};

impl Run<'_> {
    /// The innermost scope's frame, made if there is none yet.
    pub(crate) fn frame(&mut self) -> &mut Frame {
        if self.s.frames.is_empty() {
            self.s.frames.push(Frame::default());
        }
        let last = self.s.frames.len() - 1;
        &mut self.s.frames[last]
    }

    /// Runs a procedure's or dynamic SQL's `body` in `frame`, which it pushes and pops: the
    /// frame ends alone at an error that aborts its scope (`Halt::ScopeEnded` to the caller,
    /// see `Frame::ends_alone`).
    pub(super) fn run_scope<T>(
        &mut self,
        frame: Frame,
        body: impl FnOnce(&mut Self) -> Step<T>,
    ) -> Step<T> {
        self.s.frames.push(Frame { ends_alone: true, ..frame });
        let result = body(self);
        let ended = self.s.frames.last().is_some_and(|f| f.scope_aborted);
        self.pop_frame();
        match result {
            Err(Halt::Aborted) if ended => Err(Halt::ScopeEnded),
            other => other,
        }
    }

    /// Ends the innermost scope: drops the temporary tables and table variables it made and
    /// gives back the table names it took over from its callers.
    pub(crate) fn pop_frame(&mut self) {
        if let Some(frame) = self.s.frames.pop() {
            for name in frame.temp_created {
                self.drop_temp_table(&name);
            }
            // A table-valued parameter names the caller's table: the name goes, not the table;
            // a table variable declared under a caller's name gives the name back.
            for (name, hidden, _) in frame.hidden_tables.into_iter().rev() {
                match hidden {
                    Some(internal) => self.s.temp_tables.insert(name, internal),
                    None => self.s.temp_tables.remove(&name),
                };
            }
        }
    }

    /// Declares a module's scalar variables before it runs, as SQL Server does when it
    /// compiles the batch or procedure: a variable declared in a branch that is not taken is
    /// still declared (NULL) after it, and two DECLAREs of one name (or of a parameter's
    /// name) fail with 134 before anything runs. Each DECLARE, when reached, then only runs
    /// its `= value` (see [`Run::declare`]). Table variables are made when their
    /// DECLARE runs.
    pub(super) fn hoist_declarations(&mut self, statements: &[Statement]) -> Result<(), SqlError> {
        let mut found = Vec::new();
        declarations(statements, &mut found);
        let taken: Vec<&str> = self.frame().vars.iter().map(|v| v.name.as_str()).collect();
        if let Some(e) = redeclaration(&taken, &found) {
            return Err(e);
        }
        for (d, site, line) in found {
            let DeclarationKind::Scalar { data_type, .. } = &d.kind else {
                continue;
            };
            if self.user_type(data_type).is_some_and(|t| t.table.is_some()) {
                continue;
            }
            let ty = self.resolve_type(data_type).map_err(|e| e.at_line(line))?;
            let declared = crate::exec::ddl::user_types::declared_as(data_type);
            let frame = self.frame();
            frame.vars.push(Variable { name: d.name.clone(), ty, declared, value: Value::Null });
            frame.declared.push((d.name.to_ascii_lowercase(), site));
        }
        Ok(())
    }

    /// DECLARE at byte offset `site`: met again (in a loop), only its `= value` runs (see
    /// `hoist_declarations`); met first, it makes its variables or table variables.
    pub(super) fn declare(&mut self, decls: &[Declaration], site: usize) -> Step<Flow> {
        for d in decls {
            let key = d.name.to_ascii_lowercase();
            if self.frame().declared.iter().any(|(n, at)| *n == key && *at == site) {
                if let DeclarationKind::Scalar { value: Some(e), .. } = &d.kind {
                    let v = self.value(e)?;
                    self.assign(&d.name, AssignOp::Assign, v)?;
                }
                continue;
            }
            match &d.kind {
                DeclarationKind::Scalar { data_type, value: None }
                    if self.user_type(data_type).is_some_and(|t| t.table.is_some()) =>
                {
                    self.declare_of_table_type(&d.name, data_type)?;
                }
                DeclarationKind::Scalar { data_type, value } => {
                    let ty = self.resolve_type(data_type)?;
                    let declared = crate::exec::ddl::user_types::declared_as(data_type);
                    let v = match value {
                        Some(e) => {
                            let v = self.value(e)?;
                            Variable::convert(v, ty, declared)?
                        }
                        None => Value::Null,
                    };
                    let frame = self.frame();
                    if frame.vars.slot_of(&d.name).is_some() {
                        return Err(SqlError::with_severity(
                            134,
                            15,
                            format!(
                                "The variable name '{}' has already been declared. Variable names must be unique within a query batch or stored procedure.",
                                d.name
                            ),
                        )
                        .into());
                    }
                    frame.vars.push(Variable { name: d.name.clone(), ty, declared, value: v });
                }
                DeclarationKind::Table(elements) => {
                    self.declare_table_variable(&d.name, elements)?;
                }
            }
            self.frame().declared.push((key, site));
        }
        Ok(Flow::Next)
    }

    /// The variable `name` of the innermost scope (error 137 if it has none).
    pub(crate) fn variable(&self, name: &str) -> Result<&Variable, SqlError> {
        self.s
            .frames
            .last()
            .and_then(|f| f.vars.slot_of(name).and_then(|i| f.vars.get(i)))
            .ok_or_else(|| SqlError::undeclared_variable(name))
    }

    /// The variable `r` names in the innermost scope (error 137 if it has none), found by
    /// the slot `r` remembers when it can be (see `variables.rs`).
    pub(crate) fn variable_at(&self, r: &VarRef) -> Result<&Variable, SqlError> {
        self.s
            .frames
            .last()
            .and_then(|f| f.vars.slot(r).and_then(|i| f.vars.get(i)))
            .ok_or_else(|| SqlError::undeclared_variable(&r.name))
    }

    /// Assigns `value` (converted to the variable's type) with an assignment operator.
    pub(crate) fn assign(
        &mut self,
        name: &str,
        op: AssignOp,
        value: Value,
    ) -> Result<(), SqlError> {
        let slot = self.s.frames.last().and_then(|f| f.vars.slot_of(name));
        self.assign_slot(slot, name, op, value)
    }

    /// [`Run::assign`] to the variable `r` names, found as [`Run::variable_at`] finds it.
    pub(crate) fn assign_to(
        &mut self,
        r: &VarRef,
        op: AssignOp,
        value: Value,
    ) -> Result<(), SqlError> {
        let slot = self.s.frames.last().and_then(|f| f.vars.slot(r));
        self.assign_slot(slot, &r.name, op, value)
    }

    /// Assigns to the innermost scope's variable in `slot`, called `name` (error 137 when
    /// there is none).
    fn assign_slot(
        &mut self,
        slot: Option<usize>,
        name: &str,
        op: AssignOp,
        value: Value,
    ) -> Result<(), SqlError> {
        // `value` was computed before `slot` was found, so the slot still holds the variable.
        let Some(v) = slot.and_then(|i| self.s.frames.last_mut()?.vars.get_mut(i)) else {
            return Err(SqlError::undeclared_variable(name));
        };
        // A failed operation or conversion leaves the variable as it was.
        let value = match op {
            AssignOp::Assign => value,
            // A loop's `SET @i += 1` takes the integer cases without the general path's
            // dispatch, as an expression's `@i + 1` does (the same values and errors).
            other => {
                let op = assign_binary(other);
                match scalar::quick_binary(op, &v.value, &value) {
                    Some(result) => result,
                    None => scalar::binary(op, v.value.clone(), value)?,
                }
            }
        };
        v.value = Variable::convert(value, v.ty, v.declared)?;
        self.assignments += 1;
        Ok(())
    }

    /// Sets `SCOPE_IDENTITY()` and `@@IDENTITY` after an insert generated `value`.
    pub(crate) fn note_identity(&mut self, value: i64) {
        self.s.identity = Some(value);
        self.frame().scope_identity = Some(value);
    }

    /// `SCOPE_IDENTITY()`: the last identity value an insert generated in this scope.
    pub(crate) fn scope_identity(&self) -> Option<i64> {
        self.s.frames.last().and_then(|f| f.scope_identity)
    }

    /// Records a temporary table created in the running procedure, to drop when it returns.
    pub(crate) fn note_temp_created(&mut self, user_name: &str) {
        if self.s.frames.len() > 1 && self.s.frames.last().is_some_and(|f| f.procedure.is_some()) {
            self.frame().temp_created.push(user_name.to_ascii_lowercase());
        }
    }

    /// Records a table variable, dropped when its batch or procedure call ends.
    pub(crate) fn note_table_variable(&mut self, key: &str) {
        self.frame().temp_created.push(key.to_string());
    }

    /// Drops a temporary table of the session (at the end of the procedure that made it).
    fn drop_temp_table(&mut self, user_name: &str) {
        let Some(internal) = self.s.temp_tables.remove(user_name) else { return };
        let tempdb = Arc::clone(self.s.instance.tempdb());
        if let Some(o) = tempdb.find_object("dbo", &internal) {
            let id = o.id();
            let r = self.tx().drop_object(&tempdb, id);
            if r.is_ok() {
                self.finish_autocommit(true);
            }
        }
    }
}

/// The binary operator of a compound assignment (`+=`); plain `=` has none and maps to
/// `+`, which callers never ask for.
pub(crate) fn assign_binary(op: AssignOp) -> BinaryOp {
    match op {
        AssignOp::Add | AssignOp::Assign => BinaryOp::Add,
        AssignOp::Subtract => BinaryOp::Subtract,
        AssignOp::Multiply => BinaryOp::Multiply,
        AssignOp::Divide => BinaryOp::Divide,
        AssignOp::Modulo => BinaryOp::Modulo,
        AssignOp::BitAnd => BinaryOp::BitAnd,
        AssignOp::BitOr => BinaryOp::BitOr,
        AssignOp::BitXor => BinaryOp::BitXor,
    }
}

/// Error 134 if the body of a procedure or function declares one of the names in `taken`
/// (its parameters, a table-valued function's table variable), or one name twice: checked
/// when it is created, as SQL Server does.
pub(crate) fn check_declarations(taken: &[&str], body: &[Statement]) -> Result<(), SqlError> {
    let mut found = Vec::new();
    declarations(body, &mut found);
    redeclaration(taken, &found).map_or(Ok(()), Err)
}

/// Error 134 for the first DECLARE in `found` of a name in `taken` (the module's parameters)
/// or of a name an earlier one declared: SQL Server's compile-time check.
fn redeclaration(taken: &[&str], found: &[(&Declaration, usize, u32)]) -> Option<SqlError> {
    let (d, _, line) = found.iter().enumerate().find_map(|(i, entry)| {
        let name = &entry.0.name;
        let clash = taken.iter().any(|t| t.eq_ignore_ascii_case(name))
            || found[..i].iter().any(|(e, _, _)| e.name.eq_ignore_ascii_case(name));
        clash.then_some(entry)
    })?;
    Some(
        SqlError::with_severity(
            134,
            15,
            format!(
                "The variable name '{}' has already been declared. Variable names must be unique within a query batch or stored procedure.",
                d.name
            ),
        )
        .at_line(*line),
    )
}

/// The DECLAREs of a module's statements, nested blocks included, in textual order, each
/// with its statement's byte offset and line. The bodies of the procedures, functions and
/// triggers a batch creates are modules of their own and are not searched.
fn declarations<'a>(statements: &'a [Statement], out: &mut Vec<(&'a Declaration, usize, u32)>) {
    for st in statements {
        match &st.kind {
            StatementKind::Declare(decls) => {
                out.extend(decls.iter().map(|d| (d, st.span.start, st.span.line)));
            }
            StatementKind::Block(body) => declarations(body, out),
            StatementKind::If(i) => {
                declarations(std::slice::from_ref(&i.then_branch), out);
                if let Some(e) = &i.else_branch {
                    declarations(std::slice::from_ref(e), out);
                }
            }
            StatementKind::While(w) => declarations(std::slice::from_ref(&w.body), out),
            StatementKind::TryCatch(t) => {
                declarations(&t.try_block, out);
                declarations(&t.catch_block, out);
            }
            StatementKind::Atomic(a) => declarations(&a.body, out),
            _ => {}
        }
    }
}
