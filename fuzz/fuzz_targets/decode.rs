//! Fuzz target `decode`: every decoder of walden-tds on arbitrary bytes.
//!
//! The first byte picks what the rest of the input is fed to: one of the payload decoders, the
//! packet reader (which then decodes each message it reassembles with the decoder for its
//! packet type), or all of them. Besides "never panics" (what libFuzzer detects), the target
//! checks two invariants of the codec: whatever a decoder accepts re-encodes, and re-encoding
//! is a fixpoint (encode, decode, encode gives the same bytes); and a packet reader that
//! reported an error keeps reporting it. Run with `cargo +nightly fuzz run decode` from the
//! repository root (see docs/format/tds.md, "Robustness").

#![no_main]

use libfuzzer_sys::fuzz_target;
use walden_tds::packet::PacketHeader;
use walden_tds::*;

/// Checks that an accepted input re-encodes to a fixpoint.
fn fixpoint<T>(
    decoded: Result<T, TdsError>,
    encode: impl Fn(&T) -> Result<Vec<u8>, TdsError>,
    decode: impl Fn(&[u8]) -> Result<T, TdsError>,
) {
    let Ok(value) = decoded else { return };
    let first = encode(&value).expect("a decoded value re-encodes");
    let again = decode(&first).expect("re-encoded bytes decode");
    let second = encode(&again).expect("a decoded value re-encodes");
    assert_eq!(first, second, "encode(decode(encode(x))) differs from encode(x)");
}

fn prelogin(data: &[u8]) {
    fixpoint(Prelogin::decode(data), Prelogin::encode, Prelogin::decode);
}

fn login7(data: &[u8]) {
    fixpoint(Login7::decode(data), Login7::encode, Login7::decode);
}

fn batch(data: &[u8]) {
    fixpoint(SqlBatch::decode(data), SqlBatch::encode, SqlBatch::decode);
}

fn rpc(data: &[u8]) {
    fixpoint(RpcRequest::decode(data), RpcRequest::encode, RpcRequest::decode);
}

fn trans_mgr(data: &[u8]) {
    fixpoint(TransMgrRequest::decode(data), TransMgrRequest::encode, TransMgrRequest::decode);
}

fn tokens(data: &[u8]) {
    fixpoint(decode_tokens(data), |t| encode_tokens(t), decode_tokens);
}

/// Feeds a Bulk Load message's payload to the incremental decoder in chunks whose size the
/// first byte picks: every item it returns consumed input, so the loop ends.
fn bulk_load(data: &[u8]) {
    let Some((&split, data)) = data.split_first() else { return };
    let mut decoder = BulkLoadDecoder::new(1 << 16);
    let chunks: Vec<&[u8]> = data.chunks(usize::from(split) + 1).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        decoder.push(chunk);
        let last = i + 1 == chunks.len();
        let mut items = 0;
        while let Ok(Some(_)) = decoder.next_item(last) {
            items += 1;
            assert!(items <= chunk.len() + 1 + data.len(), "the decoder loops");
        }
    }
}

fn header(data: &[u8]) {
    if let Ok(h) = PacketHeader::decode(data) {
        assert_eq!(PacketHeader::decode(&h.encode()), Ok(h));
    }
}

fn all(data: &[u8]) {
    header(data);
    prelogin(data);
    login7(data);
    batch(data);
    rpc(data);
    trans_mgr(data);
    tokens(data);
    bulk_load(data);
}

/// Feeds `data` to a packet reader in chunks whose size the next byte picks, decoding every
/// message by its packet type.
fn packets(data: &[u8]) {
    let Some((&split, data)) = data.split_first() else { return };
    let mut reader = MessageReader::with_limits(512, 1 << 16).expect("valid limits");
    for chunk in data.chunks(usize::from(split) + 1) {
        reader.push(chunk);
        loop {
            match reader.next_message() {
                Ok(Some(m)) => match m.ty {
                    PacketType::PreLogin => prelogin(&m.payload),
                    PacketType::Login7 => login7(&m.payload),
                    PacketType::SqlBatch => batch(&m.payload),
                    PacketType::Rpc => rpc(&m.payload),
                    PacketType::TransMgr => trans_mgr(&m.payload),
                    PacketType::TabularResult => tokens(&m.payload),
                    PacketType::BulkLoad => bulk_load(&m.payload),
                    _ => all(&m.payload),
                },
                Ok(None) => break,
                Err(err) => {
                    reader.push(&[4, 1, 0, 8, 0, 0, 1, 0]);
                    assert_eq!(reader.next_message(), Err(err), "an error poisons the reader");
                    return;
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    match selector % 10 {
        0 => prelogin(rest),
        1 => login7(rest),
        2 => batch(rest),
        3 => rpc(rest),
        4 => trans_mgr(rest),
        5 => tokens(rest),
        6 => header(rest),
        7 => packets(rest),
        8 => bulk_load(rest),
        _ => all(rest),
    }
});
