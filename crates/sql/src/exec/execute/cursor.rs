//! Transact-SQL cursors: `DECLARE name CURSOR`, `OPEN`, `FETCH`, `CLOSE`, `DEALLOCATE`,
//! `@@FETCH_STATUS`, `@@CURSOR_ROWS` and `CURSOR_STATUS`.
//!
//! # Every cursor but a DYNAMIC one is STATIC
//!
//! `OPEN` runs the query and keeps its rows; `FETCH` walks that copy, so changes made to the
//! tables after `OPEN` are not seen, as with SQL Server's STATIC and INSENSITIVE cursors.
//! `KEYSET` and `FAST_FORWARD` are accepted and behave the same way (SQL Server, too,
//! converts a cursor to another type when it cannot honour the one asked for). A cursor
//! declared `DYNAMIC` copies nothing and finds its rows at each fetch (see [`dynamic`]),
//! unless its query does not allow it: then it is converted to the others' way. Which
//! fetch directions are allowed still follows the declaration: `FETCH NEXT` only, unless the
//! cursor is scrollable (`SCROLL`, or `STATIC`, `KEYSET` or `DYNAMIC` without
//! `FORWARD_ONLY`), else error 16911.
//!
//! # Positioned changes
//!
//! `UPDATE t SET ... WHERE CURRENT OF c` and `DELETE t WHERE CURRENT OF c` change the row the
//! cursor is on. A cursor over tables (one, or several joined by inner or cross joins),
//! without DISTINCT, GROUP BY or set operators, and not `READ_ONLY`, keeps each row's keys
//! beside it at `OPEN`, one per table: the columns of its clustered index if unique, else of
//! a unique index, else its row locator (the hidden [`ROWID`] column: a heap's locator never
//! changes while the row lives). The positioned change becomes a change of the named
//! table's row with that key (so a row changed since `OPEN` is changed as it is now, and one
//! deleted since is not found). Other cursors are read-only (16929); a change of a table the
//! cursor does not read is 16933, one while the cursor is not on a row 16930, and an UPDATE
//! of a column a `FOR UPDATE OF` list leaves out 16932. Through an `OPTIMISTIC` cursor the
//! row is read again first, and one that is not as the cursor last fetched it (compared by
//! values) is 16934.
//!
//! Variables in the query take the values they had at `DECLARE`, as SQL Server documents
//! ("cursor variable values do not change after a cursor is declared"): the declaring scope's
//! variables are copied then, and the query runs with that copy at `OPEN`, in the database
//! that was current at `DECLARE`.
//!
//! # Scope
//!
//! A `GLOBAL` cursor (the default, SQL Server's `CURSOR_DEFAULT` being `GLOBAL`; the ISO form
//! is always global) belongs to the session until `DEALLOCATE` or the end of the connection.
//! A `LOCAL` one belongs to the batch, procedure or dynamic SQL that declared it, and goes
//! with its [`Frame`](crate::exec::session::Frame). A name without `GLOBAL` finds the local
//! cursor of that name first, then the global one.
//!
//! # Positions
//!
//! An open cursor's position is 0 (before the first row), `1..=n` (on a row) or `n + 1`
//! (after the last row); [`moved`] gives a fetch's new position, and a fetch finds a row only
//! on `1..=n`. `@@FETCH_STATUS` is the session's last fetch's: 0 when it found a row, -1
//! when it did not (-2, a row deleted since `OPEN`, happens to neither a static cursor nor a
//! dynamic one, which does not find such a row).

use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::Database;

use crate::ast::{
    AssignOp, BinaryOp, CursorOption, CursorRef, CursorStatement, CursorUpdatability,
    DeclareCursor, Expr, ExprKind, Fetch, FetchDirection, Ident, JoinKind, ObjectName, QueryBody,
    SelectItem, SelectStatement, Span, TableSource,
};
use crate::exec::execute::query::ROWID;
use crate::exec::scalar;
use crate::exec::session::{Frame, Run, Session, Variable, Variables};
use crate::exec::{ColumnInfo, Counted, RowSet, SqlError};

mod api;
mod dynamic;
pub use api::CursorShape;
pub use dynamic::DynamicMove;

/// The session's global cursors and what its fetches and opens leave behind.
#[derive(Debug)]
pub(crate) struct Cursors {
    global: Vec<Cursor>,
    /// `@@FETCH_STATUS`.
    fetch_status: i32,
    /// The cursor opened last, for `@@CURSOR_ROWS`.
    last_opened: Option<u64>,
    /// The id the next declared cursor gets: ids tell apart cursors that share a name.
    next_id: u64,
}

