//! The token stream ([MS-TDS] 2.2.7): everything the server sends after PRELOGIN.
//!
//! A response message is a sequence of tokens, each a type byte and a body. The bodies come in
//! three shapes: a two-byte length then data (LOGINACK, ENVCHANGE, INFO, ERROR, ORDER), a
//! fixed size (DONE, DONEPROC, DONEINPROC: status, current command, 8-byte row count;
//! RETURNSTATUS), or a shape that depends on earlier tokens: ROW and NBCROW hold one value per
//! column of the most recent COLMETADATA, so decoding is stateful, which [`TokenReader`]
//! handles. NBCROW replaces the NULL values of a row by a leading bitmap (bit *i* set: column
//! *i* is NULL), which is how wide sparse rows stay small.
//!
//! Length-prefixed tokens are decoded inside their length: fields past the ones this codec
//! knows are ignored (a newer server may append some), and fields cannot run past the token.
//! ENVCHANGE types this codec does not model are kept raw as [`EnvChange::Other`].
//!
//! Encoders are the server's; decoders serve the `walden sql` client and the round-trip tests.
//! Both sides refuse what the codec cannot represent faithfully: the legacy TEXT/NTEXT/IMAGE
//! types and NULLTYPE in result metadata (Walden sends `(MAX)` types instead; a NULLTYPE
//! column would let a one-byte ROW stand for thousands of values), Always Encrypted columns,
//! and COLMETADATA's NoMetaData form (0xFFFF) in a stream that never had metadata. Every
//! public encoder appends a whole token or nothing.
//!
//! API server cursors (`sp_cursoropen`, `sp_cursorfetch`) add three shapes: TABNAME and COLINFO
//! after a cursor's COLMETADATA, which say which table each column comes from (drivers update
//! through the cursor by those names), and the NoMetaData COLMETADATA a fetch sends when the
//! client asked for no metadata: its rows are those of the cursor's earlier COLMETADATA.

use std::borrow::Cow;

use crate::types::TypeInfo;
use crate::value::{decode_row_value, decode_value, encode_row_value, encode_value};
use crate::wire::{atomic, put_b_varbyte, put_b_varchar, put_us_varchar, with_u16_len, Reader};
use crate::{Collation, TdsError, TdsValue, TdsVersion};

// The token type bytes (2.2.7), public for a client that delimits tokens as they arrive.
/// RETURNSTATUS: a four-byte status.
pub const RETURNSTATUS: u8 = 0x79;
/// COLMETADATA: a result set's columns.
pub const COLMETADATA: u8 = 0x81;
/// ORDER: length-prefixed.
pub const ORDER: u8 = 0xA9;
/// TABNAME: length-prefixed table names of a cursor's columns.
pub const TABNAME: u8 = 0xA4;
/// COLINFO: length-prefixed, each column's table and status.
pub const COLINFO: u8 = 0xA5;
/// ERROR: length-prefixed.
pub const ERROR: u8 = 0xAA;
/// INFO: length-prefixed.
pub const INFO: u8 = 0xAB;
/// RETURNVALUE: an output parameter.
pub const RETURNVALUE: u8 = 0xAC;
/// LOGINACK: length-prefixed.
pub const LOGINACK: u8 = 0xAD;
/// ROW: one value per column.
pub const ROW: u8 = 0xD1;
/// NBCROW: a null bitmap, then the non-NULL values.
pub const NBCROW: u8 = 0xD2;
/// FEATUREEXTACK: the features of LOGIN7's FeatureExt the server acknowledges (TDS 7.4).
pub const FEATUREEXTACK: u8 = 0xAE;
/// ENVCHANGE: length-prefixed.
pub const ENVCHANGE: u8 = 0xE3;
/// DONE: 12 bytes.
pub const DONE: u8 = 0xFD;
/// DONEPROC: 12 bytes.
pub const DONEPROC: u8 = 0xFE;
/// DONEINPROC: 12 bytes.
pub const DONEINPROC: u8 = 0xFF;

const ENV_DATABASE: u8 = 1;
const ENV_LANGUAGE: u8 = 2;
const ENV_PACKET_SIZE: u8 = 4;
const ENV_SQL_COLLATION: u8 = 7;
const ENV_BEGIN_TRANSACTION: u8 = 8;
const ENV_COMMIT_TRANSACTION: u8 = 9;
const ENV_ROLLBACK_TRANSACTION: u8 = 10;
const ENV_RESET_CONNECTION_ACK: u8 = 18;

/// COLMETADATA's column count meaning "no metadata follows".
const NO_METADATA: u16 = 0xFFFF;

bit_flags! {
    /// DONE / DONEPROC / DONEINPROC status (2.2.7.6).
    pub struct DoneStatus(u16) {
        /// DONE_MORE: more results follow.
        const MORE = 0x0001;
        /// DONE_ERROR: the statement failed.
        const ERROR = 0x0002;
        /// DONE_INXACT: a transaction is in progress.
        const IN_XACT = 0x0004;
        /// DONE_COUNT: the row count is valid.
        const COUNT = 0x0010;
        /// DONE_ATTN: acknowledges an attention (cancel).
        const ATTN = 0x0020;
        /// DONE_SRVERROR: a severe error; discard the results.
        const SRVERROR = 0x0100;
    }
}

