//! The process's allocator, mimalloc, and the one option Walden changes in it.
//!
//! Every request allocates and frees many small buffers (tokens, rows, keys) on one of many
//! worker threads; glibc's malloc spent a tenth of the server's CPU on them under
//! `walden bench seed001`, mimalloc's per-thread free lists far less.
//!
//! A query that materializes rows frees tens of megabytes when it ends. By default mimalloc
//! hands such memory back to the kernel soon after, and the next query faults it in again,
//! 2 MB at a time, each page zeroed by the kernel: under `walden bench queries` that zeroing
//! was 40% of a scan's CPU time. [`keep_freed_memory`] delays the return by a few seconds, so
//! back-to-back queries reuse their memory and an idle server still gives it back.

#![allow(unsafe_code)]

use std::ffi::{c_int, c_long};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in the `mi_option_e` enumeration of the mimalloc 3 that
/// `libmimalloc-sys` builds (its Rust constants follow mimalloc 2's numbering, which differs).
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// How long freed memory stays with the process before it goes back to the kernel.
const PURGE_DELAY_MS: c_long = 5_000;

extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
}

/// Keeps freed memory for [`PURGE_DELAY_MS`] before returning it to the kernel.
pub(crate) fn keep_freed_memory() {
    // SAFETY: both functions only read or write one entry of mimalloc's option table, and
    // the option's index is checked against its documented default by the test below.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn mi_option_get(option: c_int) -> c_long;
    }

    /// The purge delay mimalloc is using, in milliseconds.
    fn purge_delay_ms() -> c_long {
        // SAFETY: reads one entry of mimalloc's option table.
        unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }
    }

    /// The option index names the purge delay: before Walden sets it, it holds the purge
    /// delay's default in mimalloc 3 (1,000 ms; no other option defaults to that value).
    #[test]
    fn the_option_index_is_the_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(purge_delay_ms(), 1_000);
        }
        keep_freed_memory();
        assert_eq!(purge_delay_ms(), PURGE_DELAY_MS);
    }
}
