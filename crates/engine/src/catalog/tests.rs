//! Round trips of every kind of catalog object through its encoding, and the catalog's
//! indexes (names, triggers by table) kept right as objects are put and removed.

use super::*;
use crate::types::Len;

#[test]
fn objects_round_trip() {
    let table = Object::Table(Arc::new(TableDef {
        id: 1000,
        schema: "dbo".into(),
        name: "Orders".into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: SqlType::Int,
                nullable: false,
                identity: Some((1, 1)),
                default: None,
                computed: None,
                rowversion: false,
                collation: None,
                declared: None,
            },
            ColumnDef {
                name: "note".into(),
                ty: SqlType::VarChar(Len::N(20)),
                nullable: true,
                identity: None,
                default: Some("'x'".into()),
                computed: None,
                rowversion: false,
                collation: Some("Latin1_General_CS_AS".into()),
                declared: None,
            },
            ColumnDef {
                name: "twice".into(),
                ty: SqlType::Int,
                nullable: true,
                identity: None,
                default: None,
                computed: Some(Computed { text: "[id] * 2".into(), persisted: true }),
                rowversion: false,
                collation: None,
                declared: None,
            },
            ColumnDef {
                name: "rv".into(),
                ty: SqlType::Binary(8),
                nullable: false,
                identity: None,
                default: None,
                computed: None,
                rowversion: true,
                collation: None,
                declared: None,
            },
            ColumnDef {
                name: "at".into(),
                ty: SqlType::DateTime,
                nullable: true,
                identity: None,
                default: None,
                computed: None,
                rowversion: false,
                collation: None,
                declared: Some(DeclaredType::SmallDateTime),
            },
        ],
        indexes: vec![IndexDef {
            id: 1,
            name: "PK_Orders".into(),
            columns: vec![0],
            unique: true,
            primary_key: true,
            unique_constraint: false,
            ignore_dup_key: true,
            root: 9,
        }],
        checks: vec![CheckDef { name: "CK".into(), text: "id > 0".into() }],
        foreign_keys: vec![ForeignKeyDef {
            name: "FK_Orders_Orders".into(),
            columns: vec![2],
            ref_table: 1000,
            ref_index: 1,
            on_delete: ReferentialAction::Cascade,
            on_update: ReferentialAction::SetNull,
            disabled: true,
        }],
        identity_high: 1000,
        created_micros: 5,
    }));
    assert_eq!(Object::decode(&table.encode()).unwrap(), table);
    let seq = Object::Sequence(SequenceDef {
        id: 1001,
        schema: "dbo".into(),
        name: "s".into(),
        ty: SqlType::BigInt,
        start: 1,
        increment: 1,
        min: i64::MIN.into(),
        max: i64::MAX.into(),
        cycle: false,
        cache: Some(50),
        high_water: Some(50),
    });
    assert_eq!(Object::decode(&seq.encode()).unwrap(), seq);
    let bytes = seq.encode();
    for n in 0..bytes.len() {
        assert!(Object::decode(&bytes[..n]).is_err());
    }
    let view = Object::View(ViewDef {
        id: 1002,
        schema: "dbo".into(),
        name: "v".into(),
        text: "CREATE VIEW v AS SELECT 1 AS x".into(),
    });
    assert_eq!(Object::decode(&view.encode()).unwrap(), view);
    assert_eq!(view.encode()[0], 4);
    let property = |class, major_id, minor_id, name: &str, value| ExtendedProperty {
        class,
        major_id,
        minor_id,
        name: name.into(),
        value,
    };
    let properties = Object::Properties(PropertiesDef {
        entries: vec![
            property(1, 1001, 0, "MS_Description", Value::NStr("a table".into())),
            property(1, 1001, 2, "Caption", Value::Int(7)),
            property(0, 0, 0, "Owner", Value::Null),
        ],
    });
    assert_eq!(Object::decode(&properties.encode()).unwrap(), properties);
    assert_eq!(properties.encode()[0], 8);
    assert_eq!(properties.id(), PROPERTIES_ID);
    let phone = Object::Type(TypeDef {
        id: 1012,
        schema: "dbo".into(),
        name: "Phone".into(),
        base: SqlType::VarChar(crate::types::Len::N(20)),
        nullable: false,
        table: None,
    });
    let hex: Vec<String> = phone.encode().iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(
        hex.join(" "),
        "09 F4 03 00 00 03 00 00 00 64 62 6F 05 00 00 00 50 68 6F 6E 65 A7 14 00 00 00 00"
    );
    let table_type = Object::Type(TypeDef {
        id: 1013,
        schema: "dbo".into(),
        name: "IdList".into(),
        base: SqlType::Int,
        nullable: true,
        table: Some("Id INT PRIMARY KEY".into()),
    });
    assert_eq!(Object::decode(&table_type.encode()).unwrap(), table_type);
    let documented = Object::Properties(PropertiesDef {
        entries: vec![property(1, 1000, 2, "P", Value::Int(42))],
    });
    let hex: Vec<String> = documented.encode().iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(
        hex.join(" "),
        "08 01 00 00 00 01 E8 03 00 00 02 00 00 00 01 00 00 00 50 \
         10 00 00 00 00 01 00 06 00 00 10 00 38 00 00 00 2A 00 00 00"
    );
    let doc = include_str!("../../../../docs/format/catalog.md");
    assert!(doc.contains("10 00 00 00 | 00 01 00 06 00 00 10 00 38 00 00 00 2A 00 00 00"));
    let bytes = properties.encode();
    for n in 0..bytes.len() {
        assert!(Object::decode(&bytes[..n]).is_err());
    }
    let function = Object::Function(FunctionDef {
        id: 1003,
        schema: "dbo".into(),
        name: "f".into(),
        returns_table: false,
        multi_statement: false,
        text: "CREATE FUNCTION dbo.f() RETURNS INT AS BEGIN RETURN 1 END".into(),
    });
    assert_eq!(Object::decode(&function.encode()).unwrap(), function);
    assert_eq!(function.encode()[0], 5);
    let multi = Object::Function(FunctionDef {
        id: 1005,
        schema: "dbo".into(),
        name: "tf".into(),
        returns_table: true,
        multi_statement: true,
        text: "CREATE FUNCTION dbo.tf() RETURNS @t TABLE (a INT) AS BEGIN RETURN END".into(),
    });
    assert_eq!(Object::decode(&multi.encode()).unwrap(), multi);
    assert_eq!(multi.type_code(), "TF");
    let trigger = Object::Trigger(TriggerDef {
        id: 1004,
        schema: "dbo".into(),
        name: "t".into(),
        table: 1000,
        disabled: true,
        text: "CREATE TRIGGER t ON Orders AFTER INSERT AS SELECT 1".into(),
    });
    assert_eq!(Object::decode(&trigger.encode()).unwrap(), trigger);
    assert_eq!(trigger.encode()[0], 6);
    let schema = Object::Schema(SchemaDef { id: 1006, name: "sales".into() });
    assert_eq!(Object::decode(&schema.encode()).unwrap(), schema);
    assert_eq!(schema.encode()[0], 7);
}

