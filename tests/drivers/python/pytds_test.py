"""python-tds (pytds) against `walden serve`.

Usage: pytds_test.py HOST PORT PASSWORD [DATABASE]. Prints one line per section and a FAIL line
per failed check; exits 1 if any check failed.

pytds opens a transaction with a Transaction Manager request at login unless autocommit=True,
and commit()/rollback() are Transaction Manager requests that begin the next transaction: the
`transactions` section runs on such a connection.
"""

import datetime
import decimal

import pytds
from pytds_bulk import bulk_copy

from checks import (
    BAD_INPUT,
    DECLARED_AGGREGATES,
    DECLARED_EXPECTED,
    DECLARED_EXPRESSIONS,
    DECLARED_LITERALS,
    DECLARED_NESTED,
    DECLARED_NESTED_TYPES,
    DECLARED_SELECT,
    DECLARED_SUBQUERIES,
    DECLARED_SUBQUERY_NESTED,
    DECLARED_SUBQUERY_TYPES,
    DECLARED_TABLE,
    DECLARED_VIEW,
    DTO_EXPECTED,
    LONG_TEXT,
    NEWER_TYPES_SELECT,
    PROCEDURE,
    TYPES_EXPECTED,
    TYPES_SELECT,
    TYPES_TABLE,
    UNICODE_TEXT,
    Checks,
    args,
    scalar,
)

HOST, PORT, PASSWORD, DATABASE = args()
checks = Checks("pytds")


def connect(database="master", autocommit=True):
    return pytds.connect(
        server=HOST,
        port=PORT,
        user="sa",
        password=PASSWORD,
        database=database,
        autocommit=autocommit,
        login_timeout=10,
        timeout=30,
    )


def setup():
    with connect() as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE [{DATABASE}]")
        cur.execute(f"ALTER DATABASE [{DATABASE}] SET DELAYED_DURABILITY = ALLOWED")
    with connect(DATABASE) as conn, conn.cursor() as cur:
        checks.eq("DB_NAME() after a login to the new database", scalar(cur, "SELECT DB_NAME()"), DATABASE)
        cur.execute(TYPES_TABLE)
        cur.execute("CREATE TABLE k (id INT NOT NULL PRIMARY KEY, note NVARCHAR(20))")
        cur.execute("INSERT INTO k (id, note) VALUES (1, N'first')")
        cur.execute(PROCEDURE)


def types_query():
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute(TYPES_SELECT)
        names = [d[0] for d in cur.description]
        checks.eq("column names", names, [name for name, _ in TYPES_EXPECTED])
        row = cur.fetchone()
        for (name, expected), got in zip(TYPES_EXPECTED, row):
            checks.eq(f"column {name}", got, expected)
        checks.eq("a single row", cur.fetchone(), None)


def parameters():
    expected = [value for _, value in TYPES_EXPECTED]
    expected[0] = 100
    # pytds sends bytes as VARCHAR (Python 2's str); its Binary wrapper is VARBINARY.
    values = [pytds.Binary(v) if isinstance(v, bytes) else v for v in expected]
    with connect(DATABASE) as conn, conn.cursor() as cur:
        marks = ", ".join(["%s"] * len(values))
        cur.execute(f"INSERT INTO types_t VALUES ({marks})", values)
        checks.eq("INSERT rowcount", cur.rowcount, 1)
        cur.execute("SELECT * FROM types_t WHERE i = %(id)s AND n = %(n)s", {"id": 100, "n": values[6]})
        row = cur.fetchone()
        checks.true("the inserted row is found by its parameters", row is not None)
        for (name, _), sent, got in zip(TYPES_EXPECTED, expected, row or []):
            checks.eq(f"round trip of {name}", got, sent)
        cur.execute("UPDATE types_t SET x = x * %s WHERE i = %s", (2.0, 100))
        checks.eq("UPDATE rowcount", cur.rowcount, 1)
        checks.eq("the updated value", scalar(cur, "SELECT x FROM types_t WHERE i = %s", (100,)), -5.0)
        checks.eq(
            "a quote in a parameter is data",
            scalar(cur, "SELECT %s + N'!'", ("it's; DROP TABLE k --",)),
            "it's; DROP TABLE k --!",
        )


