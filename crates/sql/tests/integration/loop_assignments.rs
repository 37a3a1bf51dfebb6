//! The statements of a loop's body that the key-lookup loop made cheaper, checked against
//! what they must keep doing: compound assignment on every numeric type and on strings
//! (a quick integer path, BIGINT meeting INT without the general arithmetic), integer
//! constants typed as SQL Server types them (nine digits or fewer read directly), errors
//! raised at the same statement with the variable left as it was, `@@ROWCOUNT` after `SET`
//! and `SELECT @v =`, and autocommit statements (committed where the transaction lies)
//! between and around a user transaction.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use walden_engine::types::Value;

use crate::support;
use support::{ok, scalar, session};

fn text(v: &str) -> Value {
    Value::Str(v.into())
}

#[test]
fn compound_assignment_on_every_numeric_type_and_strings() {
    let (_dir, mut s) = session();
    let got = ok(
        &mut s,
        "DECLARE @t TINYINT = 1, @sm SMALLINT = 1, @i INT = 1, @b BIGINT = 1,
                 @d DECIMAL(10,2) = 1.5, @f FLOAT = 1.5, @r REAL = 1.5, @m MONEY = 1.5,
                 @s VARCHAR(20) = 'a', @n NVARCHAR(20) = N'a', @k INT = 0, @x INT = 100;
         WHILE @k < 3 BEGIN
           SET @k += 1; SET @t += 2; SET @sm *= 3; SET @i -= 5; SET @b *= -4;
           SET @d += 0.25; SET @f *= 2; SET @r /= 2; SET @m -= 0.5;
           SET @s += 'b'; SET @n += N'c';
           SET @x %= 7 + @k; SET @x |= 8; SET @x &= 14; SET @x ^= 1;
         END;
         SELECT @t, @sm, @i, @b, CONCAT(@d, '|', @r, '|', @m), @f, @s, @n, @x,
                SQL_VARIANT_PROPERTY(@t, 'BaseType'), SQL_VARIANT_PROPERTY(@m, 'BaseType')",
    );
    assert_eq!(
        got.results[0].rows[0],
        vec![
            Value::TinyInt(7),
            Value::SmallInt(27),
            Value::Int(-14),
            Value::BigInt(-64),
            text("2.25|0.1875|0.00"),
            Value::Float(12.0),
            text("abbb"),
            Value::NStr("accc".into()),
            // 100 % 8 = 4 | 8 = 12 & 14 = 12 ^ 1 = 13; 13 % 9 ... 13; 13 % 10 = 3 ... 11.
            Value::Int(11),
            Value::NStr("tinyint".into()),
            Value::NStr("money".into()),
        ]
    );
}

#[test]
fn a_failing_assignment_leaves_the_variable_and_raises_at_its_statement() {
    let (_dir, mut s) = session();
    let got = scalar(
        &mut s,
        "DECLARE @t TINYINT = 7, @sm SMALLINT = 27, @i INT = -14,
                 @b BIGINT = 9223372036854775807, @e VARCHAR(200) = '';
         BEGIN TRY SET @t += 300; END TRY
         BEGIN CATCH SET @e += CONCAT(ERROR_NUMBER(), ':', @t, ';'); END CATCH
         BEGIN TRY SET @sm *= 10000; END TRY
         BEGIN CATCH SET @e += CONCAT(ERROR_NUMBER(), ':', @sm, ';'); END CATCH
         BEGIN TRY SET @i += 2147483647; SET @i -= 2147483647; SET @i -= 2147483647; END TRY
         BEGIN CATCH SET @e += CONCAT(ERROR_NUMBER(), ':', @i, ';'); END CATCH
         BEGIN TRY SET @b += 1; END TRY
         BEGIN CATCH SET @e += CONCAT(ERROR_NUMBER(), ':', @b, ';'); END CATCH
         BEGIN TRY SET @b -= @i; END TRY
         BEGIN CATCH SET @e += CONCAT(ERROR_NUMBER(), ':', @b, ';'); END CATCH
         BEGIN TRY SET @i += CAST(3000000000 AS BIGINT); END TRY
         BEGIN CATCH SET @e += CONCAT(ERROR_NUMBER(), ':', @i, ';'); END CATCH
         BEGIN TRY SET @i /= 0; END TRY
         BEGIN CATCH SET @e += CONCAT(ERROR_NUMBER(), ':', @i, ';'); END CATCH
         BEGIN TRY SET @b %= 0; END TRY
         BEGIN CATCH SET @e += CONCAT(ERROR_NUMBER(), ':', @b, ';'); END CATCH
         BEGIN TRY SET @i += 'x'; END TRY
         BEGIN CATCH SET @e += CONCAT(ERROR_NUMBER(), ':', @i, ';'); END CATCH
         SELECT @e",
    );
    // 220 for a value that does not fit the variable's type, 8115 for arithmetic that
    // overflows its own type (BIGINT minus INT included), 8134 for a zero divisor, 245 for
    // text that is no number: each leaves the variable as it was.
    assert_eq!(
        got,
        text(
            "220:7;220:27;8115:-14;8115:9223372036854775807;8115:9223372036854775807;\
             220:-14;8134:-14;8134:9223372036854775807;245:-14;"
        )
    );
    // A conversion error outside TRY ends the batch at its statement.
    let out = support::run(&mut s, "DECLARE @i INT = 1; SET @i += 'x'; SELECT @i");
    assert_eq!(support::errors(&out), vec![245]);
    assert!(out.results.is_empty());
    // NULL makes a compound assignment NULL, for numbers and (CONCAT_NULL_YIELDS_NULL) text.
    let got = ok(
        &mut s,
        "DECLARE @i INT = 5, @s VARCHAR(10) = 'a', @n INT; SET @i += @n; SET @s += NULL;
         SELECT @i, @s",
    );
    assert_eq!(got.results[0].rows[0], vec![Value::Null, Value::Null]);
}

