//! The engine's errors, each with the SQL Server error number a client would see.

use std::fmt;
use std::path::PathBuf;

use walden_storage::btree::TreeError;
use walden_storage::buffer::BufferError;
use walden_storage::{FileError, PageError};

use crate::lock::LockError;

/// What can go wrong in the engine.
#[derive(Debug)]
pub enum EngineError {
    /// A lock wait timed out (1222) or the transaction was chosen as a deadlock victim (1205).
    Lock(LockError),
    /// Error 2627: a duplicate key in a primary key or unique constraint.
    DuplicateKey {
        /// The constraint or index.
        constraint: String,
        /// The table.
        table: String,
        /// The key, as SQL Server prints it: `(1, abc)`.
        key: String,
        /// 2627 for constraints, 2601 for unique indexes, 1505 when building a unique index.
        number: i32,
        /// A UNIQUE constraint's (2627 names the kind of constraint).
        unique_constraint: bool,
    },
    /// Error 911: no such database.
    NoSuchDatabase(String),
    /// Error 1801: the database exists.
    DatabaseExists(String),
    /// Error 208: no such object.
    NoSuchObject(String),
    /// The table's definition was replaced (ALTER TABLE, TRUNCATE TABLE) while the statement
    /// waited for the table's first lock: the statement's view of it is stale, so it stops
    /// before touching trees that are no longer the table's.
    DefinitionChanged(String),
    /// Error 2714: an object of that name exists.
    ObjectExists(String),
    /// Error 5170: a file to create exists.
    FileExists(PathBuf),
    /// Error 9001 (the log failed) or 823 (a data file failed): the database was taken
    /// offline by an I/O failure.
    DatabaseOffline {
        /// The database.
        database: String,
        /// What failed.
        reason: String,
        /// Which file failed, so the message names the right one.
        cause: OfflineCause,
    },
    /// Error 945 (recovery pending) or 926 (suspect): the database could not be opened when
    /// the instance started (or at its last `ALTER DATABASE ... SET ONLINE`).
    DatabaseUnavailable {
        /// The database.
        database: String,
        /// Why not.
        reason: String,
        /// Whether recovery ran and failed (SUSPECT) rather than could not start.
        suspect: bool,
    },
    /// Error 942: the database was taken offline with `ALTER DATABASE ... SET OFFLINE`.
    DatabaseSetOffline(String),
    /// Error 3906: a change to a database set `READ_ONLY`.
    ReadOnlyDatabase(String),
    /// Error 515: NULL into a NOT NULL column.
    NullNotAllowed {
        /// The column.
        column: String,
        /// The table.
        table: String,
    },
    /// Error 11728 / 11731: a sequence reached its limit without CYCLE.
    SequenceExhausted(String),
    /// Error 8115: the next identity value does not fit the column's type (its name).
    IdentityOverflow(String),
    /// Error 8152 and friends: a value does not fit its column.
    ValueTooLarge(String),
    /// Error 3702 / 1828-like: the object is in use.
    InUse(String),
    /// An error in the arguments the SQL layer passed (a bug there, or bad input it did not
    /// check); number 50000-like.
    Invalid(String),
    /// Error 823: an operating-system I/O error.
    Io(String),
    /// Error 9001-like: the log failed.
    Log(String),
    /// Error 824: a page or log record failed its consistency checks.
    Corrupt(String),
    /// Error 1105-like: out of space, or the pool has no free frame.
    Resources(String),
    /// Error 1105: the data file cannot grow (its MAXSIZE reached, or the disk full). The
    /// statement fails; the database stays online and writable once there is room.
    FilegroupFull {
        /// The database (filled in by the layer that knows it; empty below).
        database: String,
        /// `'schema.table'.'index'`, or empty when not known.
        object: String,
    },
    /// A file change or database option SQL Server refuses with its own number (5039, 5040,
    /// 8985, 5058...).
    FileRefused {
        /// The error number.
        number: i32,
        /// SQL Server's message.
        message: String,
    },
    /// Error 9002: the log cannot take new work (its MAXSIZE reached, or the disk full,
    /// and nothing in it reusable yet). The statement fails; rollbacks still find room.
    LogFull {
        /// The database.
        database: String,
        /// Why the log cannot be reused: `sys.databases.log_reuse_wait_desc`.
        reason: String,
    },
    /// A broken invariant inside the engine.
    Internal(String),
    /// Error 3023-like: the data directory is in use by another process.
    Locked(PathBuf),
}

