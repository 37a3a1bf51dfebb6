// Cases of mssql-jdbc's own JUnit suite (docs/serve.md, "mssql-jdbc's own tests") that
// DriverTest's `suiteCases` does not hold, each named after the suite's test it stands for.
//
// Usage: java -cp mssql-jdbc.jar:. SuiteCasesTest HOST PORT PASSWORD DATABASE [plain|tls],
// after DriverTest has created DATABASE. Prints one line per section and a FAIL line per
// failed check; exits 1 if any check failed.

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

public class SuiteCasesTest extends Checks {
    // SQLVariantResultSetTest's callableStatementOutput* and callableStatementInputOutput*:
    // the driver sends a sql_variant OUTPUT parameter as a NULL of maximum length 0 and reads
    // the RETURNVALUE's value by the SSVARIANT type info it comes back with.
    static void variantOutputs() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TABLE suite_variants (col1 sql_variant, col2 int)");
            exec(c, "INSERT INTO suite_variants VALUES (CAST(5 AS int), 2), "
                    + "(CAST('2015-05-08' AS date), 3), (CAST('aa' AS varchar(5)), 4), (0xC0FFEE, 5)");
            exec(c, "CREATE PROCEDURE suite_variant_out @p0 sql_variant OUTPUT, @p1 sql_variant AS "
                    + "SELECT TOP 1 @p0 = col1 FROM suite_variants WHERE col2 = @p1 RETURN 12");
            try (CallableStatement cs = c.prepareCall("{call suite_variant_out(?, ?)}")) {
                cs.registerOutParameter(1, microsoft.sql.Types.SQL_VARIANT);
                cs.setObject(2, 2, microsoft.sql.Types.SQL_VARIANT);
                cs.execute();
                eq("an int in a sql_variant OUTPUT", cs.getObject(1), 5);
                eq("its text", cs.getString(1), "5");
                cs.setObject(2, 3, microsoft.sql.Types.SQL_VARIANT);
                cs.execute();
                eq("a date in a sql_variant OUTPUT", cs.getString(1), "2015-05-08");
                cs.setObject(2, 5, microsoft.sql.Types.SQL_VARIANT);
                cs.execute();
                eq("a varbinary in a sql_variant OUTPUT", cs.getBytes(1),
                        new byte[] {(byte) 0xC0, (byte) 0xFF, (byte) 0xEE});
                cs.setObject(2, 6, microsoft.sql.Types.SQL_VARIANT);
                cs.execute();
                eq("no row leaves the sql_variant OUTPUT NULL", cs.getObject(1), null);
            }
            try (CallableStatement cs = c.prepareCall("{? = call suite_variant_out(?, ?)}")) {
                cs.registerOutParameter(1, java.sql.Types.INTEGER);
                cs.registerOutParameter(2, microsoft.sql.Types.SQL_VARIANT);
                cs.setObject(3, 4, microsoft.sql.Types.SQL_VARIANT);
                cs.execute();
                eq("the return status beside a sql_variant OUTPUT", cs.getObject(1), 12);
                eq("a varchar in a sql_variant OUTPUT", cs.getObject(2), "aa");
            }
        }
    }

    // The type, type name, precision and scale getParameterMetaData() reports for each
    // parameter of `sql`, which mssql-jdbc asks sp_describe_undeclared_parameters for.
    static List<String> parameterTypes(Connection c, String sql) throws SQLException {
        List<String> got = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement(sql)) {
            ParameterMetaData meta = s.getParameterMetaData();
            for (int i = 1; i <= meta.getParameterCount(); i++) {
                got.add(meta.getParameterType(i) + " " + meta.getParameterTypeName(i) + " "
                        + meta.getPrecision(i) + "," + meta.getScale(i));
            }
        }
        return got;
    }

    // PQImpsTest: parameters typed as SQL Server types them, by the columns they meet,
    // declared types (SMALLDATETIME, SMALLMONEY, TEXT, NTEXT) as declared, and those of
    // subqueries, MERGE and INSERT ... SELECT too.
    static void describedParameters() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TABLE suite_pq (id INT PRIMARY KEY, at SMALLDATETIME, cash SMALLMONEY, "
                    + "body TEXT, nbody NTEXT, label CHAR(30), note VARCHAR(50))");
            exec(c, "CREATE TABLE suite_pq2 (id INT, phone BIGINT, plain SMALLINT)");
            eq("declared types", parameterTypes(c, "SELECT id FROM suite_pq WHERE at = ? AND cash = ?"),
                    List.of("93 smalldatetime 16,0", "3 smallmoney 10,4"));
            eq("TEXT and NTEXT values", parameterTypes(c, "INSERT INTO suite_pq (id, body, nbody) VALUES (1, ?, ?)"),
                    List.of("-1 text 2147483647,0", "-16 ntext 1073741823,0"));
            eq("an IN subquery's parameters",
                    parameterTypes(c, "SELECT label FROM suite_pq a WHERE a.id IN (SELECT id FROM suite_pq2 "
                            + "WHERE phone = ? AND id = ? AND plain = ?)"),
                    List.of("-5 bigint 19,0", "4 int 10,0", "5 smallint 5,0"));
            eq("an outer column in a subquery",
                    parameterTypes(c, "SELECT 1 FROM suite_pq a WHERE EXISTS (SELECT 1 FROM suite_pq2 b "
                            + "WHERE b.id = a.id AND a.note = ?)"),
                    List.of("12 varchar 50,0"));
            eq("MERGE's SET items",
                    parameterTypes(c, "MERGE suite_pq AS T USING suite_pq2 AS S ON T.id = S.id "
                            + "WHEN MATCHED THEN UPDATE SET T.label = ?, T.note = ? "
                            + "WHEN NOT MATCHED THEN INSERT (id, cash) VALUES (S.id, ?);"),
                    List.of("1 char 30,0", "12 varchar 50,0", "3 smallmoney 10,4"));
            eq("INSERT ... SELECT ? WHERE NOT EXISTS (...)",
                    parameterTypes(c, "INSERT INTO suite_pq2 (plain) SELECT ? WHERE NOT EXISTS "
                            + "(SELECT * FROM suite_pq WHERE label = ?)"),
                    List.of("5 smallint 5,0", "1 char 30,0"));
        }
    }

    // LimitEscapeTest: the driver turns `{limit n}` into TOP, and its test query puts the
    // derived table's query in extra parentheses.
    static void limitEscapes() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TABLE suite_limited (id INT PRIMARY KEY)");
            exec(c, "INSERT INTO suite_limited VALUES (1), (2), (3), (4)");
            eq("{limit} in a derived table in extra parentheses",
                    scalar(c, "SELECT COUNT(*) FROM (SELECT id FROM (( (SELECT * FROM suite_limited {limit 3})) ) t1 "
                            + "{limit ((2) )}) t2"), 2);
            eq("a parenthesized table source starting with a derived table",
                    scalar(c, "SELECT COUNT(*) FROM ((SELECT id FROM suite_limited) AS a "
                            + "JOIN suite_limited b ON a.id = b.id)"), 4);
        }
    }

    // BatchTriggerTest: a trigger's RAISERROR and ROLLBACK reach Statement.executeBatch, which
    // reads the batch's results up to the first DONE that is not DONEINPROC; and
    // BatchExecuteWithErrorsTest (Repro47239): a conversion error aborts the batch and rolls
    // the implicit transaction back. (Which exception the driver throws depends on the
    // ENVCHANGEs it saw: Walden reports a transaction begun and rolled back within one batch
    // with none, so it is a BatchUpdateException here; the suite's test has rolled back a
    // transaction before, and gets the error itself, as against SQL Server.)
    static void batchErrors() throws SQLException {
        try (Connection c = connect(database)) {
            exec(c, "CREATE TABLE suite_triggered (col1 INT, col2 VARCHAR(50))");
            exec(c, "CREATE TRIGGER suite_refuse ON suite_triggered FOR INSERT AS BEGIN "
                    + "IF (SELECT col1 FROM suite_triggered) > 10 BEGIN RETURN END "
                    + "RAISERROR ('refused by the trigger', 16, 0) ROLLBACK TRANSACTION END");
            String insert = "INSERT INTO suite_triggered VALUES (1, 'x')";
            String got = null;
            try (Statement s = c.createStatement()) {
                s.addBatch(insert);
                s.executeBatch();
            } catch (SQLException e) {
                got = e.getMessage();
            }
            eq("a trigger's error through Statement.executeBatch", got, "refused by the trigger");
            got = null;
            try (PreparedStatement s = c.prepareStatement(insert)) {
                s.addBatch();
                s.executeBatch();
            } catch (SQLException e) {
                got = e.getMessage();
            }
            eq("a trigger's error through PreparedStatement.executeBatch", got, "refused by the trigger");
            eq("the trigger's ROLLBACK undid the rows", scalar(c, "SELECT COUNT(*) FROM suite_triggered"), 0);

            exec(c, "CREATE TABLE suite_dated_rows (id INT, label VARCHAR(20), at DATETIME)");
            c.setAutoCommit(false);
            String thrown = null;
            try (Statement s = c.createStatement()) {
                s.addBatch("INSERT INTO suite_dated_rows VALUES (1, 'first', '2024-01-01')");
                s.addBatch("INSERT INTO suite_dated_rows VALUES (2, 'bad', 'asdfasdf')");
                s.addBatch("INSERT INTO suite_dated_rows VALUES (3, 'after', '2024-01-03')");
                s.executeBatch();
            } catch (SQLException e) {
                thrown = e.getMessage();
            }
            eq("a conversion error in a batch under implicit transactions", thrown,
                    "Conversion failed when converting date and/or time from character string.");
            eq("its transaction is rolled back", scalar(c, "SELECT @@TRANCOUNT"), 0);
            c.setAutoCommit(true);
            eq("none of the batch's rows stay", scalar(c, "SELECT COUNT(*) FROM suite_dated_rows"), 0);
        }
    }

    public static void main(String[] args) {
        start("SuiteCasesTest", args);
        section("sql_variant OUTPUT parameters", SuiteCasesTest::variantOutputs);
        section("parameters described before execution", SuiteCasesTest::describedParameters);
        section("{limit} escapes", SuiteCasesTest::limitEscapes);
        section("errors in batches", SuiteCasesTest::batchErrors);
        finish();
    }
}
