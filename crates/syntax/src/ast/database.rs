//! `CREATE DATABASE` and `ALTER DATABASE`: files, sizes, growth and database options.

use super::Ident;

/// `CREATE DATABASE name [ON (file), ...] [LOG ON (file), ...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateDatabase {
    /// The database name.
    pub name: Ident,
    /// Data files (`ON [PRIMARY] (...)`).
    pub files: Vec<FileSpec>,
    /// Log files (`LOG ON (...)`).
    pub log_files: Vec<FileSpec>,
    /// `COLLATE name`: the database's default collation.
    pub collation: Option<Ident>,
}

/// A database file specification: `(NAME = ..., FILENAME = '...', SIZE = ..., ...)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileSpec {
    /// `NAME`: the logical file name.
    pub logical_name: Option<Ident>,
    /// `FILENAME`: the operating-system path.
    pub filename: Option<String>,
    /// `SIZE`: the initial size.
    pub size: Option<FileSize>,
    /// `MAXSIZE`.
    pub max_size: Option<MaxSize>,
    /// `FILEGROWTH`.
    pub growth: Option<FileGrowth>,
}

/// A file size: an amount and its unit. Without a unit suffix SQL Server means megabytes, so
/// the parser records [`SizeUnit::Megabytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileSize {
    /// The amount.
    pub amount: u64,
    /// The unit.
    pub unit: SizeUnit,
}

/// Size units of file specifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeUnit {
    /// `KB`
    Kilobytes,
    /// `MB` (the default)
    Megabytes,
    /// `GB`
    Gigabytes,
    /// `TB`
    Terabytes,
}

/// `MAXSIZE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxSize {
    /// A limit.
    Size(FileSize),
    /// `UNLIMITED`.
    Unlimited,
}

/// `FILEGROWTH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileGrowth {
    /// A fixed increment.
    Size(FileSize),
    /// A percentage of the current size (`10%`).
    Percent(u64),
}

/// `ALTER DATABASE name | CURRENT SET option, ... [WITH termination]`, or `ALTER DATABASE
/// name MODIFY FILE (...) | ADD [LOG] FILE (...) | REMOVE FILE name | COLLATE name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterDatabase {
    /// Which database.
    pub database: DatabaseRef,
    /// The options being set, in order (at least one, unless `file` is given).
    pub options: Vec<DatabaseOption>,
    /// A change to the database's files instead of options.
    pub file: Option<DatabaseFileChange>,
    /// `COLLATE name` instead of options: a new default collation.
    pub collation: Option<Ident>,
    /// `WITH ROLLBACK IMMEDIATE`, `WITH ROLLBACK AFTER n SECONDS` or `WITH NO_WAIT`, as
    /// written (upper case), for display.
    pub termination: Option<String>,
}

/// A change to a database's files in `ALTER DATABASE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseFileChange {
    /// `MODIFY FILE (NAME = ..., SIZE | MAXSIZE | FILEGROWTH = ...)`.
    Modify(FileSpec),
    /// `ADD FILE (...), ...` or `ADD LOG FILE (...), ...`.
    Add {
        /// `LOG`.
        log: bool,
        /// The files.
        files: Vec<FileSpec>,
    },
    /// `REMOVE FILE name`.
    Remove(Ident),
}

/// A database named in `ALTER DATABASE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseRef {
    /// A name.
    Name(Ident),
    /// `CURRENT`: the session's database.
    Current,
}

/// Database options `ALTER DATABASE ... SET` understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseOption {
    /// `DELAYED_DURABILITY = DISABLED | ALLOWED | FORCED`.
    DelayedDurability(DelayedDurability),
    /// `RECOVERY SIMPLE | FULL | BULK_LOGGED`.
    Recovery(RecoveryModel),
    /// An option Walden accepts and keeps nothing for (`SINGLE_USER`, `AUTO_CLOSE OFF`,
    /// `COMPATIBILITY_LEVEL = 150`...): its text as written, normalized to upper case with
    /// single spaces.
    Accepted(String),
    /// `ONLINE`: open a database that was set OFFLINE, or could not be opened
    /// (RECOVERY_PENDING, SUSPECT), again.
    Online,
    /// `OFFLINE`: close the database; every use is refused (942) until `ONLINE`.
    Offline,
    /// `READ_ONLY` (true) or `READ_WRITE` (false).
    ReadOnly(bool),
}

/// The database-level delayed durability setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayedDurability {
    /// Every commit is fully durable (the default).
    Disabled,
    /// A commit is delayed durable if it says `WITH (DELAYED_DURABILITY = ON)`.
    Allowed,
    /// Every commit that can be delayed durable is.
    Forced,
}

/// Recovery models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryModel {
    /// `SIMPLE`
    Simple,
    /// `FULL`
    Full,
    /// `BULK_LOGGED`
    BulkLogged,
}
