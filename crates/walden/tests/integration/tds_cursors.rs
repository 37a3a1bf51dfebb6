#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! API server cursors (`sp_cursoropen`, `sp_cursorfetch`, `sp_cursor`, `sp_cursoroption`,
//! `sp_cursorclose` and the prepared forms) driven with the codec, for the exact result
//! shapes: the cursor's metadata with TABNAME, COLINFO and the hidden ROWSTAT column, the
//! negotiated type and concurrency in the OUTPUT parameters, blocks of rows with their
//! ROWSTAT, NoMetaData under fNoMetaData, and SQL Server's error numbers.

use walden_tds::*;

use crate::common;

use common::client::{int, message_numbers, rows, text, Client};
use common::server::Server;

const KEYSET: i32 = 1;
const DYNAMIC: i32 = 2;
const STATIC: i32 = 8;
const OPTIMISTIC: i32 = 4;
const READ_ONLY: i32 = 1;
const SCROLL_LOCKS: i32 = 2;
const OPTIMISTIC_VALUES: i32 = 8;
const FETCH_FIRST: i32 = 1;
const FETCH_NEXT: i32 = 2;
const FETCH_PREV: i32 = 4;
const FETCH_ABSOLUTE: i32 = 0x10;
const FETCH_RELATIVE: i32 = 0x20;
const FETCH_REFRESH: i32 = 0x80;
const FETCH_INFO: i32 = 0x100;

fn int_out(v: i32) -> RpcParam {
    let mut p = RpcParam::input("", TdsValue::Int(v));
    p.ty = TypeInfo::IntN(4);
    p.status = ParamStatus::BY_REF;
    p
}

/// The int RETURNVALUEs, by ordinal.
fn returned(tokens: &[Token]) -> Vec<(u16, i32)> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::ReturnValue(ReturnValue { ordinal, value: TdsValue::Int(v), .. }) => {
                Some((*ordinal, *v))
            }
            _ => None,
        })
        .collect()
}

fn kinds(tokens: &[Token]) -> Vec<&'static str> {
    tokens
        .iter()
        .map(|t| match t {
            Token::ColMetadata(_) => "COLMETADATA",
            Token::NoMetadata => "NOMETADATA",
            Token::TabName(_) => "TABNAME",
            Token::ColInfo(_) => "COLINFO",
            Token::Row(_) | Token::NbcRow(_) => "ROW",
            Token::DoneInProc(_) => "DONEINPROC",
            Token::ReturnStatus(_) => "RETURNSTATUS",
            Token::ReturnValue(_) => "RETURNVALUE",
            Token::DoneProc(_) => "DONEPROC",
            Token::Error(_) => "ERROR",
            Token::Info(_) => "INFO",
            _ => "other",
        })
        .collect()
}

/// `(id, name, ROWSTAT)` of each row.
fn id_name_rowstat(tokens: &[Token]) -> Vec<(Option<i32>, Option<String>, i32)> {
    rows(tokens)
        .into_iter()
        .map(|r| {
            let id = match &r[0] {
                TdsValue::Int(i) => Some(*i),
                _ => None,
            };
            let name = match &r[1] {
                TdsValue::NVarChar(s) => Some(s.clone()),
                _ => None,
            };
            let TdsValue::Int(stat) = r[2] else { panic!("ROWSTAT {:?}", r[2]) };
            (id, name, stat)
        })
        .collect()
}

fn fetch(c: &mut Client, cursor: i32, ty: i32, rownum: i32, nrows: i32) -> Vec<Token> {
    c.rpc(ProcId::CursorFetch, vec![int(cursor), int(ty), int(rownum), int(nrows)])
}

fn setup(c: &mut Client) {
    let tokens = c.batch(
        "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, name NVARCHAR(10)); \
         INSERT INTO t VALUES (1, N'a'), (2, N'b'), (3, N'c'), (4, N'd'), (5, N'e'); \
         CREATE TABLE heap (x INT)",
    );
    assert!(message_numbers(&tokens).is_empty(), "{tokens:?}");
}

