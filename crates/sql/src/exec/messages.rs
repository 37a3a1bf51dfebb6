//! Walden's message catalog: the number, severity and text of every error and message the
//! engine raises, the built-in rows of `sys.messages` (language 1033, us_english).
//!
//! A text is SQL Server's template for that number: `%ls`, `%.*ls`, `%d` and `%S_MSG` stand
//! for the parts a particular error fills in. [`SqlError::catalogued`] builds an error from
//! its row, so the text a client sees and the row `sys.messages` lists cannot drift apart;
//! errors still worded where they are raised are checked against this table by the test
//! below (every number raised in `crates/sql/src` has a row). User-defined messages
//! (`sp_addmessage`) are kept in master: see `user_messages`.

use std::sync::OnceLock;

use crate::exec::SqlError;

/// One row of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Message {
    pub(crate) number: i32,
    pub(crate) severity: u8,
    pub(crate) text: &'static str,
}

/// The message `number`, if Walden raises it.
pub(crate) fn message(number: i32) -> Option<&'static Message> {
    let all = messages();
    all.binary_search_by_key(&number, |m| m.number).ok().map(|i| &all[i])
}

/// `template` with each placeholder (`%` flags, width, precision and size, then a
/// conversion letter; `%S_MSG`; `%%` is a percent sign) replaced by the next argument, as
/// the engine fills its own messages: every argument is already text.
pub(crate) fn fill(template: &str, args: &[&str]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut args = args.iter();
    let mut rest = template;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let spec = &rest[at + 1..];
        if let Some(after) = spec.strip_prefix('%') {
            out.push('%');
            rest = after;
            continue;
        }
        let skip = if spec.starts_with("S_MSG") { 5 } else { placeholder_len(spec) };
        out.push_str(args.next().copied().unwrap_or("(null)"));
        rest = &spec[skip..];
    }
    out.push_str(rest);
    out
}

/// The length of a printf placeholder after its `%`: flags, width, precision (`*` for either),
/// size letters (`l`, `h`, `I64`), and the conversion letter.
fn placeholder_len(spec: &str) -> usize {
    let b = spec.as_bytes();
    let mut i = 0;
    let skip = |i: &mut usize, ok: fn(u8) -> bool| {
        while *i < b.len() && ok(b[*i]) {
            *i += 1;
        }
    };
    skip(&mut i, |c| matches!(c, b'-' | b'+' | b'0' | b' ' | b'#'));
    skip(&mut i, |c| c.is_ascii_digit() || c == b'*');
    if b.get(i) == Some(&b'.') {
        i += 1;
        skip(&mut i, |c| c.is_ascii_digit() || c == b'*');
    }
    skip(&mut i, |c| matches!(c, b'l' | b'h' | b'I' | b'6' | b'4'));
    spec[i..].chars().next().map_or(i, |c| i + c.len_utf8())
}

impl SqlError {
    /// Error `number` with its catalogued severity and text, filled with `args`. A number
    /// without a row (a bug: the numbers passed are constants) gets its arguments as text.
    pub(crate) fn catalogued(number: i32, args: &[&str]) -> SqlError {
        match message(number) {
            Some(m) => SqlError::with_severity(number, m.severity, fill(m.text, args)),
            None => SqlError::new(number, args.join(" ")),
        }
    }
}

/// Every message Walden raises, by number: `messages.tsv`, one per line, its number,
/// severity and text separated by tabs.
pub(crate) fn messages() -> &'static [Message] {
    static MESSAGES: OnceLock<Vec<Message>> = OnceLock::new();
    MESSAGES.get_or_init(|| {
        include_str!("messages.tsv")
            .lines()
            .filter_map(|line| {
                let mut fields = line.splitn(3, '\t');
                Some(Message {
                    number: fields.next()?.parse().ok()?,
                    severity: fields.next()?.parse().ok()?,
                    text: fields.next()?,
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_is_a_message_and_numbers_are_sorted_and_unique() {
        assert_eq!(messages().len(), include_str!("messages.tsv").lines().count());
        assert!(messages().windows(2).all(|w| w[0].number < w[1].number));
    }

    #[test]
    fn fill_replaces_each_placeholder_in_order() {
        assert_eq!(fill("Invalid object name '%.*ls'.", &["t"]), "Invalid object name 't'.");
        assert_eq!(
            fill("Cannot %S_MSG the %S_MSG '%.*ls', 100%% %d", &["drop", "table", "x", "7"]),
            "Cannot drop the table 'x', 100% 7"
        );
        assert_eq!(fill("%ld through %5ld.", &["1"]), "1 through (null).");
    }

    /// Every error number `crates/sql/src` raises with `SqlError::new` or `with_severity`
    /// has a row, so `sys.messages` lists each error a client can get from the SQL layer.
    #[test]
    fn every_raised_number_is_catalogued() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut missing = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("source directory") {
                let path = entry.expect("directory entry").path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("source file");
                for call in ["SqlError::new(", "SqlError::with_severity("] {
                    for (at, _) in text.match_indices(call) {
                        let args = text[at + call.len()..].trim_start();
                        let digits: String =
                            args.chars().take_while(char::is_ascii_digit).collect();
                        let Ok(number) = digits.parse::<i32>() else { continue };
                        // 0: PRINT's and other informational messages; 50000: RAISERROR's
                        // and Walden's own unnumbered errors. SQL Server lists neither.
                        if number != 0 && number != 50000 && message(number).is_none() {
                            missing.push(format!("{number} in {}", path.display()));
                        }
                    }
                }
            }
        }
        assert!(missing.is_empty(), "errors without a catalog row: {missing:?}");
    }
}