bit_flags! {
    /// COLMETADATA / RETURNVALUE column flags (2.2.7.4).
    pub struct ColumnFlags(u16) {
        /// fNullable.
        const NULLABLE = 0x0001;
        /// fCaseSen.
        const CASE_SENSITIVE = 0x0002;
        /// usUpdateable = 1: read/write (0 is read-only).
        const UPDATEABLE = 0x0004;
        /// usUpdateable = 2: unknown.
        const UPDATEABLE_UNKNOWN = 0x0008;
        /// fIdentity.
        const IDENTITY = 0x0010;
        /// fComputed.
        const COMPUTED = 0x0020;
        /// fFixedLenCLRType.
        const FIXED_LEN_CLR_TYPE = 0x0100;
        /// fSparseColumnSet.
        const SPARSE_COLUMN_SET = 0x0400;
        /// fEncrypted (Always Encrypted; not supported).
        const ENCRYPTED = 0x0800;
        /// fHidden: a column added by the server (FOR BROWSE keys).
        const HIDDEN = 0x2000;
        /// fKey: part of the key (FOR BROWSE).
        const KEY = 0x4000;
        /// fNullableUnknown.
        const NULLABLE_UNKNOWN = 0x8000;
    }
}

bit_flags! {
    /// RETURNVALUE status.
    pub struct ReturnValueStatus(u8) {
        /// An OUTPUT parameter's value.
        const OUTPUT_PARAM = 0x01;
        /// A user-defined function's return value.
        const UDF = 0x02;
    }
}

/// LOGINACK (0xAD): the login succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginAck {
    /// 1 = SQL_TSQL.
    pub interface: u8,
    /// The TDS version the server will speak (big-endian on the wire, unlike LOGIN7's).
    pub tds_version: u32,
    /// Server product name.
    pub prog_name: String,
    /// Product major version.
    pub major: u8,
    /// Product minor version.
    pub minor: u8,
    /// Product build number.
    pub build: u16,
}

/// An ENVCHANGE (0xE3) notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvChange {
    /// Type 1: current database.
    Database {
        /// New database.
        new: String,
        /// Previous database.
        old: String,
    },
    /// Type 2: language.
    Language {
        /// New language.
        new: String,
        /// Previous language.
        old: String,
    },
    /// Type 4: packet size (sent as decimal text).
    PacketSize {
        /// The packet size both sides use from the next message on.
        new: u32,
        /// The previous packet size.
        old: u32,
    },
    /// Type 7: the database's default collation.
    SqlCollation {
        /// New collation.
        new: Option<Collation>,
        /// Previous collation.
        old: Option<Collation>,
    },
    /// Type 8: a transaction began; the client must send `descriptor` in ALL_HEADERS.
    BeginTransaction {
        /// The new transaction's descriptor.
        descriptor: u64,
    },
    /// Type 9: the transaction committed.
    CommitTransaction {
        /// The ended transaction's descriptor.
        descriptor: u64,
    },
    /// Type 10: the transaction rolled back.
    RollbackTransaction {
        /// The ended transaction's descriptor.
        descriptor: u64,
    },
    /// Type 18: acknowledges a RESETCONNECTION request.
    ResetConnectionAck,
    /// Any other type, with its body after the type byte, raw.
    Other {
        /// The type.
        ty: u8,
        /// The body.
        data: Vec<u8>,
    },
}

/// An ERROR (0xAA) or INFO (0xAB) message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerMessage {
    /// Message number (`sys.messages` id).
    pub number: i32,
    /// Error state.
    pub state: u8,
    /// Severity class: INFO below 11, ERROR from 11; 20 and above end the connection.
    pub class: u8,
    /// The text.
    pub message: String,
    /// The server's name.
    pub server: String,
    /// The procedure the message arose in, if any.
    pub procedure: String,
    /// The line in the batch or procedure.
    pub line: i32,
}

/// A DONE, DONEPROC or DONEINPROC token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// Status bits.
    pub status: DoneStatus,
    /// The token of the statement (0xC1 SELECT, 0xC3 INSERT, 0xC5 UPDATE, 0xC4 DELETE...).
    pub cur_cmd: u16,
    /// Rows affected or returned, valid with [`DoneStatus::COUNT`].
    pub row_count: u64,
}

/// One column of a COLMETADATA (0x81) token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The user type id (0 for most types, 80 for TIMESTAMP...).
    pub user_type: u32,
    /// Flags.
    pub flags: ColumnFlags,
    /// The wire type.
    pub ty: TypeInfo,
    /// The column name, possibly empty.
    pub name: String,
    /// TableName, sent for TEXT, NTEXT and IMAGE columns only: the parts of the name of the
    /// table the column comes from (none for an expression, or a table not told).
    pub table_name: Vec<String>,
}

