//! Grouping and aggregates computed as rows arrive (a hash aggregate).
//!
//! Each group keeps its first row (the values its select list, HAVING and ORDER BY read of
//! the group's columns) and one running state per aggregate, so a group costs the same
//! whether it has one row or a million, and the input need not be held: a scan can give
//! its rows to [`Grouping::push`] one at a time (`join/stream.rs`), and a materialized
//! input is grouped the same way.
//!
//! * `COUNT`, `COUNT_BIG`, `SUM`, `AVG`, `MIN` and `MAX` fold each value into their state
//!   with the same operations the aggregate of a collected list would apply in the same
//!   order (`SUM` adds from the first value's `sum_seed`, `AVG` divides that sum at the
//!   end), so the results and their errors are the same.
//! * `DISTINCT` aggregates, `WITHIN GROUP`, `STRING_AGG` and the statistical ones keep
//!   their group's non-NULL values (once each for DISTINCT) and compute at the end.
//!
//! Memory: each new group asks the operator's grant for its row, its key and its states
//! (but the one group of an aggregate without GROUP BY).
//! Refused, the grouping goes on in memory for the groups it has, and every row of any
//! other group is written to a spill partition by the hash of its key (`hash_spill.rs`):
//! a group is then either wholly in memory or wholly in one partition, and each partition
//! is grouped by itself at the end (a hybrid hash aggregate). Groups come out in the order
//! their first rows came, the in-memory ones first, then partition by partition.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use walden_engine::types::{SqlType, Value};

use crate::ast::{BinaryOp, Expr, ExprKind, FunctionArgs, FunctionCall, OrderByItem};
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{compare_collated, label_in, Col, Env};
use crate::exec::execute::grant::{row_bytes, MemoryGrant};
use crate::exec::execute::hash_spill::{Partitions, KEY_BYTES, STREAMED_PARTITIONS};
use crate::exec::execute::query::{group_key, grouping, push_group_key, ROWID};
use crate::exec::execute::window::{average, sum_seed};
use crate::exec::scalar;
use crate::exec::scalar::collation::{sort_value, Collation};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// What an aggregate computes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Count,
    CountBig,
    Sum,
    Avg,
    Min,
    Max,
    StringAgg,
    Stdev,
    StdevP,
    Var,
    VarP,
}

impl Kind {
    fn of(name: &str) -> Option<Kind> {
        Some(match name {
            "COUNT" => Kind::Count,
            "COUNT_BIG" | "APPROX_COUNT_DISTINCT" => Kind::CountBig,
            "SUM" => Kind::Sum,
            "AVG" => Kind::Avg,
            "MIN" => Kind::Min,
            "MAX" => Kind::Max,
            "STRING_AGG" => Kind::StringAgg,
            "STDEV" => Kind::Stdev,
            "STDEVP" => Kind::StdevP,
            "VAR" => Kind::Var,
            "VARP" => Kind::VarP,
            _ => return None,
        })
    }

    /// Whether each value can be folded into a running state as it comes.
    fn folds(self) -> bool {
        matches!(self, Kind::Count | Kind::CountBig | Kind::Sum | Kind::Avg | Kind::Min | Kind::Max)
    }
}

/// One aggregate of the select list, HAVING or ORDER BY, prepared for the rows' columns.
enum Spec<'a> {
    /// `GROUPING(column)` or `GROUPING_ID(column, ...)`: known from the grouping set, not
    /// from the rows.
    Grouping(&'a FunctionCall),
    /// `COUNT(*)` (an INT that stops at its largest value) or `COUNT_BIG(*)`.
    CountRows { big: bool },
    /// An aggregate of a value.
    Of {
        kind: Kind,
        arg: Scalar<'a>,
        /// Each distinct value once (DISTINCT, or APPROX_COUNT_DISTINCT, which counts
        /// exactly).
        distinct: bool,
        within_group: &'a [OrderByItem],
        /// STRING_AGG's separator.
        separator: Option<&'a Expr>,
        /// The argument's collation, which DISTINCT, MIN and MAX of text go by.
        collation: Option<&'static Collation>,
        /// Each WITHIN GROUP key's collation.
        within_collations: Vec<Option<&'static Collation>>,
    },
}

