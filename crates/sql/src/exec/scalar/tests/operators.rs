//! Operators: unary and binary arithmetic by type and precedence, and the quick path for
//! common operands, which must agree with the general one.

use super::*;

#[test]
fn unary_operators() {
    assert_eq!(unary(UnaryOp::Minus, Value::Int(5)).unwrap(), Value::Int(-5));
    let e = unary(UnaryOp::Minus, Value::Int(i32::MIN)).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting expression to data type int.")
    );
    assert_eq!(unary(UnaryOp::Minus, Value::TinyInt(5)).unwrap(), Value::SmallInt(-5));
    assert_eq!(unary(UnaryOp::Minus, dec("1.50")).unwrap(), dec("-1.50"));
    assert_eq!(unary(UnaryOp::Minus, Value::Money(1)).unwrap(), Value::Money(-1));
    assert_eq!(unary(UnaryOp::Plus, s("a")).unwrap(), s("a"));
    assert_eq!(unary(UnaryOp::BitNot, Value::Int(0)).unwrap(), Value::Int(-1));
    assert_eq!(unary(UnaryOp::BitNot, Value::TinyInt(1)).unwrap(), Value::TinyInt(254));
    assert_eq!(unary(UnaryOp::BitNot, Value::Bit(true)).unwrap(), Value::Bit(false));
    assert_eq!(unary(UnaryOp::Minus, Value::Null).unwrap(), Value::Null);
    let e = unary(UnaryOp::Minus, s("1")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8117, "Operand data type varchar is invalid for minus operator.")
    );
    assert_eq!(number(unary(UnaryOp::BitNot, dec("1.5"))), 8117);
    assert!(unary(UnaryOp::Not, Value::Int(1)).is_err());
}

#[test]
fn precedence_decides_the_operation() {
    assert_eq!(add(Value::Int(1), s("1")).unwrap(), Value::Int(2));
    assert_eq!(add(s("1"), Value::Int(1)).unwrap(), Value::Int(2));
    assert_eq!(add(s("1"), s("1")).unwrap(), s("11"));
    assert_eq!(add(ns("a"), s("b")).unwrap(), ns("ab"));
    assert_eq!(add(s("a"), Value::Binary(b"b".to_vec())).unwrap(), s("ab"));
    assert_eq!(
        add(Value::Binary(vec![1]), Value::Binary(vec![2])).unwrap(),
        Value::Binary(vec![1, 2])
    );
    let e = add(Value::Int(1), s("a")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (245, "Conversion failed when converting the varchar value 'a' to data type int.")
    );
    assert_eq!(add(Value::Int(1), Value::BigInt(2)).unwrap(), Value::BigInt(3));
    assert_eq!(add(Value::SmallInt(1), Value::TinyInt(2)).unwrap(), Value::SmallInt(3));
    assert_eq!(add(Value::Int(1), dec("1.5")).unwrap(), dec("2.5"));
    assert_eq!(add(Value::Int(1), Value::Float(0.5)).unwrap(), Value::Float(1.5));
    assert_eq!(add(Value::Real(0.5), Value::Int(1)).unwrap(), Value::Real(1.5));
    assert_eq!(add(Value::Float(0.5), s("1.5")).unwrap(), Value::Float(2.0));
    assert_eq!(add(dec("1.5"), s("2.25")).unwrap(), dec("3.75"));
    assert_eq!(add(Value::Money(10_000), Value::Int(1)).unwrap(), Value::Money(20_000));
    assert_eq!(add(Value::Bit(true), Value::Int(1)).unwrap(), Value::Int(2));
    let e = add(Value::Bit(true), Value::Bit(true)).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8117, "Operand data type bit is invalid for add operator.")
    );
    let e = binary(BinaryOp::Subtract, s("a"), s("b")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8117, "Operand data type varchar is invalid for subtract operator.")
    );
    assert_eq!(add(Value::Null, Value::Int(1)).unwrap(), Value::Null);
    assert_eq!(add(s("a"), Value::Null).unwrap(), Value::Null);
    assert!(binary(BinaryOp::Eq, Value::Int(1), Value::Int(1)).is_err());
    assert!(binary(BinaryOp::And, s("a"), s("b")).is_err());
}

