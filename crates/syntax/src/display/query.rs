//! Prints queries, and the clauses that data modification shares with them (`WITH`, `TOP`,
//! `FROM`, `WHERE`, table hints, `VALUES` rows, `OPTION`).

use std::fmt::{Display, Formatter, Result, Write};

use super::{commas, quote, Alias, ColumnList, Separated};
use crate::ast::{
    Cte, Expr, Join, JoinKind, JsonColumn, OrderByItem, Query, QueryBody, QueryHint, Select,
    SelectItem, SetOperator, SingleKind, TableHint, TableSource, Top, XmlNamespace,
};

/// ` OPTION (...)` when there are query hints.
pub(super) struct OptionClause<'a>(pub(super) &'a [QueryHint]);

impl Display for OptionClause<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, " OPTION ({})", commas(self.0))
        }
    }
}

impl Display for QueryHint {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(&self.text)
    }
}

/// `WITH ctes ` when there are any.
pub(super) struct With<'a>(pub(super) &'a [XmlNamespace], pub(super) &'a [Cte]);

impl Display for With<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let With(namespaces, ctes) = *self;
        if namespaces.is_empty() {
            return if ctes.is_empty() { Ok(()) } else { write!(f, "WITH {} ", commas(ctes)) };
        }
        let items: Vec<String> = namespaces
            .iter()
            .map(|n| match &n.prefix {
                Some(p) => format!("'{}' AS {p}", n.uri.replace('\'', "''")),
                None => format!("DEFAULT '{}'", n.uri.replace('\'', "''")),
            })
            .collect();
        write!(f, "WITH XMLNAMESPACES ({})", items.join(", "))?;
        // The CTEs follow the namespaces under the same WITH.
        if ctes.is_empty() {
            f.write_str(" ")
        } else {
            write!(f, ", {} ", commas(ctes))
        }
    }
}

/// `TOP (...) ` when given.
pub(super) struct OptionalTop<'a>(pub(super) &'a Option<Top>);

impl Display for OptionalTop<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let Some(top) = self.0 else { return Ok(()) };
        write!(f, "TOP ({})", top.quantity)?;
        if top.percent {
            f.write_str(" PERCENT")?;
        }
        if top.with_ties {
            f.write_str(" WITH TIES")?;
        }
        f.write_char(' ')
    }
}

/// ` WITH (hints)` when there are any.
pub(super) struct TableHints<'a>(pub(super) &'a [TableHint]);

impl Display for TableHints<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, " WITH ({})", commas(self.0))
        }
    }
}

/// ` FROM sources` when there are any.
pub(super) struct FromClause<'a>(pub(super) &'a [TableSource]);

impl Display for FromClause<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, " FROM {}", commas(self.0))
        }
    }
}

/// ` WHERE condition` when there is one.
pub(super) struct WhereClause<'a>(pub(super) &'a Option<Expr>);

impl Display for WhereClause<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self.0 {
            Some(condition) => write!(f, " WHERE {condition}"),
            None => Ok(()),
        }
    }
}

/// A `VALUES` row: `(a, b)`.
pub(super) struct Row<'a>(pub(super) &'a [Expr]);

impl Display for Row<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "({})", commas(self.0))
    }
}

pub(super) fn rows_of(rows: &[Vec<Expr>]) -> Vec<Row<'_>> {
    rows.iter().map(|row| Row(row)).collect()
}

impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", With(&self.xml_namespaces, &self.ctes))?;
        self.fmt_rest(f)
    }
}

impl Query {
    /// The query after its WITH clause.
    fn fmt_rest(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", self.body)?;
        if !self.order_by.is_empty() {
            write!(f, " ORDER BY {}", commas(&self.order_by))?;
        }
        if let Some(offset) = &self.offset {
            write!(f, " OFFSET {} ROWS", offset.offset)?;
            if let Some(fetch) = &offset.fetch {
                write!(f, " FETCH NEXT {fetch} ROWS ONLY")?;
            }
        }
        if let Some(xml) = &self.for_xml {
            if xml.auto {
                f.write_str(" FOR XML AUTO")?;
            } else {
                let mode = if xml.raw { "RAW" } else { "PATH" };
                write!(f, " FOR XML {mode}('{}')", xml.element.replace('\'', "''"))?;
            }
            if xml.elements {
                f.write_str(", ELEMENTS")?;
            }
            if let Some(root) = &xml.root {
                write!(f, ", ROOT('{}')", root.replace('\'', "''"))?;
            }
            if xml.typed {
                f.write_str(", TYPE")?;
            }
        }
        let Some(json) = &self.for_json else { return Ok(()) };
        write!(f, " FOR JSON {}", if json.path { "PATH" } else { "AUTO" })?;
        if let Some(root) = &json.root {
            write!(f, ", ROOT('{}')", root.replace('\'', "''"))?;
        }
        if json.include_null_values {
            f.write_str(", INCLUDE_NULL_VALUES")?;
        }
        if json.without_array_wrapper {
            f.write_str(", WITHOUT_ARRAY_WRAPPER")?;
        }
        Ok(())
    }
}

impl Display for Cte {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}{} AS ({})", self.name, ColumnList(&self.columns), self.query)
    }
}