#[test]
fn a_keyset_cursor_opens_fetches_and_changes_rows() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    setup(&mut c);

    let opened = c.rpc(
        ProcId::CursorOpen,
        vec![
            int_out(0),
            text("SELECT id, name AS label FROM t ORDER BY id"),
            int_out(KEYSET),
            int_out(OPTIMISTIC | 0x2000 | 0x4000),
            int_out(0),
        ],
    );
    assert_eq!(
        kinds(&opened),
        [
            "COLMETADATA",
            "TABNAME",
            "COLINFO",
            "RETURNSTATUS",
            "RETURNVALUE",
            "RETURNVALUE",
            "RETURNVALUE",
            "RETURNVALUE",
            "DONEPROC"
        ],
        "{opened:?}"
    );
    let Token::ColMetadata(columns) = &opened[0] else { unreachable!() };
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "label", "ROWSTAT"]);
    assert!(columns[2].flags.contains(ColumnFlags::HIDDEN));
    assert_eq!(opened[1], Token::TabName(vec![vec!["dbo".into(), "t".into()]]));
    let Token::ColInfo(info) = &opened[2] else { unreachable!() };
    assert_eq!(
        info.iter().map(|i| (i.column, i.table, i.base_name.clone())).collect::<Vec<_>>(),
        [(1, 1, None), (2, 1, Some("name".to_string())), (3, 0, None)]
    );
    assert!(info[0].status.contains(ColInfoStatus::KEY));
    assert!(info[2].status.contains(ColInfoStatus::HIDDEN));
    let out = returned(&opened);
    let cursor = out[0].1;
    assert_ne!(cursor, 0);
    // The type and concurrency used, and the rows.
    assert_eq!(&out[1..], [(2, KEYSET), (3, OPTIMISTIC), (4, 5)]);

    let first = fetch(&mut c, cursor, FETCH_FIRST, 0, 2);
    assert_eq!(
        kinds(&first),
        [
            "COLMETADATA",
            "TABNAME",
            "COLINFO",
            "ROW",
            "ROW",
            "DONEINPROC",
            "RETURNSTATUS",
            "DONEPROC"
        ],
        "{first:?}"
    );
    assert_eq!(
        id_name_rowstat(&first),
        [(Some(1), Some("a".into()), 1), (Some(2), Some("b".into()), 1)]
    );
    assert!(matches!(first[5], Token::DoneInProc(d) if d.row_count == 2));

    // Under fNoMetaData the rows follow the NoMetaData COLMETADATA.
    let payload = c.call(
        PacketStatus::NONE,
        RpcProc::Id(ProcId::CursorFetch),
        RpcOptions::NO_METADATA,
        vec![int(cursor), int(FETCH_NEXT), int(0), int(2)],
    );
    let next: Vec<Token> =
        TokenReader::with_columns(&payload, columns).collect::<Result<_, _>>().unwrap();
    assert_eq!(kinds(&next)[..3], ["NOMETADATA", "ROW", "ROW"], "{next:?}");
    assert_eq!(
        id_name_rowstat(&next),
        [(Some(3), Some("c".into()), 1), (Some(4), Some("d".into()), 1)]
    );

    // Row 1 of the fetch buffer (id 3) updated through the cursor, row 2 (id 4) deleted by
    // another statement: a refresh shows both.
    let mut value = RpcParam::input("@name", TdsValue::NVarChar("zz".into()));
    value.ty = TypeInfo::NVarChar { max_len: 20, collation: Collation::default() };
    let updated = c.rpc(ProcId::Cursor, vec![int(cursor), int(0x21), int(1), text(""), value]);
    assert!(message_numbers(&updated).is_empty(), "{updated:?}");
    assert!(updated.iter().any(|t| matches!(t, Token::DoneInProc(d) if d.row_count == 1)));
    assert!(message_numbers(&c.batch("DELETE t WHERE id = 4")).is_empty());
    let refreshed = fetch(&mut c, cursor, FETCH_REFRESH, 0, 0);
    assert_eq!(
        id_name_rowstat(&refreshed),
        [(Some(3), Some("zz".into()), 1), (None, None, 2)],
        "{refreshed:?}"
    );
    let table = c.batch("SELECT name FROM t WHERE id = 3");
    assert_eq!(rows(&table), [vec![TdsValue::NVarChar("zz".into())]]);

    // ABSOLUTE -1: the last row; INFO: the position and the rows.
    let last = fetch(&mut c, cursor, FETCH_ABSOLUTE, -1, 1);
    assert_eq!(id_name_rowstat(&last), [(Some(5), Some("e".into()), 1)]);
    let info =
        c.rpc(ProcId::CursorFetch, vec![int(cursor), int(FETCH_INFO), int_out(0), int_out(0)]);
    assert_eq!(returned(&info), [(2, 5), (3, 5)], "{info:?}");

    // DELETE through the cursor of fetch buffer row 1 (id 5).
    let deleted = c.rpc(ProcId::Cursor, vec![int(cursor), int(0x22), int(1), text("")]);
    assert!(message_numbers(&deleted).is_empty(), "{deleted:?}");
    let count = c.batch("SELECT COUNT(*) FROM t");
    assert_eq!(rows(&count), [vec![TdsValue::Int(3)]]);

    let closed = c.rpc(ProcId::CursorClose, vec![int(cursor)]);
    assert_eq!(kinds(&closed), ["RETURNSTATUS", "DONEPROC"], "{closed:?}");
    let gone = fetch(&mut c, cursor, FETCH_NEXT, 0, 1);
    assert_eq!(message_numbers(&gone), [16945]);
}

