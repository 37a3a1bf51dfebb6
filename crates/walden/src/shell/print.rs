//! What the shell prints: result sets, row counts and messages, in sqlcmd's layout (`text`)
//! or as CSV or JSON lines for programs.
//!
//! The text layout is sqlcmd's: a header of column names padded to each column's display
//! width (which comes from the column's type, so rows can be printed as they arrive), a line
//! of dashes, the rows (numbers right-aligned), a blank line, and `(N rows affected)`. Errors
//! are `Msg n, Level l, State s, Server walden, Line x` and the text on the next line, written
//! to the output like sqlcmd does unless `-r` sends them to stderr.

use std::io::{self, Write};

use walden_engine::types::{Len, SqlType, Value};
use walden_sql::exec::{ColumnInfo, Message, Output};

/// The server name in error headers.
const SERVER_NAME: &str = "walden";

/// The display width of `(MAX)` columns: sqlcmd's default `-y`.
const MAX_TYPE_WIDTH: usize = 256;

/// Output formats (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// sqlcmd's columns.
    #[default]
    Text,
    /// RFC 4180 CSV, a header line per result set.
    Csv,
    /// One JSON object per result set, one per line.
    Json,
}

/// Which messages `-r` sends to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Redirect {
    /// None: everything goes to the output (sqlcmd's default).
    #[default]
    Nothing,
    /// Errors (severity 11 and up): `-r 0`.
    Errors,
    /// Every message, `PRINT` included: `-r 1`.
    AllMessages,
}

/// How to print.
#[derive(Debug, Clone)]
pub struct Style {
    /// The format.
    pub format: Format,
    /// `-h`: `None` for no headers (`-h -1`), `Some(0)` for one header per result set,
    /// `Some(n)` to repeat it every n rows.
    pub headers: Option<u32>,
    /// `-s`; `None` for the format's own (a space for text, a comma for CSV).
    pub separator: Option<String>,
    /// `-W`: no padding, no trailing spaces.
    pub trim: bool,
    /// `-r`.
    pub redirect: Redirect,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            format: Format::Text,
            headers: Some(0),
            separator: None,
            trim: false,
            redirect: Redirect::Nothing,
        }
    }
}

/// A column of the result set being printed.
#[derive(Debug)]
struct Column {
    name: String,
    ty: SqlType,
    width: usize,
    right: bool,
}

/// Prints what batches produce; also the shell's own lines (echo, `:list`, its errors).
pub struct Printer {
    style: Style,
    out: Box<dyn Write>,
    err: Box<dyn Write>,
    columns: Vec<Column>,
    rows: u64,
    /// Whether the last line written to `out` was blank, so a row count after a result set
    /// does not get a second blank line before it.
    last_blank: bool,
    /// Whether a JSON result set has had a row, for the commas between rows.
    json_has_row: bool,
    /// Whether an error (severity over 10) arrived since [`Printer::take_error`].
    error: bool,
    /// The first value of the first row of the latest result set, for `EXIT(query)`.
    first_value: Option<Value>,
    /// The first failed write: later writes are skipped and the shell stops.
    write_error: Option<io::Error>,
}

impl std::fmt::Debug for Printer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Printer").field("style", &self.style).finish_non_exhaustive()
    }
}

impl Printer {
    /// A printer writing results to `out` and diagnostics to `err`.
    pub fn new(style: Style, out: Box<dyn Write>, err: Box<dyn Write>) -> Printer {
        Printer {
            style,
            out,
            err,
            columns: Vec::new(),
            rows: 0,
            last_blank: false,
            json_has_row: false,
            error: false,
            first_value: None,
            write_error: None,
        }
    }

    /// Whether an error arrived since the last call; clears the flag.
    pub fn take_error(&mut self) -> bool {
        std::mem::take(&mut self.error)
    }

    /// The first value of the first row of the latest result set, if it had a row.
    pub fn first_value(&self) -> Option<&Value> {
        self.first_value.as_ref()
    }

    /// The first write that failed, if any.
    pub fn write_error(&self) -> Option<&io::Error> {
        self.write_error.as_ref()
    }

