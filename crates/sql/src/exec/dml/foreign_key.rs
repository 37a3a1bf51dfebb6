//! FOREIGN KEY constraints: declaring them (`CREATE TABLE`, `ALTER TABLE ... ADD`) and
//! enforcing them.
//!
//! A foreign key references a unique index of the referenced table (its primary key or a
//! unique constraint or index; see `ForeignKeyDef`). It is enforced per statement, once the
//! statement's rows are changed, as SQL Server does: so a statement that inserts a parent and
//! its child, or deletes a whole self-referencing tree, succeeds whatever its row order.
//!
//! * The referencing side ([`Run::check_references`]): every inserted row, and every updated
//!   row whose key columns changed, must find its key in the referenced table, unless one of
//!   its columns is NULL. The key is read through the engine's locking read, so a referenced
//!   row that another transaction is deleting is waited for, not trusted.
//! * The referenced side ([`Run::enforce_referenced`]): for every key a DELETE or UPDATE took
//!   away, the referencing rows (found by a locking scan of the referencing table) are
//!   refused (`NO ACTION`, error 547), deleted or changed (`CASCADE`), or set to NULL or to
//!   their defaults; the rows a cascade changes are enforced in turn.
//!
//! Changes a cascade makes do not fire the referencing table's triggers nor appear in the
//! statement's OUTPUT.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use walden_engine::catalog::{ForeignKeyDef, IndexDef, Object, ReferentialAction, TableDef};
use walden_engine::types::{encode_key_columns_ordered, SqlType, TextOrder, Value};
use walden_engine::Database;

use crate::ast::{self, ForeignKeyReference};
use crate::exec::ddl::generated_name;
use crate::exec::execute::query::TableRef;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// A key: its values in the referenced index's types, and their index encoding.
type Key = (Vec<Value>, Vec<u8>);

/// A row of a table: its row id and its values.
type StoredRow = (Vec<u8>, Vec<Value>);

/// A referencing row a cascade acts on: its row id, its values and, for an update, the key
/// that replaced the one it references.
type Hit = (Vec<u8>, Vec<Value>, Option<Vec<Value>>);

/// How deep cascades may chain before the statement is refused (SQL Server's nesting limit).
const MAX_CASCADE_DEPTH: u32 = 32;

/// A FOREIGN KEY as a CREATE TABLE or ALTER TABLE declares it, before its tables are
/// resolved.
#[derive(Debug, Clone)]
pub(crate) struct ForeignKeySpec {
    /// `CONSTRAINT name`, if given.
    pub(crate) name: Option<String>,
    /// The referencing columns, by name.
    pub(crate) columns: Vec<String>,
    /// The referenced table, columns and actions.
    pub(crate) reference: ForeignKeyReference,
}

fn action(a: ast::ReferentialAction) -> ReferentialAction {
    match a {
        ast::ReferentialAction::NoAction => ReferentialAction::NoAction,
        ast::ReferentialAction::Cascade => ReferentialAction::Cascade,
        ast::ReferentialAction::SetNull => ReferentialAction::SetNull,
        ast::ReferentialAction::SetDefault => ReferentialAction::SetDefault,
    }
}

/// Whether a referencing column of type `child` may reference one of type `parent`: the
/// same type, where strings and binaries may differ in length (SQL Server's rule, error
/// 1778).
fn same_type(child: SqlType, parent: SqlType) -> bool {
    use SqlType as T;
    match (child, parent) {
        (T::Char(_) | T::VarChar(_), T::Char(_) | T::VarChar(_))
        | (T::NChar(_) | T::NVarChar(_), T::NChar(_) | T::NVarChar(_))
        | (T::Binary(_) | T::VarBinary(_), T::Binary(_) | T::VarBinary(_)) => true,
        _ => child == parent,
    }
}

/// The object id of table `id` of `db`, if it is one.
fn table_by_id(db: &Database, id: u32) -> Option<Arc<TableDef>> {
    match db.object_by_id(id).as_deref() {
        Some(Object::Table(t)) => Some(Arc::clone(t)),
        _ => None,
    }
}

