//! The fetch buffer: `sp_cursorfetch` fills it with a block of the cursor's rows, and
//! `sp_cursor` changes the table through its rows (see "The fetch buffer" in the parent
//! module).

use std::io::Write;

use walden_engine::types::Value;
use walden_sql::exec::{Counted, DynamicMove, Output, Session};
use walden_tds::{RpcParam, TdsValue};

use super::super::code_page::CodePage;
use super::super::convert::{from_wire_typed, literal, sql_type};
use super::super::output::TdsOutput;
use super::super::rpc::RpcError;
use super::{
    error, invalid, quote, send_metadata, ApiCursor, ApiCursors, CursorShape, CursorWork, Outcome,
    Params, RunWork, DYNAMIC, FAST_FORWARD, FORWARD_ONLY, READ_ONLY,
};

/// `sp_cursorfetch` fetch types.
const FETCH_FIRST: i32 = 0x1;
const FETCH_NEXT: i32 = 0x2;
const FETCH_PREV: i32 = 0x4;
const FETCH_LAST: i32 = 0x8;
const FETCH_ABSOLUTE: i32 = 0x10;
const FETCH_RELATIVE: i32 = 0x20;
const FETCH_REFRESH: i32 = 0x80;
const FETCH_INFO: i32 = 0x100;
const FETCH_PREV_NOADJUST: i32 = 0x200;
/// A flag of the fetch type that only skips a concurrency check Walden does not make.
const FETCH_SKIP_UPDT_CNCY: i32 = 0x400;
/// Rows a fetch returns when `nrows` is not given, as SQL Server documents.
const DEFAULT_FETCH_ROWS: usize = 20;

/// `sp_cursor` operations.
const OP_UPDATE: i32 = 0x1;
const OP_DELETE: i32 = 0x2;
const OP_INSERT: i32 = 0x4;
const OP_REFRESH: i32 = 0x8;
const OP_LOCK: i32 = 0x10;
const OP_SETPOSITION: i32 = 0x20;
const OP_ABSOLUTE: i32 = 0x40;

/// ROWSTAT of a fetched row, and of one deleted since the cursor opened.
const ROWSTAT_FETCHED: i32 = 1;
const ROWSTAT_MISSING: i32 = 2;

/// Where a fetch puts the fetch buffer of a cursor of `rows` rows: its first row (0 before
/// the first, `rows + 1` after the last) and whether SQL Server's adjustment to the first
/// block happened (a move before the first row that returns the first block instead,
/// reported with return status 2).
fn fetch_start(
    fetch: i32,
    rownum: i64,
    nrows: usize,
    rows: usize,
    buffer_start: usize,
    buffer_len: usize,
) -> (i64, bool) {
    let start = i64::try_from(buffer_start).unwrap_or(i64::MAX);
    let len = i64::try_from(buffer_len).unwrap_or(i64::MAX);
    let n = i64::try_from(nrows).unwrap_or(i64::MAX);
    let total = i64::try_from(rows).unwrap_or(i64::MAX);
    let before_first = |s: i64| if s < 1 { (1, true) } else { (s, false) };
    match fetch {
        FETCH_FIRST => (1, false),
        FETCH_NEXT if start == 0 => (1, false),
        FETCH_NEXT => (start.saturating_add(len), false),
        FETCH_PREV if start <= 1 => (0, false),
        FETCH_PREV => before_first(start - n),
        FETCH_PREV_NOADJUST if start <= 1 => (0, false),
        FETCH_PREV_NOADJUST => (start.saturating_sub(n).max(1), false),
        FETCH_LAST => ((total - n + 1).max(1), false),
        FETCH_ABSOLUTE if rownum == 0 => (0, false),
        FETCH_ABSOLUTE if rownum > 0 => (rownum, false),
        FETCH_ABSOLUTE => before_first(total.saturating_add(rownum).saturating_add(1)),
        FETCH_RELATIVE => {
            let target = start.saturating_add(rownum);
            if target == 0 {
                (0, false)
            } else {
                before_first(target)
            }
        }
        // FETCH_REFRESH: the same block again.
        _ => (start, false),
    }
}