#[test]
fn cursors_are_negotiated_down_and_refuse_what_they_cannot_do() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    setup(&mut c);
    assert!(message_numbers(&c.batch("INSERT INTO heap VALUES (1), (2)")).is_empty());

    // A KEYSET cursor over a query whose rows have no keys (DISTINCT) is STATIC and
    // read-only.
    let opened = c.rpc(
        ProcId::CursorOpen,
        vec![
            int_out(0),
            text("SELECT DISTINCT x FROM heap"),
            int_out(KEYSET),
            int_out(OPTIMISTIC),
            int_out(0),
        ],
    );
    let out = returned(&opened);
    assert_eq!(&out[1..], [(2, STATIC), (3, READ_ONLY), (4, 2)], "{opened:?}");
    let cursor = out[0].1;
    let fetched = fetch(&mut c, cursor, FETCH_FIRST, 0, 1);
    assert_eq!(rows(&fetched), [vec![TdsValue::Int(1), TdsValue::Int(1)]]);
    let refused = c.rpc(ProcId::Cursor, vec![int(cursor), int(0x22), int(1), text("")]);
    assert_eq!(message_numbers(&refused), [16929]);
    assert!(
        matches!(refused.last(), Some(Token::DoneProc(d)) if d.status.contains(DoneStatus::ERROR))
    );
    // Not in the fetch buffer.
    let outside = c.rpc(ProcId::Cursor, vec![int(cursor), int(0x20), int(5), text("")]);
    assert_eq!(message_numbers(&outside), [16930]);

    // A forward-only cursor fetches NEXT only.
    let forward = c.rpc(
        ProcId::CursorOpen,
        vec![int_out(0), text("SELECT id FROM t"), int(4), int(READ_ONLY), int_out(0)],
    );
    let out = returned(&forward);
    assert_eq!(out[1], (4, -1), "{forward:?}");
    let refused = fetch(&mut c, out[0].1, FETCH_ABSOLUTE, 2, 1);
    assert_eq!(message_numbers(&refused), [16911]);

    // A statement that is not a SELECT runs directly: 16954, no cursor.
    let direct = c.rpc(
        ProcId::CursorOpen,
        vec![
            int_out(0),
            text("INSERT INTO heap VALUES (3)"),
            int(KEYSET),
            int(READ_ONLY),
            int_out(0),
        ],
    );
    assert_eq!(message_numbers(&direct), [16954], "{direct:?}");
    assert_eq!(returned(&direct)[0], (0, 0));
    let count = c.batch("SELECT COUNT(*) FROM heap");
    assert_eq!(rows(&count), [vec![TdsValue::Int(3)]]);

    // Errors: an unknown fetch type, an unknown handle, a failing query.
    assert_eq!(message_numbers(&fetch(&mut c, cursor, 0x3, 0, 1)), [16902]);
    assert_eq!(message_numbers(&c.rpc(ProcId::CursorClose, vec![int(12345)])), [16945]);
    let failed = c.rpc(
        ProcId::CursorOpen,
        vec![int_out(0), text("SELECT nosuch FROM t"), int(KEYSET), int(READ_ONLY), int_out(0)],
    );
    assert_eq!(message_numbers(&failed), [207], "{failed:?}");
    assert_eq!(returned(&failed)[0], (0, 0));
    assert!(
        matches!(failed.last(), Some(Token::DoneProc(d)) if d.status.contains(DoneStatus::ERROR))
    );
}

