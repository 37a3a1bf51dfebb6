//! Where a streamed SELECT's rows come from when its FROM clause is one source (a table
//! read by its access path, computed rows, an outer join's pairs as they are made, or a
//! grouped derived table's groups), and the hash aggregate a grouped SELECT streams its FROM
//! clause into.

use walden_engine::types::Value;

use super::super::explain::estimated_leaf;
use super::super::outer::{outer_join_of, OuterJoin};
use super::super::windowed::WindowedSource;
use super::super::Reduced;
use super::super::{conjuncts, Filtered, Flat, FromSink, Input};
use crate::ast::{Expr, ExprKind, Query, SelectItem, TableSource};
use crate::exec::bind::demand::Demand;
use crate::exec::eval::{full_text_refusal, Col, Env};
use crate::exec::execute::aggregate::Grouping;
use crate::exec::execute::query::{
    grouped_columns, grouping_sets, select_aggregates, select_windows,
};
use crate::exec::plan::access::{AccessPath, RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The one source of a SELECT block, ready to give its rows one at a time.
pub(in crate::exec::plan::join) struct OneSource<'e> {
    pub(in crate::exec::plan::join) cols: Vec<Col>,
    /// The WHERE clause's conjuncts, every one applied as the rows are read.
    pub(in crate::exec::plan::join) parts: Vec<&'e Expr>,
    pub(in crate::exec::plan::join) read: OneRead<'e>,
}

/// How a [`OneSource`]'s rows are had.
pub(in crate::exec::plan::join) enum OneRead<'e> {
    /// A table, by the access path the planner chose.
    Table(crate::exec::execute::query::TableRef, AccessPath<'e>),
    /// Rows computed up front (a view, a derived table).
    Rows(Vec<Vec<Value>>),
    /// An outer join, its left side read, its pairs made as they are read.
    Outer(Box<OuterJoin<'e>>),
    /// A grouped derived table's groups, made but not yet given out.
    Groups(Box<GroupedSource<'e>>),
    /// A derived table of window calls, its rows gone into its windows (`windowed.rs`).
    Windows(Box<WindowedSource<'e>>),
    /// None: the plan is only being explained.
    Nothing,
}

/// Gives each row to a hash aggregate, made when the rows' columns are known.
struct Grouped<'s, 'a, 'o> {
    keys: &'s [&'a Expr],
    aggs: &'s [&'a Expr],
    grouping: Option<Grouping<'a>>,
    outer: Option<&'o Env<'o>>,
}

impl RowSink for Grouped<'_, '_, '_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        self.push_borrowed(run, &row)
    }

    /// A group copies its first row; no other row is kept.
    fn borrows(&self) -> bool {
        true
    }

    fn push_borrowed(&mut self, run: &mut Run<'_>, row: &[Value]) -> Result<bool, SqlError> {
        match &mut self.grouping {
            Some(grouping) => grouping.push(run, row, self.outer)?,
            None => return Err(SqlError::new(50000, "Walden grouped rows of unknown columns.")),
        }
        Ok(true)
    }
}

impl FromSink for Grouped<'_, '_, '_> {
    fn start(&mut self, run: &mut Run<'_>, cols: &[Col]) -> Result<(), SqlError> {
        self.grouping = Some(Grouping::new(run, cols, self.keys, self.aggs, true)?);
        Ok(())
    }
}

/// A derived table `(SELECT keys..., COUNT(*) ... FROM ... GROUP BY keys) AS d` that is the
/// one source of its block: its hash aggregate has taken its rows, and each group, once
/// through HAVING and the select list, goes to the block as the aggregate gives it out
/// (`Grouping::finish_into`), so the block's rows are never held as a second copy of the
/// groups (which spill past the grant, `aggregate.rs`).
pub(in crate::exec::plan::join) struct GroupedSource<'e> {
    grouping: Grouping<'e>,
    keys: Vec<&'e Expr>,
    /// The grouped rows' columns, and where each aggregate is in them.
    cols: Vec<Col>,
    computed: Vec<(usize, usize)>,
    having: Option<&'e Expr>,
    /// The derived table's select list over the grouped rows.
    exprs: Vec<Option<&'e Expr>>,
    stars: Vec<Option<usize>>,
}

