//! Statistics objects (`walden_engine::statistics`): `CREATE STATISTICS`, `UPDATE
//! STATISTICS`, `DROP STATISTICS`, `sp_updatestats`, the automatic update of stale
//! statistics, their automatic creation on the columns the planner estimates
//! (`AUTO_CREATE_STATISTICS`), and what ALTER TABLE must respect (5074).
//!
//! Every index has statistics of the same id and name, built when the index is created on
//! a table with rows and otherwise at its first use once the table has some; `CREATE
//! STATISTICS` adds statistics on any columns. A statistics object is *stale* when its table
//! has had more modifications since it was built than SQL Server's threshold for its rows n,
//! `MIN(500 + 0.20 n, SQRT(1000 n))`. The planner asks for a table's statistics through
//! [`Run::current_statistics`], which rebuilds the stale ones first, as SQL Server's
//! synchronous auto-update does, unless the database has `AUTO_UPDATE_STATISTICS OFF` or the
//! object was made with `NORECOMPUTE`. That rebuild runs in a transaction of its own and
//! commits at once (SQL Server's auto-update is not part of the user's transaction either);
//! if another transaction is changing the same statistics it is skipped, never waited for.

use std::sync::Arc;

use walden_engine::catalog::{Object, TableDef};
use walden_engine::statistics::{Sampling, StatisticsDef};
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::{Database, Isolation};

use crate::ast::{Ident, ObjectName, StatisticsOptions, StatisticsSample, UpdateStatistics};
use crate::exec::execute::query::TableRef;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::sysviews::datetime;
use crate::exec::SqlError;

/// SQL Server's auto-update threshold for statistics built over `rows` rows.
pub(crate) fn stale_after(rows: u64) -> f64 {
    let n = rows as f64;
    (500.0 + 0.2 * n).min((1000.0 * n).sqrt())
}

/// A statistics object's definition as its table has it now: an index's take the index's
/// name and key columns, which ALTER TABLE and renames keep current.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) id: u32,
    pub(crate) name: String,
    pub(crate) columns: Vec<usize>,
    /// An index's statistics (neither auto- nor user-created).
    pub(crate) index: bool,
    /// Its entry, if it has been built or created.
    pub(crate) object: Option<Arc<StatisticsDef>>,
}

/// Every statistics object of `def`: its indexes' (a heap has none), then those CREATE
/// STATISTICS made, by id.
pub(crate) fn targets(db: &Database, def: &TableDef) -> Vec<Target> {
    let objects = db.statistics_of(def.id);
    let mut all: Vec<Target> = def
        .indexes
        .iter()
        .filter(|i| !i.is_heap())
        .map(|i| Target {
            id: u32::from(i.id),
            name: i.name.clone(),
            columns: i.columns.clone(),
            index: true,
            object: objects.iter().find(|s| s.id == u32::from(i.id)).cloned(),
        })
        .collect();
    for s in objects.iter().filter(|s| s.user_created || s.auto_created) {
        all.push(Target {
            id: s.id,
            name: s.name.clone(),
            columns: s.columns.iter().map(|&c| usize::from(c)).collect(),
            index: false,
            object: Some(Arc::clone(s)),
        });
    }
    all.sort_by_key(|t| t.id);
    all
}

/// Error 1913 for a name an index or statistics of the table has.
fn name_taken(name: &str, table: &str) -> SqlError {
    SqlError::new(
        1913,
        format!(
            "The operation failed because an index or statistics with name '{name}' already exists on table '{table}'."
        ),
    )
}

/// The engine's sampling for the WITH options, given the object's last.
fn sampling(options: &StatisticsOptions, last: Option<Sampling>) -> Sampling {
    if options.resample {
        return last.unwrap_or(Sampling::Default);
    }
    match options.sample {
        None => Sampling::Default,
        Some(StatisticsSample::FullScan) => Sampling::FullScan,
        Some(StatisticsSample::Percent(p)) => Sampling::Percent(p),
        Some(StatisticsSample::Rows(n)) => Sampling::Rows(n as u64),
    }
}

