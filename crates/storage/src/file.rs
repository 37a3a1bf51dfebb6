//! Data files: a database's pages on disk.
//!
//! A data file (`<name>.mdf`, as SQL Server names its primary data file) is an array of 8 KiB
//! pages; page `n` lives at byte `n * PAGE_SIZE`, and the file's length is always a whole
//! number of pages. Page 0 is the **file header**: a [`PageType::FileHeader`] page whose slot
//! 0 holds one record (like SQL Server's file header page, whose fields are a record too):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `WALDNMDF` |
//! | 8 | 4 | format version (1) |
//! | 12 | 4 | page size (8192) |
//! | 16 | 4 | database id |
//! | 20 | 8 | creation time, microseconds since the Unix epoch |
//!
//! # Invariants and why
//!
//! * **Pages are written sealed and read verified.** [`DataFile::write_page`] seals the page
//!   (checksum seeded with its id) just before the write, and [`DataFile::read_page`] verifies
//!   it against the id it was read for, so bit rot, torn writes and misdirected writes surface
//!   as [`PageError::Corrupt`] naming the page, and a preallocated page that was never written
//!   as [`PageError::NeverWritten`].
//! * **The file only grows by preallocation.** [`DataFile::grow`] allocates the new pages
//!   (`fallocate`, zero-filling them where the file system cannot) and syncs the file's
//!   metadata before returning, and `write_page` refuses pages past the end. So every page
//!   write lands in allocated space (it cannot fail for want of room), a later `sync`
//!   (`fdatasync`) makes it durable (with the extent's change from unwritten to written, the
//!   first time a page of a reserved range is written), and a crash can never leave a page
//!   the file's size does not cover.
//! * **A partial last page is the remains of a growth, and is cut.** A crash or `ENOSPC` in the
//!   middle of a growth (worst on file systems without `fallocate`, where `posix_fallocate`
//!   writes a byte per block) can leave the file at a length that is not a whole number of
//!   pages. [`DataFile::open`] cuts such a tail off (and, if it cannot, ignores it). That is
//!   safe because nothing anyone relies on can be in it: the size is made durable before
//!   `page_count` covers the new pages, so no page was ever written past the last whole page
//!   the durable size held, and the bytes past it are the zeros of a growth that did not
//!   finish. Whole pages a partial growth did add are zero, so they read as never written, as
//!   any preallocated page does. Nor can the log need the cut bytes: the WAL rule only orders
//!   the log before page writes, and a page the log describes that lies past the end after the
//!   cut is rebuilt by redo, which grows the file again (`PageOutOfRange` in redo means
//!   "rebuild from the log", like a never-written page).
//! * **Growth follows the file's policy** (`FILEGROWTH`, `MAXSIZE`: [`FileGrowth`]). A growth
//!   asked for `n` pages takes one whole step (or `n`, if more), capped at the maximum; a need
//!   past the maximum is [`FileError::Full`] and changes nothing. The policy is not in the
//!   file: the engine records it in master and sets it at every open (the default, one page
//!   per page asked for and no cap, is for callers without one).
//! * **A data file is shared.** Reads and writes take `&self` and use positioned I/O, so one
//!   `DataFile` serves many threads; growth is serialized by a lock. Keeping two writers off
//!   the same page, and the WAL rule, are the buffer pool's job.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use walden_io::{FileGrowth, FileRef, GrowthStep, OpenMode, Vfs};

use crate::page::{Page, PageError, PageId, PageType, PAGE_SIZE};

/// The first 8 bytes of the file header record.
pub const FILE_MAGIC: [u8; 8] = *b"WALDNMDF";

/// The data file format this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// The growth policy of a file nobody set one for: exactly the pages asked for, no cap.
const EXACT_GROWTH: FileGrowth =
    FileGrowth { step: GrowthStep::Bytes(PAGE_SIZE as u64), max_bytes: None };

/// The length of the file header record.
const HEADER_RECORD_LEN: usize = 28;

/// The fields of a data file's header page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// The data file format version.
    pub format_version: u32,
    /// The page size the file was created with.
    pub page_size: u32,
    /// The database the file belongs to.
    pub database_id: u32,
    /// When the file was created, in microseconds since the Unix epoch.
    pub created_unix_micros: u64,
}