/// `sp_cursorfetch cursor [, fetchtype [, rownum [OUTPUT] [, nrows [OUTPUT]]]]`.
pub(super) fn fetch_call<W: Write>(
    cursors: &mut ApiCursors,
    session: &mut Session,
    params: &[RpcParam],
    no_metadata: bool,
    out: &mut TdsOutput<W>,
) -> Result<Outcome, RpcError> {
    const PROC: &str = "sp_cursorfetch";
    let p = Params::new(PROC, params);
    let handle = p.required_int(0, "cursor")?;
    let fetch = p.int(1, "fetchtype")?.unwrap_or(FETCH_NEXT) & !FETCH_SKIP_UPDT_CNCY;
    let rownum = p.int(2, "rownum")?.unwrap_or(1);
    let nrows = match p.int(3, "nrows")? {
        None => DEFAULT_FETCH_ROWS,
        Some(n) => usize::try_from(n).map_err(|_| p.invalid("nrows"))?,
    };
    let cursor = cursors.cursor(handle)?;
    let known = [
        FETCH_FIRST,
        FETCH_NEXT,
        FETCH_PREV,
        FETCH_LAST,
        FETCH_ABSOLUTE,
        FETCH_RELATIVE,
        FETCH_REFRESH,
        FETCH_INFO,
        FETCH_PREV_NOADJUST,
    ];
    if !known.contains(&fetch) {
        return Err(p.invalid("fetchtype"));
    }
    if fetch == FETCH_INFO {
        // The position (the fetch buffer's first row) and the cursor's rows, through the
        // rownum and nrows parameters.
        let mut outcome = Outcome::default();
        let position = i32::try_from(cursor.buffer_start).unwrap_or(i32::MAX);
        outcome.output(params, 2, position);
        outcome.output(params, 3, super::row_count(cursor.scrollopt, &cursor.shape));
        return Ok(outcome);
    }
    let forward_only = cursor.scrollopt & (FORWARD_ONLY | FAST_FORWARD) != 0;
    if forward_only && !matches!(fetch, FETCH_NEXT | FETCH_REFRESH) {
        return Err(error(
            16911,
            format!(
                "{PROC}: The fetch type {} cannot be used with forward only cursors.",
                fetch_name(fetch)
            ),
        ));
    }
    let (block, adjusted) = if cursor.scrollopt & DYNAMIC != 0 {
        let (block, adjusted) =
            dynamic_block(session, &cursor.name, fetch, rownum, nrows, cursor.buffer_len)?;
        // A dynamic cursor's buffer is its window, whose rows are 1..=len (see
        // `DynamicMove`).
        cursor.buffer_start = usize::from(!block.is_empty());
        cursor.buffer_len = block.len();
        (block, adjusted)
    } else {
        keyset_block(session, cursor, fetch, rownum, nrows)?
    };
    send_metadata(out, &cursor.shape, !no_metadata);
    let width = cursor.shape.columns.len();
    let mut row = Vec::with_capacity(width + 1);
    for values in &block {
        row.clear();
        match values {
            Some(values) => {
                row.extend(values.iter().cloned());
                row.push(Value::Int(ROWSTAT_FETCHED));
            }
            None => {
                row.resize(width, Value::Null);
                row.push(Value::Int(ROWSTAT_MISSING));
            }
        }
        out.row(&row);
    }
    let n = u64::try_from(block.len()).unwrap_or(u64::MAX);
    out.result_end(n);
    out.done_counted(Counted::Select, Some(n));
    out.statement_end();
    Ok(Outcome { status: if adjusted { 2 } else { 0 }, returned: Vec::new() })
}

/// A block of rows, each as it is now (`None`: deleted since the cursor opened).
type Block = Vec<Option<Vec<Value>>>;