impl Run<'_> {
    /// `CREATE STATISTICS name ON table (columns) [WITH ...]`: built at once.
    pub(crate) fn create_statistics(
        &mut self,
        name: &Ident,
        table: &ObjectName,
        columns: &[Ident],
        options: &StatisticsOptions,
    ) -> Result<(), SqlError> {
        let t = self.resolve_table(table, &table.name.value)?;
        let mut positions = Vec::with_capacity(columns.len());
        for c in columns {
            let Some(i) = t.def.column(&c.value) else {
                return Err(SqlError::invalid_column(&c.value));
            };
            let ty = t.def.columns[i].ty;
            if !key_type(ty) {
                return Err(SqlError::new(
                    1978,
                    format!(
                        "Column '{}' in table '{}' is of a type that is invalid for use as a key column in an index or statistics.",
                        t.def.columns[i].name, t.def.name
                    ),
                ));
            }
            positions.push(i);
        }
        let taken = targets(&t.db, &t.def).iter().any(|s| s.name.eq_ignore_ascii_case(&name.value));
        if taken {
            return Err(name_taken(&name.value, &t.def.name));
        }
        let target = Target {
            id: t.db.next_statistics_id(&t.def),
            name: name.value.clone(),
            columns: positions,
            index: false,
            object: None,
        };
        self.build((&t.db, &t.def), &target, sampling(options, None), options.no_recompute, true)
    }

    /// `UPDATE STATISTICS table [name | (name, ...)] [WITH ...]`.
    pub(crate) fn update_statistics(&mut self, u: &UpdateStatistics) -> Result<(), SqlError> {
        let t = self.resolve_table(&u.table, &u.table.name.value)?;
        let all = targets(&t.db, &t.def);
        let mut chosen = Vec::new();
        if u.names.is_empty() {
            chosen = all
                .into_iter()
                .filter(|s| match u.options.only.as_deref() {
                    Some("INDEX") => s.index,
                    Some("COLUMNS") => !s.index,
                    _ => true,
                })
                .collect();
        } else {
            for n in &u.names {
                let Some(s) = all.iter().find(|s| s.name.eq_ignore_ascii_case(&n.value)) else {
                    return Err(SqlError::new(
                        2767,
                        format!(
                            "Could not locate statistics '{}' in the system catalogs.",
                            n.value
                        ),
                    ));
                };
                chosen.push(s.clone());
            }
        }
        for s in &chosen {
            let last = s.object.as_ref().map(|o| o.sampling);
            let user = s.object.as_ref().is_some_and(|o| o.user_created);
            // Without NORECOMPUTE an update turns automatic updates back on, as in SQL Server.
            self.build(
                (&t.db, &t.def),
                s,
                sampling(&u.options, last),
                u.options.no_recompute,
                user,
            )?;
        }
        Ok(())
    }

    /// Builds `target` of table `def` and writes it in the session's transaction.
    fn build(
        &mut self,
        (db, def): (&Arc<Database>, &TableDef),
        target: &Target,
        sampling: Sampling,
        no_recompute: bool,
        user_created: bool,
    ) -> Result<(), SqlError> {
        let stats = self.built(db, def, target, sampling, no_recompute, user_created)?;
        self.tx().put_statistics(db, stats).map_err(|e| self.s.engine_error(e))
    }

    /// `target` built from the rows of `def` now.
    fn built(
        &mut self,
        db: &Arc<Database>,
        def: &TableDef,
        target: &Target,
        sampling: Sampling,
        no_recompute: bool,
        user_created: bool,
    ) -> Result<StatisticsDef, SqlError> {
        let histogram = db
            .build_statistics(def, &target.columns, sampling)
            .map_err(|e| self.s.engine_error(e))?;
        Ok(definition(def, target, histogram, sampling, no_recompute, user_created))
    }

    /// Builds the statistics of index `index` of the table `def` just created on it (CREATE
    /// INDEX on a table with rows), as SQL Server does with the index.
    pub(crate) fn index_created(
        &mut self,
        db: &Arc<Database>,
        def: &TableDef,
        index: u16,
    ) -> Result<(), SqlError> {
        let Some(ix) = def.index(index) else { return Ok(()) };
        let target = Target {
            id: u32::from(index),
            name: ix.name.clone(),
            columns: ix.columns.clone(),
            index: true,
            object: None,
        };
        let stats = self.built(db, def, &target, Sampling::FullScan, false, false)?;
        self.tx().put_statistics(db, stats).map_err(|e| self.s.engine_error(e))
    }

    /// `DROP STATISTICS table.name`: 3739 for an index's statistics, 3701 for a name the
    /// table's statistics do not have (or a table that does not exist).
    pub(crate) fn drop_statistics(&mut self, name: &ObjectName) -> Result<(), SqlError> {
        let shown = crate::exec::execute::query::display_name(name);
        let missing = || {
            SqlError::new(
                3701,
                format!("Cannot drop the statistics '{shown}', because it does not exist or you do not have permission."),
            )
        };
        // The last part names the statistics, the parts before it the table.
        let Some(table_name) = name.schema.clone() else { return Err(missing()) };
        let table = ObjectName {
            server: None,
            database: None,
            schema: name.database.clone(),
            name: table_name,
        };
        let Ok((db, object)) = self.resolve_table_object(&table) else { return Err(missing()) };
        let Object::Table(def) = &*object else { return Err(missing()) };
        let stat = &name.name.value;
        if def.indexes.iter().any(|i| !i.is_heap() && i.name.eq_ignore_ascii_case(stat)) {
            return Err(SqlError::new(
                3739,
                format!(
                    "Cannot DROP the index '{}.{stat}' because it is not a statistics collection.",
                    def.name
                ),
            ));
        }
        let Some(target) =
            targets(&db, def).into_iter().find(|s| !s.index && s.name.eq_ignore_ascii_case(stat))
        else {
            return Err(missing());
        };
        self.tx().drop_statistics(&db, def.id, target.id).map_err(|e| self.s.engine_error(e))?;
        Ok(())
    }

    /// `sp_updatestats`: updates every statistics object of the current database's tables
    /// that has had modifications since it was built (or was never built), reporting each
    /// table as SQL Server does.
    pub(crate) fn sp_updatestats(&mut self) -> Result<(), SqlError> {
        let db = Arc::clone(&self.s.db);
        let tables = user_tables(&db);
        for def in tables {
            let (mut updated, mut skipped) = (0, 0);
            self.print(format!("Updating [{}].[{}]", def.schema, def.name));
            for target in targets(&db, &def) {
                let due = match &target.object {
                    Some(o) if o.histogram.is_some() => db.modifications_since(o) > 0,
                    _ => true,
                };
                if !due {
                    skipped += 1;
                    self.print(format!("    [{}], update is not necessary...", target.name));
                    continue;
                }
                let last = target.object.as_ref().map(|o| o.sampling);
                let keep = target.object.as_ref().is_some_and(|o| o.no_recompute);
                let user = target.object.as_ref().is_some_and(|o| o.user_created);
                let stats =
                    self.built(&db, &def, &target, last.unwrap_or(Sampling::Default), keep, user)?;
                self.tx().put_statistics(&db, stats).map_err(|e| self.s.engine_error(e))?;
                updated += 1;
                self.print(format!("    [{}] has been updated...", target.name));
            }
            self.print(format!(
                "    {updated} index(es)/statistic(s) have been updated, {skipped} did not require update."
            ));
            self.print(String::new());
        }
        self.print("Statistics for all tables have been updated.".into());
        Ok(())
    }

    /// `sp_createstats`: single-column statistics, named after the column, on every column
    /// of the current database's tables that no index or statistics object leads and whose
    /// type can be a key, as SQL Server's does with its default arguments.
    pub(crate) fn sp_createstats(&mut self) -> Result<(), SqlError> {
        let db = Arc::clone(&self.s.db);
        let tables = user_tables(&db);
        let mut created = 0;
        for def in tables {
            let mut header = false;
            for (c, column) in def.columns.iter().enumerate() {
                let existing = targets(&db, &def);
                let led = existing.iter().any(|s| s.columns.first() == Some(&c));
                let taken = existing.iter().any(|s| s.name.eq_ignore_ascii_case(&column.name));
                if led || taken || !key_type(column.ty) || column.computed.is_some() {
                    continue;
                }
                if !header {
                    self.print(format!(
                        "Table '{}.{}': Creating statistics for the following columns:",
                        def.schema, def.name
                    ));
                    header = true;
                }
                self.print(format!("     {}", column.name));
                let target = Target {
                    id: db.next_statistics_id(&def),
                    name: column.name.clone(),
                    columns: vec![c],
                    index: false,
                    object: None,
                };
                self.build((&db, &def), &target, Sampling::Default, false, true)?;
                created += 1;
            }
        }
        self.print(format!("Statistics have been created for the {created} indicated columns."));
        Ok(())
    }

    fn print(&mut self, text: String) {
        self.out.message(&SqlError::with_severity(0, 0, text));
    }

    /// The statistics objects of `t`, each stale one rebuilt first (see the module's
    /// documentation); objects never built are built once the table has rows.
    pub(crate) fn current_statistics(&mut self, t: &TableRef) -> Vec<Target> {
        let mut all = targets(&t.db, &t.def);
        if !t.db.auto_update_statistics() || t.db.is_read_only() || t.db.is_temp() {
            return all;
        }
        let stale: Vec<usize> = (0..all.len()).filter(|&i| self.is_stale(t, &all[i])).collect();
        // Those last built with the same sampling are rebuilt from one read of the table.
        let mut by_sampling: Vec<(Sampling, Vec<usize>)> = Vec::new();
        for i in stale {
            let last = all[i].object.as_ref().map_or(Sampling::Default, |o| o.sampling);
            match by_sampling.iter_mut().find(|(s, _)| *s == last) {
                Some((_, group)) => group.push(i),
                None => by_sampling.push((last, vec![i])),
            }
        }
        for (sampling, group) in by_sampling {
            let targets: Vec<Target> = group.iter().map(|&i| all[i].clone()).collect();
            for (i, rebuilt) in group.into_iter().zip(self.auto_build(t, &targets, sampling, false))
            {
                if let Some(rebuilt) = rebuilt {
                    all[i].object = Some(rebuilt);
                }
            }
        }
        all
    }

    /// `AUTO_CREATE_STATISTICS`: single-column statistics on each of the columns `columns`
    /// of `t` that the planner is about to estimate a predicate on and that no statistics
    /// object leads, named and sampled as SQL Server's (`_WA_Sys_<column_id>_<object_id>`,
    /// default sampling). Not where the database has it OFF or is read-only, nor on
    /// temporary tables (tempdb's statistics are not maintained automatically, as the
    /// automatic update does not), nor on a column whose type cannot be a key or that is
    /// computed, nor on an empty table (there is nothing to build from; the next query
    /// after rows arrive creates them). Each is built and committed in a transaction of
    /// its own, as an automatic update is, so a user's transaction neither holds nor rolls
    /// back them; one that cannot be made at once is skipped, and the planner guesses.
    pub(crate) fn auto_create_statistics(&mut self, t: &TableRef, columns: &[usize]) {
        if columns.is_empty()
            || !t.db.auto_create_statistics()
            || t.db.is_read_only()
            || t.db.is_temp()
        {
            return;
        }
        let existing = targets(&t.db, &t.def);
        let wanted: Vec<usize> = columns
            .iter()
            .copied()
            .filter(|&c| {
                // A leaf's columns past the table's are its row locators.
                let Some(column) = t.def.columns.get(c) else { return false };
                key_type(column.ty)
                    && column.computed.is_none()
                    && !existing.iter().any(|s| s.columns.first() == Some(&c))
            })
            .collect();
        if wanted.is_empty() || !self.has_rows(t) {
            return;
        }
        let mut ids = t.db.next_statistics_id(&t.def)..;
        let new: Vec<Target> = wanted
            .into_iter()
            .map(|c| Target {
                id: ids.next().unwrap_or(u32::MAX),
                name: auto_name(c, t.def.id),
                columns: vec![c],
                index: false,
                object: None,
            })
            .filter(|target| !existing.iter().any(|s| s.name.eq_ignore_ascii_case(&target.name)))
            .collect();
        let created = self.auto_build(t, &new, Sampling::Default, true).iter().any(Option::is_some);
        if created {
            // The session's cached statistics of the table do not have them.
            self.s.table_stats.remove(&(t.db.id(), t.def.id));
        }
    }

    /// Whether `target` needs an automatic update.
    fn is_stale(&self, t: &TableRef, target: &Target) -> bool {
        let built = target.object.as_ref().and_then(|o| o.histogram.as_ref().map(|h| (o, h)));
        let Some((object, histogram)) = built else {
            // Never built: built once the table has rows (a NORECOMPUTE object waits for
            // UPDATE STATISTICS, as in SQL Server).
            let no_recompute = target.object.as_ref().is_some_and(|o| o.no_recompute);
            return !no_recompute && self.has_rows(t);
        };
        if object.no_recompute {
            return false;
        }
        t.db.modifications_since(object) as f64 > stale_after(histogram.rows)
    }

    /// Whether the table has any row (one entry of its index 1).
    fn has_rows(&self, t: &TableRef) -> bool {
        t.def
            .primary()
            .is_ok_and(|p| t.db.space().tree(p.root).scan().next_entry().is_ok_and(|e| e.is_some()))
    }

    /// Builds `targets` of `t` (statistics an automatic update rebuilds, or with `create`
    /// new ones AUTO_CREATE_STATISTICS makes) with `sampling`, from one read of the table
    /// for all those no index leads, each written in a transaction of its own committed at
    /// once; per target, what was built, or None if it could not be (another transaction
    /// holds it, or the build failed: the planner then uses what there is).
    fn auto_build(
        &mut self,
        t: &TableRef,
        targets: &[Target],
        sampling: Sampling,
        create: bool,
    ) -> Vec<Option<Arc<StatisticsDef>>> {
        let mut locked = Vec::new();
        for (i, target) in targets.iter().enumerate() {
            let mut tx =
                self.s.instance.begin_in_session(self.s.spid, Isolation::ReadCommitted, None);
            if tx.try_lock_statistics(&t.db, t.def.id, target.id).is_ok() {
                locked.push((i, tx));
            } else {
                let _ = tx.rollback();
            }
        }
        let mut built = vec![None; targets.len()];
        if locked.is_empty() {
            return built;
        }
        let sets: Vec<&[usize]> = locked.iter().map(|(i, _)| &targets[*i].columns[..]).collect();
        let histograms = match t.db.build_statistics_together(&t.def, &sets, sampling) {
            Ok(histograms) => histograms,
            Err(_) => {
                for (_, tx) in locked {
                    let _ = tx.rollback();
                }
                return built;
            }
        };
        for ((i, mut tx), histogram) in locked.into_iter().zip(histograms) {
            let target = &targets[i];
            let user = target.object.as_ref().is_some_and(|o| o.user_created);
            let mut def = definition(&t.def, target, histogram, sampling, false, user);
            def.auto_created |= create;
            let (table, id) = (def.table, def.id);
            if tx.put_statistics(&t.db, def).is_err() {
                let _ = tx.rollback();
                continue;
            }
            if tx.commit(Default::default()).is_ok() {
                built[i] = t.db.statistics_object(table, id);
            }
        }
        built
    }

    /// `ALTER DATABASE name SET AUTO_CREATE_STATISTICS | AUTO_UPDATE_STATISTICS ON | OFF`
    /// (`text` as the parser keeps it), persisted in the database's catalog in a
    /// transaction of its own; None for any other option.
    pub(crate) fn statistics_option(
        &mut self,
        name: &str,
        text: &str,
    ) -> Option<Result<(), walden_engine::EngineError>> {
        let (option, value) = text.split_once(' ')?;
        let on = value == "ON";
        let set = |db: &Database| match option {
            "AUTO_CREATE_STATISTICS" => Some((on, db.auto_update_statistics())),
            "AUTO_UPDATE_STATISTICS" => Some((db.auto_create_statistics(), on)),
            _ => None,
        };
        let db = match self.s.instance.database(name) {
            Ok(db) => db,
            Err(e) => return set(&self.s.db).map(|_| Err(e)),
        };
        let (auto_create, auto_update) = set(&db)?;
        let mut tx = self.s.instance.begin_in_session(self.s.spid, Isolation::ReadCommitted, None);
        Some(match tx.set_statistics_options(&db, auto_create, auto_update) {
            Ok(()) => tx.commit(Default::default()).map(|_| ()),
            Err(e) => {
                let _ = tx.rollback();
                Err(e)
            }
        })
    }

    /// `STATS_DATE(object_id, stats_id)`: when statistics `stats_id` of table `object_id` in
    /// the current database were last built; NULL if never, or if there is no such object.
    pub(crate) fn stats_date(&self, args: &[Value]) -> Value {
        let id = |v: Option<&Value>| match scalar::convert(v?.clone(), SqlType::Int, None) {
            Ok(Value::Int(i)) => u32::try_from(i).ok(),
            _ => None,
        };
        let (Some(table), Some(stats)) = (id(args.first()), id(args.get(1))) else {
            return Value::Null;
        };
        self.s
            .db
            .statistics_object(table, stats)
            .and_then(|s| s.histogram.as_ref().map(|h| datetime(h.updated_micros)))
            .unwrap_or(Value::Null)
    }

    /// The 5074 errors for the statistics CREATE STATISTICS made on column `c` of `def`,
    /// which ALTER TABLE DROP COLUMN and ALTER COLUMN refuse to change under them (an
    /// index's statistics are reported as the index). Auto-created statistics do not
    /// count: SQL Server drops them silently (`auto_statistics_dropped`).
    pub(crate) fn statistics_on_column(
        &self,
        db: &Database,
        def: &TableDef,
        c: usize,
    ) -> Vec<SqlError> {
        let column = &def.columns[c].name;
        targets(db, def)
            .into_iter()
            .filter(|s| !s.index && s.columns.contains(&c))
            .filter(|s| !s.object.as_ref().is_some_and(|o| o.auto_created))
            .map(|s| {
                SqlError::new(
                    5074,
                    format!("The statistics '{}' is dependent on column '{column}'.", s.name),
                )
            })
            .collect()
    }

    /// ALTER TABLE is dropping the indexes of `old` that `new` no longer has (with their
    /// constraints): their statistics go with them, in the ALTER's transaction.
    pub(crate) fn statistics_indexes_dropped(
        &mut self,
        db: &Arc<Database>,
        old: &TableDef,
        new: &TableDef,
    ) -> Result<(), SqlError> {
        let kept = |id: u16| new.index(id).is_some_and(|i| !i.is_heap());
        for index in old.indexes.iter().filter(|i| !i.is_heap() && !kept(i.id)) {
            self.tx()
                .drop_statistics(db, old.id, u32::from(index.id))
                .map_err(|e| self.s.engine_error(e))?;
        }
        Ok(())
    }

    /// ALTER COLUMN is changing column `c` of `def`: the auto-created statistics on it are
    /// dropped in the ALTER's transaction, as SQL Server drops them (the next query that
    /// estimates the column creates them again).
    pub(crate) fn auto_statistics_dropped(
        &mut self,
        db: &Arc<Database>,
        def: &TableDef,
        c: u16,
    ) -> Result<(), SqlError> {
        for s in db.statistics_of(def.id) {
            if s.auto_created && s.columns.contains(&c) {
                self.tx().drop_statistics(db, def.id, s.id).map_err(|e| self.s.engine_error(e))?;
            }
        }
        Ok(())
    }

    /// After ALTER TABLE dropped the columns at positions `dropped` (of the old definition,
    /// none under a statistics object but auto-created ones, which are dropped): the later
    /// columns moved down, and so do the positions the statistics objects of table `table`
    /// name.
    pub(crate) fn statistics_columns_dropped(
        &mut self,
        db: &Arc<Database>,
        table: u32,
        dropped: &[usize],
    ) -> Result<(), SqlError> {
        for s in db.statistics_of(table) {
            if !(s.user_created || s.auto_created) {
                continue;
            }
            if s.auto_created && s.columns.iter().any(|&c| dropped.contains(&usize::from(c))) {
                // Auto-created statistics go with their column, silently.
                self.tx().drop_statistics(db, table, s.id).map_err(|e| self.s.engine_error(e))?;
                continue;
            }
            let columns: Vec<u16> = s
                .columns
                .iter()
                .map(|&c| c - dropped.iter().filter(|&&d| d < usize::from(c)).count() as u16)
                .collect();
            if columns != s.columns {
                let moved = StatisticsDef { columns, ..StatisticsDef::clone(&s) };
                self.tx().put_statistics(db, moved).map_err(|e| self.s.engine_error(e))?;
            }
        }
        Ok(())
    }
}

