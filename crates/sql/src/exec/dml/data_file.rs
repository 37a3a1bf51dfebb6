//! The data files `BULK INSERT` reads: records ended by a row terminator, fields separated by
//! a field terminator (`DATAFILETYPE = 'char'` or `'widechar'`), or RFC 4180 CSV with quoted
//! fields (`FORMAT = 'CSV'`). The format is documented in `docs/format/bulk-insert.md`.
//!
//! A file is read as a stream, one record at a time, so a load of any size holds one record
//! (and the buffer of the reader) in memory. A widechar (UTF-16LE) file is transcoded to UTF-8
//! as it is read, so the record and field scanning below works on UTF-8 or single-byte text
//! only; terminators are matched as bytes of that text.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use walden_engine::types::decode_cp1252;

use crate::exec::SqlError;

/// How the bytes of a field become text (`CODEPAGE`, `DATAFILETYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8 (`CODEPAGE = '65001'`, and Walden's default: see the format document).
    Utf8,
    /// Windows code page 1252 (`'ACP'`, `'1252'`).
    Windows1252,
    /// No conversion (`'RAW'`): each byte is the character of that number (Latin-1).
    Raw,
}

/// The shape of a data file, from the statement's options.
#[derive(Debug, Clone)]
pub(crate) struct Format {
    /// Between two fields of a record.
    pub(crate) field_terminator: Vec<u8>,
    /// After each record (the last record of the file may lack it).
    pub(crate) row_terminator: Vec<u8>,
    /// The row terminator was given as `\n` (or left out): SQL Server then takes a carriage
    /// return before the line feed as part of the terminator.
    pub(crate) crlf: bool,
    /// `FORMAT = 'CSV'`: the quote character of quoted fields.
    pub(crate) quote: Option<u8>,
    /// How field bytes become text.
    pub(crate) encoding: Encoding,
    /// `DATAFILETYPE = 'widechar'`: the file is UTF-16LE.
    pub(crate) wide: bool,
}

/// A terminator as `BULK INSERT` and bcp take it: the escapes `\t`, `\n`, `\r`, `\0`, `\\`,
/// or hexadecimal bytes `0x0a`. `None` for an escape SQL Server does not know.
pub fn terminator(text: &str) -> Option<Vec<u8>> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        if !hex.is_empty() && hex.len().is_multiple_of(2) {
            return (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect();
        }
    }
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            _ => return None,
        }
    }
    Some(out.into_bytes())
}

/// Reads a data file's records, counting them from 1 as SQL Server numbers rows in its
/// messages.
pub(crate) struct DataFile {
    input: Box<dyn BufRead>,
    format: Format,
    /// The current record, without its terminator.
    record: Vec<u8>,
    /// The number of the current record in the file.
    pub(crate) row: u64,
    /// Whether the file's first bytes were looked at (a UTF-8 byte-order mark is skipped).
    started: bool,
}

