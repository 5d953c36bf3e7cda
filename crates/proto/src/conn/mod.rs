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
use crate::cc::{CcInit, CongestionControl, CwndUsage};
use crate::config::{BufferLimit, Config};
use crate::counters::Counters;
use crate::isn::IsnGenerator;
use crate::nak::{NakReceiver, NakSender};
use crate::policy::{AckPolicy, SendPolicy};
use crate::rack::Rack;
use crate::recv_buf::RecvBuffer;
use crate::rtt::RttEstimator;
use crate::sack::{SackReporter, Scoreboard};
use crate::send_buf::SendBuffer;
use crate::sent::SentRecord;
use crate::seq::SeqNumber;
use crate::state::State;
use crate::time::{Duration, Instant};
use crate::timestamps::TsState;
use crate::trace::{HoldRule, TraceEvent};
use crate::wire::{Flags, Nak, TcpOptions, TcpRepr};
use std::collections::VecDeque;
use std::sync::Arc;

mod ack;
mod app;
mod cookie;
mod ecn;
mod fastopen;
mod icmp;
mod info;
mod input;
mod maxseg;
mod output;
mod predict;
mod prefetch;
mod recovery;
mod timers;
mod udp_encaps;

use ack::AckState;
use ecn::EcnState;
pub use icmp::{unreach, IcmpError};
use output::TxState;
use recovery::RecoveryState;

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
    /// An ICMP time exceeded (TTL in transit) ended the handshake
    /// (see [`Connection::icmp_error`]).
    #[error("time exceeded in transit (ICMP)")]
    TimeExceeded,
    /// An ICMP parameter problem ended the handshake (Linux tcp_v4_err).
    #[error("parameter problem (ICMP)")]
    ParameterProblem,
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
    /// RFC 1122 4.2.3.6 keep-alive.
    Keepalive,
}
const TIMERS: usize = 8;

/// A TCP connection driven by the caller (see the module docs for the call order).
/// Aligned to a cache line, so its hot fields start one wherever it is kept.
#[repr(C, align(64))]
pub struct Connection {
    // The layout follows what events touch, measured per field with
    // `benches/endpoint-lines.sh` (ENDPOINT_LINES_GRANULE=8) on the
    // many-flow benchmark: first what nearly every event reads or writes,
    // then what most segments do, then what a data segment or an ACK alone
    // does, then the rest (Linux 6.8 groups `struct tcp_sock` the same way).
    // `#[repr(C)]` keeps this order.
    // Every event: timers, sequence variables, what is owed, the buffers.
    timers: [Option<Instant>; TIMERS],
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
    /// Consecutive expiries of the retransmission timer.
    retries: u32,
    /// Both ends of the stream: our FIN, the peer's, and reading shut down.
    fin: FinState,
    local_port: u16,
    remote_port: u16,
    error: Option<ConnError>,
    state: State,
    /// What the SYNs negotiated.
    negotiated: Negotiated,
    /// Opened by `listen` (a reset in SYN-RECEIVED returns to LISTEN, RFC 9293 3.10.7.4).
    passive: bool,
    /// What the next `poll_transmit` owes and the current transmission opportunity.
    tx: TxState,
    /// What is owed to the peer in ACKs, and since when.
    ack: AckState,
    /// RFC 7323 3-5 timestamps (TS.Recent, Last.ACK.sent; `enabled` once negotiated).
    ts: TsState,
    cc: Box<dyn CongestionControl>,
    ack_policy: Box<dyn AckPolicy>,
    send_policy: Box<dyn SendPolicy>,
    rtt: RttEstimator,
    /// Busy / window-limited / buffer-limited times for TCP_INFO.
    chrono: crate::chrono::Chrono,
    /// RFC 6675 scoreboard of SACKed sequence ranges above SND.UNA.
    scoreboard: Scoreboard,
    /// Loss recovery: duplicate ACKs, fast recovery, SACK recovery, PRR.
    recovery: RecoveryState,
    /// TCP_USER_TIMEOUT (RFC 5482).
    user_timeout: crate::chrono::UserTimeout,
    send_buf: SendBuffer,
    recv_buf: RecvBuffer,
    // Most segments: windows, the send record, the path.
    /// A reset to send on the next poll (boxed: rare, and a `TcpRepr` is 160 bytes).
    pending_rst: Option<Box<TcpRepr>>,
    /// Segments sent and not cumulatively acknowledged: RACK's, the
    /// congestion module's RTT samples and `Counters::segments_delivered` read it.
    sent: SentRecord,
    /// Effective send MSS: min(peer's MSS option, ours) (RFC 9293 3.7.1).
    snd_mss: usize,
    /// Peer's window in bytes, scaling applied.
    snd_wnd: usize,
    /// The window size the last segment offered (Linux's tcp_sock rcv_wnd).
    rcv_wnd_last: usize,
    /// Largest window the peer has offered (RFC 1122 4.2.3.4 "Max(SND.WND)").
    max_snd_wnd: usize,
    /// The segment being timed (end sequence, send time): one at a time, Karn's rule.
    rtt_probe: Option<(SeqNumber, Instant)>,
    /// End of the last partial segment of new data sent (Minshall).
    last_partial_end: Option<SeqNumber>,
    persist_backoff: u32,
    /// Zero-window probes sent since the last acceptable ACK (Linux's
    /// icsk_probes_out, TCP_INFO's tcpi_probes).
    probes_out: u32,
    /// RFC 3168 ECN state.
    ecn: EcnState,
    /// When a segment last arrived on the synchronized connection (Linux's
    /// rcv_tstamp and lrcvtime), for keep-alive.
    last_rcv: Option<Instant>,
    /// The segment size of the GRO packet being handled (its gso_size), when
    /// the driver received one (see `handle_gro_segment`).
    rx_gso_size: Option<usize>,
    /// The path MTU an ICMP "fragmentation needed" reported (RFC 1191),
    /// when below the MTU our MSS assumes.
    pmtu: Option<u16>,
    /// Keep-alive probes sent since a segment last arrived.
    keepalive_out: u32,
    // A data segment or an ACK: the settings (one shared copy, written on
    // change, as a Linux socket option overrides its namespace's sysctl for
    // that socket alone), idle restart, holds, the counters (their
    // per-segment ones first).
    cfg: Arc<Config>,
    /// When data last went out (Linux lsndtime), for the controller's idle restart.
    last_data_sent: Option<Instant>,
    /// The current hold episode: rule, since when, bytes held.
    hold: Option<(HoldRule, Instant, usize)>,
    /// RFC 8985 7.3 TLP.end_seq: SND.MAX when the outstanding probe went out.
    tlp_end: Option<SeqNumber>,
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
    /// RFC 3168 6.1.2: SND.MAX at the last ECN reduction (once per window;
    /// cold, apart from `ecn`, so the hot flags pack together).
    ecn_recover: Option<SeqNumber>,
    /// RFC 8985 6 RACK's per-connection state, when `recovery.rack` is on
    /// (its per-segment variables are in `sent`).
    rack: Rack,
    /// How much of cwnd the sender used this window (Linux tcp_cwnd_validate).
    cwnd_usage: CwndUsage,
    /// RFC 1106 2.1: what we have NAKed, so no NAK repeats.
    nak_rx: NakReceiver,
    // Cold unless in use (`Config::tso_segs`, `TxState::naks_used`): the
    // common path does not read them.
    /// Linux's skb boundaries over the send queue (`Config::tso_segs`).
    skbs: crate::skb::SkbQueue,
    /// RFC 1106 2.1: NAKed data the peer asked for, to resend at once.
    nak_tx: NakSender,
    /// NAKs waiting for the next segment we send.
    pending_naks: VecDeque<Nak>,
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
    /// When our first SYN went out (Linux's retrans_stamp in SYN-SENT).
    syn_first_sent: Option<Instant>,
    trace: Vec<TraceEvent>,
}