impl Default for Cursors {
    /// No fetch yet: SQL Server calls `@@FETCH_STATUS` undefined then, and reports -1.
    fn default() -> Cursors {
        Cursors { global: Vec::new(), fetch_status: -1, last_opened: None, next_id: 1 }
    }
}

/// The `LOCAL` cursors of one batch or procedure call: dropped with its frame.
#[derive(Debug, Default)]
pub(crate) struct LocalCursors(Vec<Cursor>);

/// A declared cursor.
#[derive(Debug)]
struct Cursor {
    id: u64,
    name: String,
    query: SelectStatement,
    /// The database current at `DECLARE`, which the query's names are resolved in.
    db: Arc<Database>,
    /// The declaring scope's variables as they were at `DECLARE`.
    vars: Variables,
    /// The procedure that declared the cursor, for the messages of errors in its query.
    procedure: Option<String>,
    /// Whether every fetch direction is allowed, not only `NEXT`.
    scrollable: bool,
    /// Whether positioned changes may go through it (its declaration allows them).
    updatable: bool,
    /// `FOR UPDATE OF columns`: the only columns a positioned UPDATE may set (lower-cased).
    update_of: Vec<String>,
    /// `OPTIMISTIC`: a positioned change of a row changed since it was fetched fails (16934).
    optimistic: bool,
    /// `DYNAMIC`: what it is if its query allows (see [`dynamic`]), else converted.
    dynamic: bool,
    /// `TYPE_WARNING`: a conversion to another cursor type is reported (message 16956).
    type_warning: bool,
    /// The rows, while the cursor is open.
    open: Option<OpenCursor>,
}

/// An open cursor's copy of its query's result, or a dynamic cursor's window of it.
#[derive(Debug)]
struct OpenCursor {
    columns: Vec<ColumnInfo>,
    rows: Vec<Vec<Value>>,
    /// The base table's key of each row, when the cursor is updatable or dynamic.
    keys: Option<RowKeys>,
    /// Whether `rows` is a dynamic cursor's window (see [`dynamic`]) rather than every row.
    dynamic: bool,
    /// 0 before the first row, `1..=rows.len()` on a row, `rows.len() + 1` after the last.
    position: usize,
    /// Whether a fetch has been made since `OPEN` (a first `RELATIVE` of 0 or less finds
    /// nothing).
    fetched: bool,
}

/// One base table of an updatable cursor's query, and what finds its rows again.
#[derive(Debug, Clone)]
struct KeyedTable {
    table: u32,
    /// The name the query knows it by: its alias, else its name.
    qualifier: Ident,
    /// Its key columns (those of its clustered index, else of a unique index), or the row
    /// locator ([`ROWID`]) alone for a table with neither, a heap's row identity.
    columns: Vec<String>,
}

/// The keys of each row of an updatable cursor: its base tables (in the cursor's database)
/// and each row's values of their key columns, table after table.
#[derive(Debug)]
struct RowKeys {
    db: Arc<Database>,
    tables: Vec<KeyedTable>,
    rows: Vec<Vec<Value>>,
}

impl RowKeys {
    /// Where the key values of `tables[i]` start in a row's keys.
    fn offset(&self, i: usize) -> usize {
        self.tables[..i].iter().map(|t| t.columns.len()).sum()
    }
}

/// Prefix of the hidden select items that carry an updatable cursor's keys, and of the
/// variables a positioned change binds them to.
const KEY_PREFIX: &str = "__walden_current_of_";

/// The base tables of a FROM clause whose rows an updatable cursor can find again by key:
/// tables joined by inner and cross joins (an outer join's missing side has no key to find
/// its row by). None if any source is something else (a view, a derived table, ...).
fn base_tables<'a>(
    sources: &'a [TableSource],
    out: &mut Vec<(&'a ObjectName, Option<&'a Ident>)>,
) -> Option<()> {
    for source in sources {
        match source {
            TableSource::Table { name, alias, .. } => out.push((name, alias.as_ref())),
            TableSource::Join(j) if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) => {
                base_tables(std::slice::from_ref(&j.left), out)?;
                base_tables(std::slice::from_ref(&j.right), out)?;
            }
            _ => return None,
        }
    }
    Some(())
}

