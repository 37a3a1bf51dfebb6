//! Queries: `SELECT` and set operations, common table expressions, `TOP`, `ORDER BY` and
//! `OFFSET`, `FOR XML`/`FOR JSON`, the `FROM` clause's table sources and joins, and query hints.

use super::{AssignOp, DataType, Expr, Ident, ObjectName, SingleKind, VarRef};

/// A query statement: the query and its `OPTION (...)` hints.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectStatement {
    /// The query.
    pub query: Query,
    /// `OPTION (...)` query hints.
    pub hints: Vec<QueryHint>,
}

/// One query hint from `OPTION (...)`, kept as its source text (`MAXDOP 1`, `RECOMPILE`) for
/// the optimizer to interpret or reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryHint {
    /// The hint's tokens as written.
    pub text: String,
}

/// A query expression: `[WITH ctes] body [ORDER BY ...] [OFFSET ... FETCH ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `SELECT`s combined with set operators.
    pub body: QueryBody,
    /// `ORDER BY`.
    pub order_by: Vec<OrderByItem>,
    /// `OFFSET n ROWS [FETCH NEXT m ROWS ONLY]`.
    pub offset: Option<OffsetFetch>,
    /// `FOR JSON PATH | AUTO [, ...]`: the rows become one JSON text.
    pub for_json: Option<ForJson>,
    /// `FOR XML PATH [('row')] [, ...]`: the rows become one XML text.
    pub for_xml: Option<ForXml>,
    /// `WITH XMLNAMESPACES (...)` before the statement: prefixes its xml methods and FOR XML
    /// names may use.
    pub xml_namespaces: Vec<XmlNamespace>,
}

/// One declaration of `WITH XMLNAMESPACES ('uri' AS prefix, DEFAULT 'uri')`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlNamespace {
    /// The prefix; `None` for `DEFAULT`.
    pub prefix: Option<Ident>,
    /// The namespace URI.
    pub uri: String,
}

/// `FOR XML PATH [('element')] [, ROOT [('name')]] [, TYPE]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForXml {
    /// `RAW` rather than `PATH`: a row's columns are attributes of its element (unless
    /// `ELEMENTS`), and no column name is a path.
    pub raw: bool,
    /// `AUTO`: as RAW, each row's element named after the table it comes from.
    pub auto: bool,
    /// `ELEMENTS` (RAW, AUTO): columns are child elements, as PATH makes them.
    pub elements: bool,
    /// The element each row is wrapped in (`row` by default; empty for none).
    pub element: String,
    /// `ROOT [('name')]`: the element the whole text is wrapped in.
    pub root: Option<String>,
    /// `TYPE`: SQL Server returns the `xml` type; Walden returns the text either way.
    pub typed: bool,
}

/// `FOR JSON {PATH | AUTO} [, ROOT [('name')]] [, INCLUDE_NULL_VALUES]
/// [, WITHOUT_ARRAY_WRAPPER]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForJson {
    /// `PATH` (dotted column names nest objects) rather than `AUTO`.
    pub path: bool,
    /// `ROOT [('name')]`: the array goes in an object under this name (`root` by default).
    pub root: Option<String>,
    /// `INCLUDE_NULL_VALUES`: NULLs are written as `null` rather than left out.
    pub include_null_values: bool,
    /// `WITHOUT_ARRAY_WRAPPER`: the objects without the enclosing `[...]`.
    pub without_array_wrapper: bool,
}

/// `name [(columns)] AS (query)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cte {
    /// The CTE's name.
    pub name: Ident,
    /// Column names, if given.
    pub columns: Vec<Ident>,
    /// Its query.
    pub query: Query,
    /// The statement's `OPTION (MAXRECURSION n)`, which the parser copies to each CTE of the
    /// statement because it limits their recursion: `None` when absent (SQL Server's default
    /// of 100 levels applies), `Some(0)` for no limit.
    pub max_recursion: Option<u16>,
}

/// The body of a query.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryBody {
    /// One `SELECT`.
    Select(Box<Select>),
    /// `left UNION [ALL] | EXCEPT | INTERSECT right`; `INTERSECT` binds tighter.
    SetOperation {
        /// The operator.
        op: SetOperator,
        /// Left operand.
        left: Box<QueryBody>,
        /// Right operand.
        right: Box<QueryBody>,
    },
    /// `(query)`, which may have its own `ORDER BY` (with `TOP`).
    Parenthesized(Box<Query>),
}

/// Set operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOperator {
    /// `UNION`
    Union,
    /// `UNION ALL`
    UnionAll,
    /// `EXCEPT`
    Except,
    /// `INTERSECT`
    Intersect,
}

