//! Inference against the simulator's truth: scenarios whose link and host
//! settings are known are run, captured at the client, the server or
//! between them, and `infer` must give back what was set.

use tinygram_analyze::infer::{SendRule, Vantage as Seen};
use tinygram_analyze::{flows, infer, read_bytes, FlowInference};
use tinygram_sim::pcap::{frame, write_pcap, Vantage};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::Sim;

/// Where the test captures.
#[derive(Clone, Copy, Debug, PartialEq)]
enum At {
    Client,
    Server,
    /// On the wire halfway along the propagation delay, past the sender's
    /// serialization: stamped `half` before each frame arrives.
    Between {
        half: f64,
    },
}

/// Runs scenario `text` and captures it at `at`: the pcap bytes.
fn capture(text: &str, at: At) -> Vec<u8> {
    let sc = Scenario::from_str(text, "<test>", &[]).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut sim = Sim::new(&sc);
    sim.enable_capture(false);
    sim.run(&mut |_, _| {});
    let (events, _) = sim.capture();
    let mut pcap = Vec::new();
    match at {
        At::Client => write_pcap(&mut pcap, events, None, Vantage::Client).unwrap(),
        At::Server => write_pcap(&mut pcap, events, None, Vantage::Server).unwrap(),
        At::Between { half } => {
            use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
            let mut ident = [0u16; 2];
            let mut recs = Vec::new();
            for ev in events {
                let id = ident[ev.dir as usize];
                ident[ev.dir as usize] = id.wrapping_add(1);
                if let Some(t) = ev.arrived {
                    let ns = t.as_nanos().saturating_sub((half * 1e9) as u64);
                    recs.push((ns, ev, id));
                }
            }
            recs.sort_by_key(|r| r.0);
            let hdr = PcapHeader {
                datalink: pcap_file::DataLink::ETHERNET,
                ts_resolution: pcap_file::TsResolution::NanoSecond,
                ..PcapHeader::default()
            };
            let mut w = PcapWriter::with_header(&mut pcap, hdr).unwrap();
            let zeros = vec![0u8; 65_536];
            for (ns, ev, id) in recs {
                let f = frame(ev, &zeros[..ev.payload_len], id).unwrap();
                w.write_packet(&PcapPacket::new(
                    std::time::Duration::from_nanos(ns),
                    f.len() as u32,
                    &f,
                ))
                .unwrap();
            }
        }
    }
    pcap
}

fn inferred(text: &str, at: At) -> FlowInference {
    let cap = read_bytes(&capture(text, at)).expect("own pcap reads");
    let fl = flows(&cap);
    assert!(!fl.is_empty(), "no flow in the capture");
    let i = infer(&fl[0]);
    if std::env::var_os("TINYGRAM_INFER_SHOW").is_some() {
        println!("{}", serde_json::to_string_pretty(&i).unwrap());
    }
    i
}

fn link(rate: &str, delay: &str, loss: f64) -> String {
    format!("seed = 3\nduration = \"30s\"\n[link]\nrate = \"{rate}\"\ndelay = \"{delay}\"\nloss = {loss}\n")
}

fn within(x: f64, truth: f64, rel: f64) -> bool {
    (x - truth).abs() <= rel * truth
}

/// A 2 MB transfer from the server over 10 Mbit/s, 10 ms each way.
/// `client` holds more keys of the client's.
fn bulk(client: &str) -> String {
    link("10Mbps", "10ms", 0.0)
        + "[server]\ninitial_window = 4\noptions = [\"wscale\", \"sack\"]\n[client]\noptions = [\"wscale\", \"sack\"]\n"
        + client
        + "[workload]\ntype = \"bulk\"\nbytes = \"2MB\"\ndirection = \"server-to-client\"\n"
}