impl EngineError {
    /// The SQL Server error number.
    pub fn number(&self) -> i32 {
        match self {
            EngineError::Lock(e) => e.number(),
            EngineError::DuplicateKey { number, .. } => *number,
            EngineError::NoSuchDatabase(_) => 911,
            EngineError::DatabaseExists(_) => 1801,
            EngineError::NoSuchObject(_) => 208,
            EngineError::DefinitionChanged(_) => 50000,
            EngineError::ObjectExists(_) => 2714,
            EngineError::FileExists(_) => 5170,
            EngineError::DatabaseOffline { cause: OfflineCause::DataFile, .. } => 823,
            EngineError::DatabaseOffline { .. } => 9001,
            EngineError::DatabaseUnavailable { suspect: true, .. } => 926,
            EngineError::DatabaseUnavailable { .. } => 945,
            EngineError::DatabaseSetOffline(_) => 942,
            EngineError::ReadOnlyDatabase(_) => 3906,
            EngineError::NullNotAllowed { .. } => 515,
            EngineError::SequenceExhausted(_) => 11728,
            EngineError::IdentityOverflow(_) => 8115,
            EngineError::ValueTooLarge(_) => 8152,
            EngineError::InUse(_) => 3702,
            EngineError::Invalid(_) => 50000,
            EngineError::Io(_) => 823,
            EngineError::Log(_) => 9001,
            EngineError::Corrupt(_) => 824,
            EngineError::Resources(_) | EngineError::FilegroupFull { .. } => 1105,
            EngineError::LogFull { .. } => 9002,
            EngineError::FileRefused { number, .. } => *number,
            EngineError::Internal(_) => 50000,
            EngineError::Locked(_) => 5120,
        }
    }

    /// The severity SQL Server gives the error.
    pub fn severity(&self) -> u8 {
        match self {
            EngineError::Lock(_) => 13,
            EngineError::Io(_) | EngineError::Corrupt(_) | EngineError::Log(_) => 24,
            EngineError::DatabaseOffline { .. } => 21,
            EngineError::DatabaseUnavailable { .. } | EngineError::DatabaseSetOffline(_) => 14,
            EngineError::ReadOnlyDatabase(_) => 16,
            EngineError::DuplicateKey { .. }
            | EngineError::ObjectExists(_)
            | EngineError::NullNotAllowed { .. }
            | EngineError::NoSuchObject(_)
            | EngineError::DefinitionChanged(_)
            | EngineError::NoSuchDatabase(_)
            | EngineError::DatabaseExists(_)
            | EngineError::SequenceExhausted(_)
            | EngineError::IdentityOverflow(_)
            | EngineError::ValueTooLarge(_)
            | EngineError::InUse(_)
            | EngineError::Invalid(_)
            | EngineError::FileExists(_)
            | EngineError::FileRefused { .. }
            | EngineError::Locked(_) => 16,
            EngineError::Resources(_)
            | EngineError::FilegroupFull { .. }
            | EngineError::LogFull { .. } => 17,
            EngineError::Internal(_) => 20,
        }
    }

