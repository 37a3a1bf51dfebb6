//! `CREATE SEQUENCE` and `ALTER SEQUENCE`: a sequence's options checked as SQL Server checks
//! them, with its numbers, and handed to the engine, which keeps the values (`objects/caches.rs`
//! of `walden-engine`).

use walden_engine::catalog::{Object, SequenceDef};
use walden_engine::types::SqlType;

use crate::ast::{ObjectName, SequenceOption};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The cache SQL Server gives a sequence created without a size.
const DEFAULT_CACHE: u32 = 50;

/// What a CREATE or ALTER SEQUENCE statement's options say, each None where not written
/// (`Some(None)` for `NO MINVALUE`, `NO MAXVALUE` and a RESTART without a value).
#[derive(Default)]
struct Written {
    ty: Option<SqlType>,
    start: Option<i128>,
    increment: Option<i128>,
    min: Option<Option<i128>>,
    max: Option<Option<i128>>,
    cycle: Option<bool>,
    cache: Option<Option<u32>>,
    restart: Option<Option<i128>>,
}

impl Run<'_> {
    /// `CREATE SEQUENCE`: a BIGINT from the type's smallest value by 1, cached 50 at a time,
    /// unless its options say otherwise.
    pub(super) fn create_sequence(
        &mut self,
        name: &ObjectName,
        options: &[SequenceOption],
    ) -> Result<(), SqlError> {
        let db = self.database_of(name.database.as_ref())?;
        let w = self.written(options)?;
        let shown = &name.name.value;
        if w.restart.is_some() {
            return Err(SqlError::catalogued(11709, &[]));
        }
        let ty = w.ty.unwrap_or(SqlType::BigInt);
        let (type_min, type_max) = bounds(ty)?;
        let increment = nonzero(w.increment.unwrap_or(1), shown)?;
        let min = w.min.flatten().unwrap_or(type_min);
        let max = w.max.flatten().unwrap_or(type_max);
        let start = w.start.unwrap_or(if increment > 0 { min } else { max });
        let def = SequenceDef {
            id: 0,
            schema: name.schema.as_ref().map_or("dbo", |s| s.value.as_str()).to_string(),
            name: shown.clone(),
            ty,
            start,
            increment,
            min,
            max,
            cycle: w.cycle.unwrap_or(false),
            cache: w.cache.unwrap_or(Some(DEFAULT_CACHE)),
            high_water: None,
        };
        check_bounds(&def)?;
        check_within(&def, start)?;
        self.tx().create_sequence(&db, def).map_err(|e| self.s.engine_error(e))?;
        Ok(())
    }

    /// `ALTER SEQUENCE`: the options written replace the sequence's; the others stay. `RESTART
    /// [WITH n]` makes the next value n (which becomes the start value) or the start value;
    /// without it the sequence goes on after its last value. AS and START WITH may not be
    /// altered (11711, 11710), as in SQL Server.
    pub(super) fn alter_sequence(
        &mut self,
        name: &ObjectName,
        options: &[SequenceOption],
    ) -> Result<(), SqlError> {
        let db = self.database_of(name.database.as_ref())?;
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let shown = &name.name.value;
        let found = db.find_object(schema, shown);
        let Some(Object::Sequence(current)) = found.as_deref() else {
            return Err(SqlError::catalogued(15151, &["alter", "sequence", shown]));
        };
        let w = self.written(options)?;
        if w.ty.is_some() {
            return Err(SqlError::catalogued(11711, &[]));
        }
        if w.start.is_some() {
            return Err(SqlError::catalogued(11710, &[]));
        }
        let (type_min, type_max) = bounds(current.ty)?;
        let mut def = current.clone();
        def.increment = nonzero(w.increment.unwrap_or(def.increment), shown)?;
        if let Some(min) = w.min {
            def.min = min.unwrap_or(type_min);
        }
        if let Some(max) = w.max {
            def.max = max.unwrap_or(type_max);
        }
        def.cycle = w.cycle.unwrap_or(def.cycle);
        def.cache = w.cache.unwrap_or(def.cache);
        if let Some(Some(value)) = w.restart {
            def.start = value;
        }
        // The value the sequence restarts at, or the last it gave, must lie within its range.
        check_bounds(&def)?;
        match (w.restart, db.sequence_current(current)) {
            (None, Some(last)) if last < def.min || last > def.max => {
                check_within(&def, def.start)?;
                return Err(SqlError::catalogued(11704, &[&last.to_string(), shown]));
            }
            (None, Some(_)) => {}
            _ => check_within(&def, def.start)?,
        }
        self.tx()
            .alter_sequence(&db, def, w.restart.is_some())
            .map_err(|e| self.s.engine_error(e))?;
        Ok(())
    }

    /// The options of a CREATE or ALTER SEQUENCE statement, their values evaluated.
    fn written(&mut self, options: &[SequenceOption]) -> Result<Written, SqlError> {
        let mut w = Written::default();
        for o in options {
            match o {
                SequenceOption::DataType(d) => w.ty = Some(scalar::data_type(d)?),
                SequenceOption::StartWith(e) => w.start = Some(self.number_constant(e)?),
                SequenceOption::IncrementBy(e) => w.increment = Some(self.number_constant(e)?),
                SequenceOption::MinValue(e) => w.min = Some(self.optional_number(e.as_ref())?),
                SequenceOption::MaxValue(e) => w.max = Some(self.optional_number(e.as_ref())?),
                SequenceOption::Cycle(c) => w.cycle = Some(*c),
                SequenceOption::Cache(e) => {
                    let size = match e {
                        Some(e) => {
                            u32::try_from(self.number_constant(e)?.max(1)).unwrap_or(u32::MAX)
                        }
                        None => DEFAULT_CACHE,
                    };
                    w.cache = Some(Some(size));
                }
                SequenceOption::NoCache => w.cache = Some(None),
                SequenceOption::Restart(e) => w.restart = Some(self.optional_number(e.as_ref())?),
            }
        }
        Ok(w)
    }

    fn optional_number(&mut self, e: Option<&crate::ast::Expr>) -> Result<Option<i128>, SqlError> {
        e.map(|e| self.number_constant(e)).transpose()
    }
}

