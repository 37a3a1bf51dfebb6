//! Client requests after login: SQL batches ([MS-TDS] 2.2.6.7), RPCs (2.2.6.6) and
//! transaction-manager requests (2.2.6.9), all preceded by ALL_HEADERS (2.2.5.3).
//!
//! ALL_HEADERS is a DWORD total length (counting itself) and a list of headers, each a DWORD
//! length (counting itself), a USHORT type and data: query notifications (1), the transaction
//! descriptor (2: the 8-byte descriptor of the session's current transaction from the last
//! ENVCHANGE, and the outstanding request count) and trace activity (3). TDS 7.2+ clients must
//! send it; decoding requires it, rejects a header that appears twice (2.2.5.3: "at most
//! once"), and skips header types it does not know. Whether a transaction descriptor is
//! present and correct is for the server to judge.
//!
//! A SQL batch is ALL_HEADERS then the UTF-16LE text to the end of the message.
//!
//! An RPC message holds one or more calls. Each names its procedure either by ProcID
//! (0xFFFF then a USHORT: 10 = `sp_executesql`, ...) or by name (US_VARCHAR), then has
//! USHORT option flags and its parameters: B_VARCHAR name, status byte (fByRefValue = OUTPUT,
//! fDefaultValue), TYPE_INFO and value. Calls are separated by the BatchFlag 0xFF (a trailing
//! one is allowed). The byte can be told from a parameter because parameter names are at most
//! 128 characters. For the same reason 0x80, TDS 7.1's BatchFlag, is *not* a separator here: in
//! 7.2+ it is a legal 128-character name length. The NoExecFlag 0xFE and encrypted (Always
//! Encrypted) parameters are refused as unsupported.
//!
//! A transaction-manager request is a USHORT request type and its payload. Transaction names
//! are a length byte and UTF-16LE text, where the length counts *bytes*: the grammar says
//! B_VARCHAR, but every driver (Microsoft's included) sends a byte count, and the server must
//! read what drivers send. DTC requests (get address, propagate, promote) are recognised and
//! kept as [`TransMgrKind::Unsupported`], so the server can answer them with an error.

use crate::value::{decode_value, encode_value};
use crate::wire::{decode_utf16, put_b_varchar, put_utf16, utf16_len, Reader};
use crate::{TdsError, TdsValue, TdsVersion, TypeInfo};

const HEADER_QUERY_NOTIFICATIONS: u16 = 1;
const HEADER_TRANSACTION_DESCRIPTOR: u16 = 2;
const HEADER_TRACE_ACTIVITY: u16 = 3;

/// The transaction descriptor header (2.2.5.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransactionDescriptor {
    /// The current transaction's descriptor (0 outside a transaction).
    pub descriptor: u64,
    /// Requests outstanding on the connection (1 without MARS).
    pub outstanding_requests: u32,
}

/// The query notifications header (2.2.5.3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryNotification {
    /// The user's notification id.
    pub notify_id: String,
    /// The Service Broker deployment to notify.
    pub ssb_deployment: String,
    /// Subscription lifetime in milliseconds, if given.
    pub timeout_ms: Option<u32>,
}

/// The trace activity header (2.2.5.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceActivity {
    /// GUID_ActivityID.
    pub activity_id: [u8; 16],
    /// ActivitySequence.
    pub sequence: u32,
}

/// ALL_HEADERS: the headers a request carries; absent ones are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllHeaders {
    /// Query notifications.
    pub query_notification: Option<QueryNotification>,
    /// Transaction descriptor.
    pub transaction: Option<TransactionDescriptor>,
    /// Trace activity.
    pub trace_activity: Option<TraceActivity>,
}