/// `SELECT [DISTINCT] [TOP ...] items [INTO t] [FROM ...] [WHERE ...] [GROUP BY ...]
/// [HAVING ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    /// `DISTINCT` (`ALL` is the default).
    pub distinct: bool,
    /// `TOP`.
    pub top: Option<Top>,
    /// The select list.
    pub items: Vec<SelectItem>,
    /// `INTO table`: creates the table from the result.
    pub into: Option<ObjectName>,
    /// `FROM` table sources (comma-separated ones are cross joined).
    pub from: Vec<TableSource>,
    /// `WHERE`.
    pub where_clause: Option<Expr>,
    /// `GROUP BY`: its items; for `GROUP BY GROUPING SETS (...)`, every item of every set.
    pub group_by: Vec<Expr>,
    /// `GROUP BY GROUPING SETS ((a, b), (a), ())`: the sets, each a list of items of
    /// `group_by`.
    pub grouping_sets: Option<Vec<Vec<Expr>>>,
    /// `HAVING`.
    pub having: Option<Expr>,
    /// Which parsed node this is, if it is one the parser made (not a copy).
    pub parsed: ParsedId,
}

/// The identity of a syntax node the parser made, unique in the process: a cache keyed by a
/// node (the plan cache's blocks) knows from it, without comparing trees, that the node it
/// meets is the one it kept something for. Only the parser hands ids out, and only to nodes
/// no one changes afterwards (a parsed batch is shared read-only); a copy gets
/// [`ParsedId::NONE`], since a copy is what rewrites change, so two nodes with the same id
/// other than `NONE` are equal. It never makes two trees unequal: equality of syntax trees
/// is by what they say.
#[derive(Debug, Default)]
pub struct ParsedId(u64);

impl ParsedId {
    /// No parsed node's identity: a copy, or a node built outside the parser.
    pub const NONE: ParsedId = ParsedId(0);

    /// An id no node had before.
    pub fn fresh() -> ParsedId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        ParsedId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    /// The id, if the node was made by the parser.
    pub fn get(&self) -> Option<u64> {
        (self.0 != 0).then_some(self.0)
    }
}

impl Clone for ParsedId {
    /// A copy is not the parsed node (see the type's documentation).
    fn clone(&self) -> ParsedId {
        ParsedId::NONE
    }
}

impl PartialEq for ParsedId {
    fn eq(&self, _: &ParsedId) -> bool {
        true
    }
}

/// `TOP (n) [PERCENT] [WITH TIES]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Top {
    /// Row count or percentage.
    pub quantity: Expr,
    /// `PERCENT`.
    pub percent: bool,
    /// `WITH TIES`.
    pub with_ties: bool,
}

/// One item of a select list.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectItem {
    /// `*` (no qualifier) or `t.*`.
    Wildcard(Option<Vec<Ident>>),
    /// `expr [[AS] alias]` or `alias = expr`.
    Expr {
        /// The value.
        expr: Expr,
        /// The column name, if given.
        alias: Option<Ident>,
    },
    /// `@v = expr` or `@v += expr`: the statement assigns instead of returning rows.
    Assign {
        /// The variable.
        variable: VarRef,
        /// `=` or a compound operator.
        op: AssignOp,
        /// The value.
        value: Expr,
    },
}

/// `ORDER BY` item.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderByItem {
    /// The sort key.
    pub expr: Expr,
    /// `DESC`.
    pub descending: bool,
}

/// `OFFSET n ROWS [FETCH NEXT m ROWS ONLY]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetch {
    /// Rows to skip.
    pub offset: Expr,
    /// Rows to return.
    pub fetch: Option<Expr>,
}

