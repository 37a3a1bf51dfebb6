"""What the Python driver programs share: arguments, the expected values of the type checks,
and a check runner that reports every failed assertion before exiting non-zero."""

import datetime
import decimal
import os
import sys
import traceback
import uuid

# NVARCHAR text beyond Latin-1 and beyond the BMP (a UTF-16 surrogate pair).
UNICODE_TEXT = "Grüße, 日本語 ✓ \U0001F600"
# Longer than any packet: NVARCHAR(MAX) goes as PLP chunks.
LONG_TEXT = "walden-" * 3000 + "é"

# The one row every program selects, as T-SQL expressions and as the values expected back.
TYPES_SELECT = (
    "SELECT CAST(42 AS INT) AS i, CAST(9007199254740993 AS BIGINT) AS b, CAST(1 AS BIT) AS f, "
    "CAST(12345678.91 AS DECIMAL(10,2)) AS d, CAST(-2.5 AS FLOAT) AS x, "
    "CAST('abc' AS VARCHAR(20)) AS v, N'" + UNICODE_TEXT + "' AS n, "
    "REPLICATE(CAST(N'walden-' AS NVARCHAR(MAX)), 3000) + N'é' AS nmax, "
    "CAST(0xDEADBEEF00 AS VARBINARY(16)) AS vb, CAST('2024-02-29' AS DATE) AS dt, "
    "CAST('2024-02-29 13:45:56.123456' AS DATETIME2) AS dt2, "
    "CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS UNIQUEIDENTIFIER) AS g, "
    "CAST(NULL AS INT) AS ni, CAST(NULL AS NVARCHAR(10)) AS nn, CAST(NULL AS DATE) AS nd"
)
TYPES_EXPECTED = [
    ("i", 42),
    ("b", 9007199254740993),
    ("f", True),
    ("d", decimal.Decimal("12345678.91")),
    ("x", -2.5),
    ("v", "abc"),
    ("n", UNICODE_TEXT),
    ("nmax", LONG_TEXT),
    ("vb", b"\xde\xad\xbe\xef\x00"),
    ("dt", datetime.date(2024, 2, 29)),
    ("dt2", datetime.datetime(2024, 2, 29, 13, 45, 56, 123456)),
    ("g", uuid.UUID("6F9619FF-8B86-D011-B42D-00C04FC964FF")),
    ("ni", None),
    ("nn", None),
    ("nd", None),
]

# The table the parameterized statements fill: one column per checked type.
TYPES_TABLE = (
    "CREATE TABLE types_t (i INT NOT NULL PRIMARY KEY, b BIGINT, f BIT, d DECIMAL(10,2), "
    "x FLOAT, v VARCHAR(20), n NVARCHAR(40), nmax NVARCHAR(MAX), vb VARBINARY(16), dt DATE, "
    "dt2 DATETIME2, g UNIQUEIDENTIFIER, ni INT, nn NVARCHAR(10), nd DATE)"
)

PROCEDURE = (
    "CREATE PROCEDURE add_one @a INT, @b INT OUTPUT AS "
    "BEGIN SET @b = @a + 1; RETURN @a * 2 END"
)

# Bad input: (statement, the error number SQL Server raises for it).
BAD_INPUT = [
    ("SELECT 1 +", 102),
    # A batch cut short after a keyword: 102 naming it, as SQL Server words it (156 is for a
    # keyword where it does not fit); pytds raises ProgrammingError for 102.
    ("select ", 102),
    ("SELECT * FROM", 102),
    ("SELECT * FROM k WHERE", 102),
    ("SELECT , FROM k", 102),
    ("SELECT 1 FROM k WHERE FROM", 156),
    ("SELECT * FROM no_such_table", 208),
    ("SELECT 1 / 0", 8134),
    ("INSERT INTO k (id) VALUES (1)", 2627),
]


def args():
    """host, port, password, database: from argv, else WALDEN_HOST/PORT/PASSWORD/DATABASE."""
    names = ["WALDEN_HOST", "WALDEN_PORT", "WALDEN_PASSWORD", "WALDEN_DATABASE"]
    defaults = ["127.0.0.1", "1433", None, "drivers"]
    values = []
    for i, (name, default) in enumerate(zip(names, defaults)):
        value = sys.argv[i + 1] if len(sys.argv) > i + 1 else os.environ.get(name, default)
        if value is None:
            sys.exit(f"usage: {sys.argv[0]} HOST PORT PASSWORD [DATABASE] (or ${name})")
        values.append(value)
    return values[0], int(values[1]), values[2], values[3]


