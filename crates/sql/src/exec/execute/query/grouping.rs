//! Grouping: `GROUP BY` with its grouping sets (`ROLLUP`, `CUBE`, `GROUPING SETS`) and
//! `GROUPING()`, the key that tells equal rows apart for grouping, `DISTINCT` and `UNION`,
//! and finding the aggregate and window calls an expression holds (which the select list,
//! `HAVING` and `ORDER BY` share). The aggregates themselves are computed by
//! `exec::aggregate`, window functions by `exec::window`.

use std::fmt::Write as _;

use walden_engine::types::{SqlType, Value};

use crate::ast::{Expr, ExprKind, FunctionArgs, FunctionCall, OrderByItem, Select, SelectItem};
use crate::exec::eval::{is_aggregate_call, Col, Env};
use crate::exec::execute::aggregate::Grouping;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Collects the aggregate calls of an expression (not inside subqueries).
pub(super) fn collect_aggregates<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    if let ExprKind::Function(f) = &e.kind {
        if is_aggregate_call(f) {
            out.push(e);
            return;
        }
        // A window function of a grouped query may order or partition by an aggregate
        // (`RANK() OVER (ORDER BY SUM(v) DESC) ... GROUP BY k`): it is computed with the
        // groups, before the windows read it.
        if let Some(spec) = &f.over {
            for p in &spec.partition_by {
                collect_aggregates(p, out);
            }
            for o in &spec.order_by {
                collect_aggregates(&o.expr, out);
            }
        }
    }
    visit_children(e, &mut |c| collect_aggregates(c, out));
}

