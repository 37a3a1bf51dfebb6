//! Feeds arbitrary bytes to every decoder of `walden-tds`: each must return `Ok` or `Err`,
//! never panic, and whatever one accepts must re-encode to a fixpoint.
#![no_main]

use libfuzzer_sys::fuzz_target;
use walden_tds::packet::PacketHeader;
use walden_tds::{
    decode_tokens, encode_tokens, Login7, MessageReader, Prelogin, RpcRequest, SqlBatch, TdsError,
    TransMgrRequest,
};

/// Checks `encode(decode(encode(x))) == encode(x)` for an accepted input.
fn fixpoint<T>(
    decoded: Result<T, TdsError>,
    encode: impl Fn(&T) -> Result<Vec<u8>, TdsError>,
    decode: impl Fn(&[u8]) -> Result<T, TdsError>,
) {
    if let Ok(value) = decoded {
        let first = encode(&value).expect("a decoded value re-encodes");
        let again = decode(&first).expect("re-encoded bytes decode");
        assert_eq!(encode(&again).expect("re-encodes"), first);
    }
}

fn decode_payload(data: &[u8]) {
    fixpoint(Prelogin::decode(data), Prelogin::encode, Prelogin::decode);
    fixpoint(Login7::decode(data), Login7::encode, Login7::decode);
    fixpoint(SqlBatch::decode(data), SqlBatch::encode, SqlBatch::decode);
    fixpoint(RpcRequest::decode(data), RpcRequest::encode, RpcRequest::decode);
    fixpoint(TransMgrRequest::decode(data), TransMgrRequest::encode, TransMgrRequest::decode);
    fixpoint(decode_tokens(data), |t| encode_tokens(t), decode_tokens);
}

fuzz_target!(|data: &[u8]| {
    let _ = PacketHeader::decode(data);
    decode_payload(data);

    // The first byte picks how the rest is cut into reads, to exercise reassembly.
    let Some((&split, rest)) = data.split_first() else { return };
    let mut reader = match MessageReader::with_limits(512, 1 << 20) {
        Ok(reader) => reader,
        Err(_) => return,
    };
    for chunk in rest.chunks(usize::from(split).max(1)) {
        reader.push(chunk);
        loop {
            match reader.next_message() {
                Ok(Some(message)) => decode_payload(&message.payload),
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
});
