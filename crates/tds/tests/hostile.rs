//! Hostile input, as a property test: whatever bytes a peer sends, every public decoder of the
//! codec returns (never panics), and none allocates more than a constant factor of the bytes it
//! was given, whatever its length fields claim.
//!
//! The inputs are arbitrary byte strings and, mostly, mutations of valid encodings (PRELOGIN,
//! LOGIN7, SQL batch, RPC request, transaction-manager requests, a token stream covering every
//! token and value type, and framed packets): bit flips, overwritten bytes, insertions,
//! deletions, truncations, and length fields set to huge or boundary values. Each input goes to
//! every decoder, directly and through [`MessageReader`] fed in arbitrary chunks. TYPE_INFO and
//! value decoding is reached through the RPC, COLMETADATA, ROW, NBCROW and RETURNVALUE decoders
//! (the crate does not export them on their own).
//!
//! Allocation is measured by a counting global allocator: for each decoder call, the peak of
//! the bytes allocated on this thread above what was live before the call. The bound is a
//! constant factor of the input length plus a small constant, so a decoder that trusts a length
//! field (a `Vec::with_capacity(n)` of a wire `n`) fails at once on a short input. The factor
//! differs by decoder family: a row token of N columns, all NULL in an NBCROW bitmap, is N/8
//! bytes on the wire and N [`TdsValue`]s in memory, so the token-stream decoder legitimately
//! expands its input by about `8 * size_of::<TdsValue>()`; the request decoders the server runs
//! on unauthenticated input expand theirs by a few times at most (UTF-16 to UTF-8 and struct
//! overhead).
//!
//! Failing cases are shrunk by proptest and recorded next to this file
//! (`hostile.proptest-regressions`), so they are replayed first on the next run.

// Test helpers outside `#[test]` functions unwrap freely, as in the other crates' tests.
#![allow(clippy::unwrap_used)]

#[path = "codec/cases.rs"]
#[allow(dead_code)] // Only the samples this test mutates are used.
mod cases;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::mem::size_of;

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;

use cases::*;
use walden_tds::packet::PacketHeader;
use walden_tds::*;

// ---------------------------------------------------------------------------------------------
// Allocation accounting.

