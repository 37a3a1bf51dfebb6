//! Spill files: rows an operator has no grant for, written to disk and read back once.
//!
//! A spill file lives in the data directory's `spill` folder and is unlinked as soon as it
//! is opened, so the kernel removes it when its descriptor closes: when the operator is done,
//! when an error or a cancel drops it, and when the process ends however it ends. Only a
//! process killed between the create and the unlink leaves a file behind, and the folder is
//! emptied when the instance's query memory is first set up (`grant`). The row encoding is
//! documented in `docs/format/spill.md`.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use walden_engine::types::{
    Date, DateTime, DateTime2, DateTimeOffset, Decimal, Guid, Time, Value, Xml,
};

use crate::exec::execute::grant::QueryMemory;
use crate::exec::SqlError;

/// A sort key and its row, as a sorted run stores them.
pub(crate) type Keyed = (Vec<Value>, Vec<Value>);

/// The buffer of a spill file's writer and of its reader.
const BUFFER_BYTES: usize = 64 << 10;

static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

/// Removes what a previous process left in `dir` (its spill files only).
pub(crate) fn clear_spill_dir(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with("spill-") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// An I/O failure of a spill, as SQL Server reports one of tempdb: 1105 when the disk is
/// full, else 823.
fn io_error(path: &Path, e: &std::io::Error) -> SqlError {
    if e.raw_os_error() == Some(28) {
        return SqlError::with_severity(
            1105,
            17,
            "Could not allocate space for object 'spill' in database 'tempdb' because the 'PRIMARY' filegroup is full. Create disk space by deleting unneeded files, dropping objects in the filegroup, adding additional files to the filegroup, or setting autogrowth on for existing files in the filegroup.",
        );
    }
    SqlError::with_severity(
        823,
        24,
        format!(
            "The operating system returned error {e} to Walden during a write or read of spill file '{}'.",
            path.display()
        ),
    )
}

/// A spill file being written.
pub(crate) struct SpillWriter {
    memory: Arc<QueryMemory>,
    path: PathBuf,
    file: BufWriter<File>,
    rows: u64,
    bytes: u64,
    scratch: Vec<u8>,
}

impl SpillWriter {
    /// A new, empty spill file in the instance's spill folder.
    pub(crate) fn create(memory: &Arc<QueryMemory>) -> Result<SpillWriter, SqlError> {
        let dir = &memory.spill_dir;
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, &e))?;
        let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("spill-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_error(&path, &e))?;
        // From here the file has no name: its descriptor is its only owner.
        std::fs::remove_file(&path).map_err(|e| io_error(&path, &e))?;
        Ok(SpillWriter {
            memory: Arc::clone(memory),
            path,
            file: BufWriter::with_capacity(BUFFER_BYTES, file),
            rows: 0,
            bytes: 0,
            scratch: Vec::new(),
        })
    }

    /// Appends one row.
    pub(crate) fn write(&mut self, row: &[Value]) -> Result<(), SqlError> {
        self.scratch.clear();
        encode_row(row, &mut self.scratch);
        self.file.write_all(&self.scratch).map_err(|e| io_error(&self.path, &e))?;
        self.rows += 1;
        self.bytes += self.scratch.len() as u64;
        Ok(())
    }

    /// Appends a sort key and its row as one record.
    pub(crate) fn write_pair(&mut self, keys: &[Value], row: &[Value]) -> Result<(), SqlError> {
        self.scratch.clear();
        encode_row(keys, &mut self.scratch);
        encode_row(row, &mut self.scratch);
        self.file.write_all(&self.scratch).map_err(|e| io_error(&self.path, &e))?;
        self.rows += 1;
        self.bytes += self.scratch.len() as u64;
        Ok(())
    }

    /// The file, to be read from its start.
    pub(crate) fn finish(self) -> Result<SpillReader, SqlError> {
        let SpillWriter { memory, path, file, rows, bytes, .. } = self;
        memory.spilled_bytes.fetch_add(bytes, Ordering::Relaxed);
        let mut file = file.into_inner().map_err(|e| io_error(&path, e.error()))?;
        file.seek(SeekFrom::Start(0)).map_err(|e| io_error(&path, &e))?;
        Ok(SpillReader { path, file: BufReader::with_capacity(BUFFER_BYTES, file), rows })
    }
}

/// A spill file being read back, row by row.
pub(crate) struct SpillReader {
    path: PathBuf,
    file: BufReader<File>,
    /// Rows not yet read.
    rows: u64,
}

impl SpillReader {
    /// The next row, or None at the end.
    pub(crate) fn next(&mut self) -> Result<Option<Vec<Value>>, SqlError> {
        if self.rows == 0 {
            return Ok(None);
        }
        self.rows -= 1;
        decode_row(&mut self.file).map(Some).map_err(|e| io_error(&self.path, &e))
    }