#[test]
fn round_trip_rate_and_vantage_from_each_capture_point() {
    let text = bulk("");
    for (at, seen) in [
        (At::Client, Seen::Client),
        (At::Server, Seen::Server),
        (At::Between { half: 0.005 }, Seen::Between),
    ] {
        let i = inferred(&text, at);
        let p = &i.path;
        assert_eq!(p.vantage.value, seen, "{at:?}: {}", p.vantage.evidence);
        // 10 ms each way plus the handshake's serialization (about 0.1 ms).
        assert!(
            (p.min_rtt_s.value - 0.020).abs() < 0.001,
            "{at:?}: min RTT {} ({})",
            p.min_rtt_s.value,
            p.min_rtt_s.evidence
        );
        assert!(
            within(p.one_way_delay_s.value, 0.010, 0.05),
            "{at:?}: one way {}",
            p.one_way_delay_s.value
        );
        let rate = p
            .bottleneck_bps
            .value
            .unwrap_or_else(|| panic!("{at:?}: no rate: {}", p.bottleneck_bps.evidence));
        assert!(
            within(rate, 10e6, 0.1),
            "{at:?}: rate {rate} ({})",
            p.bottleneck_bps.evidence
        );
        if let Some([c, s]) = p.capture_split_s {
            assert!(
                within(c, 0.005, 0.1) && within(s, 0.005, 0.1),
                "split {c} {s}"
            );
        } else {
            assert_ne!(
                seen,
                Seen::Between,
                "a capture between the ends gives the split"
            );
        }
        let srv = &i.sides[1];
        assert_eq!(
            srv.initial_window.value.lo, 4,
            "{at:?}: {}",
            srv.initial_window.evidence
        );
        assert!(
            !srv.initial_window.value.is_open(),
            "{}",
            srv.initial_window.evidence
        );
        assert!(i.path.options.value.window_scale && i.path.options.value.sack);
        assert!(!i.path.options.value.timestamps);
        assert_eq!(p.loss.value.retransmits, 0);
    }
}

#[test]
fn initial_window_is_bracketed_when_the_link_spreads_the_flight() {
    // A segment takes 1.2 ms to serialize at 10 Mbit/s, the round trip
    // 0.1 ms, and each segment is acknowledged at once: at the receiver the
    // ACK of the first comes back before the second arrives, and the first
    // flight runs into the rest.
    let text = link("10Mbps", "50us", 0.0)
        + "[client]\nack_policy = \"immediate\"\n[server]\ninitial_window = 4\n[workload]\ntype = \"bulk\"\nbytes = \"200KB\"\ndirection = \"server-to-client\"\n";
    for (at, exact) in [(At::Server, true), (At::Client, false)] {
        let iw = &inferred(&text, at).sides[1].initial_window;
        assert!(
            iw.value.lo <= 4 && 4 <= iw.value.hi,
            "{at:?}: {:?} {}",
            iw.value,
            iw.evidence
        );
        assert_eq!(
            !iw.value.is_open(),
            exact,
            "{at:?}: {:?} {}",
            iw.value,
            iw.evidence
        );
    }
}

#[test]
fn a_faster_link_gives_its_rate() {
    let text = link("50Mbps", "5ms", 0.0)
        + "[workload]\ntype = \"bulk\"\nbytes = \"4MB\"\ndirection = \"client-to-server\"\n";
    for at in [At::Client, At::Server] {
        let i = inferred(&text, at);
        let rate = i.path.bottleneck_bps.value.expect("a rate");
        assert!(
            within(rate, 50e6, 0.1),
            "{at:?}: {rate} ({})",
            i.path.bottleneck_bps.evidence
        );
    }
}

#[test]
fn loss_is_estimated_from_retransmissions() {
    for loss in [0.01, 0.03] {
        let text = link("10Mbps", "10ms", loss)
            + "[server]\noptions = [\"sack\"]\n[client]\noptions = [\"sack\"]\n[workload]\ntype = \"bulk\"\nbytes = \"3MB\"\ndirection = \"server-to-client\"\n";
        for at in [At::Client, At::Server] {
            let i = inferred(&text, at);
            let l = &i.path.loss.value;
            assert!(
                l.rate >= 0.5 * loss && l.rate <= 1.6 * loss,
                "{at:?} loss {loss}: {} ({})",
                l.rate,
                i.path.loss.evidence
            );
            assert!(
                l.range.lo <= loss * 1.2 && l.range.hi >= loss * 0.8,
                "{:?}",
                l.range
            );
        }
    }
}

/// Requests answered after a think time longer than any delayed-ACK timer:
/// the server's ACK of each request waits for its timer. The client's
/// retransmission timer is kept above it (with both at 200 ms they race).
fn think(server: &str) -> String {
    link("100Mbps", "5ms", 0.0)
        + "[client]\nrto_min = \"1s\"\n[server]\n"
        + server
        + "\n[workload]\ntype = \"request-response\"\nrequest = [100]\nresponse = [100]\nthink = \"300ms\"\nrequests = 12\n"
}

