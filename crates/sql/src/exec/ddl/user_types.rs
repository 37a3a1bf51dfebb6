//! User-defined types: `CREATE TYPE name FROM base_type [NULL | NOT NULL]` (alias types),
//! `CREATE TYPE name AS TABLE (...)` (table types, for table variables), `DROP TYPE`, and the
//! resolution of a written type name to them.
//!
//! An alias type resolves to its base type wherever a type is written (columns, variables,
//! parameters, CAST); a column of it takes the alias's nullability unless it says otherwise.
//! A column keeps only the base type, so `sys.columns` shows the system type and DROP TYPE is
//! not refused while columns were declared with it (SQL Server refuses it, 3732). A table type
//! keeps the text of its column list; `DECLARE @t name` declares a table variable from it.

use walden_engine::catalog::{Object, TypeDef};
use walden_engine::types::{DeclaredType, SqlType};

use crate::ast::{CreateType, DataType, TypeDefinition};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The user-defined type a written type names in `db`: `dbo`'s unless the name has a schema.
/// A name that is a system type's is not looked up, so that DECLAREs, parameters and
/// columns of system types (nearly all) cost no catalog lookup.
fn user_type_in(db: &walden_engine::Database, dt: &DataType) -> Option<TypeDef> {
    let unknown = matches!(scalar::data_type(dt), Err(e) if e.number == 2715);
    if !unknown || dt.name.database.is_some() || dt.name.server.is_some() {
        return None;
    }
    let schema = dt.name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
    match db.find_object(schema, &dt.name.name.value).as_deref() {
        Some(Object::Type(t)) => Some(t.clone()),
        _ => None,
    }
}

/// Msg 352: a table-valued parameter declared without READONLY.
pub(crate) fn readonly_needed(name: &str) -> SqlError {
    SqlError::new(
        352,
        format!("The table-valued parameter \"{name}\" must be declared with the READONLY option."),
    )
}

