//! `tinygram bench sim`: simulated data segments per wall-clock second.

use std::process::ExitCode;
use tinygram_sim::scenario::Scenario;
use tinygram_sim::world::Sim;

/// The built-in benchmark scenario: one bulk transfer over a fast, long link.
pub fn scenario_text(bytes: &str) -> String {
    format!(
        r#"
name = "bench-sim"
seed = 1
duration = "3600s"

[link]
rate = "10Gbps"
delay = "1ms"
queue = "64MiB"

[client]
mss = 1448
rcv_buf = "4MiB"
snd_buf = "4MiB"
options = ["wscale"]

[server]
mss = 1448
rcv_buf = "4MiB"
snd_buf = "4MiB"
options = ["wscale"]

[workload]
type = "bulk"
bytes = "{bytes}"
write_size = "64KiB"
"#
    )
}

/// Peak resident memory of this process in KiB (Linux VmHWM), if known.
fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn sim(bytes: &str) -> ExitCode {
    let sc = match Scenario::from_str(&scenario_text(bytes), "<bench sim>", &[]) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!("bench sim: bulk {bytes} over 10 Gbps, 1 ms one-way delay, MSS 1448, no capture");
    let mut sim = Sim::new(&sc);
    let started = std::time::Instant::now();
    let r = sim.run(&mut |_, _| {});
    let wall = started.elapsed().as_secs_f64();
    let segs = r.client.data_segments + r.server.data_segments;
    let all = r.client.segments + r.server.segments;
    println!("simulated time        {:.3} s", r.sim_time_s);
    println!("wall-clock time       {:.3} s", wall);
    println!("data segments         {segs}");
    println!("all segments          {all}");
    println!("events                {}", r.events);
    println!(
        "speed                 {:.0} data segments/s ({:.0} segments/s)",
        segs as f64 / wall,
        all as f64 / wall
    );
    println!(
        "simulated goodput     {:.2} Gbit/s",
        r.goodput_bytes_per_s * 8.0 / 1e9
    );
    match peak_rss_kib() {
        Some(k) => println!("peak memory           {:.1} MiB", k as f64 / 1024.0),
        None => println!("peak memory           unknown (no /proc/self/status)"),
    }
    println!(
        "integrity             {}",
        if r.integrity_ok { "ok" } else { "FAILED" }
    );
    if r.finished && r.integrity_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
