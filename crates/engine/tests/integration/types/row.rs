//! The row format against `docs/format/row.md`: round trips of every type, padding, refusals
//! that leave the output unchanged, spilling off-row, corruption found and never a panic,
//! `RowDecoder` against a whole decode, and the (ignored) speed check.

use super::*;

/// The columns and values of both worked examples of `docs/format/row.md`.
fn worked_example() -> ([SqlType; 4], [Value; 4]) {
    let columns = [
        SqlType::Int,
        SqlType::VarChar(Len::N(10)),
        SqlType::Date,
        SqlType::Decimal { precision: 10, scale: 2 },
    ];
    let values =
        [Value::Int(42), Value::Str("hi".into()), Value::Null, Value::Decimal(dec("12.34"))];
    (columns, values)
}

#[test]
fn row_worked_example_matches_the_document() {
    let doc = include_str!("../../../../../docs/format/row.md");
    let expected = hex_block(doc, "## Worked example: a row");
    let (columns, values) = worked_example();
    assert_eq!(encode(&columns, &values), expected);
    assert_eq!(decode_row(&columns, &expected).unwrap(), values);
    assert_eq!(min_row_len(&columns), 23);
}

#[test]
fn key_worked_example_matches_the_document() {
    let doc = include_str!("../../../../../docs/format/row.md");
    let expected = hex_block(doc, "## Worked example: a key");
    let (types, values) = worked_example();
    assert_eq!(key(&types, &values), expected);
}

#[test]
fn row_round_trips_every_type() {
    let mut rng = SplitMix64::new(1);
    let types = all_types();
    for round in 0..3000 {
        let n = 1 + rng.below(12) as usize;
        let columns: Vec<SqlType> = (0..n).map(|_| pick(&mut rng, &types)).collect();
        let values: Vec<Value> = columns.iter().map(|ty| value_or_null(&mut rng, *ty)).collect();
        let row = encode(&columns, &values);
        assert_eq!(decode_row(&columns, &row).unwrap(), values, "round {round}: {columns:?}");
        for (i, v) in values.iter().enumerate() {
            assert_eq!(&decode_column(&columns, &row, i).unwrap(), v, "round {round} column {i}");
        }
        assert_eq!(off_row_pointers(&columns, &row).unwrap(), Vec::<Vec<u8>>::new());
        assert_eq!(decode_column(&columns, &row, n), Err(RowError::NoSuchColumn(n)));
    }
}

#[test]
fn row_pads_fixed_strings_and_converts_exact_scales() {
    let columns = [
        SqlType::Char(5),
        SqlType::NChar(3),
        SqlType::Binary(3),
        SqlType::Decimal { precision: 10, scale: 2 },
        SqlType::Time(3),
    ];
    let values = [
        Value::Str("ab".into()),
        Value::NStr("é".into()),
        Value::Binary(vec![1]),
        Value::Decimal(dec("12.3")),
        Value::Time(Time::parse("01:02:03.45").unwrap()),
    ];
    let row = encode(&columns, &values);
    assert_eq!(
        decode_row(&columns, &row).unwrap(),
        [
            Value::Str("ab   ".into()),
            Value::NStr("é  ".into()),
            Value::Binary(vec![1, 0, 0]),
            Value::Decimal(dec("12.30")),
            Value::Time(Time::parse("01:02:03.450").unwrap()),
        ]
    );
    // NCHAR pads to UTF-16 code units: U+1F600 is two of them.
    let nchar = [SqlType::NChar(3)];
    let row = encode(&nchar, &[Value::NStr("😀".into())]);
    assert_eq!(decode_row(&nchar, &row).unwrap(), [Value::NStr("😀 ".into())]);
}

