//! The code page of VARCHAR, CHAR and TEXT data on the wire, by the collation sent with it
//! ([MS-TDS] 2.2.5.1.2): a client sends a VARCHAR parameter in the code page of the collation
//! in its TYPE_INFO, and reads a column or OUTPUT parameter in the code page of the collation
//! the server sends with it.
//!
//! * fUTF8 set (a `_UTF8` collation, SQL Server 2019): UTF-8.
//! * A SQL collation (SortId not 0): its sort order's code page; Walden's own
//!   (`SQL_Latin1_General_CP1_*`, SortIds 51 to 54) and every other SortId on code page 1252
//!   are 1252; the SortIds of the Central European, Cyrillic, Greek, Turkish, Hebrew, Arabic
//!   and Baltic SQL collations their Windows code pages.
//! * A Windows collation: the ANSI code page of its LCID's language, as Windows assigns it
//!   (Russian 1251, Japanese 932, ...), and 1252 for the Western European languages.
//! * No collation at all (LCID 0, as go-mssqldb sends `mssql.VarChar`): the database's, which
//!   is code page 1252 in Walden, as SQL Server reads such a parameter in the database's
//!   collation.
//!
//! Code page 1252 is converted by `walden_engine::types` (the 27 characters Windows puts at
//! 0x80..=0x9F, the five undefined bytes as the C1 controls of that number, as Windows' own
//! conversion does), which `CAST` between VARCHAR and binary shares; the others through
//! `encoding_rs`. A character a code page lacks is sent as `?`, as SQL
//! Server converts it. Code pages 437 and 850 (the SortIds of `SQL_Latin1_General_CP437_*`
//! and `CP850_*`) are not converted: data in them is read as 1252, which agrees on ASCII.
//!
//! Sources: [MS-TDS] 2.2.5.1.2; Microsoft's "SQL Server Collation Name" (the SQL collations'
//! sort order ids and code pages) and "Code Page Identifiers" / the National Language Support
//! reference (each language's ANSI code page).

use encoding_rs::Encoding;
use walden_engine::types::{decode_cp1252, encode_cp1252};
use walden_tds::Collation;

/// How VARCHAR data of one collation is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodePage {
    /// UTF-8 (a `_UTF8` collation).
    Utf8,
    /// Windows-1252 (Latin-1 and the characters at 0x80..=0x9F).
    Cp1252,
    /// Another Windows code page, with its `encoding_rs` converter.
    Other(u16, &'static Encoding),
}

impl CodePage {
    /// The code page of data sent in `collation`.
    pub fn of(collation: Collation) -> CodePage {
        if collation.flags() & Collation::UTF8 != 0 {
            return CodePage::Utf8;
        }
        let number = match collation.sort_id {
            0 => lcid_code_page(collation.lcid()),
            sort_id => sort_order_code_page(sort_id),
        };
        CodePage::numbered(number)
    }

    fn numbered(number: u16) -> CodePage {
        let encoding = match number {
            874 => encoding_rs::WINDOWS_874,
            932 => encoding_rs::SHIFT_JIS,
            936 => encoding_rs::GBK,
            949 => encoding_rs::EUC_KR,
            950 => encoding_rs::BIG5,
            1250 => encoding_rs::WINDOWS_1250,
            1251 => encoding_rs::WINDOWS_1251,
            1253 => encoding_rs::WINDOWS_1253,
            1254 => encoding_rs::WINDOWS_1254,
            1255 => encoding_rs::WINDOWS_1255,
            1256 => encoding_rs::WINDOWS_1256,
            1257 => encoding_rs::WINDOWS_1257,
            1258 => encoding_rs::WINDOWS_1258,
            _ => return CodePage::Cp1252,
        };
        CodePage::Other(number, encoding)
    }

    /// The code page's number, as `COLLATIONPROPERTY(..., 'CodePage')` gives it.
    #[cfg(test)]
    fn number(self) -> u16 {
        match self {
            CodePage::Utf8 => 65001,
            CodePage::Cp1252 => 1252,
            CodePage::Other(n, _) => n,
        }
    }

    /// `bytes` read in this code page. Bytes that are not valid in it become U+FFFD.
    pub fn decode(self, bytes: &[u8]) -> String {
        match self {
            CodePage::Utf8 => String::from_utf8_lossy(bytes).into_owned(),
            CodePage::Cp1252 => decode_cp1252(bytes),
            CodePage::Other(_, encoding) => {
                encoding.decode_without_bom_handling(bytes).0.into_owned()
            }
        }
    }

    /// `s` in this code page, `?` for each character it lacks.
    pub fn encode(self, s: &str) -> Vec<u8> {
        match self {
            CodePage::Utf8 => s.as_bytes().to_vec(),
            CodePage::Cp1252 => encode_cp1252(s),
            CodePage::Other(_, encoding) => encode_with_question_marks(encoding, s),
        }
    }
}

/// `s` in `encoding`, each character it cannot encode replaced by `?` (encoding_rs' own
/// replacement is an HTML character reference, which would change the data's length).
fn encode_with_question_marks(encoding: &'static Encoding, s: &str) -> Vec<u8> {
    let mut encoder = encoding.new_encoder();
    let mut out = Vec::with_capacity(s.len() * 2);
    let mut rest = s;
    loop {
        let room = encoder
            .max_buffer_length_from_utf8_without_replacement(rest.len())
            .unwrap_or(rest.len() * 4 + 16);
        let start = out.len();
        out.resize(start + room, 0);
        let (result, read, written) =
            encoder.encode_from_utf8_without_replacement(rest, &mut out[start..], true);
        out.truncate(start + written);
        rest = &rest[read..];
        match result {
            encoding_rs::EncoderResult::InputEmpty => return out,
            encoding_rs::EncoderResult::Unmappable(_) => out.push(b'?'),
            encoding_rs::EncoderResult::OutputFull => {}
        }
    }
}

