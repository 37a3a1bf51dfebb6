//! Statement dispatch, control flow, variables, session options, transactions and `EXEC`.
//!
//! T-SQL statements need no terminator, so every statement parser stops at the first token
//! that cannot continue it, and that token starts the next statement. Decisions where T-SQL
//! is ambiguous:
//!
//! * `BEGIN TRAN`/`BEGIN TRANSACTION` starts a transaction, `BEGIN TRY` a `TRY...CATCH`, any
//!   other `BEGIN` a block.
//! * Optional trailing parts (a transaction name after `TRAN`, the value of `RETURN`, the
//!   arguments of `THROW` and `EXEC`) are present only if the next token can start them and
//!   is neither reserved nor `THROW`; so `COMMIT TRAN SET @i += 1` is two statements.
//! * `IF c s1; ELSE s2` is accepted: semicolons may separate the `THEN` branch from `ELSE`.
//! * `COMMIT ... WITH` and `RAISERROR (...) WITH` take options only when the expected option
//!   follows, so a `WITH` that begins a CTE starts the next statement.
//! * A bare name that begins a batch calls that procedure (`sp_who`), as in SQL Server.
//! * Procedure arguments are constants, variables, `DEFAULT` or lone names, which are strings;
//!   so a following `(` or operator is an error rather than part of an expression.

use super::{identifier_value, PResult, Parser};
use crate::ast::{
    AssignOp, Cte, Dbcc, DbccArgument, Declaration, DeclarationKind, ExecArgument, ExecProcedure,
    Execute, Expr, ExprKind, If, IsolationLevel, Literal, ProcedureRef, Raiserror, RaiserrorOption,
    SelectStatement, SetStatement, Statement, StatementKind, StatisticsOptions, StatisticsSample,
    Throw, TransactionName, TransactionStatement, TryCatch, UpdateStatistics, VarRef, Waitfor,
    WaitforKind, While,
};
use crate::error::ParseError;
use crate::lexer::TokenKind;

/// The `SET` options that take a value other than `ON` or `OFF` (besides `LOCK_TIMEOUT` and
/// `TRANSACTION ISOLATION LEVEL`): drivers send them at login.
const VALUED_SET_OPTIONS: [&str; 6] =
    ["TEXTSIZE", "DATEFIRST", "DATEFORMAT", "DEADLOCK_PRIORITY", "LANGUAGE", "ROWCOUNT"];

/// The `SET` options that take `ON` or `OFF`.
const BOOLEAN_SET_OPTIONS: [&str; 27] = [
    "ANSI_DEFAULTS",
    "ANSI_NULL_DFLT_OFF",
    "ANSI_NULL_DFLT_ON",
    "ANSI_NULLS",
    "ANSI_PADDING",
    "ANSI_WARNINGS",
    "ARITHABORT",
    "ARITHIGNORE",
    "CONCAT_NULL_YIELDS_NULL",
    "CURSOR_CLOSE_ON_COMMIT",
    "FMTONLY",
    "FORCEPLAN",
    "IMPLICIT_TRANSACTIONS",
    "NOCOUNT",
    "NOEXEC",
    "NUMERIC_ROUNDABORT",
    "PARSEONLY",
    "QUOTED_IDENTIFIER",
    "REMOTE_PROC_TRANSACTIONS",
    "SHOWPLAN_ALL",
    "SHOWPLAN_TEXT",
    "SHOWPLAN_XML",
    "STATISTICS IO",
    "STATISTICS PROFILE",
    "STATISTICS TIME",
    "STATISTICS XML",
    "XACT_ABORT",
];

impl<'a> Parser<'a> {
    /// One statement. `first_in_batch` permits `CREATE PROCEDURE` and implicit `EXEC`.
    pub(super) fn parse_statement(&mut self, first_in_batch: bool) -> PResult<Statement> {
        self.nested(|p| {
            let start = p.peek().span;
            let kind = p.parse_statement_kind(first_in_batch)?;
            Ok(Statement { kind, span: p.span_from(start) })
        })
    }

