//! `INSERT BULK table (column type [COLLATE name] [NULL | NOT NULL], ...) [WITH (option, ...)]`,
//! the statement of the TDS bulk load. The options are SQL Server's: `CHECK_CONSTRAINTS`,
//! `FIRE_TRIGGERS`, `KEEP_NULLS`, `KEEP_IDENTITY`, `TABLOCK`, `ROWS_PER_BATCH = n`,
//! `KILOBYTES_PER_BATCH = n` and `ORDER (column [ASC | DESC], ...)`, in any order.
//!
//! `BULK INSERT table FROM 'file' [WITH (option [,] ...)]`, which reads the rows from a data
//! file on the server's machine, and `OPENROWSET(BULK 'file', SINGLE_BLOB | SINGLE_CLOB |
//! SINGLE_NCLOB)`, which reads a whole file as one value.

use super::{PResult, Parser};
use crate::ast::{
    BulkColumn, BulkInsert, BulkInsertOptions, BulkOptions, InsertBulk, SingleKind, StatementKind,
    TableSource,
};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// After `INSERT`, at `BULK`.
    pub(super) fn parse_insert_bulk(&mut self) -> PResult<StatementKind> {
        self.expect_keyword("BULK")?;
        let table = self.parse_object_name()?;
        self.expect(&TokenKind::LParen)?;
        let columns = self.parse_comma_separated(Self::parse_bulk_column)?;
        self.expect(&TokenKind::RParen)?;
        let mut options = BulkOptions::default();
        if self.eat_keyword("WITH") {
            self.expect(&TokenKind::LParen)?;
            self.parse_comma_separated(|p| p.parse_bulk_option(&mut options))?;
            self.expect(&TokenKind::RParen)?;
        }
        Ok(StatementKind::InsertBulk(Box::new(InsertBulk { table, columns, options })))
    }

    fn parse_bulk_column(&mut self) -> PResult<BulkColumn> {
        let name = self.parse_identifier()?;
        let ty = self.parse_data_type()?;
        let collation =
            if self.eat_keyword("COLLATE") { Some(self.parse_identifier()?) } else { None };
        let nullable = self.eat_nullability();
        Ok(BulkColumn { name, ty, collation, nullable })
    }

    fn parse_bulk_option(&mut self, options: &mut BulkOptions) -> PResult<()> {
        if self.eat_keyword("ORDER") {
            self.expect(&TokenKind::LParen)?;
            options.order = self.parse_comma_separated(|p| {
                let column = p.parse_identifier()?;
                let descending = matches!(p.eat_one_of(&["ASC", "DESC"]), Some("DESC"));
                Ok((column, descending))
            })?;
            return self.expect(&TokenKind::RParen);
        }
        let Some(word) = self.peek_word_upper() else { return Err(self.error()) };
        let flag = match word.as_str() {
            "CHECK_CONSTRAINTS" => &mut options.check_constraints,
            "FIRE_TRIGGERS" => &mut options.fire_triggers,
            "KEEP_NULLS" => &mut options.keep_nulls,
            "KEEP_IDENTITY" => &mut options.keep_identity,
            "TABLOCK" => &mut options.tablock,
            "ROWS_PER_BATCH" | "KILOBYTES_PER_BATCH" => {
                self.advance();
                self.expect(&TokenKind::Eq)?;
                let n = self.parse_unsigned::<u64>()?;
                if word == "ROWS_PER_BATCH" {
                    options.rows_per_batch = Some(n);
                } else {
                    options.kilobytes_per_batch = Some(n);
                }
                return Ok(());
            }
            _ => return Err(self.error()),
        };
        *flag = true;
        self.advance();
        Ok(())
    }

    /// At `BULK`, of `BULK INSERT`. SQL Server separates the options with optional commas.
    pub(super) fn parse_bulk_insert(&mut self) -> PResult<StatementKind> {
        self.expect_keyword("BULK")?;
        self.expect_keyword("INSERT")?;
        let table = self.parse_object_name()?;
        self.expect_keyword("FROM")?;
        let file = self.parse_string()?;
        let mut options = BulkInsertOptions::default();
        if self.eat_keyword("WITH") {
            self.expect(&TokenKind::LParen)?;
            loop {
                self.parse_bulk_insert_option(&mut options)?;
                self.eat(&TokenKind::Comma);
                if self.eat(&TokenKind::RParen) {
                    break;
                }
            }
        }
        Ok(StatementKind::BulkInsert(Box::new(BulkInsert { table, file, options })))
    }

    fn parse_bulk_insert_option(&mut self, options: &mut BulkInsertOptions) -> PResult<()> {
        let Some(word) = self.peek_word_upper() else { return Err(self.error()) };
        let flag = match word.as_str() {
            "CHECK_CONSTRAINTS" => Some(&mut options.load.check_constraints),
            "FIRE_TRIGGERS" => Some(&mut options.load.fire_triggers),
            "KEEPNULLS" => Some(&mut options.load.keep_nulls),
            "KEEPIDENTITY" => Some(&mut options.load.keep_identity),
            "TABLOCK" => Some(&mut options.load.tablock),
            _ => None,
        };
        if let Some(flag) = flag {
            *flag = true;
            self.advance();
            return Ok(());
        }
        if word == "ORDER" {
            return self.parse_bulk_option(&mut options.load);
        }
        let number = match word.as_str() {
            "BATCHSIZE" => Some(&mut options.batch_size),
            "FIRSTROW" => Some(&mut options.first_row),
            "LASTROW" => Some(&mut options.last_row),
            "MAXERRORS" => Some(&mut options.max_errors),
            "ROWS_PER_BATCH" => Some(&mut options.load.rows_per_batch),
            "KILOBYTES_PER_BATCH" => Some(&mut options.load.kilobytes_per_batch),
            _ => None,
        };
        if let Some(number) = number {
            self.advance();
            self.expect(&TokenKind::Eq)?;
            *number = Some(self.parse_unsigned::<u64>()?);
            return Ok(());
        }
        let text = match word.as_str() {
            "CODEPAGE" => &mut options.code_page,
            "DATAFILETYPE" => &mut options.data_file_type,
            "FIELDTERMINATOR" => &mut options.field_terminator,
            "ROWTERMINATOR" => &mut options.row_terminator,
            "ERRORFILE" => &mut options.error_file,
            "FORMAT" => &mut options.format,
            "FIELDQUOTE" => &mut options.field_quote,
            "FORMATFILE" => &mut options.format_file,
            _ => return Err(self.error()),
        };
        self.advance();
        self.expect(&TokenKind::Eq)?;
        *text = Some(self.parse_string()?);
        Ok(())
    }

    /// After `OPENROWSET (`, at `BULK`: `BULK 'file', SINGLE_BLOB | SINGLE_CLOB |
    /// SINGLE_NCLOB) [AS] alias [(column)]`. The format-file forms are a syntax error here.
    pub(super) fn parse_openrowset_bulk(&mut self) -> PResult<TableSource> {
        self.expect_keyword("BULK")?;
        let file = self.parse_string()?;
        self.expect(&TokenKind::Comma)?;
        let kind = match self.eat_one_of(&["SINGLE_BLOB", "SINGLE_CLOB", "SINGLE_NCLOB"]) {
            Some("SINGLE_BLOB") => SingleKind::Blob,
            Some("SINGLE_CLOB") => SingleKind::Clob,
            Some(_) => SingleKind::Nclob,
            None => return Err(self.error()),
        };
        self.expect(&TokenKind::RParen)?;
        let alias = self.parse_table_alias()?;
        let columns = if alias.is_some() && self.at(&TokenKind::LParen) {
            self.parse_identifier_list()?
        } else {
            Vec::new()
        };
        Ok(TableSource::OpenRowsetBulk { file, kind, alias, columns })
    }
}

