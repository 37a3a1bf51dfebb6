//! `sp_rename`: an object, a column or an index given a new name; a renamed column's name
//! is rewritten in the text of the CHECK constraints that mention it.

use std::sync::Arc;

use walden_engine::catalog::{Object, TableDef};

use super::is_column;
use crate::ast::ExecProcedure;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;
use crate::lexer::{tokenize, TokenKind};

/// `text` with every mention of column `old` renamed to `new` (bracketed), so that a CHECK
/// constraint keeps meaning the same column after `sp_rename`. Text that does not lex is
/// returned as it is.
fn rename_in_text(text: &str, old: &str, new: &str) -> String {
    let Ok(tokens) = tokenize(text) else { return text.to_string() };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (i, t) in tokens.iter().enumerate() {
        if is_column(&tokens, i, old) {
            out.push_str(&text[at..t.span.start]);
            out.push_str(&format!("[{}]", new.replace(']', "]]")));
            at = t.span.end;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// The parts of a dotted name as `sp_rename` takes it (`dbo.t.c`, `[my table].c`); `None`
/// for text that is not such a name.
fn name_parts(text: &str) -> Option<Vec<String>> {
    let tokens = tokenize(text).ok()?;
    let mut parts = Vec::new();
    let mut want_name = true;
    for t in &tokens {
        match (&t.kind, want_name) {
            (TokenKind::Word, true) => parts.push(t.text.to_string()),
            (TokenKind::QuotedIdent(name), true) => parts.push(name.clone()),
            (TokenKind::Dot, false) => {}
            (TokenKind::Eof, false) => return Some(parts),
            _ => return None,
        }
        want_name = !want_name;
    }
    None
}

impl Run<'_> {
    /// `sp_rename 'object', 'new name' [, 'OBJECT' | 'COLUMN' | 'INDEX']`, which raises the
    /// RENAME event for the database's DDL triggers.
    pub(crate) fn sp_rename(&mut self, p: &ExecProcedure) -> crate::exec::session::Step<()> {
        let args =
            self.procedure_arguments("sp_rename", p, &["@objname", "@newname", "@objtype"])?;
        let text = |i: usize| args[i].as_ref().map(scalar::to_text);
        let missing = |param: &str| {
            SqlError::new(
                201,
                format!(
                    "Procedure or function 'sp_rename' expects parameter '{param}', which was \
                     not supplied."
                ),
            )
        };
        let objname = text(0).ok_or_else(|| missing("@objname"))?;
        let newname = text(1).ok_or_else(|| missing("@newname"))?;
        let objtype = text(2).map(|t| t.to_ascii_uppercase());
        let ambiguous = || {
            SqlError::with_severity(
                15248,
                11,
                format!(
                    "Either the parameter @objname is ambiguous or the claimed @objtype ({}) is \
                     wrong.",
                    objtype.as_deref().unwrap_or("(null)")
                ),
            )
        };
        let in_use = |kind: &str| {
            SqlError::with_severity(
                15335,
                11,
                format!(
                    "Error: The new name '{newname}' is already in use as a {kind} name and \
                     would cause a duplicate that is not permitted."
                ),
            )
        };
        let parts = name_parts(&objname).ok_or_else(ambiguous)?;
        let db = Arc::clone(&self.s.db);
        let table_of = |parts: &[String]| -> Option<Arc<TableDef>> {
            let (schema, table) = match parts {
                [table] => ("dbo", table.as_str()),
                [schema, table] => (schema.as_str(), table.as_str()),
                _ => return None,
            };
            match db.find_object(schema, table).as_deref() {
                Some(Object::Table(t)) => Some(Arc::clone(t)),
                _ => None,
            }
        };
        // What RENAME's EVENTDATA() says: ObjectType, SchemaName, ObjectName and the table of
        // a column or index.
        let renamed: (&'static str, String, String, Option<(String, &'static str)>);
        match objtype.as_deref() {
            None | Some("OBJECT") => {
                let (schema, name) = match parts.as_slice() {
                    [name] => ("dbo", name.as_str()),
                    [schema, name] => (schema.as_str(), name.as_str()),
                    _ => return Err(ambiguous().into()),
                };
                let object = db.find_object(schema, name).ok_or_else(ambiguous)?;
                if db.find_object(schema, &newname).is_some_and(|o| o.id() != object.id()) {
                    return Err(in_use("object").into());
                }
                self.tx()
                    .rename_object(&db, object.id(), &newname)
                    .map_err(|e| self.s.engine_error(e))?;
                let object_type = match *object {
                    Object::Table(_) => "TABLE",
                    Object::View(_) => "VIEW",
                    Object::Procedure(_) => "PROCEDURE",
                    Object::Function(_) => "FUNCTION",
                    Object::Trigger(_) => "TRIGGER",
                    Object::Sequence(_) => "SEQUENCE",
                    Object::Type(_) => "TYPE",
                    Object::Schema(_) | Object::Properties(_) => "OBJECT",
                };
                renamed = (object_type, schema.to_string(), name.to_string(), None);
            }
            Some("COLUMN") => {
                let (column, table) = parts.split_last().ok_or_else(ambiguous)?;
                let t = table_of(table).ok_or_else(ambiguous)?;
                let c = t.column(column).ok_or_else(ambiguous)?;
                if t.column(&newname).is_some_and(|other| other != c) {
                    return Err(in_use("COLUMN").into());
                }
                let mut new = TableDef::clone(&t);
                let old = std::mem::replace(&mut new.columns[c].name, newname.clone());
                for check in &mut new.checks {
                    check.text = rename_in_text(&check.text, &old, &newname);
                }
                self.tx().alter_table_metadata(&db, &t, new).map_err(|e| self.s.engine_error(e))?;
                renamed = ("COLUMN", t.schema.clone(), old, Some((t.name.clone(), "TABLE")));
            }
            Some("INDEX") => {
                let (index, table) = parts.split_last().ok_or_else(ambiguous)?;
                let t = table_of(table).ok_or_else(ambiguous)?;
                let at = t
                    .indexes
                    .iter()
                    .position(|i| !i.is_heap() && i.name.eq_ignore_ascii_case(index))
                    .ok_or_else(ambiguous)?;
                if t.indexes
                    .iter()
                    .enumerate()
                    .any(|(k, i)| k != at && i.name.eq_ignore_ascii_case(&newname))
                {
                    return Err(in_use("INDEX").into());
                }
                let mut new = TableDef::clone(&t);
                let old = std::mem::replace(&mut new.indexes[at].name, newname.clone());
                self.tx().alter_table_metadata(&db, &t, new).map_err(|e| self.s.engine_error(e))?;
                renamed = ("INDEX", t.schema.clone(), old, Some((t.name.clone(), "TABLE")));
            }
            Some(other) => {
                return Err(SqlError::with_severity(
                    15249,
                    11,
                    format!("Error: Explicit @objtype '{other}' is unrecognized."),
                )
                .into())
            }
        }
        self.report(SqlError::with_severity(
            15477,
            10,
            "Caution: Changing any part of an object name could break scripts and stored \
             procedures.",
        ));
        let (object_type, schema, object, target) = renamed;
        let command = crate::ast::Execute::Procedure(p.clone()).to_string();
        self.rename_event(&db, object_type, &schema, &object, target, &newname, command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_column_is_renamed_in_check_texts() {
        assert_eq!(
            rename_in_text("qty >= 0 AND [qty] < t.qty2", "qty", "n]"),
            "[n]]] >= 0 AND [n]]] < t.qty2"
        );
        assert_eq!(rename_in_text("'unterminated", "a", "b"), "'unterminated");
    }

    #[test]
    fn sp_rename_names_split_into_parts() {
        assert_eq!(name_parts("dbo.t").unwrap(), ["dbo", "t"]);
        assert_eq!(name_parts("[my table].[a.b]").unwrap(), ["my table", "a.b"]);
        assert!(name_parts("t.").is_none());
        assert!(name_parts("t..c").is_none());
        assert!(name_parts("").is_none());
    }
}