#[test]
fn integer_arithmetic() {
    let op = |o: BinaryOp, a: i32, b: i32| binary(o, Value::Int(a), Value::Int(b));
    assert_eq!(op(BinaryOp::Divide, 7, 2).unwrap(), Value::Int(3));
    assert_eq!(op(BinaryOp::Divide, -7, 2).unwrap(), Value::Int(-3));
    assert_eq!(op(BinaryOp::Modulo, -7, 2).unwrap(), Value::Int(-1));
    assert_eq!(op(BinaryOp::Modulo, i32::MIN, -1).unwrap(), Value::Int(0));
    assert_eq!(op(BinaryOp::Multiply, 6, 7).unwrap(), Value::Int(42));
    let e = op(BinaryOp::Divide, 1, 0).unwrap_err();
    assert_eq!((e.number, e.message.as_str()), (8134, "Divide by zero error encountered."));
    assert_eq!(number(op(BinaryOp::Modulo, 1, 0)), 8134);
    let e = op(BinaryOp::Add, i32::MAX, 1).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting expression to data type int.")
    );
    assert_eq!(number(op(BinaryOp::Divide, i32::MIN, -1)), 8115);
    let e = binary(BinaryOp::Multiply, Value::BigInt(i64::MAX), Value::BigInt(2)).unwrap_err();
    assert_eq!(e.message, "Arithmetic overflow error converting expression to data type bigint.");
    let e = add(Value::TinyInt(200), Value::TinyInt(100)).unwrap_err();
    assert_eq!(e.message, "Arithmetic overflow error converting expression to data type tinyint.");
    assert_eq!(op(BinaryOp::BitAnd, 5, 3).unwrap(), Value::Int(1));
    assert_eq!(op(BinaryOp::BitOr, 5, 3).unwrap(), Value::Int(7));
    assert_eq!(op(BinaryOp::BitXor, 5, 3).unwrap(), Value::Int(6));
    assert_eq!(
        binary(BinaryOp::BitAnd, Value::Bit(true), Value::Bit(false)).unwrap(),
        Value::Bit(false)
    );
    assert_eq!(
        binary(BinaryOp::BitOr, Value::TinyInt(1), Value::BigInt(2)).unwrap(),
        Value::BigInt(3)
    );
    assert_eq!(binary(BinaryOp::BitOr, Value::Null, Value::Int(2)).unwrap(), Value::Null);
    assert_eq!(number(binary(BinaryOp::BitAnd, dec("1.5"), Value::Int(1))), 402);
    // One binary operand is read as the other operand's integer type.
    assert_eq!(
        binary(BinaryOp::BitAnd, Value::SmallInt(0x24), Value::Binary(vec![0x0f])).unwrap(),
        Value::SmallInt(4)
    );
    assert_eq!(
        binary(BinaryOp::BitOr, Value::Binary(vec![1, 0, 0, 0, 2]), Value::Int(1)).unwrap(),
        Value::Int(3)
    );
    assert_eq!(
        binary(BinaryOp::BitXor, Value::TinyInt(1), Value::Binary(vec![0xff, 0x03])).unwrap(),
        Value::TinyInt(2)
    );
    let e = binary(BinaryOp::BitAnd, Value::Binary(vec![1]), Value::Binary(vec![1])).unwrap_err();
    assert_eq!(
        e.message,
        "The data types varbinary and varbinary are incompatible in the '&' operator."
    );
}

#[test]
fn decimal_arithmetic_follows_sql_server_scales() {
    let op = |o: BinaryOp, a: Value, b: Value| text(binary(o, a, b).unwrap());
    assert_eq!(op(BinaryOp::Multiply, dec("1.50"), Value::Int(2)), "3.00");
    assert_eq!(op(BinaryOp::Multiply, dec("1.5"), dec("1.25")), "1.875");
    assert_eq!(op(BinaryOp::Divide, dec("1.0"), Value::Int(3)), "0.333333");
    assert_eq!(op(BinaryOp::Divide, dec("2.0"), Value::Int(3)), "0.666666");
    assert_eq!(op(BinaryOp::Divide, Value::Int(15), dec("10.0")), "1.500000");
    assert_eq!(op(BinaryOp::Divide, dec("-7.5"), dec("2.5")), "-3.000000");
    assert_eq!(op(BinaryOp::Add, dec("1.5"), dec("2.25")), "3.75");
    assert_eq!(op(BinaryOp::Subtract, dec("1.5"), Value::Int(2)), "-0.5");
    assert_eq!(op(BinaryOp::Modulo, dec("10.5"), Value::Int(3)), "1.5");
    assert_eq!(op(BinaryOp::Modulo, dec("-10.5"), Value::Int(3)), "-1.5");
    assert_eq!(op(BinaryOp::Add, dec("0.1"), Value::Money(10_000)), "1.1000");
    // numeric(28,28) squared is numeric(57,56): one integral digit, so the scale is cut to 37
    // and the exact product rounded there.
    let x = dec("0.1234567890123456789012345678");
    assert_eq!(op(BinaryOp::Multiply, x.clone(), x), "0.0152415787532388367504953515403139768");
    assert_eq!(number(binary(BinaryOp::Divide, dec("1.5"), dec("0.0"))), 8134);
    let big = dec(&format!("99{}", "0".repeat(36)));
    let e = binary(BinaryOp::Multiply, big.clone(), Value::Int(100)).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting expression to data type numeric.")
    );
    assert_eq!(number(binary(BinaryOp::Add, big.clone(), big)), 8115);
}

