//! `INSERT BULK table (column type [COLLATE name] [NULL | NOT NULL], ...) [WITH (option, ...)]`,
//! the statement of the TDS bulk load. The options are SQL Server's: `CHECK_CONSTRAINTS`,
//! `FIRE_TRIGGERS`, `KEEP_NULLS`, `KEEP_IDENTITY`, `TABLOCK`, `ROWS_PER_BATCH = n`,
//! `KILOBYTES_PER_BATCH = n` and `ORDER (column [ASC | DESC], ...)`, in any order.

use super::{PResult, Parser};
use crate::ast::{BulkColumn, BulkOptions, InsertBulk, StatementKind};
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
}