impl Column {
    /// A column of type `ty`, nullable or not, with user type 0.
    pub fn new(name: &str, ty: TypeInfo, nullable: bool) -> Self {
        let flags = if nullable { ColumnFlags::NULLABLE } else { ColumnFlags::NONE };
        Self { user_type: 0, flags, ty, name: name.to_owned(), table_name: Vec::new() }
    }
}

/// A RETURNVALUE (0xAC) token: an output parameter's or a UDF's value.
#[derive(Debug, Clone, PartialEq)]
pub struct ReturnValue {
    /// The parameter's position in the RPC.
    pub ordinal: u16,
    /// The parameter's name.
    pub name: String,
    /// Status.
    pub status: ReturnValueStatus,
    /// User type.
    pub user_type: u32,
    /// Flags.
    pub flags: ColumnFlags,
    /// The wire type.
    pub ty: TypeInfo,
    /// The value.
    pub value: TdsValue,
}

/// A token of the response stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    /// LOGINACK.
    LoginAck(LoginAck),
    /// ENVCHANGE.
    EnvChange(EnvChange),
    /// INFO.
    Info(ServerMessage),
    /// ERROR.
    Error(ServerMessage),
    /// DONE: a statement of the batch ended.
    Done(Done),
    /// DONEPROC: a procedure (RPC) ended.
    DoneProc(Done),
    /// DONEINPROC: a statement inside a procedure ended.
    DoneInProc(Done),
    /// COLMETADATA: a result set begins.
    ColMetadata(Vec<Column>),
    /// ROW.
    Row(Vec<TdsValue>),
    /// NBCROW: a row with a null bitmap.
    NbcRow(Vec<TdsValue>),
    /// RETURNSTATUS: a procedure's return status.
    ReturnStatus(i32),
    /// RETURNVALUE.
    ReturnValue(ReturnValue),
    /// ORDER: the 1-based columns the result set is sorted by.
    Order(Vec<u16>),
    /// TABNAME (2.2.7.20): the tables a cursor's columns come from, each as its name's parts.
    TabName(Vec<Vec<String>>),
    /// COLINFO (2.2.7.3): for each column of the current result set, in order.
    ColInfo(Vec<ColInfo>),
    /// COLMETADATA with NoMetaData (0xFFFF): the rows that follow have the columns of the
    /// result set the stream described last (a cursor fetch under RPC fNoMetaData).
    NoMetadata,
    /// FEATUREEXTACK (2.2.7.11): each acknowledged feature's id and data, sent with LOGINACK
    /// only, and only for features the client's LOGIN7 asked for.
    FeatureExtAck(Vec<(u8, Vec<u8>)>),
}

bit_flags! {
    /// COLINFO's Status of a column.
    pub struct ColInfoStatus(u8) {
        /// EXPRESSION: the column is computed, not a table's.
        const EXPRESSION = 0x04;
        /// KEY: the column is part of the key of its table.
        const KEY = 0x08;
        /// HIDDEN: the server added the column (a cursor's ROWSTAT, a browse key).
        const HIDDEN = 0x10;
        /// DIFFERENT_NAME: the column's name is an alias; the base name follows.
        const DIFFERENT_NAME = 0x20;
    }
}

/// One column's COLINFO entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColInfo {
    /// The 1-based column number.
    pub column: u8,
    /// The 1-based index of its table in the TABNAME token; 0 for none.
    pub table: u8,
    pub status: ColInfoStatus,
    /// The base column's name, with DIFFERENT_NAME.
    pub base_name: Option<String>,
}

/// FEATUREEXTACK's end: the FeatureId 0xFF.
const FEATURE_ACK_TERMINATOR: u8 = 0xFF;

/// Rejects types this codec does not carry in result streams (see the module documentation):
/// TEXT, NTEXT and IMAGE are result set columns (`in_row`), never RETURNVALUEs.
fn check_result_column(ty: &TypeInfo, flags: ColumnFlags, in_row: bool) -> Result<(), TdsError> {
    if (ty.is_legacy_lob() && !in_row) || *ty == TypeInfo::Null {
        return Err(TdsError::UnsupportedType(ty.type_id()));
    }
    if flags.contains(ColumnFlags::ENCRYPTED) {
        return Err(TdsError::Unsupported { what: "encrypted columns" });
    }
    Ok(())
}

impl Token {
    /// Appends the token to `out`. `columns` is the current result set's metadata, used by
    /// ROW and NBCROW only.
    pub fn encode(&self, columns: &[Column], out: &mut Vec<u8>) -> Result<(), TdsError> {
        self.encode_for(columns, TdsVersion::V7_4, out)
    }

    /// Whether a client speaking `version` knows this token: the transaction and reset
    /// ENVCHANGEs came with TDS 7.2, the collation ENVCHANGE with 7.1, FEATUREEXTACK with
    /// 7.4. A server leaves the others out for older clients.
    pub fn exists_in(&self, version: TdsVersion) -> bool {
        match self {
            Self::EnvChange(
                EnvChange::BeginTransaction { .. }
                | EnvChange::CommitTransaction { .. }
                | EnvChange::RollbackTransaction { .. }
                | EnvChange::ResetConnectionAck,
            ) => version.is_7_2_or_later(),
            Self::EnvChange(EnvChange::SqlCollation { .. }) => version.has_collations(),
            Self::FeatureExtAck(_) => version == TdsVersion::V7_4,
            _ => true,
        }
    }