#[test]
fn row_rejects_values_it_cannot_hold_and_leaves_out_unchanged() {
    let cases: Vec<(SqlType, Value, RowError)> = vec![
        (
            SqlType::Int,
            Value::Str("1".into()),
            RowError::TypeMismatch { column: 1, expected: SqlType::Int, found: "varchar" },
        ),
        (
            SqlType::VarChar(Len::N(5)),
            Value::NStr("x".into()),
            RowError::TypeMismatch {
                column: 1,
                expected: SqlType::VarChar(Len::N(5)),
                found: "nvarchar",
            },
        ),
        (
            SqlType::Char(2),
            Value::Str("abc".into()),
            RowError::ValueTooLong { column: 1, len: 3, max: 2 },
        ),
        (
            SqlType::VarChar(Len::N(2)),
            Value::Str("abc".into()),
            RowError::ValueTooLong { column: 1, len: 3, max: 2 },
        ),
        (
            SqlType::VarChar(Len::N(2)),
            Value::Str("é€".into()),
            RowError::ValueTooLong { column: 1, len: 5, max: 2 },
        ),
        (
            SqlType::NChar(2),
            Value::NStr("abc".into()),
            RowError::ValueTooLong { column: 1, len: 3, max: 2 },
        ),
        (
            SqlType::Binary(1),
            Value::Binary(vec![1, 2]),
            RowError::ValueTooLong { column: 1, len: 2, max: 1 },
        ),
    ];
    let invalid = [
        (SqlType::Decimal { precision: 5, scale: 2 }, Value::Decimal(dec("1234.5"))),
        (SqlType::Decimal { precision: 5, scale: 2 }, Value::Decimal(dec("1.005"))),
        (SqlType::Time(0), Value::Time(Time::parse("12:00:00.5").unwrap())),
        (SqlType::DateTime2(2), Value::DateTime2(dt2("2024-01-31 12:00:00.001"))),
        (SqlType::Float, Value::Float(f64::NAN)),
        (SqlType::Float, Value::Float(f64::INFINITY)),
        (SqlType::Real, Value::Real(f32::NEG_INFINITY)),
    ];
    let mut all = cases;
    for (ty, v) in invalid {
        all.push((ty, v, RowError::InvalidValue { column: 1, reason: "" }));
    }
    for (ty, v, want) in all {
        let columns = [SqlType::Int, ty, SqlType::VarChar(Len::N(10))];
        let values = [Value::Int(1), v.clone(), Value::Str("x".into())];
        let mut out = vec![9, 9, 9];
        let got = encode_row(&columns, &values, &mut out).unwrap_err();
        match (&got, &want) {
            (RowError::InvalidValue { column: 1, .. }, RowError::InvalidValue { .. }) => {}
            _ => assert_eq!(got, want, "{ty} {v:?}"),
        }
        assert_eq!(out, [9, 9, 9], "{ty} {v:?}: out unchanged");
        // Keys check less (lengths are the row's business) but never leave a partial key.
        let mut out = vec![7];
        if let Err(e) = encode_key(&columns, &values, &mut out) {
            assert_eq!(out, [7]);
            assert!(!e.to_string().is_empty());
        }
    }
    let mut out = Vec::new();
    assert_eq!(
        encode_row(&[SqlType::Int], &[], &mut out),
        Err(RowError::ColumnCount { expected: 1, found: 0 })
    );
    assert_eq!(
        encode_key(&[SqlType::Int], &[], &mut out),
        Err(RowError::ColumnCount { expected: 1, found: 0 })
    );
    let many = vec![SqlType::Bit; MAX_COLUMNS + 1];
    let nulls = vec![Value::Null; MAX_COLUMNS + 1];
    assert_eq!(encode_row(&many, &nulls, &mut out), Err(RowError::TooManyColumns(MAX_COLUMNS + 1)));
    assert!(encode_row(&many[1..], &nulls[1..], &mut out).is_ok());
}

#[test]
fn row_written_with_fewer_columns_reads_trailing_nulls() {
    let old = [SqlType::Int, SqlType::VarChar(Len::N(10))];
    let new =
        [SqlType::Int, SqlType::VarChar(Len::N(10)), SqlType::Date, SqlType::NVarChar(Len::Max)];
    let row = encode(&old, &[Value::Int(5), Value::Str("x".into())]);
    assert_eq!(
        decode_row(&new, &row).unwrap(),
        [Value::Int(5), Value::Str("x".into()), Value::Null, Value::Null]
    );
    assert_eq!(decode_column(&new, &row, 3), Ok(Value::Null));
    assert_eq!(decode_column(&new, &row, 1), Ok(Value::Str("x".into())));
    // More columns than the schema is corruption.
    assert!(matches!(decode_row(&old[..1], &row), Err(RowError::Corrupt(_))));
}

