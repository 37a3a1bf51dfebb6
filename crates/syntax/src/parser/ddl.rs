//! `CREATE`, `ALTER`, `DROP` and `TRUNCATE`.
//!
//! `CREATE [OR ALTER] PROCEDURE` and `ALTER PROCEDURE` must be the first statement of the
//! batch (error 111, as in SQL Server), and the procedure's body runs to the end of the batch:
//! a procedure cannot be followed by other statements in the same batch.

use super::{PResult, Parser};
use crate::ast::{
    AlterDatabase, AtomicBlock, AtomicOption, Clustering, ColumnConstraint, ColumnConstraintKind,
    ColumnDef, ColumnOption, CreateDatabase, CreateFunction, CreateIndex, CreateMode,
    CreateProcedure, CreateSequence, CreateTable, CreateTrigger, CreateType, CreateView,
    DatabaseFileChange, DatabaseOption, DatabaseRef, DelayedDurability, DropIndex, DropKind,
    DropObjects, EnableTrigger, Expr, ExprKind, FileGrowth, FileSize, FileSpec,
    ForeignKeyReference, FunctionBody, Ident, IdentitySpec, IndexColumn, IndexRef, InlineIndex,
    IsolationLevel, Literal, MaxSize, ObjectName, ProcedureParameter, RecoveryModel,
    ReferentialAction, SequenceOption, SizeUnit, Statement, StatementKind, TableConstraint,
    TableConstraintKind, TableElement, TableOption, TransactionStatement, TriggerEvent,
    TypeDefinition,
};
use crate::error::ParseError;
use crate::lexer::TokenKind;

/// The index options that change what statements do (the others are read and dropped).
#[derive(Debug, Default)]
struct IndexOptions {
    /// `DROP_EXISTING = ON`.
    drop_existing: bool,
    /// `IGNORE_DUP_KEY = ON`.
    ignore_dup_key: bool,
}

impl<'a> Parser<'a> {
    /// `ALTER INDEX {name | ALL} ON table action`, the `ALTER` read: `REBUILD [PARTITION = ...]
    /// [WITH (...)]`, `REORGANIZE [PARTITION = n] [WITH (...)]`, `DISABLE`, `SET (...)`. The
    /// `WITH` options and the partition are read and dropped; `SET`'s option list is part of
    /// the action, because the statement is not valid without it.
    fn parse_alter_index(&mut self) -> PResult<StatementKind> {
        self.advance();
        let index = if self.eat_keyword("ALL") { None } else { Some(self.parse_identifier()?) };
        self.expect_keyword("ON")?;
        let table = self.parse_object_name()?;
        let action = match self.eat_one_of(&["REBUILD", "REORGANIZE", "DISABLE", "SET"]) {
            Some(action) => action.to_string(),
            None => return Err(self.error()),
        };
        if self.eat_keyword("PARTITION") {
            self.expect(&TokenKind::Eq)?;
            self.advance();
        }
        let action = if action == "SET" {
            format!("SET {}", self.parenthesized_tokens()?)
        } else {
            if self.eat_keyword("WITH") {
                self.parenthesized_tokens()?;
            }
            action.to_string()
        };
        Ok(StatementKind::AlterIndex { index, table, action })
    }