    /// Appends the token as a client speaking `version` reads it (see [`TdsVersion`] for
    /// what differs). Tokens and types the version lacks are the caller's to leave out or
    /// map (`Token::exists_in`).
    pub fn encode_for(
        &self,
        columns: &[Column],
        version: TdsVersion,
        out: &mut Vec<u8>,
    ) -> Result<(), TdsError> {
        atomic(out, |out| match self {
            Self::LoginAck(ack) => {
                out.push(LOGINACK);
                with_u16_len(out, "LOGINACK", |out| {
                    out.push(ack.interface);
                    out.extend_from_slice(&ack.tds_version.to_be_bytes());
                    put_b_varchar(out, &ack.prog_name, "LOGINACK ProgName")?;
                    out.extend_from_slice(&[ack.major, ack.minor]);
                    out.extend_from_slice(&ack.build.to_be_bytes());
                    Ok(())
                })
            }
            Self::EnvChange(change) => {
                out.push(ENVCHANGE);
                with_u16_len(out, "ENVCHANGE", |out| encode_env_change(change, out))
            }
            Self::Info(m) => encode_message(INFO, m, version, out),
            Self::Error(m) => encode_message(ERROR, m, version, out),
            Self::Done(d) => encode_done(DONE, d, version, out),
            Self::DoneProc(d) => encode_done(DONEPROC, d, version, out),
            Self::DoneInProc(d) => encode_done(DONEINPROC, d, version, out),
            Self::ColMetadata(columns) => encode_colmetadata(columns, version, out),
            Self::Row(values) => encode_row_body(columns, values, out),
            Self::NbcRow(values) => encode_nbc_row_body(columns, values, out),
            Self::ReturnStatus(status) => {
                out.push(RETURNSTATUS);
                out.extend_from_slice(&status.to_le_bytes());
                Ok(())
            }
            Self::ReturnValue(rv) => {
                check_result_column(&rv.ty, rv.flags, false)?;
                out.push(RETURNVALUE);
                out.extend_from_slice(&rv.ordinal.to_le_bytes());
                put_b_varchar(out, &rv.name, "RETURNVALUE ParamName")?;
                out.push(rv.status.0);
                put_user_type(out, rv.user_type, version);
                out.extend_from_slice(&rv.flags.0.to_le_bytes());
                rv.ty.encode_for(out, version);
                encode_value(&rv.ty, &rv.value, out)
            }
            Self::Order(cols) => {
                out.push(ORDER);
                with_u16_len(out, "ORDER", |out| {
                    cols.iter().for_each(|c| out.extend_from_slice(&c.to_le_bytes()));
                    Ok(())
                })
            }
            Self::TabName(tables) => {
                out.push(TABNAME);
                with_u16_len(out, "TABNAME", |out| {
                    for parts in tables {
                        let n = u8::try_from(parts.len()).map_err(|_| TdsError::TooLong {
                            what: "TABNAME NumParts",
                            len: parts.len(),
                            max: 255,
                        })?;
                        out.push(n);
                        for part in parts {
                            put_us_varchar(out, part, "TABNAME PartName")?;
                        }
                    }
                    Ok(())
                })
            }
            Self::ColInfo(infos) => {
                out.push(COLINFO);
                with_u16_len(out, "COLINFO", |out| {
                    for info in infos {
                        let mut status = info.status;
                        if info.base_name.is_some() {
                            status |= ColInfoStatus::DIFFERENT_NAME;
                        }
                        out.extend_from_slice(&[info.column, info.table, status.0]);
                        if let Some(name) = &info.base_name {
                            put_b_varchar(out, name, "COLINFO ColName")?;
                        }
                    }
                    Ok(())
                })
            }
            Self::NoMetadata => {
                out.push(COLMETADATA);
                out.extend_from_slice(&NO_METADATA.to_le_bytes());
                Ok(())
            }
            Self::FeatureExtAck(features) => {
                out.push(FEATUREEXTACK);
                for (id, data) in features {
                    if *id == FEATURE_ACK_TERMINATOR {
                        return Err(TdsError::Malformed { what: "FEATUREEXTACK FeatureId" });
                    }
                    let len = u32::try_from(data.len()).map_err(|_| TdsError::TooLong {
                        what: "FEATUREEXTACK FeatureAckData",
                        len: data.len(),
                        max: u32::MAX as usize,
                    })?;
                    out.push(*id);
                    out.extend_from_slice(&len.to_le_bytes());
                    out.extend_from_slice(data);
                }
                out.push(FEATURE_ACK_TERMINATOR);
                Ok(())
            }
        })
    }
}

