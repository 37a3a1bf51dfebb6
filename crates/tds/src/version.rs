//! The TDS revisions a server answers ([MS-TDS] 1.7, 2.2.6.4 TDSVersion, 2.2.7.14): the
//! client names one in LOGIN7, the server acknowledges the one it will speak in LOGINACK, and
//! from then on both sides lay out tokens and types as that revision defines them.
//!
//! What changes below 7.4 (each place in the codec takes the revision it encodes for):
//!
//! * 7.2 introduced ALL_HEADERS at the head of SQL batch and RPC requests, the 94-byte
//!   LOGIN7 fixed part (ibChangePassword, cchChangePassword, cbSSPILong), 8-byte DONE row
//!   counts, 4-byte COLMETADATA/RETURNVALUE UserType and ERROR/INFO LineNumber, TableName
//!   as NumParts + parts, the PLP (`(max)`) and XML types, and the transaction ENVCHANGEs
//!   (8-10, 17, 18). Older clients get 4-byte counts, 2-byte UserType and LineNumber, one
//!   US_VARCHAR table name, and the `(max)` types as TEXT, NTEXT and IMAGE.
//! * 7.3 introduced DATE, TIME, DATETIME2 and DATETIMEOFFSET and table-valued parameters:
//!   older clients get the temporal types as NVARCHAR text.
//! * 7.1 introduced collations (the 5-byte COLLATION in character TYPE_INFO and ENVCHANGE 7),
//!   BIGINT and SQL_VARIANT: a 7.0 client gets no collation, BIGINT as DECIMAL(19, 0) and
//!   SQL_VARIANT as NVARCHAR.
//!
//! Versions before 7.0 (TDS 4.2 and 5.0, Sybase's) use another login record altogether and
//! are not answered.

/// A TDS revision a client can log in with, oldest first (the order is the protocol's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TdsVersion {
    /// SQL Server 7.0.
    V7_0,
    /// SQL Server 2000 (and its SP1 revision).
    V7_1,
    /// SQL Server 2005.
    V7_2,
    /// SQL Server 2008.
    V7_3A,
    /// SQL Server 2008 R2.
    V7_3B,
    /// SQL Server 2012 and later: what this codec speaks unless told otherwise.
    V7_4,
}

impl TdsVersion {
    /// The revision to speak with a client whose LOGIN7 asked for `requested`: the same,
    /// or 7.4 for anything newer (a server answers with the highest version both know).
    /// `None` below 7.0. LOGIN7 carries SQL Server 7.0 and 2000 versions either in their
    /// LOGINACK form (0x07000000, 0x07010000) or as 0x70000000 / 0x71000000-0x71000001.
    pub fn from_login(requested: u32) -> Option<Self> {
        Some(match requested {
            // TDS 8.0 (strict encryption) logs in with 0x08000000 and speaks 7.4's tokens.
            0x0800_0000 => Self::V7_4,
            0x0700_0000 | 0x7000_0000..=0x70FF_FFFF => Self::V7_0,
            0x0701_0000 | 0x7100_0000..=0x71FF_FFFF => Self::V7_1,
            0x7200_0000..=0x72FF_FFFF => Self::V7_2,
            0x7300_0000..=0x730A_FFFF => Self::V7_3A,
            0x730B_0000..=0x73FF_FFFF => Self::V7_3B,
            v if v >= 0x7400_0000 => Self::V7_4,
            _ => return None,
        })
    }

    /// The TDSVersion LOGINACK carries for this revision, the values SQL Server sends
    /// ([MS-TDS] 2.2.7.14; 7.1 as SQL Server 2000 SP1 acknowledges it, which the clients of
    /// either 7.1 form accept).
    pub fn login_ack(self) -> u32 {
        match self {
            Self::V7_0 => 0x0700_0000,
            Self::V7_1 => 0x7100_0001,
            Self::V7_2 => 0x7209_0002,
            Self::V7_3A => 0x730A_0003,
            Self::V7_3B => 0x730B_0003,
            Self::V7_4 => 0x7400_0004,
        }
    }

    /// Requests start with ALL_HEADERS; DONE counts, UserType and LineNumber are wide; the
    /// PLP types and the transaction ENVCHANGEs exist (7.2 and later).
    pub fn is_7_2_or_later(self) -> bool {
        self >= Self::V7_2
    }

    /// DATE, TIME, DATETIME2, DATETIMEOFFSET and table-valued parameters exist (7.3 and
    /// later).
    pub fn is_7_3_or_later(self) -> bool {
        self >= Self::V7_3A
    }

    /// Character types carry a collation; BIGINT and SQL_VARIANT exist (7.1 and later).
    pub fn has_collations(self) -> bool {
        self >= Self::V7_1
    }
}

#[cfg(test)]
mod tests {
    use super::TdsVersion::{self, *};

    #[test]
    fn login_versions_map_to_revisions_and_back() {
        let cases = [
            (0x7000_0000, V7_0, 0x0700_0000),
            (0x0701_0000, V7_1, 0x7100_0001),
            (0x7100_0001, V7_1, 0x7100_0001),
            (0x7209_0002, V7_2, 0x7209_0002),
            (0x730A_0003, V7_3A, 0x730A_0003),
            (0x730B_0003, V7_3B, 0x730B_0003),
            (0x7400_0004, V7_4, 0x7400_0004),
            (0x0800_0000, V7_4, 0x7400_0004),
        ];
        for (login, version, ack) in cases {
            assert_eq!(TdsVersion::from_login(login), Some(version), "{login:#010x}");
            assert_eq!(version.login_ack(), ack);
        }
        assert_eq!(TdsVersion::from_login(0x0402_0000), None);
        assert_eq!(TdsVersion::from_login(0x0500_0000), None);
    }
}
