//! `CREATE DATABASE` and `ALTER DATABASE`: file specifications (`SIZE`, `MAXSIZE`,
//! `FILEGROWTH` with their units), adding, modifying and removing files, and the `SET` options
//! (recovery model, delayed durability, snapshot isolation and the rest). Only the syntax is
//! checked here; what a size or option means is the engine's business.

use super::super::{PResult, Parser};
use crate::ast::{
    AlterDatabase, CreateDatabase, DatabaseFileChange, DatabaseOption, DatabaseRef,
    DelayedDurability, FileGrowth, FileSize, FileSpec, MaxSize, RecoveryModel, SizeUnit,
    StatementKind,
};
use crate::error::ParseError;
use crate::lexer::TokenKind;

impl<'a> Parser<'a> {
    /// `CREATE DATABASE name [ON [PRIMARY] (file), ...] [LOG ON (file), ...]`.
    pub(super) fn parse_create_database(&mut self) -> PResult<StatementKind> {
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

    pub(in crate::parser) fn parse_string(&mut self) -> PResult<String> {
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
    pub(super) fn parse_alter_database(&mut self) -> PResult<StatementKind> {
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
}
