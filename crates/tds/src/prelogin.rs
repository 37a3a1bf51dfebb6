//! PRELOGIN ([MS-TDS] 2.2.6.5): the first message of a connection, in both directions.
//!
//! The client sends it in a PRELOGIN (0x12) packet; the server answers with the same structure
//! in a tabular-result (0x04) packet. The payload is a table of options, each five bytes
//! (token, big-endian offset, big-endian length) and ended by the 0xFF terminator, followed by
//! the option data the offsets point to. Offsets are relative to the start of the payload.
//!
//! Decoding rules: VERSION must be present; an option whose data is shorter than its type
//! needs is malformed, except that an empty THREADID is read as absent (some clients send one);
//! longer data is accepted and its tail ignored; unknown option tokens are skipped, as the spec
//! asks of receivers, for forward compatibility; a known option given twice is malformed
//! (2.2.6.5: each option at most once). Encoding writes the options present in token order.
//!
//! Multi-byte option values are big-endian like the table (VERSION's build and sub-build),
//! except THREADID and TRACEID's sequence number, which clients send in their native
//! little-endian order (the spec's example in 4.1 has thread id `B8 0D 00 00`).

use crate::wire::Reader;
use crate::TdsError;

const VERSION: u8 = 0x00;
const ENCRYPTION: u8 = 0x01;
const INSTOPT: u8 = 0x02;
const THREADID: u8 = 0x03;
const MARS: u8 = 0x04;
const TRACEID: u8 = 0x05;
const FEDAUTHREQUIRED: u8 = 0x06;
const NONCEOPT: u8 = 0x07;
const TERMINATOR: u8 = 0xFF;

/// The sender's product version: `major.minor.build`, plus a sub-build number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PreloginVersion {
    /// Major version (15 for SQL Server 2019).
    pub major: u8,
    /// Minor version.
    pub minor: u8,
    /// Build number.
    pub build: u16,
    /// Sub-build number.
    pub sub_build: u16,
}

/// The ENCRYPTION option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encryption {
    /// ENCRYPT_OFF (0x00): encrypt the login packet only.
    Off,
    /// ENCRYPT_ON (0x01): encrypt everything.
    On,
    /// ENCRYPT_NOT_SUP (0x02): encryption is not available.
    NotSupported,
    /// ENCRYPT_REQ (0x03): encryption is required.
    Required,
    /// Any other byte, for example with the ENCRYPT_CLIENT_CERT bit (0x80) set.
    Other(u8),
}

impl Encryption {
    fn from_u8(b: u8) -> Self {
        match b {
            0 => Self::Off,
            1 => Self::On,
            2 => Self::NotSupported,
            3 => Self::Required,
            other => Self::Other(other),
        }
    }

    fn to_u8(self) -> u8 {
        match self {
            Self::Off => 0,
            Self::On => 1,
            Self::NotSupported => 2,
            Self::Required => 3,
            Self::Other(b) => b,
        }
    }
}

/// The TRACEID option (TDS 7.4): client connection and activity ids for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceId {
    /// GUID_CONNID.
    pub connection_id: [u8; 16],
    /// GUID_ActivityID.
    pub activity_id: [u8; 16],
    /// ActivitySequence.
    pub activity_sequence: u32,
}

/// A decoded PRELOGIN message. Options the sender left out are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prelogin {
    /// VERSION: the sender's version (required).
    pub version: PreloginVersion,
    /// ENCRYPTION.
    pub encryption: Option<Encryption>,
    /// INSTOPT: from a client, the NUL-terminated instance name in the client's code page;
    /// from a server, one byte (0 = the instance name matched).
    pub instance: Option<Vec<u8>>,
    /// THREADID: the client's thread id, for debugging.
    pub thread_id: Option<u32>,
    /// MARS: multiple active result sets requested (client) or granted (server).
    pub mars: Option<bool>,
    /// TRACEID.
    pub trace_id: Option<TraceId>,
    /// FEDAUTHREQUIRED.
    pub fed_auth_required: Option<bool>,
    /// NONCEOPT: a 32-byte nonce for federated authentication.
    pub nonce: Option<[u8; 32]>,
}

