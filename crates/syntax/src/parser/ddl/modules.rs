//! Modules, the objects with a body of statements: views, functions, triggers and
//! procedures, with their parameters and defaults, `ENABLE`/`DISABLE TRIGGER`, and natively
//! compiled procedures' `BEGIN ATOMIC` blocks. A procedure's body runs to the end of the batch,
//! and a body that must not manage transactions is checked for the first statement that does.

use super::super::{PResult, Parser};
use crate::ast::{
    AtomicBlock, AtomicOption, CreateFunction, CreateMode, CreateProcedure, CreateTrigger,
    CreateView, EnableTrigger, Expr, ExprKind, FunctionBody, IsolationLevel, Literal, ObjectName,
    ProcedureParameter, Statement, StatementKind, TransactionStatement, TriggerEvent,
};
use crate::error::ParseError;
use crate::lexer::TokenKind;

impl<'a> Parser<'a> {
    /// `VIEW name [(columns)] [WITH options] AS query [WITH CHECK OPTION]`, which must end the
    /// batch, as in SQL Server.
    pub(super) fn parse_view(&mut self, mode: CreateMode) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_object_name()?;
        let columns = if self.eat(&TokenKind::LParen) {
            let columns = self.parse_comma_separated(Self::parse_identifier)?;
            self.expect(&TokenKind::RParen)?;
            columns
        } else {
            Vec::new()
        };
        let mut options = Vec::new();
        if self.eat_keyword("WITH") {
            options = self.parse_comma_separated(Self::parse_identifier)?;
        }
        self.expect_keyword("AS")?;
        let query = self.parse_query()?;
        let check_option = self.at_keyword("WITH") && self.nth_is_keyword(1, "CHECK");
        if check_option {
            self.advance();
            self.advance();
            self.expect_keyword("OPTION")?;
        }
        self.skip_semicolons();
        if !self.at_eof() {
            return Err(self.error());
        }
        let definition = self.source.to_owned();
        let view = CreateView { mode, name, columns, options, query, check_option, definition };
        Ok(StatementKind::CreateView(Box::new(view)))
    }

    // -----------------------------------------------------------------------------------------
    // Functions
    // -----------------------------------------------------------------------------------------

    /// `FUNCTION name ([parameters]) RETURNS type [WITH options] [AS] BEGIN ... END`, a scalar
    /// function, `... RETURNS TABLE [WITH options] [AS] RETURN query`, an inline
    /// table-valued one, or `... RETURNS @t TABLE (...) [WITH options] [AS] BEGIN ... END`, a
    /// multi-statement table-valued one; each must end the batch.
    pub(super) fn parse_function(&mut self, mode: CreateMode) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_object_name()?;
        self.expect(&TokenKind::LParen)?;
        let parameters = if self.eat(&TokenKind::RParen) {
            Vec::new()
        } else {
            let parameters = self.parse_comma_separated(Self::parse_procedure_parameter)?;
            self.expect(&TokenKind::RParen)?;
            parameters
        };
        self.expect_keyword("RETURNS")?;
        let variable = if self.at(&TokenKind::Variable) {
            let variable = self.advance_text().to_owned();
            self.expect_keyword("TABLE")?;
            Some((variable, self.parse_table_elements()?))
        } else {
            None
        };
        let table = variable.is_some() || self.eat_keyword("TABLE");
        let returns = if table { None } else { Some(self.parse_data_type()?) };
        let mut options = Vec::new();
        if self.eat_keyword("WITH") {
            options = self.parse_comma_separated(Self::parse_identifier)?;
        }
        self.eat_keyword("AS");
        let body = match (returns, variable) {
            (None, None) => {
                self.expect_keyword("RETURN")?;
                FunctionBody::InlineTable(self.parse_query()?)
            }
            (returns, variable) => {
                if !self.at_keyword("BEGIN") {
                    return Err(self.error());
                }
                let StatementKind::Block(statements) = self.parse_statement(false)?.kind else {
                    return Err(self.error());
                };
                match (returns, variable) {
                    (Some(returns), _) => FunctionBody::Scalar { returns, statements },
                    (None, Some((variable, elements))) => {
                        FunctionBody::MultiTable { variable, elements, statements }
                    }
                    (None, None) => return Err(self.error()),
                }
            }
        };
        self.skip_semicolons();
        if !self.at_eof() {
            return Err(self.error());
        }
        let definition = self.source.to_owned();
        let function = CreateFunction { mode, name, parameters, options, body, definition };
        Ok(StatementKind::CreateFunction(Box::new(function)))
    }

    // -----------------------------------------------------------------------------------------
    // Triggers
    // -----------------------------------------------------------------------------------------

    /// `TRIGGER name ON table [WITH options] {FOR | AFTER | INSTEAD OF} event, ... [WITH
    /// APPEND] [NOT FOR REPLICATION] AS body`, or `TRIGGER name ON DATABASE [WITH options]
    /// {FOR | AFTER} event_type | event_group, ... AS body`, the body being the rest of the
    /// batch.
    pub(super) fn parse_trigger(&mut self, mode: CreateMode) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_object_name()?;
        self.expect_keyword("ON")?;
        // Server-level DDL triggers (`ON ALL SERVER`) are refused as an edition refuses a
        // feature it lacks, rather than as a syntax error.
        if self.at_keyword("ALL") && self.nth_is_keyword(1, "SERVER") {
            return Err(ParseError {
                number: 40514,
                severity: 16,
                state: 1,
                line: self.peek().span.line,
                message: "'CREATE TRIGGER ... ON ALL SERVER' (server-level DDL triggers) is not supported in this version of SQL Server.".into(),
            });
        }
        let table =
            if self.eat_keyword("DATABASE") { None } else { Some(self.parse_object_name()?) };
        if self.eat_keyword("WITH") {
            // ENCRYPTION, EXECUTE AS ...: accepted; a trigger runs as its caller here.
            loop {
                if self.eat_one_of(&["EXECUTE", "EXEC"]).is_some() {
                    self.expect_keyword("AS")?;
                }
                self.advance();
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        // A DDL trigger is never INSTEAD OF: the error is at INSTEAD.
        if table.is_none() && self.at_keyword("INSTEAD") {
            return Err(self.error());
        }
        let instead_of = match self.eat_one_of(&["FOR", "AFTER", "INSTEAD"]) {
            Some("INSTEAD") => {
                self.expect_keyword("OF")?;
                true
            }
            Some("FOR" | "AFTER") => false,
            _ => return Err(self.error()),
        };
        let mut events = Vec::new();
        let mut ddl_events = Vec::new();
        loop {
            if table.is_none() {
                ddl_events.push(self.parse_identifier()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
                continue;
            }
            let event = match self.eat_one_of(&["INSERT", "UPDATE", "DELETE"]) {
                Some("INSERT") => TriggerEvent::Insert,
                Some("UPDATE") => TriggerEvent::Update,
                Some(_) => TriggerEvent::Delete,
                None => return Err(self.error()),
            };
            if events.contains(&event) {
                return Err(self.error());
            }
            events.push(event);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        if self.at_keyword("WITH") && self.nth_is_keyword(1, "APPEND") {
            self.advance();
            self.advance();
        }
        if self.at_keyword("NOT") && self.nth_is_keyword(1, "FOR") {
            self.advance();
            self.advance();
            self.expect_keyword("REPLICATION")?;
        }
        self.expect_keyword("AS")?;
        let body = self.parse_module_body()?;
        let definition = self.source.to_owned();
        let trigger =
            CreateTrigger { mode, name, table, instead_of, events, ddl_events, body, definition };
        Ok(StatementKind::CreateTrigger(Box::new(trigger)))
    }

    /// A procedure's or trigger's body: the statements to the end of the batch, at least one.
    fn parse_module_body(&mut self) -> PResult<Vec<Statement>> {
        let mut body = Vec::new();
        loop {
            self.skip_semicolons();
            if self.at_eof() {
                break;
            }
            body.push(self.parse_statement(false)?);
        }
        if body.is_empty() {
            return Err(self.error());
        }
        Ok(body)
    }

    /// The rest of `ENABLE | DISABLE TRIGGER {name, ... | ALL} ON table` (the verb read), or
    /// of `ALTER TABLE table ENABLE | DISABLE TRIGGER {name, ... | ALL}` (`table` given).
    pub(in crate::parser) fn parse_enable_trigger(
        &mut self,
        enable: bool,
        table: Option<ObjectName>,
    ) -> PResult<StatementKind> {
        self.expect_keyword("TRIGGER")?;
        let names = if self.eat_keyword("ALL") {
            Vec::new()
        } else {
            self.parse_comma_separated(Self::parse_object_name)?
        };
        let table = match table {
            Some(table) => Some(table),
            None => {
                self.expect_keyword("ON")?;
                if self.eat_keyword("DATABASE") {
                    None
                } else if self.at_keyword("ALL") {
                    return Err(self.error());
                } else {
                    Some(self.parse_object_name()?)
                }
            }
        };
        Ok(StatementKind::EnableTrigger(Box::new(EnableTrigger { enable, names, table })))
    }

    // -----------------------------------------------------------------------------------------
    // Procedures
    // -----------------------------------------------------------------------------------------

    /// `PROC[EDURE] name [parameters] [WITH options] AS body`, the body being the rest of the
    /// batch; for `NATIVE_COMPILATION`, one `BEGIN ATOMIC` block (error 10783 otherwise).
    pub(super) fn parse_procedure(&mut self, mode: CreateMode) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_object_name()?;
        let parameters = self.parse_procedure_parameters()?;
        let mut options = Vec::new();
        let mut execute_as = None;
        if self.eat_keyword("WITH") {
            loop {
                if self.at_keyword("EXECUTE") || self.at_keyword("EXEC") {
                    self.advance();
                    self.expect_keyword("AS")?;
                    let who = match self.peek_kind() {
                        TokenKind::String { value, .. } => {
                            format!("'{}'", value.replace('\'', "''"))
                        }
                        TokenKind::Word => self.peek().text.to_ascii_uppercase(),
                        _ => return Err(self.error()),
                    };
                    self.advance();
                    execute_as = Some(who);
                } else {
                    options.push(self.parse_identifier()?);
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect_keyword("AS")?;
        let native = options.iter().any(|o| o.value.eq_ignore_ascii_case("NATIVE_COMPILATION"));
        let body = if native {
            self.skip_semicolons();
            let line = self.peek().span.line;
            if !(self.at_keyword("BEGIN") && self.nth_is_keyword(1, "ATOMIC")) {
                return Err(ParseError::native_body_not_atomic(line));
            }
            let block = self.parse_atomic_block()?;
            self.skip_semicolons();
            if !self.at_eof() {
                return Err(ParseError::native_body_not_atomic(self.peek().span.line));
            }
            vec![block]
        } else {
            // SQL Server takes a procedure with no statement at all (`CREATE PROCEDURE p AS`
            // then GO, or as the whole of `sp_executesql`'s text): scripts create such a stub
            // and then ALTER it, so that the procedure keeps its id and permissions.
            self.skip_semicolons();
            if self.at_eof() {
                Vec::new()
            } else {
                self.parse_module_body()?
            }
        };
        let definition = self.source.to_owned();
        let procedure =
            CreateProcedure { mode, name, parameters, options, execute_as, body, definition };
        Ok(StatementKind::CreateProcedure(Box::new(procedure)))
    }

    /// `BEGIN ATOMIC WITH (option, ...) statements END`; `TRANSACTION ISOLATION LEVEL` and
    /// `LANGUAGE` are required (error 10784), and the statements may not begin, commit, roll
    /// back or save a transaction (error 10794): the block is the transaction, or a savepoint.
    fn parse_atomic_block(&mut self) -> PResult<Statement> {
        let start = self.peek().span;
        self.advance();
        self.advance();
        let with_line = self.peek().span.line;
        self.expect_keyword("WITH")?;
        self.expect(&TokenKind::LParen)?;
        let options = self.parse_comma_separated(Self::parse_atomic_option)?;
        self.expect(&TokenKind::RParen)?;
        let has = |f: fn(&AtomicOption) -> bool| options.iter().any(f);
        if !has(|o| matches!(o, AtomicOption::IsolationLevel(_))) {
            return Err(ParseError::atomic_option_missing(
                "TRANSACTION ISOLATION LEVEL",
                with_line,
            ));
        }
        if !has(|o| matches!(o, AtomicOption::Language(_))) {
            return Err(ParseError::atomic_option_missing("LANGUAGE", with_line));
        }
        let body = self.parse_statements_until_end()?;
        if body.is_empty() {
            return Err(self.error());
        }
        if let Some((statement, line)) = first_transaction_statement(&body) {
            return Err(ParseError::not_in_native_module(statement, line));
        }
        self.expect_keyword("END")?;
        let kind = StatementKind::Atomic(Box::new(AtomicBlock { options, body }));
        Ok(Statement { kind, span: self.span_from(start) })
    }

    fn parse_atomic_option(&mut self) -> PResult<AtomicOption> {
        if self.eat_keyword("TRANSACTION") {
            self.expect_keyword("ISOLATION")?;
            self.expect_keyword("LEVEL")?;
            self.expect(&TokenKind::Eq)?;
            let level = if self.eat_keyword("REPEATABLEREAD") {
                IsolationLevel::RepeatableRead
            } else {
                self.parse_isolation_level()?
            };
            return match level {
                IsolationLevel::ReadUncommitted | IsolationLevel::ReadCommitted => {
                    Err(self.error())
                }
                level => Ok(AtomicOption::IsolationLevel(level)),
            };
        }
        if self.eat_keyword("DELAYED_DURABILITY") {
            self.expect(&TokenKind::Eq)?;
            return Ok(AtomicOption::DelayedDurability(self.parse_on_off()?));
        }
        let option = match self.eat_one_of(&["LANGUAGE", "DATEFIRST", "DATEFORMAT"]) {
            Some(option) => option,
            None => return Err(self.error()),
        };
        self.expect(&TokenKind::Eq)?;
        let value = self.parse_set_value()?;
        Ok(match option {
            "LANGUAGE" => AtomicOption::Language(value),
            "DATEFIRST" => AtomicOption::DateFirst(value),
            _ => AtomicOption::DateFormat(value),
        })
    }

    fn parse_procedure_parameters(&mut self) -> PResult<Vec<ProcedureParameter>> {
        let parenthesized = self.eat(&TokenKind::LParen);
        if parenthesized && self.eat(&TokenKind::RParen) {
            return Ok(Vec::new());
        }
        if !parenthesized && !self.at(&TokenKind::Variable) {
            return Ok(Vec::new());
        }
        let parameters = self.parse_comma_separated(Self::parse_procedure_parameter)?;
        if parenthesized {
            self.expect(&TokenKind::RParen)?;
        }
        Ok(parameters)
    }

    /// `@name [AS] type [NOT NULL] [= default] [OUT | OUTPUT] [READONLY]`.
    fn parse_procedure_parameter(&mut self) -> PResult<ProcedureParameter> {
        let name = self.parse_variable_name()?;
        self.eat_keyword("AS");
        let data_type = self.parse_data_type()?;
        let not_null = self.at_keyword("NOT") && self.nth_is_keyword(1, "NULL");
        if not_null {
            self.advance();
            self.advance();
        }
        let default =
            if self.eat(&TokenKind::Eq) { Some(self.parse_parameter_default()?) } else { None };
        let output = self.eat_one_of(&["OUTPUT", "OUT"]).is_some();
        let readonly = self.eat_keyword("READONLY");
        Ok(ProcedureParameter { name, data_type, not_null, default, output, readonly })
    }

    /// A parameter's default. As in a procedure call's arguments, SQL Server reads a lone
    /// identifier there as a string (`@Execute CHAR(1) = Y` is `'Y'`), which released
    /// scripts rely on; a call or a qualified name is still an expression.
    fn parse_parameter_default(&mut self) -> PResult<Expr> {
        let lone = self.at_identifier()
            && !matches!(self.peek_nth(1).kind, TokenKind::LParen | TokenKind::Dot);
        if !lone {
            return self.parse_expr();
        }
        let span = self.peek().span;
        let value = super::super::identifier_value(self.peek());
        self.advance();
        Ok(Expr { kind: ExprKind::Literal(Literal::String { value, national: false }), span })
    }

    // -----------------------------------------------------------------------------------------
    // DROP and TRUNCATE
    // -----------------------------------------------------------------------------------------
}

/// The first statement among `statements` (and the blocks they contain) that begins, commits,
/// rolls back or saves a transaction, as SQL Server names it, with its line.
fn first_transaction_statement(statements: &[Statement]) -> Option<(&'static str, u32)> {
    statements.iter().find_map(|st| match &st.kind {
        StatementKind::Transaction(t) => {
            let name = match t {
                TransactionStatement::Begin { .. } => "BEGIN TRANSACTION",
                TransactionStatement::Commit { .. } => "COMMIT TRANSACTION",
                TransactionStatement::Rollback { .. } => "ROLLBACK TRANSACTION",
                TransactionStatement::Save { .. } => "SAVE TRANSACTION",
            };
            Some((name, st.span.line))
        }
        StatementKind::Block(list) => first_transaction_statement(list),
        StatementKind::If(i) => first_transaction_statement(std::slice::from_ref(&i.then_branch))
            .or_else(|| {
                i.else_branch
                    .as_ref()
                    .and_then(|e| first_transaction_statement(std::slice::from_ref(e)))
            }),
        StatementKind::While(w) => first_transaction_statement(std::slice::from_ref(&w.body)),
        StatementKind::TryCatch(tc) => first_transaction_statement(&tc.try_block)
            .or_else(|| first_transaction_statement(&tc.catch_block)),
        _ => None,
    })
}
