//! The two-host world: two hosts running the engine and a workload, joined
//! by one link per direction. It is the network of [`crate::flows`] with two
//! hosts and no bottleneck (same delivery loop, event queue and capture);
//! what is its own here is how it is set up (ISNs, one connection open from
//! time zero) and its result, per host rather than per flow. Output depends
//! only on the scenario and its seed: one seeded RNG, one event queue
//! ordered by (time, insertion).

use crate::flows::FlowSim;
use crate::metrics::{Delivery, Flow, HostResult, RunEnd, RunResult};
use crate::scenario::Scenario;
use crate::wire::Tap;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tinygram_proto::{ConnError, Connection, Instant, IsnGenerator, SeqNumber, State, TraceEvent};

/// The client's and server's TCP ports. The server's is 7 (echo) because
/// Wireshark's echo dissector shows any payload as plain data: on port 80 the
/// seeded pattern decodes as malformed HTTP, and on a port no dissector
/// claims, heuristic dissectors guess at the random bytes (Thrift errors).
pub const CLIENT_PORT: u16 = 40_000;
pub const SERVER_PORT: u16 = 7;

pub use crate::wire::WireEvent;

/// Host, and endpoint, numbers: each host has the one endpoint of its number.
const CLIENT: usize = 0;
const SERVER: usize = 1;

/// A host's ISNs (RFC 9293 3.4.1), driven by the run's seed: the scenario's
/// `isn` (or one drawn from the run's RNG) first, then draws from the host's
/// own ChaCha stream, so later connection attempts never disturb the link's
/// random numbers and a run stays reproducible.
pub(crate) struct SeededIsn {
    first: Option<u32>,
    rng: ChaCha8Rng,
}

impl SeededIsn {
    pub(crate) fn new(seed: u64, host: usize, first: u32) -> SeededIsn {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Stream 0 is the run's RNG; each host draws from its own.
        rng.set_stream(1 + host as u64);
        SeededIsn {
            first: Some(first),
            rng,
        }
    }
}

impl IsnGenerator for SeededIsn {
    fn next_isn(&mut self, _now: Instant, _local: u16, _remote: u16) -> SeqNumber {
        SeqNumber(self.first.take().unwrap_or_else(|| self.rng.gen()))
    }
}

/// A simulation run in progress: the network of [`crate::flows`] with two
/// hosts, one connection and no bottleneck (one link per direction), whose
/// result is the two-host [`RunResult`].
pub struct Sim {
    net: FlowSim,
}

impl Sim {
    /// Builds the hosts and links of `sc`; the client's SYN leaves at time zero.
    pub fn new(sc: &Scenario) -> Sim {
        Sim {
            net: FlowSim::two_host(sc),
        }
    }

    /// Records both engines' why-traces (hold/release and ACK decisions).
    pub fn enable_trace(&mut self) {
        self.net.enable_trace();
    }

    /// The why-traces of the client (0) and server (1), in time order.
    pub fn traces(&self) -> [&[TraceEvent]; 2] {
        [self.net.trace(CLIENT), self.net.trace(SERVER)]
    }

    /// Records every frame offered to a link (headers; payloads too if `payloads`).
    pub fn enable_capture(&mut self, payloads: bool) {
        self.net.enable_capture(payloads);
    }

    /// The frames recorded by [`enable_capture`](Self::enable_capture).
    pub fn capture(&self) -> (&[WireEvent], Option<&[Vec<u8>]>) {
        self.net.capture()
    }

    /// Calls `tap` with every frame as its sender offers it to the link.
    pub fn set_tap(&mut self, tap: Box<Tap>) {
        self.net.set_tap(tap);
    }

    /// The engine of the client (0) or server (1), for inspection.
    pub fn connection(&self, host: usize) -> &Connection {
        &self.net.core.eps[host].conn
    }

    /// Runs to the end; `progress` is called now and then with the simulated time.
    pub fn run(&mut self, progress: &mut dyn FnMut(Instant, Instant)) -> RunResult {
        let end = self.net.run_to_end(progress);
        self.result(end)
    }