/// The grouping sets of a GROUP BY: every grouping expression, and the sets of them to
/// group by in turn. A plain GROUP BY is one set of all its items; `ROLLUP(a, b)` stands for
/// the sets (a, b), (a) and (), `CUBE(a, b)` for (a, b), (a), (b) and (), each with the
/// plain items beside them. One ROLLUP or CUBE per GROUP BY. `GROUPING SETS (...)` lists its
/// sets (`sets`), each of items of `group_by`.
pub(crate) fn grouping_sets<'e>(
    group_by: &'e [Expr],
    sets: Option<&'e [Vec<Expr>]>,
) -> Result<(Vec<&'e Expr>, Vec<Vec<&'e Expr>>), SqlError> {
    if let Some(sets) = sets {
        // The distinct items, and each set's items as those, so that a left-out item is
        // recognised by identity, as for ROLLUP.
        let mut all: Vec<&Expr> = Vec::new();
        for e in group_by {
            if !all.iter().any(|a| same_grouping_item(a, e)) {
                all.push(e);
            }
        }
        let find = |e: &Expr| all.iter().copied().find(|a| same_grouping_item(a, e));
        let sets = sets.iter().map(|set| set.iter().filter_map(find).collect()).collect();
        return Ok((all, sets));
    }
    let mut plain = Vec::new();
    let mut rolled: Option<(bool, Vec<&Expr>)> = None;
    for g in group_by {
        let spread = match &g.kind {
            ExprKind::Function(f) if f.name.schema.is_none() && f.over.is_none() => {
                let name = f.name.name.value.to_ascii_uppercase();
                match (name.as_str(), &f.args) {
                    ("ROLLUP" | "CUBE", FunctionArgs::List { args, .. }) => {
                        Some((name == "CUBE", args.iter().collect::<Vec<_>>()))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match spread {
            Some(_) if rolled.is_some() => {
                return Err(SqlError::new(50000, "Walden takes one ROLLUP or CUBE per GROUP BY."))
            }
            Some(r) => rolled = Some(r),
            None => plain.push(g),
        }
    }
    let Some((cube, items)) = rolled else {
        return Ok((plain.clone(), vec![plain]));
    };
    let mut all = plain.clone();
    all.extend(items.iter().copied());
    let mut sets = Vec::new();
    if cube {
        // Every subset, larger ones first, each keeping the items' order: 2^n of them, so n
        // is bounded as SQL Server bounds its grouping sets (4,096).
        let n = items.len();
        if n > 12 {
            return Err(SqlError::new(
                50000,
                "Walden takes at most 12 columns in a CUBE (4,096 grouping sets).",
            ));
        }
        let mut masks: Vec<u32> = (0..1u32 << n).collect();
        masks.sort_by_key(|m| std::cmp::Reverse(m.count_ones()));
        for m in masks {
            let mut set = plain.clone();
            set.extend(items.iter().enumerate().filter(|(i, _)| m >> i & 1 == 1).map(|(_, e)| *e));
            sets.push(set);
        }
    } else {
        for keep in (0..=items.len()).rev() {
            let mut set = plain.clone();
            set.extend(items.iter().take(keep).copied());
            sets.push(set);
        }
    }
    Ok((all, sets))
}

/// The columns of grouped rows (each group's first row, then its aggregates, hidden) and
/// where each aggregate's value is, by the address of its expression.
pub(crate) fn grouped_columns(cols: &[Col], aggs: &[&Expr]) -> (Vec<Col>, Vec<(usize, usize)>) {
    let mut out_cols = cols.to_vec();
    let base = out_cols.len();
    let mut computed = Vec::with_capacity(aggs.len());
    for (i, a) in aggs.iter().enumerate() {
        out_cols.push(Col::hidden("aggregate", SqlType::Int));
        computed.push((*a as *const Expr as usize, base + i));
    }
    (out_cols, computed)
}

/// `GROUPING(column)` in the rows of grouping set `set`: 1 if the set leaves the column out
/// (its NULL stands for all values), 0 if it groups by it.
pub(crate) fn grouping(f: &FunctionCall, set: &[&Expr]) -> Result<Value, SqlError> {
    let args = match &f.args {
        FunctionArgs::List { args, .. } => args.as_slice(),
        _ => &[],
    };
    let left_out = |arg: &Expr| !set.iter().any(|s| same_grouping_item(s, arg));
    if f.name.name.value.eq_ignore_ascii_case("GROUPING_ID") {
        // One bit per argument, the first the most significant: 1 where the set leaves the
        // column out, as GROUPING says of it.
        if args.is_empty() || args.len() > 32 {
            return Err(SqlError::with_severity(
                174,
                15,
                "The grouping_id function requires 1 to 32 argument(s).",
            ));
        }
        let id = args.iter().fold(0i64, |id, a| id << 1 | i64::from(left_out(a)));
        return Ok(Value::Int(id as i32));
    }
    let [arg] = args else {
        return Err(SqlError::with_severity(
            174,
            15,
            "The grouping function requires 1 argument(s).",
        ));
    };
    Ok(Value::TinyInt(u8::from(left_out(arg))))
}

/// Whether two expressions name the same grouping item: the same column (case-insensitive,
/// by its last name and, when both give one, its qualifier), or the same expression.
fn same_grouping_item(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Column(x), ExprKind::Column(y)) => {
            let last = |p: &[crate::ast::Ident]| p.last().map(|i| i.value.to_ascii_lowercase());
            let qual = |p: &[crate::ast::Ident]| {
                (p.len() >= 2).then(|| p[p.len() - 2].value.to_ascii_lowercase())
            };
            last(x) == last(y)
                && match (qual(x), qual(y)) {
                    (Some(q), Some(r)) => q == r,
                    _ => true,
                }
        }
        (x, y) => x == y,
    }
}

/// Collects window function calls (`... OVER (...)`).
pub(super) fn collect_windows<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    if let ExprKind::Function(f) = &e.kind {
        if f.over.is_some() {
            out.push(e);
            return;
        }
    }
    visit_children(e, &mut |c| collect_windows(c, out));
}

/// The aggregate calls a SELECT computes with its groups: those of its select list, its
/// HAVING clause and its ORDER BY.
pub(crate) fn select_aggregates<'e>(sel: &'e Select, order_by: &'e [OrderByItem]) -> Vec<&'e Expr> {
    let mut aggs = Vec::new();
    for item in &sel.items {
        match item {
            SelectItem::Expr { expr, .. } => collect_aggregates(expr, &mut aggs),
            SelectItem::Assign { value, .. } => collect_aggregates(value, &mut aggs),
            SelectItem::Wildcard(_) => {}
        }
    }
    if let Some(h) = &sel.having {
        collect_aggregates(h, &mut aggs);
    }
    for o in order_by {
        collect_aggregates(&o.expr, &mut aggs);
    }
    aggs
}

/// The window function calls a SELECT computes after grouping: those of its select list
/// and its ORDER BY.
pub(crate) fn select_windows<'e>(sel: &'e Select, order_by: &'e [OrderByItem]) -> Vec<&'e Expr> {
    let mut windows = Vec::new();
    for item in &sel.items {
        if let SelectItem::Expr { expr, .. } = item {
            collect_windows(expr, &mut windows);
        }
    }
    for o in order_by {
        collect_windows(&o.expr, &mut windows);
    }
    windows
}

/// Calls `f` on each direct child expression (subqueries excluded).
pub(crate) fn visit_children<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e Expr)) {
    match &e.kind {
        ExprKind::Unary { operand, .. } => f(operand),
        ExprKind::Binary { left, right, .. } => {
            f(left);
            f(right);
        }
        ExprKind::Between { expr, low, high, .. } => {
            f(expr);
            f(low);
            f(high);
        }
        ExprKind::InList { expr, list, .. } => {
            f(expr);
            list.iter().for_each(&mut *f);
        }
        ExprKind::InSubquery { expr, .. } => f(expr),
        ExprKind::Like { expr, pattern, escape, .. } => {
            f(expr);
            f(pattern);
            if let Some(x) = escape {
                f(x);
            }
        }
        ExprKind::IsNull { expr, .. } | ExprKind::Collate { expr, .. } => f(expr),
        ExprKind::AtTimeZone { expr, zone } => {
            f(expr);
            f(zone);
        }
        ExprKind::XmlMethod { target, args, .. } => {
            f(target);
            args.iter().for_each(&mut *f);
        }
        ExprKind::JsonObject { pairs, .. } => {
            for (key, value) in pairs {
                f(key);
                f(value);
            }
        }
        ExprKind::JsonArray { values, .. } => values.iter().for_each(f),
        ExprKind::IsDistinctFrom { left, right, .. } => {
            f(left);
            f(right);
        }
        ExprKind::Quantified { left, .. } => f(left),
        ExprKind::Case(c) => {
            if let Some(o) = &c.operand {
                f(o);
            }
            for w in &c.branches {
                f(&w.condition);
                f(&w.result);
            }
            if let Some(x) = &c.else_result {
                f(x);
            }
        }
        ExprKind::Cast(c) => f(&c.expr),
        ExprKind::Convert(c) => {
            f(&c.expr);
            if let Some(s) = &c.style {
                f(s);
            }
        }
        ExprKind::Function(call) => {
            if let FunctionArgs::List { args, .. } = &call.args {
                args.iter().for_each(&mut *f);
            }
        }
        _ => {}
    }
}