/// A spill hook that keeps values in memory; pointers are 8-byte indexes.
struct Overflow {
    chains: Vec<Vec<u8>>,
}

impl Overflow {
    fn spill(&mut self, bytes: &[u8]) -> Result<Vec<u8>, RowError> {
        self.chains.push(bytes.to_vec());
        Ok((self.chains.len() as u64 - 1).to_le_bytes().to_vec())
    }

    fn fetch(&self, pointer: &[u8]) -> Result<Vec<u8>, RowError> {
        let i = u64::from_le_bytes(
            pointer.try_into().map_err(|_| RowError::Storage("bad pointer".into()))?,
        );
        self.chains
            .get(i as usize)
            .cloned()
            .ok_or_else(|| RowError::Storage("no such chain".into()))
    }
}

#[test]
fn row_spills_largest_values_first_and_reads_them_back() {
    let columns = [
        SqlType::Int,
        SqlType::VarChar(Len::Max),
        SqlType::NVarChar(Len::Max),
        SqlType::VarBinary(Len::Max),
        SqlType::VarChar(Len::N(200)),
        SqlType::NChar(1500),
    ];
    let values = [
        Value::Int(7),
        Value::Str("a".repeat(2000)),
        Value::NStr("é".repeat(1500)),
        Value::Binary(vec![0xab; 1400]),
        Value::Str("b".repeat(150)),
        Value::NStr("c".into()),
    ];
    let mut store = Overflow { chains: Vec::new() };
    let mut out = Vec::new();
    encode_row_with(&columns, &values, &mut out, &mut |b| store.spill(b)).unwrap();
    assert!(out.len() <= MAX_INLINE_ROW);
    // Sizes: 3000 (NVARCHAR, UTF-8 é), 2000, 1500 (NCHAR padded), 1400, 150, plus 20 bytes of
    // header, bitmap, INT and offsets. With the first two replaced by pointers of the largest
    // size the plan reaches 20 + 1500 + 1400 + 150 + 2 × 64 = 3198 bytes, which fits.
    assert_eq!(store.chains.len(), 2);
    assert_eq!(store.chains[0], "é".repeat(1500).as_bytes());
    assert_eq!(store.chains[1], "a".repeat(2000).as_bytes());
    let pointers = off_row_pointers(&columns, &out).unwrap();
    assert_eq!(pointers, [1u64.to_le_bytes().to_vec(), 0u64.to_le_bytes().to_vec()]);
    let mut expected = values.to_vec();
    expected[5] = Value::NStr(format!("c{}", " ".repeat(1499)));
    assert_eq!(decode_row_with(&columns, &out, &mut |p| store.fetch(p)).unwrap(), expected);
    assert_eq!(decode_row(&columns, &out), Err(RowError::OffRow { column: 1 }));
    assert_eq!(decode_column(&columns, &out, 2), Err(RowError::OffRow { column: 2 }));
    assert_eq!(decode_column(&columns, &out, 3).unwrap(), values[3]);
    assert_eq!(decode_column_with(&columns, &out, 1, &mut |p| store.fetch(p)).unwrap(), values[1]);
    // A fetch hook's error comes back as is.
    let failing = decode_row_with(&columns, &out, &mut |_| Err(RowError::Storage("gone".into())));
    assert_eq!(failing, Err(RowError::Storage("gone".into())));

    // NCHAR is spilled padded, and decoded back padded.
    let columns = [SqlType::NChar(3000), SqlType::VarChar(Len::N(3000))];
    let values = [Value::NStr("x".into()), Value::Str("y".repeat(3000))];
    let mut store = Overflow { chains: Vec::new() };
    let mut out = Vec::new();
    encode_row_with(&columns, &values, &mut out, &mut |b| store.spill(b)).unwrap();
    assert_eq!(store.chains.len(), 1, "both are 3000 bytes; the first column goes first");
    assert_eq!(store.chains[0].len(), 3000);
    assert_eq!(
        decode_row_with(&columns, &out, &mut |p| store.fetch(p)).unwrap()[0],
        Value::NStr(format!("x{}", " ".repeat(2999)))
    );
}

