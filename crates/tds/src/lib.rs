//! Walden's TDS 7.4 codec: the bytes SQL Server's wire protocol ([MS-TDS]) puts on a socket,
//! turned into Rust values and back, so that unmodified SQL Server drivers (tiberius, pytds,
//! FreeTDS, go-mssqldb, mssql-jdbc, tedious) can talk to Walden.
//!
//! The crate is pure functions over byte buffers: no I/O, no async, no dependencies. That is
//! what lets it be fuzzed on its own (`fuzz/`), and lets the server and the `walden sql` client
//! share it. The layers, bottom up:
//!
//! * [`packet`]: the 8-byte packet header, [`MessageReader`] (packets in, messages out, with
//!   packet- and message-size limits) and [`PacketWriter`] (messages in, packets out).
//! * [`prelogin`] and [`login`]: the PRELOGIN handshake and the LOGIN7 record.
//! * [`request`]: what clients send once logged in — SQL batches, RPCs (`sp_executesql` and
//!   friends, with typed parameters) and transaction-manager requests, each behind ALL_HEADERS.
//! * [`token`]: what the server answers — the token stream (LOGINACK, ENVCHANGE, ERROR/INFO,
//!   COLMETADATA, ROW/NBCROW, DONE*, RETURNSTATUS/RETURNVALUE, ORDER).
//! * [`types`] and [`value`]: TYPE_INFO and the values it describes.
//! * [`bulk`]: the Bulk Load message's token stream, decoded as its packets arrive.
//!
//! Every structure decodes with a `decode` function and encodes with an `encode` one, and each
//! pair round-trips. The robustness contract, relied on by the server and checked by the tests
//! and the fuzz target: decoders never panic, never allocate more than a constant factor of
//! their input whatever its length fields claim, never loop without consuming input, and
//! report every problem as a [`TdsError`]. Integers are little-endian except where [MS-TDS]
//! says otherwise (the packet header's length and SPID, PRELOGIN's option table, the LOGINACK
//! TDS version). The byte layouts are documented with tables and worked examples in
//! `docs/format/tds.md`.
//!
//! A client's batch, reassembled and decoded by the server, answered with a result set:
//!
//! ```
//! use walden_tds::*;
//!
//! let batch = SqlBatch { headers: AllHeaders::with_transaction(0), text: "SELECT 1 AS x".into() };
//! let mut wire = Vec::new();
//! PacketWriter::default().write_message(
//!     PacketType::SqlBatch,
//!     PacketStatus::NONE,
//!     &batch.encode()?,
//!     &mut wire,
//! );
//!
//! let mut reader = MessageReader::new();
//! reader.push(&wire);
//! let message = reader.next_message()?.expect("one whole message");
//! assert_eq!(SqlBatch::decode(&message.payload)?.text, "SELECT 1 AS x");
//!
//! let response = encode_tokens(&[
//!     Token::ColMetadata(vec![Column::new("x", TypeInfo::Int4, false)]),
//!     Token::Row(vec![TdsValue::Int(1)]),
//!     Token::Done(Done { status: DoneStatus::COUNT, cur_cmd: 0xC1, row_count: 1 }),
//! ])?;
//! assert_eq!(response.len(), 31);
//! # Ok::<(), TdsError>(())
//! ```
//!
//! [MS-TDS]: https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-tds/

/// Defines a transparent bit-set newtype over an integer, with named constants, `contains`
/// and `|`. Unknown bits are preserved, since the spec reserves them for later versions.
macro_rules! bit_flags {
    (
        $(#[$meta:meta])*
        pub struct $name:ident($int:ty) {
            $( $(#[$flag_meta:meta])* const $flag:ident = $value:expr; )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name(pub $int);

        impl $name {
            /// No bit set.
            pub const NONE: Self = Self(0);
            $( $(#[$flag_meta])* pub const $flag: Self = Self($value); )*

            /// Whether every bit of `other` is set in `self`.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }
        }

        impl std::ops::BitOr for $name {
            type Output = Self;

            fn bitor(self, rhs: Self) -> Self {
                Self(self.0 | rhs.0)
            }
        }

        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, rhs: Self) {
                self.0 |= rhs.0;
            }
        }
    };
}

pub mod bulk;
mod error;
pub mod login;
pub mod packet;
pub mod prelogin;
pub mod request;
pub mod token;
pub mod tvp;
pub mod types;
pub mod value;
pub mod version;
mod wire;

pub use bulk::{BulkItem, BulkLoadDecoder, BulkStep};
pub use error::TdsError;
pub use login::{FeatureExt, Login7, TDS_7_4};
pub use packet::{Message, MessageReader, PacketStatus, PacketType, PacketWriter};
pub use prelogin::{Encryption, Prelogin, PreloginVersion};
pub use request::{
    AllHeaders, IsolationLevel, NewTransaction, ParamStatus, ProcId, RpcCall, RpcOptions, RpcParam,
    RpcProc, RpcRequest, SqlBatch, TransMgrKind, TransMgrRequest,
};
pub use token::{
    decode_tokens, encode_nbc_row, encode_row, encode_tokens, encode_tokens_for, ColInfo,
    ColInfoStatus, Column, ColumnFlags, Done, DoneStatus, EnvChange, LoginAck, ReturnValue,
    ReturnValueStatus, ServerMessage, Token, TokenReader,
};
pub use tvp::{TableValue, TvpColumn};
pub use types::{Collation, TypeInfo};
pub use value::{Decimal, TdsValue, Time, VARIANT_MAX_LEN};
pub use version::TdsVersion;