#[test]
fn integer_constants_and_int_meeting_bigint_keep_their_types() {
    let (_dir, mut s) = session();
    let got = ok(
        &mut s,
        "DECLARE @k INT = 5;
         SELECT SQL_VARIANT_PROPERTY(2147483647, 'BaseType'),
                CASE WHEN SQL_VARIANT_PROPERTY(2147483648, 'BaseType') IN ('numeric', 'decimal')
                     THEN 1 ELSE 0 END,
                SQL_VARIANT_PROPERTY(999999999, 'BaseType'), 0000000042, 007,
                SQL_VARIANT_PROPERTY(@k + CAST(1 AS BIGINT), 'BaseType'),
                SQL_VARIANT_PROPERTY(CAST(1 AS BIGINT) * @k, 'BaseType'),
                CAST(-9223372036854775807 AS BIGINT) - 1, @k * CAST(3 AS BIGINT) % 4",
    );
    assert_eq!(
        got.results[0].rows[0],
        vec![
            Value::NStr("int".into()),
            Value::Int(1),
            Value::NStr("int".into()),
            Value::Int(42),
            Value::Int(7),
            Value::NStr("bigint".into()),
            Value::NStr("bigint".into()),
            Value::BigInt(i64::MIN),
            Value::BigInt(3),
        ]
    );
    assert_eq!(
        scalar(
            &mut s,
            "BEGIN TRY SELECT (CAST(-9223372036854775807 AS BIGINT) - 1) / -1; END TRY
             BEGIN CATCH SELECT ERROR_NUMBER(); END CATCH"
        ),
        Value::Int(8115)
    );
}

#[test]
fn rowcount_after_a_select_assignment_in_a_loop() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t VALUES (1, 10), (2, 20)");
    // An assignment SELECT counts its rows; finding none leaves the variable as it was.
    let got = ok(
        &mut s,
        "DECLARE @k INT = 0, @v INT = -1, @log VARCHAR(100) = '';
         WHILE @k < 3 BEGIN
           SET @k += 1;
           SELECT @v = v FROM t WHERE k = @k;
           SET @log += CONCAT(@@ROWCOUNT, ':', @v, ';');
         END;
         SELECT @log",
    );
    assert_eq!(got.results[0].rows[0][0], text("1:10;1:20;0:20;"));
}

#[test]
fn autocommit_lookups_around_a_user_transaction_commit_and_release_their_locks() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value * 10 FROM GENERATE_SERIES(1, 5)");
    // Iterations 1, 2 and 5 run in autocommit transactions, 3 and 4 in a user transaction
    // that rolls back; BREAK and CONTINUE leave the loop where they say.
    let got = ok(
        &mut s,
        "DECLARE @i INT = 0, @v INT, @s INT = 0;
         WHILE 1 = 1 BEGIN
           SET @i += 1;
           IF @i = 3 BEGIN TRAN;
           SELECT @v = v FROM t WHERE k = @i;
           UPDATE t SET v = v + 100 WHERE k = @i;
           SET @s += @v;
           IF @i = 4 BEGIN ROLLBACK; CONTINUE; END;
           IF @i = 5 BREAK;
         END;
         SELECT @s, (SELECT SUM(v) FROM t), @@TRANCOUNT",
    );
    assert_eq!(got.results[0].rows[0], vec![Value::Int(150), Value::Int(450), Value::Int(0)]);
    // Every autocommit transaction gave its locks back when it committed.
    assert_eq!(
        scalar(
            &mut s,
            "SELECT COUNT(*) FROM sys.dm_tran_locks
             WHERE request_session_id = @@SPID AND resource_type NOT IN ('DATABASE', 'METADATA')"
        ),
        Value::Int(0)
    );
}
