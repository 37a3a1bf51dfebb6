//! `SET SHOWPLAN_TEXT ON` and `SET SHOWPLAN_ALL ON`: while either is on, a statement is not
//! run; its plan is returned instead, as SQL Server returns it, with SQL Server's operator
//! names (Clustered Index Scan and Seek, Index Seek, Key Lookup, Nested Loops, Hash Match,
//! Sort, Top, Stream Aggregate, Compute Scalar, Filter, Concatenation, Constant Scan, and
//! the Insert, Update and Delete operators).
//!
//! The FROM clause's plan comes from `join::explain`, which makes the executor's choices
//! from estimates; the operators above it (filter, aggregation, window functions, the select
//! list, DISTINCT, sort, TOP) follow `Run::select` in the order it applies them.
//!
//! SHOWPLAN_TEXT returns two result sets per statement, each with one `StmtText` column:
//! the statement's text, then one row per operator drawn as a tree (`  |--Sort(...)`).
//! SHOWPLAN_ALL returns one result set per statement, with the statement's row first and
//! one row per operator with its ids, operator names, argument and estimated rows.

use walden_engine::types::{Len, SqlType, Value};

use crate::ast::{
    Expr, InsertSource, OrderByItem, Query, QueryBody, Select, SelectItem, SetOperator, Statement,
    StatementKind, TableSource, TableTarget,
};
use crate::exec::bind::demand::Demand;
use crate::exec::execute::query::{has_subquery, select_aggregates, select_windows};
use crate::exec::output::ColumnInfo;
use crate::exec::plan::showplan_xml::PlannedStatement;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Which SHOWPLAN is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Showplan {
    Text,
    All,
    /// One ShowPlanXML document per batch (`showplan_xml.rs`).
    Xml,
}

/// One operator of a plan.
#[derive(Debug, Clone)]
pub(crate) struct PlanNode {
    physical: &'static str,
    logical: &'static str,
    /// What the operator works on (`OBJECT:(...)`, `SEEK:(...)`, `WHERE:(...)`, ...).
    argument: String,
    /// Estimated rows out.
    rows: f64,
    /// A join's or aggregate's logical operator is part of its line in SHOWPLAN_TEXT
    /// (`Nested Loops(Inner Join, ...)`); a scan's is not.
    logical_in_text: bool,
    children: Vec<PlanNode>,
}

impl PlanNode {
    pub(crate) fn new(
        physical: &'static str,
        logical: &'static str,
        argument: String,
        rows: f64,
    ) -> PlanNode {
        // An inlined view's tables are shown by their aliases as written.
        let argument = crate::exec::execute::query::shown_alias(&argument);
        PlanNode { physical, logical, argument, rows, logical_in_text: false, children: Vec::new() }
    }

    /// An operator over one input.
    pub(crate) fn unary(
        physical: &'static str,
        logical: &'static str,
        argument: String,
        rows: f64,
        child: PlanNode,
    ) -> PlanNode {
        let mut node = PlanNode::new(physical, logical, argument, rows);
        // `Hash Match(Aggregate, ...)` names what it does; `Sort(...)`, `Filter(...)`,
        // `Stream Aggregate(DEFINE:...)` and the others do not.
        node.logical_in_text = physical == "Hash Match";
        node.children.push(child);
        node
    }

    /// A join: `first` is the outer (nested loops) or build (hash) input.
    pub(crate) fn join(
        physical: &'static str,
        logical: &'static str,
        argument: String,
        rows: f64,
        first: PlanNode,
        second: PlanNode,
    ) -> PlanNode {
        let mut node = PlanNode::new(physical, logical, argument, rows);
        node.logical_in_text = physical != logical;
        node.children = vec![first, second];
        node
    }