impl Display for QueryBody {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            QueryBody::Select(select) => write!(f, "{select}"),
            QueryBody::SetOperation { op, left, right } => {
                let op = match op {
                    SetOperator::Union => "UNION",
                    SetOperator::UnionAll => "UNION ALL",
                    SetOperator::Except => "EXCEPT",
                    SetOperator::Intersect => "INTERSECT",
                };
                write!(f, "{left} {op} {right}")
            }
            QueryBody::Parenthesized(query) => write!(f, "({query})"),
        }
    }
}

impl Display for Select {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str("SELECT ")?;
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        write!(f, "{}{}", OptionalTop(&self.top), commas(&self.items))?;
        if let Some(into) = &self.into {
            write!(f, " INTO {into}")?;
        }
        write!(f, "{}{}", FromClause(&self.from), WhereClause(&self.where_clause))?;
        match &self.grouping_sets {
            Some(sets) => {
                let sets: Vec<String> =
                    sets.iter().map(|set| format!("({})", commas(set))).collect();
                write!(f, " GROUP BY GROUPING SETS ({})", sets.join(", "))?;
            }
            None if !self.group_by.is_empty() => {
                write!(f, " GROUP BY {}", commas(&self.group_by))?;
            }
            None => {}
        }
        match &self.having {
            Some(having) => write!(f, " HAVING {having}"),
            None => Ok(()),
        }
    }
}

impl Display for SelectItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            SelectItem::Wildcard(None) => f.write_char('*'),
            SelectItem::Wildcard(Some(qualifier)) => write!(f, "{}.*", Separated(qualifier, ".")),
            SelectItem::Expr { expr, alias } => write!(f, "{expr}{}", Alias(alias.as_ref())),
            SelectItem::Assign { variable, op, value } => write!(f, "{variable} {op} {value}"),
        }
    }
}

impl Display for OrderByItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}{}", self.expr, if self.descending { " DESC" } else { "" })
    }
}

impl Display for JsonColumn {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{} {}", self.name, self.data_type)?;
        if let Some(path) = &self.path {
            write!(f, " '{}'", path.replace('\'', "''"))?;
        }
        if self.as_json {
            f.write_str(" AS JSON")?;
        }
        Ok(())
    }
}

impl Display for TableSource {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            TableSource::Table { name, alias, hints } => {
                write!(f, "{name}{}{}", Alias(alias.as_ref()), TableHints(hints))
            }
            TableSource::Variable { name, alias } => write!(f, "{name}{}", Alias(alias.as_ref())),
            TableSource::XmlNodes { target, xquery, alias, column } => {
                write!(f, "{target}.nodes({xquery}) AS {alias}({column})")
            }
            TableSource::Function { name, args, alias, columns } => write!(
                f,
                "{name}({}){}{}",
                commas(args),
                Alias(alias.as_ref()),
                ColumnList(columns)
            ),
            TableSource::Derived { query, alias, columns } => {
                write!(f, "({query}) AS {alias}{}", ColumnList(columns))
            }
            TableSource::Pivot(p) => write!(
                f,
                "{} PIVOT ({} FOR {} IN ({})) AS {}",
                p.source,
                p.aggregate,
                p.pivot_column,
                commas(&p.values),
                p.alias
            ),
            TableSource::Unpivot(u) => write!(
                f,
                "{} UNPIVOT ({} FOR {} IN ({})) AS {}",
                u.source,
                u.value,
                u.name,
                commas(&u.columns),
                u.alias
            ),
            TableSource::OpenJson { args, schema, alias } => {
                write!(
                    f,
                    "OPENJSON({}) WITH ({}){}",
                    commas(args),
                    commas(schema),
                    Alias(alias.as_ref())
                )
            }
            TableSource::OpenRowsetBulk { file, kind, alias, columns } => {
                let kind = match kind {
                    SingleKind::Blob => "SINGLE_BLOB",
                    SingleKind::Clob => "SINGLE_CLOB",
                    SingleKind::Nclob => "SINGLE_NCLOB",
                };
                write!(
                    f,
                    "OPENROWSET(BULK {}, {kind}){}{}",
                    quote(file),
                    Alias(alias.as_ref()),
                    ColumnList(columns)
                )
            }
            TableSource::Values { rows, alias, columns } => {
                write!(f, "(VALUES {}) AS {alias}{}", commas(&rows_of(rows)), ColumnList(columns))
            }
            TableSource::Join(join) => write!(f, "{join}"),
        }
    }
}

impl Display for Join {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let kind = match self.kind {
            JoinKind::Inner => "INNER JOIN",
            JoinKind::LeftOuter => "LEFT OUTER JOIN",
            JoinKind::RightOuter => "RIGHT OUTER JOIN",
            JoinKind::FullOuter => "FULL OUTER JOIN",
            JoinKind::Cross => "CROSS JOIN",
            JoinKind::CrossApply => "CROSS APPLY",
            JoinKind::OuterApply => "OUTER APPLY",
        };
        write!(f, "{} {kind} ", self.left)?;
        match &self.right {
            TableSource::Join(_) => write!(f, "({})", self.right)?,
            right => write!(f, "{right}")?,
        }
        match &self.on {
            Some(condition) => write!(f, " ON {condition}"),
            None => Ok(()),
        }
    }
}

impl Display for TableHint {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(&self.name.value)?;
        if self.args.is_empty() {
            Ok(())
        } else {
            write!(f, "({})", commas(&self.args))
        }
    }
}
