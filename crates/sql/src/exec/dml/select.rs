//! SELECT as a statement: its rows sent to the client, assigned to variables, or stored in a
//! new table (`SELECT ... INTO`, whose list may declare an `IDENTITY(...)` column).

use std::collections::HashSet;
use std::sync::Arc;

use walden_engine::catalog::ColumnDef;
use walden_engine::types::{SqlType, Value};

use crate::ast::{ExprKind, ObjectName, QueryBody, Select, SelectItem, SelectStatement};
use crate::exec::execute::query::Rows;
use crate::exec::scalar;
use crate::exec::session::{Run, Step};
use crate::exec::{ColumnInfo, Counted, SqlError};

/// `IDENTITY(type, seed, increment) AS name` in a SELECT ... INTO's list.
pub(crate) struct IdentityItem {
    position: usize,
    name: String,
    ty: SqlType,
    seed: i64,
    increment: i64,
}

/// The `IDENTITY(...)` item of a SELECT ... INTO's list, if it has one (one at most: 2744).
fn identity_item(sel: &Select) -> Result<Option<IdentityItem>, SqlError> {
    let mut found = None;
    for (position, item) in sel.items.iter().enumerate() {
        let SelectItem::Expr { expr, alias } = item else { continue };
        let ExprKind::Function(f) = &expr.kind else { continue };
        if f.name.schema.is_some() || !f.name.name.value.eq_ignore_ascii_case("IDENTITY") {
            continue;
        }
        if found.is_some() {
            return Err(SqlError::new(
                2744,
                "Multiple identity columns specified for table. Only one identity column per table is allowed.",
            ));
        }
        let crate::ast::FunctionArgs::List { args, .. } = &f.args else {
            return Err(SqlError::with_severity(102, 15, "Incorrect syntax near 'IDENTITY'."));
        };
        let type_name = match args.first().map(|a| &a.kind) {
            Some(ExprKind::Column(parts)) => parts.last().map(|p| p.value.clone()),
            _ => None,
        };
        let Some(type_name) = type_name else {
            return Err(SqlError::with_severity(102, 15, "Incorrect syntax near 'IDENTITY'."));
        };
        let data_type = crate::ast::DataType {
            name: ObjectName::simple(crate::ast::Ident::new(type_name)),
            params: Vec::new(),
        };
        let ty = scalar::data_type(&data_type)?;
        let number = |i: usize, default: i64| -> Result<i64, SqlError> {
            match args.get(i).map(|a| &a.kind) {
                None => Ok(default),
                Some(ExprKind::Literal(l)) => {
                    match scalar::convert(scalar::literal(l)?, SqlType::BigInt, None)? {
                        Value::BigInt(n) => Ok(n),
                        _ => Ok(default),
                    }
                }
                Some(ExprKind::Unary { op: crate::ast::UnaryOp::Minus, operand }) => match &operand
                    .kind
                {
                    ExprKind::Literal(l) => {
                        match scalar::convert(scalar::literal(l)?, SqlType::BigInt, None)? {
                            Value::BigInt(n) => Ok(-n),
                            _ => Ok(default),
                        }
                    }
                    _ => Err(SqlError::with_severity(102, 15, "Incorrect syntax near 'IDENTITY'.")),
                },
                Some(_) => {
                    Err(SqlError::with_severity(102, 15, "Incorrect syntax near 'IDENTITY'."))
                }
            }
        };
        let (seed, increment) = (number(1, 1)?, number(2, 1)?);
        let Some(alias) = alias else {
            return Err(SqlError::new(
                1038,
                "An object or column name is missing or empty. For SELECT INTO statements, verify each column has a name. For other statements, look for empty alias names. Aliases defined as \"\" or [] are not allowed. Change the alias to a valid name.",
            ));
        };
        found = Some(IdentityItem { position, name: alias.value.clone(), ty, seed, increment });
    }
    Ok(found)
}

/// The first SELECT of a query body: where `INTO` is written.
fn first_select(body: &QueryBody) -> Option<&Select> {
    match body {
        QueryBody::Select(s) => Some(s),
        QueryBody::SetOperation { left, .. } => first_select(left),
        QueryBody::Parenthesized(q) => first_select(&q.body),
    }
}