    /// A shell error (`Sqlcmd: Error: ...`), always to stderr: it is about the script, not
    /// the data.
    pub fn shell_error(&mut self, text: &str) {
        let line = format!("Sqlcmd: Error: {text}\n");
        self.write_err(&line);
    }

    /// A line for the person at the prompt (`:list`, `:help`, echoed batches): to the output
    /// in text format, to stderr otherwise so CSV and JSON stay parseable.
    pub fn console(&mut self, text: &str) {
        let mut line = text.to_string();
        if !line.ends_with('\n') {
            line.push('\n');
        }
        if self.style.format == Format::Text {
            self.write_out(&line);
            self.last_blank = text.is_empty();
        } else {
            self.write_err(&line);
        }
    }

    /// Flushes both streams.
    pub fn flush(&mut self) {
        if self.write_error.is_some() {
            return;
        }
        if let Err(e) = self.out.flush().and_then(|()| self.err.flush()) {
            self.write_error = Some(e);
        }
    }

    fn write_out(&mut self, text: &str) {
        if self.write_error.is_none() {
            if let Err(e) = self.out.write_all(text.as_bytes()) {
                self.write_error = Some(e);
            }
        }
    }

    /// Writes to stderr after flushing the output, so that a terminal shows both in order.
    fn write_err(&mut self, text: &str) {
        if self.write_error.is_none() {
            if let Err(e) = self.out.flush().and_then(|()| self.err.write_all(text.as_bytes())) {
                self.write_error = Some(e);
            }
        }
    }

    fn separator(&self) -> &str {
        match (&self.style.separator, self.style.format) {
            (Some(s), _) => s,
            (None, Format::Csv) => ",",
            (None, _) => " ",
        }
    }

    fn text_header(&mut self) {
        let sep = self.separator().to_string();
        let trim = self.style.trim;
        let names: Vec<String> = self
            .columns
            .iter()
            .map(|c| if trim { c.name.clone() } else { pad(&c.name, c.width, false) })
            .collect();
        let dashes: Vec<String> = self
            .columns
            .iter()
            .map(|c| "-".repeat(if trim { c.name.chars().count() } else { c.width }))
            .collect();
        let text = format!("{}\n{}\n", names.join(&sep), dashes.join(&sep));
        self.write_out(&text);
    }

    fn text_row(&mut self, values: &[Value]) {
        if let Some(every) = self.style.headers.filter(|n| *n > 0) {
            if self.rows > 0 && self.rows.is_multiple_of(u64::from(every)) {
                self.write_out("\n");
                self.text_header();
            }
        }
        let trim = self.style.trim;
        let cells: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, value)| match self.columns.get(i) {
                Some(c) => {
                    let text = render(value, &c.ty);
                    if trim {
                        text.trim_end().to_string()
                    } else {
                        pad(&text, c.width, c.right)
                    }
                }
                None => value.to_string(),
            })
            .collect();
        let line = format!("{}\n", cells.join(self.separator()));
        self.write_out(&line);
    }

    fn csv_line(&mut self, fields: impl Iterator<Item = Option<String>>) {
        let sep = self.separator().to_string();
        let fields: Vec<String> =
            fields.map(|f| f.map(|f| csv_field(&f, &sep)).unwrap_or_default()).collect();
        let line = format!("{}\r\n", fields.join(&sep));
        self.write_out(&line);
    }
}

impl Output for Printer {
    fn result_set(&mut self, columns: &[ColumnInfo]) {
        self.columns = columns
            .iter()
            .map(|c| Column {
                name: c.name.clone(),
                ty: c.ty,
                width: column_width(c),
                right: c.ty.is_numeric(),
            })
            .collect();
        self.rows = 0;
        self.first_value = None;
        match self.style.format {
            Format::Text => {
                if self.style.headers.is_some() {
                    self.text_header();
                }
            }
            Format::Csv => {
                if self.style.headers.is_some() {
                    let names: Vec<Option<String>> =
                        columns.iter().map(|c| Some(c.name.clone())).collect();
                    self.csv_line(names.into_iter());
                }
            }
            Format::Json => {
                let names: Vec<String> = columns.iter().map(|c| json_string(&c.name)).collect();
                let text = format!("{{\"columns\":[{}],\"rows\":[", names.join(","));
                self.write_out(&text);
                self.json_has_row = false;
            }
        }
        self.last_blank = false;
    }