    /// The next sort key and row written by [`SpillWriter::write_pair`].
    pub(crate) fn next_pair(&mut self) -> Result<Option<Keyed>, SqlError> {
        if self.rows == 0 {
            return Ok(None);
        }
        self.rows -= 1;
        let keys = decode_row(&mut self.file).map_err(|e| io_error(&self.path, &e))?;
        let row = decode_row(&mut self.file).map_err(|e| io_error(&self.path, &e))?;
        Ok(Some((keys, row)))
    }
}

// The value tags of the encoding (docs/format/spill.md).
const NULL: u8 = 0;
const TINYINT: u8 = 1;
const SMALLINT: u8 = 2;
const INT: u8 = 3;
const BIGINT: u8 = 4;
const BIT_FALSE: u8 = 5;
const BIT_TRUE: u8 = 6;
const DECIMAL: u8 = 7;
const FLOAT: u8 = 8;
const REAL: u8 = 9;
const MONEY: u8 = 10;
const STR: u8 = 11;
const NSTR: u8 = 12;
const BINARY: u8 = 13;
const DATE: u8 = 14;
const TIME: u8 = 15;
const DATETIME: u8 = 16;
const DATETIME2: u8 = 17;
const DATETIMEOFFSET: u8 = 18;
const GUID: u8 = 19;
const XML: u8 = 20;

fn put_varint(out: &mut Vec<u8>, mut n: u128) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn put_signed(out: &mut Vec<u8>, n: i128) {
    put_varint(out, ((n << 1) ^ (n >> 127)) as u128);
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u128);
    out.extend_from_slice(bytes);
}

/// Appends a row's encoding: its number of values, then each value as a tag and its payload.
pub(crate) fn encode_row(row: &[Value], out: &mut Vec<u8>) {
    put_varint(out, row.len() as u128);
    for v in row {
        match v {
            Value::Null => out.push(NULL),
            Value::TinyInt(n) => out.extend_from_slice(&[TINYINT, *n]),
            Value::SmallInt(n) => {
                out.push(SMALLINT);
                put_signed(out, i128::from(*n));
            }
            Value::Int(n) => {
                out.push(INT);
                put_signed(out, i128::from(*n));
            }
            Value::BigInt(n) => {
                out.push(BIGINT);
                put_signed(out, i128::from(*n));
            }
            Value::Bit(b) => out.push(if *b { BIT_TRUE } else { BIT_FALSE }),
            Value::Decimal(d) => {
                out.extend_from_slice(&[DECIMAL, d.scale()]);
                put_signed(out, d.mantissa());
            }
            Value::Float(f) => {
                out.push(FLOAT);
                out.extend_from_slice(&f.to_le_bytes());
            }
            Value::Real(f) => {
                out.push(REAL);
                out.extend_from_slice(&f.to_le_bytes());
            }
            Value::Money(n) => {
                out.push(MONEY);
                put_signed(out, i128::from(*n));
            }
            Value::Str(s) => {
                out.push(STR);
                put_bytes(out, s.as_bytes());
            }
            Value::NStr(s) => {
                out.push(NSTR);
                put_bytes(out, s.as_bytes());
            }
            Value::Binary(b) => {
                out.push(BINARY);
                put_bytes(out, b);
            }
            Value::Date(d) => {
                out.push(DATE);
                put_varint(out, u128::from(d.days()));
            }
            Value::Time(t) => {
                out.push(TIME);
                put_varint(out, u128::from(t.ticks()));
            }
            Value::DateTime(d) => {
                out.push(DATETIME);
                put_signed(out, i128::from(d.days()));
                put_varint(out, u128::from(d.ticks()));
            }
            Value::DateTime2(d) => {
                out.push(DATETIME2);
                put_varint(out, u128::from(d.date.days()));
                put_varint(out, u128::from(d.time.ticks()));
            }
            Value::DateTimeOffset(d) => {
                out.push(DATETIMEOFFSET);
                let utc = d.utc();
                put_varint(out, u128::from(utc.date.days()));
                put_varint(out, u128::from(utc.time.ticks()));
                put_signed(out, i128::from(d.offset_minutes()));
            }
            Value::Guid(g) => {
                out.push(GUID);
                out.extend_from_slice(&g.0);
            }
            Value::Xml(x) => {
                out.push(XML);
                put_varint(out, u128::from(x.node()));
                put_bytes(out, x.text().as_bytes());
            }
        }
    }
}

fn corrupt(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("bad spill record: {what}"))
}

fn byte(r: &mut impl Read) -> std::io::Result<u8> {
    let mut b = [0u8; 1];
    r.read_exact(&mut b)?;
    Ok(b[0])
}

fn varint(r: &mut impl Read) -> std::io::Result<u128> {
    let mut n: u128 = 0;
    for shift in (0..128).step_by(7) {
        let b = byte(r)?;
        n |= u128::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(n);
        }
    }
    Err(corrupt("varint"))
}

fn signed(r: &mut impl Read) -> std::io::Result<i128> {
    let z = varint(r)?;
    Ok(((z >> 1) as i128) ^ -((z & 1) as i128))
}

