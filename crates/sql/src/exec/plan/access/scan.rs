//! A scan of a table's clustered index over a key range, each row tested in steps: the
//! columns each conjunct of the read's filter reads are decoded as the row reaches it, then
//! those of the sink's test (the probe of a joined hash), and the rest only for the rows
//! kept; or the sink's test first, where a sample of the rows shows it keeps far fewer.

use std::ops::Bound;

use crate::exec::execute::filter::Filter;
use crate::exec::execute::query::TableRef;
use crate::exec::plan::access::RowSink;
use crate::exec::session::Run;
use crate::exec::SqlError;

impl Run<'_> {
    /// Gives `sink` the rows of the clustered key range `lower..upper` that `keep` accepts,
    /// until it says stop; answers whether it would take more.
    pub(super) fn scan_rows(
        &mut self,
        t: &TableRef,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        mut keep: Option<&mut Filter<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        let mark = self.io_mark();
        // A join's seek per outer row starts from the last seek's cursor (`Run::seek_spare`).
        let spare = self.seek_spare.as_mut().and_then(|s| s.cursor.take());
        let mut cursor = self
            .tx()
            .reseek_table_only(spare, &t.db, &t.def, lower, upper, t.wanted.as_deref())
            .map_err(|e| self.s.engine_error(e))?;
        // A table read for a SELECT's demand: nothing reads its rows' locators (only a
        // change does, and a change reads without a demand), so none is copied out per row.
        if t.wanted.is_some() {
            cursor.without_locators();
        }
        // Each row is decoded in steps: the columns of the filter's first conjunct, then of
        // each next conjunct the row reaches, then those of the sink's test, then the rest,
        // for the rows kept. Where what the filter reads is not known, it all comes first.
        let n = t.def.columns.len();
        let sink_unread = sink.unread(n);
        let tests = sink_unread.is_some();
        let conjuncts = match keep.as_deref() {
            Some(f) => f.reads(n),
            None => Some(Vec::new()),
        };
        let stepwise = conjuncts.as_ref().is_some_and(|c| c.len() > 1);
        let sink_step = conjuncts.as_ref().map_or(0, Vec::len);
        let sink_cols: Option<Vec<bool>> = sink_unread.map(|s| s.iter().map(|u| !u).collect());
        // The sink's test may go first instead (see `TestOrder`).
        let mut order = match (&conjuncts, &sink_cols) {
            (Some(c), Some(sink_cols)) if !c.is_empty() && sink.test_may_go_first() => {
                let mut first = vec![sink_cols.clone()];
                first.extend(c.iter().cloned());
                TestOrder::Sampling { read: 0, kept: 0, wanted: 0, steps: first }
            }
            _ => TestOrder::FilterFirst,
        };
        if let Some(mut steps) = conjuncts {
            if let Some(s) = sink_cols {
                steps.push(s);
            }
            if steps.is_empty() {
                cursor.unstage();
            } else {
                cursor.stage(&steps);
            }
        } else {
            cursor.unstage();
        }
        // Rows outside the day ranges the filter's leading conjuncts ask of DATE columns are
        // passed over by the cursor undecoded (TPC-H Q6, Q12, Q14: a month or a year of seven).
        let ranges = match keep.as_deref_mut() {
            Some(f) => self.day_ranges(f, &t.def.columns),
            None => Vec::new(),
        };
        cursor.reject_days(&ranges);
        let mut read = 0;
        let mut more = true;
        // One row decoded into again and again: a row `keep` rejects leaves its allocations
        // to the next one; only a row given to a sink that does not borrow is replaced.
        let borrows = sink.borrows();
        let mut row = Vec::new();
        // Steps the sample chose, staged between rows (a row's steps are decoded from the
        // staging it was read under).
        let mut restage: Option<Vec<Vec<bool>>> = None;
        while more {
            if let Some(steps) = restage.take() {
                cursor.stage(&steps);
            }
            match cursor.next_row_into(self.tx(), &mut row) {
                Ok(true) => {
                    self.row_interruption_point(read)?;
                    read += 1;
                    if matches!(order, TestOrder::SinkFirst) {
                        // Step 0 is the sink's test's columns, step k + 1 conjunct k's.
                        if !sink.wants(self, &row)? {
                            continue;
                        }
                        if let Some(f) = keep.as_deref_mut() {
                            cursor.decode_step(1, &mut row).map_err(|e| self.s.engine_error(e))?;
                            let holds = if stepwise {
                                self.filter_holds_stepwise(f, &mut row, &mut |k, row| {
                                    cursor.decode_step(k + 1, row)
                                })?
                            } else {
                                self.filter_holds(f, &row)?
                            };
                            if !holds {
                                continue;
                            }
                        }
                    } else if let Some(f) = keep.as_deref_mut() {
                        let holds = if stepwise {
                            self.filter_holds_stepwise(f, &mut row, &mut |k, row| {
                                cursor.decode_step(k, row)
                            })?
                        } else {
                            self.filter_holds(f, &row)?
                        };
                        if let TestOrder::Sampling { kept, wanted, .. } = &mut order {
                            // The sample asks the sink of every row, kept or not.
                            cursor
                                .decode_step(sink_step, &mut row)
                                .map_err(|e| self.s.engine_error(e))?;
                            let wants = sink.wants(self, &row)?;
                            *kept += usize::from(holds);
                            *wanted += usize::from(wants);
                            restage = order.decided();
                            if !(holds && wants) {
                                continue;
                            }
                        } else if !holds {
                            continue;
                        } else if tests {
                            cursor
                                .decode_step(sink_step, &mut row)
                                .map_err(|e| self.s.engine_error(e))?;
                            if !sink.wants(self, &row)? {
                                continue;
                            }
                        }
                    } else if tests {
                        cursor
                            .decode_step(sink_step, &mut row)
                            .map_err(|e| self.s.engine_error(e))?;
                        if !sink.wants(self, &row)? {
                            continue;
                        }
                    }
                    cursor.finish_row(&mut row).map_err(|e| self.s.engine_error(e))?;
                    more = if borrows {
                        sink.push_borrowed(self, &row)?
                    } else {
                        sink.push(self, std::mem::take(&mut row))?
                    };
                }
                Ok(false) => break,
                Err(e) => return Err(self.s.engine_error(e)),
            }
        }
        self.io_note(t, mark);
        if let Some(spare) = &mut self.seek_spare {
            spare.cursor = Some(cursor);
        }
        Ok(more)
    }
}

