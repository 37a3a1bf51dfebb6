//! SQL Server's JSON functions: `ISJSON`, `JSON_VALUE`, `JSON_QUERY`, `JSON_MODIFY`, the rows
//! of `OPENJSON` (without a `WITH` schema) and the text `FOR JSON` builds.
//!
//! JSON text is parsed with `serde_json`, keeping the order of object members, as SQL Server
//! returns them in document order. A path is SQL Server's: an optional `lax` (the default) or
//! `strict` mode, then `$`, then `.key`, `."quoted key"` and `[index]` steps. In lax mode a
//! step that finds nothing, or a value of the wrong kind (a scalar where `JSON_QUERY` wants an
//! object or array, and the reverse for `JSON_VALUE`), gives NULL; in strict mode it is an
//! error (13608, 13623, 13624).

use serde_json::{Map, Value as Json};
use walden_engine::types::Value;

use super::text::to_text;
use crate::exec::SqlError;

/// The longest text `JSON_VALUE` returns: it is NVARCHAR(4000).
const JSON_VALUE_MAX: usize = 4000;

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
struct Path {
    strict: bool,
    steps: Vec<Step>,
}

fn path_error(at: usize, c: char) -> SqlError {
    SqlError::new(
        13607,
        format!(
            "JSON path is not properly formatted. Unexpected character '{c}' is found at position {at}."
        ),
    )
}

/// Parses `[lax | strict] $[.key | ."key" | [n]]...` (error 13607).
fn parse_path(text: &str) -> Result<Path, SqlError> {
    let trimmed = text.trim_start();
    let (strict, rest) = if let Some(r) = trimmed.strip_prefix("strict ") {
        (true, r.trim_start())
    } else if let Some(r) = trimmed.strip_prefix("lax ") {
        (false, r.trim_start())
    } else {
        (false, trimmed)
    };
    let offset = text.len() - rest.len();
    let chars: Vec<char> = rest.chars().collect();
    let at = |i: usize| offset + i;
    if chars.first() != Some(&'$') {
        return Err(path_error(at(0), chars.first().copied().unwrap_or(' ')));
    }
    let mut steps = Vec::new();
    let mut i = 1;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                i += 1;
                if chars.get(i) == Some(&'"') {
                    let mut key = String::new();
                    i += 1;
                    loop {
                        match chars.get(i) {
                            Some('"') => break,
                            Some('\\') => {
                                key.extend(chars.get(i + 1));
                                i += 2;
                            }
                            Some(&c) => {
                                key.push(c);
                                i += 1;
                            }
                            None => return Err(path_error(at(i), ' ')),
                        }
                    }
                    i += 1;
                    steps.push(Step::Key(key));
                } else {
                    let start = i;
                    while i < chars.len()
                        && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
                    {
                        i += 1;
                    }
                    if i == start {
                        return Err(path_error(at(i), chars.get(i).copied().unwrap_or(' ')));
                    }
                    steps.push(Step::Key(chars[start..i].iter().collect()));
                }
            }
            '[' => {
                let start = i + 1;
                let mut j = start;
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
                if j == start || chars.get(j) != Some(&']') {
                    return Err(path_error(at(j), chars.get(j).copied().unwrap_or(' ')));
                }
                let digits: String = chars[start..j].iter().collect();
                let index = digits.parse().map_err(|_| path_error(at(start), chars[start]))?;
                steps.push(Step::Index(index));
                i = j + 1;
            }
            c => return Err(path_error(at(i), c)),
        }
    }
    Ok(Path { strict, steps })
}

/// Parses JSON text (error 13609).
fn parse_json(text: &str) -> Result<Json, SqlError> {
    serde_json::from_str(text).map_err(|e| {
        SqlError::new(
            13609,
            format!(
                "JSON text is not properly formatted. {} (line {}, column {}).",
                capitalize(&e.to_string()),
                e.line(),
                e.column()
            ),
        )
    })
}