    fn parse_statement_kind(&mut self, first_in_batch: bool) -> PResult<StatementKind> {
        if self.at(&TokenKind::LParen) {
            return self.parse_select_statement(Vec::new());
        }
        if self.peek_nth(1).kind == TokenKind::Colon
            && matches!(self.peek_kind(), TokenKind::Word | TokenKind::QuotedIdent(_))
        {
            let label = self.parse_identifier()?;
            self.advance();
            return Ok(StatementKind::Label(label));
        }
        let Some(word) = self.peek_word_upper() else {
            return self.parse_implicit_execute(first_in_batch);
        };
        match word.as_str() {
            "SELECT" => self.parse_select_statement(Vec::new()),
            "WITH" => self.parse_with_statement(),
            "INSERT" => self.parse_insert(Vec::new()),
            "BULK" if self.nth_is_keyword(1, "INSERT") => self.parse_bulk_insert(),
            "UPDATE" if self.nth_is_keyword(1, "STATISTICS") && !self.nth_is_keyword(2, "SET") => {
                self.parse_update_statistics()
            }
            "UPDATE" => self.parse_update(Vec::new()),
            "DELETE" => self.parse_delete(Vec::new()),
            "MERGE" => self.parse_merge(Vec::new()),
            "DECLARE" if self.at_declare_cursor() => self.parse_declare_cursor(),
            "DECLARE" => self.parse_declare(),
            "OPEN" | "CLOSE" | "DEALLOCATE" => self.parse_cursor_command(),
            "FETCH" => self.parse_fetch(),
            "SET" => self.parse_set(),
            "IF" => self.parse_if(),
            "WHILE" => self.parse_while(),
            "BEGIN" => self.parse_begin(),
            "BREAK" => self.parse_keyword_statement(StatementKind::Break),
            "GOTO" => {
                self.advance();
                Ok(StatementKind::Goto(self.parse_identifier()?))
            }
            "CONTINUE" => self.parse_keyword_statement(StatementKind::Continue),
            "RETURN" => self.parse_return(),
            "PRINT" => self.parse_print(),
            "THROW" => self.parse_throw(),
            "RAISERROR" => self.parse_raiserror(),
            "USE" => self.parse_use(),
            "COMMIT" => self.parse_commit(),
            "ROLLBACK" => self.parse_rollback(),
            "SAVE" => self.parse_save(),
            "EXEC" | "EXECUTE" => self.parse_execute_statement(),
            "CHECKPOINT" => self.parse_checkpoint(),
            "RECONFIGURE" => {
                self.advance();
                let with_override = self.eat_keyword("WITH");
                if with_override {
                    self.expect_keyword("OVERRIDE")?;
                }
                Ok(StatementKind::Reconfigure { with_override })
            }
            "DBCC" => self.parse_dbcc(),
            "KILL" => {
                self.advance();
                Ok(StatementKind::Kill(self.parse_expr()?))
            }
            "WAITFOR" => self.parse_waitfor(),
            "CREATE" | "ALTER" => self.parse_create_or_alter(first_in_batch),
            "DROP" => self.parse_drop(),
            "TRUNCATE" => self.parse_truncate(),
            "ENABLE" | "DISABLE" if self.nth_is_keyword(1, "TRIGGER") => {
                let enable = self.advance_text().eq_ignore_ascii_case("ENABLE");
                self.parse_enable_trigger(enable, None)
            }
            _ => self.parse_implicit_execute(first_in_batch),
        }
    }

    /// A statement that is a single keyword.
    fn parse_keyword_statement(&mut self, kind: StatementKind) -> PResult<StatementKind> {
        self.advance();
        Ok(kind)
    }

    /// SQL Server calls the procedure named by the first statement of a batch without `EXEC`.
    fn parse_implicit_execute(&mut self, first_in_batch: bool) -> PResult<StatementKind> {
        if !(first_in_batch && self.at_identifier()) {
            return Err(self.error());
        }
        let call = self.parse_procedure_call()?;
        Ok(StatementKind::Execute(Box::new(Execute::Procedure(call))))
    }