    /// What became of the connections, for a run with nothing left to do:
    /// who aborted and why, who closed, or that both sat idle.
    fn connections_fate(&self) -> String {
        let mut parts = Vec::new();
        for (h, side) in [(CLIENT, "client"), (SERVER, "server")] {
            let host = &self.net.core.eps[h];
            let cfg = host.conn.config();
            match host.conn.error() {
                // RFC 9293 3.8.3: the retransmission limit was reached.
                Some(ConnError::TimedOut) => {
                    let (n, what) = if host.established {
                        (cfg.max_retries, "retransmissions")
                    } else {
                        (cfg.syn_retries, "SYN retransmissions")
                    };
                    parts.push(format!(
                        "{side} aborted after {n} {what}: connection timed out"
                    ));
                }
                Some(e) => parts.push(format!("{side} aborted: {e}")),
                None if matches!(host.conn.state(), State::Closed | State::TimeWait) => {
                    parts.push(format!("{side} connection closed"))
                }
                None => {}
            }
        }
        if parts.is_empty() {
            "both connections open and idle: no data, timer or write pending".to_string()
        } else {
            parts.join("; ")
        }
    }

    /// Whether every written byte was delivered exactly once and in order, as
    /// far as the run can tell ([`crate::metrics::INTEGRITY_RULE`]); the reason if not.
    fn integrity(&self, end: RunEnd, delivery: &Delivery) -> Result<(), String> {
        // Bytes still in flight are not lost while both connections can deliver them.
        let live = end != RunEnd::Idle
            && self
                .net
                .core
                .eps
                .iter()
                .all(|h| h.conn.error().is_none() && !matches!(h.conn.state(), State::Closed));
        let flows = [
            ("client to server", SERVER, delivery.client_to_server),
            ("server to client", CLIENT, delivery.server_to_client),
        ];
        for (dir, reader, f) in flows {
            if !self.net.core.eps[reader].app.integrity_ok {
                return Err(format!(
                    "bytes delivered {dir} differ from what was written (wrong, reordered or repeated data)"
                ));
            }
            if f.bytes_delivered > f.bytes_written {
                return Err(format!(
                    "{} bytes delivered {dir}, but only {} written",
                    thousands(f.bytes_delivered),
                    thousands(f.bytes_written)
                ));
            }
            if !live && f.undelivered() > 0 {
                return Err(format!(
                    "{} of {} written bytes delivered {dir} ({})",
                    thousands(f.bytes_delivered),
                    thousands(f.bytes_written),
                    self.connections_fate()
                ));
            }
        }
        Ok(())
    }

    fn host_result(&self, h: usize) -> HostResult {
        let host = &self.net.core.eps[h];
        let c = host.conn.counters();
        let link = self.net.hosts[h].up.stats();
        HostResult {
            data_segments: c.data_segments_sent,
            small_segments: c.small_segments_sent,
            pure_acks: c.pure_acks_sent,
            retransmits: c.retransmits,
            naks_sent: c.naks_sent,
            wire_bytes: link.wire_bytes,
            segments: c.segments_sent,
            bytes_sent: c.bytes_sent,
            app_bytes_read: host.app.bytes_read,
            app_bytes_written: host.app.bytes_written(),
            timeouts: c.timeouts,
            fast_retransmits: c.fast_retransmits,
            dup_acks_received: c.dup_acks_received,
            delack_timer_fired: c.delack_timer_fired,
            window_probes: c.window_probes,
            policy_holds: c.policy_holds,
            window_updates: c.window_updates_sent,
            frames_dropped: link.dropped_queue + link.dropped_loss + link.dropped_ber,
            state: host.conn.state().to_string(),
            error: host.conn.error().map(|e| e.to_string()),
            mss: host.conn.effective_mss(),
            srtt_ms: host.conn.srtt().map(|d| d.as_secs_f64() * 1e3),
            naks_received: c.naks_received,
            nak_retransmits: c.nak_retransmits,
            sack_retransmits: c.sack_retransmits,
            fast_retransmits_suppressed: c.fast_retransmits_suppressed,
            paws_rejected: c.paws_rejected,
            invalid_segments: c.invalid_segments,
            challenge_acks: c.challenge_acks,
            challenge_acks_suppressed: c.challenge_acks_suppressed,
            invalid_acks_suppressed: c.invalid_acks_suppressed,
            unacceptable_acks: c.unacceptable_acks,
            ooo_ranges_dropped: c.ooo_ranges_dropped,
            peer_mss_floored: c.peer_mss_floored,
            rcv_buf: host.conn.rcv_buf_granted().0,
            options: negotiated(&host.conn),
        }
    }