#[test]
fn delayed_ack_time_is_read_off_lone_segments() {
    for (delack, secs) in [("40ms", 0.040), ("200ms", 0.200), ("100ms", 0.100)] {
        for at in [At::Client, At::Server] {
            let i = inferred(&think(&format!("delack = \"{delack}\"")), at);
            let a = &i.sides[1].ack;
            assert!(
                !a.delack_s.value.is_open(),
                "{at:?} {delack}: {}",
                a.delack_s.evidence
            );
            assert!(
                (a.delack_s.value.lo - secs).abs() <= 0.002 + 0.05 * secs,
                "{at:?} {delack}: {} ({})",
                a.delack_s.value.lo,
                a.delack_s.evidence
            );
            assert!(a.delack_s.confidence >= tinygram_analyze::Confidence::Medium);
            assert_eq!(a.ack_policy.value, "delayed", "{}", a.ack_policy.evidence);
        }
    }
    // With no delayed ACK, lone segments are answered at once.
    let i = inferred(&think("ack_policy = \"immediate\""), At::Client);
    let a = &i.sides[1].ack;
    assert!(a.delack_s.value.is_open(), "{}", a.delack_s.evidence);
    assert_eq!(a.samples.prompt, a.samples.lone);
    assert!(a.samples.lone >= 10);
    assert_eq!(a.ack_policy.value, "immediate");
}

#[test]
fn every_second_segment_or_every_one() {
    for (ack, n) in [("delayed", 2), ("immediate", 1)] {
        let text = bulk(&format!("ack_policy = \"{ack}\"\n"));
        for at in [At::Client, At::Server] {
            let i = inferred(&text, at);
            let a = &i.sides[0].ack;
            assert_eq!(
                a.ack_every.value,
                Some(n),
                "{at:?} {ack}: {}",
                a.ack_every.evidence
            );
        }
    }
}

/// The server answers each request with 3000 B, then two 100 B writes 1 ms
/// apart: two full segments and runts behind them.
fn runts(policy: &str) -> String {
    link("100Mbps", "10ms", 0.0)
        + &format!("[server]\nsend_policy = \"{policy}\"\n")
        + "[workload]\ntype = \"request-response\"\nrequest = [100]\nresponse = [3000, 100, 100]\nresponse_gap = \"1ms\"\nrequests = 6\n"
}

#[test]
fn send_rules_excluded_only_by_what_the_sender_did() {
    use SendRule::*;
    for (policy, truth, left) in [
        ("nagle", Nagle, vec![Nagle, Minshall, NoHold]),
        ("minshall", Minshall, vec![Minshall, NoHold]),
        ("nodelay", NoHold, vec![NoHold]),
    ] {
        for at in [At::Server, At::Client, At::Between { half: 0.005 }] {
            let i = inferred(&runts(policy), at);
            let r = &i.sides[1].send_rule;
            assert!(
                r.value.consistent(truth),
                "{policy} {at:?}: truth ruled out: {}",
                r.evidence
            );
            assert_eq!(r.value.possible, left, "{policy} {at:?}: {}", r.evidence);
            assert_eq!(r.value.likely, truth, "{policy} {at:?}: {}", r.evidence);
        }
    }
}

#[test]
fn nearest_profile_of_linux_and_freebsd() {
    for prof in ["linux", "freebsd"] {
        let text = link("100Mbps", "10ms", 0.0)
            + &format!("[client]\nprofile = \"{prof}\"\n[server]\nprofile = \"{prof}\"\n")
            + "[workload]\ntype = \"request-response\"\nrequest = [100]\nresponse = [3000, 100]\nresponse_gap = \"1ms\"\nthink = \"100ms\"\nrequests = 30\n";
        for at in [At::Client, At::Server] {
            let i = inferred(&text, at);
            for s in &i.sides {
                assert_eq!(
                    s.profile.value.name, prof,
                    "{prof} {at:?} {}: {} {:?}",
                    s.side, s.profile.evidence, s.profile.value.differs
                );
            }
        }
    }
}

