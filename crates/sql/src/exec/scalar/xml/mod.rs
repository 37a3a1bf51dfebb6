//! The `xml` type: conversion to it (a well-formedness check that also makes the canonical
//! text every xml value holds), and its methods `value()`, `query()`, `exist()` and `nodes()`
//! over the XQuery subset of [`path`].
//!
//! Walden's own parser ([`doc`]) and evaluator; no XML crate. A method parses its value's text
//! on each call; the last document parsed is kept per thread, so the rows of one `nodes()`
//! (which share their document's text) parse it once.

pub(crate) mod doc;
pub(crate) mod path;

use std::cell::RefCell;
use std::sync::Arc;

use walden_engine::types::{SqlType, Value, Xml};

use self::doc::{Doc, Kind, ParseOptions};
pub(crate) use self::path::Namespaces;
use self::path::{Eval, External, Item, Query};
use crate::exec::SqlError;

/// Msg 305: xml compared, sorted or grouped.
pub(crate) fn not_comparable() -> SqlError {
    SqlError::new(
        305,
        "The xml data type cannot be compared or sorted, except when using the IS NULL operator.",
    )
}

/// Msg 258: a method called on a value that is not xml.
pub(crate) fn not_xml(type_label: &str) -> SqlError {
    SqlError::new(258, format!("Cannot call methods on {type_label}."))
}

/// Text or binary made xml, as `CAST(v AS xml)` / `CONVERT(xml, v, style)` do: parsed
/// (SQL Server's 9400-range errors for malformed text) and written back in canonical form.
/// Style 1 keeps whitespace-only text.
pub(crate) fn to_xml(v: Value, style: Option<i32>) -> Result<Value, SqlError> {
    let preserve_space = style == Some(1) || style == Some(3);
    let (text, national) = match v {
        Value::Null => return Ok(Value::Null),
        Value::Xml(x) => return Ok(Value::Xml(x)),
        Value::Str(s) => (s, false),
        Value::NStr(s) => (s, true),
        Value::Binary(b) => binary_text(&b)?,
        other => {
            return Err(SqlError::new(
                529,
                format!(
                    "Explicit conversion from data type {} to xml is not allowed.",
                    other.kind_name()
                ),
            ))
        }
    };
    let doc = doc::parse(&text, ParseOptions { preserve_space, national })?;
    Ok(Value::Xml(Xml::new(doc.serialize(0))))
}

/// The text of a binary string made xml: UTF-16 after a byte-order mark, else UTF-8. The flag
/// says whether it is read as national text.
fn binary_text(b: &[u8]) -> Result<(String, bool), SqlError> {
    if let Some(rest) = b.strip_prefix(&[0xFF, 0xFE]) {
        let units: Vec<u16> =
            rest.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        return Ok((String::from_utf16_lossy(&units), true));
    }
    let b = b.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(b);
    match std::str::from_utf8(b) {
        Ok(s) => Ok((s.to_string(), false)),
        Err(e) => Err(SqlError::new(
            9420,
            format!(
                "XML parsing: line 1, character {}, illegal xml character",
                e.valid_up_to() + 1
            ),
        )),
    }
}

thread_local! {
    /// The last document a method parsed, by its shared text.
    static LAST: RefCell<Option<(Arc<str>, Arc<Doc>)>> = const { RefCell::new(None) };
}

/// The parsed document of an xml value. Stored values are canonical text, so this does not
/// fail unless a file was damaged; it is still reported as SQL Server's parse error.
fn parsed(x: &Xml) -> Result<Arc<Doc>, SqlError> {
    let shared = x.shared_text();
    if let Some(doc) = LAST.with(|l| {
        l.borrow().as_ref().filter(|(t, _)| Arc::ptr_eq(t, shared)).map(|(_, d)| d.clone())
    }) {
        return Ok(doc);
    }
    let doc =
        Arc::new(doc::parse(x.text(), ParseOptions { preserve_space: true, national: false })?);
    LAST.with(|l| *l.borrow_mut() = Some((shared.clone(), doc.clone())));
    Ok(doc)
}

/// The text of an xml value: the node it stands for, serialized (all of it for a whole value).
pub(crate) fn text_of(x: &Xml) -> String {
    if x.node() == 0 {
        return x.text().to_string();
    }
    match parsed(x) {
        Ok(doc) if (x.node() as usize) < doc.nodes.len() => doc.serialize(x.node()),
        _ => x.text().to_string(),
    }
}

/// The xml value a method is called on: xml or NULL, else Msg 258.
fn target(v: &Value) -> Result<Option<&Xml>, SqlError> {
    match v {
        Value::Null => Ok(None),
        Value::Xml(x) => Ok(Some(x)),
        other => Err(not_xml(super::types::value_label(other))),
    }
}

/// A compiled method call: the query and the names its `sql:variable` / `sql:column` read.
#[derive(Debug, Clone)]
pub(crate) struct Method {
    name: &'static str,
    query: Query,
}

impl Method {
    /// Compiles `xquery` for the method `name` (`value`, `query`, `exist`, `nodes`).
    pub(crate) fn compile(
        name: &'static str,
        xquery: &str,
        ns: &Namespaces,
    ) -> Result<Method, SqlError> {
        let query = path::compile(xquery, name, ns)?;
        if name == "value" && !path::is_singleton(&query.expr) {
            return Err(path::err(
                name,
                2389,
                "'value()' requires a singleton (or empty sequence), found operand of type 'xdt:untypedAtomic *'",
            ));
        }
        Ok(Method { name, query })
    }

