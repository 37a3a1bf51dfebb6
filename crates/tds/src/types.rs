//! TYPE_INFO ([MS-TDS] 2.2.5.4, 2.2.5.5, 2.2.5.6): how a column or parameter's type is
//! described on the wire.
//!
//! A TYPE_INFO is a type byte followed by whatever that type needs to be decoded: nothing for
//! the fixed-length types (INT4, FLT8, ...), a one-byte maximum length for the BYTELEN
//! nullable types (INTN, FLTN, GUID, ...), precision and scale for DECIMALN/NUMERICN, a scale
//! for TIMEN and friends, a two-byte maximum length (plus a 5-byte collation for character
//! data) for the USHORTLEN types, and a four-byte one for the legacy TEXT/NTEXT/IMAGE.
//! A USHORTLEN variable type whose maximum length is 0xFFFF is a `(MAX)` type and its values
//! are sent as PLP (partially length-prefixed) streams.
//!
//! [`TypeInfo`] is one variant per supported wire type, carrying exactly the fields that type
//! has, so that an invalid combination (an INTN of length 3, a TIME with scale 9, a precision
//! of 40) cannot be represented: decoding rejects it with [`TdsError::Malformed`]. Types this
//! codec does not implement (XML, UDT, TVP, the pre-7.0 1-byte-length string
//! types) decode to [`TdsError::UnsupportedType`].
//!
//! The legacy LOB types are accepted only as RPC parameters, where their values are a plain
//! four-byte length and data; result streams (COLMETADATA, RETURNVALUE) reject them, since
//! Walden sends `(MAX)` types instead (see [`TypeInfo::is_legacy_lob`]).

use crate::wire::Reader;
use crate::{TdsError, TdsVersion};

/// The maximum-length value that marks a `(MAX)` type, sent as PLP.
pub const MAX_LEN_PLP: u16 = 0xFFFF;

/// Largest non-`(MAX)` length of VARCHAR/NVARCHAR/VARBINARY columns, in bytes.
pub const MAX_NON_PLP_LEN: u16 = 8000;

/// The largest scale of TIME, DATETIME2 and DATETIMEOFFSET.
pub const MAX_TIME_SCALE: u8 = 7;

/// The largest precision of DECIMAL/NUMERIC.
pub const MAX_PRECISION: u8 = 38;

/// A collation as sent in TYPE_INFO and in ENVCHANGE type 7 (2.2.5.1.2): a 32-bit word holding
/// the LCID (20 bits), comparison flags (8 bits) and a version (4 bits), then a SortId byte
/// (non-zero for SQL collations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Collation {
    /// LCID, flags and version, as the little-endian word on the wire.
    pub info: u32,
    /// SortId.
    pub sort_id: u8,
}

impl Collation {
    /// SQL_Latin1_General_CP1_CI_AS: LCID 0x0409, case- kana- and width-insensitive,
    /// SortId 52; on the wire `09 04 D0 00 34`.
    pub const SQL_LATIN1_GENERAL_CP1_CI_AS: Self = Self { info: 0x00D0_0409, sort_id: 0x34 };

    /// fIgnoreCase.
    pub const IGNORE_CASE: u8 = 0x01;
    /// fIgnoreAccent.
    pub const IGNORE_ACCENT: u8 = 0x02;
    /// fIgnoreKana.
    pub const IGNORE_KANA: u8 = 0x04;
    /// fIgnoreWidth.
    pub const IGNORE_WIDTH: u8 = 0x08;
    /// fBinary.
    pub const BINARY: u8 = 0x10;
    /// fBinary2.
    pub const BINARY2: u8 = 0x20;
    /// fUTF8 (SQL Server 2019 UTF-8 collations).
    pub const UTF8: u8 = 0x40;

    /// The Windows locale id.
    pub fn lcid(self) -> u32 {
        self.info & 0x000F_FFFF
    }

    /// The comparison flags (the associated constants).
    pub fn flags(self) -> u8 {
        (self.info >> 20) as u8
    }

    /// The collation version.
    pub fn version(self) -> u8 {
        (self.info >> 28) as u8
    }

    /// Decodes the 5-byte wire form.
    pub fn from_bytes(b: [u8; 5]) -> Self {
        Self { info: u32::from_le_bytes([b[0], b[1], b[2], b[3]]), sort_id: b[4] }
    }