#[test]
fn degenerate_flows_give_low_confidence_not_a_panic() {
    use tinygram_analyze::Confidence::{High, Low};
    let mut cap = read_bytes(&capture(&runts("nagle"), At::Client)).unwrap();
    let all = cap.packets.clone();
    let cases = [
        (
            "no handshake",
            all.iter()
                .filter(|p| !p.flags.syn())
                .skip(1)
                .copied()
                .collect::<Vec<_>>(),
        ),
        (
            "one segment",
            all.iter()
                .filter(|p| p.payload_len > 0)
                .take(1)
                .copied()
                .collect(),
        ),
        (
            "only ACKs",
            all.iter()
                .filter(|p| p.payload_len == 0 && !p.flags.syn())
                .copied()
                .collect(),
        ),
    ];
    for (what, packets) in cases {
        cap.packets = packets;
        let fl = flows(&cap);
        assert_eq!(fl.len(), 1, "{what}");
        let i = infer(&fl[0]);
        let json = serde_json::to_value(&i).expect("serializes");
        assert!(
            json["path"]["min_rtt_s"]["confidence"].is_string(),
            "{what}: {json}"
        );
        assert!(!i.handshake_seen, "{what}");
        assert_eq!(i.path.options.confidence, Low, "{what}");
        for s in &i.sides {
            assert_eq!(s.mss.confidence, Low, "{what}");
            assert_ne!(s.profile.confidence, High, "{what}: {}", s.profile.evidence);
        }
        assert!(!i.scenario_keys().is_empty());
        if what != "no handshake" {
            assert_eq!(
                i.path.vantage.confidence, Low,
                "{what}: {}",
                i.path.vantage.evidence
            );
            assert_eq!(i.path.min_rtt_s.confidence, Low, "{what}");
            assert_eq!(i.path.bottleneck_bps.value, None, "{what}");
            for s in &i.sides {
                assert_eq!(s.ack.delack_s.confidence, Low, "{what}");
                assert!(s.ack.delack_s.value.is_open(), "{what}");
                assert_eq!(s.send_rule.confidence, Low, "{what}");
                assert_eq!(s.send_rule.value.possible.len(), 3, "{what}");
                assert_eq!(s.initial_window.confidence, Low, "{what}");
                assert_eq!(s.profile.confidence, Low, "{what}");
            }
        }
    }
}

#[test]
fn json_names_and_scenario_keys_are_stable() {
    let i = inferred(&think("delack = \"40ms\""), At::Client);
    let v = serde_json::to_value(&i).unwrap();
    assert_eq!(v["path"]["vantage"]["value"], "client");
    assert!(v["path"]["min_rtt_s"]["value"].is_number());
    assert_eq!(v["sides"][1]["side"], "server");
    assert_eq!(v["sides"][1]["send_rule"]["value"]["possible"][0], "nagle");
    let keys = i.scenario_pairs();
    let get = |k: &str| keys.iter().find(|x| x.0 == k).map(|x| x.1.as_str());
    assert_eq!(get("server.delack"), Some("\"40ms\""));
    assert_eq!(get("server.ack_policy"), Some("\"delayed\""));
    assert!(get("link.delay").is_some_and(|d| d.starts_with("\"50") && d.ends_with("us\"")));
    // Every value parses as a scenario: the keys make a runnable scenario.
    let mut text = String::new();
    let mut table = String::new();
    for (k, v) in &keys {
        let (t, name) = k.split_once('.').unwrap();
        if t != table {
            text += &format!("[{t}]\n");
            table = t.to_string();
        }
        text += &format!("{name} = {v}\n");
    }
    Scenario::from_str(&text, "<inferred>", &[]).unwrap_or_else(|e| panic!("{e}\n{text}"));
}

#[test]
fn explore() {
    if std::env::var_os("TINYGRAM_INFER_SHOW").is_none() {
        return;
    }
    if let Some(path) = std::env::var_os("TINYGRAM_INFER_PCAP") {
        let cap = tinygram_analyze::read_file(std::path::Path::new(&path)).expect("reads");
        for f in flows(&cap) {
            let i = infer(&f);
            println!("{}", serde_json::to_string_pretty(&i).unwrap());
            println!("{:?}", i.scenario_pairs());
        }
        return;
    }
    let text = std::env::var("TINYGRAM_INFER_TEXT").unwrap_or_else(|_| runts("nagle"));
    for at in [At::Client, At::Server, At::Between { half: 0.005 }] {
        let i = inferred(&text, at);
        println!("{:?}", i.scenario_pairs());
    }
}
