//! Reassembling tokens from a response that arrives in pieces. A token is decoded only once
//! all of its bytes are in: each token's length is measured from its type and, for rows, from
//! the column metadata in force, without decoding it. Bytes of an incomplete token wait for the
//! next packet, and a response that ends inside a token is an error rather than a silent cut.

use walden_tds::token::{
    COLMETADATA, DONE, DONEINPROC, DONEPROC, ENVCHANGE, ERROR, INFO, LOGINACK, NBCROW, ORDER,
    RETURNSTATUS, ROW,
};
use walden_tds::{Column, TdsError, Token, TokenReader, TypeInfo};

/// The total length of a NULL PLP value.
const PLP_NULL: u64 = u64::MAX;
/// The two-byte length of a NULL USHORTLEN value.
const USHORT_NULL: u16 = u16::MAX;

/// How much of a buffer a token or value takes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Size {
    /// It is all there and takes this many bytes.
    Whole(usize),
    /// It is not all there; the buffer must hold at least this many bytes before it can be.
    Need(usize),
}

/// A token measured: its size, and the columns when it is a COLMETADATA.
#[derive(Debug)]
struct Measured {
    pub(super) size: Size,
    pub(super) columns: Option<Vec<Column>>,
}

fn le_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The size of the fixed-length types' values.
fn fixed_size(ty: &TypeInfo) -> Option<usize> {
    Some(match ty {
        TypeInfo::Null => 0,
        TypeInfo::Int1 | TypeInfo::Bit => 1,
        TypeInfo::Int2 => 2,
        TypeInfo::Int4 | TypeInfo::Flt4 | TypeInfo::Money4 | TypeInfo::DateTime4 => 4,
        TypeInfo::Int8 | TypeInfo::Flt8 | TypeInfo::Money | TypeInfo::DateTime => 8,
        _ => return None,
    })
}

/// The size of a value of type `ty` at the start of `b` (2.2.5.2: fixed, BYTELEN, USHORTLEN,
/// PLP). The lengths are not checked against the type here; the codec does that when it
/// decodes the token.
fn value_size(ty: &TypeInfo, b: &[u8]) -> Result<Size, String> {
    let have = |n: usize| if b.len() >= n { Size::Whole(n) } else { Size::Need(n) };
    if let Some(n) = fixed_size(ty) {
        return Ok(have(n));
    }
    if ty.is_plp() {
        // A total length (or PLP_NULL), then chunks of a 4-byte length and data, ended by a
        // zero-length chunk.
        let Some(total) = le_u64(b, 0) else { return Ok(Size::Need(8)) };
        if total == PLP_NULL {
            return Ok(Size::Whole(8));
        }
        let mut at = 8;
        loop {
            let Some(chunk) = le_u32(b, at) else { return Ok(Size::Need(at + 4)) };
            at += 4;
            if chunk == 0 {
                return Ok(Size::Whole(at));
            }
            at = at
                .checked_add(usize::try_from(chunk).map_err(|_| "PLP chunk too long".to_string())?)
                .ok_or("PLP chunk too long")?;
            if at > b.len() {
                return Ok(Size::Need(at + 4));
            }
        }
    }
    Ok(match ty {
        TypeInfo::BigVarChar { .. }
        | TypeInfo::BigChar { .. }
        | TypeInfo::NVarChar { .. }
        | TypeInfo::NChar { .. }
        | TypeInfo::BigVarBinary { .. }
        | TypeInfo::BigBinary { .. } => match le_u16(b, 0) {
            None => Size::Need(2),
            Some(USHORT_NULL) => Size::Whole(2),
            Some(len) => have(2 + usize::from(len)),
        },
        TypeInfo::Text { .. } | TypeInfo::NText { .. } | TypeInfo::Image { .. } => {
            return Err(format!("the server sent a {} column, which is not supported", ty.name()))
        }
        // The BYTELEN types: one length byte (0 for NULL), then the value.
        _ => match b.first() {
            None => Size::Need(1),
            Some(&len) => have(1 + usize::from(len)),
        },
    })
}

