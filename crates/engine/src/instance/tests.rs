//! How master records databases (paths relative to the data directory, flags, records
//! from older builds rewritten at open) and how an instance copes with a directory that
//! predates the system databases or holds leftovers of one.

use walden_log::policy::DatabaseDurability;

use super::entry::{DATA_IN_DIR, LOG_IN_DIR};
use super::*;
use crate::database::RecoveryModel;
use crate::files::FileLayout;

fn entry(data: &str, log: &str) -> DatabaseEntry {
    DatabaseEntry {
        id: 7,
        name: "d".into(),
        files: DatabaseFiles { data: data.into(), log: log.into() },
        delayed_durability: DatabaseDurability::Allowed,
        recovery_model: RecoveryModel::Full,
        layout: FileLayout::default(),
        offline: false,
        read_only: false,
    }
}

/// The length of a default file layout, which ends a record.
fn layout_len() -> usize {
    let mut layout = Vec::new();
    FileLayout::default().encode(&mut layout);
    layout.len()
}

/// The flags byte of a record: the one before the file layout.
fn flags_of(bytes: &[u8]) -> u8 {
    bytes[bytes.len() - layout_len() - 1]
}

#[test]
fn files_inside_the_data_directory_are_stored_relative_to_it() {
    let e = entry("/srv/data/d.mdf", "/other/disk/d_log.ldf");
    let bytes = e.encode(Path::new("/srv/data"));
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("d.mdf") && !text.contains("/srv/data"), "{text}");
    assert!(text.contains("/other/disk/d_log.ldf"));
    assert_eq!(flags_of(&bytes), DATA_IN_DIR);
    // Read back in the same directory, or in a copy of it.
    assert_eq!(DatabaseEntry::decode(&bytes, Path::new("/srv/data")).unwrap(), e);
    let copy = DatabaseEntry::decode(&bytes, Path::new("/backup/data")).unwrap();
    assert_eq!(copy.files.data, Path::new("/backup/data/d.mdf"));
    assert_eq!(copy.files.log, Path::new("/other/disk/d_log.ldf"));
    // A path that only looks inside (`..`) stays as given.
    let sneaky = entry("/srv/data/../elsewhere/d.mdf", "/srv/data/d_log.ldf");
    let bytes = sneaky.encode(Path::new("/srv/data"));
    assert_eq!(flags_of(&bytes), LOG_IN_DIR);
    let back = DatabaseEntry::decode(&bytes, Path::new("/copy")).unwrap();
    assert_eq!(back.files.data, Path::new("/srv/data/../elsewhere/d.mdf"));
    assert_eq!(back.files.log, Path::new("/copy/d_log.ldf"));
}

#[test]
fn records_from_before_the_flags_byte_keep_their_paths() {
    // The old record: no flags byte, every path as stored (absolute, or relative to the
    // server's working directory when the data directory was given relative).
    for (data, log) in
        [("/srv/data/d.mdf", "/srv/data/d_log.ldf"), ("walden-data/d.mdf", "walden-data/l.ldf")]
    {
        let e = entry(data, log);
        let mut bytes = e.encode(Path::new("/unrelated"));
        bytes.truncate(bytes.len() - layout_len());
        assert_eq!(bytes.pop(), Some(0));
        let back = DatabaseEntry::decode(&bytes, Path::new("walden-data")).unwrap();
        assert_eq!(back, e);
    }
}

#[test]
fn old_records_are_rewritten_with_relative_paths_at_open() {
    let vfs: Arc<dyn Vfs> = Arc::new(walden_io::SimFs::new(1));
    let dir = Path::new("/srv/data");
    let config = small_config();
    let stored = |instance: &Instance| -> Vec<u8> {
        let tree = instance.master.space().tree(DATABASES_ROOT);
        tree.get(b"d").unwrap().unwrap()
    };
    {
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
        let db = instance.create_database("d", None).unwrap();
        // Write the entry as a version before the path flags did: full paths, no flags.
        let mut old = instance.entry_of(&db).encode(Path::new("/unrelated"));
        old.truncate(old.len() - layout_len());
        assert_eq!(old.pop(), Some(0));
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.mark_ddl(&instance.master).unwrap();
        tx.tree_update(&instance.master, DATABASES_ROOT, b"d", &old).unwrap();
        tx.commit(walden_log::policy::CommitOption::Unspecified).unwrap();
        assert_eq!(stored(&instance), old);
        instance.close().unwrap();
    }
    let instance = Instance::open_with(Arc::clone(&vfs), dir, config, None).unwrap();
    assert_eq!(instance.database("d").unwrap().files().data, dir.join("d.mdf"));
    let now = stored(&instance);
    assert_eq!(flags_of(&now), DATA_IN_DIR | LOG_IN_DIR);
    assert!(!String::from_utf8_lossy(&now).contains("/srv/data"));
}

