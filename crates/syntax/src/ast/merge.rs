//! `MERGE`: its `WHEN [NOT] MATCHED` clauses and their actions.

use super::{
    Assignment, Cte, Expr, Ident, OutputClause, QueryHint, TableHint, TableSource, TableTarget,
    Top, XmlNamespace,
};

/// `[WITH ctes] MERGE [TOP (n)] [INTO] target [WITH (hints)] [[AS] alias] USING source ON
/// condition WHEN ... [OUTPUT ...] [OPTION (...)];`.
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    /// `WITH XMLNAMESPACES (...)` before the statement: prefixes its xml methods may use.
    pub xml_namespaces: Vec<XmlNamespace>,
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `TOP (n) [PERCENT]`: how many rows the statement changes at most.
    pub top: Option<Top>,
    /// The table changed.
    pub target: TableTarget,
    /// `WITH (HOLDLOCK, ...)` on the target.
    pub table_hints: Vec<TableHint>,
    /// The target's alias.
    pub alias: Option<Ident>,
    /// `USING`: a table, derived table, `VALUES` table or CTE, with its alias.
    pub source: TableSource,
    /// `ON`: which source rows match which target rows.
    pub on: Expr,
    /// The `WHEN` clauses, in the order written.
    pub clauses: Vec<MergeClause>,
    /// `OUTPUT $action, INSERTED...., DELETED.... [INTO ...]`.
    pub output: Option<Box<OutputClause>>,
    /// `OPTION (...)`.
    pub hints: Vec<QueryHint>,
}

/// `WHEN [NOT] MATCHED [BY TARGET | BY SOURCE] [AND condition] THEN action`.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeClause {
    /// Which rows the clause is for.
    pub when: MergeWhen,
    /// `AND condition`.
    pub condition: Option<Expr>,
    /// What it does to them.
    pub action: MergeAction,
}

/// The rows a `WHEN` clause of a MERGE acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeWhen {
    /// `WHEN MATCHED`: a target row and the source row that matches it.
    Matched,
    /// `WHEN NOT MATCHED [BY TARGET]`: a source row no target row matches.
    NotMatchedByTarget,
    /// `WHEN NOT MATCHED BY SOURCE`: a target row no source row matches.
    NotMatchedBySource,
}

/// The action of a `WHEN` clause of a MERGE.
#[derive(Debug, Clone, PartialEq)]
pub enum MergeAction {
    /// `UPDATE SET ...`.
    Update(Vec<Assignment>),
    /// `DELETE`.
    Delete,
    /// `INSERT [(columns)] VALUES (...)`, or `DEFAULT VALUES` when `values` is `None`.
    Insert {
        /// The column list; empty means all columns in order.
        columns: Vec<Ident>,
        /// The values; items may be [`ExprKind::Default`](super::ExprKind::Default).
        values: Option<Vec<Expr>>,
    },
}
