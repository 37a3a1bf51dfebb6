// mssql-jdbc's SQLServerBulkCopy (INSERT BULK and a Bulk Load message) against `walden serve`.
//
// Usage: java BulkCopyTest HOST PORT PASSWORD DATABASE [plain|tls], after DriverTest has
// created DATABASE. Prints one line per section and a FAIL line per failed check; exits 1 if
// any check failed.

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.LocalDateTime;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import com.microsoft.sqlserver.jdbc.SQLServerBulkCopy;
import com.microsoft.sqlserver.jdbc.SQLServerBulkCopyOptions;
import com.microsoft.sqlserver.jdbc.ISQLServerBulkData;

public class BulkCopyTest {
    static int failures = 0;
    static int checked = 0;

    static void eq(String what, Object got, Object expected) {
        checked++;
        if (!Objects.equals(got, expected)) {
            failures++;
            System.out.println("FAIL " + what + ": got " + got + ", expected " + expected);
        }
    }

    static Object scalar(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getObject(1);
        }
    }

    static void copy(Connection c, String source, String table, SQLServerBulkCopyOptions options)
            throws SQLException {
        try (SQLServerBulkCopy bulk = new SQLServerBulkCopy(c);
                Statement s = c.createStatement();
                ResultSet rows = s.executeQuery(source)) {
            bulk.setDestinationTableName(table);
            for (String column : new String[] {"id", "name", "amount", "day"}) {
                bulk.addColumnMapping(column, column);
            }
            if (options != null) {
                bulk.setBulkCopyOptions(options);
            }
            bulk.writeToServer(rows);
        }
    }

    /**
     * Rows of (id, sd, dt, d2) from memory, typed as mssql-jdbc's own tests type them
     * (ISQLServerBulkRecordIssuesTest, BulkCopyISQLServerBulkRecordTest): each temporal
     * column a TIMESTAMP of precision 0. The driver then sends those values as text
     * (sendTemporalDataTypesAsStringForBulkCopy, on by default), declared VARCHAR(0) in the
     * load's COLMETADATA whatever their length, for the server to convert to each column.
     */
    static class TemporalRows implements ISQLServerBulkData {
        final Iterator<Object[]> rows;
        Object[] current;

        TemporalRows(List<Object[]> rows) {
            this.rows = rows.iterator();
        }

        public Set<Integer> getColumnOrdinals() {
            return Set.of(1, 2, 3, 4);
        }

        public String getColumnName(int column) {
            return new String[] {"id", "sd", "dt", "d2"}[column - 1];
        }

        public int getColumnType(int column) {
            return column == 1 ? java.sql.Types.INTEGER : java.sql.Types.TIMESTAMP;
        }

        public int getPrecision(int column) {
            return 0;
        }

        public int getScale(int column) {
            return column == 4 ? 7 : 0;
        }

        public Object[] getRowData() {
            return current;
        }

        public boolean next() {
            current = rows.hasNext() ? rows.next() : null;
            return current != null;
        }
    }

    /** Loads `rows` into bulk_dt; the error it raised, or null. */
    static SQLException copyTemporal(Connection c, List<Object[]> rows) {
        try (SQLServerBulkCopy bulk = new SQLServerBulkCopy(c)) {
            bulk.setDestinationTableName("bulk_dt");
            bulk.writeToServer(new TemporalRows(rows));
            return null;
        } catch (SQLException e) {
            return e;
        }
    }

    /** bulk_dt's `column` of row `id` in style 121 (ODBC canonical, with the fraction). */
    static Object text(Connection c, String column, int id) throws SQLException {
        return scalar(c, "SELECT CONVERT(VARCHAR(27), " + column + ", 121) FROM bulk_dt WHERE id = " + id);
    }

    static void temporalFromBulkData(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE bulk_dt (id INT NOT NULL PRIMARY KEY, sd SMALLDATETIME NULL, "
                    + "dt DATETIME NULL, d2 DATETIME2 NULL)");
        }
        SQLException e = copyTemporal(c, List.of(
                new Object[] {1, Timestamp.valueOf("1954-05-22 02:43:37.123"),
                        Timestamp.valueOf("1954-05-22 02:43:37.123"),
                        LocalDateTime.of(2026, 11, 30, 12, 34, 56, 123456700)},
                // SMALLDATETIME rounds 29.998 s down and 29.999 s up; DATETIME .999 to the
                // next second.
                new Object[] {2, Timestamp.valueOf("2024-02-29 23:59:29.998"),
                        Timestamp.valueOf("2024-02-29 23:59:59.999"),
                        LocalDateTime.of(2026, 11, 30, 0, 0)},
                new Object[] {3, Timestamp.valueOf("2024-02-29 23:59:29.999"), null, null}));
        eq("temporal values sent as text load", e == null ? null : e.getMessage(), null);
        eq("SMALLDATETIME rounded to the minute", text(c, "sd", 1), "1954-05-22 02:44:00.000");
        eq("DATETIME from text", text(c, "dt", 1), "1954-05-22 02:43:37.123");
        eq("DATETIME2 from ISO 8601 text", text(c, "d2", 1), "2026-11-30 12:34:56.1234567");
        eq("SMALLDATETIME 29.998 s rounds down", text(c, "sd", 2), "2024-02-29 23:59:00.000");
        eq("DATETIME .999 rounds up", text(c, "dt", 2), "2024-03-01 00:00:00.000");
        eq("DATETIME2 midnight", text(c, "d2", 2), "2026-11-30 00:00:00.0000000");
        eq("SMALLDATETIME 29.999 s rounds up", text(c, "sd", 3), "2024-03-01 00:00:00.000");
        eq("NULL stays NULL", text(c, "dt", 3), null);

        // Four digits of fraction are no SMALLDATETIME text (SQL Server's 295), a year past
        // 2079 out of its range (242); either leaves nothing of its load.
        e = copyTemporal(c, List.<Object[]>of(new Object[] {10, Timestamp.valueOf("1954-05-22 02:43:37.1234"), null, null}));
        eq("SMALLDATETIME text with four fractional digits", e == null ? null : e.getErrorCode(), 295);
        eq("its message", e == null ? null : e.getMessage(),
                "Conversion failed when converting character string to smalldatetime data type.");
        e = copyTemporal(c, List.<Object[]>of(new Object[] {11, Timestamp.valueOf("2080-01-01 00:00:00"), null, null}));
        eq("SMALLDATETIME past 2079", e == null ? null : e.getErrorCode(), 242);
        eq("its message", e == null ? null : e.getMessage(), "The conversion of a varchar data type "
                + "to a smalldatetime data type resulted in an out-of-range value.");
        eq("the refused loads left nothing", scalar(c, "SELECT COUNT(*) FROM bulk_dt"), 3);
    }

    public static void main(String[] args) throws Exception {
        String tls = args.length > 4 && args[4].equals("tls")
                ? "encrypt=true;trustServerCertificate=true" : "encrypt=false";
        String url = "jdbc:sqlserver://" + args[0] + ":" + args[1] + ";" + tls + ";user=sa;password="
                + args[2] + ";databaseName=" + args[3];
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE bulk_src (id INT NOT NULL PRIMARY KEY, name NVARCHAR(40) NULL, "
                    + "amount DECIMAL(12,2) NULL, day DATE NULL)");
            s.execute("CREATE TABLE bulk_jdbc (id INT NOT NULL PRIMARY KEY, name NVARCHAR(40) NULL, "
                    + "amount DECIMAL(12,2) NULL, day DATE NULL, note NVARCHAR(10) NULL DEFAULT N'dflt')");
            s.execute("WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 1500) "
                    + "INSERT INTO bulk_src SELECT i, N'Grüße, 日本語 ✓', 1.25, '2024-02-29' FROM n "
                    + "OPTION (MAXRECURSION 2000)");
            s.execute("UPDATE bulk_src SET name = NULL, amount = NULL, day = NULL WHERE id % 10 = 0");

            SQLServerBulkCopyOptions batches = new SQLServerBulkCopyOptions();
            batches.setBatchSize(500);
            copy(c, "SELECT id, name, amount, day FROM bulk_src", "bulk_jdbc", batches);
            eq("rows copied in batches of 500", scalar(c, "SELECT COUNT(*) FROM bulk_jdbc"), 1500);
            eq("NULL names", scalar(c, "SELECT COUNT(*) FROM bulk_jdbc WHERE name IS NULL"), 150);
            eq("a unicode name", scalar(c, "SELECT name FROM bulk_jdbc WHERE id = 7"), "Grüße, 日本語 ✓");
            eq("the sum of a DECIMAL", scalar(c, "SELECT SUM(amount) FROM bulk_jdbc"), new BigDecimal("1687.50"));
            eq("a DATE", scalar(c, "SELECT CONVERT(VARCHAR(10), day, 23) FROM bulk_jdbc WHERE id = 1"), "2024-02-29");

            // A duplicate key: the server's 2627, nothing of that load left, the connection on.
            s.execute("INSERT INTO bulk_src VALUES (5000, N'new', 1, NULL)");
            try {
                copy(c, "SELECT id, name, amount, day FROM bulk_src WHERE id IN (5000, 7)", "bulk_jdbc", null);
                failures++;
                System.out.println("FAIL a duplicate key in a bulk copy raised no error");
            } catch (SQLException e) {
                eq("the duplicate key's error number", e.getErrorCode(), 2627);
            }
            eq("the failed copy left nothing", scalar(c, "SELECT COUNT(*) FROM bulk_jdbc WHERE id = 5000"), 0);
            eq("the connection goes on", scalar(c, "SELECT COUNT(*) FROM bulk_jdbc"), 1500);

            temporalFromBulkData(c);
        }
        System.out.println("mssql-jdbc bulk copy: " + (failures == 0 ? "ok" : "FAILED"));
        System.out.println("mssql-jdbc bulk copy: " + checked + " checks, " + failures + " failures");
        System.exit(failures == 0 ? 0 : 1);
    }
}
