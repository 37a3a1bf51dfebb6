//! `fn_my_permissions(securable, 'securable_class')`: the permissions the session holds on a
//! securable. Every Walden session is `sa`, a member of sysadmin, which holds every
//! permission on every securable; so the function lists all of the class's permissions for
//! a securable that exists, and nothing for one that does not, as SQL Server does for a
//! sysadmin.

use walden_engine::catalog::Object;
use walden_engine::types::{Len, SqlType, Value};

use crate::ast::Ident;
use crate::exec::eval::parse_object_name;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::{ColumnInfo, RowSet, SqlError};

/// The server permissions (`sys.fn_builtin_permissions('SERVER')`), held by sysadmin.
const SERVER: &[&str] = &[
    "CONNECT SQL",
    "SHUTDOWN",
    "CREATE ENDPOINT",
    "CREATE ANY DATABASE",
    "CREATE AVAILABILITY GROUP",
    "ALTER ANY LOGIN",
    "ALTER ANY CREDENTIAL",
    "ALTER ANY ENDPOINT",
    "ALTER ANY LINKED SERVER",
    "ALTER ANY CONNECTION",
    "ALTER ANY DATABASE",
    "ALTER RESOURCES",
    "ALTER SETTINGS",
    "ALTER TRACE",
    "ALTER ANY AVAILABILITY GROUP",
    "ADMINISTER BULK OPERATIONS",
    "AUTHENTICATE SERVER",
    "EXTERNAL ACCESS ASSEMBLY",
    "VIEW ANY DATABASE",
    "VIEW ANY DEFINITION",
    "VIEW SERVER STATE",
    "CREATE DDL EVENT NOTIFICATION",
    "CREATE TRACE EVENT NOTIFICATION",
    "ALTER ANY EVENT NOTIFICATION",
    "ALTER SERVER STATE",
    "UNSAFE ASSEMBLY",
    "ALTER ANY SERVER AUDIT",
    "CREATE SERVER ROLE",
    "ALTER ANY SERVER ROLE",
    "ALTER ANY EVENT SESSION",
    "CONNECT ANY DATABASE",
    "IMPERSONATE ANY LOGIN",
    "SELECT ALL USER SECURABLES",
    "CONTROL SERVER",
];

/// The database permissions (`sys.fn_builtin_permissions('DATABASE')`), held by dbo.
const DATABASE: &[&str] = &[
    "CREATE TABLE",
    "CREATE VIEW",
    "CREATE PROCEDURE",
    "CREATE FUNCTION",
    "CREATE RULE",
    "CREATE DEFAULT",
    "BACKUP DATABASE",
    "BACKUP LOG",
    "CREATE DATABASE",
    "CREATE TYPE",
    "CREATE ASSEMBLY",
    "CREATE XML SCHEMA COLLECTION",
    "CREATE SCHEMA",
    "CREATE SYNONYM",
    "CREATE AGGREGATE",
    "CREATE ROLE",
    "CREATE MESSAGE TYPE",
    "CREATE SERVICE",
    "CREATE CONTRACT",
    "CREATE REMOTE SERVICE BINDING",
    "CREATE ROUTE",
    "CREATE QUEUE",
    "CREATE SYMMETRIC KEY",
    "CREATE ASYMMETRIC KEY",
    "CREATE FULLTEXT CATALOG",
    "CREATE CERTIFICATE",
    "CREATE DATABASE DDL EVENT NOTIFICATION",
    "CONNECT",
    "CONNECT REPLICATION",
    "CHECKPOINT",
    "SUBSCRIBE QUERY NOTIFICATIONS",
    "AUTHENTICATE",
    "SHOWPLAN",
    "ALTER ANY USER",
    "ALTER ANY ROLE",
    "ALTER ANY APPLICATION ROLE",
    "ALTER ANY SCHEMA",
    "ALTER ANY ASSEMBLY",
    "ALTER ANY DATASPACE",
    "ALTER ANY MESSAGE TYPE",
    "ALTER ANY CONTRACT",
    "ALTER ANY SERVICE",
    "ALTER ANY REMOTE SERVICE BINDING",
    "ALTER ANY ROUTE",
    "ALTER ANY FULLTEXT CATALOG",
    "ALTER ANY SYMMETRIC KEY",
    "ALTER ANY ASYMMETRIC KEY",
    "ALTER ANY CERTIFICATE",
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "REFERENCES",
    "EXECUTE",
    "ALTER ANY DATABASE DDL TRIGGER",
    "ALTER ANY DATABASE EVENT NOTIFICATION",
    "ALTER ANY DATABASE AUDIT",
    "VIEW DATABASE STATE",
    "VIEW DEFINITION",
    "TAKE OWNERSHIP",
    "ALTER",
    "CONTROL",
];

