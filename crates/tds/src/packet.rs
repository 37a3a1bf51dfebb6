//! The packet layer ([MS-TDS] 2.2.3): framing messages into packets and back.
//!
//! Everything TDS sends is a *message* (a login, a SQL batch, a result stream...) cut into
//! *packets* of at most the negotiated packet size, each with an 8-byte header whose status
//! byte marks the last packet of the message (EOM). The header's length field, which counts the
//! header too, is the one big-endian integer of the protocol.
//!
//! [`MessageReader`] reassembles messages from bytes as they arrive from a socket and enforces
//! the two limits that keep a hostile peer from exhausting memory:
//! * no packet may be longer than the reader's packet size (at most 32767, the protocol's
//!   maximum; the server tightens it to the negotiated size after login), so the bytes buffered
//!   for an incomplete packet are bounded;
//! * no message may carry more than `max_message_size` payload bytes in total.
//!
//! Invariants: the reader never panics and never buffers more than one partial packet plus the
//! current partial message beyond what the caller pushed; after an error it is *poisoned* and
//! returns the same error forever, because a framing error leaves no way to find the next
//! packet boundary — the connection must be closed. A message whose last packet carries the
//! IGNORE bit (the client abandoned it, 2.2.3.1.2: tedious cancels a request it is still
//! sending this way) comes out as an empty message with IGNORE in its status: its payload is
//! dropped, but the client still waits for an answer, which the server must send. Packet ids
//! are not checked: the spec says they are ignored.
//!
//! One message type may be *streamed* ([`MessageReader::set_streamed`]): its packets come out
//! one by one as messages of their own, EOM kept in the status of the last, so that a message
//! of any length (a bulk load's rows) is consumed as it arrives rather than held whole; the
//! message-size limit does not apply to it, the packet-size limit does.
//!
//! [`PacketWriter`] does the reverse: it cuts a payload into packets of the negotiated size,
//! numbering them from 1 (modulo 256) and setting EOM on the last.

use crate::wire::Reader;
use crate::TdsError;

/// Size of the packet header.
pub const HEADER_LEN: usize = 8;
/// The smallest packet size a client may negotiate (ENVCHANGE type 4, 2.2.7.9).
pub const MIN_PACKET_SIZE: usize = 512;
/// The largest packet size a client may negotiate, and the largest packet the length field of
/// any TDS 7.x packet may carry in practice.
pub const MAX_PACKET_SIZE: usize = 32767;
/// The packet size used until login negotiates another, and the server's default.
pub const DEFAULT_PACKET_SIZE: usize = 4096;
/// Default cap on a reassembled message: 64 MiB, ample for any batch or RPC Walden serves.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 << 20;

/// The message type carried in a packet header (2.2.3.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// SQL batch (client).
    SqlBatch = 1,
    /// Pre-TDS7 login (client); recognised only to be refused.
    PreTds7Login = 2,
    /// Remote procedure call (client).
    Rpc = 3,
    /// Tabular result: every server response.
    TabularResult = 4,
    /// Attention signal: cancel the current request (client).
    Attention = 6,
    /// Bulk load data (client).
    BulkLoad = 7,
    /// Federated authentication token (client).
    FedAuthToken = 8,
    /// Transaction manager request (client).
    TransMgr = 14,
    /// TDS 7 login (client).
    Login7 = 16,
    /// SSPI (integrated authentication) message (client).
    Sspi = 17,
    /// Pre-login (client), also used to carry the TLS handshake.
    PreLogin = 18,
}

impl TryFrom<u8> for PacketType {
    type Error = TdsError;

    fn try_from(b: u8) -> Result<Self, TdsError> {
        Ok(match b {
            1 => Self::SqlBatch,
            2 => Self::PreTds7Login,
            3 => Self::Rpc,
            4 => Self::TabularResult,
            6 => Self::Attention,
            7 => Self::BulkLoad,
            8 => Self::FedAuthToken,
            14 => Self::TransMgr,
            16 => Self::Login7,
            17 => Self::Sspi,
            18 => Self::PreLogin,
            other => return Err(TdsError::UnknownPacketType(other)),
        })
    }
}

