//! `tinygram run` of a many-flow scenario (`[bottleneck]`, `[[flows]]`), and
//! `tinygram bench sim --flows N`.

use crate::output::sig3;
use std::cell::RefCell;
use std::fmt::Write;
use std::io::{self, Write as _};
use std::path::Path;
use std::process::ExitCode;
use std::rc::Rc;
use tinygram_sim::flows::{FlowSim, LookAhead};
use tinygram_sim::metrics::{FlowResult, FlowsResult, Tail};
use tinygram_sim::pcap::{host_ip, FlowCapture};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::thousands;

/// Runs a many-flow scenario, showing a progress bar on stderr for runs that take a while.
pub fn run_with_progress(sim: &mut FlowSim, quiet: bool) -> FlowsResult {
    crate::output::with_progress(quiet, |progress| sim.run(progress))
}

fn tail(t: &Tail) -> String {
    if t.samples == 0 {
        return "-".to_string();
    }
    format!(
        "p50 {} / p99 {} / p99.9 {} / max {} ms",
        sig3(t.p50),
        sig3(t.p99),
        sig3(t.p999),
        sig3(t.max)
    )
}

fn rate(bytes_per_s: f64) -> String {
    let bits = bytes_per_s * 8.0;
    if bits >= 1e9 {
        format!("{:.2} Gbit/s", bits / 1e9)
    } else if bits >= 1e6 {
        format!("{:.2} Mbit/s", bits / 1e6)
    } else {
        format!("{:.1} kbit/s", bits / 1e3)
    }
}

fn flow_line(f: &FlowResult) -> String {
    let p = &f.completion_ms;
    let completion = if p.is_empty() {
        "-".to_string()
    } else {
        format!("p50 {} p99 {} ms", sig3(p.p50), sig3(p.p99))
    };
    format!(
        "  #{:<6} {:<10} {:>22} -> {:<16} {:>6} tx  {:<26} {:>14}  holds {:<4} rexmit {:<4}{}",
        f.id,
        f.group,
        f.client,
        f.server,
        f.transactions,
        completion,
        rate(f.goodput_bytes_per_s),
        f.policy_holds,
        f.retransmits,
        match (&f.integrity_error, &f.error) {
            (Some(e), _) => format!("  INTEGRITY: {e}"),
            (None, Some(e)) => format!("  {e}"),
            _ => String::new(),
        }
    )
}