thread_local! {
    /// Bytes currently allocated by this thread (may go below zero when it frees memory another
    /// thread allocated; only differences matter).
    static LIVE: Cell<isize> = const { Cell::new(0) };
    /// The highest `LIVE` since the last [`measure`] began.
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// The system allocator, counting each thread's live bytes so that [`measure`] can bound what
/// one decoder call allocates. The thread-locals are const-initialised `Cell`s without
/// destructors, so touching them never allocates (no recursion into the allocator).
struct Counting;

fn account(delta: isize) {
    // `try_with`: during thread teardown the slot may be gone; those bytes are not measured.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// A test-only allocator wrapper: the workspace denies `unsafe` in product code, but
// `GlobalAlloc` can only be implemented unsafely, and measuring allocation needs it.
#[allow(unsafe_code)]
// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract holds exactly as it does for `System`; the accounting only reads sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            account(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            account(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is; `ptr` came from this allocator, i.e. from `System`.
        unsafe { System.dealloc(ptr, layout) };
        account(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // While `realloc` moves a block both copies exist; count the new one first so the
            // peak reflects that.
            account(new_size as isize);
            account(-(layout.size() as isize));
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns the most bytes it had allocated at once on this thread beyond what was
/// live when it started (what it returns is dropped inside, so it counts too).
fn measure<T>(f: impl FnOnce() -> T) -> usize {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    drop(f());
    let peak = PEAK.with(Cell::get);
    usize::try_from(peak - base).unwrap_or(0)
}

/// Allowed peak allocation of a request decoder (the ones the server runs, before and after
/// login) on `len` input bytes: UTF-16 text becomes at most 1.5 times as many UTF-8 bytes, and
/// the obfuscated passwords are copied once before decoding; the rest is struct overhead and
/// `Vec` growth (a doubling reallocation briefly holds both blocks).
fn request_bound(len: usize) -> usize {
    16 * len + 4096
}

/// Allowed peak allocation of the token-stream decoder: see the module documentation. Eight
/// NULL values per bitmap byte, times the `Vec` growth factor of the row and of the token list.
fn token_bound(len: usize) -> usize {
    let per_byte = (8 * size_of::<TdsValue>()).max(size_of::<Token>()) * 4;
    per_byte * len + 4096
}

// ---------------------------------------------------------------------------------------------
// The corpus of valid encodings.

/// Keeps strings and byte strings short, so that mutations hit structure rather than data.
fn shrink(value: TdsValue) -> TdsValue {
    match value {
        TdsValue::VarChar(b) => TdsValue::VarChar(b.into_iter().take(9).collect()),
        TdsValue::Binary(b) => TdsValue::Binary(b.into_iter().take(9).collect()),
        TdsValue::NVarChar(s) => TdsValue::NVarChar(s.chars().take(5).collect()),
        other => other,
    }
}

/// Valid PRELOGIN, LOGIN7, batch, RPC, TransMgr and token-stream payloads, then framed packets.
fn corpus() -> Vec<Vec<u8>> {
    let mut rpc = sample_rpc();
    for call in &mut rpc.calls {
        for p in &mut call.params {
            p.value = shrink(p.value.clone());
        }
    }
    let cases: Vec<(TypeInfo, TdsValue)> =
        value_cases().into_iter().map(|(ty, v)| (ty, shrink(v))).collect();
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
                m.message = m.message.chars().take(12).collect();
                Token::Error(m)
            }
            other => other,
        })
        .collect();
    let nulls: Vec<TdsValue> = row
        .iter()
        .enumerate()
        .map(|(i, v)| if i % 2 == 0 { TdsValue::Null } else { v.clone() })
        .collect();
    tokens.extend([
        Token::ColMetadata(columns),
        Token::Row(row),
        Token::NoMetadata,
        Token::NbcRow(nulls),
        Token::Done(Done { status: DoneStatus::COUNT, cur_cmd: 0xC1, row_count: 2 }),
    ]);

    let mut corpus = vec![
        sample_prelogin().encode().unwrap(),
        sample_login().encode().unwrap(),
        Login7 { username: "sa".into(), password: "pw".into(), ..Login7::default() }
            .encode()
            .unwrap(),
        sample_batch().encode().unwrap(),
        rpc.encode().unwrap(),
        encode_tokens(&tokens).unwrap(),
    ];
    corpus.extend(sample_transmgr().iter().map(|t| t.encode().unwrap()));

    // A client's first three messages and a request, framed in 512-byte packets.
    let writer = PacketWriter::new(512, 0).unwrap();
    let mut wire = Vec::new();
    for (ty, payload) in [
        (PacketType::PreLogin, &corpus[0]),
        (PacketType::Login7, &corpus[2]),
        (PacketType::SqlBatch, &corpus[3]),
        (PacketType::Rpc, &corpus[4]),
    ] {
        writer.write_message(ty, PacketStatus::RESET_CONNECTION, payload, &mut wire);
    }
    writer.write_message(PacketType::Attention, PacketStatus::NONE, &[], &mut wire);
    corpus.push(wire);
    corpus
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/// One edit of a valid encoding. Positions are [`Index`]es, resolved against the current length.
#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(Index, u8),
    SetByte(Index, u8),
    Insert(Index, Vec<u8>),
    Delete(Index, usize),
    Truncate(Index),
    /// Overwrites two bytes (a USHORT length or count) with a boundary value.
    Word(Index, u16),
    /// Overwrites four bytes (a DWORD length or offset) with a boundary value.
    Dword(Index, u32),
    /// Overwrites eight bytes (a PLP total length) with a boundary value.
    Qword(Index, u64),
    /// Sets a packet header's big-endian length (bytes 2..4 of a packet) to `len`.
    PacketLength(u16),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let word = prop_oneof![
        Just(0u16),
        Just(1),
        Just(7),
        Just(8),
        Just(0x7FFF),
        Just(0x8000),
        Just(0xFFFE),
        Just(0xFFFF),
        any::<u16>()
    ];
    let dword = prop_oneof![
        Just(0u32),
        Just(1),
        Just(0x7FFF_FFFF),
        Just(0x8000_0000),
        Just(u32::MAX - 1),
        Just(u32::MAX),
        any::<u32>()
    ];
    let qword = prop_oneof![Just(u64::MAX), Just(u64::MAX - 1), Just(u64::MAX / 2), any::<u64>()];
    prop_oneof![
        3 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::SetByte(i, b)),
        1 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => (any::<Index>(), 1usize..32).prop_map(|(i, n)| Mutation::Delete(i, n)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        2 => (any::<Index>(), word.clone()).prop_map(|(i, w)| Mutation::Word(i, w)),
        2 => (any::<Index>(), dword).prop_map(|(i, d)| Mutation::Dword(i, d)),
        1 => (any::<Index>(), qword).prop_map(|(i, q)| Mutation::Qword(i, q)),
        1 => word.prop_map(Mutation::PacketLength),
    ]
}

