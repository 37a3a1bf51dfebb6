//! Scripting variables: `-v name=value`, `:setvar name value`, and the environment, read back
//! as `$(name)`.
//!
//! Names are case-insensitive, as in sqlcmd. Precedence, highest first: `-v`, then
//! `:setvar`, then the process environment. sqlcmd lets a later `:setvar` override `-v`; Walden
//! does not, so that a script can carry a default (`:setvar N 100000`) that the command line
//! replaces (`-v N=1000`), which is how the acceptance scripts are written.

use std::collections::BTreeMap;

/// The variables a shell knows.
#[derive(Debug, Default)]
pub struct Variables {
    /// From `-v`, keyed by upper-cased name: they win over everything.
    command_line: BTreeMap<String, String>,
    /// From `:setvar`, keyed by upper-cased name.
    script: BTreeMap<String, String>,
    /// Whether the process environment answers for names defined nowhere else (off in unit
    /// tests, whose results must not depend on the environment they run in).
    use_environment: bool,
}

/// A reference to a variable that has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undefined(pub String);

impl std::fmt::Display for Undefined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "'{}' scripting variable not defined.", self.0)
    }
}

impl Variables {
    /// No variables; the environment answers for undefined names if `use_environment`.
    pub fn new(use_environment: bool) -> Variables {
        Variables { use_environment, ..Variables::default() }
    }

    /// Sets a variable from the command line (`-v`).
    pub fn set_command_line(&mut self, name: &str, value: &str) -> Result<(), String> {
        check_name(name)?;
        self.command_line.insert(name.to_ascii_uppercase(), value.to_string());
        Ok(())
    }

    /// `:setvar name value`, or `:setvar name` (value `None`) to remove it. A name set with
    /// `-v` keeps its command-line value.
    pub fn set_script(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        check_name(name)?;
        let key = name.to_ascii_uppercase();
        match value {
            Some(v) => {
                self.script.insert(key, v.to_string());
            }
            None => {
                self.script.remove(&key);
            }
        }
        Ok(())
    }

    /// The value of `name`, if it has one.
    pub fn get(&self, name: &str) -> Option<String> {
        let key = name.to_ascii_uppercase();
        if let Some(v) = self.command_line.get(&key).or_else(|| self.script.get(&key)) {
            return Some(v.clone());
        }
        if !self.use_environment {
            return None;
        }
        std::env::var(name).ok().or_else(|| std::env::var(&key).ok())
    }

    /// The variables set by `-v` and `:setvar` (not the environment), sorted by name, with the
    /// value that `$(name)` gives.
    pub fn list(&self) -> Vec<(String, String)> {
        let mut all = self.script.clone();
        all.extend(self.command_line.iter().map(|(k, v)| (k.clone(), v.clone())));
        all.into_iter().collect()
    }

    /// `text` with every `$(name)` replaced by its value, in one pass (a value that contains
    /// `$(...)` is not expanded again). `$(` not followed by a name and `)` stays as it is.
    pub fn substitute(&self, text: &str) -> Result<String, Undefined> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("$(") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            match after.find(')') {
                Some(end) if is_name(&after[..end]) => {
                    let name = &after[..end];
                    let value = self.get(name).ok_or_else(|| Undefined(name.to_string()))?;
                    out.push_str(&value);
                    rest = &after[end + 1..];
                }
                _ => {
                    out.push_str("$(");
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Whether `name` can be a variable's name: sqlcmd forbids white space and quotes; Walden
/// also keeps out the characters that would make `$(name)` ambiguous.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '$' | '(' | ')'))
}

fn check_name(name: &str) -> Result<(), String> {
    if is_name(name) {
        Ok(())
    } else {
        Err(format!("'{name}' is not a valid scripting variable name."))
    }
}

/// Parses `name=value` (from `-v`); a value in double quotes loses them.
pub fn parse_assignment(text: &str) -> Result<(String, String), String> {
    let (name, value) =
        text.split_once('=').ok_or_else(|| format!("'{text}' is not of the form name=value"))?;
    let name = name.trim();
    check_name(name)?;
    let value = value.trim();
    let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => value.to_string(),
    };
    Ok((name.to_string(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutes_every_reference() {
        let mut vars = Variables::new(false);
        vars.set_script("n", Some("10")).unwrap();
        assert_eq!(vars.substitute("WHILE @i <= $(N) -- $(n)").unwrap(), "WHILE @i <= 10 -- 10");
        assert_eq!(vars.substitute("no refs").unwrap(), "no refs");
    }

    #[test]
    fn command_line_wins_over_setvar() {
        let mut vars = Variables::new(false);
        vars.set_command_line("N", "1000").unwrap();
        vars.set_script("N", Some("100000")).unwrap();
        assert_eq!(vars.get("n").as_deref(), Some("1000"));
        vars.set_script("N", None).unwrap();
        assert_eq!(vars.get("N").as_deref(), Some("1000"));
    }

    #[test]
    fn setvar_without_value_removes() {
        let mut vars = Variables::new(false);
        vars.set_script("x", Some("1")).unwrap();
        vars.set_script("X", None).unwrap();
        assert_eq!(vars.substitute("$(x)"), Err(Undefined("x".to_string())));
    }

    #[test]
    fn undefined_is_an_error_with_sqlcmds_words() {
        let vars = Variables::new(false);
        let error = vars.substitute("SELECT $(Missing)").unwrap_err();
        assert_eq!(error.to_string(), "'Missing' scripting variable not defined.");
    }

    #[test]
    fn values_are_not_expanded_twice_and_odd_dollars_stay() {
        let mut vars = Variables::new(false);
        vars.set_script("a", Some("$(b)")).unwrap();
        assert_eq!(vars.substitute("$(a)").unwrap(), "$(b)");
        assert_eq!(vars.substitute("cost $( 5 ) and $(").unwrap(), "cost $( 5 ) and $(");
        assert_eq!(vars.substitute("$$(a)$").unwrap(), "$$(b)$");
    }

    #[test]
    fn environment_is_the_fallback() {
        let vars = Variables::new(true);
        // PATH is set wherever tests run.
        assert!(vars.get("PATH").is_some());
        assert_eq!(Variables::new(false).get("PATH"), None);
    }

    #[test]
    fn parses_assignments() {
        assert_eq!(parse_assignment("N=1000").unwrap(), ("N".into(), "1000".into()));
        assert_eq!(parse_assignment("s=\"a \"\"b\"\"\"").unwrap(), ("s".into(), "a \"b\"".into()));
        assert_eq!(parse_assignment("e=").unwrap(), ("e".into(), String::new()));
        assert!(parse_assignment("novalue").is_err());
        assert!(parse_assignment("bad name=1").is_err());
        assert!(parse_assignment("=1").is_err());
    }
}
