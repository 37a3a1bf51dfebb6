//! Table-valued parameters ([MS-TDS] 2.2.5.5.5): an RPC parameter whose value is a table of a
//! user-defined table type.
//!
//! On the wire the type is TVPTYPE (0xF3) followed by TVP_TYPENAME (database, schema and
//! type name, each a B_VARCHAR; the database must be empty), then the column metadata, then the
//! rows:
//!
//! ```text
//! TVP_COLMETADATA  USHORT count (0xFFFF: TVP_NULL_TOKEN, no columns: the type's default,
//!                  an empty table), then per column: ULONG UserType, USHORT Flags,
//!                  TYPE_INFO, B_VARCHAR ColName (empty)
//! [0x10 TVP_ORDER_UNIQUE]     USHORT count, then count x (USHORT ColNum, BYTE flags)
//! [0x11 TVP_COLUMN_ORDERING]  USHORT count, then count x USHORT ColNum
//! 0x00 TVP_END_TOKEN
//! *(0x01 TVP_ROW, then one value per column without fDefault, as its TYPE_INFO says)
//! 0x00 TVP_END_TOKEN
//! ```
//!
//! Walden keeps [`TypeInfo::Tvp`] a plain tag, so that `TypeInfo` stays a small `Copy` type,
//! and reads TVP_TYPENAME as the first part of the value ([`TableValue`]): the two always
//! follow each other in an RPC parameter, so the bytes are the same. The ordering and
//! uniqueness hints are read and dropped: the server does not need them to be correct. See
//! `docs/format/tds.md` for a worked example.

use crate::value::{decode_value, encode_value};
use crate::wire::{put_b_varchar, Reader};
use crate::{TdsError, TdsValue, TypeInfo};

/// TVP_NULL_TOKEN: a column count meaning "no table".
const NULL_TOKEN: u16 = 0xFFFF;
const END_TOKEN: u8 = 0x00;
const ROW_TOKEN: u8 = 0x01;
const ORDER_UNIQUE_TOKEN: u8 = 0x10;
const COLUMN_ORDERING_TOKEN: u8 = 0x11;

/// fDefault in a column's Flags: the column is left out of every row and takes its default.
pub const COLUMN_DEFAULT: u16 = 0x0200;

/// One column of a table-valued parameter, as the client describes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TvpColumn {
    /// The column's UserType (0 from every driver).
    pub user_type: u32,
    /// The column's Flags: fNullable (0x01), fDefault ([`COLUMN_DEFAULT`]) and the others of
    /// COLMETADATA.
    pub flags: u16,
    /// The column's type.
    pub ty: TypeInfo,
}

impl TvpColumn {
    /// Whether rows leave this column out, for its default.
    pub fn is_default(&self) -> bool {
        self.flags & COLUMN_DEFAULT != 0
    }
}

/// A table-valued parameter's value: the table type's name, the columns and the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct TableValue {
    /// TVP_TYPENAME's database, which must be empty.
    pub database: String,
    /// The type's schema, empty when the client named none.
    pub schema: String,
    /// The type's name.
    pub type_name: String,
    /// The columns, in the type's order; none for TVP_NULL_TOKEN.
    pub columns: Vec<TvpColumn>,
    /// The rows: one value per column, `None` for a column with fDefault.
    pub rows: Vec<Vec<Option<TdsValue>>>,
}