def procedure():
    with connect(DATABASE) as conn, conn.cursor() as cur:
        result = cur.callproc("add_one", (41, pytds.output(param_type="int")))
        checks.eq("callproc OUTPUT parameter", result[1], 42)
        checks.eq("callproc return status", cur.get_proc_return_status(), 82)
        result = cur.callproc("add_one", {"@a": 5, "@b": pytds.output(value=0, param_type="int")})
        # With a dict, the result lists the parameters in the dict's order.
        checks.eq("callproc by name, OUTPUT parameter", result[1], 6)
        checks.eq("callproc by name, return status", cur.get_proc_return_status(), 10)
        cur.execute("DECLARE @o INT; EXEC add_one @a = %s, @b = @o OUTPUT; SELECT @o", (9,))
        checks.eq("EXEC through sp_executesql", cur.fetchone()[0], 10)


def table_valued_parameters():
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TYPE dbo.order_lines AS TABLE "
            "(sku NVARCHAR(20) NOT NULL, qty INT, price DECIMAL(10,2))"
        )
        cur.execute(
            "CREATE PROCEDURE dbo.order_total @lines dbo.order_lines READONLY AS "
            "SELECT COUNT(*) AS n, SUM(qty * price) AS total, MIN(sku) AS first FROM @lines"
        )
        rows = [
            ("b-2", 2, decimal.Decimal("1.25")),
            ("a-1", 3, decimal.Decimal("10.00")),
            ("c-3", None, decimal.Decimal("99.50")),
        ]
        tvp = pytds.TableValuedParam(type_name="dbo.order_lines", rows=rows)
        cur.callproc("dbo.order_total", (tvp,))
        n, total, first = cur.fetchone()
        checks.eq("TVP to a procedure: rows", n, 3)
        checks.eq("TVP to a procedure: SUM, NULL qty left out", total, decimal.Decimal("32.50"))
        checks.eq("TVP to a procedure: MIN(sku)", first, "a-1")
        # A TableValuedParam's rows are an iterator, used up by the call that sends them.
        tvp = pytds.TableValuedParam(type_name="dbo.order_lines", rows=rows)
        cur.execute("SELECT COUNT(*) FROM %s WHERE qty IS NOT NULL", (tvp,))
        checks.eq("TVP in a parameterized query", cur.fetchone()[0], 2)


