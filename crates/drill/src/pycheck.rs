//! `%{ ... }%` checks, run as packetdrill runs them (code.c): at each block
//! the socket's TCP_INFO is recorded as `tcpi_*` variables, and after the
//! script's last line every block, each preceded by its values, is run by
//! `python3` as one program. A failed assertion fails the script; a block
//! that reads a value the engine does not report fails it as unsupported.
//!
//! The blocks are arbitrary Python, as in packetdrill: a downloaded suite
//! can do anything the user can. They run with an empty environment (PATH
//! only) in isolated mode (`python3 -I`: no PYTHON* variables, no user
//! site-packages), in their own process group, killed with it past a
//! timeout; `drill --no-python` refuses them instead.

use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tinygram_proto::{Connection, State};

/// Linux's symbolic names packetdrill defines for the checks (code.c
/// write_symbols; values from include/net/tcp_states.h, include/uapi/linux/tcp.h).
const SYMBOLS: &[(&str, u64)] = &[
    ("TCP_ESTABLISHED", 1),
    ("TCP_SYN_SENT", 2),
    ("TCP_SYN_RECV", 3),
    ("TCP_FIN_WAIT1", 4),
    ("TCP_FIN_WAIT2", 5),
    ("TCP_TIME_WAIT", 6),
    ("TCP_CLOSE", 7),
    ("TCP_CLOSE_WAIT", 8),
    ("TCP_LAST_ACK", 9),
    ("TCP_LISTEN", 10),
    ("TCP_CLOSING", 11),
    ("TCP_CA_Open", 0),
    ("TCP_CA_Disorder", 1),
    ("TCP_CA_CWR", 2),
    ("TCP_CA_Recovery", 3),
    ("TCP_CA_Loss", 4),
    ("TCPI_OPT_TIMESTAMPS", 1),
    ("TCPI_OPT_SACK", 2),
    ("TCPI_OPT_WSCALE", 4),
    ("TCPI_OPT_ECN", 8),
    ("TCPI_OPT_ECN_SEEN", 16),
    ("TCPI_OPT_SYN_DATA", 32),
    ("TCPI_OPT_USEC_TS", 64),
    ("TCPI_OPT_TFO_CHILD", 128),
];

/// BSD's TCPS_* state numbers (tcp_fsm.h), which nplab packetdrill names
/// TCPI_* for checks on FreeBSD (code.c write_symbols).
const BSD_STATES: &[(&str, u64)] = &[
    ("TCPI_CLOSED", 0),
    ("TCPI_LISTEN", 1),
    ("TCPI_SYN_SENT", 2),
    ("TCPI_SYN_RECEIVED", 3),
    ("TCPI_ESTABLISHED", 4),
    ("TCPI_CLOSE_WAIT", 5),
    ("TCPI_FIN_WAIT_1", 6),
    ("TCPI_CLOSING", 7),
    ("TCPI_LAST_ACK", 8),
    ("TCPI_FIN_WAIT_2", 9),
    ("TCPI_TIME_WAIT", 10),
];

/// BSD's TCPS_* number of a state (tcp_fsm.h).
fn bsd_state(s: State) -> u64 {
    let name = match s {
        State::Closed => "TCPI_CLOSED",
        State::Listen => "TCPI_LISTEN",
        State::SynSent => "TCPI_SYN_SENT",
        State::SynReceived => "TCPI_SYN_RECEIVED",
        State::Established => "TCPI_ESTABLISHED",
        State::CloseWait => "TCPI_CLOSE_WAIT",
        State::FinWait1 => "TCPI_FIN_WAIT_1",
        State::Closing => "TCPI_CLOSING",
        State::LastAck => "TCPI_LAST_ACK",
        State::FinWait2 => "TCPI_FIN_WAIT_2",
        State::TimeWait => "TCPI_TIME_WAIT",
    };
    BSD_STATES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(0, |(_, v)| *v)
}