/// Measures the token at the start of `b` (not empty) under the result set's `columns`.
fn measure_token(b: &[u8], columns: &[Column]) -> Result<Measured, String> {
    let have = |n: usize| if b.len() >= n { Size::Whole(n) } else { Size::Need(n) };
    let size = match b[0] {
        DONE | DONEPROC | DONEINPROC => have(13),
        RETURNSTATUS => have(5),
        LOGINACK | ENVCHANGE | INFO | ERROR | ORDER => match le_u16(b, 1) {
            None => Size::Need(3),
            Some(len) => have(3 + usize::from(len)),
        },
        COLMETADATA => return measure_metadata(b),
        ROW | NBCROW => {
            if columns.is_empty() {
                return Err("the server sent a row before its COLMETADATA".into());
            }
            let mut at = 1;
            let nulls = if b[0] == NBCROW {
                let len = columns.len().div_ceil(8);
                match b.get(at..at + len) {
                    Some(bitmap) => {
                        at += len;
                        bitmap
                    }
                    None => return Ok(Measured { size: Size::Need(at + len), columns: None }),
                }
            } else {
                &[]
            };
            for (i, column) in columns.iter().enumerate() {
                if nulls.get(i / 8).is_some_and(|byte| byte & (1 << (i % 8)) != 0) {
                    continue;
                }
                match value_size(&column.ty, &b[at..])? {
                    Size::Whole(n) => at += n,
                    Size::Need(n) => {
                        return Ok(Measured { size: Size::Need(at + n), columns: None })
                    }
                }
            }
            Size::Whole(at)
        }
        other => {
            return Err(format!("the server sent token 0x{other:02X}, which is not supported"))
        }
    };
    Ok(Measured { size, columns: None })
}

/// COLMETADATA's size: the codec decodes it (an incomplete one is `Truncated`: COLMETADATA
/// has no length of its own that could run short of its fields) and says where it ended.
fn measure_metadata(b: &[u8]) -> Result<Measured, String> {
    let mut reader = TokenReader::new(b);
    match reader.next() {
        Some(Ok(Token::ColMetadata(columns))) => {
            Ok(Measured { size: Size::Whole(reader.position()), columns: Some(columns) })
        }
        Some(Err(TdsError::Truncated { .. })) | None => {
            Ok(Measured { size: Size::Need(b.len() + 1), columns: None })
        }
        Some(Err(e)) => Err(format!("the server's COLMETADATA is not valid TDS: {e}")),
        Some(Ok(other)) => Err(format!("expected COLMETADATA, decoded {other:?}")),
    }
}

/// A response's bytes as they arrive, turned into whole tokens (see the module documentation).
/// `pending` holds at most the bytes of one incomplete token plus the packet last pushed.
#[derive(Debug, Default)]
pub(super) struct TokenStream {
    /// Bytes received and not yet decoded; they start at a token boundary.
    pub(super) pending: Vec<u8>,
    /// The columns in effect at the start of `pending` (none before the first COLMETADATA).
    pub(super) columns: Vec<Column>,
    /// `pending` must be this long before the next token can be whole.
    pub(super) need: usize,
}

impl TokenStream {
    pub(super) fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// The tokens now whole, in order.
    pub(super) fn drain(&mut self) -> Result<Vec<Token>, String> {
        if self.pending.len() < self.need {
            return Ok(Vec::new());
        }
        let mut end = 0;
        // The columns of the last COLMETADATA measured, in effect from there on.
        let mut metadata: Option<Vec<Column>> = None;
        self.need = 0;
        while end < self.pending.len() {
            let columns = metadata.as_deref().unwrap_or(&self.columns);
            let measured = measure_token(&self.pending[end..], columns)?;
            match measured.size {
                Size::Whole(len) => {
                    if measured.columns.is_some() {
                        metadata = measured.columns;
                    }
                    end += len;
                }
                Size::Need(len) => {
                    self.need = end + len;
                    break;
                }
            }
        }
        if end == 0 {
            return Ok(Vec::new());
        }
        let tokens: Vec<Token> = TokenReader::with_columns(&self.pending[..end], &self.columns)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("the server's response is not valid TDS: {e}"))?;
        if let Some(columns) = metadata {
            self.columns = columns;
        }
        self.pending.drain(..end);
        self.need = self.need.saturating_sub(end);
        Ok(tokens)
    }

    /// The response ended: nothing may be left over.
    pub(super) fn finish(&self) -> Result<(), String> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the server's response ended inside a token ({} bytes)",
                self.pending.len()
            ))
        }
    }
}
