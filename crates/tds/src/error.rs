//! The one error type of the codec.
//!
//! Every decoder in this crate returns `Result<_, TdsError>` and never panics, whatever the
//! input; every encoder returns one when the value cannot be represented on the wire (a string
//! longer than its length prefix allows, a value that does not match its declared type). The
//! variants say *what* went wrong and name the field involved with a static string, so that an
//! error costs no allocation and can be logged as is. A connection that sees a decoding error
//! has lost framing or met a peer that does not speak the protocol; the server's answer is to
//! close it, so no error carries enough context to resynchronise, by design.

use std::fmt;

/// Everything that can go wrong while decoding or encoding TDS.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TdsError {
    /// The input ended before the named field was complete.
    Truncated {
        /// The field being read.
        what: &'static str,
    },
    /// The named field holds a value [MS-TDS] does not allow there.
    Malformed {
        /// The offending field.
        what: &'static str,
    },
    /// Bytes were left over after a structure that must fill its container.
    TrailingBytes {
        /// The structure that should have ended.
        what: &'static str,
        /// How many bytes were left.
        count: usize,
    },
    /// A packet header names a packet type that is not in [MS-TDS] 2.2.3.1.1.
    UnknownPacketType(u8),
    /// A token stream holds a token type this codec does not know.
    UnknownToken(u8),
    /// A TYPE_INFO names a data type this codec does not implement (see `docs/format/tds.md`).
    UnsupportedType(u8),
    /// The peer used a protocol feature this codec deliberately does not implement.
    Unsupported {
        /// The feature.
        what: &'static str,
    },
    /// A packet's length field is smaller than the 8-byte header it includes.
    PacketTooSmall {
        /// The length field.
        len: usize,
    },
    /// A packet is larger than the negotiated packet size.
    PacketTooLarge {
        /// The packet's length field.
        len: usize,
        /// The negotiated packet size.
        max: usize,
    },
    /// A message (the payloads of its packets together) exceeds the configured maximum.
    MessageTooLarge {
        /// The configured maximum message size.
        max: usize,
    },
    /// A packet size outside 512..=32767 was requested.
    InvalidPacketSize(usize),
    /// A UTF-16 string holds an unpaired surrogate or has an odd number of bytes.
    InvalidUtf16,
    /// An encoder was given a string or byte string too long for its length prefix or for the
    /// declared maximum length of its type.
    TooLong {
        /// The field being written.
        what: &'static str,
        /// Its length (in the field's unit: bytes, or UTF-16 code units for strings).
        len: usize,
        /// The largest length the field can hold.
        max: usize,
    },
    /// An encoder was given a value whose kind does not fit the declared TYPE_INFO (including
    /// NULL for a fixed-length type, which has no NULL representation in a ROW).
    TypeMismatch {
        /// The wire type's name.
        ty: &'static str,
        /// The value's kind.
        value: &'static str,
    },
    /// A value is outside the range its wire type can represent, or would lose digits when
    /// converted to the declared scale.
    ValueOutOfRange {
        /// The field or type involved.
        what: &'static str,
    },
    /// A ROW was given a different number of values than its COLMETADATA has columns.
    ColumnCount {
        /// Columns in the metadata.
        expected: usize,
        /// Values supplied or decoded.
        found: usize,
    },
}

impl fmt::Display for TdsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { what } => write!(f, "TDS input truncated while reading {what}"),
            Self::Malformed { what } => write!(f, "malformed TDS {what}"),
            Self::TrailingBytes { what, count } => {
                write!(f, "{count} unexpected trailing bytes after TDS {what}")
            }
            Self::UnknownPacketType(t) => write!(f, "unknown TDS packet type 0x{t:02X}"),
            Self::UnknownToken(t) => write!(f, "unknown TDS token 0x{t:02X}"),
            Self::UnsupportedType(t) => write!(f, "unsupported TDS data type 0x{t:02X}"),
            Self::Unsupported { what } => write!(f, "unsupported TDS feature: {what}"),
            Self::PacketTooSmall { len } => {
                write!(f, "TDS packet length {len} is smaller than its 8-byte header")
            }
            Self::PacketTooLarge { len, max } => {
                write!(f, "TDS packet of {len} bytes exceeds the packet size {max}")
            }
            Self::MessageTooLarge { max } => {
                write!(f, "TDS message exceeds the maximum message size of {max} bytes")
            }
            Self::InvalidPacketSize(n) => {
                write!(f, "TDS packet size {n} is outside the allowed range 512..=32767")
            }
            Self::InvalidUtf16 => write!(f, "invalid UTF-16 string in TDS data"),
            Self::TooLong { what, len, max } => {
                write!(f, "TDS {what} of length {len} exceeds its maximum of {max}")
            }
            Self::TypeMismatch { ty, value } => {
                write!(f, "cannot encode a {value} value as TDS type {ty}")
            }
            Self::ValueOutOfRange { what } => write!(f, "value out of range for TDS {what}"),
            Self::ColumnCount { expected, found } => {
                write!(f, "TDS row has {found} values but the metadata has {expected} columns")
            }
        }
    }
}

impl std::error::Error for TdsError {}
