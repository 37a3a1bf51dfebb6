//! `ALTER TABLE`.

use super::{DataType, Expr, Ident, ObjectName, TableElement};

/// `ALTER TABLE name action`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterTable {
    /// The table.
    pub table: ObjectName,
    /// What changes.
    pub action: AlterTableAction,
}

/// The change `ALTER TABLE` makes.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTableAction {
    /// `[WITH CHECK | WITH NOCHECK] ADD item, ...`.
    Add {
        /// `WITH NOCHECK`: new CHECK constraints are not checked against the existing rows
        /// (`WITH CHECK`, the default, checks them).
        nocheck: bool,
        /// Columns and constraints.
        items: Vec<AlterAdd>,
    },
    /// `ALTER COLUMN name type [COLLATE name] [NULL | NOT NULL]`.
    AlterColumn {
        /// The column.
        column: Ident,
        /// Its new type.
        data_type: DataType,
        /// `COLLATE name`, accepted and ignored as in `CREATE TABLE`.
        collation: Option<Ident>,
        /// `NULL` (`Some(true)`), `NOT NULL` (`Some(false)`), or neither.
        nullable: Option<bool>,
    },
    /// `DROP [COLUMN | CONSTRAINT] [IF EXISTS] name, ...`.
    Drop(Vec<AlterDrop>),
    /// `[WITH CHECK | WITH NOCHECK] {CHECK | NOCHECK} CONSTRAINT {ALL | name, ...}`.
    CheckConstraints {
        /// `WITH CHECK`: enabled constraints are checked against the existing rows.
        with_check: bool,
        /// `CHECK` (enable) or `NOCHECK` (disable).
        enable: bool,
        /// The constraints; `None`: `ALL`.
        names: Option<Vec<Ident>>,
    },
}

/// One item of `ALTER TABLE ... ADD`.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterAdd {
    /// A column or table constraint, as in `CREATE TABLE`.
    Element {
        /// The column or constraint.
        element: TableElement,
        /// `WITH VALUES` after a column's DEFAULT: existing rows get the default even when
        /// the column is nullable.
        with_values: bool,
    },
    /// `[CONSTRAINT name] DEFAULT expression FOR column [WITH VALUES]`.
    DefaultFor {
        /// `CONSTRAINT name`.
        name: Option<Ident>,
        /// The default.
        value: Expr,
        /// The column.
        column: Ident,
        /// `WITH VALUES`.
        with_values: bool,
    },
}

/// One item of `ALTER TABLE ... DROP`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterDrop {
    /// A column (`COLUMN`), or a constraint (`CONSTRAINT`, or no keyword): a keyword holds
    /// for the items after it until the next keyword, as in SQL Server.
    pub column: bool,
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The column or constraint.
    pub name: Ident,
}
