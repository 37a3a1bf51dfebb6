//! `MERGE`, in SQL Server's syntax:
//!
//! ```text
//! [WITH ctes] MERGE [TOP (n) [PERCENT]] [INTO] target [WITH (hints)] [[AS] alias]
//! USING table_source ON condition
//! { WHEN MATCHED [AND condition] THEN { UPDATE SET ... | DELETE }
//! | WHEN NOT MATCHED [BY TARGET] [AND condition] THEN INSERT [(columns)] { VALUES (...) | DEFAULT VALUES }
//! | WHEN NOT MATCHED BY SOURCE [AND condition] THEN { UPDATE SET ... | DELETE } } ...
//! [OUTPUT ...] [OPTION (...)];
//! ```
//!
//! Unlike every other statement, MERGE must end with a semicolon (error 10713). The rules on
//! the `WHEN` clauses are SQL Server's compile errors: an action the clause cannot take
//! (10710, 10711), an action twice for the same rows (10714), and a conditional `WHEN
//! MATCHED` after an unconditional one of the same kind, which could never run.
//!
//! `USING` is not a reserved word, so a target alias without `AS` is any identifier but
//! `USING`.

use super::{PResult, Parser};
use crate::ast::{Cte, Merge, MergeAction, MergeClause, MergeWhen, StatementKind};
use crate::error::ParseError;
use crate::lexer::TokenKind;

impl<'a> Parser<'a> {
    /// `MERGE ...;` whose `WITH` clause, if any, has been read.
    pub(super) fn parse_merge(&mut self, ctes: Vec<Cte>) -> PResult<StatementKind> {
        self.expect_keyword("MERGE")?;
        let top = self.parse_top()?;
        self.eat_keyword("INTO");
        let target = self.parse_table_target()?;
        let table_hints = self.parse_table_hints()?;
        let explicit = self.eat_keyword("AS");
        let implicit = self.at_identifier() && !self.at_keyword("USING");
        let alias = if explicit || (implicit && !self.at_clause_boundary()) {
            Some(self.parse_identifier()?)
        } else {
            None
        };
        self.expect_keyword("USING")?;
        let source = self.parse_table_source()?;
        self.expect_keyword("ON")?;
        let on = self.parse_expr()?;
        let mut clauses = Vec::new();
        while self.at_keyword("WHEN") {
            let line = self.peek().span.line;
            let clause = self.parse_merge_clause()?;
            check_clause(&clauses, &clause, line)?;
            clauses.push(clause);
        }
        if clauses.is_empty() {
            return Err(self.error());
        }
        let output = self.parse_output_clause()?;
        let line = self.peek().span.line;
        let hints = self.parse_option_clause()?;
        if !self.at(&TokenKind::Semicolon) {
            let line = self.tokens[self.pos.saturating_sub(1)].span.line;
            return Err(merge_error(
                10713,
                line,
                "A MERGE statement must be terminated by a semi-colon (;).".into(),
            ));
        }
        let mut ctes = ctes;
        self.apply_max_recursion(&mut ctes, &hints, line)?;
        let merge = Merge {
            xml_namespaces: Vec::new(),
            ctes,
            top,
            target,
            table_hints,
            alias,
            source,
            on,
            clauses,
            output,
            hints,
        };
        Ok(StatementKind::Merge(Box::new(merge)))
    }