    fn row(&mut self, values: &[Value]) {
        if self.rows == 0 {
            self.first_value = values.first().cloned();
        }
        match self.style.format {
            Format::Text => self.text_row(values),
            Format::Csv => {
                let types: Vec<Option<SqlType>> =
                    (0..values.len()).map(|i| self.columns.get(i).map(|c| c.ty)).collect();
                let fields: Vec<Option<String>> = values
                    .iter()
                    .zip(types)
                    .map(|(v, ty)| match (v, ty) {
                        (Value::Null, _) => None,
                        (v, Some(ty)) => Some(render(v, &ty)),
                        (v, None) => Some(v.to_string()),
                    })
                    .collect();
                self.csv_line(fields.into_iter());
            }
            Format::Json => {
                let cells: Vec<String> = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| json_value(v, self.columns.get(i).map(|c| &c.ty)))
                    .collect();
                let comma = if self.json_has_row { "," } else { "" };
                let text = format!("{comma}[{}]", cells.join(","));
                self.write_out(&text);
                self.json_has_row = true;
            }
        }
        self.rows += 1;
    }

    fn result_end(&mut self, _rows: u64) {
        match self.style.format {
            Format::Text => {
                self.write_out("\n");
                self.last_blank = true;
            }
            Format::Csv => {}
            Format::Json => self.write_out("]}\n"),
        }
        self.columns.clear();
    }

    fn message(&mut self, message: &Message) {
        let is_error = !message.is_info();
        if is_error {
            self.error = true;
        }
        let text = if is_error { error_text(message) } else { message.message.clone() };
        let to_stderr = self.style.format != Format::Text
            || match self.style.redirect {
                Redirect::Nothing => false,
                Redirect::Errors => is_error,
                Redirect::AllMessages => true,
            };
        let line = format!("{text}\n");
        if to_stderr {
            self.write_err(&line);
        } else {
            self.write_out(&line);
            self.last_blank = false;
            // Messages show at once (`RAISERROR ... WITH NOWAIT` is for progress reports).
            if let Err(e) = self.out.flush() {
                self.write_error.get_or_insert(e);
            }
        }
    }

    fn done(&mut self, rows: Option<u64>) {
        let Some(n) = rows else { return };
        if self.style.format != Format::Text {
            return;
        }
        let blank = if self.last_blank { "" } else { "\n" };
        let noun = if n == 1 { "row" } else { "rows" };
        let text = format!("{blank}({n} {noun} affected)\n");
        self.write_out(&text);
        self.last_blank = false;
    }
}

/// `Msg 8134, Level 16, State 1, Server walden, Line 1` and the message on the next line.
pub fn error_text(m: &Message) -> String {
    let procedure = m.procedure.as_ref().map(|p| format!("Procedure {p}, ")).unwrap_or_default();
    format!(
        "Msg {}, Level {}, State {}, Server {SERVER_NAME}, {procedure}Line {}\n{}",
        m.number, m.severity, m.state, m.line, m.message
    )
}

