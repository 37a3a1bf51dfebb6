//! Byte-level primitives every decoder and encoder is built on.
//!
//! [`Reader`] is a cursor over a borrowed slice whose every read is bounds-checked and returns
//! [`TdsError::Truncated`] instead of panicking. This is the crate's central robustness
//! invariant: decoders never index a slice directly, so no input can make them panic, and since
//! every length field is turned into bytes through [`Reader::take`], no length field can make
//! them allocate more than the input they were given. Every loop in a decoder consumes at
//! least one byte per iteration through a `Reader`, so no input can make them spin.
//!
//! The writing half is a handful of free functions over `Vec<u8>` for the length-prefixed
//! string forms of [MS-TDS] 2.2.5.1 (B_VARCHAR, US_VARCHAR, B_VARBYTE) and for back-patched
//! length fields; they return [`TdsError::TooLong`] rather than truncating a length.
//!
//! All integers are little-endian except where a caller asks for big-endian (the packet header
//! length, PRELOGIN offsets, the LOGINACK version).

use crate::TdsError;

/// A bounds-checked cursor over an input slice.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes not yet consumed.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next byte, without consuming it.
    pub(crate) fn peek_u8(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// Consumes and returns the next `n` bytes.
    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], TdsError> {
        if n > self.remaining() {
            return Err(TdsError::Truncated { what });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Consumes the rest of the input.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let out = &self.buf[self.pos..];
        self.pos = self.buf.len();
        out
    }

    /// Consumes the next `n` bytes as a nested reader, for length-delimited structures.
    pub(crate) fn sub(&mut self, n: usize, what: &'static str) -> Result<Reader<'a>, TdsError> {
        self.take(n, what).map(Reader::new)
    }

    pub(crate) fn array<const N: usize>(
        &mut self,
        what: &'static str,
    ) -> Result<[u8; N], TdsError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, TdsError> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16_le(&mut self, what: &'static str) -> Result<u16, TdsError> {
        self.array(what).map(u16::from_le_bytes)
    }

    pub(crate) fn u16_be(&mut self, what: &'static str) -> Result<u16, TdsError> {
        self.array(what).map(u16::from_be_bytes)
    }

    pub(crate) fn i16_le(&mut self, what: &'static str) -> Result<i16, TdsError> {
        self.array(what).map(i16::from_le_bytes)
    }

    pub(crate) fn u32_le(&mut self, what: &'static str) -> Result<u32, TdsError> {
        self.array(what).map(u32::from_le_bytes)
    }

    pub(crate) fn u32_be(&mut self, what: &'static str) -> Result<u32, TdsError> {
        self.array(what).map(u32::from_be_bytes)
    }

    pub(crate) fn i32_le(&mut self, what: &'static str) -> Result<i32, TdsError> {
        self.array(what).map(i32::from_le_bytes)
    }

    pub(crate) fn u64_le(&mut self, what: &'static str) -> Result<u64, TdsError> {
        self.array(what).map(u64::from_le_bytes)
    }

    pub(crate) fn i64_le(&mut self, what: &'static str) -> Result<i64, TdsError> {
        self.array(what).map(i64::from_le_bytes)
    }

    /// An unsigned little-endian integer of `n <= 8` bytes (TIME and DATE use 3 to 5).
    pub(crate) fn uint_le(&mut self, n: usize, what: &'static str) -> Result<u64, TdsError> {
        debug_assert!(n <= 8);
        let mut bytes = [0u8; 8];
        bytes[..n].copy_from_slice(self.take(n, what)?);
        Ok(u64::from_le_bytes(bytes))
    }

    /// `chars` UTF-16LE code units, decoded.
    pub(crate) fn utf16(&mut self, chars: usize, what: &'static str) -> Result<String, TdsError> {
        let bytes = chars.checked_mul(2).ok_or(TdsError::Truncated { what })?;
        decode_utf16(self.take(bytes, what)?)
    }

    /// B_VARCHAR: a one-byte count of UTF-16 code units, then the units.
    pub(crate) fn b_varchar(&mut self, what: &'static str) -> Result<String, TdsError> {
        let chars = self.u8(what)?;
        self.utf16(usize::from(chars), what)
    }

    /// US_VARCHAR: a two-byte count of UTF-16 code units, then the units.
    pub(crate) fn us_varchar(&mut self, what: &'static str) -> Result<String, TdsError> {
        let chars = self.u16_le(what)?;
        self.utf16(usize::from(chars), what)
    }

    /// B_VARBYTE: a one-byte count of bytes, then the bytes.
    pub(crate) fn b_varbyte(&mut self, what: &'static str) -> Result<&'a [u8], TdsError> {
        let len = self.u8(what)?;
        self.take(usize::from(len), what)
    }

    /// Fails with [`TdsError::TrailingBytes`] unless the input is exhausted.
    pub(crate) fn finish(&self, what: &'static str) -> Result<(), TdsError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(TdsError::TrailingBytes { what, count }),
        }
    }
}

/// Decodes UTF-16LE bytes. Unpaired surrogates are an error rather than U+FFFD: silently
/// replacing characters would corrupt user data on its way into the database.
pub(crate) fn decode_utf16(bytes: &[u8]) -> Result<String, TdsError> {
    if !bytes.len().is_multiple_of(2) {
        return Err(TdsError::InvalidUtf16);
    }
    let units = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]));
    char::decode_utf16(units).collect::<Result<String, _>>().map_err(|_| TdsError::InvalidUtf16)
}

