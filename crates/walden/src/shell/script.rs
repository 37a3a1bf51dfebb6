//! The script reader: splits input lines into batches at `GO`, runs the sqlcmd commands
//! (`:setvar`, `:r`, `:on error`, `:quit`...), substitutes `$(name)` and hands each batch to
//! the backend.
//!
//! Commands and `GO` are recognised only at the start of a line (after white space) that does
//! not continue a string, a delimited identifier or a block comment, so `GO` inside a
//! multi-line string literal stays text.
//!
//! Variables are substituted in a batch's whole text when it runs, with the values they have
//! then: a script may mention `$(N)` in its opening comment and define N with `:setvar` on the
//! next line. The arguments of `GO`, `:r` and `:on error` are substituted when the command
//! runs; `:setvar` values are taken literally, as in sqlcmd.

use std::path::Path;

use walden_engine::types::Value;
use walden_sql::exec::{ColumnInfo, Message, Output};

use crate::shell::backend::Backend;
use crate::shell::print::Printer;
use crate::shell::vars::Variables;

/// How deep `:r` may nest (a file that includes itself stops here instead of overflowing).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Whether to go on reading input after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Read the next line.
    Continue,
    /// Stop, and exit with this code.
    Exit(u8),
}

/// Where the lexer is at the end of a line, as far as batch splitting cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Scan {
    /// In code: the next line may be a command.
    #[default]
    Code,
    /// Inside `'...'`.
    String,
    /// Inside `[...]`.
    Bracket,
    /// Inside `"..."`.
    Quoted,
    /// Inside `/* ... */`, nested this deep (T-SQL block comments nest).
    Comment(u32),
}

/// The state after reading `line` in `state`.
fn scan(mut state: Scan, line: &str) -> Scan {
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        // A doubled closing character is an escaped one and does not close.
        let mut closes = |close: char| {
            if c != close {
                false
            } else if next == Some(close) {
                chars.next();
                false
            } else {
                true
            }
        };
        state = match state {
            Scan::Code => match (c, next) {
                ('\'', _) => Scan::String,
                ('[', _) => Scan::Bracket,
                ('"', _) => Scan::Quoted,
                ('-', Some('-')) => return Scan::Code,
                ('/', Some('*')) => {
                    chars.next();
                    Scan::Comment(1)
                }
                _ => Scan::Code,
            },
            Scan::String => {
                if closes('\'') {
                    Scan::Code
                } else {
                    Scan::String
                }
            }
            Scan::Bracket => {
                if closes(']') {
                    Scan::Code
                } else {
                    Scan::Bracket
                }
            }
            Scan::Quoted => {
                if closes('"') {
                    Scan::Code
                } else {
                    Scan::Quoted
                }
            }
            Scan::Comment(depth) => match (c, next) {
                ('*', Some('/')) => {
                    chars.next();
                    if depth <= 1 {
                        Scan::Code
                    } else {
                        Scan::Comment(depth - 1)
                    }
                }
                ('/', Some('*')) => {
                    chars.next();
                    Scan::Comment(depth.saturating_add(1))
                }
                _ => Scan::Comment(depth),
            },
        };
    }
    state
}

/// A line that is not T-SQL.
#[derive(Debug, PartialEq, Eq)]
enum Directive<'a> {
    /// `GO` and what follows it on the line.
    Go(&'a str),
    /// A command: its lower-cased name (`setvar`, `r`, `on`, `exit`...) and the rest.
    Command(String, &'a str),
}

/// The directive `line` holds, if any (`line` starts in code).
fn directive(line: &str) -> Option<Directive<'_>> {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix(':') {
        let end = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        return Some(Directive::Command(rest[..end].to_ascii_lowercase(), &rest[end..]));
    }
    let end = t.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (word, rest) = (t[..end].to_ascii_lowercase(), &t[end..]);
    let after = rest.trim();
    match word.as_str() {
        "go" if rest.is_empty()
            || rest.starts_with(char::is_whitespace)
            || rest.starts_with("--") =>
        {
            Some(Directive::Go(rest))
        }
        "exit" if after.is_empty() || after.starts_with('(') => {
            Some(Directive::Command(word, rest))
        }
        "quit" | "reset" if after.is_empty() => Some(Directive::Command(word, rest)),
        _ => None,
    }
}

