//! The key encoding: its byte order matches `compare` for each type and for tuples, and it
//! applies the collation and scales.

use super::*;

#[test]
fn key_order_matches_compare_for_each_type() {
    let mut rng = SplitMix64::new(7);
    for ty in all_types() {
        let types = [ty];
        let values: Vec<Value> = (0..250).map(|_| value_or_null(&mut rng, ty)).collect();
        let keys: Vec<Vec<u8>> =
            values.iter().map(|v| key(&types, std::slice::from_ref(v))).collect();
        for i in 0..values.len() {
            for j in 0..values.len() {
                let want = cmp_tuples(&values[i..=i], &values[j..=j]);
                assert_eq!(keys[i].cmp(&keys[j]), want, "{ty}: {:?} vs {:?}", values[i], values[j]);
            }
        }
    }
}

#[test]
fn key_order_matches_compare_for_tuples() {
    let mut rng = SplitMix64::new(8);
    let all = all_types();
    let mut pairs = 0;
    for _ in 0..60 {
        let n = 1 + rng.below(4) as usize;
        let types: Vec<SqlType> = (0..n).map(|_| pick(&mut rng, &all)).collect();
        let tuples: Vec<Vec<Value>> = (0..80)
            .map(|_| types.iter().map(|ty| value_or_null(&mut rng, *ty)).collect())
            .collect();
        let keys: Vec<Vec<u8>> = tuples.iter().map(|t| key(&types, t)).collect();
        for i in 0..tuples.len() {
            for j in 0..tuples.len() {
                let want = cmp_tuples(&tuples[i], &tuples[j]);
                assert_eq!(
                    keys[i].cmp(&keys[j]),
                    want,
                    "{types:?}: {:?} vs {:?}",
                    tuples[i],
                    tuples[j]
                );
                pairs += 1;
            }
        }
    }
    assert!(pairs > 100_000);
}

#[test]
fn key_applies_the_collation_and_scales() {
    let vc = [SqlType::VarChar(Len::N(10))];
    assert_eq!(key(&vc, &[Value::Str("abc".into())]), key(&vc, &[Value::Str("ABC ".into())]));
    assert_ne!(key(&vc, &[Value::Str("abc".into())]), key(&vc, &[Value::Str(" abc".into())]));
    assert!(key(&vc, &[Value::Str("ab".into())]) < key(&vc, &[Value::Str("ab\0".into())]));
    assert!(key(&vc, &[Value::Null]) < key(&vc, &[Value::Str(String::new())]));
    let two = [SqlType::VarChar(Len::N(10)), SqlType::Int];
    // The terminator keeps the next column's bytes away from the string's.
    assert!(
        key(&two, &[Value::Str("a".into()), Value::Int(i32::MAX)])
            < key(&two, &[Value::Str("a\u{1}".into()), Value::Int(i32::MIN)])
    );
    let d = [SqlType::Decimal { precision: 10, scale: 2 }];
    assert_eq!(key(&d, &[Value::Decimal(dec("1.5"))]), key(&d, &[Value::Decimal(dec("1.50"))]));
    assert!(key(&d, &[Value::Decimal(dec("-0.01"))]) < key(&d, &[Value::Decimal(dec("0"))]));
    let f = [SqlType::Float];
    assert_eq!(key(&f, &[Value::Float(-0.0)]), key(&f, &[Value::Float(0.0)]));
    assert!(key(&f, &[Value::Float(-1e-300)]) < key(&f, &[Value::Float(0.0)]));
    let mut out = Vec::new();
    assert!(matches!(
        encode_key(
            &[SqlType::Decimal { precision: 10, scale: 2 }],
            &[Value::Decimal(dec("0.001"))],
            &mut out
        ),
        Err(RowError::InvalidValue { column: 0, .. })
    ));
    assert!(matches!(
        encode_key(&[SqlType::Int], &[Value::BigInt(1)], &mut out),
        Err(RowError::TypeMismatch { .. })
    ));
    assert!(out.is_empty());
}
