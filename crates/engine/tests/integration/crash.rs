//! The engine's crash simulation: seeded workloads of inserts, updates and deletes in small
//! and large transactions, full and delayed commits, rollbacks and checkpoints from several
//! sessions, on a buffer pool much smaller than the data, cut by a power failure at a seeded
//! point; the crash then applies, drops or tears every unsynced write. After recovery:
//!
//! * every acknowledged fully durable commit is present;
//! * the surviving commits are a prefix of the commit order (by commit LSN);
//! * nothing uncommitted or rolled back is visible: each session's rows equal the model after
//!   exactly its surviving commits;
//! * every tree passes the integrity check and the secondary index matches the table;
//! * recovery is repeatable: for some seeds the power fails again during recovery, and a
//!   second recovery is compared with the first.
//!
//! `WALDEN_ENGINE_CRASH_SEEDS=n` sets the number of crash points (default 1,000);
//! `WALDEN_ENGINE_CRASH_SEED=s` replays one. A failure names its seed.

// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex};

use common::{col, pk, sequence};
use walden_engine::catalog::TableDef;
use walden_engine::database::DatabaseState;
use walden_engine::objects::IndexSpec;
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::{Database, Instance, InstanceConfig, Isolation};
use walden_io::{FaultKind, SimFs, SplitMix64, Vfs};
use walden_log::policy::{CommitOption, DatabaseDurability};

const KEYS_PER_SESSION: i32 = 40;

fn config(rng: &mut SplitMix64) -> InstanceConfig {
    let mut c = InstanceConfig::default();
    c.database.pool.frames = 12 + rng.below(8) as usize;
    c.database.pool.writer_interval_ms = 0;
    c.database.log.segment_size = 64 << 10;
    c.database.log.initial_segments = 2;
    // Small files growing a segment or a few pages at a time, as before files had sizes.
    c.database.files = walden_engine::files::FileLayout::small(64 << 10);
    c.database.log.buffer_blocks = 4;
    c.database.log.max_delay_ms = [0, 5][rng.below(2) as usize];
    c.database.checkpoint_log_bytes = 0;
    c.checkpoint_poll_ms = 0;
    c
}

/// `dbo.t` (k INT, v VARCHAR(400), n INT NULL).
fn table_def() -> TableDef {
    common::table_def(
        "t",
        vec![
            col("k", SqlType::Int, false),
            col("v", SqlType::VarChar(Len::N(400)), false),
            col("n", SqlType::Int, true),
        ],
    )
}

fn indexes() -> Vec<IndexSpec> {
    vec![
        pk(),
        IndexSpec {
            name: "IX_t_n".into(),
            columns: vec![2],
            unique: false,
            clustered: false,
            primary_key: false,
            unique_constraint: false,
            ignore_dup_key: false,
        },
    ]
}

fn table(db: &Database) -> TableDef {
    common::table(db, "t")
}

/// A session's rows: key -> (v, n). Key `session * 1000` holds the session's commit count.
type State = BTreeMap<i32, (String, i32)>;

/// One committed (or maybe committed) transaction of a session: the state after it.
#[derive(Debug, Clone)]
struct Commit {
    lsn: u64,
    full: bool,
    acknowledged: bool,
    after: State,
}

fn marker(session: i32) -> i32 {
    session * 1000
}

fn value_text(rng: &mut SplitMix64, session: i32, count: usize) -> String {
    let len = [1, 20, 150, 390][rng.below(4) as usize];
    let mut s = format!("s{session}c{count}-");
    while s.len() < len {
        s.push((b'a' + rng.below(26) as u8) as char);
    }
    s
}

fn row(k: i32, v: &str, n: i32) -> Vec<Value> {
    vec![Value::Int(k), Value::Str(v.to_string()), Value::Int(n)]
}

