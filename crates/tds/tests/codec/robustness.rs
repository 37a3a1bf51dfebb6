//! Property test: no input makes any decoder panic, and whatever a decoder accepts re-encodes
//! to a fixpoint (encode, decode, encode gives the same bytes).
//!
//! A deterministic xorshift generator feeds 100,000 inputs, a quarter of them random bytes and
//! the rest mutations (bit flips, boundary values written over length fields, truncations,
//! insertions, deletions) of valid messages, to every decoder of the crate. The same seed gives
//! the same inputs, so a failure names the iteration that reproduces it.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::cases::*;
use walden_tds::packet::PacketHeader;
use walden_tds::*;

const ITERATIONS: usize = 100_000;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Shortens long strings and byte strings so that the corpus stays small and fast to mutate.
fn shrink(value: TdsValue) -> TdsValue {
    match value {
        TdsValue::VarChar(b) => TdsValue::VarChar(b.into_iter().take(12).collect()),
        TdsValue::Binary(b) => TdsValue::Binary(b.into_iter().take(12).collect()),
        TdsValue::NVarChar(s) => TdsValue::NVarChar(s.chars().take(6).collect()),
        other => other,
    }
}

fn small_cases() -> Vec<(TypeInfo, TdsValue)> {
    value_cases().into_iter().map(|(ty, v)| (ty, shrink(v))).collect()
}

fn corpus() -> Vec<Vec<u8>> {
    let mut rpc = sample_rpc();
    for call in &mut rpc.calls {
        for p in &mut call.params {
            p.value = shrink(p.value.clone());
        }
    }
    let cases = small_cases();
    let columns: Vec<Column> = cases.iter().map(|(ty, _)| Column::new("c", *ty, true)).collect();
    let row: Vec<TdsValue> = cases.iter().map(|(_, v)| v.clone()).collect();
    let mut tokens: Vec<Token> = sample_tokens()
        .into_iter()
        // Rows, and NoMetaData, stand on the COLMETADATA added below.
        .filter(|t| {
            !matches!(
                t,
                Token::ColMetadata(_) | Token::Row(_) | Token::NbcRow(_) | Token::NoMetadata
            )
        })
        .map(|t| match t {
            Token::ReturnValue(mut rv) => {
                rv.value = shrink(rv.value);
                Token::ReturnValue(rv)
            }
            Token::Error(mut m) => {
                m.message = m.message.chars().take(20).collect();
                Token::Error(m)
            }
            other => other,
        })
        .collect();
    tokens.extend([
        Token::ColMetadata(columns),
        Token::Row(row.clone()),
        Token::NoMetadata,
        Token::NbcRow(
            row.iter()
                .enumerate()
                .map(|(i, v)| if i % 3 == 0 { TdsValue::Null } else { v.clone() })
                .collect(),
        ),
        Token::Done(Done { status: token::DoneStatus::COUNT, cur_cmd: 0xC1, row_count: 2 }),
    ]);

    let mut corpus = vec![
        sample_prelogin().encode().unwrap(),
        Prelogin::default().encode().unwrap(),
        sample_login().encode().unwrap(),
        Login7::default().encode().unwrap(),
        sample_batch().encode().unwrap(),
        rpc.encode().unwrap(),
        encode_tokens(&tokens).unwrap(),
    ];
    corpus.extend(sample_transmgr().iter().map(|t| t.encode().unwrap()));
    // Framed messages, for the packet reader.
    let writer = PacketWriter::new(512, 3).unwrap();
    let mut wire = Vec::new();
    for (ty, payload) in [(PacketType::SqlBatch, &corpus[4]), (PacketType::Rpc, &corpus[5])] {
        writer.write_message(ty, PacketStatus::RESET_CONNECTION, payload, &mut wire);
    }
    writer.write_message(PacketType::Attention, PacketStatus::NONE, &[], &mut wire);
    corpus.push(wire);
    corpus
}

fn mutate(rng: &mut XorShift, data: &mut Vec<u8>) {
    const BYTES: [u8; 6] = [0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF];
    const WORDS: [u16; 5] = [0, 1, 0x7FFF, 0x8000, 0xFFFF];
    for _ in 0..1 + rng.below(4) {
        let len = data.len();
        let at = if len == 0 { 0 } else { rng.below(len) };
        match rng.below(8) {
            0 if len > 0 => data[at] ^= 1 << rng.below(8),
            1 if len > 0 => data[at] = BYTES[rng.below(BYTES.len())],
            2 if at + 2 <= len => {
                data[at..at + 2].copy_from_slice(&WORDS[rng.below(WORDS.len())].to_le_bytes())
            }
            3 if at + 4 <= len => {
                let dwords = [0, 1, u32::MAX, 0x7FFF_FFFF, u32::MAX - 1, len as u32];
                data[at..at + 4].copy_from_slice(&dwords[rng.below(dwords.len())].to_le_bytes())
            }
            4 => data.truncate(at),
            5 => data.insert(at, rng.next() as u8),
            6 if len > 0 => {
                let end = (at + 1 + rng.below(16)).min(len);
                data.drain(at..end);
            }
            _ => data.push(rng.next() as u8),
        }
    }
}