/// The key of `row` in the columns `columns`, converted to the referenced index's column
/// types `types` and encoded as the index encodes it, by its columns' collations (so that
/// `'abc'` meets `'ABC'` under a case-insensitive one, and not under a case-sensitive one);
/// `None` if a column is NULL.
fn key_of(
    row: &[Value],
    columns: &[usize],
    types: &[(SqlType, TextOrder)],
) -> Result<Option<Key>, SqlError> {
    let mut values = Vec::with_capacity(columns.len());
    for (&c, &(ty, _)) in columns.iter().zip(types) {
        if row[c].is_null() {
            return Ok(None);
        }
        values.push(scalar::coerce(row[c].clone(), ty, false)?);
    }
    let mut bytes = Vec::new();
    let keyed = types.iter().zip(&values).map(|(&(ty, order), v)| (ty, order, v));
    encode_key_columns_ordered(keyed, &mut bytes)
        .map_err(|e| SqlError::new(50000, e.to_string()))?;
    Ok(Some((values, bytes)))
}

/// The types and text orders (collations) of `index`'s key columns, as its keys encode them.
fn key_types(table: &TableDef, index: &IndexDef) -> Vec<(SqlType, TextOrder)> {
    index.columns.iter().map(|&c| (table.columns[c].ty, table.columns[c].text_order())).collect()
}

/// The referenced index of `fk` on `parent`.
fn referenced_index<'p>(
    parent: &'p TableDef,
    fk: &ForeignKeyDef,
) -> Result<&'p IndexDef, SqlError> {
    parent.index(fk.ref_index).ok_or_else(|| {
        SqlError::new(
            50000,
            format!(
                "The index referenced by FOREIGN KEY constraint \"{}\" is missing from table '{}'.",
                fk.name, parent.name
            ),
        )
    })
}