#[test]
fn row_too_large_is_refused_before_anything_is_spilled() {
    let mut calls = 0;
    let mut spill = |_: &[u8]| -> Result<Vec<u8>, RowError> {
        calls += 1;
        Ok(vec![1; 8])
    };
    // Seventy 60-byte values: too large, and each is too small to be worth a pointer.
    let columns = vec![SqlType::VarChar(Len::N(60)); 70];
    let values = vec![Value::Str("x".repeat(60)); 70];
    let mut out = vec![1, 2];
    assert!(matches!(
        encode_row_with(&columns, &values, &mut out, &mut spill),
        Err(RowError::RowTooLarge { .. })
    ));
    assert_eq!(out, [1, 2]);
    // A fixed part that cannot fit.
    let columns = [SqlType::Char(4000)];
    assert!(matches!(
        encode_row_with(&columns, &[Value::Null], &mut out, &mut spill),
        Err(RowError::RowTooLarge { len: 4006, max: MAX_INLINE_ROW })
    ));
    // Without a hook a large row is refused.
    let columns = [SqlType::VarChar(Len::Max)];
    let big = [Value::Str("z".repeat(4000))];
    assert!(matches!(
        encode_row(&columns, &big, &mut out),
        Err(RowError::RowTooLarge { len: 4008, .. })
    ));
    assert_eq!(calls, 0);
    // A hook returning an invalid pointer.
    let mut bad_pointer =
        |_: &[u8]| -> Result<Vec<u8>, RowError> { Ok(vec![0; MAX_OFF_ROW_POINTER + 1]) };
    assert_eq!(
        encode_row_with(&columns, &big, &mut out, &mut bad_pointer),
        Err(RowError::PointerLength { column: 0, len: MAX_OFF_ROW_POINTER + 1 })
    );
    assert_eq!(out, [1, 2]);
    // Exactly MAX_INLINE_ROW bytes is allowed.
    let fits = [Value::Str("z".repeat(MAX_INLINE_ROW - 8))];
    encode_row(&columns, &fits, &mut out).unwrap();
    assert_eq!(out.len(), 2 + MAX_INLINE_ROW);
}

#[test]
fn row_decode_detects_corruption() {
    let columns = [SqlType::Int, SqlType::VarChar(Len::N(10)), SqlType::Bit, SqlType::Date];
    let good =
        encode(&columns, &[Value::Int(1), Value::Str("abc".into()), Value::Bit(true), Value::Null]);
    let corrupt = |mutate: &dyn Fn(&mut Vec<u8>)| {
        let mut row = good.clone();
        mutate(&mut row);
        matches!(decode_row(&columns, &row), Err(RowError::Corrupt(_)))
    };
    assert!(corrupt(&|r| r[0] = 0x02), "unknown status bit");
    assert!(corrupt(&|r| r[0] = 0x01), "off-row status without a flagged column");
    assert!(corrupt(&|r| r[1] = 5), "more columns than the schema");
    assert!(corrupt(&|r| r[3] += 1), "var offset");
    assert!(corrupt(&|r| r[5] |= 0x10), "bitmap bit past the last column");
    assert!(corrupt(&|r| r[10] = 2), "bit neither 0 nor 1");
    assert!(corrupt(&|r| r[11] = 1), "NULL with non-zero bytes");
    assert!(corrupt(&|r| r.push(0)), "trailing byte");
    assert!(
        corrupt(&|r| {
            r.pop();
        }),
        "truncated"
    );
    assert!(corrupt(&|r| *r.last_mut().unwrap() = 0xff), "not UTF-8");
    // The only end offset is bytes 14..16.
    assert!(corrupt(&|r| r[15] |= 0x80), "off-row flag without status");
    assert!(corrupt(&|r| r[5] |= 0x02), "NULL varchar with data");
    assert!(decode_row(&columns, &good).is_ok());
}