#[test]
fn prepared_cursors_take_parameters() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    setup(&mut c);
    let mut low = RpcParam::input("@low", TdsValue::Int(2));
    low.ty = TypeInfo::IntN(4);
    let opened = c.rpc(
        ProcId::CursorPrepExec,
        vec![
            int_out(0),
            int_out(0),
            text("@low int"),
            text("SELECT id, name FROM t WHERE id > @low ORDER BY id"),
            int(KEYSET | 0x1000),
            int(READ_ONLY),
            int_out(0),
            low,
        ],
    );
    let out = returned(&opened);
    assert_eq!(out.iter().map(|(o, _)| *o).collect::<Vec<_>>(), [0, 1, 6], "{opened:?}");
    let (prepared, cursor) = (out[0].1, out[1].1);
    assert_eq!(out[2].1, 3);
    let block = fetch(&mut c, cursor, FETCH_FIRST, 0, 10);
    assert_eq!(rows(&block).len(), 3);
    assert!(c
        .rpc(ProcId::CursorClose, vec![int(cursor)])
        .iter()
        .all(|t| !matches!(t, Token::Error(_))));

    let mut low = RpcParam::input("@low", TdsValue::Int(4));
    low.ty = TypeInfo::IntN(4);
    let again = c.rpc(
        ProcId::CursorExecute,
        vec![int(prepared), int_out(0), int(KEYSET), int(READ_ONLY), int_out(0), low],
    );
    let out = returned(&again);
    assert_eq!(out[1], (4, 1), "{again:?}");
    let block = fetch(&mut c, out[0].1, FETCH_NEXT, 0, 10);
    assert_eq!(id_name_rowstat(&block), [(Some(5), Some("e".into()), 1)]);

    // CURSOR_NAME: T-SQL knows the cursor by the new name.
    let named = c.rpc(ProcId::CursorOption, vec![int(out[0].1), int(2), text("api_named")]);
    assert!(message_numbers(&named).is_empty(), "{named:?}");
    let status = c.batch("SELECT CURSOR_STATUS('global', 'api_named')");
    assert_eq!(rows(&status), [vec![TdsValue::SmallInt(1)]]);

    assert!(message_numbers(&c.rpc(ProcId::CursorUnprepare, vec![int(prepared)])).is_empty());
    let stale = c.rpc(
        ProcId::CursorExecute,
        vec![int(prepared), int_out(0), int(KEYSET), int(READ_ONLY), int_out(0)],
    );
    assert_eq!(message_numbers(&stale), [16902]);
}