/// How wide sqlcmd prints a column of this type, before the name and NULL widen it.
pub fn type_width(ty: &SqlType) -> usize {
    // Fractional seconds take a point and the digits; none at scale 0.
    let fraction = |s: u8| if s == 0 { 0 } else { usize::from(s) + 1 };
    match ty {
        SqlType::TinyInt => 3,
        SqlType::SmallInt => 6,
        SqlType::Int => 11,
        SqlType::BigInt => 20,
        SqlType::Bit => 1,
        // The digits, a sign and a point.
        SqlType::Decimal { precision, .. } => usize::from(*precision) + 2,
        SqlType::Float => 24,
        SqlType::Real => 14,
        SqlType::Money => 21,
        SqlType::Char(n) | SqlType::NChar(n) => usize::from(*n),
        SqlType::VarChar(Len::N(n)) | SqlType::NVarChar(Len::N(n)) => usize::from(*n),
        SqlType::Binary(n) | SqlType::VarBinary(Len::N(n)) => 2 + 2 * usize::from(*n),
        SqlType::VarChar(Len::Max) | SqlType::NVarChar(Len::Max) | SqlType::VarBinary(Len::Max) => {
            MAX_TYPE_WIDTH
        }
        SqlType::Date => 10,
        SqlType::Time(s) => 8 + fraction(*s),
        SqlType::DateTime => 23,
        SqlType::DateTime2(s) => 19 + fraction(*s),
        // The local date and time, a space and `+hh:mm`.
        SqlType::DateTimeOffset(s) => 26 + fraction(*s),
        SqlType::UniqueIdentifier => 36,
        SqlType::Variant | SqlType::Xml => MAX_TYPE_WIDTH,
    }
}

/// A column's printed width: its type's, but never narrower than its name, nor than `NULL`
/// when it may hold one.
pub fn column_width(c: &ColumnInfo) -> usize {
    let null = if c.nullable { 4 } else { 0 };
    type_width(&c.ty).max(c.name.chars().count()).max(null)
}

/// A value's text in a column of type `ty`: TIME, DATETIME2 and DATETIMEOFFSET with the
/// column's scale, the
/// rest as the value displays itself.
fn render(value: &Value, ty: &SqlType) -> String {
    match (value, ty) {
        (Value::Time(t), SqlType::Time(s)) => t.display(*s).to_string(),
        (Value::DateTime2(t), SqlType::DateTime2(s)) => t.display(*s).to_string(),
        (Value::DateTimeOffset(t), SqlType::DateTimeOffset(s)) => t.display(*s).to_string(),
        _ => value.to_string(),
    }
}

/// `text` padded with spaces to `width` characters, on the left if `right`-aligned; text
/// longer than the width is kept whole.
fn pad(text: &str, width: usize, right: bool) -> String {
    let fill = width.saturating_sub(text.chars().count());
    if right {
        format!("{}{text}", " ".repeat(fill))
    } else {
        format!("{text}{}", " ".repeat(fill))
    }
}