#[test]
fn row_decode_never_panics_on_random_bytes() {
    let mut rng = SplitMix64::new(99);
    let types = all_types();
    let store = Overflow { chains: vec![vec![b'x'; 100]; 4] };
    let mut decoded = 0;
    for round in 0..20_000u64 {
        let n = 1 + rng.below(8) as usize;
        let columns: Vec<SqlType> = (0..n).map(|_| pick(&mut rng, &types)).collect();
        let mut row = match rng.below(3) {
            // Pure noise, sometimes with a plausible header.
            0 => {
                let len = rng.below(80) as usize;
                let mut r: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                if r.len() >= 5 && rng.chance(1, 2) {
                    r[0] = 0;
                    r[1..3].copy_from_slice(&(n as u16).to_le_bytes());
                    r[3..5].copy_from_slice(
                        &(min_row_len(&columns) as u16
                            - 2 * columns.iter().filter(|t| !t.is_fixed_len()).count() as u16)
                            .to_le_bytes(),
                    );
                }
                r
            }
            // A valid row, some with spilled values, then damaged.
            _ => {
                let values: Vec<Value> =
                    columns.iter().map(|ty| value_or_null(&mut rng, *ty)).collect();
                let mut r = encode(&columns, &values);
                if rng.chance(1, 4) {
                    // Fake an off-row column: flag a variable column's end offset.
                    let var = columns.iter().filter(|t| !t.is_fixed_len()).count();
                    if var > 0 {
                        let slot = usize::from(u16::from_le_bytes([r[3], r[4]]))
                            + 2 * rng.below(var as u64) as usize;
                        r[slot + 1] |= 0x80;
                        r[0] |= 1;
                    }
                }
                for _ in 0..rng.below(4) {
                    let at = rng.below(r.len() as u64) as usize;
                    r[at] = rng.next_u64() as u8;
                }
                r
            }
        };
        if rng.chance(1, 3) {
            row.truncate(rng.below(row.len() as u64 + 1) as usize);
        }
        // Any outcome but a panic is fine; the results must agree with each other.
        let all = decode_row(&columns, &row);
        let with = decode_row_with(&columns, &row, &mut |p| {
            store.fetch(p).map(|mut v| {
                v.truncate(3);
                v
            })
        });
        let pointers = off_row_pointers(&columns, &row);
        for i in 0..=n {
            let one = decode_column(&columns, &row, i);
            // What a full decode accepts, a single-column decode reads the same.
            if let Ok(values) = &all {
                match values.get(i) {
                    Some(v) => assert_eq!(one.as_ref(), Ok(v), "round {round} column {i}"),
                    None => assert_eq!(one, Err(RowError::NoSuchColumn(n))),
                }
            }
            let _ = decode_column_with(&columns, &row, i, &mut |p| store.fetch(p));
        }
        if all.is_ok() {
            decoded += 1;
            assert_eq!(pointers, Ok(vec![]), "round {round}");
            assert_eq!(with, all, "round {round}");
        }
        // A decoder of every column accepts exactly what a whole decode accepts; one of some
        // columns at least that, and reads the same values.
        let fetch = &mut |p: &[u8]| store.fetch(p);
        let every = RowDecoder::new(&columns, None).decode(&row, fetch);
        assert_eq!(every.ok(), decode_row_with(&columns, &row, fetch).ok(), "round {round}");
        let wanted: Vec<bool> = (0..n).map(|_| rng.chance(1, 2)).collect();
        let some = RowDecoder::new(&columns, Some(&wanted)).decode(&row, fetch);
        if let Ok(values) = decode_row_some_with(&columns, &row, &wanted, fetch) {
            assert_eq!(some, Ok(values), "round {round}");
        }
        // Into a vector holding other values, it accepts and reads the same.
        let mut reused: Vec<Value> = (0..n).map(|i| Value::Str(format!("{i}"))).collect();
        let into = RowDecoder::new(&columns, Some(&wanted)).decode_into(&row, fetch, &mut reused);
        assert_eq!(into.map(|()| reused), some, "round {round}");
    }
    assert!(decoded > 1000, "the damage left some rows valid: {decoded}");
}

