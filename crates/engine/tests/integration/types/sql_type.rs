//! Type names, parsing, sizes and the type descriptors stored in the catalog.

use super::*;

#[test]
fn type_names_render_like_sql_server() {
    let cases = [
        (SqlType::Int, "int"),
        (SqlType::Decimal { precision: 10, scale: 2 }, "decimal(10,2)"),
        (SqlType::VarChar(Len::Max), "varchar(max)"),
        (SqlType::NVarChar(Len::N(50)), "nvarchar(50)"),
        (SqlType::DateTime2(7), "datetime2(7)"),
        (SqlType::Time(3), "time(3)"),
        (SqlType::Char(10), "char(10)"),
        (SqlType::Binary(16), "binary(16)"),
        (SqlType::VarBinary(Len::Max), "varbinary(max)"),
        (SqlType::Float, "float"),
        (SqlType::Real, "real"),
        (SqlType::UniqueIdentifier, "uniqueidentifier"),
        (SqlType::Money, "money"),
    ];
    for (ty, name) in cases {
        assert_eq!(ty.name(), name);
        assert_eq!(ty.to_string(), name);
    }
}

#[test]
fn type_parse_reads_names_synonyms_and_defaults() {
    for ty in all_types() {
        assert_eq!(SqlType::parse(&ty.name()), Some(ty), "{ty}");
        assert_eq!(SqlType::parse(&ty.name().to_uppercase()), Some(ty), "{ty}");
    }
    let cases = [
        ("NUMERIC", SqlType::DEFAULT_DECIMAL),
        ("decimal", SqlType::Decimal { precision: 18, scale: 0 }),
        ("dec(7)", SqlType::Decimal { precision: 7, scale: 0 }),
        ("numeric ( 10 , 3 )", SqlType::Decimal { precision: 10, scale: 3 }),
        ("float", SqlType::Float),
        ("float(53)", SqlType::Float),
        ("float(25)", SqlType::Float),
        ("float(24)", SqlType::Real),
        ("float(1)", SqlType::Real),
        ("double precision", SqlType::Float),
        ("integer", SqlType::Int),
        ("char", SqlType::Char(1)),
        ("character(5)", SqlType::Char(5)),
        ("varchar", SqlType::VarChar(Len::N(1))),
        ("nvarchar(MAX)", SqlType::NVarChar(Len::Max)),
        ("time", SqlType::Time(7)),
        ("datetime2", SqlType::DateTime2(7)),
        ("datetime2(0)", SqlType::DateTime2(0)),
        ("varchar(8000)", SqlType::VarChar(Len::N(8000))),
        ("nchar(4000)", SqlType::NChar(4000)),
    ];
    for (text, ty) in cases {
        assert_eq!(SqlType::parse(text), Some(ty), "{text}");
    }
    for bad in [
        "decimal(39)",
        "decimal(5,6)",
        "decimal(0)",
        "varchar(8001)",
        "nvarchar(4001)",
        "varchar(0)",
        "char(max)",
        "time(8)",
        "float(54)",
        "float(0)",
        "int(4)",
        "varchar(-1)",
        "varchar(+5)",
        "text",
        "varchar(10",
        "",
    ] {
        assert_eq!(SqlType::parse(bad), None, "{bad}");
    }
}

