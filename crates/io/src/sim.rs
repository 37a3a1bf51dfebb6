//! A crash simulator: an in-memory file system that knows which bytes would survive a power
//! loss, and loses the others on demand.
//!
//! # What is modelled
//!
//! Every file has two images. The *current* image is what reads see (the page cache); the
//! *durable* image is what the disk holds. Between them sits the ordered list of *unsynced
//! changes* made since the file's last successful sync:
//!
//! * `write_all_at` and `write_vectored_all_at` add one change each (the vectored buffers
//!   concatenated, as `pwritev` is one call);
//! * `preallocate` (when it grows the file) and `set_len` (when it changes the length) add one
//!   length change each.
//!
//! `sync_data` and `sync_all` replay the list onto the durable image and clear it, which makes
//! the durable image equal to the current one (but see failed syncs below). The directory entry
//! of a newly created file becomes durable at its first successful sync or at a `sync_dir` of
//! its parent directory; until then a crash forgets the file entirely.
//!
//! [`SimFs::crash`] is the power loss. Files whose entry is not durable vanish. For every other
//! file, each unsynced change, in order, is decided by a seeded [`SplitMix64`]:
//!
//! * a write is applied whole, dropped whole, or *torn*: cut at the absolute 512-byte sector
//!   boundaries of the file (700 bytes at offset 700 give the pieces `[700, 1024)` and
//!   `[1024, 1400)`) and each piece applied or dropped on its own. A tear always keeps at least
//!   one piece and drops at least one, so that a reported tear is a visible one. An applied
//!   piece past the end extends the file to cover it, zero-filling any gap; a dropped one leaves
//!   the length alone. A write inside a single sector cannot tear, so it is applied or dropped.
//! * a growth (`preallocate`, or `set_len` to more than the length at that point of the replay)
//!   is applied, dropped, or torn: the file then grows only to a sector boundary strictly
//!   between its old and new lengths, as when a crash interrupts a zero-filling preallocation.
//! * a truncation is one metadata update, so it is applied or dropped.
//!
//! The result becomes both images, and every handle opened before the crash dies: each of its
//! operations then fails with `ErrorKind::Other` ("file handle from before a simulated crash"),
//! as a process that lost power has no descriptors left. The same seed and the same sequence of
//! calls always give the same outcome: files are kept in a `BTreeMap` and the generator is only
//! consulted by `crash`, in file-name order.
//!
//! Faults. [`SimFs::fail_nth_write`] and [`SimFs::fail_nth_sync`] make one chosen call fail with
//! `EIO` or `ENOSPC` (as a raw OS error) and no effect; the calls after it succeed again, so a
//! layer that retries would get away with it unless it fails stop by itself. A failed sync
//! follows Linux after a failed `fsync` (PostgreSQL's "fsyncgate"): the kernel marks the pages
//! clean, so the writes stay visible to reads but are never written back. The simulator removes
//! them from the file's unsynced list: the durable image stays as it was, the current image
//! keeps them, and no later sync makes them durable. A crash then loses them for sure, and a
//! retried sync "succeeds" without saving them, which is exactly the bug a crash test must catch.
//!
//! Growth without `fallocate`. [`SimFs::without_fallocate`] turns `preallocate` into glibc's
//! fallback for file systems without `fallocate`: one write of a zero byte per block, each a
//! write call of its own, so that a crash, a power cut or a fault in the middle of a growth
//! leaves the file grown by only some blocks, at a length that need not be a whole number of
//! the caller's pages. [`SimFs::set_space_limit`] makes a write or growth that would take the
//! files past a total size fail with `ENOSPC`, so that growth runs out of space part way.
//!
//! Power cut. [`SimFs::power_off_after`] lets a number of writes and syncs complete and then
//! turns the machine off: every later write, sync, `preallocate`, `set_len`, `sync_dir`, file
//! creation and removal fails with `EIO` and no effect, while reads keep working on the current
//! image. Sweeping that number over a workload's [`SimFs::ops`] and crashing after each run tries
//! every crash point. A sync refused for lack of power leaves the unsynced list alone (the
//! writes issued before the cut may still land or tear), unlike an injected sync failure.
//!
//! # What is not modelled
//!
//! * Metadata separately from data: `sync_data` makes a growth and a new file's entry durable,
//!   where the media model asks for `sync_all` and `sync_dir`. Removal is immediate and durable.
//!   The simulator is lenient here, so it does not catch a missing `sync_all` or `sync_dir`.
//! * Ordering inside a sector: each unsynced write is decided on its own, so a crash may keep a
//!   later write to a sector and drop an earlier one to the same sector, which a real page cache
//!   cannot produce. This is stricter than reality, never more lenient.
//! * Ordering between files: each file's changes are decided independently of the others.
//! * Directories (paths are keys, as in [`MemFs`](crate::MemFs)), rename, running out of space
//!   other than by injection, read errors, and corruption of synced data (bit rot, misdirected
//!   writes).
//! * Timing: one lock serializes all calls, so each call is atomic with respect to the others.
//!
//! # Invariants
//!
//! 1. Replaying a file's unsynced list onto its durable image gives its current image, except
//!    for the writes an injected sync failure removed from the list.
//! 2. Once a sync of a file returns `Ok`, every byte written to it before that sync (and not
//!    lost to an earlier failed sync) survives any number of crashes, until overwritten.
//! 3. A crash changes bytes only where an unsynced change touched them, and in each sector a
//!    write touched, either all of that write's bytes land or none do.
//! 4. A call that fails (an injected fault, no power, a dead handle, an impossible length) has no
//!    effect on any image and does not count in [`SimFs::writes`], [`SimFs::syncs`] or
//!    [`SimFs::ops`]; the one exception is the injected sync failure described above.
//! 5. No input makes the simulator panic; a mutex poisoned by a panicking caller is recovered.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::mem::{self, lock};
use crate::{File, FileRef, OpenMode, SplitMix64, Vfs};
use crash::{Change, Outcome};
mod crash;