    /// The operator as SHOWPLAN_TEXT spells it: `Physical(Logical, argument)`.
    pub(crate) fn physical(&self) -> &'static str {
        self.physical
    }

    pub(crate) fn logical(&self) -> &'static str {
        self.logical
    }

    pub(crate) fn argument(&self) -> &str {
        &self.argument
    }

    pub(crate) fn estimated_rows(&self) -> f64 {
        self.rows
    }

    pub(crate) fn children(&self) -> &[PlanNode] {
        &self.children
    }

    fn text(&self) -> String {
        let mut inside = Vec::new();
        if self.logical_in_text {
            inside.push(self.logical.to_string());
        }
        if !self.argument.is_empty() {
            inside.push(self.argument.clone());
        }
        if inside.is_empty() {
            self.physical.to_string()
        } else {
            format!("{}({})", self.physical, inside.join(", "))
        }
    }

    /// Each operator in tree order with its depth, its parent's index, and the tree line
    /// drawn before its text (`  |--`, `       |--`, `       |    |--`).
    fn lines(&self) -> Vec<(&PlanNode, usize, String)> {
        fn walk<'n>(
            node: &'n PlanNode,
            parent: usize,
            open: &mut Vec<bool>,
            out: &mut Vec<(&'n PlanNode, usize, String)>,
        ) {
            // The root's line is `  |--`; a node at depth d > 0 is indented past the
            // root's bar, then each ancestor between shows a bar if it has siblings after it.
            let prefix = match open.split_last() {
                None => "  |--".to_string(),
                Some((_, ancestors)) => {
                    let mut p = String::from("       ");
                    for &more in ancestors {
                        p.push_str(if more { "|    " } else { "     " });
                    }
                    p.push_str("|--");
                    p
                }
            };
            let me = out.len();
            out.push((node, parent, prefix));
            for (i, child) in node.children.iter().enumerate() {
                open.push(i + 1 < node.children.len());
                walk(child, me, open, out);
                open.pop();
            }
        }
        let mut out = Vec::new();
        walk(self, usize::MAX, &mut Vec::new(), &mut out);
        out
    }
}

fn nvarchar_max() -> SqlType {
    SqlType::NVarChar(Len::Max)
}

