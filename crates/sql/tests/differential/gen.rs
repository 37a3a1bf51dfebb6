//! The generator of schemas, data and queries. Everything it draws comes from one `Rng`, so a
//! seed replays exactly.

use super::model::*;
use super::rng::Rng;

/// What the generator may produce. Each switch exists so that a construct Walden gets wrong can be
/// left out while the bug is open, keeping the test green for everything else; a switch that is
/// off says which bug it avoids, and turning it back on is how the fix is verified.
#[derive(Debug, Clone, Copy)]
pub struct Features {
    pub right_join: bool,
    pub full_join: bool,
    pub comma_join: bool,
    pub exists_subquery: bool,
    pub in_subquery: bool,
    pub not_in_subquery: bool,
    /// Whether the left operand of `IN (subquery)` may be NULL (`NULL IN (empty subquery)`
    /// is FALSE, so `NULL NOT IN (empty)` keeps the row).
    pub nullable_in_operand: bool,
    pub scalar_subquery: bool,
    /// A join inside a subquery's FROM.
    pub subquery_join: bool,
    pub null_in_list: bool,
    pub like: bool,
    /// `(SELECT ...) AS a` in FROM.
    pub derived_table: bool,
    /// `WITH q AS (...)` for some derived tables of the outermost query.
    pub cte: bool,
    pub having: bool,
    pub distinct: bool,
    pub top: bool,
    pub count_distinct: bool,
    pub concat: bool,
    pub case_expr: bool,
}

pub const FEATURES: Features = Features {
    right_join: true,
    full_join: true,
    comma_join: true,
    exists_subquery: true,
    in_subquery: true,
    not_in_subquery: true,
    nullable_in_operand: true,
    scalar_subquery: true,
    subquery_join: true,
    null_in_list: true,
    like: true,
    derived_table: true,
    cte: true,
    having: true,
    distinct: true,
    top: true,
    count_distinct: true,
    concat: true,
    case_expr: true,
};

/// Lowercase strings only: Walden compares case-insensitively, SQLite by bytes, and they agree
/// on these. No spaces either: SQL Server ignores trailing spaces in comparisons, SQLite does not.
const WORDS: [&str; 22] = [
    "", "a", "b", "c", "aa", "ab", "ac", "ba", "bb", "bc", "ca", "cb", "cc", "abc", "acb", "bac",
    "bca", "cab", "cba", "abcd", "dcba", "zz",
];

/// How many rows a table gets: mostly a few dozen, sometimes none or a handful, now and then a
/// hundred or more. The executor today joins by nested loops, so more would make the test slow.
fn row_count(rng: &mut Rng) -> usize {
    match rng.below(20) {
        0 => 0,
        1..=3 => rng.range(1, 5) as usize,
        4..=16 => rng.range(10, 40) as usize,
        _ => rng.range(40, 120) as usize,
    }
}

fn int_domain(lo: i64, hi: i64) -> Vec<Cell> {
    (lo..=hi).map(Cell::Int).collect()
}

fn str_domain(rng: &mut Rng, size: usize) -> Vec<Cell> {
    let mut words: Vec<&str> = WORDS.to_vec();
    rng.shuffle(&mut words);
    words.truncate(size.clamp(1, WORDS.len()));
    words.into_iter().map(|w| Cell::Str(w.to_string())).collect()
}

pub fn schema(rng: &mut Rng) -> Schema {
    let count = rng.range(2, 4) as usize;
    let tables = (0..count).map(|i| table(rng, i)).collect();
    Schema { tables }
}

