//! The recovery decisions, as the two decision tables of `docs/recovery.md`.
//!
//! Recovery itself is in [`crate::database`]; these functions are the tables it consults, kept
//! apart so that a test can hold them against the document row by row.

/// What the data file holds for a page a log record changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageOnDisk {
    /// The page LSN is at or past the record's.
    Newer,
    /// The page LSN is older than the record's.
    Older,
    /// The page fails its checksum or was never written.
    Unreadable,
}

/// What redo does with one page change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedoAction {
    /// The change is before the redo point: the checkpoint wrote it.
    SkipCheckpointed,
    /// The page already has the change.
    SkipNewer,
    /// Apply the change.
    Apply,
    /// Rebuild the page from the image the change carries.
    Rebuild,
    /// The page is damaged and the log cannot repair it.
    Fail,
}

/// The redo decision table.
pub fn redo_action(after_redo_point: bool, page: PageOnDisk, image: bool) -> RedoAction {
    match (after_redo_point, page, image) {
        (false, _, _) => RedoAction::SkipCheckpointed,
        (true, PageOnDisk::Newer, _) => RedoAction::SkipNewer,
        (true, PageOnDisk::Older, _) => RedoAction::Apply,
        (true, PageOnDisk::Unreadable, true) => RedoAction::Rebuild,
        (true, PageOnDisk::Unreadable, false) => RedoAction::Fail,
    }
}

/// What recovery does with a transaction found in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnAction {
    /// It committed.
    Committed,
    /// It was rolled back before the crash.
    Aborted,
    /// It did not commit: undo it and log its abort.
    Undo,
    /// It was prepared and the coordinator recorded its commit: log its commit.
    CommitInDoubt,
    /// It was prepared and the coordinator has no commit for it: undo it.
    UndoInDoubt,
}

/// The transaction decision table.
pub fn txn_action(commit: bool, abort: bool, prepared: bool, coordinator: bool) -> TxnAction {
    match (commit, abort, prepared, coordinator) {
        (true, _, _, _) => TxnAction::Committed,
        (false, true, _, _) => TxnAction::Aborted,
        (false, false, false, _) => TxnAction::Undo,
        (false, false, true, true) => TxnAction::CommitInDoubt,
        (false, false, true, false) => TxnAction::UndoInDoubt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = include_str!("../../../docs/recovery.md");

    /// The rows of the markdown table whose header starts with `first_column`.
    fn table(first_column: &str) -> Vec<Vec<String>> {
        let mut lines = DOC.lines().skip_while(|l| !l.starts_with(&format!("| {first_column} |")));
        lines.next();
        lines.next();
        lines
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect())
            .collect()
    }

    fn matches(cell: &str, value: &str) -> bool {
        cell == "-" || cell == value
    }

    fn yes_no(b: bool) -> &'static str {
        if b {
            "yes"
        } else {
            "no"
        }
    }

    #[test]
    fn every_redo_combination_matches_exactly_one_row_and_the_code_agrees() {
        let rows = table("after redo point");
        assert_eq!(rows.len(), 5, "the redo table has 5 rows");
        for after in [false, true] {
            for page in [PageOnDisk::Newer, PageOnDisk::Older, PageOnDisk::Unreadable] {
                for image in [false, true] {
                    let page_word = match page {
                        PageOnDisk::Newer => "newer",
                        PageOnDisk::Older => "older",
                        PageOnDisk::Unreadable => "unreadable",
                    };
                    let hits: Vec<&Vec<String>> = rows
                        .iter()
                        .filter(|r| {
                            matches(&r[0], yes_no(after))
                                && matches(&r[1], page_word)
                                && matches(&r[2], yes_no(image))
                        })
                        .collect();
                    assert_eq!(hits.len(), 1, "{after} {page_word} {image}: {hits:?}");
                    let want = match redo_action(after, page, image) {
                        RedoAction::SkipCheckpointed => "skip: the checkpoint wrote it",
                        RedoAction::SkipNewer => "skip: the page already has it",
                        RedoAction::Apply => "apply",
                        RedoAction::Rebuild => "rebuild the page from the image",
                        RedoAction::Fail => "fail: the database is corrupt",
                    };
                    assert_eq!(hits[0][3], want);
                }
            }
        }
    }

    #[test]
    fn every_transaction_combination_matches_exactly_one_row_and_the_code_agrees() {
        let rows = table("commit record");
        assert_eq!(rows.len(), 5, "the transaction table has 5 rows");
        for bits in 0..16u8 {
            let [commit, abort, prepared, coordinator] = [1, 2, 4, 8].map(|b| bits & b != 0);
            let hits: Vec<&Vec<String>> = rows
                .iter()
                .filter(|r| {
                    matches(&r[0], yes_no(commit))
                        && matches(&r[1], yes_no(abort))
                        && matches(&r[2], yes_no(prepared))
                        && matches(&r[3], yes_no(coordinator))
                })
                .collect();
            assert_eq!(hits.len(), 1, "combination {bits:04b}: {hits:?}");
            let want = match txn_action(commit, abort, prepared, coordinator) {
                TxnAction::Committed => "committed: nothing to do",
                TxnAction::Aborted => "rolled back before the crash: nothing to do",
                TxnAction::Undo => "loser: undo, then abort",
                TxnAction::CommitInDoubt => "in doubt, committed: append its commit record",
                TxnAction::UndoInDoubt => "in doubt, not committed: undo, then abort",
            };
            assert_eq!(hits[0][4], want);
        }
    }
}
