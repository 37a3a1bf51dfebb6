//! The Bulk Load message (packet type 7, [MS-TDS] 2.2.6.1): what a client sends after its
//! `INSERT BULK` statement. Its payload is a token stream, as a result set is: one
//! COLMETADATA describing the columns the client sends (in the `INSERT BULK` order), a ROW per
//! row (NBCROW too, which no client sends but the format allows), and a DONE. Layout and a
//! worked example: `docs/format/bulk-load.md`.
//!
//! A bulk load may carry millions of rows, so [`BulkLoadDecoder`] decodes the stream
//! incrementally from the packets as they arrive: it holds at most one incomplete token (plus
//! the bytes of the packet that completed it), never the whole message. The legacy LOB types
//! (TEXT, NTEXT, IMAGE), whose COLMETADATA entries carry a table name, are refused, as they
//! are in result streams.

use crate::token::{Column, Token, TokenReader};
use crate::value::TdsValue;
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

/// Decodes a Bulk Load message's token stream from its packets' payloads (see the module
/// documentation). Never panics; a malformed stream is an error, after which the decoder
/// yields nothing more.
#[derive(Debug)]
pub struct BulkLoadDecoder {
    buf: Vec<u8>,
    /// Where the next token starts in `buf`.
    pos: usize,
    columns: Option<Vec<Column>>,
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
        Self { buf: Vec::new(), pos: 0, columns: None, finished: false, retry_at: 0, max_token }
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
                Some(columns) => TokenReader::with_columns(bytes, columns),
                None => TokenReader::new(bytes),
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
            Err(TdsError::Truncated { .. }) if !last => {
                if remaining > self.max_token {
                    self.finished = true;
                    return Err(TdsError::MessageTooLarge { max: self.max_token });
                }
                self.retry_at = remaining.saturating_mul(2);
                Ok(None)
            }
            Err(e) => {
                self.finished = true;
                Err(e)
            }
        }
    }

    fn item(&mut self, token: Token) -> Result<BulkItem, TdsError> {
        match token {
            Token::ColMetadata(columns) if self.columns.is_none() => {
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