/// One CSV field (RFC 4180): quoted, with quotes doubled, when it holds the separator, a
/// quote or a line break.
pub fn csv_field(text: &str, separator: &str) -> String {
    let needs_quotes =
        text.contains(['"', '\r', '\n']) || (!separator.is_empty() && text.contains(separator));
    if needs_quotes {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A JSON string literal.
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A value as JSON: exact numbers as numbers (their text is already JSON's number syntax),
/// NULL as null, everything else as its text in a string.
fn json_value(value: &Value, ty: Option<&SqlType>) -> String {
    match value {
        Value::Null => "null".to_string(),
        v if v.is_exact_numeric() => value.to_string(),
        // Rust prints the shortest text that reads back as the same double: exact.
        Value::Float(f) if f.is_finite() => value.to_string(),
        Value::Real(f) if f.is_finite() => value.to_string(),
        _ => json_string(&ty.map_or_else(|| value.to_string(), |ty| render(value, ty))),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use walden_engine::types::Decimal;
    use walden_sql::exec::SqlError;

    use super::*;

    /// A writer whose bytes the test can read after the printer is done with it.
    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.borrow().clone()).unwrap()
        }
    }

    fn printer(style: Style) -> (Printer, Shared, Shared) {
        let (out, err) = (Shared::default(), Shared::default());
        (Printer::new(style, Box::new(out.clone()), Box::new(err.clone())), out, err)
    }

    fn not_null(name: &str, ty: SqlType) -> ColumnInfo {
        ColumnInfo { name: name.to_string(), ty, nullable: false, collation: None, declared: None }
    }

    /// `SELECT 1 AS x` as the executor reports it.
    fn select_one(p: &mut Printer) {
        p.result_set(&[not_null("x", SqlType::Int)]);
        p.row(&[Value::Int(1)]);
        p.result_end(1);
        p.done(Some(1));
    }

    #[test]
    fn text_is_sqlcmds_layout() {
        let (mut p, out, err) = printer(Style::default());
        select_one(&mut p);
        let expected = "x          \n-----------\n          1\n\n(1 row affected)\n".to_string();
        assert_eq!(out.text(), expected);
        assert_eq!(err.text(), "");
    }

    #[test]
    fn widths_come_from_types_names_and_null() {
        let columns = [
            ColumnInfo::new("name", SqlType::VarChar(Len::N(10))),
            ColumnInfo::new("amount", SqlType::Decimal { precision: 5, scale: 2 }),
            ColumnInfo::new("b", SqlType::Bit),
        ];
        assert_eq!(columns.iter().map(column_width).collect::<Vec<_>>(), [10, 7, 4]);
        let (mut p, out, _) = printer(Style::default());
        p.result_set(&columns);
        p.row(&[
            Value::Str("ab".into()),
            Value::Decimal(Decimal::new(-150, 2).unwrap()),
            Value::Null,
        ]);
        p.result_end(1);
        p.done(Some(2));
        assert_eq!(
            out.text(),
            "name       amount  b   \n---------- ------- ----\nab           -1.50 NULL\n\n(2 rows affected)\n"
        );
    }

    #[test]
    fn type_widths() {
        assert_eq!(type_width(&SqlType::TinyInt), 3);
        assert_eq!(type_width(&SqlType::SmallInt), 6);
        assert_eq!(type_width(&SqlType::BigInt), 20);
        assert_eq!(type_width(&SqlType::Float), 24);
        assert_eq!(type_width(&SqlType::Real), 14);
        assert_eq!(type_width(&SqlType::Money), 21);
        assert_eq!(type_width(&SqlType::NChar(5)), 5);
        assert_eq!(type_width(&SqlType::NVarChar(Len::Max)), 256);
        assert_eq!(type_width(&SqlType::Binary(4)), 10);
        assert_eq!(type_width(&SqlType::Date), 10);
        assert_eq!(type_width(&SqlType::Time(0)), 8);
        assert_eq!(type_width(&SqlType::Time(7)), 16);
        assert_eq!(type_width(&SqlType::DateTime), 23);
        assert_eq!(type_width(&SqlType::DateTime2(3)), 23);
        assert_eq!(type_width(&SqlType::UniqueIdentifier), 36);
    }

    #[test]
    fn count_without_result_set_has_a_blank_line_before_it() {
        let (mut p, out, _) = printer(Style::default());
        p.done(Some(3));
        p.done(None);
        p.message(&SqlError::with_severity(0, 0, "hello"));
        assert_eq!(out.text(), "\n(3 rows affected)\nhello\n");
    }

    #[test]
    fn trimmed_and_headerless() {
        let style = Style { trim: true, separator: Some(",".into()), ..Style::default() };
        let (mut p, out, _) = printer(style);
        p.result_set(&[not_null("x", SqlType::Int), not_null("s", SqlType::Char(5))]);
        p.row(&[Value::Int(1), Value::Str("ab   ".into())]);
        p.result_end(1);
        assert_eq!(out.text(), "x,s\n-,-\n1,ab\n\n");

        let (mut p, out, _) = printer(Style { headers: None, ..Style::default() });
        select_one(&mut p);
        assert_eq!(out.text(), "          1\n\n(1 row affected)\n");
    }

    #[test]
    fn headers_repeat_every_n_rows() {
        let (mut p, out, _) = printer(Style { headers: Some(2), trim: true, ..Style::default() });
        p.result_set(&[not_null("x", SqlType::Int)]);
        for i in 1..=3 {
            p.row(&[Value::Int(i)]);
        }
        p.result_end(3);
        assert_eq!(out.text(), "x\n-\n1\n2\n\nx\n-\n3\n\n");
    }

    #[test]
    fn errors_are_msg_lines_and_are_remembered() {
        let (mut p, out, err) = printer(Style::default());
        let mut e = SqlError::divide_by_zero().at_line(3);
        e.procedure = Some("p".into());
        p.message(&e);
        assert_eq!(
            out.text(),
            "Msg 8134, Level 16, State 1, Server walden, Procedure p, Line 3\nDivide by zero error encountered.\n"
        );
        assert_eq!(err.text(), "");
        assert!(p.take_error());
        assert!(!p.take_error());
        p.message(&SqlError::with_severity(50000, 10, "just info"));
        assert!(!p.take_error());
    }

    #[test]
    fn redirect_sends_messages_to_stderr() {
        let (mut p, out, err) = printer(Style { redirect: Redirect::Errors, ..Style::default() });
        p.message(&SqlError::with_severity(0, 0, "printed"));
        p.message(&SqlError::invalid_object("t"));
        assert_eq!(out.text(), "printed\n");
        assert!(err.text().starts_with("Msg 208, Level 16, State 1, Server walden, Line 0\n"));

        let style = Style { redirect: Redirect::AllMessages, ..Style::default() };
        let (mut p, out, err) = printer(style);
        p.message(&SqlError::with_severity(0, 0, "printed"));
        assert_eq!(out.text(), "");
        assert_eq!(err.text(), "printed\n");
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        assert_eq!(csv_field("plain", ","), "plain");
        assert_eq!(csv_field("a,b", ","), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\"", ","), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines", ","), "\"two\nlines\"");
        assert_eq!(csv_field("a;b", ";"), "\"a;b\"");

        let (mut p, out, err) = printer(Style { format: Format::Csv, ..Style::default() });
        p.result_set(&[not_null("id", SqlType::Int), ColumnInfo::new("note, text", SqlType::Date)]);
        p.row(&[Value::Int(1), Value::Null]);
        p.row(&[Value::Int(2), Value::Str("x\"y".into())]);
        p.result_end(2);
        p.done(Some(2));
        p.message(&SqlError::with_severity(0, 0, "to stderr"));
        assert_eq!(out.text(), "id,\"note, text\"\r\n1,\r\n2,\"x\"\"y\"\r\n");
        assert_eq!(err.text(), "to stderr\n");
    }

    #[test]
    fn json_escapes_and_types() {
        assert_eq!(json_string("a\"b\\c\n\t\u{1}é"), "\"a\\\"b\\\\c\\n\\t\\u0001é\"");
        let (mut p, out, err) = printer(Style { format: Format::Json, ..Style::default() });
        p.result_set(&[
            not_null("i", SqlType::BigInt),
            ColumnInfo::new("d", SqlType::Decimal { precision: 5, scale: 2 }),
            ColumnInfo::new("s", SqlType::VarChar(Len::N(5))),
            ColumnInfo::new("f", SqlType::Float),
        ]);
        p.row(&[
            Value::BigInt(-7),
            Value::Decimal(Decimal::new(12345, 2).unwrap()),
            Value::Str("q\"".into()),
            Value::Float(0.5),
        ]);
        p.row(&[Value::BigInt(0), Value::Null, Value::Null, Value::Float(f64::NAN)]);
        p.result_end(2);
        p.result_set(&[not_null("e", SqlType::Int)]);
        p.result_end(0);
        p.message(&SqlError::divide_by_zero());
        assert_eq!(
            out.text(),
            "{\"columns\":[\"i\",\"d\",\"s\",\"f\"],\"rows\":[[-7,123.45,\"q\\\"\",0.5],[0,null,null,\"NaN\"]]}\n\
             {\"columns\":[\"e\"],\"rows\":[]}\n"
        );
        assert!(err.text().starts_with("Msg 8134"));
    }

    #[test]
    fn first_value_is_kept_for_exit() {
        let (mut p, _, _) = printer(Style::default());
        select_one(&mut p);
        assert_eq!(p.first_value(), Some(&Value::Int(1)));
        p.result_set(&[not_null("x", SqlType::Int)]);
        assert_eq!(p.first_value(), None);
    }

    #[test]
    fn failed_writes_are_kept_and_stop_writing() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut p = Printer::new(Style::default(), Box::new(Broken), Box::new(io::sink()));
        select_one(&mut p);
        assert_eq!(p.write_error().map(io::Error::kind), Some(io::ErrorKind::BrokenPipe));
    }
}