class Checks:
    """Runs named sections; a failed check or an exception fails its section and the run."""

    def __init__(self, driver):
        self.driver = driver
        self.failures = 0
        self.checked = 0

    def eq(self, what, got, expected):
        self.checked += 1
        if got != expected or type(got) is not type(expected):
            self.failures += 1
            print(f"FAIL {what}: got {got!r:.200}, expected {expected!r:.200}", flush=True)

    def true(self, what, cond):
        self.checked += 1
        if not cond:
            self.failures += 1
            print(f"FAIL {what}", flush=True)

    def section(self, name, fn):
        before = self.failures
        try:
            fn()
        except Exception:
            self.failures += 1
            print(f"FAIL {name}: exception", flush=True)
            traceback.print_exc(file=sys.stdout)
        status = "ok" if self.failures == before else "FAILED"
        print(f"{self.driver}: {name}: {status}", flush=True)

    def finish(self):
        print(f"{self.driver}: {self.checked} checks, {self.failures} failures", flush=True)
        sys.exit(1 if self.failures else 0)

    def transactions(self, connect, delayed_commit):
        """Transactions on table k of the database `connect(autocommit=...)` connects to:
        T-SQL's BEGIN TRAN, COMMIT WITH (DELAYED_DURABILITY = ON) in a database that ALLOWS
        it, and ROLLBACK; then the driver's own, with autocommit off: rollback(), commit(),
        and `delayed_commit`, the batch that commits delayed and leaves the connection as the
        driver expects it after a commit."""
        with connect(autocommit=True) as watcher, watcher.cursor() as look:
            count = "SELECT COUNT(*) FROM k WHERE id = %s"

            with connect(autocommit=True) as conn, conn.cursor() as cur:
                cur.execute("BEGIN TRAN")
                cur.execute("INSERT INTO k (id, note) VALUES (%s, %s)", (10, "delayed"))
                self.eq("@@TRANCOUNT inside BEGIN TRAN", scalar(cur, "SELECT @@TRANCOUNT"), 1)
                cur.execute("COMMIT WITH (DELAYED_DURABILITY = ON)")
                self.eq("@@TRANCOUNT after the delayed commit", scalar(cur, "SELECT @@TRANCOUNT"), 0)
                self.eq("a delayed commit is visible", scalar(look, count, (10,)), 1)
                cur.execute("BEGIN TRAN")
                cur.execute("INSERT INTO k (id, note) VALUES (%s, %s)", (11, "rolled back"))
                cur.execute("ROLLBACK")
                self.eq("a rolled-back insert is gone", scalar(look, count, (11,)), 0)

            with connect(autocommit=False) as conn, conn.cursor() as cur:
                self.eq(f"@@TRANCOUNT in a {self.driver} transaction", scalar(cur, "SELECT @@TRANCOUNT"), 1)
                cur.execute("INSERT INTO k (id, note) VALUES (%s, %s)", (20, "rollback"))
                conn.rollback()
                self.eq("conn.rollback() undid the insert", scalar(look, count, (20,)), 0)
                cur.execute("INSERT INTO k (id, note) VALUES (%s, %s)", (21, "commit"))
                conn.commit()
                self.eq("conn.commit() made the insert visible", scalar(look, count, (21,)), 1)
                self.eq("a new transaction after commit", scalar(cur, "SELECT @@TRANCOUNT"), 1)
                cur.execute("INSERT INTO k (id, note) VALUES (%s, %s)", (22, "delayed"))
                cur.execute(delayed_commit)
                self.eq("a delayed COMMIT ends the driver's transaction", scalar(look, count, (22,)), 1)
                conn.rollback()
                self.eq("the connection still works", scalar(cur, "SELECT COUNT(*) FROM k"), 4)
                conn.commit()


def scalar(cur, sql, params=None):
    """The first value of the first row `sql` returns."""
    cur.execute(sql, params)
    return cur.fetchone()[0]

# DATETIMEOFFSET and SQL_VARIANT values, and what they read back as (a DATETIMEOFFSET as an
# aware datetime at its own offset).
NEWER_TYPES_SELECT = (
    "SELECT CAST('2024-03-01 08:30:00.125 +02:00' AS DATETIMEOFFSET(3)) AS dto, "
    "CAST(42 AS SQL_VARIANT) AS vi, CAST(N'text' AS SQL_VARIANT) AS vn, "
    "CAST(CAST(1.25 AS DECIMAL(5,2)) AS SQL_VARIANT) AS vd, CAST(NULL AS SQL_VARIANT) AS vz"
)
DTO_EXPECTED = datetime.datetime(
    2024, 3, 1, 8, 30, 0, 125000, tzinfo=datetime.timezone(datetime.timedelta(hours=2))
)