impl Run<'_> {
    /// Sends the plan of `st` instead of running it (of each of a block's statements).
    pub(crate) fn showplan(&mut self, st: &Statement, kind: Showplan) -> Result<(), SqlError> {
        if let StatementKind::Block(statements) = &st.kind {
            for inner in statements {
                self.showplan(inner, kind)?;
            }
            return Ok(());
        }
        let ctes: &[crate::ast::Cte] = match &st.kind {
            StatementKind::Insert(i) => &i.ctes,
            StatementKind::Update(u) => &u.ctes,
            StatementKind::Delete(d) => &d.ctes,
            _ => &[],
        };
        let scope = self.s.explain_ctes.len();
        self.s.explain_ctes.extend(ctes.iter().map(|c| (c.clone(), false)));
        let plan = self.statement_plan(&st.kind);
        self.s.explain_ctes.truncate(scope);
        self.send_plan(&st.kind, st.kind.to_string(), plan?, kind);
        Ok(())
    }

    /// A statement's plan; None for a statement that has none (it is only listed).
    fn statement_plan(&mut self, kind: &StatementKind) -> Result<Option<PlanNode>, SqlError> {
        Ok(match kind {
            StatementKind::Select(s) => Some(self.explain_query(&s.query)?.0),
            StatementKind::Insert(i) => Some(self.explain_insert(i)?),
            StatementKind::Update(u) => {
                Some(self.explain_change("Update", &u.target, &u.from, u.where_clause.as_ref())?)
            }
            StatementKind::Delete(d) => {
                Some(self.explain_change("Delete", &d.target, &d.from, d.where_clause.as_ref())?)
            }
            _ => None,
        })
    }

    /// Sends a statement's text and plan as SHOWPLAN `kind` returns them.
    fn send_plan(
        &mut self,
        statement: &StatementKind,
        text: String,
        plan: Option<PlanNode>,
        kind: Showplan,
    ) {
        let statement_type = statement_type(statement);
        match kind {
            Showplan::Xml => {
                self.s.showplan_xml.push(PlannedStatement { text, statement_type, plan });
            }
            Showplan::Text => {
                let column = [ColumnInfo::new("StmtText", nvarchar_max())];
                self.out.result_set(&column);
                self.out.row(&[Value::NStr(text)]);
                self.out.result_end(1);
                if let Some(plan) = plan {
                    // The statement's text and its plan are two results, each ended by its
                    // DONE, as SQL Server sends them.
                    self.out.done(None);
                    let lines = plan.lines();
                    self.out.result_set(&column);
                    for (node, _, prefix) in &lines {
                        self.out.row(&[Value::NStr(format!("{prefix}{}", node.text()))]);
                    }
                    self.out.result_end(lines.len() as u64);
                }
            }
            Showplan::All => {
                let columns = showplan_all_columns();
                self.out.result_set(&columns);
                let mut statement = vec![Value::Null; columns.len()];
                statement[0] = Value::NStr(text);
                statement[1] = Value::Int(1);
                statement[2] = Value::Int(1);
                statement[3] = Value::Int(0);
                statement[15] = Value::NStr(statement_type.to_string());
                statement[16] = Value::Bit(false);
                self.out.row(&statement);
                let mut n = 1;
                if let Some(plan) = plan {
                    let lines = plan.lines();
                    for (i, (node, parent, prefix)) in lines.iter().enumerate() {
                        let parent = if *parent == usize::MAX { 1 } else { parent + 2 };
                        self.out.row(&[
                            Value::NStr(format!("{prefix}{}", node.text())),
                            Value::Int(1),
                            Value::Int(i as i32 + 2),
                            Value::Int(parent as i32),
                            Value::NStr(node.physical.to_string()),
                            Value::NStr(node.logical.to_string()),
                            Value::NStr(node.argument.clone()),
                            Value::Null,
                            Value::Real(node.rows as f32),
                            Value::Null,
                            Value::Null,
                            Value::Null,
                            Value::Null,
                            Value::Null,
                            Value::Null,
                            Value::NStr("PLAN_ROW".into()),
                            Value::Bit(false),
                            Value::Real(1.0),
                        ]);
                        n += 1;
                    }
                }
                self.out.result_end(n);
            }
        }
    }

    /// A query's plan and estimated rows.
    pub(crate) fn explain_query(&mut self, q: &Query) -> Result<(PlanNode, f64), SqlError> {
        if let Some(q) = self.inline_ctes(q) {
            return self.explain_query(&q);
        }
        let scope = self.s.explain_ctes.len();
        self.s.explain_ctes.extend(q.ctes.iter().map(|c| (c.clone(), false)));
        let explained = self.explain_body(&q.body, &q.order_by);
        self.s.explain_ctes.truncate(scope);
        let (mut node, rows) = explained?;
        if !q.order_by.is_empty() && !matches!(q.body, QueryBody::Select(_)) {
            node = PlanNode::unary("Sort", "Sort", order_by_text(&q.order_by), rows, node);
        }
        if q.offset.is_some() {
            node = PlanNode::unary("Top", "Top", "OFFSET EXPRESSION".into(), rows, node);
        }
        Ok((node, rows))
    }

    fn explain_body(
        &mut self,
        body: &QueryBody,
        order_by: &[OrderByItem],
    ) -> Result<(PlanNode, f64), SqlError> {
        match body {
            QueryBody::Select(sel) => self.explain_select(sel, order_by),
            QueryBody::Parenthesized(q) => self.explain_query(q),
            QueryBody::SetOperation { op, left, right } => {
                let (l, lr) = self.explain_body(left, &[])?;
                let (r, rr) = self.explain_body(right, &[])?;
                Ok(match op {
                    SetOperator::UnionAll => (
                        PlanNode::join(
                            "Concatenation",
                            "Concatenation",
                            String::new(),
                            lr + rr,
                            l,
                            r,
                        ),
                        lr + rr,
                    ),
                    SetOperator::Union => {
                        let both = PlanNode::join(
                            "Concatenation",
                            "Concatenation",
                            String::new(),
                            lr + rr,
                            l,
                            r,
                        );
                        (
                            PlanNode::unary(
                                "Hash Match",
                                "Aggregate",
                                "HASH:(all columns)".into(),
                                lr + rr,
                                both,
                            ),
                            lr + rr,
                        )
                    }
                    SetOperator::Except => (
                        PlanNode::join(
                            "Hash Match",
                            "Left Anti Semi Join",
                            "HASH:(all columns)".into(),
                            lr,
                            r,
                            l,
                        ),
                        lr,
                    ),
                    SetOperator::Intersect => (
                        PlanNode::join(
                            "Hash Match",
                            "Left Semi Join",
                            "HASH:(all columns)".into(),
                            lr.min(rr),
                            r,
                            l,
                        ),
                        lr.min(rr),
                    ),
                })
            }
        }
    }

    /// The plan of the common table expression `name` in scope, if there is one: its query's,
    /// or, where a recursive one names itself, a spool of the rows it has made so far.
    pub(crate) fn explain_cte(
        &mut self,
        name: &crate::ast::ObjectName,
    ) -> Result<Option<(PlanNode, f64, crate::ast::Cte)>, SqlError> {
        if name.schema.is_some() || name.database.is_some() {
            return Ok(None);
        }
        let Some(at) = self
            .s
            .explain_ctes
            .iter()
            .rposition(|(c, _)| c.name.value.eq_ignore_ascii_case(&name.name.value))
        else {
            return Ok(None);
        };
        let (cte, busy) = self.s.explain_ctes[at].clone();
        if busy {
            let node = PlanNode::new(
                "Table Spool",
                "Lazy Spool",
                format!("{} so far", cte.name.value),
                1.0,
            );
            return Ok(Some((node, 1.0, cte)));
        }
        self.s.explain_ctes[at].1 = true;
        let explained = self.explain_query(&cte.query);
        if let Some(entry) = self.s.explain_ctes.get_mut(at) {
            entry.1 = false;
        }
        let (node, rows) = explained?;
        Ok(Some((node, rows, cte)))
    }

    /// `Run::select`'s operators, bottom up.
    fn explain_select(
        &mut self,
        sel: &Select,
        order_by: &[OrderByItem],
    ) -> Result<(PlanNode, f64), SqlError> {
        // As `Run::select` runs it: its views and derived tables inlined where they can be.
        if let Some((sel, order_by)) = self.inline_select(sel, order_by) {
            return self.explain_select(&sel, &order_by);
        }
        let keys: Vec<&Expr> = sel.group_by.iter().collect();
        // As `Run::group_into` runs it: a stream over one table read in the keys' order.
        let mut in_order = false;
        let (mut node, mut rows) = if sel.from.is_empty() {
            (PlanNode::new("Constant Scan", "Constant Scan", String::new(), 1.0), 1.0)
        } else {
            let demand = Demand::of_select(sel, order_by);
            let plan =
                self.explain_from(&sel.from, sel.where_clause.as_ref(), None, demand.as_ref())?;
            in_order = !sel.where_clause.as_ref().is_some_and(has_subquery)
                && plan.residual.is_empty()
                && plan.groups_in_order(&keys);
            let rows = plan.rows;
            (plan.filtered(), rows)
        };
        let aggs = select_aggregates(sel, order_by);
        let mut defines: Vec<String> = Vec::new();
        for a in &aggs {
            let text = a.to_string();
            if !defines.contains(&text) {
                defines.push(text);
            }
        }
        if !sel.group_by.is_empty() {
            let (physical, by) =
                if in_order { ("Stream Aggregate", "GROUP BY") } else { ("Hash Match", "HASH") };
            let mut args = format!("{by}:({})", and_list(&keys));
            if !defines.is_empty() {
                args.push_str(&format!(", DEFINE:({})", defines.join(", ")));
            }
            rows = (rows / 10.0).max(1.0);
            node = PlanNode::unary(physical, "Aggregate", args, rows, node);
        } else if !aggs.is_empty() {
            rows = 1.0;
            let args = format!("DEFINE:({})", defines.join(", "));
            node = PlanNode::unary("Stream Aggregate", "Aggregate", args, rows, node);
        }
        if let Some(h) = &sel.having {
            node = PlanNode::unary("Filter", "Filter", format!("WHERE:({h})"), rows, node);
        }
        let windows = select_windows(sel, order_by);
        if !windows.is_empty() {
            let defines: Vec<String> = windows.iter().map(|w| w.to_string()).collect();
            let args = format!("DEFINE:({})", defines.join(", "));
            node = PlanNode::unary("Sequence Project", "Compute Scalar", args, rows, node);
        }
        let computed: Vec<String> = sel
            .items
            .iter()
            .filter_map(|item| match item {
                SelectItem::Expr { expr, .. } if !is_plain(expr) => Some(expr.to_string()),
                SelectItem::Assign { variable, value, .. } => Some(format!("{variable}={value}")),
                _ => None,
            })
            .collect();
        if !computed.is_empty() {
            let args = format!("DEFINE:({})", computed.join(", "));
            node = PlanNode::unary("Compute Scalar", "Compute Scalar", args, rows, node);
        }
        if sel.distinct {
            let args = "HASH:(all columns)".to_string();
            node = PlanNode::unary("Hash Match", "Flow Distinct", args, rows, node);
        }
        let top = sel.top.as_ref().filter(|t| !t.percent).map(|t| t.quantity.to_string());
        match (top, order_by.is_empty()) {
            (Some(n), false) if !sel.distinct => {
                let args = format!("TOP {n}, {}", order_by_text(order_by));
                rows = rows.min(n.parse().unwrap_or(rows));
                node = PlanNode::unary("Sort", "TopN Sort", args, rows, node);
            }
            (top, _) => {
                if !order_by.is_empty() {
                    node = PlanNode::unary("Sort", "Sort", order_by_text(order_by), rows, node);
                }
                if let Some(n) = top.or_else(|| sel.top.as_ref().map(|t| t.quantity.to_string())) {
                    rows = rows.min(n.parse().unwrap_or(rows));
                    let args = format!("TOP EXPRESSION:({n})");
                    node = PlanNode::unary("Top", "Top", args, rows, node);
                }
            }
        }
        Ok((node, rows))
    }

    /// An INSERT: the insert operator over its rows' source.
    fn explain_insert(&mut self, i: &crate::ast::Insert) -> Result<PlanNode, SqlError> {
        let (source, rows) = match &i.source {
            InsertSource::Values(rows) => {
                let n = rows.len() as f64;
                (
                    PlanNode::new(
                        "Constant Scan",
                        "Constant Scan",
                        format!("VALUES:({} rows)", rows.len()),
                        n,
                    ),
                    n,
                )
            }
            InsertSource::Query(q) => self.explain_query(q)?,
            InsertSource::Execute(e) => {
                (PlanNode::new("Remote Query", "Remote Query", e.to_string(), 1.0), 1.0)
            }
            InsertSource::DefaultValues => {
                (PlanNode::new("Constant Scan", "Constant Scan", String::new(), 1.0), 1.0)
            }
        };
        let (physical, object) = self.change_target(&i.target, "Insert")?;
        Ok(PlanNode::unary(physical, physical, object, rows, source))
    }

    /// An UPDATE or DELETE: the change operator over the read of the rows it changes.
    fn explain_change(
        &mut self,
        verb: &'static str,
        target: &TableTarget,
        from: &[TableSource],
        filter: Option<&Expr>,
    ) -> Result<PlanNode, SqlError> {
        let sources = if from.is_empty() {
            vec![match target {
                TableTarget::Table(name) => {
                    TableSource::Table { name: name.clone(), alias: None, hints: Vec::new() }
                }
                TableTarget::Variable(v) => TableSource::Variable { name: v.clone(), alias: None },
            }]
        } else {
            from.to_vec()
        };
        let plan = self.explain_from(&sources, filter, None, None)?;
        let rows = plan.rows;
        let node = plan.filtered();
        let (physical, object) = self.change_target(target, verb)?;
        Ok(PlanNode::unary(physical, physical, object, rows, node))
    }

    /// The operator that changes `target` (`Clustered Index Update`, `Table Insert`, ...)
    /// and its OBJECT argument.
    fn change_target(
        &mut self,
        target: &TableTarget,
        verb: &'static str,
    ) -> Result<(&'static str, String), SqlError> {
        let name = match target {
            TableTarget::Table(name) => name.to_string(),
            TableTarget::Variable(v) => v.clone(),
        };
        let clustered = match target {
            TableTarget::Table(name) => match self.resolve_relation(name, &name.name.value) {
                Ok(crate::exec::execute::query::Relation::Table(t)) => {
                    t.def.index(1).is_some_and(|ix| !ix.columns.is_empty())
                }
                _ => false,
            },
            TableTarget::Variable(_) => false,
        };
        let physical = match (clustered, verb) {
            (true, "Insert") => "Clustered Index Insert",
            (true, "Update") => "Clustered Index Update",
            (true, _) => "Clustered Index Delete",
            (false, "Insert") => "Table Insert",
            (false, "Update") => "Table Update",
            (false, _) => "Table Delete",
        };
        Ok((physical, format!("OBJECT:({name})")))
    }
}

