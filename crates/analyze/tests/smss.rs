//! The full-segment size `diagnose` derives from a capture is the sender's
//! effective MSS, whatever options each segment carries (timestamps, RFC 1106
//! Big Window upper bits, NAK-permitted), so full segments are not drawn or
//! diagnosed as sub-MSS.

use tinygram_analyze::timeseq::TimeSeq;
use tinygram_analyze::{diagnose, read_bytes, Thresholds};
use tinygram_sim::pcap::{write_pcap, Vantage};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::Sim;

#[test]
fn full_segment_size_is_the_effective_mss_under_every_option_set() {
    let sets = [
        "[]",
        "[\"timestamps\"]",
        "[\"sack\", \"timestamps\"]",
        "[\"wscale\"]",
        "[\"bigwin\"]",
        "[\"bigwin\", \"nak\"]",
        "[\"timestamps\", \"bigwin\", \"nak\"]",
    ];
    for opts in sets {
        let text = format!(
            "seed = 3\nduration = \"30s\"\n[link]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n\
             [client]\noptions = {opts}\n[server]\noptions = {opts}\n\
             [workload]\ntype = \"bulk\"\nbytes = \"200KB\"\nwrite_size = \"64KiB\"\n"
        );
        let sc = Scenario::from_str(&text, "<test>", &[]).expect("scenario");
        let mut sim = Sim::new(&sc);
        sim.enable_capture(false);
        let res = sim.run(&mut |_, _| {});
        let (events, payloads) = sim.capture();
        for vantage in [Vantage::Client, Vantage::Server] {
            let mut pcap = Vec::new();
            write_pcap(&mut pcap, events, payloads, vantage).expect("pcap");
            let cap = read_bytes(&pcap).expect("reads");
            let (d, flows) = diagnose(&cap, &Thresholds::default());
            let f = &d.flows[0];
            println!(
                "options {opts} ({vantage:?}): engine MSS {} / {}, diagnose MSS {} / {}",
                res.client.mss, res.server.mss, f.client_mss, f.server_mss
            );
            assert_eq!(f.client_mss, res.client.mss, "options {opts}");
            // The server sends no data: its size comes from the handshake.
            assert_eq!(f.server_mss, res.server.mss, "options {opts} (server)");
            // The plot marks as small only what the engine counted small.
            let ts = TimeSeq::of(&flows[0], 0);
            let small = ts.data.iter().filter(|m| m.small && !m.retransmit).count() as u64;
            assert_eq!(
                small, res.client.small_segments,
                "options {opts} ({vantage:?})"
            );
        }
    }
}
