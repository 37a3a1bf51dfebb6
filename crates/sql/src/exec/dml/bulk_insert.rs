//! `BULK INSERT table FROM 'file'` and `OPENROWSET(BULK 'file', SINGLE_...)`: rows and values
//! from files on the server's machine (a path relative to the server's working directory, or
//! absolute).
//!
//! `BULK INSERT` reads its data file as a stream ([`data_file`](crate::exec::dml::data_file)) and hands
//! the rows to the same insert loop as the TDS bulk load (`Run::load_rows`, `exec::bulk`), so
//! the two cost the same per row and honour the same options. What is particular to a file:
//!
//! * Each record has a field for every column of the table, in order; a computed column's
//!   field is read and ignored, as SQL Server ignores it. A field converts to its column's type
//!   here, before the row is inserted: a field that does not is SQL Server's error 4864
//!   (4863 when it is too long, 4866 when the record has too few fields), naming the file's
//!   row and the column. Such a row is skipped and counted; more than `MAXERRORS` (10 by
//!   default) of them end the load with 4865. `ERRORFILE` receives each skipped record, and
//!   `ERRORFILE.Error.Txt` the error of each.
//! * An error of the insert itself (a duplicate key, a NULL for a NOT NULL column, a CHECK or
//!   FOREIGN KEY constraint with `CHECK_CONSTRAINTS`) ends the load, as in SQL Server.
//! * `BATCHSIZE = n` commits every `n` rows in an autocommit transaction of their own: a
//!   failure then undoes the running batch only. Inside a user transaction nothing commits
//!   early and a failure undoes the whole statement.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};

use walden_engine::types::{Len, SqlType, Value, MAX_LOB_LEN};

use crate::ast::{BulkInsert, Ident, SingleKind, TableTarget};
use crate::exec::dml::bulk::{BulkRows, BulkStop};
use crate::exec::dml::data_file::{self, DataFile, Encoding, Format};
use crate::exec::eval::Col;
use crate::exec::execute::query::Rows;
use crate::exec::scalar::coerce;
use crate::exec::session::{Run, Step};
use crate::exec::SqlError;

/// SQL Server's default `MAXERRORS`.
const DEFAULT_MAX_ERRORS: u64 = 10;

