//! The test's own model of a schema, its data and a query, and their rendering in the two
//! dialects. Queries are built as trees and printed for each engine, so that the two engines
//! always run the same query and a difference in syntax (`TOP` against `LIMIT`, `+` against `||`)
//! is decided in one place.

use std::fmt::{self, Write as _};

/// The two column types the test uses: both engines agree on their semantics as long as strings
/// are lowercase (Walden, like SQL Server's default collation, compares case-insensitively) and
/// integers stay small.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Int,
    Str,
}

/// One value of a result or of the data, as both engines' values are compared.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cell {
    Null,
    Int(i64),
    Str(String),
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cell::Null => f.write_str("NULL"),
            Cell::Int(n) => write!(f, "{n}"),
            Cell::Str(s) => write!(f, "'{s}'"),
        }
    }
}

impl Cell {
    /// The literal for this value; a negative number is parenthesized so that `a - -1` can never
    /// print as the start of a T-SQL comment.
    fn literal(&self) -> String {
        match self {
            Cell::Int(n) if *n < 0 => format!("({n})"),
            // Strings are lowercase letters only, so no quote needs doubling.
            other => other.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    TSql,
    Sqlite,
}

#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub ty: Ty,
    pub nullable: bool,
    /// The values the data and the literals are drawn from, so that predicates and joins match
    /// some rows and miss others.
    pub domain: Vec<Cell>,
}

#[derive(Debug, Clone)]
pub struct Index {
    pub name: String,
    pub columns: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    /// Ordinals of the primary key's columns, in key order; empty for a heap.
    pub primary_key: Vec<usize>,
    pub indexes: Vec<Index>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// Whether a column leads or belongs to the primary key or an index: predicates on these are
    /// the ones an index seek can serve, so the generator prefers them.
    pub fn is_key_column(&self, column: usize) -> bool {
        self.primary_key.contains(&column)
            || self.indexes.iter().any(|i| i.columns.contains(&column))
    }
}

#[derive(Debug, Clone)]
pub struct Schema {
    pub tables: Vec<Table>,
}

impl Schema {
    /// The statements that create the tables and indexes and insert the data: the same text
    /// serves both engines.
    pub fn setup(&self) -> Vec<String> {
        let mut out = Vec::new();
        for table in &self.tables {
            let mut sql = format!("CREATE TABLE {} (", table.name);
            for (i, column) in table.columns.iter().enumerate() {
                if i > 0 {
                    sql.push_str(", ");
                }
                let ty = match column.ty {
                    Ty::Int => "INT",
                    Ty::Str => "VARCHAR(8)",
                };
                let null = if column.nullable { "NULL" } else { "NOT NULL" };
                let _ = write!(sql, "{} {ty} {null}", column.name);
            }
            if !table.primary_key.is_empty() {
                let names: Vec<&str> =
                    table.primary_key.iter().map(|&c| table.columns[c].name.as_str()).collect();
                let _ = write!(
                    sql,
                    ", CONSTRAINT pk_{} PRIMARY KEY ({})",
                    table.name,
                    names.join(", ")
                );
            }
            sql.push(')');
            out.push(sql);
            for index in &table.indexes {
                let names: Vec<&str> =
                    index.columns.iter().map(|&c| table.columns[c].name.as_str()).collect();
                out.push(format!(
                    "CREATE INDEX {} ON {} ({})",
                    index.name,
                    table.name,
                    names.join(", ")
                ));
            }
            // T-SQL takes at most 1000 rows in one VALUES list.
            for chunk in table.rows.chunks(500) {
                let rows: Vec<String> = chunk
                    .iter()
                    .map(|row| {
                        let cells: Vec<String> = row.iter().map(Cell::literal).collect();
                        format!("({})", cells.join(", "))
                    })
                    .collect();
                out.push(format!("INSERT INTO {} VALUES {}", table.name, rows.join(", ")));
            }
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub const ALL: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

    fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "<>",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    Sum,
    Min,
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
}

#[derive(Debug, Clone)]
pub enum Expr {
    Column {
        alias: String,
        column: String,
    },
    /// A literal; `Cell::Null` prints as `NULL`, used only where its type is implied (IN lists,
    /// CASE branches).
    Literal(Cell),
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    /// String concatenation: `+` in T-SQL, `||` in SQLite.
    Concat(Box<Expr>, Box<Expr>),
    Case(Box<Pred>, Box<Expr>, Box<Expr>),
    Coalesce(Box<Expr>, Box<Expr>),
    /// An aggregate; `arg` None is `COUNT(*)`.
    Agg {
        func: AggFunc,
        distinct: bool,
        arg: Option<Box<Expr>>,
    },
    /// A scalar subquery; the generator makes it an aggregate without GROUP BY so that it returns
    /// exactly one row (SQL Server fails with 512 on more, SQLite takes the first).
    Subquery(Box<Select>),
}

#[derive(Debug, Clone)]
pub enum Pred {
    Cmp(CmpOp, Expr, Expr),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
    Not(Box<Pred>),
    IsNull {
        expr: Expr,
        negated: bool,
    },
    Between {
        expr: Expr,
        low: Expr,
        high: Expr,
        negated: bool,
    },
    InList {
        expr: Expr,
        list: Vec<Expr>,
        negated: bool,
    },
    InSubquery {
        expr: Expr,
        query: Box<Select>,
        negated: bool,
    },
    Exists {
        query: Box<Select>,
        negated: bool,
    },
    /// `LIKE` with a pattern of lowercase letters, `%` and `_`.
    Like {
        expr: Expr,
        pattern: String,
        negated: bool,
    },
    /// True where the predicate is unknown. T-SQL has no `IS UNKNOWN` and no boolean values, so
    /// this prints as a CASE that yields NULL only in the unknown case (for the TLP oracle).
    IsUnknown(Box<Pred>),
}

impl Pred {
    pub fn and(self, other: Pred) -> Pred {
        Pred::And(Box::new(self), Box::new(other))
    }

    pub fn not(self) -> Pred {
        Pred::Not(Box::new(self))
    }

    pub fn unknown(self) -> Pred {
        Pred::IsUnknown(Box::new(self))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
}

#[derive(Debug, Clone)]
pub struct TableRef {
    pub table: String,
    pub alias: String,
    /// A derived table's query, printed in place of the table's name.
    pub derived: Option<Box<Select>>,
    /// Whether the derived table is written as a common table expression (`WITH q<alias> AS
    /// (...)` before the query), only in the outermost query's FROM.
    pub cte: bool,
}

impl TableRef {
    fn write(&self, out: &mut String, d: Dialect) {
        match &self.derived {
            Some(_) if self.cte => {
                let _ = write!(out, "q{}", self.alias);
            }
            Some(q) => {
                out.push('(');
                q.write(out, d);
                out.push(')');
            }
            None => out.push_str(&self.table),
        }
        let _ = write!(out, " AS {}", self.alias);
    }
}

#[derive(Debug, Clone)]
pub struct Join {
    pub kind: JoinKind,
    pub table: TableRef,
    pub on: Pred,
}

#[derive(Debug, Clone)]
pub enum From {
    /// `a JOIN b ON ... LEFT JOIN c ON ...`
    Joins { first: TableRef, joins: Vec<Join> },
    /// `a, b, c` with the join predicates in WHERE.
    Comma(Vec<TableRef>),
}

#[derive(Debug, Clone)]
pub struct Item {
    pub expr: Expr,
    /// Empty inside subqueries, which need no names.
    pub alias: String,
}

#[derive(Debug, Clone)]
pub struct Select {
    pub distinct: bool,
    /// Only with an ORDER BY over every item, so that the rows kept are determined.
    pub top: Option<u32>,
    pub items: Vec<Item>,
    /// `SELECT *` instead of the items: every column of every source, in the FROM clause's
    /// order. Only on a plain query without ORDER BY, whose items are then unused.
    pub star: bool,
    pub from: From,
    pub filter: Option<Pred>,
    pub group_by: Vec<Expr>,
    pub having: Option<Pred>,
    /// Item ordinals and whether descending.
    pub order_by: Vec<(usize, bool)>,
}

impl Select {
    /// Whether ORDER BY fixes the order of every row the query returns: it names every item, so
    /// rows it ties are equal.
    pub fn fully_ordered(&self) -> bool {
        let mut named: Vec<usize> = self.order_by.iter().map(|&(i, _)| i).collect();
        named.sort_unstable();
        named.dedup();
        !self.items.is_empty() && named.len() == self.items.len()
    }

    pub fn render(&self, dialect: Dialect) -> String {
        let mut out = String::new();
        let tables: Vec<&TableRef> = match &self.from {
            From::Joins { first, joins } => {
                std::iter::once(first).chain(joins.iter().map(|j| &j.table)).collect()
            }
            From::Comma(list) => list.iter().collect(),
        };
        let mut ctes = tables.iter().filter(|t| t.cte).peekable();
        if ctes.peek().is_some() {
            out.push_str("WITH ");
            for (i, t) in ctes.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "q{} AS (", t.alias);
                if let Some(q) = &t.derived {
                    q.write(&mut out, dialect);
                }
                out.push_str(") ");
            }
        }
        self.write(&mut out, dialect);
        out
    }

    fn write(&self, out: &mut String, d: Dialect) {
        out.push_str("SELECT ");
        if self.distinct {
            out.push_str("DISTINCT ");
        }
        if let (Some(n), Dialect::TSql) = (self.top, d) {
            let _ = write!(out, "TOP ({n}) ");
        }
        if self.star {
            out.push('*');
        }
        for (i, item) in self.items.iter().enumerate().filter(|_| !self.star) {
            if i > 0 {
                out.push_str(", ");
            }
            item.expr.write(out, d);
            if !item.alias.is_empty() {
                let _ = write!(out, " AS {}", item.alias);
            }
        }
        out.push_str(" FROM ");
        match &self.from {
            From::Joins { first, joins } => {
                first.write(out, d);
                for join in joins {
                    let kind = match join.kind {
                        JoinKind::Inner => "INNER JOIN",
                        JoinKind::Left => "LEFT JOIN",
                        JoinKind::Right => "RIGHT JOIN",
                        JoinKind::Full => "FULL JOIN",
                    };
                    let _ = write!(out, " {kind} ");
                    join.table.write(out, d);
                    out.push_str(" ON ");
                    join.on.write(out, d);
                }
            }
            From::Comma(tables) => {
                for (i, t) in tables.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    t.write(out, d);
                }
            }
        }
        if let Some(filter) = &self.filter {
            out.push_str(" WHERE ");
            filter.write(out, d);
        }
        if !self.group_by.is_empty() {
            out.push_str(" GROUP BY ");
            for (i, e) in self.group_by.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                e.write(out, d);
            }
        }
        if let Some(having) = &self.having {
            out.push_str(" HAVING ");
            having.write(out, d);
        }
        if !self.order_by.is_empty() {
            out.push_str(" ORDER BY ");
            for (i, &(item, desc)) in self.order_by.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&self.items[item].alias);
                out.push_str(if desc { " DESC" } else { " ASC" });
            }
        }
        if let (Some(n), Dialect::Sqlite) = (self.top, d) {
            let _ = write!(out, " LIMIT {n}");
        }
    }
}

