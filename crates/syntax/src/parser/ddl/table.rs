//! `CREATE TABLE` and what a table definition shares with `ALTER TABLE`: column definitions
//! and their options (`IDENTITY`, `DEFAULT`, `NULL`, computed columns), inline indexes, column and
//! table constraints (`PRIMARY KEY`, `UNIQUE`, `FOREIGN KEY ... REFERENCES`, `CHECK`) with their
//! names, clustering and index options, and the storage placement clauses that are parsed and
//! ignored.

use super::super::{PResult, Parser};
use super::IndexOptions;
use crate::ast::{
    Clustering, ColumnConstraint, ColumnConstraintKind, ColumnDef, ColumnOption, CreateTable, Expr,
    ForeignKeyReference, Ident, IdentitySpec, IndexColumn, InlineIndex, ObjectName,
    ReferentialAction, StatementKind, TableConstraint, TableConstraintKind, TableElement,
    TableOption,
};
use crate::error::ParseError;
use crate::lexer::TokenKind;

impl<'a> Parser<'a> {
    pub(super) fn parse_create_table(&mut self) -> PResult<StatementKind> {
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
    pub(super) fn parse_index_options(&mut self) -> PResult<IndexOptions> {
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
    pub(in crate::parser) fn parse_table_elements(&mut self) -> PResult<Vec<TableElement>> {
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

    pub(in crate::parser) fn parse_table_element(&mut self) -> PResult<TableElement> {
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

    pub(super) fn parse_clustering(&mut self) -> Option<Clustering> {
        match self.eat_one_of(&["CLUSTERED", "NONCLUSTERED"])? {
            "CLUSTERED" => Some(Clustering::Clustered),
            _ => Some(Clustering::Nonclustered),
        }
    }

    /// `(column [ASC | DESC], ...)`.
    pub(super) fn parse_index_columns(&mut self) -> PResult<Vec<IndexColumn>> {
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
}
