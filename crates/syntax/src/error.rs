//! Compile errors, numbered and worded like SQL Server's so that clients, tests and scripts
//! written against SQL Server see the messages they expect.
//!
//! | number | message | raised when |
//! |---|---|---|
//! | 102 | `Incorrect syntax near '%.*ls'.` | a token does not fit the grammar (also stray characters) |
//! | 103 | `The identifier that starts with '%.*ls' is too long. Maximum length is 128.` | an identifier or variable name exceeds 128 characters |
//! | 105 | `Unclosed quotation mark after the character string '%.*ls'.` | a string or a delimited identifier is not closed |
//! | 111 | `'CREATE/ALTER PROCEDURE' must be the first statement in a query batch.` | `CREATE PROCEDURE` after another statement |
//! | 113 | `Missing end comment mark '*/'.` | a `/* ... */` comment is not closed |
//! | 117 | `The object name '%.*ls' contains more than the maximum number of prefixes. The maximum is 3.` | a name has more than four parts |
//! | 141 | `A SELECT statement that assigns a value to a variable must not be combined with data-retrieval operations.` | `SELECT @v = a, b` |
//! | 156 | `Incorrect syntax near the keyword '%.*ls'.` | the offending token is a reserved keyword |
//! | 191 | `Some part of your SQL statement is nested too deeply. Rewrite the query or break it up into smaller queries.` | nesting exceeds the parser's limit |
//! | 195 | `'%.*ls' is not a recognized SET option.` | `SET unknown_option ON` |
//! | 1038 | `An object or column name is missing or empty. ...` | `[]` or `""` |
//! | 10783 | `The body of a natively compiled module must be an ATOMIC block.` | a `NATIVE_COMPILATION` procedure whose body is not one `BEGIN ATOMIC` block |
//! | 10784 | `The WITH clause of BEGIN ATOMIC statement must specify a value for the option '%ls'.` | `TRANSACTION ISOLATION LEVEL` or `LANGUAGE` missing |
//! | 10794 | `The statement '%ls' is not supported with natively compiled modules.` | a transaction statement in an atomic block |
//!
//! All are severity 15 (a syntax error in the batch, reported before anything runs) and
//! state 1. A few statements that are well formed but name something SQL Server itself rejects
//! at compile time, or that Walden refuses, fail with severity 16, as SQL Server's refusals do:
//! 1921 (an unknown filegroup), 15048 (a compatibility level that does not exist), 40514 (DDL
//! triggers) and 50000 (XML indexes, `WITH XMLNAMESPACES` before anything but `SELECT`). When the input ends too early, SQL Server names the last token of the batch, always
//! with 102 (a batch of `SELECT` alone is "Incorrect syntax near 'SELECT'."), and so does this
//! parser. The line is the 1-based line, within the batch, of the token the error
//! is about (for unclosed strings and comments: where they start).

use std::fmt;

/// A compile error for a whole batch: no statement of a batch that fails to parse runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// SQL Server's message number (see the module documentation).
    pub number: i32,
    /// Severity: 15 for syntax errors, 16 for the refusals the module documentation lists.
    pub severity: u8,
    /// State (always 1 here).
    pub state: u8,
    /// 1-based line within the batch.
    pub line: u32,
    /// The message text, as SQL Server words it.
    pub message: String,
}

impl ParseError {
    /// `Incorrect syntax near '...'.`
    pub const INCORRECT_SYNTAX: i32 = 102;
    /// `The identifier that starts with '...' is too long.`
    pub const IDENTIFIER_TOO_LONG: i32 = 103;
    /// `Unclosed quotation mark after the character string '...'.`
    pub const UNCLOSED_QUOTATION: i32 = 105;
    /// `'CREATE/ALTER PROCEDURE' must be the first statement in a query batch.`
    pub const PROCEDURE_NOT_FIRST: i32 = 111;
    /// `Missing end comment mark '*/'.`
    pub const MISSING_END_COMMENT: i32 = 113;
    /// `The object name '...' contains more than the maximum number of prefixes.`
    pub const TOO_MANY_PREFIXES: i32 = 117;
    /// `A SELECT statement that assigns a value to a variable must not be combined with
    /// data-retrieval operations.`
    pub const MIXED_ASSIGNMENT: i32 = 141;
    /// `Incorrect syntax near the keyword '...'.`
    pub const INCORRECT_SYNTAX_KEYWORD: i32 = 156;
    /// `Some part of your SQL statement is nested too deeply.`
    pub const NESTED_TOO_DEEPLY: i32 = 191;
    /// `'...' is not a recognized SET option.`
    pub const UNKNOWN_SET_OPTION: i32 = 195;
    /// `An object or column name is missing or empty.`
    pub const EMPTY_NAME: i32 = 1038;
    /// `The body of a natively compiled module must be an ATOMIC block.`
    pub const NATIVE_BODY_NOT_ATOMIC: i32 = 10783;
    /// `The WITH clause of BEGIN ATOMIC statement must specify a value for the option '...'.`
    pub const ATOMIC_OPTION_MISSING: i32 = 10784;
    /// `The statement '...' is not supported with natively compiled modules.`
    pub const NOT_IN_NATIVE_MODULE: i32 = 10794;

