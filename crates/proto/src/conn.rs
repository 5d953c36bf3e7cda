//! One TCP connection: the RFC 9293 state machine, sans-IO.
//!
//! # Call order
//! A driver owns the clock and the wire. Each step, at time `now`:
//! 1. feed inputs: [`Connection::handle_segment`] for each arriving segment, and
//!    [`Connection::handle_timeout`] once `now >= poll_timeout()`;
//! 2. make application calls: [`write`](Connection::write),
//!    [`flush`](Connection::flush), [`read`](Connection::read),
//!    [`close`](Connection::close), [`abort`](Connection::abort);
//! 3. drain output: call [`Connection::poll_transmit`] until it returns `None`;
//! 4. sleep until [`Connection::poll_timeout`].
//!
//! Time only moves forward between calls; the engine never reads a clock.

use crate::bigwin;
use crate::cc::{AckSample, CcInit, CongestionControl, CwndUsage, CwndValidation, SendTimes};
use crate::config::{BufferLimit, Config, SndBufCounts};
use crate::counters::Counters;
use crate::isn::IsnGenerator;
use crate::nak::{NakReceiver, NakSender};
use crate::policy::{
    AckCtx, AckDecision, AckPolicy, AckReason, DelayReason, SendCtx, SendDecision, SendPolicy,
    SendPolicyKind, WindowAdvertise, WindowUpdate,
};
use crate::prr::Prr;
use crate::rack::Rack;
use crate::recv_buf::RecvBuffer;
use crate::rtt::RttEstimator;
use crate::sack::{SackReporter, Scoreboard};
use crate::send_buf::SendBuffer;
use crate::seq::SeqNumber;
use crate::state::State;
use crate::time::{Duration, Instant};
use crate::timestamps::{TsState, TS_OPTION_SPACE};
use crate::trace::{HoldRule, TraceEvent};
use crate::wire::{
    ChecksumCtx, Flags, Nak, TcpOptions, TcpRepr, WireError, MAX_OPTIONS_LEN, RFC1106_BIGWIN_MAX,
};
use std::collections::VecDeque;

mod cookie;
mod icmp;
mod prefetch;
pub use icmp::unreach;

/// Why a connection ended abnormally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnError {
    /// An acceptable RST arrived in a synchronized state.
    #[error("connection reset by peer")]
    Reset,
    /// An RST answered our SYN.
    #[error("connection refused")]
    Refused,
    /// Retransmissions exhausted (RFC 9293 3.8.3, RFC 1122 4.2.3.5).
    #[error("connection timed out")]
    TimedOut,
    /// An ICMP destination unreachable with this code ended the handshake
    /// (see [`Connection::icmp_unreachable`]).
    #[error("destination unreachable (ICMP code {0})")]
    Unreachable(u8),
}

/// Why `write` refused data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error("connection is closing or closed for sending")]
    Closed,
    #[error(transparent)]
    Conn(#[from] ConnError),
}

/// RFC 9293 3.7.1: the MSS assumed when the peer sends no MSS option.
pub const DEFAULT_MSS: u16 = 536;
/// RFC 7323 2.3: the largest window-scale shift.
pub const MAX_WSCALE: u8 = 14;
/// Least peer MSS used: a smaller MSS option (even 0) is raised to this, as
/// Linux's tcp_min_snd_mss does, so a peer cannot make us send 1-byte segments.
pub const MIN_PEER_MSS: u16 = 48;

/// The engine's timers; `poll_timeout` is the earliest armed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
enum Timer {
    /// RFC 6298 retransmission timer (also SYN / SYN-ACK).
    Retransmit,
    /// RFC 1122 4.2.3.2 delayed ACK.
    DelayedAck,
    /// RFC 9293 3.8.6.1 persist timer; also RFC 1122 4.2.3.4's SWS override.
    Persist,
    /// RFC 9293 3.3.2 TIME-WAIT, 2 x MSL.
    TimeWait,
    /// A send policy asked to be consulted again (cork's cap).
    Policy,
    /// RFC 8985 7.2 tail loss probe timeout (PTO).
    Tlp,
    /// RFC 8985 6.3 RACK reordering timer.
    Rack,
}
const TIMERS: usize = 7;

/// A TCP connection driven by the caller (see the module docs for the call order).
#[repr(C)]
pub struct Connection {
    // The configuration first: rustc packs its small fields (the flags read
    // per segment) at its end, next to the hot fields that follow.
    cfg: Config,
    // Hot: what handling a segment, a timer or a write touches, packed at the
    // front (`#[repr(C)]` keeps this order) so that an event at scale reads a
    // few cache lines instead of one from every corner of the struct.
    send_buf: SendBuffer,
    recv_buf: RecvBuffer,
    timers: [Option<Instant>; TIMERS],
    cc: Box<dyn CongestionControl>,
    ack_policy: Box<dyn AckPolicy>,
    send_policy: Box<dyn SendPolicy>,
    rtt: RttEstimator,
    /// RFC 7323 3-5 timestamps (TS.Recent, Last.ACK.sent; `enabled` once negotiated).
    ts: TsState,
    /// Busy / window-limited / buffer-limited times for TCP_INFO.
    chrono: crate::chrono::Chrono,
    /// Bytes at the front of the payload buffer that belong to the caller
    /// (`poll_transmit_with_headroom`); 0 for `poll_transmit`.
    tx_headroom: usize,
    /// min(available, allowed) at the start of the current transmission
    /// opportunity (cleared when `poll_transmit` runs dry).
    burst: Option<usize>,
    /// When the oldest data not yet acknowledged by us arrived.
    ack_owed_since: Option<Instant>,
    /// A reset to send on the next poll (boxed: rare, and a `TcpRepr` is 160 bytes).
    pending_rst: Option<Box<TcpRepr>>,
    /// RFC 1106 2.1: NAKed data the peer asked for, to resend at once.
    nak_tx: NakSender,
    /// NAKs waiting for the next segment we send.
    pending_naks: VecDeque<Nak>,
    /// Where each segment sent so far ends (the SYN, then each new one), for
    /// `Counters::segments_delivered`.
    delivered_ends: VecDeque<SeqNumber>,
    /// Data segments' send times, for a per-ACK RTT sample (tcp_clean_rtx_queue).
    send_times: SendTimes,
    /// RFC 6675 scoreboard of SACKed sequence ranges above SND.UNA.
    scoreboard: Scoreboard,
    /// Effective send MSS: min(peer's MSS option, ours) (RFC 9293 3.7.1).
    snd_mss: usize,
    /// Peer's window in bytes, scaling applied.
    snd_wnd: usize,
    /// In-order payload bytes received since we last sent an ACK.
    bytes_since_ack: usize,
    /// The window size the last segment offered (Linux's tcp_sock rcv_wnd).
    rcv_wnd_last: usize,
    /// Largest window the peer has offered (RFC 1122 4.2.3.4 "Max(SND.WND)").
    max_snd_wnd: usize,
    /// The segment being timed (end sequence, send time): one at a time, Karn's rule.
    rtt_probe: Option<(SeqNumber, Instant)>,
    /// When data last went out (Linux lsndtime), for the controller's idle restart.
    last_data_sent: Option<Instant>,
    /// An ACK should go now, and why.
    ack_now: Option<AckReason>,
    /// RFC 6937 PRR state of the current SACK recovery, when `recovery.prr` is on.
    prr: Option<Prr>,
    /// The current hold episode: rule, since when, bytes held.
    hold: Option<(HoldRule, Instant, usize)>,
    /// What the armed delayed-ACK timer was set for (for the why-trace).
    delack_len: Duration,
    /// TCP_USER_TIMEOUT (RFC 5482).
    user_timeout: crate::chrono::UserTimeout,
    /// RFC 9293 3.3.1 send sequence variables (ISS to SND.WL2), then the receive
    /// ones; RCV.NXT is derived from the receive buffer.
    iss: SeqNumber,
    snd_una: SeqNumber,
    snd_nxt: SeqNumber,
    /// Highest sequence number sent (snd_nxt goes back on a timeout; this does not).
    snd_max: SeqNumber,
    snd_wl1: SeqNumber,
    snd_wl2: SeqNumber,
    irs: SeqNumber,
    /// Right edge of the window we last advertised (RCV.NXT + RCV.WND).
    rcv_adv: SeqNumber,
    /// RFC 6675 HighRxt: highest sequence number retransmitted in this recovery.
    high_rxt: SeqNumber,
    /// RFC 6582 "recover": highest sequence sent when recovery began.
    recover: SeqNumber,
    /// A single segment to retransmit at once (fast retransmit, partial ACK).
    rexmit_one: Option<SeqNumber>,
    /// Sequence number of a FIN seen from the peer, perhaps ahead of a gap.
    rcv_fin_seq: Option<SeqNumber>,
    /// RFC 8985 7.3 TLP.end_seq: SND.MAX when the outstanding probe went out.
    tlp_end: Option<SeqNumber>,
    /// End of the last partial segment of new data sent (Minshall).
    last_partial_end: Option<SeqNumber>,
    persist_backoff: u32,
    /// Zero-window probes sent since the last acceptable ACK (Linux's
    /// icsk_probes_out, TCP_INFO's tcpi_probes).
    probes_out: u32,
    segs_since_ack: u32,
    full_segs_since_ack: u32,
    dupacks: u32,
    /// Consecutive expiries of the retransmission timer.
    retries: u32,
    /// Further immediate ACKs owed: each out-of-order segment gets its own
    /// (duplicate) ACK even when several arrive before the next poll (RFC 5681 4.2).
    extra_acks: u32,
    error: Option<ConnError>,
    local_port: u16,
    remote_port: u16,
    state: State,
    snd_wscale: u8,
    rcv_wscale: u8,
    /// The application closed its sending side: FIN follows the queued data.
    fin_queued: bool,
    /// The peer's FIN has been received in order.
    fin_rcvd: bool,
    /// RFC 2018 2: both SYNs carried SACK-permitted.
    sack_ok: bool,
    /// RFC 1106 2: both SYNs carried NAK-permitted.
    nak_ok: bool,
    /// RFC 1106 3: both SYNs carried the big-window option (wscale then unused).
    bigwin: bool,
    /// The ACK owed is an RFC 5961 challenge ACK (FreeBSD sends it with
    /// tcp_respond, outside tcp_output: no FIN repeated on it).
    challenge_owed: bool,
    /// The current recovery is driven by the SACK scoreboard (RFC 6675), not NewReno.
    sack_recovery: bool,
    /// RFC 6675 5 step 4.3: the first retransmission of a recovery ignores pipe.
    rxt_first: bool,
    /// RFC 3168 6.1.1: both SYNs negotiated ECN.
    ecn_ok: bool,
    /// RFC 3168 6.1.3: a CE mark arrived; set ECE on every segment until CWR.
    ece_pending: bool,
    /// RFC 3168 6.1.2: cwnd was reduced for ECE; the next new data carries CWR.
    cwr_pending: bool,
    /// The driver saw IP ECN CE on the segment it hands in next (RFC 3168 5).
    ce_next: bool,
    /// The segment poll_transmit last returned goes out ECT(0) (RFC 3168 6.1.2, 6.1.5).
    last_tx_ect: bool,
    /// New data went out: re-arm the probe timeout (RFC 8985 7.2).
    tlp_rearm: bool,
    /// Our FIN went in a segment of its own (no data with it).
    fin_alone: bool,
    /// A zero-window probe of the old-sequence kind is due (`WindowProbe::OldSeq`).
    old_seq_probe: bool,
    /// Data was written with nothing in flight: check for an idle restart
    /// at the next transmit (tcp_skb_entail's tcp_slow_start_after_idle_check).
    idle_check: bool,
    in_recovery: bool,
    /// The application closed its end for reading (close(), SHUT_RD): new
    /// data arriving in FIN-WAIT is answered with a reset.
    rcv_shutdown: bool,
    /// The application let go of the connection ([`Connection::release`]):
    /// an orphan, retried only `orphan_retries` times (Linux's SOCK_DEAD).
    orphaned: bool,
    /// The persist timer fired: send one segment even if the window says no.
    force_one: bool,
    /// A read opened the window and the ACK policy has yet to say when to announce it.
    window_opened: bool,
    /// A read emptied the receive queue since the last transmit: the ACK
    /// policy may send an owed ACK now (Linux tcp_cleanup_rbuf).
    read_emptied: bool,
    /// Send SYN (SYN-SENT) or SYN-ACK (SYN-RECEIVED) on the next poll.
    need_syn: bool,
    /// The send policy's timer fired since the last segment (Linux pushes
    /// data a timer releases: tcp_write_wakeup sets PSH).
    policy_timer_fired: bool,
    /// Opened by `listen` (a reset in SYN-RECEIVED returns to LISTEN, RFC 9293 3.10.7.4).
    passive: bool,
    // The counters lead with their per-segment ones.
    counters: Counters,
    // Cold: set-up, options off by default, rare events.
    /// RFC 9293 3.4.1: where ISS values come from (a listener draws one per SYN).
    isn_gen: Box<dyn IsnGenerator>,
    /// Receive buffer granted within the memory caps (RFC 1106 5), and what capped it.
    rcv_buf_size: usize,
    rcv_buf_limit: Option<BufferLimit>,
    /// RFC 2018 4: which out-of-order ranges to report first.
    sack_rx: SackReporter,
    /// The receiver's SACK list with D-SACK, FreeBSD's way (`Config::dsack`).
    sack_bsd: crate::sack_bsd::BsdSackList,
    /// TCP Fast Open progress (RFC 7413).
    tfo: crate::fastopen::TfoState,
    /// RFC 3168 6.1.2: SND.MAX at the last ECN reduction (once per window).
    ecn_recover: Option<SeqNumber>,
    /// RFC 8985 6 RACK per-segment transmit times and loss marks, when `recovery.rack` is on.
    rack: Rack,
    /// How much of cwnd the sender used this window (Linux tcp_cwnd_validate).
    cwnd_usage: CwndUsage,
    /// RFC 1106 2.1: what we have NAKed, so no NAK repeats.
    nak_rx: NakReceiver,
    /// When the send policy last changed: a policy's hold is counted from
    /// then at the earliest (cork's cap starts when corking does).
    policy_since: Option<Instant>,
    /// When we last sent a challenge ACK or answered an unacceptable segment
    /// (RFC 5961 7, Linux's last_oow_ack_time).
    last_invalid_ack: Option<Instant>,
    /// Segments `poll_transmit` has returned since it last returned `None`,
    /// and the most it may return in that run (a debug check that it runs dry).
    tx_streak: usize,
    tx_budget: usize,
    trace: Vec<TraceEvent>,
}

/// The configured congestion controller for send MSS `mss` (RFC 6928 initial window).
fn build_cc(cfg: &Config, mss: usize) -> Box<dyn CongestionControl> {
    cfg.congestion.build(&CcInit {
        mss,
        initial_window: cfg.initial_window as usize * mss,
        slow_start: cfg.slow_start,
        loss_is: cfg.loss_is,
        cubic: cfg.cubic,
    })
}

impl core::fmt::Debug for Connection {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Connection")
            .field("state", &self.state)
            .field("snd_una", &self.snd_una)
            .field("snd_nxt", &self.snd_nxt)
            .field("snd_max", &self.snd_max)
            .field("snd_wnd", &self.snd_wnd)
            .field("rcv_nxt", &self.rcv_nxt())
            .field("cwnd", &self.cc.cwnd())
            .finish_non_exhaustive()
    }
}

