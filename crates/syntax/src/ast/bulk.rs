//! `INSERT BULK`: the statement a bulk-copy client (bcp, go-mssqldb's `CopyIn`, tedious'
//! `BulkLoad`, mssql-jdbc's `SQLServerBulkCopy`, pytds' `copy_to`) sends before the rows,
//! which follow in a Bulk Load message ([MS-TDS] 2.2.6.1) rather than in the statement.

use super::{DataType, Ident, ObjectName};

/// `INSERT BULK table (column type [COLLATE name] [NULL | NOT NULL], ...) [WITH (option, ...)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct InsertBulk {
    /// The table the rows go to.
    pub table: ObjectName,
    /// The columns the client will send, in the order of its COLMETADATA.
    pub columns: Vec<BulkColumn>,
    /// The `WITH` options.
    pub options: BulkOptions,
}

/// One column of an `INSERT BULK` list: the type the client sends its values as.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkColumn {
    /// The table's column.
    pub name: Ident,
    /// The type of the values on the wire.
    pub ty: DataType,
    /// `COLLATE name`, as clients copy it from the table's metadata.
    pub collation: Option<Ident>,
    /// `NULL` (true) or `NOT NULL` (false), when given.
    pub nullable: Option<bool>,
}

/// The `WITH` options of `INSERT BULK`, as SQL Server defines them (all off by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkOptions {
    /// `CHECK_CONSTRAINTS`: check CHECK and FOREIGN KEY constraints (off: they are not).
    pub check_constraints: bool,
    /// `FIRE_TRIGGERS`: run the table's INSERT triggers (off: they do not fire).
    pub fire_triggers: bool,
    /// `KEEP_NULLS`: a NULL stays NULL (off: a NULL takes the column's default).
    pub keep_nulls: bool,
    /// `KEEP_IDENTITY`: the identity column takes the values sent (off: they are ignored and
    /// the identity generates its own).
    pub keep_identity: bool,
    /// `TABLOCK`.
    pub tablock: bool,
    /// `ROWS_PER_BATCH = n`: the client's estimate of the rows to come.
    pub rows_per_batch: Option<u64>,
    /// `KILOBYTES_PER_BATCH = n`: the client's estimate of the data to come.
    pub kilobytes_per_batch: Option<u64>,
    /// `ORDER (column [ASC | DESC], ...)`: the order the rows are sent in; `true` for DESC.
    pub order: Vec<(Ident, bool)>,
}

/// `BULK INSERT [[db.]schema.]table FROM 'file' [WITH (option, ...)]`: rows from a data file
/// on the server's machine. The options are SQL Server's; each is kept as written, checked
/// when the statement runs.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkInsert {
    /// The table the rows go to.
    pub table: ObjectName,
    /// The data file's path, relative to the server's working directory or absolute.
    pub file: String,
    /// The `WITH` options.
    pub options: BulkInsertOptions,
}

/// The `WITH` options of `BULK INSERT`. A `None` or `false` is the option left out, which
/// has SQL Server's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkInsertOptions {
    /// `BATCHSIZE = n`: rows per transaction (all of the file in one by default).
    pub batch_size: Option<u64>,
    /// `CHECK_CONSTRAINTS`, `FIRE_TRIGGERS`, `KEEPNULLS`, `KEEPIDENTITY`, `TABLOCK`, `ORDER`,
    /// `ROWS_PER_BATCH`, `KILOBYTES_PER_BATCH`: as in `INSERT BULK`.
    pub load: BulkOptions,
    /// `CODEPAGE = 'ACP' | 'OEM' | 'RAW' | 'code_page'`.
    pub code_page: Option<String>,
    /// `DATAFILETYPE = 'char' | 'native' | 'widechar' | 'widenative'`.
    pub data_file_type: Option<String>,
    /// `FIELDTERMINATOR = 'text'`.
    pub field_terminator: Option<String>,
    /// `ROWTERMINATOR = 'text'`.
    pub row_terminator: Option<String>,
    /// `FIRSTROW = n`.
    pub first_row: Option<u64>,
    /// `LASTROW = n`.
    pub last_row: Option<u64>,
    /// `MAXERRORS = n`.
    pub max_errors: Option<u64>,
    /// `ERRORFILE = 'file'`.
    pub error_file: Option<String>,
    /// `FORMAT = 'CSV'`.
    pub format: Option<String>,
    /// `FIELDQUOTE = 'c'`.
    pub field_quote: Option<String>,
    /// `FORMATFILE = 'file'` (refused when the statement runs).
    pub format_file: Option<String>,
}

/// What `OPENROWSET(BULK 'file', ...)` reads the whole file as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SingleKind {
    /// `SINGLE_BLOB`: varbinary(max).
    Blob,
    /// `SINGLE_CLOB`: varchar(max).
    Clob,
    /// `SINGLE_NCLOB`: nvarchar(max), the file being UTF-16.
    Nclob,
}