/// The options both SYNs carried (RFC 9293 3.7.1's negotiation).
#[derive(Clone, Copy, Debug, Default)]
struct Negotiated {
    /// RFC 2018 2: both SYNs carried SACK-permitted.
    sack: bool,
    /// RFC 1106 2: both SYNs carried NAK-permitted.
    nak: bool,
    /// RFC 1106 3: both SYNs carried the big-window option (wscale then unused).
    bigwin: bool,
    /// RFC 7323 2: the window-scale shifts, the peer's (send) and ours (receive).
    snd_wscale: u8,
    rcv_wscale: u8,
}

/// Where each direction of the stream stands on closing.
#[derive(Clone, Copy, Debug, Default)]
struct FinState {
    /// The application closed its sending side: FIN follows the queued data.
    queued: bool,
    /// The peer's FIN has been received in order.
    rcvd: bool,
    /// The application closed its end for reading (close(), SHUT_RD): new
    /// data arriving in FIN-WAIT is answered with a reset.
    rcv_shutdown: bool,
    /// The application let go of the connection ([`Connection::release`]):
    /// an orphan, retried only `orphan_retries` times (Linux's SOCK_DEAD).
    orphaned: bool,
    /// Sequence number of a FIN seen from the peer, perhaps ahead of a gap.
    rcv_seq: Option<SeqNumber>,
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
        cfg: Arc<Config>,
        local_port: u16,
        isn: SeqNumber,
        isn_gen: Box<dyn IsnGenerator>,
    ) -> Connection {
        let rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max)
            .with_tick(cfg.rto_tick)
            .with_floor(cfg.rto_floor)
            .with_slop(cfg.rto_slop);
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
            negotiated: Negotiated::default(),
            fin: FinState::default(),
            ecn: EcnState::default(),
            ecn_recover: None,
            recovery: RecoveryState::new(isn),
            tx: TxState::default(),
            ack: AckState::default(),
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
            skbs: Default::default(),
            recv_buf: RecvBuffer::new(rcv_buf_size, cfg.max_ooo_ranges),
            snd_mss: mss,
            ts: TsState::new(isn.0),
            rcv_buf_size,
            rcv_buf_limit,
            sack_rx: SackReporter::default(),
            sack_bsd: Default::default(),
            scoreboard: Scoreboard::default(),
            tfo: crate::fastopen::TfoState::default(),
            tlp_end: None,
            rack: Rack::default(),
            cwnd_usage: CwndUsage::default(),
            sent: SentRecord::default(),
            last_data_sent: None,
            nak_rx: NakReceiver::default(),
            nak_tx: NakSender::default(),
            pending_naks: VecDeque::new(),
            rtt,
            rtt_probe: None,
            cc,
            retries: 0,
            chrono: Default::default(),
            user_timeout: Default::default(),
            persist_backoff: 0,
            probes_out: 0,
            last_partial_end: None,
            policy_since: None,
            timers: [None; TIMERS],
            pending_rst: None,
            last_invalid_ack: None,
            tx_streak: 0,
            tx_budget: 0,
            rx_gso_size: None,
            syn_first_sent: None,
            pmtu: None,
            last_rcv: None,
            keepalive_out: 0,
            hold: None,
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
    /// in the simulator), asked once, now. `config` is a `Config`, or an
    /// `Arc<Config>` shared by a host's connections (changed per connection
    /// on write, see `cfg_mut`); the same holds for every constructor.
    pub fn connect(
        config: impl Into<Arc<Config>>,
        local_port: u16,
        remote_port: u16,
        mut isn: impl IsnGenerator + 'static,
        now: Instant,
    ) -> Connection {
        let iss = isn.next_isn(now, local_port, remote_port);
        let mut c = Connection::new(config.into(), local_port, iss, Box::new(isn));
        c.remote_port = remote_port;
        c.state = State::SynSent;
        c.tx.need_syn = true;
        // FreeBSD tcp(4) TCP_KEEPINIT: the keep-alive timer bounds the open.
        if let Some(t) = c.cfg.connect_timeout {
            c.arm(Timer::Keepalive, now + t);
        }
        c
    }

    /// Passive open (RFC 9293 3.10.1): LISTEN on `local_port`. Each SYN is
    /// answered with a SYN-ACK from a fresh ISS drawn from `isn` when it
    /// arrives (RFC 9293 3.10.7.2: "ISS should be selected").
    pub fn listen(
        config: impl Into<Arc<Config>>,
        local_port: u16,
        isn: impl IsnGenerator + 'static,
    ) -> Connection {
        Connection::listen_with(config.into(), local_port, Box::new(isn))
    }

    fn listen_with(config: Arc<Config>, local_port: u16, isn: Box<dyn IsnGenerator>) -> Connection {
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
        self.recovery.high_rxt = iss;
        self.recovery.recover = iss;
        self.ts = TsState::new(iss.0);
    }

    pub fn state(&self) -> State {
        self.state
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The settings of this connection alone, copied from the shared ones on
    /// the first change (`Arc::make_mut`).
    fn cfg_mut(&mut self) -> &mut Config {
        Arc::make_mut(&mut self.cfg)
    }

    /// Why the connection failed, if it did.
    pub fn error(&self) -> Option<ConnError> {
        self.error
    }

    /// The largest window the peer has offered (Linux's max_window).
    pub fn max_snd_wnd(&self) -> usize {
        self.max_snd_wnd
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
        self.negotiated.sack
    }

    /// RFC 1106 2: NAKs were negotiated.
    pub fn nak_enabled(&self) -> bool {
        self.negotiated.nak
    }

    /// RFC 1106 3: big windows were negotiated.
    pub fn big_window_enabled(&self) -> bool {
        self.negotiated.bigwin
    }

    /// RFC 7323 2: (send, receive) window-scale shifts in use.
    pub fn window_scales(&self) -> (u8, u8) {
        (self.negotiated.snd_wscale, self.negotiated.rcv_wscale)
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
        self.irs + 1 + self.recv_buf.nxt() as usize + self.fin.rcvd as usize
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
        match self.recovery.prr {
            Some(p) if self.recovery.sack => p.cwnd,
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

    /// Bytes sent and not acknowledged (SYN/FIN count one each).
    pub fn bytes_in_flight(&self) -> usize {
        self.snd_nxt.distance_from(self.snd_una)
    }

    fn enter_closed(&mut self, err: Option<ConnError>) {
        self.state = State::Closed;
        if err.is_some() {
            self.error = err;
        }
        self.timers = [None; TIMERS];
        self.ack.now = None;
        self.tx.need_syn = false;
        self.recovery.rexmit_one = None;
    }

    fn enter_time_wait(&mut self, now: Instant) {
        self.state = State::TimeWait;
        self.timers = [None; TIMERS];
        self.timers[Timer::TimeWait as usize] = Some(now + self.cfg.msl * 2);
    }

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
        self.fin.queued && self.snd_nxt > self.fin_seq()
    }

    fn fin_acked(&self) -> bool {
        self.fin.queued && self.snd_una > self.fin_seq()
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