impl Connection {
    fn new(
        cfg: Config,
        local_port: u16,
        isn: SeqNumber,
        isn_gen: Box<dyn IsnGenerator>,
    ) -> Connection {
        let rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max)
            .with_tick(cfg.rto_tick)
            .with_floor(cfg.rto_floor);
        let mss = cfg.mss as usize;
        let (rcv_buf_size, rcv_buf_limit) = cfg.granted_rcv_buf();
        let counters = Counters {
            rcv_buf_capped: rcv_buf_limit.is_some() as u64,
            ..Counters::default()
        };
        let cc = build_cc(&cfg, mss);
        Connection {
            state: State::Closed,
            local_port,
            remote_port: 0,
            passive: false,
            isn_gen,
            iss: isn,
            snd_una: isn,
            snd_nxt: isn,
            snd_max: isn,
            snd_wnd: 0,
            snd_wl1: SeqNumber(0),
            snd_wl2: SeqNumber(0),
            max_snd_wnd: 0,
            irs: SeqNumber(0),
            rcv_adv: SeqNumber(0),
            rcv_wnd_last: 0,
            send_buf: SendBuffer::new(),
            recv_buf: RecvBuffer::new(rcv_buf_size, cfg.max_ooo_ranges),
            fin_queued: false,
            fin_rcvd: false,
            rcv_fin_seq: None,
            snd_mss: mss,
            snd_wscale: 0,
            rcv_wscale: 0,
            ts: TsState::new(isn.0),
            sack_ok: false,
            nak_ok: false,
            bigwin: false,
            rcv_buf_size,
            rcv_buf_limit,
            sack_rx: SackReporter::default(),
            sack_bsd: Default::default(),
            challenge_owed: false,
            scoreboard: Scoreboard::default(),
            high_rxt: isn,
            sack_recovery: false,
            rxt_first: false,
            prr: None,
            ecn_ok: false,
            tfo: crate::fastopen::TfoState::default(),
            delivered_ends: VecDeque::new(),
            ece_pending: false,
            cwr_pending: false,
            ecn_recover: None,
            ce_next: false,
            last_tx_ect: false,
            tlp_end: None,
            tlp_rearm: false,
            fin_alone: false,
            rack: Rack::default(),
            cwnd_usage: CwndUsage::default(),
            send_times: SendTimes::default(),
            last_data_sent: None,
            old_seq_probe: false,
            idle_check: false,
            nak_rx: NakReceiver::default(),
            nak_tx: NakSender::default(),
            pending_naks: VecDeque::new(),
            rtt,
            rtt_probe: None,
            cc,
            dupacks: 0,
            recover: isn,
            in_recovery: false,
            rexmit_one: None,
            retries: 0,
            chrono: Default::default(),
            user_timeout: Default::default(),
            rcv_shutdown: false,
            orphaned: false,
            persist_backoff: 0,
            probes_out: 0,
            force_one: false,
            last_partial_end: None,
            policy_since: None,
            timers: [None; TIMERS],
            ack_now: None,
            extra_acks: 0,
            segs_since_ack: 0,
            full_segs_since_ack: 0,
            bytes_since_ack: 0,
            window_opened: false,
            read_emptied: false,
            delack_len: Duration::ZERO,
            need_syn: false,
            pending_rst: None,
            last_invalid_ack: None,
            tx_streak: 0,
            tx_headroom: 0,
            tx_budget: 0,
            burst: None,
            policy_timer_fired: false,
            hold: None,
            ack_owed_since: None,
            trace: Vec::new(),
            send_policy: cfg.send_policy.build(),
            ack_policy: cfg.ack_policy.build(&cfg),
            counters,
            error: None,
            cfg,
        }
    }

    /// Active open (RFC 9293 3.10.1): the SYN leaves on the next `poll_transmit`.
    /// The ISS comes from the driver's generator `isn` (RFC 9293 3.4.1; seeded
    /// in the simulator), asked once, now.
    pub fn connect(
        config: Config,
        local_port: u16,
        remote_port: u16,
        mut isn: impl IsnGenerator + 'static,
        now: Instant,
    ) -> Connection {
        let iss = isn.next_isn(now, local_port, remote_port);
        let mut c = Connection::new(config, local_port, iss, Box::new(isn));
        c.remote_port = remote_port;
        c.state = State::SynSent;
        c.need_syn = true;
        c
    }

    /// Passive open (RFC 9293 3.10.1): LISTEN on `local_port`. Each SYN is
    /// answered with a SYN-ACK from a fresh ISS drawn from `isn` when it
    /// arrives (RFC 9293 3.10.7.2: "ISS should be selected").
    pub fn listen(config: Config, local_port: u16, isn: impl IsnGenerator + 'static) -> Connection {
        Connection::listen_with(config, local_port, Box::new(isn))
    }

    fn listen_with(config: Config, local_port: u16, isn: Box<dyn IsnGenerator>) -> Connection {
        let mut c = Connection::new(config, local_port, SeqNumber(0), isn);
        c.state = State::Listen;
        c.passive = true;
        c
    }

    /// Starts the send sequence space at `iss` (RFC 9293 3.3.1; the
    /// timestamp clock's offset too, RFC 7323 5.4).
    fn set_iss(&mut self, iss: SeqNumber) {
        self.iss = iss;
        self.snd_una = iss;
        self.snd_nxt = iss;
        self.snd_max = iss;
        self.high_rxt = iss;
        self.recover = iss;
        self.ts = TsState::new(iss.0);
    }

    // ----- accessors -------------------------------------------------------

    pub fn state(&self) -> State {
        self.state
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    pub fn config(&self) -> &Config {
        &self.cfg
    }
    /// Why the connection failed, if it did.
    pub fn error(&self) -> Option<ConnError> {
        self.error
    }
    /// Bytes `write` would accept now.
    pub fn send_space(&self) -> usize {
        if self.can_write() {
            self.send_room()
        } else {
            0
        }
    }
    /// Room under `snd_buf` for what it counts (`Config::snd_buf_counts`).
    fn send_room(&self) -> usize {
        let held = match self.cfg.snd_buf_counts {
            SndBufCounts::Queued => self.send_buf.len(),
            SndBufCounts::Unsent => (self.send_buf.end() - self.off_of(self.snd_max)) as usize,
        };
        self.cfg.snd_buf.saturating_sub(held)
    }
    /// Bytes written but not yet acknowledged (sent or not).
    pub fn send_queued(&self) -> usize {
        self.send_buf.len()
    }
    /// In-order bytes waiting for `read`.
    pub fn recv_available(&self) -> usize {
        self.recv_buf.readable()
    }
    /// The peer's FIN has arrived and every byte before it has been read (EOF).
    pub fn read_closed(&self) -> bool {
        self.fin_rcvd && self.recv_buf.readable() == 0
    }
    /// The largest window the peer has offered (Linux's max_window).
    pub fn max_snd_wnd(&self) -> usize {
        self.max_snd_wnd
    }
    /// The peer's FIN has arrived (read or not).
    pub fn fin_received(&self) -> bool {
        self.fin_rcvd
    }
    /// Effective send MSS (payload bytes per full segment).
    pub fn effective_mss(&self) -> usize {
        self.snd_mss
    }
    /// RFC 7323 3: timestamps were negotiated.
    pub fn timestamps_enabled(&self) -> bool {
        self.ts.enabled
    }
    /// RFC 2018 2: SACK was negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    /// RFC 1106 2: NAKs were negotiated.
    pub fn nak_enabled(&self) -> bool {
        self.nak_ok
    }
    /// RFC 1106 3: big windows were negotiated.
    pub fn big_window_enabled(&self) -> bool {
        self.bigwin
    }
    /// RFC 7323 2: (send, receive) window-scale shifts in use.
    pub fn window_scales(&self) -> (u8, u8) {
        (self.snd_wscale, self.rcv_wscale)
    }
    /// Receive buffer granted within the memory caps (RFC 1106 5), and what capped it.
    pub fn rcv_buf_granted(&self) -> (usize, Option<BufferLimit>) {
        (self.rcv_buf_size, self.rcv_buf_limit)
    }
    pub fn local_port(&self) -> u16 {
        self.local_port
    }
    pub fn remote_port(&self) -> u16 {
        self.remote_port
    }
    pub fn iss(&self) -> SeqNumber {
        self.iss
    }
    pub fn irs(&self) -> SeqNumber {
        self.irs
    }
    pub fn snd_una(&self) -> SeqNumber {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> SeqNumber {
        self.snd_nxt
    }
    /// SND.MAX: the highest sequence number ever sent (SND.NXT falls back to
    /// SND.UNA on a timeout; this does not).
    pub fn snd_max(&self) -> SeqNumber {
        self.snd_max
    }
    /// RCV.NXT: next sequence number expected from the peer.
    pub fn rcv_nxt(&self) -> SeqNumber {
        self.irs + 1 + self.recv_buf.nxt() as usize + self.fin_rcvd as usize
    }
    /// Peer's offered window in bytes (scaled).
    pub fn snd_wnd(&self) -> usize {
        self.snd_wnd
    }
    /// The congestion window sending obeys: PRR's during a PRR recovery (RFC 6937), else the controller's.
    pub fn cwnd(&self) -> usize {
        self.send_cwnd()
    }

    fn send_cwnd(&self) -> usize {
        match self.prr {
            Some(p) if self.sack_recovery => p.cwnd,
            _ => self.cc.cwnd(),
        }
    }
    pub fn ssthresh(&self) -> usize {
        self.cc.ssthresh()
    }
    /// Current retransmission timeout, backoff included.
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    /// The application will read no more (close(), or shutdown with
    /// SHUT_RD): RFC 1122 4.2.2.13, new data after that, once our FIN is
    /// out, is answered with a RST (Linux's tcp_rcv_state_process in
    /// FIN-WAIT-1/2 with RCV_SHUTDOWN; FreeBSD's tcp_input likewise).
    pub fn shutdown_read(&mut self) {
        self.rcv_shutdown = true;
    }
    /// TCP_USER_TIMEOUT (RFC 5482): once data waits for acknowledgement
    /// past a retransmission for this long, the connection is dropped with
    /// a timeout (Linux tcp_timer.c, retransmits_timed_out). None or zero: off.
    pub fn set_user_timeout(&mut self, limit: Option<Duration>) {
        self.user_timeout.set(limit);
    }
    /// The TCP_USER_TIMEOUT in force.
    pub fn user_timeout(&self) -> Option<Duration> {
        self.user_timeout.limit()
    }
    /// Busy, window-limited and buffer-limited times up to `now` (Linux's
    /// tcp_get_info_chrono_stats).
    pub fn chrono_stats(&self, now: Instant) -> crate::chrono::ChronoStats {
        self.chrono.stats(now)
    }
    /// The application waits for send-buffer space (tcp_sendmsg's
    /// wait_for_space) or no longer does: the buffer-limited chronograph.
    pub fn note_sndbuf_limited(&mut self, now: Instant, limited: bool) {
        if limited {
            self.chrono
                .start(crate::chrono::ChronoKind::SndbufLimited, now);
        } else {
            let empty = self.send_buf.is_empty() && self.snd_una == self.snd_max;
            self.chrono
                .stop(crate::chrono::ChronoKind::SndbufLimited, now, empty);
        }
    }
    /// Resizes the send buffer of a live connection (SO_SNDBUF after
    /// connect/accept); what is queued stays.
    pub fn set_send_buffer(&mut self, bytes: usize) {
        self.cfg.snd_buf = bytes;
    }
    /// Sets the SYN retransmissions a live connection still opening may make
    /// (TCP_SYNCNT after connect: tcp(7); Linux's tcp_write_timeout reads it).
    pub fn set_syn_retries(&mut self, n: u32) {
        self.cfg.syn_retries = n;
    }
    /// Loss-recovery state for TCP_INFO-style reports: (in fast recovery,
    /// consecutive retransmission-timer expiries, duplicate ACKs counted).
    /// Linux's TCP_INFO segment counts from the RACK scoreboard, in segments:
    /// (unacked, sacked, lost, retrans, reordering). None when RACK does
    /// not track this connection (no SACK, or RACK off).
    pub fn rack_counts(&self) -> Option<(usize, usize, usize, usize, usize)> {
        if !(self.cfg.recovery.rack && self.sack_ok) {
            return None;
        }
        let r = &self.rack;
        let mss = self.snd_mss.max(1);
        let reordering = (self.cfg.dupack_threshold as usize).max(r.reorder_bytes().div_ceil(mss));
        Some((
            r.outstanding(),
            r.sacked_count(),
            r.lost_count(),
            r.retrans_count(),
            reordering,
        ))
    }

    pub fn recovery_state(&self) -> (bool, u32, u32) {
        (self.in_recovery, self.retries, self.dupacks)
    }
    /// Zero-window probes sent and not answered by an acceptable ACK
    /// (Linux's icsk_probes_out, reported as TCP_INFO's tcpi_probes).
    pub fn probes_out(&self) -> u32 {
        self.probes_out
    }
    /// Bytes sent and not acknowledged (SYN/FIN count one each).
    pub fn bytes_in_flight(&self) -> usize {
        self.snd_nxt.distance_from(self.snd_una)
    }

    // ----- application side ------------------------------------------------

    fn can_write(&self) -> bool {
        !self.fin_queued
            && matches!(
                self.state,
                State::SynSent | State::SynReceived | State::Established | State::CloseWait
            )
    }

    /// Queues application data; returns how much fit in the send buffer. Unless
    /// `more_follows` (MSG_MORE), the end of this write is an end of
    /// application data (Doupnik 2.0): PSH is set there and policies may send.
    pub fn write(&mut self, data: &[u8], more_follows: bool) -> Result<usize, WriteError> {
        if let Some(e) = self.error {
            return Err(WriteError::Conn(e));
        }
        if !self.can_write() {
            return Err(WriteError::Closed);
        }
        if self.snd_una == self.snd_max && !data.is_empty() {
            self.idle_check = true;
        }
        let room = self.send_room();
        Ok(self.send_buf.write(data, more_follows, room))
    }

    /// Closes a record at the last written byte (send(2) MSG_EOR): no later
    /// data shares a segment with it, nor does a retransmission merge across
    /// it (Linux tcp_sendmsg_locked marks the skb eor; tcp_skb_can_collapse_to).
    pub fn end_record(&mut self) {
        self.send_buf.mark_record_end();
    }

    /// Ends the current data set and pushes it: the last written byte becomes
    /// an end of application data (like a write without MSG_MORE), and the data
    /// written so far goes as window and cwnd allow, whatever the send policy
    /// (tcp(7): "all queued partial frames are sent" when TCP_CORK is cleared).
    pub fn flush(&mut self) {
        if self.cfg.flush_ends_data {
            self.send_buf.flush();
        } else {
            self.send_buf.push();
        }
    }

    /// Changes the send policy of a live connection at `now`, as Linux's
    /// setsockopt TCP_NODELAY / TCP_CORK does; it decides from the next
    /// transmission on, and data it holds counts as held from `now`.
    pub fn set_send_policy(&mut self, now: Instant, kind: SendPolicyKind) {
        self.cfg.send_policy = kind;
        self.send_policy = kind.build();
        self.policy_since = Some(now);
    }

    /// Turns the why-trace on or off (see `Config::trace`).
    pub fn set_trace(&mut self, on: bool) {
        self.cfg.trace = on;
    }

    /// Moves the why-trace recorded so far into `out` (only with `Config::trace`).
    pub fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        out.append(&mut self.trace);
    }

    /// Reads in-order data. Returns 0 when nothing is available (see
    /// [`read_closed`](Self::read_closed) for end of stream).
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = self.recv_buf.read(buf);
        if n > 0 {
            self.after_read();
        }
        n
    }

    /// Copies in-order data into `buf` without consuming it (recv(2)
    /// MSG_PEEK): the window and the next read are unchanged.
    pub fn peek(&self, buf: &mut [u8]) -> usize {
        let mut k = 0;
        self.recv_buf.peek(|s| {
            let take = s.len().min(buf.len() - k);
            buf[k..k + take].copy_from_slice(&s[..take]);
            k += take;
        });
        k
    }

    /// Reads and discards up to `n` bytes, calling `check` on them first.
    pub fn read_with(&mut self, n: usize, mut check: impl FnMut(&[u8])) -> usize {
        let mut left = n.min(self.recv_buf.readable());
        let take = left;
        self.recv_buf.peek(|s| {
            let k = s.len().min(left);
            check(&s[..k]);
            left -= k;
        });
        self.recv_buf.consume(take);
        if take > 0 {
            self.after_read();
        }
        take
    }

    /// RFC 1122 4.2.3.3: announce a window the read opened, once it moves the
    /// right edge by min(half the advertisable window, 2 x MSS) (BSD's
    /// threshold); with `window_update = "delayed"` the ACK policy decides when
    /// (Tops-20; Westfield, "Improving TCP throughput"); with `"doubling"` only
    /// a window at least twice the one offered goes at once (Linux tcp_cleanup_rbuf).
    fn after_read(&mut self) {
        if !matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) {
            return;
        }
        if self.recv_buf.readable() == 0 && self.ack_owed_since.is_some() {
            self.read_emptied = true;
        }
        let cur = self.rcv_adv.distance_from(self.rcv_nxt());
        match self.cfg.window_update {
            WindowUpdate::Delayed => {
                // Any move the advertisement rule allows goes to the ACK
                // policy, at the next poll_transmit (which knows the time).
                if self.ack_now.is_none() && self.right_edge_gain() > 0 {
                    self.window_opened = true;
                }
            }
            WindowUpdate::Immediate => {
                let free = self.recv_buf.free().min(self.max_rcv_wnd());
                let step = (self.advertisable() / 2).min(2 * self.snd_mss).max(1);
                if free >= cur + step && self.ack_now.is_none() {
                    self.ack_now = Some(AckReason::WindowUpdate);
                    self.counters.window_updates_sent += 1;
                }
            }
            WindowUpdate::Doubling => {
                // tcp_cleanup_rbuf: "if (2*rcv_window_now <= tp->window_clamp)",
                // then ACK if the new window is at least twice the current one.
                if 2 * cur <= self.advertisable() && self.ack_now.is_none() {
                    let new = self.window_offer();
                    if new > 0 && new >= 2 * cur && new > cur {
                        self.ack_now = Some(AckReason::WindowUpdate);
                        self.counters.window_updates_sent += 1;
                    }
                }
            }
        }
    }

    /// Closes our sending side (RFC 9293 3.10.4): FIN goes after queued data.
    pub fn close(&mut self) {
        match self.state {
            State::Listen | State::SynSent => self.enter_closed(None),
            State::SynReceived => self.fin_queued = true,
            State::Established => {
                self.fin_queued = true;
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.fin_queued = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    /// close(2): the application closes both directions and lets go of the
    /// connection, which lives on as an orphan until its FIN is acknowledged,
    /// retrying at most `orphan_retries` times (Linux's tcp_close, SOCK_DEAD).
    pub fn release(&mut self) {
        self.shutdown_read();
        self.close();
        self.orphaned = true;
    }

    /// The retry limit: `max_retries`, or for an orphan Linux's
    /// tcp_orphan_retries(): `orphan_retries`, where 0 means 8 while the
    /// timer is `alive` (below `rto_max`) and 0 once it is not.
    fn retry_limit(&self, alive: bool) -> u32 {
        match self.cfg.orphan_retries {
            _ if !self.orphaned => self.cfg.max_retries,
            0 if alive => 8,
            n => n,
        }
    }

    /// Aborts (RFC 9293 3.10.5): RST to the peer if synchronized, then CLOSED.
    pub fn abort(&mut self) {
        self.abort_reset(self.cfg.abort_rst_ack);
    }

    /// [`Connection::abort`], the RST optionally carrying an ACK of RCV.NXT
    /// (Linux's tcp_send_active_reset sends RST|ACK, e.g. on close() with
    /// unread data; RFC 9293 3.10.5 leaves the ACK out).
    pub fn abort_reset(&mut self, with_ack: bool) {
        if (self.state == State::SynReceived || self.state.synchronized())
            && self.state != State::TimeWait
        {
            let ack = with_ack.then(|| self.rcv_nxt());
            self.pending_rst = Some(Box::new(self.rst_segment(self.snd_nxt, ack)));
        }
        self.enter_closed(None);
    }

    fn enter_closed(&mut self, err: Option<ConnError>) {
        self.state = State::Closed;
        if err.is_some() {
            self.error = err;
        }
        self.timers = [None; TIMERS];
        self.ack_now = None;
        self.need_syn = false;
        self.rexmit_one = None;
    }

    fn enter_time_wait(&mut self, now: Instant) {
        self.state = State::TimeWait;
        self.timers = [None; TIMERS];
        self.timers[Timer::TimeWait as usize] = Some(now + self.cfg.msl * 2);
    }

    // ----- timers ----------------------------------------------------------

    /// The earliest time `handle_timeout` must be called, if any timer is armed.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.iter().flatten().min().copied()
    }

    fn arm(&mut self, t: Timer, at: Instant) {
        self.timers[t as usize] = Some(at);
    }
    fn disarm(&mut self, t: Timer) {
        self.timers[t as usize] = None;
    }
    fn armed(&self, t: Timer) -> bool {
        self.timers[t as usize].is_some()
    }

    /// Processes every timer that has expired by `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        let due = |c: &Self, t: Timer| c.timers[t as usize].is_some_and(|at| at <= now);
        if due(self, Timer::TimeWait) {
            self.disarm(Timer::TimeWait);
            self.enter_closed(None);
            return;
        }
        if due(self, Timer::Rack) {
            self.disarm(Timer::Rack);
            self.rack_detect(now); // RFC 8985 6.3
        }
        // A probe due with the RTO goes first and re-arms it (RFC 8985 7.3).
        if due(self, Timer::Tlp) {
            self.disarm(Timer::Tlp);
            self.on_tlp_timeout(now);
        }
        if due(self, Timer::Retransmit) {
            self.disarm(Timer::Retransmit);
            self.on_retransmit_timeout(now);
        }
        if due(self, Timer::DelayedAck) {
            self.disarm(Timer::DelayedAck);
            if self.state.synchronized() || self.state == State::SynReceived {
                self.ack_now.get_or_insert(AckReason::Timer {
                    delay: self.delack_len,
                });
                self.counters.delack_timer_fired += 1;
                let ctx = self.ack_ctx(now, 0);
                self.ack_policy.on_timer(&ctx);
            }
        }
        if due(self, Timer::Persist) {
            self.disarm(Timer::Persist);
            self.on_persist_timeout(now);
        }
        if due(self, Timer::Policy) {
            // Nothing to do here: the next poll asks the policy again.
            self.disarm(Timer::Policy);
            self.policy_timer_fired = true;
        }
        self.debug_check_invariants();
    }

    /// Whether a tail loss probe may be scheduled now (RFC 8985 7.2: SACK in
    /// use, data outstanding, not in recovery, an RTT measured, no probe out).
    /// Any state with data or a FIN in flight qualifies: Linux's
    /// tcp_output.c tcp_schedule_loss_probe does not look at the state, so a
    /// FIN or the data queued before shutdown() is probed as well.
    /// RFC 6675 4: the data estimated in flight from the SACK scoreboard.
    fn sack_pipe(&self) -> usize {
        self.scoreboard.pipe(
            self.snd_una,
            self.snd_max,
            self.high_rxt,
            self.cfg.dupack_threshold,
            self.snd_mss,
        )
    }

    fn tlp_eligible(&self) -> bool {
        self.cfg.recovery.tlp
            && self.sack_ok
            // Linux's tcp_schedule_loss_probe checks no state: a FIN in
            // flight after close() is probed too.
            && matches!(
                self.state,
                State::Established
                    | State::CloseWait
                    | State::FinWait1
                    | State::Closing
                    | State::LastAck
            )
            && !self.in_recovery
            && self.snd_una < self.snd_max
            && self.tlp_end.is_none()
            && self.rtt.srtt().is_some()
    }

    /// RFC 8985 7.2: PTO = 2 SRTT, plus WCDelAckT (200 ms) when one segment is
    /// in flight, and never later than the RTO, which the probe then stands in for.
    fn arm_tlp(&mut self, now: Instant) {
        self.disarm(Timer::Tlp);
        if !self.tlp_eligible() {
            return;
        }
        let Some(srtt) = self.rtt.srtt() else {
            return;
        };
        let mut pto = srtt * 2;
        if self.snd_max.distance_from(self.snd_una) <= self.snd_mss {
            pto += Duration::from_millis(200);
        } else {
            pto += self.cfg.tlp_extra;
        }
        let mut at = now + pto;
        if let Some(rto) = self.timers[Timer::Retransmit as usize] {
            at = at.min(rto);
        }
        self.arm(Timer::Tlp, at);
    }

    /// RFC 8985 7.3: send one new segment if the window allows, else resend
    /// the last one, so an ACK (with SACK) comes back before the RTO.
    fn on_tlp_timeout(&mut self, now: Instant) {
        if !self.tlp_eligible() {
            return;
        }
        self.counters.tlp_probes += 1;
        self.tlp_end = Some(self.snd_max);
        let flight = self.snd_max.distance_from(self.snd_una);
        if self.unsent() > 0 && self.snd_wnd > flight {
            self.force_one = true;
        } else {
            // The last segment sent: a FIN that went alone is probed alone
            // (tcp_send_fin queues it as its own skb once the data is out).
            let back = if self.fin_alone && self.fin_sent() {
                1
            } else {
                flight.min(self.snd_mss).max(1)
            };
            self.rexmit_one = Some(self.snd_max - back);
            self.rtt_probe = None; // Karn: the timed segment may be resent.
        }
        // RFC 8985 7.3: the RTO is re-armed after a probe.
        self.arm(Timer::Retransmit, now + self.rtt.rto());
    }

    /// RFC 6298 5.4-5.6: retransmit the earliest unacknowledged segment, back off.
    fn on_retransmit_timeout(&mut self, now: Instant) {
        match self.state {
            State::SynSent | State::SynReceived => {
                // A passive open's SYN-ACKs count against synack_retries
                // (Linux's request sockets); an active open's, a
                // simultaneous open included, against syn_retries.
                let limit = if self.passive {
                    self.cfg.synack_retries
                } else {
                    self.cfg.syn_retries
                };
                if self.retries >= limit {
                    self.enter_closed(Some(ConnError::TimedOut));
                    return;
                }
                self.retries += 1;
                self.counters.syn_retransmits += 1;
                self.rtt.back_off();
                self.rtt_probe = None;
                self.need_syn = true;
                self.snd_nxt = self.iss;
            }
            State::Closed | State::Listen | State::TimeWait => {}
            _ => {
                if self.snd_una == self.snd_max {
                    return;
                }
                if self.retries > 0 && self.user_timeout.expired(now) {
                    // RFC 5482 / Linux tcp_write_timeout: the user timeout is
                    // up; tcp_write_err drops the connection without a RST.
                    self.enter_closed(Some(ConnError::TimedOut));
                    return;
                }
                if self.retries >= self.retry_limit(self.rtt.rto() < self.cfg.rto_max) {
                    // RFC 1122 4.2.3.5: give up; tell the peer.
                    self.pending_rst = Some(Box::new(self.rst_segment(self.snd_nxt, None)));
                    self.enter_closed(Some(ConnError::TimedOut));
                    return;
                }
                self.retries += 1;
                self.user_timeout.on_retransmit(now, self.snd_max);
                self.counters.timeouts += 1;
                let flight = self.snd_max.distance_from(self.snd_una);
                self.cc.on_rto(flight, self.snd_mss);
                self.rtt.back_off();
                self.rtt_probe = None; // Karn
                                       // RFC 6582 4.1: no fast retransmit for data sent before the timeout.
                self.recover = self.snd_max;
                self.in_recovery = false;
                self.sack_recovery = false;
                self.prr = None;
                self.tlp_end = None;
                self.rack.on_rto();
                self.scoreboard.set_rack_lost(None);
                self.disarm(Timer::Rack);
                self.rxt_first = false;
                self.dupacks = 0;
                self.rexmit_one = None;
                self.nak_tx.clear();
                if self.retries >= 2 {
                    // RFC 2018 8: the receiver may have reneged; stop trusting SACKs.
                    self.scoreboard.clear();
                }
                // Go back N: resend from the oldest unacknowledged byte.
                self.snd_nxt = self.snd_una;
            }
        }
        let _ = now;
    }

    /// RFC 9293 3.8.6.1: probe a zero window; RFC 1122 4.2.3.4: or override SWS.
    fn on_persist_timeout(&mut self, now: Instant) {
        if !self.can_send_data_state() || self.unsent() == 0 {
            self.persist_backoff = 0;
            return;
        }
        if self.snd_wnd == 0 {
            // RFC 1122 4.2.2.17 keeps the connection open only "as long as the
            // receiving TCP continues to send acknowledgments in response to
            // the probe segments": like Linux's tcp_probe_timer, give up after
            // max_retries (tcp_retries2) probes no ACK answered, without a
            // RST (tcp_write_err).
            // An orphan whose probe interval reached rto_max is given up
            // at once (tcp_probe_timer's `!alive` check).
            if self.probes_out >= self.retry_limit(self.persist_interval() < self.cfg.rto_max) {
                self.counters.window_probe_aborts += 1;
                self.enter_closed(Some(ConnError::TimedOut));
                return;
            }
            self.probes_out += 1;
            // Abandon an earlier probe byte and send it again.
            self.snd_nxt = self.snd_una;
            self.counters.window_probes += 1;
            self.persist_backoff = self.persist_backoff.saturating_add(1);
            let at = now + self.persist_interval();
            self.arm(Timer::Persist, at);
            if self.cfg.window_probe == crate::config::WindowProbe::OldSeq {
                // tcp_xmit_probe_skb: no data, a sequence number already acked.
                self.old_seq_probe = true;
                return;
            }
        }
        self.force_one = true;
    }

    fn persist_interval(&self) -> Duration {
        let mut d = self.rtt.rto();
        for _ in 0..self.persist_backoff.min(32) {
            d = (d * 2).min(self.cfg.rto_max);
        }
        d
    }

    // ----- sequence/offset helpers ----------------------------------------

    /// Sequence number of the first data byte.
    fn data_base(&self) -> SeqNumber {
        self.iss + 1
    }
    fn seq_of(&self, off: u64) -> SeqNumber {
        self.data_base() + off as usize
    }
    /// Stream offset of data sequence number `seq` (at or after snd_una's data).
    fn off_of(&self, seq: SeqNumber) -> u64 {
        let head_seq = self.seq_of(self.send_buf.head());
        let d = seq.diff(head_seq).max(0) as u64;
        (self.send_buf.head() + d).min(self.send_buf.end())
    }
    fn fin_seq(&self) -> SeqNumber {
        self.seq_of(self.send_buf.end())
    }
    /// Our FIN has been sent (and not rolled back by go-back-N).
    fn fin_sent(&self) -> bool {
        self.fin_queued && self.snd_nxt > self.fin_seq()
    }
    fn fin_acked(&self) -> bool {
        self.fin_queued && self.snd_una > self.fin_seq()
    }
    fn unsent(&self) -> usize {
        (self.send_buf.end() - self.off_of(self.snd_nxt)) as usize
    }
    fn can_send_data_state(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::Closing
                | State::LastAck
        )
    }
    /// Largest window we can express (RFC 7323 2.3).
    fn max_rcv_wnd(&self) -> usize {
        if self.bigwin {
            bigwin::MAX_WINDOW // RFC 1106 3: 30 bits
        } else {
            (u16::MAX as usize) << self.rcv_wscale
        }
    }

    /// The peer's window from a segment: RFC 1106 3.1 reassembly with big
    /// windows, else RFC 7323 2.3 scaling.
    fn peer_window(&self, seg: &TcpRepr) -> usize {
        if self.bigwin {
            bigwin::join(seg.window, seg.options.big_window_upper.unwrap_or(0))
        } else {
            (seg.window as usize) << self.snd_wscale
        }
    }

    // ----- receiving -------------------------------------------------------

    /// Parses a segment's bytes and processes it: for drivers that read a wire.
    /// A malformed segment (bad option length, option running past the header,
    /// known option of the wrong size, bad checksum) is dropped, counted in
    /// `invalid_segments` and traced, and changes nothing else (DESIGN: bad input).
    pub fn handle_bytes(
        &mut self,
        now: Instant,
        bytes: &[u8],
        checksum: Option<ChecksumCtx>,
    ) -> Result<(), WireError> {
        match TcpRepr::parse(bytes, checksum) {
            Ok((repr, payload)) => {
                self.handle_segment(now, &repr, &bytes[payload]);
                Ok(())
            }
            Err(e) => {
                self.note_invalid_segment(now, e);
                Err(e)
            }
        }
    }

    /// Counts and traces a segment the driver could not parse (see [`handle_bytes`](Self::handle_bytes)).
    pub fn note_invalid_segment(&mut self, now: Instant, error: WireError) {
        self.counters.invalid_segments += 1;
        if self.cfg.trace {
            self.trace
                .push(TraceEvent::InvalidSegment { at: now, error });
        }
    }

    /// Processes one arriving segment (RFC 9293 3.10.7).
    pub fn handle_segment(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        if seg.dst_port != self.local_port
            || (self.state != State::Listen && seg.src_port != self.remote_port)
        {
            return;
        }
        if seg
            .options
            .unknown
            .iter()
            .any(|(k, _)| k == crate::wire::kind::MD5SIG)
        {
            // No TCP-MD5 key is ever configured, so a signed segment is
            // dropped unseen (Linux tcp_inbound_md5_hash: TCPMD5Unexpected).
            self.counters.invalid_segments += 1;
            return;
        }
        self.counters.segments_received += 1;
        if payload.is_empty() && seg.flags.0 & (Flags::SYN.0 | Flags::FIN.0 | Flags::RST.0) == 0 {
            self.counters.pure_acks_received += 1;
        }
        if !payload.is_empty() {
            self.counters.data_segments_received += 1;
            self.counters.bytes_received += payload.len() as u64;
        }
        match self.state {
            State::Closed => {
                if let Some(r) = rst_reply(seg, payload.len()) {
                    self.pending_rst = Some(Box::new(r));
                }
            }
            State::Listen => self.on_listen(now, seg, payload),
            State::SynSent => {
                self.on_syn_sent(now, seg);
                self.syn_ack_text(now, seg, payload);
            }
            _ => self.on_synchronized(now, seg, payload),
        }
        // A CE mark belongs to this segment only, consumed or not.
        self.ce_next = false;
        while self
            .delivered_ends
            .front()
            .is_some_and(|&e| e <= self.snd_una)
        {
            self.delivered_ends.pop_front();
            self.counters.segments_delivered += 1;
        }
        self.after_input(now);
        self.debug_check_invariants();
    }

    /// RFC 9293 3.10.7.2.
    fn on_listen(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        if seg.flags.rst() {
            return;
        }
        if seg.flags.ack() {
            // RFC 9293 3.10.7.2: <SEQ=SEG.ACK><CTL=RST>, to whoever sent it.
            self.pending_rst = rst_reply(seg, 0).map(Box::new);
            return;
        }
        if !seg.flags.syn() {
            return;
        }
        self.remote_port = seg.src_port;
        // RFC 9293 3.10.7.2: select an ISS for this SYN.
        let iss = self.isn_gen.next_isn(now, self.local_port, seg.src_port);
        self.set_iss(iss);
        self.accept_syn(now, seg);
        self.tfo = crate::fastopen::TfoState::default();
        self.fast_open_server(seg, payload);
        self.state = State::SynReceived;
        self.need_syn = true;
    }

    /// RFC 7413 4.3: a SYN with a valid cookie (or, when the listener waives
    /// cookies, an empty Fast Open option) has its data taken into the
    /// receive buffer and acknowledged by the SYN-ACK; a SYN asking for a
    /// cookie, or carrying a wrong one, gets one in the SYN-ACK and its data
    /// is dropped (the client sends it again after the handshake, 4.2.2).
    fn fast_open_server(&mut self, seg: &TcpRepr, payload: &[u8]) {
        let fo_cfg = &self.cfg.fast_open;
        let opt = seg.options.fast_open;
        // Only a SYN that carries data or asks for Fast Open, and only while
        // the queue has room (RFC 7413 5.1).
        if !fo_cfg.server || (payload.is_empty() && opt.is_none()) || fo_cfg.queue == 0 {
            return;
        }
        let valid = fo_cfg.server_no_cookie
            || opt
                .is_some_and(|o| !o.cookie.is_request() && fo_cfg.server_cookie == Some(o.cookie));
        if valid {
            self.tfo.child = true;
            if !payload.is_empty() {
                let keep = payload.len().min(self.syn_window());
                let r = self.recv_buf.insert(0, &payload[..keep]);
                self.counters.bytes_delivered += r.advanced as u64;
                self.tfo.syn_data = true;
                self.tfo.syn_data_acked = true;
            }
        } else if let (Some(o), Some(cookie)) = (opt, fo_cfg.server_cookie) {
            // A request or a wrong cookie: answer with the right one (4.3.1).
            self.tfo.reply = Some(crate::fastopen::FastOpenOption {
                experimental: o.experimental,
                cookie,
            });
        }
    }

    /// Changes the Fast Open settings of a connection not yet synchronized
    /// (TCP_FASTOPEN on a listener, set after listen()).
    pub fn set_fast_open(&mut self, f: crate::fastopen::FastOpenConfig) {
        self.cfg.fast_open = f;
    }

    /// Fast Open progress: whether SYN data was sent or taken, and the cookie
    /// a server gave this client (the caller keeps it in its [`CookieCache`](crate::fastopen::CookieCache)).
    pub fn fast_open(&self) -> &crate::fastopen::TfoState {
        &self.tfo
    }

    /// Takes the peer's ISN and SYN options (RFC 9293 3.7.1, RFC 7323 2.2).
    /// An option is in use when we offer it (or, passive, are willing to) and
    /// the peer's SYN or SYN-ACK carries it.
    fn accept_syn(&mut self, now: Instant, seg: &TcpRepr) {
        self.irs = seg.seq;
        self.round_buffers_to_mss(seg.options.mss.unwrap_or(DEFAULT_MSS));
        self.recv_buf = RecvBuffer::new(self.rcv_buf_size, self.cfg.max_ooo_ranges);
        let want = self.cfg.options;
        let o = &seg.options;
        // RFC 7323 3.2: timestamps only if both SYNs carry them.
        self.ts.enabled = false;
        if let (true, Some(ts)) = (want.timestamps, o.timestamps) {
            self.ts.enabled = true;
            self.ts.on_syn(now, ts);
        }
        // RFC 2018 2: SACK-permitted in both SYNs.
        self.sack_ok = want.sack && o.sack_permitted;
        // RFC 1106 2: NAKs negotiated like SACK-permitted.
        self.nak_ok = want.nak && o.nak_permitted;
        // RFC 1106 3: big windows only if both SYNs carry option B.
        self.bigwin = want.big_window && o.big_window_offer.is_some();
        // RFC 3168 6.1.1: an ECN-setup SYN has ECE and CWR; an ECN-setup SYN-ACK ECE only.
        let (ece, cwr) = (
            seg.flags.contains(Flags::ECE),
            seg.flags.contains(Flags::CWR),
        );
        self.ecn_ok = want.ecn && ece && if seg.flags.ack() { !cwr } else { cwr };
        let mut peer_mss = seg.options.mss.unwrap_or(DEFAULT_MSS);
        if peer_mss < MIN_PEER_MSS {
            peer_mss = MIN_PEER_MSS;
            self.counters.peer_mss_floored += 1;
        }
        // RFC 6691 / Cheshire: options on every segment come out of the MSS
        // (timestamps: 1460 becomes 1448; RFC 1106 option C: 8 more).
        let per_segment = self.ts.enabled as usize * TS_OPTION_SPACE
            + self.bigwin as usize * bigwin::UPPER_OPTION_SPACE;
        self.snd_mss = (peer_mss.min(self.cfg.mss) as usize)
            .saturating_sub(per_segment)
            .max(1);
        match (want.window_scale && !self.bigwin, seg.options.window_scale) {
            (true, Some(peer)) => {
                self.snd_wscale = peer.min(MAX_WSCALE);
                self.rcv_wscale = self.offered_wscale();
            }
            _ => {
                self.snd_wscale = 0;
                self.rcv_wscale = 0;
            }
        }
        // The window in a SYN is never scaled (RFC 7323 2.2); with big windows
        // the offered 30-bit window replaces it (RFC 1106 3).
        self.snd_wnd = match (self.bigwin, o.big_window_offer) {
            (true, Some(w)) => w as usize,
            _ => seg.window as usize,
        };
        self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
        self.snd_wl1 = seg.seq;
        self.snd_wl2 = seg.ack;
        self.rcv_adv = self.rcv_nxt() + self.syn_window();
        self.rcv_wnd_last = self.syn_window();
        // Restart congestion state with the real MSS (RFC 6928 counts segments).
        self.cc = build_cc(&self.cfg, self.snd_mss);
    }

    /// The window-scale shift this side offers: the smallest that fits the
    /// receive buffer, or FreeBSD's shift for `wscale_buf`
    /// (tcp_usrreq.c tcp_connect: while (TCP_MAXWIN << shift) < sb_max, shift++).
    fn offered_wscale(&self) -> u8 {
        match self.cfg.wscale_buf {
            Some(max) => {
                let mut s = 0;
                while s < MAX_WSCALE && ((u16::MAX as usize) << s) < max {
                    s += 1;
                }
                s
            }
            None => wscale_for(self.rcv_buf_size),
        }
    }

    /// With `buf_round_mss`, rounds both buffers up to a multiple of the
    /// segment size once the peer's MSS is known (FreeBSD tcp_input.c
    /// tcp_mss: roundup(sb_hiwat, mss), no further than sb_max).
    fn round_buffers_to_mss(&mut self, peer_mss: u16) {
        if !self.cfg.buf_round_mss {
            return;
        }
        let mss = peer_mss.max(MIN_PEER_MSS).min(self.cfg.mss) as usize;
        let cap = self.cfg.wscale_buf.unwrap_or(usize::MAX);
        let round = |b: usize| {
            if b < mss {
                b
            } else {
                b.div_ceil(mss).saturating_mul(mss).min(cap).max(b)
            }
        };
        self.rcv_buf_size = round(self.rcv_buf_size);
        let snd = round(self.cfg.snd_buf);
        if snd != self.cfg.snd_buf {
            self.set_send_buffer(snd);
        }
    }

    /// The window a SYN or SYN-ACK offers: 16 bits, or with big windows
    /// negotiated the 30-bit window of option B (RFC 1106 3).
    fn syn_window(&self) -> usize {
        if self.bigwin {
            self.rcv_buf_size.min(bigwin::MAX_WINDOW)
        } else {
            self.rcv_buf_size.min(u16::MAX as usize)
        }
    }

    /// RFC 9293 3.10.7.3.
    fn on_syn_sent(&mut self, now: Instant, seg: &TcpRepr) {
        if seg.flags.ack() && (seg.ack <= self.iss || seg.ack > self.snd_max) {
            if !seg.flags.rst() {
                self.pending_rst = Some(Box::new(self.rst_segment(seg.ack, None)));
            }
            return;
        }
        if seg.flags.rst() {
            if seg.flags.ack() {
                self.enter_closed(Some(ConnError::Refused));
            }
            return;
        }
        if !seg.flags.syn() {
            return;
        }
        self.accept_syn(now, seg);
        if seg.flags.ack() {
            // RFC 7413 4.2.2: data the SYN-ACK does not cover is sent again
            // as ordinary data; a cookie it carries is kept for the cache.
            // tcp_rcv_fastopen_synack: a cookie our SYN did not ask for
            // (no Fast Open option in it, as in cookie-less mode) is ignored.
            let fo_cfg = &self.cfg.fast_open;
            let asked = fo_cfg.client
                && (fo_cfg.cookie.is_some_and(|c| !c.is_request()) || !fo_cfg.client_no_cookie);
            if let Some(fo) = seg
                .options
                .fast_open
                .filter(|f| !f.cookie.is_request() && asked)
            {
                self.tfo.learned = Some(fo);
            }
            if self.cfg.fast_open.client {
                self.tfo.peer_mss = seg.options.mss;
            }
            let data_acked = seg.ack.diff(self.iss + 1).max(0) as usize;
            if data_acked > 0 {
                self.send_buf.ack(data_acked.min(self.send_buf.len()));
                self.tfo.syn_data_acked = true;
            }
            if self.tfo.syn_data && data_acked >= self.tfo.syn_data_len {
                // tcp_rcv_fastopen_synack: SYN and its data, acknowledged
                // together, count as one delivered segment.
                self.delivered_ends.pop_front();
            }
            if seg.ack < self.snd_nxt {
                self.snd_nxt = seg.ack;
                self.snd_max = seg.ack;
            }
            // After a bare retransmitted SYN, the SYN-ACK may still cover
            // the first SYN's data (the peer took it): go on from there.
            if seg.ack > self.snd_nxt {
                self.snd_nxt = seg.ack;
            }
            self.snd_una = seg.ack;
            let rtt = self.take_rtt_sample(now, seg);
            self.cc.on_ack_sample(&AckSample {
                now,
                rtt,
                srtt: self.rtt.srtt(),
                snd_una: self.snd_una,
                snd_nxt: self.snd_max,
            });
            self.retries = 0;
            self.rtt.reset_backoff();
            self.disarm(Timer::Retransmit);
            self.state = State::Established;
            self.ack_now = Some(AckReason::Handshake);
            // Data queued past what the SYN carried, with the SYN's own data
            // all acknowledged: a writer is waiting on the connection.
            let waiting = !self.send_buf.is_empty() && data_acked >= self.tfo.syn_data_len;
            let ctx = self.ack_ctx(now, 0);
            self.ack_policy.on_connected(&ctx, waiting);
        } else {
            // Simultaneous open: answer with SYN-ACK from our ISN.
            self.state = State::SynReceived;
            self.need_syn = true;
        }
    }

    /// RFC 9293 3.10.7.3: data (and a FIN) on the SYN-ACK that completed an
    /// active open is taken in as on any segment (Linux's
    /// tcp_rcv_fastopen_synack queues it with tcp_fastopen_add_skb).
    fn syn_ack_text(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        if self.state != State::Established || !seg.flags.syn() || !seg.flags.ack() {
            return;
        }
        if payload.is_empty() && !seg.flags.fin() {
            return;
        }
        // The text starts after the SYN's sequence number.
        let mut text = *seg;
        text.seq = seg.seq + 1;
        text.flags = Flags(seg.flags.0 & !Flags::SYN.0);
        if !payload.is_empty() {
            self.process_text(now, &text, payload);
        }
        if seg.flags.fin() {
            let fin_seq = text.seq + payload.len();
            if fin_seq.diff(self.rcv_adv) <= 0 {
                self.rcv_fin_seq = Some(fin_seq);
            }
        }
        self.check_fin(now);
    }

    /// RFC 9293 3.10.7.4: SYN-RECEIVED and every synchronized state.
    fn on_synchronized(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        let seg_len = seg.segment_len(payload.len());
        let rcv_nxt = self.rcv_nxt();
        let mut wnd = self.rcv_adv.distance_from(rcv_nxt);
        if self.cfg.rcv_wnd_free && wnd > 0 && self.state != State::SynReceived {
            // FreeBSD tcp_input.c: rcv_wnd = imax(sbspace(so_rcv), rcv_adv - rcv_nxt);
            // the syncache checks against the window its SYN-ACK offered.
            wnd = wnd.max(self.recv_buf.free());
        }
        if self.cfg.time_wait_bsd
            && self.state == State::TimeWait
            && self.time_wait_bsd(now, seg, payload)
        {
            return;
        }

        // RFC 7323 5.3 R1: PAWS drops an old duplicate (with an ACK) before anything else.
        if self.ts.enabled && !seg.flags.rst() {
            if let Some(ts) = seg.options.timestamps {
                if self.ts.paws_rejects(now, ts) {
                    self.counters.paws_rejected += 1;
                    self.ack_invalid(now, false, Self::oow_limited(seg, payload));
                    return;
                }
            }
        }

        // First: the acceptability test.
        let acceptable = match (seg_len, wnd) {
            (0, 0) => seg.seq == rcv_nxt,
            (0, _) => seg.seq.in_range(rcv_nxt, rcv_nxt + wnd),
            (_, 0) => false,
            (_, _) => {
                seg.seq.in_range(rcv_nxt, rcv_nxt + wnd)
                    || (seg.seq + (seg_len - 1)).in_range(rcv_nxt, rcv_nxt + wnd)
            }
        };
        if !acceptable {
            if seg.flags.rst() {
                return;
            }
            self.counters.unacceptable_segments += 1;
            self.dsack_old(seg, payload.len());
            if self.state == State::TimeWait && seg.flags.fin() {
                // A retransmitted FIN: acknowledge and restart 2 MSL.
                self.enter_time_wait(now);
            }
            if seg.flags.syn() && self.cfg.rfc5961 && self.state.synchronized() {
                // RFC 5961 4.2: any SYN, in window or not, gets a challenge ACK.
                self.ack_invalid(now, true, true);
                return;
            }
            if seg.flags.syn() && self.cfg.syn_reset_tcb && self.state.synchronized() {
                // FreeBSD answers a SYN outside the window with tcp_respond's
                // bare ACK even with insecure_syn (tcp_input.c tcp_do_segment).
                self.ack_invalid(now, true, true);
                return;
            }
            self.ack_invalid(now, false, Self::oow_limited(seg, payload));
            // RFC 9293: with a zero window still take valid ACKs (zero-window probes).
            if wnd == 0 && seg.seq == rcv_nxt && seg.flags.ack() && self.state.synchronized() {
                self.process_ack(now, seg, 0);
            }
            return;
        }
        // Second: RST (RFC 5961 3.2: exact match resets, in-window gets a
        // challenge ACK; without RFC 5961 anything in window resets, RFC 793).
        if seg.flags.rst() {
            if seg.seq == rcv_nxt || !self.cfg.rfc5961 {
                self.counters.rsts_received += 1;
                match self.state {
                    // A Fast Open child is a full socket the listener may
                    // already have handed out with the SYN's data: Linux
                    // resets it like an established one (tcp_reset), keeping
                    // that data readable; other passive opens go back to
                    // LISTEN (RFC 9293 3.10.7.4).
                    State::SynReceived if self.passive && self.tfo.child => {
                        self.enter_closed(Some(ConnError::Reset))
                    }
                    State::SynReceived if self.passive => self.back_to_listen(),
                    State::SynReceived => self.enter_closed(Some(ConnError::Refused)),
                    State::Closing | State::LastAck | State::TimeWait => self.enter_closed(None),
                    _ => self.enter_closed(Some(ConnError::Reset)),
                }
            } else {
                self.ack_invalid(now, true, true);
            }
            return;
        }

        // Fourth: SYN.
        if seg.flags.syn() {
            if self.state == State::SynReceived && seg.seq == self.irs {
                // Our SYN-ACK was lost: send it again.
                self.need_syn = true;
            } else if self.cfg.rfc5961 || !self.state.synchronized() {
                // RFC 5961 4.2: challenge ACK.
                self.ack_invalid(now, true, true);
            } else {
                // RFC 793: a SYN in the window is an error: reset. FreeBSD
                // drops the connection (tcp_input.c tcp_do_segment,
                // tcp_drop) and tcp_output resets from its own SND.NXT, RCV.NXT.
                self.pending_rst = if self.cfg.syn_reset_tcb {
                    Some(self.rst_segment(self.snd_nxt, Some(self.rcv_nxt())))
                } else {
                    rst_reply(seg, payload.len())
                }
                .map(Box::new);
                self.enter_closed(Some(ConnError::Reset));
            }
            return;
        }

        // Fifth: ACK.
        if !seg.flags.ack() {
            return;
        }
        if self.state == State::SynReceived {
            if seg.ack > self.snd_una && seg.ack <= self.snd_max {
                self.state = State::Established;
                self.need_syn = false;
                self.snd_wnd = self.peer_window(seg);
                self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
                self.snd_wl1 = seg.seq;
                self.snd_wl2 = seg.ack;
                if self.fin_queued {
                    self.state = State::FinWait1;
                }
            } else {
                self.pending_rst = Some(Box::new(self.rst_segment(seg.ack, None)));
                return;
            }
        }
        if !self.process_ack(now, seg, payload.len()) {
            return;
        }
        if self.ecn_ok {
            self.on_ecn_input(seg, payload.len());
        }
        // RFC 7323 4.3 (2), 5.3 R3: remember the peer's latest TSval, only
        // from a segment that passed every check (a forged one must not move it).
        if let (true, Some(ts)) = (self.ts.enabled, seg.options.timestamps) {
            self.ts.update_recent(now, seg.seq, ts);
        }
        if let (true, Some(nak)) = (self.nak_ok, seg.options.nak) {
            self.on_nak(nak);
        }
        match self.state {
            State::FinWait1 if self.fin_acked() => self.state = State::FinWait2,
            State::Closing if self.fin_acked() => {
                self.enter_time_wait(now);
                return;
            }
            State::LastAck if self.fin_acked() => {
                self.enter_closed(None);
                return;
            }
            State::TimeWait => {
                if seg.flags.fin() {
                    self.ack_now.get_or_insert(AckReason::Fin);
                    self.enter_time_wait(now);
                }
                return;
            }
            _ => {}
        }

        // RFC 1122 4.2.2.13: new data after the application closed for
        // reading, with our FIN sent: reset, as from no socket (the RST
        // takes its sequence number from the segment's ACK).
        if self.rcv_shutdown
            && !payload.is_empty()
            && matches!(self.state, State::FinWait1 | State::FinWait2)
            && seg.seq + payload.len() > self.rcv_nxt()
        {
            let rst = if seg.flags.ack() {
                self.rst_segment(seg.ack, None)
            } else {
                let fin = usize::from(seg.flags.fin());
                self.rst_segment(SeqNumber(0), Some(seg.seq + payload.len() + fin))
            };
            self.pending_rst = Some(Box::new(rst));
            self.enter_closed(Some(ConnError::Reset));
            return;
        }

        // Seventh: segment text.
        if !payload.is_empty()
            && matches!(
                self.state,
                State::Established | State::FinWait1 | State::FinWait2
            )
        {
            self.process_text(now, seg, payload);
        }

        // Eighth: FIN.
        if seg.flags.fin() {
            let fin_seq = seg.seq + payload.len();
            if fin_seq.diff(self.rcv_adv) <= 0 {
                self.rcv_fin_seq = Some(fin_seq);
            }
        }
        self.check_fin(now);
    }

    /// FreeBSD's TIME-WAIT (tcp_timewait.c tcp_twcheck), before the sequence
    /// check: a RST is dropped (RFC 1337), a SYN above RCV.NXT may start a
    /// new connection (the usual way), any other segment without ACK is
    /// dropped, a retransmitted FIN restarts 2 MSL, and anything but an exact
    /// duplicate ACK is answered with an ACK. Returns whether it handled `seg`.
    fn time_wait_bsd(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) -> bool {
        if seg.flags.rst() {
            return true;
        }
        if seg.flags.syn() && !seg.flags.ack() && seg.seq > self.rcv_nxt() {
            return false;
        }
        if !seg.flags.ack() {
            return true;
        }
        let rcv_nxt = self.rcv_nxt();
        if seg.flags.fin() && seg.seq + (payload.len() + 1) == rcv_nxt {
            self.enter_time_wait(now);
        }
        let dup_ack = seg.flags == Flags::ACK
            && payload.is_empty()
            && seg.seq == rcv_nxt
            && seg.ack == self.snd_nxt;
        if !dup_ack {
            self.ack_now.get_or_insert(AckReason::OutOfOrder);
        }
        true
    }

    /// Linux's tcp_oow_rate_limited: replies to segments carrying data (and no
    /// SYN) are never limited; they are not part of an ACK loop.
    fn oow_limited(seg: &TcpRepr, payload: &[u8]) -> bool {
        payload.is_empty() || seg.flags.syn()
    }

    /// Answers an unacceptable segment, or sends a challenge ACK (RFC 5961
    /// 3.2, 4.2, 5.2); with `limited`, at most one per `invalid_ack_interval`
    /// (RFC 5961 7), so two confused peers cannot ACK each other forever.
    fn ack_invalid(&mut self, now: Instant, challenge: bool, limited: bool) {
        let gap = self.cfg.invalid_ack_interval;
        if limited && !gap.is_zero() {
            if self.last_invalid_ack.is_some_and(|t| now - t < gap) {
                if challenge {
                    self.counters.challenge_acks_suppressed += 1;
                } else {
                    self.counters.invalid_acks_suppressed += 1;
                }
                return;
            }
            self.last_invalid_ack = Some(now);
        }
        if challenge {
            self.counters.challenge_acks += 1;
            self.challenge_owed = true;
        }
        self.ack_now.get_or_insert(AckReason::OutOfOrder);
    }

    fn back_to_listen(&mut self) {
        let cfg = self.cfg.clone();
        let port = self.local_port;
        let mut counters = self.counters.clone();
        counters.bytes_lost_to_reset += (self.send_queued() + self.recv_available()) as u64;
        // The generator stays: the next SYN gets a new ISS (RFC 9293 3.4.1).
        let isn = std::mem::replace(
            &mut self.isn_gen,
            Box::new(|_: Instant, _: u16, _: u16| SeqNumber(0)),
        );
        *self = Connection::listen_with(cfg, port, isn);
        self.counters = counters;
    }

    /// The peer's FIN is consumed once every byte before it has arrived.
    fn check_fin(&mut self, now: Instant) {
        let Some(f) = self.rcv_fin_seq else { return };
        if self.fin_rcvd || self.rcv_nxt() != f {
            return;
        }
        if !matches!(
            self.state,
            State::SynReceived | State::Established | State::FinWait1 | State::FinWait2
        ) {
            return;
        }
        self.fin_rcvd = true;
        self.ack_now = Some(AckReason::Fin);
        match self.state {
            State::SynReceived | State::Established => self.state = State::CloseWait,
            State::FinWait1 => {
                if self.fin_acked() {
                    self.enter_time_wait(now);
                } else {
                    self.state = State::Closing;
                }
            }
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    /// RFC 9293 3.10.7.4 fifth check, with RFC 5681/6582 loss detection.
    /// Returns false when the segment must be dropped.
    fn process_ack(&mut self, now: Instant, seg: &TcpRepr, payload_len: usize) -> bool {
        let ack = seg.ack;
        // By unsigned offset from SND.UNA, so no ACK is ambiguous 2^31 away.
        let ahead = ack.0.wrapping_sub(self.snd_una.0) as usize;
        let flight = self.snd_max.distance_from(self.snd_una);
        if ahead > flight {
            if ack > self.snd_max {
                // Acknowledges something not yet sent (RFC 9293 3.10.7.4;
                // RFC 5961 5.2 answers it as a challenge).
                self.counters.unacceptable_acks += 1;
                if !self.cfg.silent_unsent_ack {
                    self.ack_invalid(now, self.cfg.rfc5961, true);
                }
                return false;
            }
            let behind = self.snd_una.0.wrapping_sub(ack.0) as usize;
            if self.cfg.rfc5961 && behind > self.max_snd_wnd {
                // RFC 5961 5.2: below SND.UNA - MAX.SND.WND: drop, ACK.
                self.counters.unacceptable_acks += 1;
                self.ack_invalid(now, true, true);
                return false;
            }
            if self.cfg.old_ack_sack {
                self.old_ack_sack(now, seg);
            }
            return true; // old duplicate: ignore the ACK field
        }
        let window = self.peer_window(seg);
        // An acceptable ACK answers the zero-window probes (Linux's tcp_ack
        // clears icsk_probes_out), even one still advertising a zero window.
        self.probes_out = 0;
        let flight_before = self.snd_max.distance_from(self.snd_una);
        // RFC 6937 DeliveredData = delta(SND.UNA) + delta(SACKd).
        let (una_before, sacked_before) = (self.snd_una, self.scoreboard.sacked_bytes());
        // RFC 5681 2: the definition of a duplicate acknowledgment. Replies to
        // zero-window probes look the same and are not counted.
        let is_dup = ack == self.snd_una
            && self.snd_wnd > 0
            && payload_len == 0
            && !seg.flags.syn()
            && !seg.flags.fin()
            && window == self.snd_wnd
            && flight_before > 0;

        let mut exited_recovery = false;
        if ack > self.snd_una {
            let acked = ack.distance_from(self.snd_una);
            let fin_now_acked = self.fin_queued && ack > self.fin_seq();
            // The SYN occupies ISS: the ACK that completes a passive open covers
            // it, not a byte of data written meanwhile in SYN-RECEIVED.
            let syn_now_acked = self.snd_una == self.iss && self.send_buf.head() == 0;
            let data_acked = acked - fin_now_acked as usize - syn_now_acked as usize;
            self.send_buf.ack(data_acked);
            self.snd_una = ack;
            self.user_timeout.on_ack(ack);
            if self.send_buf.is_empty() && ack == self.snd_max {
                // tcp_chrono_stop: nothing queued or in flight.
                self.chrono.stop(crate::chrono::ChronoKind::Busy, now, true);
            }
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            self.scoreboard.advance(ack);
            if self.high_rxt < ack {
                self.high_rxt = ack;
            }
            let rtt = self.take_rtt_sample(now, seg);
            // The congestion module's sample is the newest segment's send time,
            // on every ACK (tcp_input.c tcp_clean_rtx_queue ca_rtt_us).
            let ca_rtt = self.send_times.on_ack(self.snd_una, now);
            self.cc.on_ack_sample(&AckSample {
                now,
                rtt: ca_rtt.or(rtt),
                srtt: self.rtt.srtt(),
                snd_una: self.snd_una,
                snd_nxt: self.snd_max,
            });
            self.retries = 0;
            self.rtt.reset_backoff();
            if self.in_recovery {
                if ack >= self.recover {
                    // RFC 6675 5 step 3 / RFC 6582 3.2 step 6: recovery ends.
                    if !self.sack_recovery {
                        let flight = self.snd_max.distance_from(self.snd_una);
                        self.cc.on_recovery_exit(flight, self.snd_mss);
                    }
                    self.in_recovery = false;
                    self.sack_recovery = false;
                    exited_recovery = true;
                    // RFC 6937 3: on exit cwnd = ssthresh, which the controller holds.
                    self.prr = None;
                } else if self.sack_recovery {
                    // RFC 6675: a partial ACK only updates the scoreboard; pipe decides.
                } else {
                    // RFC 6582 3.2 step 5: partial ACK, retransmit the next hole.
                    self.cc.on_partial_ack(acked, self.snd_mss);
                    self.rexmit_one = Some(self.snd_una);
                }
            } else if self.window_in_use() {
                let grow = self.newly_delivered(acked, sacked_before);
                self.cc.on_ack(grow, self.snd_mss);
            } else {
                self.cc.on_ack_window_unused(acked, self.snd_mss);
            }
            self.dupacks = 0;
            // RFC 6298 5.2-5.3.
            if self.snd_una == self.snd_max {
                self.disarm(Timer::Retransmit);
            } else {
                self.arm(Timer::Retransmit, now + self.rtt.rto());
            }
            // RFC 8985 7.4: the probe's episode ends once it is acknowledged.
            if self.tlp_end.is_some_and(|e| ack >= e) {
                self.tlp_end = None;
            }
            self.tlp_rearm = true;
        }
        // RFC 6675 Update(): fold the ACK's SACK blocks into the scoreboard.
        let sack_new = self.sack_ok
            && !seg.options.sack_blocks.is_empty()
            && self.scoreboard.update(
                self.snd_una,
                self.snd_max,
                seg.options.sack_blocks.as_slice(),
            );
        if self.sack_ok && !self.nak_ok {
            // RFC 6675 5: an ACK carrying new SACK information counts as a duplicate.
            if ack == self.snd_una && (is_dup || (sack_new && flight_before > 0)) {
                self.counters.dup_acks_received += is_dup as u64;
                self.dupacks += 1;
            }
            if self.cfg.recovery.rack {
                let blocks = seg.options.sack_blocks.as_slice();
                // RFC 2883 4: a D-SACK is a first block below the cumulative
                // ACK or inside the second block.
                let dsack = blocks.first().is_some_and(|&(l, r)| {
                    r <= ack || blocks.get(1).is_some_and(|&(l2, r2)| l >= l2 && r <= r2)
                });
                self.rack.on_ack(now, self.snd_una, blocks);
                self.rack
                    .on_dsack_and_exit(dsack, exited_recovery, self.snd_una, self.snd_max);
                self.rack_detect(now);
            }
            let thresh = self.cfg.dupack_threshold;
            // With RACK only its marks start recovery (RFC 8985 6.2; Linux's
            // tcp_time_to_recover skips the DupThresh heuristic under RACK):
            // reordering seen earlier keeps a window open for late segments.
            if !self.in_recovery
                && !self.cfg.recovery.rack
                && self.snd_una > self.recover
                && self.snd_una < self.snd_max
                && (self.dupacks >= thresh
                    || self.scoreboard.is_lost(self.snd_una, thresh, self.snd_mss))
            {
                self.enter_sack_recovery();
            }
            if self.sack_recovery {
                if let Some(mut prr) = self.prr {
                    let delivered = (self.snd_una.distance_from(una_before) as i64
                        + self.scoreboard.sacked_bytes() as i64
                        - sacked_before as i64)
                        .max(0) as usize;
                    let pipe = self.sack_pipe();
                    if self.cfg.prr_safe_ack {
                        prr.on_ack_safe(delivered, pipe, self.snd_mss, self.snd_una > una_before);
                    } else {
                        prr.on_ack(delivered, pipe, self.snd_mss);
                    }
                    self.prr = Some(prr);
                }
            }
        } else if is_dup {
            self.counters.dup_acks_received += 1;
            self.dupacks += 1;
            if self.nak_ok {
                // RFC 1106 4.3: no duplicate-ACK fast retransmit while NAKs are in use.
                if self.dupacks == self.cfg.dupack_threshold {
                    self.counters.fast_retransmits_suppressed += 1;
                }
            } else if self.in_recovery {
                self.cc.on_recovery_dupack(self.snd_mss);
            } else if self.dupacks == self.cfg.dupack_threshold && ack > self.recover {
                // RFC 6582 3.2 step 2: enter fast retransmit / fast recovery.
                self.recover = self.snd_max;
                self.in_recovery = true;
                self.cc
                    .on_fast_retransmit(flight_before, self.snd_mss, self.dupacks);
                self.rexmit_one = Some(self.snd_una);
                self.rtt_probe = None;
                self.counters.fast_retransmits += 1;
            }
        }

        // RFC 9293 3.10.7.4: update the send window from the newest segment.
        if self.snd_wl1 < seg.seq || (self.snd_wl1 == seg.seq && self.snd_wl2 <= ack) {
            self.snd_wnd = window;
            self.snd_wl1 = seg.seq;
            self.snd_wl2 = ack;
            self.max_snd_wnd = self.max_snd_wnd.max(window);
            if window > 0 {
                self.persist_backoff = 0;
                if self.armed(Timer::Persist) && window >= self.unsent().min(self.snd_mss) {
                    self.disarm(Timer::Persist);
                }
            }
        }
        true
    }

    /// RFC 3168 6.1.2-6.1.3: the peer's CWR stops our ECE, a CE mark starts
    /// it, and an ECE reduces cwnd once per window of data.
    fn on_ecn_input(&mut self, seg: &TcpRepr, payload_len: usize) {
        let ce = std::mem::take(&mut self.ce_next);
        if seg.flags.contains(Flags::CWR) {
            self.ece_pending = false;
        }
        if ce && payload_len > 0 {
            self.counters.ce_received += 1;
            self.ece_pending = true;
        }
        if seg.flags.contains(Flags::ECE) && !seg.flags.syn() {
            self.counters.ece_received += 1;
            let fresh = self.ecn_recover.is_none_or(|r| self.snd_una > r);
            if fresh && !self.in_recovery {
                let flight = self.snd_max.distance_from(self.snd_una);
                self.cc.on_congestion_signal(flight, self.snd_mss);
                self.ecn_recover = Some(self.snd_max);
                self.cwr_pending = true;
                self.counters.ecn_reductions += 1;
            }
        }
    }

    /// The driver saw the IP ECN field CE (RFC 3168 5) on the segment it hands
    /// to `handle_segment` next.
    pub fn note_ce(&mut self) {
        self.ce_next = true;
    }

    /// Whether the segment `poll_transmit` last returned is to go out ECT(0)
    /// (RFC 3168 6.1.2: ECN-capable new data once ECN is negotiated).
    pub fn transmit_ect(&self) -> bool {
        self.last_tx_ect
    }

    /// RFC 3168 6.1.1: ECN was negotiated on this connection.
    pub fn ecn_enabled(&self) -> bool {
        self.ecn_ok
    }

    /// RFC 8985 6.2 steps 4-5 and 6.3: mark segments lost by time, resend a
    /// lost retransmission, start recovery on a loss, (re)arm the reordering timer.
    fn rack_detect(&mut self, now: Instant) {
        if !self.cfg.recovery.rack || !self.sack_ok || self.nak_ok || !self.state.synchronized() {
            return;
        }
        let thresh = self.cfg.dupack_threshold as usize;
        let dupthresh_sacked = self.scoreboard.sacked_bytes() >= thresh * self.snd_mss;
        let reo = self
            .rack
            .reo_wnd(self.in_recovery, dupthresh_sacked, self.rtt.srtt());
        let det = self.rack.detect_loss(now, reo);
        if let Some(s) = det.lost_rexmit {
            // The retransmission is lost too: NextSeg finds it again.
            self.high_rxt = self.high_rxt.min(s).max(self.snd_una);
        }
        self.scoreboard.set_rack_lost(self.rack.lost_end());
        match det.timeout {
            Some(d) => self.arm(Timer::Rack, now + d),
            None => self.disarm(Timer::Rack),
        }
        if det.newly_lost {
            self.counters.rack_losses += 1;
            if !self.in_recovery && self.snd_una > self.recover && self.snd_una < self.snd_max {
                self.enter_sack_recovery();
            }
        }
    }

    /// RFC 6675 5 step 4: enter loss recovery driven by the SACK scoreboard.
    fn enter_sack_recovery(&mut self) {
        let flight = self.snd_max.distance_from(self.snd_una);
        self.recover = self.snd_max;
        self.in_recovery = true;
        self.sack_recovery = true;
        // RFC 3168 6.1.2: at most one reduction per window, ECN's included.
        if self.ecn_recover.is_none_or(|r| self.snd_una > r) {
            self.cc.on_loss_repair(flight, self.snd_mss);
        }
        // RFC 6937 3: RecoverFS = SND.NXT - SND.UNA at the start of recovery.
        // Only when the controller reduced (not for RFC 1106 4.2 "noise").
        self.prr = (self.cfg.recovery.prr && self.cc.ssthresh() < flight)
            .then(|| Prr::new(flight, self.cc.ssthresh()));
        self.high_rxt = self.snd_una;
        self.rxt_first = true;
        self.rtt_probe = None;
        self.counters.sack_recoveries += 1;
        self.counters.fast_retransmits += 1;
    }

    /// An ACK below SND.UNA that carries SACK blocks during SACK recovery:
    /// its cumulative ACK is stale but its SACK information is news, so the
    /// scoreboard, RACK and PRR take it (Linux's tcp_ack: an old ACK with
    /// SACK still runs tcp_sacktag_write_queue, tcp_fastretrans_alert and
    /// tcp_xmit_recovery). SND.UNA and the window stay as they are.
    fn old_ack_sack(&mut self, now: Instant, seg: &TcpRepr) {
        if !self.sack_ok || !self.sack_recovery || seg.options.sack_blocks.is_empty() {
            return;
        }
        let blocks = seg.options.sack_blocks.as_slice();
        let sacked_before = self.scoreboard.sacked_bytes();
        if !self.scoreboard.update(self.snd_una, self.snd_max, blocks) {
            return;
        }
        if self.cfg.recovery.rack {
            self.rack.on_ack(now, self.snd_una, blocks);
            self.rack_detect(now);
        }
        if let Some(mut prr) = self.prr {
            let delivered = self.scoreboard.sacked_bytes().saturating_sub(sacked_before);
            let pipe = self.sack_pipe();
            prr.on_ack_safe(delivered, pipe, self.snd_mss, false);
            self.prr = Some(prr);
        }
    }

    /// RFC 1106 2.1: the peer NAKed [seq, seq + count x MSS): resend it at once.
    fn on_nak(&mut self, nak: Nak) {
        self.counters.naks_received += 1;
        let start = nak.seq.max(self.snd_una);
        let end = (nak.seq + nak.count as usize * self.snd_mss).min(self.snd_nxt);
        if start >= end || nak.seq >= self.snd_max {
            return; // names nothing outstanding: advisory, ignore (RFC 1106 2)
        }
        self.nak_tx.push(start, end);
        if self.rtt_probe.is_some_and(|(e, _)| e > start) {
            self.rtt_probe = None; // Karn: the timed segment is being resent.
        }
        // RFC 1106 4.2: congestion (once per window of data) or noise (no change).
        if start >= self.recover {
            let flight = self.snd_max.distance_from(self.snd_una);
            self.recover = self.snd_max;
            self.cc.on_loss_repair(flight, self.snd_mss);
        }
    }

    /// RTT sample for an ACK of new data: RFC 7323 4.1 RTTM from the echoed
    /// TSval when timestamps are on, else the one timed segment (Karn, RFC 6298 3).
    fn take_rtt_sample(&mut self, now: Instant, seg: &TcpRepr) -> Option<Duration> {
        if self.ts.enabled {
            if let Some(ts) = seg.options.timestamps {
                if let Some(r) = self.ts.rtt_sample(now, ts.tsecr) {
                    self.rtt.sample(r);
                    self.rtt_probe = None;
                    return Some(r);
                }
            }
        }
        let ack = seg.ack;
        if let Some((end, sent)) = self.rtt_probe {
            if ack >= end {
                let r = now - sent;
                self.rtt.sample(r);
                self.rtt_probe = None;
                return Some(r);
            }
        }
        None
    }

    /// Stores payload in the receive buffer and decides when to ACK it.
    fn process_text(&mut self, now: Instant, seg: &TcpRepr, payload: &[u8]) {
        let rcv_nxt = self.rcv_nxt();
        let nxt_off = self.recv_buf.nxt();
        // FreeBSD ACKs at once what it trimmed as a duplicate (TF_ACKNOW).
        let dup = self.dsack_old(seg, payload.len());
        let mut data = payload;
        let mut start = nxt_off as i64 + seg.seq.diff(rcv_nxt) as i64;
        if start < nxt_off as i64 - data.len() as i64 {
            start = nxt_off as i64 - data.len() as i64; // entirely old: duplicate
        }
        if start < 0 {
            data = &data[(-start) as usize..];
            start = 0;
        }
        // Trim to the window we advertised.
        let edge = nxt_off + self.rcv_adv.distance_from(rcv_nxt) as u64;
        let start = start as u64;
        let keep = edge.saturating_sub(start).min(data.len() as u64) as usize;
        let trimmed_tail = keep < data.len();
        let r = self.recv_buf.insert(start, &data[..keep]);
        self.dsack_after_insert(nxt_off, start, keep);
        if r.range_dropped {
            self.counters.ooo_ranges_dropped += 1;
        }
        if r.conflict_bytes > 0 {
            self.counters.overlap_conflicts += 1;
        }
        if trimmed_tail {
            self.rcv_fin_seq = None;
        }
        self.counters.duplicate_bytes_received += r.dup_bytes as u64;
        self.counters.bytes_delivered += r.advanced as u64;
        if r.out_of_order {
            self.counters.out_of_order_segments += 1;
            self.on_out_of_order(start);
        }
        if r.out_of_order || r.filled_gap || r.advanced == 0 || dup {
            // RFC 5681 4.2: out-of-order data and gap fills are acknowledged at once;
            // RFC 9293: so is a duplicate or out-of-window segment.
            self.counters.acks_out_of_order += 1;
            if self.ack_now == Some(AckReason::OutOfOrder) {
                self.extra_acks += 1;
            }
            self.ack_now = Some(AckReason::OutOfOrder);
            let ctx = self.ack_ctx(now, payload.len());
            self.ack_policy.on_out_of_order(&ctx);
            return;
        }
        self.segs_since_ack += 1;
        self.bytes_since_ack += r.advanced;
        self.ack_owed_since.get_or_insert(now);
        if payload.len() >= self.snd_mss {
            self.full_segs_since_ack += 1;
        }
        let ctx = self.ack_ctx(now, payload.len());
        let d = self.ack_policy.on_data(&ctx);
        self.apply_ack_decision(now, d);
    }

    /// What the ACK policy sees now (`seg_len` 0 for events other than data).
    fn ack_ctx(&self, now: Instant, seg_len: usize) -> AckCtx {
        AckCtx {
            now,
            mss: self.snd_mss,
            seg_len,
            segs_since_ack: self.segs_since_ack,
            full_segs_since_ack: self.full_segs_since_ack,
            bytes_since_ack: self.bytes_since_ack,
            right_edge_moved: self.right_edge_gain(),
            rcv_wnd: self.recv_buf.free().min(self.max_rcv_wnd()),
            srtt: self.rtt.srtt(),
            rto: self.rtt.rto(),
        }
    }

    /// How far an ACK sent now would move the right window edge past the last
    /// one advertised (the `window_advertise` rule of `window_to_advertise`).
    fn right_edge_gain(&self) -> usize {
        let cur = self.rcv_adv.distance_from(self.rcv_nxt());
        self.window_offer().saturating_sub(cur)
    }

    /// The most window this connection can ever offer: the buffer, within
    /// what the window field can say (65,535 << scale, or RFC 1106's 30 bits).
    fn advertisable(&self) -> usize {
        self.recv_buf.capacity().min(self.max_rcv_wnd()).max(1)
    }

    /// The window a segment sent now offers under `window_advertise`, never
    /// less than what is already offered (RFC 9293 3.8.6.2.2: do not shrink).
    fn window_offer(&self) -> usize {
        let cur = self.rcv_adv.distance_from(self.rcv_nxt());
        let free = self.recv_buf.free().min(self.max_rcv_wnd());
        let buf = self.recv_buf.capacity();
        let mss = self.snd_mss.max(1);
        let wnd = match self.cfg.window_advertise {
            WindowAdvertise::Rfc1122 => {
                // RFC 1122 4.2.3.3: move the edge by min(1/2 window, MSS); the
                // half is of the window that can be advertised, not the buffer.
                let step = (self.advertisable() / 2).min(mss);
                if free > cur && free - cur >= step {
                    free
                } else {
                    cur
                }
            }
            WindowAdvertise::Bsd => {
                // tcp_output.c: recwin < sb_hiwat / 4 && recwin < t_maxseg -> 0.
                if free < buf / 4 && free < mss {
                    0
                } else {
                    free
                }
            }
            WindowAdvertise::Linux => {
                // __tcp_select_window: full_space = min(window_clamp, allowed_space).
                let full = self.advertisable();
                let mss = mss.min(full);
                if free < full / 2 && (free < buf / 16 || free < mss) {
                    0
                } else if self.rcv_wscale == 0 && !self.bigwin {
                    // "Get the largest window that is a nice multiple of mss";
                    // keep the current offer while within one MSS of the free space.
                    let last = self.rcv_wnd_last;
                    if last + mss <= free || last > free {
                        free / mss * mss
                    } else if mss == full && free > last + full / 2 {
                        free
                    } else {
                        last
                    }
                } else {
                    free
                }
            }
        };
        wnd.max(cur)
    }

    /// Acts on an ACK policy's verdict: an ACK now, or the delayed-ACK timer
    /// (an earlier deadline stays); both are why-trace events.
    fn apply_ack_decision(&mut self, now: Instant, d: AckDecision) {
        match d {
            AckDecision::Now(reason) => {
                match reason {
                    AckReason::EveryNth { .. } => self.counters.acks_every_nth += 1,
                    AckReason::Interactivity { .. } => self.counters.acks_interactivity += 1,
                    AckReason::RightEdge { .. } => self.counters.acks_right_edge += 1,
                    AckReason::QuickAck { .. }
                    | AckReason::MoreThanMss { .. }
                    | AckReason::ReadPushed { .. } => self.counters.acks_quick += 1,
                    AckReason::WindowUpdate => self.counters.window_updates_sent += 1,
                    _ => {}
                }
                self.ack_now.get_or_insert(reason);
            }
            AckDecision::Delay { until, reason } => {
                let t = &mut self.timers[Timer::DelayedAck as usize];
                if t.is_none_or(|cur| until < cur) {
                    *t = Some(until);
                    self.delack_len = until - now;
                }
                let deadline = t.unwrap_or(until);
                if reason == DelayReason::WindowUpdate {
                    self.counters.window_updates_delayed += 1;
                }
                if self.cfg.trace {
                    self.trace.push(TraceEvent::AckDelayed {
                        at: now,
                        deadline,
                        segs: self.segs_since_ack,
                        reason,
                    });
                }
            }
        }
    }

    /// With `Config::dsack`: the part of a data segment below RCV.NXT is a
    /// duplicate, reported first in the SACK list (FreeBSD tcp_input.c
    /// tcp_do_segment, the todrop trim: tcp_update_sack_list).
    /// Returns whether it did.
    fn dsack_old(&mut self, seg: &TcpRepr, len: usize) -> bool {
        if !(self.cfg.dsack && self.sack_ok && len > 0 && self.state.synchronized()) {
            return false;
        }
        let nxt = self.recv_buf.nxt();
        let behind = self.rcv_nxt().diff(seg.seq);
        if behind <= 0 || behind as u64 > nxt {
            return false;
        }
        let start = nxt - behind as u64;
        let end = (start + len as u64).min(nxt);
        self.sack_bsd.update(nxt, start, end);
        true
    }

    /// With `Config::dsack`: after `len` bytes at stream offset `start` were
    /// stored (RCV.NXT was at `nxt_before`), the SACK list is brought up to
    /// date as FreeBSD's tcp_do_segment does after tcp_reass.
    fn dsack_after_insert(&mut self, nxt_before: u64, start: u64, len: usize) {
        if !(self.cfg.dsack && self.sack_ok) || len == 0 {
            return;
        }
        let nxt = self.recv_buf.nxt();
        let end = start + len as u64;
        // What was below RCV.NXT was trimmed (and reported) by `dsack_old`.
        let start = start.max(nxt_before);
        if end <= start {
            return;
        }
        let first = self.sack_bsd.blocks().first().copied();
        match first {
            // A duplicate head recorded by the trim, then RCV.NXT moved: keep it first.
            Some(b) if nxt > nxt_before && b.1 == start => self.sack_bsd.update(nxt, b.0, b.1),
            _ => self.sack_bsd.update_dsack(nxt, start, end),
        }
    }

    /// Data held beyond a gap arrived at stream offset `start`: note it for the
    /// SACK option (RFC 2018 4) and NAK the gap before it once (RFC 1106 2.1).
    fn on_out_of_order(&mut self, start: u64) {
        if self.sack_ok {
            self.sack_rx.note(start);
        }
        if !self.nak_ok {
            return;
        }
        let Some((gap_start, held_start)) = self.recv_buf.gap_below(start) else {
            return;
        };
        if let Some((off, count)) = self.nak_rx.on_gap(gap_start, held_start, self.snd_mss) {
            let seq = self.irs + 1 + off as usize;
            self.pending_naks.push_back(Nak { seq, count });
        }
    }

    /// Keeps the retransmission and persist timers consistent after any input.
    fn after_input(&mut self, now: Instant) {
        if !self.can_send_data_state() {
            return;
        }
        let flight = self.snd_max.distance_from(self.snd_una);
        if flight > 0 && !self.armed(Timer::Retransmit) && !self.armed(Timer::Persist) {
            self.arm(Timer::Retransmit, now + self.rtt.rto());
        }
        self.arm_persist_if_needed(now);
    }

    /// RFC 9293 3.8.6.1 / RFC 1122 4.2.3.4: with nothing in flight and data the
    /// window will not let out, arm the persist (or SWS override) timer.
    fn arm_persist_if_needed(&mut self, now: Instant) {
        if self.armed(Timer::Persist) || !self.can_send_data_state() {
            return;
        }
        let unsent = self.unsent();
        if unsent == 0 || self.snd_nxt != self.snd_una {
            return;
        }
        let room = self.snd_wnd;
        if room < unsent.min(self.snd_mss) {
            self.disarm(Timer::Retransmit);
            let at = now + self.persist_interval();
            self.arm(Timer::Persist, at);
        }
    }

    // ----- sending ---------------------------------------------------------

    /// Like [`poll_transmit`](Self::poll_transmit), but `buf` is resized to
    /// `headroom` bytes (their contents unspecified) and the payload is written
    /// after them, so a driver can encode the headers in front of it
    /// (`TcpRepr::emit_in_place`) without copying the payload a second time.
    pub fn poll_transmit_with_headroom(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        headroom: usize,
    ) -> Option<TcpRepr> {
        buf.resize(headroom, 0);
        self.tx_headroom = headroom;
        let r = self.poll_transmit(now, buf);
        self.tx_headroom = 0;
        r
    }

    /// The next segment to send, if any; its payload is written into `payload`
    /// (cleared first). Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Instant, payload: &mut Vec<u8>) -> Option<TcpRepr> {
        self.last_tx_ect = false;
        let r = self.next_transmit(now, payload);
        if std::mem::take(&mut self.tlp_rearm) && self.cfg.recovery.tlp {
            self.arm_tlp(now);
        }
        // The drain budget only feeds a debug assertion: no work in release.
        if !cfg!(debug_assertions) {
            return r;
        }
        if r.is_some() {
            if self.tx_streak == 0 {
                self.tx_budget = self.transmit_budget();
            }
            self.tx_streak += 1;
            debug_assert!(
                self.tx_streak <= self.tx_budget,
                "poll_transmit returned {} segments without running dry: {self:?}",
                self.tx_streak
            );
        } else {
            self.tx_streak = 0;
        }
        self.debug_check_invariants();
        r
    }

    /// Most segments one drain of `poll_transmit` can return: each data or
    /// retransmitted segment covers at least one new byte of the send buffer,
    /// of go-back-N, of SACK recovery (HighRxt only grows) or of the NAK queue;
    /// the rest are a few control segments and the ACKs owed.
    fn transmit_budget(&self) -> usize {
        let seq_space = self.send_buf.len() + 2;
        4 * seq_space
            + self.nak_tx.queued_bytes()
            + self.extra_acks as usize
            + self.pending_naks.len()
            + 8
    }

    /// Debug builds check the send sequence variables after every call that
    /// can move them: SND.UNA <= SND.NXT <= SND.MAX, and everything sent and
    /// unacknowledged is queued data plus at most a SYN and a FIN.
    fn debug_check_invariants(&self) {
        if !cfg!(debug_assertions) || matches!(self.state, State::Listen) {
            return;
        }
        let (una, nxt, max) = (self.snd_una, self.snd_nxt, self.snd_max);
        let flight = max.0.wrapping_sub(una.0) as usize;
        debug_assert!(
            nxt.0.wrapping_sub(una.0) as usize <= flight,
            "SND.NXT outside [SND.UNA, SND.MAX]: {self:?}"
        );
        debug_assert!(
            flight <= self.send_buf.len() + 2,
            "more in flight than queued: {flight} > {} + SYN + FIN: {self:?}",
            self.send_buf.len()
        );
        debug_assert!(
            self.scoreboard
                .ranges()
                .iter()
                .all(|&(l, r)| l.0.wrapping_sub(una.0) < r.0.wrapping_sub(una.0)
                    && r.0.wrapping_sub(una.0) as usize <= flight),
            "SACK scoreboard outside [SND.UNA, SND.MAX]: {self:?}"
        );
    }

    fn next_transmit(&mut self, now: Instant, payload: &mut Vec<u8>) -> Option<TcpRepr> {
        payload.truncate(self.tx_headroom);
        if std::mem::take(&mut self.read_emptied)
            && self.ack_now.is_none()
            && self.ack_owed_since.is_some()
            && self.state.synchronized()
        {
            let ctx = self.ack_ctx(now, 0);
            if let Some(reason) = self.ack_policy.on_read_emptied(&ctx) {
                self.apply_ack_decision(now, AckDecision::Now(reason));
            }
        }
        if std::mem::take(&mut self.window_opened)
            && self.ack_now.is_none()
            && self.state.synchronized()
        {
            let ctx = self.ack_ctx(now, 0);
            let d = self.ack_policy.on_window_open(&ctx);
            self.apply_ack_decision(now, d);
        }
        if let Some(mut rst) = self.pending_rst.take().map(|r| *r) {
            // RFC 7323 3.2: once negotiated, TSopt SHOULD be sent in a RST too.
            if self.ts.enabled
                && rst.options.timestamps.is_none()
                && rst.src_port == self.local_port
                && rst.dst_port == self.remote_port
            {
                rst.options.timestamps = Some(self.ts.option(now));
            }
            self.counters.rsts_sent += 1;
            self.counters.segments_sent += 1;
            return Some(rst);
        }
        match self.state {
            State::Closed | State::Listen | State::TimeWait => {
                return self.maybe_pure_ack(now);
            }
            State::SynSent | State::SynReceived => {
                if self.need_syn {
                    return Some(self.emit_syn_with(now, payload));
                }
                // RFC 7413 4.3.2: a Fast Open server may send data before
                // the handshake completes.
                if !(self.state == State::SynReceived && self.tfo.child) {
                    return self.maybe_pure_ack(now);
                }
            }
            _ => {}
        }
        if std::mem::take(&mut self.old_seq_probe) {
            let seg = self.header(now, self.snd_una - 1, Flags::ACK);
            self.counters.segments_sent += 1;
            return Some(seg);
        }
        if let Some(r) = self.emit_nak_rexmit(now, payload) {
            return Some(r);
        }
        if let Some(r) = self.emit_sack_rexmit(now, payload) {
            return Some(r);
        }
        if let Some(seq) = self.rexmit_one.take() {
            if seq >= self.snd_una && seq < self.snd_max {
                if let Some(r) = self.emit_retransmit_one(now, seq, payload) {
                    return Some(r);
                }
            }
        }
        self.maybe_idle_restart(now);
        let sent = self.emit_data(now, payload);
        self.note_cwnd_usage(sent.is_some());
        if let Some(r) = sent {
            return Some(r);
        }
        self.burst = None;
        self.arm_persist_if_needed(now);
        self.maybe_pure_ack(now)
    }

    /// RFC 5681 4.1 / RFC 2861: new data waits, nothing is in flight and the
    /// last data went out more than an RTO ago: cwnd restarts smaller (Linux
    /// checks when the write is queued, tcp_slow_start_after_idle_check).
    fn maybe_idle_restart(&mut self, now: Instant) {
        if !std::mem::take(&mut self.idle_check)
            || !self.cfg.slow_start_after_idle
            || self.snd_una != self.snd_max
            || self.in_recovery
        {
            return;
        }
        let Some(last) = self.last_data_sent else {
            return;
        };
        let idle = now.saturating_duration_since(last);
        let rto = self.rtt.rto();
        if idle <= rto || self.send_buf.end() <= self.off_of(self.snd_nxt) {
            return;
        }
        let restart = self.cfg.initial_window as usize * self.snd_mss;
        self.cc.on_idle_restart(restart, idle, rto);
    }

    /// Linux tcp_write_xmit's end: after a pass that sent data, or found data
    /// waiting with the flight at cwnd, record how much of cwnd is in use
    /// (tcp_cwnd_validate; is_cwnd_limited when packets in flight >= cwnd).
    fn note_cwnd_usage(&mut self, sent: bool) {
        if self.cfg.cwnd_validation == CwndValidation::Off {
            return;
        }
        let mss = self.snd_mss.max(1);
        let in_flight = if self.sack_recovery {
            self.sack_pipe()
        } else {
            self.snd_nxt.distance_from(self.snd_una)
        };
        let waiting = self.send_buf.end() > self.off_of(self.snd_nxt);
        let limited = in_flight.div_ceil(mss) >= self.send_cwnd() / mss;
        if sent || (waiting && limited) {
            let packets_out = self.snd_max.distance_from(self.snd_una).div_ceil(mss);
            self.cwnd_usage
                .on_transmit(self.snd_una, self.snd_max, packets_out, limited);
        }
    }

    /// What an ACK of `acked` bytes grows cwnd by. Linux counts segments newly
    /// delivered (tcp_ack's delivered): data SACKed earlier, or standing for a
    /// duplicate ACK without SACK (tcp_remove_reno_sacks), was counted then.
    /// Other stacks count every byte SND.UNA moves (RFC 5681 3.1).
    fn newly_delivered(&self, acked: usize, sacked_before: usize) -> usize {
        if self.cfg.cwnd_validation == CwndValidation::Off {
            return acked;
        }
        let mss = self.snd_mss.max(1);
        if self.sack_ok {
            let was_sacked = sacked_before.saturating_sub(self.scoreboard.sacked_bytes());
            acked.saturating_sub(was_sacked).max(acked.min(mss))
        } else {
            let pkts = acked.div_ceil(mss);
            let dup = self.dupacks as usize;
            pkts.saturating_sub(dup).max(1).min(pkts) * mss
        }
    }

    /// Whether an ACK of new data may grow cwnd: always, unless cwnd validation
    /// is on and the sender did not use its window (tcp_is_cwnd_limited).
    fn window_in_use(&self) -> bool {
        match self.cfg.cwnd_validation {
            CwndValidation::Off => true,
            CwndValidation::Linux => {
                let mss = self.snd_mss.max(1);
                let cwnd = self.cc.cwnd();
                self.cwnd_usage
                    .is_cwnd_limited(cwnd / mss, cwnd < self.cc.ssthresh())
            }
        }
    }

    fn maybe_pure_ack(&mut self, now: Instant) -> Option<TcpRepr> {
        self.ack_now?;
        if !(self.state.synchronized() || self.state == State::SynReceived)
            || self.state == State::SynReceived && self.need_syn
        {
            self.ack_now = None;
            return None;
        }
        let acked_new = self.segs_since_ack > 0;
        let challenge = std::mem::take(&mut self.challenge_owed);
        let seg = if self.cfg.ack_repeats_fin && self.fin_sent() && !self.fin_acked() && !challenge
        {
            // FreeBSD tcp_output.c: the state's flags (tcp_outflags) keep FIN
            // until it is acknowledged, and a FIN sent again takes its old
            // sequence number (snd_nxt--); tcp_input.c tcp_send_challenge_ack
            // answers with tcp_respond, a bare ACK.
            self.header(now, self.fin_seq(), Flags::ACK | Flags::FIN)
        } else {
            self.header(now, self.snd_nxt, Flags::ACK)
        };
        self.ack_policy.on_sent(now, false, acked_new);
        self.counters.pure_acks_sent += 1;
        self.counters.segments_sent += 1;
        Some(seg)
    }

    /// The SYN or SYN-ACK, and on an active open with Fast Open the cookie
    /// option and, when a cookie is known, data in the first SYN (RFC 7413
    /// 4.2.1); a retransmitted SYN carries no data (4.2.2).
    fn emit_syn_with(&mut self, now: Instant, payload: &mut Vec<u8>) -> TcpRepr {
        let mut r = self.emit_syn(now);
        if self.delivered_ends.is_empty() {
            // The SYN or SYN-ACK counts once delivered (Linux counts a
            // passive open's in tcp_rcv_state_process, SYN-RECV).
            self.delivered_ends.push_back(self.iss + 1);
        }
        if self.state == State::SynReceived {
            r.options.fast_open = self.tfo.reply;
            return r;
        }
        let fo = self.cfg.fast_open.clone();
        // A retransmitted SYN goes plain, without data or option, as Linux's
        // does: the path may drop what it does not know (RFC 7413 4.2.2).
        if !fo.client || self.retries > 0 {
            return r;
        }
        let cookie = fo.cookie.filter(|c| !c.is_request());
        if cookie.is_some() || !fo.client_no_cookie {
            r.options.fast_open = Some(crate::fastopen::FastOpenOption {
                experimental: fo.experimental,
                cookie: cookie.unwrap_or_default(),
            });
        }
        let may_carry = (cookie.is_some() || fo.client_no_cookie) && self.retries == 0;
        if may_carry && !self.send_buf.is_empty() {
            // Linux's room for SYN data: the MSS less the most options take.
            let mss = self.cfg.mss.min(fo.peer_mss.unwrap_or(u16::MAX));
            let room = (mss as usize).saturating_sub(crate::wire::MAX_OPTIONS_LEN);
            let len = self.send_buf.len().min(room).min(self.snd_wnd.max(room));
            self.send_buf.copy_out(self.send_buf.head(), len, payload);
            self.snd_nxt = self.iss + 1 + len;
            if self.snd_max < self.snd_nxt {
                self.snd_max = self.snd_nxt;
            }
            self.tfo.syn_data = true;
            self.tfo.syn_data_len = len;
            // Linux queues the SYN's data as a segment of its own.
            self.delivered_ends.push_back(self.iss + 1 + len);
        }
        r
    }

    fn emit_syn(&mut self, now: Instant) -> TcpRepr {
        self.need_syn = false;
        let mut flags = Flags::SYN;
        if self.state == State::SynReceived {
            flags = flags | Flags::ACK;
            if self.ecn_ok {
                flags = flags | Flags::ECE; // RFC 3168 6.1.1 ECN-setup SYN-ACK
            }
        } else if self.cfg.options.ecn {
            flags = flags | Flags::ECE | Flags::CWR; // RFC 3168 6.1.1 ECN-setup SYN
        }
        let mut r = TcpRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: self.iss,
            ack: if flags.ack() {
                self.rcv_nxt()
            } else {
                SeqNumber(0)
            },
            flags,
            window: self.syn_window().min(u16::MAX as usize) as u16,
            urgent: 0,
            options: TcpOptions::default(),
        };
        r.options.mss = Some(self.cfg.mss);
        // Active: offer what is configured. Passive: answer what was negotiated.
        let want = self.cfg.options;
        let active = self.state == State::SynSent;
        let offer_ws = want.window_scale
            && !self.bigwin
            && (active || self.snd_wscale > 0 || self.rcv_wscale > 0);
        if offer_ws {
            r.options.window_scale = Some(self.offered_wscale());
        }
        if want.timestamps && (active || self.ts.enabled) {
            r.options.timestamps = Some(self.ts.option(now));
        }
        r.options.sack_permitted = want.sack && (active || self.sack_ok);
        r.options.nak_permitted = want.nak && (active || self.nak_ok);
        if want.big_window && (active || self.bigwin) {
            // RFC 1106 3 option B: our 30-bit window, never more than we can buffer (5).
            let w = self.rcv_buf_size.min(RFC1106_BIGWIN_MAX as usize);
            r.options.big_window_offer = Some(w as u32);
        }
        if self.retries == 0 {
            if let (Some(limit), true) = (self.rcv_buf_limit, self.cfg.trace) {
                self.trace.push(TraceEvent::BufferCapped {
                    at: now,
                    requested: self.cfg.rcv_buf,
                    granted: self.rcv_buf_size,
                    limit,
                });
            }
        }
        self.snd_nxt = self.iss + 1;
        if self.snd_max < self.snd_nxt {
            self.snd_max = self.snd_nxt;
        }
        if self.retries == 0 {
            self.rtt_probe = Some((self.iss + 1, now));
        }
        if !self.armed(Timer::Retransmit) {
            self.arm(Timer::Retransmit, now + self.rtt.rto());
        }
        if flags.ack() {
            self.rcv_adv = self.rcv_nxt() + self.syn_window();
            self.rcv_wnd_last = self.syn_window();
            self.ts.note_ack_sent(r.ack);
            self.clear_ack_pending();
        }
        self.counters.segments_sent += 1;
        r
    }

    /// A header for a synchronized-state segment, carrying ACK and our window.
    fn header(&mut self, now: Instant, seq: SeqNumber, flags: Flags) -> TcpRepr {
        let (window, upper) = self.window_to_advertise();
        let options = self.segment_options(now, upper);
        let since = self.ack_owed_since.take();
        if self.cfg.trace && (since.is_some() || self.ack_now.is_some()) {
            self.trace.push(TraceEvent::AckSent {
                at: now,
                reason: self.ack_now.unwrap_or(AckReason::Piggyback),
                waited: since.map_or(Duration::ZERO, |t| now - t),
            });
        }
        self.clear_ack_pending();
        // RFC 3168 6.1.3: ECE on every segment until the peer's CWR.
        let ece = if self.ecn_ok && self.ece_pending {
            Flags::ECE
        } else {
            Flags::NONE
        };
        TcpRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq,
            ack: self.rcv_nxt(),
            flags: flags | Flags::ACK | ece,
            window,
            urgent: 0,
            options,
        }
    }

    /// Options on a synchronized-state segment: RFC 1106 3.1 option C, RFC 7323
    /// timestamps, a pending RFC 1106 2.1 NAK, and RFC 2018 SACK blocks in the
    /// space left (at most 40 bytes, RFC 9293 3.1).
    fn segment_options(&mut self, now: Instant, upper: Option<u16>) -> TcpOptions {
        let mut o = TcpOptions {
            big_window_upper: upper,
            ..TcpOptions::default()
        };
        if self.ts.enabled {
            o.timestamps = Some(self.ts.option(now));
            self.ts.note_ack_sent(self.rcv_nxt());
        }
        if let Some(nak) = self.pending_naks.pop_front() {
            o.nak = Some(nak);
            self.counters.naks_sent += 1;
        }
        if self.sack_ok && self.cfg.dsack {
            let room = MAX_OPTIONS_LEN.saturating_sub(o.encoded_len());
            let max = room.saturating_sub(4) / 8;
            let base = self.irs + 1;
            for &(s, e) in self.sack_bsd.blocks().iter().take(max) {
                o.sack_blocks.push(base + s as usize, base + e as usize);
            }
            self.sack_bsd.clean_dsack(self.recv_buf.nxt());
        } else if self.sack_ok && self.recv_buf.has_ooo() {
            let room = MAX_OPTIONS_LEN.saturating_sub(o.encoded_len());
            let max = room.saturating_sub(4) / 8;
            let base = self.irs + 1;
            let blocks = &mut o.sack_blocks;
            let rb = &self.recv_buf;
            self.sack_rx.blocks(
                |off| rb.ooo_containing(off),
                rb.ooo_ranges(),
                max,
                |s, e| {
                    blocks.push(base + s as usize, base + e as usize);
                },
            );
        }
        o
    }

    fn clear_ack_pending(&mut self) {
        if self.extra_acks > 0 {
            self.extra_acks -= 1;
            self.ack_now = Some(AckReason::OutOfOrder);
            return;
        }
        self.ack_now = None;
        self.segs_since_ack = 0;
        self.full_segs_since_ack = 0;
        self.bytes_since_ack = 0;
        self.disarm(Timer::DelayedAck);
    }

    /// Receiver SWS avoidance by `window_advertise` (RFC 1122 4.2.3.3, BSD or
    /// Linux); never shrink the window (RFC 9293 3.8.6.2.2).
    /// Returns the header's window field and, with big windows, option C's
    /// upper bits (RFC 1106 3.1).
    fn window_to_advertise(&mut self) -> (u16, Option<u16>) {
        let rcv_nxt = self.rcv_nxt();
        let wnd = self.window_offer();
        self.rcv_wnd_last = wnd;
        if self.bigwin {
            let wnd = wnd.min(bigwin::MAX_WINDOW);
            let edge = rcv_nxt + wnd;
            if edge > self.rcv_adv {
                self.rcv_adv = edge;
            }
            let (field, upper) = bigwin::split(wnd);
            return (field, Some(upper));
        }
        let field = (wnd >> self.rcv_wscale).min(u16::MAX as usize);
        let wnd = field << self.rcv_wscale;
        let edge = rcv_nxt + wnd;
        if edge > self.rcv_adv {
            self.rcv_adv = edge;
        }
        (field as u16, None)
    }

    fn emit_retransmit_one(
        &mut self,
        now: Instant,
        seq: SeqNumber,
        payload: &mut Vec<u8>,
    ) -> Option<TcpRepr> {
        self.emit_range(now, seq, self.snd_mss, payload)
    }

    /// RFC 1106 2.1: resend NAKed data at once, ahead of new data ("and then
    /// continue sending data where it left off").
    fn emit_nak_rexmit(&mut self, now: Instant, payload: &mut Vec<u8>) -> Option<TcpRepr> {
        while let Some((seq, len)) = self.nak_tx.next(self.snd_una, self.snd_mss) {
            if seq >= self.snd_nxt {
                continue;
            }
            let len = len.min(self.snd_nxt.distance_from(seq));
            if let Some(r) = self.emit_range(now, seq, len, payload) {
                self.counters.nak_retransmits += 1;
                return Some(r);
            }
        }
        None
    }

    /// RFC 6675 5 step 4 and NextSeg rule 1: during SACK recovery, resend the
    /// first lost, unSACKed data while cwnd - pipe allows a segment.
    fn emit_sack_rexmit(&mut self, now: Instant, payload: &mut Vec<u8>) -> Option<TcpRepr> {
        if !self.sack_recovery {
            return None;
        }
        let (mss, th) = (self.snd_mss, self.cfg.dupack_threshold);
        let (una, max) = (self.snd_una, self.snd_max);
        let hole = if self.rxt_first && self.scoreboard.sacked_end(una).is_none() {
            // RFC 6675 5 step 4.3: the first segment goes regardless of pipe.
            Some((
                una,
                self.scoreboard.next_sacked(una).unwrap_or(max).min(max),
            ))
        } else {
            let pipe = self.scoreboard.pipe(una, max, self.high_rxt, th, mss);
            if pipe + mss > self.send_cwnd() {
                return None;
            }
            self.scoreboard
                .next_lost(una, self.high_rxt.max(una), th, mss)
        };
        self.rxt_first = false;
        let (start, end) = hole?;
        let end = end.min(max);
        if start >= end {
            return None;
        }
        let r = self.emit_range(now, start, end.distance_from(start).min(mss), payload)?;
        // HighRxt only moves forward, and within SND.MAX: each call makes progress.
        let sent = payload.len() - self.tx_headroom + r.flags.fin() as usize;
        if let Some(p) = &mut self.prr {
            p.on_sent(sent);
        }
        self.high_rxt = (start + sent.max(1)).min(max);
        self.counters.sack_retransmits += 1;
        Some(r)
    }

    /// Resends up to `max_len` bytes (and the FIN if it follows) from `seq`,
    /// never past SND.MAX: a retransmission repeats what was sent (RFC 9293
    /// 3.8.1) and must not carry new data, which SND.MAX would not account for.
    fn emit_range(
        &mut self,
        now: Instant,
        seq: SeqNumber,
        max_len: usize,
        payload: &mut Vec<u8>,
    ) -> Option<TcpRepr> {
        let off = self.off_of(seq);
        let queued = self.send_buf.end() - off;
        // Sequence space sent from `seq`: data, plus one if the FIN went too.
        let sent = self.snd_max.distance_from(seq) as u64;
        let mut len = queued.min(sent).min(max_len as u64) as usize;
        // A resend never merges across a MSG_EOR record end (tcp_skb_can_collapse).
        if let Some(e) = self.send_buf.next_record_end_after(off) {
            len = len.min((e - off) as usize);
        }
        let fin = self.fin_queued && off + len as u64 == self.send_buf.end() && sent > queued;
        if len == 0 && !fin {
            return None;
        }
        let r = self.build_data_segment(now, off, len, fin, payload);
        // RFC 1106 4.2: a repair in flight pushes the timer out to a full RTO,
        // so it does not "go off milliseconds before a naked packet's ack".
        let at = now + self.user_timeout.clamp(now, self.rtt.rto());
        if self.timers[Timer::Retransmit as usize].is_none_or(|t| t < at) {
            self.arm(Timer::Retransmit, at);
        }
        Some(r)
    }

    /// Notes that data which could go is held by `rule` (starts a why-trace episode).
    fn note_hold(&mut self, now: Instant, rule: HoldRule, bytes: usize, unacked: usize) {
        match self.hold {
            Some((r, _, _)) if r == rule => return,
            Some((_, since, _)) => self.hold = Some((rule, since, bytes)),
            None => {
                self.hold = Some((rule, now, bytes));
                if matches!(rule, HoldRule::Policy(_)) {
                    self.counters.policy_holds += 1;
                }
            }
        }
        if self.cfg.trace {
            self.trace.push(TraceEvent::Hold {
                at: now,
                rule,
                bytes,
                unacked,
                peer_window: self.snd_wnd,
            });
        }
    }

    /// Sends new (or go-back-N) data as window, cwnd and the send policy allow.
    fn emit_data(&mut self, now: Instant, payload: &mut Vec<u8>) -> Option<TcpRepr> {
        // RFC 6675 5.1: going back after a timeout, skip what the peer SACKed.
        let mut sack_limit = None;
        if self.snd_nxt < self.snd_max && !self.scoreboard.is_empty() {
            while let Some(end) = self.scoreboard.sacked_end(self.snd_nxt) {
                self.snd_nxt = end.min(self.snd_max);
            }
            sack_limit = self
                .scoreboard
                .next_sacked(self.snd_nxt)
                .filter(|&s| s < self.snd_max)
                .map(|s| s.distance_from(self.snd_nxt));
            if self.cfg.sack_whole_segments {
                // Less than a segment before the SACKed bytes: the whole
                // segment is resent with them (see `Config::sack_whole_segments`).
                sack_limit = sack_limit.filter(|&d| d >= self.snd_mss);
            }
        }
        let nxt_off = self.off_of(self.snd_nxt);
        let end = self.send_buf.end();
        let unsent = (end - nxt_off) as usize;
        let fin_pending = self.fin_queued && !self.fin_sent();
        if unsent == 0 && !fin_pending {
            self.note_rwnd_chrono(now, 0, 0);
            return None;
        }
        let flight = self.snd_nxt.distance_from(self.snd_una);
        let wnd_room = self.snd_wnd.saturating_sub(flight);
        self.note_rwnd_chrono(now, unsent, wnd_room);
        // RFC 6675 5: in SACK recovery, cwnd bounds pipe rather than FlightSize.
        let cc_flight = if self.sack_recovery {
            self.sack_pipe()
        } else {
            flight
        };
        // RFC 3042 (RFC 5681 3.2): on the first and second duplicate ACK a new
        // segment may go, so the flight may exceed cwnd by up to 2 SMSS. Not
        // with RFC 1106 NAKs, which replace duplicate-ACK loss detection.
        let limited_transmit = if !self.in_recovery
            && !self.nak_ok
            && self.snd_nxt == self.snd_max
            && self.dupacks > 0
            && self.dupacks < self.cfg.dupack_threshold
        {
            self.dupacks.min(2) as usize * self.snd_mss
        } else {
            0
        };
        let cwnd_room = (self.send_cwnd() + limited_transmit).saturating_sub(cc_flight);
        let allowed = wnd_room.min(cwnd_room);
        let limit_rule = if wnd_room <= cwnd_room {
            HoldRule::PeerWindow
        } else {
            HoldRule::Cwnd
        };
        let mss = self.snd_mss;
        let burst = *self.burst.get_or_insert(unsent.min(allowed));
        let mut len = unsent
            .min(allowed)
            .min(mss)
            .min(sack_limit.unwrap_or(usize::MAX));
        // A record closed with MSG_EOR ends the segment; one that is not the
        // queue's tail goes whatever the policy, as Linux's tcp_write_xmit
        // applies Nagle's test to the last skb only (tcp_nagle_test).
        let record_cut = self
            .send_buf
            .next_record_end_after(nxt_off)
            .map(|e| (e - nxt_off) as usize)
            .filter(|&r| r < len);
        if let Some(r) = record_cut {
            len = r;
        }
        let retransmission = self.snd_nxt < self.snd_max;
        let forced = self.force_one;

        if forced && len > 0 && len < unsent.min(mss) && !retransmission {
            // A loss probe is one full segment whatever cwnd leaves (Linux's
            // tcp_send_loss_probe: tcp_write_xmit with push_one = 2 takes a
            // cwnd quota of one segment), not the bytes a byte-counted cwnd has left.
            len = unsent.min(mss).min(wnd_room);
        }
        if unsent > 0 && len == 0 {
            if !forced {
                self.note_hold(now, limit_rule, unsent.min(mss), flight);
                return None;
            }
            // Persist timer: one byte into a zero window, or what the window allows.
            len = unsent.min(mss).min(wnd_room.max(1));
        } else if unsent > 0 && len < mss && !retransmission && !forced && record_cut.is_none() {
            if len < unsent {
                // RFC 1122 4.2.3.4 sender SWS avoidance: a window-limited runt goes
                // only if it is at least half the largest window the peer offered.
                if len < self.max_snd_wnd / 2 {
                    let rule = if limit_rule == HoldRule::Cwnd {
                        HoldRule::Cwnd
                    } else {
                        HoldRule::SenderSws
                    };
                    self.note_hold(now, rule, len, flight);
                    return None;
                }
            } else if !fin_pending
                && self.send_buf.write_cut_short()
                && (flight == 0 || len < self.max_snd_wnd / 2)
            {
                // RFC 1122 4.2.3.4 sender SWS avoidance, under every send policy: the
                // tail of a write cut short by a full buffer is not pushed (BSD's
                // TF_MORETOCOME). With data in flight, ACKs make room for the rest of
                // the write, so wait for it; with none, nothing would, so send it
                // whatever the policy (else e.g. Doupnik Rule 2 deadlocks).
                if flight > 0 {
                    self.note_hold(now, HoldRule::SenderSws, len, flight);
                    return None;
                }
            } else if !fin_pending {
                // The tail of the data: the send policy decides (FIN is never held).
                let seg_end = nxt_off + len as u64;
                let ctx = SendCtx {
                    now,
                    mss,
                    available: unsent,
                    allowed,
                    burst,
                    seg_len: len,
                    in_flight: flight,
                    ends_app_data: self
                        .send_buf
                        .next_boundary_after(nxt_off)
                        .is_some_and(|b| b <= seg_end),
                    flushed: self.send_buf.flushed() > nxt_off,
                    unacked_partial: self.last_partial_end.is_some_and(|e| e > self.snd_una),
                    held_since: match self.hold {
                        Some((HoldRule::Policy(_), since, _)) => {
                            Some(self.policy_since.map_or(since, |p| p.max(since)))
                        }
                        _ => None,
                    },
                };
                // Flushed data is pushed: no policy holds it (see `flush`).
                let decision = if ctx.flushed {
                    SendDecision::Send
                } else {
                    self.send_policy.decide(&ctx)
                };
                if let SendDecision::Hold { reason, until } = decision {
                    self.note_hold(now, HoldRule::Policy(reason), len, flight);
                    if let Some(at) = until {
                        self.arm(Timer::Policy, at);
                    }
                    return None;
                }
            }
        }
        self.force_one = false;
        let fin = fin_pending && nxt_off + len as u64 == end;
        if len == 0 && !fin {
            return None;
        }
        let mut timer_released = false;
        if let Some((rule, since, bytes)) = self.hold.take() {
            timer_released = self.policy_timer_fired && matches!(rule, HoldRule::Policy(_));
            self.disarm(Timer::Policy);
            if self.cfg.trace {
                self.trace.push(TraceEvent::Release {
                    at: now,
                    rule,
                    bytes,
                    held: now - since,
                });
            }
        }
        let probe = forced && self.snd_wnd == 0;
        // A bare FIN may follow data a shrunk window no longer covers (BSD
        // sends it too; the peer ACKs and it is repeated): only data counts.
        debug_assert!(
            forced || retransmission || len == 0 || flight + len <= self.snd_wnd,
            "new data beyond the peer's window: {flight} + {len} > {}",
            self.snd_wnd
        );
        let mut r = self.build_data_segment(now, nxt_off, len, fin, payload);
        if self.cfg.psh_at_window_limit
            && len > 0
            && !retransmission
            && !self.in_recovery
            && limited_transmit == 0
            && !forced
            && ((len < unsent
                && allowed.saturating_sub(len) < mss.min(unsent - len)
                && self.send_buf.next_boundary_after(nxt_off).is_some())
                || timer_released)
        {
            // The window stops the write before its next segment: Linux
            // pushes what it let out.
            r.flags = r.flags | Flags::PSH;
        }
        self.policy_timer_fired = false;
        if self.sack_recovery {
            if let Some(p) = &mut self.prr {
                p.on_sent(len + fin as usize);
            }
        }
        let new_nxt = self.seq_of(nxt_off + len as u64) + fin as usize;
        let new_data = new_nxt > self.snd_max;
        if new_data && self.rtt_probe.is_none() && !retransmission {
            self.rtt_probe = Some((new_nxt, now));
        }
        if len > 0 && len < mss && !retransmission {
            self.last_partial_end = Some(new_nxt);
        }
        self.snd_nxt = new_nxt;
        if new_nxt > self.snd_max {
            self.snd_max = new_nxt;
        }
        if !probe && !self.armed(Timer::Retransmit) {
            // tcp_clamp_rto_to_user_timeout: never past the user timeout.
            let rto = self.user_timeout.clamp(now, self.rtt.rto());
            self.arm(Timer::Retransmit, now + rto);
        }
        Some(r)
    }

    /// Linux's tcp_write_xmit chronographs: data to send makes the
    /// connection busy; a next segment (up to an MSS) the peer's window does
    /// not fit starts the window-limited one (tcp_snd_wnd_test), else it stops.
    fn note_rwnd_chrono(&mut self, now: Instant, unsent: usize, wnd_room: usize) {
        use crate::chrono::ChronoKind;
        let flight = self.snd_max.distance_from(self.snd_una);
        if unsent > 0 || flight > 0 {
            self.chrono.start(ChronoKind::Busy, now);
        }
        let empty = unsent == 0 && flight == 0 && self.send_buf.is_empty();
        if unsent > 0 && unsent.min(self.snd_mss) > wnd_room {
            self.chrono.start(ChronoKind::RwndLimited, now);
        } else {
            self.chrono.stop(ChronoKind::RwndLimited, now, empty);
        }
    }

    /// Builds one segment from stream offset `off`; counts it.
    fn build_data_segment(
        &mut self,
        now: Instant,
        off: u64,
        len: usize,
        fin: bool,
        payload: &mut Vec<u8>,
    ) -> TcpRepr {
        let seq = self.seq_of(off);
        if len > 0 {
            self.send_buf.copy_out(off, len, payload);
        }
        let end = off + len as u64;
        let mut flags = Flags::ACK;
        // PSH marks the end of application data (Doupnik 2.0; RFC 9293 3.9.1).
        if len > 0
            && self
                .send_buf
                .next_boundary_after(off)
                .is_some_and(|b| b <= end)
        {
            flags = flags | Flags::PSH;
        }
        if fin {
            flags = flags | Flags::FIN;
        }
        let acked_new = self.segs_since_ack > 0;
        let new_data = len > 0 && seq >= self.snd_max;
        if (len > 0 || fin) && seq >= self.snd_max {
            self.user_timeout
                .on_new_segment(seq + len + fin as usize, now);
        }
        // A new FIN arms the probe as new data does (tcp_event_new_data_sent).
        self.tlp_rearm |= new_data || (fin && seq + len >= self.snd_max);
        if fin && seq >= self.snd_max {
            self.fin_alone = len == 0;
        }
        self.tlp_rearm |= new_data;
        if len > 0 {
            if self.send_times.is_empty() {
                // tcp_event_data_sent: nothing in flight, CA_EVENT_TX_START.
                if let Some(last) = self.last_data_sent {
                    self.cc
                        .on_tx_after_idle(now, now.saturating_duration_since(last));
                }
            }
            self.last_data_sent = Some(now);
            self.send_times.on_sent(seq, seq + len, now);
        }
        if self.cfg.recovery.rack && self.sack_ok && (len > 0 || fin) {
            // RFC 8985 6.1: Segment.xmit_ts for RACK.
            self.rack.on_sent(seq, seq + len + fin as usize, now);
        }
        if self.ecn_ok && self.cwr_pending && new_data {
            // RFC 3168 6.1.2: CWR on the first new data after the reduction.
            flags = flags | Flags::CWR;
            self.cwr_pending = false;
        }
        // RFC 3168 6.1.5: new data goes ECT(0); retransmissions and control segments do not.
        self.last_tx_ect = self.ecn_ok && new_data;
        let r = self.header(now, seq, flags);
        self.ack_policy.on_sent(now, len > 0, acked_new);
        let new_end = self.seq_of(end);
        let snd_max = self.snd_max;
        let sent_end = new_end + fin as usize;
        if (len > 0 || fin) && self.delivered_ends.back().is_none_or(|&e| sent_end > e) {
            self.delivered_ends.push_back(sent_end);
        }
        let c = &mut self.counters;
        c.segments_sent += 1;
        if len > 0 {
            c.data_segments_sent += 1;
            c.bytes_sent += len as u64;
            if len < self.snd_mss {
                c.small_segments_sent += 1;
            }
            if seq < snd_max {
                c.retransmits += 1;
                if new_end > snd_max {
                    c.new_bytes_sent += new_end.distance_from(snd_max) as u64;
                }
            } else {
                c.new_bytes_sent += len as u64;
            }
        }
        r
    }

    fn rst_segment(&self, seq: SeqNumber, ack: Option<SeqNumber>) -> TcpRepr {
        TcpRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq,
            ack: ack.unwrap_or(SeqNumber(0)),
            flags: if ack.is_some() {
                Flags::RST | Flags::ACK
            } else {
                Flags::RST
            },
            window: 0,
            urgent: 0,
            options: TcpOptions::default(),
        }
    }
}

/// Smallest shift that lets `buf` bytes fit the 16-bit window field (RFC 7323 2.3).
pub fn wscale_for(buf: usize) -> u8 {
    let mut s = 0;
    while s < MAX_WSCALE && (buf >> s) > u16::MAX as usize {
        s += 1;
    }
    s
}

/// The reset a host sends for a segment no connection wants (RFC 9293 3.10.7.1);
/// `None` for an incoming RST, which is never answered.
pub fn rst_reply(seg: &TcpRepr, payload_len: usize) -> Option<TcpRepr> {
    if seg.flags.rst() {
        return None;
    }
    let mut r = TcpRepr {
        src_port: seg.dst_port,
        dst_port: seg.src_port,
        ..TcpRepr::default()
    };
    if seg.flags.ack() {
        r.seq = seg.ack;
        r.flags = Flags::RST;
    } else {
        r.seq = SeqNumber(0);
        r.ack = seg.seq + seg.segment_len(payload_len);
        r.flags = Flags::RST | Flags::ACK;
    }
    Some(r)
}