    /// `WHEN [NOT] MATCHED [BY TARGET | BY SOURCE] [AND condition] THEN action`.
    fn parse_merge_clause(&mut self) -> PResult<MergeClause> {
        self.expect_keyword("WHEN")?;
        let not = self.eat_keyword("NOT");
        self.expect_keyword("MATCHED")?;
        let when = if !not {
            MergeWhen::Matched
        } else if self.eat_keyword("BY") {
            match self.eat_one_of(&["TARGET", "SOURCE"]) {
                Some("TARGET") => MergeWhen::NotMatchedByTarget,
                Some(_) => MergeWhen::NotMatchedBySource,
                None => return Err(self.error()),
            }
        } else {
            MergeWhen::NotMatchedByTarget
        };
        let condition = if self.eat_keyword("AND") { Some(self.parse_expr()?) } else { None };
        self.expect_keyword("THEN")?;
        let line = self.peek().span.line;
        let action = match self.peek_word_upper().as_deref() {
            Some("UPDATE") => {
                self.advance();
                self.expect_keyword("SET")?;
                MergeAction::Update(self.parse_comma_separated(Self::parse_assignment)?)
            }
            Some("DELETE") => {
                self.advance();
                MergeAction::Delete
            }
            Some("INSERT") => {
                self.advance();
                let columns = if self.at(&TokenKind::LParen) {
                    self.parse_identifier_list()?
                } else {
                    Vec::new()
                };
                let values = if self.eat_keyword("DEFAULT") {
                    self.expect_keyword("VALUES")?;
                    None
                } else {
                    self.expect_keyword("VALUES")?;
                    self.expect(&TokenKind::LParen)?;
                    let row = self.parse_comma_separated(Self::parse_expr_or_default)?;
                    self.expect(&TokenKind::RParen)?;
                    Some(row)
                };
                MergeAction::Insert { columns, values }
            }
            _ => return Err(self.error()),
        };
        match (when, &action) {
            (MergeWhen::NotMatchedByTarget, MergeAction::Update(_) | MergeAction::Delete) => {
                Err(merge_error(
                    10710,
                    line,
                    format!(
                        "An action of type '{}' is not allowed in the 'WHEN NOT MATCHED' clause of a MERGE statement.",
                        action_name(&action)
                    ),
                ))
            }
            (MergeWhen::Matched | MergeWhen::NotMatchedBySource, MergeAction::Insert { .. }) => {
                Err(merge_error(
                    10711,
                    line,
                    format!(
                        "An action of type 'INSERT' is not allowed in the '{}' clause of a MERGE statement.",
                        when_name(when)
                    ),
                ))
            }
            _ => Ok(MergeClause { when, condition, action }),
        }
    }
}

/// SQL Server's rules on a `WHEN` clause given the ones before it: each kind of clause takes
/// each action once (so at most two `MATCHED` and two `NOT MATCHED BY SOURCE` clauses, one
/// `NOT MATCHED BY TARGET`), and a second clause of a kind is reachable only if the first
/// has a condition.
fn check_clause(before: &[MergeClause], clause: &MergeClause, line: u32) -> PResult<()> {
    let same_kind: Vec<&MergeClause> = before.iter().filter(|c| c.when == clause.when).collect();
    let repeated = same_kind.iter().any(|c| action_name(&c.action) == action_name(&clause.action));
    if repeated {
        return Err(merge_error(
            10714,
            line,
            // SQL Server's message names the clause and the action in this order.
            format!(
                "An action of type '{}' cannot appear more than once in a '{}' clause of a MERGE statement.",
                when_name(clause.when),
                action_name(&clause.action)
            ),
        ));
    }
    if same_kind.iter().any(|c| c.condition.is_none()) {
        let when = when_name(clause.when);
        return Err(merge_error(
            10715,
            line,
            format!(
                "In a MERGE statement, a '{when}' clause with a search condition cannot appear after a '{when}' clause with no search condition."
            ),
        ));
    }
    Ok(())
}

fn when_name(when: MergeWhen) -> &'static str {
    match when {
        MergeWhen::Matched => "WHEN MATCHED",
        MergeWhen::NotMatchedByTarget => "WHEN NOT MATCHED",
        MergeWhen::NotMatchedBySource => "WHEN NOT MATCHED BY SOURCE",
    }
}

fn action_name(action: &MergeAction) -> &'static str {
    match action {
        MergeAction::Update(_) => "UPDATE",
        MergeAction::Delete => "DELETE",
        MergeAction::Insert { .. } => "INSERT",
    }
}

/// A compile error of a MERGE statement.
fn merge_error(number: i32, line: u32, message: String) -> ParseError {
    ParseError { number, severity: 15, state: 1, line, message }
}
