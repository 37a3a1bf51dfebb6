//! A database's entry in master: its id, name, files, options and state, and the record
//! it is stored as. Paths inside the instance's data directory are stored relative to it (so
//! the directory can move), others as given; a record from an older build, without the flags
//! byte, still decodes, and is rewritten in the current form when the instance opens.

use std::path::{Path, PathBuf};

use walden_log::policy::DatabaseDurability;

use crate::database::{DatabaseFiles, RecoveryModel};
use crate::error::EngineError;
use crate::files::FileLayout;

/// A database's entry in master.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseEntry {
    /// Its id.
    pub id: u32,
    /// Its name as created.
    pub name: String,
    /// Its files.
    pub files: DatabaseFiles,
    /// DELAYED_DURABILITY.
    pub delayed_durability: DatabaseDurability,
    /// The recovery model.
    pub recovery_model: RecoveryModel,
    /// The files' logical names and growth policies (their sizes are the files' own).
    pub layout: FileLayout,
    /// `SET OFFLINE`: not opened until `SET ONLINE`, across restarts.
    pub offline: bool,
    /// `SET READ_ONLY`.
    pub read_only: bool,
}

/// Bit 0 of the flags byte: the data file's path is relative to the data directory.
pub(super) const DATA_IN_DIR: u8 = 1;
/// Bit 1: the log file's path is relative to the data directory.
pub(super) const LOG_IN_DIR: u8 = 2;
/// Bit 2: the database was set OFFLINE.
pub(super) const OFFLINE: u8 = 4;
/// Bit 3: the database is READ_ONLY.
pub(super) const READ_ONLY: u8 = 8;

impl DatabaseEntry {
    /// The record (docs/format/catalog.md, "master only"). Files inside the data directory
    /// `dir` are stored relative to it, so that a copy of a stopped instance's directory opens
    /// its own copies of them, not the original's; others keep the path they were given.
    pub(super) fn encode(&self, dir: &Path) -> Vec<u8> {
        let mut flags = 0;
        if self.offline {
            flags |= OFFLINE;
        }
        if self.read_only {
            flags |= READ_ONLY;
        }
        let mut stored = |path: &Path, bit: u8| -> String {
            match path.strip_prefix(dir) {
                // Only a path that stays below `dir` (no `..`) moves with a copy of it.
                Ok(inside)
                    if !inside.as_os_str().is_empty()
                        && inside
                            .components()
                            .all(|c| matches!(c, std::path::Component::Normal(_))) =>
                {
                    flags |= bit;
                    inside.to_string_lossy().into_owned()
                }
                _ => path.to_string_lossy().into_owned(),
            }
        };
        let data = stored(&self.files.data, DATA_IN_DIR);
        let log = stored(&self.files.log, LOG_IN_DIR);
        let mut out = Vec::new();
        out.extend_from_slice(&self.id.to_le_bytes());
        for s in [self.name.as_str(), &data, &log] {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out.push(self.delayed_durability.code());
        out.push(match self.recovery_model {
            RecoveryModel::Simple => 3,
            RecoveryModel::Full => 1,
        });
        out.push(flags);
        self.layout.encode(&mut out);
        out
    }

    /// Decodes a record written by `encode`, or by a version before the flags byte (whose
    /// paths are all taken as stored: absolute, or relative to the server's working
    /// directory, as that version used them).
    pub(super) fn decode(b: &[u8], dir: &Path) -> Result<DatabaseEntry, EngineError> {
        let bad = || EngineError::Corrupt("a malformed sys.databases entry".into());
        let mut at = 0;
        let mut take = |n: usize| -> Result<&[u8], EngineError> {
            let s = b.get(at..at + n).ok_or_else(bad)?;
            at += n;
            Ok(s)
        };
        let word = |s: &[u8]| u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        let id = word(take(4)?);
        let mut strings = Vec::new();
        for _ in 0..3 {
            let n = word(take(4)?) as usize;
            strings.push(String::from_utf8(take(n)?.to_vec()).map_err(|_| bad())?);
        }
        let durability = DatabaseDurability::from_code(take(1)?[0]).ok_or_else(bad)?;
        let recovery_model =
            if take(1)?[0] == 1 { RecoveryModel::Full } else { RecoveryModel::Simple };
        let flags = take(1).map_or(0, |f| f[0]);
        let layout = FileLayout::decode(b.get(at..).unwrap_or_default())?;
        let resolve = |stored: String, bit: u8| {
            if flags & bit != 0 {
                dir.join(stored)
            } else {
                PathBuf::from(stored)
            }
        };
        let log = resolve(strings.pop().ok_or_else(bad)?, LOG_IN_DIR);
        let data = resolve(strings.pop().ok_or_else(bad)?, DATA_IN_DIR);
        let name = strings.pop().ok_or_else(bad)?;
        Ok(DatabaseEntry {
            id,
            name,
            files: DatabaseFiles { data, log },
            delayed_durability: durability,
            recovery_model,
            layout,
            offline: flags & OFFLINE != 0,
            read_only: flags & READ_ONLY != 0,
        })
    }
}