impl AllHeaders {
    /// Headers with only the (required) transaction descriptor, one outstanding request.
    pub fn with_transaction(descriptor: u64) -> Self {
        Self {
            transaction: Some(TransactionDescriptor { descriptor, outstanding_requests: 1 }),
            ..Self::default()
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, TdsError> {
        let total = r.u32_le("ALL_HEADERS TotalLength")?;
        let body = usize::try_from(total)
            .ok()
            .and_then(|t| t.checked_sub(4))
            .ok_or(TdsError::Malformed { what: "ALL_HEADERS TotalLength" })?;
        let mut headers = r.sub(body, "ALL_HEADERS")?;
        let mut out = Self::default();
        let duplicate = TdsError::Malformed { what: "ALL_HEADERS header given twice" };
        while !headers.is_empty() {
            let len = headers.u32_le("ALL_HEADERS HeaderLength")?;
            let len = usize::try_from(len)
                .ok()
                .and_then(|l| l.checked_sub(4))
                .filter(|&l| l >= 2)
                .ok_or(TdsError::Malformed { what: "ALL_HEADERS HeaderLength" })?;
            let mut h = headers.sub(len, "ALL_HEADERS header")?;
            match h.u16_le("ALL_HEADERS HeaderType")? {
                HEADER_QUERY_NOTIFICATIONS => {
                    if out.query_notification.is_some() {
                        return Err(duplicate);
                    }
                    // Both strings are USHORT *byte* lengths then UTF-16LE (2.2.5.3.1).
                    let mut text = |what| -> Result<String, TdsError> {
                        let len = h.u16_le(what)?;
                        decode_utf16(h.take(usize::from(len), what)?)
                    };
                    let notify_id = text("query notification NotifyId")?;
                    let ssb_deployment = text("query notification SSBDeployment")?;
                    let timeout_ms = match h.remaining() {
                        0 => None,
                        _ => Some(h.u32_le("query notification NotifyTimeout")?),
                    };
                    out.query_notification =
                        Some(QueryNotification { notify_id, ssb_deployment, timeout_ms });
                }
                HEADER_TRANSACTION_DESCRIPTOR => {
                    if out.transaction.is_some() {
                        return Err(duplicate);
                    }
                    out.transaction = Some(TransactionDescriptor {
                        descriptor: h.u64_le("transaction descriptor")?,
                        outstanding_requests: h.u32_le("outstanding request count")?,
                    });
                }
                HEADER_TRACE_ACTIVITY => {
                    if out.trace_activity.is_some() {
                        return Err(duplicate);
                    }
                    out.trace_activity = Some(TraceActivity {
                        activity_id: h.array("trace activity id")?,
                        sequence: h.u32_le("trace activity sequence")?,
                    });
                }
                _ => continue, // A header from a later protocol version: skip it.
            }
            h.finish("ALL_HEADERS header")?;
        }
        Ok(out)
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<(), TdsError> {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        if let Some(q) = &self.query_notification {
            put_header(out, HEADER_QUERY_NOTIFICATIONS, |out| {
                for (s, what) in [(&q.notify_id, "NotifyId"), (&q.ssb_deployment, "SSBDeployment")]
                {
                    let bytes = utf16_len(s) * 2;
                    let len = u16::try_from(bytes).map_err(|_| TdsError::TooLong {
                        what,
                        len: bytes,
                        max: 0xFFFF,
                    })?;
                    out.extend_from_slice(&len.to_le_bytes());
                    put_utf16(out, s);
                }
                if let Some(t) = q.timeout_ms {
                    out.extend_from_slice(&t.to_le_bytes());
                }
                Ok(())
            })?;
        }
        if let Some(t) = &self.transaction {
            put_header(out, HEADER_TRANSACTION_DESCRIPTOR, |out| {
                out.extend_from_slice(&t.descriptor.to_le_bytes());
                out.extend_from_slice(&t.outstanding_requests.to_le_bytes());
                Ok(())
            })?;
        }
        if let Some(t) = &self.trace_activity {
            put_header(out, HEADER_TRACE_ACTIVITY, |out| {
                out.extend_from_slice(&t.activity_id);
                out.extend_from_slice(&t.sequence.to_le_bytes());
                Ok(())
            })?;
        }
        patch_u32_len(out, start, "ALL_HEADERS")
    }
}

/// Appends one ALL_HEADERS header: its length (patched afterwards), type and `body`.
fn put_header(
    out: &mut Vec<u8>,
    ty: u16,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), TdsError>,
) -> Result<(), TdsError> {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&ty.to_le_bytes());
    body(out)?;
    patch_u32_len(out, at, "ALL_HEADERS header")
}

/// Patches the DWORD at `at` with the number of bytes from `at` to the end of `out`.
fn patch_u32_len(out: &mut [u8], at: usize, what: &'static str) -> Result<(), TdsError> {
    let len = out.len() - at;
    let len32 =
        u32::try_from(len).map_err(|_| TdsError::TooLong { what, len, max: u32::MAX as usize })?;
    out[at..at + 4].copy_from_slice(&len32.to_le_bytes());
    Ok(())
}

/// A SQL batch (packet type 1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SqlBatch {
    /// ALL_HEADERS.
    pub headers: AllHeaders,
    /// The batch text.
    pub text: String,
}

