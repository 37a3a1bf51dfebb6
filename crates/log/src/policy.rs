//! The durability policy: which commits wait for the log flush.
//!
//! The database setting (`ALTER DATABASE ... SET DELAYED_DURABILITY = ...`) always wins over the
//! commit option (`COMMIT ... WITH (DELAYED_DURABILITY = ON | OFF)`):
//!
//! | commit says     | DISABLED        | ALLOWED | FORCED  |
//! |-----------------|-----------------|---------|---------|
//! | nothing / `OFF` | full            | full    | delayed |
//! | `ON`            | full (silently) | delayed | delayed |
//!
//! Some commits are fully durable whatever the settings say: a transaction that changed more
//! than one database, DDL and catalog changes, and the write of a sequence's cached high-water
//! mark. Their callers pass [`Override::AlwaysFull`].

use crate::format::Durability;

/// The database's `DELAYED_DURABILITY` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DatabaseDurability {
    /// Every commit is fully durable; `WITH (DELAYED_DURABILITY = ON)` is ignored (the default).
    #[default]
    Disabled,
    /// Commits are fully durable unless they say `WITH (DELAYED_DURABILITY = ON)`.
    Allowed,
    /// Every commit is delayed, whatever it says.
    Forced,
}

impl DatabaseDurability {
    /// The value `sys.databases.delayed_durability` shows: 0, 1 or 2.
    pub fn code(self) -> u8 {
        match self {
            DatabaseDurability::Disabled => 0,
            DatabaseDurability::Allowed => 1,
            DatabaseDurability::Forced => 2,
        }
    }

    /// The setting whose [`code`](Self::code) is `code`, if any.
    pub fn from_code(code: u8) -> Option<DatabaseDurability> {
        [DatabaseDurability::Disabled, DatabaseDurability::Allowed, DatabaseDurability::Forced]
            .into_iter()
            .find(|d| d.code() == code)
    }

    /// The value `sys.databases.delayed_durability_desc` shows.
    pub fn description(self) -> &'static str {
        match self {
            DatabaseDurability::Disabled => "DISABLED",
            DatabaseDurability::Allowed => "ALLOWED",
            DatabaseDurability::Forced => "FORCED",
        }
    }

    /// Parses a setting case-insensitively, as `ALTER DATABASE` accepts it.
    pub fn parse(text: &str) -> Option<DatabaseDurability> {
        [DatabaseDurability::Disabled, DatabaseDurability::Allowed, DatabaseDurability::Forced]
            .into_iter()
            .find(|d| d.description().eq_ignore_ascii_case(text))
    }
}

/// What the commit statement said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CommitOption {
    /// No `WITH (DELAYED_DURABILITY = ...)` clause (also autocommit).
    #[default]
    Unspecified,
    /// `WITH (DELAYED_DURABILITY = OFF)`.
    Off,
    /// `WITH (DELAYED_DURABILITY = ON)`.
    On,
}

/// Whether the caller's commit must be fully durable regardless of the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Override {
    /// The settings decide.
    #[default]
    None,
    /// Always fully durable: cross-database transactions, DDL and catalog changes, sequence
    /// high-water marks.
    AlwaysFull,
}

/// Decides a commit's durability.
pub fn resolve(database: DatabaseDurability, commit: CommitOption, over: Override) -> Durability {
    if over == Override::AlwaysFull {
        return Durability::Full;
    }
    match (database, commit) {
        (DatabaseDurability::Disabled, _) => Durability::Full,
        (DatabaseDurability::Allowed, CommitOption::On) => Durability::Delayed,
        (DatabaseDurability::Allowed, _) => Durability::Full,
        (DatabaseDurability::Forced, _) => Durability::Delayed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CommitOption::*;
    use DatabaseDurability::*;
    use Durability::{Delayed, Full};

    /// The guide's table, cell by cell, and the override in every cell.
    #[test]
    fn precedence_table() {
        let table = [
            (Disabled, Unspecified, Full),
            (Disabled, Off, Full),
            (Disabled, On, Full),
            (Allowed, Unspecified, Full),
            (Allowed, Off, Full),
            (Allowed, On, Delayed),
            (Forced, Unspecified, Delayed),
            (Forced, Off, Delayed),
            (Forced, On, Delayed),
        ];
        for (db, commit, expected) in table {
            assert_eq!(resolve(db, commit, Override::None), expected, "{db:?} x {commit:?}");
            assert_eq!(resolve(db, commit, Override::AlwaysFull), Full, "{db:?} x {commit:?}");
        }
    }

    #[test]
    fn settings_parse_case_insensitively() {
        assert_eq!(DatabaseDurability::parse("forced"), Some(Forced));
        assert_eq!(DatabaseDurability::parse("Allowed"), Some(Allowed));
        assert_eq!(DatabaseDurability::parse("DISABLED"), Some(Disabled));
        assert_eq!(DatabaseDurability::parse("sometimes"), None);
        assert_eq!(Forced.code(), 2);
    }
}