/// The block a fetch of a static or keyset `cursor` returns, and whether SQL Server's
/// adjustment to the first block happened (see [`fetch_start`]); the fetch buffer becomes it.
fn keyset_block(
    session: &mut Session,
    cursor: &mut ApiCursor,
    fetch: i32,
    rownum: i32,
    nrows: usize,
) -> Result<(Block, bool), RpcError> {
    let rows = cursor.shape.rows;
    let (start, adjusted) =
        fetch_start(fetch, i64::from(rownum), nrows, rows, cursor.buffer_start, cursor.buffer_len);
    let wanted = if fetch == FETCH_REFRESH {
        cursor.buffer_len
    } else if fetch == FETCH_PREV_NOADJUST {
        usize::try_from(i64::try_from(cursor.buffer_start).unwrap_or(0) - start)
            .unwrap_or(0)
            .min(nrows)
    } else {
        nrows
    };
    let (buffer_start, block) = if start < 1 {
        (0, Vec::new())
    } else {
        let first = usize::try_from(start).unwrap_or(usize::MAX);
        if first > rows {
            (rows + 1, Vec::new())
        } else {
            (first, session.cursor_block(&cursor.name, first, wanted)?)
        }
    };
    cursor.buffer_start = buffer_start;
    cursor.buffer_len = block.len();
    Ok((block, adjusted))
}

/// The block a fetch of the dynamic cursor `name` (whose fetch buffer holds `buffer_len`
/// rows) returns, and whether SQL Server's adjustment to the first block happened: a PREV
/// that finds fewer rows than asked for returns the first block instead, as for a keyset
/// cursor. ABSOLUTE is error 16925, as in SQL Server: a dynamic cursor's rows have no fixed
/// numbers.
fn dynamic_block(
    session: &mut Session,
    name: &str,
    fetch: i32,
    rownum: i32,
    nrows: usize,
    buffer_len: usize,
) -> Result<(Block, bool), RpcError> {
    let how = match fetch {
        FETCH_FIRST => DynamicMove::First,
        FETCH_NEXT => DynamicMove::Next,
        FETCH_PREV | FETCH_PREV_NOADJUST => DynamicMove::Prior,
        FETCH_LAST => DynamicMove::Last,
        FETCH_RELATIVE => DynamicMove::Relative(i64::from(rownum)),
        FETCH_ABSOLUTE => {
            return Err(error(
                16925,
                "The fetch type absolute cannot be used with dynamic cursors.",
            ))
        }
        // FETCH_REFRESH: the buffer's rows again, by their keys.
        _ => return Ok((session.cursor_block(name, 1, buffer_len)?, false)),
    };
    let mut rows = session.cursor_dynamic_fetch(name, how, nrows)?;
    let mut adjusted = false;
    if fetch == FETCH_PREV && !rows.is_empty() && rows.len() < nrows {
        rows = session.cursor_dynamic_fetch(name, DynamicMove::First, nrows)?;
        adjusted = true;
    }
    // A move of 0 rows still moves (the window keeps a row to go on from), but returns none.
    rows.truncate(nrows);
    Ok((rows.into_iter().map(Some).collect(), adjusted))
}

/// A fetch type's name in error 16911.
fn fetch_name(fetch: i32) -> &'static str {
    match fetch {
        FETCH_FIRST => "first",
        FETCH_PREV | FETCH_PREV_NOADJUST => "prior",
        FETCH_LAST => "last",
        FETCH_ABSOLUTE => "absolute",
        FETCH_RELATIVE => "relative",
        _ => "next",
    }
}

/// A value parameter of `sp_cursor` as a T-SQL literal of its type.
fn value_literal(p: &RpcParam) -> Result<String, RpcError> {
    let sql = sql_type(&p.ty).ok_or_else(|| {
        error(8009, format!("parameter {}: unsupported type {}", p.name, p.ty.name()))
    })?;
    let value = from_wire_typed(p.value.clone(), &p.ty)
        .map_err(|e| error(8009, format!("parameter {}: {e}", p.name)))?;
    Ok(literal(&value, sql))
}