/// The count after `GO` (`rest` already substituted): none means 1; a `--` comment may
/// follow.
fn go_count(rest: &str) -> Option<u32> {
    let text = rest.split_once("--").map_or(rest, |(before, _)| before).trim();
    if text.is_empty() {
        return Some(1);
    }
    text.parse::<u32>().ok().filter(|n| *n > 0)
}

/// `text` without the double quotes around it (doubled quotes inside stand for one), or as
/// it is if it is not quoted; `None` if a quote is left open or text follows the closing one.
fn unquote(text: &str) -> Option<String> {
    let Some(inner) = text.strip_prefix('"') else { return Some(text.to_string()) };
    let mut value = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '"' {
            match chars.next() {
                Some('"') => value.push('"'),
                None => return Some(value),
                Some(_) => return None,
            }
        } else {
            value.push(c);
        }
    }
    None
}

const HELP: &str = "\
GO [count]                 run the batch (count times)
:r <file>                  read commands and T-SQL from a file
:setvar <name> [\"value\"]  set a scripting variable (no value: remove it)
:listvar                   list the scripting variables
:on error exit|ignore      stop at the first error, or go on
:reset                     discard the batch being typed
:list                      print the batch being typed
:quit, :exit, QUIT, EXIT   leave without running the batch being typed
EXIT(), EXIT(query)        run the batch (and the query), then leave
:help                      this list";

/// Passes on errors and nothing else.
struct ErrorsOnly<'a>(&'a mut Printer);

impl Output for ErrorsOnly<'_> {
    fn result_set(&mut self, _columns: &[ColumnInfo]) {}
    fn row(&mut self, _values: &[Value]) {}
    fn result_end(&mut self, _rows: u64) {}
    fn message(&mut self, message: &Message) {
        if !message.is_info() {
            self.0.message(message);
        }
    }
    fn done(&mut self, _rows: Option<u64>) {}
}

/// A source of lines being read, for error locations.
#[derive(Debug)]
struct Source {
    file: Option<String>,
    line: usize,
}

/// Reads lines, runs batches.
pub struct Runner {
    backend: Box<dyn Backend>,
    printer: Printer,
    vars: Variables,
    /// The batch being collected.
    buffer: String,
    buffer_lines: usize,
    scan: Scan,
    /// `-b` / `:on error exit`.
    stop_on_error: bool,
    /// `-e`.
    echo: bool,
    /// At a terminal, `GO` and commands count even inside an open string or comment: someone
    /// who forgot a quote must still be able to run (and see the error), `:reset` or quit.
    interactive: bool,
    /// Whether the latest batch reported an error.
    batch_failed: bool,
    /// Innermost last; the bottom one is the command line or the terminal.
    sources: Vec<Source>,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").field("buffer", &self.buffer).finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner sending batches to `backend` and their output to `printer`.
    pub fn new(
        backend: Box<dyn Backend>,
        printer: Printer,
        vars: Variables,
        stop_on_error: bool,
        echo: bool,
    ) -> Runner {
        Runner {
            backend,
            printer,
            vars,
            buffer: String::new(),
            buffer_lines: 0,
            scan: Scan::Code,
            stop_on_error,
            echo,
            interactive: false,
            batch_failed: false,
            sources: vec![Source { file: None, line: 0 }],
        }
    }

    /// Lines come from a person at a terminal from now on.
    pub fn set_interactive(&mut self) {
        self.interactive = true;
    }

    /// The number of the line being typed in the current batch (the prompt's `1> `, `2> `).
    pub fn prompt_number(&self) -> usize {
        self.buffer_lines + 1
    }