/// The smallest and largest values of a sequence type: an integer type, or a DECIMAL or
/// NUMERIC of scale 0 (11702 for any other).
fn bounds(ty: SqlType) -> Result<(i128, i128), SqlError> {
    Ok(match ty {
        SqlType::TinyInt => (0, 255),
        SqlType::SmallInt => (i16::MIN.into(), i16::MAX.into()),
        SqlType::Int => (i32::MIN.into(), i32::MAX.into()),
        SqlType::BigInt => (i64::MIN.into(), i64::MAX.into()),
        SqlType::Decimal { precision, scale: 0 } => {
            let m = 10i128.pow(u32::from(precision)) - 1;
            (-m, m)
        }
        _ => return Err(SqlError::catalogued(11702, &[])),
    })
}

/// Error 11700 for an increment of 0.
fn nonzero(increment: i128, name: &str) -> Result<i128, SqlError> {
    if increment == 0 {
        return Err(SqlError::catalogued(11700, &[name]));
    }
    Ok(increment)
}

/// Error 11705 for a minimum not below the maximum.
fn check_bounds(def: &SequenceDef) -> Result<(), SqlError> {
    if def.min >= def.max {
        return Err(SqlError::catalogued(11705, &[&def.name]));
    }
    Ok(())
}

/// Error 11703 for `value`, the start or restart value, outside the minimum and maximum.
fn check_within(def: &SequenceDef, value: i128) -> Result<(), SqlError> {
    if value < def.min || value > def.max {
        return Err(SqlError::catalogued(11703, &[&def.name]));
    }
    Ok(())
}