/// The message of every error a handle from before a crash returns.
const DEAD_HANDLE: &str = "file handle from before a simulated crash";

/// The error an injected fault returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// `EIO`: the device failed the operation.
    Eio,
    /// `ENOSPC`: no space left on the device.
    Enospc,
}

impl FaultKind {
    fn error(self) -> io::Error {
        io::Error::from_raw_os_error(match self {
            FaultKind::Eio => libc::EIO,
            FaultKind::Enospc => libc::ENOSPC,
        })
    }
}

/// What one [`SimFs::crash`] did. Every unsynced change (write, growth or truncation) of a
/// surviving file counts once, as applied, dropped or torn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrashReport {
    /// Unsynced changes that landed whole.
    pub writes_applied: u64,
    /// Unsynced changes that were lost whole.
    pub writes_dropped: u64,
    /// Unsynced changes of which some sectors landed and some were lost.
    pub writes_torn: u64,
    /// New files that vanished because their entry was never made durable. Their unsynced
    /// changes are not counted in the other fields.
    pub files_dropped: u64,
}

/// The crash-simulating file system. Clones share the same files and state.
#[derive(Debug, Clone)]
pub struct SimFs {
    state: Arc<Mutex<State>>,
}

/// Everything behind the one lock. Lock order: `State` first, then any `Inode`.
#[derive(Debug)]
struct State {
    rng: SplitMix64,
    files: BTreeMap<PathBuf, Arc<Mutex<Inode>>>,
    /// Incremented by every crash; a handle remembers the epoch it was opened in.
    epoch: u64,
    write_fault: Option<Fault>,
    sync_fault: Option<Fault>,
    /// How many more writes and syncs may complete before the power goes; `None`: no limit.
    power_budget: Option<u64>,
    writes: u64,
    syncs: u64,
    /// `Some(block)`: the file system has no `fallocate`, and `preallocate` does what glibc's
    /// `posix_fallocate` falls back to (see [`SimFs::without_fallocate`]).
    fallback_block: Option<usize>,
    /// The most bytes all files together may hold (see [`SimFs::set_space_limit`]).
    space_limit: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
struct Fault {
    /// The armed call is the one that finds `countdown` at 1.
    countdown: u64,
    kind: FaultKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Write,
    Sync,
}

/// Why [`State::admit`] refused an operation.
enum Refusal {
    PoweredOff,
    Injected(FaultKind),
}

impl State {
    /// Decides whether a write or sync may take effect. Calls refused for lack of power do not
    /// advance the fault countdowns: the machine is off, nothing reaches the device.
    fn admit(&mut self, op: Op) -> Result<(), Refusal> {
        if self.power_budget == Some(0) {
            return Err(Refusal::PoweredOff);
        }
        let slot = match op {
            Op::Write => &mut self.write_fault,
            Op::Sync => &mut self.sync_fault,
        };
        if let Some(mut fault) = slot.take() {
            if fault.countdown <= 1 {
                return Err(Refusal::Injected(fault.kind));
            }
            fault.countdown -= 1;
            *slot = Some(fault);
        }
        Ok(())
    }

