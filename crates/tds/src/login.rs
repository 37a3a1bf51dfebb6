//! LOGIN7 ([MS-TDS] 2.2.6.4): the client's login record.
//!
//! The record is a 94-byte fixed part (86 bytes in TDS 7.0 and 7.1, which end it before
//! ibChangePassword) followed by a variable part. The
//! fixed part holds integers and flag bytes, then for each string an offset (from the start of
//! the record) and a length in UTF-16 code units (in bytes for SSPI and the extension pointer).
//! The password and the new password travel "obfuscated": each byte of their UTF-16LE form has
//! its nibbles swapped and is then XORed with 0xA5. That is no protection at all, which is why
//! the server insists on TLS for the login packet; [`Login7`]'s `Debug` output redacts them.
//!
//! When OptionFlags3.fExtension is set, `ibExtension` points at a 4-byte offset of the
//! FeatureExt block (2.2.6.4, TDS 7.4): a list of (FeatureId, DWORD length, data) ended by
//! 0xFF. The codec keeps the features as opaque [`FeatureExt`] entries; interpreting them (and
//! acknowledging them with FEATUREEXTACK) is the server's business.
//!
//! Decoding checks every offset/length pair against the record's `Length` (which must not
//! exceed the payload), so a hostile record can neither read outside itself nor allocate more
//! than it contains. Strings must be valid UTF-16. Encoding lays the variable part out in
//! field order and fails with [`TdsError::TooLong`] if an offset would not fit in 16 bits.

use std::fmt;

use crate::wire::{put_utf16, utf16_len, Reader};
use crate::{TdsError, TdsVersion};

/// TDS 7.4, as sent in LOGIN7 and LOGINACK: the version this codec speaks.
pub const TDS_7_4: u32 = 0x7400_0004;

/// Size of the fixed part of LOGIN7 in TDS 7.2 and later.
pub const LOGIN7_FIXED_LEN: usize = 94;

/// Size of the fixed part of LOGIN7 in TDS 7.0 and 7.1, which lack ibChangePassword,
/// cchChangePassword and cbSSPILong.
pub const LOGIN7_FIXED_LEN_7_1: usize = 86;

bit_flags! {
    /// LOGIN7 OptionFlags1.
    pub struct OptionFlags1(u8) {
        /// fByteOrder: 68000 (big-endian) integers; Walden accepts only x86 (clear).
        const BYTE_ORDER_68000 = 0x01;
        /// fChar: EBCDIC characters; only ASCII (clear) is supported.
        const CHAR_EBCDIC = 0x02;
        /// fFloat = VAX.
        const FLOAT_VAX = 0x04;
        /// fFloat = ND5000.
        const FLOAT_ND5000 = 0x08;
        /// fDumpLoad: dump/load off.
        const DUMP_LOAD_OFF = 0x10;
        /// fUseDB: send an ENVCHANGE when the database changes.
        const USE_DB_NOTIFY = 0x20;
        /// fDatabase: failing to switch to the initial database is fatal.
        const INIT_DB_FATAL = 0x40;
        /// fSetLang: send an ENVCHANGE when the language changes.
        const SET_LANG_NOTIFY = 0x80;
    }
}

bit_flags! {
    /// LOGIN7 OptionFlags2.
    pub struct OptionFlags2(u8) {
        /// fLanguage: failing to set the initial language is fatal.
        const INIT_LANG_FATAL = 0x01;
        /// fODBC: the client is an ODBC driver (the server sets ODBC session defaults:
        /// ANSI_NULLS, QUOTED_IDENTIFIER... on).
        const ODBC = 0x02;
        /// fUserType (3 bits): 0 normal, 1 server, 2 remote user, 3 replication.
        const USER_TYPE_MASK = 0x70;
        /// fIntSecurity: integrated (SSPI) authentication.
        const INTEGRATED_SECURITY = 0x80;
    }
}

bit_flags! {
    /// LOGIN7 TypeFlags.
    pub struct TypeFlags(u8) {
        /// fSQLType (4 bits): 0 SQL_DFLT, 1 SQL_TSQL.
        const SQL_TYPE_MASK = 0x0F;
        /// fOLEDB: the client is an OLE DB provider.
        const OLEDB = 0x10;
        /// fReadOnlyIntent: ApplicationIntent=ReadOnly.
        const READ_ONLY_INTENT = 0x20;
    }
}