fn table(rng: &mut Rng, number: usize) -> Table {
    let name = format!("t{number}");
    let rows = row_count(rng);
    let ncols = rng.range(2, 5) as usize;
    let mut ordinals: Vec<usize> = (0..ncols).collect();
    rng.shuffle(&mut ordinals);
    let primary_key: Vec<usize> = match rng.below(10) {
        0 => Vec::new(),
        1..=5 => ordinals[..1].to_vec(),
        _ => ordinals[..2].to_vec(),
    };
    let mut columns = Vec::new();
    for c in 0..ncols {
        let ty = if rng.chance(65) { Ty::Int } else { Ty::Str };
        let key_position = primary_key.iter().position(|&k| k == c);
        let domain = match (ty, key_position, primary_key.len()) {
            // A single-column key is sparse, so that range predicates skip some values.
            (Ty::Int, Some(_), 1) => int_domain(0, (rows as i64 * 2).max(4)),
            // A composite key's leading column has few values, each with many rows, so that a
            // seek on the key's prefix returns several rows.
            (Ty::Int, Some(0), _) => int_domain(0, rng.range(1, 5)),
            (Ty::Int, Some(_), _) => int_domain(0, rng.range(3, 30)),
            (Ty::Str, Some(_), _) => str_domain(rng, WORDS.len()),
            (Ty::Int, None, _) => {
                let lo = rng.range(-3, 5);
                int_domain(lo, lo + rng.range(1, 15))
            }
            (Ty::Str, None, _) => {
                let size = rng.range(2, 10) as usize;
                str_domain(rng, size)
            }
        };
        let nullable = key_position.is_none() && rng.chance(80);
        columns.push(Column { name: format!("c{c}"), ty, nullable, domain });
    }
    let mut indexes = Vec::new();
    for i in 0..rng.below(3) {
        let width = rng.range(1, 2.min(ncols as i64)) as usize;
        let mut cols: Vec<usize> = (0..ncols).collect();
        rng.shuffle(&mut cols);
        cols.truncate(width);
        indexes.push(Index { name: format!("ix_{name}_{i}"), columns: cols });
    }
    let mut table = Table { name, columns, primary_key, indexes, rows: Vec::new() };
    fill(rng, &mut table, rows);
    table
}

/// Draws `rows` rows, skipping those whose primary key is taken (a small key domain may leave the
/// table with fewer).
fn fill(rng: &mut Rng, table: &mut Table, rows: usize) {
    let null_percent: Vec<u32> = table
        .columns
        .iter()
        .map(|c| if c.nullable { rng.range(0, 35) as u32 } else { 0 })
        .collect();
    let mut keys = std::collections::HashSet::new();
    for _ in 0..rows * 2 {
        if table.rows.len() == rows {
            break;
        }
        let row: Vec<Cell> = table
            .columns
            .iter()
            .zip(&null_percent)
            .map(|(c, &p)| if rng.chance(p) { Cell::Null } else { rng.pick(&c.domain).clone() })
            .collect();
        let key: Vec<Cell> = table.primary_key.iter().map(|&k| row[k].clone()).collect();
        if table.primary_key.is_empty() || keys.insert(key) {
            table.rows.push(row);
        }
    }
}

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

/// A query and a predicate to split its rows by: see `Gen::partitioned`.
#[derive(Debug, Clone)]
pub struct Partitioned {
    pub base: Select,
    pub predicate: Pred,
    /// COUNT(*), SUM, MIN and MAX, in that order, over the base query's tables.
    pub aggregates: Vec<Expr>,
}

/// A table as a query names it.
#[derive(Debug, Clone)]
struct Bound {
    alias: String,
    table: usize,
    /// Whether an outer join may null-extend this table's rows.
    null_extended: bool,
}

/// What a subquery returns.
#[derive(Debug, Clone, Copy)]
enum SubKind {
    Exists,
    In(Ty),
    Scalar(Ty),
}

pub struct Gen<'a> {
    rng: &'a mut Rng,
    schema: &'a Schema,
    features: Features,
    aliases: usize,
    /// The derived tables of the query being drawn, as `tab` numbers them after the schema's.
    derived: Vec<(Table, Select)>,
}

