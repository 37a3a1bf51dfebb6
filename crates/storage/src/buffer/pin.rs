//! Pinning a page: the page-table lookup that finds or maps a frame, the load that reads (or
//! formats) the page once however many threads ask for it, and the handles a caller holds: the
//! [`PinnedPage`] and its read and write latch guards. A frame stays with its page while any pin
//! on it lives, and a change is counted dirty only through [`PageWriteGuard::mark_dirty`], which
//! keeps `rec_lsn` at or below the first change not yet written (rules 2, 3 and 6).

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use super::frames::Victim;

use super::{bump, check_page, lock, BufferError, Frame, Shared, WriteBy};
use crate::file::FileError;
use crate::page::{Lsn, Page, PageId, PageType};

impl Shared {
    /// Pins page `id`, loading it if it is not cached: from the file, or for `new` as a freshly
    /// formatted page of that type (which also replaces a cached image).
    pub(super) fn pin(
        self: &Arc<Self>,
        id: PageId,
        new: Option<PageType>,
    ) -> Result<PinnedPage, BufferError> {
        let (frames, member) = (&*self.frames, &self.member);
        let key = (member.key, id);
        // The deadline is read off the clock only when a wait begins: a cached page is the
        // common case and should not pay for a clock read.
        let mut deadline = None;
        let mut table = frames.table();
        loop {
            member.check_failed()?;
            if let Some(&f) = table.map.get(&key) {
                let desc = &mut table.descs[f];
                if desc.loading {
                    table = frames.wait(table, None);
                    continue;
                }
                desc.pins += 1;
                desc.referenced = true;
                drop(table);
                let pinned = PinnedPage { shared: Arc::clone(self), frame: f, id };
                if let Some(page_type) = new {
                    let frame = frames.frame(f);
                    let mut image = frame.write_latch();
                    *image = Page::new(id, page_type);
                    frame.dirty().version += 1;
                }
                return Ok(pinned);
            }
            match frames.find_victim(&mut table) {
                Victim::Ready(f) => {
                    frames.install(&mut table, f, member, id);
                    drop(table);
                    if new.is_none() {
                        crate::io_stats::count_physical_read();
                    }
                    return self.load(f, id, new);
                }
                Victim::Dirty(f, owner, old) => {
                    let desc = &mut table.descs[f];
                    desc.writing = true;
                    desc.pins += 1;
                    drop(table);
                    let written = frames.write_out(&owner, f, old, WriteBy::Eviction);
                    // Another database's failed write-out is that database's failure (its
                    // frames went with it); this fetch goes on looking for a frame.
                    if let Err(e) = written {
                        if Arc::ptr_eq(&owner, member) {
                            return Err(e);
                        }
                    }
                    table = frames.table();
                }
                Victim::None => {
                    let wait = Duration::from_millis(member.frame_wait_ms.load(Ordering::Relaxed));
                    let deadline = *deadline.get_or_insert_with(|| Instant::now() + wait);
                    if Instant::now() >= deadline {
                        return Err(BufferError::NoFreeFrame { frames: frames.capacity() });
                    }
                    table = frames.wait(table, Some(deadline));
                }
            }
        }
    }

    /// Fills frame `f`, just installed for `id`, and ends its loading state.
    pub(super) fn load(
        self: &Arc<Self>,
        f: usize,
        id: PageId,
        new: Option<PageType>,
    ) -> Result<PinnedPage, BufferError> {
        let image = match new {
            Some(page_type) => Ok(Page::new(id, page_type)),
            None => self.read(id),
        };
        let ok = image.is_ok();
        if let Ok(page) = image.as_ref() {
            // Nobody else can hold the latch: the frame was unpinned when installed, and the
            // loading state keeps everyone who wants the page waiting.
            self.frames.frame(f).write_latch().clone_from(page);
        }
        let mut table = self.frames.table();
        table.descs[f].loading = false;
        if !ok {
            // A discard may already have unmapped it.
            if table.descs[f].holds(&self.member, id) {
                table.descs[f].page = None;
                table.map.remove(&(self.member.key, id));
            }
            self.frames.unpin(&mut table, f);
        }
        self.frames.notify(&table);
        drop(table);
        image.map(|_| PinnedPage { shared: Arc::clone(self), frame: f, id })
    }

    /// Reads page `id` from the file: checksum (in [`DataFile::read_page`]), then the record
    /// area of slotted pages.
    pub(super) fn read(&self, id: PageId) -> Result<Page, BufferError> {
        let page = self.member.file.read_page(id)?;
        check_page(&page)?;
        bump(&self.member.counters.reads);
        Ok(page)
    }
}