/// The columns of SHOWPLAN_ALL's result set.
fn showplan_all_columns() -> Vec<ColumnInfo> {
    let text = nvarchar_max();
    let real = SqlType::Real;
    vec![
        ColumnInfo::new("StmtText", text),
        ColumnInfo::new("StmtId", SqlType::Int),
        ColumnInfo::new("NodeId", SqlType::Int),
        ColumnInfo::new("Parent", SqlType::Int),
        ColumnInfo::new("PhysicalOp", text),
        ColumnInfo::new("LogicalOp", text),
        ColumnInfo::new("Argument", text),
        ColumnInfo::new("DefinedValues", text),
        ColumnInfo::new("EstimateRows", real),
        ColumnInfo::new("EstimateIO", real),
        ColumnInfo::new("EstimateCPU", real),
        ColumnInfo::new("AvgRowSize", SqlType::Int),
        ColumnInfo::new("TotalSubtreeCost", real),
        ColumnInfo::new("OutputList", text),
        ColumnInfo::new("Warnings", text),
        ColumnInfo::new("Type", text),
        ColumnInfo::new("Parallel", SqlType::Bit),
        ColumnInfo::new("EstimateExecutions", real),
    ]
}

/// SHOWPLAN_ALL's `Type` of a statement's row.
fn statement_type(kind: &StatementKind) -> &'static str {
    match kind {
        StatementKind::Select(_) => "SELECT",
        StatementKind::Insert(_) => "INSERT",
        StatementKind::Update(_) => "UPDATE",
        StatementKind::Delete(_) => "DELETE",
        StatementKind::Merge(_) => "MERGE",
        StatementKind::Declare(_) => "DECLARE",
        StatementKind::Set(_) => "SET",
        StatementKind::If(_) => "COND",
        StatementKind::While(_) => "WHILE",
        StatementKind::Execute(_) => "EXECUTE PROC",
        _ => "STATEMENT",
    }
}

/// A plain column or an aggregate is passed up as it is; anything else is computed.
fn is_plain(e: &Expr) -> bool {
    matches!(e.kind, crate::ast::ExprKind::Column(_))
        || matches!(&e.kind, crate::ast::ExprKind::Function(f) if crate::exec::eval::is_aggregate_call(f))
}

fn order_by_text(order_by: &[OrderByItem]) -> String {
    let keys: Vec<String> = order_by
        .iter()
        .map(|o| format!("{} {}", o.expr, if o.descending { "DESC" } else { "ASC" }))
        .collect();
    format!("ORDER BY:({})", keys.join(", "))
}

fn and_list(exprs: &[&Expr]) -> String {
    exprs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ")
}
