//! A cheap clock for stamping events at a high rate.
//!
//! `Instant::now()` reads `CLOCK_MONOTONIC`, which on a virtual machine costs about as much as
//! the rest of a delayed commit's append (25 ns or more through the vDSO). The kernel's
//! `CLOCK_MONOTONIC_COARSE` is the same clock as of the last timer tick: a few nanoseconds to
//! read, behind the fine clock by less than one tick ([`coarse_resolution`], 1 to 10 ms).

use std::time::Duration;

/// `CLOCK_MONOTONIC_COARSE` now: never decreasing, behind `Instant::now()`'s clock by less
/// than [`coarse_resolution`], and on the same time base (so differences between the two are
/// meaningful up to that error).
pub fn coarse_monotonic() -> Duration {
    read(libc::CLOCK_MONOTONIC_COARSE, libc::clock_gettime)
}

/// The step of [`coarse_monotonic`]: the kernel's timer tick.
pub fn coarse_resolution() -> Duration {
    read(libc::CLOCK_MONOTONIC_COARSE, libc::clock_getres)
}

/// The CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`): a system call, not
/// a vDSO read (about a microsecond on a virtual machine), so for per-statement accounting,
/// not per row.
pub fn thread_cpu_time() -> Duration {
    read(libc::CLOCK_THREAD_CPUTIME_ID, libc::clock_gettime)
}

fn read(
    clock: libc::clockid_t,
    call: unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int,
) -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call to fill; both calls only
    // write through the pointer and cannot fail for a clock id the kernel defines.
    let rc = unsafe { call(clock, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(u64::try_from(ts.tv_sec).unwrap_or(0), u32::try_from(ts.tv_nsec).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coarse_clock_moves_forward_in_ticks() {
        let tick = coarse_resolution();
        assert!(tick > Duration::ZERO && tick <= Duration::from_millis(100), "{tick:?}");
        let start = coarse_monotonic();
        let mut now = start;
        while now == start {
            std::thread::sleep(Duration::from_millis(1));
            let next = coarse_monotonic();
            assert!(next >= now);
            now = next;
        }
        assert!(now > start);
    }

    #[test]
    fn the_thread_cpu_clock_counts_this_threads_work() {
        let start = thread_cpu_time();
        let mut x = 0_u64;
        while thread_cpu_time() < start + Duration::from_millis(2) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(x > 0);
        // A sleeping thread uses no CPU.
        let before = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(50));
        assert!(thread_cpu_time() - before < Duration::from_millis(25));
    }
}
