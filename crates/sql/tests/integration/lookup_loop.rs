//! Loops of key lookups, the procedural path `walden bench queries`' `pk_lookup_loop` times:
//! a key lookup on the clustered key takes a path of its own (one key encoded as its probes
//! are evaluated, only the wanted columns decoded), a kept plan skips the inlining check,
//! assignments of a variable's own type skip conversion, and INT meets BIGINT without the
//! general arithmetic. Each of those must give what the general path gives: NULL and
//! unconvertible probes, composite and text keys, SERIALIZABLE, overflow, a table replaced
//! by a view between iterations, and a variable of the same name in a nested batch.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use walden_engine::types::Value;
use walden_sql::exec::Session;

use crate::support;
use support::{ok, run, scalar, session};

/// The errors a batch raised, by number.
fn errors(s: &mut Session, sql: &str) -> Vec<i32> {
    run(s, sql).errors().map(|e| e.number).collect()
}

#[test]
fn the_benchmark_loop_sums_its_lookups() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE orders (order_id INT PRIMARY KEY, customer_id INT, amount INT)");
    ok(&mut s, "INSERT orders SELECT value, value % 7, value * 3 FROM GENERATE_SERIES(1, 1000)");
    let got = scalar(
        &mut s,
        "SET NOCOUNT ON; DECLARE @i INT = 0, @s BIGINT = 0, @a INT;
         WHILE @i < 2000 BEGIN
           SELECT @a = amount FROM orders WHERE order_id = (@i * 7919) % 1000 + 1;
           SET @s += @a; SET @i += 1;
         END;
         SELECT @s",
    );
    let want: i64 = (0..2000i64).map(|i| ((i * 7919) % 1000 + 1) * 3).sum();
    assert_eq!(got, Value::BigInt(want));
}

#[test]
fn probes_that_find_nothing_or_do_not_fit_the_key_answer_as_before() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value * 10 FROM GENERATE_SERIES(1, 100)");
    // A lookup that finds nothing leaves the variable as it was.
    let lookup = |s: &mut Session, probe: &str| {
        scalar(
            s,
            &format!(
                "DECLARE @v INT = -1, @n INT; SELECT @v = v FROM t WHERE k = {probe}; SELECT @v"
            ),
        )
    };
    assert_eq!(lookup(&mut s, "7"), Value::Int(70));
    assert_eq!(lookup(&mut s, "@n"), Value::Int(-1));
    assert_eq!(lookup(&mut s, "NULL"), Value::Int(-1));
    assert_eq!(lookup(&mut s, "'8'"), Value::Int(80));
    assert_eq!(lookup(&mut s, "CAST(9 AS BIGINT)"), Value::Int(90));
    // 2.5 is no INT: no row has it.
    assert_eq!(lookup(&mut s, "2.5"), Value::Int(-1));
    assert_eq!(lookup(&mut s, "3.0"), Value::Int(30));
    // Past INT's range: read as the general path reads it, finding nothing.
    assert_eq!(lookup(&mut s, "3000000000"), Value::Int(-1));
    // A probe that cannot convert fails as a comparison does.
    assert_eq!(errors(&mut s, "DECLARE @v INT; SELECT @v = v FROM t WHERE k = 'x'"), vec![245]);
    // Under ANSI_NULLS OFF `= @null` looks for a NULL key, which a primary key never holds.
    let off = scalar(
        &mut s,
        "SET ANSI_NULLS OFF; DECLARE @v INT = -1, @n INT;
         SELECT @v = v FROM t WHERE k = @n; SET ANSI_NULLS ON; SELECT @v",
    );
    assert_eq!(off, Value::Int(-1));
    // An error in a later probe surfaces even when an earlier one already found no key.
    ok(&mut s, "CREATE TABLE p (a INT, b INT, v INT, PRIMARY KEY (a, b))");
    ok(&mut s, "INSERT p VALUES (1, 1, 11), (1, 2, 12)");
    assert_eq!(
        errors(&mut s, "DECLARE @v INT; SELECT @v = v FROM p WHERE a = NULL AND b = 1 / 0"),
        vec![8134]
    );
}