impl Run<'_> {
    /// `BULK INSERT`: the number of rows inserted.
    pub(crate) fn bulk_insert(&mut self, st: &BulkInsert) -> Step<u64> {
        let o = &st.options;
        if o.format_file.is_some() {
            return Err(unsupported("BULK INSERT with FORMATFILE").into());
        }
        let format = file_format(st)?;
        if let (Some(first), Some(last)) = (o.first_row, o.last_row) {
            if last > 0 && first > last {
                return Err(SqlError::new(
                    4880,
                    "Cannot bulk load. When you use the FIRSTROW and LASTROW parameters, the value for FIRSTROW cannot be greater than the value for LASTROW.",
                )
                .into());
            }
        }
        if o.batch_size == Some(0) {
            return Err(SqlError::new(
                4804,
                "The value of the BATCHSIZE option must be greater than 0.",
            )
            .into());
        }
        let mut t = self.target(&TableTarget::Table(st.table.clone()), &[])?;
        let targets: Vec<usize> =
            (0..t.def.columns.len()).filter(|&c| t.def.columns[c].computed.is_none()).collect();
        let mut order = Vec::with_capacity(o.load.order.len());
        for (c, desc) in &o.load.order {
            let at = t.def.column(&c.value).ok_or_else(|| SqlError::invalid_column(&c.value))?;
            if let Some(p) = targets.iter().position(|&x| x == at) {
                order.push((p, *desc));
            }
        }
        let file = DataFile::open(&st.file, format).map_err(|_| missing_file(&st.file))?;
        let errors = match &o.error_file {
            Some(path) => Some(ErrorFile::check(path)?),
            None => None,
        };
        let mut source = FileRows {
            file,
            def_columns: t.def.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
            all_columns: t.def.columns.iter().map(|c| c.computed.is_none()).collect(),
            first_row: o.first_row.unwrap_or(1).max(1),
            last_row: o.last_row.filter(|&n| n > 0),
            max_errors: o.max_errors.unwrap_or(DEFAULT_MAX_ERRORS),
            errors: 0,
            error_file: errors,
            messages: Vec::new(),
            batch_left: None,
            at_end: false,
        };
        let mut total = 0u64;
        loop {
            source.batch_left = o.batch_size;
            total += self.load_rows(&t, &targets, &o.load, &order, &mut source)?;
            if source.at_end {
                break;
            }
            // The batch is done: it commits on its own (nothing happens in a user
            // transaction), and the next one starts a new autocommit transaction.
            self.finish_autocommit(true);
            // Looked up again, as each INSERT BULK does: a trigger may have changed it.
            t = self.target(&TableTarget::Table(st.table.clone()), &[])?;
            if t.def.columns.len() != source.def_columns.len() {
                return Err(SqlError::new(
                    4819,
                    "Cannot bulk load. The table changed while the data file was loaded.",
                )
                .into());
            }
        }
        Ok(total)
    }

    /// `OPENROWSET(BULK 'file', SINGLE_BLOB | SINGLE_CLOB | SINGLE_NCLOB) AS alias`: one row,
    /// one column `BulkColumn` holding the whole file.
    pub(crate) fn openrowset_bulk(
        &mut self,
        file: &str,
        kind: SingleKind,
        alias: Option<&Ident>,
        columns: &[Ident],
    ) -> Result<Rows, SqlError> {
        let Some(alias) = alias else {
            return Err(SqlError::new(
                491,
                "A correlation name must be specified for the bulk rowset in the from clause.",
            ));
        };
        let bytes = read_whole(file)?;
        let (value, ty) = match kind {
            SingleKind::Blob => (Value::Binary(bytes), SqlType::VarBinary(Len::Max)),
            SingleKind::Clob => {
                let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(&bytes);
                let text = match data_file::decode(bytes, Encoding::Utf8) {
                    Some(text) => text.into_owned(),
                    None => data_file::decode(bytes, Encoding::Windows1252)
                        .map(Cow::into_owned)
                        .unwrap_or_default(),
                };
                (Value::Str(text), SqlType::VarChar(Len::Max))
            }
            SingleKind::Nclob => {
                if !bytes.len().is_multiple_of(2) {
                    return Err(SqlError::new(4809, "SINGLE_NCLOB requires a UNICODE (widechar) input file. The file specified is not Unicode."));
                }
                let mut units: Vec<u16> =
                    bytes.chunks_exact(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect();
                if units.first() == Some(&0xFEFF) {
                    units.remove(0);
                }
                let text: String =
                    char::decode_utf16(units).map(|c| c.unwrap_or('\u{FFFD}')).collect();
                (Value::NStr(text), SqlType::NVarChar(Len::Max))
            }
        };
        let name = columns.first().map_or("BulkColumn", |c| c.value.as_str());
        Ok(Rows { cols: vec![Col::new(Some(&alias.value), name, ty)], rows: vec![vec![value]] })
    }
}

/// The data file's shape from the statement's options, with SQL Server's errors for values
/// it does not take.
fn file_format(st: &BulkInsert) -> Result<Format, SqlError> {
    let o = &st.options;
    let wide = match o.data_file_type.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("char") => false,
        Some("widechar") => true,
        Some("native") | Some("widenative") => {
            return Err(unsupported("BULK INSERT of a native-format data file"));
        }
        Some(other) => return Err(bad_option("DATAFILETYPE", other)),
    };
    let encoding = match o.code_page.as_deref().map(str::to_ascii_uppercase).as_deref() {
        // A Walden server's text is UTF-8, and so is what its tools write.
        None | Some("OEM") | Some("65001") => Encoding::Utf8,
        Some("ACP") | Some("1252") => Encoding::Windows1252,
        Some("RAW") => Encoding::Raw,
        Some(other) => {
            return Err(SqlError::new(
                2775,
                format!("The code page {other} is not supported by the server."),
            ))
        }
    };
    let csv = match o.format.as_deref() {
        None => false,
        Some(f) if f.eq_ignore_ascii_case("CSV") => true,
        Some(other) => return Err(bad_option("FORMAT", other)),
    };
    let quote = match (&o.field_quote, csv) {
        (Some(q), _) if q.len() != 1 => return Err(bad_option("FIELDQUOTE", q)),
        (Some(q), true) => Some(q.as_bytes()[0]),
        (None, true) => Some(b'"'),
        (_, false) => None,
    };
    let field = o.field_terminator.as_deref().unwrap_or("\\t");
    let row = o.row_terminator.as_deref().unwrap_or("\\n");
    let field_terminator = data_file::terminator(field)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad_option("FIELDTERMINATOR", field))?;
    let row_terminator = data_file::terminator(row)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad_option("ROWTERMINATOR", row))?;
    Ok(Format {
        crlf: row == "\\n" || row == "\n",
        field_terminator,
        row_terminator,
        quote,
        encoding,
        wide,
    })
}