impl Shared {
    /// Makes sure page `id` lies inside the file, growing it by at least `grow_pages`.
    pub(super) fn ensure_in_file(&self, id: PageId) -> Result<(), BufferError> {
        let file = &self.member.file;
        if id < file.page_count() {
            return Ok(());
        }
        let _grow = lock(&self.member.grow_lock);
        let count = file.page_count();
        if id < count {
            return Ok(());
        }
        let needed = id - count + 1;
        let chunk = self.member.config.grow_pages.min(u32::MAX - count);
        match file.grow(needed.max(chunk)) {
            Ok(_) => Ok(()),
            // A failed sync may have lost pages written earlier (invariant 8); running out of
            // space while preallocating has not, and is the caller's to report.
            Err(e @ FileError::Io { op: "sync", .. }) => Err(self.fail(e.into())),
            Err(e) => Err(e.into()),
        }
    }
}

/// A page pinned in its frame: the frame will not be given to another page until this is
/// dropped. Latch it with [`PinnedPage::read`] or [`PinnedPage::write`].
pub struct PinnedPage {
    pub(super) shared: Arc<Shared>,
    pub(super) frame: usize,
    pub(super) id: PageId,
}

impl fmt::Debug for PinnedPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedPage").field("id", &self.id).field("frame", &self.frame).finish()
    }
}

impl PinnedPage {
    /// The page's id.
    pub fn id(&self) -> PageId {
        self.id
    }

    /// Page `id` of the same pool, pinned in place of this one: a descent's step from a
    /// parent it has done with to the child it chose. Where the child is cached, this pin
    /// ends and the child's begins under one hold of the pool's table (a fetch and an unpin
    /// take it once each); otherwise this pin ends and the child is fetched as
    /// [`BufferPool::fetch`] does. The caller must hold no latch of this page.
    pub fn step_to(mut self, id: PageId) -> Result<PinnedPage, BufferError> {
        crate::io_stats::count_logical_read();
        self.shared.member.check_failed()?;
        let stepped = {
            let frames = &*self.shared.frames;
            let mut table = frames.table();
            match table.map.get(&(self.shared.member.key, id)) {
                Some(&f) if !table.descs[f].loading => {
                    let desc = &mut table.descs[f];
                    desc.pins += 1;
                    desc.referenced = true;
                    frames.unpin(&mut table, self.frame);
                    Some(f)
                }
                _ => None,
            }
        };
        if let Some(f) = stepped {
            self.frame = f;
            self.id = id;
            return Ok(self);
        }
        let shared = Arc::clone(&self.shared);
        drop(self);
        shared.pin(id, None)
    }

    /// Takes the page latch shared.
    pub fn read(&self) -> PageReadGuard<'_> {
        PageReadGuard { image: self.shared.frames.frame(self.frame).read_latch() }
    }

    /// Takes the page latch exclusively. Every change through the guard must be followed by
    /// [`PageWriteGuard::mark_dirty`] before the guard drops.
    pub fn write(&self) -> PageWriteGuard<'_> {
        let frame = self.shared.frames.frame(self.frame);
        PageWriteGuard { image: frame.write_latch(), frame, shared: &self.shared }
    }
}

impl Drop for PinnedPage {
    fn drop(&mut self) {
        let mut table = self.shared.frames.table();
        self.shared.frames.unpin(&mut table, self.frame);
    }
}

/// The page latch held shared.
pub struct PageReadGuard<'a> {
    pub(super) image: RwLockReadGuard<'a, Page>,
}

impl fmt::Debug for PageReadGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PageReadGuard").field(&*self.image).finish()
    }
}

impl Deref for PageReadGuard<'_> {
    type Target = Page;

    fn deref(&self) -> &Page {
        &self.image
    }
}

/// The page latch held exclusively.
pub struct PageWriteGuard<'a> {
    pub(super) image: RwLockWriteGuard<'a, Page>,
    pub(super) frame: &'a Frame,
    /// The frame's database, whose dirty count the first change raises.
    pub(super) shared: &'a Shared,
}

impl fmt::Debug for PageWriteGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PageWriteGuard").field(&*self.image).finish()
    }
}

impl Deref for PageWriteGuard<'_> {
    type Target = Page;

    fn deref(&self) -> &Page {
        &self.image
    }
}

impl DerefMut for PageWriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut Page {
        &mut self.image
    }
}

impl PageWriteGuard<'_> {
    /// Records that the page was changed by the log record whose LSN is `lsn`: the page's LSN
    /// becomes `max(page_lsn, lsn)`, the frame is dirty, and if it was clean its `rec_lsn`
    /// becomes `lsn`. LSN 0 (unlogged pages, tempdb) still makes the frame dirty.
    pub fn mark_dirty(&mut self, lsn: Lsn) {
        if lsn > self.image.page_lsn() {
            self.image.set_page_lsn(lsn);
        }
        let mut state = self.frame.dirty();
        state.version += 1;
        if !state.dirty {
            state.dirty = true;
            state.rec_lsn = lsn;
            self.shared.frames.count_dirty(&self.shared.member, true);
        }
        if state.copied.is_some() && state.redirtied.is_none() {
            state.redirtied = Some(lsn);
        }
    }
}
