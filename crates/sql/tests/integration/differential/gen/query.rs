//! Queries: FROM clauses with joins and derived tables, subqueries, whole SELECTs (plain,
//! grouped, partitioned by a predicate) and DML, and the cost that keeps each in budget.

use super::tables::int_domain;
use super::{Bound, Gen, Partitioned, SubKind};
use crate::differential::model::*;

/// The rows a naive executor visits for `select`: the product of the FROM clause's tables, each
/// row paying for the subqueries it evaluates.
pub fn cost(schema: &Schema, select: &Select) -> u64 {
    let rows = |t: &TableRef| match &t.derived {
        Some(q) => cost(schema, q),
        None => {
            let table = schema.tables.iter().find(|s| s.name == t.table).expect("table");
            table.rows.len().max(1) as u64
        }
    };
    let product = match &select.from {
        From::Joins { first, joins } => {
            joins.iter().fold(rows(first), |p, j| p.saturating_mul(rows(&j.table)))
        }
        From::Comma(tables) => tables.iter().fold(1u64, |p, t| p.saturating_mul(rows(t))),
    };
    let mut per_row = 1u64;
    let mut add = |q: &Select| per_row = per_row.saturating_add(cost(schema, q));
    for item in &select.items {
        item.expr.subqueries(&mut add);
    }
    if let Some(filter) = &select.filter {
        filter.subqueries(&mut add);
    }
    product.saturating_mul(per_row)
}

impl<'a> Gen<'a> {
    /// A table to read: a table of the schema, or now and then a derived table over one,
    /// `(SELECT [DISTINCT] ... FROM t WHERE ...)`, which the planner is to inline.
    fn source(&mut self) -> usize {
        let t = self.any_table();
        if !self.features.derived_table || !self.rng.chance(12) {
            return t;
        }
        let inner = self.bind(t);
        let scope = vec![inner.clone()];
        if self.rng.chance(35) {
            return self.grouped_source(t, inner);
        }
        let columns = self.schema.tables[t].columns.clone();
        let items = columns
            .iter()
            .map(|c| Item { expr: Expr::column(&inner.alias, &c.name), alias: c.name.clone() })
            .collect();
        let filter = if self.rng.chance(60) { Some(self.pred(&scope, 1, 0)) } else { None };
        let select = Select {
            distinct: self.rng.chance(25),
            top: None,
            items,
            star: false,
            from: From::Joins { first: self.table_ref(&inner), joins: Vec::new() },
            filter,
            group_by: Vec::new(),
            having: None,
            order_by: Vec::new(),
        };
        // Its columns keep the base table's names, types and domains, but no keys: an index
        // of the base table serves it only once the planner inlines it.
        let table = Table {
            name: String::new(),
            columns,
            primary_key: Vec::new(),
            indexes: Vec::new(),
            rows: Vec::new(),
        };
        self.derived.push((table, select));
        self.schema.tables.len() + self.derived.len() - 1
    }

    /// A derived table that groups: `(SELECT a.k AS c0, COUNT(*) AS c1, MAX(a.v) AS c2 FROM t AS
    /// a [WHERE ...] GROUP BY a.k)`, an aggregate below a join, which the planner must not
    /// merge into the join above it.
    fn grouped_source(&mut self, t: usize, inner: Bound) -> usize {
        let scope = vec![inner.clone()];
        let base = self.schema.tables[t].columns.clone();
        let key = self.rng.pick(&base).clone();
        let value = self.rng.pick(&base).clone();
        let func = *self.rng.pick(&[AggFunc::Min, AggFunc::Max, AggFunc::Count]);
        let value_column = Column {
            name: "c2".into(),
            ty: if func == AggFunc::Count { Ty::Int } else { value.ty },
            nullable: func != AggFunc::Count,
            domain: if func == AggFunc::Count { int_domain(0, 5) } else { value.domain.clone() },
        };
        let columns = vec![
            Column { name: "c0".into(), ..key.clone() },
            Column { name: "c1".into(), ty: Ty::Int, nullable: false, domain: int_domain(1, 6) },
            value_column,
        ];
        let key_expr = Expr::column(&inner.alias, &key.name);
        let items = vec![
            Item { expr: key_expr.clone(), alias: "c0".into() },
            Item {
                expr: Expr::Agg { func: AggFunc::Count, distinct: false, arg: None },
                alias: "c1".into(),
            },
            Item {
                expr: Expr::Agg {
                    func,
                    distinct: false,
                    arg: Some(Box::new(Expr::column(&inner.alias, &value.name))),
                },
                alias: "c2".into(),
            },
        ];
        let filter = if self.rng.chance(40) { Some(self.pred(&scope, 1, 0)) } else { None };
        let select = Select {
            distinct: false,
            top: None,
            items,
            star: false,
            from: From::Joins { first: self.table_ref(&inner), joins: Vec::new() },
            filter,
            group_by: vec![key_expr],
            having: None,
            order_by: Vec::new(),
        };
        let table = Table {
            name: String::new(),
            columns,
            primary_key: Vec::new(),
            indexes: Vec::new(),
            rows: Vec::new(),
        };
        self.derived.push((table, select));
        self.schema.tables.len() + self.derived.len() - 1
    }

