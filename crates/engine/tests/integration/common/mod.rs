//! Helpers shared by the engine's integration tests: table, index and sequence definitions,
//! and reading a table's definition back from the catalog.

use std::ops::Bound;
use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, Object, SequenceDef, TableDef};
use walden_engine::objects::IndexSpec;
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::{Database, Instance, Isolation};
use walden_log::policy::CommitOption;

/// A column without identity or default.
pub fn col(name: &str, ty: SqlType, nullable: bool) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty,
        nullable,
        identity: None,
        default: None,
        computed: None,
        rowversion: false,
        collation: None,
        declared: None,
    }
}

/// `dbo.<name>` with these columns; `create_table` fills in the id and indexes.
pub fn table_def(name: &str, columns: Vec<ColumnDef>) -> TableDef {
    TableDef {
        id: 0,
        schema: "dbo".into(),
        name: name.into(),
        columns,
        indexes: Vec::new(),
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        identity_high: 0,
        created_micros: 0,
    }
}

/// `PK_t`: the clustered primary key on the first column.
pub fn pk() -> IndexSpec {
    IndexSpec {
        name: "PK_t".into(),
        columns: vec![0],
        unique: true,
        clustered: true,
        primary_key: true,
        unique_constraint: false,
        ignore_dup_key: false,
    }
}

/// `dbo.s`: a BIGINT sequence counting up from 1, with this cache (`None`: NO CACHE).
pub fn sequence(cache: Option<u32>) -> SequenceDef {
    SequenceDef {
        id: 0,
        schema: "dbo".into(),
        name: "s".into(),
        ty: SqlType::BigInt,
        start: 1,
        increment: 1,
        min: 1,
        max: i64::MAX.into(),
        cycle: false,
        cache,
        high_water: None,
    }
}

/// The committed definition of table `dbo.<name>`.
pub fn table(db: &Database, name: &str) -> TableDef {
    match &*db.table("dbo", name).unwrap() {
        Object::Table(t) => TableDef::clone(t),
        other => panic!("{name} is {other:?}"),
    }
}

/// Every row of table `name`, in index 1 order, read in a transaction of its own.
pub fn rows(instance: &Instance, db: &Arc<Database>, name: &str) -> Vec<Vec<Value>> {
    let t = table(db, name);
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut cursor = tx.scan_table(db, &t, Bound::Unbounded, Bound::Unbounded).unwrap();
    let mut out = Vec::new();
    while let Some((_, values)) = cursor.next_row(&mut tx).unwrap() {
        out.push(values);
    }
    tx.commit(CommitOption::Unspecified).unwrap();
    out
}

/// Database `d` with table `t (k int PRIMARY KEY, v varchar(400) NOT NULL)`.
pub fn create_kv_table(instance: &Instance) -> Arc<Database> {
    let db = instance.create_database("d", None).unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let def = table_def(
        "t",
        vec![col("k", SqlType::Int, false), col("v", SqlType::VarChar(Len::N(400)), false)],
    );
    tx.create_table(&db, def, &[pk()]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    db
}
