//! Plain assignments (`SELECT @v = expr, ... FROM t WHERE ...`, a loop's key lookup most
//! often) run straight from their block's kept plan: each row the plan reads assigns the
//! variables in order, as the general SELECT would; a lookup by a one-column unique key reads
//! its row into reused buffers.

use std::sync::Arc;

use walden_engine::types::{encode_key_columns_ordered, Value};

use super::BlockPlan;
use crate::ast::{BinaryOp, Expr, ExprKind, QueryBody, Select, SelectItem, SelectStatement};
use crate::exec::eval::{find_column, is_literal_or_variable, Col, Env};
use crate::exec::plan::access::{key_value, AccessPath, RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::{Counted, SqlError};

impl Run<'_> {
    /// `SELECT @v = expr, ... FROM t WHERE ...` (a loop's key lookup, most often) run straight
    /// from its block's valid kept plan: the plan's rows, each assigning the variables in
    /// order, and `@@ROWCOUNT` set, as the general path (`select_statement`, `query`,
    /// `select`) would, without its per-execution work for what such a statement cannot have
    /// (CTEs, grouping, windows, a select list's columns, sorting). False, having done
    /// nothing, for any other statement, or without a valid plan: the caller runs it the
    /// general way (which makes the plan for next time).
    pub(crate) fn assign_by_kept_plan(&mut self, st: &SelectStatement) -> Result<bool, SqlError> {
        let q = &st.query;
        let QueryBody::Select(sel) = &q.body else { return Ok(false) };
        if !matches!(sel.items.first(), Some(SelectItem::Assign { .. }))
            || self.s.opts.fmtonly
            || !st.hints.is_empty()
            || !q.ctes.is_empty()
            || !q.order_by.is_empty()
            || q.offset.is_some()
            || q.for_json.is_some()
            || q.for_xml.is_some()
            || !q.xml_namespaces.is_empty()
            || !self.s.explain_ctes.is_empty()
        {
            return Ok(false);
        }
        if !self.may_cache_block(sel) {
            return Ok(false);
        }
        let Some(plan) = self.kept_block(sel, &[]).map(Arc::clone) else { return Ok(false) };
        if !*plan.assigns_only.get_or_init(|| assigns_only(sel)) {
            return Ok(false);
        }
        let mut listed = Vec::new();
        let single;
        let parts: &[&Expr] = match &sel.where_clause {
            // A WHERE clause that is neither an AND nor an OR (a loop's `key = expr`) is its
            // own one conjunct, as `conjuncts` would list it: no list to build.
            Some(w)
                if !matches!(w.kind, ExprKind::Binary { op: BinaryOp::And | BinaryOp::Or, .. }) =>
            {
                single = [w];
                &single
            }
            Some(w) => {
                crate::exec::plan::join::conjuncts(w, &mut listed);
                &listed
            }
            None => &[],
        };
        let columns = plan.assigned_columns.get_or_init(|| assigned_columns(sel, &plan.cols));
        let lookup_key = *plan.lookup_key.get_or_init(|| lookup_key_column(&plan, columns));
        if let Some(key_column) = lookup_key.filter(|_| plan.own.len() == parts.len()) {
            if let Some(assigned) =
                self.assign_by_key(&plan, parts, key_column, &sel.items, columns)?
            {
                self.done(Counted::Select, assigned);
                return Ok(true);
            }
        }
        let table = self.kept_table(&plan, false);
        let mut assign = Assign::new(plan.cols(), &sel.items, columns, self.rowcount_limit());
        self.run_block_plan_into(&plan, &table, parts, None, &mut assign)?;
        let assigned = assign.assigned;
        // As `select_statement` counts an assignment's rows: at most SET ROWCOUNT's.
        self.done(Counted::Select, assigned as u64);
        Ok(true)
    }

    /// [`Run::assign_by_kept_plan`] of a plan that looks one row up by the one column of
    /// its table's unique clustered key, `key_column`, whose WHERE clause `conjuncts` are
    /// all its own (none constant, none checked after the seek), and whose assignments
    /// `items` all read a column bare (`columns`): the key encoded into a reused buffer,
    /// the row decoded into a reused row straight from its leaf, and the variables
    /// assigned from it, with what the general read (`Run::seek_row`) would find, lock and
    /// count. The number of rows assigned; None, having evaluated nothing, when the
    /// general read must run instead.
    fn assign_by_key(
        &mut self,
        plan: &BlockPlan,
        conjuncts: &[&Expr],
        key_column: usize,
        items: &[SelectItem],
        columns: &[Option<usize>],
    ) -> Result<Option<u64>, SqlError> {
        let Some((1, probe)) = plan.path.single_probe(conjuncts) else { return Ok(None) };
        let ansi_nulls = self.s.opts.semantics.ansi_nulls;
        if !ansi_nulls && is_literal_or_variable(probe) {
            // `= @null` looks for a NULL key, with the locks of a read: the general read's.
            return Ok(None);
        }
        let column = &plan.def.columns[key_column];
        let v = self.eval(probe, &Env::empty())?;
        // `= NULL` holds for no row, and a value the column cannot hold is no key: nothing
        // is read, as `Run::seek_row` reads nothing.
        if v.is_null() {
            return Ok(Some(0));
        }
        let mut key = std::mem::take(&mut self.s.plans.lookup_key);
        key.clear();
        let encoded = match key_value(v, column.ty) {
            Ok(Some(v)) => {
                encode_key_columns_ordered([(column.ty, column.text_order(), &v)], &mut key).is_ok()
            }
            Ok(None) => return Ok(Some(0)),
            Err(_) => false,
        };
        if !encoded {
            // A probe that does not convert to the key's type: a scan checking every
            // conjunct, as `Run::run_block_plan_into` falls back to.
            let mut assign = Assign::new(plan.cols(), items, columns, self.rowcount_limit());
            let all = Some(RowFilter { cols: plan.cols(), exprs: conjuncts, outer: None });
            let table = self.kept_table(plan, false);
            self.read_path_into(&table, &AccessPath::scan(), &Env::empty(), all, &mut assign)?;
            return Ok(Some(assign.assigned as u64));
        }
        let mut row = std::mem::take(&mut self.s.plans.lookup_row);
        let mark = self.io_mark();
        let (tx, plans, db) = self.tx_plans_and_db(plan.temp.is_some());
        let decoder = plans.point_decoder_of(&plan.def, plan.wanted.as_ref());
        let found = tx.seek_key_into(db, &plan.def, &key, decoder, &mut row);
        let found = found.map_err(|e| self.s.engine_error(e))?;
        self.io_note_of(&plan.def, mark);
        self.s.plans.lookup_key = key;
        if found {
            for (item, column) in items.iter().zip(columns) {
                if let (SelectItem::Assign { variable, op, .. }, Some(i)) = (item, column) {
                    self.assign_to(variable, *op, row[*i].clone())?;
                }
            }
        }
        self.s.plans.lookup_row = row;
        // SET ROWCOUNT's limit is at least one row, and a unique key finds at most one.
        Ok(Some(u64::from(found)))
    }
}

