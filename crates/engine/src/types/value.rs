//! [`Value`], a typed SQL value, and [`compare`], SQL Server's comparison of two values.
//!
//! A value knows its kind but not its column's parameters: a `decimal(10,2)` value is a
//! [`Decimal`] at scale 2, a `varchar(20)` value a [`Value::Str`]. Character strings come in
//! two kinds, [`Value::Str`] (CHAR/VARCHAR) and [`Value::NStr`] (NCHAR/NVARCHAR), because the
//! TDS layer must know whether a value is national; both are UTF-8 `String`s.
//!
//! # Comparison
//!
//! [`compare`] follows SQL Server's implicit conversions within a family and refuses across
//! families (the SQL layer converts, or raises SQL Server's error, first):
//!
//! * numbers (integers, BIT, DECIMAL, MONEY) compare exactly; when a FLOAT or REAL is involved
//!   both sides are compared as `f64`, since SQL Server converts to the float type;
//! * character strings compare under SQL_Latin1_General_CP1_CI_AS, approximated: trailing
//!   spaces are ignored and every character is lower-cased (`char::to_lowercase`), so
//!   `'abc' = 'ABC  '` and `'a' < 'B'`, but `'e' <> 'é'` (accent-sensitive). Beyond that the
//!   order is by code point, not by SQL Server's sort weights (punctuation and accented letters
//!   sort differently from SQL Server);
//! * binary strings compare byte-wise, length included (`0x01 < 0x0100`);
//! * DATE, DATETIME and DATETIME2 compare as moments (a DATE is its midnight); TIME compares
//!   with TIME only;
//! * UNIQUEIDENTIFIERs compare in SQL Server's order ([`Guid::cmp_sql`]).
//!
//! NULL compared with anything is unknown: `None`.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use super::decimal::{cmp_scaled, pow10, Decimal};
use super::guid::Guid;
use super::temporal::{Date, DateTime, DateTime2, DateTimeOffset, Time, DATETIME_EPOCH_DAYS};

/// Why text did not convert to a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// Not in any accepted form (SQL Server's Msg 241 / 8114 "conversion failed").
    Invalid,
    /// Well formed, but outside the type's range: a 13th month, a 39-digit number, a DATETIME
    /// before 1753 (Msg 242 "out-of-range value", or 8115 "arithmetic overflow").
    OutOfRange,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Invalid => f.write_str("conversion failed"),
            ParseError::OutOfRange => f.write_str("value out of range"),
        }
    }
}

impl std::error::Error for ParseError {}

/// An XML value: the text of a document or fragment, and which of its nodes the value stands
/// for. A value made from text or stored in a column is the whole text (node 0, the document
/// node); the rows `nodes()` returns each stand for one node of the same text, which they share
/// (a shredded document is held once, however many rows point into it). Node numbers are the
/// SQL layer's: the order in which its parser meets the nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Xml {
    text: Arc<str>,
    node: u32,
}

impl Xml {
    /// A whole document or fragment.
    pub fn new(text: impl Into<Arc<str>>) -> Xml {
        Xml { text: text.into(), node: 0 }
    }

    /// Node `node` of the document `text`.
    pub fn node_of(text: Arc<str>, node: u32) -> Xml {
        Xml { text, node }
    }

    /// The document's text (the whole of it, also for a value that stands for one node).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The shared text, to point other values into it.
    pub fn shared_text(&self) -> &Arc<str> {
        &self.text
    }

    /// The node the value stands for: 0 for the document itself.
    pub fn node(&self) -> u32 {
        self.node
    }
}

