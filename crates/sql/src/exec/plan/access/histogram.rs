//! Selectivity from a statistics object's histogram (`walden_engine::statistics`), as
//! fractions of the rows it was built over. Probes and steps are compared as memcomparable
//! keys (`types::key`), so the comparison is the index's own, collation included.
//!
//! Within a step every value between the previous bound and the step's own is taken to be
//! as frequent as the others (`RANGE_ROWS / DISTINCT_RANGE_ROWS`, SQL Server's
//! `AVG_RANGE_ROWS`), and a range bound that falls inside a step keeps half of that step's
//! range rows: the keys are not numbers to interpolate between.

use walden_engine::statistics::Histogram;

/// The fraction of rows equal to the value whose key is `key` (`[0]` is NULL's).
pub(super) fn equal(h: &Histogram, key: &[u8]) -> f64 {
    let rows = h.rows.max(1) as f64;
    let Some(step) = h.steps.iter().find(|s| s.key.as_slice() >= key) else {
        // Above the last bound: values added since the build, if any.
        return 0.0;
    };
    if step.key == key {
        return step.eq_rows / rows;
    }
    if step.distinct_range_rows > 0.0 {
        step.range_rows / step.distinct_range_rows / rows
    } else {
        0.0
    }
}

/// The fraction of rows between `lower` and `upper` (each a key and whether it is
/// included; None is unbounded). NULL is in no range.
pub(super) fn between(
    h: &Histogram,
    lower: Option<&(Vec<u8>, bool)>,
    upper: Option<&(Vec<u8>, bool)>,
) -> f64 {
    let rows = h.rows.max(1) as f64;
    let mut sum = 0.0;
    let mut previous: Option<&[u8]> = None;
    for step in &h.steps {
        let key = step.key.as_slice();
        if key == [0] {
            previous = Some(key);
            continue;
        }
        let above_lower = lower.is_none_or(|(lo, inc)| key > lo.as_slice() || *inc && key == lo);
        let below_upper = upper.is_none_or(|(hi, inc)| key < hi.as_slice() || *inc && key == hi);
        if above_lower && below_upper {
            sum += step.eq_rows;
        }
        // The values strictly between the previous bound and this one.
        let mut part = 1.0;
        if let Some((lo, _)) = lower {
            if lo.as_slice() >= key {
                part = 0.0;
            } else if previous.is_none_or(|p| lo.as_slice() > p) {
                part *= 0.5;
            }
        }
        if let Some((hi, _)) = upper {
            if previous.is_some_and(|p| hi.as_slice() <= p) {
                part = 0.0;
            } else if hi.as_slice() < key {
                part *= 0.5;
            }
        }
        sum += step.range_rows * part;
        previous = Some(key);
    }
    (sum / rows).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use walden_engine::statistics::Step;
    use walden_engine::types::{encode_key, SqlType, Value};

    fn key(v: i32) -> Vec<u8> {
        let mut k = Vec::new();
        encode_key(&[SqlType::Int], &[Value::Int(v)], &mut k).unwrap();
        k
    }

    /// Steps 10 (eq 5), 20 (eq 5, 10 rows over 5 values between), 30 (eq 10, 20 rows
    /// over 10 values): 50 rows.
    fn sample() -> Histogram {
        let step = |v: i32, range: f64, eq: f64, distinct: f64| Step {
            value: Value::Int(v),
            key: key(v),
            range_rows: range,
            eq_rows: eq,
            distinct_range_rows: distinct,
        };
        Histogram {
            updated_micros: 0,
            rows: 50,
            rows_sampled: 50,
            key_type: SqlType::Int,
            density: vec![1.0 / 18.0],
            avg_length: vec![5.0],
            steps: vec![
                step(10, 0.0, 5.0, 0.0),
                step(20, 10.0, 5.0, 5.0),
                step(30, 20.0, 10.0, 10.0),
            ],
        }
    }

    /// `fraction` of the 50 rows is `rows`, up to rounding.
    fn assert_rows(fraction: f64, rows: f64) {
        assert!((fraction * 50.0 - rows).abs() < 1e-9, "{} rows, not {rows}", fraction * 50.0);
    }

    #[test]
    fn equality_reads_a_bound_or_the_average_of_its_step() {
        let h = sample();
        assert_rows(equal(&h, &key(30)), 10.0);
        assert_rows(equal(&h, &key(15)), 2.0);
        assert_rows(equal(&h, &key(25)), 2.0);
        assert_eq!(equal(&h, &key(31)), 0.0);
        assert_eq!(equal(&h, &[0]), 0.0);
    }

    #[test]
    fn a_range_sums_whole_steps_and_half_of_a_cut_one() {
        let h = sample();
        let b = |k: i32, inc: bool| Some((key(k), inc));
        // Everything.
        assert_rows(between(&h, None, None), 50.0);
        // >= 20: 20's eq, the range to 30 and 30's eq.
        assert_rows(between(&h, b(20, true).as_ref(), None), 35.0);
        // > 20.
        assert_rows(between(&h, b(20, false).as_ref(), None), 30.0);
        // < 25: 10, the range to 20, 20, half of the range to 30.
        assert_rows(between(&h, None, b(25, false).as_ref()), 30.0);
    }
}
