// mssql-jdbc against `walden serve`.
//
// Usage: java -cp mssql-jdbc.jar:. DriverTest HOST PORT PASSWORD [DATABASE [plain|tls]]
// (or $WALDEN_HOST, $WALDEN_PORT, $WALDEN_PASSWORD, $WALDEN_DATABASE, $WALDEN_JDBC_MODE).
// `plain` connects with encrypt=false; `tls` with encrypt=true;trustServerCertificate=true, for
// a server started with `--tls self-signed`. Prints one line per section and a FAIL line per
// failed check; exits 1 if any check failed.
//
// Statement sends SQL batches; a PreparedStatement sends sp_executesql on its first run, then
// sp_prepexec, then sp_execute with the handle (the driver's default prepareMethod);
// CallableStatement an RPC to the procedure by name; setAutoCommit(false) is
// SET IMPLICIT_TRANSACTIONS ON, and commit() / rollback() are IF @@TRANCOUNT > 0 batches.

import java.math.BigDecimal;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLXML;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

public class DriverTest extends Checks {
    // NVARCHAR text beyond Latin-1 and beyond the BMP (a UTF-16 surrogate pair).
    static final String UNICODE_TEXT = "Grüße, 日本語 ✓ \uD83D\uDE00";
    static final String LONG_TEXT = "walden-".repeat(3000) + "é";
    static final String GUID = "6F9619FF-8B86-D011-B42D-00C04FC964FF";
    static final byte[] BYTES = {(byte) 0xDE, (byte) 0xAD, (byte) 0xBE, (byte) 0xEF, 0};

    static final String TYPES_SELECT =
            "SELECT CAST(42 AS INT) AS i, CAST(9007199254740993 AS BIGINT) AS b, CAST(1 AS BIT) AS f, "
                    + "CAST(12345678.91 AS DECIMAL(10,2)) AS d, CAST(-2.5 AS FLOAT) AS x, "
                    + "CAST('abc' AS VARCHAR(20)) AS v, N'" + UNICODE_TEXT + "' AS n, "
                    + "REPLICATE(CAST(N'walden-' AS NVARCHAR(MAX)), 3000) + N'é' AS nmax, "
                    + "CAST(0xDEADBEEF00 AS VARBINARY(16)) AS vb, CAST('2024-02-29' AS DATE) AS dt, "
                    + "CAST('2024-02-29 13:45:56.1234567' AS DATETIME2) AS dt2, "
                    + "CAST('" + GUID + "' AS UNIQUEIDENTIFIER) AS g, "
                    + "CAST(NULL AS INT) AS ni, CAST(NULL AS NVARCHAR(10)) AS nn, CAST(NULL AS DATE) AS nd";

    static final String TYPES_TABLE =
            "CREATE TABLE types_t (i INT NOT NULL PRIMARY KEY, b BIGINT, f BIT, d DECIMAL(10,2), "
                    + "x FLOAT, v VARCHAR(20), n NVARCHAR(40), nmax NVARCHAR(MAX), vb VARBINARY(16), dt DATE, "
                    + "dt2 DATETIME2, g UNIQUEIDENTIFIER, ni INT, nn NVARCHAR(10), nd DATE)";

    static final String PROCEDURE =
            "CREATE PROCEDURE add_one @a INT, @b INT OUTPUT AS BEGIN SET @b = @a + 1; RETURN @a * 2 END";

    static void setup() throws SQLException {
        try (Connection master = connect("master")) {
            exec(master, "CREATE DATABASE [" + database + "]");
            exec(master, "ALTER DATABASE [" + database + "] SET DELAYED_DURABILITY = ALLOWED");
        }
        try (Connection c = connect(database)) {
            eq("DB_NAME() after a login to the new database", scalar(c, "SELECT DB_NAME()"), database);
            exec(c, TYPES_TABLE);
            exec(c, "CREATE TABLE k (id INT NOT NULL PRIMARY KEY, note NVARCHAR(20))");
            exec(c, "INSERT INTO k (id, note) VALUES (1, N'first')");
            exec(c, PROCEDURE);
        }
    }

    // The row of TYPES_SELECT (or of types_t), column 1 aside, read with typed getters.
    static void checkTypesRow(String what, ResultSet rs) throws SQLException {
        eq(what + " BIGINT", rs.getObject("b"), 9007199254740993L);
        eq(what + " BIT", rs.getObject("f"), Boolean.TRUE);
        eq(what + " DECIMAL(10,2)", rs.getBigDecimal("d"), new BigDecimal("12345678.91"));
        eq(what + " FLOAT", rs.getObject("x"), -2.5d);
        eq(what + " VARCHAR", rs.getString("v"), "abc");
        eq(what + " NVARCHAR", rs.getString("n"), UNICODE_TEXT);
        eq(what + " NVARCHAR(MAX)", rs.getString("nmax"), LONG_TEXT);
        eq(what + " VARBINARY", rs.getBytes("vb"), BYTES);
        eq(what + " DATE", rs.getDate("dt"), java.sql.Date.valueOf("2024-02-29"));
        eq(what + " DATETIME2", rs.getTimestamp("dt2"), Timestamp.valueOf("2024-02-29 13:45:56.1234567"));
        eq(what + " UNIQUEIDENTIFIER", rs.getString("g"), GUID);
        eq(what + " NULL INT", rs.getObject("ni"), null);
        eq(what + " NULL NVARCHAR", rs.getString("nn"), null);
        eq(what + " NULL DATE", rs.getDate("nd"), null);
    }

