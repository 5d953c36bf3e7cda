//! A capture cut short (tcpdump killed mid-write, `head -c N`) is read up to
//! its last complete frame, with a warning saying where it ends; in pcap and pcapng.

use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use tinygram_analyze::{diagnose, read_bytes, Thresholds};
use tinygram_sim::pcap::{write_pcap, Vantage};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::Sim;

/// A pcap of a short request/response run, and its frames' (timestamp, bytes).
fn sim_pcap() -> Vec<u8> {
    let sc = Scenario::from_str(
        "[workload]\nrequest = [5000]\nresponse = [3000]\nrequests = 20\n",
        "t.toml",
        &[],
    )
    .unwrap();
    let mut sim = Sim::new(&sc);
    sim.enable_capture(false);
    sim.run(&mut |_, _| {});
    let (events, payloads) = sim.capture();
    let mut pcap = Vec::new();
    write_pcap(&mut pcap, events, payloads, Vantage::Client).unwrap();
    pcap
}

/// End offsets of the pcap's records (little-endian, as tinygram writes them).
fn pcap_record_ends(pcap: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let incl = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + incl;
        ends.push(at);
    }
    assert_eq!(at, pcap.len());
    ends
}

/// The same frames as pcapng (one Ethernet interface), with each packet
/// block's end offset.
fn as_pcapng(pcap: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: 0,
        options: vec![],
    })
    .unwrap();
    let mut ends = Vec::new();
    let mut at = 24;
    while at < pcap.len() {
        let word = |o: usize| u32::from_le_bytes(pcap[at + o..at + o + 4].try_into().unwrap());
        let (sec, frac, incl, orig) = (word(0), word(4), word(8) as usize, word(12));
        let data = &pcap[at + 16..at + 16 + incl];
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            // pcapng's default resolution is microseconds; keep the order, not the unit.
            timestamp: std::time::Duration::from_micros(
                u64::from(sec) * 1_000_000 + u64::from(frac / 1000),
            ),
            original_len: orig,
            data: data.into(),
            options: vec![],
        })
        .unwrap();
        ends.push(w.get_ref().len());
        at += 16 + incl;
    }
    (w.into_inner(), ends)
}

fn check(format: &str, bytes: &[u8], ends: &[usize]) {
    let whole = read_bytes(bytes).unwrap();
    assert_eq!(whole.stats.truncated, None, "{format}");
    assert_eq!(whole.stats.frames as usize, ends.len(), "{format}");
    assert!(ends.len() > 40, "{format}: a capture long enough to cut");
    // Cut inside records of the start, middle and end, and inside a record's header.
    for cut in [
        ends[2] + 7,
        ends[ends.len() / 2] + 3,
        ends[ends.len() / 2 + 1] - 1,
        bytes.len() - 1,
    ] {
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        let cap = read_bytes(&bytes[..cut])
            .unwrap_or_else(|e| panic!("{format} cut at {cut} is refused: {e}"));
        assert_eq!(cap.stats.frames as usize, complete, "{format} cut at {cut}");
        assert!(cap.stats.truncated.is_some(), "{format} cut at {cut}");
        let warning = cap.stats.truncation_warning().unwrap();
        assert!(
            warning.contains(&format!("after {complete} complete frame(s)")),
            "{warning}"
        );
        // The complete frames are analysed as they would be in a whole file.
        let (d, _) = diagnose(&cap, &Thresholds::default());
        assert_eq!(d.capture.truncated, cap.stats.truncated);
        assert_eq!(d.flows.len(), 1, "{format} cut at {cut}");
    }
    // A cut exactly at a record's end is a whole (shorter) capture.
    let cap = read_bytes(&bytes[..ends[10]]).unwrap();
    assert_eq!(
        (cap.stats.frames, cap.stats.truncated),
        (11, None),
        "{format}"
    );
}

#[test]
fn a_truncated_pcap_is_read_to_its_last_complete_frame() {
    let pcap = sim_pcap();
    let ends = pcap_record_ends(&pcap);
    check("pcap", &pcap, &ends);
}

#[test]
fn a_truncated_pcapng_is_read_to_its_last_complete_frame() {
    let pcap = sim_pcap();
    let (ng, ends) = as_pcapng(&pcap);
    assert_eq!(read_bytes(&ng).unwrap().stats.format, "pcapng");
    check("pcapng", &ng, &ends);
}