#[test]
fn composite_and_text_keys_are_looked_up_whole() {
    let (_dir, mut s) = session();
    ok(
        &mut s,
        "CREATE TABLE p (a INT, name VARCHAR(20), v INT, w VARCHAR(10), PRIMARY KEY (a, name))",
    );
    ok(&mut s, "INSERT p VALUES (1, 'abc', 1, 'x'), (1, 'abd', 2, 'y'), (2, 'abc', 3, 'z')");
    let got = scalar(
        &mut s,
        "DECLARE @i INT = 0, @s INT = 0, @v INT, @w VARCHAR(10) = '';
         WHILE @i < 3 BEGIN
           SELECT @v = v, @w += w FROM p WHERE a = 1 AND name = 'ABD';
           SET @s += @v; SET @i += 1;
         END;
         SELECT CONCAT(@s, @w)",
    );
    // The default collation ignores case, as the key's encoding does.
    assert_eq!(got, Value::Str("6yyy".into()));
    // A key prefix is a range, not a lookup.
    assert_eq!(scalar(&mut s, "SELECT SUM(v) FROM p WHERE a = 1"), Value::Int(3));
    // The row's other columns, for a SELECT that reads them all.
    let out = ok(&mut s, "SELECT * FROM p WHERE a = 2 AND name = 'abc'");
    assert_eq!(
        out.results[0].rows[0],
        vec![Value::Int(2), Value::Str("abc".into()), Value::Int(3), Value::Str("z".into())]
    );
}

#[test]
fn serializable_lookups_read_the_same_rows() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, a INT, b VARCHAR(10))");
    ok(&mut s, "INSERT t VALUES (1, 10, 'one'), (2, 20, 'two')");
    let got = scalar(
        &mut s,
        "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; BEGIN TRAN;
         DECLARE @a INT, @b VARCHAR(10), @none INT = -1;
         SELECT @a = a, @b = b FROM t WHERE k = 2;
         SELECT @none = a FROM t WHERE k = 3;
         COMMIT; SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
         SELECT CONCAT(@a, @b, @none)",
    );
    assert_eq!(got, Value::Str("20two-1".into()));
}

#[test]
fn overflow_inside_a_loop_is_error_8115() {
    let (_dir, mut s) = session();
    let got = ok(
        &mut s,
        "DECLARE @i INT = 2147483000, @n INT = 0;
         BEGIN TRY
           WHILE 1 = 1 BEGIN SET @i += 100; SET @n += 1; END
         END TRY
         BEGIN CATCH SELECT ERROR_NUMBER(), @i, @n END CATCH",
    );
    assert_eq!(
        got.results[0].rows[0],
        vec![Value::Int(8115), Value::Int(2147483600), Value::Int(6)]
    );
    // BIGINT meeting INT works in BIGINT, and overflows there.
    assert_eq!(
        scalar(&mut s, "DECLARE @b BIGINT = 2147483647, @i INT = 1; SET @b += @i; SELECT @b"),
        Value::BigInt(2_147_483_648)
    );
    assert_eq!(
        scalar(&mut s, "DECLARE @b BIGINT = 5, @i INT = 7; SELECT @i - @b"),
        Value::BigInt(2)
    );
    assert_eq!(
        errors(&mut s, "DECLARE @b BIGINT = 9223372036854775800, @i INT = 10; SET @b += @i"),
        vec![8115]
    );
    assert_eq!(errors(&mut s, "DECLARE @b BIGINT = 1, @i INT = 0; SELECT @b / @i"), vec![8134]);
    // An INT variable assigned a BIGINT still converts (and overflows) as before.
    assert_eq!(errors(&mut s, "DECLARE @i INT, @b BIGINT = 3000000000; SET @i = @b"), vec![220]);
}

#[test]
fn a_table_replaced_by_a_view_between_iterations_is_read_through_the_view() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "CREATE TABLE u (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t VALUES (1, 1); INSERT u VALUES (1, 5)");
    let got = scalar(
        &mut s,
        "DECLARE @i INT = 0, @v INT, @s INT = 0;
         WHILE @i < 4 BEGIN
           SELECT @v = v FROM t WHERE k = 1;
           SET @s = @s * 10 + @v;
           IF @i = 1 EXEC ('DROP TABLE t');
           IF @i = 1 EXEC ('CREATE VIEW t AS SELECT k, v FROM u');
           SET @i += 1;
         END;
         SELECT @s",
    );
    assert_eq!(got, Value::Int(1155));
}

