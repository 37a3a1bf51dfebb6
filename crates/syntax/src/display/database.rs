//! Prints `CREATE DATABASE` and `ALTER DATABASE`.

use std::fmt::{Display, Formatter, Result};

use super::{commas, quote};
use crate::ast::{
    AlterDatabase, CreateDatabase, DatabaseFileChange, DatabaseOption, DatabaseRef,
    DelayedDurability, FileGrowth, FileSize, FileSpec, MaxSize, RecoveryModel, SizeUnit,
};

impl Display for CreateDatabase {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "CREATE DATABASE {}", self.name)?;
        if !self.files.is_empty() {
            write!(f, " ON {}", commas(&self.files))?;
        }
        if !self.log_files.is_empty() {
            write!(f, " LOG ON {}", commas(&self.log_files))?;
        }
        if let Some(collation) = &self.collation {
            write!(f, " COLLATE {collation}")?;
        }
        Ok(())
    }
}

impl Display for FileSpec {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let mut properties = Vec::new();
        if let Some(name) = &self.logical_name {
            properties.push(format!("NAME = {name}"));
        }
        if let Some(filename) = &self.filename {
            properties.push(format!("FILENAME = {}", quote(filename)));
        }
        if let Some(size) = &self.size {
            properties.push(format!("SIZE = {size}"));
        }
        match &self.max_size {
            Some(MaxSize::Size(size)) => properties.push(format!("MAXSIZE = {size}")),
            Some(MaxSize::Unlimited) => properties.push("MAXSIZE = UNLIMITED".to_owned()),
            None => {}
        }
        match &self.growth {
            Some(FileGrowth::Size(size)) => properties.push(format!("FILEGROWTH = {size}")),
            Some(FileGrowth::Percent(percent)) => {
                properties.push(format!("FILEGROWTH = {percent}%"))
            }
            None => {}
        }
        write!(f, "({})", commas(&properties))
    }
}

impl Display for FileSize {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let unit = match self.unit {
            SizeUnit::Kilobytes => "KB",
            SizeUnit::Megabytes => "MB",
            SizeUnit::Gigabytes => "GB",
            SizeUnit::Terabytes => "TB",
        };
        write!(f, "{}{unit}", self.amount)
    }
}

impl Display for AlterDatabase {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str("ALTER DATABASE ")?;
        match &self.database {
            DatabaseRef::Name(name) => write!(f, "{name}")?,
            DatabaseRef::Current => f.write_str("CURRENT")?,
        }
        match &self.file {
            Some(DatabaseFileChange::Modify(spec)) => return write!(f, " MODIFY FILE {spec}"),
            Some(DatabaseFileChange::Add { log, files }) => {
                let log = if *log { "LOG " } else { "" };
                return write!(f, " ADD {log}FILE {}", commas(files));
            }
            Some(DatabaseFileChange::Remove(name)) => return write!(f, " REMOVE FILE {name}"),
            None => {}
        }
        if let Some(collation) = &self.collation {
            return write!(f, " COLLATE {collation}");
        }
        f.write_str(" SET ")?;
        for (i, option) in self.options.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let text = match option {
                DatabaseOption::DelayedDurability(DelayedDurability::Disabled) => {
                    "DELAYED_DURABILITY = DISABLED"
                }
                DatabaseOption::DelayedDurability(DelayedDurability::Allowed) => {
                    "DELAYED_DURABILITY = ALLOWED"
                }
                DatabaseOption::DelayedDurability(DelayedDurability::Forced) => {
                    "DELAYED_DURABILITY = FORCED"
                }
                DatabaseOption::Recovery(RecoveryModel::Simple) => "RECOVERY SIMPLE",
                DatabaseOption::Recovery(RecoveryModel::Full) => "RECOVERY FULL",
                DatabaseOption::Recovery(RecoveryModel::BulkLogged) => "RECOVERY BULK_LOGGED",
                DatabaseOption::Accepted(text) => text.as_str(),
                DatabaseOption::Online => "ONLINE",
                DatabaseOption::Offline => "OFFLINE",
                DatabaseOption::ReadOnly(true) => "READ_ONLY",
                DatabaseOption::ReadOnly(false) => "READ_WRITE",
            };
            f.write_str(text)?;
        }
        if let Some(termination) = &self.termination {
            write!(f, " WITH {termination}")?;
        }
        Ok(())
    }
}