#[test]
fn float_money_and_datetime_arithmetic() {
    assert_eq!(
        binary(BinaryOp::Divide, Value::Float(1.0), Value::Int(4)).unwrap(),
        Value::Float(0.25)
    );
    assert_eq!(number(binary(BinaryOp::Divide, Value::Float(1.0), Value::Float(0.0))), 8134);
    assert_eq!(number(binary(BinaryOp::Modulo, Value::Float(1.0), Value::Int(2))), 402);
    assert_eq!(number(binary(BinaryOp::Multiply, Value::Float(1e308), Value::Int(10))), 8115);
    assert_eq!(
        binary(BinaryOp::Multiply, Value::Money(25_000), Value::Int(2)).unwrap(),
        Value::Money(50_000)
    );
    assert_eq!(
        binary(BinaryOp::Divide, Value::Money(10_000), Value::Int(3)).unwrap(),
        Value::Money(3_333)
    );
    assert_eq!(
        add(datetime("2024-01-31 10:00"), Value::Int(1)).unwrap(),
        datetime("2024-02-01 10:00")
    );
    assert_eq!(add(datetime("2024-01-31"), dec("0.5")).unwrap(), datetime("2024-01-31 12:00"));
    assert_eq!(
        binary(BinaryOp::Subtract, datetime("2024-01-02 06:00"), datetime("2024-01-01")).unwrap(),
        datetime("1900-01-02 06:00")
    );
    assert_eq!(add(datetime("2024-01-01"), s("1900-01-03")).unwrap(), datetime("2024-01-03"));
    assert_eq!(number(binary(BinaryOp::Multiply, datetime("2024-01-01"), Value::Int(2))), 8117);
    let e = add(date("2024-01-01"), Value::Int(1)).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (206, "Operand type clash: date is incompatible with int")
    );
    assert_eq!(number(add(datetime2("2024-01-01"), Value::Int(1))), 206);
    assert_eq!(number(add(Value::Guid(Guid([0; 16])), s("x"))), 8117);
}

#[test]
fn the_int_fast_path_runs_a_million_times() {
    let mut i = Value::Int(0);
    for _ in 0..1_000_000 {
        i = binary(BinaryOp::Add, i, Value::Int(1)).unwrap();
    }
    assert_eq!(i, Value::Int(1_000_000));
}

#[test]
fn quick_arithmetic_is_the_general_arithmetic() {
    let values = [
        Value::Int(0),
        Value::Int(-7),
        Value::Int(-1),
        Value::Int(5),
        Value::Int(i32::MAX),
        Value::Int(i32::MIN),
        Value::BigInt(3),
        Value::BigInt(-1),
        Value::BigInt(-10),
        Value::BigInt(i64::MAX),
        Value::BigInt(i64::MIN),
        dec("1.50"),
        dec("-0.07"),
        dec("12345678901234567.5"),
        dec("99999999999999999999999999999999999.99"),
        dec("0.000000000000000000001"),
        Value::Float(1.5),
        Value::Null,
    ];
    let mut quick = 0;
    for a in &values {
        for b in &values {
            let ops = [
                BinaryOp::Add,
                BinaryOp::Subtract,
                BinaryOp::Multiply,
                BinaryOp::Divide,
                BinaryOp::Modulo,
            ];
            for op in ops {
                let general = binary(op, a.clone(), b.clone());
                if let Some(v) = arith::quick_binary(op, a, b) {
                    // The same value of the same type, where the general path succeeds.
                    assert_eq!(
                        general.ok().map(|g| (g.to_string(), type_of(&g))),
                        Some((v.to_string(), type_of(&v))),
                        "{a:?} {op:?} {b:?}"
                    );
                    quick += 1;
                }
            }
        }
    }
    assert!(quick > 20, "{quick}");
}
