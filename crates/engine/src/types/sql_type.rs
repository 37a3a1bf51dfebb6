//! Column types: what SQL Server calls them, how much room they take in a row, and the 4-byte
//! descriptor the catalog stores for them.
//!
//! A [`SqlType`] carries exactly the parameters its SQL Server type has (precision and scale,
//! a length or MAX, a fractional-second scale), so `decimal(10,2)` and `decimal(10,3)` are
//! different types while FLOAT(24) and REAL are the same one. NUMERIC is DECIMAL (SQL Server
//! treats them as synonyms with identical behaviour); FLOAT(1..24) is REAL and FLOAT(25..53) is
//! FLOAT, as in SQL Server.
//!
//! # Storage sizes
//!
//! The fixed-length types have the sizes SQL Server gives them, except DECIMAL, whose
//! mantissa is stored in two's complement instead of a sign byte plus magnitude (4, 8, 12 or
//! 16 bytes for precisions up to 9, 18, 28, 38 instead of 5, 9, 13, 17), and BIT, which takes a
//! whole byte (SQL Server packs up to eight BIT columns into one). NCHAR(n) is *variable*
//! length here: Walden stores text as UTF-8, so n UTF-16 code units take between n and 3n
//! bytes. CHAR(n) and BINARY(n) stay fixed at n bytes, since their length is counted in bytes.
//!
//! # Invariant
//!
//! A `SqlType` built by [`SqlType::parse`], [`SqlType::decode`], [`SqlType::decimal`] or
//! [`SqlType::float`] is [valid](SqlType::is_valid). The enum's fields are public for
//! matching, so a caller can build an invalid one by hand; the row and key encoders are still
//! safe with it (sizes are computed, never trusted to be small), but the catalog must store only
//! valid types.

use std::fmt;

/// The largest precision of DECIMAL/NUMERIC.
pub const MAX_PRECISION: u8 = 38;

/// The largest fractional-second scale of TIME and DATETIME2.
pub const MAX_TIME_SCALE: u8 = 7;

/// The largest declared length of CHAR, VARCHAR, BINARY and VARBINARY (in bytes).
pub const MAX_BYTE_LEN: u16 = 8000;

/// The largest declared length of NCHAR and NVARCHAR (in UTF-16 code units).
pub const MAX_NCHAR_LEN: u16 = 4000;

/// The largest value of a `(MAX)` type, in bytes: 2^31 - 1, as in SQL Server.
pub const MAX_LOB_LEN: usize = i32::MAX as usize;

/// The declared length of a variable-length type: a number, or `MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Len {
    /// `(n)`: bytes for VARCHAR/VARBINARY, UTF-16 code units for NVARCHAR.
    N(u16),
    /// `(MAX)`: up to [`MAX_LOB_LEN`] bytes.
    Max,
}

/// A column type supported by Walden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// TINYINT: 0..=255.
    TinyInt,
    /// SMALLINT.
    SmallInt,
    /// INT.
    Int,
    /// BIGINT.
    BigInt,
    /// BIT.
    Bit,
    /// DECIMAL(p,s) / NUMERIC(p,s): `1 <= precision <= 38`, `scale <= precision`.
    Decimal {
        /// Total digits.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// FLOAT / FLOAT(25..53): an IEEE double.
    Float,
    /// REAL / FLOAT(1..24): an IEEE single.
    Real,
    /// MONEY: a 64-bit integer of ten-thousandths.
    Money,
    /// CHAR(n), n in 1..=8000 bytes, padded with spaces.
    Char(u16),
    /// VARCHAR(n | MAX).
    VarChar(Len),
    /// NCHAR(n), n in 1..=4000 UTF-16 code units, padded with spaces.
    NChar(u16),
    /// NVARCHAR(n | MAX).
    NVarChar(Len),
    /// BINARY(n), n in 1..=8000, padded with zero bytes.
    Binary(u16),
    /// VARBINARY(n | MAX).
    VarBinary(Len),
    /// DATE: 0001-01-01..9999-12-31.
    Date,
    /// TIME(s), s in 0..=7 fractional-second digits.
    Time(u8),
    /// DATETIME: 1753-01-01..9999-12-31, in 1/300 s.
    DateTime,
    /// DATETIME2(s), s in 0..=7.
    DateTime2(u8),
    /// DATETIMEOFFSET(s), s in 0..=7: a DATETIME2(s) in UTC and an offset in minutes.
    DateTimeOffset(u8),
    /// UNIQUEIDENTIFIER.
    UniqueIdentifier,
    /// SQL_VARIANT: a value of any other type but the MAX ones, which keeps its own type.
    Variant,
    /// XML (untyped: no schema collection): a well-formed document or fragment, stored as its
    /// text like NVARCHAR(MAX). Not comparable, so never part of a key.
    Xml,
}

