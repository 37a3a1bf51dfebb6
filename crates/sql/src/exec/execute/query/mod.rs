//! Queries: `FROM` sources and joins, `WHERE`, grouping and aggregates, window functions,
//! the select list, `DISTINCT`, set operations, `ORDER BY`, `TOP` and `OFFSET`.
//!
//! Execution is mostly by materialization: each step produces all of its rows before the
//! next step runs, except that a SELECT of one source may stream to the output and a
//! grouping takes its FROM clause's rows as they come (`join/stream.rs`). A row found by
//! its key is a seek rather than a scan ([`Run::table_rows`]).
//!
//! This file holds the rows a stage hands the next ([`Rows`]), the tables a query names
//! ([`TableRef`], [`Relation`]) and [`Run::query`], which runs a query's CTEs, body, ORDER
//! BY and OFFSET. The stages are in these files, in the order a query meets them:
//!
//! * `from`: one source's rows (tables, views, CTEs, system views, derived tables) and
//!   name resolution; `inline` rewrites a block so that the views and derived tables it
//!   reads become its own tables; `table_functions` (`OPENJSON`, `STRING_SPLIT`, `GENERATE_SERIES`)
//!   and `pivot` (`PIVOT`, `UNPIVOT`) make or reshape a source's rows. Joining sources is
//!   `exec::join`'s;
//! * `select`: one SELECT, from its FROM clause to `TOP`, and its select list;
//! * `grouping`: `GROUP BY` and its grouping sets, the group key, and finding aggregate and
//!   window calls;
//! * `set_operations`: `UNION`, `INTERSECT`, `EXCEPT`, and the type a computed column
//!   settles on;
//! * `order`: `ORDER BY` keys and collations, the order of values, `TOP` and `OFFSET`;
//! * `for_xml_json`: `FOR JSON` and `FOR XML` over the finished rows.

use std::sync::Arc;

use walden_engine::catalog::{TableDef, ViewDef};
use walden_engine::types::Value;
use walden_engine::Database;

use crate::ast::{Expr, OffsetFetch, OrderByItem, Query, QueryBody};
use crate::exec::eval::{Col, Env};
use crate::exec::scalar::collation;
use crate::exec::session::Run;
use crate::exec::{RowSet, SqlError};

mod for_xml_json;
mod from;
mod grouping;
mod inline;
mod numbered;
mod order;
mod pivot;
mod select;
mod set_operations;
mod table_functions;

use for_xml_json::{auto_element, for_json, for_xml};
pub(crate) use from::display_name;
pub(crate) use grouping::{
    group_key, grouped_columns, grouping, grouping_sets, push_group_key, select_aggregates,
    select_windows, visit_children,
};
pub(crate) use inline::{bare_select, has_subquery, outer_joins_pulled_up, shown_alias};
pub(crate) use order::{
    bind_order_by, compare_keys, compare_row_keys, order_collations, sort_by_keys,
    sorts_by_source_column, KeySources,
};
pub(crate) use select::{bound, expr_name, TOP_N_ROUND};
pub(crate) use set_operations::{infer_type, unify_column, unify_value, ValueType};

/// The name of the hidden column that carries a base table row's locator, for UPDATE and
/// DELETE to find the rows they change, and for a cursor over a heap to find its rows again
/// (a reference of this exact name matches it, see `find_column`; the leading U+0001 keeps
/// it out of the names clients write).
pub(crate) const ROWID: &str = "\u{1}rowid";

/// How many rows a table scan reads, or a filter, grouping, aggregate, projection or sort
/// computes, between two questions to the client's cancel signal.
pub(crate) const ROWS_PER_INTERRUPTION_POINT: usize = 1024;

/// Intermediate rows with their columns.
#[derive(Debug, Default, Clone)]
pub(crate) struct Rows {
    pub(crate) cols: Vec<Col>,
    pub(crate) rows: Vec<Vec<Value>>,
}

impl Rows {
    /// The positions of the columns a client sees (not the hidden ones).
    pub(crate) fn visible(&self) -> Vec<usize> {
        self.cols.iter().enumerate().filter(|(_, c)| !c.hidden).map(|(i, _)| i).collect()
    }

    /// The visible columns and their values as a result set, the values moved, not copied.
    pub(crate) fn into_row_set(self) -> RowSet {
        let visible = self.visible();
        let columns = visible.iter().map(|&i| &self.cols[i]).map(column_info).collect();
        let rows = if visible.len() == self.cols.len() {
            self.rows
        } else {
            self.rows
                .into_iter()
                .map(|mut r| {
                    visible.iter().map(|&i| std::mem::replace(&mut r[i], Value::Null)).collect()
                })
                .collect()
        };
        RowSet { columns, rows }
    }
}