/// A data directory from before model and msdb existed: master lists only user
/// databases. Simulated by removing the two from master and their files.
fn forget_system_databases(instance: &Instance) {
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.mark_ddl(&instance.master).unwrap();
    for name in ["model", "msdb"] {
        tx.tree_delete(&instance.master, DATABASES_ROOT, name.as_bytes()).unwrap();
    }
    tx.commit(walden_log::policy::CommitOption::Unspecified).unwrap();
}

fn small_config() -> InstanceConfig {
    let mut config = InstanceConfig::default();
    config.database.pool.frames = 64;
    config.database.log.segment_size = 64 << 10;
    config.database.files = crate::files::FileLayout::small(64 << 10);
    config.database.log.initial_segments = 2;
    config.checkpoint_poll_ms = 0;
    config
}

#[test]
fn model_and_msdb_are_added_to_a_directory_that_predates_them() {
    let vfs: Arc<dyn Vfs> = Arc::new(walden_io::SimFs::new(1));
    let dir = Path::new("/srv/data");
    let config = small_config();
    let ids = |instance: &Instance| -> Vec<(String, u32)> {
        let mut ids: Vec<_> =
            instance.databases().iter().map(|d| (d.name().to_string(), d.id())).collect();
        ids.sort_by_key(|(_, id)| *id);
        ids
    };
    {
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
        let names = ["master", "tempdb", "model", "msdb"];
        let want: Vec<_> = names.iter().map(|n| n.to_string()).zip(1..).collect();
        assert_eq!(ids(&instance), want);
        assert_eq!(instance.database("msdb").unwrap().files().data, dir.join("MSDBData.mdf"));
        instance.create_database("sales", None).unwrap();
        forget_system_databases(&instance);
        let (model, msdb) =
            (instance.database("model").unwrap(), instance.database("msdb").unwrap());
        instance.close().unwrap();
        for db in [model, msdb] {
            vfs.remove(&db.files().data).unwrap();
            vfs.remove(&db.files().log).unwrap();
        }
    }
    {
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
        let got = ids(&instance);
        assert_eq!(
            got,
            [("master", 1), ("tempdb", 2), ("model", 3), ("msdb", 4), ("sales", 5)]
                .map(|(n, id)| (n.to_string(), id))
        );
        // Registered in master: the next start opens them (making them again would meet
        // their files and leave them out).
        instance.close().unwrap();
        let again = Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
        assert_eq!(ids(&again), got);
        // System databases cannot be dropped, set offline or made read-only.
        for name in ["model", "msdb"] {
            assert!(again.drop_database(name).is_err());
            assert!(again.set_offline(name).is_err());
            assert!(again.set_read_only(name, true).is_err());
        }
        again.close().unwrap();
    }
}

#[test]
fn leftover_files_of_a_system_database_do_not_keep_the_instance_down() {
    // Files without an entry in master: a first start that stopped between making
    // them and registering them, or an operator's copy. They are left alone.
    let vfs: Arc<dyn Vfs> = Arc::new(walden_io::SimFs::new(1));
    let dir = Path::new("/srv/data");
    let config = small_config();
    {
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
        forget_system_databases(&instance);
        instance.close().unwrap();
    }
    let instance = Instance::open_with(Arc::clone(&vfs), dir, config, None).unwrap();
    assert!(matches!(instance.database("msdb"), Err(EngineError::NoSuchDatabase(_))));
    assert!(vfs.exists(&dir.join("MSDBData.mdf")));
    assert_eq!(instance.database("master").unwrap().id(), MASTER_ID);
}
