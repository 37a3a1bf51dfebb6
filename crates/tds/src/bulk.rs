//! The Bulk Load message (packet type 7, [MS-TDS] 2.2.6.1): what a client sends after its
//! `INSERT BULK` statement. Its payload is a token stream, as a result set is: one
//! COLMETADATA describing the columns the client sends (in the `INSERT BULK` order), a ROW per
//! row (NBCROW too, which no client sends but the format allows), and a DONE. Layout and a
//! worked example: `docs/format/bulk-load.md`.
//!
//! A bulk load may carry millions of rows, so [`BulkLoadDecoder`] decodes the stream
//! incrementally from the packets as they arrive: it holds at most one incomplete token (plus
//! the bytes of the packet that completed it), never the whole message. A legacy LOB column's
//! (TEXT, NTEXT, IMAGE) COLMETADATA entry carries its table name as one US_VARCHAR, not in
//! parts as a response's does ([`TokenReader::bulk_load`]); its values come with a text
//! pointer and timestamp, as in a response's ROW.
//!
//! A value of a variable-length type (VARCHAR, NVARCHAR, VARBINARY, CHAR, NCHAR, BINARY) may
//! be longer than the length its COLMETADATA entry declares, up to its type's 8,000 bytes:
//! SQL Server takes each value's length from its own prefix, and mssql-jdbc relies on it,
//! declaring a temporal value it sends as text from an `ISQLServerBulkData` source as
//! VARCHAR of the source's precision, 0 when the source says none. The value is then
//! checked against its column as every loaded value is (4815 when too long).

use crate::token::{Column, Token, TokenReader, ROW};
use crate::types::{TypeInfo, MAX_NON_PLP_LEN};
use crate::value::{decode_row_value, TdsValue};
use crate::wire::Reader;
use crate::TdsError;

/// What [`BulkLoadDecoder::next_item`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum BulkItem {
    /// The COLMETADATA: the columns the rows carry.
    Columns(Vec<Column>),
    /// One row: a value per column.
    Row(Vec<TdsValue>),
    /// The closing DONE: nothing follows.
    Done,
}

/// What [`BulkLoadDecoder::next_row`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkStep {
    /// The COLMETADATA: [`BulkLoadDecoder::columns`] says what the rows carry.
    Columns,
    /// One row, in the caller's vector.
    Row,
    /// The closing DONE: nothing follows.
    Done,
}

/// Decodes a Bulk Load message's token stream from its packets' payloads (see the module
/// documentation). Never panics; a malformed stream is an error, after which the decoder
/// yields nothing more.
#[derive(Debug)]
pub struct BulkLoadDecoder {
    buf: Vec<u8>,
    /// Where the next token starts in `buf`.
    pos: usize,
    columns: Option<Vec<Column>>,
    /// `columns` as the rows are read: each variable-length type at its type's maximum
    /// length (see the module documentation).
    reading: Vec<Column>,
    /// The DONE was read, or an error.
    finished: bool,
    /// A token was found incomplete with this many bytes buffered: wait for twice as many
    /// before trying again, so that a value spanning many packets is not re-read from its
    /// start at every packet.
    retry_at: usize,
    /// The largest incomplete token buffered.
    max_token: usize,
}

impl BulkLoadDecoder {
    /// A decoder that refuses tokens larger than `max_token` bytes.
    pub fn new(max_token: usize) -> Self {
        Self {
            buf: Vec::new(),
            pos: 0,
            columns: None,
            reading: Vec::new(),
            finished: false,
            retry_at: 0,
            max_token,
        }
    }

    /// Appends the next packet's payload.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && (self.pos == self.buf.len() || self.pos * 2 >= self.buf.len()) {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Whether the DONE (or an error) ended the stream.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The next item of the bytes pushed so far, `Ok(None)` if more are needed or the stream
    /// has finished. `last`: the message's last packet has been pushed, so an incomplete
    /// token is an error. A message that ends without its DONE ends as if it had one.
    pub fn next_item(&mut self, last: bool) -> Result<Option<BulkItem>, TdsError> {
        if self.finished {
            return Ok(None);
        }
        let remaining = self.buf.len() - self.pos;
        if remaining == 0 {
            self.finished = last;
            return Ok(None);
        }
        if !last && remaining < self.retry_at {
            return Ok(None);
        }
        let result = {
            let bytes = &self.buf[self.pos..];
            let mut reader = match &self.columns {
                Some(_) => TokenReader::with_columns(bytes, &self.reading),
                None => TokenReader::bulk_load(bytes),
            };
            match reader.next() {
                Some(Ok(token)) => Ok((token, reader.position())),
                Some(Err(e)) => Err(e),
                None => Err(TdsError::Truncated { what: "bulk load token" }),
            }
        };
        match result {
            Ok((token, used)) => {
                self.pos += used;
                self.retry_at = 0;
                self.item(token).inspect_err(|_| self.finished = true).map(Some)
            }
            Err(e) => self.incomplete(e, last).map(|()| None),
        }
    }