fn encode_env_change(change: &EnvChange, out: &mut Vec<u8>) -> Result<(), TdsError> {
    let strings = |out: &mut Vec<u8>, ty: u8, new: &str, old: &str| {
        out.push(ty);
        put_b_varchar(out, new, "ENVCHANGE NewValue")?;
        put_b_varchar(out, old, "ENVCHANGE OldValue")
    };
    let bytes = |out: &mut Vec<u8>, ty: u8, new: &[u8], old: &[u8]| {
        out.push(ty);
        put_b_varbyte(out, new, "ENVCHANGE NewValue")?;
        put_b_varbyte(out, old, "ENVCHANGE OldValue")
    };
    let collation = |c: &Option<Collation>| c.map_or(Vec::new(), |c| c.to_bytes().to_vec());
    match change {
        EnvChange::Database { new, old } => strings(out, ENV_DATABASE, new, old),
        EnvChange::Language { new, old } => strings(out, ENV_LANGUAGE, new, old),
        EnvChange::PacketSize { new, old } => {
            strings(out, ENV_PACKET_SIZE, &new.to_string(), &old.to_string())
        }
        EnvChange::SqlCollation { new, old } => {
            bytes(out, ENV_SQL_COLLATION, &collation(new), &collation(old))
        }
        EnvChange::BeginTransaction { descriptor } => {
            bytes(out, ENV_BEGIN_TRANSACTION, &descriptor.to_le_bytes(), &[])
        }
        EnvChange::CommitTransaction { descriptor } => {
            bytes(out, ENV_COMMIT_TRANSACTION, &[], &descriptor.to_le_bytes())
        }
        EnvChange::RollbackTransaction { descriptor } => {
            bytes(out, ENV_ROLLBACK_TRANSACTION, &[], &descriptor.to_le_bytes())
        }
        EnvChange::ResetConnectionAck => bytes(out, ENV_RESET_CONNECTION_ACK, &[], &[]),
        EnvChange::Other { ty, data } => {
            out.push(*ty);
            out.extend_from_slice(data);
            Ok(())
        }
    }
}

/// UserType: a ULONG from TDS 7.2 on, a USHORT before.
fn put_user_type(out: &mut Vec<u8>, user_type: u32, version: TdsVersion) {
    if version.is_7_2_or_later() {
        out.extend_from_slice(&user_type.to_le_bytes());
    } else {
        out.extend_from_slice(&(user_type as u16).to_le_bytes());
    }
}

fn encode_message(
    token: u8,
    m: &ServerMessage,
    version: TdsVersion,
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    out.push(token);
    with_u16_len(out, "ERROR/INFO", |out| {
        out.extend_from_slice(&m.number.to_le_bytes());
        out.extend_from_slice(&[m.state, m.class]);
        put_us_varchar(out, &m.message, "ERROR/INFO MsgText")?;
        put_b_varchar(out, &m.server, "ERROR/INFO ServerName")?;
        put_b_varchar(out, &m.procedure, "ERROR/INFO ProcName")?;
        if version.is_7_2_or_later() {
            out.extend_from_slice(&m.line.to_le_bytes());
        } else {
            // A USHORT before 7.2: lines past 65535 are shown as 65535.
            out.extend_from_slice(&u16::try_from(m.line.max(0)).unwrap_or(u16::MAX).to_le_bytes());
        }
        Ok(())
    })
}

fn encode_done(
    token: u8,
    d: &Done,
    version: TdsVersion,
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    out.push(token);
    out.extend_from_slice(&d.status.0.to_le_bytes());
    out.extend_from_slice(&d.cur_cmd.to_le_bytes());
    if version.is_7_2_or_later() {
        out.extend_from_slice(&d.row_count.to_le_bytes());
    } else {
        // A LONG before 7.2: counts past it are shown as its maximum.
        out.extend_from_slice(&u32::try_from(d.row_count).unwrap_or(u32::MAX).to_le_bytes());
    }
    Ok(())
}

fn encode_colmetadata(
    columns: &[Column],
    version: TdsVersion,
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    let count = u16::try_from(columns.len())
        .ok()
        .filter(|&c| c != NO_METADATA)
        .ok_or(TdsError::TooLong { what: "COLMETADATA", len: columns.len(), max: 0xFFFE })?;
    out.push(COLMETADATA);
    out.extend_from_slice(&count.to_le_bytes());
    for c in columns {
        check_result_column(&c.ty, c.flags, true)?;
        put_user_type(out, c.user_type, version);
        out.extend_from_slice(&c.flags.0.to_le_bytes());
        c.ty.encode_for(out, version);
        if c.ty.is_legacy_lob() && !version.is_7_2_or_later() {
            // One US_VARCHAR before 7.2: the parts joined.
            put_us_varchar(out, &c.table_name.join("."), "COLMETADATA TableName")?;
        } else if c.ty.is_legacy_lob() {
            let parts = u8::try_from(c.table_name.len()).map_err(|_| TdsError::TooLong {
                what: "COLMETADATA TableName",
                len: c.table_name.len(),
                max: 255,
            })?;
            out.push(parts);
            for part in &c.table_name {
                put_us_varchar(out, part, "COLMETADATA TableName")?;
            }
        }
        put_b_varchar(out, &c.name, "COLMETADATA ColName")?;
    }
    Ok(())
}