    /// The 5-byte wire form.
    pub fn to_bytes(self) -> [u8; 5] {
        let [a, b, c, d] = self.info.to_le_bytes();
        [a, b, c, d, self.sort_id]
    }
}

impl Default for Collation {
    fn default() -> Self {
        Self::SQL_LATIN1_GENERAL_CP1_CI_AS
    }
}

/// A wire type, with its length, precision, scale and collation as applicable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeInfo {
    /// NULLTYPE (0x1F): a column that is always NULL.
    Null,
    /// INT1TYPE (0x30): TINYINT NOT NULL.
    Int1,
    /// BITTYPE (0x32): BIT NOT NULL.
    Bit,
    /// INT2TYPE (0x34): SMALLINT NOT NULL.
    Int2,
    /// INT4TYPE (0x38): INT NOT NULL.
    Int4,
    /// INT8TYPE (0x7F): BIGINT NOT NULL.
    Int8,
    /// FLT4TYPE (0x3B): REAL NOT NULL.
    Flt4,
    /// FLT8TYPE (0x3E): FLOAT NOT NULL.
    Flt8,
    /// MONEYTYPE (0x3C): MONEY NOT NULL.
    Money,
    /// MONEY4TYPE (0x7A): SMALLMONEY NOT NULL.
    Money4,
    /// DATETIMETYPE (0x3D): DATETIME NOT NULL.
    DateTime,
    /// DATETIM4TYPE (0x3A): SMALLDATETIME NOT NULL.
    DateTime4,
    /// INTNTYPE (0x26) of 1, 2, 4 or 8 bytes.
    IntN(u8),
    /// BITNTYPE (0x68).
    BitN,
    /// FLTNTYPE (0x6D) of 4 or 8 bytes.
    FltN(u8),
    /// MONEYNTYPE (0x6E) of 4 (SMALLMONEY) or 8 (MONEY) bytes.
    MoneyN(u8),
    /// DATETIMNTYPE (0x6F) of 4 (SMALLDATETIME) or 8 (DATETIME) bytes.
    DateTimeN(u8),
    /// GUIDTYPE (0x24): UNIQUEIDENTIFIER.
    Guid,
    /// DECIMALNTYPE (0x6A).
    Decimal {
        /// Total digits, 1..=38.
        precision: u8,
        /// Digits after the point, 0..=precision.
        scale: u8,
    },
    /// NUMERICNTYPE (0x6C); identical to DECIMALN on the wire.
    Numeric {
        /// Total digits, 1..=38.
        precision: u8,
        /// Digits after the point, 0..=precision.
        scale: u8,
    },
    /// DATENTYPE (0x28).
    Date,
    /// TIMENTYPE (0x29) with fractional-second digits 0..=7.
    Time {
        /// Fractional-second digits.
        scale: u8,
    },
    /// DATETIME2NTYPE (0x2A).
    DateTime2 {
        /// Fractional-second digits.
        scale: u8,
    },
    /// DATETIMEOFFSETNTYPE (0x2B).
    DateTimeOffset {
        /// Fractional-second digits.
        scale: u8,
    },
    /// BIGVARCHRTYPE (0xA7): VARCHAR(n) or, with [`MAX_LEN_PLP`], VARCHAR(MAX).
    BigVarChar {
        /// Maximum length in bytes.
        max_len: u16,
        /// Collation (its code page encodes the bytes).
        collation: Collation,
    },
    /// BIGCHARTYPE (0xAF): CHAR(n).
    BigChar {
        /// Length in bytes.
        len: u16,
        /// Collation.
        collation: Collation,
    },
    /// NVARCHARTYPE (0xE7): NVARCHAR(n) or NVARCHAR(MAX).
    NVarChar {
        /// Maximum length in bytes (twice the character count), or [`MAX_LEN_PLP`].
        max_len: u16,
        /// Collation.
        collation: Collation,
    },
    /// NCHARTYPE (0xEF): NCHAR(n).
    NChar {
        /// Length in bytes.
        len: u16,
        /// Collation.
        collation: Collation,
    },
    /// BIGVARBINTYPE (0xA5): VARBINARY(n) or VARBINARY(MAX).
    BigVarBinary {
        /// Maximum length in bytes, or [`MAX_LEN_PLP`].
        max_len: u16,
    },
    /// BIGBINARYTYPE (0xAD): BINARY(n).
    BigBinary {
        /// Length in bytes.
        len: u16,
    },
    /// TEXTTYPE (0x23), RPC parameters only.
    Text {
        /// Maximum length in bytes.
        max_len: u32,
        /// Collation.
        collation: Collation,
    },
    /// NTEXTTYPE (0x63), RPC parameters only.
    NText {
        /// Maximum length in bytes.
        max_len: u32,
        /// Collation.
        collation: Collation,
    },
    /// IMAGETYPE (0x22), RPC parameters only.
    Image {
        /// Maximum length in bytes.
        max_len: u32,
    },
    /// SSVARIANTTYPE (0x62): SQL_VARIANT, each value carrying its own base type (2.2.5.5.4).
    Variant {
        /// Maximum length in bytes of a value with its base type's header (8009 or 8016).
        max_len: u32,
    },
    /// XMLTYPE (0xF1): XML, its values PLP streams of UTF-16LE text (2.2.5.5.3). Walden sends
    /// XML_INFO without a schema; a schema a client names for a parameter is read and ignored
    /// (Walden's xml is untyped).
    Xml,
    /// TVPTYPE (0xF3): a table-valued RPC parameter (2.2.5.5.5). The type's name, which the
    /// wire puts in TYPE_INFO, is read with the value ([`crate::tvp`]).
    Tvp,
}