#[test]
fn row_decoder_reads_the_wanted_columns_as_a_whole_decode_does() {
    let mut rng = SplitMix64::new(7);
    let types = all_types();
    let mut store = Overflow { chains: Vec::new() };
    for round in 0..3000 {
        let n = 1 + rng.below(16) as usize;
        let columns: Vec<SqlType> = (0..n).map(|_| pick(&mut rng, &types)).collect();
        let values: Vec<Value> = columns.iter().map(|ty| value_or_null(&mut rng, *ty)).collect();
        let mut row = Vec::new();
        encode_row_with(&columns, &values, &mut row, &mut |b| store.spill(b)).unwrap();
        let wanted: Vec<bool> = (0..n).map(|_| rng.chance(1, 2)).collect();
        let expected: Vec<Value> = values
            .iter()
            .zip(&wanted)
            .map(|(v, w)| if *w { v.clone() } else { Value::Null })
            .collect();
        let decoder = RowDecoder::new(&columns, Some(&wanted));
        let got = decoder.decode(&row, &mut |p| store.fetch(p)).unwrap();
        assert_eq!(got, expected, "round {round}: {columns:?}");
        assert!(got.capacity() > n, "room for the row locator");
        let all = RowDecoder::new(&columns, None).decode(&row, &mut |p| store.fetch(p)).unwrap();
        assert_eq!(all, values, "round {round}");
        // Decoded into a vector that holds another row (every column set, then as the
        // decoder left it) and a row locator after the columns: the same values, the
        // skipped columns NULL, the locator kept.
        let others: Vec<Value> = columns.iter().map(|ty| value_or_null(&mut rng, *ty)).collect();
        let mut other_row = Vec::new();
        encode_row_with(&columns, &others, &mut other_row, &mut |b| store.spill(b)).unwrap();
        let locator = Value::Binary(vec![round as u8; 3]);
        let mut reused = others.clone();
        reused.push(locator.clone());
        for bytes in [&row, &other_row, &row] {
            decoder.decode_into(bytes, &mut |p| store.fetch(p), &mut reused).unwrap();
        }
        assert_eq!(reused[..n], expected[..], "round {round}: {columns:?}");
        assert_eq!(reused[n], locator, "round {round}");
        // In two steps (a scan's filter columns, then the rest for the rows it keeps): the
        // first decoder's columns, then the second's put in beside them, are the same row.
        let first: Vec<bool> = wanted.iter().map(|&w| w && rng.chance(1, 2)).collect();
        let rest: Vec<bool> = wanted.iter().zip(&first).map(|(&w, &f)| w && !f).collect();
        let mut staged = others.clone();
        staged.push(locator.clone());
        RowDecoder::new(&columns, Some(&first))
            .decode_into(&row, &mut |p| store.fetch(p), &mut staged)
            .unwrap();
        let partial: Vec<Value> = values
            .iter()
            .zip(&first)
            .map(|(v, f)| if *f { v.clone() } else { Value::Null })
            .collect();
        assert_eq!(staged[..n], partial[..], "round {round}: {columns:?}");
        RowDecoder::new(&columns, Some(&rest))
            .decode_more_into(&row, &mut |p| store.fetch(p), &mut staged)
            .unwrap();
        assert_eq!(staged[..n], expected[..], "round {round}: {columns:?}");
        assert_eq!(staged[n], locator, "round {round}");
    }

    // A row written before two columns were added reads them as NULL.
    let old = [SqlType::Int, SqlType::VarChar(Len::N(10))];
    let new =
        [SqlType::Int, SqlType::VarChar(Len::N(10)), SqlType::Date, SqlType::NVarChar(Len::Max)];
    let row = encode(&old, &[Value::Int(5), Value::Str("x".into())]);
    let decoder = RowDecoder::new(&new, Some(&[false, true, true, true]));
    assert_eq!(
        decoder.decode(&row, &mut |_| Err(RowError::Storage("none".into()))).unwrap(),
        [Value::Null, Value::Str("x".into()), Value::Null, Value::Null]
    );
    // Into a vector reused from a row of the new shape, its locator kept.
    let mut reused = vec![
        Value::Int(1),
        Value::Str("long text".into()),
        Value::Null,
        Value::NStr("n".into()),
        Value::Binary(vec![9]),
    ];
    decoder.decode_into(&row, &mut |_| Err(RowError::Storage("none".into())), &mut reused).unwrap();
    assert_eq!(
        reused,
        [Value::Null, Value::Str("x".into()), Value::Null, Value::Null, Value::Binary(vec![9])]
    );
    // The second step of a two-step decode of such a row: its columns, the others kept.
    let mut staged = vec![Value::Int(5), Value::Null, Value::Null, Value::Null];
    RowDecoder::new(&new, Some(&[false, true, true, false]))
        .decode_more_into(&row, &mut |_| Err(RowError::Storage("none".into())), &mut staged)
        .unwrap();
    assert_eq!(staged, [Value::Int(5), Value::Str("x".into()), Value::Null, Value::Null]);

    // What it decodes is checked; a variable column it skips is not read.
    let columns =
        [SqlType::Int, SqlType::VarChar(Len::N(10)), SqlType::Bit, SqlType::VarChar(Len::N(10))];
    let good = encode(
        &columns,
        &[Value::Int(1), Value::Str("abc".into()), Value::Bit(true), Value::Str("de".into())],
    );
    let decode = |row: &[u8], wanted: &[bool]| {
        RowDecoder::new(&columns, Some(wanted))
            .decode(row, &mut |_| Err(RowError::Storage("none".into())))
    };
    let mut bad_text = good.clone();
    // The last column's data is the row's last two bytes.
    let last = bad_text.len() - 1;
    bad_text[last] = 0xff;
    assert!(matches!(decode(&bad_text, &[false, false, false, true]), Err(RowError::Corrupt(_))));
    assert_eq!(
        decode(&bad_text, &[true, true, false, false]).unwrap()[1],
        Value::Str("abc".into())
    );
    let mut bad_bit = good.clone();
    bad_bit[10] = 2;
    assert!(matches!(decode(&bad_bit, &[false, false, true, false]), Err(RowError::Corrupt(_))));
    let mut bad_status = good.clone();
    bad_status[0] = 0x01;
    assert!(matches!(decode(&bad_status, &[true, false, false, false]), Err(RowError::Corrupt(_))));
    let mut truncated = good;
    truncated.pop();
    assert!(matches!(decode(&truncated, &[true, false, false, false]), Err(RowError::Corrupt(_))));

    // A day number past 9999-12-31 (the row's last three bytes) is refused, also decoded
    // into a slot that holds the last row's date.
    let dates = [SqlType::Date];
    let good = encode(&dates, &[Value::Date(Date::from_ymd(2024, 2, 29).unwrap())]);
    let mut bad_date = good.clone();
    let last = bad_date.len();
    bad_date[last - 3..].fill(0xff);
    let decoder = RowDecoder::new(&dates, None);
    let none = &mut |_: &[u8]| Err(RowError::Storage("none".into()));
    let mut slot = vec![Value::Null];
    decoder.decode_into(&good, none, &mut slot).unwrap();
    assert_eq!(slot, [Value::Date(Date::from_ymd(2024, 2, 29).unwrap())]);
    assert!(matches!(decoder.decode_into(&bad_date, none, &mut slot), Err(RowError::Corrupt(_))));
    let mut fresh = Vec::new();
    assert!(matches!(decoder.decode_into(&bad_date, none, &mut fresh), Err(RowError::Corrupt(_))));
}