bit_flags! {
    /// The packet header's status byte (2.2.3.1.2).
    pub struct PacketStatus(u8) {
        /// End of message: the last packet of a message.
        const EOM = 0x01;
        /// With EOM: the client abandons the message; the server must ignore it.
        const IGNORE = 0x02;
        /// Reset the session before running this request (Batch, RPC, TransMgr only).
        const RESET_CONNECTION = 0x08;
        /// Reset the session but keep its transaction.
        const RESET_CONNECTION_SKIP_TRAN = 0x10;
    }
}

/// A decoded packet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketHeader {
    /// The message type.
    pub ty: PacketType,
    /// Status bits.
    pub status: PacketStatus,
    /// Packet length including the header (big-endian on the wire).
    pub length: u16,
    /// Server process id: the session id in server packets, 0 from clients.
    pub spid: u16,
    /// Packet number within the message, modulo 256; ignored by receivers.
    pub packet_id: u8,
    /// Unused, always 0.
    pub window: u8,
}

impl PacketHeader {
    /// Decodes the first [`HEADER_LEN`] bytes of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<Self, TdsError> {
        let mut r = Reader::new(bytes);
        let ty = PacketType::try_from(r.u8("packet type")?)?;
        let status = PacketStatus(r.u8("packet status")?);
        let length = r.u16_be("packet length")?;
        if usize::from(length) < HEADER_LEN {
            return Err(TdsError::PacketTooSmall { len: length.into() });
        }
        Ok(Self {
            ty,
            status,
            length,
            spid: r.u16_be("packet SPID")?,
            packet_id: r.u8("packet id")?,
            window: r.u8("packet window")?,
        })
    }

    /// Encodes the header.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let [l0, l1] = self.length.to_be_bytes();
        let [s0, s1] = self.spid.to_be_bytes();
        [self.ty as u8, self.status.0, l0, l1, s0, s1, self.packet_id, self.window]
    }
}

/// Checks a packet size against 512..=32767.
pub fn validate_packet_size(size: usize) -> Result<usize, TdsError> {
    if (MIN_PACKET_SIZE..=MAX_PACKET_SIZE).contains(&size) {
        Ok(size)
    } else {
        Err(TdsError::InvalidPacketSize(size))
    }
}

/// The packet size a server grants for a LOGIN7 `PacketSize` request: 0 means "server
/// default", anything else is clamped into the allowed range, as SQL Server does.
pub fn negotiate_packet_size(requested: u32) -> usize {
    match requested {
        0 => DEFAULT_PACKET_SIZE,
        n => usize::try_from(n).unwrap_or(MAX_PACKET_SIZE).clamp(MIN_PACKET_SIZE, MAX_PACKET_SIZE),
    }
}

/// A reassembled message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The message type.
    pub ty: PacketType,
    /// The status of the message's first packet with EOM removed: RESET_CONNECTION and
    /// RESET_CONNECTION_SKIP_TRAN are meaningful there. IGNORE when the client abandoned the
    /// message (then the payload is empty). For a streamed type, the packet's own status,
    /// EOM included.
    pub status: PacketStatus,
    /// The SPID of the first packet.
    pub spid: u16,
    /// The packets' payloads, concatenated.
    pub payload: Vec<u8>,
}

impl Message {
    /// Whether the client abandoned this message (IGNORE): it must not run, but it gets an
    /// answer.
    pub fn ignored(&self) -> bool {
        self.status.contains(PacketStatus::IGNORE)
    }

    /// Whether the client asked for the session to be reset before this request.
    pub fn reset_connection(&self) -> bool {
        self.status.contains(PacketStatus::RESET_CONNECTION)
            || self.status.contains(PacketStatus::RESET_CONNECTION_SKIP_TRAN)
    }