/// TCP_INFO as FreeBSD's tcp_fill_info gives it, as far as the engine
/// knows its fields exactly: the state in BSD numbering (with nplab's
/// TCPI_* names for it), the negotiated options (TCPI_OPT_TIMESTAMPS,
/// _SACK, _WSCALE, _ECN: tcp.h) and the window scales.
fn tcp_info_bsd(c: &Connection) -> Vec<(&'static str, u64)> {
    let (snd_ws, rcv_ws) = c.window_scales();
    let wscale_on = c.config().options.window_scale && (snd_ws > 0 || rcv_ws > 0);
    let options = u64::from(c.timestamps_enabled())
        | u64::from(c.sack_enabled()) << 1
        | u64::from(wscale_on) << 2
        | u64::from(c.ecn_enabled()) << 3;
    let mut vars = BSD_STATES.to_vec();
    vars.extend([
        ("TCPI_OPT_TIMESTAMPS", 1),
        ("TCPI_OPT_SACK", 2),
        ("TCPI_OPT_WSCALE", 4),
        ("TCPI_OPT_ECN", 8),
        ("tcpi_state", bsd_state(c.state())),
        ("tcpi_options", options),
        ("tcpi_snd_wscale", u64::from(snd_ws)),
        ("tcpi_rcv_wscale", u64::from(rcv_ws)),
    ]);
    vars
}

/// Linux's TCP_INFINITE_SSTHRESH, reported before the first loss.
const INFINITE_SSTHRESH: u64 = 0x7fff_ffff;

/// Runs the program first, so a failure names the check's script line.
const PREAMBLE: &str = "import sys\nimport traceback\n\
def excepthook(etype, value, tb):\n  \
sys.stderr.write('tinygram-check-line %d\\n' % _line)\n  \
traceback.print_exception(etype, value, tb)\n\n\
sys.excepthook = excepthook\n\n";

/// The TCP_INFO fields the engine can report exactly, in Linux's units
/// (tcp_get_info in net/ipv4/tcp.c): windows in segments, times in
/// microseconds. Fields it does not track are left out, so a check that
/// reads one fails as unsupported instead of passing on a made-up value.
pub(crate) fn tcp_info(c: &Connection) -> Vec<(&'static str, u64)> {
    if c.config().tcp_info_bsd {
        return tcp_info_bsd(c);
    }
    let state = match c.state() {
        State::Established => 1,
        State::SynSent => 2,
        State::SynReceived => 3,
        State::FinWait1 => 4,
        State::FinWait2 => 5,
        State::TimeWait => 6,
        State::Closed => 7,
        State::CloseWait => 8,
        State::LastAck => 9,
        State::Listen => 10,
        State::Closing => 11,
    };
    let (in_recovery, rto_expiries, dupacks) = c.recovery_state();
    // Linux's icsk_ca_state: Recovery during fast recovery, Loss after a
    // retransmission timeout until new data is acknowledged, Disorder while
    // duplicate ACKs arrive below the threshold.
    let ca_state = if in_recovery {
        3
    } else if rto_expiries > 0 {
        4
    } else if dupacks > 0 {
        1
    } else {
        0
    };
    let mss = c.effective_mss().max(1) as u64;
    let ssthresh = c.ssthresh() as u64;
    let ssthresh = if ssthresh >= INFINITE_SSTHRESH {
        INFINITE_SSTHRESH
    } else {
        ssthresh / mss
    };
    let (snd_ws, rcv_ws) = c.window_scales();
    let wscale_on = c.config().options.window_scale && (snd_ws > 0 || rcv_ws > 0);
    let options = u64::from(c.timestamps_enabled())
        | u64::from(c.sack_enabled()) << 1
        | u64::from(wscale_on) << 2
        | u64::from(c.fast_open().syn_data_acked) << 5;
    let n = c.counters();
    // The symbols come with each dump, as packetdrill's write_tcp_info writes them.
    let mut vars = SYMBOLS.to_vec();
    vars.extend([
        ("tcpi_state", state),
        ("tcpi_ca_state", ca_state),
        ("tcpi_retransmits", u64::from(rto_expiries)),
        ("tcpi_backoff", u64::from(rto_expiries)),
        // Unanswered zero-window probes (tcp_get_info: icsk_probes_out).
        ("tcpi_probes", u64::from(c.probes_out())),
        ("tcpi_options", options),
        ("tcpi_snd_wscale", u64::from(snd_ws)),
        ("tcpi_rcv_wscale", u64::from(rcv_ws)),
        ("tcpi_rto", micros(c.rto())),
        ("tcpi_snd_mss", mss),
        ("tcpi_advmss", u64::from(c.config().mss)),
        ("tcpi_rtt", c.srtt().map_or(0, micros)),
        ("tcpi_snd_ssthresh", ssthresh),
        ("tcpi_snd_cwnd", c.cwnd() as u64 / mss),
        ("tcpi_reordering", u64::from(c.config().dupack_threshold)),
        ("tcpi_total_retrans", n.retransmits),
        ("tcpi_segs_out", n.segments_sent),
        ("tcpi_segs_in", n.segments_received),
        ("tcpi_data_segs_out", n.data_segments_sent),
        ("tcpi_data_segs_in", n.data_segments_received),
        ("tcpi_snd_wnd", c.snd_wnd() as u64),
    ]);
    // The peer's segment size the ACK policy measured (icsk_ack.rcv_mss).
    if let Some(m) = c.rcv_mss() {
        vars.push(("tcpi_rcv_mss", m as u64));
    }
    // Reordering events (tp->reord_seen), where RACK tracks the connection.
    if let Some(n) = c.reord_seen() {
        vars.push(("tcpi_reord_seen", u64::from(n)));
    }
    // Scoreboard counts (tcp_get_info: packets_out, sacked_out, lost_out,
    // retrans_out, reordering), from RACK's per-segment state when it runs.
    if let Some((unacked, sacked, lost, retrans, reordering)) = c.rack_counts() {
        for (k, v) in [
            ("tcpi_unacked", unacked),
            ("tcpi_sacked", sacked),
            ("tcpi_lost", lost),
            ("tcpi_retrans", retrans),
        ] {
            vars.push((k, v as u64));
        }
        if let Some(r) = vars.iter_mut().find(|(k, _)| *k == "tcpi_reordering") {
            r.1 = reordering as u64;
        }
    }
    vars.extend(delivered(c));
    vars
}

