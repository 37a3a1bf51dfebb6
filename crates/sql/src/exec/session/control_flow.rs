//! Control flow: statement lists with their `GOTO` labels, `IF`, `WHILE` with `BREAK` and
//! `CONTINUE`, `RETURN`, and `TRY ... CATCH`.
//!
//! A statement tells the list around it how to go on through its [`Flow`]; errors unwind
//! through [`Halt`], which a `TRY` block stops. Running each single statement, with SQL
//! Server's rules for what an error stops, is the dispatcher's (`statement`).

use walden_engine::types::{SqlType, Value};

use crate::ast::{Expr, If, Statement, StatementKind, TryCatch, While};
use crate::exec::eval::Env;
use crate::exec::scalar;
use crate::exec::SqlError;

use super::{Flow, Halt, Run, Step};

impl Run<'_> {
    /// Runs a batch's, procedure's, trigger's or function's statements: [`Run::block`], where
    /// a `GOTO` still unresolved at the end is to a label inside a block it is not in (the
    /// parser has checked that the label exists), which Walden does not jump into.
    pub(crate) fn module_body(&mut self, statements: &[Statement]) -> Step<Flow> {
        self.hoist_declarations(statements)?;
        match self.block(statements)? {
            Flow::Goto(label, line) => Err(SqlError::new(
                50000,
                format!("Walden's GOTO goes to a label in its own block or an enclosing one; '{label}' is inside another block."),
            )
            .at_line(line)
            .into()),
            flow => Ok(flow),
        }
    }

    /// Runs statements in order until one changes the flow. A `GOTO` to a label of this list
    /// goes on after the label; one to a label elsewhere leaves the list.
    pub(crate) fn block(&mut self, statements: &[Statement]) -> Step<Flow> {
        let mut at = 0;
        while let Some(st) = statements.get(at) {
            at += 1;
            match self.statement(st)? {
                Flow::Next => {}
                Flow::Goto(label, line) => {
                    let here = statements.iter().position(|s| {
                        matches!(&s.kind, StatementKind::Label(l) if l.value.eq_ignore_ascii_case(&label))
                    });
                    match here {
                        Some(i) => at = i + 1,
                        None => return Ok(Flow::Goto(label, line)),
                    }
                }
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    /// `IF condition statement [ELSE statement]`.
    pub(super) fn if_statement(&mut self, i: &If) -> Step<Flow> {
        let cond = self.control_condition(&i.condition)?;
        if cond {
            self.statement(&i.then_branch)
        } else if let Some(e) = &i.else_branch {
            self.statement(e)
        } else {
            Ok(Flow::Next)
        }
    }

    /// `WHILE condition statement`, with `BREAK` and `CONTINUE`; the client's cancel is asked
    /// at each iteration.
    pub(super) fn while_loop(&mut self, w: &While) -> Step<Flow> {
        loop {
            if self.cancelled() {
                return Err(Halt::Cancelled);
            }
            if !self.control_condition(&w.condition)? {
                break;
            }
            match self.loop_body(&w.body)? {
                Flow::Break => break,
                flow @ (Flow::Return(_) | Flow::Goto(..)) => return Ok(flow),
                Flow::Next | Flow::Continue => {}
            }
        }
        Ok(Flow::Next)
    }

    /// Runs a `WHILE`'s body. A `BEGIN ... END` block's statements run at once, not through
    /// the dispatcher (`statement`), when no option has it skip or describe the block
    /// (NOEXEC, SHOWPLAN, FMTONLY): around a compound statement it does nothing its
    /// statements do not do for themselves (each ends its own autocommit transaction,
    /// statement locks and table hints, and reports or returns its own errors, with its
    /// line), so a loop's iterations need not pay for it.
    fn loop_body(&mut self, body: &Statement) -> Step<Flow> {
        let opts = &self.s.opts;
        match &body.kind {
            StatementKind::Block(list)
                if !opts.noexec && opts.showplan.is_none() && !opts.fmtonly =>
            {
                self.block(list)
            }
            _ => self.statement(body),
        }
    }

    /// An `IF` or `WHILE` condition, which the client sees end as a statement each time it is
    /// evaluated (SQL Server ends each evaluation with a DONE or DONEINPROC; go-mssqldb's
    /// message queue counts them), but inside a function.
    fn control_condition(&mut self, condition: &Expr) -> Step<bool> {
        let holds = self.condition(condition)?;
        if self.s.function_depth == 0 {
            self.out.statement_end();
        }
        Ok(holds)
    }

    /// Evaluates a condition outside any row (IF, WHILE).
    fn condition(&mut self, e: &Expr) -> Step<bool> {
        let r = self.predicate(e, &Env::empty());
        // A condition that read tables ran in an autocommit transaction of its own.
        self.finish_autocommit(r.is_ok());
        Ok(r? == Some(true))
    }

    /// `RETURN [value]`: in a function, the value it returns; elsewhere, the return status.
    pub(super) fn return_statement(&mut self, v: Option<&Expr>) -> Step<Flow> {
        if let Some(ty) = self.s.frames.last().and_then(|f| f.returns) {
            let value = match v {
                Some(e) => scalar::coerce(self.value(e)?, ty, true)?,
                None => Value::Null,
            };
            if let Some(frame) = self.s.frames.last_mut() {
                frame.returned = Some(value);
            }
            return Ok(Flow::Return(0));
        }
        let status = match v {
            Some(e) => match self.value(e)? {
                Value::Null => 0,
                v => match scalar::convert(v, SqlType::Int, None)? {
                    Value::Int(i) => i,
                    _ => 0,
                },
            },
            None => 0,
        };
        Ok(Flow::Return(status))
    }

    /// `BEGIN TRY ... END TRY BEGIN CATCH ... END CATCH` at `line`: an error of severity 11
    /// or more in the TRY block, which its statement returns instead of reporting, runs the
    /// CATCH block, where `ERROR_NUMBER()` and the others read it.
    pub(super) fn try_catch(&mut self, tc: &TryCatch, line: u32) -> Step<Flow> {
        self.try_depth += 1;
        let result = self.block(&tc.try_block);
        self.try_depth -= 1;
        match result {
            Err(Halt::Error(e)) => {
                let e = if e.line == 0 { e.at_line(line) } else { e };
                self.s.last_error = e.number;
                self.frame().caught.push(e);
                let r = self.block(&tc.catch_block);
                self.frame().caught.pop();
                r
            }
            other => other,
        }
    }

    /// Runs `body` as inside a TRY block: an error stops it and is returned, not reported.
    pub(crate) fn as_in_try<T>(&mut self, body: impl FnOnce(&mut Self) -> Step<T>) -> Step<T> {
        self.try_depth += 1;
        let result = body(self);
        self.try_depth -= 1;
        result
    }
}
