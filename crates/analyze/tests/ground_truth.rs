//! Ground truth from the simulator: over generated runs mixing send and ACK
//! policies, message sizes and links, `diagnose` on each run's pcap must find
//! the held tails and delayed-ACK stalls that the engines' why-traces recorded,
//! with precision and recall of at least 0.95 each.
//!
//! Truth: the sender's why-trace `Release` of data that an ACK let go, where
//! that ACK was the receiver's delayed-ACK timer firing (`AckSent` with reason
//! `Timer`) after the hold began, as a pure ACK (when the timer's ACK rides on
//! data that left at the same instant, the wire shows a response, not a
//! delayed ACK). A send-policy hold is a held tail; a
//! congestion- or peer-window hold is a delayed-ACK stall.
//!
//! The retransmission timer's floor is kept above the delayed-ACK times
//! (`rto_min = 500ms`): with both at 200 ms the timer and the delayed ACK race,
//! the why-trace rightly blames the timer, and the wire cannot tell them apart.
//!
//! `TINYGRAM_GT_SEED=n` replays one generator seed; `TINYGRAM_GT_RUNS` sets the count.

use tinygram_analyze::diagnose::Kind;
use tinygram_analyze::{diagnose, read_bytes, Thresholds};
use tinygram_proto::policy::AckReason;
use tinygram_proto::{HoldRule, Instant, TraceEvent};
use tinygram_sim::pcap::{write_pcap, Vantage};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::{Sim, WireEvent};

mod common;
use common::Gen;

/// Scenario text, one-way delay (s) and the capture point, for generator seed `seed`.
fn scenario(seed: u64) -> (String, f64, Vantage) {
    let mut g = Gen(seed);
    let send = [
        "nagle",
        "nagle",
        "nagle-liberal",
        "minshall",
        "doupnik",
        "nodelay",
        "naglim:200",
        "cork",
    ];
    let ack = ["delayed", "delayed", "delayed", "immediate"];
    let delack = ["40ms", "100ms", "200ms"];
    let rate = ["10Mbps", "100Mbps", "1Gbps"];
    let delay = [("50us", 50e-6), ("1ms", 1e-3), ("5ms", 5e-3)];
    let options = [
        "[]",
        "[\"timestamps\"]",
        "[\"sack\", \"timestamps\"]",
        "[\"wscale\"]",
    ];
    let sizes = [1u32, 40, 200, 1000, 1448, 1460, 2896, 5000, 20_000, 100_000];
    let writes = |g: &mut Gen, n: u64| -> String {
        let k = 1 + g.next() % n;
        let v: Vec<String> = (0..k).map(|_| g.pick(&sizes).to_string()).collect();
        format!("[{}]", v.join(", "))
    };
    let (d, dsec) = *g.pick(&delay);
    let loss = *g.pick(&[0.0, 0.0, 0.0, 0.01]);
    let mut s = format!(
        "seed = {seed}\nduration = \"20s\"\n[link]\nrate = \"{}\"\ndelay = \"{d}\"\nloss = {loss}\n",
        g.pick(&rate)
    );
    for host in ["client", "server"] {
        s += &format!(
            "[{host}]\nrto_min = \"500ms\"\ninitial_window = {}\nsend_policy = \"{}\"\nack_policy = \"{}\"\ndelack = \"{}\"\noptions = {}\n",
            g.pick(&[10, 10, 1, 3]),
            g.pick(&send),
            g.pick(&ack),
            g.pick(&delack),
            g.pick(&options)
        );
    }
    if g.next().is_multiple_of(5) {
        s += &format!(
            "[workload]\ntype = \"interactive\"\nkeystrokes = 30\ninterval = \"{}\"\nsize = {}\n",
            g.pick(&["20ms", "50ms", "100ms"]),
            g.pick(&[1, 10, 100])
        );
    } else {
        s += &format!(
            "[workload]\ntype = \"request-response\"\nrequest = {}\nresponse = {}\nrequest_gap = \"{}\"\noutstanding = {}\nrequests = 8\n",
            writes(&mut g, 3),
            writes(&mut g, 3),
            g.pick(&["0ms", "0ms", "2ms"]),
            g.pick(&[1, 1, 2])
        );
    }
    let v = if g.next().is_multiple_of(2) {
        Vantage::Client
    } else {
        Vantage::Server
    };
    (s, dsec, v)
}

#[derive(Debug, Clone, Copy)]
struct Truth {
    sender: usize,
    kind: Kind,
    at: f64,
}