/// The human-readable summary of a many-flow run.
pub fn table(r: &FlowsResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} flows, {} done, {:.3} s simulated ({:?}), seed {}",
        r.name,
        thousands(r.flow_count),
        thousands(r.flows_done),
        r.sim_time_s,
        r.ended,
        r.seed
    );
    let _ = writeln!(
        s,
        "transactions {} ({:.1}/s), goodput {}, Jain fairness {:.4}",
        thousands(r.transactions),
        r.transactions_per_s,
        rate(r.goodput_bytes_per_s),
        r.jain_fairness
    );
    let _ = writeln!(s, "completion   {}", tail(&r.completion_ms));
    let _ = writeln!(s, "\ngroups:");
    for g in &r.groups {
        let _ = writeln!(
            s,
            "  {:<12} {:>7} flows {:>9} tx  {}  goodput {}  Jain {:.4}  holds {}  rexmit {}{}",
            g.name,
            thousands(g.flows),
            thousands(g.transactions),
            tail(&g.completion_ms),
            rate(g.goodput_bytes_per_s),
            g.jain_fairness,
            thousands(g.policy_holds),
            thousands(g.retransmits),
            if g.integrity_failures > 0 {
                format!("  {} FAILED integrity", g.integrity_failures)
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(s, "\nbottleneck queues:");
    for q in &r.queues {
        let d = &q.sojourn_ms;
        let _ = writeln!(
            s,
            "  {:<17} {:<9} sent {:>9}  dropped {:>7} full + {:>7} AQM  marked {:>7}  max {} B  delay p50 {} p99 {} ms",
            q.direction,
            q.qdisc,
            thousands(q.dequeued),
            thousands(q.dropped_overflow),
            thousands(q.dropped_aqm),
            thousands(q.marked),
            thousands(q.max_bytes as u64),
            sig3(d.p50),
            sig3(d.p99)
        );
    }
    let access: u64 = r
        .access_links
        .iter()
        .map(|l| l.dropped_queue + l.dropped_loss + l.dropped_ber)
        .sum();
    let _ = writeln!(
        s,
        "  access links: {} frames lost; {} RSTs sent for segments to no connection",
        thousands(access),
        thousands(r.rsts_sent)
    );
    if let Some(l) = &r.listen {
        let _ = writeln!(
            s,
            "  listeners past their backlog: {} SYN cookies sent, {} accepted, {} rejected; {} SYNs dropped; at most {} half-open; {} flood SYNs",
            thousands(l.syn_cookies_sent),
            thousands(l.syn_cookies_accepted),
            thousands(l.syn_cookies_rejected),
            thousands(l.syns_dropped),
            thousands(l.most_half_open),
            thousands(l.flood_syns)
        );
    }
    let _ = writeln!(
        s,
        "\nworst flows (integrity failures, slowest p99, least goodput):"
    );
    for f in &r.worst_flows {
        let _ = writeln!(s, "{}", flow_line(f));
    }
    let _ = writeln!(
        s,
        "\nintegrity    {}",
        match &r.integrity_error {
            None => "ok (every byte of every flow delivered once, in order)".to_string(),
            Some(e) => format!("FAILED: {e}"),
        }
    );
    s
}

/// `--explain` over many flows: where the send policy held data, summed over
/// all flows and per group, and the flows that held most.
pub fn explain(r: &FlowsResult) -> String {
    let mut s = String::from("\nexplain: send-policy holds and delayed ACKs over all flows\n");
    let flows: u64 = r.flow_count.max(1);
    let _ = writeln!(
        s,
        "  {} holds in all ({:.2} per flow)",
        thousands(r.policy_holds),
        r.policy_holds as f64 / flows as f64
    );
    for g in &r.groups {
        let _ = writeln!(
            s,
            "  {:<12} {} holds ({:.2} per flow), completion {}",
            g.name,
            thousands(g.policy_holds),
            g.policy_holds as f64 / g.flows.max(1) as f64,
            tail(&g.completion_ms)
        );
    }
    let mut worst: Vec<&FlowResult> = r.worst_flows.iter().collect();
    if let Some(all) = &r.flows {
        worst = all.iter().collect();
    }
    worst.sort_by(|a, b| {
        (b.policy_holds + b.delack_timer_fired)
            .cmp(&(a.policy_holds + a.delack_timer_fired))
            .then(a.id.cmp(&b.id))
    });
    let _ = writeln!(
        s,
        "  flows holding most (policy holds + delayed-ACK timer expiries):"
    );
    for f in worst.iter().take(5) {
        let _ = writeln!(
            s,
            "    #{} {} {}: {} holds, {} delayed-ACK timeouts, p99 {} ms",
            f.id,
            f.group,
            f.client,
            f.policy_holds,
            f.delack_timer_fired,
            sig3(f.completion_ms.p99)
        );
    }
    s.push_str("  (run one flow's group as a two-host scenario with --explain for the hold-by-hold trace)\n");
    s
}

/// `tinygram run` of a many-flow scenario.
pub fn run(
    mut sim: FlowSim,
    json: bool,
    quiet: bool,
    explain_holds: bool,
    pcap: Option<&Path>,
) -> ExitCode {
    let capture = match pcap.map(|p| start_capture(&mut sim, p, quiet)).transpose() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let r = run_with_progress(&mut sim, quiet || json);
    if let (Some(capture), Some(path)) = (capture, pcap) {
        drop(sim); // releases the tap's share of the capture
        let frames = Rc::try_unwrap(capture)
            .map_err(|_| "the capture is still shared".to_string())
            .and_then(|c| c.into_inner().finish().map_err(|e| e.to_string()));
        match frames {
            Ok(n) => {
                if !quiet {
                    eprintln!(
                        "pcap: {} frames at the bottleneck -> {}",
                        thousands(n),
                        path.display()
                    );
                }
            }
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if json {
        match serde_json::to_string_pretty(&r) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: cannot encode the result as JSON: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", table(&r));
    }
    if explain_holds {
        print!("{}", explain(&r));
    }
    if r.integrity_ok {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "error: data integrity check failed: {}",
            r.integrity_error
                .as_deref()
                .unwrap_or("a byte did not match")
        );
        ExitCode::FAILURE
    }
}

/// The built-in many-flow benchmark: `flows` request/response connections
/// (100-byte request, 100-byte response after 1 s of think time, `requests`
/// each), opened evenly over the first second so the load stays smooth (about
/// 2 x `flows` segments per simulated second), over a 10 Gbps bottleneck;
/// spread over enough client hosts for the ports.
pub fn bench_text(flows: u64, requests: u64) -> String {
    let hosts = flows.div_ceil(60_000).max(1);
    let names: Vec<String> = (1..=hosts).map(|i| format!("\"c{i}\"")).collect();
    let interval_ns = (1_000_000_000 / flows.max(1)).max(1);
    let duration_s = requests.saturating_mul(2).saturating_add(60);
    format!(
        r#"
name = "bench-flows"
seed = 1
duration = "{duration_s}s"

[link]
rate = "10Gbps"
queue = "64MB"

[bottleneck]
rate = "10Gbps"
delay = "1ms"
queue = "64MB"

[[flows]]
count = {flows}
client_hosts = [{}]
server_host = "server"
spread = "uniform"
interval = "{interval_ns}ns"
workload = {{ request = [100], response = [100], requests = {requests}, think = "1s" }}
"#,
        names.join(", ")
    )
}

/// Resident memory (VmRSS) or its peak (VmHWM) of this process in KiB.
fn status_kib(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Engine state per idle established connection, buffers excluded: the
/// `Connection` struct's size, and the resident memory `n` handshaken pairs
/// actually take (heap allocations included), per connection.
pub fn idle_connection_bytes(n: usize) -> (usize, Option<f64>) {
    use tinygram_proto::{Config, Connection, Instant, SeqNumber};
    let size = std::mem::size_of::<Connection>();
    let before = status_kib("VmRSS:");
    let t = Instant::ZERO;
    let mut conns = Vec::with_capacity(2 * n);
    let mut buf = Vec::new();
    // One host's settings, shared by its connections as the simulator's are.
    let cfg = std::sync::Arc::new(Config::default());
    for i in 0..n {
        let port = 1024 + (i % 60_000) as u16;
        let mut c = Connection::connect(
            std::sync::Arc::clone(&cfg),
            port,
            7,
            move |_: Instant, _: u16, _: u16| SeqNumber(1),
            t,
        );
        let mut s = Connection::listen(
            std::sync::Arc::clone(&cfg),
            7,
            move |_: Instant, _: u16, _: u16| SeqNumber(1000),
        );
        // SYN, SYN-ACK, ACK.
        for _ in 0..2 {
            while let Some(seg) = c.poll_transmit(t, &mut buf) {
                s.handle_segment(t, &seg, &buf);
            }
            while let Some(seg) = s.poll_transmit(t, &mut buf) {
                c.handle_segment(t, &seg, &buf);
            }
        }
        conns.push(c);
        conns.push(s);
    }
    let established = conns
        .iter()
        .all(|c| c.state() == tinygram_proto::State::Established);
    let after = status_kib("VmRSS:");
    let measured = match (before, after, established) {
        (Some(b), Some(a), true) => Some((a.saturating_sub(b) * 1024) as f64 / (2 * n) as f64),
        _ => None,
    };
    drop(conns);
    (size, measured)
}

/// A bottleneck capture being written (shared with the simulator's tap).
type SharedCapture = Rc<RefCell<FlowCapture<std::io::BufWriter<std::fs::File>>>>;

/// Creates `path` and has every packet on the bottleneck written to it;
/// names the hosts' capture addresses on stderr.
fn start_capture(sim: &mut FlowSim, path: &Path, quiet: bool) -> Result<SharedCapture, String> {
    let f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let capture = FlowCapture::new(std::io::BufWriter::new(f))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let hosts: Vec<String> = sim
        .host_names()
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let ip = host_ip(i as u32);
            format!("{name} {}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3])
        })
        .collect();
    if !quiet {
        eprintln!("pcap: hosts {}", hosts.join(", "));
    }
    let shared = Rc::new(RefCell::new(capture));
    let tap = Rc::clone(&shared);
    sim.set_tap(Box::new(move |f| {
        tap.borrow_mut()
            .record(f.at, f.src, f.dst, f.repr, f.payload, f.ecn);
    }));
    Ok(shared)
}

/// Runs of the one-flow reference; the median is the cost compared against.
const ONE_FLOW_RUNS: usize = 3;

/// One run of the many-flow benchmark: its result, the wall-clock and CPU
/// seconds it took (on a shared machine the thread's CPU time is the cost)
/// and whether it prefetched ahead. `look`: `--look-ahead` (`None`: the
/// simulator's rule).
pub(crate) fn run_bench(
    flows: u64,
    requests: u64,
    look: Option<bool>,
) -> Result<(FlowsResult, f64, f64, LookAhead), String> {
    let sc = Scenario::from_str(&bench_text(flows, requests), "<bench sim --flows>", &[])
        .map_err(|e| e.to_string())?;
    let mut sim = FlowSim::new(&sc);
    sim.force_look_ahead(look);
    let cpu0 = crate::bench::thread_cpu_s();
    let started = std::time::Instant::now();
    let r = sim.run(&mut |_, _| {});
    let wall = started.elapsed().as_secs_f64();
    Ok((
        r,
        wall,
        crate::bench::thread_cpu_s() - cpu0,
        sim.look_ahead(),
    ))
}

/// The look-ahead line: on or off, and the threshold it follows.
fn look_ahead_text(l: &LookAhead) -> String {
    let onoff = if l.on() { "on" } else { "off" };
    if l.forced.is_some() {
        return format!("{onoff} (set by --look-ahead)");
    }
    match (l.from, l.last_level_cache) {
        (None, _) => "off (two hosts)".to_string(),
        (Some(_), None) => format!("{onoff} (the last-level cache's size is unknown)"),
        (Some(from), Some(llc)) => format!(
            "{onoff}: {} endpoints, prefetching from {} ({} bytes of state each against half of the {} MiB last-level cache)",
            thousands(l.endpoints as u64),
            thousands(from as u64),
            thousands(l.per_endpoint),
            llc >> 20
        ),
    }
}

/// `tinygram bench sim --flows N --memory-layout`: the many-flow run alone,
/// with the addresses a memory trace needs printed before it starts and the
/// segment count after (the lines benches/endpoint-lines.sh reads).
pub fn memory_layout_run(flows: u64, requests: u64, look: Option<bool>) -> ExitCode {
    let sc = match Scenario::from_str(&bench_text(flows, requests), "<bench sim --flows>", &[]) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut sim = FlowSim::new(&sc);
    sim.force_look_ahead(look);
    let l = sim.memory_layout();
    // Each line in one write: a tracer interleaves its own lines with ours.
    let say = |line: String| {
        let _ = io::stderr().write_all(line.as_bytes());
    };
    say(format!(
        "tinygram-layout endpoints {:#x} {:#x} size {} events {:#x}\n",
        l.endpoints.start, l.endpoints.end, l.endpoint_size, l.event_counter
    ));
    let r = sim.run(&mut |_, _| {});
    if sim.memory_layout() != l {
        eprintln!("error: the endpoint table moved during the run");
        return ExitCode::FAILURE;
    }
    say(format!(
        "tinygram-layout segments {} events {} integrity {}\n",
        r.segments,
        r.events,
        if r.integrity_ok { "ok" } else { "FAILED" }
    ));
    ExitCode::SUCCESS
}

/// `tinygram bench sim --flows N` (`look`: `--look-ahead`, for the many-flow run).
pub fn bench(flows: u64, requests: u64, look: Option<bool>) -> ExitCode {
    eprintln!(
        "bench sim --flows {flows}: request/response 100 B / 100 B, {requests} per flow, 1 s think, over a 10 Gbps, 1 ms bottleneck"
    );
    // First, in a fresh heap, so freed memory of the runs does not hide it.
    let (size, measured) = idle_connection_bytes(10_000);
    let (r, wall, cpu, look) = match run_bench(flows, requests, look) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let peak = status_kib("VmHWM:");
    // The same workload on one flow, as many segments: the cost to compare
    // with. It is short and its time swings from run to run on a shared
    // machine, so it runs three times and the median is taken.
    let mut ones = Vec::new();
    for _ in 0..ONE_FLOW_RUNS {
        match run_bench(1, (flows * requests).min(200_000), None) {
            Ok(x) => ones.push(x),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let one_walls: Vec<f64> = ones.iter().map(|o| o.1).collect();
    let one_cpus: Vec<f64> = ones.iter().map(|o| o.2).collect();
    let (one_wall, one_cpu) = (
        crate::bench::median(&one_walls),
        crate::bench::median(&one_cpus),
    );
    let ones_ok = ones.iter().all(|o| o.0.integrity_ok);
    let one = ones.swap_remove(0).0;
    let ns = |r: &FlowsResult, secs: f64| secs * 1e9 / r.segments.max(1) as f64;
    // Without a CPU clock (0), fall back to wall-clock time.
    let by_cpu = cpu > 0.0 && one_cpu > 0.0;
    let (cost, one_cost, one_all) = if by_cpu {
        (cpu, one_cpu, &one_cpus)
    } else {
        (wall, one_wall, &one_walls)
    };
    let one_range = (
        ns(&one, crate::bench::min(one_all)),
        ns(&one, one_all.iter().copied().fold(0.0, f64::max)),
    );
    println!("flows                 {}", thousands(r.flow_count));
    println!("simulated time        {:.3} s", r.sim_time_s);
    println!("wall-clock time       {wall:.3} s (CPU {cpu:.3} s)");
    println!("segments              {}", thousands(r.segments));
    println!("transactions          {}", thousands(r.transactions));
    println!("events                {}", thousands(r.events));
    println!(
        "speed                 {:.0} segments/s, {:.0} ns per segment ({:.0} ns CPU)",
        r.segments as f64 / wall,
        ns(&r, wall),
        ns(&r, cpu)
    );
    match peak {
        Some(k) => println!("peak memory           {:.1} MiB", k as f64 / 1024.0),
        None => println!("peak memory           unknown (no /proc/self/status)"),
    }
    println!(
        "one flow, same work   {} segments in {one_wall:.3} s: {:.0} ns per segment ({:.0} ns CPU), median of {ONE_FLOW_RUNS} runs ({:.0}-{:.0} ns)",
        thousands(one.segments),
        ns(&one, one_wall),
        ns(&one, one_cpu),
        one_range.0,
        one_range.1
    );
    println!(
        "cost ratio            {:.2}x per segment ({} flows / 1 flow, {} time)",
        ns(&r, cost) / ns(&one, one_cost),
        thousands(r.flow_count),
        if by_cpu { "CPU" } else { "wall-clock" }
    );
    println!(
        "idle connection       {size} bytes (size_of Connection); {} measured per established idle connection (10,000 pairs, RSS)",
        measured.map_or("unknown".to_string(), |b| format!("{b:.0} bytes"))
    );
    println!("look-ahead prefetch   {}", look_ahead_text(&look));
    let ok = r.integrity_ok && r.finished && ones_ok;
    println!("integrity             {}", if ok { "ok" } else { "FAILED" });
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_ahead_line_names_the_threshold() {
        let mut l = LookAhead {
            endpoints: 2_000,
            from: Some(3_084),
            forced: None,
            last_level_cache: Some(32 << 20),
            per_endpoint: 5_440,
        };
        assert_eq!(
            look_ahead_text(&l),
            "off: 2,000 endpoints, prefetching from 3,084 (5,440 bytes of state each against half of the 32 MiB last-level cache)"
        );
        l.endpoints = 20_000;
        assert!(look_ahead_text(&l).starts_with("on: 20,000 endpoints"));
        l.last_level_cache = None;
        l.from = Some(0);
        assert_eq!(
            look_ahead_text(&l),
            "on (the last-level cache's size is unknown)"
        );
        l.from = None;
        assert_eq!(look_ahead_text(&l), "off (two hosts)");
        l.from = Some(usize::MAX);
        l.forced = Some(false);
        assert_eq!(look_ahead_text(&l), "off (set by --look-ahead)");
    }

    #[test]
    fn bench_scenario_spreads_ports_over_hosts() {
        let sc = Scenario::from_str(&bench_text(100_000, 1), "<t>", &[]).unwrap();
        let t = sc.topology.unwrap();
        assert_eq!(t.connections(), 100_000);
        assert_eq!(t.groups[0].client_hosts, ["c1", "c2"]);
    }

    #[test]
    fn small_bench_run_is_whole() {
        let sc = Scenario::from_str(&bench_text(50, 3), "<t>", &[]).unwrap();
        let r = tinygram_sim::flows::run(&sc);
        assert!(r.integrity_ok && r.finished);
        assert_eq!(r.transactions, 150);
        let text = table(&r);
        assert!(text.contains("50 flows, 50 done"), "{text}");
        assert!(explain(&r).contains("holds"));
    }

    #[test]
    fn idle_connections_are_measured() {
        let (size, _) = idle_connection_bytes(100);
        assert!(size > 100);
    }
}
