//! Per-connection counters: the test oracle and the shared vocabulary of the
//! simulator, `--explain`, `diagnose` and tests.

/// What one connection did. Names are stable: tests and JSON output use them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
#[repr(C)] // the per-segment counters first, together (see `Connection`'s layout)
pub struct Counters {
    /// Segments sent (all kinds, retransmissions included).
    pub segments_sent: u64,
    /// Segments received and passed to processing (invalid ones excluded; a
    /// GRO packet counts as the segments it merged, as Linux's segs_in).
    pub segments_received: u64,
    /// Segments carrying payload that we sent (retransmissions included).
    pub data_segments_sent: u64,
    /// Data segments sent whose payload was under the effective MSS.
    pub small_segments_sent: u64,
    /// Payload bytes sent (retransmissions included).
    pub bytes_sent: u64,
    /// Payload bytes sent for the first time.
    pub new_bytes_sent: u64,
    /// Data segments received (duplicates included; GRO pieces counted, as
    /// Linux's data_segs_in).
    pub data_segments_received: u64,
    /// Payload bytes received (duplicates included).
    pub bytes_received: u64,
    /// Bytes delivered in order to the receive buffer.
    pub bytes_delivered: u64,
    /// Pure ACKs sent: no payload, no SYN/FIN/RST.
    pub pure_acks_sent: u64,
    /// Pure ACKs received.
    pub pure_acks_received: u64,
    /// Data segments retransmitted (RTO, fast retransmit, NAK, SACK).
    pub retransmits: u64,
    /// Retransmission timer expirations.
    pub timeouts: u64,
    /// Delayed-ACK timer expirations that sent an ACK.
    pub delack_timer_fired: u64,
    /// Segments that failed the acceptability test (RFC 9293 3.10.7.4).
    pub unacceptable_segments: u64,
    /// Duplicate payload bytes received (already delivered or already queued).
    pub duplicate_bytes_received: u64,
    /// Segments sent and then cumulatively acknowledged, each counted once
    /// however often it went (Linux's tcp_sock.delivered, tcpi_delivered;
    /// a SYN carrying data counts once). SACKed segments count when the
    /// cumulative ACK reaches them, not before as in Linux.
    pub segments_delivered: u64,
    /// Fast retransmits entered after duplicate ACKs (RFC 5681 3.2).
    pub fast_retransmits: u64,
    /// Duplicate ACKs received (RFC 5681 2).
    pub dup_acks_received: u64,
    /// Zero-window probes sent (RFC 9293 3.8.6.1).
    pub window_probes: u64,
    /// SYN or SYN-ACK retransmissions.
    pub syn_retransmits: u64,
    /// ACKs sent at once because N segments had arrived.
    pub acks_every_nth: u64,
    /// ACKs sent at once by Westfield's interactivity rule (more than N segments since we sent data).
    pub acks_interactivity: u64,
    /// ACKs sent at once by Mills' rule (right window edge moved more than one MSS).
    pub acks_right_edge: u64,
    /// ACKs sent at once by the Linux-like quick-ACK policy (quick mode or more than one MSS).
    pub acks_quick: u64,
    /// Window updates a read opened that waited for the ACK policy (`window_update = "delayed"`).
    pub window_updates_delayed: u64,
    /// ACKs sent at once because of out-of-order data or a gap fill.
    pub acks_out_of_order: u64,
    /// Segments received out of order (beyond rcv_nxt).
    pub out_of_order_segments: u64,
    /// RSTs sent.
    pub rsts_sent: u64,
    /// RSTs received and accepted.
    pub rsts_received: u64,
    /// Bytes lost when a RST sent a passive open in SYN-RECEIVED back to
    /// LISTEN (RFC 9293 3.10.7.4): written and not yet sent or acknowledged,
    /// plus received and not yet read.
    pub bytes_lost_to_reset: u64,
    /// NAKs sent (RFC 1106 2.1).
    pub naks_sent: u64,
    /// NAKs received.
    pub naks_received: u64,
    /// Hold episodes started by the send policy (data window and cwnd allowed was kept back).
    pub policy_holds: u64,
    /// Window updates sent because the application read (RFC 1122 4.2.3.3).
    pub window_updates_sent: u64,
    /// Segments a driver could not parse (malformed options, bad lengths or checksum).
    pub invalid_segments: u64,
    /// Segments dropped by PAWS as old duplicates (RFC 7323 5.3 R1).
    pub paws_rejected: u64,
    /// Retransmissions chosen from the SACK scoreboard (RFC 6675 NextSeg rule 1).
    pub sack_retransmits: u64,
    /// SACK-based loss recoveries entered (RFC 6675 5).
    pub sack_recoveries: u64,
    /// Data segments received with IP ECN CE (RFC 3168 5).
    pub ce_received: u64,
    /// Segments received with ECE (RFC 3168 6.1.3).
    pub ece_received: u64,
    /// cwnd reductions for ECE, at most one per window (RFC 3168 6.1.2).
    pub ecn_reductions: u64,
    /// Tail loss probes sent (RFC 8985 7.3).
    pub tlp_probes: u64,
    /// Times RACK marked segments lost by their transmit time (RFC 8985 6.2).
    pub rack_losses: u64,
    /// Retransmissions answering a NAK (RFC 1106 2.1).
    pub nak_retransmits: u64,
    /// Duplicate-ACK thresholds reached but not acted on because NAKs are in use (RFC 1106 4.3).
    pub fast_retransmits_suppressed: u64,
    /// The receive buffer was capped below `rcv_buf` (RFC 1106 5).
    pub rcv_buf_capped: u64,
    /// Challenge ACKs sent for an inexact RST, a SYN or an unacceptable ACK (RFC 5961 3.2, 4.2, 5.2).
    pub challenge_acks: u64,
    /// TIME-WAIT connections closed by a SYN above RCV.NXT, which the
    /// caller hands to the port's listener (FreeBSD tcp_timewait.c tcp_twcheck).
    pub time_wait_recycles: u64,
    /// Challenge ACKs withheld by the rate limit (RFC 5961 7).
    pub challenge_acks_suppressed: u64,
    /// ACKs owed to unacceptable data-less segments withheld by the rate limit (RFC 5961 7).
    pub invalid_acks_suppressed: u64,
    /// Segments dropped because SEG.ACK was outside [SND.UNA - MAX.SND.WND, SND.MAX] (RFC 5961 5.2).
    pub unacceptable_acks: u64,
    /// Out-of-order segments dropped because they would exceed `max_ooo_ranges`.
    pub ooo_ranges_dropped: u64,
    /// The peer's MSS option was below the floor and raised to it (Linux tcp_min_snd_mss, 48).
    pub peer_mss_floored: u64,
    /// Segments that overlapped stored, unread bytes with different bytes;
    /// the first copy was kept (tinygram's own policy, stricter than Linux's
    /// tcp_data_queue_ofo, which lets a covering segment replace a queued one).
    pub overlap_conflicts: u64,
    /// Connections given up after `max_retries` zero-window probes no ACK
    /// answered (RFC 1122 4.2.2.17; Linux's tcp_probe_timer and tcp_retries2).
    pub window_probe_aborts: u64,
    /// Keep-alive probes sent (RFC 1122 4.2.3.6).
    pub keepalive_probes: u64,
}
