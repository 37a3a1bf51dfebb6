//! `CREATE STATISTICS` and `DROP STATISTICS`. Walden samples its statistics when it plans a
//! query (`docs/query-processing.md`) and builds no statistics object, so CREATE STATISTICS
//! checks the table (208) and its columns (207) and records only the name, which `sys.stats`
//! does not list; DROP STATISTICS forgets a name CREATE STATISTICS recorded. The names are
//! kept in memory (`Database::note_statistics`): after a restart they are forgotten, and a
//! DROP STATISTICS of one is 3701 as for a name never created.

use walden_engine::catalog::Object;

use crate::ast::{Ident, ObjectName};
use crate::exec::session::Run;
use crate::exec::SqlError;

impl Run<'_> {
    /// `CREATE STATISTICS name ON table (columns)`: 1913 for a name an index or other
    /// statistics of the table has.
    pub(crate) fn create_statistics(
        &mut self,
        name: &Ident,
        table: &ObjectName,
        columns: &[Ident],
    ) -> Result<(), SqlError> {
        let t = self.resolve_table(table, &table.name.value)?;
        for c in columns {
            if t.def.column(&c.value).is_none() {
                return Err(SqlError::invalid_column(&c.value));
            }
        }
        let taken = t.def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(&name.value));
        if taken || !t.db.note_statistics(t.def.id, &name.value) {
            return Err(SqlError::new(
                1913,
                format!(
                    "The operation failed because an index or statistics with name '{}' already exists on table '{}'.",
                    name.value, t.def.name
                ),
            ));
        }
        Ok(())
    }

    /// `DROP STATISTICS table.name`: 3739 for an index's statistics, 3701 for a name that
    /// CREATE STATISTICS did not give (or a table that does not exist).
    pub(crate) fn drop_statistics(&mut self, name: &ObjectName) -> Result<(), SqlError> {
        let shown = crate::exec::query::display_name(name);
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
        if !db.forget_statistics(def.id, stat) {
            return Err(missing());
        }
        Ok(())
    }
}