    /// A parenthesized group of any tokens, nested groups included, as its tokens' text
    /// separated by spaces (which lexes back to the same tokens).
    fn parenthesized_tokens(&mut self) -> PResult<String> {
        self.expect(&TokenKind::LParen)?;
        let mut text = String::from("(");
        let mut depth = 1usize;
        while depth > 0 {
            match self.peek().kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => depth -= 1,
                TokenKind::Eof => return Err(self.error()),
                _ => {}
            }
            let token = self.peek().text;
            if !matches!(token, ")" | ",") && !text.ends_with('(') {
                text.push(' ');
            }
            text.push_str(token);
            self.advance();
        }
        Ok(text)
    }

    /// `CREATE ...` or `ALTER ...`.
    pub(super) fn parse_create_or_alter(&mut self, first_in_batch: bool) -> PResult<StatementKind> {
        let is_create = self.at_keyword("CREATE");
        let line = self.advance().line;
        let mode = if !is_create {
            CreateMode::Alter
        } else if self.at_keyword("OR") && self.nth_is_keyword(1, "ALTER") {
            self.advance();
            self.advance();
            CreateMode::CreateOrAlter
        } else {
            CreateMode::Create
        };
        if self.at_keyword("PROC") || self.at_keyword("PROCEDURE") {
            if !first_in_batch {
                return Err(ParseError::procedure_not_first(line));
            }
            return self.parse_procedure(mode);
        }
        if self.at_keyword("FUNCTION") {
            if !first_in_batch {
                return Err(ParseError::module_not_first("FUNCTION", line));
            }
            return self.parse_function(mode);
        }
        if self.at_keyword("VIEW") {
            if !first_in_batch {
                return Err(ParseError::module_not_first("VIEW", line));
            }
            return self.parse_view(mode);
        }
        if self.at_keyword("TRIGGER") {
            if !first_in_batch {
                return Err(ParseError::module_not_first("TRIGGER", line));
            }
            return self.parse_trigger(mode);
        }
        if mode == CreateMode::Create && self.at_keyword("SCHEMA") {
            if !first_in_batch {
                return Err(ParseError::module_not_first("SCHEMA", line));
            }
            self.advance();
            let name = self.parse_identifier()?;
            let authorization = if self.eat_keyword("AUTHORIZATION") {
                Some(self.parse_identifier()?)
            } else {
                None
            };
            return Ok(StatementKind::CreateSchema { name, authorization });
        }
        let word = self.peek_word_upper().unwrap_or_default();
        let xml = word == "XML" || (word == "PRIMARY" && self.nth_is_keyword(1, "XML"));
        if xml {
            // Walden's xml is untyped and its methods read the text: neither schema
            // collections nor XML indexes exist. Refused as a whole, like IGNORE_DUP_KEY.
            let what = if self.nth_is_keyword(1, "SCHEMA") {
                "XML schema collections are not supported by Walden: xml columns and variables are untyped."
            } else {
                "XML indexes are not supported by Walden: xml methods read the stored text."
            };
            return Err(ParseError {
                number: 50000,
                severity: 16,
                state: 1,
                line,
                message: what.into(),
            });
        }
        match (mode, word.as_str()) {
            (CreateMode::Create, "DATABASE") => self.parse_create_database(),
            (CreateMode::Alter, "DATABASE") => self.parse_alter_database(),
            (CreateMode::Alter, "TABLE") => self.parse_alter_table(),
            (CreateMode::Alter, "INDEX") => self.parse_alter_index(),
            (CreateMode::Create, "TABLE") => self.parse_create_table(),
            (CreateMode::Create, "SEQUENCE") => self.parse_create_sequence(),
            (CreateMode::Create, "TYPE") => self.parse_create_type(),
            (CreateMode::Create, "STATISTICS") => self.parse_create_statistics(),
            (CreateMode::Create, "UNIQUE" | "CLUSTERED" | "NONCLUSTERED" | "INDEX") => {
                self.parse_create_index()
            }
            _ => Err(self.error()),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Databases
    // -----------------------------------------------------------------------------------------

    /// `CREATE DATABASE name [ON [PRIMARY] (file), ...] [LOG ON (file), ...]`.
    fn parse_create_database(&mut self) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_identifier()?;
        let mut files = Vec::new();
        if self.eat_keyword("ON") {
            self.eat_keyword("PRIMARY");
            files = self.parse_comma_separated(Self::parse_file_spec)?;
        }
        let mut log_files = Vec::new();
        if self.at_keyword("LOG") && self.nth_is_keyword(1, "ON") {
            self.advance();
            self.advance();
            log_files = self.parse_comma_separated(Self::parse_file_spec)?;
        }
        let collation =
            if self.eat_keyword("COLLATE") { Some(self.parse_identifier()?) } else { None };
        let database = CreateDatabase { name, files, log_files, collation };
        Ok(StatementKind::CreateDatabase(Box::new(database)))
    }

    /// `(NAME = ..., FILENAME = '...', SIZE = ..., MAXSIZE = ..., FILEGROWTH = ...)`.
    fn parse_file_spec(&mut self) -> PResult<FileSpec> {
        self.expect(&TokenKind::LParen)?;
        let mut spec = FileSpec::default();
        loop {
            self.parse_file_property(&mut spec)?;
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(spec)
    }

    fn parse_file_property(&mut self, spec: &mut FileSpec) -> PResult<()> {
        const PROPERTIES: [&str; 5] = ["NAME", "FILENAME", "SIZE", "MAXSIZE", "FILEGROWTH"];
        let property = self.eat_one_of(&PROPERTIES).ok_or_else(|| self.error())?;
        self.expect(&TokenKind::Eq)?;
        match property {
            "NAME" => spec.logical_name = Some(self.parse_alias_name()?),
            "FILENAME" => spec.filename = Some(self.parse_string()?),
            "SIZE" => spec.size = Some(self.parse_file_size()?),
            "MAXSIZE" if self.eat_keyword("UNLIMITED") => spec.max_size = Some(MaxSize::Unlimited),
            "MAXSIZE" => spec.max_size = Some(MaxSize::Size(self.parse_file_size()?)),
            _ => spec.growth = Some(self.parse_file_growth()?),
        }
        Ok(())
    }

    pub(super) fn parse_string(&mut self) -> PResult<String> {
        let TokenKind::String { value, .. } = self.peek_kind() else { return Err(self.error()) };
        let value = value.clone();
        self.advance();
        Ok(value)
    }

    /// `amount [KB | MB | GB | TB]`; megabytes when no unit is given.
    fn parse_file_size(&mut self) -> PResult<FileSize> {
        let amount = self.parse_unsigned::<u64>()?;
        Ok(FileSize { amount, unit: self.parse_size_unit() })
    }

    fn parse_size_unit(&mut self) -> SizeUnit {
        match self.eat_one_of(&["KB", "MB", "GB", "TB"]) {
            Some("KB") => SizeUnit::Kilobytes,
            Some("GB") => SizeUnit::Gigabytes,
            Some("TB") => SizeUnit::Terabytes,
            _ => SizeUnit::Megabytes,
        }
    }

    /// A size, or a percentage (`10%`).
    fn parse_file_growth(&mut self) -> PResult<FileGrowth> {
        let amount = self.parse_unsigned::<u64>()?;
        if self.eat(&TokenKind::Percent) {
            return Ok(FileGrowth::Percent(amount));
        }
        Ok(FileGrowth::Size(FileSize { amount, unit: self.parse_size_unit() }))
    }

    /// `ALTER DATABASE name | CURRENT SET option [, option...] [WITH ROLLBACK IMMEDIATE |
    /// ROLLBACK AFTER n [SECONDS] | NO_WAIT]`.
    fn parse_alter_database(&mut self) -> PResult<StatementKind> {
        self.advance();
        let database = if self.eat_keyword("CURRENT") {
            DatabaseRef::Current
        } else {
            DatabaseRef::Name(self.parse_identifier()?)
        };
        if let Some(change) = self.parse_database_file_change()? {
            let alter = AlterDatabase {
                database,
                options: Vec::new(),
                file: Some(change),
                collation: None,
                termination: None,
            };
            return Ok(StatementKind::AlterDatabase(Box::new(alter)));
        }
        if self.eat_keyword("COLLATE") {
            let alter = AlterDatabase {
                database,
                options: Vec::new(),
                file: None,
                collation: Some(self.parse_identifier()?),
                termination: None,
            };
            return Ok(StatementKind::AlterDatabase(Box::new(alter)));
        }
        self.expect_keyword("SET")?;
        let options = self.parse_comma_separated(Self::parse_database_option)?;
        let termination = if self.eat_keyword("WITH") {
            if self.eat_keyword("NO_WAIT") {
                Some("NO_WAIT".to_string())
            } else {
                self.expect_keyword("ROLLBACK")?;
                if self.eat_keyword("IMMEDIATE") {
                    Some("ROLLBACK IMMEDIATE".to_string())
                } else {
                    self.expect_keyword("AFTER")?;
                    let seconds = self.parse_unsigned::<u32>()?;
                    self.eat_keyword("SECONDS");
                    Some(format!("ROLLBACK AFTER {seconds} SECONDS"))
                }
            }
        } else {
            None
        };
        let alter = AlterDatabase { database, options, file: None, collation: None, termination };
        Ok(StatementKind::AlterDatabase(Box::new(alter)))
    }

    /// `MODIFY FILE (...)`, `ADD [LOG] FILE (...), ...` or `REMOVE FILE name` after `ALTER
    /// DATABASE name`; `None` if none of them follows.
    fn parse_database_file_change(&mut self) -> PResult<Option<DatabaseFileChange>> {
        if self.at_keyword("MODIFY") && self.nth_is_keyword(1, "FILE") {
            self.advance();
            self.advance();
            return Ok(Some(DatabaseFileChange::Modify(self.parse_file_spec()?)));
        }
        if self.at_keyword("ADD")
            && (self.nth_is_keyword(1, "FILE")
                || (self.nth_is_keyword(1, "LOG") && self.nth_is_keyword(2, "FILE")))
        {
            self.advance();
            let log = self.eat_keyword("LOG");
            self.advance();
            let files = self.parse_comma_separated(Self::parse_file_spec)?;
            return Ok(Some(DatabaseFileChange::Add { log, files }));
        }
        if self.at_keyword("REMOVE") && self.nth_is_keyword(1, "FILE") {
            self.advance();
            self.advance();
            return Ok(Some(DatabaseFileChange::Remove(self.parse_alias_name()?)));
        }
        Ok(None)
    }

    /// One option of `ALTER DATABASE ... SET`. Besides the two Walden acts on (the recovery
    /// model and delayed durability), the options install scripts set are read and accepted
    /// (see [`DatabaseOption::Accepted`]): the access modes, the `AUTO_*` and ANSI settings,
    /// `PAGE_VERIFY`, `COMPATIBILITY_LEVEL` and the others below. Options that would change
    /// what the database does and that Walden cannot honour (`EMERGENCY`, `QUERY_STORE =
    /// ON`...) stay syntax errors.
    fn parse_database_option(&mut self) -> PResult<DatabaseOption> {
        if self.eat_keyword("DELAYED_DURABILITY") {
            self.expect(&TokenKind::Eq)?;
            let setting = match self.eat_one_of(&["DISABLED", "ALLOWED", "FORCED"]) {
                Some("DISABLED") => DelayedDurability::Disabled,
                Some("ALLOWED") => DelayedDurability::Allowed,
                Some(_) => DelayedDurability::Forced,
                None => return Err(self.error()),
            };
            return Ok(DatabaseOption::DelayedDurability(setting));
        }
        if self.eat_keyword("RECOVERY") {
            let model = match self.eat_one_of(&["SIMPLE", "FULL", "BULK_LOGGED"]) {
                Some("SIMPLE") => RecoveryModel::Simple,
                Some("FULL") => RecoveryModel::Full,
                Some(_) => RecoveryModel::BulkLogged,
                None => return Err(self.error()),
            };
            return Ok(DatabaseOption::Recovery(model));
        }
        let Some(word) = self.peek_word_upper() else {
            return Err(self.error());
        };
        // Options that are a single word: the user access modes (Walden does not limit
        // connections, so SINGLE_USER only records nothing), the states a Walden database is
        // always in, and Service Broker's switches (Walden has no broker).
        const BARE: &[&str] = &[
            "SINGLE_USER",
            "RESTRICTED_USER",
            "MULTI_USER",
            "ENABLE_BROKER",
            "DISABLE_BROKER",
            "NEW_BROKER",
            "ERROR_BROKER_CONVERSATIONS",
        ];
        // Options set with ON or OFF (`=` allowed): they tune SQL Server's optimizer,
        // statistics, storage or session defaults, none of which changes a Walden result.
        const ON_OFF: &[&str] = &[
            "AUTO_CLOSE",
            "AUTO_SHRINK",
            "AUTO_CREATE_STATISTICS",
            "AUTO_UPDATE_STATISTICS",
            "AUTO_UPDATE_STATISTICS_ASYNC",
            "ANSI_NULL_DEFAULT",
            "ANSI_NULLS",
            "ANSI_PADDING",
            "ANSI_WARNINGS",
            "ARITHABORT",
            "CONCAT_NULL_YIELDS_NULL",
            "NUMERIC_ROUNDABORT",
            "QUOTED_IDENTIFIER",
            "RECURSIVE_TRIGGERS",
            "CURSOR_CLOSE_ON_COMMIT",
            "TRUSTWORTHY",
            "DB_CHAINING",
            "DATE_CORRELATION_OPTIMIZATION",
            "ALLOW_SNAPSHOT_ISOLATION",
            "READ_COMMITTED_SNAPSHOT",
            "HONOR_BROKER_PRIORITY",
            "ACCELERATED_DATABASE_RECOVERY",
            "TORN_PAGE_DETECTION",
            "MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT",
        ];
        // The states: ONLINE opens again a database set OFFLINE or that could not be opened
        // (RECOVERY_PENDING, SUSPECT); OFFLINE closes one; READ_ONLY and READ_WRITE.
        let state = match word.as_str() {
            "ONLINE" => Some(DatabaseOption::Online),
            "OFFLINE" => Some(DatabaseOption::Offline),
            "READ_ONLY" => Some(DatabaseOption::ReadOnly(true)),
            "READ_WRITE" => Some(DatabaseOption::ReadOnly(false)),
            _ => None,
        };
        if let Some(state) = state {
            self.advance();
            return Ok(state);
        }
        let text = if BARE.contains(&word.as_str()) {
            self.advance();
            word
        } else if ON_OFF.contains(&word.as_str()) {
            self.advance();
            self.eat(&TokenKind::Eq);
            let Some(value) = self.eat_one_of(&["ON", "OFF"]) else {
                return Err(self.error());
            };
            format!("{word} {value}")
        } else {
            let value = match word.as_str() {
                "PAGE_VERIFY" => {
                    self.advance();
                    self.eat_one_of(&["CHECKSUM", "TORN_PAGE_DETECTION", "NONE"])
                        .map(|v| format!("PAGE_VERIFY {v}"))
                }
                "CURSOR_DEFAULT" => {
                    self.advance();
                    self.eat_one_of(&["LOCAL", "GLOBAL"]).map(|v| format!("CURSOR_DEFAULT {v}"))
                }
                "PARAMETERIZATION" => {
                    self.advance();
                    self.eat_one_of(&["SIMPLE", "FORCED"]).map(|v| format!("PARAMETERIZATION {v}"))
                }
                "COMPATIBILITY_LEVEL" => {
                    self.advance();
                    self.expect(&TokenKind::Eq)?;
                    let line = self.peek().span.line;
                    let level = self.parse_unsigned::<u32>()?;
                    if ![100, 110, 120, 130, 140, 150, 160].contains(&level) {
                        return Err(ParseError {
                            number: 15048,
                            severity: 16,
                            state: 1,
                            line,
                            message: "Valid values of the database compatibility level are 100, \
                                      110, 120, 130, 140, 150, or 160."
                                .to_string(),
                        });
                    }
                    Some(format!("COMPATIBILITY_LEVEL = {level}"))
                }
                "TARGET_RECOVERY_TIME" => {
                    self.advance();
                    self.expect(&TokenKind::Eq)?;
                    let amount = self.parse_unsigned::<u32>()?;
                    self.eat_one_of(&["SECONDS", "MINUTES"])
                        .map(|unit| format!("TARGET_RECOVERY_TIME = {amount} {unit}"))
                }
                // Walden has no Query Store: turning it off (or clearing it) is accepted.
                "QUERY_STORE" => {
                    self.advance();
                    if self.eat(&TokenKind::Eq) {
                        self.eat_keyword("OFF").then(|| "QUERY_STORE = OFF".to_string())
                    } else {
                        self.eat_keyword("CLEAR").then(|| {
                            self.eat_keyword("ALL");
                            "QUERY_STORE CLEAR".to_string()
                        })
                    }
                }
                _ => None,
            };
            value.ok_or_else(|| self.error())?
        };
        Ok(DatabaseOption::Accepted(text))
    }

    // -----------------------------------------------------------------------------------------
    // Tables and indexes
    // -----------------------------------------------------------------------------------------

    fn parse_create_table(&mut self) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_object_name()?;
        let elements = self.parse_table_elements()?;
        let mut options = Vec::new();
        self.skip_storage_placement()?;
        if self.at_keyword("WITH") && self.peek_nth(1).kind == TokenKind::LParen {
            self.advance();
            self.advance();
            options = self.parse_comma_separated(Self::parse_table_option)?;
            self.expect(&TokenKind::RParen)?;
        }
        self.skip_storage_placement()?;
        let options = options.into_iter().flatten().collect();
        Ok(StatementKind::CreateTable(Box::new(CreateTable { name, elements, options })))
    }

    /// `ON filegroup`, `TEXTIMAGE_ON filegroup` and `FILESTREAM_ON filegroup` after a table's
    /// or an index's definition, as SSMS scripts write them. A Walden database keeps every
    /// table and index in its one data file, its only filegroup: `PRIMARY` (or `"default"`)
    /// is read and changes nothing; another name is error 1921.
    fn skip_storage_placement(&mut self) -> PResult<()> {
        loop {
            let on = self.at_keyword("ON")
                && !self.nth_is_keyword(1, "DELETE")
                && !self.nth_is_keyword(1, "UPDATE");
            if !(on || self.at_keyword("TEXTIMAGE_ON") || self.at_keyword("FILESTREAM_ON")) {
                return Ok(());
            }
            self.advance();
            let line = self.peek().span.line;
            let name = self.parse_identifier()?;
            if !name.value.eq_ignore_ascii_case("PRIMARY")
                && !name.value.eq_ignore_ascii_case("default")
            {
                return Err(ParseError {
                    number: 1921,
                    severity: 16,
                    state: 1,
                    line,
                    message: format!("Invalid filegroup '{}' specified.", name.value),
                });
            }
        }
    }

    /// `WITH (option = value, ...)` (or the old `WITH FILLFACTOR = n`) after an index's or a key
    /// constraint's columns, then its `ON filegroup`. The options tune how SQL Server stores
    /// and builds the index (fill factor, page locks, compression, online builds...), which a
    /// Walden B+tree does not use, so they are read and dropped; `BUCKET_COUNT` sizes the
    /// hash table of a memory-optimized hash index, which Walden builds as a B+tree. Two
    /// change what statements do, and are returned: `IGNORE_DUP_KEY = ON` (an INSERT skips
    /// duplicate rows) and `DROP_EXISTING = ON` (for CREATE INDEX).
    fn parse_index_options(&mut self) -> PResult<IndexOptions> {
        let mut options = IndexOptions::default();
        if self.at_keyword("WITH") && self.peek_nth(1).kind == TokenKind::LParen {
            self.advance();
            self.advance();
            loop {
                let option = self.parse_identifier()?.value.to_ascii_uppercase();
                self.expect(&TokenKind::Eq)?;
                let on = self.at_keyword("ON");
                // One token: ON, OFF, a number or a word (`DATA_COMPRESSION = PAGE`), and
                // `MINUTES` after `MAX_DURATION = n`. Partition lists are not read.
                if matches!(
                    self.peek().kind,
                    TokenKind::LParen | TokenKind::RParen | TokenKind::Eof
                ) {
                    return Err(self.error());
                }
                self.advance();
                self.eat_keyword("MINUTES");
                match option.as_str() {
                    "IGNORE_DUP_KEY" => options.ignore_dup_key = on,
                    "DROP_EXISTING" => options.drop_existing = on,
                    _ => {}
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(&TokenKind::RParen)?;
        } else if self.at_keyword("WITH") && self.nth_is_keyword(1, "FILLFACTOR") {
            self.advance();
            self.advance();
            self.expect(&TokenKind::Eq)?;
            self.parse_signed_number()?;
        }
        self.skip_storage_placement()?;
        Ok(options)
    }

    /// `MEMORY_OPTIMIZED = ON | OFF`, `DURABILITY = SCHEMA_AND_DATA | SCHEMA_ONLY`, or
    /// `DATA_COMPRESSION = NONE | ROW | PAGE` (`None`: a storage setting Walden's pages do not
    /// have, read and dropped).
    fn parse_table_option(&mut self) -> PResult<Option<TableOption>> {
        if self.eat_keyword("MEMORY_OPTIMIZED") {
            self.expect(&TokenKind::Eq)?;
            return Ok(Some(TableOption::MemoryOptimized(self.parse_on_off()?)));
        }
        if self.eat_keyword("DATA_COMPRESSION") {
            self.expect(&TokenKind::Eq)?;
            self.eat_one_of(&["NONE", "ROW", "PAGE"]).ok_or_else(|| self.error())?;
            return Ok(None);
        }
        self.expect_keyword("DURABILITY")?;
        self.expect(&TokenKind::Eq)?;
        match self.eat_one_of(&["SCHEMA_AND_DATA", "SCHEMA_ONLY"]) {
            Some("SCHEMA_AND_DATA") => Ok(Some(TableOption::SchemaAndData(true))),
            Some(_) => Ok(Some(TableOption::SchemaAndData(false))),
            None => Err(self.error()),
        }
    }

    /// `HASH` after `NONCLUSTERED` (a memory-optimized table's hash index, which Walden
    /// builds as a B+tree), then the index options and placement of a key constraint
    /// ([`Parser::parse_index_options`]); whether they say `IGNORE_DUP_KEY = ON`.
    fn parse_key_index_options(&mut self) -> PResult<bool> {
        self.eat_keyword("HASH");
        let options = self.parse_index_options()?;
        if options.drop_existing {
            return Err(self.error());
        }
        Ok(options.ignore_dup_key)
    }

    /// `(column or constraint, ...)`, shared by `CREATE TABLE` and `DECLARE @t TABLE`.
    /// SQL Server takes a comma after the last element (`(a int, b int,)`), which generated
    /// scripts leave when they drop the last column of a list: so does Walden.
    pub(super) fn parse_table_elements(&mut self) -> PResult<Vec<TableElement>> {
        self.expect(&TokenKind::LParen)?;
        let mut elements = vec![self.parse_table_element()?];
        // A key with a column list may follow a column without a comma, as SQL Server
        // reads `my_ts datetime2 CONSTRAINT pk PRIMARY KEY (id)`.
        while self.eat(&TokenKind::Comma) || self.at_keyed_table_constraint() {
            if self.at(&TokenKind::RParen) {
                break;
            }
            elements.push(self.parse_table_element()?);
        }
        self.expect(&TokenKind::RParen)?;
        Ok(elements)
    }

    pub(super) fn parse_table_element(&mut self) -> PResult<TableElement> {
        let constraint = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK"];
        let foreign_key = self.at_keyword("FOREIGN") && self.nth_is_keyword(1, "KEY");
        if foreign_key || constraint.iter().any(|keyword| self.at_keyword(keyword)) {
            return Ok(TableElement::Constraint(self.parse_table_constraint()?));
        }
        if self.eat_keyword("INDEX") {
            return Ok(TableElement::Index(self.parse_inline_index()?));
        }
        let name = self.parse_identifier()?;
        let mut options = Vec::new();
        let data_type = if self.eat_keyword("AS") {
            let expr = self.parse_expr()?;
            let persisted = self.eat_keyword("PERSISTED");
            options.push(ColumnOption::Computed { expr, persisted });
            crate::ast::DataType {
                name: ObjectName::simple(Ident::new("sql_variant".to_string())),
                params: Vec::new(),
            }
        } else {
            self.parse_data_type()?
        };
        while let Some(option) = self.parse_column_option()? {
            options.push(option);
        }
        Ok(TableElement::Column(ColumnDef { name, data_type, options }))
    }

    /// A table-level `INDEX name [UNIQUE] [CLUSTERED | NONCLUSTERED] (columns) [INCLUDE (...)]
    /// [WHERE filter] [WITH (...)]`, after `INDEX`. As for CREATE INDEX, the included columns
    /// and the filter are read and dropped: every index holds whole rows' keys.
    fn parse_inline_index(&mut self) -> PResult<InlineIndex> {
        let name = self.parse_identifier()?;
        let unique = self.eat_keyword("UNIQUE");
        let clustering = self.parse_clustering();
        self.eat_keyword("HASH");
        let columns = self.parse_index_columns()?;
        if self.eat_keyword("INCLUDE") {
            self.parse_identifier_list()?;
        }
        if self.eat_keyword("WHERE") {
            self.parse_expr()?;
        }
        let ignore_dup_key = self.parse_key_index_options()?;
        Ok(InlineIndex { name, unique, clustering, columns, ignore_dup_key })
    }

    /// `[CONSTRAINT name] PRIMARY KEY ... | UNIQUE ... | CHECK (...)` at table level.
    fn parse_table_constraint(&mut self) -> PResult<TableConstraint> {
        let name = self.parse_constraint_name()?;
        let kind = if self.eat_keyword("PRIMARY") {
            self.expect_keyword("KEY")?;
            let clustering = self.parse_clustering();
            self.eat_keyword("HASH");
            let columns = self.parse_index_columns()?;
            let ignore_dup_key = self.parse_key_index_options()?;
            TableConstraintKind::PrimaryKey { clustering, columns, ignore_dup_key }
        } else if self.eat_keyword("UNIQUE") {
            let clustering = self.parse_clustering();
            self.eat_keyword("HASH");
            let columns = self.parse_index_columns()?;
            let ignore_dup_key = self.parse_key_index_options()?;
            TableConstraintKind::Unique { clustering, columns, ignore_dup_key }
        } else if self.eat_keyword("CHECK") {
            self.skip_not_for_replication()?;
            TableConstraintKind::Check(self.parse_check_condition()?)
        } else if self.eat_keyword("FOREIGN") {
            self.expect_keyword("KEY")?;
            let columns = self.parse_identifier_list()?;
            self.expect_keyword("REFERENCES")?;
            TableConstraintKind::ForeignKey { columns, reference: self.parse_references()? }
        } else {
            return Err(self.error());
        };
        Ok(TableConstraint { name, kind })
    }

    /// What follows `REFERENCES`: `table [(column, ...)] [ON DELETE action] [ON UPDATE
    /// action] [NOT FOR REPLICATION]`, the two ON clauses in either order.
    fn parse_references(&mut self) -> PResult<ForeignKeyReference> {
        let table = self.parse_object_name()?;
        let columns = if self.peek().kind == TokenKind::LParen {
            self.parse_identifier_list()?
        } else {
            Vec::new()
        };
        let mut reference = ForeignKeyReference {
            table,
            columns,
            on_delete: ReferentialAction::NoAction,
            on_update: ReferentialAction::NoAction,
        };
        while self.at_keyword("ON")
            && (self.nth_is_keyword(1, "DELETE") || self.nth_is_keyword(1, "UPDATE"))
        {
            self.advance();
            let delete = self.eat_keyword("DELETE");
            if !delete {
                self.expect_keyword("UPDATE")?;
            }
            let action = if self.eat_keyword("CASCADE") {
                ReferentialAction::Cascade
            } else if self.eat_keyword("NO") {
                self.expect_keyword("ACTION")?;
                ReferentialAction::NoAction
            } else {
                self.expect_keyword("SET")?;
                if self.eat_keyword("NULL") {
                    ReferentialAction::SetNull
                } else {
                    self.expect_keyword("DEFAULT")?;
                    ReferentialAction::SetDefault
                }
            };
            if delete {
                reference.on_delete = action;
            } else {
                reference.on_update = action;
            }
        }
        self.skip_not_for_replication()?;
        Ok(reference)
    }

    /// `NOT FOR REPLICATION` after IDENTITY, CHECK, a foreign key or a trigger's events: it
    /// exempts replication agents' changes, and Walden has no replication, so it is read and
    /// changes nothing.
    fn skip_not_for_replication(&mut self) -> PResult<()> {
        if self.at_keyword("NOT") && self.nth_is_keyword(1, "FOR") {
            self.advance();
            self.advance();
            self.expect_keyword("REPLICATION")?;
        }
        Ok(())
    }

    /// One column option, or `None` when the column definition is complete.
    fn parse_column_option(&mut self) -> PResult<Option<ColumnOption>> {
        if self.eat_keyword("NULL") {
            return Ok(Some(ColumnOption::Null));
        }
        if self.at_keyword("NOT") && self.nth_is_keyword(1, "NULL") {
            self.advance();
            self.advance();
            return Ok(Some(ColumnOption::NotNull));
        }
        if self.eat_keyword("COLLATE") {
            return Ok(Some(ColumnOption::Collate(self.parse_identifier()?)));
        }
        if self.eat_keyword("IDENTITY") {
            let spec = self.parse_identity_spec()?;
            self.skip_not_for_replication()?;
            return Ok(Some(ColumnOption::Identity(spec)));
        }
        if self.eat_keyword("ROWGUIDCOL") {
            return Ok(Some(ColumnOption::RowGuidCol));
        }
        if self.eat_keyword("INDEX") {
            let name = self.parse_identifier()?;
            let clustering = self.parse_clustering();
            self.parse_key_index_options()?;
            return Ok(Some(ColumnOption::Index { name, clustering }));
        }
        if self.at_keyed_table_constraint() {
            return Ok(None);
        }
        let name = self.parse_constraint_name()?;
        let kind = if self.eat_keyword("PRIMARY") {
            self.expect_keyword("KEY")?;
            let clustering = self.parse_clustering();
            let ignore_dup_key = self.parse_key_index_options()?;
            ColumnConstraintKind::PrimaryKey { clustering, ignore_dup_key }
        } else if self.eat_keyword("UNIQUE") {
            let clustering = self.parse_clustering();
            let ignore_dup_key = self.parse_key_index_options()?;
            ColumnConstraintKind::Unique { clustering, ignore_dup_key }
        } else if self.eat_keyword("DEFAULT") {
            ColumnConstraintKind::Default(self.parse_expr()?)
        } else if self.eat_keyword("CHECK") {
            self.skip_not_for_replication()?;
            ColumnConstraintKind::Check(self.parse_check_condition()?)
        } else if self.at_keyword("REFERENCES")
            || (self.at_keyword("FOREIGN") && self.nth_is_keyword(1, "KEY"))
        {
            if self.eat_keyword("FOREIGN") {
                self.expect_keyword("KEY")?;
            }
            self.expect_keyword("REFERENCES")?;
            ColumnConstraintKind::References(self.parse_references()?)
        } else if name.is_some() {
            return Err(self.error());
        } else {
            return Ok(None);
        };
        Ok(Some(ColumnOption::Constraint(ColumnConstraint { name, kind })))
    }

    /// Whether the next tokens are `[CONSTRAINT name] PRIMARY KEY | UNIQUE [CLUSTERED |
    /// NONCLUSTERED] (`: a table-level key, which ends the column before it.
    fn at_keyed_table_constraint(&self) -> bool {
        let mut n = if self.at_keyword("CONSTRAINT") { 2 } else { 0 };
        if self.nth_is_keyword(n, "PRIMARY") && self.nth_is_keyword(n + 1, "KEY") {
            n += 2;
        } else if self.nth_is_keyword(n, "UNIQUE") {
            n += 1;
        } else {
            return false;
        }
        if self.nth_is_keyword(n, "CLUSTERED") || self.nth_is_keyword(n, "NONCLUSTERED") {
            n += 1;
        }
        self.peek_nth(n).kind == TokenKind::LParen
    }

    /// `[(seed, increment)]` after `IDENTITY`.
    fn parse_identity_spec(&mut self) -> PResult<Option<IdentitySpec>> {
        if !self.eat(&TokenKind::LParen) {
            return Ok(None);
        }
        let seed = self.parse_signed_number()?;
        self.expect(&TokenKind::Comma)?;
        let increment = self.parse_signed_number()?;
        self.expect(&TokenKind::RParen)?;
        Ok(Some(IdentitySpec { seed, increment }))
    }

    fn parse_constraint_name(&mut self) -> PResult<Option<Ident>> {
        if self.eat_keyword("CONSTRAINT") {
            self.parse_identifier().map(Some)
        } else {
            Ok(None)
        }
    }

    fn parse_clustering(&mut self) -> Option<Clustering> {
        match self.eat_one_of(&["CLUSTERED", "NONCLUSTERED"])? {
            "CLUSTERED" => Some(Clustering::Clustered),
            _ => Some(Clustering::Nonclustered),
        }
    }

    /// `(column [ASC | DESC], ...)`.
    fn parse_index_columns(&mut self) -> PResult<Vec<IndexColumn>> {
        self.expect(&TokenKind::LParen)?;
        let columns = self.parse_comma_separated(|p| {
            let name = p.parse_identifier()?;
            let descending = p.eat_one_of(&["ASC", "DESC"]) == Some("DESC");
            Ok(IndexColumn { name, descending })
        })?;
        self.expect(&TokenKind::RParen)?;
        Ok(columns)
    }

    /// `(condition)` after `CHECK`.
    fn parse_check_condition(&mut self) -> PResult<Expr> {
        self.expect(&TokenKind::LParen)?;
        let condition = self.parse_expr()?;
        self.expect(&TokenKind::RParen)?;
        Ok(condition)
    }

    /// `[UNIQUE] [CLUSTERED | NONCLUSTERED] INDEX name ON table (columns) [INCLUDE (...)]
    /// [WHERE ...]`, after `CREATE`.
    fn parse_create_index(&mut self) -> PResult<StatementKind> {
        let unique = self.eat_keyword("UNIQUE");
        let clustering = self.parse_clustering();
        self.expect_keyword("INDEX")?;
        let name = self.parse_identifier()?;
        self.expect_keyword("ON")?;
        let table = self.parse_object_name()?;
        let columns = self.parse_index_columns()?;
        let include =
            if self.eat_keyword("INCLUDE") { self.parse_identifier_list()? } else { Vec::new() };
        let filter = if self.eat_keyword("WHERE") { Some(self.parse_expr()?) } else { None };
        let IndexOptions { drop_existing, ignore_dup_key } = self.parse_index_options()?;
        let index = CreateIndex {
            unique,
            clustering,
            name,
            table,
            columns,
            include,
            filter,
            drop_existing,
            ignore_dup_key,
        };
        Ok(StatementKind::CreateIndex(Box::new(index)))
    }

    // -----------------------------------------------------------------------------------------
    // Sequences
    // -----------------------------------------------------------------------------------------

    /// `STATISTICS name ON table (column, ...) [WHERE filter] [WITH option [= value], ...]`,
    /// after `CREATE`. The filter is read and dropped (Walden's statistics are unfiltered).
    fn parse_create_statistics(&mut self) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_identifier()?;
        self.expect_keyword("ON")?;
        let table = self.parse_object_name()?;
        let columns = self.parse_identifier_list()?;
        if self.eat_keyword("WHERE") {
            self.parse_expr()?;
        }
        let options = self.parse_statistics_options()?;
        Ok(StatementKind::CreateStatistics { name, table, columns, options })
    }

    /// `CREATE TYPE name FROM base_type [NULL | NOT NULL]`, `CREATE TYPE name AS TABLE (...)`.
    fn parse_create_type(&mut self) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_object_name()?;
        let definition = if self.eat_keyword("FROM") {
            let data_type = self.parse_data_type()?;
            let nullable = self.eat_nullability();
            TypeDefinition::Alias { data_type, nullable }
        } else {
            self.expect_keyword("AS")?;
            self.expect_keyword("TABLE")?;
            TypeDefinition::Table(self.parse_table_elements()?)
        };
        Ok(StatementKind::CreateType(Box::new(CreateType { name, definition })))
    }

    fn parse_create_sequence(&mut self) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_object_name()?;
        let mut options = Vec::new();
        while let Some(option) = self.parse_sequence_option()? {
            options.push(option);
        }
        Ok(StatementKind::CreateSequence(Box::new(CreateSequence { name, options })))
    }

    /// One sequence option, or `None` when the statement is complete.
    fn parse_sequence_option(&mut self) -> PResult<Option<SequenceOption>> {
        let option = if self.eat_keyword("AS") {
            SequenceOption::DataType(self.parse_data_type()?)
        } else if self.eat_keyword("START") {
            self.expect_keyword("WITH")?;
            SequenceOption::StartWith(self.parse_signed_number()?)
        } else if self.eat_keyword("INCREMENT") {
            self.expect_keyword("BY")?;
            SequenceOption::IncrementBy(self.parse_signed_number()?)
        } else if self.eat_keyword("MINVALUE") {
            SequenceOption::MinValue(Some(self.parse_signed_number()?))
        } else if self.eat_keyword("MAXVALUE") {
            SequenceOption::MaxValue(Some(self.parse_signed_number()?))
        } else if self.eat_keyword("CYCLE") {
            SequenceOption::Cycle(true)
        } else if self.eat_keyword("CACHE") {
            let size =
                if self.at(&TokenKind::Integer) { Some(self.parse_signed_number()?) } else { None };
            SequenceOption::Cache(size)
        } else if self.at_keyword("NO") {
            self.advance();
            match self.eat_one_of(&["MINVALUE", "MAXVALUE", "CYCLE", "CACHE"]) {
                Some("MINVALUE") => SequenceOption::MinValue(None),
                Some("MAXVALUE") => SequenceOption::MaxValue(None),
                Some("CYCLE") => SequenceOption::Cycle(false),
                Some(_) => SequenceOption::NoCache,
                None => return Err(self.error()),
            }
        } else {
            return Ok(None);
        };
        Ok(Some(option))
    }

    // -----------------------------------------------------------------------------------------
    // Views
    // -----------------------------------------------------------------------------------------

    /// `VIEW name [(columns)] [WITH options] AS query [WITH CHECK OPTION]`, which must end the
    /// batch, as in SQL Server.
    fn parse_view(&mut self, mode: CreateMode) -> PResult<StatementKind> {
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
    fn parse_function(&mut self, mode: CreateMode) -> PResult<StatementKind> {
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
    fn parse_trigger(&mut self, mode: CreateMode) -> PResult<StatementKind> {
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
    pub(super) fn parse_enable_trigger(
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
    fn parse_procedure(&mut self, mode: CreateMode) -> PResult<StatementKind> {
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
        let value = super::identifier_value(self.peek());
        self.advance();
        Ok(Expr { kind: ExprKind::Literal(Literal::String { value, national: false }), span })
    }

    // -----------------------------------------------------------------------------------------
    // DROP and TRUNCATE
    // -----------------------------------------------------------------------------------------

    /// `DROP DATABASE | TABLE | SEQUENCE | PROC[EDURE] | INDEX [IF EXISTS] ...`.
    pub(super) fn parse_drop(&mut self) -> PResult<StatementKind> {
        self.advance();
        const KINDS: [&str; 13] = [
            "STATISTICS",
            "SYNONYM",
            "SCHEMA",
            "TYPE",
            "DATABASE",
            "TABLE",
            "SEQUENCE",
            "PROC",
            "PROCEDURE",
            "INDEX",
            "VIEW",
            "FUNCTION",
            "TRIGGER",
        ];
        let kind = self.eat_one_of(&KINDS).ok_or_else(|| self.error())?;
        let if_exists = self.at_keyword("IF") && self.nth_is_keyword(1, "EXISTS");
        if if_exists {
            self.advance();
            self.advance();
        }
        let kind = match kind {
            "DATABASE" => DropKind::Database,
            "TABLE" => DropKind::Table,
            "SEQUENCE" => DropKind::Sequence,
            "VIEW" => DropKind::View,
            "FUNCTION" => DropKind::Function,
            "TRIGGER" => DropKind::Trigger,
            "SCHEMA" => DropKind::Schema,
            "TYPE" => DropKind::Type,
            "STATISTICS" => DropKind::Statistics,
            "SYNONYM" => DropKind::Synonym,
            "INDEX" => {
                let indexes = self.parse_comma_separated(Self::parse_index_ref)?;
                return Ok(StatementKind::DropIndex(Box::new(DropIndex { if_exists, indexes })));
            }
            _ => DropKind::Procedure,
        };
        let names = self.parse_comma_separated(|p| match kind {
            DropKind::Database | DropKind::Schema => p.parse_identifier().map(ObjectName::simple),
            _ => p.parse_object_name(),
        })?;
        // `DROP TRIGGER name, ... ON DATABASE | ALL SERVER`: DDL triggers.
        let kind = if kind == DropKind::Trigger && self.eat_keyword("ON") {
            if self.eat_keyword("DATABASE") {
                DropKind::DatabaseTrigger
            } else {
                self.expect_keyword("ALL")?;
                self.expect_keyword("SERVER")?;
                DropKind::ServerTrigger
            }
        } else {
            kind
        };
        Ok(StatementKind::Drop(Box::new(DropObjects { kind, if_exists, names })))
    }

    /// `index ON table`, or the older `table.index`.
    fn parse_index_ref(&mut self) -> PResult<IndexRef> {
        let first = self.pos;
        let mut parts = self.parse_name_parts()?;
        if self.eat_keyword("ON") {
            let Ok([Some(name)]) = <[Option<Ident>; 1]>::try_from(parts) else {
                return Err(self.error_at(first));
            };
            return Ok(IndexRef { name, table: self.parse_object_name()? });
        }
        let name = match (parts.len(), parts.pop()) {
            (2.., Some(Some(name))) => name,
            _ => return Err(self.error()),
        };
        Ok(IndexRef { name, table: self.object_name_from_parts(parts, first)? })
    }

    /// `TRUNCATE TABLE name`.
    pub(super) fn parse_truncate(&mut self) -> PResult<StatementKind> {
        self.advance();
        self.expect_keyword("TABLE")?;
        Ok(StatementKind::TruncateTable(self.parse_object_name()?))
    }
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
