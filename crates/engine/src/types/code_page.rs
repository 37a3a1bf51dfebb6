//! Windows code page 1252, the code page of VARCHAR data under Walden's default collation
//! (`SQL_Latin1_General_CP1_CI_AS`) and its Latin1_General ones: the bytes a VARCHAR value
//! is made of wherever they show, on the wire, in `CAST(... AS varbinary)` and back, and in
//! data files read as `'ACP'`.
//!
//! A character it lacks becomes `?`, as SQL Server stores it; its five undefined bytes
//! (0x81, 0x8D, 0x8F, 0x90, 0x9D) stand for the C1 control of that number, as in Windows'
//! own conversion, so every byte string reads as text and back unchanged.

/// Code page 1252's characters at 0x80..=0x9F, where it differs from Latin-1; `None` for
/// the five bytes it leaves undefined, which stand for the C1 control of that number, as in
/// Windows' own conversion.
const CP1252_HIGH: [Option<char>; 32] = [
    Some('\u{20AC}'),
    None,
    Some('\u{201A}'),
    Some('\u{0192}'),
    Some('\u{201E}'),
    Some('\u{2026}'),
    Some('\u{2020}'),
    Some('\u{2021}'),
    Some('\u{02C6}'),
    Some('\u{2030}'),
    Some('\u{0160}'),
    Some('\u{2039}'),
    Some('\u{0152}'),
    None,
    Some('\u{017D}'),
    None,
    None,
    Some('\u{2018}'),
    Some('\u{2019}'),
    Some('\u{201C}'),
    Some('\u{201D}'),
    Some('\u{2022}'),
    Some('\u{2013}'),
    Some('\u{2014}'),
    Some('\u{02DC}'),
    Some('\u{2122}'),
    Some('\u{0161}'),
    Some('\u{203A}'),
    Some('\u{0153}'),
    None,
    Some('\u{017E}'),
    Some('\u{0178}'),
];

/// Text in code page 1252, the code page of Walden's Latin1_General collations: Latin-1
/// with the 27 characters Windows puts at 0x80..=0x9F (the euro sign at 0x80...); a
/// character the code page lacks becomes `?`, as SQL Server stores it.
pub fn encode_cp1252(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| {
            let code = u32::from(c);
            if let Some(i) = CP1252_HIGH.iter().position(|&h| h == Some(c)) {
                // The table has 32 entries, so the byte is within 0x80..=0x9F.
                0x80 + i as u8
            } else if (0x80..=0x9F).contains(&code) && CP1252_HIGH[(code - 0x80) as usize].is_some()
            {
                b'?'
            } else {
                u8::try_from(code).unwrap_or(b'?')
            }
        })
        .collect()
}

/// The inverse of [`encode_cp1252`].
pub fn decode_cp1252(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0x9F => CP1252_HIGH[usize::from(b - 0x80)].unwrap_or(char::from(b)),
            _ => char::from(b),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_reads_as_text_and_back() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(encode_cp1252(&decode_cp1252(&all)), all);
        // The undefined bytes are the C1 controls; the others 1252's characters.
        assert_eq!(decode_cp1252(&[0x90, 0x80, 0xE9]), "\u{90}€é");
        assert_eq!(encode_cp1252("ā\u{80}"), b"??");
    }
}