impl TypeInfo {
    /// NVARCHAR(`chars`), or NVARCHAR(MAX) for `None`, in the default collation.
    pub fn nvarchar(chars: Option<u16>) -> Self {
        let max_len = chars.map_or(MAX_LEN_PLP, |c| c.saturating_mul(2).min(MAX_NON_PLP_LEN));
        Self::NVarChar { max_len, collation: Collation::default() }
    }

    /// VARCHAR(`len`), or VARCHAR(MAX) for `None`, in the default collation.
    pub fn varchar(len: Option<u16>) -> Self {
        let max_len = len.map_or(MAX_LEN_PLP, |l| l.min(MAX_NON_PLP_LEN));
        Self::BigVarChar { max_len, collation: Collation::default() }
    }

    /// VARBINARY(`len`), or VARBINARY(MAX) for `None`.
    pub fn varbinary(len: Option<u16>) -> Self {
        Self::BigVarBinary { max_len: len.map_or(MAX_LEN_PLP, |l| l.min(MAX_NON_PLP_LEN)) }
    }

    /// The type byte.
    pub fn type_id(&self) -> u8 {
        match self {
            Self::Null => 0x1F,
            Self::Int1 => 0x30,
            Self::Bit => 0x32,
            Self::Int2 => 0x34,
            Self::Int4 => 0x38,
            Self::Int8 => 0x7F,
            Self::Flt4 => 0x3B,
            Self::Flt8 => 0x3E,
            Self::Money => 0x3C,
            Self::Money4 => 0x7A,
            Self::DateTime => 0x3D,
            Self::DateTime4 => 0x3A,
            Self::IntN(_) => 0x26,
            Self::BitN => 0x68,
            Self::FltN(_) => 0x6D,
            Self::MoneyN(_) => 0x6E,
            Self::DateTimeN(_) => 0x6F,
            Self::Guid => 0x24,
            Self::Decimal { .. } => 0x6A,
            Self::Numeric { .. } => 0x6C,
            Self::Date => 0x28,
            Self::Time { .. } => 0x29,
            Self::DateTime2 { .. } => 0x2A,
            Self::DateTimeOffset { .. } => 0x2B,
            Self::BigVarChar { .. } => 0xA7,
            Self::BigChar { .. } => 0xAF,
            Self::NVarChar { .. } => 0xE7,
            Self::NChar { .. } => 0xEF,
            Self::BigVarBinary { .. } => 0xA5,
            Self::BigBinary { .. } => 0xAD,
            Self::Text { .. } => 0x23,
            Self::NText { .. } => 0x63,
            Self::Image { .. } => 0x22,
            Self::Variant { .. } => 0x62,
            Self::Xml => 0xF1,
            Self::Tvp => 0xF3,
        }
    }