/// Re-encodes a decoded value and checks that decoding and encoding again is a fixpoint.
/// Returns whether the input was accepted.
fn fixpoint<T>(
    decoded: Result<T, TdsError>,
    encode: impl Fn(&T) -> Result<Vec<u8>, TdsError>,
    decode: impl Fn(&[u8]) -> Result<T, TdsError>,
) -> bool {
    let Ok(value) = decoded else { return false };
    let first = encode(&value).expect("a decoded value re-encodes");
    let second = encode(&decode(&first).expect("re-encoded bytes decode")).unwrap();
    assert_eq!(first, second, "encode(decode(encode(x))) differs");
    true
}

/// Runs every payload decoder; returns how many accepted the input.
fn decode_all(data: &[u8]) -> usize {
    let _ = PacketHeader::decode(data);
    [
        fixpoint(Prelogin::decode(data), Prelogin::encode, Prelogin::decode),
        fixpoint(Login7::decode(data), Login7::encode, Login7::decode),
        fixpoint(SqlBatch::decode(data), SqlBatch::encode, SqlBatch::decode),
        fixpoint(RpcRequest::decode(data), RpcRequest::encode, RpcRequest::decode),
        fixpoint(TransMgrRequest::decode(data), TransMgrRequest::encode, TransMgrRequest::decode),
        fixpoint(decode_tokens(data), |t| encode_tokens(t), decode_tokens),
    ]
    .into_iter()
    .filter(|&accepted| accepted)
    .count()
}

/// Feeds `data` to every decoder directly and through the packet reader, `split` bytes at a
/// time; returns how many decoders accepted something.
fn feed(data: &[u8], split: usize) -> usize {
    let mut accepted = decode_all(data);
    let mut reader = MessageReader::with_limits(512, 1 << 16).unwrap();
    for chunk in data.chunks(split.max(1)) {
        reader.push(chunk);
        loop {
            match reader.next_message() {
                Ok(Some(message)) => accepted += decode_all(&message.payload),
                Ok(None) => break,
                Err(err) => {
                    // Poisoned: the same error again, whatever follows.
                    reader.push(&[4, 1, 0, 8, 0, 0, 1, 0]);
                    assert_eq!(reader.next_message(), Err(err));
                    return accepted;
                }
            }
        }
    }
    accepted
}

#[test]
fn corpus_is_valid() {
    let corpus = corpus();
    Prelogin::decode(&corpus[0]).unwrap();
    Login7::decode(&corpus[2]).unwrap();
    SqlBatch::decode(&corpus[4]).unwrap();
    RpcRequest::decode(&corpus[5]).unwrap();
    decode_tokens(&corpus[6]).unwrap();
    for transmgr in &corpus[7..corpus.len() - 1] {
        TransMgrRequest::decode(transmgr).unwrap();
    }
    let mut reader = MessageReader::new();
    reader.push(corpus.last().unwrap());
    let mut count = 0;
    while reader.next_message().unwrap().is_some() {
        count += 1;
    }
    assert_eq!(count, 3);
}

#[test]
fn decoders_never_panic() {
    let corpus = corpus();
    let mut rng = XorShift(0x5EED_7D5C_0DEC_0001);
    let mut accepted = 0;
    for iteration in 0..ITERATIONS {
        let data = if rng.below(4) == 0 {
            (0..rng.below(300)).map(|_| rng.next() as u8).collect()
        } else {
            let mut data = corpus[rng.below(corpus.len())].clone();
            mutate(&mut rng, &mut data);
            data
        };
        let split = 1 + rng.below(700);
        match catch_unwind(AssertUnwindSafe(|| feed(&data, split))) {
            Ok(n) => accepted += n,
            Err(_) => {
                let hex: String = data.iter().map(|b| format!("{b:02X}")).collect();
                panic!("iteration {iteration} (split {split}) panicked on input {hex}");
            }
        }
    }
    // Guards the corpus: mutations must keep reaching deep into the decoders, not just fail
    // on their first byte (about 30% of inputs are accepted by some decoder).
    assert!(accepted > ITERATIONS / 10, "only {accepted} inputs were accepted");
}