impl DataFile {
    /// Opens `path` for reading; the I/O error if it cannot be.
    pub(crate) fn open(path: &str, format: Format) -> io::Result<DataFile> {
        let file = File::open(path)?;
        if file.metadata()?.is_dir() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a directory"));
        }
        let input: Box<dyn BufRead> = if format.wide {
            Box::new(BufReader::with_capacity(1 << 16, Utf16Reader::new(file)))
        } else {
            Box::new(BufReader::with_capacity(1 << 16, file))
        };
        Ok(DataFile { input, format, record: Vec::new(), row: 0, started: false })
    }

    /// Reads the next record; false at the end of the file.
    pub(crate) fn next_record(&mut self) -> io::Result<bool> {
        self.record.clear();
        if !self.started {
            self.started = true;
            let head = self.input.fill_buf()?;
            if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
                self.input.consume(3);
            }
        }
        let terminator = &self.format.row_terminator;
        let last = *terminator.last().unwrap_or(&b'\n');
        loop {
            let n = self.input.read_until(last, &mut self.record)?;
            if n == 0 {
                if self.record.is_empty() {
                    return Ok(false);
                }
                break;
            }
            if self.record.ends_with(terminator) && self.quotes_balanced() {
                self.record.truncate(self.record.len() - terminator.len());
                if self.format.crlf && self.record.last() == Some(&b'\r') {
                    self.record.pop();
                }
                break;
            }
        }
        self.row += 1;
        Ok(true)
    }

    /// Whether the record read so far has no quoted field left open (CSV only): a row
    /// terminator inside quotes belongs to the field. A doubled quote counts twice, so an
    /// even count means every quoted field is closed.
    fn quotes_balanced(&self) -> bool {
        match self.format.quote {
            Some(q) => self.record.iter().filter(|&&b| b == q).count().is_multiple_of(2),
            None => true,
        }
    }

    /// The current record as it is in the file (for the error file), without its terminator.
    pub(crate) fn record(&self) -> &[u8] {
        &self.record
    }

    /// The fields of the current record, at most `n`: the last one takes the rest of the
    /// record, terminators included, as SQL Server reads the last field up to the row
    /// terminator. `None` for a field that was left out (fewer fields than columns); a CSV
    /// field's quotes are removed and its doubled quotes undone. Error 4879 for a quoted CSV
    /// field followed by something other than a terminator.
    pub(crate) fn fields(&self, n: usize) -> Result<Vec<Option<Field<'_>>>, SqlError> {
        let mut out = Vec::with_capacity(n);
        let text = &self.record[..];
        let sep = &self.format.field_terminator[..];
        let mut at = 0;
        for i in 0..n {
            if at > text.len() {
                out.push(None);
                continue;
            }
            let last = i + 1 == n;
            if let Some(q) = self.format.quote.filter(|&q| text.get(at) == Some(&q)) {
                let (value, end) = quoted(text, at, q);
                let rest = &text[end..];
                let next = if rest.is_empty() {
                    text.len() + 1
                } else if !last && rest.starts_with(sep) {
                    end + sep.len()
                } else {
                    return Err(SqlError::new(
                        4879,
                        format!(
                            "Bulk load failed due to invalid column value in CSV data file in row {}, column {}.",
                            self.row,
                            i + 1
                        ),
                    ));
                };
                out.push(Some(Field { bytes: Cow::Owned(value), quoted: true }));
                at = next;
                continue;
            }
            let end = if last { None } else { find(&text[at..], sep).map(|p| at + p) };
            match end {
                Some(end) => {
                    out.push(Some(Field { bytes: Cow::Borrowed(&text[at..end]), quoted: false }));
                    at = end + sep.len();
                }
                None => {
                    out.push(Some(Field { bytes: Cow::Borrowed(&text[at..]), quoted: false }));
                    at = text.len() + 1;
                }
            }
        }
        Ok(out)
    }

    /// A field's bytes as text; `None` if they are not valid in the file's encoding.
    pub(crate) fn text<'f>(&self, bytes: &'f [u8]) -> Option<Cow<'f, str>> {
        decode(bytes, self.format.encoding)
    }
}

/// One field of a record.
pub(crate) struct Field<'r> {
    /// Its bytes, quotes removed.
    pub(crate) bytes: Cow<'r, [u8]>,
    /// It was quoted (CSV): an empty quoted field is an empty string, not NULL.
    pub(crate) quoted: bool,
}

/// `bytes` as text in `encoding`; `None` for bytes that are not valid UTF-8.
pub(crate) fn decode(bytes: &[u8], encoding: Encoding) -> Option<Cow<'_, str>> {
    match encoding {
        Encoding::Utf8 => std::str::from_utf8(bytes).ok().map(Cow::Borrowed),
        Encoding::Raw => Some(Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect())),
        Encoding::Windows1252 => {
            if bytes.is_ascii() {
                // Every ASCII byte is the same character in 1252; no copy needed.
                return std::str::from_utf8(bytes).ok().map(Cow::Borrowed);
            }
            Some(Cow::Owned(decode_cp1252(bytes)))
        }
    }
}

/// The quoted field starting at `start` (at its opening quote): its value with doubled quotes
/// undone, and the position just past its closing quote (the record's end if it has none).
fn quoted(text: &[u8], start: usize, q: u8) -> (Vec<u8>, usize) {
    let mut value = Vec::new();
    let mut i = start + 1;
    while i < text.len() {
        if text[i] == q {
            if text.get(i + 1) == Some(&q) {
                value.push(q);
                i += 2;
                continue;
            }
            return (value, i + 1);
        }
        value.push(text[i]);
        i += 1;
    }
    (value, text.len())
}

/// The position of the first `needle` in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    match needle {
        [] => None,
        [b] => haystack.iter().position(|x| x == b),
        _ => haystack.windows(needle.len()).position(|w| w == needle),
    }
}

/// A UTF-16LE byte stream read as UTF-8, for widechar data files. A byte-order mark at the
/// start is dropped; an unpaired surrogate becomes U+FFFD, which the field's conversion then
/// keeps (SQL Server keeps such code units too).
struct Utf16Reader<R> {
    input: R,
    /// Transcoded bytes not yet handed out.
    pending: Vec<u8>,
    at: usize,
    /// A high surrogate waiting for its low half, or an odd byte waiting for its pair.
    carry: Vec<u8>,
    started: bool,
}