#[cfg(test)]
mod tests {
    use crate::parse_batch;

    #[test]
    fn bulk_statements_and_index_options_print_back_as_they_parse() {
        for sql in [
            "BULK INSERT db.dbo.t FROM 'C:\\data\\t.csv' WITH (FORMAT = 'CSV', FIRSTROW = 2, \
             FIELDQUOTE = '\"', FIELDTERMINATOR = ',', ROWTERMINATOR = '0x0a', TABLOCK)",
            "BULK INSERT t FROM 'x.txt' WITH (KEEPNULLS KEEPIDENTITY BATCHSIZE = 10 MAXERRORS = 0 \
             ERRORFILE = 'e.txt' CODEPAGE = 'ACP' DATAFILETYPE = 'widechar' ORDER (a DESC))",
            "BULK INSERT t FROM 'it''s.txt'",
            "SELECT BulkColumn FROM OPENROWSET(BULK 'f.json', SINGLE_CLOB) AS j",
            "SELECT c FROM OPENROWSET(BULK N'f.bin', SINGLE_BLOB) b (c) JOIN t ON 1 = 1",
            "CREATE TABLE t (a INT PRIMARY KEY WITH (IGNORE_DUP_KEY = ON), b INT, \
             CONSTRAINT u UNIQUE (b) WITH (IGNORE_DUP_KEY = ON), INDEX ix UNIQUE (a, b) \
             WITH (IGNORE_DUP_KEY = ON))",
            "CREATE UNIQUE INDEX ix ON t (a) WITH (IGNORE_DUP_KEY = ON, DROP_EXISTING = ON)",
            "DROP STATISTICS t.s, dbo.t.s2",
            "ALTER DATABASE d SET OFFLINE, READ_ONLY WITH ROLLBACK IMMEDIATE",
        ] {
            let printed = parse_batch(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")).to_string();
            let again = parse_batch(&printed).unwrap_or_else(|e| panic!("{printed}: {e:?}"));
            assert_eq!(printed, again.to_string(), "{sql}");
        }
    }
}