/// Opens a cursor over `query` asking for KEYSET and `ccopt`: its handle, the type and
/// concurrency used and the rows, and the response.
fn open_keyset(c: &mut Client, query: &str, ccopt: i32) -> (i32, [i32; 3], Vec<Token>) {
    let opened = c.rpc(
        ProcId::CursorOpen,
        vec![int_out(0), text(query), int_out(KEYSET), int_out(ccopt), int_out(0)],
    );
    let out = returned(&opened);
    assert_eq!(out.len(), 4, "{opened:?}");
    (out[0].1, [out[1].1, out[2].1, out[3].1], opened)
}

/// A named `sp_cursor` value of NVARCHAR.
fn nvarchar_value(name: &str, value: &str) -> RpcParam {
    let mut p = RpcParam::input(name, TdsValue::NVarChar(value.into()));
    p.ty = TypeInfo::NVarChar { max_len: 40, collation: Collation::default() };
    p
}

#[test]
fn a_keyset_cursor_over_a_heap_changes_its_rows_by_locator() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    // Two rows alike: only their locators tell them apart.
    let setup = c.batch(
        "CREATE TABLE h (id INT, name NVARCHAR(10)); \
         INSERT INTO h VALUES (1, N'a'), (1, N'a'), (2, N'b')",
    );
    assert!(message_numbers(&setup).is_empty(), "{setup:?}");
    let (cursor, used, opened) = open_keyset(&mut c, "SELECT id, name FROM h", OPTIMISTIC);
    assert_eq!(used, [KEYSET, OPTIMISTIC, 3], "{opened:?}");
    assert_eq!(opened[1], Token::TabName(vec![vec!["dbo".into(), "h".into()]]));
    let Token::ColInfo(info) = &opened[2] else { panic!("{opened:?}") };
    assert_eq!(info.iter().map(|i| i.table).collect::<Vec<_>>(), [1, 1, 0]);

    let block = fetch(&mut c, cursor, FETCH_FIRST, 0, 3);
    assert_eq!(id_name_rowstat(&block).len(), 3, "{block:?}");
    // The second of the two alike, updated; the third, deleted.
    let updated = c.rpc(
        ProcId::Cursor,
        vec![int(cursor), int(0x21), int(2), text(""), nvarchar_value("@name", "z")],
    );
    assert!(message_numbers(&updated).is_empty(), "{updated:?}");
    assert!(updated.iter().any(|t| matches!(t, Token::DoneInProc(d) if d.row_count == 1)));
    let deleted = c.rpc(ProcId::Cursor, vec![int(cursor), int(0x22), int(3), text("")]);
    assert!(message_numbers(&deleted).is_empty(), "{deleted:?}");
    let table = c.batch("SELECT name, COUNT(*) FROM h GROUP BY name ORDER BY name");
    assert_eq!(
        rows(&table),
        [
            vec![TdsValue::NVarChar("a".into()), TdsValue::Int(1)],
            vec![TdsValue::NVarChar("z".into()), TdsValue::Int(1)]
        ]
    );
    // Each row read again by its locator: the third is missing.
    let refreshed = fetch(&mut c, cursor, FETCH_REFRESH, 0, 0);
    assert_eq!(
        id_name_rowstat(&refreshed),
        [(Some(1), Some("a".into()), 1), (Some(1), Some("z".into()), 1), (None, None, 2)],
        "{refreshed:?}"
    );

    // T-SQL's positioned changes find a heap's rows the same way.
    let positioned = c.batch(
        "DECLARE hc CURSOR KEYSET FOR SELECT id, name FROM h; OPEN hc; \
         FETCH NEXT FROM hc; UPDATE h SET name = N'y' WHERE CURRENT OF hc; \
         CLOSE hc; DEALLOCATE hc; SELECT name FROM h ORDER BY name",
    );
    assert!(message_numbers(&positioned).is_empty(), "{positioned:?}");
    let names: Vec<Vec<TdsValue>> = rows(&positioned).into_iter().skip(1).collect();
    assert_eq!(names, [vec![TdsValue::NVarChar("y".into())], vec![TdsValue::NVarChar("z".into())]]);
}

