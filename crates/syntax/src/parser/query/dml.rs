//! The data-modification statements `INSERT`, `UPDATE` and `DELETE`: their targets,
//! `INSERT` sources, `SET` assignments (columns, variables, compound operators and the
//! `@v = col = expr` form), and the `OUTPUT [INTO]` clause they share with `MERGE`.

use super::super::{PResult, Parser};
use crate::ast::{
    AssignOp, Assignment, AssignmentTarget, Cte, Delete, Expr, ExprKind, Ident, Insert,
    InsertSource, OutputClause, OutputInto, StatementKind, TableTarget, Update,
};
use crate::lexer::TokenKind;

impl<'a> Parser<'a> {
    pub(in crate::parser) fn parse_insert(&mut self, ctes: Vec<Cte>) -> PResult<StatementKind> {
        self.expect_keyword("INSERT")?;
        // Not after a WITH: `BULK` is then a reserved word where the table should be (156).
        if self.at_keyword("BULK") && ctes.is_empty() {
            return self.parse_insert_bulk();
        }
        let top = self.parse_top()?;
        self.eat_keyword("INTO");
        let target = self.parse_table_target()?;
        let table_hints = self.parse_table_hints()?;
        let columns = if self.at(&TokenKind::LParen) && !self.paren_starts_query() {
            self.parse_identifier_list()?
        } else {
            Vec::new()
        };
        let output = self.parse_output_clause()?;
        let source = self.parse_insert_source()?;
        let mut ctes = ctes;
        let hints = self.parse_option_clause_for(&mut ctes)?;
        let insert = Insert {
            xml_namespaces: Vec::new(),
            ctes,
            top,
            target,
            table_hints,
            columns,
            output,
            source,
            hints,
        };
        Ok(StatementKind::Insert(Box::new(insert)))
    }

    fn parse_insert_source(&mut self) -> PResult<InsertSource> {
        if self.eat_keyword("VALUES") {
            return Ok(InsertSource::Values(self.parse_values_rows()?));
        }
        if self.eat_keyword("DEFAULT") {
            self.expect_keyword("VALUES")?;
            return Ok(InsertSource::DefaultValues);
        }
        if self.at_keyword("EXEC") || self.at_keyword("EXECUTE") {
            return Ok(InsertSource::Execute(Box::new(self.parse_execute()?)));
        }
        let starts_query =
            self.at_keyword("SELECT") || self.at_keyword("WITH") || self.at(&TokenKind::LParen);
        if starts_query {
            Ok(InsertSource::Query(Box::new(self.parse_query()?)))
        } else {
            Err(self.error())
        }
    }

    pub(in crate::parser) fn parse_update(&mut self, ctes: Vec<Cte>) -> PResult<StatementKind> {
        self.expect_keyword("UPDATE")?;
        let top = self.parse_top()?;
        let target = self.parse_table_target()?;
        let table_hints = self.parse_table_hints()?;
        self.expect_keyword("SET")?;
        let assignments = self.parse_comma_separated(Self::parse_assignment)?;
        let output = self.parse_output_clause()?;
        let from = self.parse_from()?;
        let where_clause = self.parse_change_where()?;
        let mut ctes = ctes;
        let hints = self.parse_option_clause_for(&mut ctes)?;
        let update = Update {
            xml_namespaces: Vec::new(),
            ctes,
            top,
            target,
            table_hints,
            assignments,
            output,
            from,
            where_clause,
            hints,
        };
        Ok(StatementKind::Update(Box::new(update)))
    }

    /// `column op value`, `@v op value` or `@v = column = value`.
    pub(in crate::parser) fn parse_assignment(&mut self) -> PResult<Assignment> {
        let target = if self.at(&TokenKind::Variable) {
            let variable = self.advance_text().to_owned();
            if self.at(&TokenKind::Eq) && self.column_assignment_follows() {
                self.advance();
                let column = self.parse_column_path()?;
                AssignmentTarget::VariableAndColumn { variable, column }
            } else {
                AssignmentTarget::Variable(variable)
            }
        } else {
            let start = self.peek().span;
            let mut column = self.parse_column_path()?;
            // `col.modify('xml dml')`: the column takes the modified value.
            if column.len() > 1
                && column.last().is_some_and(|m| m.value == "modify")
                && self.at(&TokenKind::LParen)
            {
                column.pop();
                let target =
                    Expr { kind: ExprKind::Column(column.clone()), span: self.span_from(start) };
                let kind = self.parse_xml_method(target, "modify".to_string())?;
                let value = Expr { kind, span: self.span_from(start) };
                let target = AssignmentTarget::Column(column);
                return Ok(Assignment { target, op: AssignOp::Assign, value });
            }
            AssignmentTarget::Column(column)
        };
        let op = self.parse_assign_op()?;
        let value = self.parse_expr_or_default()?;
        Ok(Assignment { target, op, value })
    }