fn check_row_len(columns: &[Column], values: &[TdsValue]) -> Result<(), TdsError> {
    if columns.len() == values.len() {
        Ok(())
    } else {
        Err(TdsError::ColumnCount { expected: columns.len(), found: values.len() })
    }
}

fn encode_row_body(
    columns: &[Column],
    values: &[TdsValue],
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    check_row_len(columns, values)?;
    out.push(ROW);
    for (c, v) in columns.iter().zip(values) {
        check_result_column(&c.ty, c.flags, true)?;
        encode_row_value(&c.ty, v, out)?;
    }
    Ok(())
}

fn encode_nbc_row_body(
    columns: &[Column],
    values: &[TdsValue],
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    check_row_len(columns, values)?;
    out.push(NBCROW);
    let bitmap_at = out.len();
    out.resize(bitmap_at + values.len().div_ceil(8), 0);
    for (i, (c, v)) in columns.iter().zip(values).enumerate() {
        check_result_column(&c.ty, c.flags, true)?;
        if *v == TdsValue::Null {
            out[bitmap_at + i / 8] |= 1 << (i % 8);
        } else {
            encode_row_value(&c.ty, v, out)?;
        }
    }
    Ok(())
}

/// Appends a ROW token for `values` under `columns`; the server's per-row fast path.
pub fn encode_row(
    columns: &[Column],
    values: &[TdsValue],
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    atomic(out, |out| encode_row_body(columns, values, out))
}

/// Appends an NBCROW token: like [`encode_row`], but NULLs cost one bit each, and NULL is
/// allowed even in NOT NULL (fixed-length) types.
pub fn encode_nbc_row(
    columns: &[Column],
    values: &[TdsValue],
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    atomic(out, |out| encode_nbc_row_body(columns, values, out))
}

/// Encodes a token stream, tracking the COLMETADATA that ROW and NBCROW tokens refer to.
pub fn encode_tokens(tokens: &[Token]) -> Result<Vec<u8>, TdsError> {
    encode_tokens_for(tokens, TdsVersion::V7_4)
}

/// [`encode_tokens`] for a client speaking `version`, leaving out the tokens it does not know
/// ([`Token::exists_in`]).
pub fn encode_tokens_for(tokens: &[Token], version: TdsVersion) -> Result<Vec<u8>, TdsError> {
    let mut out = Vec::new();
    let mut columns: &[Column] = &[];
    for token in tokens.iter().filter(|t| t.exists_in(version)) {
        token.encode_for(columns, version, &mut out)?;
        if let Token::ColMetadata(cols) = token {
            columns = cols;
        }
    }
    Ok(out)
}

/// Decodes a token stream one token at a time, keeping the current COLMETADATA to decode rows.
/// After the first error it yields nothing more.
#[derive(Debug, Clone)]
pub struct TokenReader<'a> {
    r: Reader<'a>,
    /// The last COLMETADATA's columns; `None` before the first.
    columns: Option<Cow<'a, [Column]>>,
    failed: bool,
    /// A COLMETADATA's TableName is one US_VARCHAR (TDS 7.1's form) rather than NumParts
    /// parts: what clients send in a Bulk Load message ([`TokenReader::bulk_load`]).
    one_part_table_name: bool,
}

impl<'a> TokenReader<'a> {
    /// A reader over a response message payload.
    pub fn new(payload: &'a [u8]) -> Self {
        Self { r: Reader::new(payload), columns: None, failed: false, one_part_table_name: false }
    }

    /// A reader over a Bulk Load message's token stream. Its COLMETADATA gives a TEXT, NTEXT
    /// or IMAGE column's TableName as a single US_VARCHAR, without the NumParts byte of a
    /// response's: tedious, go-mssqldb and FreeTDS all send it so, and SQL Server reads it so.
    pub fn bulk_load(payload: &'a [u8]) -> Self {
        Self { one_part_table_name: true, ..Self::new(payload) }
    }

    /// A reader over the continuation of a token stream whose result set has `columns`, as
    /// if their COLMETADATA came first: a client decoding a response piece by piece.
    pub fn with_columns(payload: &'a [u8], columns: &'a [Column]) -> Self {
        Self { columns: Some(Cow::Borrowed(columns)), ..Self::new(payload) }
    }

    /// The metadata of the current result set.
    pub fn columns(&self) -> &[Column] {
        self.columns.as_deref().unwrap_or_default()
    }

    /// The bytes of the payload consumed so far: after a token, where the next one starts.
    pub fn position(&self) -> usize {
        self.r.position()
    }

