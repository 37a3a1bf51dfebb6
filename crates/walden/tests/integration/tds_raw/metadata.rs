//! What COLMETADATA and the values say of a column's type: nullability, the types and
//! collations declared for columns, variables, casts and subqueries, and warnings.

use walden_tds::*;

use super::{errors, execute_sql, output, returned, stream};
use crate::common::client::{rows, Client};
use crate::common::server::Server;
use crate::common::PASSWORD;

/// COLMETADATA's fNullable follows the column: clear for a NOT NULL table column, set for a
/// nullable one (issue 28, item 4).
#[test]
fn column_metadata_carries_nullability() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let tokens = c.batch(
        "CREATE TABLE nn (a int NOT NULL, b int NULL, s nvarchar(5) NOT NULL); \
         SELECT a, b, s FROM nn",
    );
    let columns = tokens
        .iter()
        .find_map(|t| match t {
            Token::ColMetadata(cols) => Some(cols.clone()),
            _ => None,
        })
        .expect("a result set");
    let nullable: Vec<(&str, bool)> = columns
        .iter()
        .map(|c| (c.name.as_str(), c.flags.contains(ColumnFlags::NULLABLE)))
        .collect();
    assert_eq!(nullable, [("a", false), ("b", true), ("s", false)]);
}

/// Columns declared SMALLDATETIME, SMALLMONEY, TEXT, NTEXT and IMAGE are described as
/// themselves, a text column with its own collation, and a statement's warning (8153) comes
/// before the statement's DONE, as SQL Server sends them.
#[test]
fn declared_types_collations_and_warnings_as_sql_server_sends_them() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let setup = c.batch(
        "CREATE TABLE w (id INT, sd SMALLDATETIME, sm SMALLMONEY, tx TEXT, nt NTEXT, im IMAGE, \
         cs VARCHAR(10) COLLATE Latin1_General_CS_AS); \
         INSERT INTO w VALUES (1, '2024-02-29 13:45:30', -7.5, 'abc', N'd\u{e9}f', 0x01, 'AbC'), \
         (2, NULL, NULL, NULL, NULL, NULL, NULL)",
    );
    assert_eq!(errors(&setup), Vec::<String>::new());
    let got = c.batch("SELECT sd, sm, tx, nt, im, cs FROM w ORDER BY id");
    let Some(Token::ColMetadata(columns)) = got.first() else { panic!("{got:?}") };
    let latin1_cs = Collation { info: 0x00C0_0409, sort_id: 0 };
    let default = Collation::default();
    let types: Vec<TypeInfo> = columns.iter().map(|c| c.ty).collect();
    assert_eq!(
        types,
        [
            TypeInfo::DateTimeN(4),
            TypeInfo::MoneyN(4),
            TypeInfo::Text { max_len: 0x7FFF_FFFF, collation: default },
            TypeInfo::NText { max_len: 0x7FFF_FFFE, collation: default },
            TypeInfo::Image { max_len: 0x7FFF_FFFF },
            TypeInfo::BigVarChar { max_len: 10, collation: latin1_cs },
        ]
    );
    assert_eq!(
        rows(&got),
        [
            vec![
                // 13:45:30 rounds up to 13:46.
                TdsValue::SmallDateTime { days: 45_349, minutes: 13 * 60 + 46 },
                TdsValue::Money(-75_000),
                TdsValue::VarChar(b"abc".to_vec()),
                TdsValue::NVarChar("d\u{e9}f".into()),
                TdsValue::Binary(vec![1]),
                TdsValue::VarChar(b"AbC".to_vec()),
            ],
            vec![TdsValue::Null; 6],
        ]
    );
    let got =
        c.batch("SET NOCOUNT ON; SELECT SUM(x) FROM (VALUES (1), (NULL)) v(x); PRINT 'after'");
    let warning = got.iter().position(|t| matches!(t, Token::Info(m) if m.number == 8153));
    assert_eq!(
        stream(&got),
        [
            "DONE(MORE 0x0 0)",
            "COLMETADATA",
            "ROW",
            "INFO",
            "DONE(MORE 0xc1 0)",
            "INFO",
            "DONE( 0x0 0)"
        ]
    );
    assert_eq!(warning, Some(3), "{got:?}");
}