/// Runs one session until its transactions are done or the database fails.
fn session(instance: &Instance, db: &Arc<Database>, seed: u64, s: i32, out: &Mutex<Vec<Commit>>) {
    let mut rng = SplitMix64::new(seed ^ (s as u64) << 40);
    let t = table(db);
    let mut state = State::new();
    let mut commits = 0usize;
    for _ in 0..12 {
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let mut next = state.clone();
        let big = rng.below(6) == 0;
        let ops = if big { 20 + rng.below(40) } else { 1 + rng.below(4) };
        let mut failed = false;
        for _ in 0..ops {
            let k = marker(s) + 1 + rng.below(KEYS_PER_SESSION as u64) as i32;
            let v = value_text(&mut rng, s, commits);
            let n = rng.below(50) as i32;
            let key = tx.seek_row(db, &t, 1, &[Value::Int(k)]).unwrap().unwrap();
            let r = match next.contains_key(&k) {
                false => tx.insert_row(db, &t, &mut row(k, &v, n)).map(|_| Some((v, n))),
                true if rng.below(3) == 0 => tx.delete_row(db, &t, &key).map(|_| None),
                true => tx.update_row(db, &t, &key, &row(k, &v, n)).map(|_| Some((v, n))),
            };
            match r {
                Ok(Some(vn)) => {
                    next.insert(k, vn);
                }
                Ok(None) => {
                    next.remove(&k);
                }
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        if failed {
            let _ = tx.rollback();
            return;
        }
        if rng.below(6) == 0 {
            if tx.rollback().is_err() {
                return;
            }
            continue;
        }
        // The marker row carries the commit count, so recovery tells which commits survived.
        let count = commits + 1;
        let key = tx.seek_row(db, &t, 1, &[Value::Int(marker(s))]).unwrap().unwrap();
        let text = format!("commit {count}");
        let marked = if commits == 0 {
            tx.insert_row(db, &t, &mut row(marker(s), &text, -1)).map(|_| ())
        } else {
            tx.update_row(db, &t, &key, &row(marker(s), &text, -1)).map(|_| ())
        };
        if marked.is_err() {
            let _ = tx.rollback();
            return;
        }
        next.insert(marker(s), (text, -1));
        let full = rng.below(2) == 0;
        let option = if full { CommitOption::Off } else { CommitOption::On };
        let result = tx.commit(option);
        let acknowledged = result.is_ok();
        out.lock().unwrap().push(Commit {
            lsn: result.as_ref().map_or(u64::MAX, |o| o.lsn),
            full,
            acknowledged,
            after: next.clone(),
        });
        if !acknowledged {
            return;
        }
        commits = count;
        state = next;
        let step_failed = match rng.below(10) {
            0 => db.checkpoint().is_err(),
            1 => db.flush_log().is_err(),
            _ => false,
        };
        if step_failed {
            return;
        }
    }
}

/// Every row of the table, grouped by session, after checking the trees.
fn recovered(instance: &Instance, seed: u64) -> BTreeMap<i32, State> {
    let db = instance.database("d").unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let t = table(&db);
    let mut rows = 0;
    for index in &t.indexes {
        let check = db
            .space()
            .tree(index.root)
            .check()
            .unwrap_or_else(|e| panic!("seed {seed}: index {} fails the check: {e}", index.id));
        if rows == 0 {
            rows = check.rows;
        }
        assert_eq!(check.rows, rows, "seed {seed}: index {} has {} entries", index.id, check.rows);
    }
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut cursor = tx.scan_table(&db, &t, Bound::Unbounded, Bound::Unbounded).unwrap();
    let mut out: BTreeMap<i32, State> = BTreeMap::new();
    while let Some((_, values)) = cursor.next_row(&mut tx).unwrap() {
        let (Value::Int(k), Value::Str(v), Value::Int(n)) = (&values[0], &values[1], &values[2])
        else {
            panic!("seed {seed}: unexpected row {values:?}");
        };
        out.entry(k / 1000).or_default().insert(*k, (v.clone(), *n));
        // The secondary index finds the row by its n.
        let ix = t.index(2).unwrap();
        let mut entry = Vec::new();
        walden_engine::types::encode_key(&[SqlType::Int], &[Value::Int(*n)], &mut entry).unwrap();
        let id = tx.seek_row(&db, &t, 1, &[Value::Int(*k)]).unwrap().unwrap();
        entry.extend_from_slice(&id);
        assert!(
            db.space().tree(ix.root).get(&entry).unwrap().is_some(),
            "seed {seed}: row {k} missing from the secondary index"
        );
    }
    tx.commit(CommitOption::Unspecified).unwrap();
    out
}

#[derive(Default, Debug)]
struct Coverage {
    points: u64,
    cut_mid_workload: u64,
    delayed_lost: u64,
    crashed_during_recovery: u64,
}

fn crash_point(seed: u64, coverage: &mut Coverage) {
    let mut rng = SplitMix64::new(seed);
    let fs = SimFs::new(seed);
    let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
    let dir = Path::new("/data");
    let config = config(&mut rng);
    let sessions = 1 + rng.below(3) as i32;
    let commits = Mutex::new(Vec::new());
    {
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
        let db = instance.create_database("d", None).unwrap();
        instance.set_delayed_durability("d", DatabaseDurability::Allowed).unwrap();
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.create_table(&db, table_def(), &indexes()).unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        fs.power_off_after(rng.below(90));
        std::thread::scope(|scope| {
            for s in 1..=sessions {
                let (instance, db, commits) = (&instance, &db, &commits);
                scope.spawn(move || session(instance, db, seed, s, commits));
            }
        });
        if db.state() != DatabaseState::Online {
            coverage.cut_mid_workload += 1;
        }
        // The instance is abandoned, not closed: its drop may still write, like a process
        // dying; the crash below decides what of it survives.
    }
    fs.crash();
    // Sometimes the power fails again while recovering.
    if rng.below(3) == 0 {
        fs.power_off_after(rng.below(60));
        if Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).is_err() {
            coverage.crashed_during_recovery += 1;
        }
        fs.crash();
    }
    let instance = Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None)
        .unwrap_or_else(|e| panic!("seed {seed}: recovery failed: {e}"));
    let found = recovered(&instance, seed);
    let commits = commits.into_inner().unwrap();
    // Per session: the surviving commit count, and the rows after exactly that many commits.
    let mut last_survivor_lsn = 0;
    for s in 1..=sessions {
        let mine: Vec<&Commit> =
            commits.iter().filter(|c| c.after.contains_key(&marker(s))).collect();
        let rows = found.get(&s).cloned().unwrap_or_default();
        let survived = rows
            .get(&marker(s))
            .map_or(0, |(v, _)| v.trim_start_matches("commit ").parse::<usize>().unwrap());
        assert!(survived <= mine.len(), "seed {seed}: session {s} has a phantom commit");
        let expected = if survived == 0 { State::new() } else { mine[survived - 1].after.clone() };
        assert_eq!(rows, expected, "seed {seed}: session {s} after {survived} commits");
        for (i, c) in mine.iter().enumerate() {
            if c.acknowledged && c.full {
                assert!(
                    i < survived,
                    "seed {seed}: session {s}'s acknowledged full commit {i} lost"
                );
            }
            if i < survived && c.acknowledged {
                last_survivor_lsn = last_survivor_lsn.max(c.lsn);
            }
            if i >= survived && c.acknowledged && !c.full {
                coverage.delayed_lost += 1;
            }
        }
    }
    // The prefix property across sessions: nothing acknowledged before the last survivor was
    // lost.
    for s in 1..=sessions {
        let survived = found
            .get(&s)
            .and_then(|r| r.get(&marker(s)))
            .map_or(0, |(v, _)| v.trim_start_matches("commit ").parse::<usize>().unwrap());
        let mine: Vec<&Commit> =
            commits.iter().filter(|c| c.after.contains_key(&marker(s))).collect();
        for (i, c) in mine.iter().enumerate().skip(survived) {
            assert!(
                !c.acknowledged || c.lsn > last_survivor_lsn,
                "seed {seed}: session {s}'s commit {i} at {} lost before a survivor at {last_survivor_lsn}",
                c.lsn
            );
        }
    }
    drop(instance);
    // Recovery is repeatable.
    let again = Instance::open_with(Arc::clone(&vfs), dir, config, None).unwrap();
    assert_eq!(recovered(&again, seed), found, "seed {seed}: a second recovery differs");
    coverage.points += 1;
}

