//! Variables found by the slot a statement remembers (`exec/session/variables.rs`): a
//! statement that reads or assigns `@x` remembers where it found it, and is run again in
//! scopes whose variables are laid out differently: sp_executesql of one text with its
//! parameters in another order, a procedure calling itself, a function called per row, a
//! cursor's positioned change that adds key variables for a while. Each must still find its
//! own scope's variable by name, with
//! SQL Server's 134 and 137 where there is none or two.

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
fn one_dynamic_text_with_its_parameters_in_either_order_reads_each_by_name() {
    let (_dir, mut s) = session();
    let text = "N'SET @b += 1; SELECT @a * 100 + @b'";
    for _ in 0..3 {
        let first = scalar(&mut s, &format!("EXEC sp_executesql {text}, N'@a INT, @b INT', 1, 2"));
        assert_eq!(first, Value::Int(103));
        let second = scalar(&mut s, &format!("EXEC sp_executesql {text}, N'@b INT, @a INT', 5, 7"));
        assert_eq!(second, Value::Int(706));
        // A third layout, with a parameter the text does not use, first.
        let third = scalar(
            &mut s,
            &format!("EXEC sp_executesql {text}, N'@z INT, @b INT, @a INT', 0, 8, 9"),
        );
        assert_eq!(third, Value::Int(909));
    }
    // The same text where the scope has no @a: 137, however often it found one before.
    assert_eq!(errors(&mut s, &format!("EXEC sp_executesql {text}, N'@b INT', 1")), vec![137]);
}

#[test]
fn a_procedure_calling_itself_reads_each_calls_own_variables() {
    let (_dir, mut s) = session();
    ok(
        &mut s,
        "CREATE PROCEDURE fact @n INT, @r BIGINT OUTPUT AS
         BEGIN
           DECLARE @sub BIGINT, @m INT = @n - 1;
           IF @n <= 1 SET @r = 1;
           ELSE BEGIN EXEC fact @m, @sub OUTPUT; SET @r = @n * @sub; END
         END",
    );
    let got = scalar(&mut s, "DECLARE @out BIGINT; EXEC fact 10, @out OUTPUT; SELECT @out");
    assert_eq!(got, Value::BigInt(3_628_800));
    // Called from a batch whose own variables lie elsewhere: the OUTPUT still lands by name.
    let got = scalar(
        &mut s,
        "DECLARE @x INT = 0, @y INT = 0, @out BIGINT; EXEC fact 5, @out OUTPUT; SELECT @out",
    );
    assert_eq!(got, Value::BigInt(120));
}

#[test]
fn a_function_called_per_row_reads_its_parameters_in_each_call() {
    let (_dir, mut s) = session();
    ok(
        &mut s,
        "CREATE FUNCTION dbo.twice_plus (@v INT, @k INT) RETURNS INT AS
         BEGIN DECLARE @t INT = @v * 2; RETURN @t + @k; END",
    );
    let got = scalar(
        &mut s,
        "DECLARE @k INT = 5;
         SELECT SUM(dbo.twice_plus(value, @k)) FROM GENERATE_SERIES(1, 50)",
    );
    assert_eq!(got, Value::Int((1..=50).map(|v| v * 2 + 5).sum()));
}

#[test]
fn declare_in_a_loop_keeps_the_variable_and_redeclaring_is_134() {
    let (_dir, mut s) = session();
    let got = scalar(
        &mut s,
        "DECLARE @i INT = 0;
         WHILE @i < 5 BEGIN DECLARE @acc INT; SET @acc = ISNULL(@acc, 0) + @i; SET @i += 1; END;
         SELECT @acc",
    );
    assert_eq!(got, Value::Int(10));
    assert_eq!(errors(&mut s, "DECLARE @a INT; SELECT 1; DECLARE @A INT;"), vec![134]);
    assert_eq!(errors(&mut s, "DECLARE @a INT = 1; SELECT @nope"), vec![137]);
    assert_eq!(errors(&mut s, "SET @nope = 1"), vec![137]);
}

#[test]
fn a_cursors_fetch_and_positioned_update_keep_the_loops_variables() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value FROM GENERATE_SERIES(1, 20)");
    // WHERE CURRENT OF binds the row's key as variables of the scope for the update and
    // drops them after: the loop's variables must be found again, by name, after each.
    let got = scalar(
        &mut s,
        "DECLARE @k INT, @v INT, @n INT = 0, @sum INT = 0;
         DECLARE c CURSOR FOR SELECT k, v FROM t ORDER BY k FOR UPDATE OF v;
         OPEN c; FETCH NEXT FROM c INTO @k, @v;
         WHILE @@FETCH_STATUS = 0 BEGIN
           UPDATE t SET v = @v * 10 WHERE CURRENT OF c;
           SET @n += 1; SET @sum += @k;
           FETCH NEXT FROM c INTO @k, @v;
         END;
         CLOSE c; DEALLOCATE c;
         SELECT @n * 1000 + @sum",
    );
    assert_eq!(got, Value::Int(20 * 1000 + 210));
    assert_eq!(scalar(&mut s, "SELECT SUM(v) FROM t"), Value::Int(2100));
}