/// A table source of a `FROM` clause.
#[derive(Debug, Clone, PartialEq)]
pub enum TableSource {
    /// A table or view.
    Table {
        /// Its name.
        name: ObjectName,
        /// `[AS] alias`.
        alias: Option<Ident>,
        /// `WITH (NOLOCK, ...)`.
        hints: Vec<TableHint>,
    },
    /// A table variable.
    Variable {
        /// The variable, with its `@`.
        name: String,
        /// `[AS] alias`.
        alias: Option<Ident>,
    },
    /// A table-valued function: `GENERATE_SERIES(1, 10) AS n`,
    /// `sys.dm_io_virtual_file_stats(NULL, NULL)`.
    Function {
        /// The function.
        name: ObjectName,
        /// Its arguments (may be [`ExprKind::Default`](super::ExprKind::Default)).
        args: Vec<Expr>,
        /// `[AS] alias`.
        alias: Option<Ident>,
        /// `alias (columns)`.
        columns: Vec<Ident>,
    },
    /// `(query) [AS] alias [(columns)]`.
    Derived {
        /// The query.
        query: Box<Query>,
        /// The alias (required).
        alias: Ident,
        /// Column names.
        columns: Vec<Ident>,
    },
    /// `(VALUES (...), ...) [AS] alias [(columns)]`.
    Values {
        /// The rows.
        rows: Vec<Vec<Expr>>,
        /// The alias (required).
        alias: Ident,
        /// Column names.
        columns: Vec<Ident>,
    },
    /// `OPENJSON(text [, path]) WITH (column type ['path'] [AS JSON], ...) [[AS] alias]`.
    OpenJson {
        /// The JSON text and the optional path.
        args: Vec<Expr>,
        /// The columns of the `WITH` schema.
        schema: Vec<JsonColumn>,
        /// `[AS] alias`.
        alias: Option<Ident>,
    },
    /// `OPENROWSET(BULK 'file', SINGLE_BLOB | SINGLE_CLOB | SINGLE_NCLOB) [AS] alias
    /// [(column)]`: the whole file as one row of one column, `BulkColumn`.
    OpenRowsetBulk {
        /// The file's path, relative to the server's working directory or absolute.
        file: String,
        /// What the file is read as.
        kind: SingleKind,
        /// `[AS] alias` (SQL Server requires one: error 491).
        alias: Option<Ident>,
        /// Column name.
        columns: Vec<Ident>,
    },
    /// `source PIVOT (aggregate(column) FOR pivot_column IN ([v1], ...)) [AS] alias`.
    Pivot(Box<Pivot>),
    /// `source UNPIVOT (value FOR name IN (c1, ...)) [AS] alias`.
    Unpivot(Box<Unpivot>),
    /// `x.nodes('xquery') [AS] alias(column)`: one row per node the query selects, its one
    /// column an xml value standing for the node.
    XmlNodes {
        /// The xml value.
        target: Box<Expr>,
        /// The XQuery, as written (a string literal).
        xquery: Box<Expr>,
        /// The alias (required).
        alias: Ident,
        /// The column's name (required).
        column: Ident,
    },
    /// Two sources joined.
    Join(Box<Join>),
}

/// `PIVOT`: one row per combination of the source's other columns, and one column per listed
/// value of `pivot_column`, holding `aggregate` over the rows with that value.
#[derive(Debug, Clone, PartialEq)]
pub struct Pivot {
    /// The source.
    pub source: TableSource,
    /// The aggregate call over the value column (`SUM(qty)`).
    pub aggregate: Expr,
    /// The column whose values become columns.
    pub pivot_column: Ident,
    /// Those values, as column names.
    pub values: Vec<Ident>,
    /// The alias (required).
    pub alias: Ident,
}

/// `UNPIVOT`: one row per source row and listed column whose value is not NULL, with the
/// column's name in `name` and its value in `value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Unpivot {
    /// The source.
    pub source: TableSource,
    /// The new column that holds the values.
    pub value: Ident,
    /// The new column that holds the column names.
    pub name: Ident,
    /// The columns turned into rows.
    pub columns: Vec<Ident>,
    /// The alias (required).
    pub alias: Ident,
}

/// One column of `OPENJSON`'s `WITH` schema.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonColumn {
    /// The column's name.
    pub name: Ident,
    /// Its type.
    pub data_type: DataType,
    /// Where its value is in each element (`$.name` when not given).
    pub path: Option<String>,
    /// `AS JSON`: the object or array there, as JSON text (the type is NVARCHAR(MAX)).
    pub as_json: bool,
}

/// `left kind JOIN right [ON condition]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    /// Left input.
    pub left: TableSource,
    /// Right input.
    pub right: TableSource,
    /// The join kind.
    pub kind: JoinKind,
    /// The `ON` condition (absent for `CROSS JOIN` and `APPLY`).
    pub on: Option<Expr>,
}

/// Join kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// `[INNER] JOIN`
    Inner,
    /// `LEFT [OUTER] JOIN`
    LeftOuter,
    /// `RIGHT [OUTER] JOIN`
    RightOuter,
    /// `FULL [OUTER] JOIN`
    FullOuter,
    /// `CROSS JOIN`
    Cross,
    /// `CROSS APPLY`
    CrossApply,
    /// `OUTER APPLY`
    OuterApply,
}

impl JoinKind {
    /// Which sides, (left, right), the join fills with NULLs where the other side has a row
    /// and they have none: the sides an outer join does not preserve.
    pub fn null_extended(self) -> (bool, bool) {
        match self {
            JoinKind::LeftOuter | JoinKind::OuterApply => (false, true),
            JoinKind::RightOuter => (true, false),
            JoinKind::FullOuter => (true, true),
            JoinKind::Inner | JoinKind::Cross | JoinKind::CrossApply => (false, false),
        }
    }
}

/// A table hint: `NOLOCK`, `INDEX(ix)`, `INDEX = ix`.
#[derive(Debug, Clone, PartialEq)]
pub struct TableHint {
    /// The hint name as written.
    pub name: Ident,
    /// Its arguments, if any.
    pub args: Vec<Expr>,
}