/// For an updatable cursor's query (see "Positioned changes"): the query with each base
/// table's key columns added to its select list, and those tables.
fn keyed_query(
    query: &SelectStatement,
    db: &Database,
) -> Option<(SelectStatement, Vec<KeyedTable>)> {
    let QueryBody::Select(select) = &query.query.body else { return None };
    if select.distinct
        || !select.group_by.is_empty()
        || select.having.is_some()
        || select.into.is_some()
        || query.query.for_json.is_some()
        || query.query.for_xml.is_some()
        || select.items.iter().any(|i| matches!(i, SelectItem::Assign { .. }))
    {
        return None;
    }
    let mut sources = Vec::new();
    base_tables(&select.from, &mut sources)?;
    let mut tables = Vec::with_capacity(sources.len());
    for (name, alias) in sources {
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let object = db.find_object(schema, &name.name.value)?;
        let Object::Table(table) = &*object else { return None };
        let index = table
            .indexes
            .iter()
            .find(|i| i.id == 1 && !i.is_heap())
            .filter(|i| i.unique)
            .or_else(|| table.indexes.iter().find(|i| i.unique && !i.is_heap()));
        let columns = match index {
            Some(index) => index.columns.iter().map(|&c| table.columns[c].name.clone()).collect(),
            None => vec![ROWID.to_string()],
        };
        let qualifier = alias.cloned().unwrap_or_else(|| name.name.clone());
        tables.push(KeyedTable { table: table.id, qualifier, columns });
    }
    if tables.is_empty() {
        return None;
    }
    let mut keyed = query.clone();
    if let QueryBody::Select(select) = &mut keyed.query.body {
        let columns = tables.iter().flat_map(|t| t.columns.iter().map(move |c| (t, c)));
        for (i, (t, column)) in columns.enumerate() {
            select.items.push(SelectItem::Expr {
                expr: Expr {
                    kind: ExprKind::Column(vec![t.qualifier.clone(), Ident::new(column.clone())]),
                    span: Span::default(),
                },
                alias: Some(Ident::new(format!("{KEY_PREFIX}{i}"))),
            });
        }
    }
    Some((keyed, tables))
}

/// The predicate that finds `keyed`'s row by its key: each key column (qualified by the
/// table's name in the query when `qualified`) equal to a variable holding the row's value
/// of it, returned with those variables (named with [`KEY_PREFIX`] and numbered from
/// `first`). `None` for a key of no columns or a table that is gone.
fn key_predicate(
    db: &Database,
    keyed: &KeyedTable,
    qualified: bool,
    values: &[Value],
    first: usize,
) -> Option<(Expr, Vec<Variable>)> {
    let table_columns = match db.object_by_id(keyed.table).as_deref() {
        Some(Object::Table(t)) => t.columns.clone(),
        _ => return None,
    };
    let mut predicate: Option<Expr> = None;
    let mut vars = Vec::with_capacity(keyed.columns.len());
    for (i, (column, value)) in keyed.columns.iter().zip(values).enumerate() {
        let name = format!("@{KEY_PREFIX}{}", first + i);
        let (column_ty, declared) = if column == ROWID {
            (SqlType::VarBinary(Len::N(900)), None)
        } else {
            let def = table_columns.iter().find(|c| &c.name == column)?;
            (def.ty, def.declared)
        };
        vars.push(Variable { name: name.clone(), ty: column_ty, declared, value: value.clone() });
        let span = Span::default();
        let mut parts = Vec::with_capacity(2);
        if qualified {
            parts.push(keyed.qualifier.clone());
        }
        parts.push(Ident::new(column.clone()));
        let equal = Expr {
            kind: ExprKind::Binary {
                op: BinaryOp::Eq,
                left: Box::new(Expr { kind: ExprKind::Column(parts), span }),
                right: Box::new(Expr { kind: ExprKind::Variable(name.into()), span }),
            },
            span,
        };
        predicate = Some(and(predicate, equal));
    }
    predicate.map(|p| (p, vars))
}

/// `left AND right`, or `right` alone.
fn and(left: Option<Expr>, right: Expr) -> Expr {
    match left {
        None => right,
        Some(left) => Expr {
            kind: ExprKind::Binary {
                op: BinaryOp::And,
                left: Box::new(left),
                right: Box::new(right),
            },
            span: Span::default(),
        },
    }
}

/// A fetch direction with its count evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Move {
    Next,
    Prior,
    First,
    Last,
    Absolute(i64),
    Relative(i64),
}

/// Where a fetch moves a cursor at `position` over `rows` rows (see "Positions"): past
/// either end it stops just outside the rows. `ABSOLUTE 0` finds no row, and neither does a
/// `RELATIVE` of 0 or less as the first fetch after `OPEN`, as SQL Server documents.
fn moved(position: usize, rows: usize, fetched: bool, direction: Move) -> usize {
    let n = i64::try_from(rows).unwrap_or(i64::MAX - 1);
    let p = i64::try_from(position).unwrap_or(n + 1);
    let target = match direction {
        Move::Next => p.saturating_add(1),
        Move::Prior => p.saturating_sub(1),
        Move::First => 1,
        Move::Last => n,
        Move::Absolute(k) if k >= 0 => k,
        Move::Absolute(k) => n.saturating_add(1).saturating_add(k),
        Move::Relative(k) if !fetched && k <= 0 => 0,
        Move::Relative(k) => p.saturating_add(k),
    };
    usize::try_from(target.clamp(0, n + 1)).unwrap_or(0)
}