impl Run<'_> {
    /// `CREATE TYPE`: 219 if the schema has a type of that name.
    pub(crate) fn create_type(&mut self, ct: &CreateType) -> Result<(), SqlError> {
        let db = self.database_of(ct.name.database.as_ref())?;
        let schema = ct.name.schema.as_ref().map_or("dbo", |s| s.value.as_str()).to_string();
        let name = ct.name.name.value.clone();
        if db.find_object(&schema, &name).is_some_and(|o| matches!(*o, Object::Type(_))) {
            return Err(SqlError::new(
                219,
                format!("The type '{schema}.{name}' already exists, or you do not have permission to create it."),
            ));
        }
        let def = match &ct.definition {
            TypeDefinition::Alias { data_type, nullable } => TypeDef {
                id: 0,
                schema,
                name,
                // An alias of an alias is not allowed, as in SQL Server: only system types.
                base: scalar::data_type(data_type)?,
                nullable: nullable.unwrap_or(true),
                table: None,
            },
            TypeDefinition::Table(elements) => {
                // Checked now as a table variable's definition would be, so that a DECLARE
                // of the type cannot fail on it later.
                self.table_elements(&name, elements)?;
                let text = elements.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                TypeDef {
                    id: 0,
                    schema,
                    name,
                    base: SqlType::Int,
                    nullable: true,
                    table: Some(text),
                }
            }
        };
        self.tx().create_type(&db, def).map_err(|e| self.s.engine_error(e))?;
        Ok(())
    }

    /// The user-defined type a written type names in the current database, if any.
    pub(crate) fn user_type(&self, dt: &DataType) -> Option<TypeDef> {
        user_type_in(&self.s.db, dt)
    }

    /// Whether a written type names a table type of `db` (a table-valued parameter's).
    pub(crate) fn is_table_type(&self, db: &walden_engine::Database, dt: &DataType) -> bool {
        user_type_in(db, dt).is_some_and(|t| t.table.is_some())
    }

    /// The table variable an argument passes to table-valued parameter `param`: its internal
    /// table. 352 for a parameter not declared READONLY, 206 for anything but a table variable.
    pub(crate) fn table_argument(
        &self,
        arg: &crate::ast::ExecArgument,
        param: &crate::ast::ProcedureParameter,
    ) -> Result<String, SqlError> {
        if !param.readonly {
            return Err(readonly_needed(&param.name));
        }
        let internal = match &arg.value.kind {
            crate::ast::ExprKind::Variable(name) => {
                self.s.temp_tables.get(&name.to_ascii_lowercase()).cloned()
            }
            _ => None,
        };
        internal.ok_or_else(|| {
            SqlError::new(
                206,
                format!(
                    "Operand type clash: the argument is incompatible with {}",
                    param.data_type.name.name.value
                ),
            )
        })
    }

    /// 10700 for a change of a table-valued parameter of the running procedure.
    pub(crate) fn refuse_readonly_table(&mut self, name: &str) -> Result<(), SqlError> {
        let key = name.to_ascii_lowercase();
        if self.frame().hidden_tables.iter().any(|(n, _, readonly)| *readonly && *n == key) {
            return Err(SqlError::new(
                10700,
                format!(
                    "The table-valued parameter \"{name}\" is READONLY and cannot be modified."
                ),
            ));
        }
        Ok(())
    }

    /// `DECLARE @name type` of a table type: the table variable its column list declares.
    pub(crate) fn declare_of_table_type(
        &mut self,
        name: &str,
        dt: &DataType,
    ) -> Result<(), SqlError> {
        let Some(TypeDef { table: Some(text), .. }) = self.user_type(dt) else {
            return Err(SqlError::new(
                2715,
                format!("Cannot find data type {}.", dt.name.name.value),
            ));
        };
        let batch = crate::parse_batch(&format!("DECLARE {name} TABLE ({text})")).map_err(|e| {
            SqlError::new(50000, format!("table type '{}': {}", dt.name.name.value, e.message))
        })?;
        match batch.statements.first().map(|s| &s.kind) {
            Some(crate::ast::StatementKind::Declare(decls)) => match decls.first().map(|d| &d.kind)
            {
                Some(crate::ast::DeclarationKind::Table(elements)) => {
                    self.declare_table_variable(name, elements)
                }
                _ => Err(SqlError::new(50000, "a table type's definition is not a table")),
            },
            _ => Err(SqlError::new(50000, "a table type's definition is not a table")),
        }
    }

    /// A written type: a system type, else an alias type of the current database (2715 for
    /// neither, or for a table type where a scalar type is needed; 2716 for an alias written
    /// with a length).
    pub(crate) fn resolve_type(&self, dt: &DataType) -> Result<SqlType, SqlError> {
        let unknown = match scalar::data_type(dt) {
            Err(e) if e.number == 2715 => e,
            other => return other,
        };
        match self.user_type(dt) {
            Some(TypeDef { table: None, base, .. }) if dt.params.is_empty() => Ok(base),
            Some(TypeDef { table: None, name, .. }) => Err(SqlError::new(
                2716,
                format!("Cannot specify a column width on data type {name}."),
            )),
            _ => Err(unknown),
        }
    }
}

/// The SQL Server type a written type names when Walden holds it as another
/// (`smalldatetime`, `smallmoney`, `text`, `ntext`, `image`, qualified as
/// [`scalar::data_type`] allows), which [`Run::resolve_type`] resolves to the holding type.
pub(crate) fn declared_as(dt: &DataType) -> Option<DeclaredType> {
    let system =
        dt.name.schema.as_ref().is_none_or(|s| {
            s.value.eq_ignore_ascii_case("sys") || s.value.eq_ignore_ascii_case("dbo")
        });
    if !system || dt.name.database.is_some() || dt.name.server.is_some() {
        return None;
    }
    DeclaredType::of_name(&dt.name.name.value)
}
