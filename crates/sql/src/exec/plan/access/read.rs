//! Reading a table by an access path: a seek's key ranges (a key lookup per row found
//! through a nonclustered index), an index-only read, a scan (`scan.rs`), a single row by
//! its locator, and counting what a seek would read. Which path a read takes is chosen in the parent
//! module; a read returns a superset of the rows its search arguments accept (see there).

use super::*;

/// The lower and upper bounds of a range of keys.
type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// A range bound's value.
enum BoundValue {
    /// NULL: the comparison holds for no row.
    Never,
    /// Not exactly a value of the key column's type: no bound.
    Unknown,
    Value(Value),
}

/// Whether `bound` lets in keys below `key`.
fn lower_below(bound: &Bound<Vec<u8>>, key: &[u8]) -> bool {
    match bound {
        Bound::Unbounded => true,
        Bound::Included(b) | Bound::Excluded(b) => b.as_slice() < key,
    }
}

/// Whether `bound` lets in keys above what `end` lets in.
fn upper_above(bound: &Bound<Vec<u8>>, end: &Bound<Vec<u8>>) -> bool {
    match (bound, end) {
        (_, Bound::Unbounded) => false,
        (Bound::Unbounded, _) => true,
        (Bound::Included(b) | Bound::Excluded(b), Bound::Included(e) | Bound::Excluded(e)) => b > e,
    }
}