/// Where a cursor is: in the current frame's local cursors or the session's global ones.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Local(usize),
    Global(usize),
}

fn position_of(cursors: &[Cursor], name: &str) -> Option<usize> {
    cursors.iter().position(|c| c.name.eq_ignore_ascii_case(name))
}

fn not_found(name: &str) -> SqlError {
    SqlError::new(16916, format!("A cursor with the name '{name}' does not exist."))
}

fn not_open() -> SqlError {
    SqlError::new(16917, "Cursor is not open.")
}

/// Whether the cursor's type makes it read-only: `INSENSITIVE`, `STATIC`, `FAST_FORWARD` or
/// `READ_ONLY`, as SQL Server makes them.
fn read_only_type(d: &DeclareCursor) -> bool {
    d.insensitive
        || d.options.iter().any(|o| {
            matches!(o, CursorOption::Static | CursorOption::FastForward | CursorOption::ReadOnly)
        })
}

/// `FOR UPDATE` on a cursor that the declaration makes read-only (16957).
fn read_only_for_update(d: &DeclareCursor) -> bool {
    read_only_type(d) && matches!(d.updatability, Some(CursorUpdatability::Update(_)))
}

/// Whether a cursor's declaration lets positioned changes through it: neither a read-only
/// type nor `FOR READ ONLY`.
fn updatable(d: &DeclareCursor) -> bool {
    !(read_only_type(d) || matches!(d.updatability, Some(CursorUpdatability::ReadOnly)))
}

/// Whether a declaration allows every fetch direction: ISO `SCROLL`; or `SCROLL`, or `STATIC`,
/// `KEYSET` or `DYNAMIC` without `FORWARD_ONLY` (SQL Server's defaults).
fn scrollable(d: &DeclareCursor) -> bool {
    let has = |o: CursorOption| d.options.contains(&o);
    d.iso_scroll
        || has(CursorOption::Scroll)
        || (!has(CursorOption::ForwardOnly)
            && !has(CursorOption::FastForward)
            && (has(CursorOption::Static)
                || has(CursorOption::Keyset)
                || has(CursorOption::Dynamic)))
}

impl Session {
    fn locate(&self, cursor: &CursorRef) -> Result<Slot, SqlError> {
        let name = &cursor.name.value;
        if !cursor.global {
            let local = self.frames.last().and_then(|f| position_of(&f.cursors.0, name));
            if let Some(i) = local {
                return Ok(Slot::Local(i));
            }
        }
        position_of(&self.cursors.global, name).map(Slot::Global).ok_or_else(|| not_found(name))
    }

    fn cursor_at(&mut self, slot: Slot) -> Option<&mut Cursor> {
        match slot {
            Slot::Local(i) => self.frames.last_mut().and_then(|f| f.cursors.0.get_mut(i)),
            Slot::Global(i) => self.cursors.global.get_mut(i),
        }
    }

    fn cursor(&mut self, cursor: &CursorRef) -> Result<&mut Cursor, SqlError> {
        let slot = self.locate(cursor)?;
        self.cursor_at(slot).ok_or_else(|| not_found(&cursor.name.value))
    }

    /// `@@FETCH_STATUS`.
    pub(crate) fn fetch_status(&self) -> i32 {
        self.cursors.fetch_status
    }

    /// `@@CURSOR_ROWS`: the rows of the cursor opened last, 0 once it is closed or gone, -1
    /// for a dynamic one (its rows are not known until fetched).
    pub(crate) fn cursor_rows(&self) -> i32 {
        let Some(id) = self.cursors.last_opened else { return 0 };
        let locals = self.frames.iter().flat_map(|f| f.cursors.0.iter());
        let mut all = self.cursors.global.iter().chain(locals);
        all.find(|c| c.id == id).and_then(|c| c.open.as_ref()).map_or(0, |o| {
            if o.dynamic {
                -1
            } else {
                i32::try_from(o.rows.len()).unwrap_or(i32::MAX)
            }
        })
    }