fn overwrite(data: &mut [u8], at: &Index, bytes: &[u8]) {
    if data.len() >= bytes.len() {
        let at = at.index(data.len() - bytes.len() + 1);
        data[at..at + bytes.len()].copy_from_slice(bytes);
    }
}

fn apply(data: &mut Vec<u8>, m: &Mutation) {
    let len = data.len();
    match m {
        Mutation::FlipBit(i, bit) if len > 0 => data[i.index(len)] ^= 1 << bit,
        Mutation::SetByte(i, b) if len > 0 => data[i.index(len)] = *b,
        Mutation::Insert(i, bytes) => {
            let at = i.index(len + 1);
            data.splice(at..at, bytes.iter().copied());
        }
        Mutation::Delete(i, n) if len > 0 => {
            let at = i.index(len);
            data.drain(at..(at + n).min(len));
        }
        Mutation::Truncate(i) => data.truncate(i.index(len + 1)),
        Mutation::Word(i, w) => overwrite(data, i, &w.to_le_bytes()),
        Mutation::Dword(i, d) => overwrite(data, i, &d.to_le_bytes()),
        Mutation::Qword(i, q) => overwrite(data, i, &q.to_le_bytes()),
        Mutation::PacketLength(l) if len >= 4 => data[2..4].copy_from_slice(&l.to_be_bytes()),
        _ => {}
    }
}

/// A valid encoding from the corpus with one to six mutations applied.
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    let corpus = corpus();
    (any::<Index>(), prop::collection::vec(mutation(), 1..7)).prop_map(move |(pick, edits)| {
        let mut data = pick.get(&corpus).clone();
        for m in &edits {
            apply(&mut data, m);
        }
        data
    })
}

// ---------------------------------------------------------------------------------------------
// The decoders under test.

fn check_request(what: &str, data: &[u8], f: impl FnOnce() -> bool) {
    let used = measure(f);
    assert!(
        used <= request_bound(data.len()),
        "{what} allocated {used} bytes for {} input bytes",
        data.len()
    );
}

/// Runs every payload decoder on `data`, checking each one's allocation.
fn decode_all(data: &[u8]) {
    check_request("PacketHeader::decode", data, || PacketHeader::decode(data).is_ok());
    check_request("Prelogin::decode", data, || Prelogin::decode(data).is_ok());
    check_request("Login7::decode", data, || Login7::decode(data).is_ok());
    check_request("SqlBatch::decode", data, || SqlBatch::decode(data).is_ok());
    check_request("RpcRequest::decode", data, || RpcRequest::decode(data).is_ok());
    check_request("TransMgrRequest::decode", data, || TransMgrRequest::decode(data).is_ok());
    let used = measure(|| decode_tokens(data));
    assert!(
        used <= token_bound(data.len()),
        "decode_tokens allocated {used} bytes for {} input bytes",
        data.len()
    );
    // The streaming reader must stop at the first error and yield nothing after it.
    let mut reader = TokenReader::new(data);
    let mut steps = 0;
    while let Some(token) = reader.next() {
        steps += 1;
        assert!(steps <= data.len(), "TokenReader yields more tokens than input bytes");
        if token.is_err() {
            assert!(reader.next().is_none(), "TokenReader yields after an error");
            break;
        }
    }
}

