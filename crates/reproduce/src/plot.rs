//! Time-sequence graphs of simulated runs: the frames a run captured, read
//! back as a capture, plotted with the sender's why-trace holds shaded.

use tinygram_analyze::timeseq::TimeSeq;
use tinygram_analyze::{diagnose, read_bytes, Thresholds};
use tinygram_report::holds_from_trace;
use tinygram_sim::pcap::{write_pcap, Vantage};
use tinygram_sim::world::Sim;

/// The tcptrace-style time-sequence graph of a finished run, for direction
/// `dir` (0 client to server, 1 back; `None`: the one that carried more
/// data), with the why-trace's holds shaded. Needs capture and trace enabled.
pub fn time_sequence(sim: &Sim, dir: Option<usize>) -> Result<TimeSeq, String> {
    let events = sim.capture().0;
    let bytes = |d: u8| -> usize {
        events
            .iter()
            .filter(|e| e.dir == d)
            .map(|e| e.payload_len)
            .sum()
    };
    let dir = dir.unwrap_or_else(|| usize::from(bytes(1) > bytes(0)));
    // Plot from the sender's own interface, where its why-trace's clock runs.
    let vantage = if dir == 0 {
        Vantage::Client
    } else {
        Vantage::Server
    };
    let mut buf = Vec::new();
    write_pcap(&mut buf, events, None, vantage).map_err(|e| e.to_string())?;
    let cap = read_bytes(&buf).map_err(|e| e.to_string())?;
    let (_, flows) = diagnose(&cap, &Thresholds::default());
    let Some(flow) = flows.first() else {
        return Err("nothing crossed the wire: no plot".into());
    };
    let mut ts = TimeSeq::of(flow, dir);
    let end = events.last().map(|e| e.at).unwrap_or_default();
    ts.holds = holds_from_trace(sim.traces()[dir], end);
    Ok(ts)
}