    fn parse_select_statement(&mut self, ctes: Vec<Cte>) -> PResult<StatementKind> {
        let mut query = self.parse_query_with(ctes)?;
        let hints = self.parse_option_clause_for(&mut query.ctes)?;
        Ok(StatementKind::Select(Box::new(SelectStatement { query, hints })))
    }

    /// `WITH ctes` followed by `SELECT`, `INSERT`, `UPDATE`, `DELETE` or `MERGE`.
    fn parse_with_statement(&mut self) -> PResult<StatementKind> {
        let (namespaces, more) = self.parse_xml_namespaces()?;
        let ctes = if namespaces.is_empty() {
            self.parse_ctes()?
        } else if more {
            self.parse_cte_list()?
        } else {
            Vec::new()
        };
        let statement = match self.peek_word_upper().as_deref() {
            Some("INSERT") => self.parse_insert(ctes),
            Some("UPDATE") => self.parse_update(ctes),
            Some("DELETE") => self.parse_delete(ctes),
            Some("MERGE") => self.parse_merge(ctes),
            _ => self.parse_select_statement(ctes),
        }?;
        if namespaces.is_empty() {
            return Ok(statement);
        }
        let mut statement = statement;
        match &mut statement {
            StatementKind::Select(s) => s.query.xml_namespaces = namespaces,
            StatementKind::Insert(i) => i.xml_namespaces = namespaces,
            StatementKind::Update(u) => u.xml_namespaces = namespaces,
            StatementKind::Delete(d) => d.xml_namespaces = namespaces,
            StatementKind::Merge(m) => m.xml_namespaces = namespaces,
            // The statement parsers above return only these kinds.
            _ => return Err(self.error()),
        }
        Ok(statement)
    }

    // -----------------------------------------------------------------------------------------
    // Variables and SET
    // -----------------------------------------------------------------------------------------

    fn parse_declare(&mut self) -> PResult<StatementKind> {
        self.advance();
        let declarations = self.parse_comma_separated(Self::parse_declaration)?;
        Ok(StatementKind::Declare(declarations))
    }

    /// `@name [AS] type [= value]` or `@name [AS] TABLE (...)`.
    fn parse_declaration(&mut self) -> PResult<Declaration> {
        let name = self.parse_variable_name()?;
        self.eat_keyword("AS");
        if self.eat_keyword("TABLE") {
            let kind = DeclarationKind::Table(self.parse_table_elements()?);
            return Ok(Declaration { name, kind });
        }
        let data_type = self.parse_data_type()?;
        let value = if self.eat(&TokenKind::Eq) { Some(self.parse_expr()?) } else { None };
        Ok(Declaration { name, kind: DeclarationKind::Scalar { data_type, value } })
    }

    pub(super) fn parse_variable_name(&mut self) -> PResult<String> {
        if self.at(&TokenKind::Variable) {
            Ok(self.advance_text().to_owned())
        } else {
            Err(self.error())
        }
    }

    fn parse_set(&mut self) -> PResult<StatementKind> {
        self.advance();
        let set = if self.at(&TokenKind::Variable)
            && self.peek_nth(1).kind == TokenKind::Dot
            && self.peek_nth(2).text == "modify"
        {
            // `SET @x.modify('xml dml')`: the variable takes the modified value.
            let start = self.peek().span;
            let name = VarRef::new(self.advance_text().to_owned());
            let target =
                Expr { kind: ExprKind::Variable(name.clone()), span: self.span_from(start) };
            self.advance();
            self.advance();
            let kind = self.parse_xml_method(target, "modify".to_string())?;
            let value = Expr { kind, span: self.span_from(start) };
            SetStatement::Variable { name, op: AssignOp::Assign, value }
        } else if self.at(&TokenKind::Variable) {
            let name = VarRef::new(self.advance_text().to_owned());
            let op = self.parse_assign_op()?;
            let value = self.parse_expr()?;
            SetStatement::Variable { name, op, value }
        } else if self.eat_keyword("TRANSACTION") {
            self.expect_keyword("ISOLATION")?;
            self.expect_keyword("LEVEL")?;
            SetStatement::IsolationLevel(self.parse_isolation_level()?)
        } else if self.eat_keyword("IDENTITY_INSERT") {
            let table = self.parse_object_name()?;
            SetStatement::IdentityInsert { table, on: self.parse_on_off()? }
        } else if self.eat_keyword("LOCK_TIMEOUT") {
            SetStatement::LockTimeout(self.parse_signed_number()?)
        } else if let Some(name) = self.eat_one_of(&VALUED_SET_OPTIONS) {
            let name = name.to_string();
            let value = self.parse_set_value()?;
            SetStatement::Valued { name, value }
        } else {
            let names = self.parse_comma_separated(Self::parse_set_option_name)?;
            let on = self.parse_on_off()?;
            SetStatement::Options { names, on }
        };
        Ok(StatementKind::Set(Box::new(set)))
    }

