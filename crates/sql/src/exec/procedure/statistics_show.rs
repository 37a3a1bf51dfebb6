//! `DBCC SHOW_STATISTICS (table, target) [WITH [NO_INFOMSGS,] STAT_HEADER | DENSITY_VECTOR
//! | HISTOGRAM, ...]`: a statistics object's header, density vector and histogram as SQL
//! Server's three result sets, with its column names. The target is an index's or a
//! statistics object's name (2767 if the table has neither).

use walden_engine::catalog::{Object, TableDef};
use walden_engine::statistics::Histogram;
use walden_engine::types::{Len, SqlType, Value};

use crate::ast::{Dbcc, DbccArgument, ExprKind, Literal};
use crate::exec::execute::query::display_name;
use crate::exec::plan::statistics_objects::{targets, Target};
use crate::exec::procedure::dbcc::{incorrect, no_such_table, table_argument};
use crate::exec::session::Run;
use crate::exec::sysviews::datetime;
use crate::exec::{ColumnInfo, SqlError};

/// The result sets asked for: header, density vector, histogram.
struct Sets {
    header: bool,
    density: bool,
    histogram: bool,
}

impl Run<'_> {
    /// Runs `DBCC SHOW_STATISTICS`; answers whether informational messages are wanted.
    pub(crate) fn dbcc_show_statistics(&mut self, d: &Dbcc) -> Result<bool, SqlError> {
        let mut infomsgs = true;
        let mut sets = Sets { header: false, density: false, histogram: false };
        for option in &d.options {
            match option.value.to_ascii_uppercase().as_str() {
                "NO_INFOMSGS" => infomsgs = false,
                "STAT_HEADER" => sets.header = true,
                "DENSITY_VECTOR" => sets.density = true,
                "HISTOGRAM" => sets.histogram = true,
                _ => return Err(incorrect()),
            }
        }
        if !(sets.header || sets.density || sets.histogram) {
            sets = Sets { header: true, density: true, histogram: true };
        }
        let [table, target] = &d.arguments[..] else { return Err(incorrect()) };
        let name = table_argument(table)?;
        let shown = display_name(&name);
        let (db, object) = self.resolve_table_object(&name).map_err(|_| no_such_table(&shown))?;
        let Object::Table(def) = &*object else { return Err(no_such_table(&shown)) };
        let wanted = match target {
            DbccArgument::Name(n) => n.name.value.clone(),
            DbccArgument::Value(e) => match &e.kind {
                ExprKind::Literal(Literal::String { value, .. }) => value.clone(),
                _ => return Err(incorrect()),
            },
        };
        let Some(stats) =
            targets(&db, def).into_iter().find(|s| s.name.eq_ignore_ascii_case(&wanted))
        else {
            return Err(SqlError::new(
                2767,
                format!("Could not locate statistics '{wanted}' in the system catalogs."),
            ));
        };
        let histogram = stats.object.as_ref().and_then(|o| o.histogram.as_deref());
        if sets.header {
            self.show_header(def, &stats, histogram);
        }
        if sets.density {
            self.show_density(def, &stats, histogram);
        }
        if sets.histogram {
            self.show_histogram(def, &stats, histogram);
        }
        Ok(infomsgs)
    }

    /// The header: one row (NULLs for statistics never built).
    fn show_header(&mut self, def: &TableDef, s: &Target, h: Option<&Histogram>) {
        let columns = [
            column("Name", SqlType::NVarChar(Len::N(128))),
            column("Updated", SqlType::DateTime),
            column("Rows", SqlType::BigInt),
            column("Rows Sampled", SqlType::BigInt),
            column("Steps", SqlType::SmallInt),
            column("Density", SqlType::Real),
            column("Average key length", SqlType::Real),
            column("String Index", SqlType::NVarChar(Len::N(3))),
            column("Filter Expression", SqlType::NVarChar(Len::Max)),
            column("Unfiltered Rows", SqlType::BigInt),
            column("Persisted Sample Percent", SqlType::Float),
        ];
        self.out.result_set(&columns);
        let text = s.columns.first().is_some_and(|&c| def.columns[c].ty.is_text());
        let row = match h {
            Some(h) => {
                // SQL Server's header density: 1 / the distinct values that are not step
                // bounds (the optimizer does not use it).
                let inner: f64 = h.steps.iter().map(|s| s.distinct_range_rows).sum();
                let density = if inner > 0.0 { 1.0 / inner } else { 0.0 };
                vec![
                    Value::NStr(s.name.clone()),
                    datetime(h.updated_micros),
                    big(h.rows),
                    big(h.rows_sampled),
                    Value::SmallInt(h.steps.len() as i16),
                    Value::Real(density as f32),
                    Value::Real(h.avg_length.last().copied().unwrap_or(0.0) as f32),
                    Value::NStr(if text { "YES" } else { "NO" }.into()),
                    Value::Null,
                    big(h.rows),
                    Value::Float(0.0),
                ]
            }
            None => {
                let mut row = vec![Value::NStr(s.name.clone())];
                row.resize(columns.len(), Value::Null);
                row
            }
        };
        self.out.row(&row);
        self.out.result_end(1);
    }

    /// The density vector: one row per prefix of the columns.
    fn show_density(&mut self, def: &TableDef, s: &Target, h: Option<&Histogram>) {
        self.out.result_set(&[
            column("All density", SqlType::Real),
            column("Average Length", SqlType::Real),
            column("Columns", SqlType::NVarChar(Len::N(4000))),
        ]);
        let mut n = 0;
        if let Some(h) = h {
            for (k, (density, length)) in h.density.iter().zip(&h.avg_length).enumerate() {
                let names: Vec<&str> =
                    s.columns.iter().take(k + 1).map(|&c| def.columns[c].name.as_str()).collect();
                self.out.row(&[
                    Value::Real(*density as f32),
                    Value::Real(*length as f32),
                    Value::NStr(names.join(", ")),
                ]);
                n += 1;
            }
        }
        self.out.result_end(n);
    }

    /// The histogram: one row per step.
    fn show_histogram(&mut self, def: &TableDef, s: &Target, h: Option<&Histogram>) {
        let key_type = h.map_or_else(
            || s.columns.first().map_or(SqlType::Int, |&c| def.columns[c].ty),
            |h| h.key_type,
        );
        self.out.result_set(&[
            ColumnInfo {
                name: "RANGE_HI_KEY".into(),
                ty: key_type,
                nullable: true,
                collation: None,
                declared: None,
            },
            column("RANGE_ROWS", SqlType::Real),
            column("EQ_ROWS", SqlType::Real),
            column("DISTINCT_RANGE_ROWS", SqlType::BigInt),
            column("AVG_RANGE_ROWS", SqlType::Real),
        ]);
        let mut n = 0;
        for step in h.map_or(&[][..], |h| &h.steps) {
            let avg = if step.distinct_range_rows > 0.0 {
                step.range_rows / step.distinct_range_rows
            } else {
                1.0
            };
            self.out.row(&[
                step.value.clone(),
                Value::Real(step.range_rows as f32),
                Value::Real(step.eq_rows as f32),
                Value::BigInt(step.distinct_range_rows.round() as i64),
                Value::Real(avg as f32),
            ]);
            n += 1;
        }
        self.out.result_end(n);
    }
}

fn column(name: &str, ty: SqlType) -> ColumnInfo {
    ColumnInfo { name: name.into(), ty, nullable: true, collation: None, declared: None }
}

fn big(v: u64) -> Value {
    Value::BigInt(i64::try_from(v).unwrap_or(i64::MAX))
}
