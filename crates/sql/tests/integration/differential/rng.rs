//! A small seeded generator of pseudo-random numbers: the test must replay a seed exactly on any
//! machine and any version of its dependencies, so it draws from the project's own SplitMix64
//! (the crash simulator's), with the helpers the generator needs.

use walden_io::SplitMix64;

#[derive(Debug, Clone)]
pub struct Rng {
    inner: SplitMix64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Mixing the seed first keeps neighbouring seeds (0, 1, 2, ...) far apart.
        let mut rng = Rng { inner: SplitMix64::new(seed ^ 0x5851_f42d_4c95_7f2d) };
        rng.next_u64();
        rng
    }

    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// A number in `0..n`; `n` must be positive.
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "below(0)");
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi, "range({lo}, {hi})");
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    /// True `percent` times out of a hundred.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}
