//! Human-readable output of a run, and the policy list.

use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write;
use tinygram_proto::policy::{AckPolicyKind, SendPolicyKind};
use tinygram_proto::Instant;
use tinygram_sim::metrics::{HostResult, RunEnd, RunResult};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::{thousands, Sim};

/// Runs `sc`, showing a progress bar on stderr for runs that take a while.
pub fn run_with_progress(sim: &mut Sim, quiet: bool) -> RunResult {
    with_progress(quiet, |progress| sim.run(progress))
}

/// Calls `run` with a progress callback (now, end of the run) that draws a
/// bar of simulated time on stderr once the run has taken half a second;
/// `quiet`: no bar.
pub fn with_progress<R>(quiet: bool, run: impl FnOnce(&mut dyn FnMut(Instant, Instant)) -> R) -> R {
    if quiet {
        return run(&mut |_, _| {});
    }
    let bar = ProgressBar::hidden();
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulated {msg} [{wide_bar}] {elapsed}")
            .expect("valid template"),
    );
    let mut shown = false;
    let started = std::time::Instant::now();
    let result = run(&mut |now, end| {
        if !shown && started.elapsed().as_millis() > 500 {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            shown = true;
        }
        bar.set_length(end.as_micros().max(1));
        bar.set_position(now.as_micros());
        bar.set_message(format!("{:.3} s", now.as_secs_f64()));
    });
    bar.finish_and_clear();
    result
}

/// `x` to 3 significant digits, the precision of the p50/p99 completion
/// times (`LatencyHistogram`): 201, 12.3, 1.23, 0.0512.
pub fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.decimals$}")
}

fn si(x: f64, unit: &str) -> String {
    let (v, p) = if x >= 1e9 {
        (x / 1e9, "G")
    } else if x >= 1e6 {
        (x / 1e6, "M")
    } else if x >= 1e3 {
        (x / 1e3, "k")
    } else {
        (x, "")
    };
    format!("{v:.2} {p}{unit}")
}

/// One row of the per-host table: how to print a host's value.
type Column = fn(&HostResult) -> String;

/// The default output of `tinygram run`: a short table with units.
pub fn table(sc: &Scenario, r: &RunResult) -> String {
    let mut s = String::new();
    let ended = match r.ended {
        RunEnd::Finished => "workload finished".to_string(),
        RunEnd::DurationCap => "stopped at the duration cap".to_string(),
        RunEnd::Idle => format!(
            "nothing left to do ({})",
            r.ended_why.as_deref().unwrap_or("no event pending")
        ),
    };
    let _ = writeln!(
        s,
        "{} (seed {}): {:.3} s simulated, {ended}",
        r.name, sc.seed, r.sim_time_s,
    );
    let _ = writeln!(
        s,
        "  transactions   {} ({:.2}/s)",
        r.transactions, r.transactions_per_s
    );
    let c = &r.completion_ms;
    if c.is_empty() {
        let _ = writeln!(s, "  completion     n/a (no transaction completed)");
    } else {
        let _ = writeln!(
            s,
            "  completion     p50 {} ms   p99 {} ms   max {:.3} ms",
            sig3(c.p50),
            sig3(c.p99),
            c.max
        );
    }
    let _ = writeln!(
        s,
        "  goodput        {} ({})",
        si(r.goodput_bytes_per_s, "B/s"),
        si(r.goodput_bytes_per_s * 8.0, "bit/s")
    );
    let d = &r.delivery;
    let in_flight = d.client_to_server.undelivered() + d.server_to_client.undelivered();
    let integrity = match &r.integrity_error {
        _ if r.integrity_ok && in_flight == 0 => "ok (every byte checked)".to_string(),
        _ if r.integrity_ok => format!(
            "ok (every byte read checked; {} written bytes still in flight when the run stopped)",
            thousands(in_flight)
        ),
        Some(why) => format!("FAILED: {why}"),
        None => "FAILED".to_string(),
    };
    let _ = writeln!(s, "  integrity      {integrity}");
    let _ = writeln!(s, "  {:<22}{:>14}{:>14}", "", "client", "server");
    let rows: [(&str, Column); 12] = [
        ("data segments", |h| h.data_segments.to_string()),
        ("small segments (<MSS)", |h| h.small_segments.to_string()),
        ("pure ACKs", |h| h.pure_acks.to_string()),
        ("retransmits", |h| h.retransmits.to_string()),
        ("timeouts", |h| h.timeouts.to_string()),
        ("fast retransmits", |h| h.fast_retransmits.to_string()),
        ("delayed-ACK timer", |h| h.delack_timer_fired.to_string()),
        ("policy holds", |h| h.policy_holds.to_string()),
        ("window probes", |h| h.window_probes.to_string()),
        ("wire bytes", |h| h.wire_bytes.to_string()),
        ("effective MSS", |h| h.mss.to_string()),
        ("state at end", |h| h.state.clone()),
    ];
    for (name, f) in rows {
        let _ = writeln!(s, "  {:<22}{:>14}{:>14}", name, f(&r.client), f(&r.server));
    }
    for (side, h) in [("client", &r.client), ("server", &r.server)] {
        if let Some(e) = &h.error {
            let _ = writeln!(s, "  {side} connection error: {e}");
        }
    }
    s
}