// SQL Server's `system_type_id`s (sys.types), used as the first byte of a type descriptor so
// that the catalog views can report them as they are.
const ID_UNIQUEIDENTIFIER: u8 = 36;
const ID_DATE: u8 = 40;
const ID_TIME: u8 = 41;
const ID_DATETIME2: u8 = 42;
const ID_DATETIMEOFFSET: u8 = 43;
const ID_TINYINT: u8 = 48;
const ID_SMALLINT: u8 = 52;
const ID_INT: u8 = 56;
const ID_REAL: u8 = 59;
const ID_MONEY: u8 = 60;
const ID_DATETIME: u8 = 61;
const ID_FLOAT: u8 = 62;
const ID_BIT: u8 = 104;
const ID_DECIMAL: u8 = 106;
const ID_BIGINT: u8 = 127;
const ID_VARBINARY: u8 = 165;
const ID_VARCHAR: u8 = 167;
const ID_BINARY: u8 = 173;
const ID_CHAR: u8 = 175;
const ID_NVARCHAR: u8 = 231;
const ID_NCHAR: u8 = 239;
const ID_VARIANT: u8 = 98;
const ID_XML: u8 = 241;

/// The most bytes a SQL_VARIANT column stores: its base type's descriptor and a value of at
/// most 8,000 bytes, as SQL Server's 8,016 holds its own header and 8,000 bytes.
pub const MAX_VARIANT_LEN: usize = 4 + 8000;

/// The length field of a descriptor that means `(MAX)` (SQL Server's `max_length` of -1).
const DESCRIPTOR_MAX: u16 = 0xFFFF;

impl SqlType {
    /// DECIMAL without precision and scale: DECIMAL(18,0).
    pub const DEFAULT_DECIMAL: SqlType = SqlType::Decimal { precision: 18, scale: 0 };

    /// DECIMAL(precision, scale), if valid.
    pub fn decimal(precision: u8, scale: u8) -> Option<SqlType> {
        Some(SqlType::Decimal { precision, scale }).filter(SqlType::is_valid)
    }

    /// FLOAT(n): REAL for n in 1..=24, FLOAT for 25..=53.
    pub fn float(n: u8) -> Option<SqlType> {
        match n {
            1..=24 => Some(SqlType::Real),
            25..=53 => Some(SqlType::Float),
            _ => None,
        }
    }

    /// Whether the parameters are in SQL Server's ranges.
    pub fn is_valid(&self) -> bool {
        let var_ok = |len: Len, max: u16| match len {
            Len::N(n) => (1..=max).contains(&n),
            Len::Max => true,
        };
        match *self {
            SqlType::Decimal { precision, scale } => {
                (1..=MAX_PRECISION).contains(&precision) && scale <= precision
            }
            SqlType::Char(n) | SqlType::Binary(n) => (1..=MAX_BYTE_LEN).contains(&n),
            SqlType::NChar(n) => (1..=MAX_NCHAR_LEN).contains(&n),
            SqlType::VarChar(len) | SqlType::VarBinary(len) => var_ok(len, MAX_BYTE_LEN),
            SqlType::NVarChar(len) => var_ok(len, MAX_NCHAR_LEN),
            SqlType::Time(s) | SqlType::DateTime2(s) | SqlType::DateTimeOffset(s) => {
                s <= MAX_TIME_SCALE
            }
            _ => true,
        }
    }

