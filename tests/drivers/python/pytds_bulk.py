"""pytds' bulk copy (cursor.copy_to: INSERT BULK and a Bulk Load message) against `walden serve`."""

import datetime
import decimal
import io

import pytds
from pytds import tds_base, tds_types

from checks import UNICODE_TEXT


def bulk_copy(connect, checks, database):
    with connect(database) as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE bulk_py (id INT NOT NULL PRIMARY KEY, name NVARCHAR(60) NULL, "
            "amount DECIMAL(12,2) NULL, day DATE NULL, note NVARCHAR(10) NULL DEFAULT N'dflt')"
        )
        # From a file: every field is sent as NVARCHAR(4000) and converted by the server.
        lines = [f"{i}\t{UNICODE_TEXT} {i}\t{i}.25\t2024-02-{(i % 28) + 1:02d}\tNULL\n" for i in range(1, 1001)]
        lines.append("1001\tNULL\tNULL\tNULL\tx\n")
        cur.copy_to(io.StringIO("".join(lines)), "bulk_py", null_string="NULL")
        checks.eq("rows copy_to reports", cur.rowcount, 1001)
        cur.execute("SELECT COUNT(*), SUM(amount), MAX(day) FROM bulk_py")
        checks.eq("rows, sum and max after copy_to", cur.fetchone(), (1001, decimal.Decimal("500750.00"), datetime.date(2024, 2, 28)))
        cur.execute("SELECT name, note FROM bulk_py WHERE id = 7")
        checks.eq("a unicode field, and NULL taking the default", cur.fetchone(), (f"{UNICODE_TEXT} 7", "dflt"))
        cur.execute("SELECT name, amount, note FROM bulk_py WHERE id = 1001")
        checks.eq("NULL fields", cur.fetchone(), (None, None, "x"))

        # Typed columns, and KEEP_NULLS.
        columns = [
            tds_base.Column(name="id", type=tds_types.IntType(), flags=0),
            tds_base.Column(name="amount", type=tds_types.DecimalType(precision=12, scale=2), flags=tds_base.Column.fNullable),
            tds_base.Column(name="note", type=tds_types.NVarCharType(size=10), flags=tds_base.Column.fNullable),
        ]
        data = [(2000 + i, decimal.Decimal(i) / 4, None) for i in range(50)]
        cur.copy_to(table_or_view="bulk_py", columns=columns, data=data, keep_nulls=True)
        checks.eq("typed rows loaded", cur.rowcount, 50)
        cur.execute("SELECT COUNT(*) FROM bulk_py WHERE id >= 2000 AND note IS NULL")
        checks.eq("KEEP_NULLS kept the NULLs", cur.fetchone()[0], 50)

        # A duplicate key: nothing of the load stays, the connection goes on.
        try:
            cur.copy_to(table_or_view="bulk_py", columns=columns, data=[(3000, None, None), (7, None, None)])
            checks.true("a duplicate key in copy_to raised no error", False)
        except pytds.IntegrityError as e:
            checks.eq("copy_to duplicate key error number", e.msg_no, 2627)
        cur.execute("SELECT COUNT(*) FROM bulk_py WHERE id = 3000")
        checks.eq("the failed load left nothing", cur.fetchone()[0], 0)
        try:
            cur.copy_to(io.StringIO("1\tx\n"), "bulk_py", columns=["id", "no_such_column"])
            checks.true("copy_to into an unknown column raised no error", False)
        except pytds.Error as e:
            checks.eq("copy_to unknown column error number", e.msg_no, 207)
        cur.execute("SELECT COUNT(*) FROM bulk_py")
        checks.eq("the connection works after failed loads", cur.fetchone()[0], 1051)
