//! Expressions: literals, operators, predicates, `CASE`, casts, function calls and window
//! specifications.

use super::{DataType, Ident, ObjectName, OrderByItem, Query, Span, VarRef};

/// An expression and where it is. Search conditions are expressions too: the parser does not
/// separate predicates from values (the binder does, with SQL Server's error 4145).
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// From its first to its last token.
    pub span: Span,
}

/// Expressions.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A constant.
    Literal(Literal),
    /// `@x`.
    Variable(VarRef),
    /// `@@ROWCOUNT`, `@@TRANCOUNT`, ...
    SystemVariable(String),
    /// A column reference of one to four parts: `c`, `t.c`, `s.t.c`, `db.s.t.c`.
    Column(Vec<Ident>),
    /// `-x`, `+x`, `~x`, `NOT x`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// Arithmetic, bitwise, comparison and logical operators.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `x [NOT] BETWEEN low AND high`.
    Between {
        /// The tested value.
        expr: Box<Expr>,
        /// `NOT BETWEEN`.
        negated: bool,
        /// Lower bound.
        low: Box<Expr>,
        /// Upper bound.
        high: Box<Expr>,
    },
    /// `x [NOT] IN (a, b, ...)`.
    InList {
        /// The tested value.
        expr: Box<Expr>,
        /// `NOT IN`.
        negated: bool,
        /// The values.
        list: Vec<Expr>,
    },
    /// `x [NOT] IN (SELECT ...)`.
    InSubquery {
        /// The tested value.
        expr: Box<Expr>,
        /// `NOT IN`.
        negated: bool,
        /// The subquery.
        subquery: Box<Query>,
    },
    /// `x [NOT] LIKE pattern [ESCAPE c]`.
    Like {
        /// The tested value.
        expr: Box<Expr>,
        /// `NOT LIKE`.
        negated: bool,
        /// The pattern.
        pattern: Box<Expr>,
        /// The escape character.
        escape: Option<Box<Expr>>,
    },
    /// `x IS [NOT] DISTINCT FROM y`: inequality that treats NULLs as equal to each other.
    IsDistinctFrom {
        /// The left value.
        left: Box<Expr>,
        /// The right value.
        right: Box<Expr>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// `x COLLATE name`: Walden compares text one way (case-insensitively and
    /// accent-sensitively, as SQL Server's default collation does), so such a collation
    /// changes nothing; another is refused when the expression is evaluated.
    Collate {
        /// The value.
        expr: Box<Expr>,
        /// The collation named.
        collation: Ident,
    },
    /// `CURRENT OF cursor`, the whole WHERE clause of a positioned UPDATE or DELETE: the row
    /// the cursor is on.
    CurrentOf(crate::ast::cursor::CursorRef),
    /// `JSON_OBJECT(key : value, ... [NULL | ABSENT ON NULL])` (SQL Server 2022).
    JsonObject {
        /// The members, in order.
        pairs: Vec<(Expr, Expr)>,
        /// `ABSENT ON NULL`: a member whose value is NULL is left out (the default is
        /// `NULL ON NULL`).
        absent_on_null: bool,
    },
    /// `JSON_ARRAY(value, ... [NULL | ABSENT ON NULL])` (SQL Server 2022).
    JsonArray {
        /// The elements, in order.
        values: Vec<Expr>,
        /// `ABSENT ON NULL` (the default): NULL elements are left out.
        absent_on_null: bool,
    },
    /// `x.value('xquery', 'type')`, `x.query('xquery')`, `x.exist('xquery')`,
    /// `x.modify('dml')`: an xml data type method (names are case-sensitive, as in SQL Server).
    XmlMethod {
        /// The xml value the method is called on.
        target: Box<Expr>,
        /// `value`, `query`, `exist` or `modify`.
        method: String,
        /// The arguments as written (SQL Server requires string literals).
        args: Vec<Expr>,
    },
    /// `x AT TIME ZONE zone`: a date and time at a Windows-named time zone.
    AtTimeZone {
        /// The date and time.
        expr: Box<Expr>,
        /// The zone's name.
        zone: Box<Expr>,
    },
    /// `x IS [NOT] NULL`.
    IsNull {
        /// The tested value.
        expr: Box<Expr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `x op ALL | ANY | SOME (SELECT ...)`.
    Quantified {
        /// The tested value.
        left: Box<Expr>,
        /// A comparison operator.
        op: BinaryOp,
        /// `ALL` or `ANY` (`SOME` is `ANY`).
        quantifier: Quantifier,
        /// The subquery.
        subquery: Box<Query>,
    },
    /// `EXISTS (SELECT ...)`.
    Exists(Box<Query>),
    /// A scalar subquery `(SELECT ...)`.
    Subquery(Box<Query>),
    /// `CASE ... END`.
    Case(Box<Case>),
    /// `CAST(x AS type)` or `TRY_CAST(...)`.
    Cast(Box<Cast>),
    /// `CONVERT(type, x [, style])` or `TRY_CONVERT(...)`.
    Convert(Box<Convert>),
    /// A function call, aggregate or window function.
    Function(Box<FunctionCall>),
    /// `NEXT VALUE FOR sequence [OVER (ORDER BY ...)]`.
    NextValueFor(Box<NextValueFor>),
    /// The keyword `DEFAULT` where a value may be defaulted: `VALUES`, `UPDATE ... SET`,
    /// procedure and function arguments.
    Default,
}

/// Constants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    /// `NULL`
    Null,
    /// `'text'` (`national: false`) or `N'text'`, with `''` escapes undone.
    String {
        /// The characters.
        value: String,
        /// `N'...'`: `nvarchar` rather than `varchar`.
        national: bool,
    },
    /// Digits only, as written: `int` if it fits, otherwise `numeric`.
    Integer(String),
    /// Digits with a decimal point, as written: `numeric(p, s)`.
    Decimal(String),
    /// A number with an exponent, as written: `float`.
    Float(String),
    /// `$` and digits with an optional decimal point, the `$` dropped: `money`.
    Money(String),
    /// `0x...`: `varbinary`. An odd number of hex digits gets a leading zero.
    Binary(Vec<u8>),
}

