// The harness DriverTest and SuiteCasesTest share: their arguments, checks counted into one
// pass/fail tally, sections that report a line each, and connections to the server under test.
//
// Each program extends Checks so that its static methods call eq, section, connect, ... by
// their plain names, calls start(...) first with its own name (for usage and stack traces)
// and finish() last.

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Objects;

public class Checks {
    static String program, host, port, password, database, mode;
    static int failures, checked;

    interface Section {
        void run() throws Exception;
    }

    // HOST PORT PASSWORD [DATABASE [plain|tls]], each falling back to its environment
    // variable; without a password the program stops with its usage.
    static void start(String name, String[] args) {
        program = name;
        host = arg(args, 0, "WALDEN_HOST", "127.0.0.1");
        port = arg(args, 1, "WALDEN_PORT", "1433");
        password = arg(args, 2, "WALDEN_PASSWORD", null);
        database = arg(args, 3, "WALDEN_DATABASE", "drivers");
        mode = arg(args, 4, "WALDEN_JDBC_MODE", "plain");
    }

    // Prints the tally and exits 1 if any check failed.
    static void finish() {
        System.out.println("mssql-jdbc (" + mode + "): " + checked + " checks, " + failures + " failures");
        System.exit(failures > 0 ? 1 : 0);
    }

    static String arg(String[] args, int i, String env, String def) {
        if (args.length > i) {
            return args[i];
        }
        String v = System.getenv(env);
        if (v != null && !v.isEmpty()) {
            return v;
        }
        if (def == null) {
            System.err.println("usage: " + program + " HOST PORT PASSWORD [DATABASE [plain|tls]] (or $" + env + ")");
            System.exit(2);
        }
        return def;
    }

    static String show(Object v) {
        String s = v instanceof byte[] ? Arrays.toString((byte[]) v) : String.valueOf(v);
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    static void eq(String what, Object got, Object expected) {
        checked++;
        boolean same = got instanceof byte[] && expected instanceof byte[]
                ? Arrays.equals((byte[]) got, (byte[]) expected)
                : Objects.equals(got, expected);
        if (!same) {
            failures++;
            String types = got == null || expected == null || got.getClass() == expected.getClass()
                    ? ""
                    : " (" + got.getClass().getSimpleName() + " vs " + expected.getClass().getSimpleName() + ")";
            System.out.println("FAIL " + what + ": got " + show(got) + ", expected " + show(expected) + types);
        }
    }

    static void fail(String what) {
        checked++;
        failures++;
        System.out.println("FAIL " + what);
    }

    // Runs one section; an exception it throws is a failure, shown with the program's own
    // frames so that the line that threw is named.
    static void section(String name, Section fn) {
        int before = failures;
        try {
            fn.run();
        } catch (Exception e) {
            failures++;
            System.out.println("FAIL " + name + ": " + e);
            for (StackTraceElement frame : e.getStackTrace()) {
                if (frame.getClassName().equals(program)) {
                    System.out.println("    at " + frame);
                }
            }
        }
        System.out.println("mssql-jdbc (" + mode + "): " + name + ": " + (failures == before ? "ok" : "FAILED"));
    }

    static Connection connect(String db) throws SQLException {
        return connect(db, "");
    }

    // A connection with more properties (`extra`, each ending in ';').
    static Connection connect(String db, String extra) throws SQLException {
        String security = mode.equals("tls")
                ? "encrypt=true;trustServerCertificate=true"
                : "encrypt=false";
        String url = "jdbc:sqlserver://" + host + ":" + port + ";databaseName=" + db + ";" + security
                + ";loginTimeout=10;queryTimeout=30;" + extra;
        return DriverManager.getConnection(url, "sa", password);
    }

    static Object scalar(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getObject(1);
        }
    }

    static Object scalar(Connection c, String sql, int param) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setInt(1, param);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getObject(1);
            }
        }
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