    fn result(&self, end: RunEnd) -> RunResult {
        let elapsed = self.net.core.now.as_secs_f64();
        let client = &self.net.core.eps[CLIENT].app;
        let server = &self.net.core.eps[SERVER].app;
        let mut lat = client.latencies.clone();
        lat.merge(&server.latencies);
        let transactions = lat.count();
        let goodput_bytes = client.bytes_read + server.bytes_read;
        let per_s = |x: f64| if elapsed > 0.0 { x / elapsed } else { 0.0 };
        let delivery = Delivery {
            client_to_server: Flow {
                bytes_written: client.bytes_written(),
                bytes_delivered: server.bytes_read,
            },
            server_to_client: Flow {
                bytes_written: server.bytes_written(),
                bytes_delivered: client.bytes_read,
            },
        };
        let integrity = self.integrity(end, &delivery);
        RunResult {
            name: self.net.name.clone(),
            seed: self.net.seed,
            sim_time_s: elapsed,
            finished: end == RunEnd::Finished,
            ended: end,
            ended_why: (end == RunEnd::Idle).then(|| self.connections_fate()),
            transactions,
            transactions_per_s: per_s(transactions as f64),
            goodput_bytes_per_s: per_s(goodput_bytes as f64),
            completion_ms: lat.percentiles(),
            integrity_ok: integrity.is_ok(),
            integrity_error: integrity.err(),
            delivery,
            client: self.host_result(CLIENT),
            server: self.host_result(SERVER),
            events: self.net.core.events,
        }
    }
}

/// The options a connection ended up using (MSS always).
fn negotiated(c: &Connection) -> Vec<&'static str> {
    let mut v = vec!["mss"];
    let (snd, rcv) = c.window_scales();
    if snd > 0 || rcv > 0 {
        v.push("wscale");
    }
    for (on, name) in [
        (c.timestamps_enabled(), "timestamps"),
        (c.sack_enabled(), "sack"),
        (c.big_window_enabled(), "bigwin"),
        (c.nak_enabled(), "nak"),
    ] {
        if on {
            v.push(name);
        }
    }
    v
}

/// `1234567` as `"1,234,567"`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Runs a scenario to the end without progress output.
pub fn run(sc: &Scenario) -> RunResult {
    Sim::new(sc).run(&mut |_, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_isns_start_with_the_given_one_then_follow_the_seed() {
        let t = Instant::ZERO;
        let draws = |seed, host| {
            let mut g = SeededIsn::new(seed, host, 42);
            [0; 4].map(|_| g.next_isn(t, 80, 40_000))
        };
        let a = draws(1, SERVER);
        assert_eq!(a[0], SeqNumber(42));
        assert!(a[1..].iter().all(|&x| x != a[0]) && a[1] != a[2] && a[2] != a[3]);
        assert_eq!(a, draws(1, SERVER), "same seed, same ISNs");
        assert_ne!(
            a[1..],
            draws(1, CLIENT)[1..],
            "each host has its own stream"
        );
        assert_ne!(a[1..], draws(2, SERVER)[1..]);
    }

    /// The two-host world pops its events from the calendar queue exactly
    /// as it did from the plain heap it used before: byte-identical results.
    #[test]
    fn calendar_queue_runs_two_hosts_like_the_heap() {
        for text in [
            include_str!("../../../examples/cheshire.toml"),
            include_str!("../../../examples/lossy.toml"),
        ] {
            let sc = Scenario::from_str(text, "<t>", &[]).unwrap();
            let cal = run(&sc);
            let mut sim = Sim::new(&sc);
            sim.net.core.queue.switch_to_heap();
            let heap = sim.run(&mut |_, _| {});
            assert!(cal.transactions > 0 || cal.goodput_bytes_per_s > 0.0);
            assert_eq!(
                serde_json::to_string(&cal).unwrap(),
                serde_json::to_string(&heap).unwrap()
            );
        }
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(262_144), "262,144");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
