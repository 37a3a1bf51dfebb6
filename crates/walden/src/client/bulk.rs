//! The client side of the bulk load: `INSERT BULK` as a batch, then the rows as one Bulk Load
//! message (COLMETADATA, a ROW per row, DONE) written packet by packet as the rows come, so a
//! load of any size holds one packet of rows in memory. `walden bcp in` and `walden bench
//! bulk` use it; the exchange is described in `docs/format/bulk-load.md`.

use walden_tds::packet::{PacketHeader, HEADER_LEN};
use walden_tds::{encode_row, Column, Done, DoneStatus, PacketStatus, PacketType, TdsValue, Token};

use super::{protocol, BatchResult, Client, ClientError};

/// A bulk load in progress: rows go out with [`BulkLoad::row`], the server's answer comes
/// back from [`BulkLoad::finish`].
#[derive(Debug)]
pub struct BulkLoad<'c> {
    client: &'c mut Client,
    columns: Vec<Column>,
    /// The message's bytes not yet sent (less than a packet's worth).
    pending: Vec<u8>,
    /// Packets made so far, for the header's packet id.
    packets: usize,
    /// Whole packets not yet written to the socket: they go out in writes of at least
    /// [`WRITE_SIZE`] bytes, not one system call per packet.
    wire: Vec<u8>,
}

/// How many bytes of packets are gathered before a write.
const WRITE_SIZE: usize = 64 * 1024;

impl Client {
    /// Runs `statement` (an `INSERT BULK` naming the same columns as `columns`) and, if the
    /// server accepts it, starts the Bulk Load message with `columns` as its COLMETADATA.
    /// The server's refusal (an unknown table or column...) is `Ok(Err(result))`.
    pub fn bulk_load(
        &mut self,
        statement: &str,
        columns: Vec<Column>,
    ) -> Result<Result<BulkLoad<'_>, BatchResult>, ClientError> {
        let answer = self.batch_collect(statement)?;
        if answer.errors().next().is_some() {
            return Ok(Err(answer));
        }
        let mut pending = Vec::with_capacity(self.packets.packet_size() * 2);
        Token::ColMetadata(columns.clone()).encode(&[], &mut pending).map_err(protocol)?;
        Ok(Ok(BulkLoad {
            client: self,
            columns,
            pending,
            packets: 0,
            wire: Vec::with_capacity(2 * WRITE_SIZE),
        }))
    }
}

impl BulkLoad<'_> {
    /// Sends one row: a value per column, each of the column's wire type (or NULL).
    pub fn row(&mut self, values: &[TdsValue]) -> Result<(), ClientError> {
        encode_row(&self.columns, values, &mut self.pending).map_err(protocol)?;
        self.send_full_packets()
    }

    /// Ends the message with its DONE and reads the server's answer: the count of rows
    /// loaded, or the errors.
    pub fn finish(mut self) -> Result<BatchResult, ClientError> {
        let done = Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 });
        done.encode(&[], &mut self.pending).map_err(protocol)?;
        self.send_full_packets()?;
        self.packets += 1;
        push_packet(&mut self.wire, self.packets, &self.pending, true);
        self.write()?;
        let mut out = BatchResult::default();
        self.client.read_response(&mut |token| match token {
            Token::Done(d) if d.status.contains(DoneStatus::COUNT) => out.counts.push(d.row_count),
            Token::Error(m) | Token::Info(m) => out.messages.push(m),
            _ => {}
        })?;
        Ok(out)
    }

    fn send_full_packets(&mut self) -> Result<(), ClientError> {
        let chunk = self.client.packets.packet_size() - HEADER_LEN;
        // Only whole packets; the last (with EOM) may be short and goes out in `finish`,
        // so at least one byte is always kept back for it.
        let mut sent = 0;
        while self.pending.len() - sent > chunk {
            self.packets += 1;
            push_packet(&mut self.wire, self.packets, &self.pending[sent..sent + chunk], false);
            sent += chunk;
            if self.wire.len() >= WRITE_SIZE {
                self.write()?;
            }
        }
        self.pending.drain(..sent);
        Ok(())
    }

    /// Writes the packets gathered so far.
    fn write(&mut self) -> Result<(), ClientError> {
        use std::io::Write;
        let written = self.client.writer.write_all(&self.wire);
        self.wire.clear();
        written.map_err(|e| {
            let e = self.client.io_error(&e);
            self.client.broken = Some(e.to_string());
            e
        })
    }
}

/// Appends packet number `number` of the message, holding `body`, to `wire`.
fn push_packet(wire: &mut Vec<u8>, number: usize, body: &[u8], last: bool) {
    let header = PacketHeader {
        ty: PacketType::BulkLoad,
        status: if last { PacketStatus::EOM } else { PacketStatus::NONE },
        // body.len() <= packet size - HEADER_LEN <= 32767 - 8.
        length: (body.len() + HEADER_LEN) as u16,
        spid: 0,
        packet_id: (number % 256) as u8,
        window: 0,
    };
    wire.extend_from_slice(&header.encode());
    wire.extend_from_slice(body);
}
