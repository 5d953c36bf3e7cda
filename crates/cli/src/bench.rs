//! `tinygram bench sim`: simulated data segments per wall-clock second, and
//! `--against ns3`: the same transfer in ns-3 (our program in `benches/ns3/`),
//! interleaved over rounds, with the ratio of the two simulators' times.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use tinygram_sim::scenario::Scenario;
use tinygram_sim::units::{fmt_size, parse_size};
use tinygram_sim::world::Sim;

/// One of our ns-3 programs, embedded so that `--against ns3` works from any
/// directory, and built with g++ against the system's ns-3 on first use.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ns3Program {
    /// The cached build's name prefix.
    pub(crate) name: &'static str,
    /// Where the source lives in the repository (for messages).
    pub(crate) path: &'static str,
    /// The program's source.
    pub(crate) source: &'static str,
}

/// The bulk transfer of `bench sim --against ns3`.
pub(crate) const NS3_BULK: Ns3Program = Ns3Program {
    name: "ns3-bulk",
    path: "benches/ns3/bulk.cc",
    source: include_str!("../../../benches/ns3/bulk.cc"),
};

/// The many-flow request/response dumbbell of `bench sim --flows N --against ns3`.
pub(crate) const NS3_FLOWS: Ns3Program = Ns3Program {
    name: "ns3-flows",
    path: "benches/ns3/flows.cc",
    source: include_str!("../../../benches/ns3/flows.cc"),
};
/// The ns-3 libraries the program links against (Debian's libns3-dev names).
const NS3_LIBS: &[&str] = &[
    "-lns3-core",
    "-lns3-network",
    "-lns3-internet",
    "-lns3-point-to-point",
    "-lns3-applications",
    "-lns3-traffic-control",
];

/// What `tinygram bench sim` transfers: one bulk transfer over a 10 Gb/s,
/// 1 ms link with raw framing and a 4.5 MB drop-tail queue, timestamps, SACK
/// and window scaling on both sides, as ns-3's bulk-send examples set up.
#[derive(Clone, Debug, PartialEq)]
pub struct BulkBench {
    /// Bytes to transfer.
    pub bytes: u64,
    /// Send and receive buffer of both sides.
    pub buf: u64,
    /// Size of each application write.
    pub write_size: u64,
    /// Probability a data frame is lost (client to server only).
    pub loss: f64,
}

/// Payload bytes of a full segment: MSS 1460 less the 12 bytes of the
/// timestamp option (RFC 6691 3), as ns-3's SegmentSize counts it.
pub const SEGMENT_PAYLOAD: u64 = 1448;

impl BulkBench {
    /// Parses the command line's sizes; errors name the option at fault.
    pub fn parse(bytes: &str, buf: &str, write_size: &str, loss: f64) -> Result<Self, String> {
        let size = |opt: &str, s: &str| -> Result<u64, String> {
            match parse_size(s) {
                Ok(0) => Err(format!("--{opt} must be positive")),
                Ok(n) => Ok(n),
                Err(e) => Err(format!("--{opt}: {e}")),
            }
        };
        let b = BulkBench {
            bytes: size("bytes", bytes)?,
            buf: size("buf", buf)?,
            write_size: size("write-size", write_size)?,
            loss,
        };
        if !(0.0..1.0).contains(&loss) {
            return Err(format!("--loss must be at least 0 and below 1, not {loss}"));
        }
        if b.buf > u64::from(u32::MAX) {
            return Err(format!(
                "--buf {} is too large: at most 4 GiB",
                fmt_size(b.buf)
            ));
        }
        Ok(b)
    }

    /// The scenario tinygram runs.
    pub fn scenario_text(&self) -> String {
        let BulkBench {
            bytes,
            buf,
            write_size,
            loss,
        } = self;
        format!(
            r#"
name = "bench-sim"
seed = 1
duration = "3600s"

[link]
rate = "10Gbps"
delay = "1ms"
queue = "4.5MB"
framing = "raw"

[link.forward]
loss = {loss:?}

[client]
mss = 1460
rcv_buf = {buf}
snd_buf = {buf}
options = ["wscale", "timestamps", "sack"]

[server]
mss = 1460
rcv_buf = {buf}
snd_buf = {buf}
options = ["wscale", "timestamps", "sack"]

[workload]
type = "bulk"
bytes = {bytes}
write_size = {write_size}
"#
        )
    }