bit_flags! {
    /// LOGIN7 OptionFlags3.
    pub struct OptionFlags3(u8) {
        /// fChangePassword: change the password to `change_password` at login.
        const CHANGE_PASSWORD = 0x01;
        /// fSendYukonBinaryXML: XML values in binary form.
        const BINARY_XML = 0x02;
        /// fUserInstance: spawn a user instance.
        const USER_INSTANCE = 0x04;
        /// fUnknownCollationHandling: the client copes with collations it does not know.
        const UNKNOWN_COLLATION_HANDLING = 0x08;
        /// fExtension: a FeatureExt block is present.
        const EXTENSION = 0x10;
    }
}

/// One entry of the LOGIN7 FeatureExt block, kept opaque.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureExt {
    /// FeatureId (see the associated constants).
    pub id: u8,
    /// FeatureData.
    pub data: Vec<u8>,
}

impl FeatureExt {
    /// SESSIONRECOVERY.
    pub const SESSION_RECOVERY: u8 = 0x01;
    /// FEDAUTH.
    pub const FED_AUTH: u8 = 0x02;
    /// COLUMNENCRYPTION.
    pub const COLUMN_ENCRYPTION: u8 = 0x04;
    /// GLOBALTRANSACTIONS.
    pub const GLOBAL_TRANSACTIONS: u8 = 0x05;
    /// AZURESQLSUPPORT.
    pub const AZURE_SQL_SUPPORT: u8 = 0x08;
    /// DATACLASSIFICATION.
    pub const DATA_CLASSIFICATION: u8 = 0x09;
    /// UTF8_SUPPORT.
    pub const UTF8_SUPPORT: u8 = 0x0A;
}

const FEATURE_TERMINATOR: u8 = 0xFF;

/// A decoded LOGIN7 record.
#[derive(Clone, PartialEq, Eq)]
pub struct Login7 {
    /// The highest TDS version the client speaks (little-endian on the wire).
    pub tds_version: u32,
    /// Requested packet size; 0 asks for the server's default.
    pub packet_size: u32,
    /// Client interface library version.
    pub client_prog_version: u32,
    /// Client process id.
    pub client_pid: u32,
    /// Connection id (0 unless the client reuses a pooled connection's).
    pub connection_id: u32,
    /// OptionFlags1.
    pub option_flags1: OptionFlags1,
    /// OptionFlags2.
    pub option_flags2: OptionFlags2,
    /// TypeFlags.
    pub type_flags: TypeFlags,
    /// OptionFlags3.
    pub option_flags3: OptionFlags3,
    /// Client time zone, minutes from UTC (informational).
    pub client_time_zone: i32,
    /// Client language id.
    pub client_lcid: u32,
    /// Client machine name.
    pub hostname: String,
    /// SQL login name.
    pub username: String,
    /// SQL login password, de-obfuscated.
    pub password: String,
    /// Application name.
    pub app_name: String,
    /// The server name the client connected to.
    pub server_name: String,
    /// Client interface library name (CltIntName: "ODBC", "Tiberius", "DB-Library", ...).
    pub library_name: String,
    /// Initial language.
    pub language: String,
    /// Initial database.
    pub database: String,
    /// ClientID: the client's MAC address, informational.
    pub client_id: [u8; 6],
    /// SSPI data for integrated authentication.
    pub sspi: Vec<u8>,
    /// Database file to attach.
    pub attach_db_file: String,
    /// New password, de-obfuscated (with OptionFlags3 CHANGE_PASSWORD).
    pub change_password: String,
    /// The FeatureExt block's entries.
    pub features: Vec<FeatureExt>,
}