#[test]
fn a_keyset_cursor_over_a_join_changes_the_table_it_is_told() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let setup = c.batch(
        "CREATE TABLE k (i INT, data NVARCHAR(30)); \
         CREATE TABLE t (i INT, row INT, data NVARCHAR(30)); \
         CREATE TABLE other (i INT); \
         INSERT INTO k VALUES (1, N'EDIT'); \
         INSERT INTO t VALUES (1, 1, N'TEST1'), (1, 2, N'TEST2')",
    );
    assert!(message_numbers(&setup).is_empty(), "{setup:?}");
    let (cursor, used, opened) = open_keyset(
        &mut c,
        "SELECT t.*, k.data AS kdata FROM k INNER JOIN t ON t.i = k.i ORDER BY t.row",
        OPTIMISTIC | 0x2000 | 0x4000,
    );
    assert_eq!(used, [KEYSET, OPTIMISTIC, 2], "{opened:?}");
    // Each column tells the driver its table and base column.
    assert_eq!(
        opened[1],
        Token::TabName(vec![vec!["dbo".into(), "k".into()], vec!["dbo".into(), "t".into()]])
    );
    let Token::ColInfo(info) = &opened[2] else { panic!("{opened:?}") };
    assert_eq!(
        info.iter().map(|i| (i.table, i.base_name.clone())).collect::<Vec<_>>(),
        [(2, None), (2, None), (2, None), (1, Some("data".to_string())), (0, None)]
    );

    let block = fetch(&mut c, cursor, FETCH_FIRST, 0, 2);
    assert_eq!(rows(&block).len(), 2, "{block:?}");
    // mssql-jdbc names the table of the columns it updates.
    let updated = c.rpc(
        ProcId::Cursor,
        vec![int(cursor), int(0x21), int(1), text("[dbo].[t]"), nvarchar_value("@data", "NEW")],
    );
    assert!(message_numbers(&updated).is_empty(), "{updated:?}");
    let updated = c.rpc(
        ProcId::Cursor,
        vec![int(cursor), int(0x21), int(2), text("k"), nvarchar_value("@data", "K2")],
    );
    assert!(message_numbers(&updated).is_empty(), "{updated:?}");
    let tables = c.batch("SELECT data FROM t ORDER BY row; SELECT data FROM k");
    assert_eq!(
        rows(&tables),
        [
            vec![TdsValue::NVarChar("NEW".into())],
            vec![TdsValue::NVarChar("TEST2".into())],
            vec![TdsValue::NVarChar("K2".into())]
        ]
    );
    let refreshed = fetch(&mut c, cursor, FETCH_REFRESH, 0, 0);
    let kdata: Vec<TdsValue> = rows(&refreshed).into_iter().map(|r| r[3].clone()).collect();
    assert_eq!(kdata, [TdsValue::NVarChar("K2".into()), TdsValue::NVarChar("K2".into())]);

    // A table the cursor does not read.
    let refused = c.rpc(
        ProcId::Cursor,
        vec![int(cursor), int(0x21), int(1), text("other"), nvarchar_value("@i", "3")],
    );
    assert_eq!(message_numbers(&refused), [16933], "{refused:?}");

    // An outer join's missing side has no row to change: such a cursor is read-only.
    let (_, used, opened) =
        open_keyset(&mut c, "SELECT t.row FROM t LEFT JOIN k ON k.i = t.row", OPTIMISTIC);
    assert_eq!(used, [STATIC, READ_ONLY, 2], "{opened:?}");
}