    /// The same parameters for the ns-3 program.
    pub fn ns3_args(&self) -> Vec<String> {
        vec![
            format!("--bytes={}", self.bytes),
            format!("--buf={}", self.buf),
            format!("--writeSize={}", self.write_size),
            format!("--segmentSize={SEGMENT_PAYLOAD}"),
            format!("--loss={:?}", self.loss),
            "--rate=10Gbps".into(),
            "--delay=1ms".into(),
            "--queue=4500000B".into(),
        ]
    }

    fn describe(&self) -> String {
        let loss = if self.loss > 0.0 {
            format!(", loss {} on data", self.loss)
        } else {
            String::new()
        };
        format!(
            "bulk {} in {}-byte writes over 10 Gbps, 1 ms one-way delay, raw framing, 4.5 MB queue, \
             {} buffers, timestamps + SACK + window scaling, {SEGMENT_PAYLOAD}-byte segments{loss}",
            with_commas(self.bytes),
            self.write_size,
            fmt_size(self.buf)
        )
    }
}

/// `1234567` as `"1,234,567 bytes"`.
fn with_commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out + " bytes"
}

/// Peak resident memory of this process in KiB (Linux VmHWM), if known.
fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time of the calling thread, in seconds (0 where unknown).
pub(crate) fn thread_cpu_s() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the call's duration.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    0.0
}

/// One simulator's run: its times and what it sent.
#[derive(Clone, Debug)]
struct Side {
    wall_s: f64,
    cpu_s: f64,
    /// `cpu_s` split: the simulator's own work, and the kernel's on its behalf
    /// (page faults of fresh buffers, whose cost depends on what ran before).
    user_s: f64,
    sys_s: f64,
    data_segments: u64,
}

/// User and system CPU time of the calling thread, in seconds (0 where unknown).
fn thread_user_sys_s() -> (f64, f64) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid, writable rusage for the call's duration.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } == 0 {
            let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
            return (s(ru.ru_utime), s(ru.ru_stime));
        }
    }
    (0.0, 0.0)
}

/// Runs tinygram's side once; `Err` if the transfer did not finish intact.
fn run_tinygram(sc: &Scenario, verbose: bool) -> Result<Side, String> {
    let mut sim = Sim::new(sc);
    let cpu0 = thread_cpu_s();
    let (user0, sys0) = thread_user_sys_s();
    let started = std::time::Instant::now();
    let r = sim.run(&mut |_, _| {});
    let wall = started.elapsed().as_secs_f64();
    let cpu = thread_cpu_s() - cpu0;
    let (user1, sys1) = thread_user_sys_s();
    let segs = r.client.data_segments + r.server.data_segments;
    if verbose {
        let all = r.client.segments + r.server.segments;
        println!("simulated time        {:.3} s", r.sim_time_s);
        println!("wall-clock time       {:.3} s", wall);
        println!(
            "CPU time              {:.3} s (user {:.3} s, system {:.3} s)",
            cpu,
            user1 - user0,
            sys1 - sys0
        );
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
    }
    if r.finished && r.integrity_ok {
        Ok(Side {
            wall_s: wall,
            cpu_s: cpu,
            user_s: user1 - user0,
            sys_s: sys1 - sys0,
            data_segments: segs,
        })
    } else {
        Err(format!(
            "tinygram's transfer did not finish intact (finished: {}, integrity: {})",
            r.finished, r.integrity_ok
        ))
    }
}

/// Runs `run` once untimed and returns a second run. tinygram's side runs in
/// this process, right after the ns-3 process exits: memory it freed may
/// have gone back to the host (a virtual machine's free page reporting), and
/// the first touch of each page then faults in the hypervisor, which measured
/// up to 7x tinygram's whole system time. ns-3's times cover its
/// `Simulator::Run` only, after its setup has touched its memory; the
/// untimed run does that for tinygram.
pub(crate) fn warmed<T>(run: impl Fn() -> Result<T, String>) -> Result<T, String> {
    run()?;
    run()
}

/// Which simulator `--against` compares with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Against {
    /// ns-3 (3.37 or later, with its development headers: Debian's libns3-dev).
    Ns3,
}

/// `tinygram bench sim`'s options.
#[derive(Clone, Debug)]
pub struct SimArgs {
    pub bytes: String,
    pub buf: String,
    pub write_size: String,
    pub loss: f64,
    pub against: Option<Against>,
    pub rounds: u32,
    pub ns3_bin: Option<PathBuf>,
}