/// The type of a select-list item of a grouped derived table that streams: known before
/// its values (a column, CAST, CONVERT, variable) or a count; None for anything typed by
/// its values, which the collected derived table would type by all of them.
fn count_type(e: &Expr) -> Option<walden_engine::types::SqlType> {
    use walden_engine::types::SqlType;
    match &e.kind {
        ExprKind::Function(f) if f.over.is_none() && f.name.schema.is_none() => {
            let name = &f.name.name.value;
            if name.eq_ignore_ascii_case("COUNT") {
                Some(SqlType::Int)
            } else if name.eq_ignore_ascii_case("COUNT_BIG") {
                Some(SqlType::BigInt)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The grouped SELECT of a derived table that can feed its block group by group: one
/// GROUP BY (no grouping sets), no DISTINCT, TOP, ORDER BY, window, CTE, set operator, `*`
/// or FOR JSON/XML, and select-list items that name their columns (or the table's column
/// list does) and are columns, CASTs, CONVERTs or counts.
fn groupable<'q>(q: &'q Query, columns: &[crate::ast::Ident]) -> Option<&'q crate::ast::Select> {
    let sel = crate::exec::execute::query::bare_select(q)?;
    let plain = !sel.group_by.is_empty()
        && !sel.from.is_empty()
        && select_windows(sel, &[]).is_empty()
        && (columns.is_empty() || columns.len() == sel.items.len());
    if !plain {
        return None;
    }
    items_stream(sel, columns, count_type).then_some(sel)
}

/// The columns a derived table (`alias`, `columns` its column list) gives its block: its
/// select list's `out_cols` under its alias and names, each typed by its expression where
/// [`items_stream`]'s `known` types it (a value-typed column would otherwise wait for its
/// values, which a streamed source announces before).
pub(in crate::exec::plan::join) fn derived_columns(
    out_cols: Vec<Col>,
    exprs: &[Option<&Expr>],
    alias: &crate::ast::Ident,
    columns: &[crate::ast::Ident],
    known: impl Fn(&Expr) -> Option<walden_engine::types::SqlType>,
) -> Vec<Col> {
    let mut cols = Vec::with_capacity(out_cols.len());
    for (i, (mut c, e)) in out_cols.into_iter().zip(exprs).enumerate() {
        if c.hidden {
            c.ty = e.and_then(&known).unwrap_or(c.ty);
            c.hidden = false;
        }
        c.qual = Some(alias.value.clone());
        if let Some(n) = columns.get(i) {
            c.name = n.value.clone();
        }
        cols.push(c);
    }
    cols
}

/// Whether every select-list item of `sel` (a derived table's, `columns` its column list)
/// names its column (an alias, the column list, or a column) and has a type known before
/// its values: a column, CAST, CONVERT, variable, or one `known` types. Such a derived table
/// can give its block rows as they are made: the block's columns are announced first.
pub(in crate::exec::plan::join) fn items_stream(
    sel: &crate::ast::Select,
    columns: &[crate::ast::Ident],
    known: impl Fn(&Expr) -> Option<walden_engine::types::SqlType>,
) -> bool {
    sel.items.iter().enumerate().all(|(i, item)| {
        let SelectItem::Expr { expr, alias } = item else { return false };
        let named =
            alias.is_some() || columns.get(i).is_some() || matches!(expr.kind, ExprKind::Column(_));
        let typed = matches!(
            expr.kind,
            ExprKind::Column(_) | ExprKind::Cast(_) | ExprKind::Convert(_) | ExprKind::Variable(_)
        ) || known(expr).is_some();
        named && typed
    })
}

impl Run<'_> {
    /// The one source of `sel`, if its FROM clause is one source that is not an inner join
    /// and its WHERE clause has no subquery (which the planner may make a semi-join), with
    /// the access path chosen for its conjuncts: nothing is read yet.
    pub(in crate::exec::plan::join) fn one_source<'e: 'p, 'p>(
        &mut self,
        sel: &'e crate::ast::Select,
        order_by: &'e [crate::ast::OrderByItem],
        outer: Option<&Env<'_>>,
        implied: &'p mut Vec<Expr>,
    ) -> Result<Option<OneSource<'p>>, SqlError> {
        if sel.from.is_empty()
            || self.joins_reduced(sel)
            || sel.where_clause.as_ref().is_some_and(crate::exec::execute::query::has_subquery)
        {
            return Ok(None);
        }
        let mut parts = Vec::new();
        if let Some(w) = &sel.where_clause {
            conjuncts(w, &mut parts);
        }
        // A kept plan (`exec::plan_cache`) replaces all of the planning below.
        if let Some(plan) = self.block_plan_of(sel, order_by) {
            let (cols, parts, read) = self.bind_block_plan(plan, &parts, outer)?;
            let read = read.map_or(OneRead::Nothing, |(t, path)| OneRead::Table(t, path));
            return Ok(Some(OneSource { cols, parts, read }));
        }
        let versions = (self.s.db.schema_version(), self.s.instance.tempdb().schema_version());
        if let Some((cols, grouped)) = self.grouped_source(&sel.from[0], outer)? {
            for part in &parts {
                full_text_refusal(part, &[&cols])?;
            }
            let read = OneRead::Groups(Box::new(grouped));
            return Ok(Some(OneSource { cols, parts, read }));
        }
        if let Some((cols, windowed)) = self.windowed_source(&sel.from[0], outer)? {
            for part in &parts {
                full_text_refusal(part, &[&cols])?;
            }
            let read = OneRead::Windows(Box::new(windowed));
            return Ok(Some(OneSource { cols, parts, read }));
        }
        // As in `plan_pushed`: an outer join may apply these to its preserved side.
        let mut flat = Flat::default();
        let mut on = Vec::new();
        let demand = Demand::of_select(sel, order_by);
        let mut joined = None;
        let src = &sel.from[0];
        match outer_join_of(src) {
            Some(j) => {
                let (left, right, on) = (&j.left, &j.right, j.on.as_ref());
                let d = demand.as_ref();
                let join =
                    self.plan_outer_join(left, right, j.kind, on, &parts, outer, d, implied)?;
                flat.leaves.push(estimated_leaf(join.cols.clone(), 0.0));
                joined = Some(join);
            }
            None => self.flatten(
                src,
                &mut flat,
                &mut on,
                &parts,
                outer,
                demand.as_ref(),
                &Reduced::default(),
            )?,
        }
        if flat.leaves.len() != 1 {
            return Ok(None);
        }
        parts.extend(on);
        let cols = flat.leaves[0].cols.clone();
        for part in &parts {
            full_text_refusal(part, &[&cols])?;
        }
        // Conjuncts of no column of the source (constants, the enclosing query's columns)
        // are checked once, as `join_leaves` does: one that does not hold reads nothing.
        let outer_env = Env { cols: &[], row: &[], outer, computed: &[] };
        for &part in &parts {
            if flat.leaves_of(part) == Some(0) && self.predicate(part, &outer_env)? != Some(true) {
                return Ok(Some(OneSource { cols, parts, read: OneRead::Nothing }));
            }
        }
        // The outer join's pairs are made as the block reads them, not held.
        if let Some(join) = joined {
            return Ok(Some(OneSource { cols, parts, read: OneRead::Outer(Box::new(join)) }));
        }
        self.gather_estimates(&mut flat, &parts);
        if self.may_cache_block(sel) {
            if let Some(plan) = self.block_plan(sel, order_by, &flat, versions) {
                self.s.plans.insert(sel, std::sync::Arc::new(plan));
            }
        }
        let read = match std::mem::replace(&mut flat.leaves[0].input, Input::Estimated(0.0)) {
            Input::Table(t) => {
                let path = self.path(&flat, &t, &parts, 0, 0);
                OneRead::Table(t, path)
            }
            Input::Rows(rows) => OneRead::Rows(rows),
            Input::Estimated(_) => OneRead::Nothing,
        };
        Ok(Some(OneSource { cols, parts, read }))
    }

    /// Gives `sink` the rows of `read` that satisfy `parts`, until it says stop.
    pub(in crate::exec::plan::join) fn read_one_source(
        &mut self,
        read: OneRead<'_>,
        cols: &[Col],
        parts: &[&Expr],
        outer: Option<&Env<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        match read {
            OneRead::Table(t, path) => {
                let keep = Some(RowFilter { cols, exprs: parts, outer });
                let env = Env { cols: &[], row: &[], outer, computed: &[] };
                self.read_path_or_scan_into(&t, &path, &env, keep, sink)?;
                Ok(())
            }
            OneRead::Rows(rows) => self.push_rows(rows, cols, parts, outer, sink),
            OneRead::Outer(join) => {
                let mut filtered = Filtered { cols, exprs: parts, outer, sink };
                self.run_outer_join(*join, outer, Some(&mut filtered))?;
                Ok(())
            }
            OneRead::Groups(g) => {
                let GroupedSource { grouping, keys, cols: gcols, computed, having, exprs, stars } =
                    *g;
                let mut n = 0;
                grouping.finish_into(self, &keys, outer, &mut |run, row| {
                    run.row_interruption_point(n)?;
                    n += 1;
                    let env = Env { cols: &gcols, row: &row, outer, computed: &computed };
                    if let Some(h) = having {
                        if run.predicate(h, &env)? != Some(true) {
                            return Ok(true);
                        }
                    }
                    let out = run.project(&exprs, &stars, &env)?;
                    if !run.all_hold(parts, cols, &out, outer)? {
                        return Ok(true);
                    }
                    sink.push(run, out)
                })?;
                Ok(())
            }
            OneRead::Windows(w) => self.read_windowed(*w, cols, parts, outer, sink),
            OneRead::Nothing => Ok(()),
        }
    }

    /// GROUP BY (one grouping set, `keys`) and the aggregates `aggs` of a SELECT block,
    /// hashed as the rows come (`aggregate.rs`): those of a block of one source as its read
    /// finds them, those of a join as its last step makes them where the plan allows
    /// (`Run::plan_from_into`), so that the block's rows are not held. The grouped rows,
    /// their columns and where each aggregate is.
    #[allow(clippy::type_complexity)]
    pub(crate) fn group_from(
        &mut self,
        sel: &crate::ast::Select,
        order_by: &[crate::ast::OrderByItem],
        keys: &[&Expr],
        aggs: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<(Vec<Col>, Vec<Vec<Value>>, Vec<(usize, usize)>), SqlError> {
        let grouping = self.group_into(sel, order_by, keys, aggs, outer)?;
        let cols = grouping.cols().to_vec();
        // Bound as SQL Server binds them, whether or not a row came: every name of the
        // GROUP BY, the select list and HAVING is the FROM clause's or an enclosing query's.
        let items = sel.items.iter().filter_map(|i| match i {
            SelectItem::Expr { expr, .. } | SelectItem::Assign { value: expr, .. } => Some(expr),
            SelectItem::Wildcard(_) => None,
        });
        let names: Vec<Option<&Expr>> =
            keys.iter().copied().chain(items).chain(sel.having.as_ref()).map(Some).collect();
        crate::exec::execute::query::bound(
            &names,
            &Env { cols: &cols, row: &[], outer, computed: &[] },
        )?;
        // A DISTINCT is grouped here too, by its select list, with nothing to check.
        if !sel.group_by.is_empty() || !aggs.is_empty() {
            crate::exec::bind::grouping::check_grouped(sel, &cols)?;
        }
        let rows = grouping.finish(self, keys, outer)?;
        let (gcols, computed) = grouped_columns(&cols, aggs);
        Ok((gcols, rows, computed))
    }

    /// [`Run::group_from`]'s hash aggregate, every row of the block given to it, not yet
    /// finished.
    fn group_into<'a>(
        &mut self,
        sel: &crate::ast::Select,
        order_by: &[crate::ast::OrderByItem],
        keys: &[&'a Expr],
        aggs: &[&'a Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<Grouping<'a>, SqlError> {
        let mut sink = Grouped { keys, aggs, grouping: None, outer };
        let mut implied = Vec::new();
        match self.one_source(sel, order_by, outer, &mut implied)? {
            Some(OneSource { cols, parts, read }) => {
                sink.start(self, &cols)?;
                // A table read in the order of the GROUP BY's columns is grouped as a stream
                // aggregate groups; the order must also be the scan's, which the read falls
                // back to when a probe does not convert.
                if let (OneRead::Table(t, path), Some(grouping)) = (&read, &mut sink.grouping) {
                    grouping.take_ordered_input(|order| {
                        path.delivers_order(&t.def, order)
                            && AccessPath::scan().delivers_order(&t.def, order)
                    });
                }
                self.read_one_source(read, &cols, &parts, outer, &mut sink)?;
            }
            None => {
                let demand = Demand::of_select(sel, order_by);
                let filter = sel.where_clause.as_ref();
                self.plan_from_into(&sel.from, filter, outer, demand.as_ref(), &mut sink)?;
            }
        }
        sink.grouping.ok_or_else(|| SqlError::new(50000, "Walden grouped rows of unknown columns."))
    }

    /// `src` as a [`GroupedSource`] with its columns (qualified by its alias), if it is a
    /// derived table that can feed its block group by group (`groupable`): its rows are
    /// grouped now.
    fn grouped_source<'e>(
        &mut self,
        src: &'e TableSource,
        outer: Option<&Env<'_>>,
    ) -> Result<Option<(Vec<Col>, GroupedSource<'e>)>, SqlError> {
        let TableSource::Derived { query, alias, columns } = src else { return Ok(None) };
        let Some(dsel) = groupable(query, columns) else { return Ok(None) };
        let (_, sets) = grouping_sets(&dsel.group_by, None)?;
        let Ok([keys]) = <[Vec<&Expr>; 1]>::try_from(sets) else { return Ok(None) };
        if keys.is_empty() {
            return Ok(None);
        }
        let aggs = select_aggregates(dsel, &[]);
        // The same grouping the derived table's own SELECT would make.
        let grouping = self.group_into(dsel, &[], &keys, &aggs, outer)?;
        let (gcols, computed) = grouped_columns(grouping.cols(), &aggs);
        let list = self.select_list(dsel, &gcols)?;
        let cols = derived_columns(list.out_cols, &list.exprs, alias, columns, count_type);
        let grouped = GroupedSource {
            grouping,
            keys,
            cols: gcols,
            computed,
            having: dsel.having.as_ref(),
            exprs: list.exprs,
            stars: list.stars,
        };
        Ok(Some((cols, grouped)))
    }

    /// Gives `sink` the rows for which every conjunct of `parts` holds, until it says stop.
    fn push_rows(
        &mut self,
        rows: Vec<Vec<Value>>,
        cols: &[Col],
        parts: &[&Expr],
        outer: Option<&Env<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        for (n, row) in rows.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            if self.all_hold(parts, cols, &row, outer)? && !sink.push(self, row)? {
                break;
            }
        }
        Ok(())
    }
}