/// `ALL` or `ANY`/`SOME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantifier {
    /// `ALL`
    All,
    /// `ANY` / `SOME`
    Any,
}

/// Prefix operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// `+x`
    Plus,
    /// `-x`
    Minus,
    /// `~x` (bitwise not)
    BitNot,
    /// `NOT x`
    Not,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `*`
    Multiply,
    /// `/`
    Divide,
    /// `%`
    Modulo,
    /// `+` (also string concatenation)
    Add,
    /// `-`
    Subtract,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `=`
    Eq,
    /// `<>` or `!=`
    NotEq,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=` or `!>`
    LtEq,
    /// `>=` or `!<`
    GtEq,
    /// `AND`
    And,
    /// `OR`
    Or,
}

/// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The operand of a simple `CASE`; `None` for a searched `CASE`.
    pub operand: Option<Expr>,
    /// The `WHEN` branches, at least one.
    pub branches: Vec<WhenClause>,
    /// `ELSE`; `NULL` when absent.
    pub else_result: Option<Expr>,
}

/// `WHEN condition_or_value THEN result`.
#[derive(Debug, Clone, PartialEq)]
pub struct WhenClause {
    /// A condition (searched `CASE`) or a value compared with the operand (simple `CASE`).
    pub condition: Expr,
    /// The result.
    pub result: Expr,
}

/// `NEXT VALUE FOR sequence [OVER (ORDER BY ...)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct NextValueFor {
    /// The sequence.
    pub sequence: ObjectName,
    /// `OVER (ORDER BY ...)`: the order in which rows get their values.
    pub over: Option<WindowSpec>,
}

/// `CAST(expr AS type)` / `TRY_CAST(...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cast {
    /// The value.
    pub expr: Expr,
    /// The target type.
    pub data_type: DataType,
    /// `TRY_CAST`: `NULL` instead of an error when the conversion fails.
    pub is_try: bool,
}

/// `CONVERT(type, expr [, style])` / `TRY_CONVERT(...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Convert {
    /// The target type.
    pub data_type: DataType,
    /// The value.
    pub expr: Expr,
    /// The style number.
    pub style: Option<Expr>,
    /// `TRY_CONVERT`.
    pub is_try: bool,
}

/// A call: `f(x)`, `dbo.f(x)`, `COUNT(*)`, `COUNT(DISTINCT x)`, `ROW_NUMBER() OVER (...)`,
/// or a parenthesis-free built-in such as `CURRENT_TIMESTAMP`.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCall {
    /// The function, possibly schema-qualified.
    pub name: ObjectName,
    /// The arguments.
    pub args: FunctionArgs,
    /// `OVER (...)` for window functions.
    pub over: Option<WindowSpec>,
    /// `WITHIN GROUP (ORDER BY ...)`: the order `STRING_AGG` joins its values in (empty when
    /// not given).
    pub within_group: Vec<OrderByItem>,
}

/// A call's arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum FunctionArgs {
    /// No parentheses at all: `CURRENT_TIMESTAMP`, `CURRENT_USER`, `SESSION_USER`,
    /// `SYSTEM_USER`, `USER`.
    None,
    /// `(*)`, as in `COUNT(*)`.
    Star,
    /// `([DISTINCT] a, b, ...)`; items may be [`ExprKind::Default`].
    List {
        /// `DISTINCT` (aggregates).
        distinct: bool,
        /// The arguments.
        args: Vec<Expr>,
    },
}

/// `OVER ([PARTITION BY ...] [ORDER BY ...] [ROWS | RANGE frame])`.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowSpec {
    /// `PARTITION BY`.
    pub partition_by: Vec<Expr>,
    /// `ORDER BY`.
    pub order_by: Vec<OrderByItem>,
    /// The window frame, if one is written.
    pub frame: Option<WindowFrame>,
}

/// `ROWS | RANGE BETWEEN start AND end`; the short form `ROWS start` is stored with `end`
/// [`FrameBound::CurrentRow`], which is what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowFrame {
    /// `ROWS` (physical offsets) or `RANGE` (peers of the current row count as current).
    pub units: FrameUnits,
    /// Where the frame starts.
    pub start: FrameBound,
    /// Where the frame ends.
    pub end: FrameBound,
}

/// The unit of a window frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    /// `ROWS`
    Rows,
    /// `RANGE`
    Range,
}

/// One end of a window frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameBound {
    /// `UNBOUNDED PRECEDING`
    UnboundedPreceding,
    /// `n PRECEDING`
    Preceding(u64),
    /// `CURRENT ROW`
    CurrentRow,
    /// `n FOLLOWING`
    Following(u64),
    /// `UNBOUNDED FOLLOWING`
    UnboundedFollowing,
}