def batch_shapes():
    """What python-tds' own suite checks of a batch's token stream and of VARCHAR bytes."""
    with connect(DATABASE) as conn, conn.cursor() as cur:
        # Each assignment SELECT ends with a counted DONE: pytds reads it as a result without
        # columns, then the batch's SELECT as the third.
        cur.execute("DECLARE @v INT\nSELECT @v = 1\nSELECT @v = 2\nSELECT 'value'")
        checks.true("an assignment SELECT is a result without columns", not cur.description)
        checks.eq("nextset() after the first assignment", cur.nextset(), True)
        checks.true("the second assignment has no columns", not cur.description)
        checks.eq("nextset() after the second assignment", cur.nextset(), True)
        checks.eq("the batch's SELECT after the assignments", cur.fetchall(), [("value",)])
        checks.true("nothing after the batch's SELECT", not cur.nextset())
        cur.execute("DECLARE @w INT SELECT @w = 5")
        checks.eq("the assignment's row count", cur.rowcount, 1)

        # Binary to VARCHAR keeps the bytes in code page 1252: 0x90, which 1252 leaves
        # undefined, reaches pytds as that byte, and its cp1252 decoder refuses it, as with SQL
        # Server.
        try:
            scalar(cur, "SELECT CAST(0x90 AS varchar)")
            checks.true("CAST(0x90 AS varchar) decoded without error", False)
        except UnicodeDecodeError:
            pass
        checks.eq("the connection works after a bad byte", scalar(cur, "SELECT 1"), 1)
        checks.eq("CAST(0xE980 AS varchar)", scalar(cur, "SELECT CAST(0xE980 AS varchar)"), "\u00e9\u20ac")
        checks.eq("CAST('\u00e9\u20ac' AS varbinary)", scalar(cur, "SELECT CAST('\u00e9\u20ac' AS varbinary)"), b"\xe9\x80")
        checks.eq(
            "every byte round-trips through VARCHAR",
            scalar(cur, "SELECT CAST(CAST(0x00819D90FF41 AS varchar(10)) AS varbinary(10))"),
            b"\x00\x81\x9d\x90\xffA",
        )

        # SET TRANSACTION ISOLATION LEVEL shows as set, in sys.dm_exec_sessions and in DBCC
        # USEROPTIONS.
        levels = [
            ("READ UNCOMMITTED", 1, "read uncommitted"),
            ("READ COMMITTED", 2, "read committed"),
            ("REPEATABLE READ", 3, "repeatable read"),
            ("SERIALIZABLE", 4, "serializable"),
            ("SNAPSHOT", 5, "snapshot"),
        ]
        for level, code, name in levels:
            cur.execute(f"SET TRANSACTION ISOLATION LEVEL {level}")
            checks.eq(
                f"transaction_isolation_level under {level}",
                scalar(cur, "SELECT transaction_isolation_level FROM sys.dm_exec_sessions WHERE session_id = @@SPID"),
                code,
            )
            cur.execute("DBCC USEROPTIONS")
            options = dict(cur.fetchall())
            checks.eq(f"DBCC USEROPTIONS under {level}", options.get("isolation level"), name)


def pooled(autocommit=True):
    return pytds.connect(
        server=HOST,
        port=PORT,
        user="sa",
        password=PASSWORD,
        database=DATABASE,
        autocommit=autocommit,
        login_timeout=10,
        timeout=30,
        pooling=True,
    )


def pool():
    """pytds' pool resets a connection it hands out again with an sp_reset_connection RPC: the
    session as the login left it, and the transaction the last user left open rolled back
    (which the driver learns from the rollback ENVCHANGE)."""
    conn = pooled()
    cur = conn.cursor()
    spid = scalar(cur, "SELECT @@SPID")
    cur.execute("SET NOCOUNT ON; CREATE TABLE #pooled (i INT); USE master")
    conn.close()
    with pooled() as conn, conn.cursor() as cur:
        checks.eq("the pool hands out the same session", scalar(cur, "SELECT @@SPID"), spid)
        checks.eq("the reset dropped the temporary table", scalar(cur, "SELECT OBJECT_ID('tempdb..#pooled')"), None)
        checks.eq("the reset turned NOCOUNT off", scalar(cur, "SELECT @@OPTIONS & 512"), 0)
        checks.eq("the reset went back to the login database", scalar(cur, "SELECT DB_NAME()"), DATABASE)

    with connect(DATABASE) as watcher, watcher.cursor() as look:
        conn = pooled(autocommit=False)
        cur = conn.cursor()
        spid = scalar(cur, "SELECT @@SPID")
        cur.execute("INSERT INTO k (id, note) VALUES (%s, %s)", (30, "left open"))
        conn.close()
        with pooled(autocommit=False) as conn, conn.cursor() as cur:
            checks.eq("the pool hands out the same session (transaction)", scalar(cur, "SELECT @@SPID"), spid)
            checks.eq("the reset rolled the open transaction back", scalar(look, "SELECT COUNT(*) FROM k WHERE id = 30"), 0)
            checks.eq("the driver's next transaction", scalar(cur, "SELECT @@TRANCOUNT"), 1)
            cur.execute("INSERT INTO k (id, note) VALUES (%s, %s)", (31, "committed"))
            conn.commit()
            checks.eq("a commit after the reset", scalar(look, "SELECT COUNT(*) FROM k WHERE id = 31"), 1)