    /// Runs `text` as a batch at once, outside the script (`-d`'s `USE`), showing only its
    /// errors: sqlcmd does not print `Changed database context` for `-d`. Whether it ran
    /// without error.
    pub fn execute_now(&mut self, text: &str) -> bool {
        let result = self.backend.execute(text, &mut ErrorsOnly(&mut self.printer));
        if let Err(e) = &result {
            self.printer.shell_error(e);
        }
        self.printer.flush();
        let failed = self.printer.take_error() || result.is_err();
        !failed && self.printer.write_error().is_none()
    }

    /// Reads every line of `text` (from `-Q`, `-q` or a file), without ending the batch.
    pub fn feed_text(&mut self, text: &str) -> Step {
        for line in text.split_inclusive('\n') {
            // A line keeps the end it had in the text (`\r\n` in a script written on
            // Windows) in the batch, as the server must store a module's text as written:
            // sp_WhoIsActive finds its help by CHAR(13) + CHAR(10) in its own definition.
            let (line, end) = match line.strip_suffix("\r\n") {
                Some(line) => (line, "\r\n"),
                None => (line.strip_suffix('\n').unwrap_or(line), "\n"),
            };
            if let Step::Exit(code) = self.feed_line_ending(line, end) {
                return Step::Exit(code);
            }
        }
        Step::Continue
    }