impl SqlBatch {
    /// Decodes a SQL batch message payload (TDS 7.4).
    pub fn decode(payload: &[u8]) -> Result<Self, TdsError> {
        Self::decode_for(payload, TdsVersion::V7_4)
    }

    /// Decodes a SQL batch message payload from a client speaking `version` (before 7.2 the
    /// text starts the message, without ALL_HEADERS).
    pub fn decode_for(payload: &[u8], version: TdsVersion) -> Result<Self, TdsError> {
        let mut r = Reader::new(payload);
        let headers = decode_headers(&mut r, version)?;
        Ok(Self { headers, text: decode_utf16(r.rest())? })
    }

    /// Encodes the message payload.
    pub fn encode(&self) -> Result<Vec<u8>, TdsError> {
        let mut out = Vec::with_capacity(32 + self.text.len() * 2);
        self.headers.encode(&mut out)?;
        put_utf16(&mut out, &self.text);
        Ok(out)
    }
}

/// The well-known procedures an RPC can name by number (2.2.6.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcId {
    /// `sp_cursor`.
    Cursor = 1,
    /// `sp_cursoropen`.
    CursorOpen = 2,
    /// `sp_cursorprepare`.
    CursorPrepare = 3,
    /// `sp_cursorexecute`.
    CursorExecute = 4,
    /// `sp_cursorprepexec`.
    CursorPrepExec = 5,
    /// `sp_cursorunprepare`.
    CursorUnprepare = 6,
    /// `sp_cursorfetch`.
    CursorFetch = 7,
    /// `sp_cursoroption`.
    CursorOption = 8,
    /// `sp_cursorclose`.
    CursorClose = 9,
    /// `sp_executesql`.
    ExecuteSql = 10,
    /// `sp_prepare`.
    Prepare = 11,
    /// `sp_execute`.
    Execute = 12,
    /// `sp_prepexec`.
    PrepExec = 13,
    /// `sp_prepexecrpc`.
    PrepExecRpc = 14,
    /// `sp_unprepare`.
    Unprepare = 15,
}

impl ProcId {
    /// The procedure's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cursor => "sp_cursor",
            Self::CursorOpen => "sp_cursoropen",
            Self::CursorPrepare => "sp_cursorprepare",
            Self::CursorExecute => "sp_cursorexecute",
            Self::CursorPrepExec => "sp_cursorprepexec",
            Self::CursorUnprepare => "sp_cursorunprepare",
            Self::CursorFetch => "sp_cursorfetch",
            Self::CursorOption => "sp_cursoroption",
            Self::CursorClose => "sp_cursorclose",
            Self::ExecuteSql => "sp_executesql",
            Self::Prepare => "sp_prepare",
            Self::Execute => "sp_execute",
            Self::PrepExec => "sp_prepexec",
            Self::PrepExecRpc => "sp_prepexecrpc",
            Self::Unprepare => "sp_unprepare",
        }
    }
}

