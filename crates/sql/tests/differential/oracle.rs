//! Oracles on Walden alone.
