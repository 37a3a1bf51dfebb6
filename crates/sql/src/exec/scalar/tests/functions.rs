//! The function registry's dispatch and argument counts, and the string, math, random and
//! NULL functions.

use super::*;

#[test]
fn dispatch_and_argument_counts() {
    assert!(call("NO_SUCH_FUNCTION", vec![]).is_none());
    assert!(call("STRING_AGG", vec![]).is_none());
    assert_eq!(f("len", vec![s("ab")]).unwrap(), Value::Int(2));
    let e = f("DATEADD", vec![s("day")]).unwrap_err();
    assert_eq!(
        (e.number, e.severity, e.message.as_str()),
        (174, 15, "The dateadd function requires 3 argument(s).")
    );
    let e = f("CONCAT", vec![s("a")]).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (189, "The concat function requires 2 to 254 arguments.")
    );
    assert_eq!(f("CHARINDEX", vec![s("a")]).unwrap_err().number, 189);
}

#[test]
fn string_functions() {
    assert_eq!(f("LEN", vec![s("abc  ")]).unwrap(), Value::Int(3));
    assert_eq!(f("LEN", vec![s("  abc")]).unwrap(), Value::Int(5));
    assert_eq!(f("LEN", vec![Value::Null]).unwrap(), Value::Null);
    assert_eq!(f("LEN", vec![Value::Int(-123)]).unwrap(), Value::Int(4));
    assert_eq!(f("DATALENGTH", vec![s("abc  ")]).unwrap(), Value::Int(5));
    assert_eq!(f("DATALENGTH", vec![ns("ab")]).unwrap(), Value::Int(4));
    assert_eq!(f("DATALENGTH", vec![Value::Int(1)]).unwrap(), Value::Int(4));
    assert_eq!(f("DATALENGTH", vec![Value::Null]).unwrap(), Value::Null);
    assert_eq!(f("LEFT", vec![s("abc"), Value::Int(2)]).unwrap(), s("ab"));
    assert_eq!(f("LEFT", vec![ns("abc"), Value::Int(10)]).unwrap(), ns("abc"));
    assert_eq!(f("RIGHT", vec![s("abc"), Value::Int(2)]).unwrap(), s("bc"));
    let e = f("LEFT", vec![s("abc"), Value::Int(-1)]).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (536, "Invalid length parameter passed to the left function.")
    );
    assert_eq!(f("RIGHT", vec![s("abc"), Value::Int(-1)]).unwrap_err().number, 536);
    assert_eq!(f("LEFT", vec![Value::Null, Value::Int(1)]).unwrap(), Value::Null);
    let sub = |x: &str, start: i32, len: i32| {
        f("SUBSTRING", vec![s(x), Value::Int(start), Value::Int(len)])
    };
    assert_eq!(sub("abc", 1, 2).unwrap(), s("ab"));
    assert_eq!(sub("abc", 0, 2).unwrap(), s("a"));
    assert_eq!(sub("abc", -1, 3).unwrap(), s("a"));
    assert_eq!(sub("abc", -5, 3).unwrap(), s(""));
    assert_eq!(sub("abc", 2, 10).unwrap(), s("bc"));
    assert_eq!(sub("abc", 5, 1).unwrap(), s(""));
    let e = sub("abc", 1, -1).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (537, "Invalid length parameter passed to the substring function.")
    );
    assert_eq!(
        f("SUBSTRING", vec![Value::Binary(vec![1, 2, 3]), Value::Int(2), Value::Int(1)]).unwrap(),
        Value::Binary(vec![2])
    );
    assert_eq!(f("LTRIM", vec![s("  a  ")]).unwrap(), s("a  "));
    assert_eq!(f("RTRIM", vec![s("  a  ")]).unwrap(), s("  a"));
    assert_eq!(f("TRIM", vec![ns("  a  ")]).unwrap(), ns("a"));
    assert_eq!(f("LTRIM", vec![s("xxa"), s("x")]).unwrap(), s("a"));
    assert_eq!(f("UPPER", vec![s("abé")]).unwrap(), s("ABÉ"));
    assert_eq!(f("LOWER", vec![ns("ABC")]).unwrap(), ns("abc"));
    assert_eq!(f("REVERSE", vec![s("abc")]).unwrap(), s("cba"));
    let replace = |a: &str, b: &str, c: &str| f("REPLACE", vec![s(a), s(b), s(c)]).unwrap();
    assert_eq!(replace("Hello hello HELLO", "hello", "bye"), s("bye bye bye"));
    assert_eq!(replace("aaa", "aa", "b"), s("ba"));
    assert_eq!(replace("abc", "", "x"), s("abc"));
    assert_eq!(replace("ÉTÉ", "é", "e"), s("eTe"));
    assert_eq!(f("REPLACE", vec![s("a"), Value::Null, s("b")]).unwrap(), Value::Null);
    assert_eq!(f("REPLACE", vec![s("a"), s("a"), ns("b")]).unwrap(), ns("b"));
    assert_eq!(f("CHARINDEX", vec![s("B"), s("abcb")]).unwrap(), Value::Int(2));
    assert_eq!(f("CHARINDEX", vec![s("b"), s("abcb"), Value::Int(3)]).unwrap(), Value::Int(4));
    assert_eq!(f("CHARINDEX", vec![s("z"), s("abc")]).unwrap(), Value::Int(0));
    assert_eq!(f("CHARINDEX", vec![s("c"), s("éc")]).unwrap(), Value::Int(2));
    assert_eq!(f("CHARINDEX", vec![Value::Null, s("abc")]).unwrap(), Value::Null);
    assert_eq!(f("CONCAT", vec![s("a"), Value::Null, Value::Int(1)]).unwrap(), s("a1"));
    assert_eq!(f("CONCAT", vec![Value::Null, Value::Null]).unwrap(), s(""));
    assert_eq!(f("CONCAT", vec![ns("a"), dec("1.50")]).unwrap(), ns("a1.50"));
    assert_eq!(f("CONCAT_WS", vec![s(","), s("a"), Value::Null, s("b")]).unwrap(), s("a,b"));
    assert_eq!(f("REPLICATE", vec![s("ab"), Value::Int(3)]).unwrap(), s("ababab"));
    assert_eq!(f("REPLICATE", vec![s("ab"), Value::Int(-1)]).unwrap(), Value::Null);
    assert_eq!(f("SPACE", vec![Value::Int(3)]).unwrap(), s("   "));
    assert_eq!(f("SPACE", vec![Value::Int(-3)]).unwrap(), Value::Null);
    assert_eq!(
        f("STR", vec![Value::Float(123.45), Value::Int(6), Value::Int(1)]).unwrap(),
        s(" 123.5")
    );
    assert_eq!(f("STR", vec![dec("123.45"), Value::Int(5), Value::Int(2)]).unwrap(), s("123.5"));
    assert_eq!(f("STR", vec![Value::Float(1.5)]).unwrap(), s("         2"));
    assert_eq!(f("STR", vec![Value::BigInt(12_345_678_901)]).unwrap(), s("**********"));
    assert_eq!(
        f("STUFF", vec![s("abcdef"), Value::Int(2), Value::Int(3), s("XY")]).unwrap(),
        s("aXYef")
    );
    assert_eq!(
        f("STUFF", vec![s("abc"), Value::Int(5), Value::Int(1), s("x")]).unwrap(),
        Value::Null
    );
    assert_eq!(f("ASCII", vec![s("A")]).unwrap(), Value::Int(65));
    assert_eq!(f("UNICODE", vec![ns("é")]).unwrap(), Value::Int(233));
    assert_eq!(f("CHAR", vec![Value::Int(65)]).unwrap(), s("A"));
    assert_eq!(f("CHAR", vec![Value::Int(300)]).unwrap(), Value::Null);
    assert_eq!(f("NCHAR", vec![Value::Int(233)]).unwrap(), ns("é"));
    assert_eq!(f("QUOTENAME", vec![s("a]b")]).unwrap(), ns("[a]]b]"));
    assert_eq!(f("QUOTENAME", vec![s("a'b"), s("'")]).unwrap(), ns("'a''b'"));
    let parse = |name: &str, piece: i32| f("PARSENAME", vec![s(name), Value::Int(piece)]).unwrap();
    assert_eq!(parse("srv.db.dbo.t", 1), ns("t"));
    assert_eq!(parse("srv.db.dbo.t", 4), ns("srv"));
    assert_eq!(parse("dbo.t", 3), Value::Null);
    assert_eq!(parse("16.0.1000.6", 4), ns("16"));
    assert_eq!(parse("[my db].[a]]b].\"c\"\"d\"", 2), ns("a]b"));
    assert_eq!(parse("[my db].[a]]b].\"c\"\"d\"", 1), ns("c\"d"));
    assert_eq!(parse("[my db].x", 2), ns("my db"));
    assert_eq!(parse("a..t", 2), Value::Null);
    assert_eq!(parse("a..t", 3), ns("a"));
    assert_eq!(parse("a.b.c.d.e", 1), Value::Null);
    assert_eq!(parse("[a", 1), Value::Null);
    assert_eq!(parse("[a]x", 1), Value::Null);
    assert_eq!(parse("a.b", 0), Value::Null);
    assert_eq!(parse("a.b", 5), Value::Null);
}

