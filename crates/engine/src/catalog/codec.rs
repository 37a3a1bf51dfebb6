//! The catalog's on-disk encoding: how each [`Object`] is written to and read back from
//! its catalog record, and the little-endian [`Writer`] and [`Reader`] that object, property and
//! statistics records share. Every field is written in a fixed order and read back in the same
//! order; a record that is short, or names a kind or type this build does not know, decodes to
//! [`EngineError::Corrupt`] rather than to a guess.

use std::sync::Arc;

use super::{
    CheckDef, ColumnDef, Computed, ExtendedProperty, ForeignKeyDef, FunctionDef, IndexDef,
    ModuleOptions, Object, ProcedureDef, PropertiesDef, ReferentialAction, SchemaDef, SequenceDef,
    TableDef, TriggerDef, TypeDef, ViewDef,
};
use crate::error::EngineError;
use crate::types::{decode_row, encode_row, DeclaredType, SqlType, Value};

impl Object {
    /// Encodes the definition (see `docs/format/catalog.md`).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(128));
        match self {
            Object::Table(t) => {
                w.u8(1);
                w.u32(t.id);
                w.str(&t.schema);
                w.str(&t.name);
                w.u64(t.created_micros);
                w.i64(t.identity_high);
                w.u16(t.columns.len() as u16);
                for c in &t.columns {
                    w.str(&c.name);
                    w.0.extend_from_slice(&c.ty.encode());
                    // Bit 0: nullable; bit 1: a computed column, its text after the default;
                    // bit 2: PERSISTED; bit 3: rowversion; bit 4: a collation, its name after
                    // the computed text; bit 5: a declared type, its system_type_id last.
                    w.u8(u8::from(c.nullable)
                        | u8::from(c.computed.is_some()) << 1
                        | u8::from(c.computed.as_ref().is_some_and(|k| k.persisted)) << 2
                        | u8::from(c.rowversion) << 3
                        | u8::from(c.collation.is_some()) << 4
                        | u8::from(c.declared.is_some()) << 5);
                    match c.identity {
                        Some((seed, inc)) => {
                            w.u8(1);
                            w.i64(seed);
                            w.i64(inc);
                        }
                        None => w.u8(0),
                    }
                    w.opt_str(c.default.as_deref());
                    if let Some(computed) = &c.computed {
                        w.str(&computed.text);
                    }
                    if let Some(collation) = &c.collation {
                        w.str(collation);
                    }
                    if let Some(declared) = c.declared {
                        w.u8(declared.system_type_id());
                    }
                }
                w.u16(t.indexes.len() as u16);
                for i in &t.indexes {
                    w.u16(i.id);
                    w.str(&i.name);
                    w.u16(i.columns.len() as u16);
                    for &c in &i.columns {
                        w.u16(c as u16);
                    }
                    w.u8(u8::from(i.unique)
                        | u8::from(i.primary_key) << 1
                        | u8::from(i.unique_constraint) << 2
                        | u8::from(i.ignore_dup_key) << 3);
                    w.u32(i.root);
                }
                w.u16(t.checks.len() as u16);
                for c in &t.checks {
                    w.str(&c.name);
                    w.str(&c.text);
                }
                w.u16(t.foreign_keys.len() as u16);
                for fk in &t.foreign_keys {
                    w.str(&fk.name);
                    w.u32(fk.ref_table);
                    w.u16(fk.ref_index);
                    w.u16(fk.columns.len() as u16);
                    for &c in &fk.columns {
                        w.u16(c as u16);
                    }
                    w.u8(fk.on_delete as u8);
                    w.u8(fk.on_update as u8);
                    w.u8(u8::from(fk.disabled));
                }
            }
            Object::Sequence(s) => {
                w.u8(2);
                w.u32(s.id);
                w.str(&s.schema);
                w.str(&s.name);
                w.0.extend_from_slice(&s.ty.encode());
                for v in [s.start, s.increment, s.min, s.max] {
                    w.i128(v);
                }
                w.u8(u8::from(s.cycle));
                w.u32(s.cache.map_or(0, |c| c.max(1)));
                match s.high_water {
                    Some(v) => {
                        w.u8(1);
                        w.i128(v);
                    }
                    None => w.u8(0),
                }
            }
            Object::Procedure(p) => {
                w.u8(3);
                w.u32(p.id);
                w.str(&p.schema);
                w.str(&p.name);
                w.str(&p.text);
                w.u8(p.options.byte());
            }
            Object::View(v) => {
                w.u8(4);
                w.u32(v.id);
                w.str(&v.schema);
                w.str(&v.name);
                w.str(&v.text);
            }
            Object::Function(f) => {
                w.u8(5);
                w.u32(f.id);
                w.str(&f.schema);
                w.str(&f.name);
                w.u8(u8::from(f.returns_table) + u8::from(f.multi_statement));
                w.str(&f.text);
            }
            Object::Trigger(t) => {
                w.u8(6);
                w.u32(t.id);
                w.str(&t.schema);
                w.str(&t.name);
                w.u32(t.table);
                w.u8(u8::from(t.disabled));
                w.str(&t.text);
            }
            Object::Schema(s) => {
                w.u8(7);
                w.u32(s.id);
                w.str(&s.name);
            }
            Object::Type(t) => {
                w.u8(9);
                w.u32(t.id);
                w.str(&t.schema);
                w.str(&t.name);
                w.0.extend_from_slice(&t.base.encode());
                w.u8(u8::from(t.nullable));
                w.opt_str(t.table.as_deref());
            }
            Object::Properties(p) => {
                w.u8(8);
                w.u32(p.entries.len() as u32);
                for e in &p.entries {
                    w.property(e);
                }
            }
        }
        w.0
    }

    /// Decodes a definition.
    pub fn decode(b: &[u8]) -> Result<Object, EngineError> {
        let mut r = Reader(b);
        let object = match r.u8()? {
            1 => {
                let id = r.u32()?;
                let schema = r.str()?;
                let name = r.str()?;
                let created_micros = r.u64()?;
                let identity_high = r.i64()?;
                let n = usize::from(r.u16()?);
                let mut columns = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    let name = r.str()?;
                    let ty = r.ty()?;
                    let flags = r.u8()?;
                    let identity = if r.u8()? != 0 { Some((r.i64()?, r.i64()?)) } else { None };
                    let default = r.opt_str()?;
                    let computed = if flags & 2 != 0 {
                        Some(Computed { text: r.str()?, persisted: flags & 4 != 0 })
                    } else {
                        None
                    };
                    // Catalogs written before column collations never set bit 4.
                    let collation = if flags & 16 != 0 { Some(r.str()?) } else { None };
                    // Catalogs written before declared types never set bit 5.
                    let declared = if flags & 32 != 0 {
                        let id = r.u8()?;
                        Some(DeclaredType::of_system_type_id(id).ok_or_else(|| {
                            EngineError::Corrupt(format!("unknown declared type {id}"))
                        })?)
                    } else {
                        None
                    };
                    columns.push(ColumnDef {
                        name,
                        ty,
                        nullable: flags & 1 != 0,
                        identity,
                        default,
                        computed,
                        rowversion: flags & 8 != 0,
                        collation,
                        declared,
                    });
                }
                let n = usize::from(r.u16()?);
                let mut indexes = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    let id = r.u16()?;
                    let name = r.str()?;
                    let k = usize::from(r.u16()?);
                    let mut cols = Vec::with_capacity(k.min(32));
                    for _ in 0..k {
                        cols.push(usize::from(r.u16()?));
                    }
                    let flags = r.u8()?;
                    let root = r.u32()?;
                    indexes.push(IndexDef {
                        id,
                        name,
                        columns: cols,
                        unique: flags & 1 != 0,
                        primary_key: flags & 2 != 0,
                        unique_constraint: flags & 4 != 0,
                        ignore_dup_key: flags & 8 != 0,
                        root,
                    });
                }
                let n = usize::from(r.u16()?);
                let mut checks = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    checks.push(CheckDef { name: r.str()?, text: r.str()? });
                }
                // Tables written before foreign keys existed end here: they have none.
                let n = if r.0.is_empty() { 0 } else { usize::from(r.u16()?) };
                let mut foreign_keys = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    let name = r.str()?;
                    let ref_table = r.u32()?;
                    let ref_index = r.u16()?;
                    let k = usize::from(r.u16()?);
                    let mut columns = Vec::with_capacity(k.min(32));
                    for _ in 0..k {
                        columns.push(usize::from(r.u16()?));
                    }
                    foreign_keys.push(ForeignKeyDef {
                        name,
                        columns,
                        ref_table,
                        ref_index,
                        on_delete: ReferentialAction::from_byte(r.u8()?)?,
                        on_update: ReferentialAction::from_byte(r.u8()?)?,
                        disabled: r.u8()? != 0,
                    });
                }
                Object::Table(Arc::new(TableDef {
                    id,
                    schema,
                    name,
                    columns,
                    indexes,
                    checks,
                    foreign_keys,
                    identity_high,
                    created_micros,
                }))
            }
            2 => {
                let id = r.u32()?;
                let schema = r.str()?;
                let name = r.str()?;
                let ty = r.ty()?;
                let (start, increment, min, max) = (r.i128()?, r.i128()?, r.i128()?, r.i128()?);
                let cycle = r.u8()? != 0;
                let cache = match r.u32()? {
                    0 => None,
                    n => Some(n),
                };
                let high_water = if r.u8()? != 0 { Some(r.i128()?) } else { None };
                Object::Sequence(SequenceDef {
                    id,
                    schema,
                    name,
                    ty,
                    start,
                    increment,
                    min,
                    max,
                    cycle,
                    cache,
                    high_water,
                })
            }
            3 => Object::Procedure(ProcedureDef {
                id: r.u32()?,
                schema: r.str()?,
                name: r.str()?,
                text: r.str()?,
                // Procedures written before the options were kept end here: both ON.
                options: if r.0.is_empty() {
                    ModuleOptions::default()
                } else {
                    ModuleOptions::from_byte(r.u8()?)
                },
            }),
            4 => Object::View(ViewDef {
                id: r.u32()?,
                schema: r.str()?,
                name: r.str()?,
                text: r.str()?,
            }),
            5 => {
                let (id, schema, name) = (r.u32()?, r.str()?, r.str()?);
                let kind = r.u8()?;
                let text = r.str()?;
                Object::Function(FunctionDef {
                    id,
                    schema,
                    name,
                    returns_table: kind != 0,
                    multi_statement: kind == 2,
                    text,
                })
            }
            6 => Object::Trigger(TriggerDef {
                id: r.u32()?,
                schema: r.str()?,
                name: r.str()?,
                table: r.u32()?,
                disabled: r.u8()? != 0,
                text: r.str()?,
            }),
            7 => Object::Schema(SchemaDef { id: r.u32()?, name: r.str()? }),
            8 => {
                let n = r.u32()? as usize;
                let mut entries = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    entries.push(r.property()?);
                }
                Object::Properties(PropertiesDef { entries })
            }
            9 => Object::Type(TypeDef {
                id: r.u32()?,
                schema: r.str()?,
                name: r.str()?,
                base: r.ty()?,
                nullable: r.u8()? != 0,
                table: r.opt_str()?,
            }),
            t => return Err(EngineError::Corrupt(format!("unknown catalog object kind {t}"))),
        };
        if !r.0.is_empty() {
            return Err(EngineError::Corrupt("trailing bytes in a catalog object".into()));
        }
        Ok(object)
    }
}