    /// Whether the error dooms the transaction (the session must roll back).
    pub fn dooms_transaction(&self) -> bool {
        matches!(
            self,
            EngineError::Lock(LockError::Deadlock { .. })
                | EngineError::DatabaseOffline { .. }
                | EngineError::Io(_)
                | EngineError::Log(_)
                | EngineError::Corrupt(_)
                | EngineError::Internal(_)
        )
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Lock(e) => write!(f, "{e}"),
            EngineError::DuplicateKey { constraint, table, key, number, unique_constraint } => {
                if *number == 1505 {
                    write!(
                        f,
                        "The CREATE UNIQUE INDEX statement terminated because a duplicate key \
                         was found for the object name '{table}' and the index name \
                         '{constraint}'. The duplicate key value is {key}."
                    )
                } else if *number == 2601 {
                    write!(
                        f,
                        "Cannot insert duplicate key row in object '{table}' with unique index \
                         '{constraint}'. The duplicate key value is {key}."
                    )
                } else {
                    let kind = if *unique_constraint { "UNIQUE KEY" } else { "PRIMARY KEY" };
                    write!(
                        f,
                        "Violation of {kind} constraint '{constraint}'. Cannot insert duplicate \
                         key in object '{table}'. The duplicate key value is {key}."
                    )
                }
            }
            EngineError::NoSuchDatabase(name) => write!(
                f,
                "Database '{name}' does not exist. Make sure that the name is entered correctly."
            ),
            EngineError::DatabaseExists(name) => {
                write!(f, "Database '{name}' already exists. Choose a different database name.")
            }
            EngineError::NoSuchObject(name) => write!(f, "Invalid object name '{name}'."),
            EngineError::DefinitionChanged(name) => write!(
                f,
                "The definition of table '{name}' changed while this statement waited for its \
                 lock (a concurrent ALTER TABLE or TRUNCATE TABLE committed). Run the statement \
                 again."
            ),
            EngineError::ObjectExists(name) => {
                write!(f, "There is already an object named '{name}' in the database.")
            }
            EngineError::FileExists(path) => write!(
                f,
                "Cannot create file '{}' because it already exists. Change the file path or \
                 the file name, and retry the operation.",
                path.display()
            ),
            EngineError::DatabaseOffline { database, reason, cause: OfflineCause::Log } => write!(
                f,
                "The log for database '{database}' is not available: {reason}. Check the \
                 operating system error log for related error messages. Resolve any errors and \
                 restart the database."
            ),
            EngineError::DatabaseOffline { database, reason, cause: OfflineCause::DataFile } => {
                write!(
                    f,
                    "Database '{database}' is offline after a data file failed: {reason}. Check \
                     the operating system error log for related error messages. Resolve any \
                     errors and restart the database."
                )
            }
            EngineError::DatabaseOffline { database, reason, cause: OfflineCause::Other } => {
                write!(
                    f,
                    "Database '{database}' is offline: {reason}. Resolve any errors and restart \
                     the database."
                )
            }
            EngineError::DatabaseSetOffline(database) => {
                write!(f, "Database '{database}' cannot be opened because it is offline.")
            }
            EngineError::ReadOnlyDatabase(database) => write!(
                f,
                "Failed to update database \"{database}\" because the database is read-only."
            ),
            EngineError::DatabaseUnavailable { database, reason, suspect: true } => write!(
                f,
                "Database '{database}' cannot be opened. It has been marked SUSPECT by \
                 recovery: {reason}. See the server log for more information."
            ),
            EngineError::DatabaseUnavailable { database, reason, suspect: false } => write!(
                f,
                "Database '{database}' cannot be opened due to inaccessible files or \
                 insufficient memory or disk space: {reason}. See the server log for details, \
                 and run ALTER DATABASE [{database}] SET ONLINE once the cause is fixed."
            ),
            EngineError::NullNotAllowed { column, table } => write!(
                f,
                "Cannot insert the value NULL into column '{column}', table '{table}'; column \
                 does not allow nulls. INSERT fails."
            ),
            EngineError::SequenceExhausted(name) => write!(
                f,
                "The sequence object '{name}' has reached its minimum or maximum value. \
                 Restart the sequence object to allow new values to be generated."
            ),
            EngineError::IdentityOverflow(ty) => {
                write!(f, "Arithmetic overflow error converting IDENTITY to data type {ty}.")
            }
            EngineError::ValueTooLarge(what) => write!(f, "{what}"),
            EngineError::InUse(what) => write!(f, "{what}"),
            EngineError::Invalid(what) => write!(f, "{what}"),
            EngineError::Io(what) => write!(f, "I/O error: {what}"),
            EngineError::Log(what) => write!(f, "The transaction log failed: {what}"),
            EngineError::Corrupt(what) => {
                write!(f, "A consistency check failed: {what}")
            }
            EngineError::Resources(what) => write!(f, "{what}"),
            EngineError::FilegroupFull { database, object } => write!(
                f,
                "Could not allocate space for object '{object}' in database '{database}' because \
                 the 'PRIMARY' filegroup is full. Create disk space by deleting unneeded files, \
                 dropping objects in the filegroup, adding additional files to the filegroup, \
                 or setting autogrowth on for existing files in the filegroup."
            ),
            EngineError::FileRefused { message, .. } => write!(f, "{message}"),
            EngineError::LogFull { database, reason } => write!(
                f,
                "The transaction log for database '{database}' is full due to '{reason}'. To \
                 find out why space in the log cannot be reused, see the log_reuse_wait_desc \
                 column in sys.databases"
            ),
            EngineError::Internal(what) => write!(f, "internal error: {what}"),
            EngineError::Locked(dir) => write!(
                f,
                "The data directory '{}' is in use by another Walden process.",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for EngineError {}

/// What took a database offline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfflineCause {
    /// Its log failed (a write or sync of the `.ldf`).
    Log,
    /// Its data file failed (a write or sync of the `.mdf`).
    DataFile,
    /// Something else: a change failed half way in memory, a rollback failed.
    Other,
}

impl From<LockError> for EngineError {
    fn from(e: LockError) -> Self {
        EngineError::Lock(e)
    }
}

impl From<BufferError> for EngineError {
    fn from(e: BufferError) -> Self {
        match e {
            BufferError::File(f) => f.into(),
            BufferError::NoFreeFrame { .. } => EngineError::Resources(e.to_string()),
            other => EngineError::Io(other.to_string()),
        }
    }
}

impl From<FileError> for EngineError {
    fn from(e: FileError) -> Self {
        match e {
            FileError::Page(p) => p.into(),
            // A growth that ran out of space changed nothing the database relies on (the file
            // gives back what it added): the statement fails with 1105 and the database stays
            // online, writable again once there is room.
            FileError::Io { op: "grow", source, .. }
                if source.kind() == std::io::ErrorKind::StorageFull =>
            {
                EngineError::FilegroupFull { database: String::new(), object: String::new() }
            }
            FileError::Full { .. } => {
                EngineError::FilegroupFull { database: String::new(), object: String::new() }
            }
            other => EngineError::Io(other.to_string()),
        }
    }
}

impl From<PageError> for EngineError {
    fn from(e: PageError) -> Self {
        EngineError::Corrupt(e.to_string())
    }
}

impl From<TreeError> for EngineError {
    fn from(e: TreeError) -> Self {
        match e {
            TreeError::Buffer(b) => b.into(),
            TreeError::Page(p) => p.into(),
            TreeError::Log(l) => EngineError::Log(l),
            TreeError::Corrupt { .. } => EngineError::Corrupt(e.to_string()),
            TreeError::DuplicateKey => EngineError::Internal("unexpected duplicate key".into()),
            TreeError::TooLarge { .. } => EngineError::ValueTooLarge(e.to_string()),
        }
    }
}