/// tcpi_delivered: segments the peer has acknowledged, each once
/// (tcp_get_info reads tp->delivered).
fn delivered(c: &Connection) -> Vec<(&'static str, u64)> {
    vec![("tcpi_delivered", c.counters().segments_delivered)]
}

/// TCP_INFO's chronograph fields at `now` (tcp_get_info_chrono_stats), in
/// microseconds: busy time, and the parts of it the peer's window and the
/// send buffer limited.
pub(crate) fn tcp_info_chrono(
    c: &Connection,
    now: tinygram_proto::Instant,
) -> Vec<(&'static str, u64)> {
    let s = c.chrono_stats(now);
    vec![
        ("tcpi_busy_time", micros(s.busy)),
        ("tcpi_rwnd_limited", micros(s.rwnd_limited)),
        ("tcpi_sndbuf_limited", micros(s.sndbuf_limited)),
    ]
}

/// A duration in whole microseconds, as TCP_INFO reports times.
fn micros(d: tinygram_proto::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The program built up block by block.
#[derive(Default)]
pub(crate) struct Program {
    text: String,
    blocks: usize,
}

/// Why the program failed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CheckError {
    /// python3 could not be started.
    NoPython(String),
    /// A check read a name the runner does not define.
    Missing { line: usize, name: String },
    /// An assertion (or any other exception) at this script line.
    Failed { line: usize, msg: String },
    /// The program was still running after the timeout, and was killed.
    Timeout(Duration),
}

impl Program {
    /// Records one block with the values at this instant (the stack's
    /// symbols among them, as `tcp_info` gives them).
    pub(crate) fn push(&mut self, file: &str, line: usize, vars: &[(&str, u64)], code: &str) {
        for (k, v) in vars {
            let _ = writeln!(self.text, "{k} = {v}");
        }
        let file = file.replace('\\', "\\\\").replace('\'', "\\'");
        let _ = writeln!(self.text, "\n_file = '{file}'\n_line = {line}\n{code}\n");
        self.blocks += 1;
    }