/// The table's column that [`Run::assign_by_key`] can look `plan`'s row up by, if it can run
/// it: a plain assignment whose every item reads a column of the table bare (`columns`), of
/// a table whose unique clustered key is one column, whose path fixes it by one equality,
/// and whose conjuncts are all the table's own, none checked after the seek.
fn lookup_key_column(plan: &BlockPlan, columns: &[Option<usize>]) -> Option<usize> {
    let index = plan.def.index(1).filter(|i| i.unique)?;
    let [key_column] = index.columns.as_slice() else { return None };
    let bare = columns.iter().all(|c| c.is_some_and(|i| i < plan.def.columns.len()));
    (bare && plan.constant.is_empty() && plan.checks.is_empty()).then_some(*key_column)
}

/// Assigns the variables of a plain assignment (`SELECT @v = expr, ...`) from each row it is
/// given, in order, as the general SELECT does, until SET ROWCOUNT's `limit` rows have.
struct Assign<'a> {
    cols: &'a [Col],
    items: &'a [SelectItem],
    /// For each item, the position among `cols` of the column it assigns when its value is
    /// a bare column reference (read without evaluating it).
    columns: &'a [Option<usize>],
    limit: usize,
    assigned: usize,
}

impl<'a> Assign<'a> {
    /// An assignment of `items` that has assigned no row yet.
    fn new(
        cols: &'a [Col],
        items: &'a [SelectItem],
        columns: &'a [Option<usize>],
        limit: usize,
    ) -> Assign<'a> {
        Assign { cols, items, columns, limit, assigned: 0 }
    }
}

impl RowSink for Assign<'_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        let env = Env { cols: self.cols, row: &row, outer: None, computed: &[] };
        for (item, column) in self.items.iter().zip(self.columns) {
            if let SelectItem::Assign { variable, op, value } = item {
                let v = match column.and_then(|i| row.get(i)) {
                    Some(v) => v.clone(),
                    None => run.eval(value, &env)?,
                };
                run.assign_to(variable, *op, v)?;
            }
        }
        self.assigned += 1;
        Ok(self.assigned < self.limit)
    }
}

/// For each item of `sel` (all assignments), the position among `cols` of the column its
/// value is when that is a bare reference to exactly one of them: what evaluating it finds,
/// by name, at every row.
fn assigned_columns(sel: &Select, cols: &[Col]) -> Vec<Option<usize>> {
    sel.items
        .iter()
        .map(|item| match item {
            SelectItem::Assign { value, .. } => match &value.kind {
                ExprKind::Column(parts) => find_column(cols, parts).ok().flatten(),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Whether `sel` only assigns variables, from no aggregate or window, with none of the
/// clauses that make the general SELECT group, sort, cut or copy its rows: then each row its
/// plan reads assigns the variables in order, which is all the general path does with it.
fn assigns_only(sel: &Select) -> bool {
    sel.items.iter().all(|i| matches!(i, SelectItem::Assign { .. }))
        && !sel.distinct
        && sel.top.is_none()
        && sel.into.is_none()
        && sel.group_by.is_empty()
        && sel.grouping_sets.is_none()
        && sel.having.is_none()
        && crate::exec::execute::query::select_aggregates(sel, &[]).is_empty()
        && crate::exec::execute::query::select_windows(sel, &[]).is_empty()
}
