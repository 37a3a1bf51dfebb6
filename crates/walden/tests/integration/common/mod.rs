//! What the end-to-end tests share: the `walden serve` guard ([`server`]), a raw TDS client on
//! the codec ([`client`]), running `walden sql` ([`sql`]), and installing drivers
//! ([`install`]).

pub mod client;
pub mod install;
pub mod server;
pub mod sql;

/// The `sa` password the test servers run with.
pub const PASSWORD: &str = "Walden-test-1";

/// One `#[test]` per acceptance script, each calling `$run` with the script's file name (so
/// the scripts run in parallel and fail by name), and a test that the list matches
/// `tests/acceptance/`: a new script there needs a line here, or it would never run.
macro_rules! acceptance_tests {
    ($run:path) => {
        #[test]
        fn every_script_has_a_test() {
            assert_eq!(crate::common::sql::scripts_found(), crate::common::sql::SCRIPTS);
        }

        #[test]
        fn procedures_002() {
            $run("002_procedures.sql");
        }

        #[test]
        fn sequence_cache_003() {
            $run("003_sequence_cache.sql");
        }

        #[test]
        fn small_vs_big_003() {
            $run("003_small_vs_big.sql");
        }

        #[test]
        fn tempdb_003() {
            $run("003_tempdb.sql");
        }

        #[test]
        fn virtual_file_stats_004() {
            $run("004_virtual_file_stats.sql");
        }

        #[test]
        fn flush_log() {
            $run("flush_log.sql");
        }

        #[test]
        fn precedence() {
            $run("precedence.sql");
        }
    };
}
pub(crate) use acceptance_tests;