#[test]
fn optimistic_cursors_refuse_rows_changed_since_they_were_fetched() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let mut other = Client::connect(server.port);
    setup(&mut c);
    for ccopt in [OPTIMISTIC, OPTIMISTIC_VALUES] {
        let (cursor, used, opened) =
            open_keyset(&mut c, "SELECT id, name FROM t ORDER BY id", ccopt);
        assert_eq!(used, [KEYSET, ccopt, 5], "{opened:?}");
        let block = fetch(&mut c, cursor, FETCH_FIRST, 0, 2);
        assert_eq!(rows(&block).len(), 2);
        // Row 1 changed by another connection since the fetch.
        let changed = other.batch("UPDATE t SET name = N'other' WHERE id = 1");
        assert!(message_numbers(&changed).is_empty(), "{changed:?}");
        let refused = c.rpc(
            ProcId::Cursor,
            vec![int(cursor), int(0x21), int(1), text(""), nvarchar_value("@name", "mine")],
        );
        assert_eq!(message_numbers(&refused), [16934], "{refused:?}");
        let Some(Token::Error(message)) = refused.iter().find(|t| matches!(t, Token::Error(_)))
        else {
            unreachable!()
        };
        assert_eq!(
            message.message,
            "Optimistic concurrency check failed. The row was modified outside of this cursor."
        );
        let deleted = c.rpc(ProcId::Cursor, vec![int(cursor), int(0x22), int(1), text("")]);
        assert_eq!(message_numbers(&deleted), [16934], "{deleted:?}");
        // Row 2 is as fetched: changed through the cursor twice, the second change checked
        // against the first.
        for name in ["x", "y"] {
            let updated = c.rpc(
                ProcId::Cursor,
                vec![int(cursor), int(0x21), int(2), text(""), nvarchar_value("@name", name)],
            );
            assert!(message_numbers(&updated).is_empty(), "{updated:?}");
        }
        // Fetched again, row 1 can be changed.
        fetch(&mut c, cursor, FETCH_REFRESH, 0, 0);
        let updated = c.rpc(
            ProcId::Cursor,
            vec![int(cursor), int(0x21), int(1), text(""), nvarchar_value("@name", "mine")],
        );
        assert!(message_numbers(&updated).is_empty(), "{updated:?}");
        let names = c.batch("SELECT name FROM t WHERE id <= 2 ORDER BY id");
        assert_eq!(
            rows(&names),
            [vec![TdsValue::NVarChar("mine".into())], vec![TdsValue::NVarChar("y".into())]]
        );
        assert!(message_numbers(&c.rpc(ProcId::CursorClose, vec![int(cursor)])).is_empty());
    }

    // SCROLL_LOCKS makes no such check.
    let (cursor, used, _) = open_keyset(&mut c, "SELECT id, name FROM t", SCROLL_LOCKS);
    assert_eq!(used[1], SCROLL_LOCKS);
    fetch(&mut c, cursor, FETCH_FIRST, 0, 1);
    assert!(message_numbers(&other.batch("UPDATE t SET name = N'o' WHERE id = 1")).is_empty());
    let updated = c.rpc(
        ProcId::Cursor,
        vec![int(cursor), int(0x21), int(1), text(""), nvarchar_value("@name", "s")],
    );
    assert!(message_numbers(&updated).is_empty(), "{updated:?}");

    // A T-SQL OPTIMISTIC cursor checks its positioned changes the same way.
    let positioned = c.batch(
        "DECLARE oc CURSOR KEYSET OPTIMISTIC FOR SELECT id, name FROM t WHERE id = 3; \
         OPEN oc; FETCH NEXT FROM oc; UPDATE t SET name = N'changed' WHERE id = 3; \
         UPDATE t SET name = N'through' WHERE CURRENT OF oc",
    );
    assert_eq!(message_numbers(&positioned), [16934], "{positioned:?}");
}

