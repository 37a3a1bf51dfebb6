//! Comparison by type precedence, and LIKE patterns.

use super::*;

#[test]
fn comparison_converts_by_precedence() {
    assert_eq!(compare(&Value::Int(1), &s("12")).unwrap(), Some(Ordering::Less));
    assert_eq!(compare(&s("12"), &Value::Int(1)).unwrap(), Some(Ordering::Greater));
    assert_eq!(compare(&s("9"), &s("12")).unwrap(), Some(Ordering::Greater));
    assert_eq!(number(compare(&Value::Int(1), &s("a")).map(|_| Value::Null)), 245);
    assert_eq!(compare(&s("abc"), &s("ABC  ")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&s("abc"), &ns("abd")).unwrap(), Some(Ordering::Less));
    assert_eq!(compare(&date("2024-01-01"), &s("2024-01-01")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&s("01/02/2024"), &date("2024-01-01")).unwrap(), Some(Ordering::Greater));
    assert_eq!(
        compare(&datetime("2024-01-01 10:00"), &date("2024-01-01")).unwrap(),
        Some(Ordering::Greater)
    );
    assert_eq!(
        compare(&datetime2("1900-01-01 10:00"), &time("10:00")).unwrap(),
        Some(Ordering::Equal)
    );
    assert_eq!(compare(&dec("1.5"), &s("1.50")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Int(2), &dec("1.99")).unwrap(), Some(Ordering::Greater));
    assert_eq!(compare(&Value::Float(0.5), &s("0.5")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Bit(true), &s("true")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Money(15_000), &dec("1.5")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::BigInt(5), &Value::BigInt(5)).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Binary(b"abc".to_vec()), &s("ABC")).unwrap(), Some(Ordering::Equal));
    let g = "6F9619FF-8B86-D011-B42D-00C04FC964FF";
    let guid = convert(s(g), SqlType::UniqueIdentifier, None).unwrap();
    assert_eq!(compare(&s(&g.to_lowercase()), &guid).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Null, &Value::Int(1)).unwrap(), None);
    assert_eq!(compare(&s("a"), &Value::Null).unwrap(), None);
    let e = compare(&Value::Int(1), &date("2024-01-01")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (206, "Operand type clash: int is incompatible with date")
    );
    assert_eq!(compare(&time("10:00"), &date("2024-01-01")).unwrap_err().number, 206);
    assert_eq!(compare(&Value::Int(1), &Value::Guid(Guid([0; 16]))).unwrap_err().number, 206);
}

#[test]
fn like_patterns() {
    let like2 = |v: &str, p: &str| like(&s(v), &s(p), None).unwrap().unwrap();
    assert!(like2("abc", "a%"));
    assert!(like2("abc", "A_C"));
    assert!(like2("abc", "%"));
    assert!(like2("", "%"));
    assert!(!like2("", "_"));
    assert!(like2("abc", "[a-c]bc"));
    assert!(like2("Bbc", "[a-c]bc"));
    assert!(!like2("xbc", "[^x]bc"));
    assert!(like2("ybc", "[^x]bc"));
    assert!(like2("cbc", "[abc]bc"));
    assert!(like2("a_c", "a[_]c"));
    assert!(!like2("abc", "a[_]c"));
    assert!(like2("a[b", "a[b"));
    assert!(like2("aaa", "%a%a%a%"));
    assert!(!like2("ab", "%a%a%"));
    assert!(like2("mississippi", "%iss%ppi"));
    assert!(like2("sly SPECIAL, even Requests.", "%special%requests%"));
    assert!(!like2("requests special", "%special%requests%"));
    assert!(!like2("abc", "ab"));
    assert!(like2("abc  ", "abc"));
    assert!(like2("abc ", "abc "));
    assert!(!like2("abc", "abc "));
    assert!(like2("ÉCOLE", "éc%"));
    let esc = |v: &str, p: &str, e: &str| like(&s(v), &s(p), Some(&s(e))).unwrap().unwrap();
    assert!(esc("10%", "10!%", "!"));
    assert!(!esc("100", "10!%", "!"));
    assert!(esc("a!b", "a!!b", "!"));
    assert_eq!(like(&Value::Int(123), &s("1%"), None).unwrap(), Some(true));
    assert_eq!(like(&Value::Null, &s("%"), None).unwrap(), None);
    assert_eq!(like(&s("a"), &Value::Null, None).unwrap(), None);
    assert_eq!(like(&s("a"), &s("a"), Some(&s("ab"))).unwrap_err().number, 506);
}

/// Patterns of literal text and `%` only, over ASCII, take a matcher of their own
/// (`PercentsPattern`): it must agree with the general one on every shape.
#[test]
fn like_patterns_of_percents() {
    let like2 = |v: &str, p: &str| like(&s(v), &s(p), None).unwrap().unwrap();
    let q13 = "%special%requests%";
    assert!(like2("ironic special deposits. requests", q13));
    assert!(like2("SPECIAL REQUESTS", q13));
    assert!(like2("specialrequests", q13));
    assert!(!like2("requests special", q13));
    assert!(!like2("special request", q13));
    assert!(!like2("", q13));
    assert!(like2("special%requests", q13));
    // A segment's first letter found (in either case) where the rest does not follow.
    assert!(like2("spe sPspecial requests", q13));
    assert!(like2("xxxxS", "%s%"));
    assert!(!like2("xxxx", "%s%"));
    assert!(like2("a.b", "%.%"));
    // Prefix and suffix segments may not overlap.
    assert!(!like2("a", "a%a"));
    assert!(like2("aa", "a%a"));
    assert!(like2("abXcd", "ab%cd"));
    assert!(!like2("abcd", "abc%bcd"));
    assert!(like2("abcbcd", "abc%bcd"));
    // A segment is searched by its rarest letter (`z`, `q`, a digit), wherever it lies in
    // the segment, up to the value's edges.
    assert!(like2("zab", "%zab%"));
    assert!(like2("xxabz", "%abz%"));
    assert!(!like2("xxab", "%abz%"));
    assert!(like2("abZabzab", "%aBz%"));
    assert!(like2("q1q2q", "%2q%"));
    assert!(!like2("q1q2", "%2q%"));
    assert!(like2("ab qu x", "%b q%x"));
    assert!(!like2("ab qu", "%b qux%"));
    // Leftmost placement of a middle segment leaves room for the next.
    assert!(like2("xaxbxa", "%a%b%a"));
    assert!(!like2("xbxa", "%a%b%a"));
    assert!(like2("ab", "%%a%%b%%"));
    // Trailing spaces of the value, not of the pattern, are forgiven.
    assert!(like2("x special requests  ", "%requests"));
    assert!(!like2("requests", "%requests "));
    assert!(like2("  ", ""));
    assert!(!like2("a", ""));
    // Not ASCII, `_`, `[]` and ESCAPE go to the general matcher, mixed with `%`.
    assert!(like2("ÉCOLE spéciale", "%éc%SPÉC%"));
    assert!(like2("special requests", "%spec_al%[r]equests%"));
    assert!(!like2("special requests", "%spec_al%[^r]equests%"));
    let esc = |v: &str, p: &str, e: &str| like(&s(v), &s(p), Some(&s(e))).unwrap().unwrap();
    assert!(esc("50% special", "%!%%special", "!"));
    assert!(!esc("50 special", "%!%%special", "!"));
    assert_eq!(like(&Value::NStr("Special Requests".into()), &s(q13), None).unwrap(), Some(true));
}