#[test]
fn math_functions() {
    assert_eq!(f("ABS", vec![Value::Int(-5)]).unwrap(), Value::Int(5));
    assert_eq!(f("ABS", vec![dec("-1.50")]).unwrap(), dec("1.50"));
    assert_eq!(f("ABS", vec![Value::Float(-0.5)]).unwrap(), Value::Float(0.5));
    assert_eq!(f("ABS", vec![Value::Null]).unwrap(), Value::Null);
    let e = f("ABS", vec![Value::Int(i32::MIN)]).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting expression to data type int.")
    );
    assert_eq!(f("ABS", vec![date("2024-01-01")]).unwrap_err().number, 8116);
    let round = |x: Value, n: i32| f("ROUND", vec![x, Value::Int(n)]).unwrap();
    assert_eq!(round(dec("1.2345"), 2), dec("1.2300"));
    assert_eq!(round(dec("-1.2355"), 3), dec("-1.2360"));
    assert_eq!(round(dec("123.45"), -1), dec("120.00"));
    assert_eq!(round(dec("1.5"), 5), dec("1.5"));
    assert_eq!(round(Value::Int(125), -1), Value::Int(130));
    assert_eq!(round(Value::Int(-125), -1), Value::Int(-130));
    assert_eq!(round(Value::Int(125), -5), Value::Int(0));
    assert_eq!(round(Value::Float(2.5), 0), Value::Float(3.0));
    assert_eq!(round(Value::Float(1234.5678), -2), Value::Float(1200.0));
    assert_eq!(round(Value::Money(12_345), 2), Value::Money(12_300));
    assert_eq!(
        f("ROUND", vec![dec("1.2399"), Value::Int(2), Value::Int(1)]).unwrap(),
        dec("1.2300")
    );
    assert_eq!(f("ROUND", vec![Value::Int(i32::MAX), Value::Int(-1)]).unwrap_err().number, 8115);
    assert_eq!(f("FLOOR", vec![dec("-1.5")]).unwrap(), dec("-2"));
    assert_eq!(f("CEILING", vec![dec("1.2")]).unwrap(), dec("2"));
    assert_eq!(f("CEILING", vec![dec("-1.2")]).unwrap(), dec("-1"));
    assert_eq!(f("FLOOR", vec![Value::Float(-1.5)]).unwrap(), Value::Float(-2.0));
    assert_eq!(f("FLOOR", vec![Value::Int(3)]).unwrap(), Value::Int(3));
    assert_eq!(f("CEILING", vec![Value::Money(10_001)]).unwrap(), Value::Money(20_000));
    assert_eq!(f("POWER", vec![Value::Int(2), Value::Int(10)]).unwrap(), Value::Int(1024));
    assert_eq!(f("POWER", vec![Value::Int(2), dec("0.5")]).unwrap(), Value::Int(1));
    assert_eq!(f("POWER", vec![Value::Int(2), Value::Int(-1)]).unwrap(), Value::Int(0));
    assert_eq!(f("POWER", vec![dec("2.0"), Value::Int(3)]).unwrap(), dec("8.0"));
    assert_eq!(
        f("POWER", vec![Value::Float(2.0), Value::Float(0.5)]).unwrap(),
        Value::Float(2f64.sqrt())
    );
    assert_eq!(
        f("POWER", vec![Value::BigInt(3), Value::Int(39)]).unwrap(),
        Value::BigInt(4_052_555_153_018_976_267)
    );
    assert_eq!(f("POWER", vec![Value::Int(10), Value::Int(10)]).unwrap_err().number, 8115);
    assert_eq!(f("POWER", vec![Value::Float(-8.0), Value::Float(0.5)]).unwrap_err().number, 3623);
    assert_eq!(f("SQRT", vec![Value::Int(16)]).unwrap(), Value::Float(4.0));
    assert_eq!(f("SQRT", vec![s("16")]).unwrap(), Value::Float(4.0));
    assert_eq!(f("SQRT", vec![Value::Int(-1)]).unwrap_err().number, 3623);
    assert_eq!(f("SQUARE", vec![Value::Int(3)]).unwrap(), Value::Float(9.0));
    assert_eq!(f("LOG", vec![Value::Int(0)]).unwrap_err().number, 3623);
    assert_eq!(f("LOG", vec![Value::Int(8), Value::Int(2)]).unwrap(), Value::Float(3.0));
    assert_eq!(f("LOG10", vec![Value::Int(1000)]).unwrap(), Value::Float(3.0));
    assert_eq!(f("SIGN", vec![Value::Int(-5)]).unwrap(), Value::Int(-1));
    assert_eq!(f("SIGN", vec![Value::TinyInt(5)]).unwrap(), Value::Int(1));
    assert_eq!(f("SIGN", vec![Value::BigInt(-5)]).unwrap(), Value::BigInt(-1));
    assert_eq!(f("SIGN", vec![dec("-2.50")]).unwrap(), dec("-1.00"));
    assert_eq!(f("SIGN", vec![Value::Float(0.0)]).unwrap(), Value::Float(0.0));
    assert_eq!(f("PI", vec![]).unwrap(), Value::Float(std::f64::consts::PI));
}