/// How a result column is described to the client: its name, type and nullability, and its
/// collation and declared type where known.
pub(crate) fn column_info(c: &Col) -> crate::exec::ColumnInfo {
    crate::exec::ColumnInfo {
        name: c.name.clone(),
        ty: c.ty,
        nullable: c.nullable,
        collation: c.collation.map(|k| k.name.as_str()),
        declared: c.declared,
    }
}

/// The columns of a table's rows, qualified by `qual`.
pub(crate) fn table_cols(def: &TableDef, qual: &str) -> Vec<Col> {
    def.columns
        .iter()
        .map(|c| Col {
            nullable: c.nullable,
            collation: collation::of_column(c),
            declared: c.declared,
            ..Col::new(Some(qual), &c.name, c.ty)
        })
        .collect()
}

/// [`table_cols`] and, last, the hidden row locator: the columns of a table's rows as its
/// reads give them.
pub(crate) fn table_read_cols(def: &TableDef, qual: &str) -> Vec<Col> {
    let mut cols = table_cols(def, qual);
    let locator = walden_engine::types::SqlType::VarBinary(walden_engine::types::Len::N(900));
    cols.push(Col { qual: Some(qual.to_string()), ..Col::hidden(ROWID, locator) });
    cols
}

/// What a table name in a query or a change resolves to.
pub(crate) enum Relation {
    /// A table.
    Table(TableRef),
    /// A view, and its database.
    View(Arc<Database>, ViewDef),
}

/// A resolved table: its database and definition.
pub(crate) struct TableRef {
    pub(crate) db: Arc<Database>,
    /// Shared with the catalog: resolving a table copies nothing.
    pub(crate) def: Arc<TableDef>,
    /// The name to qualify its columns with.
    pub(crate) qual: String,
    /// When a change goes through a view `WITH CHECK OPTION`: the view's WHERE, in this
    /// table's columns, which every inserted or updated row must satisfy (error 550).
    pub(crate) view_check: Option<Expr>,
    /// The columns a query reads of it (None: all): a read decodes only those, and the
    /// others are NULL in its rows. Set only on a query's table leaves
    /// (`join.rs`, `Demand`), never on a table a change reads.
    pub(crate) wanted: Option<Arc<[bool]>>,
}

impl Run<'_> {
    /// Runs a query: its CTEs, body, ORDER BY and OFFSET.
    pub(crate) fn query(&mut self, q: &Query, outer: Option<&Env<'_>>) -> Result<Rows, SqlError> {
        if let Some(q) = self.inline_ctes(q) {
            return self.query(&q, outer);
        }
        let _namespaces = (!q.xml_namespaces.is_empty())
            .then(|| crate::exec::scalar::xml_methods::enter_namespaces(&q.xml_namespaces));
        let base = self.ctes.len();
        let result = (|| {
            self.push_ctes(&q.ctes, outer)?;
            self.body(&q.body, &q.order_by, q.offset.as_ref(), outer)
        })();
        self.ctes.truncate(base);
        match (&q.for_json, &q.for_xml) {
            (Some(json), _) => for_json(result?, json),
            (None, Some(xml)) if xml.auto => {
                let mut xml = xml.clone();
                xml.element = auto_element(&q.body)?;
                for_xml(result?, &xml)
            }
            (None, Some(xml)) => for_xml(result?, xml),
            (None, None) => result,
        }
    }

    /// Materializes `ctes` in order and puts each in scope (in [`Run::ctes`]) for the rest of
    /// the statement; the caller truncates [`Run::ctes`] back when the statement is done.
    pub(crate) fn push_ctes(
        &mut self,
        ctes: &[crate::ast::Cte],
        outer: Option<&Env<'_>>,
    ) -> Result<(), SqlError> {
        for cte in ctes {
            let mut rows = match self.recursive_cte(cte, outer)? {
                Some(rows) => rows,
                None => self.query(&cte.query, outer)?,
            };
            for (c, name) in rows.cols.iter_mut().zip(&cte.columns) {
                c.name = name.value.clone();
            }
            self.ctes.push((cte.name.value.to_ascii_lowercase(), Arc::new(rows.into_row_set())));
        }
        Ok(())
    }

    fn body(
        &mut self,
        body: &QueryBody,
        order_by: &[OrderByItem],
        offset: Option<&OffsetFetch>,
        outer: Option<&Env<'_>>,
    ) -> Result<Rows, SqlError> {
        match body {
            QueryBody::Select(sel) => self.select(sel, order_by, offset, outer),
            QueryBody::Parenthesized(q) => {
                let rows = self.query(q, outer)?;
                self.order_output(rows, order_by, offset, outer)
            }
            QueryBody::SetOperation { .. } => {
                let rows = self.set_operations(body, outer)?;
                self.order_output(rows, order_by, offset, outer)
            }
        }
    }
}