impl Expr {
    pub fn column(alias: &str, column: &str) -> Expr {
        Expr::Column { alias: alias.to_string(), column: column.to_string() }
    }

    /// Calls `f` with each subquery directly in this expression (not those nested in them).
    pub fn subqueries(&self, f: &mut dyn FnMut(&Select)) {
        match self {
            Expr::Subquery(q) => f(q),
            Expr::Arith(_, a, b) | Expr::Concat(a, b) | Expr::Coalesce(a, b) => {
                a.subqueries(f);
                b.subqueries(f);
            }
            Expr::Case(p, a, b) => {
                p.subqueries(f);
                a.subqueries(f);
                b.subqueries(f);
            }
            Expr::Agg { arg, .. } => {
                if let Some(arg) = arg {
                    arg.subqueries(f);
                }
            }
            Expr::Column { .. } | Expr::Literal(_) => {}
        }
    }

    fn write(&self, out: &mut String, d: Dialect) {
        match self {
            Expr::Column { alias, column } => {
                let _ = write!(out, "{alias}.{column}");
            }
            Expr::Literal(cell) => out.push_str(&cell.literal()),
            Expr::Arith(op, a, b) => {
                out.push('(');
                a.write(out, d);
                out.push_str(match op {
                    ArithOp::Add => " + ",
                    ArithOp::Sub => " - ",
                });
                b.write(out, d);
                out.push(')');
            }
            Expr::Concat(a, b) => {
                out.push('(');
                a.write(out, d);
                out.push_str(match d {
                    Dialect::TSql => " + ",
                    Dialect::Sqlite => " || ",
                });
                b.write(out, d);
                out.push(')');
            }
            Expr::Case(when, then, otherwise) => {
                out.push_str("CASE WHEN ");
                when.write(out, d);
                out.push_str(" THEN ");
                then.write(out, d);
                out.push_str(" ELSE ");
                otherwise.write(out, d);
                out.push_str(" END");
            }
            Expr::Coalesce(a, b) => {
                out.push_str("COALESCE(");
                a.write(out, d);
                out.push_str(", ");
                b.write(out, d);
                out.push(')');
            }
            Expr::Agg { func, distinct, arg } => {
                out.push_str(match func {
                    AggFunc::Count => "COUNT(",
                    AggFunc::Sum => "SUM(",
                    AggFunc::Min => "MIN(",
                    AggFunc::Max => "MAX(",
                });
                if *distinct {
                    out.push_str("DISTINCT ");
                }
                match arg {
                    Some(arg) => arg.write(out, d),
                    None => out.push('*'),
                }
                out.push(')');
            }
            Expr::Subquery(query) => {
                out.push('(');
                query.write(out, d);
                out.push(')');
            }
        }
    }
}

