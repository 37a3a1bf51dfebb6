//! Names and data types as written: identifiers, multi-part object names, `name(params)` types.

/// An identifier as written, without its `[...]` or `"..."` delimiters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    /// The name itself (`]]` and `""` escapes already undone).
    pub value: String,
}

impl Ident {
    /// An identifier with the given name.
    pub fn new(value: impl Into<String>) -> Self {
        Self { value: value.into() }
    }
}

/// A name of a database object with up to three prefixes: `server.database.schema.name`.
/// Omitted prefixes are `None`; `master..spt_values` has a database and no schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectName {
    /// Linked server (four-part names only).
    pub server: Option<Ident>,
    /// Database prefix.
    pub database: Option<Ident>,
    /// Schema prefix.
    pub schema: Option<Ident>,
    /// The object's own name (`#temp` and `##global` names included).
    pub name: Ident,
}

impl ObjectName {
    /// A name without prefixes.
    pub fn simple(name: Ident) -> Self {
        Self { server: None, database: None, schema: None, name }
    }
}

/// A data type as written: a (possibly schema-qualified) name and its parenthesised
/// parameters, e.g. `DECIMAL(10, 2)`, `VARCHAR(MAX)`, `sysname`. The binder resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataType {
    /// The type name; user-defined types may carry a schema.
    pub name: ObjectName,
    /// Length, precision and scale parameters, in order.
    pub params: Vec<TypeParam>,
}

/// One parameter of a data type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeParam {
    /// A number: a length, precision, scale or fractional-seconds precision.
    Number(u32),
    /// `MAX`, as in `VARCHAR(MAX)`.
    Max,
}
