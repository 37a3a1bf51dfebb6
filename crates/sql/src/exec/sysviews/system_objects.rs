//! The system views and functions as catalog objects: `OBJECT_ID('sys.dm_os_schedulers')`,
//! their rows in `sys.all_objects` / `sys.system_objects` and their columns in
//! `sys.all_columns` / `sys.system_columns`. Scripts test these before using a view a
//! version may lack (`IF EXISTS (SELECT * FROM sys.all_columns WHERE object_id =
//! OBJECT_ID('sys.dm_os_memory_clerks') AND name = 'pages_kb')`).
//!
//! Ids are negative, as SQL Server's system objects' are, and fixed by the objects' order in
//! [`super::SYSTEM_VIEWS`] and then [`super::absent`]: the same for every database and
//! session of a build, not across builds (nothing stores them).

use std::sync::OnceLock;

use walden_engine::catalog::ColumnDef;
use walden_engine::types::Value;

use super::catalog::{column_columns, ColRow};
use super::{absent, system_view, ViewContext, SYSTEM_VIEWS};
use crate::exec::{ColumnInfo, RowSet};

/// The `schema_id` of `sys`.
const SYS_SCHEMA_ID: i64 = 4;

/// The id of the first system object; the others count down from it.
const FIRST_ID: i64 = -1001;

/// A system view or function: its name and whether it takes arguments.
struct SystemObject {
    name: &'static str,
    function: bool,
}

/// Every system object, in id order.
fn system_objects() -> impl Iterator<Item = SystemObject> {
    let views = SYSTEM_VIEWS
        .iter()
        .map(|(name, params, _)| SystemObject { name, function: params.is_some() });
    let absent = absent::absent_names().map(|name| SystemObject { name, function: false });
    views.chain(absent)
}

/// `OBJECT_ID` of `sys.<name>`: the system view's or function's id, if it is one.
pub(crate) fn system_object_id(name: &str) -> Option<i32> {
    let index = system_objects().position(|o| o.name.eq_ignore_ascii_case(name))?;
    i32::try_from(FIRST_ID - index as i64).ok()
}

/// The rows of the system objects in `sys.objects`' columns (`name`, `object_id`,
/// `principal_id`, `schema_id`, `parent_object_id`, `type`, `type_desc`, `create_date`,
/// `modify_date`, `is_ms_shipped`, `is_published`, `is_schema_published`): views `V`,
/// functions `IF`, shipped with the server (`is_ms_shipped` 1), dated as master is.
pub(super) fn object_rows(created: Value) -> Vec<Vec<Value>> {
    system_objects()
        .zip(0..)
        .map(|(o, index)| {
            let (kind, desc) = if o.function {
                ("IF", "SQL_INLINE_TABLE_VALUED_FUNCTION")
            } else {
                ("V ", "VIEW")
            };
            vec![
                Value::NStr(o.name.into()),
                Value::Int(i32::try_from(FIRST_ID - index).unwrap_or(i32::MIN)),
                Value::Null,
                Value::Int(SYS_SCHEMA_ID as i32),
                Value::Int(0),
                Value::Str(kind.into()),
                Value::NStr(desc.into()),
                created.clone(),
                created.clone(),
                Value::Bit(true),
                Value::Bit(false),
                Value::Bit(false),
            ]
        })
        .collect()
}

/// The columns of each system view (functions: none), in id order. A view's columns do not
/// depend on the state it is evaluated against, so they are learned once, by evaluating each
/// view, and kept for the process.
fn view_columns(ctx: &ViewContext<'_>) -> &'static [Vec<ColumnInfo>] {
    static COLUMNS: OnceLock<Vec<Vec<ColumnInfo>>> = OnceLock::new();
    COLUMNS.get_or_init(|| {
        system_objects()
            .map(|o| match o.name {
                _ if o.function => Vec::new(),
                // These list the system columns themselves: their columns are sys.columns'
                // and sys.objects', taken without evaluating them.
                "all_columns" | "system_columns" => column_columns().rows(&[]).columns,
                "all_objects" | "system_objects" => {
                    super::catalog::object_columns().rows(&[]).columns
                }
                name => match system_view(ctx, name, &[]) {
                    Some(Ok(set)) => set.columns,
                    _ => Vec::new(),
                },
            })
            .collect()
    })
}

/// The system views' columns as `sys.columns` rows.
pub(super) fn column_rows(ctx: &ViewContext<'_>) -> RowSet {
    let mut rows = Vec::new();
    for (columns, index) in view_columns(ctx).iter().zip(0..) {
        let object_id = (FIRST_ID - index) as i32 as u32;
        for (i, c) in columns.iter().enumerate() {
            rows.push(ColRow {
                object_id,
                column_id: i + 1,
                def: ColumnDef {
                    name: c.name.clone(),
                    ty: c.ty,
                    nullable: c.nullable,
                    identity: None,
                    default: None,
                    computed: None,
                    rowversion: false,
                    collation: None,
                    declared: None,
                },
                identity_last: None,
            });
        }
    }
    column_columns().rows(&rows)
}
