//! Evaluating a compiled query against a parsed document: node sequences along the axes,
//! predicates with XQuery's positional and boolean rules, existential general comparisons, and
//! the supported functions. Recursion follows the compiled expression, whose nesting the
//! compiler bounded; a query that is well formed but meets the wrong kind of item (a path
//! step from an atomic value, several items where one is required) gets SQL Server's error
//! for it (2213, 2373, 2374, 2390) rather than an answer.

use super::super::doc::{local_name, Doc, Kind};
use super::{err, Axis, Cmp, Expr, Func, Item, Step, Test};
use crate::exec::SqlError;

/// Evaluation state: the document, the focus and the bound outside values.
pub(crate) struct Eval<'a> {
    pub(crate) doc: &'a Doc,
    pub(crate) externals: &'a [Item],
    pub(crate) method: &'a str,
}

#[derive(Clone, Copy)]
struct Focus<'i> {
    pub(super) item: &'i Item,
    pub(super) position: usize,
    size: usize,
}

/// XQuery's number formatting of a double, as `string()` gives it: integers without a
/// fraction, others in the shortest form that reads back.
pub(crate) fn number_text(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "INF" } else { "-INF" }.into()
    } else if n == n.trunc() && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

impl Eval<'_> {
    /// The items of `e` with the context node `context`.
    pub(crate) fn run(&self, e: &Expr, context: u32) -> Result<Vec<Item>, SqlError> {
        let item = Item::Node(context);
        self.eval(e, Focus { item: &item, position: 1, size: 1 })
    }

    pub(crate) fn atomize(&self, item: &Item) -> String {
        match item {
            Item::Node(n) => self.doc.string_value(*n),
            Item::Str(s) => s.clone(),
            Item::Num(n) => number_text(*n),
            Item::Bool(b) => b.to_string(),
        }
    }

    pub(super) fn number(&self, item: &Item) -> f64 {
        match item {
            Item::Num(n) => *n,
            Item::Bool(b) => f64::from(u8::from(*b)),
            other => self.atomize(other).trim().parse().unwrap_or(f64::NAN),
        }
    }

    fn truth(&self, items: &[Item]) -> Result<bool, SqlError> {
        Ok(match items {
            [] => false,
            [Item::Node(_), ..] => true,
            [Item::Bool(b)] => *b,
            [Item::Str(s)] => !s.is_empty(),
            [Item::Num(n)] => *n != 0.0 && !n.is_nan(),
            _ => {
                return Err(err(
                    self.method,
                    2213,
                    "Cannot atomize/apply data() on expression that contains type 'xs:anyAtomicType' within inferred type",
                ))
            }
        })
    }

    fn eval(&self, e: &Expr, focus: Focus<'_>) -> Result<Vec<Item>, SqlError> {
        Ok(match e {
            Expr::Context => vec![focus.item.clone()],
            Expr::Root => match focus.item {
                Item::Node(_) => vec![Item::Node(0)],
                _ => {
                    return Err(err(
                        self.method,
                        2390,
                        "Top-level attribute nodes are not supported",
                    ))
                }
            },
            Expr::Str(s) => vec![Item::Str(s.clone())],
            Expr::Num(n) => vec![Item::Num(*n)],
            Expr::External(i) => self.externals.get(*i).cloned().into_iter().collect(),
            Expr::Path(from, step) => {
                let sources = self.eval(from, focus)?;
                let mut out: Vec<u32> = Vec::new();
                for s in &sources {
                    let Item::Node(n) = s else {
                        return Err(err(
                            self.method,
                            2373,
                            "'/' requires a node or set of nodes as the context of a path step",
                        ));
                    };
                    let mut found = self.axis(*n, step);
                    for p in &step.predicates {
                        found = self.filter_nodes(found, p)?;
                    }
                    out.extend(found);
                }
                if sources.len() > 1 {
                    out.sort_unstable();
                    out.dedup();
                }
                out.into_iter().map(Item::Node).collect()
            }
            Expr::Filter(inner, p) => {
                let items = self.eval(inner, focus)?;
                let size = items.len();
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let f = Focus { item, position: i + 1, size };
                    if self.predicate_holds(p, f)? {
                        out.push(item.clone());
                    }
                }
                out
            }
            Expr::Compare(op, l, r) => {
                let left = self.eval(l, focus)?;
                let right = self.eval(r, focus)?;
                vec![Item::Bool(self.general_compare(*op, &left, &right))]
            }
            Expr::And(l, r) => {
                let b = self.truth(&self.eval(l, focus)?)? && self.truth(&self.eval(r, focus)?)?;
                vec![Item::Bool(b)]
            }
            Expr::Or(l, r) => {
                let b = self.truth(&self.eval(l, focus)?)? || self.truth(&self.eval(r, focus)?)?;
                vec![Item::Bool(b)]
            }
            Expr::Call(f, args) => self.call(*f, args, focus)?,
        })
    }

    fn predicate_holds(&self, p: &Expr, focus: Focus<'_>) -> Result<bool, SqlError> {
        let v = self.eval(p, focus)?;
        Ok(match v.as_slice() {
            [Item::Num(n)] => *n == focus.position as f64,
            other => self.truth(other)?,
        })
    }

    fn filter_nodes(&self, nodes: Vec<u32>, p: &Expr) -> Result<Vec<u32>, SqlError> {
        let size = nodes.len();
        let mut out = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let item = Item::Node(*n);
            if self.predicate_holds(p, Focus { item: &item, position: i + 1, size })? {
                out.push(*n);
            }
        }
        Ok(out)
    }

    pub(super) fn matches(&self, id: u32, test: &Test, axis: Axis) -> bool {
        let kind = &self.doc.node(id).kind;
        match test {
            Test::Node => true,
            Test::Text => matches!(kind, Kind::Text(_)),
            Test::Comment => matches!(kind, Kind::Comment(_)),
            Test::Name(uri, local) => {
                let (name, node_uri) = match kind {
                    Kind::Element { name, uri } if axis != Axis::Attribute => (name, uri),
                    Kind::Attribute { name, uri, .. } if axis == Axis::Attribute => (name, uri),
                    _ => return false,
                };
                // Namespace declarations are not attributes in XQuery's data model.
                if axis == Axis::Attribute && (name == "xmlns" || name.starts_with("xmlns:")) {
                    return false;
                }
                local.as_ref().is_none_or(|l| l == local_name(name))
                    && uri.as_ref().is_none_or(|u| u == node_uri)
            }
        }
    }

    pub(super) fn axis(&self, n: u32, step: &Step) -> Vec<u32> {
        let node = self.doc.node(n);
        let mut out = Vec::new();
        match step.axis {
            Axis::Child => out.extend(node.children.iter().copied()),
            Axis::Attribute => out.extend(node.attributes.iter().copied()),
            Axis::Own => out.push(n),
            Axis::Parent => {
                if n != 0 {
                    out.push(node.parent);
                }
            }
            Axis::Descendant | Axis::DescendantOrSelf => {
                if step.axis == Axis::DescendantOrSelf {
                    out.push(n);
                }
                let mut stack: Vec<u32> = node.children.iter().rev().copied().collect();
                while let Some(c) = stack.pop() {
                    out.push(c);
                    stack.extend(self.doc.node(c).children.iter().rev().copied());
                }
            }
        }
        let kind_default = match step.axis {
            Axis::Attribute => Axis::Attribute,
            _ => Axis::Child,
        };
        out.retain(|&id| {
            // Only the attribute axis reaches attributes; `self::node()` of one keeps it.
            let is_attribute = matches!(self.doc.node(id).kind, Kind::Attribute { .. });
            (is_attribute == (kind_default == Axis::Attribute) || step.axis == Axis::Own)
                && self.matches(
                    id,
                    &step.test,
                    if is_attribute { Axis::Attribute } else { Axis::Child },
                )
        });
        out
    }

    fn general_compare(&self, op: Cmp, left: &[Item], right: &[Item]) -> bool {
        left.iter().any(|a| right.iter().any(|b| self.compare_items(op, a, b)))
    }

    fn compare_items(&self, op: Cmp, a: &Item, b: &Item) -> bool {
        use std::cmp::Ordering;
        let numeric = matches!(a, Item::Num(_)) || matches!(b, Item::Num(_));
        let boolean = matches!(a, Item::Bool(_)) || matches!(b, Item::Bool(_));
        let order = if boolean {
            let t = |i: &Item| match i {
                Item::Bool(x) => *x,
                other => {
                    let s = self.atomize(other);
                    s == "true" || s == "1"
                }
            };
            Some(t(a).cmp(&t(b)))
        } else if numeric {
            self.number(a).partial_cmp(&self.number(b))
        } else {
            Some(self.atomize(a).cmp(&self.atomize(b)))
        };
        let Some(o) = order else { return op == Cmp::Ne };
        match op {
            Cmp::Eq => o == Ordering::Equal,
            Cmp::Ne => o != Ordering::Equal,
            Cmp::Lt => o == Ordering::Less,
            Cmp::Le => o != Ordering::Greater,
            Cmp::Gt => o == Ordering::Greater,
            Cmp::Ge => o != Ordering::Less,
        }
    }

    fn one_string(&self, args: &[Expr], focus: Focus<'_>) -> Result<Option<String>, SqlError> {
        let items = match args.first() {
            Some(a) => self.eval(a, focus)?,
            None => vec![focus.item.clone()],
        };
        match items.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(self.atomize(one))),
            _ => Err(err(
                self.method,
                2374,
                "A node or set of nodes is required for a function that takes a single item",
            )),
        }
    }

    fn call(&self, f: Func, args: &[Expr], focus: Focus<'_>) -> Result<Vec<Item>, SqlError> {
        let name_of = |items: Vec<Item>, local: bool| -> String {
            match items.first() {
                Some(Item::Node(n)) => match &self.doc.node(*n).kind {
                    Kind::Element { name, .. } | Kind::Attribute { name, .. } => {
                        if local { local_name(name) } else { name.as_str() }.to_string()
                    }
                    _ => String::new(),
                },
                _ => String::new(),
            }
        };
        Ok(vec![match f {
            Func::Count => Item::Num(self.eval(&args[0], focus)?.len() as f64),
            Func::Sum => {
                let items = self.eval(&args[0], focus)?;
                Item::Num(items.iter().map(|i| self.number(i)).sum())
            }
            // Over an empty sequence, the empty sequence (value() gives NULL).
            Func::Min | Func::Max | Func::Avg => {
                let items = self.eval(&args[0], focus)?;
                let numbers = items.iter().map(|i| self.number(i));
                let n = items.len() as f64;
                let folded = match f {
                    Func::Min => numbers.reduce(f64::min),
                    Func::Max => numbers.reduce(f64::max),
                    _ => numbers.reduce(|a, b| a + b).map(|total| total / n),
                };
                match folded {
                    Some(v) => Item::Num(v),
                    None => return Ok(Vec::new()),
                }
            }
            Func::String => Item::Str(self.one_string(args, focus)?.unwrap_or_default()),
            // The typed values of a whole sequence: for untyped xml, each item's text.
            Func::Data => {
                let items = match args.first() {
                    Some(a) => self.eval(a, focus)?,
                    None => vec![focus.item.clone()],
                };
                return Ok(items.iter().map(|i| Item::Str(self.atomize(i))).collect());
            }
            Func::Number => match self.one_string(args, focus)? {
                Some(s) => Item::Num(s.trim().parse().unwrap_or(f64::NAN)),
                None => Item::Num(f64::NAN),
            },
            Func::StringLength => {
                Item::Num(self.one_string(args, focus)?.unwrap_or_default().chars().count() as f64)
            }
            Func::LocalName | Func::Name => {
                let items = match args.first() {
                    Some(a) => self.eval(a, focus)?,
                    None => vec![focus.item.clone()],
                };
                Item::Str(name_of(items, f == Func::LocalName))
            }
            Func::Contains => {
                let hay = self.one_string(&args[..1], focus)?.unwrap_or_default();
                let needle = self.one_string(&args[1..], focus)?.unwrap_or_default();
                Item::Bool(hay.contains(&needle))
            }
            Func::Concat => {
                let mut s = String::new();
                for a in args {
                    s.push_str(
                        &self.one_string(std::slice::from_ref(a), focus)?.unwrap_or_default(),
                    );
                }
                Item::Str(s)
            }
            Func::Not => Item::Bool(!self.truth(&self.eval(&args[0], focus)?)?),
            Func::True => Item::Bool(true),
            Func::False => Item::Bool(false),
            Func::Position => Item::Num(focus.position as f64),
            Func::Last => Item::Num(focus.size as f64),
        }])
    }
}