/// The length of `s` in UTF-16 code units, the unit TDS string lengths count.
pub(crate) fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Appends `s` as UTF-16LE.
pub(crate) fn put_utf16(out: &mut Vec<u8>, s: &str) {
    for unit in s.encode_utf16() {
        out.extend_from_slice(&unit.to_le_bytes());
    }
}

pub(crate) fn put_b_varchar(
    out: &mut Vec<u8>,
    s: &str,
    what: &'static str,
) -> Result<(), TdsError> {
    let len = u8::try_from(utf16_len(s)).map_err(|_| TdsError::TooLong {
        what,
        len: utf16_len(s),
        max: 255,
    })?;
    out.push(len);
    put_utf16(out, s);
    Ok(())
}

pub(crate) fn put_us_varchar(
    out: &mut Vec<u8>,
    s: &str,
    what: &'static str,
) -> Result<(), TdsError> {
    let len = u16::try_from(utf16_len(s)).map_err(|_| TdsError::TooLong {
        what,
        len: utf16_len(s),
        max: 0xFFFF,
    })?;
    out.extend_from_slice(&len.to_le_bytes());
    put_utf16(out, s);
    Ok(())
}

pub(crate) fn put_b_varbyte(
    out: &mut Vec<u8>,
    b: &[u8],
    what: &'static str,
) -> Result<(), TdsError> {
    let len =
        u8::try_from(b.len()).map_err(|_| TdsError::TooLong { what, len: b.len(), max: 255 })?;
    out.push(len);
    out.extend_from_slice(b);
    Ok(())
}

/// Writes a two-byte little-endian length placeholder, runs `body`, then patches the
/// placeholder with the number of bytes `body` wrote. Token streams use this for every token
/// whose length precedes it.
pub(crate) fn with_u16_len(
    out: &mut Vec<u8>,
    what: &'static str,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), TdsError>,
) -> Result<(), TdsError> {
    let at = out.len();
    out.extend_from_slice(&[0, 0]);
    body(out)?;
    let len = out.len() - at - 2;
    let len16 = u16::try_from(len).map_err(|_| TdsError::TooLong { what, len, max: 0xFFFF })?;
    out[at..at + 2].copy_from_slice(&len16.to_le_bytes());
    Ok(())
}

/// Runs `encode` on `out` and, if it fails, truncates `out` back to its original length, so
/// that a public encoder either appends a whole structure or nothing.
pub(crate) fn atomic(
    out: &mut Vec<u8>,
    encode: impl FnOnce(&mut Vec<u8>) -> Result<(), TdsError>,
) -> Result<(), TdsError> {
    let start = out.len();
    let result = encode(out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_bounds_checked() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.u16_le("a"), Ok(0x0201));
        assert_eq!(r.u16_le("b"), Err(TdsError::Truncated { what: "b" }));
        assert_eq!(r.u8("c"), Ok(3));
        assert!(r.is_empty());
        assert_eq!(r.take(usize::MAX, "d"), Err(TdsError::Truncated { what: "d" }));
        assert_eq!(r.utf16(usize::MAX, "e"), Err(TdsError::Truncated { what: "e" }));
    }

    #[test]
    fn utf16_rejects_odd_lengths_and_lone_surrogates() {
        assert_eq!(decode_utf16(&[0x41, 0x00]).as_deref(), Ok("A"));
        assert_eq!(decode_utf16(&[0x41]), Err(TdsError::InvalidUtf16));
        assert_eq!(decode_utf16(&[0x00, 0xD8]), Err(TdsError::InvalidUtf16));
        // U+1F600 as a surrogate pair counts as two code units.
        let mut out = Vec::new();
        put_b_varchar(&mut out, "\u{1F600}", "s").unwrap();
        assert_eq!(out[0], 2);
        assert_eq!(Reader::new(&out).b_varchar("s").as_deref(), Ok("\u{1F600}"));
    }

    #[test]
    fn length_prefixes_refuse_to_truncate() {
        let long = "x".repeat(256);
        let mut out = Vec::new();
        assert!(matches!(put_b_varchar(&mut out, &long, "s"), Err(TdsError::TooLong { .. })));
        let err = with_u16_len(&mut out, "t", |o| {
            o.resize(o.len() + 70_000, 0);
            Ok(())
        });
        assert!(matches!(err, Err(TdsError::TooLong { len: 70_000, .. })));
        let mut out = vec![9];
        assert!(atomic(&mut out, |o| put_b_varbyte(o, &[0; 300], "b")).is_err());
        assert_eq!(out, [9]);
    }
}
