//! `INSERT ... SELECT` whose rows go into the table as the source makes them.
//!
//! A source query that can stream (`plan/join/stream.rs`: one source read row by row, or a
//! join whose last step makes its rows one at a time) gives each row to the INSERT's
//! [`Inserter`] before it reads the next, so the statement holds no copy of its source and
//! memory stays flat however many rows it inserts. Every semantic of the collected source
//! stays: the select list's width is checked (213, 120) before any row is read; identity,
//! defaults, constraints, `IGNORE_DUP_KEY`, OUTPUT and the triggers' `inserted` rows are the
//! inserter's, as for a collected source; an error stops the read, and the statement's
//! rollback undoes the rows inserted before it; `TOP (n)` ends the read.
//!
//! The exception is a source that may read the target (the Halloween problem): a scan of
//! the table being filled would meet the rows the statement has just inserted and insert
//! them again. SQL Server puts an eager spool between such a read and the insert; Walden
//! collects such a source first, which is the same protection. [`Run::may_stream_into`]
//! tells the two apart from the statement's text, erring on the side of collecting: any
//! mention of the target's name, of a view or function whose text may (followed through
//! the modules it names), counts as a read of the target.

use std::collections::HashSet;
use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::types::Value;

use super::insert::{select_count_mismatch, Inserter};
use crate::ast::{Insert, Query, QueryBody, TableTarget};
use crate::exec::execute::query::TableRef;
use crate::exec::output::ColumnInfo;
use crate::exec::plan::join::Destination;
use crate::exec::session::{Run, Step};
use crate::exec::SqlError;

/// How many module definitions deep [`Run::may_stream_into`] follows the names in a
/// source's text; a deeper chain counts as reading the target.
const MODULE_DEPTH: usize = 8;

/// A streamed source's rows going into an INSERT's table.
struct IntoTable<'i, 'a, 'c> {
    inserter: &'i mut Inserter<'a, 'c>,
    /// Whether the INSERT has no column list (error 213 rather than 120).
    no_list: bool,
}

impl Destination for IntoTable<'_, '_, '_> {
    /// Each value is converted to its column's type by the inserter.
    fn typed(&self) -> bool {
        false
    }

    fn begin(&mut self, _: &mut Run<'_>, columns: &[ColumnInfo]) -> Result<(), SqlError> {
        if columns.len() != self.inserter.width() {
            return Err(select_count_mismatch(self.no_list));
        }
        Ok(())
    }

    fn row(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<(), SqlError> {
        self.inserter.row(run, row.into_iter().map(Some).collect())
    }

    fn end(&mut self, _: &mut Run<'_>, _: u64) {}
}

/// The words of a statement's text, as names are split from it (`@`, `#` and `$` are parts
/// of a name).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$')))
        .filter(|w| !w.is_empty())
}

impl Run<'_> {
    /// Whether `i`, an INSERT of query `q` into `t`, may take the query's rows as they come:
    /// not under FMTONLY (which reads nothing), and not when the query (or a CTE of the
    /// statement) may read `t` (see the module's documentation).
    pub(crate) fn may_stream_into(&self, i: &Insert, q: &Query, t: &TableRef) -> bool {
        // Under FMTONLY nothing is read; a source without FROM is one row, not worth the
        // check below.
        let one_row = matches!(&q.body, QueryBody::Select(sel) if sel.from.is_empty());
        if self.s.opts.fmtonly || one_row {
            return false;
        }
        let mut names = vec![t.def.name.clone()];
        match &i.target {
            TableTarget::Table(name) => names.push(name.name.value.clone()),
            TableTarget::Variable(v) => names.push(v.clone()),
        }
        let mut text = q.to_string();
        for cte in &i.ctes {
            text.push(' ');
            text.push_str(&cte.query.to_string());
        }
        let mut seen = HashSet::new();
        !self.text_may_read(&text, &names, &t.db, MODULE_DEPTH, &mut seen)
    }

    /// Whether `text` names one of `names` (the target's), or a view or function (of the
    /// session's database, the target's, `target_db`, or one the text names) whose
    /// definition may read the target, followed `depth` modules deep. `seen` holds the
    /// modules already followed.
    fn text_may_read(
        &self,
        text: &str,
        names: &[String],
        target_db: &Arc<walden_engine::Database>,
        depth: usize,
        seen: &mut HashSet<(String, u32)>,
    ) -> bool {
        let words: HashSet<String> = words(text).map(str::to_lowercase).collect();
        if words.iter().any(|w| names.iter().any(|n| n.eq_ignore_ascii_case(w))) {
            return true;
        }
        let mut dbs = vec![Arc::clone(&self.s.db), Arc::clone(target_db)];
        for w in &words {
            if let Ok(db) = self.s.instance.database(w) {
                dbs.push(db);
            }
        }
        // The schemas a module's name may be qualified with: the usual ones, and any the
        // text names.
        let mut schemas: Vec<String> = vec!["dbo".into(), "sys".into()];
        for db in &dbs {
            for w in &words {
                if matches!(db.find_object("", w).as_deref(), Some(Object::Schema(_))) {
                    schemas.push(w.clone());
                }
            }
        }
        let mut modules = Vec::new();
        for db in &dbs {
            for w in &words {
                for schema in &schemas {
                    let Some(o) = db.find_object(schema, w) else { continue };
                    if let Some(body) = o.module_text() {
                        if seen.insert((db.name().to_lowercase(), o.id())) {
                            modules.push(body.to_string());
                        }
                    }
                }
            }
        }
        modules
            .iter()
            .any(|body| depth == 0 || self.text_may_read(body, names, target_db, depth - 1, seen))
    }

    /// The rows of `q` into `inserter`, at most `limit` of them: given as the query makes
    /// them where it can stream, else collected first and then inserted.
    pub(crate) fn insert_streamed(
        &mut self,
        i: &Insert,
        q: &Query,
        limit: usize,
        inserter: &mut Inserter<'_, '_>,
    ) -> Step<()> {
        let no_list = i.columns.is_empty();
        let mut into = IntoTable { inserter, no_list };
        if self.stream_into(q, limit, &mut into)?.is_some() {
            return Ok(());
        }
        let width = into.inserter.width();
        let source = self.insert_source(i, width)?;
        for row in source.into_iter().take(limit) {
            into.inserter.row(self, row)?;
        }
        Ok(())
    }
}