impl Default for Login7 {
    /// A TDS 7.4 login with the flags an ODBC-style client sends and empty strings.
    fn default() -> Self {
        Self {
            tds_version: TDS_7_4,
            packet_size: 4096,
            client_prog_version: 0,
            client_pid: 0,
            connection_id: 0,
            option_flags1: OptionFlags1::USE_DB_NOTIFY
                | OptionFlags1::INIT_DB_FATAL
                | OptionFlags1::SET_LANG_NOTIFY,
            option_flags2: OptionFlags2::INIT_LANG_FATAL | OptionFlags2::ODBC,
            type_flags: TypeFlags::NONE,
            option_flags3: OptionFlags3::UNKNOWN_COLLATION_HANDLING,
            client_time_zone: 0,
            client_lcid: 0x0409,
            hostname: String::new(),
            username: String::new(),
            password: String::new(),
            app_name: String::new(),
            server_name: String::new(),
            library_name: String::new(),
            language: String::new(),
            database: String::new(),
            client_id: [0; 6],
            sspi: Vec::new(),
            attach_db_file: String::new(),
            change_password: String::new(),
            features: Vec::new(),
        }
    }
}

impl fmt::Debug for Login7 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redact = |s: &str| if s.is_empty() { "" } else { "<redacted>" };
        f.debug_struct("Login7")
            .field("tds_version", &format_args!("0x{:08X}", self.tds_version))
            .field("packet_size", &self.packet_size)
            .field("client_prog_version", &self.client_prog_version)
            .field("client_pid", &self.client_pid)
            .field("connection_id", &self.connection_id)
            .field("option_flags1", &self.option_flags1)
            .field("option_flags2", &self.option_flags2)
            .field("type_flags", &self.type_flags)
            .field("option_flags3", &self.option_flags3)
            .field("client_time_zone", &self.client_time_zone)
            .field("client_lcid", &self.client_lcid)
            .field("hostname", &self.hostname)
            .field("username", &self.username)
            .field("password", &redact(&self.password))
            .field("app_name", &self.app_name)
            .field("server_name", &self.server_name)
            .field("library_name", &self.library_name)
            .field("language", &self.language)
            .field("database", &self.database)
            .field("client_id", &self.client_id)
            .field("sspi", &format_args!("{} bytes", self.sspi.len()))
            .field("attach_db_file", &self.attach_db_file)
            .field("change_password", &redact(&self.change_password))
            .field("features", &self.features)
            .finish()
    }
}

/// The password obfuscation of 2.2.6.4: swap the nibbles, then XOR with 0xA5.
fn obfuscate(b: u8) -> u8 {
    b.rotate_left(4) ^ 0xA5
}

/// Undoes [`obfuscate`]: XOR with 0xA5, then swap the nibbles.
fn deobfuscate(b: u8) -> u8 {
    (b ^ 0xA5).rotate_left(4)
}

impl Login7 {
    /// Whether the client is an ODBC driver (OptionFlags2.fODBC).
    pub fn odbc(&self) -> bool {
        self.option_flags2.contains(OptionFlags2::ODBC)
    }

    /// Whether the client asked for a read-only session (TypeFlags.fReadOnlyIntent).
    pub fn read_only_intent(&self) -> bool {
        self.type_flags.contains(TypeFlags::READ_ONLY_INTENT)
    }

    /// Whether the client wants integrated (SSPI) authentication.
    pub fn integrated_security(&self) -> bool {
        self.option_flags2.contains(OptionFlags2::INTEGRATED_SECURITY)
    }

