//! The bulk load over TDS ([MS-TDS] 2.2.6.1): the client runs `INSERT BULK table (columns)
//! WITH (options)` as a SQL batch (the session checks it and keeps it), then sends the rows as
//! a Bulk Load message (packet type 7): COLMETADATA, a ROW per row, DONE. The rows are
//! decoded as the packets arrive and handed one by one to the session, which inserts them in
//! one transaction; the answer is one DONE with the count of rows inserted, or the error and
//! a DONE_ERROR, after which nothing of the load is left. The exchange is described in
//! `docs/format/bulk-load.md`.

use std::io::{self, Write};

use walden_engine::types::Value;
use walden_sql::exec::bulk::{BulkRows, BulkStop};
use walden_sql::exec::{Output, Session, SqlError};
use walden_tds::{BulkLoadDecoder, BulkStep, Message, PacketStatus, PacketType, TdsValue};

use super::convert::from_wire_into;
use super::output::TdsOutput;

/// The largest single token (one row) a bulk load may carry: the limit a whole request has.
const MAX_ROW_BYTES: usize = walden_tds::packet::DEFAULT_MAX_MESSAGE_SIZE;

/// Runs the bulk load whose first packet is `first`, reading its other packets with `read`,
/// and writes the answer to `out` but its last DONE, which the caller sends (with DONE_ATTN
/// when this returns true: the client abandoned the load). An error is returned only when
/// the connection failed. `all_read` is called once the message's last packet has been read:
/// from then on the client can send nothing but an attention, which the caller's cancel
/// signal may then watch for (a load waiting for a table lock ends at the driver's query
/// timeout).
pub fn load<W: Write>(
    session: &mut Session,
    first: Message,
    read: &mut dyn FnMut() -> io::Result<Message>,
    all_read: &dyn Fn(),
    out: &mut TdsOutput<W>,
) -> io::Result<bool> {
    let mut rows = MessageRows {
        decoder: BulkLoadDecoder::new(MAX_ROW_BYTES),
        wire: Vec::new(),
        read,
        all_read,
        last: false,
        cancelled: false,
        failed: None,
    };
    rows.take(first);
    if session.bulk_pending() {
        session.bulk_load(&mut rows, out);
    } else {
        out.message(&SqlError::new(
            4002,
            "The incoming tabular data stream (TDS) protocol stream is incorrect: a bulk load \
             without the INSERT BULK statement before it.",
        ));
    }
    // The client sends its whole message before it reads the answer, whatever happened to
    // the rows: the rest is read and dropped.
    rows.drain();
    if let Some(e) = rows.failed {
        return Err(e);
    }
    Ok(rows.cancelled)
}

/// The rows of a Bulk Load message, decoded from its packets as they are read.
struct MessageRows<'r> {
    decoder: BulkLoadDecoder,
    /// The row being decoded, as the client sent it: one vector for every row.
    wire: Vec<TdsValue>,
    read: &'r mut dyn FnMut() -> io::Result<Message>,
    /// Called when the message's last packet has been read.
    all_read: &'r dyn Fn(),
    /// The message's last packet has been read.
    last: bool,
    /// The client abandoned the message (IGNORE) or sent an attention.
    cancelled: bool,
    /// Reading from the connection failed.
    failed: Option<io::Error>,
}

impl MessageRows<'_> {
    /// Takes one packet of the message (or what came instead of one).
    fn take(&mut self, packet: Message) {
        match packet.ty {
            PacketType::BulkLoad if packet.status.contains(PacketStatus::IGNORE) => {
                self.last = true;
                self.cancelled = true;
            }
            PacketType::BulkLoad => {
                self.decoder.push(&packet.payload);
                self.last = packet.status.contains(PacketStatus::EOM);
                if self.last {
                    (self.all_read)();
                }
            }
            // An attention in the middle of the message: the client gives up on the load.
            _ => {
                self.last = true;
                self.cancelled = true;
            }
        }
    }

    /// Reads the message's next packet.
    fn pull(&mut self) -> Result<(), BulkStop> {
        match (self.read)() {
            Ok(packet) => {
                self.take(packet);
                Ok(())
            }
            Err(e) => {
                self.last = true;
                self.failed = Some(e);
                Err(BulkStop::Cancelled)
            }
        }
    }

    fn drain(&mut self) {
        while !self.last {
            let _ = self.pull();
        }
    }
}

impl BulkRows for MessageRows<'_> {
    fn next_row(&mut self, row: &mut Vec<Value>) -> Result<bool, BulkStop> {
        loop {
            if self.cancelled {
                return Err(BulkStop::Cancelled);
            }
            match self.decoder.next_row(self.last, &mut self.wire) {
                Ok(Some(BulkStep::Row)) => {
                    row.resize(self.wire.len(), Value::Null);
                    for (i, (v, slot)) in self.wire.drain(..).zip(row.iter_mut()).enumerate() {
                        from_wire_into(v, slot).map_err(|_| {
                            BulkStop::Error(SqlError::new(
                                4816,
                                format!("Invalid column type from bcp client for colid {}.", i + 1),
                            ))
                        })?;
                    }
                    return Ok(true);
                }
                Ok(Some(BulkStep::Columns)) => {}
                Ok(Some(BulkStep::Done)) => return Ok(false),
                Ok(None) if self.decoder.finished() => return Ok(false),
                Ok(None) => self.pull()?,
                Err(e) => {
                    return Err(BulkStop::Error(SqlError::new(
                        4002,
                        format!(
                        "The incoming tabular data stream (TDS) protocol stream is incorrect: {e}."
                    ),
                    )))
                }
            }
        }
    }
}