/// Rows a scan reads asking both of its tests of every row, to choose their order.
const ORDER_SAMPLE_ROWS: usize = 1024;

/// Which of a scan's two tests of a row goes first: its own conjuncts (`keep`), or its
/// sink's (`RowSink::wants`, the probe of a joined hash), each decoding only the columns it
/// reads. TPC-H Q21's `lineitem` scan keeps 63% of its rows by `l_receiptdate >
/// l_commitdate`, its probe of the Saudi suppliers 4%: probing first decodes the dates of
/// one row in twenty-five. Neither share is known before the rows are read, so the first
/// [`ORDER_SAMPLE_ROWS`] ask both, and the sink goes first for the rest where it kept at
/// most half as many. Only a sink whose test cannot fail (`RowSink::test_may_go_first`)
/// is asked of rows the conjuncts reject.
enum TestOrder {
    FilterFirst,
    /// Rows `read` so far, of them `kept` by the conjuncts and `wanted` by the sink; the
    /// steps to stage if the sink goes first (its columns, then each conjunct's).
    Sampling {
        read: usize,
        kept: usize,
        wanted: usize,
        steps: Vec<Vec<bool>>,
    },
    SinkFirst,
}

impl TestOrder {
    /// Counts a sampled row; at the sample's end, sets the order, and gives the steps to
    /// stage when the sink goes first.
    fn decided(&mut self) -> Option<Vec<Vec<bool>>> {
        let TestOrder::Sampling { read, kept, wanted, steps } = self else { return None };
        *read += 1;
        if *read < ORDER_SAMPLE_ROWS {
            return None;
        }
        if *wanted * 2 <= *kept {
            let steps = std::mem::take(steps);
            *self = TestOrder::SinkFirst;
            Some(steps)
        } else {
            *self = TestOrder::FilterFirst;
            None
        }
    }
}