/// A key identifying equal rows for DISTINCT, GROUP BY and UNION: values compare equal in
/// T-SQL (case-insensitively, trailing spaces ignored, 1 = 1.0) exactly when keys are equal.
pub(crate) fn group_key(values: &[Value]) -> String {
    let mut key = String::new();
    for v in values {
        push_group_key(v, &mut key);
    }
    key
}

/// Appends `v`'s part of a [`group_key`] to `key`, so that a caller keying row after row can
/// reuse one buffer: the key of values `a, b` is the key of `a` followed by that of `b`.
pub(crate) fn push_group_key(v: &Value, key: &mut String) {
    match v {
        Value::Null => key.push('\u{0}'),
        Value::Str(s) | Value::NStr(s) => {
            key.push('s');
            let s = s.trim_end_matches(' ');
            if s.is_ascii() {
                // An ASCII character lowers to one ASCII character: byte by byte.
                key.extend(s.bytes().map(|b| char::from(b.to_ascii_lowercase())));
            } else {
                key.extend(s.chars().flat_map(char::to_lowercase));
            }
        }
        Value::TinyInt(x) => push_integer_key(i64::from(*x), key),
        Value::SmallInt(x) => push_integer_key(i64::from(*x), key),
        Value::Int(x) => push_integer_key(i64::from(*x), key),
        Value::BigInt(x) => push_integer_key(*x, key),
        n if n.is_exact_numeric() => {
            key.push('n');
            let t = scalar::to_text(
                &scalar::convert(v.clone(), SqlType::Decimal { precision: 38, scale: 10 }, None)
                    .unwrap_or(Value::Null),
            );
            key.push_str(&t);
        }
        Value::Float(f) => {
            key.push('f');
            let _ = write!(key, "{f}");
        }
        Value::Real(f) => {
            key.push('f');
            let _ = write!(key, "{}", f64::from(*f));
        }
        other => {
            key.push('o');
            let _ = write!(key, "{other}");
        }
    }
    key.push('\u{1}');
}