/// A typed SQL value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// NULL, of any type.
    Null,
    /// TINYINT.
    TinyInt(u8),
    /// SMALLINT.
    SmallInt(i16),
    /// INT.
    Int(i32),
    /// BIGINT.
    BigInt(i64),
    /// BIT.
    Bit(bool),
    /// DECIMAL/NUMERIC.
    Decimal(Decimal),
    /// FLOAT.
    Float(f64),
    /// REAL.
    Real(f32),
    /// MONEY, in ten-thousandths.
    Money(i64),
    /// A CHAR or VARCHAR string.
    Str(String),
    /// An NCHAR or NVARCHAR (national, Unicode) string.
    NStr(String),
    /// A BINARY or VARBINARY string.
    Binary(Vec<u8>),
    /// DATE.
    Date(Date),
    /// TIME.
    Time(Time),
    /// DATETIME.
    DateTime(DateTime),
    /// DATETIME2.
    DateTime2(DateTime2),
    /// DATETIMEOFFSET.
    DateTimeOffset(DateTimeOffset),
    /// UNIQUEIDENTIFIER.
    Guid(Guid),
    /// XML: a well-formed document or fragment (checked where the value is made). It
    /// compares with nothing: [`compare`] gives `None`, and the SQL layer refuses the
    /// comparison first (SQL Server's Msg 305).
    Xml(Xml),
}

impl Value {
    /// Whether the value is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether the value is an exact number: an integer, BIT, DECIMAL or MONEY.
    pub fn is_exact_numeric(&self) -> bool {
        matches!(
            self,
            Value::TinyInt(_)
                | Value::SmallInt(_)
                | Value::Int(_)
                | Value::BigInt(_)
                | Value::Bit(_)
                | Value::Decimal(_)
                | Value::Money(_)
        )
    }

    /// Whether the value is a number, exact or approximate (FLOAT, REAL).
    pub fn is_numeric(&self) -> bool {
        self.is_exact_numeric() || matches!(self, Value::Float(_) | Value::Real(_))
    }

    /// What kind of value this is, for messages (`int`, `nvarchar`...).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::TinyInt(_) => "tinyint",
            Value::SmallInt(_) => "smallint",
            Value::Int(_) => "int",
            Value::BigInt(_) => "bigint",
            Value::Bit(_) => "bit",
            Value::Decimal(_) => "decimal",
            Value::Float(_) => "float",
            Value::Real(_) => "real",
            Value::Money(_) => "money",
            Value::Str(_) => "varchar",
            Value::NStr(_) => "nvarchar",
            Value::Binary(_) => "varbinary",
            Value::Date(_) => "date",
            Value::Time(_) => "time",
            Value::DateTime(_) => "datetime",
            Value::DateTime2(_) => "datetime2",
            Value::DateTimeOffset(_) => "datetimeoffset",
            Value::Guid(_) => "uniqueidentifier",
            Value::Xml(_) => "xml",
        }
    }
}

impl fmt::Display for Value {
    /// SQL Server's default text forms: `NULL`, `1` for a true BIT, `0x0A1B` for binary,
    /// four decimals for MONEY, seven fractional digits for TIME and DATETIME2 (use
    /// [`Time::display`] / [`DateTime2::display`] for a column's scale).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::TinyInt(v) => write!(f, "{v}"),
            Value::SmallInt(v) => write!(f, "{v}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::BigInt(v) => write!(f, "{v}"),
            Value::Bit(v) => write!(f, "{}", u8::from(*v)),
            Value::Decimal(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Real(v) => write!(f, "{v}"),
            Value::Money(v) => {
                let sign = if *v < 0 { "-" } else { "" };
                let magnitude = v.unsigned_abs();
                write!(f, "{sign}{}.{:04}", magnitude / 10_000, magnitude % 10_000)
            }
            Value::Str(s) | Value::NStr(s) => f.write_str(s),
            Value::Xml(x) => f.write_str(x.text()),
            Value::Binary(bytes) => {
                f.write_str("0x")?;
                bytes.iter().try_for_each(|b| write!(f, "{b:02X}"))
            }
            Value::Date(v) => write!(f, "{v}"),
            Value::Time(v) => write!(f, "{v}"),
            Value::DateTime(v) => write!(f, "{v}"),
            Value::DateTime2(v) => write!(f, "{v}"),
            Value::DateTimeOffset(v) => write!(f, "{v}"),
            Value::Guid(v) => write!(f, "{v}"),
        }
    }
}

/// A number as compared: exact (`mantissa / 10^scale`) or approximate.
enum Number {
    Exact(i128, u8),
    Approx(f64),
}