fn narrow<T: TryFrom<i128>>(n: i128) -> std::io::Result<T> {
    T::try_from(n).map_err(|_| corrupt("integer out of range"))
}

fn unsigned<T: TryFrom<u128>>(r: &mut impl Read) -> std::io::Result<T> {
    T::try_from(varint(r)?).map_err(|_| corrupt("integer out of range"))
}

fn bytes(r: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let len: usize = unsigned(r)?;
    let mut b = vec![0u8; len];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn text(r: &mut impl Read) -> std::io::Result<String> {
    String::from_utf8(bytes(r)?).map_err(|_| corrupt("text"))
}

fn fixed<const N: usize>(r: &mut impl Read) -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn datetime2(r: &mut impl Read) -> std::io::Result<DateTime2> {
    let date = Date::from_days(unsigned(r)?).ok_or_else(|| corrupt("date"))?;
    let time = Time::from_ticks(unsigned(r)?).ok_or_else(|| corrupt("time"))?;
    Ok(DateTime2::new(date, time))
}

/// Reads one row written by [`encode_row`].
pub(crate) fn decode_row(r: &mut impl Read) -> std::io::Result<Vec<Value>> {
    let n: usize = unsigned(r)?;
    let mut row = Vec::with_capacity(n);
    for _ in 0..n {
        row.push(match byte(r)? {
            NULL => Value::Null,
            TINYINT => Value::TinyInt(byte(r)?),
            SMALLINT => Value::SmallInt(narrow(signed(r)?)?),
            INT => Value::Int(narrow(signed(r)?)?),
            BIGINT => Value::BigInt(narrow(signed(r)?)?),
            BIT_FALSE => Value::Bit(false),
            BIT_TRUE => Value::Bit(true),
            DECIMAL => {
                let scale = byte(r)?;
                Value::Decimal(Decimal::new(signed(r)?, scale).ok_or_else(|| corrupt("decimal"))?)
            }
            FLOAT => Value::Float(f64::from_le_bytes(fixed(r)?)),
            REAL => Value::Real(f32::from_le_bytes(fixed(r)?)),
            MONEY => Value::Money(narrow(signed(r)?)?),
            STR => Value::Str(text(r)?),
            NSTR => Value::NStr(text(r)?),
            BINARY => Value::Binary(bytes(r)?),
            DATE => Value::Date(Date::from_days(unsigned(r)?).ok_or_else(|| corrupt("date"))?),
            TIME => Value::Time(Time::from_ticks(unsigned(r)?).ok_or_else(|| corrupt("time"))?),
            DATETIME => {
                let days = narrow(signed(r)?)?;
                let ticks = unsigned(r)?;
                Value::DateTime(
                    DateTime::from_parts(days, ticks).ok_or_else(|| corrupt("datetime"))?,
                )
            }
            DATETIME2 => Value::DateTime2(datetime2(r)?),
            DATETIMEOFFSET => {
                let utc = datetime2(r)?;
                let offset = narrow(signed(r)?)?;
                Value::DateTimeOffset(
                    DateTimeOffset::from_utc(utc, offset)
                        .ok_or_else(|| corrupt("datetimeoffset"))?,
                )
            }
            GUID => Value::Guid(Guid(fixed(r)?)),
            XML => {
                let node = unsigned(r)?;
                Value::Xml(Xml::node_of(text(r)?.into(), node))
            }
            _ => return Err(corrupt("tag")),
        });
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_value_comes_back_as_written() {
        let row = vec![
            Value::Null,
            Value::TinyInt(200),
            Value::SmallInt(-300),
            Value::Int(i32::MIN),
            Value::BigInt(i64::MAX),
            Value::Bit(true),
            Value::Bit(false),
            Value::Decimal(Decimal::new(-12345678901234567890123456789, 10).unwrap()),
            Value::Float(-2.5e300),
            Value::Real(1.25),
            Value::Money(-99_990_000),
            Value::Str("abc  ".into()),
            Value::NStr("é€ ".into()),
            Value::Binary(vec![0, 255, 7]),
            Value::Date(Date::from_ymd(2024, 2, 29).unwrap()),
            Value::Time(Time::from_hms(23, 59, 59, 9_999_999).unwrap()),
            Value::DateTime(DateTime::from_parts(-53690, 25_919_999).unwrap()),
            Value::DateTime2(DateTime2::new(Date::MAX, Time::MIDNIGHT)),
            Value::DateTimeOffset(
                DateTimeOffset::from_utc(DateTime2::new(Date::MIN, Time::MIDNIGHT), 840).unwrap(),
            ),
            Value::Guid(Guid([9; 16])),
            Value::Xml(Xml::new("<a>1</a>")),
        ];
        let mut bytes = Vec::new();
        encode_row(&row, &mut bytes);
        encode_row(&[], &mut bytes);
        let mut r = bytes.as_slice();
        let back = decode_row(&mut r).unwrap();
        assert_eq!(format!("{back:?}"), format!("{row:?}"));
        assert!(decode_row(&mut r).unwrap().is_empty());
        assert!(r.is_empty());
    }
}