    fn completed(&mut self, op: Op) {
        match op {
            Op::Write => self.writes += 1,
            Op::Sync => self.syncs += 1,
        }
        if let Some(budget) = &mut self.power_budget {
            *budget = budget.saturating_sub(1);
        }
    }

    fn powered_off(&self) -> bool {
        self.power_budget == Some(0)
    }
}

/// One file's data, shared by its name in [`State::files`] and its open handles (so that a
/// removed file lives on for its handles, as in POSIX).
struct Inode {
    durable: Vec<u8>,
    current: Vec<u8>,
    unsynced: Vec<Change>,
    /// Whether a crash keeps the file at all.
    entry_durable: bool,
}

impl fmt::Debug for Inode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Lengths only: whole images would drown any assertion message.
        f.debug_struct("Inode")
            .field("durable_len", &self.durable.len())
            .field("current_len", &self.current.len())
            .field("unsynced", &self.unsynced.len())
            .field("entry_durable", &self.entry_durable)
            .finish()
    }
}

impl Inode {
    fn new_file() -> Self {
        Inode {
            durable: Vec::new(),
            current: Vec::new(),
            unsynced: Vec::new(),
            entry_durable: false,
        }
    }

    fn after_crash(image: Vec<u8>) -> Self {
        Inode { durable: image.clone(), current: image, unsynced: Vec::new(), entry_durable: true }
    }

    fn write(&mut self, path: &Path, buf: &[u8], offset: u64) -> io::Result<()> {
        if buf.is_empty() {
            // Nothing a crash could keep or lose; pwrite of 0 bytes does not grow the file.
            return Ok(());
        }
        let at = mem::prepare_write(&mut self.current, path, offset, buf.len())?;
        mem::put(&mut self.current, at, buf);
        self.unsynced.push(Change::Write { at, data: buf.to_vec() });
        Ok(())
    }

    fn preallocate(&mut self, path: &Path, len: u64) -> io::Result<()> {
        if len <= self.current.len() as u64 {
            return Ok(());
        }
        let len = mem::prepare_len(&mut self.current, path, len)?;
        self.current.resize(len, 0);
        self.unsynced.push(Change::Grow { len });
        Ok(())
    }

    fn set_len(&mut self, path: &Path, len: u64) -> io::Result<()> {
        let len = mem::prepare_len(&mut self.current, path, len)?;
        if len != self.current.len() {
            self.current.resize(len, 0);
            self.unsynced.push(Change::SetLen { len });
        }
        Ok(())
    }

    fn sync(&mut self) {
        // Replaying the changes costs what was written since the last sync; copying the current
        // image would cost the whole (often preallocated, so large) file at every log flush.
        for change in self.unsynced.drain(..) {
            change.apply(&mut self.durable);
        }
        self.entry_durable = true;
    }
}

fn eio() -> io::Error {
    io::Error::from_raw_os_error(libc::EIO)
}