    /// The columns of the COLMETADATA, once read.
    pub fn columns(&self) -> Option<&[Column]> {
        self.columns.as_deref()
    }

    /// As [`BulkLoadDecoder::next_item`], but a row's values go into `row` (emptied first),
    /// which the caller hands back for every row: a ROW is decoded in place, value by value,
    /// without the token reader's token or a vector of its own, and a non-MAX NVARCHAR goes
    /// from its UTF-16 bytes straight into its string.
    pub fn next_row(
        &mut self,
        last: bool,
        row: &mut Vec<TdsValue>,
    ) -> Result<Option<BulkStep>, TdsError> {
        row.clear();
        let at_row = !self.finished
            && self.buf.get(self.pos) == Some(&ROW)
            && (last || self.buf.len() - self.pos >= self.retry_at);
        let Some(columns) =
            self.columns.as_ref().map(|_| self.reading.as_slice()).filter(|_| at_row)
        else {
            return Ok(match self.next_item(last)? {
                None => None,
                Some(BulkItem::Columns(_)) => Some(BulkStep::Columns),
                Some(BulkItem::Row(values)) => {
                    *row = values;
                    Some(BulkStep::Row)
                }
                Some(BulkItem::Done) => Some(BulkStep::Done),
            });
        };
        let mut r = Reader::new(&self.buf[self.pos + 1..]);
        // Each value is written into its place in `row`: pushing a returned value copied it
        // through the stack, a sizeable part of a row's time.
        row.resize(columns.len(), TdsValue::Null);
        let decoded = columns.iter().zip(row.iter_mut()).try_for_each(|(c, slot)| {
            *slot = decode_bulk_value(&c.ty, &mut r)?;
            Ok(())
        });
        match decoded {
            Ok(()) => {
                self.pos += 1 + r.position();
                self.retry_at = 0;
                Ok(Some(BulkStep::Row))
            }
            Err(e) => {
                row.clear();
                self.incomplete(e, last).map(|()| None)
            }
        }
    }

    /// What a token found incomplete or malformed means: with more packets to come, wait
    /// for them (unless the token is already past the limit); else the stream is broken.
    fn incomplete(&mut self, e: TdsError, last: bool) -> Result<(), TdsError> {
        let remaining = self.buf.len() - self.pos;
        match e {
            TdsError::Truncated { .. } if !last => {
                if remaining > self.max_token {
                    self.finished = true;
                    return Err(TdsError::MessageTooLarge { max: self.max_token });
                }
                self.retry_at = remaining.saturating_mul(2);
                Ok(())
            }
            e => {
                self.finished = true;
                Err(e)
            }
        }
    }

    fn item(&mut self, token: Token) -> Result<BulkItem, TdsError> {
        match token {
            Token::ColMetadata(columns) if self.columns.is_none() => {
                self.reading = columns
                    .iter()
                    .map(|c| Column { ty: reading_type(&c.ty), ..c.clone() })
                    .collect();
                self.columns = Some(columns.clone());
                Ok(BulkItem::Columns(columns))
            }
            Token::Row(values) | Token::NbcRow(values) if self.columns.is_some() => {
                Ok(BulkItem::Row(values))
            }
            Token::Done(_) => {
                self.finished = true;
                Ok(BulkItem::Done)
            }
            _ => Err(TdsError::Malformed {
                what: "bulk load token (expected COLMETADATA, then ROWs, then DONE)",
            }),
        }
    }
}

/// `ty` as its values are read from a ROW: a variable-length type that is not MAX at its
/// type's maximum length, whatever length it was declared with.
fn reading_type(ty: &TypeInfo) -> TypeInfo {
    const MAX: u16 = MAX_NON_PLP_LEN;
    match *ty {
        _ if ty.is_plp() => *ty,
        TypeInfo::BigVarChar { collation, .. } => TypeInfo::BigVarChar { max_len: MAX, collation },
        TypeInfo::BigChar { collation, .. } => TypeInfo::BigChar { len: MAX, collation },
        TypeInfo::NVarChar { collation, .. } => TypeInfo::NVarChar { max_len: MAX, collation },
        TypeInfo::NChar { collation, .. } => TypeInfo::NChar { len: MAX, collation },
        TypeInfo::BigVarBinary { .. } => TypeInfo::BigVarBinary { max_len: MAX },
        TypeInfo::BigBinary { .. } => TypeInfo::BigBinary { len: MAX },
        other => other,
    }
}