impl Prelogin {
    /// Decodes a PRELOGIN payload (the message without its packet headers).
    pub fn decode(payload: &[u8]) -> Result<Self, TdsError> {
        let mut table = Reader::new(payload);
        let mut out = Self::default();
        let mut seen = [false; 8];
        loop {
            let token = table.u8("PRELOGIN option token")?;
            if token == TERMINATOR {
                break;
            }
            let offset = usize::from(table.u16_be("PRELOGIN option offset")?);
            let len = usize::from(table.u16_be("PRELOGIN option length")?);
            let data = payload
                .get(offset..offset + len)
                .ok_or(TdsError::Truncated { what: "PRELOGIN option data" })?;
            let Some(seen) = seen.get_mut(usize::from(token)) else {
                continue; // An option from a later protocol version: skip it.
            };
            if std::mem::replace(seen, true) {
                return Err(TdsError::Malformed { what: "duplicate PRELOGIN option" });
            }
            let mut d = Reader::new(data);
            match token {
                VERSION => {
                    out.version = PreloginVersion {
                        major: d.u8("PRELOGIN VERSION")?,
                        minor: d.u8("PRELOGIN VERSION")?,
                        build: d.u16_be("PRELOGIN VERSION")?,
                        sub_build: d.u16_be("PRELOGIN VERSION")?,
                    }
                }
                ENCRYPTION => {
                    out.encryption = Some(Encryption::from_u8(d.u8("PRELOGIN ENCRYPTION")?))
                }
                INSTOPT => out.instance = Some(data.to_vec()),
                THREADID if data.is_empty() => {}
                THREADID => out.thread_id = Some(d.u32_le("PRELOGIN THREADID")?),
                MARS => out.mars = Some(d.u8("PRELOGIN MARS")? != 0),
                TRACEID => {
                    out.trace_id = Some(TraceId {
                        connection_id: d.array("PRELOGIN TRACEID")?,
                        activity_id: d.array("PRELOGIN TRACEID")?,
                        activity_sequence: d.u32_le("PRELOGIN TRACEID")?,
                    })
                }
                FEDAUTHREQUIRED => {
                    out.fed_auth_required = Some(d.u8("PRELOGIN FEDAUTHREQUIRED")? != 0)
                }
                NONCEOPT => out.nonce = Some(d.array("PRELOGIN NONCEOPT")?),
                _ => {} // `seen` has a slot only for the tokens above.
            }
        }
        if !seen[usize::from(VERSION)] {
            return Err(TdsError::Malformed { what: "PRELOGIN without VERSION" });
        }
        Ok(out)
    }

    /// Encodes the message payload.
    pub fn encode(&self) -> Result<Vec<u8>, TdsError> {
        let v = &self.version;
        let mut options: Vec<(u8, Vec<u8>)> = Vec::with_capacity(8);
        let mut version = vec![v.major, v.minor];
        version.extend_from_slice(&v.build.to_be_bytes());
        version.extend_from_slice(&v.sub_build.to_be_bytes());
        options.push((VERSION, version));
        if let Some(e) = self.encryption {
            options.push((ENCRYPTION, vec![e.to_u8()]));
        }
        if let Some(instance) = &self.instance {
            options.push((INSTOPT, instance.clone()));
        }
        if let Some(id) = self.thread_id {
            options.push((THREADID, id.to_le_bytes().to_vec()));
        }
        if let Some(mars) = self.mars {
            options.push((MARS, vec![u8::from(mars)]));
        }
        if let Some(t) = &self.trace_id {
            let mut data = t.connection_id.to_vec();
            data.extend_from_slice(&t.activity_id);
            data.extend_from_slice(&t.activity_sequence.to_le_bytes());
            options.push((TRACEID, data));
        }
        if let Some(required) = self.fed_auth_required {
            options.push((FEDAUTHREQUIRED, vec![u8::from(required)]));
        }
        if let Some(nonce) = self.nonce {
            options.push((NONCEOPT, nonce.to_vec()));
        }

        let table_len = options.len() * 5 + 1;
        let total = table_len + options.iter().map(|(_, d)| d.len()).sum::<usize>();
        if total > usize::from(u16::MAX) {
            return Err(TdsError::TooLong { what: "PRELOGIN", len: total, max: 0xFFFF });
        }
        let mut out = Vec::with_capacity(total);
        let mut offset = table_len;
        for (token, data) in &options {
            out.push(*token);
            // Both fit in u16: their sum is at most `total`, checked above.
            out.extend_from_slice(&(offset as u16).to_be_bytes());
            out.extend_from_slice(&(data.len() as u16).to_be_bytes());
            offset += data.len();
        }
        out.push(TERMINATOR);
        for (_, data) in &options {
            out.extend_from_slice(data);
        }
        Ok(out)
    }
}
