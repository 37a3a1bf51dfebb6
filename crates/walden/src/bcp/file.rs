//! bcp's character-mode file format: records ended by the row terminator, fields separated by
//! the field terminator, each field a value's text (see the module documentation of `bcp`).

use std::io::{self, BufRead};

use walden_engine::types::{SqlType, Value};
use walden_sql::exec::scalar::coerce;

/// A bcp terminator with its escapes undone, as BULK INSERT reads its own.
pub(super) fn unescape(text: &str) -> Result<Vec<u8>, String> {
    walden_sql::exec::bulk_terminator(text)
        .ok_or_else(|| format!("unknown escape in terminator '{text}'"))
}

/// Reads records ended by a terminator from a file, without holding more than one.
pub(super) struct Records<R: BufRead> {
    pub(super) input: R,
    pub(super) terminator: Vec<u8>,
    pub(super) buf: Vec<u8>,
}

impl<R: BufRead> Records<R> {
    /// The next record without its terminator; the file's last record may lack one.
    pub(super) fn next_record(&mut self) -> io::Result<Option<Vec<u8>>> {
        self.buf.clear();
        let last = *self.terminator.last().unwrap_or(&b'\n');
        loop {
            let n = self.input.read_until(last, &mut self.buf)?;
            if n == 0 {
                return Ok((!self.buf.is_empty()).then(|| std::mem::take(&mut self.buf)));
            }
            if self.buf.ends_with(&self.terminator) {
                self.buf.truncate(self.buf.len() - self.terminator.len());
                return Ok(Some(std::mem::take(&mut self.buf)));
            }
        }
    }
}

/// `text` split at every occurrence of `separator`.
pub(super) fn split<'t>(text: &'t [u8], separator: &[u8]) -> Vec<&'t [u8]> {
    let mut fields = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + separator.len() <= text.len() {
        if &text[i..i + separator.len()] == separator {
            fields.push(&text[start..i]);
            i += separator.len();
            start = i;
        } else {
            i += 1;
        }
    }
    fields.push(&text[start..]);
    fields
}

/// A field of the file as a value of type `ty` (see the module documentation).
pub(super) fn field_value(field: &[u8], ty: SqlType) -> Result<Value, String> {
    if field.is_empty() {
        return Ok(Value::Null);
    }
    let text = std::str::from_utf8(field).map_err(|_| "the field is not UTF-8".to_string())?;
    let text = if text == "\0" { "" } else { text };
    let value = match ty {
        SqlType::Binary(_) | SqlType::VarBinary(_) => Value::Binary(from_hex(text)?),
        _ => Value::NStr(text.to_string()),
    };
    coerce(value, ty, false).map_err(|e| e.message)
}

pub(super) fn from_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits = text.strip_prefix("0x").unwrap_or(text);
    if !digits.len().is_multiple_of(2) {
        return Err(format!("'{text}' is not hexadecimal binary data"));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&digits[i..i + 2], 16)
                .map_err(|_| format!("'{text}' is not hexadecimal binary data"))
        })
        .collect()
}

/// `value` as a field of the file.
pub(super) fn field_text(value: &Value, ty: SqlType) -> String {
    match (value, ty) {
        (Value::Null, _) => String::new(),
        (Value::Str(s) | Value::NStr(s), _) if s.is_empty() => "\0".into(),
        (Value::Binary(b), _) => b.iter().map(|x| format!("{x:02X}")).collect(),
        (Value::Time(t), SqlType::Time(s)) => t.display(s).to_string(),
        (Value::DateTime2(t), SqlType::DateTime2(s)) => t.display(s).to_string(),
        (Value::DateTimeOffset(t), SqlType::DateTimeOffset(s)) => t.display(s).to_string(),
        (v, _) => v.to_string(),
    }
}

/// The values of one record, a field per column.
pub(super) fn record_values(
    record: &[u8],
    field: &[u8],
    types: &[SqlType],
) -> Result<Vec<Value>, String> {
    let fields = split(record, field);
    if fields.len() != types.len() {
        return Err(format!("{} fields where the table has {} columns", fields.len(), types.len()));
    }
    fields
        .iter()
        .zip(types)
        .enumerate()
        .map(|(i, (f, ty))| field_value(f, *ty).map_err(|e| format!("column {}: {e}", i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn terminators_and_fields() {
        assert_eq!(unescape("\\t").unwrap(), b"\t");
        assert_eq!(unescape("|\\r\\n").unwrap(), b"|\r\n");
        assert!(unescape("\\q").is_err());
        assert_eq!(split(b"a||b||", b"||"), vec![&b"a"[..], b"b", b""]);
        let mut r = Records {
            input: &b"1,x\r\n2,y\r\n3"[..],
            terminator: b"\r\n".to_vec(),
            buf: Vec::new(),
        };
        let mut got = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            got.push(rec);
        }
        assert_eq!(got, vec![b"1,x".to_vec(), b"2,y".to_vec(), b"3".to_vec()]);
    }

    #[test]
    fn fields_round_trip_through_text() {
        let cases = [
            (Value::Null, SqlType::Int),
            (Value::NStr(String::new()), SqlType::NVarChar(walden_engine::types::Len::N(5))),
            (Value::Binary(vec![0xde, 0xad]), SqlType::VarBinary(walden_engine::types::Len::N(5))),
            (Value::Int(-7), SqlType::Int),
        ];
        for (v, ty) in cases {
            let text = field_text(&v, ty);
            assert_eq!(field_value(text.as_bytes(), ty).unwrap(), v, "{text:?}");
        }
        assert!(field_value(b"abc", SqlType::Int).is_err());
    }
}
