//! Types and literals: how a declared type resolves, how a literal is typed, the common
//! type of two, and each type's default text form.

use super::*;

#[test]
fn data_types_resolve_with_sql_server_defaults() {
    use TypeParam::{Max, Number};
    assert_eq!(data_type(&ty("INTEGER", &[])).unwrap(), SqlType::Int);
    assert_eq!(data_type(&ty("varchar", &[])).unwrap(), varchar(1));
    assert_eq!(data_type_in_cast(&ty("varchar", &[])).unwrap(), varchar(30));
    assert_eq!(data_type_in_cast(&ty("NCHAR", &[])).unwrap(), SqlType::NChar(30));
    assert_eq!(data_type(&ty("Decimal", &[])).unwrap(), SqlType::DEFAULT_DECIMAL);
    assert_eq!(
        data_type(&ty("numeric", &[Number(10), Number(2)])).unwrap(),
        SqlType::Decimal { precision: 10, scale: 2 }
    );
    assert_eq!(data_type(&ty("float", &[Number(24)])).unwrap(), SqlType::Real);
    assert_eq!(data_type(&ty("float", &[])).unwrap(), SqlType::Float);
    assert_eq!(data_type(&ty("nvarchar", &[Max])).unwrap(), SqlType::NVarChar(Len::Max));
    assert_eq!(data_type(&ty("sysname", &[])).unwrap(), SqlType::NVarChar(Len::N(128)));
    assert_eq!(data_type(&ty("time", &[])).unwrap(), SqlType::Time(7));
    assert_eq!(data_type(&ty("datetime2", &[Number(3)])).unwrap(), SqlType::DateTime2(3));
    let mut qualified = ty("int", &[]);
    qualified.name.schema = Some(Ident::new("sys"));
    assert_eq!(data_type(&qualified).unwrap(), SqlType::Int);
    qualified.name.schema = Some(Ident::new("sales"));
    assert_eq!(data_type(&qualified).unwrap_err().number, 2715);

    let e = data_type(&ty("foo", &[])).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (2715, "Column, parameter, or variable #1: Cannot find data type foo.")
    );
    let e = data_type(&ty("varchar", &[Number(9000)])).unwrap_err();
    assert_eq!(e.number, 131);
    assert_eq!(
        e.message,
        "The size (9000) given to the type 'varchar' exceeds the maximum allowed for any data type (8000)."
    );
    assert_eq!(data_type(&ty("nvarchar", &[Number(4001)])).unwrap_err().number, 131);
    assert_eq!(data_type(&ty("decimal", &[Number(39)])).unwrap_err().number, 2750);
    assert_eq!(data_type(&ty("decimal", &[Number(5), Number(6)])).unwrap_err().number, 183);
    assert_eq!(data_type(&ty("int", &[Number(5)])).unwrap_err().number, 2716);
    assert_eq!(data_type(&ty("time", &[Number(8)])).unwrap_err().number, 1002);
    assert_eq!(data_type(&ty("varchar", &[Number(0)])).unwrap_err().number, 1001);
    assert_eq!(data_type(&ty("float", &[Number(54)])).unwrap_err().number, 2750);
}

#[test]
fn literals_are_typed_like_sql_server_constants() {
    assert_eq!(literal(&Literal::Integer("2147483647".into())).unwrap(), Value::Int(i32::MAX));
    assert_eq!(literal(&Literal::Integer("2147483648".into())).unwrap(), dec("2147483648"));
    let v = literal(&Literal::Decimal("1.50".into())).unwrap();
    assert_eq!(type_of(&v), SqlType::Decimal { precision: 3, scale: 2 });
    assert_eq!(literal(&Literal::Float("1e3".into())).unwrap(), Value::Float(1000.0));
    assert_eq!(literal(&Literal::String { value: "x".into(), national: true }).unwrap(), ns("x"));
    assert_eq!(literal(&Literal::String { value: "x".into(), national: false }).unwrap(), s("x"));
    assert_eq!(literal(&Literal::Binary(vec![1, 2])).unwrap(), Value::Binary(vec![1, 2]));
    assert_eq!(literal(&Literal::Null).unwrap(), Value::Null);
    let forty_digits = "1".repeat(40);
    assert_eq!(literal(&Literal::Integer(forty_digits)).unwrap_err().number, 1007);
}