    /// The name as SQL Server renders it (`int`, `decimal(10,2)`, `varchar(max)`,
    /// `nvarchar(50)`, `datetime2(7)`).
    pub fn name(&self) -> String {
        let len = |len: Len| match len {
            Len::N(n) => n.to_string(),
            Len::Max => "max".to_string(),
        };
        match *self {
            SqlType::TinyInt => "tinyint".to_string(),
            SqlType::SmallInt => "smallint".to_string(),
            SqlType::Int => "int".to_string(),
            SqlType::BigInt => "bigint".to_string(),
            SqlType::Bit => "bit".to_string(),
            SqlType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            SqlType::Float => "float".to_string(),
            SqlType::Real => "real".to_string(),
            SqlType::Money => "money".to_string(),
            SqlType::Char(n) => format!("char({n})"),
            SqlType::VarChar(l) => format!("varchar({})", len(l)),
            SqlType::NChar(n) => format!("nchar({n})"),
            SqlType::NVarChar(l) => format!("nvarchar({})", len(l)),
            SqlType::Binary(n) => format!("binary({n})"),
            SqlType::VarBinary(l) => format!("varbinary({})", len(l)),
            SqlType::Date => "date".to_string(),
            SqlType::Time(s) => format!("time({s})"),
            SqlType::DateTime => "datetime".to_string(),
            SqlType::DateTime2(s) => format!("datetime2({s})"),
            SqlType::DateTimeOffset(s) => format!("datetimeoffset({s})"),
            SqlType::UniqueIdentifier => "uniqueidentifier".to_string(),
            SqlType::Variant => "sql_variant".to_string(),
            SqlType::Xml => "xml".to_string(),
        }
    }

    /// Parses a type name as written in DDL: `int`, `integer`, `numeric(10, 2)`, `dec`,
    /// `float(24)`, `double precision`, `VARCHAR(MAX)`, `character(5)`, `time`... Omitted
    /// parameters take SQL Server's DDL defaults: length 1, DECIMAL(18,0), scale 0 for
    /// `decimal(p)`, FLOAT(53), scale 7. Returns `None` for unknown names and invalid
    /// parameters.
    pub fn parse(text: &str) -> Option<SqlType> {
        let text = text.trim().to_ascii_lowercase();
        let (name, args) = match text.find('(') {
            Some(open) => {
                let inner = text[open + 1..].trim_end().strip_suffix(')')?;
                (text[..open].trim_end(), inner.split(',').map(str::trim).collect::<Vec<_>>())
            }
            None => (text.as_str(), Vec::new()),
        };
        let number = |s: &str| -> Option<u16> {
            if s.bytes().all(|b| b.is_ascii_digit()) {
                s.parse().ok()
            } else {
                None
            }
        };
        let fixed = |default: u16| -> Option<u16> {
            match args.as_slice() {
                [] => Some(default),
                [n] => number(n),
                _ => None,
            }
        };
        let var = || -> Option<Len> {
            match args.as_slice() {
                [] => Some(Len::N(1)),
                ["max"] => Some(Len::Max),
                [n] => number(n).map(Len::N),
                _ => None,
            }
        };
        let small = |default: u8| -> Option<u8> { u8::try_from(fixed(u16::from(default))?).ok() };
        let bare = |ty: SqlType| args.is_empty().then_some(ty);
        let ty = match name {
            "tinyint" => bare(SqlType::TinyInt),
            "smallint" => bare(SqlType::SmallInt),
            "int" | "integer" => bare(SqlType::Int),
            "bigint" => bare(SqlType::BigInt),
            "bit" => bare(SqlType::Bit),
            "decimal" | "dec" | "numeric" => {
                let precision = |s: &str| u8::try_from(number(s)?).ok();
                match args.as_slice() {
                    [] => Some(SqlType::DEFAULT_DECIMAL),
                    [p] => SqlType::decimal(precision(p)?, 0),
                    [p, s] => SqlType::decimal(precision(p)?, precision(s)?),
                    _ => None,
                }
            }
            "float" => SqlType::float(small(53)?),
            "double precision" => bare(SqlType::Float),
            "real" => bare(SqlType::Real),
            "money" => bare(SqlType::Money),
            "char" | "character" => fixed(1).map(SqlType::Char),
            "varchar" => var().map(SqlType::VarChar),
            "nchar" => fixed(1).map(SqlType::NChar),
            "nvarchar" => var().map(SqlType::NVarChar),
            "binary" => fixed(1).map(SqlType::Binary),
            "varbinary" => var().map(SqlType::VarBinary),
            "date" => bare(SqlType::Date),
            "time" => small(MAX_TIME_SCALE).map(SqlType::Time),
            "datetime" => bare(SqlType::DateTime),
            "datetime2" => small(MAX_TIME_SCALE).map(SqlType::DateTime2),
            "datetimeoffset" => small(MAX_TIME_SCALE).map(SqlType::DateTimeOffset),
            "uniqueidentifier" => bare(SqlType::UniqueIdentifier),
            "sql_variant" => bare(SqlType::Variant),
            "xml" => bare(SqlType::Xml),
            _ => None,
        };
        ty.filter(SqlType::is_valid)
    }

