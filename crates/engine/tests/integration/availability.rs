//! One database cannot take the instance down, and files belong to one instance (issue 27,
//! items 4 and 5), on real files in temporary directories.

// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use common::{col, pk, rows};
use walden_engine::types::{SqlType, Value};
use walden_engine::{
    Database, DatabaseFiles, EventLevel, EventLog, Instance, InstanceConfig, Isolation,
};
use walden_log::policy::CommitOption;

type Events = Arc<Mutex<Vec<(EventLevel, String)>>>;

fn config(events: &Events) -> InstanceConfig {
    let mut c = InstanceConfig::default();
    c.database.pool.frames = 64;
    c.database.log.segment_size = 256 << 10;
    c.database.log.initial_segments = 2;
    c.checkpoint_poll_ms = 0;
    let sink = Arc::clone(events);
    c.database.events =
        EventLog::new(move |level, m| sink.lock().unwrap().push((level, m.to_string())));
    c
}

fn logged(events: &Events, needle: &str) -> bool {
    events.lock().unwrap().iter().any(|(_, m)| m.contains(needle))
}

/// Creates `dbo.t (k INT PRIMARY KEY)` holding `k`.
fn table_with(instance: &Instance, db: &Arc<Database>, k: i32) {
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.create_table(db, common::table_def("t", vec![col("k", SqlType::Int, false)]), &[pk()])
        .unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    insert(instance, db, k);
}

fn insert(instance: &Instance, db: &Arc<Database>, k: i32) {
    let t = common::table(db, "t");
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.insert_row(db, &t, &mut [Value::Int(k)]).unwrap();
    tx.commit(CommitOption::Off).unwrap();
}

fn keys(instance: &Instance, name: &str) -> Vec<Value> {
    let db = instance.database(name).unwrap();
    rows(instance, &db, "t").into_iter().map(|mut r| r.remove(0)).collect()
}

#[test]
fn a_database_with_a_missing_log_is_recovery_pending_and_set_online_retries() {
    let dir = tempfile::tempdir().unwrap();
    let events: Events = Arc::default();
    {
        let instance = Instance::open(dir.path(), config(&events)).unwrap();
        for (name, k) in [("good", 1), ("bad", 2)] {
            let db = instance.create_database(name, None).unwrap();
            table_with(&instance, &db, k);
        }
        instance.close().unwrap();
    }
    let log = dir.path().join("bad_log.ldf");
    let aside = dir.path().join("bad_log.ldf.aside");
    std::fs::rename(&log, &aside).unwrap();

    let instance = Instance::open(dir.path(), config(&events)).unwrap();
    // master, tempdb and the other database open and serve.
    assert_eq!(keys(&instance, "good"), vec![Value::Int(1)]);
    insert(&instance, &instance.database("good").unwrap(), 3);
    instance.database("tempdb").unwrap();
    let err = instance.database("bad").unwrap_err();
    assert_eq!(err.number(), 945, "{err}");
    assert!(err.to_string().contains("bad_log.ldf"), "{err}");
    let pending = instance.unavailable_databases();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].entry.name, "bad");
    assert_eq!(pending[0].state_desc(), "RECOVERY_PENDING");
    assert!(logged(&events, "database bad is RECOVERY_PENDING"));
    assert!(logged(&events, "database good is ONLINE"));
    // The name and the id stay taken.
    assert_eq!(instance.create_database("bad", None).unwrap_err().number(), 1801);
    let other = instance.create_database("other", None).unwrap();
    assert!(other.id() > pending[0].entry.id);

    // Still missing: SET ONLINE fails again, with the reason.
    assert_eq!(instance.set_online("bad").unwrap_err().number(), 945);
    // Fixed: SET ONLINE opens and recovers it.
    std::fs::rename(&aside, &log).unwrap();
    instance.set_online("bad").unwrap();
    assert_eq!(keys(&instance, "bad"), vec![Value::Int(2)]);
    assert!(instance.unavailable_databases().is_empty());
    assert!(logged(&events, "database bad is ONLINE"));
    instance.set_online("good").unwrap();
    instance.close().unwrap();
}