    /// The value of a valued `SET` option (and of `BEGIN ATOMIC`'s `LANGUAGE`, `DATEFIRST` and
    /// `DATEFORMAT`): a word, a number (negative too), a variable, or a string or bracketed
    /// name, as `SET LANGUAGE 'us_english'` and `[us_english]` name it as well as a word.
    pub(super) fn parse_set_value(&mut self) -> PResult<String> {
        let minus = self.at(&TokenKind::Minus);
        if minus {
            self.advance();
        }
        let value = match self.peek_kind() {
            TokenKind::Word | TokenKind::Integer | TokenKind::Variable => {
                self.advance_text().to_string()
            }
            TokenKind::String { value, .. } | TokenKind::QuotedIdent(value) if !minus => {
                let value = value.clone();
                self.advance();
                value
            }
            _ => return Err(self.error()),
        };
        Ok(if minus { format!("-{value}") } else { value })
    }

    pub(super) fn parse_isolation_level(&mut self) -> PResult<IsolationLevel> {
        let level = if self.eat_keyword("READ") {
            match self.eat_one_of(&["UNCOMMITTED", "COMMITTED"]) {
                Some("UNCOMMITTED") => IsolationLevel::ReadUncommitted,
                Some(_) => IsolationLevel::ReadCommitted,
                None => return Err(self.error()),
            }
        } else if self.eat_keyword("REPEATABLE") {
            self.expect_keyword("READ")?;
            IsolationLevel::RepeatableRead
        } else if self.eat_keyword("SNAPSHOT") {
            IsolationLevel::Snapshot
        } else if self.eat_keyword("SERIALIZABLE") {
            IsolationLevel::Serializable
        } else {
            return Err(self.error());
        };
        Ok(level)
    }

    /// A boolean `SET` option, upper-cased; `STATISTICS IO` and friends are two words.
    fn parse_set_option_name(&mut self) -> PResult<String> {
        if self.peek().kind != TokenKind::Word {
            return Err(self.error());
        }
        let line = self.peek().span.line;
        let written = self.advance_text();
        let mut name = written.to_ascii_uppercase();
        if name == "STATISTICS" && self.peek().kind == TokenKind::Word {
            name = format!("{name} {}", self.advance_text().to_ascii_uppercase());
        }
        if BOOLEAN_SET_OPTIONS.contains(&name.as_str()) {
            Ok(name)
        } else {
            Err(ParseError::unknown_set_option(written, line))
        }
    }