/// A variable, a parameter, a CAST or CONVERT of SMALLDATETIME, SMALLMONEY, TEXT, NTEXT or
/// IMAGE goes out as that type, as a column does, with its value fitted to it (rounded to
/// the minute, range-checked), and SELECT INTO makes columns of it; an OUTPUT parameter
/// declared SMALLDATETIME comes back rounded.
#[test]
fn variables_and_casts_of_declared_types_go_out_as_themselves() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let got = c.batch(
        "DECLARE @d SMALLDATETIME = '2020-01-01 10:00:40', @m SMALLMONEY = 1.23456, \
         @t TEXT = 'tx', @n NTEXT = N'nt', @i IMAGE = 0x0102; \
         SELECT @d, @m, @t, @n, @i, CAST('2020-01-01 10:00:29' AS SMALLDATETIME), \
         CONVERT(SMALLMONEY, 2.5), CAST('2020-01-01 10:00:29' AS DATETIME)",
    );
    assert_eq!(errors(&got), Vec::<String>::new());
    let Some(Token::ColMetadata(columns)) = got.first() else { panic!("{got:?}") };
    let default = Collation::default();
    let types: Vec<TypeInfo> = columns.iter().map(|c| c.ty).collect();
    assert_eq!(
        types,
        [
            TypeInfo::DateTimeN(4),
            TypeInfo::MoneyN(4),
            TypeInfo::Text { max_len: 0x7FFF_FFFF, collation: default },
            TypeInfo::NText { max_len: 0x7FFF_FFFE, collation: default },
            TypeInfo::Image { max_len: 0x7FFF_FFFF },
            TypeInfo::DateTimeN(4),
            TypeInfo::MoneyN(4),
            TypeInfo::DateTimeN(8),
        ]
    );
    // The text types' TableName has one part, as mssql-jdbc requires (1 to 4).
    let parts: Vec<usize> = columns.iter().map(|c| c.table_name.len()).collect();
    assert_eq!(parts, [0, 0, 1, 1, 1, 0, 0, 0]);
    // 2020-01-01 is day 43,829; 10:00:40 rounds up to 10:01, 10:00:29 down to 10:00.
    assert_eq!(
        rows(&got),
        [vec![
            TdsValue::SmallDateTime { days: 43_829, minutes: 601 },
            TdsValue::Money(12_346),
            TdsValue::VarChar(b"tx".to_vec()),
            TdsValue::NVarChar("nt".into()),
            TdsValue::Binary(vec![1, 2]),
            TdsValue::SmallDateTime { days: 43_829, minutes: 600 },
            TdsValue::Money(25_000),
            TdsValue::DateTime { days: 43_829, ticks: (10 * 3600 + 29) * 300 },
        ]]
    );

    // SELECT INTO keeps the types; the new table's columns are of them.
    let got = c.batch(
        "DECLARE @d SMALLDATETIME = '2020-01-01 10:00:40'; \
         SELECT @d AS d, CAST(1.5 AS SMALLMONEY) AS m INTO #t; SELECT * FROM #t",
    );
    assert_eq!(errors(&got), Vec::<String>::new());
    let Some(columns) = got.iter().find_map(|t| match t {
        Token::ColMetadata(c) => Some(c),
        _ => None,
    }) else {
        panic!("{got:?}")
    };
    let types: Vec<TypeInfo> = columns.iter().map(|c| c.ty).collect();
    assert_eq!(types, [TypeInfo::DateTimeN(4), TypeInfo::MoneyN(4)]);

    // Out of range: SQL Server's errors for the conversion.
    for (sql, number) in [
        ("SELECT CAST(CAST('2080-01-01' AS DATETIME) AS SMALLDATETIME)", 298),
        ("SELECT CAST('2080-01-01' AS SMALLDATETIME)", 242),
        ("DECLARE @m SMALLMONEY = 300000", 8115),
        ("SELECT CONVERT(SMALLMONEY, 300000.5)", 8115),
    ] {
        let got = c.batch(sql);
        let numbers: Vec<i32> = got
            .iter()
            .filter_map(|t| match t {
                Token::Error(m) => Some(m.number),
                _ => None,
            })
            .collect();
        assert_eq!(numbers, [number], "{sql}: {got:?}");
    }
    let got = c.batch("SELECT TRY_CAST(CAST('2080-01-01' AS DATETIME) AS SMALLDATETIME)");
    assert_eq!(rows(&got), [vec![TdsValue::Null]]);

    // An OUTPUT parameter declared SMALLDATETIME, sent as DATETIME: set from a DATETIME with
    // seconds, it comes back on the minute.
    let got = execute_sql(
        &mut c,
        "SET @d = '2020-01-01 10:00:40'",
        "@d SMALLDATETIME OUTPUT",
        vec![output("@d", TypeInfo::DateTimeN(8), TdsValue::Null)],
    );
    assert_eq!(errors(&got), Vec::<String>::new());
    assert_eq!(
        returned(&got),
        [(
            "@d".to_string(),
            TypeInfo::DateTimeN(8),
            TdsValue::DateTime { days: 43_829, ticks: 601 * 60 * 300 }
        )]
    );
}