impl<R: Read> Utf16Reader<R> {
    fn new(input: R) -> Self {
        Utf16Reader { input, pending: Vec::new(), at: 0, carry: Vec::new(), started: false }
    }

    /// Transcodes the next chunk of the input into `pending`; false at the end.
    fn refill(&mut self) -> io::Result<bool> {
        let mut raw = [0u8; 1 << 15];
        let n = self.input.read(&mut raw)?;
        self.pending.clear();
        self.at = 0;
        if n == 0 {
            if !self.carry.is_empty() {
                // A lone trailing byte or surrogate.
                self.carry.clear();
                self.pending.extend_from_slice("\u{FFFD}".as_bytes());
                return Ok(true);
            }
            return Ok(false);
        }
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(&raw[..n]);
        let mut units: Vec<u16> =
            bytes.chunks_exact(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect();
        if !bytes.len().is_multiple_of(2) {
            self.carry.push(bytes[bytes.len() - 1]);
        }
        if !self.started {
            self.started = true;
            if units.first() == Some(&0xFEFF) {
                units.remove(0);
            }
        }
        // A high surrogate at the end waits for the next chunk's low one.
        if units.last().is_some_and(|u| (0xD800..0xDC00).contains(u)) {
            let u = units.pop().unwrap_or_default();
            let mut carried = u.to_le_bytes().to_vec();
            carried.append(&mut self.carry);
            self.carry = carried;
        }
        for c in char::decode_utf16(units) {
            let c = c.unwrap_or('\u{FFFD}');
            let mut buf = [0u8; 4];
            self.pending.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        Ok(true)
    }
}

impl<R: Read> Read for Utf16Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.pending.len() {
            if !self.refill()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn format(quote: Option<u8>) -> Format {
        Format {
            field_terminator: b",".to_vec(),
            row_terminator: b"\n".to_vec(),
            crlf: true,
            quote,
            encoding: Encoding::Utf8,
            wide: false,
        }
    }

    fn file(bytes: &[u8], format: Format) -> DataFile {
        DataFile {
            input: Box::new(io::Cursor::new(bytes.to_vec())),
            format,
            record: Vec::new(),
            row: 0,
            started: false,
        }
    }

    fn all_fields(f: &mut DataFile, n: usize) -> Vec<Vec<Option<String>>> {
        let mut rows = Vec::new();
        while f.next_record().unwrap() {
            let fields = f.fields(n).unwrap();
            rows.push(
                fields
                    .into_iter()
                    .map(|x| x.map(|x| String::from_utf8(x.bytes.into_owned()).unwrap()))
                    .collect(),
            );
        }
        rows
    }

    #[test]
    fn terminators() {
        assert_eq!(terminator("\\t").unwrap(), b"\t");
        assert_eq!(terminator("|\\r\\n").unwrap(), b"|\r\n");
        assert_eq!(terminator("0x0a").unwrap(), b"\n");
        assert!(terminator("\\q").is_none());
    }

    #[test]
    fn records_fields_and_crlf() {
        let mut f = file(b"\xEF\xBB\xBF1,a\r\n2,b,c\n3", format(None));
        let rows = all_fields(&mut f, 2);
        let s = |x: &str| Some(x.to_string());
        assert_eq!(rows, vec![vec![s("1"), s("a")], vec![s("2"), s("b,c")], vec![s("3"), None]]);
        assert_eq!(f.row, 3);
    }

    #[test]
    fn csv_quotes_hold_terminators_and_doubled_quotes() {
        let mut f = file(b"1,\"x, \"\"y\"\"\nz\"\n2,\"\"\n", format(Some(b'"')));
        let rows = all_fields(&mut f, 2);
        let s = |x: &str| Some(x.to_string());
        assert_eq!(rows, vec![vec![s("1"), s("x, \"y\"\nz")], vec![s("2"), s("")]]);
        let mut bad = file(b"\"a\"b,c\n", format(Some(b'"')));
        assert!(bad.next_record().unwrap());
        assert_eq!(bad.fields(2).err().unwrap().number, 4879);
    }

    #[test]
    fn widechar_is_transcoded() {
        let text = "\u{FEFF}é,\u{1F600}\n";
        let bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let mut input = Vec::new();
        Utf16Reader::new(io::Cursor::new(bytes)).read_to_end(&mut input).unwrap();
        assert_eq!(String::from_utf8(input).unwrap(), "é,\u{1F600}\n");
    }

    #[test]
    fn code_pages() {
        assert_eq!(decode(b"\x80\xe9", Encoding::Windows1252).unwrap(), "€é");
        assert_eq!(decode(b"\x80", Encoding::Raw).unwrap(), "\u{80}");
        assert!(decode(b"\xff", Encoding::Utf8).is_none());
    }
}
