//! NEWSEQUENTIALID(): GUIDs that increase in SQL Server's uniqueidentifier order, for a
//! clustered key that grows at its end instead of splitting pages at random like NEWID's.
//!
//! SQL Server allows the function only as the whole DEFAULT of a UNIQUEIDENTIFIER column
//! (error 302 anywhere else); [`check_default`] enforces that when the default is created,
//! and the evaluator answers a call only while it evaluates a stored default
//! (`Run::default_value`).
//!
//! Each GUID is, in [`Guid::cmp_sql`]'s order of significance, a 64-bit prefix drawn at random
//! once per process (the part Windows fills with the machine's MAC address and clock
//! sequence) and a 64-bit counter: the time in 100 ns ticks since 1970, or the last value plus
//! one if the clock has not moved on. Values from one process therefore increase; after a
//! restart a new prefix starts a new run, as SQL Server's do after Windows restarts.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::ast::{Expr, ExprKind};
use walden_engine::types::Guid;

use crate::exec::execute::query::visit_children;
use crate::exec::SqlError;

/// The prefix and the last counter handed out; `None` until the first call.
static STATE: Mutex<Option<(u64, u64)>> = Mutex::new(None);

/// The next sequential GUID of this process.
pub(crate) fn next() -> Guid {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos() / 100).unwrap_or(u64::MAX));
    // A poisoned lock only means another thread panicked between two plain assignments.
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let (prefix, last) = state.get_or_insert_with(|| (random_prefix(), 0));
    *last = now.max(last.saturating_add(1));
    let mut ordered = [0u8; 16];
    ordered[..8].copy_from_slice(&prefix.to_be_bytes());
    ordered[8..].copy_from_slice(&last.to_be_bytes());
    Guid::from_sql_order_bytes(ordered)
}

fn random_prefix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

/// Error 302: NEWSEQUENTIALID() used other than as a UNIQUEIDENTIFIER column's DEFAULT.
pub(crate) fn misuse() -> SqlError {
    SqlError::new(
        302,
        "The newsequentialid() built-in function can only be used in a DEFAULT expression for \
         a column of type 'uniqueidentifier' in a CREATE TABLE or ALTER TABLE statement. It \
         cannot be combined with other operators to form a complex scalar expression.",
    )
}

/// Checks a DEFAULT expression for a column of type `is_guid_column`: NEWSEQUENTIALID() may
/// be all of it, and only for a UNIQUEIDENTIFIER column.
pub(crate) fn check_default(e: &Expr, is_guid_column: bool) -> Result<(), SqlError> {
    if is_call(e) {
        return if is_guid_column { Ok(()) } else { Err(misuse()) };
    }
    if mentions(e) {
        return Err(misuse());
    }
    Ok(())
}

/// Whether `e` is a call of NEWSEQUENTIALID (with any arguments: their number is checked
/// when it runs).
fn is_call(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Function(f)
        if f.name.schema.is_none() && f.name.name.value.eq_ignore_ascii_case("NEWSEQUENTIALID"))
}

fn mentions(e: &Expr) -> bool {
    let mut found = is_call(e);
    visit_children(e, &mut |c| found |= mentions(c));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_increase_in_sql_server_order() {
        let values: Vec<Guid> = (0..1000).map(|_| next()).collect();
        for pair in values.windows(2) {
            assert_eq!(pair[0].cmp_sql(&pair[1]), std::cmp::Ordering::Less, "{pair:?}");
        }
    }
}