/// `tinygram policies`.
pub fn policies() -> String {
    let mut s = String::from("Send policies (client.send_policy / server.send_policy):\n");
    for (name, doc) in SendPolicyKind::ALL {
        let _ = writeln!(s, "  {name:<18} {doc}");
    }
    s += "\nACK policies (client.ack_policy / server.ack_policy):\n";
    for (name, doc) in AckPolicyKind::ALL {
        let _ = writeln!(s, "  {name:<18} {doc}");
    }
    let _ = writeln!(
        s,
        "\nDefaults: send_policy = {}, ack_policy = {}",
        SendPolicyKind::default(),
        AckPolicyKind::default()
    );
    s
}

/// `tinygram profiles [NAME]`: every profile with its settings and sources, or one.
pub fn profiles(name: Option<&str>) -> Result<String, String> {
    use tinygram_proto::profile::{find, PROFILES};
    let chosen: Vec<_> = match name {
        Some(n) => vec![find(n)?],
        None => PROFILES.iter().collect(),
    };
    let mut s = String::new();
    if name.is_none() {
        s += "Stack profiles: `profile = \"NAME\"` in [client]/[server] (or --set client.profile=NAME),\n\
              `tinygram drill --stack NAME`, `tinygram tun --set profile=NAME`. A profile is applied\n\
              before the host's own keys, which override it. Unset keys keep the engine's defaults\n\
              (`tinygram scenario`); \"assumption:\" marks a value no source documents.\n\n";
    }
    for (i, p) in chosen.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        let _ = write!(s, "{p}");
    }
    Ok(s)
}

#[cfg(test)]
mod profiles_tests {
    #[test]
    fn lists_every_profile_and_shows_one_with_sources() {
        let all = super::profiles(None).unwrap();
        for p in tinygram_proto::profile::PROFILES {
            assert!(all.contains(&format!("\n{}", p.name)), "{} missing", p.name);
        }
        let one = super::profiles(Some("linux")).unwrap();
        assert!(one.starts_with("linux: "), "{one}");
        assert!(one.contains("ack_policy = quickack"), "{one}");
        assert!(one.contains("tcp_input.c"), "{one}");
        let e = super::profiles(Some("freebds3")).unwrap_err();
        assert!(e.contains("unknown profile"), "{e}");
    }
}