/// Issue 28: a scalar subquery's column goes out as the type of the subquery's column (a
/// SMALLDATETIME, SMALLMONEY, TEXT or IMAGE, a DECIMAL's precision and scale, a VARCHAR's
/// length), not as its values' or the holding type, and so do a CTE's, a derived table's and
/// a UNION's columns over one and SELECT INTO's.
#[test]
fn scalar_subqueries_go_out_as_their_columns_type() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let got = c.batch(
        "CREATE TABLE h (id INT PRIMARY KEY, d SMALLDATETIME, m SMALLMONEY, tx TEXT, im IMAGE, \
         price DECIMAL(10, 2), name VARCHAR(20)); \
         INSERT h VALUES (1, '2024-01-02 10:00', 1.5, 'a', 0x01, 1.5, 'ab')",
    );
    assert_eq!(errors(&got), Vec::<String>::new());
    let types = |c: &mut Client, sql: &str| {
        let got = c.batch(sql);
        assert_eq!(errors(&got), Vec::<String>::new());
        let columns = got.iter().find_map(|t| match t {
            Token::ColMetadata(c) => Some(c.clone()),
            _ => None,
        });
        columns.unwrap().iter().map(|c| c.ty).collect::<Vec<TypeInfo>>()
    };
    let default = Collation::default();
    assert_eq!(
        types(
            &mut c,
            "SELECT (SELECT MIN(d) FROM h), (SELECT MAX(m) FROM h), (SELECT tx FROM h), \
             (SELECT im FROM h), (SELECT MAX(price) FROM h), (SELECT name FROM h)"
        ),
        [
            TypeInfo::DateTimeN(4),
            TypeInfo::MoneyN(4),
            TypeInfo::Text { max_len: 0x7FFF_FFFF, collation: default },
            TypeInfo::Image { max_len: 0x7FFF_FFFF },
            TypeInfo::Decimal { precision: 10, scale: 2 },
            TypeInfo::BigVarChar { max_len: 20, collation: default },
        ]
    );
    assert_eq!(
        types(
            &mut c,
            "WITH w AS (SELECT (SELECT MIN(d) FROM h) AS x) \
             SELECT x, (SELECT y FROM (SELECT (SELECT MAX(price) FROM h) AS y) s) FROM w \
             UNION ALL SELECT d, price FROM h"
        ),
        [TypeInfo::DateTimeN(4), TypeInfo::Decimal { precision: 10, scale: 2 }]
    );
    assert_eq!(
        types(
            &mut c,
            "SELECT (SELECT MIN(d) FROM h) AS x, (SELECT MAX(price) FROM h) AS y INTO #s; \
             SELECT x, y FROM #s"
        ),
        [TypeInfo::DateTimeN(4), TypeInfo::Decimal { precision: 10, scale: 2 }]
    );
}