    /// `CURSOR_STATUS('local' | 'global' | 'variable', name)`: 1 open with rows (always, for
    /// a dynamic cursor, as SQL Server documents), 0 open and empty, -1 closed, -3 no such
    /// cursor. Cursor variables are not supported, so none
    /// exists (-3).
    pub(crate) fn cursor_status(&self, args: &[Value]) -> Result<Value, SqlError> {
        let [kind, name] = args else {
            return Err(SqlError::with_severity(
                174,
                15,
                "The cursor_status function requires 2 argument(s).",
            ));
        };
        if kind.is_null() || name.is_null() {
            return Ok(Value::Null);
        }
        let name = scalar::to_text(name);
        let cursors = match scalar::to_text(kind).to_ascii_lowercase().as_str() {
            "local" => self.frames.last().map_or(&[][..], |f| &f.cursors.0),
            "global" => &self.cursors.global,
            _ => &[][..],
        };
        let status = match cursors.iter().find(|c| c.name.eq_ignore_ascii_case(&name)) {
            None => -3,
            Some(Cursor { open: None, .. }) => -1,
            Some(Cursor { open: Some(open), .. }) => {
                i16::from(open.dynamic || !open.rows.is_empty())
            }
        };
        Ok(Value::SmallInt(status))
    }
}