def procedure_defaults():
    """A parameter passed as pytds.default takes the procedure's declared default."""
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute("CREATE PROCEDURE with_defaults @a INT, @b INT = 5, @c NVARCHAR(10) = N'dflt' AS SELECT @a + @b, @c")
        cur.callproc("with_defaults", (1, pytds.default, pytds.default))
        checks.eq("callproc with default parameters", list(cur.fetchone()), [6, "dflt"])
        cur.callproc("with_defaults", {"@a": 2, "@c": pytds.default})
        checks.eq("callproc with a named default parameter", list(cur.fetchone()), [7, "dflt"])


def bad_input():
    for autocommit in (True, False):
        with connect(DATABASE, autocommit=autocommit) as conn, conn.cursor() as cur:
            mode = "autocommit" if autocommit else "transaction"
            for sql, number in BAD_INPUT:
                try:
                    cur.execute(sql)
                    cur.fetchall()
                    checks.true(f"{mode}: {sql!r} raised no error (expected {number})", False)
                except pytds.Error as e:
                    checks.eq(f"{mode}: error number of {sql!r}", getattr(e, "msg_no", None), number)
                checks.eq(f"{mode}: the connection works after {number}", scalar(cur, "SELECT 7"), 7)
            try:
                cur.execute("INSERT INTO k (id) VALUES (%s)", (1,))
                checks.true(f"{mode}: a duplicate key parameter raised no error", False)
            except pytds.IntegrityError as e:
                checks.eq(f"{mode}: parameterized 2627", e.msg_no, 2627)
            if not autocommit:
                conn.rollback()


def newer_types():
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute(NEWER_TYPES_SELECT)
        dto, vi, vn, vd, vz = cur.fetchone()
        checks.eq("DATETIMEOFFSET", dto, DTO_EXPECTED)
        checks.eq("DATETIMEOFFSET's offset", dto.utcoffset().total_seconds(), 7200.0)
        checks.eq("SQL_VARIANT values", [vi, vn, vd, vz], [42, "text", decimal.Decimal("1.25"), None])


def declared_types():
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute(DECLARED_TABLE)
        cur.execute(DECLARED_LITERALS)
        cur.execute(
            "INSERT INTO legacy_p VALUES (2, %s, %s, %s, %s, %s)",
            (
                datetime.datetime(2024, 3, 1, 8, 15, 29),
                decimal.Decimal("-12.3456"),
                LONG_TEXT,
                UNICODE_TEXT,
                # Plain bytes go as text (pytds' bytes_to_unicode); IMAGE takes binary only.
                pytds.Binary(b"\x01\x02"),
            ),
        )
        cur.execute("INSERT INTO legacy_p (id) VALUES (3)")
        cur.execute(DECLARED_SELECT)
        # The wire types: DATETIMN and MONEYN of 4 bytes, which pytds names by SQL Server's
        # smalldatetime and smallmoney type ids (58, 122), TEXTTYPE, NTEXTTYPE, IMAGETYPE.
        checks.eq(
            "the columns' TDS types",
            [(d[1], d[3]) for d in cur.description][:2] + [d[1] for d in cur.description][2:],
            [(58, 4), (122, 4), 0x23, 0x63, 0x22],
        )
        checks.eq("the values", [tuple(r) for r in cur.fetchall()], DECLARED_EXPECTED)
        # A variable, CAST and CONVERT of these types: the same wire types, the values fitted.
        cur.execute(
            "DECLARE @d SMALLDATETIME = '2020-01-01 10:00:40', @m SMALLMONEY = 1.23456; "
            "SELECT @d, @m, CAST('x' AS TEXT), CONVERT(NTEXT, N'y'), CAST(0x01 AS IMAGE)"
        )
        checks.eq(
            "variables' and casts' TDS types",
            [(d[1], d[3]) for d in cur.description][:2] + [d[1] for d in cur.description][2:],
            [(58, 4), (122, 4), 0x23, 0x63, 0x22],
        )
        checks.eq(
            "variables' and casts' values",
            tuple(cur.fetchone()),
            (datetime.datetime(2020, 1, 1, 10, 1), decimal.Decimal("1.2346"), "x", "y", b"\x01"),
        )
        # Expressions over them: each typed as SQL Server types it.
        wire = lambda d: (d[1], d[3] if d[1] in (58, 122, 61, 60) else None)
        for exprs in (DECLARED_EXPRESSIONS, DECLARED_AGGREGATES):
            # Row 2: row 1's SMALLMONEY is the largest, which sm * 2 overflows (8115).
            where = " WHERE id = 2" if exprs is DECLARED_EXPRESSIONS else ""
            cur.execute(f"SELECT {', '.join(e for e, _ in exprs)} FROM legacy_p{where}")
            got = [wire(d) for d in cur.description]
            for (expr, expected), actual in zip(exprs, got):
                checks.eq(f"the TDS type of {expr}", actual, expected)
            cur.fetchall()
        cur.execute("SELECT sd + 1, sm - 1 FROM legacy_p WHERE id = 2")
        checks.eq(
            "sd + 1's and sm - 1's values",
            tuple(cur.fetchone()),
            (datetime.datetime(2024, 3, 2, 8, 15), decimal.Decimal("-13.3456")),
        )
        cur.execute(DECLARED_VIEW)
        cur.execute(DECLARED_NESTED)
        checks.eq(
            "a UNION's, a view's and a derived table's types",
            [wire(d) for d in cur.description],
            DECLARED_NESTED_TYPES,
        )
        checks.eq(
            "their values",
            tuple(cur.fetchone()),
            (
                datetime.datetime(2024, 2, 29, 13, 46),
                datetime.datetime(2024, 3, 1, 13, 46),
                decimal.Decimal("214748.3647"),
            ),
        )