impl Pred {
    /// Calls `f` with each subquery directly in this predicate (not those nested in them).
    pub fn subqueries(&self, f: &mut dyn FnMut(&Select)) {
        match self {
            Pred::Cmp(_, a, b) => {
                a.subqueries(f);
                b.subqueries(f);
            }
            Pred::And(a, b) | Pred::Or(a, b) => {
                a.subqueries(f);
                b.subqueries(f);
            }
            Pred::Not(p) | Pred::IsUnknown(p) => p.subqueries(f),
            Pred::IsNull { expr, .. } | Pred::Like { expr, .. } => expr.subqueries(f),
            Pred::Between { expr, low, high, .. } => {
                expr.subqueries(f);
                low.subqueries(f);
                high.subqueries(f);
            }
            Pred::InList { expr, list, .. } => {
                expr.subqueries(f);
                for e in list {
                    e.subqueries(f);
                }
            }
            Pred::InSubquery { expr, query, .. } => {
                expr.subqueries(f);
                f(query);
            }
            Pred::Exists { query, .. } => f(query),
        }
    }

    fn write(&self, out: &mut String, d: Dialect) {
        match self {
            Pred::Cmp(op, a, b) => {
                a.write(out, d);
                let _ = write!(out, " {} ", op.symbol());
                b.write(out, d);
            }
            Pred::And(a, b) | Pred::Or(a, b) => {
                out.push('(');
                a.write(out, d);
                out.push_str(if matches!(self, Pred::And(..)) { " AND " } else { " OR " });
                b.write(out, d);
                out.push(')');
            }
            Pred::Not(p) => {
                out.push_str("NOT (");
                p.write(out, d);
                out.push(')');
            }
            Pred::IsNull { expr, negated } => {
                expr.write(out, d);
                out.push_str(if *negated { " IS NOT NULL" } else { " IS NULL" });
            }
            Pred::Between { expr, low, high, negated } => {
                expr.write(out, d);
                out.push_str(if *negated { " NOT BETWEEN " } else { " BETWEEN " });
                low.write(out, d);
                out.push_str(" AND ");
                high.write(out, d);
            }
            Pred::InList { expr, list, negated } => {
                expr.write(out, d);
                out.push_str(if *negated { " NOT IN (" } else { " IN (" });
                for (i, e) in list.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    e.write(out, d);
                }
                out.push(')');
            }
            Pred::InSubquery { expr, query, negated } => {
                expr.write(out, d);
                out.push_str(if *negated { " NOT IN (" } else { " IN (" });
                query.write(out, d);
                out.push(')');
            }
            Pred::Exists { query, negated } => {
                out.push_str(if *negated { "NOT EXISTS (" } else { "EXISTS (" });
                query.write(out, d);
                out.push(')');
            }
            Pred::Like { expr, pattern, negated } => {
                expr.write(out, d);
                let _ = write!(out, " {}LIKE '{pattern}'", if *negated { "NOT " } else { "" });
            }
            Pred::IsUnknown(p) => {
                out.push_str("(CASE WHEN ");
                p.write(out, d);
                out.push_str(" THEN 1 WHEN NOT (");
                p.write(out, d);
                out.push_str(") THEN 0 END) IS NULL");
            }
        }
    }
}

/// A change to the data before the queries run, so that they read indexes maintained by
/// UPDATE and DELETE, not only built by INSERT.
#[derive(Debug, Clone)]
pub enum Mutation {
    Delete {
        table: String,
        filter: Pred,
    },
    /// Sets a column that is in no primary key (so no key can collide).
    Update {
        table: String,
        column: String,
        value: Expr,
        filter: Pred,
    },
}

impl Mutation {
    pub fn render(&self, d: Dialect) -> String {
        let mut out = String::new();
        let filter = match self {
            Mutation::Delete { table, filter } => {
                let _ = write!(out, "DELETE FROM {table}");
                filter
            }
            Mutation::Update { table, column, value, filter } => {
                let _ = write!(out, "UPDATE {table} SET {column} = ");
                value.write(&mut out, d);
                filter
            }
        };
        out.push_str(" WHERE ");
        filter.write(&mut out, d);
        out
    }
}