impl SimFs {
    /// An empty simulated file system whose crashes are decided by `seed`.
    pub fn new(seed: u64) -> Self {
        SimFs {
            state: Arc::new(Mutex::new(State {
                rng: SplitMix64::new(seed),
                files: BTreeMap::new(),
                epoch: 0,
                write_fault: None,
                sync_fault: None,
                power_budget: None,
                writes: 0,
                syncs: 0,
                fallback_block: None,
                space_limit: None,
            })),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Simulates a power loss and the reboot after it: decides the fate of every unsynced
    /// change, makes the result durable, kills every open handle and turns the power back on.
    /// Armed faults stay armed, and the counters keep counting.
    pub fn crash(&self) -> CrashReport {
        let mut guard = self.state();
        let state = &mut *guard;
        let mut report = CrashReport::default();
        let mut survivors = BTreeMap::new();
        // Removed-but-open files are not in the map: they die with their handles.
        for (path, cell) in std::mem::take(&mut state.files) {
            let inode = lock(&cell);
            if !inode.entry_durable {
                report.files_dropped += 1;
                continue;
            }
            let mut image = inode.durable.clone();
            for change in &inode.unsynced {
                match change.apply_at_crash(&mut image, &mut state.rng) {
                    Outcome::Applied => report.writes_applied += 1,
                    Outcome::Dropped => report.writes_dropped += 1,
                    Outcome::Torn => report.writes_torn += 1,
                }
            }
            // Fresh inodes, so that nothing reachable from an old handle aliases the new data.
            survivors.insert(path, Arc::new(Mutex::new(Inode::after_crash(image))));
        }
        state.files = survivors;
        state.epoch = state.epoch.wrapping_add(1);
        state.power_budget = None;
        report
    }

    /// Makes the `n`-th write call from now (1-based; 0 counts as 1) fail with `kind` and no
    /// effect. Write calls are `write_all_at`, `write_vectored_all_at`, `preallocate` and
    /// `set_len` on any file. Replaces a write fault armed before and not yet fired.
    pub fn fail_nth_write(&self, n: u64, kind: FaultKind) {
        self.state().write_fault = Some(Fault { countdown: n, kind });
    }

    /// Makes the `n`-th `sync_data` or `sync_all` call from now (1-based; 0 counts as 1) fail
    /// with `kind`. Nothing becomes durable, and the file's unsynced writes are lost to the
    /// durable future while staying visible to reads (see the module documentation).
    pub fn fail_nth_sync(&self, n: u64, kind: FaultKind) {
        self.state().sync_fault = Some(Fault { countdown: n, kind });
    }

    /// Lets `ops` more writes and syncs complete, then turns the power off: every later write,
    /// sync, `sync_dir`, file creation and removal fails with `EIO` and no effect, until
    /// [`SimFs::crash`]. Reads keep working. `power_off_after(0)` cuts the power at once.
    pub fn power_off_after(&self, ops: u64) {
        self.state().power_budget = Some(ops);
    }

    /// Makes the file system one without `fallocate` (FUSE, NFS, older ones): `preallocate`
    /// from then on does what glibc's `posix_fallocate` falls back to, one write of a zero byte
    /// per `block` bytes of new space, placed so that the last one lands on the new last byte.
    /// Each of those writes is a write call of its own: faults, power cuts and crashes act on
    /// them one at a time, so an interrupted growth leaves the file at a length that is a
    /// whole number of blocks past the old one, as on a real system. `block` 0 counts as 1.
    pub fn without_fallocate(&self, block: usize) {
        self.state().fallback_block = Some(block.max(1));
    }

    /// Limits the bytes all files together may hold (their current lengths): a write, growth or
    /// `set_len` that would take the total past `limit` fails with `ENOSPC` and no effect.
    /// `None` lifts the limit, as when an operator frees space.
    pub fn set_space_limit(&self, limit: Option<u64>) {
        self.state().space_limit = limit;
    }

    /// Writes and syncs completed so far (`writes() + syncs()`).
    pub fn ops(&self) -> u64 {
        let state = self.state();
        state.writes + state.syncs
    }

    /// `sync_data` and `sync_all` calls completed so far.
    pub fn syncs(&self) -> u64 {
        self.state().syncs
    }

    /// `write_all_at`, `write_vectored_all_at`, `preallocate` and `set_len` calls completed so
    /// far.
    pub fn writes(&self) -> u64 {
        self.state().writes
    }

    /// What a crash that dropped every unsynced change would leave of the file: `None` if there
    /// is no such file or a crash would remove it.
    pub fn durable_image(&self, path: &Path) -> Option<Vec<u8>> {
        let state = self.state();
        let inode = lock(state.files.get(path)?);
        inode.entry_durable.then(|| inode.durable.clone())
    }

    /// The names of all files, durable or not, sorted.
    pub fn file_names(&self) -> Vec<PathBuf> {
        self.state().files.keys().cloned().collect()
    }
}

impl Vfs for SimFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<FileRef> {
        let mut state = self.state();
        let inode = match (state.files.get(path), mode) {
            (Some(_), OpenMode::CreateNew) => return Err(mem::already_exists(path)),
            (Some(inode), _) => Arc::clone(inode),
            (None, OpenMode::Existing) => return Err(mem::not_found(path)),
            (None, OpenMode::CreateNew | OpenMode::OpenOrCreate) => {
                if state.powered_off() {
                    return Err(eio());
                }
                let inode = Arc::new(Mutex::new(Inode::new_file()));
                state.files.insert(path.to_path_buf(), Arc::clone(&inode));
                inode
            }
        };
        Ok(Arc::new(SimFile {
            state: Arc::clone(&self.state),
            inode,
            epoch: state.epoch,
            path: path.to_path_buf(),
        }))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state();
        if state.powered_off() {
            return Err(eio());
        }
        state.files.remove(path).map(|_| ()).ok_or_else(|| mem::not_found(path))
    }

    fn exists(&self, path: &Path) -> bool {
        self.state().files.contains_key(path)
    }

    fn create_dir_all(&self, _path: &Path) -> io::Result<()> {
        // Directories are not modelled, so there is nothing to create or to refuse.
        Ok(())
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        let state = self.state();
        if state.powered_off() {
            return Err(eio());
        }
        for (_, cell) in state.files.iter().filter(|(p, _)| p.parent() == Some(path)) {
            lock(cell).entry_durable = true;
        }
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        Ok(self.state().files.keys().filter(|p| p.parent() == Some(dir)).cloned().collect())
    }
}

struct SimFile {
    state: Arc<Mutex<State>>,
    inode: Arc<Mutex<Inode>>,
    /// The crash epoch this handle was opened in; it is dead in any later one.
    epoch: u64,
    path: PathBuf,
}

impl fmt::Debug for SimFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimFile").field("path", &self.path).field("epoch", &self.epoch).finish()
    }
}