#[test]
fn crash_sweep() {
    if let Some(seed) = std::env::var("WALDEN_ENGINE_CRASH_SEED").ok().and_then(|s| s.parse().ok())
    {
        let mut c = Coverage::default();
        crash_point(seed, &mut c);
        println!("{c:?}");
        return;
    }
    let seeds: u64 = std::env::var("WALDEN_ENGINE_CRASH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let mut coverage = Coverage::default();
    for seed in 0..seeds {
        crash_point(seed, &mut coverage);
    }
    println!("{coverage:?}");
    assert_eq!(coverage.points, seeds);
    assert!(coverage.cut_mid_workload > seeds / 4, "{coverage:?}");
    assert!(coverage.delayed_lost > 0, "no seed lost a delayed commit: {coverage:?}");
    assert!(coverage.crashed_during_recovery > seeds / 20, "{coverage:?}");
}

#[test]
fn a_failed_sync_takes_the_database_offline_and_a_restart_recovers_it() {
    let fs = SimFs::new(1);
    let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
    let dir = Path::new("/data");
    let config = config(&mut SplitMix64::new(1));
    {
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
        let db = instance.create_database("d", None).unwrap();
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.create_table(&db, table_def(), &indexes()).unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        let t = table(&db);
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.insert_row(&db, &t, &mut row(1, "kept", 1)).unwrap();
        tx.commit(CommitOption::Off).unwrap();
        fs.fail_nth_sync(1, FaultKind::Eio);
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.insert_row(&db, &t, &mut row(2, "failed", 2)).unwrap();
        let err = tx.commit(CommitOption::Off).unwrap_err();
        assert_eq!(err.number(), 9001, "{err}");
        assert!(matches!(db.state(), DatabaseState::Offline(_)));
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let err = tx.insert_row(&db, &t, &mut row(3, "refused", 3)).unwrap_err();
        assert_eq!(err.number(), 9001, "{err}");
        drop(tx);
    }
    fs.crash();
    let instance = Instance::open_with(Arc::clone(&vfs), dir, config, None).unwrap();
    let rows = recovered(&instance, 1);
    assert_eq!(rows[&0].get(&1).map(|r| r.0.as_str()), Some("kept"));
    assert!(!rows[&0].contains_key(&3));
}

#[test]
fn sequences_and_identities_never_repeat_after_a_crash() {
    for seed in 0..40u64 {
        let fs = SimFs::new(seed);
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let dir = Path::new("/data");
        let mut rng = SplitMix64::new(seed);
        let config = config(&mut rng);
        let cache = [None, Some(1), Some(10), Some(50)][rng.below(4) as usize];
        let (mut handed, mut identities) = (Vec::new(), Vec::new());
        {
            let instance =
                Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
            let db = instance.create_database("d", None).unwrap();
            instance.set_delayed_durability("d", DatabaseDurability::Forced).unwrap();
            let mut tx = instance.begin(Isolation::ReadCommitted, None);
            let seq = tx.create_sequence(&db, sequence(cache)).unwrap();
            let mut def = table_def();
            def.columns[0].identity = Some((1, 1));
            tx.create_table(&db, def, &indexes()).unwrap();
            tx.commit(CommitOption::Unspecified).unwrap();
            let t = table(&db);
            fs.power_off_after(rng.below(40));
            for _ in 0..200 {
                match db.next_sequence_value(seq.id) {
                    Ok(Value::BigInt(v)) => handed.push(v),
                    Ok(other) => panic!("seed {seed}: {other:?}"),
                    Err(_) => break,
                }
                let mut tx = instance.begin(Isolation::ReadCommitted, None);
                let mut values = vec![Value::Null, Value::Str("x".into()), Value::Int(1)];
                if tx.insert_row(&db, &t, &mut values).is_err() {
                    break;
                }
                if tx.commit(CommitOption::Unspecified).is_err() {
                    break;
                }
                if let Value::Int(v) = values[0] {
                    identities.push(v);
                }
            }
        }
        fs.crash();
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config, None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let db = instance.database("d").unwrap();
        let id = db.find_object("dbo", "s").unwrap().id();
        let Value::BigInt(next) = db.next_sequence_value(id).unwrap() else { unreachable!() };
        assert!(
            handed.iter().all(|&v| v < next),
            "seed {seed}: sequence gave {next} again (cache {cache:?}, handed up to {:?})",
            handed.last()
        );
        if let Some(c) = cache {
            let last = handed.last().copied().unwrap_or(0);
            assert!(next <= last + i64::from(c) + 1, "seed {seed}: a gap larger than the cache");
        }
        let t = table(&db);
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let mut values = vec![Value::Null, Value::Str("after".into()), Value::Int(1)];
        tx.insert_row(&db, &t, &mut values).unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        let Value::Int(v) = values[0] else { unreachable!() };
        // Surviving rows hold identities; the new one repeats none of them.
        let survivors = recovered(&instance, seed);
        let taken: Vec<i32> = survivors.values().flat_map(|s| s.keys().copied()).collect();
        assert_eq!(
            taken.iter().filter(|&&k| k == v).count(),
            1,
            "seed {seed}: identity {v} reused"
        );
        // It is above every identity whose row survived (under FORCED every commit was
        // delayed, so acknowledged rows may be lost with their values).
        assert!(
            taken.iter().all(|&k| k <= v),
            "seed {seed}: identity {v} below a surviving row ({identities:?} handed out)"
        );
    }
}

#[test]
fn explicit_identity_values_are_never_handed_out_again_after_a_crash() {
    for seed in 0..30u64 {
        let fs = SimFs::new(seed);
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let dir = Path::new("/data");
        let mut rng = SplitMix64::new(seed);
        let config = config(&mut rng);
        {
            let instance =
                Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
            let db = instance.create_database("d", None).unwrap();
            instance.set_delayed_durability("d", DatabaseDurability::Forced).unwrap();
            let mut tx = instance.begin(Isolation::ReadCommitted, None);
            let mut def = table_def();
            def.columns[0].identity = Some((1, 1));
            tx.create_table(&db, def, &indexes()).unwrap();
            tx.commit(CommitOption::Unspecified).unwrap();
            let t = table(&db);
            fs.power_off_after(rng.below(40));
            let mut highest = 0;
            for n in 0..200 {
                // Every fifth row jumps ahead with an explicit value (SET IDENTITY_INSERT ON),
                // past the cached range now and then.
                let id = if n % 5 == 4 {
                    highest += 1 + rng.below(3000) as i32;
                    Value::Int(highest)
                } else {
                    Value::Null
                };
                let mut tx = instance.begin(Isolation::ReadCommitted, None);
                let mut values = vec![id, Value::Str("x".into()), Value::Int(1)];
                if tx.insert_row(&db, &t, &mut values).is_err() {
                    break;
                }
                if tx.commit(CommitOption::Unspecified).is_err() {
                    break;
                }
                if let Value::Int(v) = values[0] {
                    highest = highest.max(v);
                }
            }
        }
        fs.crash();
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config, None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let db = instance.database("d").unwrap();
        let t = table(&db);
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let mut values = vec![Value::Null, Value::Str("after".into()), Value::Int(1)];
        tx.insert_row(&db, &t, &mut values).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        tx.commit(CommitOption::Unspecified).unwrap();
        let Value::Int(v) = values[0] else { unreachable!() };
        let survivors = recovered(&instance, seed);
        let taken: Vec<i32> = survivors.values().flat_map(|s| s.keys().copied()).collect();
        assert!(
            taken.iter().all(|&k| k <= v),
            "seed {seed}: identity {v} below a surviving explicit or generated value"
        );
    }
}