/// Reads a TVP value: everything after the TVPTYPE byte.
pub(crate) fn decode_table(r: &mut Reader<'_>) -> Result<TableValue, TdsError> {
    let bad = |what| TdsError::Malformed { what };
    let database = r.b_varchar("TVP DbName")?;
    let schema = r.b_varchar("TVP OwningSchema")?;
    let type_name = r.b_varchar("TVP TypeName")?;
    let mut columns = Vec::new();
    match r.u16_le("TVP column count")? {
        NULL_TOKEN => {}
        count => {
            for _ in 0..count {
                let user_type = r.u32_le("TVP column UserType")?;
                let flags = r.u16_le("TVP column Flags")?;
                let ty = column_type(r)?;
                if ty == TypeInfo::Tvp {
                    return Err(bad("a TVP column of a table type"));
                }
                // ColName is always empty; what a client puts there is of no use.
                r.b_varchar("TVP column ColName")?;
                columns.push(TvpColumn { user_type, flags, ty });
            }
        }
    }
    loop {
        match r.u8("TVP metadata token")? {
            END_TOKEN => break,
            ORDER_UNIQUE_TOKEN => {
                for _ in 0..r.u16_le("TVP_ORDER_UNIQUE count")? {
                    r.u16_le("TVP_ORDER_UNIQUE ColNum")?;
                    r.u8("TVP_ORDER_UNIQUE flags")?;
                }
            }
            COLUMN_ORDERING_TOKEN => {
                for _ in 0..r.u16_le("TVP_COLUMN_ORDERING count")? {
                    r.u16_le("TVP_COLUMN_ORDERING ColNum")?;
                }
            }
            _ => return Err(bad("TVP metadata token")),
        }
    }
    // python-tds types a DECIMAL column from the first row's value, so later rows may have
    // more digits than the column says; their bytes say how long they are, and the table
    // type's column decides what fits, so rows are read at the largest precision.
    let value_types: Vec<TypeInfo> = columns
        .iter()
        .map(|c| match c.ty {
            TypeInfo::Decimal { scale, .. } => TypeInfo::Decimal { precision: 38, scale },
            TypeInfo::Numeric { scale, .. } => TypeInfo::Numeric { precision: 38, scale },
            other => other,
        })
        .collect();
    let mut rows = Vec::new();
    loop {
        match r.u8("TVP row token")? {
            END_TOKEN => break,
            ROW_TOKEN => {
                let mut row = Vec::with_capacity(columns.len());
                for (column, ty) in columns.iter().zip(&value_types) {
                    row.push(match column.is_default() {
                        true => None,
                        false => Some(decode_value(ty, r)?),
                    });
                }
                rows.push(row);
            }
            _ => return Err(bad("TVP row token")),
        }
    }
    Ok(TableValue { database, schema, type_name, columns, rows })
}

/// A TVP column's TYPE_INFO. mssql-jdbc describes the DECIMAL column of a table without rows
/// as DECIMAL(0, 0), which SQL Server accepts (the table type, not the TVP, gives the column
/// its type): that is read as DECIMAL(38, 0), which has no values to describe anyway.
fn column_type(r: &mut Reader<'_>) -> Result<TypeInfo, TdsError> {
    let mut ahead = r.clone();
    let id = ahead.u8("TYPE_INFO type")?;
    if matches!(id, 0x6A | 0x6C) {
        ahead.u8("TYPE_INFO length")?;
        let precision = ahead.u8("DECIMAL precision")?;
        let scale = ahead.u8("DECIMAL scale")?;
        if (precision, scale) == (0, 0) {
            *r = ahead;
            return Ok(match id {
                0x6A => TypeInfo::Decimal { precision: 38, scale: 0 },
                _ => TypeInfo::Numeric { precision: 38, scale: 0 },
            });
        }
    }
    TypeInfo::decode(r)
}

