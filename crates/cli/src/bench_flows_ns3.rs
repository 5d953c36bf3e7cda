//! `tinygram bench sim --flows N --against ns3`: the many-flow request/response
//! benchmark in both simulators (ns-3's side is `benches/ns3/flows.cc`, the
//! same dumbbell, workload and TCP settings), interleaved over rounds, with
//! the ratio of their CPU times for the same transactions.

use crate::bench::{median, min, ns3_program, ns3_value, run_ns3_program, NS3_FLOWS};
use std::path::Path;
use std::process::ExitCode;
use tinygram_sim::world::thousands;

/// One simulator's run of the workload.
#[derive(Clone, Debug, PartialEq)]
struct Side {
    wall_s: f64,
    cpu_s: f64,
    segments: u64,
    transactions: u64,
}

impl Side {
    fn us_per_segment(&self) -> f64 {
        self.cpu_s * 1e6 / self.segments.max(1) as f64
    }
}

/// tinygram's run; `Err` unless every transaction completed with intact bytes.
fn run_tinygram(flows: u64, requests: u64, look: Option<bool>) -> Result<Side, String> {
    let (r, wall, cpu, _) = crate::flows::run_bench(flows, requests, look)?;
    if !(r.finished && r.integrity_ok) || r.transactions < flows * requests {
        return Err(format!(
            "tinygram's run did not finish intact ({} of {} transactions, integrity {})",
            r.transactions,
            flows * requests,
            if r.integrity_ok { "ok" } else { "FAILED" }
        ));
    }
    Ok(Side {
        wall_s: wall,
        cpu_s: cpu,
        segments: r.segments,
        transactions: r.transactions,
    })
}

/// Reads the ns-3 program's output; every field must be there and every
/// transaction must have completed.
fn parse_ns3(stdout: &str, want: u64) -> Result<Side, String> {
    let count = |k: &str| ns3_value::<u64>(stdout, k, "a count");
    let secs = |k: &str| ns3_value::<f64>(stdout, k, "a number");
    let transactions = count("transactions")?;
    if transactions < want {
        return Err(format!(
            "ns-3 completed {transactions} of {want} transactions: the run did not finish"
        ));
    }
    Ok(Side {
        wall_s: secs("wall_s")?,
        cpu_s: secs("cpu_s")?,
        segments: count("segments")?,
        transactions,
    })
}

/// Runs both simulators `rounds` times, alternating which goes first, and
/// prints each round, the medians and the ratio's minimum and median.
pub fn against_ns3(
    flows: u64,
    requests: u64,
    rounds: u32,
    ns3_bin: Option<&Path>,
    look: Option<bool>,
) -> ExitCode {
    if rounds == 0 {
        eprintln!("error: --rounds must be at least 1");
        return ExitCode::from(2);
    }
    let bin = match ns3_program(ns3_bin, &NS3_FLOWS) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match compare(flows, requests, rounds, &bin, look) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn compare(
    flows: u64,
    requests: u64,
    rounds: u32,
    bin: &Path,
    look: Option<bool>,
) -> Result<(), String> {
    eprintln!(
        "bench sim --flows {flows} --against ns3: request/response 100 B / 100 B, {requests} per flow, \
         1 s think, over a 10 Gbps, 1 ms bottleneck; {rounds} interleaved rounds"
    );
    eprintln!("ns-3 program: {}", bin.display());
    let args = [format!("--flows={flows}"), format!("--requests={requests}")];
    let want = flows * requests;
    let ns3 = || -> Result<Side, String> { parse_ns3(&run_ns3_program(bin, &args)?, want) };
    // See `bench::warmed`: the timed run follows an untimed one.
    let ours_warm = || crate::bench::warmed(|| run_tinygram(flows, requests, look));
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate the order so neither side always runs on a warmer machine.
        let (t, n) = if round % 2 == 0 {
            let t = ours_warm()?;
            (t, ns3()?)
        } else {
            let n = ns3()?;
            (ours_warm()?, n)
        };
        println!(
            "round {:>2}: tinygram CPU {:.3} s (wall {:.3} s), ns-3 CPU {:.3} s (wall {:.3} s): {:.1}x CPU",
            round + 1,
            t.cpu_s,
            t.wall_s,
            n.cpu_s,
            n.wall_s,
            n.cpu_s / t.cpu_s
        );
        ours.push(t);
        theirs.push(n);
    }
    let cpu = |v: &[Side]| v.iter().map(|s| s.cpu_s).collect::<Vec<_>>();
    let per_seg = |v: &[Side]| v.iter().map(Side::us_per_segment).collect::<Vec<_>>();
    for (name, v) in [("tinygram", &ours), ("ns-3", &theirs)] {
        println!(
            "{name:<9} median CPU {:.3} s; {} segments, {} transactions; {:.3} us CPU per segment",
            median(&cpu(v)),
            thousands(v[0].segments),
            thousands(v[0].transactions),
            median(&per_seg(v))
        );
    }
    let ratio = |f: fn(&Side) -> f64| -> Vec<f64> {
        ours.iter().zip(&theirs).map(|(t, n)| f(n) / f(t)).collect()
    };
    let whole = ratio(|s| s.cpu_s);
    let seg = ratio(Side::us_per_segment);
    println!(
        "ratio ns-3/tinygram over {rounds} rounds, CPU for the same {} transactions: median {:.1}x, min {:.1}x; per segment: median {:.1}x, min {:.1}x",
        thousands(want),
        median(&whole),
        min(&whole),
        median(&seg),
        min(&seg)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns3_output_is_checked() {
        let ok = "segments 37000\ntransactions 10000\nsim_time_s 11.02\nwall_s 2.5\ncpu_s 2.1\n";
        let s = parse_ns3(ok, 10_000).unwrap();
        assert_eq!((s.segments, s.transactions), (37_000, 10_000));
        assert_eq!(s.cpu_s, 2.1);
        let short = parse_ns3(ok, 10_001).unwrap_err();
        assert!(short.contains("10000 of 10001"), "{short}");
        let missing = parse_ns3("transactions 5\nwall_s 1\n", 5).unwrap_err();
        assert!(missing.contains("cpu_s"), "{missing}");
        let bad = parse_ns3(&ok.replace("37000", "lots"), 10_000).unwrap_err();
        assert!(bad.contains("\"segments\" is not a count"), "{bad}");
    }

    /// Both sides must run one workload: a change to one is a change to both.
    #[test]
    fn both_sides_run_the_same_workload() {
        let ns3 = NS3_FLOWS.source;
        let ours = crate::flows::bench_text(1000, 10);
        for (theirs, mine) in [
            ("kRequest = 100;", "request = [100]"),
            ("kResponse = 100;", "response = [100]"),
            ("g_think = Seconds(1);", "think = \"1s\""),
            ("StringValue(\"1ms\")", "delay = \"1ms\""),
            ("StringValue(\"10Gbps\")", "rate = \"10Gbps\""),
            ("QueueSize(\"64MB\")", "queue = \"64MB\""),
            ("kPortsPerHost = 60000;", "\"c1\""),
        ] {
            assert!(ns3.contains(theirs), "flows.cc lacks {theirs}");
            assert!(ours.contains(mine), "the tinygram scenario lacks {mine}");
        }
    }
}