/// `sp_cursor`'s values as `(column, literal)`: a named value sets the column of its name
/// (without the `@`), an unnamed one the cursor's column at its place.
fn column_values(
    shape: &CursorShape,
    values: &[RpcParam],
) -> Result<Vec<(String, String)>, RpcError> {
    let mut set = Vec::with_capacity(values.len());
    for (i, p) in values.iter().enumerate() {
        let column = if p.name.is_empty() {
            let source = shape.sources.get(i).cloned().flatten();
            source.map(|(_, column)| column).ok_or_else(|| invalid("sp_cursor", "value"))?
        } else {
            p.name.trim_start_matches('@').to_string()
        };
        set.push((column, value_literal(p)?));
    }
    Ok(set)
}

/// A single text value that is the statement (or its `SET ...` / `VALUES ...` clause) of an
/// `sp_cursor` UPDATE or INSERT, as SQL Server accepts it.
fn statement_value(values: &[RpcParam]) -> Option<String> {
    let [p] = values else { return None };
    if !p.name.is_empty() {
        return None;
    }
    let text = match &p.value {
        TdsValue::NVarChar(s) => s.clone(),
        TdsValue::VarChar(b) => CodePage::of(p.ty.collation().unwrap_or_default()).decode(b),
        _ => return None,
    };
    let head = text.split_whitespace().next()?.to_ascii_uppercase();
    matches!(head.as_str(), "UPDATE" | "SET" | "INSERT" | "VALUES").then_some(text)
}