/// The permissions on a schema.
const SCHEMA: &[&str] = &[
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "REFERENCES",
    "EXECUTE",
    "CREATE SEQUENCE",
    "VIEW CHANGE TRACKING",
    "VIEW DEFINITION",
    "ALTER",
    "TAKE OWNERSHIP",
    "CONTROL",
];

/// The permissions on a table or view; SELECT, UPDATE and REFERENCES are also listed per
/// column.
const TABLE: &[&str] = &[
    "SELECT",
    "UPDATE",
    "REFERENCES",
    "INSERT",
    "DELETE",
    "VIEW CHANGE TRACKING",
    "VIEW DEFINITION",
    "ALTER",
    "TAKE OWNERSHIP",
    "CONTROL",
];

/// The permissions on a table's or view's column.
const COLUMN: &[&str] = &["SELECT", "UPDATE", "REFERENCES"];

/// The permissions on a procedure, function or other object that is not a table.
const MODULE: &[&str] = &["EXECUTE", "VIEW DEFINITION", "ALTER", "TAKE OWNERSHIP", "CONTROL"];

impl Run<'_> {
    /// `fn_my_permissions(securable, class)`: (entity_name, subentity_name,
    /// permission_name) rows. A NULL class is the server's; a NULL securable of class
    /// DATABASE is the current database; a class other than SERVER, DATABASE, SCHEMA and
    /// OBJECT lists nothing.
    pub(crate) fn my_permissions(&mut self, args: &[Value]) -> Result<RowSet, SqlError> {
        const NAME: &str = "fn_my_permissions";
        if args.len() < 2 {
            return Err(SqlError::new(
                313,
                format!(
                    "An insufficient number of arguments were supplied for the procedure or \
                     function {NAME}."
                ),
            ));
        }
        if args.len() > 2 {
            return Err(SqlError::new(
                8144,
                format!("Procedure or function {NAME} has too many arguments specified."),
            ));
        }
        let text = |v: &Value| (!v.is_null()).then(|| scalar::to_text(v).trim().to_string());
        let securable = text(&args[0]);
        let class = text(&args[1]).unwrap_or_else(|| "SERVER".into()).to_ascii_uppercase();
        let mut rows: Vec<(String, String, &str)> = Vec::new();
        let all = |rows: &mut Vec<(String, String, &str)>, entity: &str, list: &[&'static str]| {
            rows.extend(list.iter().map(|p| (entity.to_string(), String::new(), *p)));
        };
        match class.as_str() {
            "SERVER" => all(&mut rows, "server", SERVER),
            "DATABASE" => {
                let ident = securable.as_deref().map(Ident::new);
                if self.database_of(ident.as_ref()).is_ok() {
                    all(&mut rows, "database", DATABASE);
                }
            }
            "SCHEMA" => {
                let name = securable.unwrap_or_else(|| "dbo".into());
                let exists = crate::exec::sysviews::schema_ids(&self.s.db)
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case(&name));
                if exists {
                    all(&mut rows, &name, SCHEMA);
                }
            }
            "OBJECT" => {
                if let Some(found) = securable.as_deref().and_then(|s| self.securable_object(s)) {
                    let (entity, columns, list) = found;
                    all(&mut rows, &entity, list);
                    for column in columns {
                        for p in COLUMN {
                            rows.push((entity.clone(), column.clone(), p));
                        }
                    }
                }
            }
            _ => {}
        }
        let column = |name: &str| ColumnInfo {
            name: name.into(),
            ty: SqlType::NVarChar(Len::N(128)),
            nullable: true,
            collation: None,
            declared: None,
        };
        Ok(RowSet {
            columns: vec![
                column("entity_name"),
                column("subentity_name"),
                column("permission_name"),
            ],
            rows: rows
                .into_iter()
                .map(|(e, s, p)| vec![Value::NStr(e), Value::NStr(s), Value::NStr(p.into())])
                .collect(),
        })
    }

    /// The object `text` names (`[db.][schema.]name`, schema `dbo` by default): its name as
    /// fn_my_permissions shows it (the text given), its columns if it is a table or view, and
    /// the permissions of its kind. `None` if there is no such object.
    fn securable_object(
        &mut self,
        text: &str,
    ) -> Option<(String, Vec<String>, &'static [&'static str])> {
        let name = parse_object_name(text)?;
        let db = self.database_of(name.database.as_ref()).ok()?;
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let object = db.find_object(schema, &name.name.value)?;
        Some(match &*object {
            Object::Table(t) => {
                (text.to_string(), t.columns.iter().map(|c| c.name.clone()).collect(), TABLE)
            }
            Object::View(_) => (text.to_string(), Vec::new(), TABLE),
            Object::Procedure(_) | Object::Function(_) | Object::Sequence(_) | Object::Type(_) => {
                (text.to_string(), Vec::new(), MODULE)
            }
            _ => return None,
        })
    }
}