    fn next_token(&mut self) -> Result<Token, TdsError> {
        let r = &mut self.r;
        let token = r.u8("token type")?;
        Ok(match token {
            LOGINACK => {
                let mut t = length_delimited(r, "LOGINACK")?;
                Token::LoginAck(LoginAck {
                    interface: t.u8("LOGINACK Interface")?,
                    tds_version: t.u32_be("LOGINACK TDSVersion")?,
                    prog_name: t.b_varchar("LOGINACK ProgName")?,
                    major: t.u8("LOGINACK ProgVersion")?,
                    minor: t.u8("LOGINACK ProgVersion")?,
                    build: t.u16_be("LOGINACK ProgVersion")?,
                })
            }
            ENVCHANGE => Token::EnvChange(decode_env_change(length_delimited(r, "ENVCHANGE")?)?),
            INFO => Token::Info(decode_message(length_delimited(r, "INFO")?)?),
            ERROR => Token::Error(decode_message(length_delimited(r, "ERROR")?)?),
            DONE => Token::Done(decode_done(r)?),
            DONEPROC => Token::DoneProc(decode_done(r)?),
            DONEINPROC => Token::DoneInProc(decode_done(r)?),
            COLMETADATA => {
                let count = r.u16_le("COLMETADATA Count")?;
                if count == NO_METADATA {
                    if self.columns.is_none() {
                        return Err(TdsError::Unsupported { what: "COLMETADATA NoMetaData" });
                    }
                    return Ok(Token::NoMetadata);
                }
                // Each column takes at least 8 bytes, which bounds the preallocation.
                let mut columns = Vec::with_capacity(usize::from(count).min(r.remaining() / 8));
                for _ in 0..count {
                    let user_type = r.u32_le("COLMETADATA UserType")?;
                    let flags = ColumnFlags(r.u16_le("COLMETADATA Flags")?);
                    let ty = TypeInfo::decode(r)?;
                    check_result_column(&ty, flags, true)?;
                    let mut table_name = Vec::new();
                    if ty.is_legacy_lob() && self.one_part_table_name {
                        table_name.push(r.us_varchar("COLMETADATA TableName")?);
                    } else if ty.is_legacy_lob() {
                        for _ in 0..r.u8("COLMETADATA NumParts")? {
                            table_name.push(r.us_varchar("COLMETADATA TableName")?);
                        }
                    }
                    let name = r.b_varchar("COLMETADATA ColName")?;
                    columns.push(Column { user_type, flags, ty, name, table_name });
                }
                self.columns = Some(Cow::Owned(columns.clone()));
                Token::ColMetadata(columns)
            }
            ROW | NBCROW => {
                let Some(columns) = &self.columns else {
                    return Err(TdsError::Malformed { what: "row before COLMETADATA" });
                };
                let nulls = if token == NBCROW {
                    r.take(columns.len().div_ceil(8), "NBCROW null bitmap")?
                } else {
                    &[]
                };
                let mut values = Vec::with_capacity(columns.len());
                for (i, c) in columns.iter().enumerate() {
                    let is_null = nulls.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0);
                    values.push(if is_null { TdsValue::Null } else { decode_row_value(&c.ty, r)? });
                }
                if token == NBCROW {
                    Token::NbcRow(values)
                } else {
                    Token::Row(values)
                }
            }
            RETURNSTATUS => Token::ReturnStatus(r.i32_le("RETURNSTATUS")?),
            RETURNVALUE => {
                let ordinal = r.u16_le("RETURNVALUE ParamOrdinal")?;
                let name = r.b_varchar("RETURNVALUE ParamName")?;
                let status = ReturnValueStatus(r.u8("RETURNVALUE Status")?);
                let user_type = r.u32_le("RETURNVALUE UserType")?;
                let flags = ColumnFlags(r.u16_le("RETURNVALUE Flags")?);
                let ty = TypeInfo::decode(r)?;
                check_result_column(&ty, flags, false)?;
                let value = decode_value(&ty, r)?;
                Token::ReturnValue(ReturnValue {
                    ordinal,
                    name,
                    status,
                    user_type,
                    flags,
                    ty,
                    value,
                })
            }
            ORDER => {
                let mut t = length_delimited(r, "ORDER")?;
                if t.remaining() % 2 != 0 {
                    return Err(TdsError::Malformed { what: "ORDER length" });
                }
                let mut cols = Vec::with_capacity(t.remaining() / 2);
                while !t.is_empty() {
                    cols.push(t.u16_le("ORDER ColNum")?);
                }
                Token::Order(cols)
            }
            TABNAME => {
                let mut t = length_delimited(r, "TABNAME")?;
                let mut tables = Vec::new();
                while !t.is_empty() {
                    let n = t.u8("TABNAME NumParts")?;
                    let mut parts = Vec::with_capacity(usize::from(n));
                    for _ in 0..n {
                        parts.push(t.us_varchar("TABNAME PartName")?);
                    }
                    tables.push(parts);
                }
                Token::TabName(tables)
            }
            COLINFO => {
                let mut t = length_delimited(r, "COLINFO")?;
                let mut infos = Vec::new();
                while !t.is_empty() {
                    let column = t.u8("COLINFO ColNum")?;
                    let table = t.u8("COLINFO TableNum")?;
                    let status = ColInfoStatus(t.u8("COLINFO Status")?);
                    let base_name = if status.contains(ColInfoStatus::DIFFERENT_NAME) {
                        Some(t.b_varchar("COLINFO ColName")?)
                    } else {
                        None
                    };
                    infos.push(ColInfo { column, table, status, base_name });
                }
                Token::ColInfo(infos)
            }
            FEATUREEXTACK => {
                let mut features = Vec::new();
                loop {
                    let id = r.u8("FEATUREEXTACK FeatureId")?;
                    if id == FEATURE_ACK_TERMINATOR {
                        break;
                    }
                    let len = r.u32_le("FEATUREEXTACK FeatureAckDataLen")?;
                    let len = usize::try_from(len)
                        .map_err(|_| TdsError::Malformed { what: "FEATUREEXTACK length" })?;
                    features.push((id, r.take(len, "FEATUREEXTACK FeatureAckData")?.to_vec()));
                }
                Token::FeatureExtAck(features)
            }
            other => return Err(TdsError::UnknownToken(other)),
        })
    }
}