    /// The outside values the query reads, in the order [`Method::run`] wants them.
    pub(crate) fn externals(&self) -> impl Iterator<Item = (bool, &str)> {
        self.query.externals.iter().map(|e| match e {
            External::Variable(v) => (true, v.as_str()),
            External::Column(c) => (false, c.as_str()),
        })
    }

    fn items(&self, x: &Xml, externals: &[Value]) -> Result<(Arc<Doc>, Vec<Item>), SqlError> {
        let doc = parsed(x)?;
        let bound: Vec<Item> = externals
            .iter()
            .map(|v| match v {
                Value::Null => Item::Str(String::new()),
                v if v.is_numeric() => Item::Num(super::convert::to_float(v).unwrap_or(f64::NAN)),
                v => Item::Str(super::to_text(v)),
            })
            .collect();
        let node = if (x.node() as usize) < doc.nodes.len() { x.node() } else { 0 };
        let eval = Eval { doc: &doc, externals: &bound, method: self.name };
        let items = eval.run(&self.query.expr, node)?;
        Ok((doc, items))
    }

    /// `x.value(xquery, type)`: the one item atomized and converted to `ty`; NULL for none.
    pub(crate) fn value(
        &self,
        v: &Value,
        ty: SqlType,
        externals: &[Value],
    ) -> Result<Value, SqlError> {
        let Some(x) = target(v)? else { return Ok(Value::Null) };
        let (doc, items) = self.items(x, externals)?;
        let eval = Eval { doc: &doc, externals: &[], method: self.name };
        let Some(item) = items.first() else { return Ok(Value::Null) };
        if items.len() > 1 {
            return Err(path::err(
                self.name,
                2389,
                "'value()' requires a singleton (or empty sequence), found operand of type 'xdt:untypedAtomic *'",
            ));
        }
        let text = eval.atomize(item);
        let text = match item {
            Item::Bool(b) if ty == SqlType::Bit => u8::from(*b).to_string(),
            _ => text,
        };
        super::convert(Value::NStr(text), ty, None)
    }

    /// `x.query(xquery)`: the items as xml: nodes serialized, atomic values as text separated
    /// by spaces.
    pub(crate) fn query(&self, v: &Value, externals: &[Value]) -> Result<Value, SqlError> {
        let Some(x) = target(v)? else { return Ok(Value::Null) };
        let (doc, items) = self.items(x, externals)?;
        let eval = Eval { doc: &doc, externals: &[], method: self.name };
        let mut out = String::new();
        let mut last_atomic = false;
        for item in &items {
            match item {
                Item::Node(n) => {
                    if matches!(doc.node(*n).kind, Kind::Attribute { .. }) {
                        return Err(path::err(
                            self.name,
                            2396,
                            "Attribute may not appear outside of an element",
                        ));
                    }
                    out.push_str(&doc.serialize(*n));
                    last_atomic = false;
                }
                atomic => {
                    if last_atomic {
                        out.push(' ');
                    }
                    doc::escape_text(&eval.atomize(atomic), &mut out);
                    last_atomic = true;
                }
            }
        }
        Ok(Value::Xml(Xml::new(out)))
    }

    /// `x.exist(xquery)`: 1 if the result is not empty (even a `false()` result, as in SQL
    /// Server), NULL for a NULL value.
    pub(crate) fn exist(&self, v: &Value, externals: &[Value]) -> Result<Value, SqlError> {
        let Some(x) = target(v)? else { return Ok(Value::Null) };
        let (_, items) = self.items(x, externals)?;
        Ok(Value::Bit(!items.is_empty()))
    }

    /// `x.nodes(xquery)`: one xml value per node of the result, each standing for its node of
    /// the same shared text. A NULL value has no nodes.
    pub(crate) fn nodes(&self, v: &Value, externals: &[Value]) -> Result<Vec<Value>, SqlError> {
        let Some(x) = target(v)? else { return Ok(Vec::new()) };
        let (_, items) = self.items(x, externals)?;
        items
            .into_iter()
            .map(|i| match i {
                Item::Node(n) => Ok(Value::Xml(Xml::node_of(x.shared_text().clone(), n))),
                _ => Err(path::err(
                    self.name,
                    2374,
                    "A node or set of nodes is required for nodes()",
                )),
            })
            .collect()
    }
}

/// The SQL type `value()`'s second argument names, or SQL Server's error for one it does not
/// take (9500 for xml and the other types without a conversion from text).
pub(crate) fn value_type(name: &str) -> Result<SqlType, SqlError> {
    let unknown = || SqlError::new(243, format!("Type {name} is not a defined system type."));
    // The type is read as a declaration would read it, so that its grammar is the parser's.
    let batch = crate::parse_batch(&format!("DECLARE @v {name}")).map_err(|_| unknown())?;
    let data_type = match batch.statements.as_slice() {
        [crate::ast::Statement { kind: crate::ast::StatementKind::Declare(d), .. }] => {
            match d.as_slice() {
                [crate::ast::Declaration {
                    kind: crate::ast::DeclarationKind::Scalar { data_type, value: None },
                    ..
                }] => data_type.clone(),
                _ => return Err(unknown()),
            }
        }
        _ => return Err(unknown()),
    };
    let ty = super::data_type_in_cast(&data_type)?;
    if matches!(ty, SqlType::Xml | SqlType::Variant) {
        return Err(SqlError::new(
            9500,
            format!("The data type '{name}' used in the VALUE method is invalid."),
        ));
    }
    Ok(ty)
}

/// `FOR XML ..., TYPE`: the text FOR XML built, as an xml value.
pub(crate) fn typed(text: String) -> Result<Value, SqlError> {
    to_xml(Value::NStr(text), None)
}