def subqueries():
    """Issue 28: a scalar subquery's column, and what is built over one (a CTE, a derived table,
    a UNION, SELECT INTO), go out as the subquery's column's type; EXISTS and IN work over the
    held types."""
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute(DECLARED_SUBQUERIES)
        got = []
        for d in cur.description:
            if d[1] == 106:
                got.append((d[1], d[4], d[5]))
            elif d[1] == 167:
                got.append((d[1], d[3]))
            else:
                got.append(d[1])
        checks.eq("the subqueries' TDS types", got, DECLARED_SUBQUERY_TYPES)
        checks.eq("the SMALLDATETIME's and SMALLMONEY's sizes", [d[3] for d in cur.description][:2], [4, 4])
        row = cur.fetchone()
        checks.eq(
            "the subqueries' values",
            (row[0], row[1], row[2], row[4], row[5], row[6]),
            (
                datetime.datetime(2024, 2, 29, 13, 46),
                decimal.Decimal("214748.3647"),
                "plain",
                b"\xca\xfe",
                decimal.Decimal("3.00"),
                "plain",
            ),
        )
        cur.execute(DECLARED_SUBQUERY_NESTED)
        checks.eq(
            "a CTE's, a derived table's and a UNION's column over a subquery",
            [(d[1], d[3]) for d in cur.description],
            [(58, 4), (122, 4)],
        )
        cur.fetchall()
        cur.execute("SELECT (SELECT MIN(sd) FROM legacy_p) AS x, (SELECT MAX(sm) FROM legacy_p) AS y INTO #sub")
        cur.execute("SELECT x, y FROM #sub")
        checks.eq("SELECT INTO's columns from subqueries", [(d[1], d[3]) for d in cur.description], [(58, 4), (122, 4)])
        cur.fetchall()
        cur.execute(
            "SELECT id FROM legacy_p WHERE EXISTS (SELECT 1 FROM legacy_p p2 WHERE p2.sd > legacy_p.sd) "
            "AND sm IN (SELECT sm FROM legacy_p) ORDER BY id"
        )
        checks.eq("EXISTS and IN over SMALLDATETIME and SMALLMONEY", cur.fetchall(), [(1,)])