/// The statistics object `target` of `def` with `histogram`, as a build writes it.
fn definition(
    def: &TableDef,
    target: &Target,
    histogram: walden_engine::statistics::Histogram,
    sampling: Sampling,
    no_recompute: bool,
    user_created: bool,
) -> StatisticsDef {
    StatisticsDef {
        table: def.id,
        table_created: def.created_micros,
        id: target.id,
        name: target.name.clone(),
        columns: target.columns.iter().map(|&c| c as u16).collect(),
        auto_created: target.object.as_ref().is_some_and(|o| o.auto_created),
        user_created,
        no_recompute,
        sampling,
        histogram: Some(Arc::new(histogram)),
    }
}

/// SQL Server's name for the statistics it creates on column position `column` of table
/// `table`: `_WA_Sys_`, the column_id and the object_id in eight uppercase hex digits each.
fn auto_name(column: usize, table: u32) -> String {
    format!("_WA_Sys_{:08X}_{table:08X}", column + 1)
}

/// Whether a column of type `ty` can be a statistics (or index) key.
fn key_type(ty: SqlType) -> bool {
    !matches!(
        ty,
        SqlType::Xml
            | SqlType::Variant
            | SqlType::VarChar(Len::Max)
            | SqlType::NVarChar(Len::Max)
            | SqlType::VarBinary(Len::Max)
    )
}

/// The database's tables other than temporary ones, by schema and name: what
/// `sp_updatestats` and `sp_createstats` walk.
fn user_tables(db: &Database) -> Vec<Arc<TableDef>> {
    let mut tables: Vec<Arc<TableDef>> = db
        .catalog()
        .objects()
        .iter()
        .filter_map(|o| match &**o {
            Object::Table(t) if !t.name.starts_with('#') => Some(Arc::clone(t)),
            _ => None,
        })
        .collect();
    tables.sort_by(|a, b| (&a.schema, &a.name).cmp(&(&b.schema, &b.name)));
    tables
}