impl TryFrom<u16> for ProcId {
    type Error = TdsError;

    fn try_from(id: u16) -> Result<Self, TdsError> {
        const ALL: [ProcId; 15] = [
            ProcId::Cursor,
            ProcId::CursorOpen,
            ProcId::CursorPrepare,
            ProcId::CursorExecute,
            ProcId::CursorPrepExec,
            ProcId::CursorUnprepare,
            ProcId::CursorFetch,
            ProcId::CursorOption,
            ProcId::CursorClose,
            ProcId::ExecuteSql,
            ProcId::Prepare,
            ProcId::Execute,
            ProcId::PrepExec,
            ProcId::PrepExecRpc,
            ProcId::Unprepare,
        ];
        ALL.into_iter().find(|p| *p as u16 == id).ok_or(TdsError::Malformed { what: "RPC ProcID" })
    }
}

/// The procedure an RPC call invokes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RpcProc {
    /// A well-known procedure, by number.
    Id(ProcId),
    /// Any procedure, by name.
    Name(String),
}

bit_flags! {
    /// RPC OptionFlags.
    pub struct RpcOptions(u16) {
        /// fWithRecomp: recompile the procedure.
        const WITH_RECOMPILE = 0x0001;
        /// fNoMetaData: send no COLMETADATA for result sets.
        const NO_METADATA = 0x0002;
        /// fReuseMetaData: reuse the previous COLMETADATA.
        const REUSE_METADATA = 0x0004;
    }
}

bit_flags! {
    /// RPC parameter StatusFlags.
    pub struct ParamStatus(u8) {
        /// fByRefValue: an OUTPUT parameter.
        const BY_REF = 0x01;
        /// fDefaultValue: use the parameter's default (the value sent is ignored).
        const DEFAULT = 0x02;
        /// fEncrypted: an Always Encrypted parameter (not supported).
        const ENCRYPTED = 0x08;
    }
}

/// One RPC parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcParam {
    /// The name, with its `@`; empty for positional parameters.
    pub name: String,
    /// Status flags.
    pub status: ParamStatus,
    /// The declared wire type.
    pub ty: TypeInfo,
    /// The value.
    pub value: TdsValue,
}

impl RpcParam {
    /// An input parameter sent as `value`'s natural type (NULL as NVARCHAR(1)).
    pub fn input(name: &str, value: TdsValue) -> Self {
        let ty = value.natural_type().unwrap_or(TypeInfo::nvarchar(Some(1)));
        Self { name: name.to_owned(), status: ParamStatus::NONE, ty, value }
    }

    /// Whether this is an OUTPUT parameter.
    pub fn is_output(&self) -> bool {
        self.status.contains(ParamStatus::BY_REF)
    }
}

/// One call in an RPC message.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcCall {
    /// The procedure.
    pub proc: RpcProc,
    /// Option flags.
    pub options: RpcOptions,
    /// Parameters in order.
    pub params: Vec<RpcParam>,
}

/// An RPC request message (packet type 3).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcRequest {
    /// ALL_HEADERS.
    pub headers: AllHeaders,
    /// The calls, at least one.
    pub calls: Vec<RpcCall>,
}

const BATCH_FLAG: u8 = 0xFF;
/// Identifiers, parameter names included, have at most 128 characters; the batch separators
/// rely on it.
const MAX_PARAM_NAME: u8 = 128;
const NO_EXEC_FLAG: u8 = 0xFE;
const PROC_ID_SWITCH: u16 = 0xFFFF;

impl RpcRequest {
    /// Decodes an RPC message payload (TDS 7.4).
    pub fn decode(payload: &[u8]) -> Result<Self, TdsError> {
        Self::decode_for(payload, TdsVersion::V7_4)
    }

