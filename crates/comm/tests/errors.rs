//! A rank that panics or returns an error ends the whole `Threads` run (no hang), and the
//! caller sees the first failure.

use planewave_comm::{CommClass, CommExt, Communicator, RankFailure, Threads};
use std::time::{Duration, Instant};

#[test]
fn a_panicking_rank_releases_ranks_blocked_in_a_collective() {
    let t0 = Instant::now();
    let r = std::panic::catch_unwind(|| {
        Threads::run(4, |c| {
            if c.rank() == 2 {
                panic!("rank two gives up");
            }
            let mut x = [1.0];
            c.allreduce_sum_f64(&mut x, CommClass::Other);
            c.barrier(CommClass::Other);
        })
    });
    let msg = planewave_comm::panic_message(r.unwrap_err().as_ref());
    assert!(msg.contains("rank two gives up"), "{msg}");
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn an_error_of_one_rank_is_returned_and_the_others_are_released() {
    let r: Result<Vec<()>, RankFailure<String>> = Threads::try_run(5, |c| {
        if c.rank() == 3 {
            return Err(format!("bad input on rank {}", c.rank()));
        }
        // The others wait for a message rank 3 never sends.
        let _ = c.recv::<f64>(1, 3, 1, CommClass::Other);
        Ok(())
    });
    match r {
        Err(RankFailure::Error { rank, error }) => {
            assert_eq!(rank, 3);
            assert_eq!(error, "bad input on rank 3");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_panic_reaches_try_run_as_a_failure() {
    let r: Result<Vec<u32>, RankFailure<String>> = Threads::try_run(3, |c| {
        if c.rank() == 0 {
            c.fail("rank 0 failed on purpose");
        }
        c.barrier(CommClass::Other);
        Ok(1)
    });
    let e = r.unwrap_err();
    assert!(e.to_string().contains("rank 0 failed on purpose"), "{e}");
}

#[test]
fn mismatched_collectives_end_with_an_error_not_a_hang() {
    let r: Result<Vec<()>, RankFailure<String>> = Threads::try_run(2, |c| {
        if c.rank() == 0 {
            c.barrier(CommClass::Other); // rank 1 never joins
        }
        Ok(())
    });
    let e = r.unwrap_err().to_string();
    assert!(e.contains("already returned"), "{e}");
}

#[test]
fn a_stalled_receive_times_out() {
    let t0 = Instant::now();
    let r = Threads::builder(2)
        .timeout(Duration::from_millis(300))
        .try_run(|c| -> Result<(), String> {
            // Both ranks wait for each other: a deadlock.
            let other = 1 - c.rank();
            let _ = c.recv::<u64>(1, other, 9, CommClass::Other);
            Ok(())
        });
    assert!(r.unwrap_err().to_string().contains("stalled"));
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn results_come_back_in_rank_order() {
    let v = Threads::run(6, |c| c.rank() * 10 + c.size());
    assert_eq!(v, vec![6, 16, 26, 36, 46, 56]);
}
