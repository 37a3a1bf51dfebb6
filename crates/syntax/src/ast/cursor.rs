//! The cursor statements: `DECLARE name CURSOR`, `OPEN`, `FETCH`, `CLOSE`, `DEALLOCATE`.

use super::{Expr, Ident, SelectStatement};

/// A statement about a cursor.
#[derive(Debug, Clone, PartialEq)]
pub enum CursorStatement {
    /// `DECLARE name CURSOR ... FOR select`.
    Declare(Box<DeclareCursor>),
    /// `OPEN cursor`: runs the cursor's query.
    Open(CursorRef),
    /// `FETCH [direction FROM] cursor [INTO @v, ...]`.
    Fetch(Box<Fetch>),
    /// `CLOSE cursor`: releases the rows, keeps the declaration.
    Close(CursorRef),
    /// `DEALLOCATE cursor`: removes the declaration.
    Deallocate(CursorRef),
}

/// The cursor a statement names: `[GLOBAL] name`. Without `GLOBAL`, a local cursor of that
/// name is preferred to a global one. (Cursor variables are not supported.)
#[derive(Debug, Clone, PartialEq)]
pub struct CursorRef {
    /// The cursor's name.
    pub name: Ident,
    /// `GLOBAL`: only the session's global cursors are searched.
    pub global: bool,
}

/// `DECLARE name ...` in either of SQL Server's two forms.
///
/// The ISO form puts `INSENSITIVE` and `SCROLL` before `CURSOR` and may end with
/// `FOR READ ONLY`; the Transact-SQL form puts its [`CursorOption`]s after `CURSOR`. The two
/// cannot be mixed, so at most one of (`insensitive`, `iso_scroll`) and `options` is set.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclareCursor {
    /// The cursor's name.
    pub name: Ident,
    /// ISO `INSENSITIVE`.
    pub insensitive: bool,
    /// ISO `SCROLL` (before `CURSOR`).
    pub iso_scroll: bool,
    /// The Transact-SQL options after `CURSOR`, in the order written (which the grammar
    /// fixes: scope, direction, type, concurrency, `TYPE_WARNING`).
    pub options: Vec<CursorOption>,
    /// The query whose rows the cursor walks.
    pub query: SelectStatement,
    /// `FOR READ ONLY` or `FOR UPDATE [OF columns]`.
    pub updatability: Option<CursorUpdatability>,
}

/// One Transact-SQL option of `DECLARE CURSOR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorOption {
    /// `LOCAL`: the cursor lives as long as the batch or procedure that declares it.
    Local,
    /// `GLOBAL`: the cursor lives as long as the connection.
    Global,
    /// `FORWARD_ONLY`: only `FETCH NEXT`.
    ForwardOnly,
    /// `SCROLL`: every fetch direction.
    Scroll,
    /// `STATIC`.
    Static,
    /// `KEYSET`.
    Keyset,
    /// `DYNAMIC`.
    Dynamic,
    /// `FAST_FORWARD`: `FORWARD_ONLY READ_ONLY`.
    FastForward,
    /// `READ_ONLY`.
    ReadOnly,
    /// `SCROLL_LOCKS`.
    ScrollLocks,
    /// `OPTIMISTIC`.
    Optimistic,
    /// `TYPE_WARNING`.
    TypeWarning,
}

impl CursorOption {
    /// The option's keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            CursorOption::Local => "LOCAL",
            CursorOption::Global => "GLOBAL",
            CursorOption::ForwardOnly => "FORWARD_ONLY",
            CursorOption::Scroll => "SCROLL",
            CursorOption::Static => "STATIC",
            CursorOption::Keyset => "KEYSET",
            CursorOption::Dynamic => "DYNAMIC",
            CursorOption::FastForward => "FAST_FORWARD",
            CursorOption::ReadOnly => "READ_ONLY",
            CursorOption::ScrollLocks => "SCROLL_LOCKS",
            CursorOption::Optimistic => "OPTIMISTIC",
            CursorOption::TypeWarning => "TYPE_WARNING",
        }
    }
}

/// The clause after a cursor's query.
#[derive(Debug, Clone, PartialEq)]
pub enum CursorUpdatability {
    /// `FOR READ ONLY` (ISO form only).
    ReadOnly,
    /// `FOR UPDATE [OF column, ...]`; an empty list means every column.
    Update(Vec<Ident>),
}

/// `FETCH [direction FROM] cursor [INTO @v, ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetch {
    /// Which row; `NEXT` when none is written.
    pub direction: FetchDirection,
    /// The cursor.
    pub cursor: CursorRef,
    /// The variables the row's columns go to; empty: the row is returned as a result set.
    pub into: Vec<String>,
}

/// The row a `FETCH` moves to.
#[derive(Debug, Clone, PartialEq)]
pub enum FetchDirection {
    /// `NEXT`.
    Next,
    /// `PRIOR`.
    Prior,
    /// `FIRST`.
    First,
    /// `LAST`.
    Last,
    /// `ABSOLUTE n`: a constant or a variable; negative counts from the end.
    Absolute(Expr),
    /// `RELATIVE n`: a constant or a variable, from the current row.
    Relative(Expr),
}

impl FetchDirection {
    /// The direction's keyword.
    pub fn keyword(&self) -> &'static str {
        match self {
            FetchDirection::Next => "NEXT",
            FetchDirection::Prior => "PRIOR",
            FetchDirection::First => "FIRST",
            FetchDirection::Last => "LAST",
            FetchDirection::Absolute(_) => "ABSOLUTE",
            FetchDirection::Relative(_) => "RELATIVE",
        }
    }
}