/// A group's running state for one aggregate.
enum State {
    Rows(u64),
    /// Non-NULL values counted (COUNT), summed from their seed (SUM, AVG) or the best
    /// so far (MIN, MAX).
    Fold {
        n: i64,
        acc: Option<Value>,
    },
    /// The values (and WITHIN GROUP's keys beside them), each once if DISTINCT.
    Values {
        values: Vec<Value>,
        keys: Vec<Vec<Value>>,
        seen: HashSet<String>,
    },
    /// GROUPING: nothing to keep.
    None,
}

impl<'a> Spec<'a> {
    fn prepare(e: &'a Expr, cols: &[Col]) -> Result<Spec<'a>, SqlError> {
        let ExprKind::Function(f) = &e.kind else {
            return Err(SqlError::new(50000, "Walden expected an aggregate function here."));
        };
        let name = f.name.name.value.to_ascii_uppercase();
        if name == "GROUPING" || name == "GROUPING_ID" {
            return Ok(Spec::Grouping(f));
        }
        let (distinct, arg, separator) = match &f.args {
            FunctionArgs::List { distinct, args } => (*distinct, args.first(), args.get(1)),
            FunctionArgs::Star | FunctionArgs::None => (false, None, None),
        };
        let Some(arg) = arg else {
            return match name.as_str() {
                "COUNT" => Ok(Spec::CountRows { big: false }),
                "COUNT_BIG" => Ok(Spec::CountRows { big: true }),
                _ => Err(SqlError::with_severity(
                    174,
                    15,
                    format!("The {} function requires 1 argument(s).", name.to_lowercase()),
                )),
            };
        };
        let kind = Kind::of(&name).ok_or_else(|| {
            SqlError::with_severity(
                195,
                15,
                format!("'{name}' is not a recognized built-in function name."),
            )
        })?;
        let mut within_collations = Vec::with_capacity(f.within_group.len());
        for o in &f.within_group {
            within_collations.push(label_in(&o.expr, cols)?.collation());
        }
        Ok(Spec::Of {
            kind,
            arg: Scalar::prepare(arg, cols),
            distinct: distinct || name == "APPROX_COUNT_DISTINCT",
            within_group: &f.within_group,
            separator,
            collation: label_in(arg, cols)?.collation(),
            within_collations,
        })
    }

    fn start(&self) -> State {
        match self {
            Spec::Grouping(_) => State::None,
            Spec::CountRows { .. } => State::Rows(0),
            Spec::Of { kind, distinct: false, within_group: [], .. } if kind.folds() => {
                State::Fold { n: 0, acc: None }
            }
            Spec::Of { .. } => {
                State::Values { values: Vec::new(), keys: Vec::new(), seen: HashSet::new() }
            }
        }
    }

    /// Adds the row `env` holds to `state`.
    fn push(&self, run: &mut Run<'_>, state: &mut State, env: &Env<'_>) -> Result<(), SqlError> {
        let Spec::Of { kind, arg, distinct, within_group, collation, within_collations, .. } = self
        else {
            if let State::Rows(n) = state {
                *n += 1;
            }
            return Ok(());
        };
        // A column is read where it lies: COUNT, MIN and MAX copy nothing of most rows.
        let evaluated;
        let v = match arg {
            Scalar::Column(i) => env.row.get(*i).unwrap_or(&Value::Null),
            _ => {
                evaluated = run.eval_prepared(arg, env)?;
                &evaluated
            }
        };
        if v.is_null() {
            // STRING_AGG skips NULLs without SQL Server's warning 8153.
            if *kind != Kind::StringAgg {
                scalar::settings::null_eliminated();
            }
            return Ok(());
        }
        match state {
            State::Fold { n, acc } => fold(*kind, n, acc, v, *collation),
            State::Values { values, keys, seen } => {
                if *distinct && !seen.insert(group_key(&[sort_value(v.clone(), *collation)])) {
                    return Ok(());
                }
                if !within_group.is_empty() {
                    let mut key = Vec::with_capacity(within_group.len());
                    for (o, c) in within_group.iter().zip(within_collations) {
                        key.push(sort_value(run.eval(&o.expr, env)?, *c));
                    }
                    keys.push(key);
                }
                values.push(v.clone());
                Ok(())
            }
            State::Rows(_) | State::None => Ok(()),
        }
    }

    /// The aggregate's value for a group whose state is `state`, in grouping set `set`.
    fn finish(&self, run: &mut Run<'_>, state: State, set: &[&Expr]) -> Result<Value, SqlError> {
        match (self, state) {
            (Spec::Grouping(f), _) => grouping(f, set),
            (Spec::CountRows { big: false }, State::Rows(n)) => {
                Ok(Value::Int(i32::try_from(n).unwrap_or(i32::MAX)))
            }
            (Spec::CountRows { big: true }, State::Rows(n)) => Ok(Value::BigInt(n as i64)),
            (Spec::Of { kind, .. }, State::Fold { n, acc }) => folded(*kind, n, acc),
            (
                Spec::Of { kind, within_group, separator, collation, .. },
                State::Values { values, keys, .. },
            ) => {
                let values = if within_group.is_empty() {
                    values
                } else {
                    in_group_order(values, &keys, within_group)?
                };
                of_values(run, *kind, values, *separator, *collation)
            }
            _ => Err(SqlError::new(50000, "Walden's aggregate state does not match its function.")),
        }
    }
}

/// Folds non-NULL `v` into a running COUNT, SUM, AVG, MIN or MAX (text compared under
/// `collation`), copying it only where the state keeps it.
fn fold(
    kind: Kind,
    n: &mut i64,
    acc: &mut Option<Value>,
    v: &Value,
    collation: Option<&Collation>,
) -> Result<(), SqlError> {
    *n += 1;
    match kind {
        Kind::Sum | Kind::Avg => {
            // Added in place where that is one operation that cannot fail: an integer sum
            // of its own type's values where it does not overflow (which the general
            // addition below refuses with error 8115, as before).
            if let Some(sum) = acc.as_mut() {
                match (&mut *sum, v) {
                    (Value::BigInt(s), Value::BigInt(x)) => {
                        if let Some(r) = s.checked_add(*x) {
                            *s = r;
                            return Ok(());
                        }
                    }
                    (Value::Int(s), Value::Int(x)) => {
                        if let Some(r) = s.checked_add(*x) {
                            *s = r;
                            return Ok(());
                        }
                    }
                    _ => {}
                }
                if let Some(next) = scalar::quick_binary(BinaryOp::Add, sum, v) {
                    *sum = next;
                    return Ok(());
                }
            }
            *acc = Some(match acc.take() {
                None => sum_seed(if kind == Kind::Sum { "SUM" } else { "AVG" }, v.clone())?,
                Some(a) => scalar::binary(BinaryOp::Add, a, v.clone())?,
            });
        }
        Kind::Min | Kind::Max => {
            let better = match acc {
                None => true,
                Some(b) => {
                    let o = compare_collated(v, b, collation)?.unwrap_or(Ordering::Equal);
                    o == if kind == Kind::Min { Ordering::Less } else { Ordering::Greater }
                }
            };
            if better {
                *acc = Some(v.clone());
            }
        }
        _ => {}
    }
    Ok(())
}

/// The value of a folded aggregate over `n` values.
fn folded(kind: Kind, n: i64, acc: Option<Value>) -> Result<Value, SqlError> {
    Ok(match kind {
        Kind::Count => Value::Int(i32::try_from(n).map_err(|_| SqlError::overflow("int"))?),
        Kind::CountBig => Value::BigInt(n),
        Kind::Avg => match acc {
            Some(sum) => average(sum, n)?,
            None => Value::Null,
        },
        _ => acc.unwrap_or(Value::Null),
    })
}

/// `values` sorted by their WITHIN GROUP keys (stably, NULLs first).
fn in_group_order(
    values: Vec<Value>,
    keys: &[Vec<Value>],
    within_group: &[OrderByItem],
) -> Result<Vec<Value>, SqlError> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    let mut failed = None;
    order.sort_by(|&a, &b| {
        for (o, (x, y)) in within_group.iter().zip(keys[a].iter().zip(&keys[b])) {
            let ord = match scalar::compare(x, y) {
                Ok(Some(ord)) => ord,
                Ok(None) => x.is_null().cmp(&y.is_null()).reverse(),
                Err(e) => {
                    failed.get_or_insert(e);
                    Ordering::Equal
                }
            };
            let ord = if o.descending { ord.reverse() } else { ord };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let mut values: Vec<Option<Value>> = values.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| values[i].take()).collect())
}

/// An aggregate of the non-NULL `values` of a group, in the order they count.
fn of_values(
    run: &mut Run<'_>,
    kind: Kind,
    values: Vec<Value>,
    separator: Option<&Expr>,
    collation: Option<&Collation>,
) -> Result<Value, SqlError> {
    match kind {
        Kind::Stdev | Kind::StdevP | Kind::Var | Kind::VarP => {
            // Sample (n - 1) or population (n) variance and standard deviation, as FLOAT; a
            // sample statistic of fewer than two values is NULL.
            let mut xs = Vec::with_capacity(values.len());
            for v in values {
                if let Value::Float(x) = scalar::convert(v, SqlType::Float, None)? {
                    xs.push(x);
                }
            }
            let sample = matches!(kind, Kind::Stdev | Kind::Var);
            let n = xs.len() as f64;
            if xs.is_empty() || (sample && xs.len() < 2) {
                return Ok(Value::Null);
            }
            let mean = xs.iter().sum::<f64>() / n;
            let squares = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>();
            let variance = squares / if sample { n - 1.0 } else { n };
            let sd = matches!(kind, Kind::Stdev | Kind::StdevP);
            Ok(Value::Float(if sd { variance.sqrt() } else { variance }))
        }
        Kind::StringAgg => {
            let sep = match separator {
                Some(s) => scalar::to_text(&run.value(s)?),
                None => String::new(),
            };
            if values.is_empty() {
                return Ok(Value::Null);
            }
            let national = values.iter().any(|v| matches!(v, Value::NStr(_)));
            let text = values.iter().map(scalar::to_text).collect::<Vec<_>>().join(&sep);
            Ok(if national { Value::NStr(text) } else { Value::Str(text) })
        }
        _ => {
            let (mut n, mut acc) = (0, None);
            for v in &values {
                fold(kind, &mut n, &mut acc, v, collation)?;
            }
            folded(kind, n, acc)
        }
    }
}

/// The aggregates `aggs` over `rows` of `cols`, as one group (PIVOT's cells).
pub(crate) fn aggregate_rows<'r>(
    run: &mut Run<'_>,
    f: &Expr,
    cols: &[Col],
    rows: impl Iterator<Item = &'r [Value]>,
    outer: Option<&Env<'_>>,
) -> Result<Value, SqlError> {
    let spec = Spec::prepare(f, cols)?;
    let mut state = spec.start();
    for (i, row) in rows.enumerate() {
        run.row_interruption_point(i)?;
        spec.push(run, &mut state, &Env::new(cols, row, outer))?;
    }
    spec.finish(run, state, &[])
}