/// `sp_cursor cursor, optype, rownum, table [, values...]`: a positioned UPDATE or DELETE
/// of fetch buffer row `rownum` (0: each of its rows), an INSERT into the cursor's table, or
/// a change of position.
pub(super) fn cursor_call<W: Write>(
    cursors: &mut ApiCursors,
    session: &mut Session,
    params: &[RpcParam],
    out: &mut TdsOutput<W>,
    run: &mut RunWork<'_, W>,
) -> Result<Outcome, RpcError> {
    let p = Params::new("sp_cursor", params);
    let handle = p.required_int(0, "cursor")?;
    let optype = p.required_int(1, "optype")?;
    let rownum = p.required_int(2, "rownum")?;
    let table = p.text(3, "table")?;
    let values = p.from(4);
    let cursor = cursors.cursor(handle)?;
    let known =
        OP_UPDATE | OP_DELETE | OP_INSERT | OP_REFRESH | OP_LOCK | OP_SETPOSITION | OP_ABSOLUTE;
    if optype & !known != 0 || (optype & OP_UPDATE != 0 && optype & (OP_DELETE | OP_INSERT) != 0) {
        return Err(p.invalid("optype"));
    }
    let table = if table.trim().is_empty() {
        // No table named: the first of the query's, as SQL Server documents.
        match cursor.shape.tables.first() {
            Some((schema, name)) => format!("{}.{}", quote(schema), quote(name)),
            None if optype & (OP_UPDATE | OP_DELETE | OP_INSERT) != 0 => {
                return Err(error(16929, "The cursor is READ ONLY."));
            }
            None => String::new(),
        }
    } else {
        table
    };
    let changes = optype & (OP_UPDATE | OP_DELETE) != 0;
    if changes && cursor.ccopt & READ_ONLY != 0 {
        return Err(error(16929, "The cursor is READ ONLY."));
    }
    if optype & OP_INSERT != 0 {
        if cursor.ccopt & READ_ONLY != 0 {
            return Err(error(16929, "The cursor is READ ONLY."));
        }
        let statement = match statement_value(values) {
            Some(text) if text.trim_start().to_ascii_uppercase().starts_with("VALUES") => {
                format!("INSERT INTO {table} {text}")
            }
            Some(text) => text,
            None if values.is_empty() => format!("INSERT INTO {table} DEFAULT VALUES"),
            None => {
                let set = column_values(&cursor.shape, values)?;
                let columns: Vec<String> = set.iter().map(|(c, _)| quote(c)).collect();
                let literals: Vec<&str> = set.iter().map(|(_, v)| v.as_str()).collect();
                format!(
                    "INSERT INTO {table} ({}) VALUES ({})",
                    columns.join(", "),
                    literals.join(", ")
                )
            }
        };
        run(session, CursorWork::Text(statement), out);
        return Ok(Outcome::default());
    }
    // The rows the operation acts on, by their position in the cursor.
    let positions: Vec<usize> = if optype & OP_ABSOLUTE != 0 {
        let position = usize::try_from(rownum).map_err(|_| p.invalid("rownum"))?;
        vec![position]
    } else if rownum == 0 {
        (cursor.buffer_start..cursor.buffer_start + cursor.buffer_len).collect()
    } else {
        let r = usize::try_from(rownum).map_err(|_| p.invalid("rownum"))?;
        if r > cursor.buffer_len || cursor.buffer_start == 0 {
            return Err(error(16930, "The requested row is not in the fetch buffer."));
        }
        vec![cursor.buffer_start + r - 1]
    };
    if positions.is_empty() && changes {
        return Err(error(16931, "There are no rows in the current fetch buffer."));
    }
    let target = quote(&cursor.name);
    let statement = if optype & OP_UPDATE != 0 {
        Some(match statement_value(values) {
            Some(text) if text.trim_start().to_ascii_uppercase().starts_with("SET") => {
                format!("UPDATE {table} {text} WHERE CURRENT OF {target}")
            }
            Some(text) => format!("{text} WHERE CURRENT OF {target}"),
            None => {
                let set = column_values(&cursor.shape, values)?;
                if set.is_empty() {
                    return Err(p.invalid("value"));
                }
                let assignments: Vec<String> =
                    set.iter().map(|(c, v)| format!("{} = {v}", quote(c))).collect();
                format!("UPDATE {table} SET {} WHERE CURRENT OF {target}", assignments.join(", "))
            }
        })
    } else if optype & OP_DELETE != 0 {
        Some(format!("DELETE {table} WHERE CURRENT OF {target}"))
    } else {
        None
    };
    let name = cursor.name.clone();
    for position in positions {
        session.cursor_seek(&name, position)?;
        if let Some(statement) = &statement {
            run(session, CursorWork::Text(statement.clone()), out);
        }
    }
    Ok(Outcome::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_move_the_buffer() {
        // 10 rows; a buffer of 3 rows at row 4.
        assert_eq!(fetch_start(FETCH_FIRST, 0, 3, 10, 4, 3), (1, false));
        assert_eq!(fetch_start(FETCH_NEXT, 0, 3, 10, 4, 3), (7, false));
        assert_eq!(fetch_start(FETCH_NEXT, 0, 3, 10, 0, 0), (1, false));
        assert_eq!(fetch_start(FETCH_PREV_NOADJUST, 0, 5, 10, 4, 3), (1, false));
        assert_eq!(fetch_start(FETCH_PREV_NOADJUST, 0, 5, 10, 1, 3), (0, false));
        assert_eq!(fetch_start(FETCH_PREV, 0, 5, 10, 4, 3), (1, true));
        assert_eq!(fetch_start(FETCH_LAST, 0, 3, 10, 4, 3), (8, false));
        assert_eq!(fetch_start(FETCH_LAST, 0, 0, 10, 4, 3), (11, false));
        assert_eq!(fetch_start(FETCH_ABSOLUTE, 6, 3, 10, 4, 3), (6, false));
        assert_eq!(fetch_start(FETCH_ABSOLUTE, -2, 3, 10, 4, 3), (9, false));
        assert_eq!(fetch_start(FETCH_ABSOLUTE, -20, 3, 10, 4, 3), (1, true));
        assert_eq!(fetch_start(FETCH_ABSOLUTE, 0, 3, 10, 4, 3), (0, false));
        assert_eq!(fetch_start(FETCH_RELATIVE, 2, 3, 10, 4, 3), (6, false));
        assert_eq!(fetch_start(FETCH_RELATIVE, -4, 3, 10, 4, 3), (0, false));
        assert_eq!(fetch_start(FETCH_RELATIVE, -6, 3, 10, 4, 3), (1, true));
        assert_eq!(fetch_start(FETCH_REFRESH, 0, 9, 10, 4, 3), (4, false));
    }
}