/// Run with
/// `cargo test --release -p walden-engine --test integration types:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn row_encode_and_decode_column_are_fast() {
    let columns = [SqlType::Int, SqlType::Int, SqlType::VarChar(Len::N(20))];
    let values = [Value::Int(12_345), Value::Int(-7), Value::Str("hello, walden".into())];
    let mut out = Vec::with_capacity(64);
    let n = 2_000_000u32;
    let start = Instant::now();
    for _ in 0..n {
        out.clear();
        encode_row(std::hint::black_box(&columns), std::hint::black_box(&values), &mut out)
            .unwrap();
        std::hint::black_box(&out);
    }
    let encode_ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    let start = Instant::now();
    let mut sum = 0i64;
    for _ in 0..n {
        if let Value::Int(x) =
            decode_column(std::hint::black_box(&columns), std::hint::black_box(&out), 1).unwrap()
        {
            sum += i64::from(x);
        }
    }
    let fixed_ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(
            decode_column(std::hint::black_box(&columns), std::hint::black_box(&out), 2).unwrap(),
        );
    }
    let var_ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    let start = Instant::now();
    let types = [SqlType::Int, SqlType::VarChar(Len::N(20))];
    let kv = [Value::Int(12_345), Value::Str("Hello, Walden".into())];
    for _ in 0..n {
        out.clear();
        encode_key(std::hint::black_box(&types), std::hint::black_box(&kv), &mut out).unwrap();
        std::hint::black_box(&out);
    }
    let key_ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    println!(
        "encode_row {encode_ns:.1} ns, decode_column(INT) {fixed_ns:.1} ns, \
         decode_column(VARCHAR) {var_ns:.1} ns, encode_key(INT, VARCHAR) {key_ns:.1} ns ({sum})"
    );
    assert!(encode_ns < 100.0 && fixed_ns < 100.0, "too slow");
}