#[test]
fn rand_and_newid() {
    let seeded = || f("RAND", vec![Value::Int(42)]).unwrap();
    let first = seeded();
    assert_eq!(seeded(), first);
    let next = f("RAND", vec![]).unwrap();
    assert_ne!(next, first);
    for _ in 0..1000 {
        let Value::Float(x) = f("RAND", vec![]).unwrap() else { panic!("RAND is a float") };
        assert!((0.0..1.0).contains(&x));
    }
    let a = f("NEWID", vec![]).unwrap();
    let b = f("NEWID", vec![]).unwrap();
    assert_ne!(a, b);
    let t = text(a);
    assert_eq!(t.len(), 36);
    assert_eq!(&t[14..15], "4");
    assert!(matches!(&t[19..20], "8" | "9" | "A" | "B"));
}

#[test]
fn null_functions() {
    assert_eq!(f("ISNULL", vec![Value::Null, Value::Int(1)]).unwrap(), Value::Int(1));
    assert_eq!(f("ISNULL", vec![Value::Int(2), Value::Int(1)]).unwrap(), Value::Int(2));
    assert_eq!(
        f("COALESCE", vec![Value::Null, Value::Null, Value::Int(3)]).unwrap(),
        Value::Int(3)
    );
    assert_eq!(f("COALESCE", vec![Value::Null, Value::Int(1), dec("2.5")]).unwrap(), dec("1.0"));
    assert_eq!(f("COALESCE", vec![s("a"), s("bcd")]).unwrap(), s("a"));
    assert_eq!(f("COALESCE", vec![Value::Null]).unwrap(), Value::Null);
    assert_eq!(f("COALESCE", vec![s("a"), Value::Int(1)]).unwrap_err().number, 245);
    assert_eq!(f("NULLIF", vec![Value::Int(1), Value::Int(1)]).unwrap(), Value::Null);
    assert_eq!(f("NULLIF", vec![Value::Int(1), Value::Int(2)]).unwrap(), Value::Int(1));
    assert_eq!(f("NULLIF", vec![s("a"), s("A ")]).unwrap(), Value::Null);
    assert_eq!(f("NULLIF", vec![Value::Null, Value::Int(2)]).unwrap(), Value::Null);
    assert_eq!(f("ISNUMERIC", vec![s("12")]).unwrap(), Value::Int(1));
    assert_eq!(f("ISNUMERIC", vec![s("-1.5e3")]).unwrap(), Value::Int(1));
    assert_eq!(f("ISNUMERIC", vec![s("$1,000")]).unwrap(), Value::Int(1));
    assert_eq!(f("ISNUMERIC", vec![s("abc")]).unwrap(), Value::Int(0));
    assert_eq!(f("ISNUMERIC", vec![s("")]).unwrap(), Value::Int(0));
    assert_eq!(f("ISNUMERIC", vec![Value::Null]).unwrap(), Value::Int(0));
    assert_eq!(f("ISDATE", vec![s("2024-01-31")]).unwrap(), Value::Int(1));
    assert_eq!(f("ISDATE", vec![s("2024-02-30")]).unwrap(), Value::Int(0));
    assert_eq!(f("ISDATE", vec![s("1500-01-01")]).unwrap(), Value::Int(0));
}