#[test]
fn type_sizes() {
    let fixed = [
        (SqlType::TinyInt, 1),
        (SqlType::SmallInt, 2),
        (SqlType::Int, 4),
        (SqlType::BigInt, 8),
        (SqlType::Bit, 1),
        (SqlType::Decimal { precision: 9, scale: 0 }, 4),
        (SqlType::Decimal { precision: 10, scale: 2 }, 8),
        (SqlType::Decimal { precision: 18, scale: 2 }, 8),
        (SqlType::Decimal { precision: 28, scale: 2 }, 12),
        (SqlType::Decimal { precision: 29, scale: 2 }, 16),
        (SqlType::Float, 8),
        (SqlType::Real, 4),
        (SqlType::Money, 8),
        (SqlType::Char(10), 10),
        (SqlType::Binary(3), 3),
        (SqlType::Date, 3),
        (SqlType::Time(0), 3),
        (SqlType::Time(2), 3),
        (SqlType::Time(3), 4),
        (SqlType::Time(4), 4),
        (SqlType::Time(7), 5),
        (SqlType::DateTime, 8),
        (SqlType::DateTime2(0), 6),
        (SqlType::DateTimeOffset(0), 8),
        (SqlType::DateTimeOffset(7), 10),
        (SqlType::DateTime2(7), 8),
        (SqlType::UniqueIdentifier, 16),
    ];
    for (ty, len) in fixed {
        assert!(ty.is_fixed_len(), "{ty}");
        assert_eq!(ty.fixed_len(), Some(len), "{ty}");
        assert_eq!(ty.max_len_bytes(), len, "{ty}");
    }
    let var = [
        (SqlType::VarChar(Len::N(20)), 20),
        (SqlType::VarBinary(Len::N(7)), 7),
        (SqlType::NVarChar(Len::N(50)), 150),
        (SqlType::NChar(10), 30),
        (SqlType::VarChar(Len::Max), MAX_LOB_LEN),
        (SqlType::NVarChar(Len::Max), MAX_LOB_LEN),
        (SqlType::VarBinary(Len::Max), (1 << 31) - 1),
    ];
    for (ty, max) in var {
        assert!(!ty.is_fixed_len(), "{ty}");
        assert_eq!(ty.fixed_len(), None, "{ty}");
        assert_eq!(ty.max_len_bytes(), max, "{ty}");
    }
    assert!(SqlType::NChar(3).is_national() && SqlType::NVarChar(Len::Max).is_national());
    assert!(!SqlType::Char(3).is_national() && SqlType::Char(3).is_text());
}

#[test]
fn type_descriptors_round_trip_and_reject_garbage() {
    let mut every: Vec<SqlType> = all_types();
    every.extend([
        SqlType::Decimal { precision: 1, scale: 0 },
        SqlType::Decimal { precision: 38, scale: 38 },
        SqlType::Char(8000),
        SqlType::NChar(4000),
        SqlType::VarChar(Len::N(8000)),
        SqlType::NVarChar(Len::N(4000)),
        SqlType::Binary(1),
        SqlType::Time(1),
        SqlType::DateTime2(0),
    ]);
    for ty in every {
        let d = ty.encode();
        assert_eq!(d[0], ty.system_type_id());
        assert_eq!(SqlType::decode(d), Some(ty), "{ty}");
    }
    assert_eq!(SqlType::Int.encode(), [56, 0, 0, 0]);
    assert_eq!(SqlType::Decimal { precision: 10, scale: 2 }.encode(), [106, 10, 2, 0]);
    assert_eq!(SqlType::VarChar(Len::Max).encode(), [167, 0xff, 0xff, 0]);
    assert_eq!(SqlType::NVarChar(Len::N(300)).encode(), [231, 0x2c, 0x01, 0]);
    assert_eq!(SqlType::DateTime2(3).encode(), [42, 3, 0, 0]);
    assert_eq!(SqlType::DateTimeOffset(7).encode(), [43, 7, 0, 0]);
    for bad in [
        [0, 0, 0, 0],
        [56, 1, 0, 0],
        [56, 0, 0, 1],
        [106, 39, 0, 0],
        [106, 5, 6, 0],
        [106, 0, 0, 0],
        [175, 0, 0, 0],
        [175, 0xff, 0xff, 0],
        [167, 0x41, 0x1f, 0],
        [239, 0xa1, 0x0f, 0],
        [41, 8, 0, 0],
        [42, 7, 1, 0],
    ] {
        assert_eq!(SqlType::decode(bad), None, "{bad:?}");
    }
    // Whatever decodes is canonical: it encodes back to the same bytes.
    let mut rng = SplitMix64::new(11);
    let ids = [36u8, 40, 41, 42, 48, 52, 56, 59, 60, 61, 62, 104, 106, 127, 165, 167, 173, 175];
    for _ in 0..100_000 {
        let mut d = rng.next_u64().to_le_bytes();
        if rng.chance(3, 4) {
            d[0] = pick(&mut rng, &ids);
            d[3] = 0;
            if rng.chance(1, 2) {
                d[2] = rng.below(3) as u8;
            }
        }
        let d = [d[0], d[1], d[2], d[3]];
        if let Some(ty) = SqlType::decode(d) {
            assert!(ty.is_valid());
            assert_eq!(ty.encode(), d, "{ty}");
        }
    }
}