def describe_first_result_set():
    """sp_describe_first_result_set as an RPC (callproc) and in a batch: the first result set's
    columns, described without running the batch; its errors (11529 after the batch's own)."""
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.callproc(
            "sp_describe_first_result_set",
            ("SELECT id, sd + 1 AS next_day, tx, @p AS p FROM legacy_p", "@p DECIMAL(9, 2)"),
        )
        names = [d[0] for d in cur.description]
        checks.eq(
            "the result's first and last columns",
            (names[0], names[-1]),
            ("is_hidden", "tds_collation_sort_id"),
        )
        wanted = ["column_ordinal", "name", "system_type_id", "system_type_name"]
        wanted += ["max_length", "precision", "scale"]
        got = [tuple(r[names.index(c)] for c in wanted) for r in cur.fetchall()]
        checks.eq(
            "the described columns",
            got,
            [
                (1, "id", 56, "int", 4, 10, 0),
                (2, "next_day", 58, "smalldatetime", 4, 16, 0),
                (3, "tx", 35, "text", 16, 0, 0),
                (4, "p", 106, "decimal(9,2)", 5, 9, 2),
            ],
        )
        cur.execute("EXEC sp_describe_first_result_set N'DELETE FROM legacy_p'")
        checks.eq("a batch without a result set: no rows", cur.fetchall(), [])
        checks.eq("nothing ran", scalar(cur, "SELECT COUNT(*) FROM legacy_p"), 3)
        try:
            cur.execute("EXEC sp_describe_first_result_set N'SELECT nope FROM legacy_p'")
            checks.true("an unknown column raised no error", False)
        except pytds.Error as e:
            checks.eq("the error of a batch that cannot be described", e.msg_no, 11529)
        checks.eq("the connection works after 11529", scalar(cur, "SELECT 7"), 7)
        # Issue 28: an unknown column is found from the catalog, whatever the table holds.
        cur.execute("CREATE TABLE described_t (id INT IDENTITY PRIMARY KEY, code VARCHAR(10) NOT NULL UNIQUE, twice AS id * 2)")
        try:
            cur.execute("EXEC sp_describe_first_result_set N'SELECT nope FROM described_t'")
            checks.true("an unknown column of an empty table raised no error", False)
        except pytds.Error as e:
            checks.eq("an unknown column of an empty table", e.msg_no, 11529)
        # Which columns are identity, computed and updatable; with browse mode 1 the source
        # table and column, unique keys, and the key column the SELECT leaves out, hidden.
        props = "name, is_hidden, is_identity_column, is_computed_column, is_updateable, is_part_of_unique_key"
        cur.execute(
            f"SELECT {props}, source_table, source_column FROM sys.dm_exec_describe_first_result_set("
            "N'SELECT code, twice, id + 1 AS e FROM described_t', NULL, 1)"
        )
        checks.eq(
            "browse mode 1",
            [tuple(r) for r in cur.fetchall()],
            [
                ("code", False, False, False, True, True, "described_t", "code"),
                ("twice", False, False, True, False, False, "described_t", "twice"),
                ("e", False, False, False, False, False, None, None),
                ("id", True, True, False, False, True, "described_t", "id"),
            ],
        )
        cur.callproc("sp_describe_first_result_set", ("SELECT id, code FROM described_t", None, 0))
        names = [d[0] for d in cur.description]
        wanted = ["name", "is_identity_column", "is_updateable", "is_part_of_unique_key", "source_table"]
        checks.eq(
            "browse mode 0",
            [tuple(r[names.index(c)] for c in wanted) for r in cur.fetchall()],
            [("id", True, False, None, None), ("code", False, True, None, None)],
        )
        # Described without reading a row: a row another transaction holds does not block it,
        # though the SELECT itself waits for that row.
        with connect(DATABASE, autocommit=False) as other, other.cursor() as ocur:
            ocur.execute("UPDATE legacy_p SET sm = sm WHERE id = 1")
            cur.execute("SET LOCK_TIMEOUT 1000")
            cur.execute("EXEC sp_describe_first_result_set N'SELECT id, sd FROM legacy_p'")
            checks.eq(
                "described while another transaction holds a row",
                [r[2] for r in cur.fetchall()],
                ["id", "sd"],
            )
            try:
                cur.execute("SELECT id, sd FROM legacy_p")
                cur.fetchall()
                checks.true("the SELECT itself waited for the locked row", False)
            except pytds.Error as e:
                checks.eq("the SELECT itself waits for the locked row", e.msg_no, 1222)
            other.rollback()
        cur.execute("SET LOCK_TIMEOUT -1")