/// Little-endian fields of a catalog record (objects, properties, statistics).
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    /// One extended property: class, ids, name and value (kind 8's entries and the
    /// per-property chunks alike).
    pub(super) fn property(&mut self, e: &ExtendedProperty) {
        self.u8(e.class);
        self.u32(e.major_id);
        self.u32(e.minor_id);
        self.str(&e.name);
        self.value(&e.value);
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn i128(&mut self, v: i128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
    /// A value as a one-column SQL_VARIANT row (`docs/format/row.md`), length first. Values
    /// reach here through the SQL layer's conversion to SQL_VARIANT, so they fit one.
    pub(super) fn value(&mut self, v: &Value) {
        let mut row = Vec::new();
        if encode_row(&[SqlType::Variant], std::slice::from_ref(v), &mut row).is_err() {
            row.clear();
            // A value no variant holds is stored as NULL rather than lose the catalog entry.
            let _ = encode_row(&[SqlType::Variant], &[Value::Null], &mut row);
        }
        self.u32(row.len() as u32);
        self.0.extend_from_slice(&row);
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
}

/// Reads what [`Writer`] wrote; a record cut short is corrupt.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    /// What [`Writer::property`] wrote.
    pub(super) fn property(&mut self) -> Result<ExtendedProperty, EngineError> {
        Ok(ExtendedProperty {
            class: self.u8()?,
            major_id: self.u32()?,
            minor_id: self.u32()?,
            name: self.str()?,
            value: self.value()?,
        })
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], EngineError> {
        if self.0.len() < n {
            return Err(EngineError::Corrupt("truncated catalog object".into()));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], EngineError> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, EngineError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, EngineError> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, EngineError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, EngineError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub(crate) fn f64(&mut self) -> Result<f64, EngineError> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    pub(super) fn i64(&mut self) -> Result<i64, EngineError> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    pub(super) fn i128(&mut self) -> Result<i128, EngineError> {
        Ok(i128::from_le_bytes(self.array()?))
    }
    pub(crate) fn str(&mut self) -> Result<String, EngineError> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| EngineError::Corrupt("catalog name is not UTF-8".into()))
    }
    pub(super) fn value(&mut self) -> Result<Value, EngineError> {
        let n = self.u32()? as usize;
        let row = self.take(n)?;
        let mut values = decode_row(&[SqlType::Variant], row)
            .map_err(|e| EngineError::Corrupt(format!("extended property value: {e}")))?;
        values.pop().ok_or_else(|| EngineError::Corrupt("extended property value".into()))
    }
    fn opt_str(&mut self) -> Result<Option<String>, EngineError> {
        if self.u8()? != 0 {
            Ok(Some(self.str()?))
        } else {
            Ok(None)
        }
    }
    pub(super) fn ty(&mut self) -> Result<SqlType, EngineError> {
        SqlType::decode(self.array()?)
            .ok_or_else(|| EngineError::Corrupt("unknown column type in the catalog".into()))
    }
}