impl Run<'_> {
    pub(crate) fn cursor_statement(&mut self, statement: &CursorStatement) -> Result<(), SqlError> {
        match statement {
            CursorStatement::Declare(d) => self.declare_cursor(d),
            CursorStatement::Open(cursor) => self.open_cursor(cursor),
            CursorStatement::Fetch(fetch) => self.fetch(fetch),
            CursorStatement::Close(cursor) => {
                let c = self.s.cursor(cursor)?;
                c.open.take().ok_or_else(not_open)?;
                self.s.rowcount = 0;
                Ok(())
            }
            CursorStatement::Deallocate(cursor) => {
                match self.s.locate(cursor)? {
                    Slot::Local(i) => {
                        if let Some(frame) = self.s.frames.last_mut() {
                            frame.cursors.0.remove(i);
                        }
                    }
                    Slot::Global(i) => {
                        self.s.cursors.global.remove(i);
                    }
                }
                self.s.rowcount = 0;
                Ok(())
            }
        }
    }

    fn declare_cursor(&mut self, d: &DeclareCursor) -> Result<(), SqlError> {
        if read_only_for_update(d) {
            return Err(SqlError::new(
                16957,
                "FOR UPDATE cannot be specified on a READ ONLY cursor.",
            ));
        }
        let local = d.options.contains(&CursorOption::Local);
        let name = &d.name.value;
        let frame = self.s.frames.last();
        let taken = if local {
            frame.and_then(|f| position_of(&f.cursors.0, name)).is_some()
        } else {
            position_of(&self.s.cursors.global, name).is_some()
        };
        if taken {
            return Err(SqlError::new(
                16915,
                format!("A cursor with the name '{name}' already exists."),
            ));
        }
        let id = self.s.cursors.next_id;
        self.s.cursors.next_id += 1;
        let cursor = Cursor {
            id,
            name: name.clone(),
            query: d.query.clone(),
            db: Arc::clone(&self.s.db),
            vars: frame.map(|f| f.vars.clone()).unwrap_or_default(),
            procedure: frame.and_then(|f| f.procedure.clone()),
            scrollable: scrollable(d),
            updatable: updatable(d),
            update_of: match &d.updatability {
                Some(CursorUpdatability::Update(columns)) => {
                    columns.iter().map(|c| c.value.to_ascii_lowercase()).collect()
                }
                _ => Vec::new(),
            },
            optimistic: d.options.contains(&CursorOption::Optimistic),
            dynamic: d.options.contains(&CursorOption::Dynamic),
            type_warning: d.options.contains(&CursorOption::TypeWarning),
            open: None,
        };
        if local {
            // A batch always runs in a frame of its own, so there is one to hold the cursor.
            if let Some(frame) = self.s.frames.last_mut() {
                frame.cursors.0.push(cursor);
            }
        } else {
            self.s.cursors.global.push(cursor);
        }
        // As SQL Server documents: DECLARE CURSOR sets @@ROWCOUNT to 1.
        self.s.rowcount = 1;
        Ok(())
    }

    /// `OPEN`: runs the query in the declaring scope's copy of its variables and database,
    /// and keeps the rows.
    fn open_cursor(&mut self, cursor: &CursorRef) -> Result<(), SqlError> {
        let slot = self.s.locate(cursor)?;
        let c = self.s.cursor_at(slot).ok_or_else(|| not_found(&cursor.name.value))?;
        if c.open.is_some() {
            return Err(SqlError::new(16905, "The cursor is already open."));
        }
        if c.dynamic {
            if let Some(tables) = dynamic::dynamic_tables(&c.query, &c.db) {
                return self.open_dynamic(slot, tables);
            }
            if c.type_warning {
                self.report(SqlError::with_severity(
                    16956,
                    10,
                    "The created cursor is not of the requested type.",
                ));
            }
        }
        let c = self.s.cursor_at(slot).ok_or_else(|| not_found(&cursor.name.value))?;
        let query = c.query.clone();
        let keyed = if c.updatable { keyed_query(&c.query, &c.db) } else { None };
        let frame =
            Frame { vars: c.vars.clone(), procedure: c.procedure.clone(), ..Frame::default() };
        let db = Arc::clone(&c.db);
        let saved_db = std::mem::replace(&mut self.s.db, Arc::clone(&db));
        self.s.frames.push(frame);
        // An updatable cursor's query runs with its keys; should that query fail where the
        // declared one would not, the cursor is read-only rather than unopenable.
        let keyed_rows = keyed.and_then(|(keyed_query, tables)| {
            let RowSet { mut columns, mut rows } =
                self.query(&keyed_query.query, None).ok()?.into_row_set();
            let key_width: usize = tables.iter().map(|t| t.columns.len()).sum();
            let width = columns.len() - key_width;
            columns.truncate(width);
            let key_rows = rows.iter_mut().map(|r| r.split_off(width)).collect();
            let keys = RowKeys { db, tables, rows: key_rows };
            Some((RowSet { columns, rows }, keys))
        });
        let (result, keys) = match keyed_rows {
            Some((rows, keys)) => (Ok(rows), Some(keys)),
            None => (self.query(&query.query, None).map(|r| r.into_row_set()), None),
        };
        self.s.frames.pop();
        self.s.db = saved_db;
        let RowSet { columns, rows } = result?;
        let c = self.s.cursor_at(slot).ok_or_else(|| not_found(&cursor.name.value))?;
        c.open =
            Some(OpenCursor { columns, rows, keys, dynamic: false, position: 0, fetched: false });
        self.s.cursors.last_opened = Some(c.id);
        Ok(())
    }

    fn fetch(&mut self, fetch: &Fetch) -> Result<(), SqlError> {
        let direction = match &fetch.direction {
            FetchDirection::Next => Move::Next,
            FetchDirection::Prior => Move::Prior,
            FetchDirection::First => Move::First,
            FetchDirection::Last => Move::Last,
            FetchDirection::Absolute(n) => Move::Absolute(self.fetch_count(n)?),
            FetchDirection::Relative(n) => Move::Relative(self.fetch_count(n)?),
        };
        let slot = self.s.locate(&fetch.cursor)?;
        let c = self.s.cursor_at(slot).ok_or_else(|| not_found(&fetch.cursor.name.value))?;
        let scrollable = c.scrollable;
        let open = c.open.as_mut().ok_or_else(not_open)?;
        // A dynamic cursor's move; ABSOLUTE it refuses before its scrollability is checked,
        // as SQL Server does.
        let dynamic_how = if open.dynamic {
            Some(match direction {
                Move::Next => DynamicMove::Next,
                Move::Prior => DynamicMove::Prior,
                Move::First => DynamicMove::First,
                Move::Last => DynamicMove::Last,
                Move::Relative(n) => DynamicMove::Relative(n),
                Move::Absolute(_) => return Err(dynamic::not_for_dynamic("Absolute")),
            })
        } else {
            None
        };
        if !scrollable && direction != Move::Next {
            return Err(SqlError::new(
                16911,
                format!(
                    "fetch: The fetch type {} cannot be used with forward only cursors.",
                    fetch.direction.keyword().to_ascii_lowercase()
                ),
            ));
        }
        if !fetch.into.is_empty() && fetch.into.len() != open.columns.len() {
            return Err(SqlError::new(
                16924,
                "Cursorfetch: The number of variables declared in the INTO list must match that of selected columns.",
            ));
        }
        let columns = if fetch.into.is_empty() { open.columns.clone() } else { Vec::new() };
        let row = if let Some(how) = dynamic_how {
            self.dynamic_move(slot, how, 1)?;
            let c = self.s.cursor_at(slot).ok_or_else(|| not_found(&fetch.cursor.name.value))?;
            c.open.as_ref().and_then(|o| o.rows.first().cloned())
        } else {
            open.position = moved(open.position, open.rows.len(), open.fetched, direction);
            open.fetched = true;
            open.position.checked_sub(1).and_then(|i| open.rows.get(i)).cloned()
        };
        self.s.cursors.fetch_status = if row.is_some() { 0 } else { -1 };
        let n = u64::from(row.is_some());
        if fetch.into.is_empty() {
            self.out.result_set(&columns);
            if let Some(row) = &row {
                self.out.row(row);
            }
            self.out.result_end(n);
            self.done(Counted::Select, n);
            return Ok(());
        }
        if let Some(row) = row {
            for (name, value) in fetch.into.iter().zip(row) {
                self.assign(name, AssignOp::Assign, value)?;
            }
        }
        self.s.rowcount = n;
        Ok(())
    }

    /// The `n` of `ABSOLUTE n` or `RELATIVE n`; NULL counts as 0.
    fn fetch_count(&mut self, n: &crate::ast::Expr) -> Result<i64, SqlError> {
        match scalar::convert(self.value(n)?, SqlType::BigInt, None)? {
            Value::BigInt(n) => Ok(n),
            _ => Ok(0),
        }
    }
}