#[test]
fn a_damaged_data_file_is_suspect_and_can_be_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let events: Events = Arc::default();
    {
        let instance = Instance::open(dir.path(), config(&events)).unwrap();
        let db = instance.create_database("hurt", None).unwrap();
        table_with(&instance, &db, 1);
    }
    // Flip a byte of the file header page: its checksum fails.
    let path = dir.path().join("hurt.mdf");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[200] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let instance = Instance::open(dir.path(), config(&events)).unwrap();
    let err = instance.database("hurt").unwrap_err();
    assert_eq!(err.number(), 926, "{err}");
    assert_eq!(instance.unavailable_databases()[0].state_desc(), "SUSPECT");
    assert!(logged(&events, "database hurt is SUSPECT"));
    // DROP forgets it and leaves its files for the operator.
    instance.drop_database("hurt").unwrap();
    assert_eq!(instance.database("hurt").unwrap_err().number(), 911);
    assert!(path.exists());
    drop(instance);
    let instance = Instance::open(dir.path(), config(&events)).unwrap();
    assert!(instance.unavailable_databases().is_empty());
}

#[test]
fn a_copied_data_directory_is_an_independent_instance() {
    let root = tempfile::tempdir().unwrap();
    let (a, b, elsewhere) =
        (root.path().join("a"), root.path().join("b"), root.path().join("elsewhere"));
    std::fs::create_dir_all(&elsewhere).unwrap();
    let events: Events = Arc::default();
    {
        let instance = Instance::open(&a, config(&events)).unwrap();
        let inside = instance.create_database("inside", None).unwrap();
        table_with(&instance, &inside, 1);
        let files = DatabaseFiles {
            data: elsewhere.join("outside.mdf"),
            log: elsewhere.join("outside_log.ldf"),
        };
        let outside = instance.create_database("outside", Some(files)).unwrap();
        table_with(&instance, &outside, 1);
        instance.close().unwrap();
    }
    // A copy of the stopped instance's directory.
    std::fs::create_dir_all(&b).unwrap();
    for entry in std::fs::read_dir(&a).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, b.join(path.file_name().unwrap())).unwrap();
    }
    let original = Instance::open(&a, config(&events)).unwrap();
    let copy = Instance::open(&b, config(&events)).unwrap();
    // The copy's database inside its directory is its own copy: a commit there leaves the
    // original alone.
    assert_eq!(copy.database("inside").unwrap().files().data, b.join("inside.mdf"));
    insert(&copy, &copy.database("inside").unwrap(), 2);
    assert_eq!(keys(&copy, "inside"), vec![Value::Int(1), Value::Int(2)]);
    assert_eq!(keys(&original, "inside"), vec![Value::Int(1)]);
    // The file outside both stays absolute, and the original holds it: the copy says so,
    // naming the file and the holder, and serves everything else.
    let err = copy.database("outside").unwrap_err();
    assert_eq!(err.number(), 945, "{err}");
    let text = err.to_string();
    assert!(text.contains("outside.mdf"), "{text}");
    if Path::new("/proc/locks").exists() {
        assert!(text.contains(&format!("process {}", std::process::id())), "{text}");
    }
    assert_eq!(keys(&original, "outside"), vec![Value::Int(1)]);
    drop(original);
    copy.set_online("outside").unwrap();
    assert_eq!(keys(&copy, "outside"), vec![Value::Int(1)]);
}

#[test]
fn a_data_file_failure_is_reported_as_one_and_does_not_fail_the_shutdown() {
    let fs = walden_io::SimFs::new(3);
    let vfs: Arc<dyn walden_io::Vfs> = Arc::new(fs.clone());
    let events: Events = Arc::default();
    let mut config = config(&events);
    config.database.pool.writer_interval_ms = 0;
    let instance = Instance::open_with(vfs, Path::new("/data"), config, None).unwrap();
    let db = instance.create_database("d", None).unwrap();
    table_with(&instance, &db, 1);
    // The commit hardened the log; the page write-out and the data file's sync come next, and
    // that sync fails.
    insert(&instance, &db, 2);
    fs.fail_nth_sync(1, walden_io::FaultKind::Eio);
    assert!(db.space().pool().flush_all().is_err());
    let err = db.check_online().unwrap_err();
    assert_eq!(err.number(), 823, "{err}");
    let text = err.to_string();
    assert!(text.contains("d.mdf") && !text.contains("The log for database"), "{text}");
    assert!(logged(&events, "database d is OFFLINE: its data file failed"));
    // The other databases go on, and the shutdown is clean: exit 0 for `walden serve`.
    instance.master().check_online().unwrap();
    instance.close().unwrap();
}
