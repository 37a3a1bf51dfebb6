//! Data modification: `INSERT`, `UPDATE`, `DELETE`, their targets, assignments and `OUTPUT`
//! clauses.

use super::{
    AssignOp, Cte, Execute, Expr, Ident, ObjectName, Query, QueryHint, SelectItem, TableHint,
    TableSource, Top, XmlNamespace,
};

/// The table a data-modification statement changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableTarget {
    /// A table or view name, or an alias defined in the `FROM` clause.
    Table(ObjectName),
    /// A table variable.
    Variable(String),
}

/// `[WITH ctes] INSERT [TOP (n) [PERCENT]] [INTO] target [(columns)] source`.
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    /// `WITH XMLNAMESPACES (...)` before the statement: prefixes its xml methods may use.
    pub xml_namespaces: Vec<XmlNamespace>,
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `TOP (n) [PERCENT]`.
    pub top: Option<Top>,
    /// The target.
    pub target: TableTarget,
    /// `WITH (TABLOCK, ...)` on the target.
    pub table_hints: Vec<TableHint>,
    /// The column list; empty means all columns in order.
    pub columns: Vec<Ident>,
    /// `OUTPUT INSERTED.... [INTO ...]`.
    pub output: Option<Box<OutputClause>>,
    /// Where the rows come from.
    pub source: InsertSource,
    /// `OPTION (...)`.
    pub hints: Vec<QueryHint>,
}

/// The rows of an `INSERT`.
#[derive(Debug, Clone, PartialEq)]
pub enum InsertSource {
    /// `VALUES (...), (...)`; items may be [`ExprKind::Default`](super::ExprKind::Default).
    Values(Vec<Vec<Expr>>),
    /// `SELECT ...`.
    Query(Box<Query>),
    /// `EXEC ...`.
    Execute(Box<Execute>),
    /// `DEFAULT VALUES`.
    DefaultValues,
}

/// `[WITH ctes] UPDATE [TOP (n)] target SET ... [FROM ...] [WHERE ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    /// `WITH XMLNAMESPACES (...)` before the statement: prefixes its xml methods may use.
    pub xml_namespaces: Vec<XmlNamespace>,
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `TOP (n) [PERCENT]`.
    pub top: Option<Top>,
    /// The target (possibly an alias from `FROM`).
    pub target: TableTarget,
    /// `WITH (...)` on the target.
    pub table_hints: Vec<TableHint>,
    /// The `SET` list.
    pub assignments: Vec<Assignment>,
    /// `OUTPUT DELETED...., INSERTED.... [INTO ...]`.
    pub output: Option<Box<OutputClause>>,
    /// `FROM` table sources.
    pub from: Vec<TableSource>,
    /// `WHERE`.
    pub where_clause: Option<Expr>,
    /// `OPTION (...)`.
    pub hints: Vec<QueryHint>,
}

/// `OUTPUT item, ... [INTO target [(column, ...)]]` of an INSERT, UPDATE or DELETE: values of
/// each changed row as it is after the change (`INSERTED.column`) or was before it
/// (`DELETED.column`), returned as a result set or inserted into a table.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputClause {
    /// The values, as a select list (`INSERTED.*`, `DELETED.v AS old_v`, expressions).
    pub items: Vec<SelectItem>,
    /// `INTO @table_variable | table [(columns)]`.
    pub into: Option<OutputInto>,
}

/// Where `OUTPUT ... INTO` puts the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputInto {
    /// A table variable, `#temp` or table.
    pub target: TableTarget,
    /// The columns to fill; empty means all columns in order.
    pub columns: Vec<Ident>,
}

/// One item of `UPDATE ... SET`.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// What is assigned.
    pub target: AssignmentTarget,
    /// `=` or a compound operator.
    pub op: AssignOp,
    /// The new value; may be [`ExprKind::Default`](super::ExprKind::Default).
    pub value: Expr,
}

/// The left-hand side of an `UPDATE ... SET` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssignmentTarget {
    /// `column` or `alias.column`.
    Column(Vec<Ident>),
    /// `@variable`.
    Variable(String),
    /// `@variable = column = value`: both get the value.
    VariableAndColumn {
        /// The variable.
        variable: String,
        /// The column.
        column: Vec<Ident>,
    },
}

/// `[WITH ctes] DELETE [TOP (n)] [FROM] target [FROM ...] [WHERE ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    /// `WITH XMLNAMESPACES (...)` before the statement: prefixes its xml methods may use.
    pub xml_namespaces: Vec<XmlNamespace>,
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `TOP (n) [PERCENT]`.
    pub top: Option<Top>,
    /// The target (possibly an alias from the second `FROM`).
    pub target: TableTarget,
    /// `WITH (...)` on the target.
    pub table_hints: Vec<TableHint>,
    /// `OUTPUT DELETED.... [INTO ...]`.
    pub output: Option<Box<OutputClause>>,
    /// The second `FROM`: table sources to join with.
    pub from: Vec<TableSource>,
    /// `WHERE`.
    pub where_clause: Option<Expr>,
    /// `OPTION (...)`.
    pub hints: Vec<QueryHint>,
}