impl SimFile {
    /// Locks the state, failing if a crash happened since this handle was opened.
    fn live(&self) -> io::Result<MutexGuard<'_, State>> {
        let state = lock(&self.state);
        if state.epoch == self.epoch {
            Ok(state)
        } else {
            Err(io::Error::other(DEAD_HANDLE))
        }
    }

    /// Runs one write or sync: checks the handle, the power and the armed faults, then makes
    /// the change and counts it. Holding the state lock throughout makes the whole call atomic
    /// with respect to other threads and to `crash`.
    fn mutate(
        &self,
        op: Op,
        new_len: Option<u64>,
        change: impl FnOnce(&mut Inode, &Path) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut state = self.live()?;
        let mut inode = lock(&self.inode);
        if let (Some(limit), Some(new_len)) = (state.space_limit, new_len) {
            let own = inode.current.len() as u64;
            if new_len > own && !state.powered_off() {
                // Every other file's current length; this inode is locked already (and a
                // removed file still open is not counted, as its space is freed on close).
                let others: u64 = state
                    .files
                    .values()
                    .filter(|cell| !Arc::ptr_eq(cell, &self.inode))
                    .map(|cell| lock(cell).current.len() as u64)
                    .sum();
                if others.saturating_add(new_len) > limit {
                    return Err(FaultKind::Enospc.error());
                }
            }
        }
        match state.admit(op) {
            Ok(()) => {}
            Err(Refusal::PoweredOff) => return Err(eio()),
            Err(Refusal::Injected(kind)) => {
                if op == Op::Sync {
                    // fsyncgate: the failed writeback marked the pages clean; they will never
                    // reach the disk, though reads still see them.
                    inode.unsynced.clear();
                }
                return Err(kind.error());
            }
        }
        change(&mut inode, &self.path)?;
        state.completed(op);
        Ok(())
    }
}

impl File for SimFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let _state = self.live()?;
        mem::read_at(&lock(&self.inode).current, buf, offset, &self.path)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let end = if buf.is_empty() { None } else { offset.checked_add(buf.len() as u64) };
        self.mutate(Op::Write, end, |inode, path| inode.write(path, buf, offset))
    }

    fn write_vectored_all_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        // One call, one change: a crash treats the batch as one write, cut only at sectors.
        self.write_all_at(&bufs.concat(), offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.mutate(Op::Sync, None, |inode, _| {
            inode.sync();
            Ok(())
        })
    }

    fn sync_all(&self) -> io::Result<()> {
        self.sync_data()
    }

    fn len(&self) -> io::Result<u64> {
        let _state = self.live()?;
        Ok(lock(&self.inode).current.len() as u64)
    }

    fn preallocate(&self, len: u64) -> io::Result<()> {
        let block = self.live()?.fallback_block;
        let Some(block) = block.map(|b| b as u64) else {
            return self.mutate(Op::Write, Some(len), |inode, path| inode.preallocate(path, len));
        };
        // glibc's fallback: a zero byte per block, the first at `old + (grow - 1) % block` so
        // that the last lands at `len - 1`. It stops at the first failure, leaving the file
        // grown by the writes made so far.
        let old = self.len()?;
        if len <= old {
            return Ok(());
        }
        let mut at = old + (len - old - 1) % block;
        while at < len {
            self.write_all_at(&[0], at)?;
            at += block;
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.mutate(Op::Write, Some(len), |inode, path| inode.set_len(path, len))
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests;