    /// Decodes an RPC message payload from a client speaking `version` (before 7.2 without
    /// ALL_HEADERS; in 7.0 without collations in the parameters' TYPE_INFO).
    pub fn decode_for(payload: &[u8], version: TdsVersion) -> Result<Self, TdsError> {
        let mut r = Reader::new(payload);
        let headers = decode_headers(&mut r, version)?;
        let mut calls = Vec::new();
        loop {
            calls.push(decode_call(&mut r, version)?);
            if r.is_empty() {
                return Ok(Self { headers, calls });
            }
        }
    }

    /// Encodes the message payload.
    pub fn encode(&self) -> Result<Vec<u8>, TdsError> {
        if self.calls.is_empty() {
            return Err(TdsError::Malformed { what: "RPC request without calls" });
        }
        let mut out = Vec::new();
        self.headers.encode(&mut out)?;
        for (i, call) in self.calls.iter().enumerate() {
            if i > 0 {
                out.push(BATCH_FLAG);
            }
            match &call.proc {
                RpcProc::Id(id) => {
                    out.extend_from_slice(&PROC_ID_SWITCH.to_le_bytes());
                    out.extend_from_slice(&(*id as u16).to_le_bytes());
                }
                RpcProc::Name(name) => {
                    // PROC_ID_SWITCH is not a valid name length.
                    let len = u16::try_from(utf16_len(name)).ok().filter(|&l| l != PROC_ID_SWITCH);
                    let len = len.ok_or(TdsError::TooLong {
                        what: "RPC ProcName",
                        len: utf16_len(name),
                        max: 0xFFFE,
                    })?;
                    out.extend_from_slice(&len.to_le_bytes());
                    put_utf16(&mut out, name);
                }
            }
            out.extend_from_slice(&call.options.0.to_le_bytes());
            for p in &call.params {
                if utf16_len(&p.name) > usize::from(MAX_PARAM_NAME) {
                    return Err(TdsError::TooLong {
                        what: "RPC parameter name",
                        len: utf16_len(&p.name),
                        max: MAX_PARAM_NAME.into(),
                    });
                }
                put_b_varchar(&mut out, &p.name, "RPC parameter name")?;
                out.push(p.status.0);
                p.ty.encode(&mut out);
                encode_value(&p.ty, &p.value, &mut out)?;
            }
        }
        Ok(out)
    }
}

/// ALL_HEADERS, which requests carry from TDS 7.2 on.
fn decode_headers(r: &mut Reader<'_>, version: TdsVersion) -> Result<AllHeaders, TdsError> {
    if version.is_7_2_or_later() {
        AllHeaders::decode(r)
    } else {
        Ok(AllHeaders::default())
    }
}

fn decode_call(r: &mut Reader<'_>, version: TdsVersion) -> Result<RpcCall, TdsError> {
    let proc = match r.u16_le("RPC NameLenProcID")? {
        PROC_ID_SWITCH => RpcProc::Id(ProcId::try_from(r.u16_le("RPC ProcID")?)?),
        chars => RpcProc::Name(r.utf16(usize::from(chars), "RPC ProcName")?),
    };
    let options = RpcOptions(r.u16_le("RPC OptionFlags")?);
    let mut params = Vec::new();
    loop {
        match r.peek_u8() {
            None => break,
            Some(BATCH_FLAG) => {
                r.u8("RPC BatchFlag")?;
                break;
            }
            Some(NO_EXEC_FLAG) => return Err(TdsError::Unsupported { what: "RPC NoExecFlag" }),
            Some(_) => params.push(decode_param(r, version)?),
        }
    }
    Ok(RpcCall { proc, options, params })
}

