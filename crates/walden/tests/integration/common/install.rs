//! Installing the drivers and tools the end-to-end tests run against `walden serve`, at
//! pinned versions, under `target/drivers/<name>/` (never into the repository), once: a stamp
//! file records what was installed from which sources, and a file lock keeps two test
//! processes from installing the same thing at once. With the stamp in place a test uses no
//! network. An install that fails fails its test, with the command's output.

use std::collections::hash_map::DefaultHasher;
use std::fs::{self, File};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long one install command may take (a cold `go build` of go-mssqldb on 2 cores takes
/// about a minute).
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);
/// The client programs: `tests/drivers/` in the repository.
pub fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/drivers")
}

/// The install cache: `<target dir>/drivers/`.
pub fn cache() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("drivers")
}

/// Runs `cmd` to completion within `timeout`, with its stdout and stderr in one file; the
/// output, or an error that includes it.
pub fn run(cmd: &mut Command, timeout: Duration) -> Result<String, String> {
    let what = format!("{cmd:?}");
    let log = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    let out = log.reopen().map_err(|e| e.to_string())?;
    let err = log.reopen().map_err(|e| e.to_string())?;
    let mut child: Child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = String::from_utf8_lossy(&fs::read(log.path()).unwrap_or_default()).into_owned();
    match status {
        Some(s) if s.success() => Ok(output),
        Some(s) => Err(format!("{what} failed ({s}):\n{output}")),
        None => Err(format!("{what} did not finish in {timeout:?}:\n{output}")),
    }
}

/// The first line of `program --version`-like output, for the install stamp.
pub fn version(program: &str, arg: &str) -> String {
    run(Command::new(program).arg(arg), Duration::from_secs(60))
        .map(|out| out.lines().next().unwrap_or_default().to_string())
        .unwrap_or_else(|e| panic!("{program} is needed for this test: {e}"))
}

/// A hash of files' contents, for the install stamp.
pub fn digest(files: &[PathBuf]) -> String {
    let mut h = DefaultHasher::new();
    for f in files {
        fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display())).hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Installs driver `name` into `target/drivers/<name>/` with `steps`, unless the stamp there
/// already says `stamp` and every one of `artifacts` (paths in that directory) exists.
/// Returns the directory.
pub fn install(
    name: &str,
    stamp: &str,
    artifacts: &[&str],
    steps: impl FnOnce(&Path) -> Result<(), String>,
) -> PathBuf {
    let dir = cache().join(name);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let lock = File::create(dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    let stamp_file = dir.join(".installed");
    let current = fs::read_to_string(&stamp_file).unwrap_or_default() == stamp
        && artifacts.iter().all(|a| dir.join(a).exists());
    if !current {
        let _ = fs::remove_file(&stamp_file);
        let started = Instant::now();
        if let Err(e) = steps(&dir) {
            panic!("installing the {name} driver into {} failed: {e}", dir.display());
        }
        fs::write(&stamp_file, stamp).unwrap();
        eprintln!("installed the {name} driver in {:.1} s", started.elapsed().as_secs_f64());
    }
    dir
}