/// A ROW's value of type `ty`: [`decode_row_value`]'s, with a non-MAX NVARCHAR or NCHAR
/// decoded from the row's bytes without a copy of them first.
fn decode_bulk_value(ty: &TypeInfo, r: &mut Reader<'_>) -> Result<TdsValue, TdsError> {
    match *ty {
        TypeInfo::NVarChar { max_len, .. } | TypeInfo::NChar { len: max_len, .. }
            if !ty.is_plp() =>
        {
            let len = r.u16_le("value length")?;
            if len == u16::MAX {
                return Ok(TdsValue::Null);
            }
            if len > max_len {
                return Err(TdsError::Malformed { what: "value longer than its declared type" });
            }
            Ok(TdsValue::NVarChar(utf16_string(r.take(usize::from(len), "value")?)?))
        }
        _ => decode_row_value(ty, r),
    }
}

/// UTF-16LE bytes as a string, an unpaired surrogate an error (as everywhere in the codec).
/// Most text a load carries is ASCII: that part is copied a byte per unit and checked in
/// one pass, and only from the first other unit on is the text decoded a character at a
/// time.
fn utf16_string(bytes: &[u8]) -> Result<String, TdsError> {
    if !bytes.len().is_multiple_of(2) {
        return Err(TdsError::InvalidUtf16);
    }
    let ascii = bytes.chunks_exact(2).take_while(|u| u[1] == 0 && u[0] < 0x80).count();
    let mut text: Vec<u8> = bytes.chunks_exact(2).take(ascii).map(|u| u[0]).collect();
    let rest = &bytes[2 * ascii..];
    if !rest.is_empty() {
        let units = rest.chunks_exact(2).map(|u| u16::from_le_bytes([u[0], u[1]]));
        let mut tail = [0u8; 4];
        for c in char::decode_utf16(units) {
            let c = c.map_err(|_| TdsError::InvalidUtf16)?;
            text.extend_from_slice(c.encode_utf8(&mut tail).as_bytes());
        }
    }
    String::from_utf8(text).map_err(|_| TdsError::InvalidUtf16)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::token::{encode_tokens, Done, DoneStatus};
    use crate::types::TypeInfo;

    fn stream(rows: usize) -> Vec<u8> {
        let mut tokens = vec![Token::ColMetadata(vec![
            Column::new("id", TypeInfo::Int4, false),
            Column::new("name", TypeInfo::nvarchar(None), true),
        ])];
        for i in 0..rows {
            let name = if i % 3 == 0 { TdsValue::Null } else { TdsValue::NVarChar("é".repeat(i)) };
            tokens.push(Token::Row(vec![TdsValue::Int(i as i32), name]));
        }
        tokens.push(Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 }));
        encode_tokens(&tokens).unwrap()
    }

    /// Feeds `bytes` in pieces of `size`, collecting every item.
    fn decode(bytes: &[u8], size: usize) -> Result<Vec<BulkItem>, TdsError> {
        let mut d = BulkLoadDecoder::new(1 << 20);
        let mut items = Vec::new();
        let chunks: Vec<&[u8]> = bytes.chunks(size).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            d.push(chunk);
            while let Some(item) = d.next_item(i + 1 == chunks.len())? {
                items.push(item);
            }
        }
        assert!(d.finished());
        Ok(items)
    }

    #[test]
    fn rows_split_anywhere_decode_the_same() {
        let bytes = stream(40);
        let whole = decode(&bytes, bytes.len()).unwrap();
        assert_eq!(whole.len(), 42);
        assert!(matches!(&whole[0], BulkItem::Columns(c) if c.len() == 2));
        assert_eq!(
            whole[5],
            BulkItem::Row(vec![TdsValue::Int(4), TdsValue::NVarChar("éééé".into())])
        );
        assert_eq!(whole[41], BulkItem::Done);
        for size in [1, 7, 512] {
            assert_eq!(decode(&bytes, size).unwrap(), whole);
        }
    }

    /// `next_row` yields what `next_item` does, however the stream is cut.
    #[test]
    fn rows_decoded_in_place_match_the_token_reader() {
        let bytes = stream(40);
        let whole = decode(&bytes, bytes.len()).unwrap();
        for size in [1, 7, 512, bytes.len()] {
            let mut d = BulkLoadDecoder::new(1 << 20);
            let mut items = Vec::new();
            let mut row = Vec::new();
            let chunks: Vec<&[u8]> = bytes.chunks(size).collect();
            for (i, chunk) in chunks.iter().enumerate() {
                d.push(chunk);
                while let Some(step) = d.next_row(i + 1 == chunks.len(), &mut row).unwrap() {
                    items.push(match step {
                        BulkStep::Columns => BulkItem::Columns(d.columns().unwrap().to_vec()),
                        BulkStep::Row => BulkItem::Row(row.clone()),
                        BulkStep::Done => BulkItem::Done,
                    });
                }
            }
            assert_eq!(items, whole, "pieces of {size}");
        }
    }

    #[test]
    fn utf16_text_decodes_as_the_codec_does() {
        for text in ["", "order 12 for customer 7", "é", "abcé😀x", "😀"] {
            let bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
            assert_eq!(utf16_string(&bytes).unwrap(), text);
        }
        assert!(utf16_string(&[0x41, 0, 0x00, 0xD8]).is_err(), "an unpaired surrogate");
        assert!(utf16_string(&[0x41]).is_err(), "an odd length");
    }

    #[test]
    fn malformed_streams_are_errors() {
        let bytes = stream(3);
        // Cut inside the last row: the DONE never comes.
        assert!(decode(&bytes[..bytes.len() - 14], 64).is_err());
        // A row before any COLMETADATA.
        let row = encode_tokens(&[Token::Row(vec![])]);
        assert!(row.is_err() || decode(&row.unwrap(), 64).is_err());
        // A token larger than the limit.
        let mut d = BulkLoadDecoder::new(2);
        d.push(&bytes[..3]);
        assert!(d.next_item(false).is_err());
    }

    /// mssql-jdbc declares a temporal value it sends as text VARCHAR(0): the value's own
    /// length prefix counts, up to the type's 8,000 bytes, in either way of decoding a row.
    #[test]
    fn a_value_may_be_longer_than_its_declared_length() {
        let column = |max_len| {
            Column::new("d", TypeInfo::BigVarChar { max_len, collation: Default::default() }, true)
        };
        let text = b"1954-05-22 02:43:37.123".to_vec();
        let load = |value: Vec<u8>| {
            let done = Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 };
            let mut bytes = encode_tokens(&[
                Token::ColMetadata(vec![column(8000)]),
                Token::Row(vec![TdsValue::VarChar(value)]),
                Token::Done(done),
            ])
            .unwrap();
            // The encoder refuses a value longer than its column: declare 0 afterwards, at
            // the column's MaxLength (after the token, count, UserType, Flags and type).
            assert_eq!(bytes[9], 0xA7);
            bytes[10..12].copy_from_slice(&0u16.to_le_bytes());
            bytes
        };
        let bytes = load(text.clone());
        let items = decode(&bytes, bytes.len()).unwrap();
        assert_eq!(items[0], BulkItem::Columns(vec![column(0)]), "the declared length kept");
        assert_eq!(items[1], BulkItem::Row(vec![TdsValue::VarChar(text.clone())]));
        let mut d = BulkLoadDecoder::new(1 << 20);
        d.push(&bytes);
        let mut row = Vec::new();
        assert_eq!(d.next_row(true, &mut row).unwrap(), Some(BulkStep::Columns));
        assert_eq!(d.next_row(true, &mut row).unwrap(), Some(BulkStep::Row));
        assert_eq!(row, vec![TdsValue::VarChar(text)]);
        let mut longest = load(vec![b'x'; 8000]);
        assert!(decode(&longest, 1 << 16).is_ok());
        // One byte more, which the encoder refuses too: the ROW's length prefix made 8,001
        // (the ROW, its prefix and value, then the DONE's 13 bytes end the stream).
        let row = longest.len() - 13 - (1 + 2 + 8000);
        assert_eq!(longest[row], ROW);
        longest[row + 1..row + 3].copy_from_slice(&8001u16.to_le_bytes());
        longest.insert(row + 3, b'x');
        assert!(decode(&longest, 1 << 16).is_err(), "past VARCHAR's 8,000 bytes");
    }

    /// The worked example of `docs/format/bulk-load.md`.
    #[test]
    fn documented_example() {
        let payload = [
            0x81, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0x38, 0x02, 0x69, 0x00, 0x64, 0x00, //
            0xd1, 1, 0, 0, 0, 0xd1, 2, 0, 0, 0, //
            0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(payload.len() + 8, 46);
        let items = decode(&payload, payload.len()).unwrap();
        assert_eq!(items[0], BulkItem::Columns(vec![Column::new("id", TypeInfo::Int4, false)]));
        assert_eq!(
            items[1..],
            [
                BulkItem::Row(vec![TdsValue::Int(1)]),
                BulkItem::Row(vec![TdsValue::Int(2)]),
                BulkItem::Done
            ]
        );
    }
}