/// The code page of a SQL collation's sort order. 1252 for Walden's own and for those not
/// listed.
fn sort_order_code_page(sort_id: u8) -> u16 {
    match sort_id {
        80..=96 => 1250,
        104..=108 => 1251,
        112..=124 => 1253,
        128..=130 => 1254,
        136..=138 => 1255,
        144..=146 => 1256,
        152..=160 => 1257,
        _ => 1252,
    }
}

/// The ANSI code page of a Windows locale, by its primary language (the low ten bits), and
/// for Chinese and Serbian by the whole LCID.
fn lcid_code_page(lcid: u32) -> u16 {
    match lcid {
        // Chinese: Taiwan, Hong Kong and Macao use Big5; the PRC and Singapore GBK.
        0x0404 | 0x0C04 | 0x1404 => return 950,
        0x0804 | 0x1004 => return 936,
        // Serbian and Bosnian in Cyrillic script.
        0x0C1A | 0x1C1A | 0x201A | 0x6C1A | 0x7C1A => return 1251,
        _ => {}
    }
    match lcid & 0x3FF {
        0x1E => 874,
        0x11 => 932,
        0x04 => 936,
        0x12 => 949,
        // Czech, Croatian, Hungarian, Polish, Romanian, Slovak, Slovenian, Albanian.
        0x05 | 0x1A | 0x0E | 0x15 | 0x18 | 0x1B | 0x24 | 0x1C => 1250,
        // Bulgarian, Russian, Ukrainian, Belarusian, Macedonian, Kazakh, Kyrgyz, Tatar,
        // Mongolian.
        0x02 | 0x19 | 0x22 | 0x23 | 0x2F | 0x3F | 0x40 | 0x44 | 0x50 => 1251,
        0x08 => 1253,
        // Turkish, Azeri (Latin), Uzbek (Latin).
        0x1F | 0x2C | 0x43 => 1254,
        0x0D => 1255,
        // Arabic, Farsi, Urdu.
        0x01 | 0x29 | 0x20 => 1256,
        // Estonian, Latvian, Lithuanian.
        0x25..=0x27 => 1257,
        0x2A => 1258,
        _ => 1252,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(lcid: u32, flags: u8) -> Collation {
        Collation { info: lcid | u32::from(flags) << 20, sort_id: 0 }
    }

    #[test]
    fn code_pages_follow_the_collation() {
        let utf8 = windows(0x0409, Collation::IGNORE_CASE | Collation::UTF8);
        assert_eq!(CodePage::of(utf8), CodePage::Utf8);
        assert_eq!(CodePage::of(Collation::default()).number(), 1252);
        assert_eq!(CodePage::of(windows(0x0409, Collation::IGNORE_CASE)).number(), 1252);
        // No collation (go-mssqldb's VarChar): the database's.
        assert_eq!(CodePage::of(Collation { info: 0, sort_id: 0 }).number(), 1252);
        assert_eq!(CodePage::of(windows(0x0419, 0)).number(), 1251);
        assert_eq!(CodePage::of(windows(0x0411, 0)).number(), 932);
        assert_eq!(CodePage::of(windows(0x0404, 0)).number(), 950);
        assert_eq!(CodePage::of(windows(0x0804, 0)).number(), 936);
        assert_eq!(CodePage::of(windows(0x081A, 0)).number(), 1250);
        assert_eq!(CodePage::of(windows(0x0C1A, 0)).number(), 1251);
        // SQL_Czech_CP1250_CI_AS (SortId 82) and SQL_Latin1_General_CP1251_CI_AS (106).
        assert_eq!(CodePage::of(Collation { info: 0x0409, sort_id: 82 }).number(), 1250);
        assert_eq!(CodePage::of(Collation { info: 0x0409, sort_id: 106 }).number(), 1251);
    }

    #[test]
    fn text_round_trips_through_each_code_page() {
        let utf8 = CodePage::of(windows(0x0409, Collation::UTF8));
        assert_eq!(utf8.encode("é€ā😀"), "é€ā😀".as_bytes());
        assert_eq!(utf8.decode("é€ā😀".as_bytes()), "é€ā😀");
        let cyrillic = CodePage::of(windows(0x0419, 0));
        assert_eq!(cyrillic.encode("Жé"), [0xC6, b'?']);
        assert_eq!(cyrillic.decode(&[0xC6, 0xE6]), "Жж");
        let japanese = CodePage::of(windows(0x0411, 0));
        assert_eq!(japanese.decode(&japanese.encode("日本")), "日本");
        assert_eq!(japanese.encode("ā"), b"?");
        // Code page 1252: the euro sign is 0x80, a character it lacks `?`, U+0081 (which it
        // leaves undefined) too.
        let latin = CodePage::of(Collation::default());
        assert_eq!(latin.encode("é€\u{2122}ā\u{81}\u{80}"), [0xE9, 0x80, 0x99, b'?', 0x81, b'?']);
        assert_eq!(latin.decode(&[0xE9, 0x80, 0x99, 0x81]), "é€\u{2122}\u{81}");
    }
}
