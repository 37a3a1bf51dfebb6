//! UNIQUEIDENTIFIER values.
//!
//! A GUID is written `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, but SQL Server (like Windows'
//! `GUID` struct and the TDS wire) stores the first three groups as little-endian integers:
//! the text `00112233-4455-6677-8899-AABBCCDDEEFF` is the bytes
//! `33 22 11 00 55 44 77 66 88 99 AA BB CC DD EE FF`. [`Guid`] holds that storage order, so
//! rows and the wire agree without conversion.
//!
//! SQL Server orders uniqueidentifiers by the stored bytes taken in the order 10..16, 8..10,
//! 6..8, 4..6, 0..4 (the last group is the most significant; this is `SqlGuid`'s comparison
//! in .NET), which is what [`Guid::cmp_sql`] and the key encoding use.

use std::cmp::Ordering;
use std::fmt;

use super::value::ParseError;

/// The stored byte indexes in SQL Server's comparison order, most significant first.
const SQL_ORDER: [usize; 16] = [10, 11, 12, 13, 14, 15, 8, 9, 6, 7, 4, 5, 0, 1, 2, 3];

/// Where each byte of the text form (in writing order) is stored: the first three groups are
/// byte-swapped. The permutation is its own inverse.
const TEXT_TO_STORED: [usize; 16] = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];

/// A UNIQUEIDENTIFIER, in SQL Server's (and TDS's) byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Guid(pub [u8; 16]);

impl Guid {
    /// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, hex digits in either case, optionally in
    /// braces and surrounded by whitespace.
    pub fn parse(text: &str) -> Result<Guid, ParseError> {
        let text = text.trim();
        let text = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')).unwrap_or(text);
        let bytes = text.as_bytes();
        if bytes.len() != 36 || [8, 13, 18, 23].iter().any(|&i| bytes[i] != b'-') {
            return Err(ParseError::Invalid);
        }
        let mut nibbles = bytes.iter().filter(|b| **b != b'-').map(|b| (*b as char).to_digit(16));
        let mut stored = [0u8; 16];
        for &at in &TEXT_TO_STORED {
            let (Some(Some(hi)), Some(Some(lo))) = (nibbles.next(), nibbles.next()) else {
                return Err(ParseError::Invalid);
            };
            // Two hex digits make a byte.
            stored[at] = (hi * 16 + lo) as u8;
        }
        Ok(Guid(stored))
    }

    /// SQL Server's uniqueidentifier order.
    pub fn cmp_sql(&self, other: &Guid) -> Ordering {
        SQL_ORDER.iter().map(|&i| self.0[i]).cmp(SQL_ORDER.iter().map(|&i| other.0[i]))
    }

    /// The bytes in SQL Server's comparison order: compared byte-wise, they order as
    /// [`Guid::cmp_sql`].
    pub(crate) fn sql_order_bytes(&self) -> [u8; 16] {
        SQL_ORDER.map(|i| self.0[i])
    }

    /// The GUID whose [`Guid::sql_order_bytes`] are `ordered`.
    pub fn from_sql_order_bytes(ordered: [u8; 16]) -> Guid {
        let mut stored = [0u8; 16];
        for (&at, b) in SQL_ORDER.iter().zip(ordered) {
            stored[at] = b;
        }
        Guid(stored)
    }
}

impl fmt::Display for Guid {
    /// Upper case, as SQL Server shows them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, &at) in TEXT_TO_STORED.iter().enumerate() {
            if matches!(n, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{:02X}", self.0[at])?;
        }
        Ok(())
    }
}