    // DATETIMEOFFSET both ways: a parameter set with the driver's own type keeps its moment
    // and offset, sorts by its UTC moment, and reads back as microsoft.sql.DateTimeOffset,
    // OffsetDateTime and text at the column's scale.
    static void dateTimeOffset() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TABLE dto_t (id INT NOT NULL PRIMARY KEY, at DATETIMEOFFSET(3))");
            Timestamp utc = new Timestamp(Instant.parse("2024-03-01T06:30:00.123Z").toEpochMilli());
            try (PreparedStatement p = c.prepareStatement("INSERT INTO dto_t VALUES (?, ?)")) {
                p.setInt(1, 1);
                p.unwrap(com.microsoft.sqlserver.jdbc.SQLServerPreparedStatement.class)
                        .setDateTimeOffset(2, microsoft.sql.DateTimeOffset.valueOf(utc, 120));
                eq("insert a DATETIMEOFFSET parameter", p.executeUpdate(), 1);
            }
            exec(c, "INSERT INTO dto_t VALUES (2, '2024-03-01 07:00:00 +00:00')");
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT id, at FROM dto_t ORDER BY at")) {
                eq("DATETIMEOFFSET column type", rs.getMetaData().getColumnTypeName(2), "datetimeoffset");
                eq("DATETIMEOFFSET scale", rs.getMetaData().getScale(2), 3);
                eq("first row", rs.next(), true);
                eq("ordered by the UTC moment", rs.getInt(1), 1);
                eq("DATETIMEOFFSET as text", rs.getString(2), "2024-03-01 08:30:00.123 +02:00");
                eq("DATETIMEOFFSET as OffsetDateTime", rs.getObject(2, OffsetDateTime.class),
                        OffsetDateTime.parse("2024-03-01T08:30:00.123+02:00"));
                Object dto = rs.getObject(2);
                eq("DATETIMEOFFSET as the driver's type", dto instanceof microsoft.sql.DateTimeOffset
                        ? ((microsoft.sql.DateTimeOffset) dto).getMinutesOffset() : dto, 120);
                eq("second row", rs.next(), true);
                eq("the later moment", rs.getInt(1), 2);
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "DECLARE @d SMALLDATETIME = '2020-01-01 10:00:40', @m SMALLMONEY = 1.23456; "
                            + "SELECT @d, @m, CAST('x' AS TEXT), CONVERT(NTEXT, N'y'), CAST(0x01 AS IMAGE)")) {
                ResultSetMetaData md = rs.getMetaData();
                List<String> names = new ArrayList<>();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    names.add(md.getColumnTypeName(i));
                }
                eq("variables' and casts' types", names,
                        List.of("smalldatetime", "smallmoney", "text", "ntext", "image"));
                rs.next();
                eq("a SMALLDATETIME variable, rounded on assignment", rs.getTimestamp(1),
                        Timestamp.valueOf("2020-01-01 10:01:00"));
                eq("a SMALLMONEY variable", rs.getBigDecimal(2), new BigDecimal("1.2346"));
                eq("CAST AS TEXT", rs.getString(3), "x");
                eq("CONVERT to NTEXT", rs.getString(4), "y");
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT CAST(42 AS SQL_VARIANT) AS i, CAST(N'text' AS SQL_VARIANT) AS n, "
                            + "CAST(CAST(1.25 AS DECIMAL(5,2)) AS SQL_VARIANT) AS d, CAST(NULL AS SQL_VARIANT) AS z, "
                            + "SQL_VARIANT_PROPERTY(CAST(N'text' AS SQL_VARIANT), 'BaseType') AS t")) {
                eq("SQL_VARIANT column type", rs.getMetaData().getColumnTypeName(1), "sql_variant");
                rs.next();
                eq("SQL_VARIANT holding an INT", rs.getObject("i"), 42);
                eq("SQL_VARIANT holding an NVARCHAR", rs.getObject("n"), "text");
                eq("SQL_VARIANT holding a DECIMAL", rs.getBigDecimal("d"), new BigDecimal("1.25"));
                eq("SQL_VARIANT NULL", rs.getObject("z"), null);
                eq("SQL_VARIANT_PROPERTY BaseType", rs.getString("t"), "nvarchar");
            }
            eq("a DATETIMEOFFSET parameter compares by its moment", scalar(c,
                    "SELECT COUNT(*) FROM dto_t WHERE at = CAST('2024-03-01 01:30:00.123 -05:00' AS DATETIMEOFFSET)"), 1);
        }
    }

    static void typesQuery() throws SQLException {
        try (Connection c = connect(database);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(TYPES_SELECT)) {
            ResultSetMetaData meta = rs.getMetaData();
            List<String> types = new ArrayList<>();
            for (int i = 1; i <= meta.getColumnCount(); i++) {
                types.add(meta.getColumnName(i) + " " + meta.getColumnTypeName(i));
            }
            eq("column names and types", types, List.of("i int", "b bigint", "f bit", "d decimal",
                    "x float", "v varchar", "n nvarchar", "nmax nvarchar", "vb varbinary", "dt date",
                    "dt2 datetime2", "g uniqueidentifier", "ni int", "nn nvarchar", "nd date"));
            eq("DECIMAL precision and scale", List.of(meta.getPrecision(4), meta.getScale(4)), List.of(10, 2));
            eq("a row", rs.next(), true);
            eq("INT", rs.getObject("i"), 42);
            checkTypesRow("Statement", rs);
            eq("a single row", rs.next(), false);
        }
    }

    static void parameters() throws SQLException {
        try (Connection c = connect(database)) {
            String insert = "INSERT INTO types_t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
            try (PreparedStatement p = c.prepareStatement(insert)) {
                // The same statement three times: the driver sends sp_executesql, then
                // sp_prepexec (prepare and run), then sp_execute with the handle.
                for (int id : new int[] {100, 101, 102}) {
                    p.setInt(1, id);
                    p.setLong(2, 9007199254740993L);
                    p.setBoolean(3, true);
                    p.setBigDecimal(4, new BigDecimal("12345678.91"));
                    p.setDouble(5, -2.5);
                    p.setString(6, "abc");
                    p.setString(7, UNICODE_TEXT);
                    p.setString(8, LONG_TEXT);
                    p.setBytes(9, BYTES);
                    p.setDate(10, java.sql.Date.valueOf("2024-02-29"));
                    p.setTimestamp(11, Timestamp.valueOf("2024-02-29 13:45:56.1234567"));
                    p.setString(12, GUID);
                    p.setNull(13, Types.INTEGER);
                    p.setNull(14, Types.NVARCHAR);
                    p.setNull(15, Types.DATE);
                    eq("INSERT update count for " + id, p.executeUpdate(), 1);
                }
            }
            String select = "SELECT * FROM types_t WHERE i >= ? AND n = ? AND g = ? ORDER BY i";
            try (PreparedStatement p = c.prepareStatement(select)) {
                p.setInt(1, 100);
                p.setString(2, UNICODE_TEXT);
                p.setString(3, GUID);
                try (ResultSet rs = p.executeQuery()) {
                    for (int id : new int[] {100, 101, 102}) {
                        if (!rs.next()) {
                            fail("row " + id + " is found by its parameters");
                            return;
                        }
                        eq("round trip of INT", rs.getInt("i"), id);
                        checkTypesRow("PreparedStatement", rs);
                    }
                    eq("three rows", rs.next(), false);
                }
            }
            try (PreparedStatement p = c.prepareStatement("UPDATE types_t SET x = x * ? WHERE i = ?")) {
                p.setDouble(1, 2.0);
                p.setInt(2, 100);
                eq("UPDATE update count", p.executeUpdate(), 1);
            }
            eq("the updated value", scalar(c, "SELECT x FROM types_t WHERE i = ?", 100), -5.0d);
            try (Statement s = c.createStatement()) {
                eq("Statement.executeUpdate count", s.executeUpdate("DELETE FROM types_t WHERE i > 100"), 2);
            }
            try (PreparedStatement p = c.prepareStatement("SELECT ? + N'!'")) {
                p.setString(1, "it's; DROP TABLE k --");
                try (ResultSet rs = p.executeQuery()) {
                    rs.next();
                    eq("a quote in a parameter is data", rs.getString(1), "it's; DROP TABLE k --!");
                }
            }
        }
    }

    /**
     * A PreparedStatement's columns before it runs (the driver asks with SET FMTONLY ON) and its
     * parameters' types.
     */
    static void metadataBeforeExecution() throws SQLException {
        try (Connection c = connect(database);
                PreparedStatement ps = c.prepareStatement("SELECT id, note FROM k WHERE id = ?")) {
            ResultSetMetaData md = ps.getMetaData();
            eq("columns described before execution", md.getColumnCount(), 2);
            eq("first column's name", md.getColumnName(1), "id");
            eq("second column's type", md.getColumnTypeName(2), "nvarchar");
            eq("FMTONLY is off again", scalar(c, "SELECT COUNT(*) FROM k WHERE id = 1"), 1);
        }
        // Parameters' types: the driver asks sp_describe_undeclared_parameters.
        try (Connection c = connect(database);
                PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO types_t (i, d, n) VALUES (?, ?, ?)")) {
            ParameterMetaData md = ps.getParameterMetaData();
            eq("parameters described", md.getParameterCount(), 3);
            eq("an INT column's parameter", md.getParameterType(1), Types.INTEGER);
            eq("a DECIMAL(10,2) column's parameter",
                    md.getParameterTypeName(2) + "(" + md.getPrecision(2) + "," + md.getScale(2) + ")",
                    "decimal(10,2)");
            eq("an NVARCHAR column's parameter", md.getParameterType(3), Types.NVARCHAR);
        }
    }

    static void procedure() throws SQLException {
        try (Connection c = connect(database)) {
            try (CallableStatement call = c.prepareCall("{? = call add_one(?, ?)}")) {
                call.registerOutParameter(1, Types.INTEGER);
                call.setInt(2, 41);
                call.registerOutParameter(3, Types.INTEGER);
                call.execute();
                eq("CallableStatement OUTPUT parameter", call.getInt(3), 42);
                eq("CallableStatement return status", call.getInt(1), 82);
                call.setInt(2, 5);
                call.execute();
                eq("CallableStatement again: OUTPUT parameter", call.getInt(3), 6);
                eq("CallableStatement again: return status", call.getInt(1), 10);
            }
            try (CallableStatement call = c.prepareCall("{call dbo.add_one(?, ?)}")) {
                call.setInt(1, 9);
                call.registerOutParameter(2, Types.INTEGER);
                call.execute();
                eq("CallableStatement without the return status", call.getInt(2), 10);
            }
            try (CallableStatement call = c.prepareCall("{call dbo.add_one(?, ?)}")) {
                call.setInt("a", 20);
                call.registerOutParameter("b", Types.INTEGER);
                call.execute();
                eq("CallableStatement by parameter name", call.getInt("b"), 21);
            }
        }
    }

    /**
     * Issue 28's parameter types: setBigDecimal sends the shortest DECIMAL (2 to 17 bytes);
     * MONEY and SMALLMONEY keep four decimals in and out (OUTPUT parameters too); DATETIME
     * keeps its seconds and milliseconds.
     */
    static void parameterTypes() throws SQLException {
        try (Connection c = connect(database)) {
            for (String v : new String[] {"1234.56", "0.5", "-1", "99999999999999999999.123456",
                    "-0.0001", "12345678901234567890123456789012345678"}) {
                try (PreparedStatement p = c.prepareStatement("SELECT ?")) {
                    p.setBigDecimal(1, new BigDecimal(v));
                    try (ResultSet rs = p.executeQuery()) {
                        rs.next();
                        eq("setBigDecimal(" + v + ")", rs.getBigDecimal(1).compareTo(new BigDecimal(v)), 0);
                    }
                }
            }
            try (PreparedStatement p = c.prepareStatement("SELECT ?, ?")) {
                p.setObject(1, new BigDecimal("12.3456"), microsoft.sql.Types.MONEY);
                p.setObject(2, new BigDecimal("-7.0001"), microsoft.sql.Types.SMALLMONEY);
                try (ResultSet rs = p.executeQuery()) {
                    rs.next();
                    eq("a MONEY parameter keeps 4 decimals", rs.getBigDecimal(1).toPlainString(), "12.3456");
                    eq("a SMALLMONEY parameter keeps 4 decimals", rs.getBigDecimal(2).toPlainString(), "-7.0001");
                }
            }
            try (PreparedStatement p = c.prepareStatement("SELECT CONVERT(VARCHAR(23), ?, 121)")) {
                p.setObject(1, Timestamp.valueOf("2024-01-02 22:04:05.997"), microsoft.sql.Types.DATETIME);
                try (ResultSet rs = p.executeQuery()) {
                    rs.next();
                    eq("a DATETIME parameter keeps its seconds", rs.getString(1), "2024-01-02 22:04:05.997");
                }
            }
            // The driver sends MONEY and SMALLMONEY as DECIMAL(38, 4) declared `money`: the
            // OUTPUT values come back as DECIMAL(38, 4), all four decimals kept.
            exec(c, "CREATE PROCEDURE money_out @m MONEY OUTPUT, @s SMALLMONEY OUTPUT "
                    + "AS BEGIN SET @m = @m * 2; SET @s = @s + 0.0001 END");
            try (CallableStatement call = c.prepareCall("{call money_out(?, ?)}")) {
                call.setObject(1, new BigDecimal("1.2345"), microsoft.sql.Types.MONEY);
                call.registerOutParameter(1, microsoft.sql.Types.MONEY);
                call.setObject(2, new BigDecimal("0.0001"), microsoft.sql.Types.SMALLMONEY);
                call.registerOutParameter(2, microsoft.sql.Types.SMALLMONEY);
                call.execute();
                eq("a MONEY OUTPUT parameter", call.getBigDecimal(1).toPlainString(), "2.4690");
                eq("a SMALLMONEY OUTPUT parameter", call.getBigDecimal(2).toPlainString(), "0.0002");
            }
        }
    }

    /** A SQLServerDataTable of dbo.order_lines rows: sku, qty (NULL when null), price. */
    static com.microsoft.sqlserver.jdbc.SQLServerDataTable orderLines(Object[][] rows)
            throws SQLException {
        com.microsoft.sqlserver.jdbc.SQLServerDataTable t =
                new com.microsoft.sqlserver.jdbc.SQLServerDataTable();
        t.addColumnMetadata("sku", Types.NVARCHAR);
        t.addColumnMetadata("qty", Types.INTEGER);
        t.addColumnMetadata("price", Types.DECIMAL);
        for (Object[] row : rows) {
            t.addRow(row);
        }
        return t;
    }

    static void tableValuedParameters() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TYPE dbo.order_lines AS TABLE "
                    + "(sku NVARCHAR(20) NOT NULL, qty INT, price DECIMAL(10,2))");
            exec(c, "CREATE PROCEDURE dbo.order_total @lines dbo.order_lines READONLY AS "
                    + "SELECT COUNT(*) AS n, SUM(qty * price) AS total, MIN(sku) AS first FROM @lines");
            Object[][] rows = {
                {"b-2", 2, new BigDecimal("1.25")},
                {"a-1", 3, new BigDecimal("10.00")},
                {"c-3", null, new BigDecimal("99.50")},
            };
            try (com.microsoft.sqlserver.jdbc.SQLServerCallableStatement call =
                    (com.microsoft.sqlserver.jdbc.SQLServerCallableStatement)
                            c.prepareCall("{call dbo.order_total(?)}")) {
                call.setStructured(1, "dbo.order_lines", orderLines(rows));
                try (ResultSet rs = call.executeQuery()) {
                    rs.next();
                    eq("TVP to a procedure: rows", rs.getInt("n"), 3);
                    eq("TVP to a procedure: SUM, NULL qty left out", rs.getBigDecimal("total"),
                            new BigDecimal("32.50"));
                    eq("TVP to a procedure: MIN(sku)", rs.getString("first"), "a-1");
                }
            }
            try (com.microsoft.sqlserver.jdbc.SQLServerPreparedStatement ps =
                    (com.microsoft.sqlserver.jdbc.SQLServerPreparedStatement) c.prepareStatement(
                            "SELECT COUNT(*) FROM ? WHERE qty IS NOT NULL")) {
                ps.setStructured(1, "dbo.order_lines", orderLines(rows));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    eq("TVP in a PreparedStatement", rs.getInt(1), 2);
                }
            }
            try (com.microsoft.sqlserver.jdbc.SQLServerCallableStatement call =
                    (com.microsoft.sqlserver.jdbc.SQLServerCallableStatement)
                            c.prepareCall("{call dbo.order_total(?)}")) {
                call.setStructured(1, "dbo.order_lines", orderLines(new Object[0][]));
                try (ResultSet rs = call.executeQuery()) {
                    rs.next();
                    eq("an empty TVP", rs.getInt("n"), 0);
                }
            }
        }
    }

    static void transactions() throws SQLException {
        try (Connection watcher = connect(database); Connection c = connect(database)) {
            String count = "SELECT COUNT(*) FROM k WHERE id = ?";
            String insert = "INSERT INTO k (id, note) VALUES (?, ?)";
            PreparedStatement ins = c.prepareStatement(insert);

            exec(c, "BEGIN TRAN");
            ins.setInt(1, 10);
            ins.setString(2, "delayed");
            ins.executeUpdate();
            eq("@@TRANCOUNT inside BEGIN TRAN", scalar(c, "SELECT @@TRANCOUNT"), 1);
            exec(c, "COMMIT WITH (DELAYED_DURABILITY = ON)");
            eq("@@TRANCOUNT after the delayed commit", scalar(c, "SELECT @@TRANCOUNT"), 0);
            eq("a delayed commit is visible", scalar(watcher, count, 10), 1);
            exec(c, "BEGIN TRAN");
            ins.setInt(1, 11);
            ins.setString(2, "rolled back");
            ins.executeUpdate();
            exec(c, "ROLLBACK");
            eq("a rolled-back insert is gone", scalar(watcher, count, 11), 0);

            // The driver's transactions.
            c.setAutoCommit(false);
            ins.setInt(1, 20);
            ins.setString(2, "rollback");
            ins.executeUpdate();
            eq("@@TRANCOUNT with autocommit off", scalar(c, "SELECT @@TRANCOUNT"), 1);
            c.rollback();
            eq("rollback() undid the insert", scalar(watcher, count, 20), 0);
            ins.setInt(1, 21);
            ins.setString(2, "commit");
            ins.executeUpdate();
            c.commit();
            eq("commit() made the insert visible", scalar(watcher, count, 21), 1);
            ins.setInt(1, 22);
            ins.setString(2, "delayed");
            ins.executeUpdate();
            exec(c, "COMMIT WITH (DELAYED_DURABILITY = ON)");
            eq("a delayed COMMIT with autocommit off", scalar(watcher, count, 22), 1);
            c.commit();
            c.setAutoCommit(true);
            eq("@@TRANCOUNT with autocommit on again", scalar(c, "SELECT @@TRANCOUNT"), 0);
            eq("the connection still works", scalar(c, "SELECT COUNT(*) FROM k"), 4);
            ins.close();
        }
    }

    static void badInput() throws SQLException {
        Object[][] cases = {
            {"SELECT 1 +", null, 102},
            {"SELECT * FROM no_such_table", null, 208},
            {"SELECT 1 / 0", null, 8134},
            {"INSERT INTO k (id) VALUES (1)", null, 2627},
            {"SELECT 1 + ? +", 1, 102},
            {"SELECT * FROM no_such_table WHERE id = ?", 1, 208},
            {"SELECT ? / 0", 1, 8134},
            {"INSERT INTO k (id) VALUES (?)", 1, 2627},
        };
        try (Connection c = connect(database)) {
            for (boolean inTx : new boolean[] {false, true}) {
                String m = inTx ? "transaction" : "autocommit";
                c.setAutoCommit(!inTx);
                for (Object[] k : cases) {
                    String sql = (String) k[0];
                    int number = (Integer) k[2];
                    try {
                        if (k[1] == null) {
                            try (Statement s = c.createStatement()) {
                                s.execute(sql);
                            }
                        } else {
                            try (PreparedStatement p = c.prepareStatement(sql)) {
                                p.setInt(1, (Integer) k[1]);
                                p.execute();
                            }
                        }
                        fail(m + ": " + sql + " raised no error (expected " + number + ")");
                    } catch (SQLException e) {
                        eq(m + ": error number of " + sql, e.getErrorCode(), number);
                    }
                    eq(m + ": the connection works after " + number, scalar(c, "SELECT 7"), 7);
                }
                if (inTx) {
                    c.rollback();
                }
            }
            c.setAutoCommit(true);
        }
    }

    // Keys as DatabaseMetaData reads them (sp_pkeys, sp_fkeys), a foreign key refusing a
    // missing key (547), and a rowversion column read as bytes.
    static void keys() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TABLE parent_t (id INT NOT NULL PRIMARY KEY, rv ROWVERSION)");
            exec(c, "CREATE TABLE child_t (id INT NOT NULL PRIMARY KEY, parent_id INT NOT NULL "
                    + "CONSTRAINT fk_child_parent REFERENCES parent_t (id) ON DELETE CASCADE)");
            exec(c, "INSERT INTO parent_t (id) VALUES (1)");
            DatabaseMetaData meta = c.getMetaData();
            try (ResultSet rs = meta.getPrimaryKeys(null, "dbo", "parent_t")) {
                eq("getPrimaryKeys finds the key", rs.next(), true);
                eq("getPrimaryKeys column", rs.getString("COLUMN_NAME"), "id");
            }
            try (ResultSet rs = meta.getImportedKeys(null, "dbo", "child_t")) {
                eq("getImportedKeys finds the foreign key", rs.next(), true);
                eq("getImportedKeys referenced table", rs.getString("PKTABLE_NAME"), "parent_t");
                eq("getImportedKeys column", rs.getString("FKCOLUMN_NAME"), "parent_id");
                eq("getImportedKeys name", rs.getString("FK_NAME"), "fk_child_parent");
                eq("getImportedKeys delete rule", rs.getInt("DELETE_RULE"), DatabaseMetaData.importedKeyCascade);
            }
            try (PreparedStatement s = c.prepareStatement("INSERT INTO child_t (id, parent_id) VALUES (?, ?)")) {
                s.setInt(1, 1);
                s.setInt(2, 1);
                eq("an insert referencing an existing key", s.executeUpdate(), 1);
                s.setInt(1, 2);
                s.setInt(2, 99);
                try {
                    s.executeUpdate();
                    fail("an insert referencing a missing key succeeded");
                } catch (SQLException e) {
                    eq("the foreign key violation's number", e.getErrorCode(), 547);
                }
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT rv FROM parent_t")) {
                rs.next();
                eq("a rowversion is eight bytes", rs.getBytes(1).length, 8);
            }
            try (ResultSet rs = meta.getIndexInfo(null, "dbo", "parent_t", false, false)) {
                boolean found = false;
                while (rs.next()) {
                    found |= "id".equals(rs.getString("COLUMN_NAME"));
                }
                eq("getIndexInfo lists the key's column", found, true);
            }
            try (ResultSet rs = meta.getProcedures(null, "dbo", "add_one")) {
                eq("getProcedures finds the procedure", rs.next(), true);
            }
            try (ResultSet rs = meta.getBestRowIdentifier(null, "dbo", "parent_t",
                    DatabaseMetaData.bestRowSession, false)) {
                eq("getBestRowIdentifier finds a column", rs.next(), true);
                eq("getBestRowIdentifier is the key", rs.getString("COLUMN_NAME"), "id");
            }
            try (ResultSet rs = meta.getVersionColumns(null, "dbo", "parent_t")) {
                eq("getVersionColumns finds a column", rs.next(), true);
                eq("getVersionColumns is the rowversion", rs.getString("COLUMN_NAME"), "rv");
            }
            try (ResultSet rs = meta.getTypeInfo()) {
                List<String> names = new ArrayList<>();
                while (rs.next()) {
                    names.add(rs.getString("TYPE_NAME"));
                }
                eq("getTypeInfo lists the types", names.containsAll(List.of("int", "int identity",
                        "nvarchar", "datetime2", "datetimeoffset", "uniqueidentifier")), true);
            }
            exec(c, "DELETE FROM parent_t WHERE id = 1");
            eq("the cascade deleted the child", scalar(c, "SELECT COUNT(*) FROM child_t"), 0);
        }
    }

    // DatabaseMetaData's catalog calls, as ORMs and tools make them: getColumns runs
    // sp_columns_100 into a table variable (which has a column named PRECISION), getTables
    // sp_tables with a list of types.
    static void catalog() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TABLE catalog_t (id INT IDENTITY(1,1) NOT NULL PRIMARY KEY, "
                    + "label NVARCHAR(30) NULL, amount DECIMAL(12,3) NOT NULL, twice AS id * 2)");
            DatabaseMetaData meta = c.getMetaData();
            List<String> got = new ArrayList<>();
            try (ResultSet rs = meta.getColumns(database, "dbo", "catalog_t", "%")) {
                while (rs.next()) {
                    got.add(rs.getString("TABLE_CAT") + "." + rs.getString("TABLE_SCHEM") + "."
                            + rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME") + " "
                            + rs.getInt("DATA_TYPE") + " " + rs.getString("TYPE_NAME") + " "
                            + rs.getInt("COLUMN_SIZE") + "," + rs.getInt("DECIMAL_DIGITS") + " "
                            + rs.getInt("NULLABLE") + rs.getString("IS_NULLABLE") + " #"
                            + rs.getInt("ORDINAL_POSITION") + " auto=" + rs.getString("IS_AUTOINCREMENT")
                            + " generated=" + rs.getString("IS_GENERATEDCOLUMN"));
                }
            }
            String prefix = database + ".dbo.catalog_t.";
            eq("getColumns", got, List.of(
                    prefix + "id 4 int identity 10,0 0NO #1 auto=YES generated=NO",
                    prefix + "label -9 nvarchar 30,0 1YES #2 auto=NO generated=NO",
                    prefix + "amount 3 decimal 12,3 0NO #3 auto=NO generated=NO",
                    prefix + "twice 4 int 10,0 1YES #4 auto=NO generated=YES"));
            got.clear();
            try (ResultSet rs = meta.getColumns(null, null, "catalog_t", "am%")) {
                while (rs.next()) {
                    got.add(rs.getString("COLUMN_NAME"));
                }
            }
            eq("getColumns with patterns", got, List.of("amount"));
            got.clear();
            try (ResultSet rs = meta.getTables(null, "dbo", "catalog%", new String[] {"TABLE"})) {
                while (rs.next()) {
                    got.add(rs.getString("TABLE_NAME") + " " + rs.getString("TABLE_TYPE"));
                }
            }
            eq("getTables", got, List.of("catalog_t TABLE"));
            try (ResultSet rs = meta.getTables(null, "dbo", "catalog%", new String[] {"VIEW"})) {
                eq("getTables of views only", rs.next(), false);
            }
            try (ResultSet rs = meta.getPrimaryKeys(null, "dbo", "catalog_t")) {
                eq("getPrimaryKeys of catalog_t", rs.next() ? rs.getString("COLUMN_NAME") : null, "id");
            }
        }
    }

    // Cases of mssql-jdbc's own suite (docs/serve.md, "mssql-jdbc's own tests"): a
    // DATETIMEOFFSET OUTPUT parameter set from a string with nine fractional digits
    // (CallableStatementTest), foreign keys asked for with an empty schema
    // (DatabaseMetaDataForeignKeyTest), procedures found by an escaped schema pattern
    // (DatabaseMetaDataTest.shouldEscapeSchemaName), table and column privileges, and the
    // documented catalog procedures run with one indexed parameter.
    static void suiteCases() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE PROCEDURE offset_out (@p1 DATETIMEOFFSET OUTPUT, @p2 DATETIMEOFFSET OUTPUT) AS "
                    + "SELECT @p1 = '2018-01-02T11:22:33.123456700+12:34', @p2 = NULL");
            try (CallableStatement call = c.prepareCall("{call offset_out(?, ?)}")) {
                call.registerOutParameter(1, Types.TIMESTAMP_WITH_TIMEZONE);
                call.registerOutParameter(2, Types.TIMESTAMP_WITH_TIMEZONE);
                call.execute();
                eq("nine fractional digits round to seven", call.getObject(1, OffsetDateTime.class),
                        OffsetDateTime.parse("2018-01-02T11:22:33.1234567+12:34"));
                eq("a NULL DATETIMEOFFSET OUTPUT", call.getObject(2, OffsetDateTime.class), null);
            }
            // DateAndTimeTypeTest's table: a key with a column list after a column, no comma.
            exec(c, "CREATE TABLE suite_dated (id INT NOT NULL, d DATE, "
                    + "ts DATETIME2 CONSTRAINT pk_suite_dated PRIMARY KEY (id))");
            eq("a key after a column without a comma", scalar(c, "SELECT COUNT(*) FROM sys.indexes "
                    + "WHERE name = 'pk_suite_dated' AND is_primary_key = 1"), 1);
            exec(c, "CREATE TABLE suite_parent (id INT NOT NULL PRIMARY KEY)");
            exec(c, "CREATE TABLE suite_child (id INT PRIMARY KEY, "
                    + "parent_id INT FOREIGN KEY REFERENCES suite_parent (id) ON UPDATE SET NULL,)");
            DatabaseMetaData meta = c.getMetaData();
            for (String schema : new String[] {null, "dbo", ""}) {
                try (ResultSet rs = meta.getImportedKeys(database, schema, "suite_child")) {
                    eq("getImportedKeys with schema " + schema, rs.next(), true);
                    eq("getImportedKeys' column, schema " + schema, rs.getString("FKCOLUMN_NAME"), "parent_id");
                    eq("getImportedKeys' update rule, schema " + schema, rs.getInt("UPDATE_RULE"),
                            DatabaseMetaData.importedKeySetNull);
                }
                try (ResultSet rs = meta.getExportedKeys(database, schema, "suite_parent")) {
                    eq("getExportedKeys with schema " + schema, rs.next() ? rs.getString("FKTABLE_NAME") : null,
                            "suite_child");
                }
            }
            exec(c, "CREATE SCHEMA suite_s1");
            exec(c, "CREATE SCHEMA suiteXs1");
            exec(c, "CREATE PROCEDURE suite_s1.update_it (@id INT, @name VARCHAR(40)) AS SELECT @id");
            exec(c, "CREATE PROCEDURE suiteXs1.update_it (@id INT) AS SELECT @id");
            List<String> got = new ArrayList<>();
            try (ResultSet rs = meta.getProcedures(null, "suite\\_s1", "update_it")) {
                while (rs.next()) {
                    got.add(rs.getString("PROCEDURE_SCHEM") + "." + rs.getString("PROCEDURE_NAME"));
                }
            }
            eq("getProcedures with an escaped schema pattern", got, List.of("suite_s1.update_it;1"));
            got.clear();
            try (ResultSet rs = meta.getProcedureColumns(null, "suite\\_s1", "update_it", "%")) {
                while (rs.next()) {
                    got.add(rs.getString("PROCEDURE_SCHEM") + " " + rs.getString("COLUMN_NAME"));
                }
            }
            eq("getProcedureColumns with an escaped schema pattern", got,
                    List.of("suite_s1 @RETURN_VALUE", "suite_s1 @id", "suite_s1 @name"));
            got.clear();
            try (ResultSet rs = meta.getProcedureColumns(null, "suite%", "update_it", "@i%")) {
                while (rs.next()) {
                    got.add(rs.getString("PROCEDURE_SCHEM") + " " + rs.getString("COLUMN_NAME"));
                }
            }
            eq("getProcedureColumns with patterns", got, List.of("suite_s1 @id", "suiteXs1 @id"));
            got.clear();
            try (ResultSet rs = meta.getTablePrivileges(database, "dbo", "suite\\_parent")) {
                while (rs.next()) {
                    got.add(rs.getString("GRANTEE") + " " + rs.getString("PRIVILEGE") + " "
                            + rs.getString("IS_GRANTABLE"));
                }
            }
            eq("getTablePrivileges", got,
                    List.of("dbo DELETE YES", "dbo INSERT YES", "dbo REFERENCES YES", "dbo SELECT YES",
                            "dbo UPDATE YES"));
            got.clear();
            try (ResultSet rs = meta.getColumnPrivileges(database, "dbo", "suite_child", "parent%")) {
                while (rs.next()) {
                    got.add(rs.getString("COLUMN_NAME") + " " + rs.getString("PRIVILEGE"));
                }
            }
            eq("getColumnPrivileges", got, List.of("parent_id INSERT", "parent_id REFERENCES",
                    "parent_id SELECT", "parent_id UPDATE"));
            try (CallableStatement call = c.prepareCall("EXEC sp_server_info ?")) {
                call.setInt(1, 1);
                try (ResultSet rs = call.executeQuery()) {
                    eq("sp_server_info 1", rs.next() ? rs.getString("ATTRIBUTE_VALUE") : null,
                            "Microsoft SQL Server");
                }
            }
            // A batch insert sent through bulk copy: the driver describes the table with
            // SET FMTONLY ON and skips the columns marked read-only in COLMETADATA.
            exec(c, "CREATE TABLE suite_batch (id INT, label NVARCHAR(20), at DATETIME2)");
            try (Connection b = connect(database, "useBulkCopyForBatchInsert=true;");
                    PreparedStatement s = b.prepareStatement("INSERT INTO suite_batch VALUES (?, ?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    s.setInt(1, i);
                    s.setString(2, "row " + i);
                    s.setTimestamp(3, Timestamp.valueOf("2024-01-0" + i + " 10:00:00"));
                    s.addBatch();
                }
                s.executeBatch();
            }
            eq("a bulk-copy batch insert's rows",
                    scalar(c, "SELECT CONCAT(COUNT(*), ' ', MAX(label)) FROM suite_batch"), "3 row 3");
            String[] procedures = {"sp_column_privileges", "sp_columns", "sp_special_columns", "sp_statistics",
                    "sp_table_privileges", "sp_tables"};
            for (String procedure : procedures) {
                try (CallableStatement call = c.prepareCall("EXEC " + procedure + " ?")) {
                    call.setString(1, "suite_child");
                    call.execute();
                    eq(procedure + " with an indexed parameter gives a result set",
                            call.getResultSet() != null, true);
                }
            }
        }
    }

    // An xml column read (XMLTYPE in COLMETADATA and ROW) and a SQLXML parameter, which the
    // driver sends as XMLTYPE.
    static void xmlType() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TABLE xdocs_j (id INT PRIMARY KEY, body XML)");
            try (PreparedStatement s = c.prepareStatement("INSERT INTO xdocs_j VALUES (?, ?)")) {
                SQLXML x = c.createSQLXML();
                x.setString("<a  n='1'><b>x &amp; y</b></a>");
                s.setInt(1, 1);
                s.setSQLXML(2, x);
                eq("xml INSERT rowcount", s.executeUpdate(), 1);
            }
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT body, body.value('(/a/@n)[1]', 'int') FROM xdocs_j")) {
                rs.next();
                String expected = "<a n=\"1\"><b>x &amp; y</b></a>";
                eq("an xml column's canonical text", rs.getString(1), expected);
                // mssql-jdbc reports an XMLTYPE column as LONGNVARCHAR, as it does from SQL Server.
                eq("its JDBC type", rs.getMetaData().getColumnType(1), Types.LONGNVARCHAR);
                eq("its type name", rs.getMetaData().getColumnTypeName(1), "xml");
                eq("getSQLXML", rs.getSQLXML(1).getString(), expected);
                eq("value() over it", rs.getInt(2), 1);
            }
            try (PreparedStatement s = c.prepareStatement(
                    "SELECT SUM(t.c.value('.', 'int')) FROM ?.nodes('/r/i') AS t(c)")) {
                SQLXML x = c.createSQLXML();
                x.setString("<r><i>3</i><i>4</i></r>");
                s.setSQLXML(1, x);
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    eq("nodes() of an xml parameter", rs.getInt(1), 7);
                }
            }
        }
    }

    // API server cursors (sp_cursoropen, sp_cursorfetch, sp_cursor, sp_cursorprepexec,
    // sp_cursorexecute, sp_cursorclose): a scrollable, updatable result set moves with
    // absolute/relative/previous fetches, updates, deletes and inserts rows through the cursor
    // and sees its own changes; selectMethod=cursor reads a forward-only cursor in blocks.
    static void serverCursors() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TABLE cur_t (id INT NOT NULL PRIMARY KEY, name NVARCHAR(20), amount INT)");
            for (int i = 1; i <= 30; i++) {
                exec(c, "INSERT INTO cur_t VALUES (" + i + ", N'row" + i + "', " + (i * 10) + ")");
            }
            try (Statement s = c.createStatement(ResultSet.TYPE_SCROLL_SENSITIVE, ResultSet.CONCUR_UPDATABLE)) {
                s.setFetchSize(4);
                try (ResultSet rs = s.executeQuery("SELECT id, name, amount FROM cur_t ORDER BY id")) {
                    eq("columns of a cursor's result set (ROWSTAT hidden)", rs.getMetaData().getColumnCount(), 3);
                    eq("cursor concurrency", rs.getConcurrency(), ResultSet.CONCUR_UPDATABLE);
                    rs.absolute(10);
                    eq("absolute(10)", rs.getInt("id"), 10);
                    rs.relative(-3);
                    eq("relative(-3)", rs.getInt("id"), 7);
                    rs.previous();
                    eq("previous()", rs.getInt("id"), 6);
                    rs.last();
                    eq("last()", rs.getInt("id"), 30);
                    eq("getRow() on the last row", rs.getRow(), 30);
                    rs.first();
                    eq("first()", rs.getString("name"), "row1");
                    rs.beforeFirst();
                    int seen = 0;
                    while (rs.next()) {
                        seen++;
                    }
                    eq("rows read forward in blocks of 4", seen, 30);
                    rs.absolute(5);
                    rs.updateInt("amount", 555);
                    rs.updateString("name", "five");
                    rs.updateRow();
                    eq("a row updated through the cursor, as refetched", rs.getInt("amount"), 555);
                    rs.absolute(6);
                    rs.deleteRow();
                    rs.moveToInsertRow();
                    rs.updateInt("id", 31);
                    rs.updateString("name", "new");
                    rs.updateInt("amount", 310);
                    rs.insertRow();
                    rs.moveToCurrentRow();
                }
            }
            eq("UPDATE through the cursor", scalar(c, "SELECT name FROM cur_t WHERE id = 5"), "five");
            eq("DELETE through the cursor", scalar(c, "SELECT COUNT(*) FROM cur_t WHERE id = 6"), 0);
            eq("INSERT through the cursor", scalar(c, "SELECT amount FROM cur_t WHERE id = 31"), 310);
            String query = "SELECT id, amount FROM cur_t WHERE id > ? ORDER BY id";
            try (PreparedStatement p = c.prepareStatement(query, ResultSet.TYPE_SCROLL_INSENSITIVE,
                    ResultSet.CONCUR_READ_ONLY)) {
                for (int from : new int[] {20, 25}) {
                    p.setInt(1, from);
                    try (ResultSet rs = p.executeQuery()) {
                        rs.last();
                        eq("rows of a parameterized cursor over id > " + from, rs.getRow(), 31 - from);
                        rs.first();
                        eq("first row of a parameterized cursor over id > " + from, rs.getInt(1), from + 1);
                    }
                }
            }
        }
        try (Connection c = connect(database, "selectMethod=cursor;")) {
            try (Statement s = c.createStatement()) {
                s.setFetchSize(7);
                int rows = 0;
                long sum = 0;
                try (ResultSet rs = s.executeQuery("SELECT id FROM cur_t")) {
                    while (rs.next()) {
                        rows++;
                        sum += rs.getInt(1);
                    }
                }
                eq("rows through selectMethod=cursor", rows, 30);
                eq("sum through selectMethod=cursor", sum, 465L - 6 + 31);
            }
        }
        try (Connection c = connect(database); Connection other = connect(database)) {
            // A heap's rows are found again by their locators, even two rows alike.
            exec(c, "CREATE TABLE cur_heap (id INT, name NVARCHAR(20))");
            exec(c, "INSERT INTO cur_heap VALUES (1, N'same'), (1, N'same'), (2, N'two')");
            try (Statement s = c.createStatement(ResultSet.TYPE_SCROLL_SENSITIVE, ResultSet.CONCUR_UPDATABLE);
                    ResultSet rs = s.executeQuery("SELECT id, name FROM cur_heap")) {
                eq("concurrency of a cursor over a heap", rs.getConcurrency(), ResultSet.CONCUR_UPDATABLE);
                rs.absolute(2);
                rs.updateString("name", "second");
                rs.updateRow();
                rs.absolute(3);
                rs.deleteRow();
            }
            eq("a heap row updated through the cursor",
                    scalar(c, "SELECT COUNT(*) FROM cur_heap WHERE name = N'second'"), 1);
            eq("its twin unchanged", scalar(c, "SELECT COUNT(*) FROM cur_heap WHERE name = N'same'"), 1);
            eq("a heap row deleted through the cursor", scalar(c, "SELECT COUNT(*) FROM cur_heap"), 2);

            // Over a join, an update changes the table of the columns it sets.
            exec(c, "CREATE TABLE cur_k (i INT, data NVARCHAR(30))");
            exec(c, "CREATE TABLE cur_j (i INT, row INT, data NVARCHAR(30))");
            exec(c, "INSERT INTO cur_k VALUES (1, N'EDIT')");
            exec(c, "INSERT INTO cur_j VALUES (1, 1, N'TEST1'), (1, 2, N'TEST2')");
            try (Statement s = c.createStatement(ResultSet.TYPE_SCROLL_SENSITIVE, ResultSet.CONCUR_UPDATABLE);
                    ResultSet rs = s.executeQuery(
                            "SELECT t.*, k.data AS kdata FROM cur_k k INNER JOIN cur_j t ON t.i = k.i ORDER BY t.row")) {
                rs.first();
                rs.updateString(3, "NEW EDIT");
                rs.updateRow();
                eq("a joined row updated through the cursor, as refetched", rs.getString(3), "NEW EDIT");
                rs.updateString(3, "x");
                rs.updateString(4, "y");
                try {
                    rs.updateRow();
                    fail("an update of two tables of a join through a cursor raised no error");
                } catch (SQLException e) {
                    eq("an update of two tables of a join refused by the driver (its table names)",
                            e.getMessage().contains("ambiguous update on tables \"[dbo].[cur_j]\" and \"[dbo].[cur_k]\""),
                            true);
                }
            }
            eq("the join's table updated", scalar(c, "SELECT data FROM cur_j WHERE row = 1"), "NEW EDIT");
            eq("the other table unchanged", scalar(c, "SELECT data FROM cur_k"), "EDIT");

            // CONCUR_UPDATABLE is optimistic: a row changed by another connection since it was
            // fetched is not updated (16934).
            try (Statement s = c.createStatement(ResultSet.TYPE_SCROLL_SENSITIVE, ResultSet.CONCUR_UPDATABLE);
                    ResultSet rs = s.executeQuery("SELECT id, name FROM cur_t WHERE id <= 3 ORDER BY id")) {
                rs.first();
                exec(other, "UPDATE cur_t SET name = N'theirs' WHERE id = 1");
                rs.updateString("name", "mine");
                try {
                    rs.updateRow();
                    fail("an update of a row changed since it was fetched raised no error");
                } catch (SQLException e) {
                    eq("error of an update of a row changed since it was fetched", e.getErrorCode(), 16934);
                }
                rs.cancelRowUpdates();
                rs.refreshRow();
                eq("the row as another connection changed it", rs.getString("name"), "theirs");
                rs.updateString("name", "mine");
                rs.updateRow();
            }
            eq("an update after the row was fetched again", scalar(c, "SELECT name FROM cur_t WHERE id = 1"), "mine");

            // A dynamic cursor (mssql-jdbc's TYPE_SS_SCROLL_DYNAMIC, TYPE_SCROLL_SENSITIVE + 1)
            // sees rows another connection inserts after it opened.
            exec(c, "CREATE TABLE cur_dyn (id INT PRIMARY KEY, name NVARCHAR(20))");
            exec(c, "INSERT INTO cur_dyn VALUES (1, N'one'), (3, N'three')");
            try (Statement s = c.createStatement(ResultSet.TYPE_SCROLL_SENSITIVE + 1, ResultSet.CONCUR_UPDATABLE)) {
                s.setFetchSize(1);
                try (ResultSet rs = s.executeQuery("SELECT id, name FROM cur_dyn")) {
                    rs.next();
                    eq("first row of a dynamic cursor", rs.getInt("id"), 1);
                    exec(other, "INSERT INTO cur_dyn VALUES (2, N'two')");
                    rs.next();
                    eq("a row inserted after the dynamic cursor opened", rs.getInt("id"), 2);
                    rs.updateString("name", "TWO");
                    rs.updateRow();
                    rs.next();
                    eq("the row after it", rs.getInt("id"), 3);
                    eq("no more rows", rs.next(), false);
                }
            }
            eq("a row updated through a dynamic cursor", scalar(c, "SELECT name FROM cur_dyn WHERE id = 2"), "TWO");
        }
    }

    public static void main(String[] args) {
        start("DriverTest", args);
        section("setup", DriverTest::setup);
        section("types (Statement)", DriverTest::typesQuery);
        section("parameters (PreparedStatement)", DriverTest::parameters);
        section("metadata before execution", DriverTest::metadataBeforeExecution);
        section("procedure (CallableStatement)", DriverTest::procedure);
        section("parameter types", DriverTest::parameterTypes);
        section("table-valued parameters", DriverTest::tableValuedParameters);
        section("transactions", DriverTest::transactions);
        section("bad input", DriverTest::badInput);
        section("keys (DatabaseMetaData)", DriverTest::keys);
        section("catalog (DatabaseMetaData)", DriverTest::catalog);
        section("datetimeoffset", DriverTest::dateTimeOffset);
        section("xml", DriverTest::xmlType);
        section("mssql-jdbc suite cases", DriverTest::suiteCases);
        section("server cursors", DriverTest::serverCursors);
        finish();
    }
}