/// Makes in `key` (cleared first, reused from row to row) the [`group_key`] of the values of
/// `keys` for `env`'s row, text under its key's collation. A key that is a column is keyed
/// where it lies in the row, without a copy, unless its text must first become its
/// collation's key bytes.
fn key_of(
    run: &mut Run<'_>,
    keys: &[Scalar<'_>],
    collations: &[Option<&'static Collation>],
    env: &Env<'_>,
    key: &mut String,
) -> Result<(), SqlError> {
    key.clear();
    for (k, c) in keys.iter().zip(collations) {
        if let Scalar::Column(i) = k {
            let v = env.row.get(*i).unwrap_or(&Value::Null);
            let collated = matches!(v, Value::Str(_) | Value::NStr(_))
                && c.is_some_and(|c| !c.order().is_default());
            if !collated {
                if let Value::Xml(_) = v {
                    return Err(scalar::xml::not_comparable());
                }
                push_group_key(v, key);
                continue;
            }
        }
        match run.eval_prepared(k, env)? {
            Value::Xml(_) => return Err(scalar::xml::not_comparable()),
            v => push_group_key(&sort_value(v, *c), key),
        }
    }
    Ok(())
}

/// One group: its first row and its aggregates' states.
struct Group {
    row: Vec<Value>,
    states: Vec<State>,
}

impl Group {
    /// A group whose first row is `row`, its states those of `specs` over no rows; the row
    /// locators at `locators` are not kept (nothing after grouping reads them).
    fn first(row: &[Value], specs: &[Spec<'_>], locators: &[usize]) -> Group {
        let states = specs.iter().map(Spec::start).collect();
        // Room for the aggregates' values, which `Grouping::finish_into` appends: growing
        // each group's row there reallocated every one of them.
        let mut first = Vec::with_capacity(row.len() + specs.len());
        first.extend_from_slice(row);
        for &i in locators {
            first[i] = Value::Null;
        }
        Group { row: first, states }
    }
}

/// A hash aggregate: the rows given to it grouped by `keys`, with `aggs` over each group.
pub(crate) struct Grouping<'a> {
    cols: Vec<Col>,
    key_exprs: Vec<&'a Expr>,
    aggs: Vec<&'a Expr>,
    keys: Vec<Scalar<'a>>,
    /// Each key's collation: text groups by its collation's equality.
    key_collations: Vec<Option<&'static Collation>>,
    specs: Vec<Spec<'a>>,
    /// Each group's position by its key. Hashed with foldhash, seeded per map: SipHash's
    /// cost showed in every row of a grouping, and a seeded hash keeps keys an attacker
    /// chose from colliding at will.
    index: HashMap<String, usize, foldhash::fast::RandomState>,
    /// The current row's key, in a buffer kept from row to row.
    key: String,
    /// The keys' positions in the row, when there are one or two keys and each is a column:
    /// a row whose values there are integers or NULL is then looked up in `int_index` first.
    key_columns: Option<Vec<usize>>,
    /// Groups by their keys' integers ([`IntKey`]), so that most rows of an integer GROUP
    /// BY find their group without making their text key. Equal integers have equal text
    /// keys, so every group here is in `index` too; not the converse: a miss here looks
    /// in `index` (where a DECIMAL 1.0 may have made the group an INT 1 belongs to) before
    /// it makes a group, and the group found or made is then indexed here.
    int_index: HashMap<IntKey, usize, foldhash::fast::RandomState>,
    groups: Vec<Group>,
    grant: MemoryGrant,
    /// May the groups past the grant spill? A partition's own grouping may not: it is
    /// grouped in memory whatever its size, held against the workspace (error 701 past it).
    may_spill: bool,
    /// The rows of groups that found no room, by the hash of their key.
    spilled: Option<Partitions>,
    /// Rows given so far.
    seen: usize,
    /// The positions of the rows' hidden row locators, which nothing after grouping reads:
    /// a group's first row keeps NULL there instead of a copy of the locator.
    locators: Vec<usize>,
    /// Whether the rows come in an order that keeps each group's rows together (a scan in
    /// the order of integer key columns, [`Grouping::take_ordered_input`]): a row's group
    /// is then the last one's or a new one, found without a lookup, as a stream aggregate
    /// finds it.
    ordered: bool,
    /// The last group made in order, and its key.
    last: Option<(IntKey, usize)>,
}

/// The integers of a row's one or two key columns, None for NULL (and for the second of
/// one key).
type IntKey = (Option<i64>, Option<i64>);

/// An integer key value as `i64` (Some(None) for NULL); None for any other value, which is
/// keyed by its text.
fn integer_of(v: Option<&Value>) -> Option<Option<i64>> {
    match v {
        Some(Value::TinyInt(x)) => Some(Some(i64::from(*x))),
        Some(Value::SmallInt(x)) => Some(Some(i64::from(*x))),
        Some(Value::Int(x)) => Some(Some(i64::from(*x))),
        Some(Value::BigInt(x)) => Some(Some(*x)),
        Some(Value::Null) | None => Some(None),
        Some(_) => None,
    }
}

/// Bytes a state takes beyond itself, guessed for the grant.
const STATE_BYTES: usize = 32;

impl<'a> Grouping<'a> {
    /// Grouping rows of `cols` by `keys`, computing `aggs` (aggregate calls).
    pub(crate) fn new(
        run: &Run<'_>,
        cols: &[Col],
        keys: &[&'a Expr],
        aggs: &[&'a Expr],
        may_spill: bool,
    ) -> Result<Grouping<'a>, SqlError> {
        let specs = aggs.iter().map(|a| Spec::prepare(a, cols)).collect::<Result<_, _>>()?;
        let mut key_collations = Vec::with_capacity(keys.len());
        for k in keys {
            key_collations.push(label_in(k, cols)?.collation());
        }
        let prepared: Vec<Scalar<'a>> = keys.iter().map(|k| Scalar::prepare(k, cols)).collect();
        let key_columns: Option<Vec<usize>> = prepared
            .iter()
            .map(|k| match k {
                Scalar::Column(i) => Some(*i),
                _ => None,
            })
            .collect();
        let key_columns = key_columns.filter(|c| (1..=2).contains(&c.len()));
        Ok(Grouping {
            cols: cols.to_vec(),
            key_exprs: keys.to_vec(),
            aggs: aggs.to_vec(),
            keys: prepared,
            key_collations,
            specs,
            index: HashMap::default(),
            key: String::new(),
            key_columns,
            int_index: HashMap::default(),
            groups: Vec::new(),
            grant: run.memory_grant(),
            may_spill,
            spilled: None,
            seen: 0,
            locators: (0..cols.len()).filter(|&i| cols[i].name == ROWID).collect(),
            ordered: false,
            last: None,
        })
    }

    /// Takes the rows to come in an order that keeps each group's rows together, if every
    /// key is a column of an integer type (so a key compares as integers, which equal only
    /// themselves) and `delivers` says the rows come in the order of those columns (in the
    /// order the GROUP BY names them, or, for two, the other way round). Must be called
    /// before the first row.
    pub(crate) fn take_ordered_input(&mut self, delivers: impl Fn(&[usize]) -> bool) {
        let Some(columns) = self.key_columns.as_deref() else { return };
        let integers = columns.iter().all(|&c| {
            matches!(
                self.cols[c].ty,
                SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt
            )
        });
        let reversed: Vec<usize> = columns.iter().rev().copied().collect();
        self.ordered = integers && (delivers(columns) || delivers(&reversed));
    }

    /// The columns of the rows it groups.
    pub(crate) fn cols(&self) -> &[Col] {
        &self.cols
    }

    /// Adds one row.
    pub(crate) fn push(
        &mut self,
        run: &mut Run<'_>,
        row: &[Value],
        outer: Option<&Env<'_>>,
    ) -> Result<(), SqlError> {
        run.row_interruption_point(self.seen)?;
        self.seen += 1;
        let at = if self.keys.is_empty() {
            // Without GROUP BY every row is of the one group: no key to make or look up.
            if self.groups.is_empty() {
                self.groups.push(Group::first(row, &self.specs, &self.locators));
            }
            0
        } else if let (true, Some(key)) = (self.ordered, self.integer_key(row)) {
            match self.last {
                Some((last, at)) if last == key => at,
                _ => match self.group_in_order(run, row, outer)? {
                    Some(at) => {
                        self.last = Some((key, at));
                        at
                    }
                    // Spilled.
                    None => return Ok(()),
                },
            }
        } else {
            let integers = self.integer_key(row);
            match integers.and_then(|k| self.int_index.get(&k)) {
                Some(&at) => at,
                None => match self.group_of(run, row, outer)? {
                    Some(at) => {
                        if let Some(k) = integers {
                            self.int_index.insert(k, at);
                        }
                        at
                    }
                    // Spilled.
                    None => return Ok(()),
                },
            }
        };
        let env = Env::new(&self.cols, row, outer);
        let group = &mut self.groups[at];
        for (spec, state) in self.specs.iter().zip(&mut group.states) {
            spec.push(run, state, &env)?;
        }
        Ok(())
    }

    /// The integers of `row`'s key columns, if there are one or two keys, each a column,
    /// and each of the row's values there an integer or NULL. A row with a text, DECIMAL or
    /// any other key value is keyed by its text key alone.
    fn integer_key(&self, row: &[Value]) -> Option<IntKey> {
        match self.key_columns.as_deref()? {
            [a] => Some((integer_of(row.get(*a))?, None)),
            [a, b] => Some((integer_of(row.get(*a))?, integer_of(row.get(*b))?)),
            _ => None,
        }
    }

    /// The position of a new group for `row`, whose key no row before it had (the rows are
    /// [ordered](Grouping::take_ordered_input)): made without a key to look it up by, which
    /// nothing will; or, once the grant has no room, by [`Grouping::group_of`], which may
    /// spill the row (None).
    fn group_in_order(
        &mut self,
        run: &mut Run<'_>,
        row: &[Value],
        outer: Option<&Env<'_>>,
    ) -> Result<Option<usize>, SqlError> {
        let bytes = row_bytes(row) + STATE_BYTES * self.specs.len();
        if self.spilled.is_some() || !self.grant.try_reserve(bytes) {
            return self.group_of(run, row, outer);
        }
        self.groups.push(Group::first(row, &self.specs, &self.locators));
        Ok(Some(self.groups.len() - 1))
    }

    /// The position of the group of `row`, found by its text key or made (its memory asked
    /// of the grant); None if the row went to a spill partition instead.
    fn group_of(
        &mut self,
        run: &mut Run<'_>,
        row: &[Value],
        outer: Option<&Env<'_>>,
    ) -> Result<Option<usize>, SqlError> {
        let env = Env::new(&self.cols, row, outer);
        key_of(run, &self.keys, &self.key_collations, &env, &mut self.key)?;
        Ok(Some(match self.index.get(self.key.as_str()) {
            Some(&at) => at,
            None => {
                if let Some(parts) = &mut self.spilled {
                    parts.write(&self.key, row)?;
                    return Ok(None);
                }
                let bytes =
                    row_bytes(row) + KEY_BYTES + self.key.len() + STATE_BYTES * self.specs.len();
                if !self.grant.try_reserve(bytes) {
                    if self.may_spill {
                        let mut parts = Partitions::new(self.grant.memory(), STREAMED_PARTITIONS)?;
                        parts.write(&self.key, row)?;
                        self.spilled = Some(parts);
                        return Ok(None);
                    }
                    self.grant.hold(bytes)?;
                }
                self.groups.push(Group::first(row, &self.specs, &self.locators));
                self.index.insert(self.key.clone(), self.groups.len() - 1);
                self.groups.len() - 1
            }
        }))
    }

    /// Each group's first row followed by its aggregates, for grouping set `set` (the
    /// grouping keys; empty for no GROUP BY, which makes one group even of no rows).
    pub(crate) fn finish(
        self,
        run: &mut Run<'_>,
        set: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut out = Vec::with_capacity(self.groups.len());
        self.finish_into(run, set, outer, &mut |_, row| {
            out.push(row);
            Ok(true)
        })?;
        Ok(out)
    }

    /// [`Grouping::finish`]'s rows given to `emit` one at a time, each group's memory given
    /// back as it goes, until `emit` says stop; says whether it did not.
    #[allow(clippy::type_complexity)]
    pub(crate) fn finish_into(
        self,
        run: &mut Run<'_>,
        set: &[&Expr],
        outer: Option<&Env<'_>>,
        emit: &mut dyn FnMut(&mut Run<'_>, Vec<Value>) -> Result<bool, SqlError>,
    ) -> Result<bool, SqlError> {
        let Grouping {
            cols, key_exprs, aggs, specs, mut groups, spilled, index, int_index, ..
        } = self;
        // The keys are not looked up again.
        drop(index);
        drop(int_index);
        if key_exprs.is_empty() && groups.is_empty() {
            let states = specs.iter().map(Spec::start).collect();
            groups.push(Group { row: vec![Value::Null; cols.len()], states });
        }
        for Group { mut row, states } in groups {
            for (spec, state) in specs.iter().zip(states) {
                row.push(spec.finish(run, state, set)?);
            }
            if !emit(run, row)? {
                return Ok(false);
            }
        }
        let Some(parts) = spilled else { return Ok(true) };
        for mut file in parts.finish()? {
            run.interruption_point()?;
            let mut part = Grouping::new(run, &cols, &key_exprs, &aggs, false)?;
            while let Some(row) = file.next()? {
                part.push(run, &row, outer)?;
            }
            if !part.finish_into(run, set, outer, emit)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