fn decode_param(r: &mut Reader<'_>, version: TdsVersion) -> Result<RpcParam, TdsError> {
    if r.peek_u8().is_some_and(|len| len > MAX_PARAM_NAME) {
        return Err(TdsError::Malformed { what: "RPC parameter name longer than 128" });
    }
    let name = r.b_varchar("RPC parameter name")?;
    let status = ParamStatus(r.u8("RPC parameter StatusFlags")?);
    if status.contains(ParamStatus::ENCRYPTED) {
        return Err(TdsError::Unsupported { what: "encrypted RPC parameters" });
    }
    let ty = TypeInfo::decode_for(r, version)?;
    let value = decode_value(&ty, r)?;
    Ok(RpcParam { name, status, ty, value })
}

/// A transaction isolation level (2.2.6.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IsolationLevel {
    /// Keep the session's current level.
    NoChange = 0,
    /// READ UNCOMMITTED.
    ReadUncommitted = 1,
    /// READ COMMITTED.
    ReadCommitted = 2,
    /// REPEATABLE READ.
    RepeatableRead = 3,
    /// SERIALIZABLE.
    Serializable = 4,
    /// SNAPSHOT.
    Snapshot = 5,
}

impl TryFrom<u8> for IsolationLevel {
    type Error = TdsError;

    fn try_from(b: u8) -> Result<Self, TdsError> {
        Ok(match b {
            0 => Self::NoChange,
            1 => Self::ReadUncommitted,
            2 => Self::ReadCommitted,
            3 => Self::RepeatableRead,
            4 => Self::Serializable,
            5 => Self::Snapshot,
            _ => return Err(TdsError::Malformed { what: "isolation level" }),
        })
    }
}

/// A transaction to begin: by TM_BEGIN_XACT, or after a commit or rollback with fBeginXact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTransaction {
    /// Isolation level for the session.
    pub isolation: IsolationLevel,
    /// Transaction name, possibly empty.
    pub name: String,
}

/// What a transaction-manager request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransMgrKind {
    /// TM_BEGIN_XACT (5).
    Begin(NewTransaction),
    /// TM_COMMIT_XACT (7), optionally beginning a new transaction.
    Commit {
        /// The transaction's name, possibly empty.
        name: String,
        /// The transaction to begin afterwards (fBeginXact).
        then_begin: Option<NewTransaction>,
    },
    /// TM_ROLLBACK_XACT (8): to `name` if it is a savepoint, else the whole transaction.
    Rollback {
        /// Transaction or savepoint name, possibly empty.
        name: String,
        /// The transaction to begin afterwards (fBeginXact).
        then_begin: Option<NewTransaction>,
    },
    /// TM_SAVE_XACT (9).
    Save {
        /// The savepoint's name.
        name: String,
    },
    /// A distributed-transaction request (TM_GET_DTC_ADDRESS 0, TM_PROPAGATE_XACT 1,
    /// TM_PROMOTE_XACT 6), which Walden does not support; kept raw.
    Unsupported {
        /// The request type.
        request_type: u16,
        /// Its payload.
        payload: Vec<u8>,
    },
}

/// A transaction-manager request message (packet type 14).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransMgrRequest {
    /// ALL_HEADERS.
    pub headers: AllHeaders,
    /// The request.
    pub kind: TransMgrKind,
}

const TM_GET_DTC_ADDRESS: u16 = 0;
const TM_PROPAGATE_XACT: u16 = 1;
const TM_BEGIN_XACT: u16 = 5;
const TM_PROMOTE_XACT: u16 = 6;
const TM_COMMIT_XACT: u16 = 7;
const TM_ROLLBACK_XACT: u16 = 8;
const TM_SAVE_XACT: u16 = 9;
const F_BEGIN_XACT: u8 = 0x01;