pub fn sim(args: &SimArgs) -> ExitCode {
    let bench = match BulkBench::parse(&args.bytes, &args.buf, &args.write_size, args.loss) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let sc = match Scenario::from_str(&bench.scenario_text(), "<bench sim>", &[]) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match args.against {
        None => {
            eprintln!("bench sim: {}, no capture", bench.describe());
            match run_tinygram(&sc, true) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some(Against::Ns3) => {
            if args.rounds == 0 {
                eprintln!("error: --rounds must be at least 1");
                return ExitCode::from(2);
            }
            let bin = match ns3_program(args.ns3_bin.as_deref(), &NS3_BULK) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            match against_ns3(&bench, &sc, &bin, args.rounds) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// Runs both simulators `rounds` times, alternating which goes first, and
/// prints each round, the medians, and the ratio's minimum and median.
fn against_ns3(bench: &BulkBench, sc: &Scenario, bin: &Path, rounds: u32) -> Result<(), String> {
    eprintln!(
        "bench sim --against ns3: {}; {rounds} interleaved rounds",
        bench.describe()
    );
    eprintln!("ns-3 program: {}", bin.display());
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let ours_warm = || warmed(|| run_tinygram(sc, false));
    for round in 0..rounds {
        // Alternate the order so neither side always runs on a warmer machine.
        let (t, n) = if round % 2 == 0 {
            let t = ours_warm()?;
            (t, run_ns3(bin, bench)?)
        } else {
            let n = run_ns3(bin, bench)?;
            (ours_warm()?, n)
        };
        println!(
            "round {:>2}: tinygram {:.3} s (CPU {:.3} s: user {:.3}, system {:.3}), ns-3 {:.3} s (CPU {:.3} s: user {:.3}, system {:.3}): {:.1}x wall, {:.1}x CPU, {:.1}x user CPU",
            round + 1,
            t.wall_s,
            t.cpu_s,
            t.user_s,
            t.sys_s,
            n.wall_s,
            n.cpu_s,
            n.user_s,
            n.sys_s,
            n.wall_s / t.wall_s,
            n.cpu_s / t.cpu_s,
            n.user_s / t.user_s.max(1e-9)
        );
        ours.push(t);
        theirs.push(n);
    }
    let col = |v: &[Side], f: fn(&Side) -> f64| v.iter().map(f).collect::<Vec<_>>();
    let ratios = |f: fn(&Side) -> f64| -> Vec<f64> {
        ours.iter().zip(&theirs).map(|(t, n)| f(n) / f(t)).collect()
    };
    let wall = |s: &Side| s.wall_s;
    let cpu = |s: &Side| s.cpu_s;
    println!(
        "tinygram  median {:.3} s wall, {:.3} s CPU; data segments {}",
        median(&col(&ours, wall)),
        median(&col(&ours, cpu)),
        ours[0].data_segments
    );
    println!(
        "ns-3      median {:.3} s wall, {:.3} s CPU; data segments {}",
        median(&col(&theirs, wall)),
        median(&col(&theirs, cpu)),
        theirs[0].data_segments
    );
    let (rw, rc) = (ratios(wall), ratios(cpu));
    println!(
        "ratio ns-3/tinygram over {rounds} rounds: wall median {:.1}x, min {:.1}x; CPU median {:.1}x, min {:.1}x",
        median(&rw),
        min(&rw),
        median(&rc),
        min(&rc)
    );
    // With loss the two simulators' random draws differ, so they may send
    // different numbers of segments: compare the time per data segment too.
    let per_seg = |f: fn(&Side) -> f64| -> Vec<f64> {
        ours.iter()
            .zip(&theirs)
            .map(|(t, n)| {
                (f(n) / n.data_segments.max(1) as f64) / (f(t) / t.data_segments.max(1) as f64)
            })
            .collect()
    };
    let user = |s: &Side| s.user_s;
    let (pw, pc, pu) = (per_seg(wall), per_seg(cpu), per_seg(user));
    let us_per_seg = |v: &[Side], f: fn(&Side) -> f64| {
        median(
            &v.iter()
                .map(|s| f(s) * 1e6 / s.data_segments.max(1) as f64)
                .collect::<Vec<_>>(),
        )
    };
    println!(
        "per data segment: tinygram {:.3} us CPU, ns-3 {:.2} us CPU; ratio wall median {:.1}x, min {:.1}x; CPU median {:.1}x, min {:.1}x",
        us_per_seg(&ours, cpu),
        us_per_seg(&theirs, cpu),
        median(&pw),
        min(&pw),
        median(&pc),
        min(&pc)
    );
    // System time is the kernel's (mostly faulting in fresh buffers) and
    // swings with what ran just before; user time is each simulator's own work.
    println!(
        "per data segment, user CPU only: tinygram {:.3} us, ns-3 {:.2} us; ratio median {:.1}x, min {:.1}x (system time: tinygram median {:.3} s, ns-3 {:.3} s)",
        us_per_seg(&ours, user),
        us_per_seg(&theirs, user),
        median(&pu),
        min(&pu),
        median(&col(&ours, |s| s.sys_s)),
        median(&col(&theirs, |s| s.sys_s))
    );
    let (a, b) = (ours[0].data_segments, theirs[0].data_segments);
    let full = bench.bytes.div_ceil(SEGMENT_PAYLOAD);
    println!(
        "both sent at least the {full} full segments the transfer needs: {}",
        if a >= full && b >= full { "yes" } else { "NO" }
    );
    Ok(())
}

/// The median of `v` (the mean of the middle two for an even count).
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The smallest of `v` (infinity for none).
pub(crate) fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Runs the ns-3 program once and reads its `key value` lines.
fn run_ns3(bin: &Path, bench: &BulkBench) -> Result<Side, String> {
    let stdout = run_ns3_program(bin, &bench.ns3_args())?;
    parse_ns3_output(&stdout, bench.bytes)
}

/// Runs an ns-3 program once with `args`; its standard output if it succeeded.
pub(crate) fn run_ns3_program(bin: &Path, args: &[String]) -> Result<String, String> {
    let out = Command::new(bin)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}{}",
            bin.display(),
            out.status,
            stdout.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(stdout.into_owned())
}

/// The value of the `key value` line `k` of an ns-3 program's output.
fn ns3_field<'a>(stdout: &'a str, k: &str) -> Result<&'a str, String> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(k)?.strip_prefix(' '))
        .map(str::trim)
        .ok_or_else(|| format!("the ns-3 program printed no {k:?} line: {stdout:?}"))
}

/// Field `k` of the ns-3 program's output read as a `T`; `what` names the
/// kind of value in the error ("a count", "a number").
pub(crate) fn ns3_value<T: std::str::FromStr>(
    stdout: &str,
    k: &str,
    what: &str,
) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    ns3_field(stdout, k)?
        .parse()
        .map_err(|e| format!("the ns-3 program's {k:?} is not {what}: {e}"))
}