impl Run<'_> {
    /// A SELECT statement: sends its rows to the client, or stores them (INTO), or assigns
    /// variables.
    pub(crate) fn select_statement(&mut self, s: &SelectStatement) -> Step<()> {
        let first = first_select(&s.query.body);
        let into = first.and_then(|sel| sel.into.clone());
        let assigns = first
            .is_some_and(|sel| sel.items.iter().any(|i| matches!(i, SelectItem::Assign { .. })));
        // FMTONLY describes a result set without making one: no assignment, no new table.
        if self.s.opts.fmtonly && (assigns || into.is_some()) {
            return Ok(());
        }
        // SELECT IDENTITY(type, seed, increment) AS c, ... INTO: the column is left out of the
        // query and numbers the new table's rows instead.
        let identity = match (&into, first) {
            (Some(_), Some(sel)) => identity_item(sel)?,
            _ => None,
        };
        // Rows for the client go to it as they are read where the query allows (see
        // `join::stream`), so that a large result never sits in memory.
        if into.is_none() && !assigns && !self.s.opts.fmtonly {
            if let Some(n) = self.stream_select(&s.query, self.rowcount_limit())? {
                self.done(Counted::Select, n);
                return Ok(());
            }
        }
        let mut rows = match &identity {
            Some(item) => {
                let mut query = s.query.clone();
                if let QueryBody::Select(sel) = &mut query.body {
                    sel.items.remove(item.position);
                }
                self.query(&query, None)?
            }
            None => self.query(&s.query, None)?,
        };
        rows.rows.truncate(self.rowcount_limit());
        if self.s.opts.fmtonly {
            rows.rows.clear();
        }
        if assigns {
            // SQL Server counts an assignment's rows as a SELECT's: its DONE carries the
            // count (a client reads it as a result without columns), NOCOUNT aside.
            self.done(Counted::Select, rows.rows.len() as u64);
            return Ok(());
        }
        if let Some(into) = into {
            let n = self.select_into(&into, rows, identity)?;
            self.done(Counted::SelectInto, n);
            return Ok(());
        }
        let visible = rows.visible();
        let cols: Vec<ColumnInfo> = visible
            .iter()
            .map(|&i| &rows.cols[i])
            .map(crate::exec::execute::query::column_info)
            .collect();
        self.out.result_set(&cols);
        let n = rows.rows.len() as u64;
        let all_visible = visible.len() == rows.cols.len();
        for r in &rows.rows {
            if all_visible {
                self.out.row(r);
            } else {
                let v: Vec<Value> = visible.iter().map(|&i| r[i].clone()).collect();
                self.out.row(&v);
            }
        }
        self.out.result_end(n);
        self.done(Counted::Select, n);
        Ok(())
    }

    /// SELECT ... INTO: a new heap with the query's columns, filled with its rows; with an
    /// `identity` item, an identity column at its place numbers them in their order.
    fn select_into(
        &mut self,
        name: &ObjectName,
        rows: Rows,
        identity: Option<IdentityItem>,
    ) -> Result<u64, SqlError> {
        let mut columns = Vec::new();
        let mut seen = HashSet::new();
        for c in rows.cols.iter().filter(|c| !c.hidden) {
            if c.name.is_empty() {
                return Err(SqlError::new(
                    1038,
                    "An object or column name is missing or empty. For SELECT INTO statements, verify each column has a name. For other statements, look for empty alias names. Aliases defined as \"\" or [] are not allowed. Change the alias to a valid name.",
                ));
            }
            if !seen.insert(c.name.to_ascii_lowercase()) {
                return Err(SqlError::new(
                    2705,
                    format!("Column names in each table must be unique. Column name '{}' in table '{}' is specified more than once.", c.name, name.name.value),
                ));
            }
            columns.push(ColumnDef {
                name: c.name.clone(),
                ty: c.ty,
                nullable: c.nullable,
                identity: None,
                default: None,
                computed: None,
                rowversion: false,
                collation: crate::exec::scalar::collation::stored(c.collation, c.ty),
                declared: c.declared,
            });
        }
        if let Some(item) = &identity {
            if columns.iter().any(|c| c.name.eq_ignore_ascii_case(&item.name)) {
                return Err(SqlError::new(
                    2705,
                    format!("Column names in each table must be unique. Column name '{}' in table '{}' is specified more than once.", item.name, name.name.value),
                ));
            }
            let at = item.position.min(columns.len());
            columns.insert(
                at,
                ColumnDef {
                    name: item.name.clone(),
                    ty: item.ty,
                    nullable: false,
                    identity: Some((item.seed, item.increment)),
                    default: None,
                    computed: None,
                    rowversion: false,
                    collation: None,
                    declared: None,
                },
            );
        }
        let t = self.create_table_def(name, columns, Vec::new(), &[])?;
        let visible = rows.visible();
        let mut n = 0u64;
        for r in rows.rows {
            let mut values: Vec<Value> = visible.iter().map(|&i| r[i].clone()).collect();
            if let Some(item) = &identity {
                // NULL: the insert hands out the next identity value.
                values.insert(item.position.min(values.len()), Value::Null);
            }
            for (v, c) in values.iter_mut().zip(&t.def.columns) {
                let x = std::mem::replace(v, Value::Null);
                *v = scalar::coerce(x, c.ty, true)?;
            }
            let db = Arc::clone(&t.db);
            self.tx().insert_row(&db, &t.def, &mut values).map_err(|e| self.s.engine_error(e))?;
            n += 1;
        }
        Ok(n)
    }
}