/// Held tails and delayed-ACK stalls from the why-traces.
fn truths(traces: [&[TraceEvent]; 2], wire: &[WireEvent], one_way: f64) -> Vec<Truth> {
    let mut out = Vec::new();
    for s in 0..2 {
        let r = 1 - s;
        let pure_ack_at = |t: Instant| {
            wire.iter()
                .any(|w| usize::from(w.dir) == r && w.at == t && w.payload_len == 0)
        };
        let timer_acks: Vec<Instant> = traces[r]
            .iter()
            .filter_map(|e| match e {
                TraceEvent::AckSent {
                    at,
                    reason: AckReason::Timer { .. },
                    waited,
                } if waited.as_secs_f64() >= 0.004 && pure_ack_at(*at) => Some(*at),
                _ => None,
            })
            .collect();
        // A hold that begins the instant another ends (nagle, then cwnd for
        // the same bytes, or cwnd again after each ACK of a slow start)
        // continues that episode, which takes the kind of its longest hold:
        // the rule that cost the time.
        let mut prev: Option<(f64, f64, Kind, f64)> = None;
        // One stall per timer ACK: the first release it let go.
        let mut used_acks: Vec<Instant> = Vec::new();
        for e in traces[s] {
            let TraceEvent::Release { at, rule, held, .. } = e else {
                continue;
            };
            let tr = at.as_secs_f64();
            let own = held.as_secs_f64();
            let mut began = tr - own;
            let mut kind = match rule {
                HoldRule::Policy(_) => Kind::HeldTail,
                HoldRule::Cwnd | HoldRule::PeerWindow | HoldRule::SenderSws => {
                    Kind::DelayedAckStall
                }
            };
            let mut longest = own;
            if let Some((pb, pt, pk, pl)) = prev {
                if (began - pt).abs() < 1e-9 {
                    began = pb;
                    if pl > own {
                        kind = pk;
                        longest = pl;
                    }
                }
            }
            prev = Some((began, tr, kind, longest));
            // The release came when a timer ACK reached the sender (one way,
            // plus an ACK's serialization and a little queueing), not before.
            let releasing_ack = timer_acks.iter().copied().find(|ta| {
                let t = ta.as_secs_f64();
                t >= began && tr >= t + one_way && tr - t <= one_way + 0.0015
            });
            let Some(ta) = releasing_ack else { continue };
            if used_acks.contains(&ta) {
                continue;
            }
            used_acks.push(ta);
            out.push(Truth {
                sender: s,
                kind,
                at: tr,
            });
        }
    }
    out
}

#[test]
fn diagnose_finds_what_the_why_trace_recorded() {
    let seeds = common::seeds("TINYGRAM_GT", 240);
    let (mut tp, mut fp, mut fneg) = (0usize, 0usize, 0usize);
    let mut kinds = [0usize; 2];
    let mut misses = Vec::new();
    for &seed in &seeds {
        let (text, one_way, vantage) = scenario(seed);
        let mut sc = Scenario::from_str(&text, "<generated>", &[])
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        sc.client.tcp.trace = true;
        sc.server.tcp.trace = true;
        let mut sim = Sim::new(&sc);
        sim.enable_capture(false);
        sim.enable_trace();
        sim.run(&mut |_, _| {});
        let (events, payloads) = sim.capture();
        let truth = truths(sim.traces(), events, one_way);
        let mut pcap = Vec::new();
        write_pcap(&mut pcap, events, payloads, vantage).expect("pcap writes");
        if let Some(dir) = std::env::var_os("TINYGRAM_GT_DUMP") {
            let dir = std::path::Path::new(&dir);
            std::fs::write(dir.join(format!("gt-{seed}.toml")), &text).expect("dump");
            std::fs::write(dir.join(format!("gt-{seed}.pcap")), &pcap).expect("dump");
            let tr: Vec<String> = (0..2)
                .flat_map(|h| sim.traces()[h].iter().map(move |e| format!("{h} {e}")))
                .collect();
            std::fs::write(dir.join(format!("gt-{seed}.trace")), tr.join("\n")).expect("dump");
        }
        let cap = read_bytes(&pcap).expect("own pcap reads");
        let (d, _) = diagnose(&cap, &Thresholds::default());
        let start = cap.stats.start_ns as f64 * 1e-9;
        let mut found: Vec<(usize, Kind, f64)> = Vec::new();
        for f in &d.flows {
            for x in &f.findings {
                if matches!(x.kind, Kind::HeldTail | Kind::DelayedAckStall) {
                    let s = usize::from(x.sender == "server");
                    found.extend(x.events.iter().map(|e| (s, x.kind, start + e.at_s)));
                }
            }
        }
        // Match one to one, in time order: same sender, same kind, close in
        // time (the capture point may be one link away from the sender).
        let mut used = vec![false; found.len()];
        for t in &truth {
            let remote = (vantage == Vantage::Client) != (t.sender == 0);
            let tol = if remote { one_way + 0.004 } else { 0.001 };
            let hit = found.iter().enumerate().position(|(i, &(s, k, at))| {
                !used[i] && s == t.sender && k == t.kind && (at - t.at).abs() <= tol
            });
            match hit {
                Some(i) => {
                    used[i] = true;
                    tp += 1;
                    kinds[usize::from(t.kind == Kind::DelayedAckStall)] += 1;
                }
                None => {
                    fneg += 1;
                    misses.push(format!("seed {seed}: missed {t:?}"));
                }
            }
        }
        for (i, f) in found.iter().enumerate() {
            if !used[i] {
                fp += 1;
                misses.push(format!("seed {seed}: spurious {f:?}"));
            }
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fneg).max(1) as f64;
    println!(
        "ground truth over {} runs: {} events ({} held tails, {} delayed-ACK stalls) \
         found {tp}, missed {fneg}, spurious {fp}: precision {precision:.3}, recall {recall:.3}",
        seeds.len(),
        tp + fneg,
        kinds[0],
        kinds[1]
    );
    let shown = if std::env::var_os("TINYGRAM_GT_VERBOSE").is_some() {
        usize::MAX
    } else {
        30
    };
    for m in misses.iter().take(shown) {
        println!("  {m}");
    }
    assert!(tp + fneg >= 100, "too few events to judge: {}", tp + fneg);
    assert!(precision >= 0.95, "precision {precision:.3} < 0.95");
    assert!(recall >= 0.95, "recall {recall:.3} < 0.95");
}
