//! Giving memory back to the kernel without freeing it: what the buffer pool does with the
//! frames it releases for query memory (`docs/memory.md`).
//!
//! Freeing a frame's image to the allocator would not do: mimalloc keeps freed memory for a
//! while (and a thread's freed blocks with that thread), so the process's resident memory would
//! not fall when the pool gives frames to a query. `madvise(MADV_DONTNEED)` drops the pages
//! from the resident set at once; the memory stays allocated and is faulted in again, as zeros
//! for the private anonymous memory allocators hand out, when it is next touched.

/// Hands the physical memory behind the whole pages inside `bytes` back to the kernel.
/// Afterwards their contents are unspecified (zero on Linux for allocator memory); bytes
/// outside whole pages keep theirs. Failure (an unusual mapping) is ignored: the memory then
/// simply stays resident.
pub fn release_memory(bytes: &mut [u8]) {
    let page = page_size();
    let start = bytes.as_ptr() as usize;
    let first = start.next_multiple_of(page);
    let end = (start + bytes.len()) / page * page;
    if end <= first {
        return;
    }
    let offset = first - start;
    // SAFETY: [first, end) lies inside `bytes`, which this function borrows exclusively, so no
    // other reference sees those pages. MADV_DONTNEED leaves the range mapped and readable
    // (zero-filled or re-read from the mapping's backing), which is a valid value for `u8`.
    let _ = unsafe {
        libc::madvise(bytes.as_mut_ptr().add(offset).cast(), end - first, libc::MADV_DONTNEED)
    };
}

/// The system's page size; 4 KiB if it cannot be read.
fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).ok().filter(|&s| s.is_power_of_two()).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resident bytes of the mapping that holds `ptr`, from /proc/self/smaps.
    fn rss_kb_of(ptr: usize) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((lo, hi)) = range.split_once('-') {
                    if let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                    {
                        inside = (lo..hi).contains(&ptr);
                        continue;
                    }
                }
            }
            if inside {
                if let Some(rest) = line.strip_prefix("Rss:") {
                    return rest.trim().trim_end_matches("kB").trim().parse().ok();
                }
            }
        }
        None
    }

    #[test]
    fn released_pages_leave_the_resident_set_and_read_back_as_zero() {
        // 64 MiB of touched memory, large enough to have a mapping of its own.
        let mut block = vec![7u8; 64 << 20];
        let ptr = block.as_ptr() as usize;
        let before = rss_kb_of(ptr).expect("the block's mapping in smaps");
        assert!(before >= 60 << 10, "{before} kB resident before");
        release_memory(&mut block[..32 << 20]);
        let after = rss_kb_of(ptr).expect("the block's mapping in smaps");
        assert!(before - after >= 31 << 10, "{before} kB resident before, {after} kB after");
        let page = page_size();
        // Whole pages inside the range read as zero; the rest is untouched.
        assert!(block[page..(32 << 20) - page].iter().all(|&b| b == 0));
        assert!(block[32 << 20..].iter().all(|&b| b == 7));
    }

    #[test]
    fn a_range_without_a_whole_page_is_left_alone() {
        let mut bytes = vec![9u8; 100];
        release_memory(&mut bytes);
        release_memory(&mut []);
        assert!(bytes.iter().all(|&b| b == 9));
    }
}
