//! The schema's tables: their columns, keys and indexes, each column's domain of values, and
//! the rows drawn from those domains.

use crate::differential::model::*;
use crate::differential::rng::Rng;

/// Lowercase strings only: Walden compares case-insensitively, SQLite by bytes, and they agree
/// on these. No spaces either: SQL Server ignores trailing spaces in comparisons, SQLite does not.
pub(super) const WORDS: [&str; 22] = [
    "", "a", "b", "c", "aa", "ab", "ac", "ba", "bb", "bc", "ca", "cb", "cc", "abc", "acb", "bac",
    "bca", "cab", "cba", "abcd", "dcba", "zz",
];

/// How many rows a table gets: mostly a few dozen, sometimes none or a handful, now and then a
/// hundred or more. The executor today joins by nested loops, so more would make the test slow.
fn row_count(rng: &mut Rng) -> usize {
    match rng.below(20) {
        0 => 0,
        1..=3 => rng.range(1, 5) as usize,
        4..=16 => rng.range(10, 40) as usize,
        _ => rng.range(40, 120) as usize,
    }
}

pub(super) fn int_domain(lo: i64, hi: i64) -> Vec<Cell> {
    (lo..=hi).map(Cell::Int).collect()
}

fn str_domain(rng: &mut Rng, size: usize) -> Vec<Cell> {
    let mut words: Vec<&str> = WORDS.to_vec();
    rng.shuffle(&mut words);
    words.truncate(size.clamp(1, WORDS.len()));
    words.into_iter().map(|w| Cell::Str(w.to_string())).collect()
}

pub fn schema(rng: &mut Rng) -> Schema {
    let count = rng.range(2, 4) as usize;
    let tables = (0..count).map(|i| table(rng, i)).collect();
    Schema { tables }
}

fn table(rng: &mut Rng, number: usize) -> Table {
    let name = format!("t{number}");
    let rows = row_count(rng);
    let ncols = rng.range(2, 5) as usize;
    let mut ordinals: Vec<usize> = (0..ncols).collect();
    rng.shuffle(&mut ordinals);
    let primary_key: Vec<usize> = match rng.below(10) {
        0 => Vec::new(),
        1..=5 => ordinals[..1].to_vec(),
        _ => ordinals[..2].to_vec(),
    };
    let mut columns = Vec::new();
    for c in 0..ncols {
        let ty = if rng.chance(65) { Ty::Int } else { Ty::Str };
        let key_position = primary_key.iter().position(|&k| k == c);
        let domain = match (ty, key_position, primary_key.len()) {
            // A single-column key is sparse, so that range predicates skip some values.
            (Ty::Int, Some(_), 1) => int_domain(0, (rows as i64 * 2).max(4)),
            // A composite key's leading column has few values, each with many rows, so that a
            // seek on the key's prefix returns several rows.
            (Ty::Int, Some(0), _) => int_domain(0, rng.range(1, 5)),
            (Ty::Int, Some(_), _) => int_domain(0, rng.range(3, 30)),
            (Ty::Str, Some(_), _) => str_domain(rng, WORDS.len()),
            (Ty::Int, None, _) => {
                let lo = rng.range(-3, 5);
                int_domain(lo, lo + rng.range(1, 15))
            }
            (Ty::Str, None, _) => {
                let size = rng.range(2, 10) as usize;
                str_domain(rng, size)
            }
        };
        let nullable = key_position.is_none() && rng.chance(80);
        columns.push(Column { name: format!("c{c}"), ty, nullable, domain });
    }
    let mut indexes = Vec::new();
    for i in 0..rng.below(3) {
        let width = rng.range(1, 2.min(ncols as i64)) as usize;
        let mut cols: Vec<usize> = (0..ncols).collect();
        rng.shuffle(&mut cols);
        cols.truncate(width);
        indexes.push(Index { name: format!("ix_{name}_{i}"), columns: cols });
    }
    let mut table = Table { name, columns, primary_key, indexes, rows: Vec::new() };
    fill(rng, &mut table, rows);
    table
}

/// Draws `rows` rows, skipping those whose primary key is taken (a small key domain may leave the
/// table with fewer).
fn fill(rng: &mut Rng, table: &mut Table, rows: usize) {
    let null_percent: Vec<u32> = table
        .columns
        .iter()
        .map(|c| if c.nullable { rng.range(0, 35) as u32 } else { 0 })
        .collect();
    let mut keys = std::collections::HashSet::new();
    for _ in 0..rows * 2 {
        if table.rows.len() == rows {
            break;
        }
        let row: Vec<Cell> = table
            .columns
            .iter()
            .zip(&null_percent)
            .map(|(c, &p)| if rng.chance(p) { Cell::Null } else { rng.pick(&c.domain).clone() })
            .collect();
        let key: Vec<Cell> = table.primary_key.iter().map(|&k| row[k].clone()).collect();
        if table.primary_key.is_empty() || keys.insert(key) {
            table.rows.push(row);
        }
    }
}
