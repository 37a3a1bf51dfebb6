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
import java.util.Objects;

import com.microsoft.sqlserver.jdbc.SQLServerBulkCopy;
import com.microsoft.sqlserver.jdbc.SQLServerBulkCopyOptions;

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
        }
        System.out.println("mssql-jdbc bulk copy: " + (failures == 0 ? "ok" : "FAILED"));
        System.out.println("mssql-jdbc bulk copy: " + checked + " checks, " + failures + " failures");
        System.exit(failures == 0 ? 0 : 1);
    }
}