impl FileHeader {
    fn encode(&self) -> [u8; HEADER_RECORD_LEN] {
        let mut r = [0; HEADER_RECORD_LEN];
        r[0..8].copy_from_slice(&FILE_MAGIC);
        r[8..12].copy_from_slice(&self.format_version.to_le_bytes());
        r[12..16].copy_from_slice(&self.page_size.to_le_bytes());
        r[16..20].copy_from_slice(&self.database_id.to_le_bytes());
        r[20..28].copy_from_slice(&self.created_unix_micros.to_le_bytes());
        r
    }

    fn decode(r: &[u8]) -> Result<FileHeader, String> {
        let r: &[u8; HEADER_RECORD_LEN] = r
            .try_into()
            .map_err(|_| format!("header record is {} bytes, not {HEADER_RECORD_LEN}", r.len()))?;
        if r[0..8] != FILE_MAGIC {
            return Err(format!("bad magic {:02x?}", &r[0..8]));
        }
        let u32_at = |o: usize| u32::from_le_bytes([r[o], r[o + 1], r[o + 2], r[o + 3]]);
        let mut created = [0; 8];
        created.copy_from_slice(&r[20..28]);
        let header = FileHeader {
            format_version: u32_at(8),
            page_size: u32_at(12),
            database_id: u32_at(16),
            created_unix_micros: u64::from_le_bytes(created),
        };
        if header.format_version != FORMAT_VERSION {
            return Err(format!("unsupported format version {}", header.format_version));
        }
        if header.page_size as usize != PAGE_SIZE {
            return Err(format!("page size {} is not {PAGE_SIZE}", header.page_size));
        }
        Ok(header)
    }
}

/// What can go wrong with a data file.
#[derive(Debug)]
pub enum FileError {
    /// The file system failed.
    Io {
        /// What was being done: "open", "read", "write", "grow", "sync".
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A page failed verification (or was never written).
    Page(PageError),
    /// The file is not a Walden data file this code can open.
    NotADataFile {
        /// The file.
        path: PathBuf,
        /// Why not.
        detail: String,
    },
    /// A page id at or past the end of the file.
    PageOutOfRange {
        /// The page asked for.
        page_id: PageId,
        /// The file's page count.
        page_count: u32,
    },
    /// Growing would take page ids past `u32::MAX`.
    TooLarge,
    /// The file may not grow as far as needed: `MAXSIZE` reached, or growth is off.
    Full {
        /// The file.
        path: PathBuf,
    },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Io { op, path, source } => {
                write!(f, "{op} failed on {}: {source}", path.display())
            }
            FileError::Page(e) => e.fmt(f),
            FileError::NotADataFile { path, detail } => {
                write!(f, "{} is not a Walden data file: {detail}", path.display())
            }
            FileError::PageOutOfRange { page_id, page_count } => {
                write!(f, "page {page_id} is past the end of the file ({page_count} pages)")
            }
            FileError::TooLarge => write!(f, "data file would exceed 2^32 pages"),
            FileError::Full { path } => {
                write!(f, "{} is at its maximum size and cannot grow", path.display())
            }
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileError::Io { source, .. } => Some(source),
            FileError::Page(e) => Some(e),
            _ => None,
        }
    }
}

impl From<PageError> for FileError {
    fn from(e: PageError) -> Self {
        FileError::Page(e)
    }
}