    /// Whether `= column =` follows (the cursor is at the first `=`).
    fn column_assignment_follows(&self) -> bool {
        let mut n = 1;
        while super::super::is_identifier_token(self.peek_nth(n)) {
            match self.peek_nth(n + 1).kind {
                TokenKind::Dot => n += 2,
                TokenKind::Eq => return true,
                _ => return false,
            }
        }
        false
    }

    /// `name[.name...]` naming a column.
    fn parse_column_path(&mut self) -> PResult<Vec<Ident>> {
        let mut path = vec![self.parse_identifier()?];
        while self.eat(&TokenKind::Dot) {
            path.push(self.parse_identifier_after_dot()?);
        }
        Ok(path)
    }

    pub(in crate::parser) fn parse_assign_op(&mut self) -> PResult<AssignOp> {
        let op = assign_op(self.peek_kind()).ok_or_else(|| self.error())?;
        self.advance();
        Ok(op)
    }

    pub(in crate::parser) fn parse_delete(&mut self, ctes: Vec<Cte>) -> PResult<StatementKind> {
        self.expect_keyword("DELETE")?;
        let top = self.parse_top()?;
        self.eat_keyword("FROM");
        let target = self.parse_table_target()?;
        let table_hints = self.parse_table_hints()?;
        let output = self.parse_output_clause()?;
        let from = self.parse_from()?;
        let where_clause = self.parse_change_where()?;
        let mut ctes = ctes;
        let hints = self.parse_option_clause_for(&mut ctes)?;
        let delete = Delete {
            xml_namespaces: Vec::new(),
            ctes,
            top,
            target,
            table_hints,
            output,
            from,
            where_clause,
            hints,
        };
        Ok(StatementKind::Delete(Box::new(delete)))
    }

    /// `[OUTPUT item, ... [INTO target [(column, ...)]]]`.
    pub(in crate::parser) fn parse_output_clause(&mut self) -> PResult<Option<Box<OutputClause>>> {
        if !self.eat_keyword("OUTPUT") {
            return Ok(None);
        }
        let items = self.parse_comma_separated(Self::parse_select_item)?;
        let into = if self.eat_keyword("INTO") {
            let target = self.parse_table_target()?;
            let columns = if self.at(&TokenKind::LParen) && !self.paren_starts_query() {
                self.parse_identifier_list()?
            } else {
                Vec::new()
            };
            Some(OutputInto { target, columns })
        } else {
            None
        };
        Ok(Some(Box::new(OutputClause { items, into })))
    }

    pub(in crate::parser) fn parse_table_target(&mut self) -> PResult<TableTarget> {
        if self.at(&TokenKind::Variable) {
            Ok(TableTarget::Variable(self.advance_text().to_owned()))
        } else {
            Ok(TableTarget::Table(self.parse_object_name()?))
        }
    }
}

/// The assignment operator a token stands for.
pub(super) fn assign_op(kind: &TokenKind) -> Option<AssignOp> {
    Some(match kind {
        TokenKind::Eq => AssignOp::Assign,
        TokenKind::PlusEq => AssignOp::Add,
        TokenKind::MinusEq => AssignOp::Subtract,
        TokenKind::StarEq => AssignOp::Multiply,
        TokenKind::SlashEq => AssignOp::Divide,
        TokenKind::PercentEq => AssignOp::Modulo,
        TokenKind::AmpersandEq => AssignOp::BitAnd,
        TokenKind::PipeEq => AssignOp::BitOr,
        TokenKind::CaretEq => AssignOp::BitXor,
        _ => return None,
    })
}