    /// Whether the reset is RESETCONNECTIONSKIPTRAN: everything but the open transaction.
    pub fn reset_keeps_transaction(&self) -> bool {
        self.status.contains(PacketStatus::RESET_CONNECTION_SKIP_TRAN)
            && !self.status.contains(PacketStatus::RESET_CONNECTION)
    }
}

/// Reassembles messages from a byte stream. See the module documentation for its limits.
#[derive(Debug)]
pub struct MessageReader {
    buf: Vec<u8>,
    /// Start of the unconsumed part of `buf`; consumed bytes are dropped lazily.
    start: usize,
    partial: Option<Partial>,
    packet_size: usize,
    max_message_size: usize,
    poisoned: Option<TdsError>,
    /// The message type returned packet by packet, if any.
    streamed: Option<PacketType>,
}

#[derive(Debug)]
struct Partial {
    ty: PacketType,
    status: PacketStatus,
    spid: u16,
    payload: Vec<u8>,
    ignore: bool,
}

impl Default for MessageReader {
    fn default() -> Self {
        Self::new()
    }
}

impl MessageReader {
    /// A reader accepting packets up to [`MAX_PACKET_SIZE`] (the right limit before login,
    /// when no size has been negotiated) and messages up to [`DEFAULT_MAX_MESSAGE_SIZE`].
    pub fn new() -> Self {
        Self {
            buf: Vec::new(),
            start: 0,
            partial: None,
            packet_size: MAX_PACKET_SIZE,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            poisoned: None,
            streamed: None,
        }
    }

    /// A reader with explicit limits; `packet_size` must be in 512..=32767.
    pub fn with_limits(packet_size: usize, max_message_size: usize) -> Result<Self, TdsError> {
        Ok(Self {
            packet_size: validate_packet_size(packet_size)?,
            max_message_size,
            ..Self::new()
        })
    }

    /// Sets the largest packet accepted from now on (the negotiated packet size).
    pub fn set_packet_size(&mut self, packet_size: usize) -> Result<(), TdsError> {
        self.packet_size = validate_packet_size(packet_size)?;
        Ok(())
    }

    /// The largest packet currently accepted.
    pub fn packet_size(&self) -> usize {
        self.packet_size
    }

    /// Sets the largest message accepted from now on. A server keeps it small until the login
    /// succeeds, so that an unauthenticated peer cannot make it buffer a large message; bytes
    /// already pushed are checked against the new limit as they are assembled.
    pub fn set_max_message_size(&mut self, max_message_size: usize) {
        self.max_message_size = max_message_size;
    }

    /// Returns the messages of type `ty` packet by packet from now on (see the module
    /// documentation): the caller sees the end of such a message by EOM in the status.
    pub fn set_streamed(&mut self, ty: Option<PacketType>) {
        self.streamed = ty;
    }