    /// Whether the type's values take a fixed number of bytes in a row (and so live in the
    /// row's fixed part). NCHAR is not: its UTF-8 length varies.
    pub fn is_fixed_len(&self) -> bool {
        self.fixed_len().is_some()
    }

    /// The bytes a value of this type takes in a row's fixed part, or `None` for the types
    /// stored in the variable part.
    pub fn fixed_len(&self) -> Option<usize> {
        Some(match *self {
            SqlType::TinyInt | SqlType::Bit => 1,
            SqlType::SmallInt => 2,
            SqlType::Int | SqlType::Real => 4,
            SqlType::BigInt | SqlType::Float | SqlType::Money | SqlType::DateTime => 8,
            SqlType::Decimal { precision, .. } => decimal_len(precision),
            SqlType::Char(n) | SqlType::Binary(n) => usize::from(n),
            SqlType::Date => 3,
            SqlType::Time(s) => time_len(s),
            SqlType::DateTime2(s) => time_len(s) + 3,
            SqlType::DateTimeOffset(s) => time_len(s) + 5,
            SqlType::UniqueIdentifier => 16,
            SqlType::VarChar(_)
            | SqlType::NChar(_)
            | SqlType::NVarChar(_)
            | SqlType::VarBinary(_)
            | SqlType::Variant
            | SqlType::Xml => return None,
        })
    }

    /// The most bytes a value of this type can take: its fixed length, the declared length of
    /// VARCHAR/VARBINARY, three bytes of UTF-8 per UTF-16 code unit for NCHAR/NVARCHAR (a
    /// code unit is at most three bytes of UTF-8, a surrogate pair two units for four bytes),
    /// and [`MAX_LOB_LEN`] for `(MAX)`.
    pub fn max_len_bytes(&self) -> usize {
        match *self {
            SqlType::VarChar(Len::N(n)) | SqlType::VarBinary(Len::N(n)) => usize::from(n),
            SqlType::NChar(n) | SqlType::NVarChar(Len::N(n)) => 3 * usize::from(n),
            SqlType::VarChar(Len::Max)
            | SqlType::NVarChar(Len::Max)
            | SqlType::VarBinary(Len::Max)
            | SqlType::Xml => MAX_LOB_LEN,
            SqlType::Variant => MAX_VARIANT_LEN,
            fixed => fixed.fixed_len().unwrap_or(0),
        }
    }

    /// Whether values are national (Unicode) character strings: NCHAR and NVARCHAR.
    pub fn is_national(&self) -> bool {
        matches!(self, SqlType::NChar(_) | SqlType::NVarChar(_))
    }

