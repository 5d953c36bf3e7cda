//! `tinygram tun serve|connect`: the engine on a TUN device, against real peers.

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

#[cfg(test)]
mod tests {
    use super::*;
    use tinygram_proto::policy::SendPolicyKind;

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