    /// Bytes pushed but not yet returned as part of a message.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start + self.partial.as_ref().map_or(0, |p| p.payload.len())
    }

    /// Whether a message has started but not yet ended.
    pub fn in_message(&self) -> bool {
        self.partial.is_some() || self.buf.len() > self.start
    }

    /// Appends bytes received from the peer. Call [`next_message`](Self::next_message) until it
    /// returns `Ok(None)` before pushing more, so the buffer stays bounded.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, `Ok(None)` if more bytes are needed.
    pub fn next_message(&mut self) -> Result<Option<Message>, TdsError> {
        if let Some(err) = &self.poisoned {
            return Err(err.clone());
        }
        let result = self.assemble();
        if let Err(err) = &result {
            self.poisoned = Some(err.clone());
        }
        self.compact();
        result
    }

    fn assemble(&mut self) -> Result<Option<Message>, TdsError> {
        loop {
            let avail = &self.buf[self.start..];
            if avail.len() < HEADER_LEN {
                return Ok(None);
            }
            let header = PacketHeader::decode(avail)?;
            let len = usize::from(header.length);
            if len > self.packet_size {
                return Err(TdsError::PacketTooLarge { len, max: self.packet_size });
            }
            if avail.len() < len {
                return Ok(None);
            }
            let body = &avail[HEADER_LEN..len];
            if self.partial.is_none() && Some(header.ty) == self.streamed {
                let payload = body.to_vec();
                self.start += len;
                return Ok(Some(Message {
                    ty: header.ty,
                    status: header.status,
                    spid: header.spid,
                    payload,
                }));
            }
            let partial = self.partial.get_or_insert_with(|| Partial {
                ty: header.ty,
                status: PacketStatus(header.status.0 & !PacketStatus::EOM.0),
                spid: header.spid,
                payload: Vec::new(),
                ignore: false,
            });
            if partial.ty != header.ty {
                return Err(TdsError::Malformed { what: "packet type changed within a message" });
            }
            if partial.payload.len() + body.len() > self.max_message_size {
                return Err(TdsError::MessageTooLarge { max: self.max_message_size });
            }
            partial.payload.extend_from_slice(body);
            partial.ignore |= header.status.contains(PacketStatus::IGNORE);
            self.start += len;
            if !header.status.contains(PacketStatus::EOM) {
                continue;
            }
            if let Some(done) = self.partial.take() {
                let (status, payload) = if done.ignore {
                    (PacketStatus(done.status.0 | PacketStatus::IGNORE.0), Vec::new())
                } else {
                    (done.status, done.payload)
                };
                return Ok(Some(Message { ty: done.ty, status, spid: done.spid, payload }));
            }
        }
    }

    /// Drops consumed bytes once they dominate the buffer, keeping pushes amortised O(1).
    fn compact(&mut self) {
        if self.start > 0 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }
}

/// Cuts outgoing messages into packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketWriter {
    packet_size: usize,
    spid: u16,
}

impl Default for PacketWriter {
    fn default() -> Self {
        Self { packet_size: DEFAULT_PACKET_SIZE, spid: 0 }
    }
}

impl PacketWriter {
    /// A writer producing packets of at most `packet_size` bytes (512..=32767) stamped with
    /// `spid` (the session id for a server, 0 for a client).
    pub fn new(packet_size: usize, spid: u16) -> Result<Self, TdsError> {
        Ok(Self { packet_size: validate_packet_size(packet_size)?, spid })
    }

    /// The packet size in use.
    pub fn packet_size(&self) -> usize {
        self.packet_size
    }

    /// Switches to a newly negotiated packet size.
    pub fn set_packet_size(&mut self, packet_size: usize) -> Result<(), TdsError> {
        self.packet_size = validate_packet_size(packet_size)?;
        Ok(())
    }