#[test]
fn a_nested_batch_has_its_own_variable_of_the_same_name() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value FROM GENERATE_SERIES(1, 10)");
    let got = scalar(
        &mut s,
        "DECLARE @v INT = 100, @s VARCHAR(10) = '', @i INT = 0;
         WHILE @i < 3 BEGIN
           EXEC sp_executesql N'DECLARE @v VARCHAR(5), @i INT = 1;
                               WHILE @i <= 2 BEGIN SELECT @v = v FROM t WHERE k = @i; SET @i += 1; END;
                               SET @out = @v + ''x''',
                              N'@out VARCHAR(10) OUTPUT', @out = @s OUTPUT;
           SELECT @v += v FROM t WHERE k = 3;
           SET @i += 1;
         END;
         SELECT CONCAT(@v, '/', @s)",
    );
    // The outer @v is an INT the inner batch never touched; the inner one a VARCHAR.
    assert_eq!(got, Value::Str("109/2x".into()));
}

#[test]
fn break_continue_and_goto_leave_a_lookup_loop_where_they_say() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value * 10 FROM GENERATE_SERIES(1, 50)");
    let got = ok(
        &mut s,
        "DECLARE @i INT = 0, @v INT, @s INT = 0, @skipped INT = 0;
         WHILE @i < 100 BEGIN
           SET @i += 1;
           SELECT @v = v FROM t WHERE k = @i;
           IF @i % 5 = 0 BEGIN SET @skipped += 1; CONTINUE; END;
           IF @v >= 300 BREAK;
           SET @s += @v;
         END;
         SELECT @s, @i, @skipped;
         SET @i = 0;
         again:
           SET @i += 1;
           SELECT @v = v FROM t WHERE k = @i;
           IF @v < 40 GOTO again;
         SELECT @i, @v",
    );
    // 1..29 without the multiples of 5, times 10; the loop breaks at 30's lookup (300),
    // after skipping 5, 10, ..., 25 and 30 (a multiple of 5 continues before the check).
    let want: i32 = (1..30).filter(|i| i % 5 != 0).map(|i| i * 10).sum();
    assert_eq!(got.results[0].rows[0], vec![Value::Int(want), Value::Int(31), Value::Int(6)]);
    assert_eq!(got.results[1].rows[0], vec![Value::Int(4), Value::Int(40)]);
}

#[test]
fn ddl_between_iterations_replans_the_lookup() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value FROM GENERATE_SERIES(1, 100)");
    // A column added before `v` moves it; a clustered key rebuilt on another column changes
    // what `k = @i` finds by: each iteration must read the table as it is.
    let got = scalar(
        &mut s,
        "DECLARE @i INT = 1, @v INT, @s VARCHAR(100) = '';
         WHILE @i <= 4 BEGIN
           SELECT @v = v FROM t WHERE k = @i;
           SET @s += CONCAT(@v, ',');
           IF @i = 1 EXEC ('ALTER TABLE t ADD w INT NULL; UPDATE t SET v = v + 1000');
           IF @i = 2 EXEC ('CREATE INDEX ix_v ON t (v)');
           IF @i = 3 EXEC ('DROP INDEX ix_v ON t; DELETE t WHERE k = 4');
           SET @i += 1;
         END;
         SELECT @s",
    );
    // The fourth lookup finds no row and leaves @v as the third set it.
    assert_eq!(got, Value::Str("1,1002,1003,1003,".into()));
}

#[test]
fn a_procedure_called_in_a_loop_looks_up_with_its_own_variables() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value * 2 FROM GENERATE_SERIES(1, 1000)");
    ok(
        &mut s,
        "CREATE PROCEDURE lookup_sum @n INT, @total BIGINT OUTPUT AS
         BEGIN
           DECLARE @i INT = 0, @v INT;
           SET @total = 0;
           WHILE @i < @n BEGIN
             SELECT @v = v FROM t WHERE k = (@i * 7919) % 1000 + 1;
             SET @total += @v; SET @i += 1;
           END
         END",
    );
    let got = scalar(
        &mut s,
        "DECLARE @i INT = 0, @v BIGINT, @s BIGINT = 0;
         WHILE @i < 3 BEGIN
           EXEC lookup_sum 500, @v OUTPUT;
           SET @s += @v; SET @i += 1;
         END;
         SELECT @s",
    );
    let once: i64 = (0..500i64).map(|i| ((i * 7919) % 1000 + 1) * 2).sum();
    assert_eq!(got, Value::BigInt(3 * once));
    // The same through sp_executesql, whose statement text is one cached batch.
    let got = scalar(
        &mut s,
        "DECLARE @i INT = 0, @v INT, @s BIGINT = 0;
         WHILE @i < 300 BEGIN
           EXEC sp_executesql N'SELECT @out = v FROM t WHERE k = @k',
                              N'@k INT, @out INT OUTPUT', @k = @i, @out = @v OUTPUT;
           SET @s += ISNULL(@v, 0); SET @i += 1;
         END;
         SELECT @s",
    );
    // k = 0 finds nothing (NULL output, counted 0); k = 1..299 find 2k.
    assert_eq!(got, Value::BigInt((1..300i64).map(|k| k * 2).sum()));
}

#[test]
fn an_assignment_from_a_kept_plan_assigns_counts_and_fails_as_the_general_select() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT, g INT, name VARCHAR(10))");
    ok(
        &mut s,
        "INSERT t SELECT value, value * 10, value % 3, CONCAT('n', value)
         FROM GENERATE_SERIES(1, 30)",
    );
    // Each statement runs three times: the first makes its plan, the others use it.
    let thrice = |body: &str| {
        format!(
            "DECLARE @i INT = 0, @a INT = -1, @b INT = -1, @n VARCHAR(10) = '', @rc INT, \
                     @s VARCHAR(200) = '';
             WHILE @i < 3 BEGIN
               SET @i += 1;
               {body}
               SET @rc = @@ROWCOUNT;
               SET @s += CONCAT(@a, '/', @b, '/', @n, '/', @rc, ';');
             END;
             SELECT @s"
        )
    };
    let run_thrice = |s: &mut Session, body: &str| scalar(s, &thrice(body));
    // Later items see earlier assignments of the same row; compound operators apply.
    assert_eq!(
        run_thrice(&mut s, "SELECT @a = v, @b = @a + 1, @n += name FROM t WHERE k = @i;"),
        Value::Str("10/11/n1/1;20/21/n1n2/1;30/31/n1n2n3/1;".into())
    );
    // No row: nothing assigned, @@ROWCOUNT 0.
    assert_eq!(
        run_thrice(&mut s, "SELECT @a = v FROM t WHERE k = @i + 100;"),
        Value::Str("-1/-1//0;-1/-1//0;-1/-1//0;".into())
    );
    // Several rows (a scan's plan): each assigns in turn, the last one's value stays.
    assert_eq!(
        run_thrice(&mut s, "SELECT @a = v FROM t WHERE g = @i % 3 AND k <= 9;"),
        Value::Str("70/-1//3;80/-1//3;90/-1//3;".into())
    );
    // SET ROWCOUNT stops the assignments after its n-th row (and counts n).
    ok(&mut s, "SET ROWCOUNT 2");
    assert_eq!(
        run_thrice(&mut s, "SELECT @a = v FROM t WHERE g = @i % 3 AND k <= 9;"),
        Value::Str("40/-1//2;50/-1//2;60/-1//2;".into())
    );
    ok(&mut s, "SET ROWCOUNT 0");
    // An aggregate is no plain assignment: grouped, one row.
    assert_eq!(
        run_thrice(&mut s, "SELECT @a = MAX(v) FROM t WHERE k <= @i;"),
        Value::Str("10/-1//1;20/-1//1;30/-1//1;".into())
    );
    // A value that does not convert fails the same way at every iteration.
    let got = ok(
        &mut s,
        "DECLARE @i INT = 0, @d DATE, @errors VARCHAR(50) = '';
         WHILE @i < 3 BEGIN
           SET @i += 1;
           BEGIN TRY SELECT @d = name FROM t WHERE k = @i; END TRY
           BEGIN CATCH SET @errors += CONCAT(ERROR_NUMBER(), ','); END CATCH
         END;
         SELECT @errors",
    );
    assert_eq!(got.results[0].rows[0][0], Value::Str("241,241,241,".into()));
}

#[test]
fn a_kept_plan_reads_where_clauses_of_one_and_many_conjuncts_as_the_general_select() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value * 10 FROM GENERATE_SERIES(1, 100)");
    // One comparison; a key and a constant conjunct whose variable changes between
    // iterations (checked before the read, the plan's own conjuncts fewer than the
    // clause's); a key and a row filter; an OR, whose common factor is the key.
    let got = scalar(
        &mut s,
        "SET NOCOUNT ON; DECLARE @i INT = 0, @a INT, @b INT, @c INT, @d INT,
           @sa INT = 0, @sb INT = 0, @sc INT = 0, @sd INT = 0;
         WHILE @i < 40 BEGIN
           SELECT @a = NULL, @b = NULL, @c = NULL, @d = NULL;
           SELECT @a = v FROM t WHERE k = @i + 1;
           SELECT @b = v FROM t WHERE k = @i + 1 AND @i % 2 = 0;
           SELECT @c = v FROM t WHERE k = @i + 1 AND v % 30 = 0;
           SELECT @d = v FROM t WHERE (k = @i + 1 AND v > 100) OR (k = @i + 1 AND v < 50);
           SET @sa += ISNULL(@a, 0); SET @sb += ISNULL(@b, 0);
           SET @sc += ISNULL(@c, 0); SET @sd += ISNULL(@d, 0);
           SET @i += 1;
         END;
         SELECT CONCAT(@sa, ',', @sb, ',', @sc, ',', @sd)",
    );
    let v = |k: i32| k * 10;
    let sa: i32 = (1..=40).map(v).sum();
    let sb: i32 = (1..=40).filter(|k| (k - 1) % 2 == 0).map(v).sum();
    let sc: i32 = (1..=40).map(v).filter(|v| v % 30 == 0).sum();
    let sd: i32 = (1..=40).map(v).filter(|v| !(50..=100).contains(v)).sum();
    assert_eq!(got, Value::Str(format!("{sa},{sb},{sc},{sd}")));
}

#[test]
fn a_lookup_into_a_reused_row_assigns_each_iteration_its_own_values() {
    let (_dir, mut s) = session();
    ok(
        &mut s,
        "CREATE TABLE t (k INT PRIMARY KEY, v INT NULL, name VARCHAR(10), big VARCHAR(MAX))",
    );
    ok(
        &mut s,
        "INSERT t SELECT value, value * 10, REPLICATE('n', value), NULL
         FROM GENERATE_SERIES(1, 5)",
    );
    // A value stored off-row, read through its overflow pages.
    ok(&mut s, "UPDATE t SET big = REPLICATE(CAST('b' AS VARCHAR(MAX)), 20000) WHERE k = 3");
    // Several columns, one of them twice and one by a compound operator; a row changed
    // between iterations (a NULL where a value was, a shorter string), a row missing (the
    // variables keep their values).
    let got = scalar(
        &mut s,
        "DECLARE @i INT = 0, @a INT, @b INT, @n VARCHAR(100) = '', @big VARCHAR(MAX),
           @s VARCHAR(300) = '';
         WHILE @i < 7 BEGIN
           SET @i += 1;
           SELECT @a = v, @b = v, @n += name, @big = big FROM t WHERE k = @i % 6;
           SET @s += CONCAT(ISNULL(@a, -1), '/', @b, '/', @n, '/', LEN(@big), '/', @@ROWCOUNT, ';');
           IF @i = 2 UPDATE t SET v = NULL, name = 'x' WHERE k IN (1, 3);
         END;
         SELECT @s",
    );
    assert_eq!(
        got,
        Value::Str(
            "10/10/n//1;20/20/nnn//1;-1//nnnx/20000/1;40/40/nnnxnnnn//1;\
             50/50/nnnxnnnnnnnnn//1;50/50/nnnxnnnnnnnnn//0;-1//nnnxnnnnnnnnnx//1;"
                .into()
        )
    );
}

#[test]
fn a_lookup_by_a_probe_that_is_null_or_no_key_of_the_column_assigns_nothing() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value * 10 FROM GENERATE_SERIES(1, 10)");
    // Each probe twice, the second time by its kept plan: NULL under ANSI_NULLS ON and OFF,
    // a fraction no INT equals, text that converts, text that does not (a scan comparing
    // it with each key, which fails as the comparison does), and a sum that is an integer.
    let got = scalar(
        &mut s,
        "DECLARE @i INT = 0, @v INT, @null INT, @frac DECIMAL(3, 1) = 2.5, @text VARCHAR(5) = '4',
           @bad VARCHAR(5) = 'x', @s VARCHAR(300) = '';
         WHILE @i < 2 BEGIN
           SET @i += 1;
           SET @v = -1; SELECT @v = v FROM t WHERE k = @null;
           SET @s += CONCAT(@v, '/', @@ROWCOUNT, ';');
           SET ANSI_NULLS OFF;
           SET @v = -1; SELECT @v = v FROM t WHERE k = @null;
           SET @s += CONCAT(@v, '/', @@ROWCOUNT, ';');
           SET ANSI_NULLS ON;
           SET @v = -1; SELECT @v = v FROM t WHERE k = @frac;
           SET @s += CONCAT(@v, '/', @@ROWCOUNT, ';');
           SET @v = -1; SELECT @v = v FROM t WHERE k = @text;
           SET @s += CONCAT(@v, '/', @@ROWCOUNT, ';');
           BEGIN TRY SELECT @v = v FROM t WHERE k = @bad; END TRY
           BEGIN CATCH SET @s += CONCAT('error ', ERROR_NUMBER(), ';'); END CATCH
           SET @v = -1; SELECT @v = v FROM t WHERE k = @frac + 2.5;
           SET @s += CONCAT(@v, '/', @@ROWCOUNT, '|');
         END;
         SELECT @s",
    );
    let once = "-1/0;-1/0;-1/0;40/1;error 245;50/1|";
    assert_eq!(got, Value::Str(once.repeat(2)));
}

#[test]
fn an_error_in_a_loop_body_is_reported_at_its_line_and_the_loop_goes_on() {
    let (_dir, mut s) = session();
    let out = run(
        &mut s,
        "DECLARE @i INT = 0, @n INT = 0;
         WHILE @i < 3 BEGIN
           SET @i += 1;
           SET @n += 1 / (@i - 2);
         END;
         SELECT @i, @n",
    );
    let errors: Vec<(i32, u32)> = out.errors().map(|e| (e.number, e.line)).collect();
    // Division by zero aborts its statement alone, at the second iteration.
    assert_eq!(errors, vec![(8134, 4)]);
    assert_eq!(out.results[0].rows[0], vec![Value::Int(3), Value::Int(0)]);
}

#[test]
fn a_loop_of_lookups_in_a_temporary_table_reads_tempdb_counts_its_reads_and_its_uses() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, -value FROM GENERATE_SERIES(1, 100)");
    ok(&mut s, "CREATE TABLE #t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT #t SELECT value, value * 2 FROM GENERATE_SERIES(1, 100)");
    let lookups = |table: &str, n: i32| {
        format!(
            "DECLARE @i INT = 0, @v INT, @s BIGINT = 0;
             WHILE @i < {n} BEGIN
               SELECT @v = v FROM {table} WHERE k = @i % 100 + 1;
               SET @s += @v; SET @i += 1;
             END;
             SELECT @s"
        )
    };
    // The temporary table's rows, not the permanent table's of the same short name.
    let want: i64 = (0..250i64).map(|i| (i % 100 + 1) * 2).sum();
    assert_eq!(scalar(&mut s, &lookups("#t", 250)), Value::BigInt(want));
    let want: i64 = (0..250i64).map(|i| -(i % 100 + 1)).sum();
    assert_eq!(scalar(&mut s, &lookups("t", 250)), Value::BigInt(want));
    // Each execution counts one use of its plan, the one that made it included.
    let uses = scalar(&mut s, "SELECT MAX(usecounts) FROM sys.dm_exec_cached_plans");
    assert_eq!(uses, Value::Int(250));
    // STATISTICS IO counts each lookup as a scan of its table, from every iteration.
    ok(&mut s, "SET STATISTICS IO ON");
    let io = support::io_lines(&ok(&mut s, &lookups("#t", 5)));
    ok(&mut s, "SET STATISTICS IO OFF");
    // Named as SQL Server names a temporary table there: `#t` padded to its name in tempdb.
    assert_eq!(io.len(), 5, "{io:?}");
    assert!(io.iter().all(|l| l.0.starts_with("#t_") && l.1 == 1), "{io:?}");
    assert!(io.iter().all(|l| (1..=4).contains(&l.2)), "{io:?}");
}

#[test]
fn integer_arithmetic_and_comparisons_give_the_general_answers() {
    let (_dir, mut s) = session();
    let int = |s: &mut Session, sql: &str| scalar(s, sql);
    assert_eq!(int(&mut s, "SELECT 1 + 2 * 3 - 4 / 2 % 3"), Value::Int(5));
    assert_eq!(int(&mut s, "SELECT (0 - 7) / 2"), Value::Int(-3));
    assert_eq!(int(&mut s, "SELECT (0 - 7) % 2"), Value::Int(-1));
    assert_eq!(
        int(&mut s, "DECLARE @i INT = 7, @b BIGINT = 3000000000; SELECT @b * 2 + @i"),
        Value::BigInt(6_000_000_007)
    );
    assert_eq!(int(&mut s, "DECLARE @i INT = 7, @b BIGINT = 2; SELECT @i % @b"), Value::BigInt(1));
    // A SMALLINT meets an INT as INT, by the general path.
    assert_eq!(int(&mut s, "DECLARE @s SMALLINT = 3; SELECT @s * 2 + 1"), Value::Int(7));
    // NULL anywhere makes NULL.
    assert_eq!(int(&mut s, "DECLARE @n INT; SELECT (@n + 1) * 2"), Value::Null);
    // Errors are the general path's: overflow of INT and of BIGINT, and a zero divisor.
    assert_eq!(errors(&mut s, "SELECT 2147483647 + 1"), vec![8115]);
    assert_eq!(errors(&mut s, "DECLARE @i INT = -2147483647 - 1; SELECT @i / (0 - 1)"), vec![8115]);
    assert_eq!(
        errors(&mut s, "DECLARE @b BIGINT = 9223372036854775807; SELECT @b + 1 - 1"),
        vec![8115]
    );
    assert_eq!(errors(&mut s, "DECLARE @i INT = 3; SELECT (@i + 1) % (@i - 3)"), vec![8134]);
    assert_eq!(errors(&mut s, "SELECT 1 / 0"), vec![8134]);
    // Comparisons: INT with BIGINT by value; NULL is unknown, and under ANSI_NULLS OFF
    // a NULL equals a NULL.
    let holds = |s: &mut Session, setup: &str, cond: &str| {
        scalar(s, &format!("{setup} IF {cond} SELECT 1 ELSE SELECT 0"))
    };
    let big = "DECLARE @b BIGINT = 3000000000, @i INT = 5, @n INT;";
    assert_eq!(holds(&mut s, big, "@b > @i * 2"), Value::Int(1));
    assert_eq!(holds(&mut s, big, "@i + 1 = 6"), Value::Int(1));
    assert_eq!(holds(&mut s, big, "@i <> 5"), Value::Int(0));
    assert_eq!(holds(&mut s, big, "@i >= @i"), Value::Int(1));
    assert_eq!(holds(&mut s, big, "@n < 1 OR @n >= 1"), Value::Int(0));
    assert_eq!(holds(&mut s, &format!("SET ANSI_NULLS OFF; {big}"), "@n = @n"), Value::Int(1));
    ok(&mut s, "SET ANSI_NULLS ON");
    // A loop bounded by a BIGINT counts as far as an INT loop does.
    assert_eq!(
        int(&mut s, "DECLARE @i BIGINT = 0, @n INT = 0; WHILE @i < 2500 BEGIN SET @i += 1; SET @n += 1; END; SELECT @n"),
        Value::Int(2500)
    );
}
