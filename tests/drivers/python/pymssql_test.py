"""pymssql (FreeTDS's db-lib inside the wheel) against `walden serve`.

Usage: pymssql_test.py HOST PORT PASSWORD [DATABASE]. Prints one line per section and a FAIL
line per failed check; exits 1 if any check failed.

pymssql fills its %s / %(name)s parameters in on the client (quoted literals) and calls
procedures with RPC requests; with autocommit off it runs BEGIN TRAN / COMMIT TRAN /
ROLLBACK TRAN batches. It logs in with a batch of SET options (conn_properties).
"""

import decimal

import pymssql

from checks import (
    BAD_INPUT,
    DECLARED_EXPECTED,
    DECLARED_LITERALS,
    DECLARED_SELECT,
    DECLARED_TABLE,
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
checks = Checks("pymssql")

def connect(database="master", autocommit=True):
    return pymssql.connect(
        server=HOST,
        port=str(PORT),
        user="sa",
        password=PASSWORD,
        database=database,
        autocommit=autocommit,
        tds_version="7.4",
        encryption="off",
        # DATETIME2 parameters with microseconds (else they are cut to milliseconds).
        use_datetime2=True,
        login_timeout=10,
        timeout=30,
    )


def error_number(e):
    """The server's error number of a pymssql exception: its arguments are (number, text)."""
    return e.args[0] if e.args and isinstance(e.args[0], int) else None


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
    values = [value for _, value in TYPES_EXPECTED]
    values[0] = 100
    with connect(DATABASE) as conn, conn.cursor() as cur:
        marks = ", ".join(["%s"] * len(values))
        cur.execute(f"INSERT INTO types_t VALUES ({marks})", tuple(values))
        checks.eq("INSERT rowcount", cur.rowcount, 1)
        cur.execute("SELECT * FROM types_t WHERE i = %(id)s AND n = %(n)s", {"id": 100, "n": values[6]})
        row = cur.fetchone()
        checks.true("the inserted row is found by its parameters", row is not None)
        for (name, _), sent, got in zip(TYPES_EXPECTED, values, row or []):
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
        result = cur.callproc("add_one", (41, pymssql.output(int)))
        checks.eq("callproc OUTPUT parameter", result[1], 42)
        checks.eq("callproc return status", cur.returnvalue, 82)
        cur.execute("DECLARE @o INT; EXEC add_one @a = %s, @b = @o OUTPUT; SELECT @o", (9,))
        checks.eq("EXEC in a batch", cur.fetchone()[0], 10)


def bad_input():
    for autocommit in (True, False):
        with connect(DATABASE, autocommit=autocommit) as conn, conn.cursor() as cur:
            mode = "autocommit" if autocommit else "transaction"
            for sql, number in BAD_INPUT:
                try:
                    cur.execute(sql)
                    cur.fetchall()
                    checks.true(f"{mode}: {sql!r} raised no error (expected {number})", False)
                except pymssql.Error as e:
                    checks.eq(f"{mode}: error number of {sql!r}", error_number(e), number)
                checks.eq(f"{mode}: the connection works after {number}", scalar(cur, "SELECT 7"), 7)
            try:
                cur.execute("INSERT INTO k (id) VALUES (%s)", (1,))
                checks.true(f"{mode}: a duplicate key parameter raised no error", False)
            except pymssql.IntegrityError as e:
                checks.eq(f"{mode}: parameterized 2627", error_number(e), 2627)
            if not autocommit:
                conn.rollback()


def newer_types():
    # FreeTDS hands SQL_VARIANT values over as their bytes, for SQL Server too: only the
    # DATETIMEOFFSET is checked by value.
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute(NEWER_TYPES_SELECT)
        row = cur.fetchone()
        checks.eq("DATETIMEOFFSET", row[0], DTO_EXPECTED)
        checks.eq("a NULL SQL_VARIANT", row[4], None)


def declared_types():
    with connect(DATABASE) as conn, conn.cursor() as cur:
        cur.execute(DECLARED_TABLE)
        cur.execute(DECLARED_LITERALS)
        cur.execute(
            "INSERT INTO legacy_p VALUES (2, %s, %s, %s, %s, %s)",
            (
                # As text: pymssql writes a datetime with six fractional digits, which SQL
                # Server's SMALLDATETIME does not read either.
                "2024-03-01 08:15:29",
                decimal.Decimal("-12.3456"),
                LONG_TEXT,
                UNICODE_TEXT,
                # pymssql writes a bytearray as a 0x literal (bytes as a string).
                bytearray(b"\x01\x02"),
            ),
        )
        cur.execute("INSERT INTO legacy_p (id) VALUES (3)")
        cur.execute(DECLARED_SELECT)
        checks.eq("the values", [tuple(r) for r in cur.fetchall()], DECLARED_EXPECTED)


checks.section("setup", setup)
checks.section("types", types_query)
checks.section("parameters", parameters)
checks.section("procedure", procedure)
# pymssql's transactions are BEGIN TRAN batches, so the delayed COMMIT begins the next one.
checks.section(
    "transactions",
    lambda: checks.transactions(
        lambda autocommit: connect(DATABASE, autocommit),
        "COMMIT WITH (DELAYED_DURABILITY = ON); BEGIN TRAN",
    ),
)
checks.section("bad input", bad_input)
checks.section("newer types", newer_types)
checks.section("declared types", declared_types)
checks.finish()
