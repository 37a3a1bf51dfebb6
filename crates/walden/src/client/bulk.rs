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
    /// Packets sent so far, for the header's packet id.
    packets: usize,
}

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
        Ok(Ok(BulkLoad { client: self, columns, pending, packets: 0 }))
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
        let last = std::mem::take(&mut self.pending);
        self.send_packet(&last, true)?;
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
            let packet = self.pending[sent..sent + chunk].to_vec();
            self.send_packet(&packet, false)?;
            sent += chunk;
        }
        self.pending.drain(..sent);
        Ok(())
    }

    fn send_packet(&mut self, body: &[u8], last: bool) -> Result<(), ClientError> {
        self.packets += 1;
        let header = PacketHeader {
            ty: PacketType::BulkLoad,
            status: if last { PacketStatus::EOM } else { PacketStatus::NONE },
            // body.len() <= packet size - HEADER_LEN <= 32767 - 8.
            length: (body.len() + HEADER_LEN) as u16,
            spid: 0,
            packet_id: (self.packets % 256) as u8,
            window: 0,
        };
        let mut wire = Vec::with_capacity(body.len() + HEADER_LEN);
        wire.extend_from_slice(&header.encode());
        wire.extend_from_slice(body);
        use std::io::Write;
        self.client.writer.write_all(&wire).map_err(|e| {
            let e = self.client.io_error(&e);
            self.client.broken = Some(e.to_string());
            e
        })
    }
}
