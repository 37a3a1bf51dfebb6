//! UNIQUEIDENTIFIER: text and byte order, and SQL Server's sort order.

use super::*;

#[test]
fn guid_text_and_byte_order() {
    let g = guid("00112233-4455-6677-8899-aabbccddeeff");
    assert_eq!(
        g.0,
        [
            0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
            0xee, 0xff
        ]
    );
    assert_eq!(g.to_string(), "00112233-4455-6677-8899-AABBCCDDEEFF");
    assert_eq!(guid("{00112233-4455-6677-8899-AABBCCDDEEFF}"), g);
    assert_eq!(Value::Guid(g).to_string(), "00112233-4455-6677-8899-AABBCCDDEEFF");
    for bad in [
        "00112233-4455-6677-8899-aabbccddeef",
        "00112233-4455-6677-8899-aabbccddeefg",
        "0011223344556677-8899-aabbccddeeff00",
        "00112233_4455_6677_8899_aabbccddeeff",
        "00112233-4455-6677-8899-aabbccddeéf",
        "",
    ] {
        assert_eq!(Guid::parse(bad), Err(ParseError::Invalid), "{bad}");
    }
}

#[test]
fn guid_order_is_sql_servers() {
    // SQL Server's ORDER BY of the sixteen GUIDs with one byte set (as published for SQL
    // Server 2005 and reproduced since): the last group decides first, right to left within
    // the first three groups.
    let ascending = [
        "01000000-0000-0000-0000-000000000000",
        "00010000-0000-0000-0000-000000000000",
        "00000100-0000-0000-0000-000000000000",
        "00000001-0000-0000-0000-000000000000",
        "00000000-0100-0000-0000-000000000000",
        "00000000-0001-0000-0000-000000000000",
        "00000000-0000-0100-0000-000000000000",
        "00000000-0000-0001-0000-000000000000",
        "00000000-0000-0000-0001-000000000000",
        "00000000-0000-0000-0100-000000000000",
        "00000000-0000-0000-0000-000000000001",
        "00000000-0000-0000-0000-000000000100",
        "00000000-0000-0000-0000-000000010000",
        "00000000-0000-0000-0000-000001000000",
        "00000000-0000-0000-0000-000100000000",
        "00000000-0000-0000-0000-010000000000",
    ];
    let types = [SqlType::UniqueIdentifier];
    for pair in ascending.windows(2) {
        let (a, b) = (Value::Guid(guid(pair[0])), Value::Guid(guid(pair[1])));
        assert_eq!(compare(&a, &b), Some(Ordering::Less), "{} < {}", pair[0], pair[1]);
        assert!(key(&types, &[a]) < key(&types, &[b]));
    }
}
