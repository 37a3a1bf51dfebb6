//! Prints names and data types: identifiers are bracketed only when they must be.

use std::fmt::{Display, Formatter, Result, Write};

use super::commas;
use crate::ast::{DataType, Ident, ObjectName, TypeParam};
use crate::keywords::is_reserved;

impl Display for Ident {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if is_regular_identifier(&self.value) {
            return f.write_str(&self.value);
        }
        write!(f, "[{}]", self.value.replace(']', "]]"))
    }
}

/// Whether a name can be written without brackets: it lexes as one word, is not reserved, and
/// is not `THROW` (which the parser reads as a statement where an optional name may end).
fn is_regular_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '#');
    starts_well
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$'))
        && !is_reserved(name)
        && !name.eq_ignore_ascii_case("THROW")
}

impl Display for ObjectName {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let prefixes = [&self.server, &self.database, &self.schema];
        let first = prefixes.iter().position(|prefix| prefix.is_some());
        for prefix in &prefixes[first.unwrap_or(prefixes.len())..] {
            if let Some(prefix) = prefix {
                write!(f, "{prefix}")?;
            }
            f.write_char('.')?;
        }
        write!(f, "{}", self.name)
    }
}

impl Display for DataType {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", self.name)?;
        if self.params.is_empty() {
            Ok(())
        } else {
            write!(f, "({})", commas(&self.params))
        }
    }
}

impl Display for TypeParam {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            TypeParam::Number(n) => write!(f, "{n}"),
            TypeParam::Max => f.write_str("MAX"),
        }
    }
}