/// Writes a TVP value: everything after the TVPTYPE byte. A table without columns is sent as
/// TVP_NULL_TOKEN.
pub(crate) fn encode_table(table: &TableValue, out: &mut Vec<u8>) -> Result<(), TdsError> {
    put_b_varchar(out, &table.database, "TVP DbName")?;
    put_b_varchar(out, &table.schema, "TVP OwningSchema")?;
    put_b_varchar(out, &table.type_name, "TVP TypeName")?;
    if table.columns.is_empty() {
        out.extend_from_slice(&NULL_TOKEN.to_le_bytes());
    } else {
        let count = u16::try_from(table.columns.len())
            .ok()
            .filter(|&c| c != NULL_TOKEN)
            .ok_or(TdsError::Malformed { what: "too many TVP columns" })?;
        out.extend_from_slice(&count.to_le_bytes());
        for column in &table.columns {
            out.extend_from_slice(&column.user_type.to_le_bytes());
            out.extend_from_slice(&column.flags.to_le_bytes());
            column.ty.encode(out);
            out.push(0);
        }
    }
    out.push(END_TOKEN);
    for row in &table.rows {
        if row.len() != table.columns.len() {
            return Err(TdsError::Malformed { what: "TVP row of the wrong width" });
        }
        out.push(ROW_TOKEN);
        for (column, value) in table.columns.iter().zip(row) {
            match (column.is_default(), value) {
                (true, None) => {}
                (false, Some(v)) => encode_value(&column.ty, v, out)?,
                _ => return Err(TdsError::Malformed { what: "TVP value against fDefault" }),
            }
        }
    }
    out.push(END_TOKEN);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Collation;

    /// The bytes of `docs/format/tds.md`'s example: a `dbo.IdList (id INT, name NVARCHAR(10))`
    /// parameter with the rows (1, N'a') and (2, NULL).
    const EXAMPLE: &[u8] = &[
        0x00, // DbName: empty
        0x03, b'd', 0, b'b', 0, b'o', 0, // OwningSchema "dbo"
        0x06, b'I', 0, b'd', 0, b'L', 0, b'i', 0, b's', 0, b't', 0, // TypeName "IdList"
        0x02, 0x00, // two columns
        0, 0, 0, 0, 0x01, 0x00, 0x26, 0x04, 0x00, // INTN(4), nullable, no name
        0, 0, 0, 0, 0x01, 0x00, 0xE7, 0x14, 0x00, 0x09, 0x04, 0xD0, 0x00, 0x34,
        0x00, // NVARCHAR(10), default collation, no name
        0x00, // end of metadata
        0x01, 0x04, 1, 0, 0, 0, 0x02, 0x00, b'a', 0, // row (1, N'a')
        0x01, 0x04, 2, 0, 0, 0, 0xFF, 0xFF, // row (2, NULL)
        0x00, // end of rows
    ];

    fn example() -> TableValue {
        let nullable = 0x0001;
        let nvarchar = TypeInfo::NVarChar { max_len: 20, collation: Collation::default() };
        TableValue {
            database: String::new(),
            schema: "dbo".into(),
            type_name: "IdList".into(),
            columns: vec![
                TvpColumn { user_type: 0, flags: nullable, ty: TypeInfo::IntN(4) },
                TvpColumn { user_type: 0, flags: nullable, ty: nvarchar },
            ],
            rows: vec![
                vec![Some(TdsValue::Int(1)), Some(TdsValue::NVarChar("a".into()))],
                vec![Some(TdsValue::Int(2)), Some(TdsValue::Null)],
            ],
        }
    }

    #[test]
    fn the_documented_example_decodes_and_encodes() {
        let mut r = Reader::new(EXAMPLE);
        assert_eq!(decode_table(&mut r), Ok(example()));
        assert!(r.is_empty());
        let mut out = Vec::new();
        encode_table(&example(), &mut out).unwrap();
        assert_eq!(out, EXAMPLE);
    }

    #[test]
    fn null_token_default_columns_and_ordering_hints() {
        // TVP_NULL_TOKEN, then the two end tokens: an empty table.
        let null = [0x00, 0x00, 0x01, b't', 0, 0xFF, 0xFF, 0x00, 0x00];
        let table = decode_table(&mut Reader::new(&null)).unwrap();
        assert!(table.columns.is_empty() && table.rows.is_empty());
        let mut out = Vec::new();
        encode_table(&table, &mut out).unwrap();
        assert_eq!(out, null);

        // An identity column sent with fDefault is left out of the rows; TVP_ORDER_UNIQUE
        // and TVP_COLUMN_ORDERING are read past.
        let bytes = [
            0x00, 0x00, 0x01, b't', 0, // no schema, type "t"
            0x02, 0x00, // two columns
            0, 0, 0, 0, 0x10, 0x02, 0x26, 0x04, 0x00, // INTN(4) identity, fDefault
            0, 0, 0, 0, 0x01, 0x00, 0x26, 0x08, 0x00, // INTN(8)
            0x10, 0x01, 0x00, 0x02, 0x00, 0x05, // ORDER_UNIQUE: column 2 asc, unique
            0x11, 0x01, 0x00, 0x02, 0x00, // COLUMN_ORDERING: column 2
            0x00, // end of metadata
            0x01, 0x08, 7, 0, 0, 0, 0, 0, 0, 0, // row (DEFAULT, 7)
            0x00,
        ];
        let table = decode_table(&mut Reader::new(&bytes)).unwrap();
        assert!(table.columns[0].is_default() && !table.columns[1].is_default());
        assert_eq!(table.rows, vec![vec![None, Some(TdsValue::BigInt(7))]]);

        // mssql-jdbc's DECIMAL(0, 0) for the column of a table without rows.
        let bytes = [0x00, 0x00, 0x01, b't', 0, 0x01, 0x00, 0, 0, 0, 0, 1, 0, 0x6C, 0x11, 0, 0, 0];
        let mut empty = bytes.to_vec();
        empty.extend_from_slice(&[0x00, 0x00]);
        let table = decode_table(&mut Reader::new(&empty)).unwrap();
        assert_eq!(table.columns[0].ty, TypeInfo::Numeric { precision: 38, scale: 0 });
    }

    #[test]
    fn malformed_tables_are_refused() {
        let cut = &EXAMPLE[..EXAMPLE.len() - 1];
        assert!(decode_table(&mut Reader::new(cut)).is_err());
        let mut bad_row = EXAMPLE.to_vec();
        let last_row = EXAMPLE.len() - 9;
        bad_row[last_row] = 0x02;
        assert!(matches!(
            decode_table(&mut Reader::new(&bad_row)),
            Err(TdsError::Malformed { what: "TVP row token" })
        ));
        let nested = [0x00, 0x00, 0x01, b't', 0, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0xF3];
        assert!(decode_table(&mut Reader::new(&nested)).is_err());
        let mut wide = example();
        wide.rows[0].push(None);
        assert!(encode_table(&wide, &mut Vec::new()).is_err());
    }
}