    pub(super) fn parse_on_off(&mut self) -> PResult<bool> {
        match self.eat_one_of(&["ON", "OFF"]) {
            Some(value) => Ok(value == "ON"),
            None => Err(self.error()),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Control flow
    // -----------------------------------------------------------------------------------------

    fn parse_if(&mut self) -> PResult<StatementKind> {
        self.advance();
        let condition = self.parse_expr()?;
        let then_branch = self.parse_statement(false)?;
        let mut semicolons = 0;
        while self.peek_nth(semicolons).kind == TokenKind::Semicolon {
            semicolons += 1;
        }
        let mut else_branch = None;
        if self.nth_is_keyword(semicolons, "ELSE") {
            for _ in 0..=semicolons {
                self.advance();
            }
            else_branch = Some(self.parse_statement(false)?);
        }
        Ok(StatementKind::If(Box::new(If { condition, then_branch, else_branch })))
    }

    fn parse_while(&mut self) -> PResult<StatementKind> {
        self.advance();
        let condition = self.parse_expr()?;
        let body = self.parse_statement(false)?;
        Ok(StatementKind::While(Box::new(While { condition, body })))
    }

    /// `BEGIN TRAN`, `BEGIN TRY` or a `BEGIN ... END` block.
    fn parse_begin(&mut self) -> PResult<StatementKind> {
        if self.nth_is_keyword(1, "TRAN") || self.nth_is_keyword(1, "TRANSACTION") {
            self.advance();
            self.advance();
            let name = self.parse_transaction_name()?;
            return Ok(StatementKind::Transaction(TransactionStatement::Begin { name }));
        }
        if self.nth_is_keyword(1, "TRY") {
            return self.parse_try_catch();
        }
        self.advance();
        let statements = self.parse_nonempty_block()?;
        self.expect_keyword("END")?;
        Ok(StatementKind::Block(statements))
    }

    /// `BEGIN TRY ... END TRY BEGIN CATCH ... END CATCH`; the `CATCH` block may be empty.
    fn parse_try_catch(&mut self) -> PResult<StatementKind> {
        self.advance();
        self.advance();
        let try_block = self.parse_nonempty_block()?;
        for keyword in ["END", "TRY", "BEGIN", "CATCH"] {
            self.expect_keyword(keyword)?;
        }
        let catch_block = self.parse_statements_until_end()?;
        self.expect_keyword("END")?;
        self.expect_keyword("CATCH")?;
        Ok(StatementKind::TryCatch(Box::new(TryCatch { try_block, catch_block })))
    }

    /// Statements up to `END`; at least one, as SQL Server requires.
    fn parse_nonempty_block(&mut self) -> PResult<Vec<Statement>> {
        let statements = self.parse_statements_until_end()?;
        if statements.is_empty() {
            Err(self.error())
        } else {
            Ok(statements)
        }
    }

    /// Statements up to (not including) `END` or the end of the batch.
    pub(super) fn parse_statements_until_end(&mut self) -> PResult<Vec<Statement>> {
        let mut statements = Vec::new();
        loop {
            self.skip_semicolons();
            if self.at_keyword("END") || self.at_eof() {
                return Ok(statements);
            }
            statements.push(self.parse_statement(false)?);
        }
    }

    fn parse_return(&mut self) -> PResult<StatementKind> {
        self.advance();
        let value = if self.starts_expression() { Some(self.parse_expr()?) } else { None };
        Ok(StatementKind::Return(value))
    }

    /// `THROW number, message, state`, or a bare `THROW`.
    fn parse_throw(&mut self) -> PResult<StatementKind> {
        self.advance();
        if !self.starts_expression() {
            return Ok(StatementKind::Throw(None));
        }
        let number = self.parse_expr()?;
        self.expect(&TokenKind::Comma)?;
        let message = self.parse_expr()?;
        self.expect(&TokenKind::Comma)?;
        let state = self.parse_expr()?;
        Ok(StatementKind::Throw(Some(Box::new(Throw { number, message, state }))))
    }

    /// `RAISERROR (message, severity, state [, argument ...]) [WITH option, ...]`.
    fn parse_raiserror(&mut self) -> PResult<StatementKind> {
        self.advance();
        self.expect(&TokenKind::LParen)?;
        let message = self.parse_expr()?;
        self.expect(&TokenKind::Comma)?;
        let severity = self.parse_expr()?;
        self.expect(&TokenKind::Comma)?;
        let state = self.parse_expr()?;
        let mut arguments = Vec::new();
        while self.eat(&TokenKind::Comma) {
            arguments.push(self.parse_expr()?);
        }
        self.expect(&TokenKind::RParen)?;
        const OPTIONS: [&str; 3] = ["LOG", "NOWAIT", "SETERROR"];
        let mut options = Vec::new();
        if self.at_keyword("WITH") && OPTIONS.iter().any(|option| self.nth_is_keyword(1, option)) {
            self.advance();
            options = self.parse_comma_separated(|p| match p.eat_one_of(&OPTIONS) {
                Some("LOG") => Ok(RaiserrorOption::Log),
                Some("NOWAIT") => Ok(RaiserrorOption::NoWait),
                Some(_) => Ok(RaiserrorOption::SetError),
                None => Err(p.error()),
            })?;
        }
        let raiserror = Raiserror { message, severity, state, arguments, options };
        Ok(StatementKind::Raiserror(Box::new(raiserror)))
    }

    fn parse_print(&mut self) -> PResult<StatementKind> {
        self.advance();
        Ok(StatementKind::Print(self.parse_expr()?))
    }

    fn parse_use(&mut self) -> PResult<StatementKind> {
        self.advance();
        Ok(StatementKind::Use(self.parse_identifier()?))
    }

    /// `UPDATE STATISTICS table [name | (name, ...)] [WITH option [= value], ...]`.
    fn parse_update_statistics(&mut self) -> PResult<StatementKind> {
        self.advance();
        self.advance();
        let table = self.parse_object_name()?;
        let names = if self.peek().kind == TokenKind::LParen {
            self.parse_identifier_list()?
        } else if self.at_identifier() && !self.at_keyword("WITH") && !self.at_clause_boundary() {
            vec![self.parse_identifier()?]
        } else {
            Vec::new()
        };
        let options = self.parse_statistics_options()?;
        Ok(StatementKind::UpdateStatistics(Box::new(UpdateStatistics { table, names, options })))
    }

    /// The `WITH` options of CREATE and UPDATE STATISTICS: `FULLSCAN`, `SAMPLE n PERCENT |
    /// ROWS`, `RESAMPLE`, `NORECOMPUTE`, `ALL | COLUMNS | INDEX` are kept; the others
    /// (`STATS_STREAM = 0x...`, `MAXDOP = 1`, `INCREMENTAL = ON`, the undocumented
    /// `ROWCOUNT = n, PAGECOUNT = n` that fake a table's size, ...) are read and dropped.
    pub(super) fn parse_statistics_options(&mut self) -> PResult<StatisticsOptions> {
        let mut options = StatisticsOptions::default();
        if self.eat_keyword("WITH") {
            loop {
                // ROWCOUNT is a reserved word elsewhere (SET ROWCOUNT).
                let name = if self.eat_keyword("ROWCOUNT") {
                    "ROWCOUNT".to_string()
                } else {
                    self.parse_identifier()?.value.to_ascii_uppercase()
                };
                match name.as_str() {
                    "FULLSCAN" => options.sample = Some(StatisticsSample::FullScan),
                    "RESAMPLE" => options.resample = true,
                    "NORECOMPUTE" => options.no_recompute = true,
                    "ALL" | "COLUMNS" | "INDEX" => options.only = Some(name.clone()),
                    _ => {}
                }
                // An option takes at most one value.
                let number = matches!(
                    self.peek().kind,
                    TokenKind::Integer | TokenKind::Decimal | TokenKind::Float
                );
                if self.eat(&TokenKind::Eq) || number {
                    let value = self.peek().text.parse::<f64>().ok();
                    self.advance();
                    let percent = self.eat_keyword("PERCENT");
                    let rows = self.eat_keyword("ROWS");
                    if name == "SAMPLE" {
                        let Some(n) = value.filter(|n| *n >= 0.0) else { return Err(self.error()) };
                        options.sample = Some(match (percent, rows) {
                            (true, _) if n >= 100.0 => StatisticsSample::FullScan,
                            (true, _) => StatisticsSample::Percent(n),
                            (_, true) => StatisticsSample::Rows(n),
                            _ => return Err(self.error()),
                        });
                    }
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        Ok(options)
    }

    fn parse_checkpoint(&mut self) -> PResult<StatementKind> {
        self.advance();
        let duration =
            if self.at(&TokenKind::Integer) { Some(self.parse_signed_number()?) } else { None };
        Ok(StatementKind::Checkpoint(duration))
    }

    /// `DBCC command [(argument, ...)] [WITH option, ...]`.
    fn parse_dbcc(&mut self) -> PResult<StatementKind> {
        self.advance();
        let command = self.parse_identifier()?;
        let mut arguments = Vec::new();
        if self.eat(&TokenKind::LParen) {
            if !self.at(&TokenKind::RParen) {
                arguments = self.parse_comma_separated(|p| {
                    if p.at_identifier() {
                        Ok(DbccArgument::Name(p.parse_object_name()?))
                    } else {
                        Ok(DbccArgument::Value(p.parse_expr()?))
                    }
                })?;
            }
            self.expect(&TokenKind::RParen)?;
        }
        let options = if self.eat_keyword("WITH") {
            self.parse_comma_separated(Self::parse_identifier)?
        } else {
            Vec::new()
        };
        Ok(StatementKind::Dbcc(Box::new(Dbcc { command, arguments, options })))
    }

    /// `WAITFOR DELAY|TIME value`, the value a string constant or a variable (as in SQL
    /// Server; the Service Broker forms with `RECEIVE` are not supported).
    fn parse_waitfor(&mut self) -> PResult<StatementKind> {
        self.advance();
        let kind = match self.eat_one_of(&["DELAY", "TIME"]) {
            Some("DELAY") => WaitforKind::Delay,
            Some(_) => WaitforKind::Time,
            None => return Err(self.error()),
        };
        if !matches!(self.peek_kind(), TokenKind::String { .. } | TokenKind::Variable) {
            return Err(self.error());
        }
        let value = self.parse_primary()?;
        Ok(StatementKind::Waitfor(Box::new(Waitfor { kind, value })))
    }

    // -----------------------------------------------------------------------------------------
    // Transactions
    // -----------------------------------------------------------------------------------------

    /// An optional transaction or savepoint name.
    fn parse_transaction_name(&mut self) -> PResult<Option<TransactionName>> {
        if self.at(&TokenKind::Variable) {
            return Ok(Some(TransactionName::Variable(self.advance_text().to_owned())));
        }
        if self.at_identifier() && !self.at_clause_boundary() {
            Ok(Some(TransactionName::Name(self.parse_identifier()?)))
        } else {
            Ok(None)
        }
    }

    /// After `COMMIT` or `ROLLBACK`: `TRAN[SACTION] [name]` or `WORK`, both optional.
    fn parse_transaction_suffix(&mut self) -> PResult<Option<TransactionName>> {
        if self.eat_one_of(&["TRAN", "TRANSACTION"]).is_some() {
            return self.parse_transaction_name();
        }
        self.eat_keyword("WORK");
        Ok(None)
    }

    /// `COMMIT ... [WITH (DELAYED_DURABILITY = ON | OFF)]`.
    fn parse_commit(&mut self) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_transaction_suffix()?;
        let mut delayed_durability = None;
        if self.at_keyword("WITH") && self.peek_nth(1).kind == TokenKind::LParen {
            self.advance();
            self.advance();
            self.expect_keyword("DELAYED_DURABILITY")?;
            self.expect(&TokenKind::Eq)?;
            delayed_durability = Some(self.parse_on_off()?);
            self.expect(&TokenKind::RParen)?;
        }
        let commit = TransactionStatement::Commit { name, delayed_durability };
        Ok(StatementKind::Transaction(commit))
    }

    fn parse_rollback(&mut self) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_transaction_suffix()?;
        Ok(StatementKind::Transaction(TransactionStatement::Rollback { name }))
    }

    /// `SAVE TRAN[SACTION] name`.
    fn parse_save(&mut self) -> PResult<StatementKind> {
        self.advance();
        self.eat_one_of(&["TRAN", "TRANSACTION"]).ok_or_else(|| self.error())?;
        let name = self.parse_transaction_name()?.ok_or_else(|| self.error())?;
        Ok(StatementKind::Transaction(TransactionStatement::Save { name }))
    }

    // -----------------------------------------------------------------------------------------
    // EXEC
    // -----------------------------------------------------------------------------------------

    fn parse_execute_statement(&mut self) -> PResult<StatementKind> {
        Ok(StatementKind::Execute(Box::new(self.parse_execute()?)))
    }

    /// `EXEC[UTE] ('sql')` or `EXEC[UTE] [@rc =] procedure [arguments]`.
    pub(super) fn parse_execute(&mut self) -> PResult<Execute> {
        self.advance();
        if self.eat(&TokenKind::LParen) {
            let sql = self.parse_expr()?;
            self.expect(&TokenKind::RParen)?;
            return Ok(Execute::Sql(sql));
        }
        Ok(Execute::Procedure(self.parse_procedure_call()?))
    }

    fn parse_procedure_call(&mut self) -> PResult<ExecProcedure> {
        let return_status = self.parse_named_argument_prefix();
        let procedure = if self.at(&TokenKind::Variable) {
            ProcedureRef::Variable(self.advance_text().to_owned())
        } else {
            ProcedureRef::Name(self.parse_object_name()?)
        };
        let arguments = if self.at_exec_value() || self.at(&TokenKind::Variable) {
            self.parse_comma_separated(Self::parse_exec_argument)?
        } else {
            Vec::new()
        };
        // `WITH RECOMPILE`: SQL Server compiles a new plan for this call only; Walden plans
        // each call's statements as it would anyway, so the option changes nothing. (A CTE
        // after EXEC needs a `;` before its WITH, so WITH RECOMPILE is never a CTE.)
        if self.at_keyword("WITH") && self.nth_is_keyword(1, "RECOMPILE") {
            self.advance();
            self.advance();
        }
        Ok(ExecProcedure { return_status, procedure, arguments })
    }

    /// `[@name =] value [OUTPUT]`.
    fn parse_exec_argument(&mut self) -> PResult<ExecArgument> {
        let name = self.parse_named_argument_prefix();
        let value = self.parse_exec_value()?;
        let output = self.eat_one_of(&["OUTPUT", "OUT"]).is_some();
        Ok(ExecArgument { name, value, output })
    }

    /// Whether a procedure argument's value follows (see [`Self::parse_exec_value`]).
    fn at_exec_value(&self) -> bool {
        match self.peek_kind() {
            TokenKind::Variable
            | TokenKind::SystemVariable
            | TokenKind::String { .. }
            | TokenKind::Binary
            | TokenKind::Integer
            | TokenKind::Decimal
            | TokenKind::Float
            | TokenKind::Money
            | TokenKind::Plus
            | TokenKind::Minus => true,
            _ => {
                self.at_keyword("NULL")
                    || self.at_keyword("DEFAULT")
                    || (self.at_identifier() && !self.at_clause_boundary())
            }
        }
    }

    /// A procedure argument's value. SQL Server accepts only constants (numbers may be
    /// signed), variables, `DEFAULT`, and lone identifiers, which are strings
    /// (`EXEC sp_help t`, `EXEC sp_helptext [dbo.p]`); expressions are syntax errors.
    fn parse_exec_value(&mut self) -> PResult<Expr> {
        if !self.at_exec_value() {
            return Err(self.error());
        }
        let span = self.peek().span;
        let number = matches!(
            self.peek_kind(),
            TokenKind::Integer
                | TokenKind::Decimal
                | TokenKind::Float
                | TokenKind::Money
                | TokenKind::Plus
                | TokenKind::Minus
        );
        if number {
            self.parse_signed_number()
        } else if self.eat_keyword("DEFAULT") {
            Ok(Expr { kind: ExprKind::Default, span })
        } else if self.at_identifier() {
            let value = identifier_value(self.peek());
            self.advance();
            // A call or a qualified name is not a constant.
            if matches!(self.peek_kind(), TokenKind::LParen | TokenKind::Dot) {
                return Err(self.error());
            }
            let kind = ExprKind::Literal(Literal::String { value, national: true });
            Ok(Expr { kind, span })
        } else {
            self.parse_primary()
        }
    }

    /// `@name =` before a procedure or an argument.
    fn parse_named_argument_prefix(&mut self) -> Option<String> {
        if !(self.at(&TokenKind::Variable) && self.peek_nth(1).kind == TokenKind::Eq) {
            return None;
        }
        let name = self.advance_text().to_owned();
        self.advance();
        Some(name)
    }
}