#[test]
fn a_dynamic_cursor_sees_rows_changed_after_it_opened() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let mut other = Client::connect(server.port);
    setup(&mut c);
    let opened = c.rpc(
        ProcId::CursorOpen,
        vec![
            int_out(0),
            text("SELECT id, name FROM t"),
            int_out(DYNAMIC),
            int_out(OPTIMISTIC),
            int_out(0),
        ],
    );
    let out = returned(&opened);
    // Kept DYNAMIC, with no row count (-1): its rows are known only as they are fetched.
    assert_eq!(&out[1..], [(2, DYNAMIC), (3, OPTIMISTIC), (4, -1)], "{opened:?}");
    let cursor = out[0].1;
    let named = |rows: &[(i32, &str)]| -> Vec<(Option<i32>, Option<String>, i32)> {
        rows.iter().map(|(id, name)| (Some(*id), Some((*name).to_string()), 1)).collect()
    };
    let first = fetch(&mut c, cursor, FETCH_FIRST, 0, 2);
    assert_eq!(id_name_rowstat(&first), named(&[(1, "a"), (2, "b")]), "{first:?}");

    // Another connection's delete and insert, committed after the cursor opened, are seen
    // by the next fetch; a deleted row is not found rather than reported missing.
    let changed = other.batch("DELETE FROM t WHERE id = 3; INSERT INTO t VALUES (7, N'g')");
    assert!(message_numbers(&changed).is_empty(), "{changed:?}");
    let next = fetch(&mut c, cursor, FETCH_NEXT, 0, 2);
    assert_eq!(id_name_rowstat(&next), named(&[(4, "d"), (5, "e")]), "{next:?}");
    let next = fetch(&mut c, cursor, FETCH_NEXT, 0, 2);
    assert_eq!(id_name_rowstat(&next), named(&[(7, "g")]), "{next:?}");
    assert!(rows(&fetch(&mut c, cursor, FETCH_NEXT, 0, 2)).is_empty());
    let prev = fetch(&mut c, cursor, FETCH_PREV, 0, 2);
    assert_eq!(id_name_rowstat(&prev), named(&[(5, "e"), (7, "g")]), "{prev:?}");
    let relative = fetch(&mut c, cursor, FETCH_RELATIVE, -2, 1);
    assert_eq!(id_name_rowstat(&relative), named(&[(2, "b")]), "{relative:?}");

    // A positioned update of fetch buffer row 1, seen by a refresh and by the table.
    let updated = c.rpc(
        ProcId::Cursor,
        vec![int(cursor), int(0x21), int(1), text(""), nvarchar_value("@name", "z")],
    );
    assert!(message_numbers(&updated).is_empty(), "{updated:?}");
    let refreshed = fetch(&mut c, cursor, FETCH_REFRESH, 0, 0);
    assert_eq!(id_name_rowstat(&refreshed), named(&[(2, "z")]), "{refreshed:?}");
    // Changed by another since this fetch: the optimistic check refuses it.
    assert!(message_numbers(&other.batch("UPDATE t SET name = N'w' WHERE id = 2")).is_empty());
    let refused = c.rpc(ProcId::Cursor, vec![int(cursor), int(0x22), int(1), text("")]);
    assert_eq!(message_numbers(&refused), [16934], "{refused:?}");

    // No row numbers: ABSOLUTE is refused, and INFO and ROWCOUNT report none.
    let absolute = fetch(&mut c, cursor, FETCH_ABSOLUTE, 1, 1);
    assert_eq!(message_numbers(&absolute), [16925], "{absolute:?}");
    let info =
        c.rpc(ProcId::CursorFetch, vec![int(cursor), int(FETCH_INFO), int_out(0), int_out(0)]);
    assert_eq!(returned(&info)[1], (3, -1), "{info:?}");
    assert!(message_numbers(&c.rpc(ProcId::CursorClose, vec![int(cursor)])).is_empty());

    // A query a dynamic cursor cannot be built for (ORDER BY a column that is not the key)
    // is converted to KEYSET, and says so.
    let converted = c.rpc(
        ProcId::CursorOpen,
        vec![
            int_out(0),
            text("SELECT id, name FROM t ORDER BY name"),
            int_out(DYNAMIC),
            int_out(OPTIMISTIC),
            int_out(0),
        ],
    );
    assert_eq!(&returned(&converted)[1..], [(2, KEYSET), (3, OPTIMISTIC), (4, 5)], "{converted:?}");
}