/// `tinygram congestion`: every selectable congestion, slow-start and recovery module.
pub fn congestion() -> String {
    use tinygram_proto::cc::{
        ModuleInfo, CONGESTION_NAMES, RECOVERY_NAMES, SIGNAL_NAMES, SLOW_START_NAMES,
    };
    let mut s = String::new();
    let mut table = |title: &str, rows: &[ModuleInfo]| {
        let _ = writeln!(s, "{title}");
        for m in rows {
            let _ = writeln!(s, "  {:<12} {:<38} {}", m.name, m.rfc, m.about);
        }
        s.push('\n');
    };
    table(
        "Congestion control (congestion = \"...\"; drill: TCP_CONGESTION, net.ipv4.tcp_congestion_control):",
        &CONGESTION_NAMES,
    );
    table(
        "Slow start (slow_start = \"...\"; drill: TCP_TINYGRAM_SLOW_START):",
        &SLOW_START_NAMES,
    );
    table(
        "Loss recovery (recovery = [\"...\"]; drill: TCP_TINYGRAM_RECOVERY):",
        &RECOVERY_NAMES,
    );
    table(
        "Congestion signals (options = [\"ecn\"], loss_is = \"...\"; drill: ECE on the script's SYN or TCP_TINYGRAM_OPTIONS \"ecn\", TCP_TINYGRAM_LOSS_IS):",
        &SIGNAL_NAMES,
    );
    s += "Defaults: congestion = \"newreno\", slow_start = \"standard\", recovery = []; \
          drill --stack linux: cubic, hystart, prr, tlp (as the kernel's defaults)\n";
    s
}

#[cfg(test)]
mod sig3_tests {
    use super::sig3;

    #[test]
    fn sig3_keeps_three_significant_digits() {
        let got: Vec<String> = [201.0, 12.34, 1.23, 0.0512, 1234.0, 0.0]
            .into_iter()
            .map(sig3)
            .collect();
        assert_eq!(got, ["201", "12.3", "1.23", "0.0512", "1234", "0"]);
    }
}

/// The headline fields of an open run's table: (column title, result field).
const OPEN_COLUMNS: [(&str, &str, f64); 5] = [
    ("trans/s", "transactions_per_s", 1.0),
    ("p50 ms", "completion_ms.p50", 1.0),
    ("p99 ms", "completion_ms.p99", 1.0),
    ("max ms", "completion_ms.max", 1.0),
    ("goodput kB/s", "goodput_bytes_per_s", 1e-3),
];

/// `tinygram run` of a file with open values: one line per point (its
/// values and headline results), then each headline's distribution.
pub fn open_table(run: &tinygram_lab::space::OpenRun) -> String {
    let mut s = String::new();
    let keys: Vec<&str> = run.space.open.iter().map(|o| o.key.as_str()).collect();
    let _ = writeln!(s, "open values:");
    for o in &run.space.open {
        let _ = writeln!(s, "  {:<28} {}", o.key, o.spec.describe());
    }
    let widths: Vec<usize> = keys.iter().map(|k| k.len().max(8)).collect();
    let _ = write!(s, "\n ");
    for (k, w) in keys.iter().zip(&widths) {
        let _ = write!(s, " {k:>w$}");
    }
    for (title, _, _) in OPEN_COLUMNS {
        let _ = write!(s, " {title:>12}");
    }
    let _ = writeln!(s, "  integrity");
    let field = |r: &serde_json::Value, f: &str, k: f64| -> String {
        let mut v = r;
        for part in f.split('.') {
            v = &v[part];
        }
        v.as_f64().map_or_else(|| "-".to_string(), |x| sig3(x * k))
    };
    for (p, r) in &run.runs {
        let _ = write!(s, " ");
        for ((_, v), w) in p.sets.iter().zip(&widths) {
            let _ = write!(s, " {:>w$}", v.trim_matches('"'));
        }
        for (_, f, k) in OPEN_COLUMNS {
            let _ = write!(s, " {:>12}", field(r, f, k));
        }
        let ok = r["integrity_ok"] != false;
        let _ = writeln!(s, "  {}", if ok { "ok" } else { "FAILED" });
    }
    let d = run.distributions();
    let _ = writeln!(
        s,
        "\nover {} runs:          min       p10       p50       p90       max",
        run.runs.len()
    );
    for (title, f, k) in OPEN_COLUMNS {
        if let Some(x) = d.get(f) {
            let _ = writeln!(
                s,
                "  {title:<16} {:>9} {:>9} {:>9} {:>9} {:>9}",
                sig3(x.min * k),
                sig3(x.p10 * k),
                sig3(x.p50 * k),
                sig3(x.p90 * k),
                sig3(x.max * k)
            );
        }
    }
    s
}
