//! `FOR JSON` and `FOR XML`: a query's rows turned into one JSON or XML text, returned as a
//! one-row, one-column result as SQL Server returns it. They take the finished rows and only
//! format them, so they sit apart from the stages that compute the rows.

use walden_engine::types::{SqlType, Value};

use crate::ast::{QueryBody, TableSource};
use crate::exec::eval::Col;
use crate::exec::scalar;
use crate::exec::SqlError;

use super::Rows;

/// The name of the one column `FOR JSON` returns, as SQL Server names it (clients and tools
/// recognise it).
const FOR_JSON_COLUMN: &str = "JSON_F52E2B61-18A1-11d1-B105-00805F49916B";

/// `FOR JSON`: the query's rows as one JSON text, in a one-row, one-column result (NULL when
/// there are no rows). Every column needs a name (13605).
pub(super) fn for_json(rows: Rows, json: &crate::ast::ForJson) -> Result<Rows, SqlError> {
    let visible = rows.visible();
    let names: Vec<String> = visible.iter().map(|&i| rows.cols[i].name.clone()).collect();
    if names.iter().any(String::is_empty) {
        return Err(SqlError::new(
            13605,
            "Column expressions and data sources without names or aliases cannot be formatted as JSON text using FOR JSON clause. Add alias to the unnamed column or table.",
        ));
    }
    let objects: Vec<String> = rows
        .rows
        .iter()
        .map(|row| {
            let values: Vec<Value> = visible.iter().map(|&i| row[i].clone()).collect();
            let object =
                scalar::for_json_object(&names, &values, json.path, json.include_null_values);
            serde_json::Value::Object(object).to_string()
        })
        .collect();
    let text = if objects.is_empty() {
        None
    } else if json.without_array_wrapper {
        Some(objects.join(","))
    } else {
        Some(format!("[{}]", objects.join(",")))
    };
    let text = match (&json.root, text) {
        (Some(root), text) => {
            let key = serde_json::Value::String(root.clone()).to_string();
            Some(format!("{{{key}:{}}}", text.unwrap_or_else(|| "[]".into())))
        }
        (None, text) => text,
    };
    let col = Col::new(None, FOR_JSON_COLUMN, SqlType::NVarChar(walden_engine::types::Len::Max));
    Ok(Rows { cols: vec![col], rows: vec![vec![text.map_or(Value::Null, Value::NStr)]] })
}

/// The name of the one column `FOR XML` returns, as SQL Server names it.
const FOR_XML_COLUMN: &str = "XML_F52E2B61-18A1-11d1-B105-00805F49916B";