/// An integer's part of a group key: what the decimal(38, 10) form of [`push_group_key`]
/// spells for it (`-12.0000000000`), without the conversion or a formatter, as integers are
/// most keys and this runs once per row.
fn push_integer_key(x: i64, key: &mut String) {
    key.push('n');
    if x < 0 {
        key.push('-');
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = x.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    key.extend(digits[at..].iter().map(|&d| char::from(d)));
    key.push_str(".0000000000");
}

impl Run<'_> {
    /// Groups rows and computes the aggregates of each group. The grouped rows are a
    /// representative source row followed by one column per aggregate. `GROUP BY
    /// ROLLUP(...)` or `CUBE(...)` groups the rows once per grouping set they stand for (see
    /// [`grouping_sets`]), the rows of each set after the previous set's, and a column of
    /// the GROUP BY that a set leaves out is NULL in its rows.
    #[allow(clippy::type_complexity)]
    pub(crate) fn group(
        &mut self,
        cols: &[Col],
        rows: Vec<Vec<Value>>,
        group_by: &[Expr],
        sets: Option<&[Vec<Expr>]>,
        aggs: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<(Vec<Col>, Vec<Vec<Value>>, Vec<(usize, usize)>), SqlError> {
        let (all, sets) = grouping_sets(group_by, sets)?;
        let mut out = Vec::new();
        for set in &sets {
            let mut grouped = self.group_set(cols, &rows, set, aggs, outer)?;
            let left_out: Vec<&Expr> =
                all.iter().copied().filter(|g| !set.iter().any(|s| std::ptr::eq(*s, *g))).collect();
            for g in left_out {
                let ExprKind::Column(parts) = &g.kind else {
                    return Err(SqlError::new(
                        50000,
                        "Walden groups ROLLUP and CUBE by columns only: name a column, or group a derived table by the expression.",
                    ));
                };
                let at = crate::exec::eval::find_column(cols, parts)?
                    .ok_or_else(|| crate::exec::eval::unbound([cols], parts))?;
                for row in &mut grouped {
                    row[at] = Value::Null;
                }
            }
            out.extend(grouped);
        }
        let (out_cols, computed) = grouped_columns(cols, aggs);
        Ok((out_cols, out, computed))
    }

    /// The rows of one grouping set: a representative row of each group of `rows` by the
    /// values of `set`, followed by the aggregates over the group (`GROUPING(column)` being 1
    /// for a column `set` leaves out).
    fn group_set(
        &mut self,
        cols: &[Col],
        rows: &[Vec<Value>],
        set: &[&Expr],
        aggs: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut grouping = Grouping::new(self, cols, set, aggs, false)?;
        for row in rows {
            grouping.push(self, row, outer)?;
        }
        grouping.finish(self, set, outer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An integer's key is the key of the same number as any other exact numeric, so that
    /// `1` and `1.0` fall into one group.
    #[test]
    fn an_integer_keys_as_the_decimal_of_the_same_value() {
        for i in [0i64, 1, -1, 7, 255, -32768, i64::from(i32::MIN), i64::MAX, i64::MIN] {
            let decimal = scalar::convert(
                Value::BigInt(i),
                SqlType::Decimal { precision: 38, scale: 2 },
                None,
            )
            .unwrap();
            assert_eq!(group_key(&[Value::BigInt(i)]), group_key(&[decimal]), "{i}");
        }
        assert_eq!(group_key(&[Value::TinyInt(3)]), group_key(&[Value::Int(3)]));
        assert_ne!(group_key(&[Value::Int(3)]), group_key(&[Value::Int(30)]));
    }
}