/// serde_json's message without its own position suffix, capitalized as SQL Server's are.
fn capitalize(message: &str) -> String {
    let message = message.split(" at line ").next().unwrap_or(message);
    let mut chars = message.chars();
    chars.next().map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// The value `path` leads to in `json`, if any.
fn find<'j>(json: &'j Json, path: &Path) -> Option<&'j Json> {
    path.steps.iter().try_fold(json, |node, step| match (step, node) {
        (Step::Key(k), Json::Object(map)) => map.get(k),
        (Step::Index(i), Json::Array(items)) => items.get(*i),
        _ => None,
    })
}

/// The text of a JSON value as `JSON_VALUE` and `OPENJSON` show it: a string without its
/// quotes, `true` / `false`, a number as written, `null` as NULL; objects and arrays as JSON.
fn scalar_text(json: &Json) -> Option<String> {
    match json {
        Json::Null => None,
        Json::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn text_args(args: &[Value]) -> Option<Vec<String>> {
    args.iter().map(|a| (!a.is_null()).then(|| to_text(a))).collect()
}

/// `ISJSON(text [, VALUE | ARRAY | OBJECT | SCALAR])`: 1 if the text is JSON (of that kind;
/// any JSON value without one, as SQL Server 2022 accepts), 0 otherwise; NULL for NULL.
pub(super) fn isjson(args: Vec<Value>) -> Result<Value, SqlError> {
    let Some(text) = text_args(&args[..1]) else { return Ok(Value::Null) };
    let kind = args.get(1).map(|k| to_text(k).to_ascii_uppercase());
    let Ok(json) = serde_json::from_str::<Json>(&text[0]) else { return Ok(Value::Int(0)) };
    let matches = match kind.as_deref() {
        None | Some("VALUE") => true,
        Some("ARRAY") => json.is_array(),
        Some("OBJECT") => json.is_object(),
        Some("SCALAR") => !json.is_array() && !json.is_object(),
        // SQL Server's grammar takes only those four words there.
        Some(other) => {
            return Err(SqlError::with_severity(
                102,
                15,
                format!("Incorrect syntax near '{other}'."),
            ))
        }
    };
    Ok(Value::Int(i32::from(matches)))
}

/// `JSON_PATH_EXISTS(text, path)` (SQL Server 2022): 1 if the path leads to a value in the
/// JSON text (a JSON null counts), 0 if not; NULL for NULL arguments.
pub(super) fn json_path_exists(args: Vec<Value>) -> Result<Value, SqlError> {
    let Some(text) = text_args(&args) else { return Ok(Value::Null) };
    let path = parse_path(&text[1])?;
    let json = parse_json(&text[0])?;
    Ok(Value::Int(i32::from(find(&json, &path).is_some())))
}

/// `JSON_VALUE(text, path)`: the scalar at `path`, as NVARCHAR(4000).
pub(super) fn json_value(args: Vec<Value>) -> Result<Value, SqlError> {
    let Some(text) = text_args(&args) else { return Ok(Value::Null) };
    let path = parse_path(&text[1])?;
    let json = parse_json(&text[0])?;
    let found = find(&json, &path);
    let strict = |number: i32, message: &str| {
        if path.strict {
            Err(SqlError::new(number, message.to_string()))
        } else {
            Ok(Value::Null)
        }
    };
    match found {
        None => strict(13608, "Property cannot be found on the specified JSON path."),
        Some(Json::Object(_) | Json::Array(_)) => {
            strict(13623, "Scalar value cannot be found in the specified JSON path.")
        }
        Some(value) => match scalar_text(value) {
            Some(s) if s.chars().count() > JSON_VALUE_MAX => {
                strict(13625, "String value in the specified JSON path would be truncated.")
            }
            Some(s) => Ok(Value::NStr(s)),
            None => Ok(Value::Null),
        },
    }
}

/// `JSON_QUERY(text [, path])`: the object or array at `path` (the whole text without one), as
/// JSON text.
pub(super) fn json_query(args: Vec<Value>) -> Result<Value, SqlError> {
    let Some(text) = text_args(&args) else { return Ok(Value::Null) };
    let path = match text.get(1) {
        Some(p) => parse_path(p)?,
        None => Path { strict: false, steps: Vec::new() },
    };
    let json = parse_json(&text[0])?;
    match find(&json, &path) {
        Some(v @ (Json::Object(_) | Json::Array(_))) => Ok(Value::NStr(v.to_string())),
        None if path.strict => {
            Err(SqlError::new(13608, "Property cannot be found on the specified JSON path."))
        }
        Some(_) if path.strict => {
            Err(SqlError::new(13624, "Object or array cannot be found in the specified JSON path."))
        }
        _ => Ok(Value::Null),
    }
}

/// `JSON_MODIFY(text, path, value)`: the text with the value at `path` set (created in lax
/// mode when missing), removed (a NULL in lax mode), or appended to the array there
/// (`append $.path`). A string value is stored as a JSON string; the result of `JSON_QUERY`
/// can be passed to store JSON itself.
pub(super) fn json_modify(args: Vec<Value>) -> Result<Value, SqlError> {
    if args[0].is_null() || args[1].is_null() {
        return Ok(Value::Null);
    }
    let text = to_text(&args[0]);
    let raw_path = to_text(&args[1]);
    let (append, raw_path) = match raw_path.trim_start().strip_prefix("append ") {
        Some(rest) => (true, rest.to_string()),
        None => (false, raw_path),
    };
    let path = parse_path(&raw_path)?;
    let mut json = parse_json(&text)?;
    let new = match &args[2] {
        Value::Null => None,
        Value::Bit(b) => Some(Json::Bool(*b)),
        v if v.is_exact_numeric() || matches!(v, Value::Float(_) | Value::Real(_)) => {
            Some(serde_json::from_str(&to_text(v)).unwrap_or_else(|_| Json::String(to_text(v))))
        }
        v => {
            let s = to_text(v);
            // JSON_QUERY's output is JSON, not a string to quote.
            match serde_json::from_str::<Json>(&s) {
                Ok(j @ (Json::Object(_) | Json::Array(_))) => Some(j),
                _ => Some(Json::String(s)),
            }
        }
    };
    let Some((last, parents)) = path.steps.split_last() else {
        return Err(SqlError::new(
            13607,
            "JSON path is not properly formatted. The path cannot be only '$'.",
        ));
    };
    let missing = || SqlError::new(13608, "Property cannot be found on the specified JSON path.");
    let mut node = &mut json;
    for step in parents {
        node = match (step, node) {
            (Step::Key(k), Json::Object(map)) => match map.get_mut(k) {
                Some(v) => v,
                None if path.strict => return Err(missing()),
                None => return Ok(Value::NStr(text)),
            },
            (Step::Index(i), Json::Array(items)) => match items.get_mut(*i) {
                Some(v) => v,
                None if path.strict => return Err(missing()),
                None => return Ok(Value::NStr(text)),
            },
            _ if path.strict => return Err(missing()),
            _ => return Ok(Value::NStr(text)),
        };
    }
    match (last, node) {
        (step, node) if append => {
            let target = match (step, node) {
                (Step::Key(k), Json::Object(map)) => {
                    map.entry(k.clone()).or_insert_with(|| Json::Array(Vec::new()))
                }
                (Step::Index(i), Json::Array(items)) if *i < items.len() => &mut items[*i],
                _ => return Ok(Value::NStr(text)),
            };
            if let (Json::Array(items), Some(v)) = (target, new) {
                items.push(v);
            }
        }
        (Step::Key(k), Json::Object(map)) => match new {
            Some(v) if path.strict && !map.contains_key(k) => {
                let _ = v;
                return Err(missing());
            }
            Some(v) => {
                map.insert(k.clone(), v);
            }
            None if path.strict => {
                map.insert(k.clone(), Json::Null);
            }
            None => {
                map.shift_remove(k);
            }
        },
        (Step::Index(i), Json::Array(items)) => match items.get_mut(*i) {
            Some(slot) => *slot = new.unwrap_or(Json::Null),
            None if path.strict => return Err(missing()),
            None => {}
        },
        _ if path.strict => return Err(missing()),
        _ => {}
    }
    Ok(Value::NStr(json.to_string()))
}

/// OPENJSON's arguments parsed: the JSON text and the path (`$` when absent); `None` for a
/// NULL text, which opens to no rows.
fn open_args(text: &Value, path: Option<&Value>) -> Result<Option<(Json, Path)>, SqlError> {
    if text.is_null() {
        return Ok(None);
    }
    let json = parse_json(&to_text(text))?;
    let path = match path {
        Some(p) if !p.is_null() => parse_path(&to_text(p))?,
        _ => Path { strict: false, steps: Vec::new() },
    };
    Ok(Some((json, path)))
}

/// `OPENJSON(text [, path])` without a `WITH` schema: one row per member of the object (or
/// element of the array) at `path`: `key`, `value` (a scalar's text, or an object's or
/// array's JSON) and `type` (0 null, 1 string, 2 number, 3 true/false, 4 array, 5 object).
pub(crate) fn openjson_rows(
    text: &Value,
    path: Option<&Value>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let Some((json, path)) = open_args(text, path)? else { return Ok(Vec::new()) };
    let Some(node) = find(&json, &path) else {
        if path.strict {
            return Err(SqlError::new(
                13608,
                "Property cannot be found on the specified JSON path.",
            ));
        }
        return Ok(Vec::new());
    };
    let row = |key: String, v: &Json| {
        let kind = match v {
            Json::Null => 0,
            Json::String(_) => 1,
            Json::Number(_) => 2,
            Json::Bool(_) => 3,
            Json::Array(_) => 4,
            Json::Object(_) => 5,
        };
        vec![
            Value::NStr(key),
            scalar_text(v).map_or(Value::Null, Value::NStr),
            Value::TinyInt(kind),
        ]
    };
    Ok(match node {
        Json::Object(map) => map.iter().map(|(k, v)| row(k.clone(), v)).collect(),
        Json::Array(items) => {
            items.iter().enumerate().map(|(i, v)| row(i.to_string(), v)).collect()
        }
        Json::Null => Vec::new(),
        scalar if path.strict => {
            let _ = scalar;
            return Err(SqlError::new(13611, "Value referenced by JSON path is not an array or object and cannot be opened with OPENJSON."));
        }
        _ => Vec::new(),
    })
}

/// `OPENJSON(text [, path]) WITH (...)`'s values, as text: one row per element of the array
/// at `path` (one row for an object there), and in each the value at each column's path
/// (`(path, as_json)`): a scalar's text (`JSON_VALUE`'s, lax or strict as the path says),
/// or with `as_json` the object or array there as JSON.
pub(crate) fn openjson_with_rows(
    text: &Value,
    path: Option<&Value>,
    columns: &[(String, bool)],
) -> Result<Vec<Vec<Option<String>>>, SqlError> {
    let Some((json, path)) = open_args(text, path)? else { return Ok(Vec::new()) };
    let columns: Vec<(Path, bool)> = columns
        .iter()
        .map(|(p, as_json)| parse_path(p).map(|p| (p, *as_json)))
        .collect::<Result<_, _>>()?;
    let elements: Vec<&Json> = match find(&json, &path) {
        Some(Json::Array(items)) => items.iter().collect(),
        Some(object @ Json::Object(_)) => vec![object],
        None if path.strict => {
            return Err(SqlError::new(
                13608,
                "Property cannot be found on the specified JSON path.",
            ))
        }
        _ => Vec::new(),
    };
    let mut rows = Vec::with_capacity(elements.len());
    for element in elements {
        let mut row = Vec::with_capacity(columns.len());
        for (column, as_json) in &columns {
            let found = find(element, column);
            row.push(match (found, as_json) {
                (Some(v @ (Json::Object(_) | Json::Array(_))), true) => Some(v.to_string()),
                (Some(Json::Object(_) | Json::Array(_)), false) | (Some(_), true)
                    if column.strict =>
                {
                    return Err(SqlError::new(
                        13623,
                        "Scalar value cannot be found in the specified JSON path.",
                    ))
                }
                (None, _) if column.strict => {
                    return Err(SqlError::new(
                        13608,
                        "Property cannot be found on the specified JSON path.",
                    ))
                }
                (Some(v), false) => scalar_text(v).filter(|_| !v.is_object() && !v.is_array()),
                _ => None,
            });
        }
        rows.push(row);
    }
    Ok(rows)
}

/// One output row of `FOR JSON`: each column's value under its name; with `PATH`, a name with
/// dots (`a.b`) nests objects. NULLs are left out unless `include_nulls`.
pub(crate) fn for_json_object(
    names: &[String],
    values: &[Value],
    path: bool,
    include_nulls: bool,
) -> Map<String, Json> {
    let mut object = Map::new();
    for (name, value) in names.iter().zip(values) {
        if value.is_null() && !include_nulls {
            continue;
        }
        let json = to_json(value);
        let parts: Vec<&str> = if path { name.split('.').collect() } else { vec![name.as_str()] };
        let Some((leaf, parents)) = parts.split_last() else { continue };
        insert_at(&mut object, parents, leaf, json);
    }
    object
}

/// Inserts `json` as member `leaf` of the object `parents` names inside `object`, making the
/// objects on the way (a scalar there is replaced by one).
fn insert_at(object: &mut Map<String, Json>, parents: &[&str], leaf: &str, json: Json) {
    let Some((first, rest)) = parents.split_first() else {
        object.insert(leaf.to_string(), json);
        return;
    };
    let entry = object.entry((*first).to_string()).or_insert_with(|| Json::Object(Map::new()));
    if !entry.is_object() {
        *entry = Json::Object(Map::new());
    }
    if let Json::Object(inner) = entry {
        insert_at(inner, rest, leaf, json);
    }
}

/// One member of `JSON_OBJECT` or element of `JSON_ARRAY`: the text of a nested JSON
/// constructor or `JSON_QUERY` (`json_text`) as the JSON it is, any other value as `FOR JSON`
/// converts it.
pub(crate) fn json_member(value: &Value, json_text: bool) -> Result<Json, SqlError> {
    match value {
        Value::NStr(s) | Value::Str(s) if json_text => parse_json(s),
        v => Ok(to_json(v)),
    }
}

/// `JSON_OBJECT`'s text: `{"key":value,...}` in the order given, duplicates kept.
pub(crate) fn json_object_text(members: &[(String, Json)]) -> Value {
    let parts: Vec<String> =
        members.iter().map(|(k, v)| format!("{}:{v}", Json::String(k.clone()))).collect();
    Value::NStr(format!("{{{}}}", parts.join(",")))
}

/// `JSON_ARRAY`'s text: `[value,...]`.
pub(crate) fn json_array_text(values: &[Json]) -> Value {
    let parts: Vec<String> = values.iter().map(ToString::to_string).collect();
    Value::NStr(format!("[{}]", parts.join(",")))
}

/// A SQL value as JSON: numbers and bits as JSON numbers and booleans, NULL as null, text
/// that is the output of a nested `FOR JSON` or `JSON_QUERY` as a string, as SQL Server does
/// unless it comes from them directly (Walden cannot tell, so text stays text).
fn to_json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bit(b) => Json::Bool(*b),
        v if v.is_exact_numeric() || matches!(v, Value::Float(_) | Value::Real(_)) => {
            serde_json::from_str(&to_text(v)).unwrap_or_else(|_| Json::String(to_text(v)))
        }
        v => Json::String(to_text(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::NStr(v.into())
    }

    #[test]
    fn paths_parse_as_sql_server_writes_them() {
        let p = parse_path("strict $.a.\"b c\"[2]").unwrap();
        assert!(p.strict);
        assert_eq!(p.steps, [Step::Key("a".into()), Step::Key("b c".into()), Step::Index(2)]);
        assert_eq!(parse_path("$").unwrap().steps, []);
        assert_eq!(parse_path("a.b").unwrap_err().number, 13607);
        assert_eq!(parse_path("$.").unwrap_err().number, 13607);
        assert_eq!(parse_path("$[x]").unwrap_err().number, 13607);
    }

    #[test]
    fn json_value_and_query_find_scalars_and_objects_lax_or_strict() {
        let doc = s(r#"{"a":{"b":[10,"x",true,null]},"n":1.50}"#);
        let value = |p: &str| json_value(vec![doc.clone(), s(p)]);
        assert_eq!(value("$.a.b[0]").unwrap(), s("10"));
        assert_eq!(value("$.a.b[1]").unwrap(), s("x"));
        assert_eq!(value("$.a.b[2]").unwrap(), s("true"));
        assert_eq!(value("$.a.b[3]").unwrap(), Value::Null);
        assert_eq!(value("$.n").unwrap(), s("1.50"));
        assert_eq!(value("$.a").unwrap(), Value::Null);
        assert_eq!(value("strict $.a").unwrap_err().number, 13623);
        assert_eq!(value("strict $.zz").unwrap_err().number, 13608);
        let query = |p: &str| json_query(vec![doc.clone(), s(p)]);
        assert_eq!(query("$.a").unwrap(), s(r#"{"b":[10,"x",true,null]}"#));
        assert_eq!(query("$.n").unwrap(), Value::Null);
        assert_eq!(query("strict $.n").unwrap_err().number, 13624);
        assert_eq!(json_value(vec![s("{oops"), s("$.a")]).unwrap_err().number, 13609);
        assert_eq!(isjson(vec![s("[1,2]")]).unwrap(), Value::Int(1));
        assert_eq!(isjson(vec![s("[1,")]).unwrap(), Value::Int(0));
        assert_eq!(isjson(vec![Value::Null]).unwrap(), Value::Null);
    }

    #[test]
    fn json_modify_sets_removes_and_appends() {
        let doc = s(r#"{"a":1,"tags":["x"]}"#);
        let modify = |p: &str, v: Value| json_modify(vec![doc.clone(), s(p), v]).unwrap();
        assert_eq!(modify("$.a", Value::Int(2)), s(r#"{"a":2,"tags":["x"]}"#));
        assert_eq!(modify("$.b", s("new")), s(r#"{"a":1,"tags":["x"],"b":"new"}"#));
        assert_eq!(modify("$.a", Value::Null), s(r#"{"tags":["x"]}"#));
        assert_eq!(modify("append $.tags", s("y")), s(r#"{"a":1,"tags":["x","y"]}"#));
        assert_eq!(modify("$.tags", s(r#"["z"]"#)), s(r#"{"a":1,"tags":["z"]}"#));
    }

    #[test]
    fn openjson_lists_members_with_their_types() {
        let rows =
            openjson_rows(&s(r#"{"k":"v","n":2,"o":{},"l":[],"b":false,"z":null}"#), None).unwrap();
        let types: Vec<Value> = rows.iter().map(|r| r[2].clone()).collect();
        assert_eq!(types, [1, 2, 5, 4, 3, 0].map(Value::TinyInt).to_vec(),);
        assert_eq!(rows[0][..2], [s("k"), s("v")]);
        let items = openjson_rows(&s(r#"{"a":[5,6]}"#), Some(&s("$.a"))).unwrap();
        assert_eq!(items[1][..2], [s("1"), s("6")]);
    }

    #[test]
    fn for_json_path_nests_dotted_names_and_drops_nulls() {
        let names = ["id".to_string(), "who.name".to_string(), "who.age".to_string()];
        let values = [Value::Int(1), s("ann"), Value::Null];
        let object = for_json_object(&names, &values, true, false);
        assert_eq!(Json::Object(object).to_string(), r#"{"id":1,"who":{"name":"ann"}}"#);
        let object = for_json_object(&names, &values, false, true);
        assert_eq!(Json::Object(object).to_string(), r#"{"id":1,"who.name":"ann","who.age":null}"#);
    }
}