fn number(v: &Value) -> Option<Number> {
    Some(match v {
        Value::TinyInt(x) => Number::Exact(i128::from(*x), 0),
        Value::SmallInt(x) => Number::Exact(i128::from(*x), 0),
        Value::Int(x) => Number::Exact(i128::from(*x), 0),
        Value::BigInt(x) => Number::Exact(i128::from(*x), 0),
        Value::Bit(x) => Number::Exact(i128::from(*x), 0),
        Value::Decimal(d) => Number::Exact(d.mantissa(), d.scale()),
        Value::Money(x) => Number::Exact(i128::from(*x), 4),
        Value::Float(x) => Number::Approx(*x),
        Value::Real(x) => Number::Approx(f64::from(*x)),
        _ => return None,
    })
}

fn approx(n: Number) -> f64 {
    match n {
        Number::Exact(m, s) => m as f64 / pow10(s) as f64,
        Number::Approx(x) => x,
    }
}

/// A moment as compared: days since 0001-01-01, then thirds of 100 ns since midnight (the
/// unit in which both DATETIME's 1/300 s and DATETIME2's 100 ns are whole numbers).
fn moment(v: &Value) -> Option<(u32, u64)> {
    match v {
        Value::Date(d) => Some((d.days(), 0)),
        Value::DateTime2(dt) => Some((dt.date.days(), dt.time.ticks() * 3)),
        // Compared as its UTC moment, which a DATETIME2 or DATETIME is taken to be (SQL Server
        // converts them to DATETIMEOFFSET at +00:00).
        Value::DateTimeOffset(d) => Some((d.utc().date.days(), d.utc().time.ticks() * 3)),
        Value::DateTime(dt) => {
            // Within 0..=MAX_DATE_DAYS by DateTime's invariant.
            let days = (i64::from(dt.days()) + i64::from(DATETIME_EPOCH_DAYS)) as u32;
            Some((days, u64::from(dt.ticks()) * 100_000))
        }
        _ => None,
    }
}

/// Compares character strings under the approximated SQL_Latin1_General_CP1_CI_AS: trailing
/// spaces ignored, characters lower-cased. The key encoding folds text the same way.
pub(crate) fn cmp_text(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.trim_end_matches(' '), b.trim_end_matches(' '));
    if a.is_ascii() && b.is_ascii() {
        // The common case: ASCII lower-cases byte for byte, as `char::to_lowercase` would.
        return a
            .bytes()
            .map(|x| x.to_ascii_lowercase())
            .cmp(b.bytes().map(|y| y.to_ascii_lowercase()));
    }
    fold(a).cmp(fold(b))
}

/// The characters text is compared by: trailing spaces dropped, each character lower-cased.
pub(crate) fn fold(s: &str) -> impl Iterator<Item = char> + '_ {
    s.trim_end_matches(' ').chars().flat_map(char::to_lowercase)
}

/// SQL Server's comparison of two values of the same family (see the module documentation);
/// `None` if either is NULL, the families differ, or a float is NaN.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Str(x) | Value::NStr(x), Value::Str(y) | Value::NStr(y)) => Some(cmp_text(x, y)),
        (Value::Binary(x), Value::Binary(y)) => Some(x.cmp(y)),
        (Value::Time(x), Value::Time(y)) => Some(x.cmp(y)),
        (Value::Guid(x), Value::Guid(y)) => Some(x.cmp_sql(y)),
        // What `moment` gives two dates, without its match: a date filter's every row.
        (Value::Date(x), Value::Date(y)) => Some(x.days().cmp(&y.days())),
        _ => {
            if let (Some(x), Some(y)) = (number(a), number(b)) {
                return match (x, y) {
                    (Number::Exact(m1, s1), Number::Exact(m2, s2)) => {
                        Some(cmp_scaled(m1, s1, m2, s2))
                    }
                    (x, y) => approx(x).partial_cmp(&approx(y)),
                };
            }
            Some(moment(a)?.cmp(&moment(b)?))
        }
    }
}