    fn bind(&mut self, table: usize) -> Bound {
        // Aliases are unique over the whole query, so a subquery's names never shadow an outer
        // query's and correlation is always explicit.
        let alias = format!("a{}", self.aliases);
        self.aliases += 1;
        Bound { alias, table, null_extended: false }
    }

    fn any_table(&mut self) -> usize {
        self.rng.below(self.schema.tables.len())
    }

    fn table_ref(&self, b: &Bound) -> TableRef {
        let derived = b
            .table
            .checked_sub(self.schema.tables.len())
            .map(|d| Box::new(self.derived[d].1.clone()));
        TableRef {
            table: self.tab(b.table).name.clone(),
            alias: b.alias.clone(),
            derived,
            cte: false,
        }
    }

    /// The FROM clause, the tables it binds, and for a comma join the predicates that join them.
    fn from(&mut self, count: usize) -> (From, Vec<Bound>, Option<Pred>) {
        let first = self.source();
        let first = self.bind(first);
        let mut scope = vec![first.clone()];
        let comma = self.features.comma_join && count > 1 && self.rng.chance(35);
        let mut joins = Vec::new();
        let mut join_filter: Option<Pred> = None;
        for _ in 1..count {
            let t = self.source();
            let mut next = self.bind(t);
            if comma {
                // Now and then no join predicate at all: a cross product, filtered or not.
                if self.rng.chance(90) {
                    let p = self.join_pred(&scope, &next);
                    join_filter = Some(match join_filter {
                        Some(f) => f.and(p),
                        None => p,
                    });
                }
            } else {
                let kind = match self.rng.below(20) {
                    0..=7 => JoinKind::Inner,
                    8..=13 => JoinKind::Left,
                    14..=16 if self.features.right_join => JoinKind::Right,
                    17..=19 if self.features.full_join => JoinKind::Full,
                    _ => JoinKind::Left,
                };
                if matches!(kind, JoinKind::Left | JoinKind::Full) {
                    next.null_extended = true;
                }
                if matches!(kind, JoinKind::Right | JoinKind::Full) {
                    for b in &mut scope {
                        b.null_extended = true;
                    }
                }
                let mut on = self.join_pred(&scope, &next);
                if self.rng.chance(35) {
                    let mut visible = scope.clone();
                    visible.push(next.clone());
                    let extra = self.pred(&visible, 1, 0);
                    on = on.and(extra);
                }
                joins.push(Join { kind, table: self.table_ref(&next), on });
            }
            scope.push(next);
        }
        let from = if comma {
            From::Comma(scope.iter().map(|b| self.table_ref(b)).collect())
        } else {
            From::Joins { first: self.table_ref(&first), joins }
        };
        (from, scope, join_filter)
    }

    pub(super) fn subquery(&mut self, outer: &[Bound], kind: SubKind, subqueries: u32) -> Select {
        let count = if self.features.subquery_join && self.rng.chance(20) { 2 } else { 1 };
        let (from, local, join_filter) = self.from(count);
        let mut filter = join_filter;
        let mut scope = local.clone();
        scope.extend_from_slice(outer);
        if !outer.is_empty() && self.rng.chance(70) {
            // Correlation: a local column against an outer one of the same type.
            if let Some((l, lc)) = self.column(&local, None) {
                if let Some((o, _)) = self.column(outer, Some(lc.ty)) {
                    let op =
                        if self.rng.chance(80) { CmpOp::Eq } else { *self.rng.pick(&CmpOp::ALL) };
                    let p = Pred::Cmp(op, l, o);
                    filter = Some(match filter {
                        Some(f) => f.and(p),
                        None => p,
                    });
                }
            }
        }
        if self.rng.chance(50) {
            let p = self.pred(&scope, 1, subqueries);
            filter = Some(match filter {
                Some(f) => f.and(p),
                None => p,
            });
        }
        let (expr, distinct) = match kind {
            SubKind::Exists => (Expr::Literal(Cell::Int(1)), false),
            SubKind::In(ty) => (self.scalar(ty, &local, 1), self.rng.chance(20)),
            SubKind::Scalar(ty) => (self.aggregate(&local, Some(ty)), false),
        };
        Select {
            distinct,
            top: None,
            items: vec![Item { expr, alias: String::new() }],
            star: false,
            from,
            filter,
            group_by: Vec::new(),
            having: None,
            order_by: Vec::new(),
        }
    }