    /// True when no block was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.blocks == 0
    }

    /// Runs every block with python3, killed (with anything it started in
    /// its process group) if it has not finished within `timeout`.
    pub(crate) fn run(&self, timeout: Duration) -> Result<(), CheckError> {
        let mut child = Command::new("python3")
            .args(["-I", "-"])
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| CheckError::NoPython(format!("cannot run python3: {e}")))?;
        let program = format!("{PREAMBLE}{}", self.text);
        let stdin = child.stdin.take();
        std::thread::spawn(move || {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(program.as_bytes());
            }
        });
        let stderr = child.stderr.take();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut e) = stderr {
                let _ = std::io::Read::read_to_string(&mut e, &mut text);
            }
            let _ = tx.send(text);
        });
        let deadline = Instant::now() + timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    // SAFETY: kill(2) on the group the child leads (process_group(0)).
                    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(CheckError::Timeout(timeout));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(CheckError::NoPython(format!("python3 did not finish: {e}"))),
            }
        };
        if status.success() {
            return Ok(());
        }
        // Something the program started may still hold stderr open.
        let err = rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
        Err(classify(&err))
    }
}

/// Reads python3's stderr: the failing block's line, and what went wrong.
fn classify(stderr: &str) -> CheckError {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("tinygram-check-line "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("python3 failed")
        .trim()
        .to_string();
    if let Some(rest) = last.strip_prefix("NameError: name '") {
        if let Some(name) = rest.split('\'').next() {
            return CheckError::Missing {
                line,
                name: name.to_string(),
            };
        }
    }
    CheckError::Failed { line, msg: last }
}

/// Removes the indentation the block's lines share, so a block written
/// indented inside the script is valid Python.
pub(crate) fn dedent(code: &str) -> String {
    let mut lines: Vec<&str> = code.lines().collect();
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or_else(|| l.trim_start()).trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedents_shared_indentation_only() {
        assert_eq!(dedent(" assert x == 1 "), "assert x == 1");
        assert_eq!(
            dedent("\n    if a:\n        b()\n    c()\n"),
            "if a:\n    b()\nc()"
        );
    }

    #[test]
    fn classifies_assertions_and_missing_names() {
        let e = "tinygram-check-line 12\nTraceback...\nAssertionError: 7\n";
        assert_eq!(
            classify(e),
            CheckError::Failed {
                line: 12,
                msg: "AssertionError: 7".into()
            }
        );
        let e = "tinygram-check-line 3\nNameError: name 'tcpi_lost' is not defined\n";
        assert_eq!(
            classify(e),
            CheckError::Missing {
                line: 3,
                name: "tcpi_lost".into()
            }
        );
    }

    #[test]
    fn runs_blocks_in_order_with_their_values() {
        let mut p = Program::default();
        p.push(
            "f.pkt",
            4,
            &[("tcpi_snd_cwnd", 10)],
            "assert tcpi_snd_cwnd == 10",
        );
        p.push(
            "f.pkt",
            9,
            &[("tcpi_snd_cwnd", 7)],
            "assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd",
        );
        match p.run(Duration::from_secs(30)) {
            Err(CheckError::Failed { line, msg }) => {
                assert_eq!(line, 9);
                assert!(msg.contains("AssertionError: 7"), "{msg}");
            }
            Err(CheckError::NoPython(_)) => eprintln!("python3 not installed: check not run"),
            other => panic!("expected the second block to fail: {other:?}"),
        }
    }

    #[test]
    fn a_block_that_never_ends_is_killed_at_the_timeout() {
        let mut p = Program::default();
        p.push("f.pkt", 3, &[], "while True: pass");
        let started = Instant::now();
        match p.run(Duration::from_millis(300)) {
            Err(CheckError::Timeout(t)) => assert_eq!(t, Duration::from_millis(300)),
            Err(CheckError::NoPython(_)) => eprintln!("python3 not installed: check not run"),
            other => panic!("expected a timeout: {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn blocks_see_no_environment() {
        let mut p = Program::default();
        p.push(
            "f.pkt",
            2,
            &[],
            "import os\nassert sorted(os.environ) == ['PATH'] or sorted(os.environ) == ['LC_CTYPE', 'PATH'], sorted(os.environ)",
        );
        std::env::set_var("TINYGRAM_SECRET_FOR_TEST", "1");
        match p.run(Duration::from_secs(30)) {
            Ok(()) | Err(CheckError::NoPython(_)) => {}
            other => panic!("the block saw more than PATH: {other:?}"),
        }
    }
}