impl Iterator for TokenReader<'_> {
    type Item = Result<Token, TdsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.is_empty() {
            return None;
        }
        let result = self.next_token();
        self.failed = result.is_err();
        Some(result)
    }
}

/// Decodes a whole token stream. Meant for small responses and tests; a client reading large
/// result sets should iterate a [`TokenReader`] instead of holding every row.
pub fn decode_tokens(payload: &[u8]) -> Result<Vec<Token>, TdsError> {
    TokenReader::new(payload).collect()
}

fn length_delimited<'a>(r: &mut Reader<'a>, what: &'static str) -> Result<Reader<'a>, TdsError> {
    let len = r.u16_le(what)?;
    r.sub(usize::from(len), what)
}

fn decode_done(r: &mut Reader<'_>) -> Result<Done, TdsError> {
    Ok(Done {
        status: DoneStatus(r.u16_le("DONE Status")?),
        cur_cmd: r.u16_le("DONE CurCmd")?,
        row_count: r.u64_le("DONE DoneRowCount")?,
    })
}

fn decode_message(mut t: Reader<'_>) -> Result<ServerMessage, TdsError> {
    Ok(ServerMessage {
        number: t.i32_le("ERROR/INFO Number")?,
        state: t.u8("ERROR/INFO State")?,
        class: t.u8("ERROR/INFO Class")?,
        message: t.us_varchar("ERROR/INFO MsgText")?,
        server: t.b_varchar("ERROR/INFO ServerName")?,
        procedure: t.b_varchar("ERROR/INFO ProcName")?,
        line: t.i32_le("ERROR/INFO LineNumber")?,
    })
}

fn decode_env_change(mut t: Reader<'_>) -> Result<EnvChange, TdsError> {
    const NEW: &str = "ENVCHANGE NewValue";
    const OLD: &str = "ENVCHANGE OldValue";
    let packet_size = |s: String| {
        s.parse::<u32>().map_err(|_| TdsError::Malformed { what: "ENVCHANGE packet size" })
    };
    let collation = |b: &[u8]| match <[u8; 5]>::try_from(b) {
        Ok(bytes) => Ok(Some(Collation::from_bytes(bytes))),
        Err(_) if b.is_empty() => Ok(None),
        Err(_) => Err(TdsError::Malformed { what: "ENVCHANGE collation" }),
    };
    let descriptor = |b: &[u8]| {
        <[u8; 8]>::try_from(b)
            .map(u64::from_le_bytes)
            .map_err(|_| TdsError::Malformed { what: "ENVCHANGE transaction descriptor" })
    };
    Ok(match t.u8("ENVCHANGE Type")? {
        ENV_DATABASE => EnvChange::Database { new: t.b_varchar(NEW)?, old: t.b_varchar(OLD)? },
        ENV_LANGUAGE => EnvChange::Language { new: t.b_varchar(NEW)?, old: t.b_varchar(OLD)? },
        ENV_PACKET_SIZE => EnvChange::PacketSize {
            new: packet_size(t.b_varchar(NEW)?)?,
            old: packet_size(t.b_varchar(OLD)?)?,
        },
        ENV_SQL_COLLATION => EnvChange::SqlCollation {
            new: collation(t.b_varbyte(NEW)?)?,
            old: collation(t.b_varbyte(OLD)?)?,
        },
        ENV_BEGIN_TRANSACTION => {
            let new = descriptor(t.b_varbyte(NEW)?)?;
            t.b_varbyte(OLD)?;
            EnvChange::BeginTransaction { descriptor: new }
        }
        ty @ (ENV_COMMIT_TRANSACTION | ENV_ROLLBACK_TRANSACTION) => {
            t.b_varbyte(NEW)?;
            let descriptor = descriptor(t.b_varbyte(OLD)?)?;
            if ty == ENV_COMMIT_TRANSACTION {
                EnvChange::CommitTransaction { descriptor }
            } else {
                EnvChange::RollbackTransaction { descriptor }
            }
        }
        ENV_RESET_CONNECTION_ACK => {
            t.b_varbyte(NEW)?;
            t.b_varbyte(OLD)?;
            EnvChange::ResetConnectionAck
        }
        ty => EnvChange::Other { ty, data: t.rest().to_vec() },
    })
}