    /// A DELETE or an UPDATE of one table, its WHERE clause drawn like a query's (subqueries
    /// included). Columns are named by the table's name, as DML statements name them.
    pub fn mutation(&mut self) -> Mutation {
        self.aliases = 0;
        self.derived.clear();
        let t = self.any_table();
        let table = self.schema.tables[t].name.clone();
        let scope = [Bound { alias: table.clone(), table: t, null_extended: false }];
        let filter = self.pred(&scope, 1, 1);
        let settable: Vec<usize> = (0..self.schema.tables[t].columns.len())
            .filter(|c| !self.schema.tables[t].primary_key.contains(c))
            .collect();
        if settable.is_empty() || self.rng.chance(30) {
            return Mutation::Delete { table, filter };
        }
        let column = self.schema.tables[t].columns[*self.rng.pick(&settable)].clone();
        let value = match self.rng.below(4) {
            0 if column.nullable => Expr::Literal(Cell::Null),
            1 if column.ty == Ty::Int => Expr::Arith(
                ArithOp::Add,
                Box::new(Expr::column(&table, &column.name)),
                Box::new(Expr::Literal(Cell::Int(self.rng.range(-2, 2)))),
            ),
            _ => Expr::Literal(self.literal(column.ty, Some(&column))),
        };
        Mutation::Update { table, column: column.name, value, filter }
    }

    /// A whole query whose estimated work fits `budget`. The executor today runs a correlated
    /// subquery again for each outer row, over nested loops, so a few nested subqueries over
    /// joins can take minutes; those are drawn again rather than run.
    pub fn query(&mut self, budget: u64) -> Select {
        loop {
            let query = self.any_query();
            if self.cost(&query) <= budget {
                return query;
            }
        }
    }

    fn cost(&self, select: &Select) -> u64 {
        cost(self.schema, select)
    }

    /// A plain query (no grouping, DISTINCT, ORDER BY or TOP) and a predicate over its tables,
    /// for the oracles that split a query's rows by a predicate; the base query with the
    /// predicate added fits `budget`. Also aggregates over the same tables, for the aggregate
    /// form of the partitioning.
    pub fn partitioned(&mut self, budget: u64) -> Partitioned {
        loop {
            self.aliases = 0;
            self.derived.clear();
            let count = self.rng.range(1, 3) as usize;
            let (from, scope, mut filter) = self.from(count);
            if self.rng.chance(40) {
                let p = self.pred(&scope, 1, 1);
                filter = Some(match filter {
                    Some(f) => f.and(p),
                    None => p,
                });
            }
            let mut base = Select {
                distinct: false,
                top: None,
                items: Vec::new(),
                star: false,
                from,
                filter,
                group_by: Vec::new(),
                having: None,
                order_by: Vec::new(),
            };
            for _ in 0..self.rng.range(1, 3) {
                let ty = self.any_ty();
                let expr = self.scalar(ty, &scope, 1);
                self.item(&mut base, expr);
            }
            let predicate = self.pred(&scope, 2, 1);
            let sum_arg = self.scalar(Ty::Int, &scope, 1);
            let ty = self.any_ty();
            let extreme_arg = self.scalar(ty, &scope, 1);
            let aggregates = vec![
                Expr::Agg { func: AggFunc::Count, distinct: false, arg: None },
                Expr::Agg { func: AggFunc::Sum, distinct: false, arg: Some(Box::new(sum_arg)) },
                Expr::Agg {
                    func: AggFunc::Min,
                    distinct: false,
                    arg: Some(Box::new(extreme_arg.clone())),
                },
                Expr::Agg { func: AggFunc::Max, distinct: false, arg: Some(Box::new(extreme_arg)) },
            ];
            let mut whole = base.clone();
            whole.filter = Some(match whole.filter {
                Some(f) => f.and(predicate.clone()),
                None => predicate.clone(),
            });
            if self.cost(&whole) <= budget {
                return Partitioned { base, predicate, aggregates };
            }
        }
    }