    /// The T-SQL name of the type, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Null => "NULL",
            Self::Int1 | Self::IntN(1) => "TINYINT",
            Self::Int2 | Self::IntN(2) => "SMALLINT",
            Self::Int4 | Self::IntN(4) => "INT",
            Self::Int8 | Self::IntN(_) => "BIGINT",
            Self::Bit | Self::BitN => "BIT",
            Self::Flt4 | Self::FltN(4) => "REAL",
            Self::Flt8 | Self::FltN(_) => "FLOAT",
            Self::Money4 | Self::MoneyN(4) => "SMALLMONEY",
            Self::Money | Self::MoneyN(_) => "MONEY",
            Self::DateTime4 | Self::DateTimeN(4) => "SMALLDATETIME",
            Self::DateTime | Self::DateTimeN(_) => "DATETIME",
            Self::Guid => "UNIQUEIDENTIFIER",
            Self::Decimal { .. } => "DECIMAL",
            Self::Numeric { .. } => "NUMERIC",
            Self::Date => "DATE",
            Self::Time { .. } => "TIME",
            Self::DateTime2 { .. } => "DATETIME2",
            Self::DateTimeOffset { .. } => "DATETIMEOFFSET",
            Self::BigVarChar { .. } => "VARCHAR",
            Self::BigChar { .. } => "CHAR",
            Self::NVarChar { .. } => "NVARCHAR",
            Self::NChar { .. } => "NCHAR",
            Self::BigVarBinary { .. } => "VARBINARY",
            Self::BigBinary { .. } => "BINARY",
            Self::Text { .. } => "TEXT",
            Self::NText { .. } => "NTEXT",
            Self::Image { .. } => "IMAGE",
            Self::Variant { .. } => "SQL_VARIANT",
            Self::Xml => "XML",
            Self::Tvp => "TABLE",
        }
    }

    /// Whether values of this type are sent as PLP streams (the `(MAX)` types).
    pub fn is_plp(&self) -> bool {
        matches!(
            self,
            Self::BigVarChar { max_len: MAX_LEN_PLP, .. }
                | Self::NVarChar { max_len: MAX_LEN_PLP, .. }
                | Self::BigVarBinary { max_len: MAX_LEN_PLP }
                | Self::Xml
        )
    }

    /// Whether this is TEXT, NTEXT or IMAGE, which only RPC parameters may use here.
    pub fn is_legacy_lob(&self) -> bool {
        matches!(self, Self::Text { .. } | Self::NText { .. } | Self::Image { .. })
    }

    /// Whether this is a fixed-length type, which has no NULL representation in a ROW.
    pub fn is_fixed_len(&self) -> bool {
        matches!(
            self,
            Self::Null
                | Self::Int1
                | Self::Bit
                | Self::Int2
                | Self::Int4
                | Self::Int8
                | Self::Flt4
                | Self::Flt8
                | Self::Money
                | Self::Money4
                | Self::DateTime
                | Self::DateTime4
        )
    }

    /// The collation of a character type.
    pub fn collation(&self) -> Option<Collation> {
        match self {
            Self::BigVarChar { collation, .. }
            | Self::BigChar { collation, .. }
            | Self::NVarChar { collation, .. }
            | Self::NChar { collation, .. }
            | Self::Text { collation, .. }
            | Self::NText { collation, .. } => Some(*collation),
            _ => None,
        }
    }

    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<Self, TdsError> {
        Self::decode_for(r, TdsVersion::V7_4)
    }

    /// The TYPE_INFO as a client speaking `version` sends it: before 7.1 character types
    /// carry no collation (they are read in the default one).
    pub(crate) fn decode_for(r: &mut Reader<'_>, version: TdsVersion) -> Result<Self, TdsError> {
        const LEN: &str = "TYPE_INFO length";
        let id = r.u8("TYPE_INFO type")?;
        let bad = |what| TdsError::Malformed { what };
        let collation = |r: &mut Reader<'_>| {
            if version.has_collations() {
                r.array("collation").map(Collation::from_bytes)
            } else {
                Ok(Collation::default())
            }
        };
        let scale = |r: &mut Reader<'_>| match r.u8("TYPE_INFO scale")? {
            s if s <= MAX_TIME_SCALE => Ok(s),
            _ => Err(bad("TIME scale")),
        };
        let lob_len = |r: &mut Reader<'_>| r.u32_le(LEN);
        Ok(match id {
            0x1F => Self::Null,
            0x30 => Self::Int1,
            0x32 => Self::Bit,
            0x34 => Self::Int2,
            0x38 => Self::Int4,
            0x7F => Self::Int8,
            0x3B => Self::Flt4,
            0x3E => Self::Flt8,
            0x3C => Self::Money,
            0x7A => Self::Money4,
            0x3D => Self::DateTime,
            0x3A => Self::DateTime4,
            0x26 => match r.u8(LEN)? {
                n @ (1 | 2 | 4 | 8) => Self::IntN(n),
                _ => return Err(bad("INTN length")),
            },
            0x68 => match r.u8(LEN)? {
                1 => Self::BitN,
                _ => return Err(bad("BITN length")),
            },
            0x6D => Self::FltN(four_or_eight(r.u8(LEN)?, "FLTN length")?),
            0x6E => Self::MoneyN(four_or_eight(r.u8(LEN)?, "MONEYN length")?),
            0x6F => Self::DateTimeN(four_or_eight(r.u8(LEN)?, "DATETIMN length")?),
            // mssql-jdbc declares a NULL UNIQUEIDENTIFIER parameter with maximum length 0
            // (and sends length 0), which SQL Server accepts.
            0x24 => match r.u8(LEN)? {
                0 | 16 => Self::Guid,
                _ => return Err(bad("GUID length")),
            },
            0x6A | 0x6C => {
                // The maximum length byte is implied by the precision; drivers differ in what
                // they send (17 is common), so it is read and not trusted.
                r.u8(LEN)?;
                let precision = r.u8("DECIMAL precision")?;
                let scale = r.u8("DECIMAL scale")?;
                if !(1..=MAX_PRECISION).contains(&precision) || scale > precision {
                    return Err(bad("DECIMAL precision or scale"));
                }
                if id == 0x6A {
                    Self::Decimal { precision, scale }
                } else {
                    Self::Numeric { precision, scale }
                }
            }
            0x28 => Self::Date,
            0x29 => Self::Time { scale: scale(r)? },
            0x2A => Self::DateTime2 { scale: scale(r)? },
            0x2B => Self::DateTimeOffset { scale: scale(r)? },
            0xA7 => Self::BigVarChar { max_len: r.u16_le(LEN)?, collation: collation(r)? },
            0xE7 => Self::NVarChar { max_len: r.u16_le(LEN)?, collation: collation(r)? },
            0xA5 => Self::BigVarBinary { max_len: r.u16_le(LEN)? },
            0xAF => Self::BigChar { len: fixed_len(r)?, collation: collation(r)? },
            0xEF => Self::NChar { len: fixed_len(r)?, collation: collation(r)? },
            0xAD => Self::BigBinary { len: fixed_len(r)? },
            0x23 => Self::Text { max_len: lob_len(r)?, collation: collation(r)? },
            0x63 => Self::NText { max_len: lob_len(r)?, collation: collation(r)? },
            0x22 => Self::Image { max_len: lob_len(r)? },
            0x62 => Self::Variant { max_len: lob_len(r)? },
            0xF1 => {
                // XML_INFO: SCHEMA_PRESENT, then the schema collection's database and owning
                // schema (B_VARCHAR) and name (US_VARCHAR) when present.
                if r.u8("XML_INFO SCHEMA_PRESENT")? != 0 {
                    for _ in 0..2 {
                        let chars = r.u8("XML_INFO name length")?;
                        r.take(2 * usize::from(chars), "XML_INFO name")?;
                    }
                    let chars = r.u16_le("XML_INFO collection length")?;
                    r.take(2 * usize::from(chars), "XML_INFO collection")?;
                }
                Self::Xml
            }
            0xF3 => Self::Tvp,
            other => return Err(TdsError::UnsupportedType(other)),
        })
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        self.encode_for(out, TdsVersion::V7_4)
    }

    /// The TYPE_INFO for a client speaking `version` (before 7.1 without collations). The
    /// type itself must be one that version has: the server maps result types first.
    pub(crate) fn encode_for(&self, out: &mut Vec<u8>, version: TdsVersion) {
        let collation = |out: &mut Vec<u8>, c: Collation| {
            if version.has_collations() {
                out.extend_from_slice(&c.to_bytes());
            }
        };
        out.push(self.type_id());
        match *self {
            Self::IntN(n) | Self::FltN(n) | Self::MoneyN(n) | Self::DateTimeN(n) => out.push(n),
            Self::BitN => out.push(1),
            Self::Guid => out.push(16),
            Self::Decimal { precision, scale } | Self::Numeric { precision, scale } => {
                out.extend_from_slice(&[decimal_len(precision), precision, scale]);
            }
            Self::Time { scale } | Self::DateTime2 { scale } | Self::DateTimeOffset { scale } => {
                out.push(scale)
            }
            Self::BigVarChar { max_len: len, collation: c }
            | Self::NVarChar { max_len: len, collation: c }
            | Self::BigChar { len, collation: c }
            | Self::NChar { len, collation: c } => {
                out.extend_from_slice(&len.to_le_bytes());
                collation(out, c);
            }
            Self::BigVarBinary { max_len: len } | Self::BigBinary { len } => {
                out.extend_from_slice(&len.to_le_bytes())
            }
            Self::Text { max_len, collation: c } | Self::NText { max_len, collation: c } => {
                out.extend_from_slice(&max_len.to_le_bytes());
                collation(out, c);
            }
            Self::Image { max_len } | Self::Variant { max_len } => {
                out.extend_from_slice(&max_len.to_le_bytes())
            }
            // SCHEMA_PRESENT = 0: untyped.
            Self::Xml => out.push(0),
            Self::Null
            | Self::Int1
            | Self::Bit
            | Self::Int2
            | Self::Int4
            | Self::Int8
            | Self::Flt4
            | Self::Flt8
            | Self::Money
            | Self::Money4
            | Self::DateTime
            | Self::DateTime4
            | Self::Date
            | Self::Tvp => {}
        }
    }
}

