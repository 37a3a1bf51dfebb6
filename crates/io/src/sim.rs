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
use crate::{File, FileRef, OpenMode, SplitMix64, Vfs, SECTOR_SIZE};

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

/// One unsynced change, with ranges already checked to fit in memory when it was made.
enum Change {
    Write {
        at: usize,
        data: Vec<u8>,
    },
    /// `preallocate`: grows to `len`, never shrinks.
    Grow {
        len: usize,
    },
    /// `set_len`: truncates or grows to `len`.
    SetLen {
        len: usize,
    },
}

/// What a crash did to one change.
enum Outcome {
    Applied,
    Dropped,
    Torn,
}

impl Change {
    fn apply(&self, image: &mut Vec<u8>) {
        match self {
            Change::Write { at, data } => mem::put(image, *at, data),
            Change::Grow { len } => {
                if image.len() < *len {
                    image.resize(*len, 0);
                }
            }
            Change::SetLen { len } => image.resize(*len, 0),
        }
    }

    /// Applies the change to `image` the way a power loss might.
    fn apply_at_crash(&self, image: &mut Vec<u8>, rng: &mut SplitMix64) -> Outcome {
        match self {
            Change::Write { at, data } => crash_write(image, *at, data, rng),
            // Replayed against the crash image, whose length may differ from the one the call
            // saw if earlier changes were dropped.
            Change::Grow { len } => crash_resize(image, (*len).max(image.len()), rng),
            Change::SetLen { len } => crash_resize(image, *len, rng),
        }
    }
}

fn crash_write(image: &mut Vec<u8>, at: usize, data: &[u8], rng: &mut SplitMix64) -> Outcome {
    let pieces = sector_pieces(at, at + data.len());
    let choices = if pieces.len() > 1 { 3 } else { 2 };
    match rng.below(choices) {
        0 => {
            mem::put(image, at, data);
            Outcome::Applied
        }
        1 => Outcome::Dropped,
        _ => {
            let mut keep: Vec<bool> = pieces.iter().map(|_| rng.chance(1, 2)).collect();
            if keep.iter().all(|&k| k) || keep.iter().all(|&k| !k) {
                // Make the tear visible: flip one piece, so some land and some do not.
                let i = rng.below(keep.len() as u64) as usize;
                if let Some(k) = keep.get_mut(i) {
                    *k = !*k;
                }
            }
            for (&(start, end), _) in pieces.iter().zip(&keep).filter(|(_, &k)| k) {
                mem::put(image, start, &data[start - at..end - at]);
            }
            Outcome::Torn
        }
    }
}

fn crash_resize(image: &mut Vec<u8>, target: usize, rng: &mut SplitMix64) -> Outcome {
    let old = image.len();
    if target == old {
        // Nothing this change could add or lose at this point of the replay.
        return Outcome::Applied;
    }
    if target < old {
        // A truncation is a single metadata update: it happened or it did not.
        return if rng.chance(1, 2) {
            image.truncate(target);
            Outcome::Applied
        } else {
            Outcome::Dropped
        };
    }
    // A growth can stop at any sector boundary strictly between the old and new lengths.
    let first = (old / SECTOR_SIZE + 1) * SECTOR_SIZE;
    let boundaries = if first < target { (target - 1 - first) / SECTOR_SIZE + 1 } else { 0 };
    match rng.below(if boundaries > 0 { 3 } else { 2 }) {
        0 => {
            image.resize(target, 0);
            Outcome::Applied
        }
        1 => Outcome::Dropped,
        _ => {
            let len = first + SECTOR_SIZE * rng.below(boundaries as u64) as usize;
            image.resize(len, 0);
            Outcome::Torn
        }
    }
}

