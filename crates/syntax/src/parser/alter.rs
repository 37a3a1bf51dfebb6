//! `ALTER TABLE`: `ADD` columns and constraints, `ALTER COLUMN`, `DROP COLUMN` and
//! `DROP CONSTRAINT`.

use super::{PResult, Parser};
use crate::ast::{AlterAdd, AlterDrop, AlterTable, AlterTableAction, StatementKind};

impl Parser<'_> {
    /// `TABLE name action`, after `ALTER`.
    pub(super) fn parse_alter_table(&mut self) -> PResult<StatementKind> {
        self.advance();
        let table = self.parse_object_name()?;
        if let Some(verb) = self.eat_one_of(&["ENABLE", "DISABLE"]) {
            return self.parse_enable_trigger(verb == "ENABLE", Some(table));
        }
        let action = if self.eat_keyword("ALTER") {
            self.parse_alter_column()?
        } else if self.eat_keyword("DROP") {
            // A COLUMN or CONSTRAINT keyword holds for the items after it.
            let mut column = false;
            AlterTableAction::Drop(self.parse_comma_separated(|p| {
                match p.eat_one_of(&["COLUMN", "CONSTRAINT"]) {
                    Some("COLUMN") => column = true,
                    Some(_) => column = false,
                    None => {}
                }
                let if_exists = p.at_keyword("IF") && p.nth_is_keyword(1, "EXISTS");
                if if_exists {
                    p.advance();
                    p.advance();
                }
                Ok(AlterDrop { column, if_exists, name: p.parse_identifier()? })
            })?)
        } else {
            let with = self.eat_keyword("WITH");
            let nocheck = if with {
                match self.eat_one_of(&["CHECK", "NOCHECK"]) {
                    Some(check) => check == "NOCHECK",
                    None => return Err(self.error()),
                }
            } else {
                false
            };
            let toggles = (self.at_keyword("CHECK") || self.at_keyword("NOCHECK"))
                && self.nth_is_keyword(1, "CONSTRAINT");
            if toggles {
                let enable = self.eat_keyword("CHECK");
                if !enable {
                    self.expect_keyword("NOCHECK")?;
                }
                self.expect_keyword("CONSTRAINT")?;
                let names = if self.eat_keyword("ALL") {
                    None
                } else {
                    Some(self.parse_comma_separated(Self::parse_identifier)?)
                };
                let with_check = with && !nocheck;
                let action = AlterTableAction::CheckConstraints { with_check, enable, names };
                return Ok(StatementKind::AlterTable(Box::new(AlterTable { table, action })));
            }
            self.expect_keyword("ADD")?;
            let items = self.parse_comma_separated(Self::parse_alter_add)?;
            AlterTableAction::Add { nocheck, items }
        };
        Ok(StatementKind::AlterTable(Box::new(AlterTable { table, action })))
    }

    /// `COLUMN name type [COLLATE name] [NULL | NOT NULL]`, after `ALTER TABLE name ALTER`.
    fn parse_alter_column(&mut self) -> PResult<AlterTableAction> {
        self.expect_keyword("COLUMN")?;
        let column = self.parse_identifier()?;
        let data_type = self.parse_data_type()?;
        let (mut collation, mut nullable) = (None, None);
        loop {
            if self.eat_keyword("COLLATE") {
                collation = Some(self.parse_identifier()?);
            } else if let Some(n) = self.eat_nullability() {
                nullable = Some(n);
            } else {
                break;
            }
        }
        Ok(AlterTableAction::AlterColumn { column, data_type, collation, nullable })
    }

    /// One item of `ADD`: a column, a table constraint, or `DEFAULT ... FOR column`.
    fn parse_alter_add(&mut self) -> PResult<AlterAdd> {
        let named_default = self.at_keyword("CONSTRAINT") && self.nth_is_keyword(2, "DEFAULT");
        if named_default || self.at_keyword("DEFAULT") {
            let name =
                if self.eat_keyword("CONSTRAINT") { Some(self.parse_identifier()?) } else { None };
            self.expect_keyword("DEFAULT")?;
            let value = self.parse_expr()?;
            self.expect_keyword("FOR")?;
            let column = self.parse_identifier()?;
            let with_values = self.parse_with_values()?;
            return Ok(AlterAdd::DefaultFor { name, value, column, with_values });
        }
        let element = self.parse_table_element()?;
        let with_values = self.parse_with_values()?;
        Ok(AlterAdd::Element { element, with_values })
    }

    /// `[WITH VALUES]`.
    fn parse_with_values(&mut self) -> PResult<bool> {
        if self.at_keyword("WITH") && self.nth_is_keyword(1, "VALUES") {
            self.advance();
            self.advance();
            return Ok(true);
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::{AlterAdd, AlterTableAction, StatementKind};
    use crate::parse_batch;

    fn action(sql: &str) -> AlterTableAction {
        let batch = parse_batch(sql).unwrap();
        match batch.statements.into_iter().next().map(|s| s.kind) {
            Some(StatementKind::AlterTable(a)) => a.action,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn alter_table_statements_print_back_as_they_parse() {
        for sql in [
            "ALTER TABLE dbo.t ADD c INT NULL, d VARCHAR(10) NOT NULL CONSTRAINT df DEFAULT 'x'",
            "ALTER TABLE t ADD c INT NULL DEFAULT 7 WITH VALUES, id BIGINT IDENTITY(1, 1)",
            "ALTER TABLE t WITH NOCHECK ADD CONSTRAINT ck CHECK (a > 0)",
            "ALTER TABLE t WITH CHECK ADD CONSTRAINT df DEFAULT (0) FOR a, DEFAULT 1 FOR b",
            "ALTER TABLE [my table] ALTER COLUMN [a b] NVARCHAR(MAX) COLLATE Latin1_General_CI_AS \
             NULL",
            "ALTER TABLE t ALTER COLUMN a DECIMAL(10, 2) NOT NULL",
            "ALTER TABLE t DROP COLUMN a, b, CONSTRAINT ck, COLUMN IF EXISTS c",
            "ALTER TABLE t DROP IF EXISTS ck",
        ] {
            let printed = parse_batch(sql).unwrap().to_string();
            let again = parse_batch(&printed).unwrap().to_string();
            assert_eq!(printed, again, "{sql}");
        }
    }

    #[test]
    fn drop_keywords_carry_over_and_with_values_is_kept() {
        let AlterTableAction::Drop(items) = action("ALTER TABLE t DROP ck1, COLUMN a, b") else {
            panic!()
        };
        let kinds: Vec<(bool, &str)> =
            items.iter().map(|i| (i.column, i.name.value.as_str())).collect();
        assert_eq!(kinds, [(false, "ck1"), (true, "a"), (true, "b")]);
        let AlterTableAction::Add { items, nocheck } =
            action("ALTER TABLE t ADD a INT DEFAULT 1 WITH VALUES")
        else {
            panic!()
        };
        assert!(!nocheck);
        assert!(matches!(items[0], AlterAdd::Element { with_values: true, .. }));
        assert!(parse_batch("ALTER TABLE t ADD").is_err());
        assert!(parse_batch("ALTER TABLE t WITH ADD a INT").is_err());
        assert!(parse_batch("ALTER TABLE t ALTER a INT").is_err());
    }
}