    /// Decodes a LOGIN7 payload (the message without its packet headers).
    pub fn decode(payload: &[u8]) -> Result<Self, TdsError> {
        let mut r = Reader::new(payload);
        let length = r.u32_le("LOGIN7 Length")?;
        let tds_version = r.u32_le("LOGIN7 TDSVersion")?;
        // TDS 7.0 and 7.1 records end their fixed part before ibChangePassword.
        let short = TdsVersion::from_login(tds_version).is_some_and(|v| !v.is_7_2_or_later());
        let fixed_len = if short { LOGIN7_FIXED_LEN_7_1 } else { LOGIN7_FIXED_LEN };
        let record = usize::try_from(length)
            .ok()
            .filter(|&len| len >= fixed_len)
            .and_then(|len| payload.get(..len))
            .ok_or(TdsError::Malformed { what: "LOGIN7 Length" })?;
        let mut r = Reader::new(record);
        r.take(8, "LOGIN7 Length")?;

        let packet_size = r.u32_le("LOGIN7 PacketSize")?;
        let client_prog_version = r.u32_le("LOGIN7 ClientProgVer")?;
        let client_pid = r.u32_le("LOGIN7 ClientPID")?;
        let connection_id = r.u32_le("LOGIN7 ConnectionID")?;
        let option_flags1 = OptionFlags1(r.u8("LOGIN7 OptionFlags1")?);
        let option_flags2 = OptionFlags2(r.u8("LOGIN7 OptionFlags2")?);
        let type_flags = TypeFlags(r.u8("LOGIN7 TypeFlags")?);
        let option_flags3 = OptionFlags3(r.u8("LOGIN7 OptionFlags3")?);
        let client_time_zone = r.i32_le("LOGIN7 ClientTimeZone")?;
        let client_lcid = r.u32_le("LOGIN7 ClientLCID")?;

        let hostname = Span::read(&mut r, "LOGIN7 HostName")?;
        let username = Span::read(&mut r, "LOGIN7 UserName")?;
        let password = Span::read(&mut r, "LOGIN7 Password")?;
        let app_name = Span::read(&mut r, "LOGIN7 AppName")?;
        let server_name = Span::read(&mut r, "LOGIN7 ServerName")?;
        let extension = Span::read(&mut r, "LOGIN7 Extension")?;
        let library_name = Span::read(&mut r, "LOGIN7 CltIntName")?;
        let language = Span::read(&mut r, "LOGIN7 Language")?;
        let database = Span::read(&mut r, "LOGIN7 Database")?;
        let client_id = r.array("LOGIN7 ClientID")?;
        let sspi = Span::read(&mut r, "LOGIN7 SSPI")?;
        let attach_db_file = Span::read(&mut r, "LOGIN7 AtchDBFile")?;
        let (change_password, sspi_long) = if short {
            (Span { offset: 0, len: 0, what: "LOGIN7 ChangePassword" }, 0)
        } else {
            (Span::read(&mut r, "LOGIN7 ChangePassword")?, r.u32_le("LOGIN7 cbSSPILong")?)
        };

        // cbSSPI = 0xFFFF defers to cbSSPILong, for SSPI blobs of 64 KiB or more.
        let sspi_len = match sspi.len {
            u16::MAX => usize::try_from(sspi_long).unwrap_or(usize::MAX),
            short => usize::from(short),
        };
        let sspi = sspi.bytes_of(record, sspi_len)?;

        // Without fExtension the pair is ibUnused/cbUnused and carries nothing; before 7.4 it
        // is unused whatever the flag says (tedious sets it for every version).
        let before_7_4 = TdsVersion::from_login(tds_version).is_some_and(|v| v < TdsVersion::V7_4);
        let features = if option_flags3.contains(OptionFlags3::EXTENSION) && !before_7_4 {
            let pointer = extension.bytes_of(record, extension.len.into())?;
            let pointer = Reader::new(pointer).u32_le("LOGIN7 ibFeatureExtLong")?;
            let block = usize::try_from(pointer)
                .ok()
                .and_then(|at| record.get(at..))
                .ok_or(TdsError::Truncated { what: "LOGIN7 FeatureExt" })?;
            decode_features(block)?
        } else {
            Vec::new()
        };

        let text = crate::wire::decode_utf16;
        let secret = |b: &[u8]| text(&b.iter().map(|&x| deobfuscate(x)).collect::<Vec<_>>());
        Ok(Self {
            tds_version,
            packet_size,
            client_prog_version,
            client_pid,
            connection_id,
            option_flags1,
            option_flags2,
            type_flags,
            option_flags3,
            client_time_zone,
            client_lcid,
            hostname: text(hostname.text_of(record)?)?,
            username: text(username.text_of(record)?)?,
            password: secret(password.text_of(record)?)?,
            app_name: text(app_name.text_of(record)?)?,
            server_name: text(server_name.text_of(record)?)?,
            library_name: text(library_name.text_of(record)?)?,
            language: text(language.text_of(record)?)?,
            database: text(database.text_of(record)?)?,
            client_id,
            sspi: sspi.to_vec(),
            attach_db_file: text(attach_db_file.text_of(record)?)?,
            change_password: secret(change_password.text_of(record)?)?,
            features,
        })
    }

