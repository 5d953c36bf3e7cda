//! `tinygram tun serve|connect`: the engine on a TUN device, against real peers;
//! `tinygram tun link`: the simulator's link between two network namespaces.

use clap::{Args, Subcommand};
use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::process::ExitCode;
use tinygram_net::{AppSpec, DeviceConfig, Role, RunOptions};
use tinygram_proto::Config;
use tinygram_sim::scenario::Scenario;
use tinygram_sim::units::parse_duration;

/// Shown under `tinygram tun --help` (and each subcommand's).
const TUN_HELP: &str = "\
The device MTU (--mtu, default 1500) sets the MSS tinygram offers: MTU - 40
(20 bytes of IPv4 header, 20 of TCP), so 1460 at 1500 and 65495 at 65535,
unless `--set mss=N` is given. With timestamps on, each segment carries 12 bytes
less (1448 at MTU 1500).

--set takes the keys of a scenario host (`tinygram scenario` lists them) without
the `client.` / `server.` prefix: `--set send_policy=nodelay`, `--set mss=1000`.
Options default to Linux's: window scale, timestamps and SACK (`--set
options=[]` offers none, `--set options=[\"sack\"]` only SACK).

Offloads are on unless --no-offload: each packet on the device carries a
virtio-net header, the kernel hands over TSO super-packets of up to 64 KB
(cut into MSS-sized segments here) and takes ours (it cuts them on its side),
TCP checksums between tinygram and the kernel are left partial as a NIC with
checksum offload leaves them (packets with a full checksum are still
verified; with --pcap, tinygram computes its own, and the capture shows the
kernel's super-packets as they came, up to 64 KB each). --busy-poll spins on the
device instead of sleeping: lower latency, one core kept busy.

The line `tinygram: serving ...` (stderr) comes once the device is up with the
kernel's address: a peer may connect as soon as it appears.";

#[derive(Subcommand)]
#[command(after_help = TUN_HELP)]
pub enum TunCmd {
    /// Accept connections on --port and run --app on each.
    Serve {
        #[command(flatten)]
        common: Common,
        /// TCP port to listen on.
        #[arg(long)]
        port: u16,
        /// Application (echo | discard | source:N | sink | blast:N | http:N | ack-after:N | request:N[:REPLY[:COUNT]]); sink and blast:N hash nothing (for benchmarks).
        #[arg(long, default_value = "echo")]
        app: String,
        /// Exit after this many connections have ended (default: until Ctrl-C).
        #[arg(long)]
        conns: Option<u64>,
        /// Half-open connections kept before SYNs are answered with SYN
        /// cookies (RFC 4987), which hold no state.
        #[arg(long, default_value_t = tinygram_net::host::DEFAULT_BACKLOG)]
        backlog: usize,
    },
    /// Connect to --to and run --app.
    Connect {
        #[command(flatten)]
        common: Common,
        /// The peer, e.g. 10.7.0.1:9000.
        #[arg(long)]
        to: SocketAddrV4,
        /// Application (see `serve`); `request:N` is the client of `ack-after:N`.
        #[arg(long, default_value = "discard")]
        app: String,
        /// Local port (default: a random one in 49152-65535).
        #[arg(long)]
        local_port: Option<u16>,
    },
    /// A user-space link between two network namespaces: the simulator's link
    /// model (serializer, drop-tail queue, propagation delay, seeded loss) in
    /// real time, between a TUN device in each. Put real programs behind it
    /// with `ip netns exec NS PROGRAM`.
    #[command(after_help = LINK_HELP)]
    Link(LinkArgs),
}

/// Shown under `tinygram tun link --help`.
const LINK_HELP: &str = "\
Each of --delay, --rate, --loss and --queue takes one value for both
directions or two separated by a comma, left->right first: `--delay 10ms,40ms`.
Values are written as in scenario files: \"10ms\", \"100Mbps\", \"64KB\"; --loss
is a probability (0.01) or a percentage (1%). --set takes any other key of a
scenario's [link] table: `--set framing=\"raw\"`, `--set reverse.ber=1e-6`.
Frames count Ethernet framing by default, as in scenario files (38 bytes per
packet, 64-byte minimum): a 10Mbps link carries 1460-byte segments at 9.49
Mbit/s of TCP payload; `--set framing=\"raw\"` counts IP bytes only.

Without --left/--right two namespaces are made and deleted on exit. The left
side is 10.77.0.1/24 on tgl0, the right side 10.77.0.2/24 on tgr0 (--subnet
moves both). Only IPv4 is forwarded, by one thread at real-time priority
(SCHED_FIFO 10) unless --no-realtime, so packets leave on time on a busy
machine. On exit (Ctrl-C or --for), per direction:
packets and bytes, drops by reason, and how late packets were written against
the times the model gave them.";

/// `tinygram tun link`'s arguments.
#[derive(Args)]
pub struct LinkArgs {
    /// One-way propagation delay, per direction: "10ms" or "10ms,40ms".
    #[arg(long, default_value = "0ms")]
    delay: String,
    /// Serialization rate: "10Mbps", "1.544Mb/s", "unlimited"; one or two values.
    #[arg(long, default_value = "unlimited")]
    rate: String,
    /// Random loss probability: "0.01" or "1%"; one or two values.
    #[arg(long, default_value = "0")]
    loss: String,
    /// Drop-tail queue limit in wire bytes: "64KB" ("0": unlimited); one or two values.
    #[arg(long)]
    queue: Option<String>,
    /// Seed of the loss draws (each direction has its own stream).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Other keys of a scenario's [link] table (framing, ber, forward.reorder, ...).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// An existing namespace for the left side (`ip netns add NAME`); kept on exit.
    #[arg(long, requires = "right")]
    left: Option<String>,
    /// An existing namespace for the right side; kept on exit.
    #[arg(long, requires = "left")]
    right: Option<String>,
    /// The left side's address and prefix; the right side takes the next address.
    #[arg(long, default_value = "10.77.0.1/24")]
    subnet: String,
    /// MTU of both devices.
    #[arg(long, default_value_t = 1500)]
    mtu: u16,
    /// Stop after this long, e.g. "30s" (default: until Ctrl-C).
    #[arg(long = "for")]
    for_: Option<String>,
    /// Forward at ordinary priority instead of real-time (SCHED_FIFO), which
    /// keeps delivery on time when the machine is busy.
    #[arg(long)]
    no_realtime: bool,
}

#[derive(Args)]
pub struct Common {
    /// TUN device name (created if missing).
    #[arg(long, default_value = "tg0")]
    dev: String,
    /// tinygram's address and prefix; the kernel takes --kernel-addr on the device.
    #[arg(long, default_value = "10.7.0.2/24")]
    addr: String,
    /// The kernel's address on the device (default: first host address of the
    /// prefix, or the second if tinygram has the first).
    #[arg(long)]
    kernel_addr: Option<std::net::Ipv4Addr>,
    /// Device MTU; the MSS defaults to MTU - 40 (IPv4 and TCP headers) unless `--set mss=N`.
    #[arg(long, default_value_t = 1500)]
    mtu: u16,
    /// Per-connection setting: a scenario host's keys without the `client.` / `server.`
    /// prefix: `--set send_policy=doupnik`, `--set ack_policy=delayed`, `--set options=[wscale]`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Record every packet sent and received (raw IP pcap).
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// On exit, also print the why-trace summary (what held data, why ACKs waited).
    #[arg(long)]
    explain: bool,
    /// Stop after this long, e.g. "30s".
    #[arg(long)]
    duration: Option<String>,
    /// No status line.
    #[arg(long, short)]
    quiet: bool,
    /// Plain packets, one per read and write: no virtio-net header, no
    /// TSO/GSO super-packets, no checksum offload.
    #[arg(long)]
    no_offload: bool,
    /// Spin on the device instead of sleeping until a packet comes.
    #[arg(long)]
    busy_poll: bool,
}

impl Common {
    /// The device's offload and polling settings.
    pub fn tun_options(&self) -> tinygram_net::TunOptions {
        tinygram_net::TunOptions {
            offload: !self.no_offload,
            busy_poll: self.busy_poll,
        }
    }
}

/// The options Linux offers by default (net.ipv4.tcp_window_scaling,
/// tcp_timestamps and tcp_sack are 1): a `tun` run offers them too unless
/// `--set options=[...]` says otherwise.
pub const LINUX_DEFAULT_OPTIONS: [&str; 3] = ["wscale", "timestamps", "sack"];

/// Host keys a scenario has that a TUN run has no use for (the simulator's).
const SIM_ONLY_HOST_KEYS: &[&str] = &["isn", "rx_coalesce"];

/// `--set key=value` as a scenario host's settings (same keys, same checks).
pub fn host_config(sets: &[String]) -> Result<Config, String> {
    for set in sets {
        let key = set.split_once('=').map_or(set.as_str(), |(k, _)| k).trim();
        let bare = key
            .strip_prefix("client.")
            .or_else(|| key.strip_prefix("server."));
        if let Some(bare) = bare {
            return Err(format!(
                "--set {key}: `tun --set` takes host keys without the `client.` / `server.` prefix (the settings apply to this host's connections): use --set {bare}=..."
            ));
        }
        if SIM_ONLY_HOST_KEYS.contains(&key) {
            return Err(format!(
                "--set {key}: a simulator setting, not used on a TUN device (tun --set takes the per-connection host keys of `tinygram scenario`, like send_policy or mss)"
            ));
        }
        if key.contains('.') {
            return Err(format!(
                "--set {key}: `tun --set` takes a scenario host's keys (send_policy, ack_policy, mss, options, ...), not scenario-wide ones"
            ));
        }
    }
    let overrides: Vec<String> = sets
        .iter()
        .map(|s| format!("client.{}", s.trim()))
        .collect();
    let sc = Scenario::from_str("", "--set", &overrides)
        .map_err(|e| e.to_string().replace("client.", ""))?;
    let mut config = sc.client.tcp;
    // `memory`: the whole host's budget for buffers, send and receive
    // (tinygram_net::budget), handed to the host as its connections' budget.
    if sc.client.memory.is_some() {
        config.host_budget = sc.client.memory;
    }
    Ok(config)
}

/// IPv4 header plus TCP header without options (RFC 791 3.1, RFC 9293 3.1).
const IPV4_TCP_HEADERS: u16 = 40;

/// The MSS to offer: `--set mss=N` as given (with a warning when it exceeds
/// what the MTU carries), else MTU - 40 (RFC 9293 3.7.1: MSS is the MTU less
/// the fixed IP and TCP headers).
fn mss_for(mtu: u16, sets: &[String], set_mss: u16) -> Result<u16, String> {
    let derived = mtu.saturating_sub(IPV4_TCP_HEADERS);
    let explicit = sets
        .iter()
        .any(|s| s.split_once('=').is_some_and(|(k, _)| k.trim() == "mss"));
    if explicit {
        if set_mss > derived {
            eprintln!(
                "tinygram: warning: mss {set_mss} exceeds --mtu {mtu} less {IPV4_TCP_HEADERS} bytes of headers ({derived}); full segments will not fit the link"
            );
        }
        return Ok(set_mss);
    }
    // The engine needs an MSS of at least 64 (its config check).
    if derived < 64 {
        return Err(format!(
            "--mtu {mtu} leaves an MSS of {derived} bytes; tinygram needs an MTU of at least {}",
            64 + IPV4_TCP_HEADERS
        ));
    }
    Ok(derived)
}

fn options(common: &Common, role: Role) -> Result<RunOptions, String> {
    let (addr, prefix) = tinygram_net::parse_cidr(&common.addr)?;
    let kernel_addr = common
        .kernel_addr
        .unwrap_or_else(|| tinygram_net::default_kernel_addr(addr, prefix));
    if kernel_addr == addr {
        return Err("--kernel-addr must differ from --addr".into());
    }
    let mut config = host_config(&common.set)?;
    let options_set = common.set.iter().any(|s| {
        s.split_once('=')
            .is_some_and(|(k, _)| k.trim() == "options")
    });
    if !options_set {
        for o in LINUX_DEFAULT_OPTIONS {
            config.options.enable(o)?;
        }
    }
    config.mss = mss_for(common.mtu, &common.set, config.mss)?;
    config.trace = common.explain;
    let duration = common.duration.as_deref().map(parse_duration).transpose()?;
    Ok(RunOptions {
        device: DeviceConfig {
            name: common.dev.clone(),
            addr,
            prefix,
            kernel_addr,
            mtu: common.mtu,
        },
        config,
        role,
        pcap: common.pcap.clone(),
        duration,
        status: !common.quiet,
        stop: tinygram_net::stop_on_signals(),
        backlog: tinygram_net::host::DEFAULT_BACKLOG,
    })
}

pub fn run(cmd: TunCmd) -> ExitCode {
    let tun_opts = match &cmd {
        TunCmd::Serve { common, .. } | TunCmd::Connect { common, .. } => common.tun_options(),
        TunCmd::Link(args) => return run_link(args),
    };
    let built = match &cmd {
        TunCmd::Serve {
            common,
            port,
            app,
            conns,
            backlog,
        } => AppSpec::parse(app).and_then(|app| {
            let mut o = options(
                common,
                Role::Serve {
                    port: *port,
                    app,
                    conns: *conns,
                },
            )?;
            o.backlog = *backlog;
            Ok(o)
        }),
        TunCmd::Connect {
            common,
            to,
            app,
            local_port,
        } => AppSpec::parse(app).and_then(|app| {
            options(
                common,
                Role::Connect {
                    to: *to,
                    app,
                    local_port: *local_port,
                },
            )
        }),
        TunCmd::Link(_) => unreachable!("handled above"),
    };
    let opts = match built {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = opts.config.validate() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    // Open and configure the device first: "serving" is said only once the
    // device is up, so a script waiting for that line can connect at once.
    let tun = match tinygram_net::Tun::open_with(&opts.device, tun_opts) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let d = &opts.device;
    let pending = if tun.configured {
        ""
    } else {
        " (once the device is configured as above)"
    };
    match &opts.role {
        Role::Serve { port, app, .. } => eprintln!(
            "tinygram: serving {app} on {}:{port} via {} (kernel side {}/{}), {} policy{pending}",
            d.addr, d.name, d.kernel_addr, d.prefix, opts.config.send_policy
        ),
        Role::Connect { to, app, .. } => eprintln!(
            "tinygram: {app} to {to} from {} via {} (kernel side {}/{}), {} policy{pending}",
            d.addr, d.name, d.kernel_addr, d.prefix, opts.config.send_policy
        ),
    }
    match tinygram_net::run_on(&tun, &opts) {
        Ok(report) => {
            print!("{}", tinygram_net::summary(&report));
            let failed = report.conns.iter().any(|c| c.error.is_some());
            if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One value for both directions, or `A,B` (left->right, right->left).
fn per_direction<'a>(flag: &str, v: &'a str) -> Result<[&'a str; 2], String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [a] if !a.is_empty() => Ok([a, a]),
        [a, b] if !a.is_empty() && !b.is_empty() => Ok([a, b]),
        _ => Err(format!(
            "--{flag} {v:?}: expected one value, or two separated by a comma (left->right,right->left)"
        )),
    }
}

/// `1%` -> `0.01`; a plain probability as given (the scenario parser checks it).
fn probability_text(v: &str) -> Result<String, String> {
    match v.strip_suffix('%') {
        Some(p) => p
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| (0.0..=100.0).contains(p))
            .map(|p| (p / 100.0).to_string())
            .ok_or_else(|| format!("bad loss {v:?}: expected a percentage from 0% to 100%")),
        None => Ok(v.to_string()),
    }
}

/// The two directions' link models, built by the scenario parser from the
/// flags (so units, ranges and errors are those of a scenario's [link]).
pub fn link_configs(a: &LinkArgs) -> Result<[tinygram_sim::link::LinkConfig; 2], String> {
    let mut overrides = Vec::new();
    let mut flag = |name: &str, key: &str, v: &str, quote: bool| -> Result<(), String> {
        for (dir, val) in ["forward", "reverse"].iter().zip(per_direction(name, v)?) {
            if val.contains('"') {
                return Err(format!("--{name} {v:?}: no quotes needed"));
            }
            let val = if quote {
                format!("\"{val}\"")
            } else {
                probability_text(val)?
            };
            overrides.push(format!("link.{dir}.{key}={val}"));
        }
        Ok(())
    };
    flag("delay", "delay", &a.delay, true)?;
    flag("rate", "rate", &a.rate, true)?;
    flag("loss", "loss", &a.loss, false)?;
    if let Some(q) = &a.queue {
        flag("queue", "queue", q, true)?;
    }
    for set in &a.set {
        let key = set.split_once('=').map_or(set.as_str(), |(k, _)| k).trim();
        if let Some(bare) = key.strip_prefix("link.") {
            return Err(format!(
                "--set {key}: give the key without `link.` (it is the link's own: --set {bare}=...)"
            ));
        }
        overrides.push(format!("link.{}", set.trim()));
    }
    let sc = Scenario::from_str("", "tun link", &overrides).map_err(|e| e.to_string())?;
    Ok([sc.forward, sc.reverse])
}

fn describe(c: &tinygram_sim::link::LinkConfig) -> String {
    use tinygram_sim::units::{fmt_duration, fmt_rate, fmt_size};
    let rate = if c.rate_bps <= 0.0 || !c.rate_bps.is_finite() {
        "unlimited".to_string()
    } else {
        fmt_rate(c.rate_bps)
    };
    let queue = if c.queue_bytes == 0 {
        "unlimited".to_string()
    } else {
        fmt_size(c.queue_bytes as u64)
    };
    format!(
        "rate {rate}, delay {}, queue {queue}, loss {}, framing {}",
        fmt_duration(c.delay),
        c.loss,
        c.framing.name()
    )
}

fn run_link(a: &LinkArgs) -> ExitCode {
    use tinygram_net::link::{forward, summary, LinkEnds, LinkOptions, LinkSetup};
    use tinygram_net::netns::Netns;
    let parsed = (|| -> Result<_, String> {
        let configs = link_configs(a)?;
        let (left_addr, prefix) =
            tinygram_net::parse_cidr(&a.subnet).map_err(|e| format!("--subnet: {e}"))?;
        let duration = a.for_.as_deref().map(parse_duration).transpose()?;
        if a.mtu < 68 {
            return Err(format!("--mtu {}: IPv4 needs at least 68", a.mtu));
        }
        Ok((configs, left_addr, prefix, duration))
    })();
    let (configs, left_addr, prefix, duration) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(why) = tinygram_net::netns::unavailable() {
        eprintln!("error: tun link cannot run here: {why}");
        return ExitCode::FAILURE;
    }
    let ends = (|| -> std::io::Result<LinkEnds> {
        let (left, right) = match (&a.left, &a.right) {
            (Some(l), Some(r)) => (Netns::existing(l)?, Netns::existing(r)?),
            _ => (Netns::new("linkL")?, Netns::new("linkR")?),
        };
        LinkEnds::open(LinkSetup {
            left,
            right,
            left_addr,
            prefix,
            mtu: a.mtu,
        })
    })();
    let ends = match ends {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (l, r) = (&ends.left, &ends.right);
    let until = match &a.for_ {
        Some(d) => format!("Ctrl-C or {d} have passed"),
        None => "Ctrl-C".into(),
    };
    let lines = [
        format!(
            "tun link: left  namespace {} ({} {}/{prefix})",
            l.ns.name(),
            l.dev,
            l.addr
        ),
        format!(
            "          right namespace {} ({} {}/{prefix})",
            r.ns.name(),
            r.dev,
            r.addr
        ),
        format!("  left->right: {}", describe(&configs[0])),
        format!("  right->left: {}", describe(&configs[1])),
        "Run programs on each side with:".into(),
        format!(
            "  ip netns exec {} PROGRAM    (e.g. ping {})",
            l.ns.name(),
            r.addr
        ),
        format!(
            "  ip netns exec {} PROGRAM    (e.g. ping {})",
            r.ns.name(),
            l.addr
        ),
        format!("Forwarding until {until}."),
    ];
    eprintln!("{}", lines.join("\n"));
    let opts = LinkOptions {
        configs,
        seed: a.seed,
        duration,
        stop: tinygram_net::stop_on_signals(),
        realtime: !a.no_realtime,
    };
    match forward(&ends, &opts) {
        Ok(report) => {
            print!("{}", summary(&ends, &report));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tinygram_proto::policy::SendPolicyKind;

    fn link_args(args: &[&str]) -> LinkArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            a: LinkArgs,
        }
        T::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
            .expect("arguments")
            .a
    }

    /// The flags become the scenario's [link] keys, per direction.
    #[test]
    fn link_flags_use_scenario_units_per_direction() {
        let [f, r] = link_configs(&link_args(&[
            "--delay",
            "10ms,40ms",
            "--rate",
            "10Mbps",
            "--loss",
            "1%",
            "--queue",
            "64KB",
            "--set",
            "framing=\"raw\"",
        ]))
        .unwrap();
        assert_eq!(f.delay, std::time::Duration::from_millis(10));
        assert_eq!(r.delay, std::time::Duration::from_millis(40));
        assert_eq!((f.rate_bps, r.rate_bps), (10e6, 10e6));
        assert_eq!((f.loss, r.loss), (0.01, 0.01));
        assert_eq!((f.queue_bytes, r.queue_bytes), (64_000, 64_000));
        assert_eq!(f.framing, tinygram_sim::link::Framing::Raw);
        let [f, _] = link_configs(&link_args(&[])).unwrap();
        assert!(f.rate_bps == 0.0 && f.delay.is_zero() && f.loss == 0.0);
        assert_eq!(
            f.queue_bytes,
            tinygram_sim::link::LinkConfig::default().queue_bytes
        );
    }

    #[test]
    fn bad_link_flags_are_named() {
        for (args, want) in [
            (&["--delay", "10"][..], "delay"),
            (&["--delay", "1ms,2ms,3ms"][..], "two separated by a comma"),
            (&["--rate", "10MB/s"][..], "bits per second"),
            (&["--loss", "1.5"][..], "outside [0, 1]"),
            (&["--loss", "150%"][..], "percentage"),
            (&["--set", "link.ber=0.1"][..], "without `link.`"),
            (&["--set", "bogus=1"][..], "bogus"),
        ] {
            let e = link_configs(&link_args(args)).unwrap_err();
            assert!(e.contains(want), "{args:?}: {e}");
        }
    }

    #[test]
    fn settings_use_scenario_host_keys() {
        let c =
            host_config(&["send_policy=doupnik".into(), "options=[\"wscale\"]".into()]).unwrap();
        assert_eq!(c.send_policy, SendPolicyKind::Doupnik);
        assert!(c.options.window_scale);
        let e = host_config(&["send_policy=bogus".into()]).unwrap_err();
        assert!(e.contains("send_policy"), "{e}");
        assert!(!e.contains("client."), "{e}");
        let e = host_config(&["send_polcy=nodelay".into()]).unwrap_err();
        assert!(e.contains("did you mean `send_policy`"), "{e}");
    }

    /// The simulator's host `memory` key is the TUN host's memory budget.
    #[test]
    fn memory_is_the_hosts_budget() {
        let c = host_config(&["memory=\"64MB\"".into()]).unwrap();
        assert_eq!(c.host_budget, Some(64_000_000));
        assert_eq!(host_config(&[]).unwrap().host_budget, None);
    }

    #[test]
    fn scenario_prefixes_and_sim_keys_are_named() {
        for (set, want) in [
            ("client.send_policy=nodelay", "use --set send_policy=..."),
            ("server.mss=1000", "use --set mss=..."),
            (
                " client.mss = 1000",
                "without the `client.` / `server.` prefix",
            ),
            ("link.rate=1Mbps", "not scenario-wide ones"),
            ("isn=5", "not used on a TUN device"),
        ] {
            let e = host_config(&[set.into()]).unwrap_err();
            assert!(e.contains(want), "{set}: {e}");
        }
    }

    fn common(args: &[&str]) -> Common {
        use clap::Parser;
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            c: Common,
        }
        T::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
            .expect("arguments")
            .c
    }

    fn role() -> Role {
        Role::Serve {
            port: 9,
            app: AppSpec::Discard,
            conns: None,
        }
    }

    /// Like Linux, a `tun` run offers window scale, timestamps and SACK
    /// unless `--set options=...` names its own; offloads are on by default.
    #[test]
    fn options_and_offloads_default_to_linux() {
        let c = common(&[]);
        let o = options(&c, role()).unwrap().config.options;
        assert!(o.window_scale && o.timestamps && o.sack, "{o:?}");
        assert!(!o.big_window && !o.nak);
        assert_eq!(
            c.tun_options(),
            tinygram_net::TunOptions {
                offload: true,
                busy_poll: false
            }
        );
        let o = options(&common(&["--set", "options=[]"]), role())
            .unwrap()
            .config
            .options;
        assert!(!o.window_scale && !o.timestamps && !o.sack, "{o:?}");
        let o = options(&common(&["--set", "options=[\"sack\"]"]), role())
            .unwrap()
            .config
            .options;
        assert!(o.sack && !o.timestamps, "{o:?}");
        let c = common(&["--no-offload", "--busy-poll"]);
        assert_eq!(
            c.tun_options(),
            tinygram_net::TunOptions {
                offload: false,
                busy_poll: true
            }
        );
    }

    #[test]
    fn mss_follows_the_mtu_unless_set() {
        assert_eq!(mss_for(1500, &[], 1460), Ok(1460));
        assert_eq!(mss_for(65535, &[], 1460), Ok(65495));
        assert_eq!(mss_for(9000, &["send_policy=nagle".into()], 1460), Ok(8960));
        assert_eq!(mss_for(65535, &["mss=1000".into()], 1000), Ok(1000));
        assert_eq!(mss_for(65535, &[" mss = 1460".into()], 1460), Ok(1460));
        // Over the MTU: kept as asked (a warning is printed).
        assert_eq!(mss_for(1500, &["mss=9000".into()], 9000), Ok(9000));
        let e = mss_for(100, &[], 1460).unwrap_err();
        assert!(e.contains("--mtu 100") && e.contains("104"), "{e}");
    }
}
