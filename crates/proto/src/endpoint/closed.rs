//! Records of finished connections, bounded: a host that served millions of
//! connections keeps the last few whole and only counts the rest, so its
//! memory does not grow with the connections it has seen.

use std::collections::VecDeque;

/// Appends `record` to `kept`, oldest first, and drops the oldest beyond
/// `limit`; how many were dropped (to be counted by the owner).
pub fn keep_last<R>(kept: &mut VecDeque<R>, limit: usize, record: R) -> u64 {
    kept.push_back(record);
    let mut dropped = 0;
    while kept.len() > limit {
        kept.pop_front();
        dropped += 1;
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_records_are_kept_in_order() {
        let mut kept = VecDeque::new();
        let dropped: u64 = (0..25).map(|i| keep_last(&mut kept, 10, i)).sum();
        assert_eq!(dropped, 15);
        assert_eq!(kept, (15..25).collect::<VecDeque<_>>());
        assert_eq!(
            keep_last(&mut VecDeque::new(), 0, 1),
            1,
            "a limit of none keeps none"
        );
    }
}
