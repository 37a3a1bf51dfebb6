//! The log's open transactions (manager rule 8): what a checkpoint asks for the oldest log an
//! unfinished transaction still needs, and the last commit it records.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{mem, open, small_config, SlowFs};
use walden_io::{MemFs, Vfs};
use walden_log::{Durability, LogConfig, OpenTransaction};

#[test]
fn a_transaction_is_open_from_its_first_record_until_its_commit_or_abort() {
    let log = open(&mem(), small_config());
    assert_eq!(log.oldest_open_txn(), None);
    log.append_payload(0, b"system").unwrap();
    assert_eq!(log.oldest_open_txn(), None, "transaction 0 is the system's, never open");

    let before_7 = log.append_payload(0, b"more").unwrap();
    log.append_payload(7, b"a").unwrap();
    let before_8 = log.append_payload(7, b"b").unwrap();
    log.append_payload(8, b"c").unwrap();
    log.append_payload(7, b"d").unwrap();
    assert_eq!(log.oldest_open_txn(), Some(before_7), "7 starts where the log ended");

    log.append_commit(7, Durability::Delayed).unwrap();
    assert_eq!(log.oldest_open_txn(), Some(before_8), "8 is the oldest left");
    log.append_abort(8).unwrap();
    assert_eq!(log.oldest_open_txn(), None);

    // A transaction forgotten without a record (all its changes undone) is not open either.
    log.append_payload(9, b"e").unwrap();
    log.forget_txn(9);
    assert_eq!(log.oldest_open_txn(), None);
}

#[test]
fn open_transactions_are_listed_oldest_first_with_the_tag_of_their_first_record() {
    let log = open(&mem(), small_config());
    let before_5 = log.append_payload(0, b"system").unwrap();
    log.append_tagged_payload(5, 0x5_0033, b"a").unwrap();
    let before_4 = log.append_tagged_payload(5, 0x9_0099, b"b").unwrap();
    log.append_payload(4, b"c").unwrap();
    let open = log.open_transactions();
    assert_eq!(
        open,
        vec![
            OpenTransaction { txn: 5, start: before_5, tag: 0x5_0033 },
            OpenTransaction { txn: 4, start: before_4, tag: 0 },
        ],
        "a later record's tag does not replace the first one's"
    );
    log.append_commit(5, Durability::Delayed).unwrap();
    assert_eq!(log.open_transactions().iter().map(|t| t.txn).collect::<Vec<_>>(), vec![4]);
}

#[test]
fn a_long_transaction_stays_open_while_short_ones_come_and_go_beside_it() {
    let log = open(&mem(), small_config());
    // An append returns the end of the log after its record: where the next one starts.
    let before_long = log.append_payload(0, b"system").unwrap();
    let mut end = log.append_tagged_payload(10, 0x10, b"long").unwrap();
    let mut last_time = 0;
    for short in 11..20u64 {
        let before_short = end;
        log.append_tagged_payload(short, short, b"short").unwrap();
        log.append_payload(10, b"long again").unwrap();
        let open = log.open_transactions();
        assert_eq!(
            open,
            vec![
                OpenTransaction { txn: 10, start: before_long, tag: 0x10 },
                OpenTransaction { txn: short, start: before_short, tag: short },
            ]
        );
        let durability = if short % 2 == 0 { Durability::Full } else { Durability::Delayed };
        let receipt = log.append_commit(short, durability).unwrap();
        assert!(receipt.commit_time_us >= last_time, "commit times in commit order");
        last_time = receipt.commit_time_us;
        assert_eq!(log.oldest_open_txn(), Some(before_long));
        assert_eq!(log.open_transactions().len(), 1);
        // The long one's records keep it open, whether or not a short one is open beside it.
        end = log.append_payload(10, b"alone").unwrap();
    }
    log.append_commit(10, Durability::Delayed).unwrap();
    assert_eq!(log.oldest_open_txn(), None);
    assert!(log.open_transactions().is_empty());
    // Reopened (recovery) while another is open, then closed.
    log.append_payload(21, b"x").unwrap();
    log.reopen_txn(20, 5);
    assert_eq!(log.oldest_open_txn(), Some(5));
    log.append_abort(20).unwrap();
    log.append_abort(21).unwrap();
    assert_eq!(log.oldest_open_txn(), None);
}

#[test]
fn recovery_reopens_a_loser_at_its_first_record_and_the_last_commit_survives() {
    let log = open(&mem(), small_config());
    assert_eq!(log.last_commit(), (0, 0));
    log.set_recovered_commit(10, 1_700_000_000_000_000);
    assert_eq!(log.last_commit(), (10, 1_700_000_000_000_000));

    log.reopen_txn(3, 40);
    log.append_payload(3, b"compensation").unwrap();
    assert_eq!(log.oldest_open_txn(), Some(40), "the loser's own first LSN, not the CLR's");
    log.append_abort(3).unwrap();
    assert_eq!(log.oldest_open_txn(), None);

    log.append_payload(4, b"x").unwrap();
    let receipt = log.append_commit(4, Durability::Full).unwrap();
    assert_eq!(log.last_commit(), (receipt.lsn, receipt.commit_time_us));
    // An older recovered commit does not hide a newer appended one.
    log.set_recovered_commit(10, 1);
    assert_eq!(log.last_commit(), (receipt.lsn, receipt.commit_time_us));
}

#[test]
fn a_commit_waiting_for_buffer_space_keeps_its_transaction_open_until_its_record_is_in() {
    // A two-block buffer, both blocks full and a slow sync under way: a commit must wait
    // (LOGBUFFER) for space, and meanwhile a checkpoint must still find its transaction open.
    let vfs: Arc<dyn Vfs> =
        Arc::new(SlowFs { inner: MemFs::new(), delay: Duration::from_millis(300) });
    let config =
        LogConfig { buffer_blocks: 2, segment_size: 1 << 20, max_delay_ms: 0, ..small_config() };
    let log = Arc::new(open(&vfs, config));
    log.append_payload(7, b"open").unwrap();
    // Fill the first block (32-byte block header, 16-byte record headers, 61,440 bytes) and
    // the second one exactly: both are sealed and the writer starts flushing the first.
    log.append_payload(8, &vec![1u8; 61_440 - 32 - (16 + 4) - 16]).unwrap();
    log.append_payload(9, &vec![2u8; 61_440 - 32 - 16]).unwrap();
    let committer = {
        let log = Arc::clone(&log);
        std::thread::spawn(move || log.append_commit(7, Durability::Delayed).unwrap())
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(!committer.is_finished(), "the commit waits for buffer space");
    assert!(
        log.open_transactions().iter().any(|t| t.txn == 7),
        "a waiting commit's transaction is still open: {:?}",
        log.open_transactions()
    );
    committer.join().unwrap();
    assert!(!log.open_transactions().iter().any(|t| t.txn == 7));
}
