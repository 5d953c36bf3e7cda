//! Receive coalescing: segments that reach a host within one interval are
//! merged before its TCP sees them, as NIC interrupt moderation plus Linux GRO
//! (tcp_gro_receive) and backlog coalescing (tcp_add_backlog) do. TCP gets a
//! merged segment as a GRO packet: the ACK policy decides once per merged
//! segment, counting its pieces (which is why a real Linux receiver often
//! ACKs a burst's odd last segment at once). Not exact: Linux
//! also merges by timing of the application holding the socket.

use tinygram_proto::{Flags, TcpRepr};

/// Largest merged payload (GRO's 64 KiB limit).
pub const MAX_MERGED: usize = 65_535;

/// Whether `next` may be appended to the merged segment `head` (payload
/// `head_len`, its first piece `first_len`), per tcp_gro_receive: in-order
/// and contiguous, the same ACK, window and options, no flag but PSH
/// differing, no SYN/FIN/RST/URG, and the previous piece full-sized and not
/// pushed (a short or pushed piece ends the merge).
fn can_append(
    head: &TcpRepr,
    head_len: usize,
    first_len: usize,
    last_len: usize,
    next: &TcpRepr,
    next_len: usize,
) -> bool {
    let special = |f: Flags| {
        f.contains(Flags::SYN)
            || f.contains(Flags::FIN)
            || f.contains(Flags::RST)
            || f.contains(Flags::URG)
    };
    let mut a = head.flags;
    a.set(Flags::PSH, false);
    let mut b = next.flags;
    b.set(Flags::PSH, false);
    head_len > 0
        && next_len > 0
        && !head.flags.contains(Flags::PSH)
        && last_len == first_len
        && next_len <= first_len
        && a == b
        && !special(head.flags)
        && !special(next.flags)
        && head.src_port == next.src_port
        && head.dst_port == next.dst_port
        && head.ack == next.ack
        && head.window == next.window
        && head.options == next.options
        && head.seq + head_len == next.seq
        && head_len + next_len <= MAX_MERGED
}

/// Merges runs of coalescible segments in `batch` (in arrival order), in
/// place; `gso` gets, per merged segment, the size of its pieces when it
/// merged two or more (what Linux's GRO records as gso_size), else `None`.
pub fn merge(batch: &mut Vec<(TcpRepr, Vec<u8>)>, gso: &mut Vec<Option<usize>>) {
    let mut out: Vec<(TcpRepr, Vec<u8>)> = Vec::with_capacity(batch.len());
    gso.clear();
    let mut first_len = 0;
    let mut last_len = 0;
    for (repr, payload) in batch.drain(..) {
        if let Some((head, data)) = out.last_mut() {
            if can_append(head, data.len(), first_len, last_len, &repr, payload.len()) {
                data.extend_from_slice(&payload);
                last_len = payload.len();
                if repr.flags.contains(Flags::PSH) {
                    head.flags.set(Flags::PSH, true);
                }
                if let Some(g) = gso.last_mut() {
                    *g = Some(first_len);
                }
                continue;
            }
        }
        first_len = payload.len();
        last_len = payload.len();
        out.push((repr, payload));
        gso.push(None);
    }
    *batch = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tinygram_proto::SeqNumber;

    fn seg(seq: u32, len: usize, flags: Flags) -> (TcpRepr, Vec<u8>) {
        let repr = TcpRepr {
            src_port: 1,
            dst_port: 2,
            seq: SeqNumber(seq),
            ack: SeqNumber(7),
            flags: flags | Flags::ACK,
            window: 1000,
            urgent: 0,
            options: Default::default(),
        };
        (repr, vec![seq as u8; len])
    }

    #[test]
    fn contiguous_full_segments_merge_and_a_pushed_one_ends_the_run() {
        let mut b = vec![
            seg(0, 100, Flags::NONE),
            seg(100, 100, Flags::NONE),
            seg(200, 40, Flags::PSH),
            seg(240, 100, Flags::NONE),
        ];
        let mut gso = Vec::new();
        merge(&mut b, &mut gso);
        let lens: Vec<usize> = b.iter().map(|(_, p)| p.len()).collect();
        assert_eq!(lens, vec![240, 100]);
        assert_eq!(
            gso,
            vec![Some(100), None],
            "pieces of 100 bytes, then one alone"
        );
        assert!(b[0].0.flags.contains(Flags::PSH));
        assert_eq!(b[0].1[100], 100u8);
        assert_eq!(b[1].0.seq, SeqNumber(240));
    }

    #[test]
    fn gaps_acks_fins_and_pure_acks_do_not_merge() {
        let merge = |b: &mut Vec<(TcpRepr, Vec<u8>)>| merge(b, &mut Vec::new());
        let mut gap = vec![seg(0, 100, Flags::NONE), seg(150, 100, Flags::NONE)];
        merge(&mut gap);
        assert_eq!(gap.len(), 2);
        let mut fin = vec![seg(0, 100, Flags::NONE), seg(100, 100, Flags::FIN)];
        merge(&mut fin);
        assert_eq!(fin.len(), 2);
        let mut acks = vec![seg(0, 0, Flags::NONE), seg(0, 0, Flags::NONE)];
        merge(&mut acks);
        assert_eq!(acks.len(), 2);
        let mut other_ack = vec![seg(0, 100, Flags::NONE), seg(100, 100, Flags::NONE)];
        other_ack[1].0.ack = SeqNumber(8);
        merge(&mut other_ack);
        assert_eq!(other_ack.len(), 2);
        // A short piece ends the run: nothing is appended after it.
        let mut short = vec![
            seg(0, 100, Flags::NONE),
            seg(100, 50, Flags::NONE),
            seg(150, 100, Flags::NONE),
        ];
        merge(&mut short);
        let lens: Vec<usize> = short.iter().map(|(_, p)| p.len()).collect();
        assert_eq!(lens, vec![150, 100]);
    }
}