/// SQL Server's error for an option value it does not know.
fn bad_option(option: &str, value: &str) -> SqlError {
    SqlError::new(
        4842,
        format!("Invalid value '{value}' specified for the {option} option of BULK INSERT."),
    )
}

/// Error 40514 for a form Walden does not have.
fn unsupported(what: &str) -> SqlError {
    SqlError::new(40514, format!("'{what}' is not supported in this version of SQL Server."))
}

/// Error 4860: the file cannot be read.
fn missing_file(path: &str) -> SqlError {
    SqlError::new(
        4860,
        format!("Cannot bulk load. The file \"{path}\" does not exist or you don't have file access rights."),
    )
}

/// The whole of `path`, for `SINGLE_*`: one value, at most a MAX value's size.
fn read_whole(path: &str) -> Result<Vec<u8>, SqlError> {
    let file = File::open(path).map_err(|_| missing_file(path))?;
    let meta = file.metadata().map_err(|_| missing_file(path))?;
    if meta.is_dir() {
        return Err(missing_file(path));
    }
    if meta.len() > MAX_LOB_LEN as u64 {
        return Err(SqlError::new(
            7119,
            format!("Attempting to grow LOB beyond maximum allowed size of {MAX_LOB_LEN} bytes."),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_LOB_LEN as u64 + 1).read_to_end(&mut bytes).map_err(|_| missing_file(path))?;
    if bytes.len() > MAX_LOB_LEN {
        return Err(SqlError::new(
            7119,
            format!("Attempting to grow LOB beyond maximum allowed size of {MAX_LOB_LEN} bytes."),
        ));
    }
    Ok(bytes)
}

/// `ERRORFILE`: the rejected records, and beside it `name.Error.Txt` with why. Both are
/// created at the first rejected row; either existing already is error 4861 before anything
/// is loaded, as in SQL Server.
struct ErrorFile {
    path: String,
    open: Option<(File, File)>,
}

impl ErrorFile {
    fn check(path: &str) -> Result<ErrorFile, SqlError> {
        for p in [path.to_string(), format!("{path}.Error.Txt")] {
            if std::fs::symlink_metadata(&p).is_ok() {
                return Err(SqlError::new(
                    4861,
                    format!("Cannot bulk load because the file \"{p}\" could not be opened. Operating system error code 80(The file exists.)."),
                ));
            }
        }
        Ok(ErrorFile { path: path.to_string(), open: None })
    }

    /// Appends a rejected record and its error.
    fn reject(&mut self, record: &[u8], terminator: &[u8], error: &SqlError) -> io::Result<()> {
        if self.open.is_none() {
            let create = |p: &str| OpenOptions::new().write(true).create_new(true).open(p);
            self.open = Some((create(&self.path)?, create(&format!("{}.Error.Txt", self.path))?));
        }
        if let Some((rows, why)) = self.open.as_mut() {
            rows.write_all(record)?;
            rows.write_all(terminator)?;
            writeln!(why, "Msg {}: {}", error.number, error.message)?;
        }
        Ok(())
    }
}

/// The rows of a data file for [`Run::load_rows`]: each record's fields converted to the
/// loaded columns' types; bad records reported, counted and skipped.
struct FileRows {
    file: DataFile,
    /// Every column of the table: its name and type.
    def_columns: Vec<(String, SqlType)>,
    /// Per column of the table: whether its field is loaded (false for computed columns).
    all_columns: Vec<bool>,
    first_row: u64,
    last_row: Option<u64>,
    max_errors: u64,
    errors: u64,
    error_file: Option<ErrorFile>,
    messages: Vec<SqlError>,
    /// Rows left in the running batch (`BATCHSIZE`); `None` for no limit.
    batch_left: Option<u64>,
    /// The file's last row was read.
    at_end: bool,
}

impl FileRows {
    /// The current record's values into `values` (empty), or the error that rejects it.
    fn values(&self, values: &mut Vec<Value>) -> Result<(), SqlError> {
        let row = self.file.row;
        let fields = self.file.fields(self.def_columns.len())?;
        for (c, field) in fields.into_iter().enumerate() {
            let (name, ty) = &self.def_columns[c];
            let Some(field) = field else {
                return Err(SqlError::new(
                    4866,
                    format!("The bulk load failed. The column is too long in the data file for row {row}, column {}. Verify that the field terminator and row terminator are specified correctly.", c + 1),
                ));
            };
            if !self.all_columns[c] {
                continue;
            }
            let conversion = |truncation: bool| {
                let what = if truncation {
                    "truncation"
                } else {
                    "type mismatch or invalid character for the specified codepage"
                };
                SqlError::new(
                    if truncation { 4863 } else { 4864 },
                    format!(
                        "Bulk load data conversion error ({what}) for row {row}, column {} ({name}).",
                        c + 1
                    ),
                )
            };
            if field.bytes.is_empty() && !field.quoted {
                values.push(Value::Null);
                continue;
            }
            let text = self.file.text(&field.bytes).ok_or_else(|| conversion(false))?;
            let value = match ty {
                SqlType::Binary(_) | SqlType::VarBinary(_) => {
                    Value::Binary(from_hex(&text).ok_or_else(|| conversion(false))?)
                }
                _ => Value::NStr(text.into_owned()),
            };
            let value = coerce(value, *ty, false)
                .map_err(|e| conversion(matches!(e.number, 2628 | 8152)))?;
            values.push(value);
        }
        Ok(())
    }

    /// Counts and reports a rejected record; error 4865 once there are more than allowed.
    fn reject(&mut self, error: SqlError) -> Result<(), SqlError> {
        self.errors += 1;
        if let Some(f) = self.error_file.as_mut() {
            let terminator = b"\r\n";
            if let Err(e) = f.reject(self.file.record(), terminator, &error) {
                return Err(SqlError::new(
                    4861,
                    format!("Cannot bulk load because the file \"{}\" could not be opened. Operating system error: {e}.", f.path),
                ));
            }
        }
        self.messages.push(error);
        if self.errors > self.max_errors {
            return Err(SqlError::new(
                4865,
                format!(
                    "Cannot bulk load because the maximum number of errors ({}) was exceeded.",
                    self.max_errors
                ),
            ));
        }
        Ok(())
    }
}

impl BulkRows for FileRows {
    fn next_row(&mut self, row: &mut Vec<Value>) -> Result<bool, BulkStop> {
        if self.batch_left == Some(0) {
            return Ok(false);
        }
        loop {
            if self.last_row.is_some_and(|last| self.file.row >= last) {
                self.at_end = true;
                return Ok(false);
            }
            let more = self.file.next_record().map_err(|e| {
                BulkStop::Error(SqlError::new(
                    4861,
                    format!("Cannot bulk load because the file could not be read. Operating system error: {e}."),
                ))
            })?;
            if !more {
                self.at_end = true;
                return Ok(false);
            }
            if self.file.row < self.first_row {
                continue;
            }
            row.clear();
            match self.values(row) {
                Ok(()) => {
                    if let Some(left) = self.batch_left.as_mut() {
                        *left -= 1;
                    }
                    return Ok(true);
                }
                Err(e) => self.reject(e).map_err(BulkStop::Error)?,
            }
        }
    }

    fn take_messages(&mut self) -> Vec<SqlError> {
        std::mem::take(&mut self.messages)
    }
}

/// Hexadecimal digits (with or without `0x`) as bytes: how a character data file holds a
/// binary value.
fn from_hex(text: &str) -> Option<Vec<u8>> {
    let digits = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).unwrap_or(text);
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(digits.get(i..i + 2)?, 16).ok())
        .collect()
}