# SMALLDATETIME, SMALLMONEY, TEXT, NTEXT and IMAGE columns, one row written from literals (its
# SMALLDATETIME rounded up to the minute), one from parameters, one of NULLs.
DECLARED_TABLE = (
    "CREATE TABLE legacy_p (id INT PRIMARY KEY, sd SMALLDATETIME, sm SMALLMONEY, tx TEXT, "
    "nt NTEXT, im IMAGE)"
)
DECLARED_LITERALS = (
    "INSERT INTO legacy_p VALUES (1, '2024-02-29 13:45:30', 214748.3647, 'plain', "
    f"N'{UNICODE_TEXT}', 0xCAFE)"
)
DECLARED_SELECT = "SELECT sd, sm, tx, nt, im FROM legacy_p ORDER BY id"
DECLARED_EXPECTED = [
    (
        datetime.datetime(2024, 2, 29, 13, 46),
        decimal.Decimal("214748.3647"),
        "plain",
        UNICODE_TEXT,
        b"\xca\xfe",
    ),
    (datetime.datetime(2024, 3, 1, 8, 15), decimal.Decimal("-12.3456"), LONG_TEXT, UNICODE_TEXT, b"\x01\x02"),
    (None, None, None, None, None),
]


# Expressions over those columns, typed as SQL Server types them (data type precedence; ISNULL
# the first argument's type; MIN, MAX and DATEADD keep theirs; SUM and AVG of SMALLMONEY are
# MONEY), with their TDS type code and length as pytds describes them: 58/4 SMALLDATETIME (DATETIMN
# 4), 122/4 SMALLMONEY (MONEYN 4), 61/8 DATETIME, 60/8 MONEY, 0x23 TEXT, 0x63 NTEXT, 0x22 IMAGE.
DECLARED_EXPRESSIONS = [
    ("sd + 1", (58, 4)),
    ("ISNULL(sd, GETDATE())", (58, 4)),
    ("COALESCE(sd, '2020-01-01')", (58, 4)),
    ("CASE WHEN id = 1 THEN sd END", (58, 4)),
    ("DATEADD(MINUTE, 5, sd)", (58, 4)),
    ("sd + CAST(0 AS DATETIME)", (61, 8)),
    ("sm * 2", (122, 4)),
    ("-sm", (122, 4)),
    ("ISNULL(sm, 0)", (122, 4)),
    ("sm + $1", (60, 8)),
    ("ISNULL(tx, 'x')", (0x23, None)),
    ("COALESCE(nt, N'y')", (0x63, None)),
    ("CASE WHEN id > 0 THEN im END", (0x22, None)),
]
DECLARED_AGGREGATES = [
    ("MIN(sd)", (58, 4)),
    ("MAX(sm)", (122, 4)),
    ("SUM(sm)", (60, 8)),
    ("AVG(sm)", (60, 8)),
]
# A UNION with NULL, a derived table and a view keep the type of their column's expression.
DECLARED_VIEW = "CREATE VIEW legacy_v AS SELECT id, sd + 1 AS next_day, ISNULL(sm, 0) AS amount FROM legacy_p"
DECLARED_NESTED = (
    "SELECT u.x, v.next_day, v.amount FROM (SELECT sd AS x FROM legacy_p WHERE id = 1 UNION ALL SELECT NULL) u "
    "CROSS JOIN (SELECT next_day, amount FROM legacy_v WHERE id = 1) v"
)
DECLARED_NESTED_TYPES = [(58, 4), (58, 4), (122, 4)]
# A scalar subquery goes out as its column's type (a DECIMAL's precision and scale, a
# VARCHAR's length), as do a CTE's, a derived table's and a UNION's column over one; as
# pytds describes them: (type code, internal size, precision, scale), the last three None where
# the type has none of them.
DECLARED_SUBQUERIES = (
    "SELECT (SELECT MIN(sd) FROM legacy_p) AS a, (SELECT MAX(sm) FROM legacy_p) AS b, "
    "(SELECT tx FROM legacy_p WHERE id = 1) AS c, (SELECT nt FROM legacy_p WHERE id = 1) AS d, "
    "(SELECT im FROM legacy_p WHERE id = 1) AS e, "
    "(SELECT MAX(CAST(id AS DECIMAL(10, 2))) FROM legacy_p) AS f, "
    "(SELECT MIN(CAST(tx AS VARCHAR(30))) FROM legacy_p) AS g"
)
DECLARED_SUBQUERY_TYPES = [58, 122, 0x23, 0x63, 0x22, (106, 10, 2), (167, 30)]
DECLARED_SUBQUERY_NESTED = (
    "WITH c AS (SELECT (SELECT MIN(sd) FROM legacy_p) AS x) "
    "SELECT x, (SELECT y FROM (SELECT (SELECT MAX(sm) FROM legacy_p) AS y) s) AS y FROM c "
    "UNION ALL SELECT sd, sm FROM legacy_p WHERE id = 1"
)