impl TransMgrRequest {
    /// Decodes a transaction-manager message payload.
    pub fn decode(payload: &[u8]) -> Result<Self, TdsError> {
        let mut r = Reader::new(payload);
        let headers = AllHeaders::decode(&mut r)?;
        let request_type = r.u16_le("TransMgr RequestType")?;
        let new_transaction = |r: &mut Reader<'_>| -> Result<NewTransaction, TdsError> {
            let isolation = IsolationLevel::try_from(r.u8("TransMgr isolation level")?)?;
            Ok(NewTransaction { isolation, name: xact_name(r)? })
        };
        let end = |r: &mut Reader<'_>| -> Result<(String, Option<NewTransaction>), TdsError> {
            let name = xact_name(r)?;
            let flags = r.u8("TransMgr XactFlags")?;
            let then_begin =
                if flags & F_BEGIN_XACT != 0 { Some(new_transaction(r)?) } else { None };
            Ok((name, then_begin))
        };
        let kind = match request_type {
            TM_BEGIN_XACT => TransMgrKind::Begin(new_transaction(&mut r)?),
            TM_COMMIT_XACT => {
                let (name, then_begin) = end(&mut r)?;
                TransMgrKind::Commit { name, then_begin }
            }
            TM_ROLLBACK_XACT => {
                let (name, then_begin) = end(&mut r)?;
                TransMgrKind::Rollback { name, then_begin }
            }
            TM_SAVE_XACT => TransMgrKind::Save { name: xact_name(&mut r)? },
            TM_GET_DTC_ADDRESS | TM_PROPAGATE_XACT | TM_PROMOTE_XACT => {
                TransMgrKind::Unsupported { request_type, payload: r.rest().to_vec() }
            }
            _ => return Err(TdsError::Malformed { what: "TransMgr RequestType" }),
        };
        r.finish("TransMgr request")?;
        Ok(Self { headers, kind })
    }

    /// Encodes the message payload.
    pub fn encode(&self) -> Result<Vec<u8>, TdsError> {
        let mut out = Vec::new();
        self.headers.encode(&mut out)?;
        let put_new = |out: &mut Vec<u8>, t: &NewTransaction| {
            out.push(t.isolation as u8);
            put_xact_name(out, &t.name)
        };
        let put_end = |out: &mut Vec<u8>, name: &str, then: &Option<NewTransaction>| {
            put_xact_name(out, name)?;
            match then {
                Some(t) => {
                    out.push(F_BEGIN_XACT);
                    put_new(out, t)
                }
                None => {
                    out.push(0);
                    Ok(())
                }
            }
        };
        let o = &mut out;
        match &self.kind {
            TransMgrKind::Begin(t) => {
                o.extend_from_slice(&TM_BEGIN_XACT.to_le_bytes());
                put_new(o, t)
            }
            TransMgrKind::Commit { name, then_begin } => {
                o.extend_from_slice(&TM_COMMIT_XACT.to_le_bytes());
                put_end(o, name, then_begin)
            }
            TransMgrKind::Rollback { name, then_begin } => {
                o.extend_from_slice(&TM_ROLLBACK_XACT.to_le_bytes());
                put_end(o, name, then_begin)
            }
            TransMgrKind::Save { name } => {
                o.extend_from_slice(&TM_SAVE_XACT.to_le_bytes());
                put_xact_name(o, name)
            }
            TransMgrKind::Unsupported { request_type, payload } => {
                o.extend_from_slice(&request_type.to_le_bytes());
                o.extend_from_slice(payload);
                Ok(())
            }
        }?;
        Ok(out)
    }
}

/// A transaction name: a byte count, then UTF-16LE.
fn xact_name(r: &mut Reader<'_>) -> Result<String, TdsError> {
    decode_utf16(r.b_varbyte("transaction name")?)
}

fn put_xact_name(out: &mut Vec<u8>, name: &str) -> Result<(), TdsError> {
    let bytes = utf16_len(name) * 2;
    let len = u8::try_from(bytes).map_err(|_| TdsError::TooLong {
        what: "transaction name",
        len: bytes,
        max: 255,
    })?;
    out.push(len);
    put_utf16(out, name);
    Ok(())
}