    /// Encodes the record (the LOGIN7 message payload).
    pub fn encode(&self) -> Result<Vec<u8>, TdsError> {
        let with_extension =
            !self.features.is_empty() || self.option_flags3.contains(OptionFlags3::EXTENSION);
        let mut var = VarPart::default();
        let hostname = var.string(&self.hostname, "LOGIN7 HostName", false)?;
        let username = var.string(&self.username, "LOGIN7 UserName", false)?;
        let password = var.string(&self.password, "LOGIN7 Password", true)?;
        let app_name = var.string(&self.app_name, "LOGIN7 AppName", false)?;
        let server_name = var.string(&self.server_name, "LOGIN7 ServerName", false)?;
        // The extension pointer must sit below 64 KiB, so it comes early; the block it points
        // to goes last, where a 32-bit offset can reach it.
        let extension =
            if with_extension { var.bytes(&[0; 4], "LOGIN7 Extension")? } else { var.empty()? };
        let library_name = var.string(&self.library_name, "LOGIN7 CltIntName", false)?;
        let language = var.string(&self.language, "LOGIN7 Language", false)?;
        let database = var.string(&self.database, "LOGIN7 Database", false)?;
        let attach_db_file = var.string(&self.attach_db_file, "LOGIN7 AtchDBFile", false)?;
        let change_password = var.string(&self.change_password, "LOGIN7 ChangePassword", true)?;
        let sspi_offset = var.offset("LOGIN7 SSPI")?;
        var.data.extend_from_slice(&self.sspi);
        let (sspi_short, sspi_long) = match u16::try_from(self.sspi.len()) {
            Ok(len) if len < u16::MAX => (len, 0),
            _ => (
                u16::MAX,
                u32::try_from(self.sspi.len()).map_err(|_| TdsError::TooLong {
                    what: "LOGIN7 SSPI",
                    len: self.sspi.len(),
                    max: u32::MAX as usize,
                })?,
            ),
        };
        let mut option_flags3 = self.option_flags3;
        if with_extension {
            option_flags3 |= OptionFlags3::EXTENSION;
            let block_at = u32::try_from(LOGIN7_FIXED_LEN + var.data.len()).map_err(|_| {
                TdsError::TooLong { what: "LOGIN7", len: var.data.len(), max: u32::MAX as usize }
            })?;
            let at = usize::from(extension.0) - LOGIN7_FIXED_LEN;
            var.data[at..at + 4].copy_from_slice(&block_at.to_le_bytes());
            for feature in &self.features {
                var.data.push(feature.id);
                let len = u32::try_from(feature.data.len()).map_err(|_| TdsError::TooLong {
                    what: "LOGIN7 FeatureData",
                    len: feature.data.len(),
                    max: u32::MAX as usize,
                })?;
                var.data.extend_from_slice(&len.to_le_bytes());
                var.data.extend_from_slice(&feature.data);
            }
            var.data.push(FEATURE_TERMINATOR);
        }

        let total = LOGIN7_FIXED_LEN + var.data.len();
        let length = u32::try_from(total).map_err(|_| TdsError::TooLong {
            what: "LOGIN7",
            len: total,
            max: u32::MAX as usize,
        })?;
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(&length.to_le_bytes());
        for v in [self.tds_version, self.packet_size, self.client_prog_version, self.client_pid] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.connection_id.to_le_bytes());
        out.extend_from_slice(&[
            self.option_flags1.0,
            self.option_flags2.0,
            self.type_flags.0,
            option_flags3.0,
        ]);
        out.extend_from_slice(&self.client_time_zone.to_le_bytes());
        out.extend_from_slice(&self.client_lcid.to_le_bytes());
        for (offset, len) in [hostname, username, password, app_name, server_name, extension] {
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        for (offset, len) in [library_name, language, database] {
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        out.extend_from_slice(&self.client_id);
        out.extend_from_slice(&sspi_offset.to_le_bytes());
        out.extend_from_slice(&sspi_short.to_le_bytes());
        for (offset, len) in [attach_db_file, change_password] {
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        out.extend_from_slice(&sspi_long.to_le_bytes());
        debug_assert_eq!(out.len(), LOGIN7_FIXED_LEN);
        out.extend_from_slice(&var.data);
        Ok(out)
    }
}

/// An (offset, length) pair of the fixed part, pointing into the record.
#[derive(Debug, Clone, Copy)]
struct Span {
    offset: u16,
    len: u16,
    what: &'static str,
}

impl Span {
    fn read(r: &mut Reader<'_>, what: &'static str) -> Result<Self, TdsError> {
        Ok(Self { offset: r.u16_le(what)?, len: r.u16_le(what)?, what })
    }

    /// The `len` bytes at the span's offset.
    fn bytes_of(self, record: &[u8], len: usize) -> Result<&[u8], TdsError> {
        let start = usize::from(self.offset);
        start
            .checked_add(len)
            .and_then(|end| record.get(start..end))
            .ok_or(TdsError::Truncated { what: self.what })
    }

    /// The span's bytes when its length counts UTF-16 code units.
    fn text_of(self, record: &[u8]) -> Result<&[u8], TdsError> {
        self.bytes_of(record, usize::from(self.len) * 2)
    }
}

fn decode_features(block: &[u8]) -> Result<Vec<FeatureExt>, TdsError> {
    let mut r = Reader::new(block);
    let mut features = Vec::new();
    loop {
        let id = r.u8("LOGIN7 FeatureId")?;
        if id == FEATURE_TERMINATOR {
            return Ok(features);
        }
        let len = r.u32_le("LOGIN7 FeatureDataLen")?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        features.push(FeatureExt { id, data: r.take(len, "LOGIN7 FeatureData")?.to_vec() });
    }
}

/// The variable part of a LOGIN7 record under construction.
#[derive(Default)]
struct VarPart {
    data: Vec<u8>,
}

impl VarPart {
    /// The record offset of the next byte, which must fit the 16-bit offset fields.
    fn offset(&self, what: &'static str) -> Result<u16, TdsError> {
        let at = LOGIN7_FIXED_LEN + self.data.len();
        u16::try_from(at).map_err(|_| TdsError::TooLong { what, len: at, max: 0xFFFF })
    }

    fn empty(&self) -> Result<(u16, u16), TdsError> {
        Ok((self.offset("LOGIN7")?, 0))
    }

    /// Appends a string and returns its (offset, length in code units).
    fn string(
        &mut self,
        s: &str,
        what: &'static str,
        secret: bool,
    ) -> Result<(u16, u16), TdsError> {
        let offset = self.offset(what)?;
        let chars = utf16_len(s);
        let len = u16::try_from(chars).map_err(|_| TdsError::TooLong {
            what,
            len: chars,
            max: 0xFFFF,
        })?;
        let start = self.data.len();
        put_utf16(&mut self.data, s);
        if secret {
            self.data[start..].iter_mut().for_each(|b| *b = obfuscate(*b));
        }
        Ok((offset, len))
    }

    /// Appends raw bytes and returns their (offset, length in bytes).
    fn bytes(&mut self, b: &[u8], what: &'static str) -> Result<(u16, u16), TdsError> {
        let offset = self.offset(what)?;
        let len = u16::try_from(b.len()).map_err(|_| TdsError::TooLong {
            what,
            len: b.len(),
            max: 0xFFFF,
        })?;
        self.data.extend_from_slice(b);
        Ok((offset, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn obfuscation_matches_the_spec_and_inverts() {
        // 2.2.6.4: 'a' = 0x61 -> swap -> 0x16 -> xor 0xA5 -> 0xB3.
        assert_eq!(obfuscate(0x61), 0xB3);
        assert_eq!(obfuscate(0x00), 0xA5);
        for b in 0..=255u8 {
            assert_eq!(deobfuscate(obfuscate(b)), b);
        }
    }

    #[test]
    fn debug_redacts_passwords() {
        let login = Login7 { password: "hunter2".into(), ..Login7::default() };
        let shown = format!("{login:?}");
        assert!(!shown.contains("hunter2"));
        assert!(shown.contains("<redacted>"));
    }
}