impl Run<'_> {
    /// The predicate a positioned change of `target` through `cursor` stands for (see
    /// "Positioned changes"): the key columns of `target`'s table in the cursor equal to
    /// variables, returned with their values. `set` are the columns a positioned UPDATE
    /// sets, which a `FOR UPDATE OF` list must name (16932). Through an `OPTIMISTIC` cursor,
    /// a row that is not as the cursor last fetched it is 16934.
    pub(crate) fn current_of(
        &mut self,
        cursor: &CursorRef,
        target: &ObjectName,
        set: &[String],
    ) -> Result<(Expr, Vec<Variable>), SqlError> {
        let read_only = || SqlError::new(16929, "The cursor is READ ONLY.");
        let schema = target.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let target_id = self.s.db.find_object(schema, &target.name.value).map(|o| o.id());
        let current_db = Arc::clone(&self.s.db);
        let slot = self.s.locate(cursor)?;
        let c = self.s.cursor_at(slot).ok_or_else(|| not_found(&cursor.name.value))?;
        if !c.update_of.is_empty()
            && set.iter().any(|s| !c.update_of.contains(&s.to_ascii_lowercase()))
        {
            return Err(SqlError::new(
                16932,
                "The cursor has a FOR UPDATE list and the requested column to be updated is not \
                 in this list.",
            ));
        }
        let optimistic = c.optimistic;
        let updatable = c.updatable;
        let open = c.open.as_ref().ok_or_else(not_open)?;
        // A dynamic cursor keeps keys whether or not it is updatable.
        let keys = open.keys.as_ref().filter(|_| updatable).ok_or_else(read_only)?;
        let row =
            open.position.checked_sub(1).filter(|&i| i < keys.rows.len()).ok_or_else(|| {
                SqlError::new(16930, "The requested row is not in the fetch buffer.")
            })?;
        let fetched = open.rows[row].clone();
        let db = Arc::clone(&keys.db);
        // The target is resolved in the current database, the cursor's tables in its own.
        let target_id = target_id.filter(|_| Arc::ptr_eq(&db, &current_db));
        let Some(i) = keys.tables.iter().position(|t| Some(t.table) == target_id) else {
            return Err(SqlError::new(
                16933,
                "The cursor does not include the table being modified or the table is not \
                 updatable through the cursor.",
            ));
        };
        let keyed = keys.tables[i].clone();
        let offset = keys.offset(i);
        let values = keys.rows[row][offset..offset + keyed.columns.len()].to_vec();
        if optimistic && self.reread(slot, row)?.as_ref() != Some(&fetched) {
            return Err(SqlError::new(
                16934,
                "Optimistic concurrency check failed. The row was modified outside of this \
                 cursor.",
            ));
        }
        key_predicate(&db, &keyed, false, &values, 0).ok_or_else(read_only)
    }

    /// Runs `change` (a positioned change through `cursor`) with the key variables of its
    /// row bound in the current scope, and unbinds them however it ends. Once it has changed
    /// the row of an `OPTIMISTIC` cursor, the cursor keeps the row as it now is, so that its
    /// own change is not one "made outside of this cursor" to the next.
    pub(crate) fn with_current_of<T>(
        &mut self,
        cursor: &CursorRef,
        vars: Vec<Variable>,
        change: impl FnOnce(&mut Self) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        self.frame().vars.extend(vars);
        let result = change(self);
        let prefix = format!("@{KEY_PREFIX}");
        self.frame().vars.retain(|v| !v.name.starts_with(&prefix));
        let result = result?;
        let slot = self.s.locate(cursor)?;
        let current = self.s.cursor_at(slot).and_then(|c| {
            let open = c.open.as_ref()?;
            c.optimistic.then(|| open.position.checked_sub(1)).flatten()
        });
        if let Some(row) = current {
            let now = self.reread(slot, row)?;
            if let (Some(now), Some(open)) =
                (now, self.s.cursor_at(slot).and_then(|c| c.open.as_mut()))
            {
                if let Some(kept) = open.rows.get_mut(row) {
                    *kept = now;
                }
            }
        }
        Ok(result)
    }

    /// Row `row` (0-based) of the open cursor at `slot` as it is now, read again by its keys
    /// in the cursor's database and variables (`None`: deleted since, or no longer matching
    /// the query); a cursor without keys gives its copy.
    fn reread(&mut self, slot: Slot, row: usize) -> Result<Option<Vec<Value>>, SqlError> {
        let c = self.s.cursor_at(slot).ok_or_else(not_open)?;
        let open = c.open.as_ref().ok_or_else(not_open)?;
        let copy = open.rows.get(row).cloned();
        let Some(keys) = &open.keys else { return Ok(copy) };
        let Some(key_row) = keys.rows.get(row) else { return Ok(copy) };
        let db = Arc::clone(&keys.db);
        let Some((mut query, tables)) = keyed_query(&c.query, &db) else { return Ok(copy) };
        let mut found = None;
        let mut key_vars = Vec::new();
        let mut offset = 0;
        for keyed in &tables {
            let values = &key_row[offset..offset + keyed.columns.len()];
            // A table gone since OPEN: so is the row.
            let Some((p, vars)) = key_predicate(&db, keyed, true, values, offset) else {
                return Ok(None);
            };
            offset += keyed.columns.len();
            found = Some(and(found, p));
            key_vars.extend(vars);
        }
        if let (QueryBody::Select(select), Some(found)) = (&mut query.query.body, found) {
            select.where_clause = Some(and(select.where_clause.take(), found));
        }
        let mut vars = c.vars.clone();
        vars.extend(key_vars);
        let frame = Frame { vars, procedure: c.procedure.clone(), ..Frame::default() };
        let saved_db = std::mem::replace(&mut self.s.db, db);
        self.s.frames.push(frame);
        let result = self.query(&query.query, None).map(|r| r.into_row_set());
        self.pop_frame();
        self.s.db = saved_db;
        let RowSet { columns, rows } = result?;
        let width = columns.len().saturating_sub(offset);
        Ok(rows.into_iter().next().map(|mut r| {
            r.truncate(width);
            r
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_and_prior_stop_just_outside_the_rows() {
        assert_eq!(moved(0, 3, false, Move::Next), 1);
        assert_eq!(moved(3, 3, true, Move::Next), 4);
        assert_eq!(moved(4, 3, true, Move::Next), 4);
        assert_eq!(moved(4, 3, true, Move::Prior), 3);
        assert_eq!(moved(1, 3, true, Move::Prior), 0);
        assert_eq!(moved(0, 3, false, Move::Prior), 0);
        assert_eq!(moved(0, 0, false, Move::Next), 1);
    }

    #[test]
    fn first_and_last_on_empty_and_full_sets() {
        assert_eq!(moved(2, 3, true, Move::First), 1);
        assert_eq!(moved(0, 3, false, Move::Last), 3);
        assert_eq!(moved(0, 0, false, Move::First), 1);
        assert_eq!(moved(0, 0, false, Move::Last), 0);
    }

    #[test]
    fn absolute_counts_from_either_end_and_zero_finds_nothing() {
        assert_eq!(moved(0, 5, false, Move::Absolute(2)), 2);
        assert_eq!(moved(0, 5, false, Move::Absolute(-1)), 5);
        assert_eq!(moved(0, 5, false, Move::Absolute(-5)), 1);
        assert_eq!(moved(0, 5, false, Move::Absolute(-6)), 0);
        assert_eq!(moved(0, 5, false, Move::Absolute(9)), 6);
        assert_eq!(moved(3, 5, true, Move::Absolute(0)), 0);
        assert_eq!(moved(0, 5, false, Move::Absolute(i64::MIN)), 0);
    }

    #[test]
    fn relative_moves_from_the_current_row_but_not_backwards_first() {
        assert_eq!(moved(2, 5, true, Move::Relative(2)), 4);
        assert_eq!(moved(2, 5, true, Move::Relative(0)), 2);
        assert_eq!(moved(2, 5, true, Move::Relative(-5)), 0);
        assert_eq!(moved(0, 5, false, Move::Relative(2)), 2);
        assert_eq!(moved(0, 5, false, Move::Relative(0)), 0);
        assert_eq!(moved(0, 5, false, Move::Relative(-1)), 0);
        assert_eq!(moved(4, 5, true, Move::Relative(i64::MAX)), 6);
    }
}