/// `[start, end)` cut at absolute sector boundaries.
fn sector_pieces(start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut at = start;
    while at < end {
        let next = (at - at % SECTOR_SIZE).saturating_add(SECTOR_SIZE).min(end);
        pieces.push((at, next));
        at = next;
    }
    pieces
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
mod tests {
    use super::*;

    fn read(f: &FileRef, offset: u64, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        f.read_exact_at(&mut buf, offset).unwrap();
        buf
    }

    fn read_all(f: &FileRef) -> Vec<u8> {
        read(f, 0, f.len().unwrap() as usize)
    }

    /// Distinct bytes per position and generation, so a misplaced byte cannot pass for a right one.
    fn pattern(generation: u8, offset: usize, len: usize) -> Vec<u8> {
        (offset..offset + len).map(|i| (i as u8).wrapping_mul(31) ^ generation).collect()
    }

    /// A file holding `old` durably, as a crash finds it.
    fn synced_file(fs: &SimFs, path: &Path, old: &[u8]) -> FileRef {
        let f = fs.open(path, OpenMode::CreateNew).unwrap();
        f.write_all_at(old, 0).unwrap();
        f.sync_data().unwrap();
        f
    }

    fn reopen(fs: &SimFs, path: &Path) -> FileRef {
        fs.open(path, OpenMode::Existing).unwrap()
    }

    fn raw(result: io::Result<()>) -> Option<i32> {
        result.unwrap_err().raw_os_error()
    }

    #[test]
    fn reads_see_unsynced_writes_and_sync_makes_them_durable() {
        let fs = SimFs::new(1);
        let p = Path::new("db/a");
        let f = fs.open(p, OpenMode::CreateNew).unwrap();
        f.write_all_at(b"hello", 0).unwrap();
        f.write_vectored_all_at(&[b", ", b"world"], 5).unwrap();
        assert_eq!(read_all(&f), b"hello, world");
        // Not durable yet: not even the file's entry.
        assert_eq!(fs.durable_image(p), None);
        f.sync_data().unwrap();
        assert_eq!(fs.durable_image(p).unwrap(), b"hello, world");
        f.write_all_at(b"W", 7).unwrap();
        assert_eq!(read_all(&f), b"hello, World");
        assert_eq!(fs.durable_image(p).unwrap(), b"hello, world");
        f.sync_all().unwrap();
        assert_eq!(fs.durable_image(p).unwrap(), b"hello, World");
        // Everything synced survives any crash, untouched.
        for _ in 0..20 {
            let report = fs.crash();
            assert_eq!(report, CrashReport::default());
            assert_eq!(read_all(&reopen(&fs, p)), b"hello, World");
        }
        assert_eq!(fs.writes(), 3);
        assert_eq!(fs.syncs(), 2);
        assert_eq!(fs.ops(), 5);
    }

    #[test]
    fn crash_applies_drops_and_tears_whole_sectors_only() {
        let p = Path::new("f");
        let old = pattern(0xAA, 0, 4096);
        let (offset, len) = (700usize, 2900usize); // pieces [700,1024) ... [3584,3600)
        let new = pattern(0x55, offset, len);
        let mut seen = CrashReport::default();
        for seed in 0..200 {
            let fs = SimFs::new(seed);
            let f = synced_file(&fs, p, &old);
            f.write_all_at(&new, offset as u64).unwrap();
            let report = fs.crash();
            assert_eq!(report.writes_applied + report.writes_dropped + report.writes_torn, 1);
            let after = read_all(&reopen(&fs, p));
            assert_eq!(after.len(), 4096);
            // Outside the write nothing changed.
            assert_eq!(after[..offset], old[..offset]);
            assert_eq!(after[offset + len..], old[offset + len..]);
            let (mut kept, mut lost) = (0, 0);
            for (start, end) in sector_pieces(offset, offset + len) {
                if after[start..end] == new[start - offset..end - offset] {
                    kept += 1;
                } else {
                    assert_eq!(after[start..end], old[start..end], "seed {seed}: mixed sector");
                    lost += 1;
                }
            }
            match (kept, lost) {
                (_, 0) => assert_eq!(report.writes_applied, 1, "seed {seed}"),
                (0, _) => assert_eq!(report.writes_dropped, 1, "seed {seed}"),
                _ => assert_eq!(report.writes_torn, 1, "seed {seed}"),
            }
            seen.writes_applied += report.writes_applied;
            seen.writes_dropped += report.writes_dropped;
            seen.writes_torn += report.writes_torn;
        }
        assert!(seen.writes_applied > 20, "{seen:?}");
        assert!(seen.writes_dropped > 20, "{seen:?}");
        assert!(seen.writes_torn > 20, "{seen:?}");
    }

    #[test]
    fn a_write_inside_one_sector_never_tears() {
        let p = Path::new("f");
        for seed in 0..100 {
            let fs = SimFs::new(seed);
            let f = synced_file(&fs, p, &[1u8; 1024]);
            f.write_all_at(&[2u8; 500], 520).unwrap();
            let report = fs.crash();
            assert_eq!(report.writes_torn, 0);
            let after = read_all(&reopen(&fs, p));
            let want = if report.writes_applied == 1 { 2 } else { 1 };
            assert!(after[520..1020].iter().all(|&b| b == want), "seed {seed}");
        }
    }

    #[test]
    fn torn_growth_covers_the_applied_pieces_and_zero_fills_gaps() {
        let p = Path::new("f");
        let new = pattern(0x33, 1000, 2000); // [1000, 3000): 5 pieces past the old end
        let mut lengths = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let fs = SimFs::new(seed);
            let f = synced_file(&fs, p, &[9u8; 100]);
            f.write_all_at(&new, 1000).unwrap();
            fs.crash();
            let after = read_all(&reopen(&fs, p));
            assert_eq!(after[..100], [9u8; 100]);
            let len = after.len();
            lengths.insert(len);
            // The file ends exactly at the end of its last kept piece (or where it was).
            let ends: Vec<usize> =
                sector_pieces(1000, 3000).iter().map(|&(_, end)| end).chain([100]).collect();
            assert!(ends.contains(&len), "seed {seed}: length {len}");
            for (start, end) in sector_pieces(1000, 3000).into_iter().filter(|&(s, _)| s < len) {
                let got = &after[start..end];
                assert!(
                    got == &new[start - 1000..end - 1000] || got.iter().all(|&b| b == 0),
                    "seed {seed}: piece at {start}"
                );
            }
            // Whatever landed past the old end sits on zeros, not on stale bytes.
            assert!(after[100..len.min(1000)].iter().all(|&b| b == 0));
        }
        // Dropped, whole, and several torn lengths all happen.
        assert!(lengths.contains(&100) && lengths.contains(&3000) && lengths.len() >= 4);
    }

    #[test]
    fn unsynced_preallocate_and_set_len_are_kept_dropped_or_torn() {
        let p = Path::new("f");
        let mut lengths = std::collections::BTreeSet::new();
        for seed in 0..100 {
            let fs = SimFs::new(seed);
            let f = synced_file(&fs, p, &[7u8; 600]);
            f.preallocate(4096).unwrap();
            f.preallocate(1000).unwrap(); // never shrinks, records nothing
            assert_eq!(f.len().unwrap(), 4096);
            let report = fs.crash();
            assert_eq!(report.writes_applied + report.writes_dropped + report.writes_torn, 1);
            let after = read_all(&reopen(&fs, p));
            assert!([600, 1024, 1536, 2048, 2560, 3072, 3584, 4096].contains(&after.len()));
            assert_eq!(after[..600], [7u8; 600]);
            assert!(after[600..].iter().all(|&b| b == 0));
            lengths.insert(after.len());
            // A truncation is all or nothing.
            let f = reopen(&fs, p);
            f.set_len(10).unwrap();
            let before = after.len();
            fs.crash();
            let len = reopen(&fs, p).len().unwrap() as usize;
            assert!(len == 10 || len == before, "seed {seed}: {len}");
        }
        assert!(lengths.contains(&600) && lengths.contains(&4096) && lengths.len() >= 4);
        // A synced preallocation is durable.
        let fs = SimFs::new(0);
        let f = synced_file(&fs, p, b"x");
        f.preallocate(2048).unwrap();
        f.sync_data().unwrap();
        fs.crash();
        assert_eq!(reopen(&fs, p).len().unwrap(), 2048);
    }

    /// Runs a fixed mixed workload and returns every file's image and the report after a crash.
    fn workload_then_crash(seed: u64) -> (Vec<(PathBuf, Vec<u8>)>, CrashReport) {
        let fs = SimFs::new(seed);
        for name in ["a", "b", "c"] {
            let p = Path::new("d").join(name);
            let f = synced_file(&fs, &p, &pattern(1, 0, 3000));
            for i in 0..6usize {
                f.write_all_at(&pattern(i as u8 + 2, i * 777, 1500), (i * 777) as u64).unwrap();
            }
            f.preallocate(9000).unwrap();
            f.write_vectored_all_at(&[&[1u8; 600], &[2u8; 700]], 8500).unwrap();
        }
        let report = fs.crash();
        let images = fs
            .file_names()
            .into_iter()
            .map(|p| {
                let image = read_all(&reopen(&fs, &p));
                assert_eq!(fs.durable_image(&p).unwrap(), image);
                (p, image)
            })
            .collect();
        (images, report)
    }

    #[test]
    fn same_seed_same_outcome() {
        let mut outcomes = Vec::new();
        for seed in [3, 4, 5, 6] {
            let first = workload_then_crash(seed);
            assert_eq!(first, workload_then_crash(seed), "seed {seed}");
            assert_eq!(first.1.writes_applied + first.1.writes_dropped + first.1.writes_torn, 24);
            outcomes.push(first);
        }
        // And the seed matters.
        outcomes.dedup();
        assert!(outcomes.len() > 1);
    }

    #[test]
    fn handles_from_before_a_crash_are_dead() {
        let fs = SimFs::new(7);
        let p = Path::new("a");
        let old = synced_file(&fs, p, b"durable");
        old.write_all_at(b"DURABLE", 0).unwrap();
        fs.crash();
        let check = |e: io::Error| {
            assert_eq!(e.kind(), io::ErrorKind::Other);
            assert_eq!(e.to_string(), DEAD_HANDLE);
        };
        check(old.read_exact_at(&mut [0u8; 1], 0).unwrap_err());
        check(old.write_all_at(b"x", 0).unwrap_err());
        check(old.write_vectored_all_at(&[b"x"], 0).unwrap_err());
        check(old.sync_data().unwrap_err());
        check(old.sync_all().unwrap_err());
        check(old.len().unwrap_err());
        check(old.is_empty().unwrap_err());
        check(old.preallocate(4096).unwrap_err());
        check(old.set_len(0).unwrap_err());
        assert_eq!(old.path(), p);
        // None of that reached the file, and a new handle works on the post-crash image.
        let new = reopen(&fs, p);
        let image = read_all(&new);
        assert!(image == b"durable" || image == b"DURABLE");
        new.write_all_at(b"!", 7).unwrap();
        assert_eq!(new.len().unwrap(), 8);
        assert_eq!(fs.writes(), 3);
    }

    #[test]
    fn never_synced_new_files_vanish_on_crash() {
        let fs = SimFs::new(11);
        let dir = Path::new("/db");
        let by_sync = fs.open(&dir.join("by_sync"), OpenMode::CreateNew).unwrap();
        by_sync.write_all_at(b"synced", 0).unwrap();
        by_sync.sync_data().unwrap();
        let by_dir = fs.open(&dir.join("by_dir"), OpenMode::OpenOrCreate).unwrap();
        by_dir.write_all_at(b"data", 0).unwrap();
        fs.sync_dir(dir).unwrap();
        // sync_dir covers the files in the directory at the time, not later ones.
        let late = fs.open(&dir.join("late"), OpenMode::CreateNew).unwrap();
        late.write_all_at(b"late", 0).unwrap();
        let lost = fs.open(Path::new("/elsewhere/lost"), OpenMode::CreateNew).unwrap();
        lost.write_all_at(b"lost", 0).unwrap();
        assert_eq!(fs.file_names().len(), 4);
        assert_eq!(fs.durable_image(&dir.join("by_dir")).unwrap(), b"");
        assert_eq!(fs.durable_image(&dir.join("late")), None);

        let report = fs.crash();
        assert_eq!(report.files_dropped, 2);
        assert_eq!(report.writes_applied + report.writes_dropped, 1); // by_dir's write
        assert_eq!(fs.file_names(), vec![dir.join("by_dir"), dir.join("by_sync")]);
        assert_eq!(fs.list(dir).unwrap(), fs.file_names());
        assert!(!fs.exists(&dir.join("late")));
        assert!(!fs.exists(Path::new("/elsewhere/lost")));
        assert_eq!(read_all(&reopen(&fs, &dir.join("by_sync"))), b"synced");
        let by_dir = read_all(&reopen(&fs, &dir.join("by_dir")));
        assert!(by_dir.is_empty() || by_dir == b"data");
        // Survivors are durable entries now; a second crash keeps them.
        assert_eq!(fs.crash().files_dropped, 0);
        assert_eq!(fs.file_names().len(), 2);
    }

    #[test]
    fn remove_is_immediate_and_durable_and_open_handles_keep_the_data() {
        let fs = SimFs::new(12);
        let p = Path::new("a");
        let f = synced_file(&fs, p, b"abc");
        fs.remove(p).unwrap();
        assert!(!fs.exists(p));
        assert_eq!(fs.remove(p).unwrap_err().kind(), io::ErrorKind::NotFound);
        assert_eq!(fs.open(p, OpenMode::Existing).unwrap_err().kind(), io::ErrorKind::NotFound);
        f.write_all_at(b"d", 3).unwrap();
        f.sync_data().unwrap();
        assert_eq!(read_all(&f), b"abcd");
        assert_eq!(fs.durable_image(p), None);
        assert_eq!(fs.crash(), CrashReport::default());
        assert!(fs.file_names().is_empty());
    }

    #[test]
    fn fail_nth_write_returns_the_error_and_has_no_effect() {
        for (kind, code) in [(FaultKind::Eio, libc::EIO), (FaultKind::Enospc, libc::ENOSPC)] {
            let fs = SimFs::new(13);
            let p = Path::new("a");
            let f = synced_file(&fs, p, b"0123");
            let g = fs.open(Path::new("b"), OpenMode::CreateNew).unwrap();
            let writes = fs.writes();
            // Every kind of write call counts, on any file.
            fs.fail_nth_write(4, kind);
            f.write_all_at(b"a", 0).unwrap();
            g.preallocate(100).unwrap();
            f.set_len(5).unwrap();
            assert_eq!(raw(f.write_vectored_all_at(&[b"x", b"y"], 0)), Some(code));
            assert_eq!(read_all(&f), b"a123\0");
            assert_eq!(fs.writes(), writes + 3);
            // Only that one call fails.
            f.write_all_at(b"b", 1).unwrap();
            assert_eq!(read_all(&f), b"ab23\0");
            for fail in [
                |f: &FileRef| f.write_all_at(b"zz", 10),
                |f: &FileRef| f.preallocate(4096),
                |f: &FileRef| f.set_len(0),
            ] {
                fs.fail_nth_write(1, kind);
                assert_eq!(raw(fail(&f)), Some(code));
                assert_eq!(read_all(&f), b"ab23\0");
            }
            // The failed calls left nothing for a crash to apply.
            f.sync_data().unwrap();
            fs.crash();
            assert_eq!(read_all(&reopen(&fs, p)), b"ab23\0");
        }
    }

    #[test]
    fn fail_nth_sync_makes_nothing_durable_and_loses_the_writes() {
        for (kind, code) in [(FaultKind::Eio, libc::EIO), (FaultKind::Enospc, libc::ENOSPC)] {
            let fs = SimFs::new(14);
            let p = Path::new("a");
            let f = synced_file(&fs, p, b"old!");
            let g = fs.open(Path::new("new"), OpenMode::CreateNew).unwrap();
            f.write_all_at(b"NEW", 0).unwrap();
            g.write_all_at(b"g", 0).unwrap();
            let syncs = fs.syncs();
            fs.fail_nth_sync(2, kind);
            f.sync_all().unwrap();
            f.write_all_at(b"lost", 4).unwrap();
            // The new file's first sync fails: its entry stays volatile.
            assert_eq!(raw(g.sync_data()), Some(code));
            assert_eq!(fs.durable_image(Path::new("new")), None);
            assert_eq!(fs.syncs(), syncs + 1);
            // A failed sync of `f` itself: reads still see the write...
            fs.fail_nth_sync(1, kind);
            assert_eq!(raw(f.sync_data()), Some(code));
            assert_eq!(read_all(&f), b"NEW!lost");
            assert_eq!(fs.durable_image(p).unwrap(), b"NEW!");
            // ...but a retried sync "succeeds" without saving it (fsyncgate).
            f.sync_data().unwrap();
            assert_eq!(fs.durable_image(p).unwrap(), b"NEW!");
            // Writes after the failure are saved by a later sync as usual.
            f.write_all_at(b"+", 8).unwrap();
            f.sync_data().unwrap();
            assert_eq!(fs.durable_image(p).unwrap(), b"NEW!\0\0\0\0+");
            let report = fs.crash();
            assert_eq!(report.files_dropped, 1);
            assert_eq!(read_all(&reopen(&fs, p)), b"NEW!\0\0\0\0+");
        }
    }

    #[test]
    fn power_off_after_stops_every_effect_until_the_crash() {
        let fs = SimFs::new(15);
        let dir = Path::new("d");
        let p = dir.join("a");
        let f = synced_file(&fs, &p, b"0000");
        let other = synced_file(&fs, &dir.join("b"), b"b");
        let ops = fs.ops();
        fs.power_off_after(2);
        f.write_all_at(b"1", 0).unwrap();
        f.sync_data().unwrap();
        assert_eq!(fs.ops(), ops + 2);
        // The machine is off: nothing takes effect, reads still work.
        assert_eq!(raw(f.write_all_at(b"2", 1)), Some(libc::EIO));
        assert_eq!(raw(f.write_vectored_all_at(&[b"2"], 1)), Some(libc::EIO));
        assert_eq!(raw(f.preallocate(4096)), Some(libc::EIO));
        assert_eq!(raw(f.set_len(0)), Some(libc::EIO));
        assert_eq!(raw(f.sync_data()), Some(libc::EIO));
        assert_eq!(raw(f.sync_all()), Some(libc::EIO));
        assert_eq!(raw(fs.sync_dir(dir)), Some(libc::EIO));
        assert_eq!(raw(fs.remove(&dir.join("b"))), Some(libc::EIO));
        assert_eq!(
            fs.open(&dir.join("c"), OpenMode::CreateNew).unwrap_err().raw_os_error(),
            Some(libc::EIO)
        );
        assert_eq!(read_all(&f), b"1000");
        assert_eq!(read_all(&other), b"b");
        assert!(fs.exists(&dir.join("b")));
        assert_eq!(fs.ops(), ops + 2);
        // Power-off refusals do not use up an armed fault.
        fs.fail_nth_write(1, FaultKind::Enospc);
        assert_eq!(raw(f.write_all_at(b"3", 2)), Some(libc::EIO));
        assert_eq!(fs.crash(), CrashReport::default());
        // The crash turns the power back on.
        let f = reopen(&fs, &p);
        assert_eq!(read_all(&f), b"1000");
        assert_eq!(raw(f.write_all_at(b"4", 3)), Some(libc::ENOSPC));
        f.write_all_at(b"4", 3).unwrap();
        f.sync_data().unwrap();
        assert_eq!(fs.durable_image(&p).unwrap(), b"1004");
        // A cut at zero is immediate.
        fs.power_off_after(0);
        assert_eq!(raw(f.write_all_at(b"5", 0)), Some(libc::EIO));
    }

    #[test]
    fn unsynced_writes_before_a_power_cut_may_still_land_or_tear() {
        let p = Path::new("a");
        let mut seen = CrashReport::default();
        for seed in 0..60 {
            let fs = SimFs::new(seed);
            let f = synced_file(&fs, p, &[0u8; 2048]);
            fs.power_off_after(1);
            f.write_all_at(&[1u8; 2048], 0).unwrap();
            assert!(f.sync_data().is_err());
            let report = fs.crash();
            seen.writes_applied += report.writes_applied;
            seen.writes_dropped += report.writes_dropped;
            seen.writes_torn += report.writes_torn;
        }
        assert!(seen.writes_applied > 0 && seen.writes_dropped > 0 && seen.writes_torn > 0);
    }

    #[test]
    fn impossible_ranges_fail_without_effect_or_panic() {
        let fs = SimFs::new(16);
        let f = synced_file(&fs, Path::new("a"), b"ok");
        let writes = fs.writes();
        assert!(f.write_all_at(b"x", u64::MAX).is_err());
        assert!(f.write_vectored_all_at(&[b"x", b"y"], u64::MAX - 1).is_err());
        assert!(f.set_len(u64::MAX).is_err());
        assert!(f.preallocate(u64::MAX).is_err());
        assert_eq!(
            f.read_exact_at(&mut [0u8; 4], u64::MAX - 1).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        f.write_all_at(b"", u64::MAX).unwrap();
        assert_eq!(read_all(&f), b"ok");
        assert_eq!(fs.writes(), writes + 1);
        fs.crash();
        assert_eq!(fs.durable_image(Path::new("a")).unwrap(), b"ok");
    }

    #[test]
    fn growth_without_fallocate_writes_a_byte_per_block_and_can_stop_part_way() {
        let p = Path::new("a");
        // Every write counts: growing 600 -> 8192 with 4096-byte blocks is two writes, the
        // first at 600 + (7592 - 1) % 4096 = 4095, the last at 8191.
        let fs = SimFs::new(20);
        fs.without_fallocate(4096);
        let f = synced_file(&fs, p, &[7u8; 600]);
        let writes = fs.writes();
        f.preallocate(8192).unwrap();
        assert_eq!(fs.writes(), writes + 2);
        assert_eq!(f.len().unwrap(), 8192);
        assert!(read_all(&f)[600..].iter().all(|&b| b == 0));
        // A fault on the second write leaves the file one block longer than it was.
        fs.fail_nth_write(2, FaultKind::Enospc);
        assert_eq!(raw(f.preallocate(3 * 8192)), Some(libc::ENOSPC));
        assert_eq!(f.len().unwrap(), 8192 + 4096);
        // A crash during an unsynced growth keeps any subset of the bytes.
        let mut lengths = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let fs = SimFs::new(seed);
            fs.without_fallocate(4096);
            let f = synced_file(&fs, p, &[1u8; 8192]);
            f.preallocate(4 * 8192).unwrap();
            fs.crash();
            let len = reopen(&fs, p).len().unwrap();
            assert_eq!(len % 4096, 0);
            lengths.insert(len);
        }
        assert!(lengths.iter().any(|l| l % 8192 != 0), "{lengths:?}");
    }

    #[test]
    fn a_space_limit_refuses_growth_past_it_with_enospc() {
        let fs = SimFs::new(21);
        let a = synced_file(&fs, Path::new("a"), &[1u8; 1000]);
        let b = synced_file(&fs, Path::new("b"), &[2u8; 1000]);
        fs.set_space_limit(Some(4000));
        // Overwrites inside the file need no space.
        a.write_all_at(&[3u8; 1000], 0).unwrap();
        assert_eq!(raw(a.write_all_at(&[3u8; 10], 2995)), Some(libc::ENOSPC));
        assert_eq!(raw(b.preallocate(3001)), Some(libc::ENOSPC));
        assert_eq!(raw(b.set_len(3001)), Some(libc::ENOSPC));
        b.preallocate(3000).unwrap();
        // Without fallocate the growth goes as far as the space does.
        fs.without_fallocate(512);
        a.set_len(0).unwrap();
        assert_eq!(raw(a.preallocate(2048)), Some(libc::ENOSPC));
        assert_eq!(a.len().unwrap(), 512);
        fs.set_space_limit(None);
        a.preallocate(2048).unwrap();
        assert_eq!(a.len().unwrap(), 2048);
    }

    #[test]
    fn sector_pieces_cut_at_absolute_boundaries() {
        assert_eq!(sector_pieces(700, 1700), vec![(700, 1024), (1024, 1536), (1536, 1700)]);
        assert_eq!(sector_pieces(512, 1024), vec![(512, 1024)]);
        assert_eq!(sector_pieces(0, 1), vec![(0, 1)]);
        assert!(sector_pieces(5, 5).is_empty());
    }

    #[test]
    fn concurrent_writers_and_a_crash_neither_panic_nor_lose_synced_data() {
        let fs = SimFs::new(17);
        // Every thread opens its file before the crash, or a late one would never stop.
        let opened = Arc::new(std::sync::Barrier::new(5));
        let threads: Vec<_> = (0..4u8)
            .map(|t| {
                let fs = fs.clone();
                let opened = Arc::clone(&opened);
                std::thread::spawn(move || {
                    let f = fs.open(Path::new(&format!("t{t}")), OpenMode::CreateNew).unwrap();
                    opened.wait();
                    let mut synced = 0u64;
                    // Fail stop at the first error: the crash kills this handle.
                    for i in 0..u64::MAX {
                        let step = f.write_all_at(&[t; 512], i * 512).and_then(|()| f.sync_data());
                        if step.is_err() {
                            break;
                        }
                        synced = i + 1;
                    }
                    synced
                })
            })
            .collect();
        opened.wait();
        while fs.syncs() < 200 {
            std::thread::yield_now();
        }
        fs.crash();
        for (t, thread) in threads.into_iter().enumerate() {
            let synced = thread.join().unwrap() as usize;
            let p = PathBuf::from(format!("t{t}"));
            let image = fs.durable_image(&p).unwrap_or_default();
            assert!(image.len() >= synced * 512 && image.len() <= (synced + 1) * 512);
            assert!(image.iter().all(|&b| b == t as u8));
        }
    }
}