    /// A whole query: a plain select, a grouped one, or aggregates over the whole input.
    fn any_query(&mut self) -> Select {
        self.aliases = 0;
        self.derived.clear();
        let count = match self.rng.below(20) {
            0..=5 => 1,
            6..=15 => 2,
            _ => 3,
        };
        let (mut from, scope, join_filter) = self.from(count);
        // Some of the query's own derived tables are written as common table expressions.
        let tables: Vec<&mut TableRef> = match &mut from {
            From::Joins { first, joins } => {
                std::iter::once(first).chain(joins.iter_mut().map(|j| &mut j.table)).collect()
            }
            From::Comma(list) => list.iter_mut().collect(),
        };
        for t in tables {
            if t.derived.is_some() && self.features.cte && self.rng.chance(50) {
                t.cte = true;
            }
        }
        let mut filter = join_filter;
        if self.rng.chance(75) {
            let p = self.pred(&scope, 2, 2);
            filter = Some(match filter {
                Some(f) => f.and(p),
                None => p,
            });
        }
        let mut select = Select {
            distinct: false,
            top: None,
            items: Vec::new(),
            star: false,
            from,
            filter,
            group_by: Vec::new(),
            having: None,
            order_by: Vec::new(),
        };
        match self.rng.below(10) {
            0..=5 => {
                for _ in 0..self.rng.range(1, 4) {
                    let expr = if self.features.scalar_subquery && self.rng.chance(12) {
                        let ty = self.any_ty();
                        Expr::Subquery(Box::new(self.subquery(&scope, SubKind::Scalar(ty), 1)))
                    } else {
                        let ty = self.any_ty();
                        self.scalar(ty, &scope, 1)
                    };
                    self.item(&mut select, expr);
                }
                select.distinct = self.features.distinct && self.rng.chance(25);
                // `SELECT *` over joins: its columns must come in the FROM clause's order
                // however the joins are planned (`execute/query/inline/pull_up.rs`).
                select.star = self.rng.chance(10);
            }
            6..=8 => {
                for _ in 0..self.rng.range(1, 2) {
                    if let Some((e, _)) = self.column(&scope, None) {
                        select.group_by.push(e.clone());
                        if self.rng.chance(80) {
                            self.item(&mut select, e);
                        }
                    }
                }
                for _ in 0..self.rng.range(1, 3) {
                    let agg = self.aggregate(&scope, None);
                    self.item(&mut select, agg);
                }
                if self.features.having && self.rng.chance(40) {
                    select.having = Some(self.having(&scope, &select.group_by));
                }
                select.distinct = self.features.distinct && self.rng.chance(10);
            }
            _ => {
                for _ in 0..self.rng.range(1, 3) {
                    let agg = self.aggregate(&scope, None);
                    self.item(&mut select, agg);
                }
            }
        }
        if !select.star && self.rng.chance(40) {
            let mut order: Vec<usize> = (0..select.items.len()).collect();
            self.rng.shuffle(&mut order);
            let total = self.rng.chance(80);
            if !total {
                order.truncate(self.rng.range(1, order.len() as i64) as usize);
            }
            select.order_by = order.into_iter().map(|i| (i, self.rng.chance(40))).collect();
            if total && self.features.top && self.rng.chance(50) {
                select.top = Some(self.rng.range(0, 12) as u32);
            }
        }
        select
    }

    fn item(&mut self, select: &mut Select, expr: Expr) {
        let alias = format!("x{}", select.items.len());
        select.items.push(Item { expr, alias });
    }

    /// A HAVING predicate: an aggregate against a small number, sometimes with a condition on a
    /// grouping column.
    fn having(&mut self, scope: &[Bound], group_by: &[Expr]) -> Pred {
        let agg = self.aggregate(scope, Some(Ty::Int));
        let op = *self.rng.pick(&CmpOp::ALL);
        let mut p = Pred::Cmp(op, agg, Expr::Literal(Cell::Int(self.rng.range(-2, 15))));
        if !group_by.is_empty() && self.rng.chance(30) {
            let g = self.rng.pick(group_by).clone();
            let negated = self.rng.chance(50);
            let q = Pred::IsNull { expr: g, negated };
            p = if self.rng.chance(50) { p.and(q) } else { Pred::Or(Box::new(p), Box::new(q)) };
        }
        p
    }
}
