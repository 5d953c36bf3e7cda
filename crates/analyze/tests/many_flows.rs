//! `diagnose` on captures of many flows: what it keeps is bounded by the
//! flow limit, not by the capture (structural checks: flows retained,
//! segments retained, summaries; never a timing or a memory reading).

#[path = "support/syn_flows.rs"]
mod syn_flows;

use std::path::Path;
use syn_flows::{client, write_flows, write_syn_flows};
use tinygram_analyze::flowtable::FlowTable;
use tinygram_analyze::{diagnose, diagnose_file, read_file, CaptureError, Thresholds};

fn write(path: &Path, n: u64, payload: impl Fn(u64) -> u16) {
    let f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write_flows(f, n, payload).unwrap();
}

/// 300,000 one-SYN flows with a limit of 1,000: exactly 1,000 flows are
/// analysed (one segment each), the other 299,000 are summaries numbered
/// after them, and nothing else is kept.
#[test]
fn a_syn_flood_keeps_the_limit_of_flows_and_summarises_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("flood.pcap");
    let n = 300_000;
    write_syn_flows(
        std::io::BufWriter::new(std::fs::File::create(&p).unwrap()),
        n,
    )
    .unwrap();
    let d = diagnose_file(&p, 1_000, &Thresholds::default(), &mut |_, _| {}).unwrap();
    assert_eq!(d.diagnosis.capture.tcp_segments, n);
    assert_eq!(d.diagnosis.capture.bad_checksums, 0);
    assert_eq!(d.flows.len(), 1_000);
    assert_eq!(d.diagnosis.flows.len(), 1_000);
    let kept: usize = d.flows.iter().map(|(_, f)| f.segs.len()).sum();
    assert_eq!(kept, 1_000, "segments retained");
    assert_eq!(d.diagnosis.flow_count(), n);
    // All weigh the same (no payload, one segment): the first 1,000 are analysed.
    let numbers: Vec<usize> = d.diagnosis.flows.iter().map(|r| r.flow).collect();
    assert_eq!(numbers, (1..=1_000).collect::<Vec<_>>());
    let s = d
        .diagnosis
        .summarised
        .as_ref()
        .expect("flows past the limit");
    assert_eq!(
        (
            s.max_flows,
            s.flows,
            s.segments,
            s.payload_bytes,
            s.syn_unanswered
        ),
        (1_000, n - 1_000, n - 1_000, 0, n - 1_000)
    );
    let mut count = 0u64;
    for (k, x) in d.table.summaries().enumerate() {
        let i = 1_000 + k as u64;
        assert_eq!(x.flow as u64, i + 1);
        let (ip, port) = client(i);
        assert_eq!(
            x.client,
            std::net::SocketAddr::from((ip, port)),
            "flow {}",
            x.flow
        );
        assert_eq!(x.server.to_string(), "192.0.2.1:80");
        assert_eq!((x.segments, x.state), (1, "syn_unanswered"));
        count += 1;
    }
    assert_eq!(count, n - 1_000);
    assert_eq!(d.table.pairs() as u64, n);
}

/// The limit picks the flows that carried most: the few flows with data
/// are analysed whatever their place in the capture, and keep their numbers.
#[test]
fn the_busiest_flows_are_analysed_with_their_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mixed.pcap");
    let busy = |i: u64| {
        if i % 997 == 500 {
            1 + (i % 300) as u16
        } else {
            0
        }
    };
    write(&p, 20_000, busy);
    let with_data: Vec<u64> = (0..20_000).filter(|&i| busy(i) > 0).collect();
    let d = diagnose_file(&p, with_data.len(), &Thresholds::default(), &mut |_, _| {}).unwrap();
    let got: Vec<u64> = d.flows.iter().map(|(n, _)| *n as u64 - 1).collect();
    assert_eq!(got, with_data);
    for ((n, f), r) in d.flows.iter().zip(&d.diagnosis.flows) {
        assert_eq!(r.flow, *n);
        assert_eq!(f.sides[0].bytes, u64::from(busy(*n as u64 - 1)));
    }
    assert!(d.table.summaries().all(|s| s.client_bytes == 0));
}

/// Under the limit, the two-pass diagnosis is the whole-capture one.
#[test]
fn under_the_limit_the_result_is_the_whole_capture_diagnosis() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("few.pcap");
    write(&p, 50, |i| (i * 7 % 13) as u16);
    let whole = read_file(&p).unwrap();
    let (a, _) = diagnose(&whole, &Thresholds::default());
    let b = diagnose_file(&p, 50, &Thresholds::default(), &mut |_, _| {}).unwrap();
    assert!(b.diagnosis.summarised.is_none());
    assert_eq!(
        serde_json::to_value(&a).unwrap(),
        serde_json::to_value(&b.diagnosis).unwrap()
    );
    // With a limit of 10, the ten analysed are the same reports as before.
    let c = diagnose_file(&p, 10, &Thresholds::default(), &mut |_, _| {}).unwrap();
    assert_eq!(c.diagnosis.flows.len(), 10);
    for r in &c.diagnosis.flows {
        assert_eq!(
            serde_json::to_value(r).unwrap(),
            serde_json::to_value(&a.flows[r.flow - 1]).unwrap()
        );
    }
}

/// The flows analysed hold a bounded number of segments: of the busiest
/// `max_flows`, those that do not fit are summarised and counted as too big.
#[test]
fn the_segments_analysed_are_bounded_too() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("flood.pcap");
    write(&p, 1_000, |_| 0);
    let mut t = FlowTable::survey(&p, &mut |_| {}).unwrap();
    t.select_busiest_within(100, 40);
    let sel = t.read_selected(&p, &mut |_| {}).unwrap();
    let kept: usize = sel.flows.iter().map(|(_, f)| f.segs.len()).sum();
    assert_eq!((sel.flows.len(), kept), (40, 40));
    let s = t.summarised(100).unwrap();
    assert_eq!((s.flows, s.too_big, s.max_segments), (960, 60, 40));
    assert_eq!(t.summaries().count(), 960);
}

/// Past the bound on flows tracked, a clear error, not more memory.
#[test]
fn more_address_pairs_than_the_bound_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("flood.pcap");
    write(&p, 5_000, |_| 0);
    let e = FlowTable::survey_with(&p, 4_000, &mut |_| {}).unwrap_err();
    assert!(
        matches!(
            e,
            CaptureError::TooManyFlows {
                limit: 4_000,
                frames: 4_001
            }
        ),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("more than 4000 TCP flows") && msg.contains("editcap"),
        "{msg}"
    );
    assert!(FlowTable::survey_with(&p, 5_000, &mut |_| {}).is_ok());
}

/// A pipe cannot be read twice: said so, not a wrong answer.
#[test]
fn a_pipe_is_refused_with_the_reason() {
    let e = diagnose_file(
        Path::new("/dev/null"),
        10,
        &Thresholds::default(),
        &mut |_, _| {},
    )
    .err()
    .expect("refused");
    assert!(e.to_string().contains("not a regular file"), "{e}");
}