impl<'a> Gen<'a> {
    pub fn new(rng: &'a mut Rng, schema: &'a Schema, features: Features) -> Gen<'a> {
        Gen { rng, schema, features, aliases: 0, derived: Vec::new() }
    }

    /// A table of the schema, or past them one of the query's derived tables.
    fn tab(&self, table: usize) -> &Table {
        match table.checked_sub(self.schema.tables.len()) {
            Some(d) => &self.derived[d].0,
            None => &self.schema.tables[table],
        }
    }

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

    /// The columns of `scope` of type `ty` (any type if None), as (scope position, ordinal).
    fn columns(&self, scope: &[Bound], ty: Option<Ty>, keys_only: bool) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, b) in scope.iter().enumerate() {
            let table = &self.tab(b.table);
            for (c, column) in table.columns.iter().enumerate() {
                if ty.is_none_or(|t| t == column.ty) && (!keys_only || table.is_key_column(c)) {
                    out.push((i, c));
                }
            }
        }
        out
    }

    /// A column of `scope`, preferring primary-key and indexed columns half of the time, since
    /// predicates on those are what index seeks and index joins serve.
    fn column(&mut self, scope: &[Bound], ty: Option<Ty>) -> Option<(Expr, Column)> {
        let keys = self.columns(scope, ty, true);
        let all = self.columns(scope, ty, false);
        let pool = if !keys.is_empty() && self.rng.chance(50) { keys } else { all };
        if pool.is_empty() {
            return None;
        }
        let (i, c) = *self.rng.pick(&pool);
        let column = self.tab(scope[i].table).columns[c].clone();
        Some((Expr::column(&scope[i].alias, &column.name), column))
    }

    /// A literal of `ty`, mostly from the column's domain (so it matches some rows), sometimes
    /// just outside it.
    fn literal(&mut self, ty: Ty, column: Option<&Column>) -> Cell {
        if let Some(column) = column {
            if column.ty == ty && self.rng.chance(85) {
                return self.rng.pick(&column.domain).clone();
            }
        }
        match ty {
            Ty::Int => Cell::Int(self.rng.range(-4, 30)),
            Ty::Str => Cell::Str(self.rng.pick(&WORDS).to_string()),
        }
    }

    /// A column of `ty` if `scope` has one, else a literal.
    fn column_or_literal(&mut self, ty: Ty, scope: &[Bound]) -> (Expr, Option<Column>) {
        match self.column(scope, Some(ty)) {
            Some((e, c)) if self.rng.chance(95) => (e, Some(c)),
            _ => (Expr::Literal(self.literal(ty, None)), None),
        }
    }

    /// A column of `ty` that can never be NULL (NOT NULL and not null-extended), else a literal.
    fn non_null_operand(&mut self, ty: Ty, scope: &[Bound]) -> Expr {
        let pool: Vec<(usize, usize)> = self
            .columns(scope, Some(ty), false)
            .into_iter()
            .filter(|&(i, c)| {
                !scope[i].null_extended && !self.tab(scope[i].table).columns[c].nullable
            })
            .collect();
        if pool.is_empty() || self.rng.chance(10) {
            return Expr::Literal(self.literal(ty, None));
        }
        let (i, c) = *self.rng.pick(&pool);
        Expr::column(&scope[i].alias, &self.tab(scope[i].table).columns[c].name)
    }

    /// A type that `scope` has a column of (a predicate on a literal alone filters nothing
    /// interesting), else any.
    fn scope_ty(&mut self, scope: &[Bound]) -> Ty {
        let ty = self.any_ty();
        let other = if ty == Ty::Int { Ty::Str } else { Ty::Int };
        if self.columns(scope, Some(ty), false).is_empty()
            && !self.columns(scope, Some(other), false).is_empty()
        {
            other
        } else {
            ty
        }
    }

    fn any_ty(&mut self) -> Ty {
        if self.rng.chance(65) {
            Ty::Int
        } else {
            Ty::Str
        }
    }

    /// A scalar expression of `ty` over `scope`, without aggregates or subqueries.
    fn scalar(&mut self, ty: Ty, scope: &[Bound], depth: u32) -> Expr {
        let roll = if depth == 0 { self.rng.below(8) } else { self.rng.below(12) };
        match roll {
            0..=6 => self.column_or_literal(ty, scope).0,
            7 => Expr::Literal(self.literal(ty, None)),
            8 | 9 => {
                let (a, column) = self.column_or_literal(ty, scope);
                match ty {
                    Ty::Int => {
                        let op = if self.rng.chance(50) { ArithOp::Add } else { ArithOp::Sub };
                        let b = if self.rng.chance(50) {
                            self.column_or_literal(ty, scope).0
                        } else {
                            Expr::Literal(Cell::Int(self.rng.range(-3, 3)))
                        };
                        Expr::Arith(op, Box::new(a), Box::new(b))
                    }
                    Ty::Str if self.features.concat => {
                        let b = Expr::Literal(self.literal(ty, column.as_ref()));
                        Expr::Concat(Box::new(a), Box::new(b))
                    }
                    Ty::Str => a,
                }
            }
            10 => {
                let (a, column) = self.column_or_literal(ty, scope);
                let b = Expr::Literal(self.literal(ty, column.as_ref()));
                Expr::Coalesce(Box::new(a), Box::new(b))
            }
            _ if self.features.case_expr => {
                let when = self.pred(scope, 0, 0);
                let then = self.scalar(ty, scope, depth - 1);
                let otherwise = self.scalar(ty, scope, depth - 1);
                Expr::Case(Box::new(when), Box::new(then), Box::new(otherwise))
            }
            _ => self.column_or_literal(ty, scope).0,
        }
    }

    /// A predicate over `scope`; `depth` bounds AND/OR/NOT nesting, `subqueries` bounds the
    /// nesting of subqueries.
    fn pred(&mut self, scope: &[Bound], depth: u32, subqueries: u32) -> Pred {
        let kinds = if subqueries > 0 { 17 } else { 12 };
        match self.rng.below(kinds) {
            10 => match self.key_pred(scope) {
                Some(p) => p,
                None => self.pred(scope, depth, subqueries),
            },
            11 if self.features.like => {
                let (expr, column) = self.column_or_literal(Ty::Str, scope);
                let pattern = self.pattern(column.as_ref());
                Pred::Like { expr, pattern, negated: self.rng.chance(25) }
            }
            8 | 9 if depth > 0 => {
                let a = self.pred(scope, depth - 1, subqueries);
                match self.rng.below(5) {
                    0 => a.not(),
                    1 | 2 => {
                        Pred::Or(Box::new(a), Box::new(self.pred(scope, depth - 1, subqueries)))
                    }
                    _ => a.and(self.pred(scope, depth - 1, subqueries)),
                }
            }
            12 | 13 if self.features.exists_subquery => {
                let query = self.subquery(scope, SubKind::Exists, subqueries - 1);
                Pred::Exists { query: Box::new(query), negated: self.rng.chance(50) }
            }
            14 | 15 if self.features.in_subquery => {
                let ty = self.scope_ty(scope);
                let expr = if self.features.nullable_in_operand {
                    self.column_or_literal(ty, scope).0
                } else {
                    self.non_null_operand(ty, scope)
                };
                let query = self.subquery(scope, SubKind::In(ty), subqueries - 1);
                let negated = self.features.not_in_subquery && self.rng.chance(50);
                Pred::InSubquery { expr, query: Box::new(query), negated }
            }
            16 if self.features.scalar_subquery => {
                let ty = self.scope_ty(scope);
                let (expr, _) = self.column_or_literal(ty, scope);
                let query = self.subquery(scope, SubKind::Scalar(ty), subqueries - 1);
                let op = *self.rng.pick(&CmpOp::ALL);
                Pred::Cmp(op, expr, Expr::Subquery(Box::new(query)))
            }
            3 | 4 => {
                let ty = self.scope_ty(scope);
                let (a, _) = self.column_or_literal(ty, scope);
                let b = self.scalar(ty, scope, 1);
                Pred::Cmp(*self.rng.pick(&CmpOp::ALL), a, b)
            }
            5 => {
                let ty = self.scope_ty(scope);
                let (expr, column) = self.column_or_literal(ty, scope);
                let mut low = self.literal(ty, column.as_ref());
                let mut high = self.literal(ty, column.as_ref());
                // Mostly a non-empty range; an inverted one now and then, which matches nothing.
                if low > high && self.rng.chance(80) {
                    std::mem::swap(&mut low, &mut high);
                }
                let negated = self.rng.chance(20);
                Pred::Between { expr, low: Expr::Literal(low), high: Expr::Literal(high), negated }
            }
            6 => {
                let ty = self.scope_ty(scope);
                let (expr, column) = self.column_or_literal(ty, scope);
                let mut list: Vec<Expr> = (0..self.rng.range(1, 4))
                    .map(|_| Expr::Literal(self.literal(ty, column.as_ref())))
                    .collect();
                if self.features.null_in_list && self.rng.chance(20) {
                    list.push(Expr::Literal(Cell::Null));
                }
                Pred::InList { expr, list, negated: self.rng.chance(35) }
            }
            7 => {
                let ty = self.scope_ty(scope);
                let expr = self.scalar(ty, scope, 1);
                Pred::IsNull { expr, negated: self.rng.chance(50) }
            }
            _ => {
                // The commonest shape: a column against a literal, as index seeks serve it.
                let ty = self.scope_ty(scope);
                let (a, column) = self.column_or_literal(ty, scope);
                let b = Expr::Literal(self.literal(ty, column.as_ref()));
                let op = if self.rng.chance(40) { CmpOp::Eq } else { *self.rng.pick(&CmpOp::ALL) };
                Pred::Cmp(op, a, b)
            }
        }
    }

    /// An equality between a column of `right` and a column of the same type in `left`, the
    /// usual join predicate; a comparison with a literal when the types never match.
    fn join_pred(&mut self, left: &[Bound], right: &Bound) -> Pred {
        if self.rng.chance(40) {
            if let Some(p) = self.key_join_pred(left, right) {
                return p;
            }
        }
        let right_scope = std::slice::from_ref(right);
        for _ in 0..4 {
            let Some((r, _)) = self.column(right_scope, None) else { break };
            let ty = self.type_of(&r, right_scope);
            if let Some((l, _)) = self.column(left, Some(ty)) {
                let op = if self.rng.chance(85) { CmpOp::Eq } else { *self.rng.pick(&CmpOp::ALL) };
                return if self.rng.chance(50) { Pred::Cmp(op, l, r) } else { Pred::Cmp(op, r, l) };
            }
        }
        self.pred(right_scope, 0, 0)
    }

    /// The columns of the primary key or of one index of `table`, in key order.
    fn some_key(&mut self, table: usize) -> Option<Vec<usize>> {
        let table = self.tab(table);
        let mut keys: Vec<Vec<usize>> = table.indexes.iter().map(|i| i.columns.clone()).collect();
        if !table.primary_key.is_empty() {
            keys.push(table.primary_key.clone());
        }
        if keys.is_empty() {
            return None;
        }
        Some(self.rng.pick(&keys).clone())
    }

    /// Equalities between a prefix of a key of `right` and columns of `left`: the join an index
    /// nested loops join or a merge join on the key serves.
    fn key_join_pred(&mut self, left: &[Bound], right: &Bound) -> Option<Pred> {
        let key = self.some_key(right.table)?;
        let len = self.rng.range(1, key.len() as i64) as usize;
        let mut p: Option<Pred> = None;
        for &c in &key[..len] {
            let column = &self.tab(right.table).columns[c];
            let r = Expr::column(&right.alias, &column.name);
            let Some((l, _)) = self.column(left, Some(column.ty)) else { break };
            let q = Pred::Cmp(CmpOp::Eq, l, r);
            p = Some(match p {
                Some(p) => p.and(q),
                None => q,
            });
        }
        p
    }

    /// A predicate an index seek serves: equalities on a prefix of a key of one table, then an
    /// equality, a range or an IN list on the next key column.
    fn key_pred(&mut self, scope: &[Bound]) -> Option<Pred> {
        let b = self.rng.pick(scope).clone();
        let key = self.some_key(b.table)?;
        let len = self.rng.range(1, key.len() as i64) as usize;
        let mut p: Option<Pred> = None;
        for (i, &c) in key[..len].iter().enumerate() {
            let column = self.tab(b.table).columns[c].clone();
            let e = Expr::column(&b.alias, &column.name);
            let lit = |g: &mut Self| Expr::Literal(g.literal(column.ty, Some(&column)));
            let q = if i + 1 < len {
                Pred::Cmp(CmpOp::Eq, e, lit(self))
            } else {
                match self.rng.below(5) {
                    0 => Pred::Cmp(CmpOp::Eq, e, lit(self)),
                    1 => {
                        let op = *self.rng.pick(&[CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]);
                        Pred::Cmp(op, e, lit(self))
                    }
                    2 => Pred::Between { expr: e, low: lit(self), high: lit(self), negated: false },
                    3 => {
                        let list = (0..self.rng.range(1, 4)).map(|_| lit(self)).collect();
                        Pred::InList { expr: e, list, negated: false }
                    }
                    _ => {
                        let low = if self.rng.chance(50) { CmpOp::Gt } else { CmpOp::Ge };
                        let high = if self.rng.chance(50) { CmpOp::Lt } else { CmpOp::Le };
                        Pred::Cmp(low, e.clone(), lit(self)).and(Pred::Cmp(high, e, lit(self)))
                    }
                }
            };
            p = Some(match p {
                Some(p) => p.and(q),
                None => q,
            });
        }
        p
    }

    /// A LIKE pattern: mostly a prefix of a value followed by `%` (which an index seek can
    /// serve), sometimes with `_` or a leading `%`. Only letters, `%` and `_`, which both engines
    /// read alike (SQL Server's `[` is special, SQLite's is not).
    fn pattern(&mut self, column: Option<&Column>) -> String {
        let word = match self.literal(Ty::Str, column) {
            Cell::Str(s) => s,
            _ => String::new(),
        };
        let cut = self.rng.range(0, word.len() as i64) as usize;
        match self.rng.below(6) {
            0..=2 => format!("{}%", &word[..cut]),
            3 => format!("%{}", &word[cut..]),
            4 if !word.is_empty() => format!(
                "{}_{}",
                &word[..cut.min(word.len() - 1)],
                &word[(cut + 1).min(word.len())..]
            ),
            _ => word,
        }
    }

    fn type_of(&self, column: &Expr, scope: &[Bound]) -> Ty {
        let Expr::Column { alias, column } = column else { return Ty::Int };
        let b = scope.iter().find(|b| &b.alias == alias).expect("alias in scope");
        let table = &self.tab(b.table);
        table.columns.iter().find(|c| &c.name == column).expect("column in table").ty
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

    /// An aggregate over `scope` of type `ty`, or of any type if None.
    fn aggregate(&mut self, scope: &[Bound], ty: Option<Ty>) -> Expr {
        let ty = ty.unwrap_or_else(|| self.any_ty());
        let funcs: &[AggFunc] = match ty {
            Ty::Int => &[AggFunc::Count, AggFunc::Count, AggFunc::Sum, AggFunc::Min, AggFunc::Max],
            Ty::Str => &[AggFunc::Min, AggFunc::Max],
        };
        let func = *self.rng.pick(funcs);
        if func == AggFunc::Count && self.rng.chance(40) {
            return Expr::Agg { func, distinct: false, arg: None };
        }
        let arg_ty = if func == AggFunc::Count { self.any_ty() } else { ty };
        let arg = self.scalar(arg_ty, scope, 1);
        let distinct = self.features.count_distinct
            && matches!(func, AggFunc::Count | AggFunc::Sum)
            && self.rng.chance(20);
        Expr::Agg { func, distinct, arg: Some(Box::new(arg)) }
    }

    fn subquery(&mut self, outer: &[Bound], kind: SubKind, subqueries: u32) -> Select {
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
        if self.rng.chance(40) {
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