/// `FOR XML PATH | RAW`: the query's rows as one XML text (NULL when there are no rows). Each
/// row is an element named by `PATH` or `RAW` (none for `PATH('')`). With PATH a column is a
/// child element of its name (`a/b` nests), an attribute of the row for `@name`, and bare text
/// without a name (or for `text()` and `*`), which is how `FOR XML PATH('')` concatenates
/// strings; `comment()` and `processing-instruction(name)` make a comment or a processing
/// instruction of the text; with RAW a named column is an attribute of the row (a child element with
/// `ELEMENTS`), its name taken as it is. NULLs are left out; text is escaped, an xml value
/// (a nested `FOR XML ..., TYPE`) is taken as markup. With `TYPE` the result is an xml value.
pub(super) fn for_xml(rows: Rows, xml: &crate::ast::ForXml) -> Result<Rows, SqlError> {
    let visible = rows.visible();
    // `WITH XMLNAMESPACES`: declared on the top-level elements (the root, else each row's).
    let declarations = crate::exec::scalar::xml_methods::namespace_attributes();
    let (row_declarations, root_declarations) = match &xml.root {
        Some(_) => ("", declarations.as_str()),
        None => (declarations.as_str(), ""),
    };
    let mut out = String::new();
    for row in &rows.rows {
        let (mut attributes, mut content) = (String::new(), String::new());
        for &i in &visible {
            let value = &row[i];
            if value.is_null() {
                continue;
            }
            let text = match value {
                Value::Xml(x) => scalar::xml::text_of(x),
                other => xml_escape(&scalar::to_text(other)),
            };
            let name = rows.cols[i].name.as_str();
            let raw_attribute = xml.raw && !xml.elements && !name.is_empty();
            if raw_attribute {
                let quoted = attribute_text(value, &text);
                attributes.push_str(&format!(" {name}=\"{quoted}\""));
            } else if xml.raw && !name.is_empty() {
                content.push_str(&format!("<{name}>{text}</{name}>"));
            } else if let Some(attribute) = name.strip_prefix('@') {
                let quoted = attribute_text(value, &text);
                attributes.push_str(&format!(" {attribute}=\"{quoted}\""));
            } else if name.is_empty() || name == "*" || name == "text()" {
                content.push_str(&text);
            } else if let Some(pi) = path_node(name, "processing-instruction(") {
                // Processing instructions and comments hold their text unescaped: the query
                // keeps `?>` and `--` out of it (sp_WhoIsActive shows its SQL text this way).
                content.push_str(&format!("<?{pi} {}?>", scalar::to_text(value)));
            } else if name == "comment()" {
                content.push_str(&format!("<!--{}-->", scalar::to_text(value)));
            } else {
                let steps: Vec<&str> = name.split('/').collect();
                for s in &steps {
                    content.push_str(&format!("<{s}>"));
                }
                content.push_str(&text);
                for s in steps.iter().rev() {
                    content.push_str(&format!("</{s}>"));
                }
            }
        }
        if xml.element.is_empty() {
            out.push_str(&content);
        } else if content.is_empty() {
            out.push_str(&format!("<{}{row_declarations}{attributes}/>", xml.element));
        } else {
            out.push_str(&format!(
                "<{0}{row_declarations}{attributes}>{content}</{0}>",
                xml.element
            ));
        }
    }
    let text = match (&xml.root, rows.rows.is_empty()) {
        (_, true) => None,
        (Some(root), false) => Some(format!("<{root}{root_declarations}>{out}</{root}>")),
        (None, false) => Some(out),
    };
    let (ty, value) = match text {
        None if xml.typed => (SqlType::Xml, Value::Null),
        Some(text) if xml.typed => (SqlType::Xml, scalar::xml::typed(text)?),
        text => (
            SqlType::NVarChar(walden_engine::types::Len::Max),
            text.map_or(Value::Null, Value::NStr),
        ),
    };
    let col = Col::new(None, FOR_XML_COLUMN, ty);
    Ok(Rows { cols: vec![col], rows: vec![vec![value]] })
}

/// The element `FOR XML AUTO` names each row after: the alias or name of the query's one
/// table. Walden does not nest the rows of joined tables as SQL Server does.
pub(super) fn auto_element(body: &QueryBody) -> Result<String, SqlError> {
    let one = match body {
        QueryBody::Select(select) => match select.from.as_slice() {
            // Without an alias, the name as written: `sys.databases`.
            [TableSource::Table { name, alias, .. }] => Some(alias.as_ref().map_or_else(
                || match &name.schema {
                    Some(schema) => format!("{}.{}", schema.value, name.name.value),
                    None => name.name.value.clone(),
                },
                |a| a.value.clone(),
            )),
            [TableSource::Variable { name, alias, .. }] => {
                Some(alias.as_ref().map_or_else(|| name.clone(), |a| a.value.clone()))
            }
            _ => None,
        },
        _ => None,
    };
    one.ok_or_else(|| {
        SqlError::new(50000, "FOR XML AUTO is supported by Walden for a query over one table only.")
    })
}

/// A column's text as an attribute value: markup (an xml value) escaped like text, then `"`.
fn attribute_text(value: &Value, text: &str) -> String {
    match value {
        Value::Xml(_) => xml_escape(text).replace('"', "&quot;"),
        _ => text.replace('"', "&quot;"),
    }
}

/// The target of a `FOR XML PATH` column named `processing-instruction(target)`.
fn path_node<'n>(name: &'n str, prefix: &str) -> Option<&'n str> {
    let head = name.get(..prefix.len())?;
    let target = name[prefix.len()..].strip_suffix(')')?;
    (head.eq_ignore_ascii_case(prefix) && !target.is_empty()).then_some(target)
}

/// Text as XML content: `&`, `<` and `>` escaped.
fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