thread_local! {
    /// Set while this thread runs [`past_max_size`]'s closure.
    static PAST_MAX: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with growth past `MAXSIZE` allowed on this thread: for rollbacks, which must not
/// fail for want of the room the changes they undo had. Growth stays off with `FILEGROWTH =
/// 0` but for what is needed, and a full disk still fails.
pub fn past_max_size<T>(f: impl FnOnce() -> T) -> T {
    let before = PAST_MAX.replace(true);
    let out = f();
    PAST_MAX.set(before);
    out
}

/// An open data file.
#[derive(Debug)]
pub struct DataFile {
    file: FileRef,
    path: PathBuf,
    header: FileHeader,
    page_count: AtomicU32,
    /// Serializes [`DataFile::grow`] and [`DataFile::grow_ahead`], and holds the growth policy;
    /// reads and writes do not take it.
    grow_lock: Mutex<FileGrowth>,
    /// Bytes past the last whole page that [`DataFile::open`] found (and cut if it could).
    partial_tail: u64,
    /// Growths made because a page was needed past the end: someone waited for each.
    growths_on_demand: AtomicU64,
    /// Growths made ahead of need ([`DataFile::grow_ahead`]).
    growths_ahead: AtomicU64,
}

impl DataFile {
    /// The conventional path of data file `name` in `dir`: `dir/name.mdf`.
    pub fn path_for(dir: &Path, name: &str) -> PathBuf {
        dir.join(format!("{name}.mdf"))
    }

    /// Creates a data file of `initial_pages` zero-filled pages (at least 1), writes its header
    /// page, and makes the file and its directory entry durable. Fails if the file exists. On
    /// failure a partly created file may remain; the caller removes it.
    pub fn create(
        vfs: &dyn Vfs,
        path: &Path,
        database_id: u32,
        initial_pages: u32,
    ) -> Result<DataFile, FileError> {
        let io_err = |op| move |source| FileError::Io { op, path: path.to_path_buf(), source };
        let file = vfs.open(path, OpenMode::CreateNew).map_err(io_err("create"))?;
        let pages = initial_pages.max(1);
        // Allocate first, so that even the header page's write is an overwrite.
        file.preallocate(u64::from(pages) * PAGE_SIZE as u64).map_err(io_err("grow"))?;
        let header = FileHeader {
            format_version: FORMAT_VERSION,
            page_size: PAGE_SIZE as u32,
            database_id,
            created_unix_micros: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
        };
        let mut page = Page::new(0, PageType::FileHeader);
        page.push(&header.encode())?;
        let data_file = DataFile {
            file,
            path: path.to_path_buf(),
            header,
            page_count: AtomicU32::new(pages),
            grow_lock: Mutex::new(EXACT_GROWTH),
            partial_tail: 0,
            growths_on_demand: AtomicU64::new(0),
            growths_ahead: AtomicU64::new(0),
        };
        data_file.write_page(&mut page)?;
        data_file.file.sync_all().map_err(io_err("sync"))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            vfs.sync_dir(dir).map_err(io_err("sync"))?;
        }
        Ok(data_file)
    }

    /// Opens an existing data file and checks its header page. A partial page at the end (an
    /// interrupted growth, see the module documentation) is cut off, or ignored if the cut
    /// fails; [`DataFile::partial_tail`] says how many bytes it had.
    pub fn open(vfs: &dyn Vfs, path: &Path) -> Result<DataFile, FileError> {
        let io_err = |op| move |source| FileError::Io { op, path: path.to_path_buf(), source };
        let not_data =
            |detail: String| FileError::NotADataFile { path: path.to_path_buf(), detail };
        let file = vfs.open(path, OpenMode::Existing).map_err(io_err("open"))?;
        let len = file.len().map_err(io_err("open"))?;
        if len < PAGE_SIZE as u64 {
            // Not even the header page: no growth leaves this, as creation writes and syncs
            // the header page before the database exists anywhere else.
            return Err(not_data(format!("length {len} is less than one page ({PAGE_SIZE})")));
        }
        let partial_tail = len % PAGE_SIZE as u64;
        if partial_tail != 0 {
            // Best effort: a tail that stays is ignored (page_count stops before it), and the
            // next growth starts from the last whole page and zero-fills over it.
            let whole = len - partial_tail;
            let _ = file.set_len(whole).and_then(|()| file.sync_all());
        }
        let pages = u32::try_from(len / PAGE_SIZE as u64).map_err(|_| FileError::TooLarge)?;
        let mut page = Page::zeroed();
        file.read_exact_at(page.as_bytes_mut(), 0).map_err(io_err("read"))?;
        page.verify(0)?;
        if page.page_type() != Some(PageType::FileHeader) {
            return Err(not_data(format!("page 0 is a {:?} page", page.page_type())));
        }
        let header = FileHeader::decode(page.get(0)?).map_err(not_data)?;
        Ok(DataFile {
            file,
            path: path.to_path_buf(),
            header,
            page_count: AtomicU32::new(pages),
            grow_lock: Mutex::new(EXACT_GROWTH),
            partial_tail,
            growths_on_demand: AtomicU64::new(0),
            growths_ahead: AtomicU64::new(0),
        })
    }

    /// Bytes past the last whole page when the file was opened: the remains of a growth a
    /// crash or a full disk interrupted, cut off (or ignored) by [`DataFile::open`]. 0 if none.
    pub fn partial_tail(&self) -> u64 {
        self.partial_tail
    }

    /// The header read or written when the file was opened.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of pages in the file, written or not.
    pub fn page_count(&self) -> u32 {
        self.page_count.load(Ordering::Acquire)
    }

    /// Reads and verifies page `page_id`.
    pub fn read_page(&self, page_id: PageId) -> Result<Page, FileError> {
        self.check_range(page_id)?;
        let mut page = Page::zeroed();
        self.file
            .read_exact_at(page.as_bytes_mut(), offset(page_id))
            .map_err(|source| self.io_err("read", source))?;
        page.verify(page_id)?;
        Ok(page)
    }

    /// Seals `page` and writes it at its own page id, which must be inside the file. The write
    /// is durable only after [`DataFile::sync`].
    pub fn write_page(&self, page: &mut Page) -> Result<(), FileError> {
        let page_id = page.page_id();
        self.check_range(page_id)?;
        page.seal();
        self.file
            .write_all_at(page.as_bytes(), offset(page_id))
            .map_err(|source| self.io_err("write", source))
    }

    /// The growth policy.
    pub fn growth(&self) -> FileGrowth {
        *self.grow_lock.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the growth policy (`FILEGROWTH`, `MAXSIZE`); it applies from the next growth.
    pub fn set_growth(&self, growth: FileGrowth) {
        *self.grow_lock.lock().unwrap_or_else(PoisonError::into_inner) = growth;
    }

    /// Adds at least `n` pages of zeros at the end of the file, as many more as the growth
    /// policy's step says, and makes the new size durable; returns the id of the first new
    /// page. [`FileError::Full`] if the policy does not allow `n` more pages.
    pub fn grow(&self, n: u32) -> Result<PageId, FileError> {
        let policy = self.grow_lock.lock().unwrap_or_else(PoisonError::into_inner);
        let first = self.page_count();
        let needed = first.checked_add(n).ok_or(FileError::TooLarge)?;
        let target = match policy.target(offset(first), offset(needed), PAGE_SIZE as u64) {
            Some(target) => target,
            None if PAST_MAX.get() => offset(needed),
            None => return Err(FileError::Full { path: self.path.clone() }),
        };
        let new_count = u32::try_from(target / PAGE_SIZE as u64).unwrap_or(u32::MAX).max(needed);
        self.extend(first, new_count)?;
        self.growths_on_demand.fetch_add(1, Ordering::Relaxed);
        Ok(first)
    }

    /// Grows the file by steps of its policy while fewer than `spare` pages lie past
    /// `in_use` (the first page never handed out), so that the allocations ahead find their
    /// room made. Returns whether it grew; a file at its maximum simply does not.
    pub fn grow_ahead(&self, in_use: u32, spare: u32) -> Result<bool, FileError> {
        let policy = self.grow_lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut grew = false;
        loop {
            let count = self.page_count();
            if count.saturating_sub(in_use) >= spare {
                return Ok(grew);
            }
            let next = policy.target(offset(count), offset(count) + 1, PAGE_SIZE as u64);
            let Some(target) = next else { return Ok(grew) };
            let new_count = u32::try_from(target / PAGE_SIZE as u64).unwrap_or(u32::MAX);
            if new_count <= count {
                return Ok(grew);
            }
            self.extend(count, new_count)?;
            self.growths_ahead.fetch_add(1, Ordering::Relaxed);
            grew = true;
        }
    }

    /// Growths since the file was opened: (on demand, ahead of need). A growth on demand
    /// made its caller wait for the zero-fill.
    pub fn growth_counts(&self) -> (u64, u64) {
        (self.growths_on_demand.load(Ordering::Relaxed), self.growths_ahead.load(Ordering::Relaxed))
    }

    /// Extends the file from `first` to `new_count` pages, durably. Called under `grow_lock`.
    fn extend(&self, first: u32, new_count: u32) -> Result<(), FileError> {
        // Reserved rather than zero-filled: the new pages are written when they are flushed
        // (by the background writer and checkpoints, off any commit), and zeros written first
        // would double the bytes a growing table writes.
        if let Err(source) = self.file.reserve(offset(new_count)) {
            // Out of space part way (without fallocate the growth is a write per block): give
            // back what landed, so the length is whole pages again while the database stays
            // open. Best effort; `open` cuts a partial tail after a crash anyway.
            let _ = self.file.set_len(offset(first));
            return Err(self.io_err("grow", source));
        }
        // The size must be durable before any page in the new range is trusted to be, since a
        // page write is then synced with `sync_data`, which need not carry the metadata.
        self.file.sync_all().map_err(|source| self.io_err("sync", source))?;
        self.page_count.store(new_count, Ordering::Release);
        Ok(())
    }

    /// Makes every page written so far durable.
    pub fn sync(&self) -> Result<(), FileError> {
        self.file.sync_data().map_err(|source| self.io_err("sync", source))
    }

    fn check_range(&self, page_id: PageId) -> Result<(), FileError> {
        let page_count = self.page_count();
        if page_id >= page_count {
            return Err(FileError::PageOutOfRange { page_id, page_count });
        }
        Ok(())
    }

    fn io_err(&self, op: &'static str, source: io::Error) -> FileError {
        FileError::Io { op, path: self.path.clone(), source }
    }
}

/// The byte offset of a page (or, for `page_count`, the file length).
fn offset(page_id: PageId) -> u64 {
    u64::from(page_id) * PAGE_SIZE as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::Corruption;
    use walden_io::{MemFs, OsFs};

    fn path() -> PathBuf {
        DataFile::path_for(Path::new("/db"), "test")
    }

    fn heap_page(id: PageId, rows: &[&[u8]]) -> Page {
        let mut p = Page::new(id, PageType::Heap);
        p.set_object_id(100);
        p.set_page_lsn(77);
        for r in rows {
            p.push(r).unwrap();
        }
        p
    }

    #[test]
    fn create_then_open_reads_the_header() {
        let fs = MemFs::new();
        let f = DataFile::create(&fs, &path(), 5, 4).unwrap();
        assert_eq!(path(), Path::new("/db/test.mdf"));
        assert_eq!(f.page_count(), 4);
        assert_eq!(f.header().database_id, 5);
        assert!(f.header().created_unix_micros > 0);
        let g = DataFile::open(&fs, &path()).unwrap();
        assert_eq!(g.header(), f.header());
        assert_eq!(g.page_count(), 4);
        assert_eq!(g.read_page(0).unwrap().page_type(), Some(PageType::FileHeader));
        assert!(matches!(
            g.read_page(1),
            Err(FileError::Page(PageError::NeverWritten { page_id: 1 }))
        ));
        assert!(matches!(DataFile::create(&fs, &path(), 5, 4), Err(FileError::Io { .. })));
    }

    #[test]
    fn pages_round_trip_and_stay_inside_the_file() {
        let fs = MemFs::new();
        let f = DataFile::create(&fs, &path(), 1, 3).unwrap();
        let mut p = heap_page(2, &[b"alpha", b"beta"]);
        f.write_page(&mut p).unwrap();
        f.sync().unwrap();
        let q = f.read_page(2).unwrap();
        assert_eq!(q, p);
        assert_eq!(q.get(1).unwrap(), b"beta");
        let mut far = heap_page(3, &[]);
        assert!(matches!(
            f.write_page(&mut far),
            Err(FileError::PageOutOfRange { page_id: 3, page_count: 3 })
        ));
        assert!(matches!(f.read_page(3), Err(FileError::PageOutOfRange { .. })));
    }

    #[test]
    fn grow_adds_zero_pages_that_survive_reopen() {
        let fs = MemFs::new();
        let f = DataFile::create(&fs, &path(), 1, 1).unwrap();
        assert_eq!(f.grow(3).unwrap(), 1);
        assert_eq!(f.page_count(), 4);
        f.write_page(&mut heap_page(3, &[b"x"])).unwrap();
        let g = DataFile::open(&fs, &path()).unwrap();
        assert_eq!(g.page_count(), 4);
        assert!(matches!(g.read_page(2), Err(FileError::Page(PageError::NeverWritten { .. }))));
        assert_eq!(g.read_page(3).unwrap().get(0).unwrap(), b"x");
        assert!(matches!(g.grow(u32::MAX), Err(FileError::TooLarge)));
    }

    #[test]
    fn a_partial_page_left_by_an_interrupted_growth_is_cut_at_open() {
        let fs = MemFs::new();
        let f = DataFile::create(&fs, &path(), 1, 3).unwrap();
        f.write_page(&mut heap_page(2, &[b"kept"])).unwrap();
        // Half a page of zeros past the end, as glibc's byte-per-block fallback leaves it.
        let raw = fs.open(&path(), OpenMode::Existing).unwrap();
        raw.write_all_at(&[0], offset(3) + 4095).unwrap();
        let g = DataFile::open(&fs, &path()).unwrap();
        assert_eq!(g.partial_tail(), 4096);
        assert_eq!(g.page_count(), 3);
        assert_eq!(raw.len().unwrap(), offset(3));
        assert_eq!(g.read_page(2).unwrap().get(0).unwrap(), b"kept");
        // It grows on from the last whole page.
        assert_eq!(g.grow(2).unwrap(), 3);
        assert_eq!(raw.len().unwrap(), offset(5));
        assert_eq!(DataFile::open(&fs, &path()).unwrap().partial_tail(), 0);
    }

    #[test]
    fn a_failed_growth_gives_back_what_it_added() {
        let fs = walden_io::SimFs::new(1);
        fs.without_fallocate(4096);
        let f = DataFile::create(&fs, &path(), 1, 2).unwrap();
        fs.set_space_limit(Some(offset(3) + 4096));
        assert!(matches!(f.grow(4), Err(FileError::Io { op: "grow", .. })));
        assert_eq!(f.page_count(), 2);
        let raw = fs.open(&path(), OpenMode::Existing).unwrap();
        assert_eq!(raw.len().unwrap(), offset(2));
        // Once there is room, the same growth succeeds.
        fs.set_space_limit(None);
        assert_eq!(f.grow(4).unwrap(), 2);
        assert_eq!(f.page_count(), 6);
    }

    #[test]
    fn growth_takes_whole_steps_up_to_maxsize_and_stops_there() {
        let fs = MemFs::new();
        let f = DataFile::create(&fs, &path(), 1, 8).unwrap();
        let page = PAGE_SIZE as u64;
        f.set_growth(FileGrowth { step: GrowthStep::Bytes(4 * page), max_bytes: Some(18 * page) });
        // One page asked for, one step taken.
        assert_eq!(f.grow(1).unwrap(), 8);
        assert_eq!(f.page_count(), 12);
        // More than a step asked for: all of it.
        assert_eq!(f.grow(5).unwrap(), 12);
        assert_eq!(f.page_count(), 17);
        // The last step is cut at the maximum; past it, the file is full and unchanged.
        assert_eq!(f.grow(1).unwrap(), 17);
        assert_eq!(f.page_count(), 18);
        assert!(matches!(f.grow(1), Err(FileError::Full { .. })));
        assert_eq!(f.page_count(), 18);
        // A rollback may go past it.
        assert_eq!(past_max_size(|| f.grow(1)).unwrap(), 18);
        assert_eq!(f.page_count(), 19);
        assert!(matches!(f.grow(1), Err(FileError::Full { .. })));
        assert_eq!(f.growth_counts(), (4, 0));
    }

    #[test]
    fn grow_ahead_takes_steps_until_the_spare_pages_are_there() {
        let fs = MemFs::new();
        let f = DataFile::create(&fs, &path(), 1, 8).unwrap();
        let page = PAGE_SIZE as u64;
        f.set_growth(FileGrowth { step: GrowthStep::Percent(50), max_bytes: None });
        assert!(!f.grow_ahead(4, 4).unwrap(), "four spare pages are enough");
        assert!(f.grow_ahead(5, 4).unwrap());
        assert_eq!(f.page_count(), 12);
        assert_eq!(f.growth_counts(), (0, 1));
        // Steps until the spare pages are there: 12 -> 18 -> 27.
        assert!(f.grow_ahead(12, 10).unwrap());
        assert_eq!(f.page_count(), 27);
        f.set_growth(FileGrowth { step: GrowthStep::Bytes(0), max_bytes: None });
        assert!(!f.grow_ahead(27, 4).unwrap(), "FILEGROWTH = 0 never grows");
        assert_eq!(f.page_count(), 27);
        let raw = fs.open(&path(), OpenMode::Existing).unwrap();
        assert_eq!(raw.len().unwrap(), 27 * page);
    }

    #[test]
    fn flipped_byte_on_disk_is_reported_with_the_page_id() {
        let fs = MemFs::new();
        let f = DataFile::create(&fs, &path(), 1, 4).unwrap();
        f.write_page(&mut heap_page(2, &[b"payload"])).unwrap();
        let raw = fs.open(&path(), OpenMode::Existing).unwrap();
        let at = offset(2) + 100;
        let mut b = [0];
        raw.read_exact_at(&mut b, at).unwrap();
        raw.write_all_at(&[b[0] ^ 0x01], at).unwrap();
        match f.read_page(2) {
            Err(FileError::Page(PageError::Corrupt {
                page_id: 2,
                detail: Corruption::ChecksumMismatch { .. },
            })) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn misdirected_write_is_detected() {
        let fs = MemFs::new();
        let f = DataFile::create(&fs, &path(), 1, 4).unwrap();
        let mut p = heap_page(2, &[b"meant for page 2"]);
        f.write_page(&mut p).unwrap();
        // The disk puts page 2's image where page 3 belongs.
        let raw = fs.open(&path(), OpenMode::Existing).unwrap();
        raw.write_all_at(p.as_bytes(), offset(3)).unwrap();
        match f.read_page(3) {
            Err(FileError::Page(PageError::Corrupt {
                page_id: 3,
                detail: Corruption::Misdirected { found: 2 },
            })) => {}
            other => panic!("{other:?}"),
        }
        assert!(f.read_page(2).is_ok());
    }

    #[test]
    fn open_rejects_what_is_not_a_data_file() {
        let fs = MemFs::new();
        let odd = Path::new("/db/odd.mdf");
        fs.open(odd, OpenMode::CreateNew).unwrap().write_all_at(&[1; 100], 0).unwrap();
        assert!(matches!(DataFile::open(&fs, odd), Err(FileError::NotADataFile { .. })));

        let heap = Path::new("/db/heap.mdf");
        let mut p = heap_page(0, &[b"not a header"]);
        p.seal();
        fs.open(heap, OpenMode::CreateNew).unwrap().write_all_at(p.as_bytes(), 0).unwrap();
        assert!(matches!(DataFile::open(&fs, heap), Err(FileError::NotADataFile { .. })));

        let magic = Path::new("/db/magic.mdf");
        let mut p = Page::new(0, PageType::FileHeader);
        p.push(&[0; HEADER_RECORD_LEN]).unwrap();
        p.seal();
        fs.open(magic, OpenMode::CreateNew).unwrap().write_all_at(p.as_bytes(), 0).unwrap();
        match DataFile::open(&fs, magic) {
            Err(FileError::NotADataFile { detail, .. }) => assert!(detail.contains("magic")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn works_on_real_files() {
        let dir = tempfile::tempdir().unwrap();
        let fs = OsFs::new();
        let path = DataFile::path_for(dir.path(), "real");
        {
            let f = DataFile::create(&fs, &path, 9, 2).unwrap();
            f.grow(2).unwrap();
            f.write_page(&mut heap_page(3, &[b"on disk"])).unwrap();
            f.sync().unwrap();
        }
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 * PAGE_SIZE as u64);
        let f = DataFile::open(&fs, &path).unwrap();
        assert_eq!(f.header().database_id, 9);
        assert_eq!(f.read_page(3).unwrap().get(0).unwrap(), b"on disk");
        assert!(matches!(f.read_page(1), Err(FileError::Page(PageError::NeverWritten { .. }))));
    }
}