/// Feeds `data` through a [`MessageReader`] `chunk` bytes at a time and decodes each message
/// it yields with the decoder for its type. Checks the reader's buffering bound and that an
/// error poisons it.
fn feed(data: &[u8], chunk: usize, packet_size: usize, max_message: usize) {
    let mut reader = MessageReader::with_limits(packet_size, max_message).unwrap();
    for part in data.chunks(chunk.max(1)) {
        reader.push(part);
        loop {
            match reader.next_message() {
                Ok(Some(m)) => {
                    assert!(m.payload.len() <= max_message);
                    decode_all(&m.payload);
                }
                Ok(None) => {
                    // Unconsumed bytes are less than one packet, plus the message so far.
                    assert!(reader.buffered() < packet_size + max_message + part.len());
                    break;
                }
                Err(err) => {
                    reader.push(&[4, 1, 0, 8, 0, 0, 1, 0]);
                    assert_eq!(reader.next_message(), Err(err), "an error poisons the reader");
                    return;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The properties.

fn config(cases: u32) -> ProptestConfig {
    // A failure is shrunk and its seed saved beside this file, to be replayed first next time.
    let persistence = FileFailurePersistence::WithSource("proptest-regressions");
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(persistence)),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(20_000))]

    #[test]
    fn arbitrary_bytes_never_panic_nor_overallocate(
        data in prop::collection::vec(any::<u8>(), 0..600),
    ) {
        decode_all(&data);
    }

    #[test]
    fn mutated_encodings_never_panic_nor_overallocate(data in mutated()) {
        decode_all(&data);
    }
}

proptest! {
    #![proptest_config(config(5_000))]

    #[test]
    fn message_reader_survives_any_stream_in_any_chunks(
        data in prop_oneof![mutated(), prop::collection::vec(any::<u8>(), 0..600)],
        chunk in 1usize..700,
        packet_size in 512usize..=32767,
        max_message in 0usize..8192,
    ) {
        feed(&data, chunk, packet_size, max_message);
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-picked hostile inputs that the generators reach only by luck.

#[test]
fn corpus_is_valid() {
    let corpus = corpus();
    Prelogin::decode(&corpus[0]).unwrap();
    Login7::decode(&corpus[1]).unwrap();
    Login7::decode(&corpus[2]).unwrap();
    SqlBatch::decode(&corpus[3]).unwrap();
    RpcRequest::decode(&corpus[4]).unwrap();
    decode_tokens(&corpus[5]).unwrap();
    for transmgr in &corpus[6..corpus.len() - 1] {
        TransMgrRequest::decode(transmgr).unwrap();
    }
    let mut reader = MessageReader::new();
    reader.push(corpus.last().unwrap());
    let mut types = Vec::new();
    while let Some(m) = reader.next_message().unwrap() {
        types.push(m.ty);
    }
    assert_eq!(types.len(), 5, "{types:?}");
}

#[test]
fn allocation_measurement_sees_what_a_call_allocates() {
    assert!(measure(|| vec![0u8; 1 << 20]) >= 1 << 20);
    // Growing by doubling briefly holds the old and the new block.
    let grown = measure(|| (0..100_000u32).collect::<Vec<_>>());
    assert!(grown >= 400_000, "{grown}");
    assert_eq!(measure(|| 1 + 1), 0);
}

#[test]
fn huge_length_fields_are_errors_not_allocations() {
    let headers = AllHeaders::with_transaction(0);
    let mut batch_prefix = Vec::new();
    let batch = SqlBatch { headers: headers.clone(), text: String::new() };
    batch_prefix.extend(batch.encode().unwrap());

    let mut inputs: Vec<(&str, Vec<u8>)> = Vec::new();
    // LOGIN7 claiming 4 GiB.
    inputs.push(("LOGIN7 Length", [u32::MAX.to_le_bytes().to_vec(), vec![0; 90]].concat()));
    // ALL_HEADERS claiming 4 GiB.
    inputs.push(("ALL_HEADERS", u32::MAX.to_le_bytes().to_vec()));
    // An RPC parameter of NVARCHAR(MAX) whose PLP total length is 2^63 and whose one chunk
    // claims 4 GiB.
    let mut rpc = batch_prefix.clone();
    rpc.extend([0xFF, 0xFF, 10, 0, 0, 0]); // sp_executesql, no options
    rpc.extend([0, 0]); // unnamed parameter, no status
    rpc.extend([0xE7, 0xFF, 0xFF, 9, 4, 0xD0, 0, 0x34]); // NVARCHAR(MAX)
    let mut unknown = rpc.clone();
    rpc.extend((1u64 << 63).to_le_bytes());
    inputs.push(("RPC PLP total", rpc));
    unknown.extend((u64::MAX - 1).to_le_bytes());
    unknown.extend(u32::MAX.to_le_bytes());
    inputs.push(("RPC PLP chunk", unknown));
    // An RPC NTEXT parameter claiming 2 GiB.
    let mut ntext = batch_prefix.clone();
    ntext.extend([0xFF, 0xFF, 10, 0, 0, 0, 0, 0]);
    ntext.extend([0x63, 0xFF, 0xFF, 0xFF, 0x7F, 9, 4, 0xD0, 0, 0x34]);
    ntext.extend(0x7FFF_FFFFu32.to_le_bytes());
    inputs.push(("RPC NTEXT", ntext));
    // COLMETADATA announcing 65534 columns, then nothing.
    inputs.push(("COLMETADATA", vec![0x81, 0xFE, 0xFF]));
    // ORDER and ERROR claiming 65535 bytes.
    inputs.push(("ORDER", vec![0xA9, 0xFF, 0xFF]));
    inputs.push(("ERROR", vec![0xAA, 0xFF, 0xFF, 0, 0]));

    for (what, data) in inputs {
        let used = measure(|| {
            let r = (
                Login7::decode(&data),
                SqlBatch::decode(&data),
                RpcRequest::decode(&data),
                decode_tokens(&data),
            );
            assert!(r.0.is_err() && r.2.is_err() && r.3.is_err(), "{what}: {r:?}");
        });
        assert!(used < 64 * 1024, "{what}: {used} bytes allocated for {} bytes", data.len());
    }
}

#[test]
fn packet_reader_rejects_oversized_and_undersized_packets() {
    // A header claiming 65535 bytes, more than any packet may have.
    let mut reader = MessageReader::new();
    reader.push(&[0x12, 0x01, 0xFF, 0xFF, 0, 0, 1, 0]);
    assert_eq!(
        reader.next_message(),
        Err(TdsError::PacketTooLarge { len: 65535, max: packet::MAX_PACKET_SIZE })
    );
    // A header whose length does not even cover itself.
    let mut reader = MessageReader::new();
    reader.push(&[0x12, 0x01, 0x00, 0x04, 0, 0, 1, 0]);
    assert_eq!(reader.next_message(), Err(TdsError::PacketTooSmall { len: 4 }));
    // A message of many small packets, past the message limit: refused on the packet that
    // crosses it, with no more than the limit buffered.
    let mut reader = MessageReader::with_limits(512, 10_000).unwrap();
    let packet = [&[0x01, 0x00, 0x02, 0x00, 0, 0, 1, 0][..], &[0u8; 504]].concat();
    let mut result = Ok(None);
    for _ in 0..100 {
        reader.push(&packet);
        result = reader.next_message();
        assert!(reader.buffered() <= 10_000 + packet.len());
        if result.is_err() {
            break;
        }
    }
    assert_eq!(result, Err(TdsError::MessageTooLarge { max: 10_000 }));
}