fn four_or_eight(n: u8, what: &'static str) -> Result<u8, TdsError> {
    match n {
        4 | 8 => Ok(n),
        _ => Err(TdsError::Malformed { what }),
    }
}

/// The length of a fixed-length character or binary type: 0xFFFF (MAX) is not allowed.
fn fixed_len(r: &mut Reader<'_>) -> Result<u16, TdsError> {
    match r.u16_le("TYPE_INFO length")? {
        MAX_LEN_PLP => Err(TdsError::Malformed { what: "CHAR/BINARY length" }),
        len => Ok(len),
    }
}

/// The bytes of a DECIMALN value of the given precision, sign byte included (2.2.5.5).
pub(crate) fn decimal_len(precision: u8) -> u8 {
    match precision {
        0..=9 => 5,
        10..=19 => 9,
        20..=28 => 13,
        _ => 17,
    }
}

/// The bytes of a TIME value of the given scale (2.2.5.5).
pub(crate) fn time_len(scale: u8) -> usize {
    match scale {
        0..=2 => 3,
        3..=4 => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_collation_bytes() {
        let c = Collation::default();
        assert_eq!(c.to_bytes(), [0x09, 0x04, 0xD0, 0x00, 0x34]);
        assert_eq!(c.lcid(), 0x0409);
        assert_eq!(
            c.flags(),
            Collation::IGNORE_CASE | Collation::IGNORE_KANA | Collation::IGNORE_WIDTH
        );
        assert_eq!(c.version(), 0);
        assert_eq!(Collation::from_bytes(c.to_bytes()), c);
    }

    #[test]
    fn invalid_type_infos_are_rejected() {
        for bad in [
            &[0x26, 3][..],
            &[0x68, 2],
            &[0x6D, 2],
            &[0x24, 15],
            &[0x6A, 17, 0, 0],
            &[0x6A, 17, 39, 0],
            &[0x6A, 17, 5, 6],
            &[0x29, 8],
            &[0xAF, 0xFF, 0xFF, 9, 4, 0xD0, 0, 0x34],
        ] {
            assert!(
                matches!(TypeInfo::decode(&mut Reader::new(bad)), Err(TdsError::Malformed { .. })),
                "{bad:02X?}"
            );
        }
        for unsupported in [0xF0u8, 0x27, 0x2F] {
            assert_eq!(
                TypeInfo::decode(&mut Reader::new(&[unsupported, 0, 0])),
                Err(TdsError::UnsupportedType(unsupported))
            );
        }
    }
}