#[test]
fn datetimeoffset_row_bytes_match_the_document() {
    let v = Value::DateTimeOffset(DateTimeOffset::parse("2024-03-01 08:30 +02:00").unwrap());
    let row = encode(&[SqlType::DateTimeOffset(0)], &[v]);
    let doc = include_str!("../../../../../docs/format/row.md");
    assert!(doc.contains("`68 5B 00` (06:30 UTC = 23,400 s) `81 46 0B` (day 738,945) `78 00`"));
    let field = [0x68, 0x5B, 0x00, 0x81, 0x46, 0x0B, 0x78, 0x00];
    assert!(row.windows(field.len()).any(|w| w == field), "{row:02X?}");
}

#[test]
fn sql_variant_rows_keep_the_base_type_and_match_the_document() {
    let columns = [SqlType::Int, SqlType::Variant];
    let doc = include_str!("../../../../../docs/format/row.md");
    assert!(doc.contains("An INT 42 is `38 00 00 00 2A 00 00 00`; N'ab' is `E7 02 00 00 61 62`"));
    for (value, stored) in [
        (Value::Int(42), vec![0x38, 0, 0, 0, 0x2A, 0, 0, 0]),
        (Value::NStr("ab".into()), vec![0xE7, 0x02, 0x00, 0x00, 0x61, 0x62]),
    ] {
        let row = encode(&columns, &[Value::Int(1), value.clone()]);
        assert!(row.windows(stored.len()).any(|w| w == stored), "{row:02X?}");
        assert_eq!(decode_row(&columns, &row).unwrap(), vec![Value::Int(1), value]);
    }
    for value in [
        Value::Decimal(dec("-12.50")),
        Value::DateTimeOffset(DateTimeOffset::parse("2024-03-01 08:30 +02:00").unwrap()),
        Value::Binary(vec![1, 2, 3]),
        Value::Str(String::new()),
        Value::Guid(guid("6F9619FF-8B86-D011-B42D-00C04FC964FF")),
        Value::Null,
    ] {
        let row = encode(&columns, &[Value::Int(1), value.clone()]);
        assert_eq!(decode_row(&columns, &row).unwrap(), vec![Value::Int(1), value]);
    }
    let too_long = Value::Str("x".repeat(8001));
    let mut out = Vec::new();
    assert!(encode_row(&columns, &[Value::Int(1), too_long], &mut out).is_err());
}
