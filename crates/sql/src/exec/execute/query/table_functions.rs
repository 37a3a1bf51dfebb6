//! Table-valued built-in functions in `FROM`: `OPENJSON` (with and without a `WITH` schema),
//! `STRING_SPLIT` and `GENERATE_SERIES`. Each makes the rows of a source from its arguments'
//! values; `source` (in `from`) evaluates the arguments and calls them.

use walden_engine::types::{SqlType, Value};

use crate::exec::eval::Col;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::{RowSet, SqlError};

use super::Rows;

/// `OPENJSON(text [, path]) WITH (...)`: one row per element of the array at `path` (or for
/// the object there), each column the value at its own path in the element, converted to its
/// type (`AS JSON`: the object or array there, as text).
pub(super) fn openjson_with(
    args: &[Value],
    schema: &[crate::ast::JsonColumn],
    qual: &str,
) -> Result<Rows, SqlError> {
    if args.is_empty() || args.len() > 2 {
        return Err(SqlError::new(
            313,
            "An insufficient number of arguments were supplied for the procedure or function OPENJSON.",
        ));
    }
    let mut cols = Vec::with_capacity(schema.len());
    let mut paths = Vec::with_capacity(schema.len());
    for c in schema {
        let ty = scalar::data_type(&c.data_type)?;
        if c.as_json && ty != SqlType::NVarChar(walden_engine::types::Len::Max) {
            return Err(SqlError::new(
                13618,
                format!("AS JSON option can be specified only for column of nvarchar(max) type in WITH clause. ('{}')", c.name.value),
            ));
        }
        cols.push(Col::new(Some(qual), &c.name.value, ty));
        paths
            .push((c.path.clone().unwrap_or_else(|| format!("$.\"{}\"", c.name.value)), c.as_json));
    }
    let texts = scalar::openjson_with_rows(&args[0], args.get(1), &paths)?;
    let mut rows = Vec::with_capacity(texts.len());
    for t in texts {
        let mut row = Vec::with_capacity(cols.len());
        for (value, col) in t.into_iter().zip(&cols) {
            row.push(match value {
                None => Value::Null,
                Some(text) => scalar::convert(Value::NStr(text), col.ty, None)?,
            });
        }
        rows.push(row);
    }
    Ok(Rows { cols, rows })
}

/// `OPENJSON(text [, path])` (without a `WITH` schema): `key`, `value` and `type` of each
/// member of the object or element of the array at `path`.
pub(super) fn openjson(args: &[Value]) -> Result<RowSet, SqlError> {
    if args.is_empty() || args.len() > 2 {
        return Err(SqlError::new(
            313,
            "An insufficient number of arguments were supplied for the procedure or function OPENJSON.",
        ));
    }
    let rows = scalar::openjson_rows(&args[0], args.get(1))?;
    let columns = vec![
        crate::exec::ColumnInfo {
            name: "key".into(),
            ty: SqlType::NVarChar(walden_engine::types::Len::N(4000)),
            nullable: true,
            collation: None,
            declared: None,
        },
        crate::exec::ColumnInfo::new("value", SqlType::NVarChar(walden_engine::types::Len::Max)),
        crate::exec::ColumnInfo {
            name: "type".into(),
            ty: SqlType::TinyInt,
            nullable: true,
            collation: None,
            declared: None,
        },
    ];
    Ok(RowSet { columns, rows })
}

/// `STRING_SPLIT(string, separator [, enable_ordinal])`: the pieces of `string` between
/// occurrences of the one-character `separator`, as column `value` of the string's type,
/// with column `ordinal` (BIGINT, from 1) when `enable_ordinal` is 1.
pub(super) fn string_split(args: &[Value]) -> Result<RowSet, SqlError> {
    if args.len() < 2 || args.len() > 3 {
        return Err(SqlError::new(
            313,
            "An insufficient number of arguments were supplied for the procedure or function STRING_SPLIT.",
        ));
    }
    let ordinal = match args.get(2) {
        None => false,
        Some(v) => match scalar::convert(v.clone(), SqlType::Int, None)? {
            Value::Int(0) => false,
            Value::Int(1) => true,
            _ => return Err(SqlError::new(
                8748,
                "The enable_ordinal argument for STRING_SPLIT only accepts constant values 0 or 1.",
            )),
        },
    };
    let separator = scalar::to_text(&args[1]);
    let mut separators = separator.chars();
    let (Some(sep), None) = (separators.next(), separators.next()) else {
        return Err(SqlError::new(
            214,
            "Procedure expects parameter 'separator' of type 'nchar(1)/nvarchar(1)'.",
        ));
    };
    let national = matches!(args[0], Value::NStr(_));
    let max = walden_engine::types::Len::Max;
    let ty = if national { SqlType::NVarChar(max) } else { SqlType::VarChar(max) };
    let mut columns = vec![crate::exec::ColumnInfo::new("value", ty)];
    if ordinal {
        columns.push(crate::exec::ColumnInfo {
            name: "ordinal".into(),
            ty: SqlType::BigInt,
            nullable: false,
            collation: None,
            declared: None,
        });
    }
    let rows = if args[0].is_null() {
        Vec::new()
    } else {
        let text = scalar::to_text(&args[0]);
        text.split(sep)
            .enumerate()
            .map(|(i, piece)| {
                let value =
                    if national { Value::NStr(piece.into()) } else { Value::Str(piece.into()) };
                if ordinal {
                    vec![value, Value::BigInt(i as i64 + 1)]
                } else {
                    vec![value]
                }
            })
            .collect()
    };
    Ok(RowSet { columns, rows })
}

impl Run<'_> {
    /// GENERATE_SERIES(start, stop[, step]): column `value` of the arguments' type. Asks for a
    /// cancel as it goes: a series can be made as long as memory allows.
    pub(super) fn generate_series(&self, args: &[Value]) -> Result<RowSet, SqlError> {
        if args.len() < 2 || args.len() > 3 {
            return Err(SqlError::new(
            313,
            "An insufficient number of arguments were supplied for the procedure or function GENERATE_SERIES.",
        ));
        }
        if args.iter().any(Value::is_null) {
            return Ok(RowSet {
                columns: vec![crate::exec::ColumnInfo::new("value", SqlType::Int)],
                rows: Vec::new(),
            });
        }
        let big = args.iter().any(|v| matches!(v, Value::BigInt(_)));
        let ty = if big { SqlType::BigInt } else { SqlType::Int };
        let num = |v: &Value| -> Result<i64, SqlError> {
            match scalar::convert(v.clone(), SqlType::BigInt, None)? {
                Value::BigInt(i) => Ok(i),
                _ => Ok(0),
            }
        };
        let start = num(&args[0])?;
        let stop = num(&args[1])?;
        let step = match args.get(2) {
            Some(s) => num(s)?,
            None => {
                if start <= stop {
                    1
                } else {
                    -1
                }
            }
        };
        if step == 0 {
            return Err(SqlError::new(
                4199,
                "Argument value 0 is invalid for argument 3 of generate_series function.",
            ));
        }
        let mut rows = Vec::new();
        let mut v = start;
        while (step > 0 && v <= stop) || (step < 0 && v >= stop) {
            self.row_interruption_point(rows.len())?;
            rows.push(vec![if big { Value::BigInt(v) } else { Value::Int(v as i32) }]);
            match v.checked_add(step) {
                Some(n) => v = n,
                None => break,
            }
        }
        Ok(RowSet {
            columns: vec![crate::exec::ColumnInfo {
                name: "value".to_string(),
                ty,
                nullable: false,
                collation: None,
                declared: None,
            }],
            rows,
        })
    }
}