    /// The severity of every syntax error.
    const SEVERITY: u8 = 15;

    fn new(number: i32, line: u32, message: String) -> Self {
        Self { number, severity: Self::SEVERITY, state: 1, line, message }
    }

    /// Error 102, or 156 when `near` is a reserved keyword.
    pub(crate) fn syntax(near: &str, is_keyword: bool, line: u32) -> Self {
        if is_keyword {
            let message = format!("Incorrect syntax near the keyword '{near}'.");
            Self::new(Self::INCORRECT_SYNTAX_KEYWORD, line, message)
        } else {
            Self::new(Self::INCORRECT_SYNTAX, line, format!("Incorrect syntax near '{near}'."))
        }
    }

    pub(crate) fn identifier_too_long(identifier: &str, line: u32) -> Self {
        let start: String = identifier.chars().take(128).collect();
        let message = format!(
            "The identifier that starts with '{start}' is too long. Maximum length is 128."
        );
        Self::new(Self::IDENTIFIER_TOO_LONG, line, message)
    }

    pub(crate) fn unclosed_quotation(rest: &str, line: u32) -> Self {
        let message = format!("Unclosed quotation mark after the character string '{rest}'.");
        Self::new(Self::UNCLOSED_QUOTATION, line, message)
    }

    pub(crate) fn procedure_not_first(line: u32) -> Self {
        let message = "'CREATE/ALTER PROCEDURE' must be the first statement in a query batch.";
        Self::new(Self::PROCEDURE_NOT_FIRST, line, message.to_owned())
    }

    /// Error 132: a `GOTO` label declared twice.
    pub(crate) fn label_declared_twice(label: &str, line: u32) -> Self {
        let message = format!("The label '{label}' has already been declared. Label names must be unique within a query batch or stored procedure.");
        Self::new(132, line, message)
    }

    /// Error 133: a `GOTO` to a label that is not declared.
    pub(crate) fn label_not_declared(label: &str, line: u32) -> Self {
        let message = format!(
            "A GOTO statement references the label '{label}' but the label has not been declared."
        );
        Self::new(133, line, message)
    }

    /// Error 111 for `CREATE VIEW` or `CREATE FUNCTION` (`what`) after another statement.
    pub(crate) fn module_not_first(what: &str, line: u32) -> Self {
        let message = format!("'CREATE {what}' must be the first statement in a query batch.");
        Self::new(Self::PROCEDURE_NOT_FIRST, line, message)
    }

    pub(crate) fn missing_end_comment(line: u32) -> Self {
        Self::new(Self::MISSING_END_COMMENT, line, "Missing end comment mark '*/'.".to_owned())
    }

    pub(crate) fn too_many_prefixes(name: &str, line: u32) -> Self {
        let message = format!(
            "The object name '{name}' contains more than the maximum number of prefixes. \
             The maximum is 3."
        );
        Self::new(Self::TOO_MANY_PREFIXES, line, message)
    }

    pub(crate) fn mixed_assignment(line: u32) -> Self {
        let message = "A SELECT statement that assigns a value to a variable must not be \
                       combined with data-retrieval operations.";
        Self::new(Self::MIXED_ASSIGNMENT, line, message.to_owned())
    }

    pub(crate) fn nested_too_deeply(line: u32) -> Self {
        let message = "Some part of your SQL statement is nested too deeply. Rewrite the query \
                       or break it up into smaller queries.";
        Self::new(Self::NESTED_TOO_DEEPLY, line, message.to_owned())
    }

    pub(crate) fn unknown_set_option(option: &str, line: u32) -> Self {
        let message = format!("'{option}' is not a recognized SET option.");
        Self::new(Self::UNKNOWN_SET_OPTION, line, message)
    }

    pub(crate) fn native_body_not_atomic(line: u32) -> Self {
        let message = "The body of a natively compiled module must be an ATOMIC block.";
        Self::new(Self::NATIVE_BODY_NOT_ATOMIC, line, message.to_owned())
    }

    pub(crate) fn atomic_option_missing(option: &str, line: u32) -> Self {
        let message = format!(
            "The WITH clause of BEGIN ATOMIC statement must specify a value for the option \
             '{option}'."
        );
        Self::new(Self::ATOMIC_OPTION_MISSING, line, message)
    }

    pub(crate) fn not_in_native_module(statement: &str, line: u32) -> Self {
        let message =
            format!("The statement '{statement}' is not supported with natively compiled modules.");
        Self::new(Self::NOT_IN_NATIVE_MODULE, line, message)
    }

    pub(crate) fn empty_name(line: u32) -> Self {
        let message = "An object or column name is missing or empty. For SELECT INTO \
                       statements, verify each column has a name. For other statements, look \
                       for empty alias names. Aliases defined as \"\" or [] are not allowed. \
                       Change the alias to a valid name.";
        Self::new(Self::EMPTY_NAME, line, message.to_owned())
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Msg {}, Level {}, State {}, Line {}\n{}",
            self.number, self.severity, self.state, self.line, self.message
        )
    }
}

impl std::error::Error for ParseError {}
