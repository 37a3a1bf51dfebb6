//! The cursor statements printed back as T-SQL.

use std::fmt::{Display, Formatter, Result};

use super::commas;
use super::query::OptionClause;
use crate::ast::{
    CursorRef, CursorStatement, CursorUpdatability, DeclareCursor, Fetch, FetchDirection,
};

impl Display for CursorStatement {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            CursorStatement::Declare(declare) => write!(f, "{declare}"),
            CursorStatement::Open(cursor) => write!(f, "OPEN {cursor}"),
            CursorStatement::Fetch(fetch) => write!(f, "{fetch}"),
            CursorStatement::Close(cursor) => write!(f, "CLOSE {cursor}"),
            CursorStatement::Deallocate(cursor) => write!(f, "DEALLOCATE {cursor}"),
        }
    }
}

impl Display for CursorRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.global {
            f.write_str("GLOBAL ")?;
        }
        write!(f, "{}", self.name)
    }
}

impl Display for DeclareCursor {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "DECLARE {}", self.name)?;
        if self.insensitive {
            f.write_str(" INSENSITIVE")?;
        }
        if self.iso_scroll {
            f.write_str(" SCROLL")?;
        }
        f.write_str(" CURSOR")?;
        for option in &self.options {
            write!(f, " {}", option.keyword())?;
        }
        write!(f, " FOR {}{}", self.query.query, OptionClause(&self.query.hints))?;
        match &self.updatability {
            None => Ok(()),
            Some(CursorUpdatability::ReadOnly) => f.write_str(" FOR READ ONLY"),
            Some(CursorUpdatability::Update(columns)) if columns.is_empty() => {
                f.write_str(" FOR UPDATE")
            }
            Some(CursorUpdatability::Update(columns)) => {
                write!(f, " FOR UPDATE OF {}", commas(columns))
            }
        }
    }
}

impl Display for Fetch {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str("FETCH ")?;
        match &self.direction {
            FetchDirection::Absolute(n) | FetchDirection::Relative(n) => {
                write!(f, "{} {n}", self.direction.keyword())?
            }
            direction => f.write_str(direction.keyword())?,
        }
        write!(f, " FROM {}", self.cursor)?;
        if !self.into.is_empty() {
            write!(f, " INTO {}", commas(&self.into))?;
        }
        Ok(())
    }
}