#[test]
fn values_describe_their_types() {
    assert_eq!(type_of(&s("abc")), varchar(3));
    assert_eq!(type_of(&s("")), varchar(1));
    assert_eq!(type_of(&s(&"x".repeat(9000))), SqlType::VarChar(Len::Max));
    assert_eq!(type_of(&ns("é😀")), SqlType::NVarChar(Len::N(3)));
    assert_eq!(type_of(&dec("0.05")), SqlType::Decimal { precision: 2, scale: 2 });
    assert_eq!(type_of(&dec("-12.5")), SqlType::Decimal { precision: 3, scale: 1 });
    assert_eq!(type_of(&Value::Binary(vec![1; 3])), SqlType::VarBinary(Len::N(3)));
    assert_eq!(type_of(&datetime2("2024-01-01")), SqlType::DateTime2(7));
    assert_eq!(type_of(&time("10:00")), SqlType::Time(7));
    assert_eq!(type_of(&Value::Null), SqlType::Int);
}

#[test]
fn precedence_and_common_types() {
    assert!(precedence(&SqlType::DateTime2(7)) > precedence(&SqlType::DateTime));
    assert!(precedence(&SqlType::Int) > precedence(&varchar(10)));
    assert!(precedence(&SqlType::UniqueIdentifier) > precedence(&SqlType::NVarChar(Len::Max)));
    assert!(precedence(&SqlType::Binary(1)) < precedence(&SqlType::VarBinary(Len::N(1))));
    assert_eq!(
        common_type(SqlType::Int, SqlType::Decimal { precision: 5, scale: 2 }),
        SqlType::Decimal { precision: 12, scale: 2 }
    );
    assert_eq!(common_type(varchar(3), SqlType::NChar(5)), SqlType::NVarChar(Len::N(5)));
    assert_eq!(common_type(SqlType::Char(3), SqlType::NChar(5)), SqlType::NChar(5));
    assert_eq!(common_type(varchar(3), SqlType::Char(5)), varchar(5));
    assert_eq!(common_type(SqlType::Int, varchar(5)), SqlType::Int);
    assert_eq!(
        common_type(SqlType::Decimal { precision: 38, scale: 10 }, SqlType::BigInt),
        SqlType::Decimal { precision: 38, scale: 10 }
    );
}

#[test]
fn default_text_of_each_type() {
    assert_eq!(text(Value::Int(-42)), "-42");
    assert_eq!(text(Value::TinyInt(255)), "255");
    assert_eq!(text(Value::SmallInt(-3)), "-3");
    assert_eq!(text(Value::BigInt(1 << 40)), "1099511627776");
    assert_eq!(text(Value::Bit(true)), "1");
    assert_eq!(text(dec("1.50")), "1.50");
    assert_eq!(text(dec("-0.05")), "-0.05");
    assert_eq!(text(Value::Float(1234567.0)), "1.23457e+006");
    assert_eq!(text(Value::Float(123456.0)), "123456");
    assert_eq!(text(Value::Float(0.1)), "0.1");
    assert_eq!(text(Value::Float(0.0001)), "0.0001");
    assert_eq!(text(Value::Float(0.00001)), "1e-005");
    assert_eq!(text(Value::Float(-2.5)), "-2.5");
    assert_eq!(text(Value::Float(0.0)), "0");
    assert_eq!(text(Value::Float(999999.5)), "1e+006");
    assert_eq!(text(Value::Real(0.1)), "0.1");
    assert_eq!(text(Value::Money(125_000)), "12.50");
    assert_eq!(text(Value::Money(-125_050)), "-12.51");
    assert_eq!(text(s("x")), "x");
    assert_eq!(text(ns("é")), "é");
    assert_eq!(text(Value::Binary(b"AB".to_vec())), "AB");
    assert_eq!(text(date("2024-01-05")), "2024-01-05");
    assert_eq!(text(time("10:00:01.5")), "10:00:01.5000000");
    assert_eq!(text(datetime("2024-01-01 10:00")), "Jan  1 2024 10:00AM");
    assert_eq!(text(datetime("2024-12-25 00:30")), "Dec 25 2024 12:30AM");
    assert_eq!(text(datetime2("2024-01-01 10:00")), "2024-01-01 10:00:00.0000000");
    assert_eq!(
        text(Value::Guid(Guid::parse("6f9619ff-8b86-d011-b42d-00c04fc964ff").unwrap())),
        "6F9619FF-8B86-D011-B42D-00C04FC964FF"
    );
    assert_eq!(text(Value::Null), "");
}