impl Run<'_> {
    /// Resolves `spec`, a foreign key of `child` (created already, so it has its id; it may
    /// reference itself), into its definition, or the error that refuses it (1763, 1769,
    /// 1770, 1773, 1776, 1778, 1757, 8139, 1761, 1785).
    fn resolve_foreign_key(
        &mut self,
        db: &Arc<Database>,
        child: &TableDef,
        spec: &ForeignKeySpec,
        seq: u64,
    ) -> Result<ForeignKeyDef, SqlError> {
        // SQL Server's shape for an unnamed one: `FK__table__column__hex`.
        let name = spec.name.clone().unwrap_or_else(|| {
            let generated = generated_name("FK", db.name(), &child.name, seq);
            let hex = generated.rsplit("__").next().unwrap_or_default();
            let table: String = child.name.chars().take(8).collect();
            let column: String =
                spec.columns.first().map_or("", String::as_str).chars().take(8).collect();
            format!("FK__{table}__{column}__{hex}")
        });
        let target = &spec.reference.table;
        if target.database.as_ref().is_some_and(|d| !d.value.eq_ignore_ascii_case(db.name())) {
            return Err(SqlError::new(
                1763,
                format!(
                    "Cross-database foreign key references are not supported. Foreign key '{}'.",
                    target.name.value
                ),
            ));
        }
        let schema = target.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let is_self = target.name.value.eq_ignore_ascii_case(&child.name)
            && schema.eq_ignore_ascii_case(&child.schema);
        let parent = if is_self {
            Arc::new(child.clone())
        } else {
            match db.find_object(schema, &target.name.value).as_deref() {
                Some(Object::Table(t)) => Arc::clone(t),
                _ => {
                    return Err(SqlError::new(
                        1767,
                        format!(
                            "Foreign key '{name}' references invalid table '{}'.",
                            target.name.value
                        ),
                    ))
                }
            }
        };
        let mut columns = Vec::with_capacity(spec.columns.len());
        for c in &spec.columns {
            columns.push(child.column(c).ok_or_else(|| {
                SqlError::new(
                    1769,
                    format!("Foreign key '{name}' references invalid column '{c}' in referencing table '{}'.", child.name),
                )
            })?);
        }
        let ref_columns: Vec<usize> = if spec.reference.columns.is_empty() {
            let pk = parent.indexes.iter().find(|i| i.primary_key).ok_or_else(|| {
                SqlError::new(
                    1773,
                    format!("Foreign key '{name}' has implicit reference to object '{}' which does not have a primary key defined on it.", parent.name),
                )
            })?;
            pk.columns.clone()
        } else {
            let mut out = Vec::with_capacity(spec.reference.columns.len());
            for c in &spec.reference.columns {
                out.push(parent.column(&c.value).ok_or_else(|| {
                    SqlError::new(
                        1770,
                        format!("Foreign key '{name}' references invalid column '{}' in referenced table '{}'.", c.value, parent.name),
                    )
                })?);
            }
            out
        };
        if ref_columns.len() != columns.len() {
            return Err(SqlError::new(
                8139,
                format!("Number of referencing columns in foreign key differs from number of referenced columns, table '{}'.", child.name),
            ));
        }
        // The referenced columns must be exactly some unique index's key, in any order.
        let mut wanted = ref_columns.clone();
        wanted.sort_unstable();
        let index = parent
            .indexes
            .iter()
            .filter(|i| i.unique && !i.columns.is_empty())
            .find(|i| {
                let mut have = i.columns.clone();
                have.sort_unstable();
                have == wanted
            })
            .ok_or_else(|| {
                SqlError::new(
                    1776,
                    format!("There are no primary or candidate keys in the referenced table '{}.{}' that match the referencing column list in the foreign key '{name}'.", parent.schema, parent.name),
                )
            })?;
        // The referencing columns in the index's key order.
        let mut ordered = Vec::with_capacity(columns.len());
        for &key_column in &index.columns {
            let at = ref_columns.iter().position(|&c| c == key_column).unwrap_or(0);
            ordered.push(columns[at]);
        }
        for (&c, &p) in ordered.iter().zip(&index.columns) {
            if !same_type(child.columns[c].ty, parent.columns[p].ty) {
                return Err(SqlError::new(
                    1778,
                    format!("Column '{}.{}' is not the same data type as referencing column '{}.{}' in foreign key '{name}'.", parent.name, parent.columns[p].name, child.name, child.columns[c].name),
                ));
            }
            // Keys are found by the referenced column's collation: both sides must have it.
            let collation = |c: &walden_engine::catalog::ColumnDef| {
                c.collation.clone().unwrap_or_default().to_ascii_lowercase()
            };
            if child.columns[c].ty.is_text()
                && collation(&child.columns[c]) != collation(&parent.columns[p])
            {
                return Err(SqlError::new(
                    1757,
                    format!("Column '{}.{}' is not of same collation as referencing column '{}.{}' in foreign key '{name}'.", parent.name, parent.columns[p].name, child.name, child.columns[c].name),
                ));
            }
        }
        let on_delete = action(spec.reference.on_delete);
        let on_update = action(spec.reference.on_update);
        let sets_null = [on_delete, on_update].contains(&ReferentialAction::SetNull);
        if sets_null && ordered.iter().any(|&c| !child.columns[c].nullable) {
            return Err(SqlError::new(
                1761,
                format!("Cannot create the foreign key \"{name}\" with the SET NULL referential action, because one or more referencing columns are not nullable."),
            ));
        }
        if is_self
            && (on_delete != ReferentialAction::NoAction
                || on_update != ReferentialAction::NoAction)
        {
            return Err(SqlError::new(
                1785,
                format!("Introducing FOREIGN KEY constraint '{name}' on table '{}' may cause cycles or multiple cascade paths. Specify ON DELETE NO ACTION or ON UPDATE NO ACTION, or modify other FOREIGN KEY constraints.", child.name),
            ));
        }
        Ok(ForeignKeyDef {
            name,
            columns: ordered,
            ref_table: parent.id,
            ref_index: index.id,
            on_delete,
            on_update,
            disabled: false,
        })
    }

    /// Adds the foreign keys `specs` to `t` (CREATE TABLE once the table exists; ALTER TABLE
    /// ... ADD), checking its rows against them unless `nocheck` (`WITH NOCHECK`). A
    /// `#temporary` table skips them, with SQL Server's warning.
    pub(crate) fn add_foreign_keys(
        &mut self,
        t: &TableRef,
        specs: &[ForeignKeySpec],
        nocheck: bool,
    ) -> Result<(), SqlError> {
        if specs.is_empty() {
            return Ok(());
        }
        if t.db.is_temp() {
            for spec in specs {
                let name =
                    spec.name.clone().unwrap_or_else(|| spec.reference.table.name.value.clone());
                self.report(SqlError::with_severity(
                    1750,
                    10,
                    format!("Skipping FOREIGN KEY constraint '{name}' definition for temporary table. FOREIGN KEY constraints are not enforced on local or global temporary tables."),
                ));
            }
            return Ok(());
        }
        let mut new = TableDef::clone(&t.def);
        for spec in specs {
            let seq = new.foreign_keys.len() as u64 + new.checks.len() as u64 + 1;
            let fk = self.resolve_foreign_key(&t.db, &new, spec, seq)?;
            let taken = new.foreign_keys.iter().any(|k| k.name.eq_ignore_ascii_case(&fk.name))
                || new.checks.iter().any(|k| k.name.eq_ignore_ascii_case(&fk.name))
                || new.indexes.iter().any(|k| k.name.eq_ignore_ascii_case(&fk.name))
                || t.db.find_object(&new.schema, &fk.name).is_some();
            if taken {
                return Err(SqlError::new(
                    2714,
                    format!("There is already an object named '{}' in the database.", fk.name),
                ));
            }
            new.foreign_keys.push(fk);
        }
        let added = new.foreign_keys[t.def.foreign_keys.len()..].to_vec();
        let db = Arc::clone(&t.db);
        self.tx()
            .alter_table_metadata(&db, &t.def, new.clone())
            .map_err(|e| self.s.engine_error(e))?;
        if nocheck {
            return Ok(());
        }
        let checked = TableRef {
            db: Arc::clone(&t.db),
            def: Arc::new(new),
            qual: t.qual.clone(),
            view_check: None,
            wanted: None,
        };
        self.check_table_keys(&checked, &added)
    }

    /// Error 547 (an ALTER TABLE statement's) unless every row of `t` satisfies `fks`.
    pub(crate) fn check_table_keys(
        &mut self,
        t: &TableRef,
        fks: &[ForeignKeyDef],
    ) -> Result<(), SqlError> {
        let rows = self.all_rows(&t.db, &t.def)?;
        let rows: Vec<Vec<Value>> = rows.into_iter().map(|(_, r)| r).collect();
        self.check_keys(t, fks, &rows, "ALTER TABLE")
    }

    /// Every row of `def`: its row id and values, read under the session's isolation.
    fn all_rows(&mut self, db: &Arc<Database>, def: &TableDef) -> Result<Vec<StoredRow>, SqlError> {
        let mut out = Vec::new();
        self.for_each_row(db, def, |_, id, values| {
            out.push((id, values));
            Ok(())
        })?;
        Ok(out)
    }

    /// Error 547 unless every row of `rows` (values of `t`'s columns, after the statement)
    /// finds the key each of `t`'s enabled foreign keys references.
    pub(crate) fn check_references(
        &mut self,
        t: &TableRef,
        rows: &[Vec<Value>],
        statement: &str,
    ) -> Result<(), SqlError> {
        if t.def.foreign_keys.is_empty() || rows.is_empty() {
            return Ok(());
        }
        let fks: Vec<ForeignKeyDef> =
            t.def.foreign_keys.iter().filter(|fk| !fk.disabled).cloned().collect();
        self.check_keys(t, &fks, rows, statement)
    }

    fn check_keys(
        &mut self,
        t: &TableRef,
        fks: &[ForeignKeyDef],
        rows: &[Vec<Value>],
        statement: &str,
    ) -> Result<(), SqlError> {
        for fk in fks {
            let same_table = fk.ref_table == t.def.id;
            let parent = if same_table {
                Arc::clone(&t.def)
            } else {
                table_by_id(&t.db, fk.ref_table).ok_or_else(|| {
                    SqlError::new(
                        50000,
                        format!(
                            "The table referenced by FOREIGN KEY constraint \"{}\" is missing.",
                            fk.name
                        ),
                    )
                })?
            };
            let index = referenced_index(&parent, fk)?;
            let types = key_types(&parent, index);
            let mut found: HashSet<Vec<u8>> = HashSet::new();
            for row in rows {
                let Some((key, bytes)) = key_of(row, &fk.columns, &types)? else { continue };
                if found.contains(&bytes) {
                    continue;
                }
                let db = Arc::clone(&t.db);
                let id = self
                    .tx()
                    .seek_row(&db, &parent, fk.ref_index, &key)
                    .map_err(|e| self.s.engine_error(e))?;
                let exists = match id {
                    Some(id) => self
                        .tx()
                        .read_row(&db, &parent, &id)
                        .map_err(|e| self.s.engine_error(e))?
                        .is_some(),
                    None => false,
                };
                if !exists {
                    let kind = if same_table { "FOREIGN KEY SAME TABLE" } else { "FOREIGN KEY" };
                    return Err(SqlError::new(
                        547,
                        format!(
                            "The {statement} statement conflicted with the {kind} constraint \"{}\". The conflict occurred in database \"{}\", table \"{}.{}\", column '{}'.",
                            fk.name,
                            t.db.name(),
                            parent.schema,
                            parent.name,
                            parent.columns[index.columns[0]].name
                        ),
                    ));
                }
                found.insert(bytes);
            }
        }
        Ok(())
    }

    /// Whether a DELETE or UPDATE of `t` has referencing rows to look after: some table's
    /// enabled foreign key references it.
    pub(crate) fn is_referenced(&self, t: &TableRef) -> bool {
        !t.db.is_temp()
            && t.db
                .referencing(t.def.id)
                .iter()
                .any(|c| c.foreign_keys.iter().any(|fk| fk.ref_table == t.def.id && !fk.disabled))
    }

    /// Looks after the rows that reference the keys a DELETE, UPDATE or MERGE of `t` took
    /// away. `changes` pairs each changed row's old values with its new ones (`None`:
    /// deleted, so `ON DELETE` applies; else `ON UPDATE`); `statement` names the statement
    /// in error 547.
    pub(crate) fn enforce_referenced(
        &mut self,
        t: &TableRef,
        changes: &[(Vec<Value>, Option<Vec<Value>>)],
        statement: &str,
    ) -> Result<(), SqlError> {
        self.enforce_referenced_at(t, changes, statement, 0)
    }

    fn enforce_referenced_at(
        &mut self,
        t: &TableRef,
        changes: &[(Vec<Value>, Option<Vec<Value>>)],
        statement: &str,
        depth: u32,
    ) -> Result<(), SqlError> {
        if changes.is_empty() || t.db.is_temp() {
            return Ok(());
        }
        if depth > MAX_CASCADE_DEPTH {
            return Err(SqlError::new(
                217,
                "Maximum stored procedure, function, trigger, or view nesting level exceeded (limit 32).",
            ));
        }
        for child in t.db.referencing(t.def.id) {
            for fk in
                child.foreign_keys.iter().filter(|fk| fk.ref_table == t.def.id && !fk.disabled)
            {
                let index = referenced_index(&t.def, fk)?;
                let types = key_types(&t.def, index);
                // The keys the statement leaves in place: a row updated to a key another row
                // gave up still satisfies the references to it.
                let mut kept: HashSet<Vec<u8>> = HashSet::new();
                for (_, new) in changes {
                    if let Some(new) = new {
                        if let Some((_, bytes)) = key_of(new, &index.columns, &types)? {
                            kept.insert(bytes);
                        }
                    }
                }
                // Each key taken away: by a DELETE (`None`) or by an UPDATE, with the key
                // that replaced it (`Some`; its inner `None`: a NULL key).
                let mut gone: HashMap<Vec<u8>, Option<Option<Vec<Value>>>> = HashMap::new();
                for (old, new) in changes {
                    let Some((_, bytes)) = key_of(old, &index.columns, &types)? else { continue };
                    if kept.contains(&bytes) {
                        continue;
                    }
                    let replacement = match new {
                        Some(new) => Some(key_of(new, &index.columns, &types)?.map(|(v, _)| v)),
                        None => None,
                    };
                    gone.insert(bytes, replacement);
                }
                if gone.is_empty() {
                    continue;
                }
                let child_ref = TableRef {
                    db: Arc::clone(&t.db),
                    def: table_by_id(&t.db, child.id).unwrap_or_else(|| Arc::clone(&child)),
                    qual: child.name.clone(),
                    view_check: None,
                    wanted: None,
                };
                let (mut deleted, mut updated) = (Vec::new(), Vec::new());
                for (id, row) in self.all_rows(&child_ref.db, &child_ref.def)? {
                    let Some((_, bytes)) = key_of(&row, &fk.columns, &types)? else { continue };
                    match gone.get(&bytes) {
                        Some(None) => deleted.push((id, row, None)),
                        Some(Some(replacement)) => updated.push((id, row, replacement.clone())),
                        None => {}
                    }
                }
                if !deleted.is_empty() {
                    self.apply_rule(&child_ref, fk, fk.on_delete, true, deleted, statement, depth)?;
                }
                if !updated.is_empty() {
                    self.apply_rule(
                        &child_ref,
                        fk,
                        fk.on_update,
                        false,
                        updated,
                        statement,
                        depth,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Applies a foreign key's `rule` to the referencing rows `hits` (row id, values, and
    /// for an update the key that replaced the one they reference), whose keys a DELETE
    /// (`deleting`) or an UPDATE took away.
    #[allow(clippy::too_many_arguments)]
    fn apply_rule(
        &mut self,
        child: &TableRef,
        fk: &ForeignKeyDef,
        rule: ReferentialAction,
        deleting: bool,
        hits: Vec<Hit>,
        statement: &str,
        depth: u32,
    ) -> Result<(), SqlError> {
        let db = Arc::clone(&child.db);
        let def = Arc::clone(&child.def);
        if rule == ReferentialAction::NoAction {
            let kind = if fk.ref_table == def.id { "SAME TABLE REFERENCE" } else { "REFERENCE" };
            return Err(SqlError::new(
                547,
                format!(
                    "The {statement} statement conflicted with the {kind} constraint \"{}\". The conflict occurred in database \"{}\", table \"{}.{}\", column '{}'.",
                    fk.name,
                    db.name(),
                    def.schema,
                    def.name,
                    def.columns[fk.columns[0]].name
                ),
            ));
        }
        let mut changed = Vec::with_capacity(hits.len());
        for (id, old, replacement) in hits {
            let new = match (rule, replacement) {
                (ReferentialAction::Cascade, _) if deleting => {
                    self.tx().delete_row(&db, &def, &id).map_err(|e| self.s.engine_error(e))?;
                    changed.push((old, None));
                    continue;
                }
                (ReferentialAction::Cascade, key) => {
                    let mut new = old.clone();
                    for (i, &c) in fk.columns.iter().enumerate() {
                        let v = key.as_ref().map_or(Value::Null, |k| k[i].clone());
                        new[c] = self.store(&def, c, v)?;
                    }
                    new
                }
                (ReferentialAction::SetNull, _) => {
                    let mut new = old.clone();
                    for &c in &fk.columns {
                        new[c] = Value::Null;
                    }
                    new
                }
                _ => {
                    let mut new = old.clone();
                    for &c in &fk.columns {
                        new[c] = match &def.columns[c].default {
                            Some(text) => {
                                let e = self.stored_expr(text)?;
                                let v = self.default_value(&e)?;
                                self.store(&def, c, v)?
                            }
                            None => Value::Null,
                        };
                    }
                    new
                }
            };
            for &c in &fk.columns {
                if new[c].is_null() && !def.columns[c].nullable {
                    return Err(SqlError::new(
                        515,
                        format!(
                            "Cannot insert the value NULL into column '{}', table '{}.{}.{}'; column does not allow nulls. UPDATE fails.",
                            def.columns[c].name,
                            db.name(),
                            def.schema,
                            def.name
                        ),
                    ));
                }
            }
            self.tx().update_row(&db, &def, &id, &new).map_err(|e| self.s.engine_error(e))?;
            changed.push((old, Some(new)));
        }
        let news: Vec<Vec<Value>> = changed.iter().filter_map(|(_, n)| n.clone()).collect();
        if rule == ReferentialAction::SetDefault {
            self.check_references(child, &news, statement)?;
        }
        self.enforce_referenced_at(child, &changed, statement, depth + 1)
    }

    /// Error 3726 (DROP TABLE) or 4712 (TRUNCATE TABLE) if another table's foreign key
    /// references `def`.
    pub(crate) fn refuse_if_referenced(
        &self,
        db: &Database,
        def: &TableDef,
        truncate: bool,
    ) -> Result<(), SqlError> {
        let others: Vec<Arc<TableDef>> =
            db.referencing(def.id).into_iter().filter(|c| c.id != def.id || truncate).collect();
        if others.is_empty() {
            return Ok(());
        }
        Err(if truncate {
            SqlError::new(
                4712,
                format!("Cannot truncate table '{}' because it is being referenced by a FOREIGN KEY constraint.", def.name),
            )
        } else {
            SqlError::new(
                3726,
                format!("Could not drop object '{}.{}' because it is referenced by a FOREIGN KEY constraint.", def.schema, def.name),
            )
        })
    }
}