impl Run<'_> {
    /// Reads the rows of `t` that `path` can find (at most `limit`), each followed by its
    /// row locator; the probes are evaluated in `env`. `Ok(None)` when a probe's value
    /// cannot be converted to its key column's type: the caller scans instead.
    pub(crate) fn read_path(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        env: &Env<'_>,
        limit: usize,
        keep: Option<RowFilter<'_>>,
    ) -> Result<Option<Vec<Vec<Value>>>, SqlError> {
        if limit == 0 {
            return Ok(Some(Vec::new()));
        }
        let mut rows = Collect { rows: Vec::new(), limit };
        Ok(self.read_path_into(t, path, env, keep, &mut rows)?.then_some(rows.rows))
    }

    /// [`Run::read_path_into`], and where a probe's value does not convert to its key
    /// column's type, a scan instead: its comparisons say what the probe means.
    pub(crate) fn read_path_or_scan_into(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        env: &Env<'_>,
        keep: Option<RowFilter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        if !self.read_path_into(t, path, env, keep, sink)? {
            self.read_path_into(t, &AccessPath::scan(), env, keep, sink)?;
        }
        Ok(())
    }

    /// [`Run::read_path`], giving each row `keep` accepts to `sink` until it says stop.
    /// False (and no row given) when a probe's value cannot be converted to its key
    /// column's type.
    ///
    /// Under `SET FMTONLY ON` it reads nothing and takes no lock: SQL Server processes no
    /// row then, and describes a table another transaction holds exclusively without waiting
    /// (mssql-jdbc's bulk copy asks for its target's columns that way, `SET FMTONLY ON
    /// SELECT * FROM t`, while the table may be locked by `TABLOCKX`).
    pub(crate) fn read_path_into(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        env: &Env<'_>,
        keep: Option<RowFilter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        if self.s.opts.fmtonly {
            return Ok(true);
        }
        let mut filter = keep.map(Filter::new);
        let keep = filter.as_mut();
        if let (Some(LOCATOR), [Fixed::Eq(probe)]) = (path.index, path.fixed.as_slice()) {
            let key = match self.eval(probe, env)? {
                Value::Binary(key) => key,
                // `= NULL` holds for no row.
                Value::Null => return Ok(true),
                _ => return Ok(false),
            };
            self.scan_rows(t, Bound::Included(key.clone()), Bound::Included(key), keep, sink)?;
            return Ok(true);
        }
        let Some(index) = path.index.and_then(|id| t.def.index(id)) else {
            self.scan_rows(t, Bound::Unbounded, Bound::Unbounded, keep, sink)?;
            return Ok(true);
        };
        if index.id == 1
            && index.unique
            && path.range.is_empty()
            && path.fixed.len() == index.columns.len()
            && path.fixed.iter().all(|f| matches!(f, Fixed::Eq(_)))
        {
            return self.seek_row(t, index, path, env, keep, sink);
        }
        let types: Vec<SqlType> = index.columns.iter().map(|&c| t.def.columns[c].ty).collect();
        // Text keys are encoded by their column's collation, as the index encodes them.
        let orders: Vec<TextOrder> =
            index.columns.iter().map(|&c| t.def.columns[c].text_order()).collect();
        // Every combination of the fixed columns' values, as encoded key prefixes.
        let mut prefixes: Vec<Vec<u8>> = vec![Vec::new()];
        let ansi_nulls = self.s.opts.semantics.ansi_nulls;
        for (k, f) in path.fixed.iter().enumerate() {
            let probes: Vec<Value> = match f {
                Fixed::Null => vec![Value::Null],
                Fixed::Eq(e) => vec![self.eval(e, env)?],
                Fixed::In(list) => {
                    let mut values = Vec::with_capacity(list.len());
                    for e in *list {
                        values.push(self.eval(e, env)?);
                    }
                    values
                }
            };
            let mut next = Vec::with_capacity(prefixes.len() * probes.len());
            for v in probes {
                // `= NULL` holds for no row; only IS NULL seeks the NULL key, and `= NULL`
                // or `= @null` under ANSI_NULLS OFF (`eval.rs`, `null_comparison`).
                let v = match (f, v.is_null()) {
                    (Fixed::Null, _) => Value::Null,
                    (Fixed::Eq(e), true) if !ansi_nulls && is_literal_or_variable(e) => Value::Null,
                    (_, true) => continue,
                    (_, false) => match key_value(v, types[k]) {
                        Ok(Some(v)) => v,
                        Ok(None) => continue,
                        Err(_) => return Ok(false),
                    },
                };
                for p in &prefixes {
                    let mut key = p.clone();
                    if encode_key_columns_ordered([(types[k], orders[k], &v)], &mut key).is_err() {
                        return Ok(false);
                    }
                    next.push(key);
                }
            }
            prefixes = next;
        }
        // Key order, and each key once (`IN (1, 1)` seeks once).
        prefixes.sort();
        prefixes.dedup();
        let ranged = path.fixed.len();
        let mut keep = keep;
        for prefix in prefixes {
            let column = types.get(ranged).map(|&ty| (ty, orders[ranged]));
            let Some((lower, upper)) = self.key_range(&prefix, path, column, env)? else {
                continue;
            };
            let unique_key = index.unique && ranged == index.columns.len();
            let more = if index.id == 1 {
                if unique_key {
                    // The key is the row id: a lookup, not a range (which under
                    // SERIALIZABLE locks the gap where the row would be if there is none).
                    let mark = self.io_mark();
                    let found = self
                        .tx()
                        .seek_key(&t.db, &t.def, &prefix, t.wanted.as_deref())
                        .map_err(|e| self.s.engine_error(e))?;
                    self.io_note(t, mark);
                    match found {
                        Some(mut values) => {
                            values.push(Value::Binary(prefix));
                            self.keep_row(values, keep.as_deref_mut(), sink)?
                        }
                        None => true,
                    }
                } else {
                    self.scan_rows(t, lower, upper, keep.as_deref_mut(), sink)?
                }
            } else {
                self.index_rows(t, index.id, lower, upper, keep.as_deref_mut(), sink)?
            };
            if !more {
                break;
            }
        }
        Ok(true)
    }

    /// Gives `sink` the rows of `t` that `keep` accepts whose clustered index's leading key
    /// column, of an integer type, lies between `first` and `last` (inclusive), in key
    /// order, until it says stop: a merge join's read (`plan/join/merge.rs`). A bound the
    /// column's type cannot hold is left open on that side. Locks as a scan of that key
    /// range does; under `SET FMTONLY ON` reads nothing, as [`Run::read_path_into`].
    pub(crate) fn read_leading_between(
        &mut self,
        t: &TableRef,
        first: i64,
        last: i64,
        keep: Option<RowFilter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        if self.s.opts.fmtonly {
            return Ok(());
        }
        let Some(&leading) = t.def.index(1).and_then(|i| i.columns.first()) else {
            return Err(SqlError::new(50000, "Walden merged a table that has no clustered key."));
        };
        let column = &t.def.columns[leading];
        let key_of = |v: i64| -> Option<Vec<u8>> {
            let v = key_value(Value::BigInt(v), column.ty).ok()??;
            let mut key = Vec::new();
            encode_key_columns_ordered([(column.ty, column.text_order(), &v)], &mut key).ok()?;
            Some(key)
        };
        let lower = key_of(first).map_or(Bound::Unbounded, Bound::Included);
        let upper =
            key_of(last).and_then(|k| prefix_end(&k)).map_or(Bound::Unbounded, Bound::Excluded);
        let mut filter = keep.map(Filter::new);
        self.scan_rows(t, lower, upper, filter.as_mut(), sink)?;
        Ok(())
    }

    /// [`Run::read_path_into`] for a path that fixes every column of the clustered index's
    /// unique key by `=`: one key lookup, its key encoded as each probe is evaluated, with
    /// none of a seek's key sets or ranges. What it reads, and what it answers, are what the
    /// general path would: each probe is evaluated and converted in order even once one has
    /// made the key impossible (a NULL, a value its column cannot hold), so the same errors
    /// surface, and a probe whose conversion fails sends the read back to a scan.
    fn seek_row(
        &mut self,
        t: &TableRef,
        index: &IndexDef,
        path: &AccessPath<'_>,
        env: &Env<'_>,
        keep: Option<&mut Filter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        let ansi_nulls = self.s.opts.semantics.ansi_nulls;
        // Room for a few integer columns' encodings (a marker and up to 8 bytes each), so
        // that a usual key is encoded without growing its buffer.
        let mut key = Vec::with_capacity(32);
        let mut possible = true;
        for (f, &c) in path.fixed.iter().zip(&index.columns) {
            let Fixed::Eq(e) = f else {
                return Err(SqlError::new(50000, "Walden's key lookup was given a non-equality."));
            };
            let column = &t.def.columns[c];
            let v = self.eval(e, env)?;
            // As in `read_path_into`: `= NULL` finds no row but under ANSI_NULLS OFF.
            let v = if v.is_null() {
                if ansi_nulls || !is_literal_or_variable(e) {
                    possible = false;
                    continue;
                }
                Value::Null
            } else {
                match key_value(v, column.ty) {
                    Ok(Some(v)) => v,
                    Ok(None) => {
                        possible = false;
                        continue;
                    }
                    Err(_) => return Ok(false),
                }
            };
            if possible
                && encode_key_columns_ordered([(column.ty, column.text_order(), &v)], &mut key)
                    .is_err()
            {
                return Ok(false);
            }
        }
        if !possible {
            return Ok(true);
        }
        // The key is the row id: a lookup, not a range (which under SERIALIZABLE locks the
        // gap where the row would be if there is none).
        let mark = self.io_mark();
        let (tx, plans) = self.tx_and_plans();
        let found = tx.seek_key_with(&t.db, &t.def, &key, plans.point_decoder(t));
        let found = found.map_err(|e| self.s.engine_error(e))?;
        self.io_note(t, mark);
        if let Some(mut values) = found {
            values.push(Value::Binary(key));
            self.keep_row(values, keep, sink)?;
        }
        Ok(true)
    }

    /// The key range one seek reads: the keys that start with `prefix` and whose next
    /// column is within the path's range. None if no key can be in it (a NULL bound).
    fn key_range(
        &mut self,
        prefix: &[u8],
        path: &AccessPath<'_>,
        column: Option<(SqlType, TextOrder)>,
        env: &Env<'_>,
    ) -> Result<Option<KeyRange>, SqlError> {
        let whole = |p: &[u8]| match prefix_end(p) {
            Some(end) => Bound::Excluded(end),
            None => Bound::Unbounded,
        };
        let (mut lower, mut upper) = if prefix.is_empty() {
            (Bound::Unbounded, Bound::Unbounded)
        } else {
            (Bound::Included(prefix.to_vec()), whole(prefix))
        };
        let (Some((ty, order)), false) = (column, path.range.is_empty()) else {
            return Ok(Some((lower, upper)));
        };
        // A comparison holds for no NULL: start after the NULL keys (marker 00; a value's
        // marker is 01).
        let mut non_null = prefix.to_vec();
        non_null.push(1);
        lower = Bound::Included(non_null);
        let encoded = |v: &Value| {
            let mut key = prefix.to_vec();
            encode_key_columns_ordered([(ty, order, v)], &mut key).ok().map(|()| key)
        };
        if let Some((e, inclusive)) = path.range.lower {
            match self.bound_value(e, ty, env)? {
                BoundValue::Never => return Ok(None),
                BoundValue::Unknown => {}
                BoundValue::Value(v) => {
                    if let Some(key) = encoded(&v) {
                        // `> v` skips every key that starts with v's encoding.
                        lower = if inclusive {
                            Bound::Included(key)
                        } else {
                            match prefix_end(&key) {
                                Some(end) => Bound::Included(end),
                                None => return Ok(None),
                            }
                        };
                    }
                }
            }
        }
        if let Some((e, inclusive)) = path.range.upper {
            match self.bound_value(e, ty, env)? {
                BoundValue::Never => return Ok(None),
                BoundValue::Unknown => {}
                BoundValue::Value(v) => {
                    if let Some(key) = encoded(&v) {
                        upper = if inclusive { whole(&key) } else { Bound::Excluded(key) };
                    }
                }
            }
        }
        if let Some(e) = path.range.like {
            if let Some(p) = self.like_range(e, ty, order, prefix, env)? {
                let end = whole(&p);
                if lower_below(&lower, &p) {
                    lower = Bound::Included(p);
                }
                if upper_above(&upper, &end) {
                    upper = end;
                }
            }
        }
        Ok(Some((lower, upper)))
    }

    /// A range bound's value in the key column's type.
    fn bound_value(
        &mut self,
        e: &Expr,
        ty: SqlType,
        env: &Env<'_>,
    ) -> Result<BoundValue, SqlError> {
        let v = self.eval(e, env)?;
        if v.is_null() {
            return Ok(BoundValue::Never);
        }
        // A bound that does not convert exactly is dropped: the range only widens.
        Ok(match key_value(v, ty) {
            Ok(Some(v)) => BoundValue::Value(v),
            _ => BoundValue::Unknown,
        })
    }

    /// The key prefix every row matching `column LIKE pattern` starts with: `prefix`, then
    /// the encoding of the pattern's literal prefix without its terminator. Under a column
    /// collation (`order`) the key's first level is the text's letters (binary: its
    /// characters), each character's bytes after the last's, and a string LIKE matches under
    /// that collation has the literal's letters first; so the literal's first level, up to
    /// the `00` that ends it, bounds the range (wider than the matches: the LIKE still
    /// filters the rows read).
    fn like_range(
        &mut self,
        pattern: &Expr,
        ty: SqlType,
        order: TextOrder,
        prefix: &[u8],
        env: &Env<'_>,
    ) -> Result<Option<Vec<u8>>, SqlError> {
        if !ty.is_text() {
            return Ok(None);
        }
        let (Value::Str(p) | Value::NStr(p)) = self.eval(pattern, env)? else {
            return Ok(None);
        };
        let literal = like_prefix(&p).trim_end_matches(' ');
        if literal.is_empty() {
            return Ok(None);
        }
        let Ok(Some(v)) = key_value(Value::NStr(literal.to_string()), ty) else {
            return Ok(None);
        };
        // A pattern with its own COLLATE matches under that collation, whose matches need
        // not share the key's prefix (an accent-insensitive pattern on an accent-keeping
        // key, a case-insensitive one on a binary key): no range then.
        if matches!(
            crate::exec::eval::label_in(pattern, &[]),
            Ok(crate::exec::eval::Label::Explicit(_))
        ) {
            return Ok(None);
        }
        let mut key = prefix.to_vec();
        if order.is_default() {
            if encode_key(&[ty], std::slice::from_ref(&v), &mut key).is_err() {
                return Ok(None);
            }
            // A text key ends with the terminator 00 01; without it, the bytes are a prefix
            // of the key of every string that starts with the literal.
            key.truncate(key.len().saturating_sub(2));
            return Ok(Some(key));
        }
        if encode_key_columns_ordered([(ty, order, &v)], &mut key).is_err() {
            return Ok(None);
        }
        // After the marker byte, the first level runs to the first 00 that is not an
        // escaped NUL (00 FF): the level separator 00 02 or the terminator 00 01.
        let level = prefix.len() + 1;
        let end = (level..key.len().saturating_sub(1))
            .find(|&i| key[i] == 0 && key[i + 1] != 0xFF)
            .unwrap_or(key.len());
        key.truncate(end);
        Ok(Some(key))
    }

    /// Gives `sink` the rows a nonclustered index holds for keys in `lower..upper` that
    /// `keep` accepts, until it says stop; answers whether it would take more.
    fn index_rows(
        &mut self,
        t: &TableRef,
        index: u16,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        mut keep: Option<&mut Filter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        let mark = self.io_mark();
        let mut cursor = self
            .tx()
            .scan_index(&t.db, &t.def, index, lower, upper)
            .map_err(|e| self.s.engine_error(e))?;
        let mut read = 0;
        let mut more = true;
        let covering =
            t.def.index(index).and_then(|ix| Covering::of(&t.def, ix, t.wanted.as_deref()));
        if let Some(covering) = covering {
            // Index-only: each row's columns come from its entry; no lookup of the row. As a
            // scan does (`scan_rows`), each entry is decoded into one row used again and
            // again, lent to a sink that borrows, tested by a sink that has a test, and
            // without its locator for a SELECT's demand, which reads none.
            let tests = sink.unread(t.def.columns.len()).is_some();
            let borrows = sink.borrows();
            let locators = t.wanted.is_none();
            let mut row = Vec::new();
            while more {
                let (key, id) = match cursor.next_covered_ref(self.tx()) {
                    Ok(Some(entry)) => entry,
                    Ok(None) => break,
                    Err(e) => return Err(self.s.engine_error(e)),
                };
                if covering.row_into(key, id, &mut row).is_none() {
                    return Err(SqlError::new(
                        50000,
                        format!("An entry of index {index} of '{}' does not decode.", t.def.name),
                    ));
                }
                if locators {
                    row[t.def.columns.len()] = Value::Binary(id.to_vec());
                }
                self.row_interruption_point(read)?;
                read += 1;
                if let Some(f) = keep.as_deref_mut() {
                    if !self.filter_holds(f, &row)? {
                        continue;
                    }
                }
                if tests && !sink.wants(self, &row)? {
                    continue;
                }
                more = if borrows {
                    sink.push_borrowed(self, &row)?
                } else {
                    sink.push(self, std::mem::take(&mut row))?
                };
            }
            self.io_note(t, mark);
            return Ok(more);
        }
        while more {
            let next = cursor.next_row_id(self.tx());
            let id = match next {
                Ok(Some(id)) => id,
                Ok(None) => break,
                Err(e) => return Err(self.s.engine_error(e)),
            };
            self.row_interruption_point(read)?;
            read += 1;
            if let Some(mut values) = self.read_row_by_id(t, &id)? {
                values.push(Value::Binary(id));
                more = self.keep_row(values, keep.as_deref_mut(), sink)?;
            }
        }
        self.io_note(t, mark);
        Ok(more)
    }

    /// Gives `row` to `sink` if `keep` accepts it; answers whether the read goes on.
    fn keep_row(
        &mut self,
        row: Vec<Value>,
        keep: Option<&mut Filter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        if let Some(f) = keep {
            if !self.filter_holds(f, &row)? {
                return Ok(true);
            }
        }
        sink.push(self, row)
    }

    fn read_row_by_id(&mut self, t: &TableRef, id: &[u8]) -> Result<Option<Vec<Value>>, SqlError> {
        let wanted = t.wanted.as_deref();
        self.tx().read_row_only(&t.db, &t.def, id, wanted).map_err(|e| self.s.engine_error(e))
    }

    /// The number of rows `path` finds, counted as index entries without decoding a row,
    /// where the path answers all of `conjuncts` exactly
    /// ([`AccessPath::answers_exactly`]) and each probe's value is an integer (or NULL,
    /// which `=` matches with nothing); None otherwise, for the caller to read the rows.
    /// The probes are evaluated in `env`, in order, as [`Run::read_path`] evaluates them.
    pub(crate) fn count_seek(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        conjuncts: &[&Expr],
        env: &Env<'_>,
    ) -> Result<Option<u64>, SqlError> {
        if !path.answers_exactly(&t.def, conjuncts) {
            return Ok(None);
        }
        let Some(index) = path.index.and_then(|id| t.def.index(id)) else { return Ok(None) };
        let mut prefix = Vec::new();
        let mut possible = true;
        for (f, &c) in path.fixed.iter().zip(&index.columns) {
            let Fixed::Eq(e) = f else { return Ok(None) };
            let v = self.eval(e, env)?;
            // `= NULL` finds no row, but under ANSI_NULLS OFF, left to the general read.
            if v.is_null() {
                if !self.s.opts.semantics.ansi_nulls {
                    return Ok(None);
                }
                possible = false;
                continue;
            }
            // Another type's probe converts first, which the general read weighs.
            if crate::exec::plan::join::integer_key(&v).is_none() {
                return Ok(None);
            }
            let column = &t.def.columns[c];
            match key_value(v, column.ty) {
                Ok(Some(v)) => {
                    let order = column.text_order();
                    if encode_key_columns_ordered([(column.ty, order, &v)], &mut prefix).is_err() {
                        return Ok(None);
                    }
                }
                // An integer the column's type cannot hold: no row has it.
                Ok(None) | Err(_) => possible = false,
            }
        }
        if !possible {
            return Ok(Some(0));
        }
        let upper = match prefix_end(&prefix) {
            Some(end) => Bound::Excluded(end),
            None => Bound::Unbounded,
        };
        let mut n = 0u64;
        self.index_keys(t, index.id, Bound::Included(prefix), upper, &mut |_| {
            n += 1;
            true
        })?;
        Ok(Some(n))
    }

    /// Gives `each` the key of every entry of nonclustered index `index` of `t` in
    /// `lower..upper`, in key order, until it answers false: an index-only read (locked as
    /// [`Run::read_path`]'s) that decodes nothing and allocates nothing per entry.
    pub(crate) fn index_keys(
        &mut self,
        t: &TableRef,
        index: u16,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        each: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<(), SqlError> {
        // As `read_path_into`: FMTONLY reads no row.
        if self.s.opts.fmtonly {
            return Ok(());
        }
        let mark = self.io_mark();
        let mut cursor = self
            .tx()
            .scan_index(&t.db, &t.def, index, lower, upper)
            .map_err(|e| self.s.engine_error(e))?;
        let mut read = 0;
        loop {
            self.row_interruption_point(read)?;
            read += 1;
            match cursor.next_covered_ref(self.tx()) {
                Ok(Some((key, _))) => {
                    if !each(key) {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => return Err(self.s.engine_error(e)),
            }
        }
        self.io_note(t, mark);
        Ok(())
    }
}
