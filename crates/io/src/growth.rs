//! How a file grows: SQL Server's `FILEGROWTH` and `MAXSIZE`, shared by the data file and the
//! log, which grow in different units (pages, segments) by the same rule.

/// The increment of one growth (`FILEGROWTH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrowthStep {
    /// A fixed number of bytes; 0 means the file does not grow by itself (`FILEGROWTH = 0`).
    Bytes(u64),
    /// A percentage of the file's size when it grows.
    Percent(u32),
}

/// A file's growth policy: the step and the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileGrowth {
    /// How much one growth adds.
    pub step: GrowthStep,
    /// The largest the file may become (`MAXSIZE`); `None` is `UNLIMITED`.
    pub max_bytes: Option<u64>,
}

impl FileGrowth {
    /// SQL Server's `model` since 2016: 64 MB steps, no cap.
    pub const MODEL: FileGrowth = FileGrowth { step: GrowthStep::Bytes(64 << 20), max_bytes: None };

    /// The length a file of `current` bytes should grow to so that it holds at least `needed`
    /// bytes, in whole `unit`s: one step past `current` (or further, if `needed` is beyond
    /// it), capped at the maximum rounded down to whole units. `None` when `needed` is past
    /// the cap, or past `current` while growth is off: the caller reports the file full.
    pub fn target(&self, current: u64, needed: u64, unit: u64) -> Option<u64> {
        let unit = unit.max(1);
        let cap = self.max_bytes.map_or(u64::MAX, |m| m / unit * unit);
        if needed <= current {
            return Some(current);
        }
        if needed > cap || self.step == GrowthStep::Bytes(0) {
            return None;
        }
        let step = match self.step {
            GrowthStep::Bytes(b) => b,
            GrowthStep::Percent(p) => current.saturating_mul(u64::from(p)) / 100,
        };
        let wanted = current.saturating_add(step.max(unit)).max(needed);
        let rounded = wanted.div_ceil(unit).saturating_mul(unit);
        Some(rounded.min(cap))
    }

    /// Whether a file of `current` bytes may grow at all.
    pub fn can_grow(&self, current: u64, unit: u64) -> bool {
        self.target(current, current.saturating_add(unit.max(1)), unit).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    #[test]
    fn a_step_is_taken_whole_and_rounded_to_units() {
        let g = FileGrowth { step: GrowthStep::Bytes(64 * MB), max_bytes: None };
        assert_eq!(g.target(8 * MB, 8 * MB + 1, 8192), Some(72 * MB));
        assert_eq!(g.target(8 * MB, 8 * MB, 8192), Some(8 * MB));
        // A need beyond one step is met in one growth.
        assert_eq!(g.target(8 * MB, 100 * MB, 8192), Some(100 * MB));
        let odd = FileGrowth { step: GrowthStep::Bytes(1000), max_bytes: None };
        assert_eq!(odd.target(8192, 8193, 8192), Some(16384));
    }

    #[test]
    fn percent_growth_is_of_the_current_size() {
        let g = FileGrowth { step: GrowthStep::Percent(10), max_bytes: None };
        assert_eq!(g.target(100 * MB, 100 * MB + 1, MB), Some(110 * MB));
        // Never less than one unit.
        assert_eq!(g.target(MB, MB + 1, MB), Some(2 * MB));
    }

    #[test]
    fn maxsize_caps_the_growth_and_refuses_past_it() {
        let g = FileGrowth { step: GrowthStep::Bytes(64 * MB), max_bytes: Some(10 * MB + 5) };
        assert_eq!(g.target(8 * MB, 9 * MB, MB), Some(10 * MB));
        assert_eq!(g.target(10 * MB, 10 * MB + 1, MB), None);
        assert!(!g.can_grow(10 * MB, MB));
        assert!(g.can_grow(9 * MB, MB));
    }

    #[test]
    fn growth_zero_never_grows() {
        let g = FileGrowth { step: GrowthStep::Bytes(0), max_bytes: None };
        assert_eq!(g.target(MB, MB + 1, 8192), None);
        assert_eq!(g.target(MB, MB, 8192), Some(MB));
    }
}