def xml_type():
    """An xml column read (XMLTYPE in COLMETADATA and ROW) and an xml parameter sent as XMLTYPE."""
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE xdocs (id INT PRIMARY KEY, body XML)")
        body = pytds.tds_base.Param(type=pytds.tds_types.XmlType(), value="<a  n='1'><b>x &amp; y</b></a>")
        cur.execute("INSERT INTO xdocs VALUES (1, %s)", (body,))
        cur.execute("SELECT body, body.value('(/a/@n)[1]', 'int') FROM xdocs WHERE id = 1")
        got, n = cur.fetchone()
        checks.eq("an xml column's canonical text", got, '<a n="1"><b>x &amp; y</b></a>')
        checks.eq("the column's type code is XMLTYPE", cur.description[0][1], 0xF1)
        checks.eq("value() over the stored xml", n, 1)
        param = pytds.tds_base.Param(type=pytds.tds_types.XmlType(), value="<r><i>3</i><i>4</i></r>")
        checks.eq(
            "an xml parameter's nodes()",
            scalar(cur, "SELECT SUM(t.c.value('.', 'int')) FROM %s.nodes('/r/i') AS t(c)", (param,)),
            7,
        )
        checks.eq("a NULL xml value", scalar(cur, "SELECT CAST(NULL AS xml)"), None)


def plans_and_statistics():
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute("SET SHOWPLAN_TEXT ON")
        cur.execute("SELECT note FROM k WHERE id = 1")
        checks.eq("SHOWPLAN_TEXT's first result", [d[0] for d in cur.description], ["StmtText"])
        text = cur.fetchall()
        checks.true(f"the statement's text first: {text}", "SELECT note FROM k" in text[0][0])
        checks.true("then the plan", cur.nextset())
        plan = [row[0] for row in cur.fetchall()]
        checks.true(f"a seek on the key: {plan}", any("|--Clustered Index Seek(" in p for p in plan))
        cur.execute("SET SHOWPLAN_TEXT OFF")
        checks.eq("the statement runs again", scalar(cur, "SELECT note FROM k WHERE id = 1"), "first")
        cur.execute("SET STATISTICS IO ON")
        cur.execute("SELECT note FROM k WHERE id = 1")
        cur.fetchall()
        # The messages after the rows are read with the rest of the response.
        cur.nextset()
        texts = [str(m[1]) for m in cur.messages or []]
        checks.true(f"STATISTICS IO's message: {texts}", any("Table 'k'. Scan count 1, logical reads" in t for t in texts))
        cur.execute("SET STATISTICS IO OFF")


checks.section("setup", setup)
checks.section("types", types_query)
checks.section("parameters", parameters)
checks.section("procedure", procedure)
checks.section("procedure defaults", procedure_defaults)
checks.section("table-valued parameters", table_valued_parameters)
# pytds' transactions are the Transaction Manager's: BEGIN at login, and COMMIT and ROLLBACK
# each begin the next, the delayed COMMIT too.
checks.section(
    "transactions",
    lambda: checks.transactions(
        lambda autocommit: connect(DATABASE, autocommit),
        "COMMIT WITH (DELAYED_DURABILITY = ON)",
    ),
)
checks.section("pool", pool)
checks.section("bad input", bad_input)
checks.section("batch shapes", batch_shapes)
checks.section("newer types", newer_types)
checks.section("xml", xml_type)
checks.section("declared types", declared_types)
checks.section("subqueries", subqueries)
checks.section("sp_describe_first_result_set", describe_first_result_set)
checks.section("plans and statistics", plans_and_statistics)
checks.section("bulk copy", lambda: bulk_copy(connect, checks, DATABASE))
checks.finish()