/// Reads the ns-3 program's output; every field must be present and the
/// whole transfer must have arrived.
fn parse_ns3_output(stdout: &str, bytes: u64) -> Result<Side, String> {
    let num = |k: &str| ns3_value::<f64>(stdout, k, "a number");
    let received: u64 = ns3_value(stdout, "received", "a count")?;
    if received < bytes {
        return Err(format!(
            "ns-3 delivered {received} of {bytes} bytes: the transfer did not finish"
        ));
    }
    Ok(Side {
        wall_s: num("wall_s")?,
        cpu_s: num("cpu_s")?,
        user_s: num("user_s")?,
        sys_s: num("sys_s")?,
        data_segments: ns3_value(stdout, "data_segments", "a count")?,
    })
}

/// FNV-1a, a stable hash of the program's source to name its build.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Finds the ns-3 program: `explicit` if given, else a build of `prog`'s
/// embedded source cached under `$XDG_CACHE_HOME/tinygram` (or
/// `~/.cache/tinygram`), compiled with g++ against the system's ns-3 on first use.
pub(crate) fn ns3_program(explicit: Option<&Path>, prog: &Ns3Program) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("--ns3-bin {}: no such file", p.display()))
        };
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("tinygram");
    let hash = fnv1a(prog.source);
    let bin = cache.join(format!("{}-{hash:016x}", prog.name));
    if bin.is_file() {
        return Ok(bin);
    }
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let src = cache.join(format!("{}-{hash:016x}.cc", prog.name));
    std::fs::write(&src, prog.source)
        .map_err(|e| format!("cannot write {}: {e}", src.display()))?;
    eprintln!(
        "building the ns-3 program ({}) into {}",
        prog.path,
        bin.display()
    );
    let out = Command::new("g++")
        .args(["-O2", "-std=c++17", "-o"])
        .arg(&bin)
        .arg(&src)
        .args(NS3_LIBS)
        .output()
        .map_err(|e| {
            format!("cannot run g++ ({e}): install a C++ compiler and ns-3's headers, e.g. `sudo apt-get install g++ libns3-dev`")
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("ns3/") && err.contains("No such file") || err.contains("-lns3") {
            return Err(format!(
                "ns-3 is not installed: its headers or libraries were not found. On Debian or Ubuntu: \
                 `sudo apt-get install libns3-dev`; elsewhere build {} against your \
                 ns-3 and pass --ns3-bin PATH",
                prog.path
            ));
        }
        return Err(format!(
            "g++ could not build the ns-3 program:\n{}",
            err.lines().take(20).collect::<Vec<_>>().join("\n")
        ));
    }
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names_the_bad_option() {
        let e = BulkBench::parse("1GB", "lots", "1448", 0.0).unwrap_err();
        assert!(e.starts_with("--buf"), "{e}");
        let e = BulkBench::parse("0", "4MiB", "1448", 0.0).unwrap_err();
        assert!(e.contains("--bytes must be positive"), "{e}");
        let e = BulkBench::parse("1GB", "4MiB", "1448", 1.5).unwrap_err();
        assert!(e.contains("--loss"), "{e}");
        let b = BulkBench::parse("500MB", "128KiB", "1448", 0.001).unwrap();
        assert_eq!((b.bytes, b.buf, b.write_size), (500_000_000, 131_072, 1448));
    }

    /// Both simulators get the same numbers, and tinygram's scenario parses
    /// to what the ns-3 program is told.
    #[test]
    fn both_sides_get_the_same_parameters() {
        let b = BulkBench::parse("1GB", "128KiB", "1448", 0.001).unwrap();
        let sc = Scenario::from_str(&b.scenario_text(), "<t>", &[]).expect("valid");
        assert_eq!(sc.client.tcp.rcv_buf, 131_072);
        assert_eq!(sc.server.tcp.snd_buf, 131_072);
        assert_eq!(sc.forward.loss, 0.001);
        assert_eq!(sc.reverse.loss, 0.0);
        assert_eq!(sc.forward.queue_bytes, 4_500_000);
        assert_eq!((sc.forward.rate_bps, sc.reverse.rate_bps), (10e9, 10e9));
        assert!(sc.client.tcp.options.timestamps && sc.server.tcp.options.sack);
        let args = b.ns3_args();
        for want in [
            "--bytes=1000000000",
            "--buf=131072",
            "--writeSize=1448",
            "--segmentSize=1448",
            "--loss=0.001",
            "--queue=4500000B",
        ] {
            assert!(
                args.iter().any(|a| a == want),
                "{want} missing from {args:?}"
            );
        }
    }

    #[test]
    fn ns3_output_is_checked() {
        let ok =
            "data_segments 345305\nreceived 500000000\nsim_time_s 0.4\nwall_s 22.5\ncpu_s 22.0\nuser_s 21.5\nsys_s 0.5\n";
        let s = parse_ns3_output(ok, 500_000_000).unwrap();
        assert_eq!(s.data_segments, 345_305);
        assert_eq!(
            (s.wall_s, s.cpu_s, s.user_s, s.sys_s),
            (22.5, 22.0, 21.5, 0.5)
        );
        let short = ok.replace("received 500000000", "received 10");
        assert!(parse_ns3_output(&short, 500_000_000)
            .unwrap_err()
            .contains("did not finish"));
        let missing = ok.replace("cpu_s 22.0\n", "");
        assert!(parse_ns3_output(&missing, 500_000_000)
            .unwrap_err()
            .contains("cpu_s"));
    }

    #[test]
    fn byte_counts_are_grouped() {
        assert_eq!(with_commas(0), "0 bytes");
        assert_eq!(with_commas(999), "999 bytes");
        assert_eq!(with_commas(1000), "1,000 bytes");
        assert_eq!(with_commas(10_000_000_000), "10,000,000,000 bytes");
    }

    #[test]
    fn medians_and_minimum() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(min(&[4.0, 1.5, 2.0]), 1.5);
    }

    #[test]
    fn a_missing_program_is_named() {
        let e = ns3_program(Some(Path::new("/nonexistent/ns3-bulk")), &NS3_BULK).unwrap_err();
        assert!(e.contains("/nonexistent/ns3-bulk"), "{e}");
    }
}