    /// Whether values are numbers: the integer types, DECIMAL, FLOAT, REAL and MONEY.
    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            SqlType::TinyInt
                | SqlType::SmallInt
                | SqlType::Int
                | SqlType::BigInt
                | SqlType::Decimal { .. }
                | SqlType::Float
                | SqlType::Real
                | SqlType::Money
        )
    }

    /// Whether values are character strings (national or not).
    pub fn is_text(&self) -> bool {
        matches!(
            self,
            SqlType::Char(_) | SqlType::VarChar(_) | SqlType::NChar(_) | SqlType::NVarChar(_)
        )
    }

    /// SQL Server's `system_type_id` of the type (sys.types, sys.columns).
    pub fn system_type_id(&self) -> u8 {
        match self {
            SqlType::TinyInt => ID_TINYINT,
            SqlType::SmallInt => ID_SMALLINT,
            SqlType::Int => ID_INT,
            SqlType::BigInt => ID_BIGINT,
            SqlType::Bit => ID_BIT,
            SqlType::Decimal { .. } => ID_DECIMAL,
            SqlType::Float => ID_FLOAT,
            SqlType::Real => ID_REAL,
            SqlType::Money => ID_MONEY,
            SqlType::Char(_) => ID_CHAR,
            SqlType::VarChar(_) => ID_VARCHAR,
            SqlType::NChar(_) => ID_NCHAR,
            SqlType::NVarChar(_) => ID_NVARCHAR,
            SqlType::Binary(_) => ID_BINARY,
            SqlType::VarBinary(_) => ID_VARBINARY,
            SqlType::Date => ID_DATE,
            SqlType::Time(_) => ID_TIME,
            SqlType::DateTime => ID_DATETIME,
            SqlType::DateTime2(_) => ID_DATETIME2,
            SqlType::DateTimeOffset(_) => ID_DATETIMEOFFSET,
            SqlType::UniqueIdentifier => ID_UNIQUEIDENTIFIER,
            SqlType::Variant => ID_VARIANT,
            SqlType::Xml => ID_XML,
        }
    }

    /// The 4-byte type descriptor the catalog stores (`docs/format/row.md`, "Type
    /// descriptors"): the `system_type_id`, then the parameters, unused bytes zero.
    pub fn encode(&self) -> [u8; 4] {
        let id = self.system_type_id();
        let len = |l: Len| match l {
            Len::N(n) => n,
            Len::Max => DESCRIPTOR_MAX,
        };
        let with_len = |n: u16| {
            let [lo, hi] = n.to_le_bytes();
            [id, lo, hi, 0]
        };
        match *self {
            SqlType::Decimal { precision, scale } => [id, precision, scale, 0],
            SqlType::Time(s) | SqlType::DateTime2(s) | SqlType::DateTimeOffset(s) => [id, s, 0, 0],
            SqlType::Char(n) | SqlType::NChar(n) | SqlType::Binary(n) => with_len(n),
            SqlType::VarChar(l) | SqlType::NVarChar(l) | SqlType::VarBinary(l) => with_len(len(l)),
            _ => [id, 0, 0, 0],
        }
    }

    /// The type a descriptor describes; `None` if it describes none (unknown id, parameters
    /// out of range, non-zero unused bytes).
    pub fn decode(bytes: [u8; 4]) -> Option<SqlType> {
        let [id, a, b, reserved] = bytes;
        let n = u16::from_le_bytes([a, b]);
        let len = if n == DESCRIPTOR_MAX { Len::Max } else { Len::N(n) };
        let bare = |ty: SqlType| (a == 0 && b == 0).then_some(ty);
        if reserved != 0 {
            return None;
        }
        let ty = match id {
            ID_TINYINT => bare(SqlType::TinyInt),
            ID_SMALLINT => bare(SqlType::SmallInt),
            ID_INT => bare(SqlType::Int),
            ID_BIGINT => bare(SqlType::BigInt),
            ID_BIT => bare(SqlType::Bit),
            ID_DECIMAL => Some(SqlType::Decimal { precision: a, scale: b }),
            ID_FLOAT => bare(SqlType::Float),
            ID_REAL => bare(SqlType::Real),
            ID_MONEY => bare(SqlType::Money),
            ID_CHAR => Some(SqlType::Char(n)),
            ID_VARCHAR => Some(SqlType::VarChar(len)),
            ID_NCHAR => Some(SqlType::NChar(n)),
            ID_NVARCHAR => Some(SqlType::NVarChar(len)),
            ID_BINARY => Some(SqlType::Binary(n)),
            ID_VARBINARY => Some(SqlType::VarBinary(len)),
            ID_DATE => bare(SqlType::Date),
            ID_TIME => (b == 0).then_some(SqlType::Time(a)),
            ID_DATETIME => bare(SqlType::DateTime),
            ID_DATETIME2 => (b == 0).then_some(SqlType::DateTime2(a)),
            ID_DATETIMEOFFSET => (b == 0).then_some(SqlType::DateTimeOffset(a)),
            ID_UNIQUEIDENTIFIER => bare(SqlType::UniqueIdentifier),
            ID_VARIANT => bare(SqlType::Variant),
            ID_XML => bare(SqlType::Xml),
            _ => None,
        };
        ty.filter(SqlType::is_valid)
    }
}

impl fmt::Display for SqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Bytes of a DECIMAL mantissa of this precision: the smallest two's complement width holding
/// `10^precision - 1` (10^9 < 2^31, 10^18 < 2^63, 10^28 < 2^95, 10^38 < 2^127).
pub(crate) fn decimal_len(precision: u8) -> usize {
    match precision {
        0..=9 => 4,
        10..=18 => 8,
        19..=28 => 12,
        _ => 16,
    }
}

/// Bytes of a TIME(scale) value, as in SQL Server: 10^scale units per second times 86,400
/// seconds fit in 3 bytes up to scale 2, 4 up to scale 4, 5 up to scale 7.
pub(crate) fn time_len(scale: u8) -> usize {
    match scale {
        0..=2 => 3,
        3..=4 => 4,
        _ => 5,
    }
}