    /// Reads a file (`-i`, `:r`), without ending the batch: a file included with `:r` may
    /// leave a batch open for the including file to end.
    pub fn feed_file(&mut self, path: &Path) -> Step {
        if self.sources.len() > MAX_INCLUDE_DEPTH {
            return self.fail(&format!(
                ":r nesting is deeper than {MAX_INCLUDE_DEPTH} files at '{}'.",
                path.display()
            ));
        }
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                return self.fail(&format!(
                    "Error occurred while opening or operating on file {} (Reason: {e}).",
                    path.display()
                ))
            }
        };
        // Editors on Windows start UTF-8 files with a byte order mark.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        self.sources.push(Source { file: Some(path.display().to_string()), line: 0 });
        let step = self.feed_text(text);
        self.sources.pop();
        step
    }

    /// Reads one line: a command runs at once, `GO` runs the batch, anything else joins the
    /// batch.
    pub fn feed_line(&mut self, line: &str) -> Step {
        self.feed_line_ending(line, "\n")
    }

    /// [`Script::feed_line`], the line ending with `end` in the batch.
    fn feed_line_ending(&mut self, line: &str, end: &str) -> Step {
        if let Some(source) = self.sources.last_mut() {
            source.line += 1;
        }
        if self.scan == Scan::Code || self.interactive {
            match directive(line) {
                Some(Directive::Go(rest)) => return self.go_line(rest),
                Some(Directive::Command(name, args)) => return self.command(&name, args),
                None => {}
            }
        }
        self.scan = scan(self.scan, line);
        self.buffer.push_str(line);
        self.buffer.push_str(end);
        self.buffer_lines += 1;
        Step::Continue
    }

    /// The end of the input: runs what is left of the batch.
    pub fn finish(&mut self) -> Step {
        self.go(1)
    }

    /// Shuts the backend down.
    pub fn close(&mut self) -> Result<(), String> {
        self.printer.flush();
        self.backend.close()
    }

    fn go_line(&mut self, rest: &str) -> Step {
        let rest = match self.vars.substitute(rest) {
            Ok(rest) => rest,
            Err(e) => return self.fail(&e.to_string()),
        };
        match go_count(&rest) {
            Some(count) => self.go(count),
            None => self.syntax_error("GO"),
        }
    }

    /// Runs the collected batch `count` times and empties the buffer.
    fn go(&mut self, count: u32) -> Step {
        let text = std::mem::take(&mut self.buffer);
        self.buffer_lines = 0;
        self.scan = Scan::Code;
        self.batch_failed = false;
        if text.trim().is_empty() {
            return Step::Continue;
        }
        let batch = match self.vars.substitute(&text) {
            Ok(batch) => batch,
            Err(e) => {
                self.batch_failed = true;
                return self.fail(&e.to_string());
            }
        };
        if self.echo {
            self.printer.console(&batch);
        }
        for _ in 0..count {
            let result = self.backend.execute(&batch, &mut self.printer);
            if let Err(e) = &result {
                self.printer.shell_error(e);
            }
            self.printer.flush();
            if let Some(e) = self.printer.write_error() {
                eprintln!("walden sql: cannot write the output: {e}");
                return Step::Exit(1);
            }
            if self.printer.take_error() || result.is_err() {
                self.batch_failed = true;
                if self.stop_on_error {
                    return Step::Exit(1);
                }
            }
        }
        Step::Continue
    }

    fn command(&mut self, name: &str, args: &str) -> Step {
        match name {
            "setvar" => self.setvar(args),
            "r" => {
                let path = match self.vars.substitute(args.trim()) {
                    Ok(path) => path,
                    Err(e) => return self.fail(&e.to_string()),
                };
                match unquote(&path).filter(|p| !p.is_empty()) {
                    Some(path) => self.feed_file(Path::new(&path)),
                    None => self.syntax_error(":r"),
                }
            }
            "on" => {
                let words = match self.vars.substitute(args) {
                    Ok(words) => words.to_ascii_lowercase(),
                    Err(e) => return self.fail(&e.to_string()),
                };
                match words.split_whitespace().collect::<Vec<_>>().as_slice() {
                    ["error", "exit"] => self.stop_on_error = true,
                    ["error", "ignore"] => self.stop_on_error = false,
                    _ => return self.syntax_error(":on error"),
                }
                Step::Continue
            }
            "quit" => Step::Exit(0),
            "exit" => self.exit(args.trim()),
            "reset" => {
                self.buffer.clear();
                self.buffer_lines = 0;
                self.scan = Scan::Code;
                Step::Continue
            }
            "list" => {
                let text = self.buffer.clone();
                self.printer.console(text.trim_end_matches('\n'));
                Step::Continue
            }
            "listvar" => {
                for (name, value) in self.vars.list() {
                    self.printer.console(&format!("{name} = \"{value}\""));
                }
                Step::Continue
            }
            "help" => {
                self.printer.console(HELP);
                Step::Continue
            }
            "ed" | "out" | "error" | "connect" | "perftrace" | "serverlist" | "xml" => {
                self.fail(&format!("the :{name} command is not supported by walden sql."))
            }
            _ => {
                // A name that is not letters (`:!! ls`) shows as the word it is.
                let shown = if name.is_empty() {
                    format!(":{}", args.split_whitespace().next().unwrap_or(""))
                } else {
                    format!(":{name}")
                };
                self.syntax_error(&shown)
            }
        }
    }

    fn setvar(&mut self, args: &str) -> Step {
        let args = args.trim();
        let (name, value) = match args.split_once(char::is_whitespace) {
            Some((name, value)) => (name, value.trim()),
            None => (args, ""),
        };
        if name.is_empty() {
            return self.syntax_error(":setvar");
        }
        let value = if value.is_empty() {
            None
        } else {
            match unquote(value) {
                Some(v) => Some(v),
                None => return self.syntax_error(":setvar"),
            }
        };
        match self.vars.set_script(name, value.as_deref()) {
            Ok(()) => Step::Continue,
            Err(e) => self.fail(&e),
        }
    }

    /// `EXIT`: leave. `EXIT()`: run the batch, then leave. `EXIT(query)`: run the batch with
    /// the query appended and leave with the first value the query returns as the exit code.
    fn exit(&mut self, args: &str) -> Step {
        if args.is_empty() {
            return Step::Exit(0);
        }
        let Some(query) = args.strip_prefix('(').and_then(|a| a.strip_suffix(')')) else {
            return self.syntax_error("EXIT");
        };
        let has_query = !query.trim().is_empty();
        if has_query {
            self.buffer.push_str(query);
            self.buffer.push('\n');
        }
        if let Step::Exit(code) = self.go(1) {
            return Step::Exit(code);
        }
        if self.batch_failed {
            return Step::Exit(1);
        }
        if !has_query {
            return Step::Exit(0);
        }
        let code = match self.printer.first_value() {
            Some(Value::TinyInt(v)) => i64::from(*v),
            Some(Value::SmallInt(v)) => i64::from(*v),
            Some(Value::Int(v)) => i64::from(*v),
            Some(Value::BigInt(v)) => *v,
            _ => 0,
        };
        // Exit codes are a byte on Unix: keep the low one as the OS would.
        Step::Exit(u8::try_from(code.rem_euclid(256)).unwrap_or(1))
    }

    fn syntax_error(&mut self, near: &str) -> Step {
        let at = match self.sources.last() {
            Some(Source { file: Some(file), line }) => format!(" at line {line} in file '{file}'"),
            Some(Source { file: None, line }) => format!(" at line {line}"),
            None => String::new(),
        };
        self.fail(&format!("Syntax error{at} near command '{near}'."))
    }

    /// A shell error: printed, then the end of the run if errors stop it.
    fn fail(&mut self, message: &str) -> Step {
        self.printer.shell_error(message);
        self.printer.flush();
        if self.stop_on_error {
            Step::Exit(1)
        } else {
            Step::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::io;
    use std::rc::Rc;

    use walden_engine::types::SqlType;
    use walden_sql::exec::SqlError;

    use super::*;
    use crate::shell::print::Style;

    /// Records the batches it gets. A batch containing `fail` raises an error; one whose last
    /// line is `SELECT n` returns n.
    struct Fake(Rc<RefCell<Vec<String>>>);

    impl Backend for Fake {
        fn execute(&mut self, batch: &str, out: &mut dyn Output) -> Result<(), String> {
            self.0.borrow_mut().push(batch.to_string());
            if batch.contains("lost") {
                return Err("Communication link failure".into());
            }
            if batch.contains("fail") {
                out.message(&SqlError::new(50000, "failed"));
            } else if let Some(n) = batch
                .lines()
                .last()
                .and_then(|l| l.strip_prefix("SELECT "))
                .and_then(|n| n.parse().ok())
            {
                out.result_set(&[ColumnInfo::new("", SqlType::Int)]);
                out.row(&[Value::Int(n)]);
                out.result_end(1);
            }
            Ok(())
        }
        fn close(&mut self) -> Result<(), String> {
            Ok(())
        }
    }

    fn runner(stop_on_error: bool) -> (Runner, Rc<RefCell<Vec<String>>>) {
        let batches = Rc::new(RefCell::new(Vec::new()));
        let printer = Printer::new(Style::default(), Box::new(io::sink()), Box::new(io::sink()));
        let runner = Runner::new(
            Box::new(Fake(Rc::clone(&batches))),
            printer,
            Variables::new(false),
            stop_on_error,
            false,
        );
        (runner, batches)
    }

    fn run(text: &str) -> (Step, Vec<String>) {
        let (mut r, batches) = runner(false);
        let mut step = r.feed_text(text);
        if step == Step::Continue {
            step = r.finish();
        }
        let got = batches.borrow().clone();
        (step, got)
    }

    #[test]
    fn splits_at_go_lines() {
        let (step, batches) = run("a\nb\nGO\n  go  \nc\n gO -- done\nd");
        assert_eq!(step, Step::Continue);
        assert_eq!(batches, ["a\nb\n", "c\n", "d\n"]);
    }

    #[test]
    fn go_with_a_count_repeats() {
        let (_, batches) = run("x\nGO 3 -- thrice\ny\nGO 1");
        assert_eq!(batches, ["x\n", "x\n", "x\n", "y\n"]);
    }

    #[test]
    fn bad_go_counts_are_errors() {
        let (mut r, batches) = runner(true);
        assert_eq!(r.feed_text("x\nGO 0"), Step::Exit(1));
        assert_eq!(r.feed_text("GO five"), Step::Exit(1));
        assert!(batches.borrow().is_empty());
    }

    #[test]
    fn words_starting_with_go_are_sql() {
        let (_, batches) = run("GOTO done\ngo;\ngoing\nGO");
        assert_eq!(batches, ["GOTO done\ngo;\ngoing\n"]);
    }

    #[test]
    fn go_inside_strings_and_comments_is_text() {
        let (_, batches) =
            run("SELECT 'it''s\nGO\n'\n/* a /* nested\nGO\n*/ still\nGO\n*/ [x\nGO\n]\nGO\ny");
        assert_eq!(
            batches,
            ["SELECT 'it''s\nGO\n'\n/* a /* nested\nGO\n*/ still\nGO\n*/ [x\nGO\n]\n", "y\n"]
        );
        // A line comment does not open anything.
        let (_, batches) = run("x -- it's\nGO\ny");
        assert_eq!(batches, ["x -- it's\n", "y\n"]);
    }

    #[test]
    fn at_a_terminal_go_ends_even_an_open_string() {
        let (mut r, batches) = runner(false);
        r.set_interactive();
        r.feed_line("SELECT 'oops");
        assert_eq!(r.feed_line("GO"), Step::Continue);
        r.feed_line("SELECT 'again");
        assert_eq!(r.feed_line(":reset"), Step::Continue);
        assert_eq!(r.feed_line("quit"), Step::Exit(0));
        assert_eq!(batches.borrow().as_slice(), ["SELECT 'oops\n"]);
    }

    #[test]
    fn setvar_and_substitution_at_run_time() {
        // The opening comment mentions N before :setvar defines it.
        let (step, batches) =
            run("-- $(N) rows\n:setvar N 100\nSELECT $(N)\nGO\n:setvar s \"a b\"\nPRINT '$(s)'");
        assert_eq!(step, Step::Continue);
        assert_eq!(batches, ["-- 100 rows\nSELECT 100\n", "PRINT 'a b'\n"]);
    }

    #[test]
    fn command_line_variables_win() {
        let (mut r, batches) = runner(true);
        r.vars.set_command_line("N", "1000").unwrap();
        assert_eq!(r.feed_text(":setvar N 100000\nWHILE @i <= $(N)\nGO"), Step::Continue);
        assert_eq!(batches.borrow().as_slice(), ["WHILE @i <= 1000\n"]);
    }

    #[test]
    fn undefined_variables_stop_with_b_only() {
        let (mut r, batches) = runner(true);
        assert_eq!(r.feed_text("SELECT $(nope)\nGO\nSELECT 1\nGO"), Step::Exit(1));
        assert!(batches.borrow().is_empty());

        let (step, batches) = run("SELECT $(nope)\nGO\nSELECT 1\nGO");
        assert_eq!(step, Step::Continue);
        assert_eq!(batches, ["SELECT 1\n"]);
    }

    #[test]
    fn errors_stop_only_with_b_or_on_error_exit() {
        let (step, batches) = run("fail\nGO\nok\nGO");
        assert_eq!(step, Step::Continue);
        assert_eq!(batches.len(), 2);

        let (mut r, batches) = runner(true);
        assert_eq!(r.feed_text("fail\nGO 5\nok\nGO"), Step::Exit(1));
        assert_eq!(batches.borrow().len(), 1);

        let (step, batches) = run(":on error exit\nfail\nGO\nok\nGO");
        assert_eq!(step, Step::Exit(1));
        assert_eq!(batches.len(), 1);

        let (mut r, batches) = runner(true);
        assert_eq!(r.feed_text(":ON ERROR IGNORE\nfail\nGO\nok\nGO"), Step::Continue);
        assert_eq!(batches.borrow().len(), 2);
    }

    #[test]
    fn a_backend_failure_is_an_error_of_the_batch() {
        let (step, batches) = run("lost\nGO\nok\nGO");
        assert_eq!((step, batches.len()), (Step::Continue, 2));
        let (mut r, batches) = runner(true);
        assert_eq!(r.feed_text("lost\nGO\nok\nGO"), Step::Exit(1));
        assert_eq!(batches.borrow().len(), 1);
        assert!(!r.execute_now("lost"));
    }

    #[test]
    fn quit_exit_and_reset() {
        let (step, batches) = run("a\nGO\nb\n:quit\nc\nGO");
        assert_eq!((step, batches), (Step::Exit(0), vec!["a\n".to_string()]));
        let (step, batches) = run("b\n  EXIT  \nc");
        assert_eq!((step, batches.len()), (Step::Exit(0), 0));
        let (step, batches) = run("b\nexit()");
        assert_eq!((step, batches), (Step::Exit(0), vec!["b\n".to_string()]));
        let (step, batches) = run("x\nEXIT(SELECT 7)");
        assert_eq!((step, batches), (Step::Exit(7), vec!["x\nSELECT 7\n".to_string()]));
        let (step, _) = run("EXIT(fail)");
        assert_eq!(step, Step::Exit(1));
        let (_, batches) = run("a\n:reset\nb\nRESET\nc");
        assert_eq!(batches, ["c\n"]);
    }

    #[test]
    fn unknown_commands_are_errors() {
        let (mut r, batches) = runner(true);
        assert_eq!(r.feed_text(":frobnicate now"), Step::Exit(1));
        let (mut r2, _) = runner(true);
        assert_eq!(r2.feed_text(":connect server"), Step::Exit(1));
        assert!(batches.borrow().is_empty());
        let (step, _) = run(":setvar\nx");
        assert_eq!(step, Step::Continue);
    }

    #[test]
    fn r_includes_files_and_nests_with_a_limit() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner.sql");
        let outer = dir.path().join("outer.sql");
        std::fs::write(&inner, "\u{feff}:setvar who inner\nSELECT '$(who)'\n").unwrap();
        std::fs::write(&outer, format!("x\n:r \"{}\"\nGO\ny\nGO", inner.display())).unwrap();
        let (mut r, batches) = runner(true);
        r.vars.set_command_line("dir", &dir.path().display().to_string()).unwrap();
        assert_eq!(r.feed_text(":r $(dir)/outer.sql\nz"), Step::Continue);
        assert_eq!(r.finish(), Step::Continue);
        assert_eq!(batches.borrow().as_slice(), ["x\nSELECT 'inner'\n", "y\n", "z\n"]);

        let looped = dir.path().join("loop.sql");
        std::fs::write(&looped, format!(":r {}\n", looped.display())).unwrap();
        let (mut r, _) = runner(true);
        assert_eq!(r.feed_file(&looped), Step::Exit(1));

        let (mut r, _) = runner(true);
        assert_eq!(r.feed_text(":r /no/such/file.sql"), Step::Exit(1));
    }

    #[test]
    fn prompt_counts_lines_of_the_batch() {
        let (mut r, _) = runner(false);
        assert_eq!(r.prompt_number(), 1);
        r.feed_line("SELECT 1");
        r.feed_line(":setvar a b");
        assert_eq!(r.prompt_number(), 2);
        r.feed_line("GO");
        assert_eq!(r.prompt_number(), 1);
    }

    #[test]
    fn execute_now_shows_only_errors() {
        let (mut r, batches) = runner(false);
        assert!(r.execute_now("SELECT 1"));
        assert!(!r.execute_now("fail"));
        assert_eq!(batches.borrow().as_slice(), ["SELECT 1", "fail"]);
        assert_eq!(r.printer.first_value(), None);
    }

    #[test]
    fn unquotes() {
        assert_eq!(unquote("plain").as_deref(), Some("plain"));
        assert_eq!(unquote("\"a \"\"b\"\"\"").as_deref(), Some("a \"b\""));
        assert_eq!(unquote("\"open"), None);
        assert_eq!(unquote("\"x\" y"), None);
    }
}