#[test]
fn ddl_triggers_have_no_name_entry_and_leave_a_schema_of_their_name_alone() {
    let ddl = Object::Trigger(TriggerDef {
        id: 1001,
        schema: String::new(),
        name: "audit".into(),
        table: DATABASE_TRIGGER_PARENT,
        disabled: false,
        text: "CREATE TRIGGER audit ON DATABASE FOR CREATE_TABLE AS PRINT 1".into(),
    });
    let schema = Object::Schema(SchemaDef { id: 1000, name: "audit".into() });
    let mut c = Catalog::from_objects([schema, ddl]);
    assert!(c.has_database_triggers());
    assert_eq!(c.find("", "audit").map(|o| o.id()), Some(1000));
    assert_eq!(c.triggers_on(DATABASE_TRIGGER_PARENT)[0].id, 1001);
    c.remove(1001);
    assert!(!c.has_database_triggers());
    assert_eq!(c.find("", "audit").map(|o| o.id()), Some(1000), "the schema is still found");
}

#[test]
fn triggers_are_found_by_table_in_id_order_and_forgotten_when_dropped() {
    let trigger = |id, table| {
        Object::Trigger(TriggerDef {
            id,
            schema: "dbo".into(),
            name: format!("t{id}"),
            table,
            disabled: false,
            text: String::new(),
        })
    };
    let mut c = Catalog::from_objects([trigger(1012, 7), trigger(1010, 7), trigger(1011, 8)]);
    let ids = |c: &Catalog, table| c.triggers_on(table).iter().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(ids(&c, 7), [1010, 1012]);
    assert_eq!(ids(&c, 8), [1011]);
    c.put(trigger(1010, 7));
    assert_eq!(ids(&c, 7), [1010, 1012], "replacing a trigger keeps one entry");
    c.remove(1012);
    c.remove(1011);
    assert_eq!(ids(&c, 7), [1010]);
    assert!(c.triggers_on(8).is_empty());
    assert!(!c.triggers.contains_key(&8));
}