    /// Appends `payload` to `out` as one message of type `ty`. `status` bits other than EOM
    /// (RESET_CONNECTION, ...) go on the first packet; EOM goes on the last. An empty payload
    /// (an attention signal) is one bare header.
    pub fn write_message(
        &self,
        ty: PacketType,
        status: PacketStatus,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) {
        let chunk_len = self.packet_size - HEADER_LEN;
        let packets = payload.len().div_ceil(chunk_len).max(1);
        out.reserve(payload.len() + packets * HEADER_LEN);
        let first_status = PacketStatus(status.0 & !PacketStatus::EOM.0);
        let mut chunks = payload.chunks(chunk_len);
        for index in 0..packets {
            let chunk = chunks.next().unwrap_or(&[]);
            let last = index + 1 == packets;
            let mut st = if index == 0 { first_status } else { PacketStatus::NONE };
            if last {
                st |= PacketStatus::EOM;
            }
            let header = PacketHeader {
                ty,
                status: st,
                // chunk_len + HEADER_LEN <= MAX_PACKET_SIZE < u16::MAX by construction.
                length: (chunk.len() + HEADER_LEN) as u16,
                spid: self.spid,
                packet_id: ((index + 1) % 256) as u8,
                window: 0,
            };
            out.extend_from_slice(&header.encode());
            out.extend_from_slice(chunk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ty: u8, status: u8, body: &[u8]) -> Vec<u8> {
        let len = (body.len() + HEADER_LEN) as u16;
        let mut out = vec![ty, status];
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&[0, 0, 1, 0]);
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn header_round_trip_and_big_endian_length() {
        let h = PacketHeader {
            ty: PacketType::TabularResult,
            status: PacketStatus::EOM,
            length: 0x0102,
            spid: 0x0034,
            packet_id: 1,
            window: 0,
        };
        let bytes = h.encode();
        assert_eq!(bytes, [0x04, 0x01, 0x01, 0x02, 0x00, 0x34, 0x01, 0x00]);
        assert_eq!(PacketHeader::decode(&bytes), Ok(h));
        assert_eq!(
            PacketHeader::decode(&[5, 1, 0, 8, 0, 0, 0, 0]),
            Err(TdsError::UnknownPacketType(5))
        );
        assert_eq!(
            PacketHeader::decode(&[1, 1, 0, 7, 0, 0, 0, 0]),
            Err(TdsError::PacketTooSmall { len: 7 })
        );
    }

    #[test]
    fn split_and_reassemble_byte_by_byte() {
        let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        let writer = PacketWriter::new(512, 57).unwrap();
        let mut wire = Vec::new();
        writer.write_message(
            PacketType::SqlBatch,
            PacketStatus::RESET_CONNECTION,
            &payload,
            &mut wire,
        );
        // 504 payload bytes per packet: 10 packets.
        assert_eq!(wire.len(), payload.len() + 10 * HEADER_LEN);
        assert_eq!(wire[1], PacketStatus::RESET_CONNECTION.0);
        assert_eq!(wire[512 + 1], 0);
        assert_eq!(wire[512 + 6], 2);

        let mut reader = MessageReader::with_limits(512, 1 << 20).unwrap();
        let mut got = None;
        for b in &wire {
            reader.push(std::slice::from_ref(b));
            if let Some(m) = reader.next_message().unwrap() {
                assert!(got.is_none());
                got = Some(m);
            }
        }
        let m = got.unwrap();
        assert_eq!(m.ty, PacketType::SqlBatch);
        assert_eq!(m.spid, 57);
        assert!(m.reset_connection());
        assert_eq!(m.payload, payload);
        assert!(!reader.in_message());
        assert_eq!(reader.buffered(), 0);
    }

    #[test]
    fn empty_message_is_one_header() {
        let mut wire = Vec::new();
        PacketWriter::default().write_message(
            PacketType::Attention,
            PacketStatus::NONE,
            &[],
            &mut wire,
        );
        assert_eq!(wire, [6, 1, 0, 8, 0, 0, 1, 0]);
        let mut reader = MessageReader::new();
        reader.push(&wire);
        let m = reader.next_message().unwrap().unwrap();
        assert_eq!((m.ty, m.payload.len()), (PacketType::Attention, 0));
        assert_eq!(reader.next_message(), Ok(None));
    }

    #[test]
    fn several_messages_in_one_push() {
        let mut wire = frame(1, 0, b"ab");
        wire.extend(frame(1, 1, b"cd"));
        wire.extend(frame(6, 1, b""));
        let mut reader = MessageReader::new();
        reader.push(&wire);
        assert_eq!(reader.next_message().unwrap().unwrap().payload, b"abcd");
        assert_eq!(reader.next_message().unwrap().unwrap().ty, PacketType::Attention);
        assert_eq!(reader.next_message(), Ok(None));
    }

    #[test]
    fn ignored_message_comes_out_empty_and_marked() {
        let mut wire = frame(1, 0x08, b"partial");
        wire.extend(frame(1, 0x03, b""));
        wire.extend(frame(6, 1, b""));
        let mut reader = MessageReader::new();
        reader.push(&wire);
        let ignored = reader.next_message().unwrap().unwrap();
        assert!(ignored.ignored());
        assert_eq!(ignored.ty, PacketType::SqlBatch);
        assert!(ignored.payload.is_empty());
        assert_eq!(reader.next_message().unwrap().unwrap().ty, PacketType::Attention);
    }

    #[test]
    fn limits_are_errors_and_poison_the_reader() {
        let mut reader = MessageReader::with_limits(512, 1000).unwrap();
        reader.push(&frame(1, 1, &[0; 600]));
        let err = reader.next_message().unwrap_err();
        assert_eq!(err, TdsError::PacketTooLarge { len: 608, max: 512 });
        reader.push(&frame(1, 1, b""));
        assert_eq!(reader.next_message(), Err(err));

        let mut reader = MessageReader::with_limits(512, 1000).unwrap();
        for _ in 0..3 {
            reader.push(&frame(1, 0, &[0; 400]));
        }
        assert_eq!(reader.next_message(), Err(TdsError::MessageTooLarge { max: 1000 }));

        let mut reader = MessageReader::new();
        reader.push(&frame(1, 0, b"x"));
        reader.push(&frame(3, 1, b"y"));
        assert!(matches!(reader.next_message(), Err(TdsError::Malformed { .. })));

        assert_eq!(
            MessageReader::with_limits(511, 1).unwrap_err(),
            TdsError::InvalidPacketSize(511)
        );
        assert!(PacketWriter::new(32768, 0).is_err());
    }

    #[test]
    fn message_limit_can_be_raised_after_login() {
        let mut reader = MessageReader::with_limits(512, 100).unwrap();
        reader.push(&frame(16, 1, &[0; 50]));
        // Pipelined after the small message: a request larger than the login-time limit.
        reader.push(&frame(1, 1, &[0; 300]));
        assert_eq!(reader.next_message().unwrap().unwrap().payload.len(), 50);
        reader.set_max_message_size(1000);
        assert_eq!(reader.next_message().unwrap().unwrap().payload.len(), 300);
        reader.set_max_message_size(10);
        reader.push(&frame(1, 1, &[0; 11]));
        assert_eq!(reader.next_message(), Err(TdsError::MessageTooLarge { max: 10 }));
    }

    #[test]
    fn packet_size_negotiation() {
        assert_eq!(negotiate_packet_size(0), 4096);
        assert_eq!(negotiate_packet_size(100), 512);
        assert_eq!(negotiate_packet_size(8000), 8000);
        assert_eq!(negotiate_packet_size(u32::MAX), 32767);
    }

    #[test]
    fn streamed_messages_come_out_packet_by_packet_beyond_the_message_limit() {
        let mut reader = MessageReader::with_limits(512, 100).unwrap();
        reader.set_streamed(Some(PacketType::BulkLoad));
        reader.push(&frame(7, 0, &[1; 80]));
        reader.push(&frame(7, 0, &[2; 80]));
        reader.push(&frame(7, 1, &[3; 80]));
        // A batch after it is reassembled as usual.
        reader.push(&frame(1, 0, &[4; 10]));
        reader.push(&frame(1, 1, &[5; 10]));
        for (byte, last) in [(1, false), (2, false), (3, true)] {
            let m = reader.next_message().unwrap().unwrap();
            assert_eq!(
                (m.ty, m.payload, m.status.contains(PacketStatus::EOM)),
                (PacketType::BulkLoad, vec![byte; 80], last)
            );
        }
        let batch = reader.next_message().unwrap().unwrap();
        assert_eq!((batch.ty, batch.payload.len()), (PacketType::SqlBatch, 20));
        assert_eq!(reader.next_message(), Ok(None));
    }
}
