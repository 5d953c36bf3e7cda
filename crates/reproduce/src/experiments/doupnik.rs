//! Doupnik, "A new TCP transmission policy replacing Nagle mode": Table 1's web test and the policies on their own patterns.

use super::*;

// ----- doupnik-web ------------------------------------------------------

/// One published row of Doupnik's Table 1: the client and server as the
/// paper names them, the profiles that model them, the client's receive
/// window where the row states one, the server's policy, and the published
/// (2.2 KB req/s, KB/s, 33 KB req/s, KB/s).
pub(super) struct WebRow {
    client: &'static str,
    client_profile: &'static str,
    /// The row's "rwnd"; UW7 rows take UW7's 32 KB (Doupnik 3.0).
    rwnd: &'static str,
    server: &'static str,
    server_profile: &'static str,
    policy: &'static str,
    published: [f64; 4],
}

pub(super) const fn wr(
    client: &'static str,
    client_profile: &'static str,
    rwnd: &'static str,
    server: &'static str,
    server_profile: &'static str,
    policy: &'static str,
    published: [f64; 4],
) -> WebRow {
    WebRow {
        client,
        client_profile,
        rwnd,
        server,
        server_profile,
        policy,
        published,
    }
}

/// Table 1, row by row, in the paper's order.
pub(super) const TABLE1: [WebRow; 22] = [
    wr(
        "UW7",
        "uw7",
        "32KiB",
        "FreeBSD",
        "freebsd3",
        "Nagle on",
        [5.0, 12.0, 5.0, 165.0],
    ),
    wr(
        "UW7",
        "uw7",
        "32KiB",
        "FreeBSD",
        "freebsd3",
        "Nagle off",
        [1249.0, 2914.0, 222.0, 7142.0],
    ),
    wr(
        "UW7",
        "uw7",
        "32KiB",
        "FreeBSD",
        "freebsd3",
        "new policy",
        [1247.0, 2909.0, 228.0, 7324.0],
    ),
    wr(
        "UW7",
        "uw7",
        "32KiB",
        "Solaris7",
        "solaris7",
        "Nagle on",
        [991.0, 2311.0, 221.0, 7112.0],
    ),
    wr(
        "UW7",
        "uw7",
        "32KiB",
        "Solaris7",
        "solaris7",
        "Nagle off",
        [935.0, 2181.0, 219.0, 7041.0],
    ),
    wr(
        "UW7",
        "uw7",
        "32KiB",
        "Solaris7",
        "solaris7",
        "new policy",
        [993.0, 2317.0, 219.0, 7041.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "16KiB",
        "UW7",
        "uw7",
        "Nagle on",
        [5.0, 12.0, 5.0, 177.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "16KiB",
        "UW7",
        "uw7",
        "Nagle off",
        [1508.0, 3519.0, 264.0, 8478.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "4KiB",
        "UW7",
        "uw7",
        "Nagle on",
        [5.0, 12.0, 5.0, 166.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "4KiB",
        "UW7",
        "uw7",
        "Nagle off",
        [1421.0, 3315.0, 235.0, 7553.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "16KiB",
        "Linux",
        "linux22",
        "Nagle on",
        [1665.0, 3912.0, 277.0, 8876.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "16KiB",
        "Linux",
        "linux22",
        "Nagle off",
        [1709.0, 3987.0, 279.0, 8970.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "16KiB",
        "Linux",
        "linux22",
        "new policy",
        [1665.0, 3883.0, 277.0, 8894.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "4KiB",
        "Linux",
        "linux22",
        "Nagle on",
        [1685.0, 3930.0, 55.0, 1776.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "4KiB",
        "Linux",
        "linux22",
        "Nagle off",
        [1692.0, 3946.0, 238.0, 7634.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "4KiB",
        "Linux",
        "linux22",
        "new policy",
        [1699.0, 3964.0, 241.0, 7740.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "4KiB",
        "Solaris7",
        "solaris7",
        "Nagle on",
        [1104.0, 2575.0, 180.0, 5795.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "4KiB",
        "Solaris7",
        "solaris7",
        "Nagle off",
        [1090.0, 2544.0, 180.0, 5772.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "4KiB",
        "Solaris7",
        "solaris7",
        "new policy",
        [1090.0, 2543.0, 165.0, 5290.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "16KiB",
        "Solaris7",
        "solaris7",
        "Nagle on",
        [1151.0, 2685.0, 233.0, 7474.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "16KiB",
        "Solaris7",
        "solaris7",
        "Nagle off",
        [1186.0, 2768.0, 239.0, 7669.0],
    ),
    wr(
        "FreeBSD",
        "freebsd3",
        "16KiB",
        "Solaris7",
        "solaris7",
        "new policy",
        [1206.0, 2813.0, 237.0, 7634.0],
    ),
];

/// The file sizes when nothing is left open: 2,250 and 33,000 bytes.
pub(super) const FILE_BYTES: [(&str, &str, u64); 2] = [
    ("2.2 KB", "file.2.2KB", 2250),
    ("33 KB", "file.33KB", 33000),
];

/// The two files of Table 1 at a point of the open values: (label, the
/// server's writes, file bytes). The server writes two header lines (40 and
/// 150 bytes) and then the file, in 4,096-byte writes and a tail.
pub(super) fn files(at: &At) -> [(&'static str, String, f64); 2] {
    FILE_BYTES.map(|(label, key, default)| {
        let f = at.bytes(key, default);
        let mut w = vec![
            at.bytes("header.id", 40).to_string(),
            at.bytes("header.description", 150).to_string(),
        ];
        if f < 4096 {
            // A small file is one write.
            w.push(f.to_string());
        } else {
            w.push(format!("\"4096x{}\"", f / 4096));
            if !f.is_multiple_of(4096) {
                w.push((f % 4096).to_string());
            }
        }
        (label, format!("[{}]", w.join(", ")), f as f64)
    })
}

/// What Doupnik's Table 1 leaves open: the files' exact sizes and the
/// pacing of the server's writes.
pub(super) fn doupnik_unknowns() -> Vec<Unknown> {
    vec![
        Unknown::drawn(
            "typing.keystroke_ms",
            "150",
            "400",
            "\"people don't type that fast compared to even 200ms delayed ACKs\" (section 2.3), \
             with no pace given: a keystroke every 150 to 400 ms",
        ),
        Unknown::drawn(
            "header.id",
            "20",
            "200",
            "the server writes its id before the file (section 3.0) in a write of a size the paper \
             does not give: 20 to 200 bytes",
        ),
        Unknown::drawn(
            "header.description",
            "100",
            "400",
            "then the document's description (section 3.0), also of no given size: 100 to 400 \
             bytes; where the file's last write falls, and so whether the tail is held, depends on it",
        ),
        Unknown::drawn(
            "file.2.2KB",
            "2200",
            "2253",
            "Table 1 gives \"2.2 KB\": 2,200 bytes if a KB is 1,000, 2,253 if it is 1,024",
        ),
        Unknown::drawn(
            "file.33KB",
            "32768",
            "33792",
            "Table 1 gives \"33 KB\": from a 32 KiB file (32,768 bytes) to 33 x 1,024 = 33,792; \
             whether the rows stall depends on where the file's last write falls",
        ),
        Unknown::drawn(
            "workload.response_gap",
            "\"0us\"",
            "\"1ms\"",
            "the paper says the network drains data faster than the application supplies it \
             (section 3.0) but gives no timing of the server's writes: from back to back up to \
             1 ms between writes",
        ),
        Unknown::drawn(
            "workload.response_jitter",
            "\"0us\"",
            "\"500us\"",
            "a real server's pace varies from one response to the next (scheduling, the \
             buffer cache); up to this much more before each write, drawn per write, so a stall \
             that catches some responses and not others shows as an intermediate rate, as the \
             paper's Linux row (55 req/s) suggests",
        ),
    ]
}

/// The rows `--quick` runs: every UW7-client row and the FreeBSD-client rows
/// at 4 KB (the full run adds the 16 KB rows).
pub(super) fn table1_rows(quick: bool) -> impl Iterator<Item = &'static WebRow> {
    TABLE1
        .iter()
        .filter(move |r| !quick || r.client == "UW7" || r.rwnd == "4KiB")
}

/// The row's job key: its Table 1 labels.
pub(super) fn row_key(r: &WebRow, file: &str) -> Vec<String> {
    vec![
        r.client.into(),
        r.rwnd.into(),
        r.server.into(),
        r.policy.into(),
        file.into(),
    ]
}

/// The server's send policy for a row: the profile's own (Nagle on), or the
/// override the paper's hosts used (Nagle off: TCP_NODELAY; its new policy).
pub(super) fn web_policy_override(policy: &str) -> Option<&'static str> {
    match policy {
        "Nagle off" => Some("nodelay"),
        "new policy" => Some("doupnik"),
        _ => None,
    }
}

/// The overrides that make one published cell: the two profiles, the
/// row's client window and, for Nagle off and the new policy, the server's
/// send policy. Nothing else varies between cells.
pub(super) fn web_overrides(r: &WebRow, response: &str, quick: bool, at: &At) -> Vec<String> {
    let mut ov = at.overrides();
    ov.extend([
        o("client.profile", format!("\"{}\"", r.client_profile)),
        o("server.profile", format!("\"{}\"", r.server_profile)),
        o("client.rcv_buf", format!("\"{}\"", r.rwnd)),
        o("workload.response", response),
        o("duration", if quick { "\"2s\"" } else { "\"10s\"" }),
    ]);
    if let Some(p) = web_policy_override(r.policy) {
        ov.push(o("server.send_policy", format!("\"{p}\"")));
    }
    ov
}

pub(super) fn doupnik_jobs(quick: bool, at: &At) -> Vec<Job> {
    let base = base_of("doupnik-web");
    let mut jobs = Vec::new();
    for r in table1_rows(quick) {
        for (file, response, _) in files(at) {
            jobs.push(Job {
                key: row_key(r, file),
                scenario: scenario(
                    base,
                    "scenarios/doupnik-web.toml",
                    &web_overrides(r, &response, quick, at),
                ),
                capture: false,
            });
        }
    }
    // Section 3: "[the client's] use or not of Nagle mode has no influence":
    // a strict-Nagle row of each client with the client's Nagle off.
    for r in table1_rows(quick)
        .filter(|r| CLIENT_NAGLE_ROWS.contains(&(r.client, r.rwnd, r.server, r.policy)))
    {
        for (file, response, _) in files(at) {
            let mut ov = web_overrides(r, &response, quick, at);
            ov.push(o("client.send_policy", "\"nodelay\""));
            let mut key = row_key(r, file);
            key.push("client nodelay".into());
            jobs.push(Job {
                key,
                scenario: scenario(base, "scenarios/doupnik-web.toml", &ov),
                capture: false,
            });
        }
    }
    // Section 2.3: liberal Nagle holds a tail only when the window holds
    // octets back: a 3.5 MSS write into a 3 MSS window.
    for policy in ["nagle-liberal", "nodelay"] {
        jobs.push(Job {
            key: vec![
                "policy".into(),
                POLICY_PATTERNS[1].0.into(),
                format!("{policy}, 3 MSS window"),
            ],
            scenario: scenario(
                base,
                "scenarios/doupnik-web.toml",
                &[
                    o("client.profile", "\"freebsd3\""),
                    o("server.profile", "\"freebsd3\""),
                    o("client.send_policy", format!("\"{policy}\"")),
                    o("server.rcv_buf", 3 * 1460),
                    o("workload.request", POLICY_PATTERNS[1].1),
                    o("workload.response", "[1]"),
                    o("duration", if quick { "\"2s\"" } else { "\"5s\"" }),
                ],
            ),
            capture: false,
        });
    }
    // Section 2.3: hand typing, one keystroke per write, echoed.
    for policy in TYPING_POLICIES {
        let typing = with_workload(
            base,
            &format!(
                "type = \"interactive\"\nkeystrokes = 40\nsize = 1\ninterval = \"{:.0}ms\"",
                at.number("typing.keystroke_ms", 250.0)
            ),
        );
        jobs.push(Job {
            key: vec!["typing".into(), policy.into()],
            scenario: scenario(
                &typing,
                "scenarios/doupnik-web.toml",
                &[
                    o("client.profile", "\"freebsd3\""),
                    o("server.profile", "\"freebsd3\""),
                    o("client.send_policy", format!("\"{policy}\"")),
                    o("duration", "\"20s\""),
                ],
            ),
            capture: false,
        });
    }
    // Sections 1.4-2.3: the policies on their own patterns, client to a
    // FreeBSD 3.2 server (200 ms delayed ACK), one job per pattern and policy.
    for (pattern, request) in POLICY_PATTERNS {
        for (policy, ack) in POLICY_SENDERS {
            let mut ov = vec![
                o("client.profile", "\"freebsd3\""),
                o("server.profile", "\"freebsd3\""),
                o("client.send_policy", format!("\"{policy}\"")),
                o("workload.request", request),
                o("workload.response", "[1]"),
                o("duration", if quick { "\"2s\"" } else { "\"5s\"" }),
            ];
            if let Some(a) = ack {
                ov.push(o("server.ack_policy", format!("\"{a}\"")));
            }
            if pattern == POLICY_PATTERNS[3].0 {
                ov.push(o("server.rcv_buf", "\"8KiB\""));
            }
            jobs.push(Job {
                key: vec!["policy".into(), pattern.into(), label_of(policy, ack)],
                scenario: scenario(base, "scenarios/doupnik-web.toml", &ov),
                capture: false,
            });
        }
    }
    jobs
}

/// The rows whose client runs once more with Nagle off (Doupnik 3.0: the
/// client's Nagle setting has no influence): one strict-Nagle row per client.
pub(super) const CLIENT_NAGLE_ROWS: [(&str, &str, &str, &str); 2] = [
    ("UW7", "32KiB", "FreeBSD", "Nagle on"),
    ("FreeBSD", "4KiB", "UW7", "Nagle on"),
];

/// The client's send policies for hand typing (Doupnik 2.3: "all three
/// approaches and non-Nagle are about the same on the wire").
pub(super) const TYPING_POLICIES: [&str; 4] = ["nagle", "nagle-liberal", "doupnik", "nodelay"];

/// The patterns of Doupnik 1.4 and 2.2-2.3, written by the client: two short
/// writes then a read; one write of 3.5 MSS; 100 one-byte writes; and
/// 20,000 bytes in one write into an 8 KB window (where Rule 3 differs).
pub(super) const POLICY_PATTERNS: [(&str, &str); 4] = [
    ("write(small), write(small), read()", "[40, 40]"),
    ("one write of 3.5 MSS", "[5110]"),
    ("100 one-byte writes", "[\"1x100\"]"),
    ("20,000 B through a window", "[20000]"),
];
/// The senders compared, with the receiver's ACK policy where it is not the
/// freebsd3 profile's (the RTT-scaled delay of Doupnik 1.6).
pub(super) const POLICY_SENDERS: [(&str, Option<&str>); 6] = [
    ("nagle", None),
    ("nagle-liberal", None),
    ("doupnik", None),
    ("doupnik-liberal", None),
    ("nodelay", None),
    ("nagle", Some("adaptive")),
];

pub(super) fn label_of(policy: &str, ack: Option<&str>) -> String {
    match ack {
        Some(a) => format!("{policy}, receiver {a}"),
        None => policy.to_string(),
    }
}

/// (req/s, KiB/s of file, server data segments per request, small ones per request).
pub(super) fn web_figures(d: &Done, file_bytes: f64) -> (f64, f64, f64, f64) {
    let r = &d.result;
    let n = r.transactions.max(1) as f64;
    (
        r.transactions_per_s,
        r.transactions_per_s * file_bytes / 1024.0,
        r.server.data_segments as f64 / n,
        r.server.small_segments as f64 / n,
    )
}

/// Whether a published rate was bounded by the 1999 hosts' CPUs rather than
/// by a protocol stall: it is within the tolerance of the best published
/// rate for the same client, server, window and file.
pub(super) fn cpu_bound(r: &WebRow, fi: usize) -> bool {
    let best = TABLE1
        .iter()
        .filter(|x| x.client == r.client && x.rwnd == r.rwnd && x.server == r.server)
        .map(|x| x.published[fi * 2])
        .fold(0.0, f64::max);
    crate::within_tolerance(best, r.published[fi * 2])
}

/// The rate of a delayed-ACK stall for file `fi`: the highest rate Table 1
/// publishes for a row that stalled (under 10 req/s, a 200 ms wait per request).
pub(super) fn stall_rate(fi: usize) -> f64 {
    TABLE1
        .iter()
        .map(|x| x.published[fi * 2])
        .filter(|&p| p < 10.0)
        .fold(0.0, f64::max)
}

/// Table 1's request rates as a chart: ours per row and file (a bar, with
/// its range over the open values once merged), the published rate marked.
pub(super) fn table1_chart(t: &Table) -> Chart {
    let categories = t
        .rows
        .iter()
        .map(|r| {
            format!(
                "{} {} -> {}, {}",
                r.labels[0], r.labels[1], r.labels[2], r.labels[3]
            )
        })
        .collect();
    let series = FILE_BYTES
        .iter()
        .enumerate()
        .map(|(fi, (file, _, _))| Series {
            label: format!("{file} rate"),
            values: t
                .rows
                .iter()
                .map(|r| r.values.get(fi * 4).and_then(|v| v.measured).unwrap_or(0.0))
                .collect(),
            published: t
                .rows
                .iter()
                .map(|r| r.values.get(fi * 4).and_then(|v| v.published))
                .collect(),
            spread: Vec::new(),
        })
        .collect();
    Chart {
        title: "Table 1: request rate per row, ours (bars; whiskers: lowest to highest over the \
                open values) and published (circles)"
            .into(),
        y_label: "requests/s".into(),
        categories,
        series,
        log: true,
    }
}

pub(super) fn doupnik_section(quick: bool, at: &At, done: &[Done]) -> Section {
    const EXP: &str = "doupnik-web";
    let mut columns = Vec::new();
    for (file, _, _) in FILE_BYTES {
        columns.push(Column::new(&format!("{file} rate"), "req/s", 0));
        columns.push(Column::new(&format!("{file} throughput"), "KiB/s", 0));
        columns.push(Column::new(&format!("{file} segments"), "per request", 1));
        columns.push(Column::new(
            &format!("{file} small segments"),
            "per request",
            1,
        ));
    }
    let mut t = Table {
        title: "Requests and bytes per second (Table 1 in brackets), and the server's data segments per request".into(),
        label_headers: ["client", "client rwnd", "server", "server policy"]
            .map(String::from)
            .to_vec(),
        columns,
        rows: Vec::new(),
    };
    let findings = Vec::new();
    let mut differences = Vec::new();
    let (mut cells, mut works) = (Vec::new(), Vec::new());
    let mut no_stall = Vec::new();
    let rows: Vec<&WebRow> = table1_rows(quick).collect();
    for r in &rows {
        let mut values = Vec::new();
        for (fi, (file, _, bytes)) in files(at).iter().enumerate() {
            let Some(d) = find(
                done,
                &row_key(r, file)
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            ) else {
                values.extend(std::iter::repeat_with(Val::default).take(4));
                continue;
            };
            let (rps, kbs, segs, small) = web_figures(d, *bytes);
            let p = r.published[fi * 2];
            let bound = cpu_bound(r, fi);
            // A CPU-bound published figure is shown, not read: the table
            // shades by the rule the Table 1 cell is read by.
            let rule = if bound {
                crate::Rule::Untestable
            } else {
                crate::Rule::Within
            };
            values.push(Val::new(rps, Some(p)).read_by(rule));
            values.push(Val::new(kbs, Some(r.published[fi * 2 + 1])).read_by(rule));
            values.push(Val::new(segs, None));
            values.push(Val::new(small, None));
            let labels = [r.client, r.rwnd, r.server, r.policy, *file];
            // A CPU-bound published rate cannot be tested for its value (the
            // simulator models no CPU time); that the row did not stall is
            // its own claim, below. A stall-bound rate is compared both ways.
            let ok = crate::within_tolerance(p, rps);
            if bound {
                let stall = stall_rate(fi);
                no_stall.push(Cell::new(
                    &labels,
                    None,
                    q(rps, "req/s"),
                    format!("{rps:.0} req/s; a delayed-ACK stall runs at about {stall:.0}"),
                    Verdict::from_holds(rps > stall && !crate::within_tolerance(stall, rps)),
                    || {
                        Some(if r.server_profile == "solaris7" {
                            format!(
                            "ours stalls where the paper's {} server did not: {rps:.1} req/s against {p:.0} published. \
                             The file's last write arrives while earlier data is unacknowledged and \
                             leaves usable data under the Nagle limit (min(MSS, tcp_naglim_def)), so \
                             liberal Nagle holds it and the {} client's delayed ACK releases it; the \
                             send buffer (unsent bytes only, as tcp_xmit_hiwat) does not hold it. Later Solaris source (illumos \
                             tcp_output.c tcp_wput_data) also requires the previous segment sent to be \
                             under the limit before holding, which would send this tail after a full \
                             segment; whether Solaris 7 had that clause is not documented, and Davids' \
                             trace 5 (21 packets with naglim 30, which the rule without it gives) \
                             suggests the Solaris of 2001 did not. Not tuned",
                            r.server, r.client_profile)
                        } else {
                            format!(
                                "ours stalls where the paper's {} server did not: {rps:.1} req/s, within the \
                                 tolerance of the stalled rows' {stall:.0}",
                                r.server
                            )
                        })
                    },
                ).with_config(d.config.clone()));
            }
            cells.push(Cell::new(
                &labels,
                q(p, "req/s"),
                q(rps, "req/s"),
                format!(
                    "{rps:.0} req/s ({}; {} to {})",
                    if bound { "published rate CPU-bound: not testable for its value" } else { "published rate stall-bound" },
                    r.client_profile,
                    r.server_profile
                ),
                if bound { Verdict::NotTestable } else { Verdict::from_holds(ok) },
                || {
                    Some(if bound {
                        "the published rate was bounded by the 1999 hosts' CPUs (it is within the \
                         tolerance of the best rate for the same hosts and file), and the simulator \
                         models no CPU time; whether the row stalled is checked by the no-stall claim"
                            .to_string()
                    } else if rps > p && r.server == "Linux" {
                        "no lone small segment behind the 4 KB window stalls on every request in \
                         our runs: the paper's intermediate 55 req/s (238 with Nagle off) is a stall \
                         on some requests only, which our runs reach only where the draws put the \
                         file's last write behind the window"
                            .to_string()
                    } else if rps > p
                        && tinygram_proto::profile::find(r.client_profile)
                            .ok()
                            .and_then(|pr| pr.rows().filter(|x| x.key == "delack_segments").last())
                            .is_some_and(|x| x.value.parse::<u64>().is_ok_and(|n| n >= u64::from(u32::MAX)))
                    {
                        format!(
                            "no stall in our run where the paper's {} server stalled: the {} client \
                             sends no ACK on a segment's arrival (4.4BSD tcp_input.c: the \
                             header-prediction path only sets TF_DELACK); its early ACKs are the \
                             window updates tcp_output sends after a read (uipc_socket.c soreceive \
                             calls PRU_RCVD once per read; tcp_usrreq.c PRU_RCVD calls tcp_output, \
                             which sends when the window opens by adv >= 2 x t_maxseg or 2 x adv >= \
                             sb_hiwat), which the profile models. Our client reads each segment as it \
                             arrives, so every second full segment is ACKed, and in our run the last \
                             of those updates acknowledges everything before the {} server's held \
                             tail, releasing it without the 200 ms timer. The paper's \
                             stall needs that last update to miss the last full segment, which \
                             depends on how many segments each of its client's reads took \
                             (interrupt batching, read sizes): the paper does not give them",
                            r.server, r.client_profile, r.server_profile
                        )
                    } else if rps > p {
                        let setting = |k: &str| {
                            tinygram_proto::profile::find(r.client_profile)
                                .ok()
                                .and_then(|pr| pr.rows().filter(|x| x.key == k).last())
                                .map_or("the rfc profile's", |x| x.value)
                        };
                        format!(
                            "no stall in our run where the paper's {} server stalled: the {} client \
                             ACKs every {} data segments (delack_count {}), so the header segment and \
                             the first full segment draw an immediate ACK that releases the {} \
                             server's held tail. In 4.4BSD tcp_input.c the header-prediction path only \
                             sets TF_DELACK, leaving the early ACK to the window update a read of 2 x \
                             MSS sends, which a 2.2 KB response never reaches: that client would \
                             stall, as the paper's did",
                            r.server,
                            r.client_profile,
                            setting("delack_segments"),
                            setting("delack_count"),
                            r.server_profile
                        )
                    } else {
                        format!("ours stalls longer than the paper's ({rps:.1} against {p:.0} req/s)")
                    })
                },
            ).with_config(d.config.clone()));
        }
        t.rows.push(Row {
            labels: vec![
                r.client.to_string(),
                r.rwnd.to_string(),
                r.server.to_string(),
                r.policy.to_string(),
            ],
            values,
        });
    }
    // Policy comparisons within one client/server/window.
    for r in rows.iter().filter(|r| r.policy == "new policy") {
        for (file, _, bytes) in files(at).iter() {
            let k = |policy: &str| {
                let mut key = row_key(r, file);
                key[3] = policy.into();
                find(done, &key.iter().map(String::as_str).collect::<Vec<_>>())
                    .map(|d| web_figures(d, *bytes))
            };
            let (Some(new), Some(off), Some(on)) = (k("new policy"), k("Nagle off"), k("Nagle on"))
            else {
                continue;
            };
            // "It works better than strict Nagle. It works as well as both
            // liberal Nagle (but without the held tail effect) and non-Nagle."
            let strict = r.server == "FreeBSD";
            let (what, verdict) = if strict {
                ("better than strict Nagle", crate::beats(new.0, on.0, true))
            } else {
                (
                    "as well as liberal Nagle (at least, by the tolerance)",
                    crate::at_least(on.0, new.0),
                )
            };
            works.push(Cell::new(
                &[r.client, r.rwnd, r.server, file, what],
                None,
                q(new.0 / on.0.max(1e-9), "x Nagle-on's rate"),
                format!("new policy {:.0}, Nagle on {:.0} req/s", new.0, on.0),
                Verdict::from_holds(verdict),
                || {
                    Some(format!(
                        "new policy {:.0} against Nagle on {:.0} req/s",
                        new.0, on.0
                    ))
                },
            ));
            works.push(Cell::new(
                &[r.client, r.rwnd, r.server, file, "as well as non-Nagle"],
                None,
                q(new.0 / off.0.max(1e-9), "x Nagle-off's rate"),
                format!("new policy {:.0}, Nagle off {:.0} req/s", new.0, off.0),
                Verdict::from_holds(crate::within_tolerance(off.0, new.0)),
                || Some("the new policy stalls where Nagle-off does not".into()),
            ));
        }
    }
    // The header-size sweep, as context for the strict-Nagle cells.
    differences.push(
        "Absolute rates: the 1999 machines (233-400 MHz) bounded the rates where nothing \
         stalled (about 1,000-1,700 requests/s); the simulator models no CPU time, so there \
         our rates are set by the 100 Mb/s wire alone. Such published cells (within the \
         tolerance of the best rate of their client, server and window) are not testable for \
         their value; that they did not stall is a claim of its own."
            .into(),
    );
    let pol = |pattern: &str, sender: &str| -> Option<(f64, f64, f64)> {
        let d = find(done, &["policy", pattern, sender])?;
        let r = &d.result;
        let n = r.transactions.max(1) as f64;
        Some((
            r.transactions_per_s,
            r.client.data_segments as f64 / n,
            r.client.small_segments as f64 / n,
        ))
    };
    let mut extra_claims = Vec::new();
    {
        use crate::within_tolerance;
        // "Its use or not of Nagle mode has no influence" (section 3.0).
        let mut cells = Vec::new();
        for r in rows
            .iter()
            .filter(|r| CLIENT_NAGLE_ROWS.contains(&(r.client, r.rwnd, r.server, r.policy)))
        {
            for (file, _, bytes) in files(at).iter() {
                let key = row_key(r, file);
                let mut off = key.clone();
                off.push("client nodelay".into());
                let get = |k: &[String]| {
                    find(done, &k.iter().map(String::as_str).collect::<Vec<_>>())
                        .map(|d| web_figures(d, *bytes).0)
                };
                let (Some(on), Some(nd)) = (get(&key), get(&off)) else {
                    continue;
                };
                cells.push(Cell::new(
                    &[r.client, r.rwnd, r.server, file],
                    None,
                    q(nd / on.max(1e-9), "x the rate with the client's Nagle on"),
                    format!("client Nagle on {on:.0}, off {nd:.0} req/s"),
                    Verdict::from_holds(within_tolerance(on, nd)),
                    || {
                        Some(format!(
                            "the client's Nagle moves the rate: {on:.0} against {nd:.0} req/s"
                        ))
                    },
                ));
            }
        }
        extra_claims.push(Claim::matrix(
            EXP,
            "client-nagle-no-influence",
            "section 3.0",
            "The web client's use or not of Nagle mode has no influence (each request is one \
             segment after a long response): the rate with the client's Nagle off is within the \
             tolerance of the rate with it on"
                .into(),
            &["client", "client rwnd", "server", "file"],
            cells,
        ));
        // "Liberal Nagle can also [hold a tail], but only when windowing or
        // congestion avoidance hold back octets" (section 2.3).
        let pat = POLICY_PATTERNS[1].0;
        let rate = |sender: &str| {
            find(done, &["policy", pat, sender]).map(|d| d.result.transactions_per_s)
        };
        if let (Some(lib), Some(nd), Some(lib3), Some(nd3)) = (
            rate("nagle-liberal"),
            rate("nodelay"),
            rate("nagle-liberal, 3 MSS window"),
            rate("nodelay, 3 MSS window"),
        ) {
            extra_claims.push(Claim::matrix(
                EXP,
                "liberal-nagle-holds-only-behind-window",
                "section 2.3",
                "Liberal Nagle holds a tail only when windowing holds octets back: one write of 3.5 \
                 MSS runs as fast as Nagle-off (within the tolerance) with the whole write inside \
                 the window, and slower than Nagle-off into a window of 3 MSS"
                    .into(),
                &["window"],
                vec![
                    Cell::new(
                        &["16 KB (whole write allowed)"],
                        None,
                        q(lib / nd.max(1e-9), "x Nagle-off's rate"),
                        format!("liberal Nagle {lib:.0}, Nagle off {nd:.0} req/s"),
                        Verdict::from_holds(within_tolerance(nd, lib)),
                        || Some(format!("liberal Nagle holds a tail with nothing held back: {lib:.0} against {nd:.0} req/s")),
                    ),
                    Cell::new(
                        &["3 MSS (0.5 MSS held back)"],
                        None,
                        q(lib3 / nd3.max(1e-9), "x Nagle-off's rate"),
                        format!("liberal Nagle {lib3:.0}, Nagle off {nd3:.0} req/s"),
                        Verdict::from_holds(crate::beats(nd3, lib3, true)),
                        || Some(format!("no held tail behind the window: {lib3:.0} against {nd3:.0} req/s")),
                    ),
                ],
            ));
        }
        // "For human typing all three approaches and non-Nagle are about the
        // same on the wire" (section 2.3).
        let per_key = |policy: &str| {
            find(done, &["typing", policy]).map(|d| {
                let r = &d.result;
                (r.client.data_segments
                    + r.client.pure_acks
                    + r.server.data_segments
                    + r.server.pure_acks) as f64
                    / r.transactions.max(1) as f64
            })
        };
        if let Some(nd) = per_key("nodelay") {
            let cells: Vec<Cell> = TYPING_POLICIES[..3]
                .iter()
                .filter_map(|p| {
                    let x = per_key(p)?;
                    Some(Cell::new(
                        &[p],
                        None,
                        q(x, "packets per keystroke"),
                        format!("{x:.1} packets per keystroke, Nagle off {nd:.1}"),
                        Verdict::from_holds(within_tolerance(nd, x)),
                        || {
                            Some(format!(
                                "{p}: {x:.1} packets per keystroke against Nagle-off's {nd:.1}"
                            ))
                        },
                    ))
                })
                .collect();
            extra_claims.push(Claim::matrix(
                EXP,
                "hand-typing-same-on-the-wire",
                "section 2.3",
                "For human typing (one keystroke per write, echoed) strict and liberal Nagle, the new \
                 policy and non-Nagle are about the same on the wire: packets per keystroke within \
                 the tolerance of Nagle-off's"
                    .into(),
                &["client policy"],
                cells,
            ));
        }
    }
    {
        use crate::within_tolerance;
        // 2.3: write(small), write(small), read(): Nagle holds the second write.
        let pat = POLICY_PATTERNS[0].0;
        if let Some((nd, _, _)) = pol(pat, "nodelay") {
            let cells: Vec<Cell> = ["nagle", "nagle-liberal", "doupnik"]
                .iter()
                .filter_map(|p| {
                    let (r, _, _) = pol(pat, p)?;
                    let holds = !p.starts_with("doupnik");
                    let ok = if holds {
                        crate::beats(nd, r, true)
                    } else {
                        within_tolerance(nd, r)
                    };
                    Some(Cell::new(
                        &[p],
                        None,
                        q(r, "req/s"),
                        format!("{r:.1} req/s (Nagle off {nd:.0})"),
                        Verdict::from_holds(ok),
                        || Some(format!("{p}: {r:.1} req/s against Nagle-off's {nd:.0}")),
                    ))
                })
                .collect();
            extra_claims.push(Claim::matrix(
                EXP,
                "two-writes-then-read",
                "section 2.3",
                "write(small), write(small), read(): strict and liberal Nagle hold the second write's \
                 data (a lower request rate than Nagle-off's); the new policy does not (within the \
                 tolerance of it)"
                    .into(),
                &["client policy"],
                cells,
            ));
        }
        // 1.4: one write of 3.5 MSS: strict Nagle holds the 0.5 MSS tail.
        let pat = POLICY_PATTERNS[1].0;
        if let (Some(on), Some(new), Some(nd)) =
            (pol(pat, "nagle"), pol(pat, "doupnik"), pol(pat, "nodelay"))
        {
            extra_claims.push(Claim::new(
                EXP,
                "held-tail-3-5-mss",
                "section 1.4",
                format!(
                    "A 3.5 MSS write under strict Nagle holds its 0.5 MSS tail until every earlier \
                     segment is ACKed, the last ACK delayed: {:.1} req/s against {:.0} for the new \
                     policy and {:.0} with Nagle off",
                    on.0, new.0, nd.0
                ),
                None,
                q(on.0, "req/s"),
                Verdict::from_holds(
                    crate::beats(nd.0, on.0, true) && within_tolerance(nd.0, new.0),
                ),
                || {
                    Some(format!(
                        "strict Nagle {:.1} vs Nagle off {:.0} req/s",
                        on.0, nd.0
                    ))
                },
            ));
        }
        // 2.2: one-octet writes: the new policy and non-Nagle send tinygrams; Nagle groups.
        let pat = POLICY_PATTERNS[2].0;
        if let (Some(on), Some(new), Some(nd)) =
            (pol(pat, "nagle"), pol(pat, "doupnik"), pol(pat, "nodelay"))
        {
            extra_claims.push(Claim::new(
                EXP,
                "one-byte-writes-tinygrams",
                "section 2.2",
                format!(
                    "With one-octet writes the new policy and non-Nagle behave alike and send \
                     tinygrams, while Nagle groups them: {:.1} and {:.1} segments per 100 writes \
                     against {:.1}",
                    new.1, nd.1, on.1
                ),
                None,
                q(new.1, "segments per 100 writes"),
                Verdict::from_holds(
                    within_tolerance(nd.1, new.1) && crate::beats(on.1, nd.1, false),
                ),
                || {
                    Some(format!(
                        "new policy {:.1}, Nagle off {:.1}, Nagle {:.1} segments",
                        new.1, nd.1, on.1
                    ))
                },
            ));
        }
        // 2.1-2.2: optional Rule 3 sends small segments from data not at the end.
        let pat = POLICY_PATTERNS[0].0;
        if let (Some(fixed), Some(scaled)) =
            (pol(pat, "nagle"), pol(pat, "nagle, receiver adaptive"))
        {
            extra_claims.push(Claim::new(
                EXP,
                "rtt-scaled-delayed-ack",
                "section 1.6",
                format!(
                    "A receiver delay of about one round trip instead of a fixed 200 ms makes delayed \
                     ACKs more effective: strict Nagle's write(small), write(small), read() runs at \
                     {:.0} req/s against {:.1}",
                    scaled.0, fixed.0
                ),
                None,
                q(scaled.0, "req/s"),
                Verdict::from_holds(crate::beats(scaled.0, fixed.0, true)),
                || Some("the round-trip-scaled delay does not shorten the wait".into()),
            ));
        }
    }
    let claims = vec![
        Claim::matrix(
            EXP,
            "table-1",
            "section 3, Table 1",
            "Table 1, cell by cell: each published request rate, one run per cell with the \
             profiles of the hosts the row names"
                .into(),
            &["client", "client rwnd", "server", "server policy", "file"],
            cells,
        ),
        Claim::matrix(
            EXP,
            "cpu-bound-rows-do-not-stall",
            "section 3, Table 1",
            "Table 1's rows whose rate was bounded by the hosts' CPUs did not stall: ours runs \
             above a delayed-ACK stall's rate (the paper's stalled rows, by more than the tolerance)"
                .into(),
            &["client", "client rwnd", "server", "server policy", "file"],
            no_stall,
        ),
        Claim::matrix(
            EXP,
            "new-policy-works",
            "section 3 (results)",
            "The new policy works better than strict Nagle and as well as both liberal Nagle \
             (without the held tail) and non-Nagle: per Table 1 row with a new-policy server, \
             faster than a strict-Nagle server, at least a liberal-Nagle server's rate by the \
             tolerance, and within the tolerance of Nagle-off's"
                .into(),
            &["client", "client rwnd", "server", "file", "against"],
            works,
        ),
    ];
    let mut claims = claims;
    claims.extend(extra_claims);
    Section {
        setup: "Keep-alive requests over a 100 Mb/s Ethernet (20 us one-way). Each published \
                row of Table 1 is one run per file, with the stack profiles of the hosts the \
                row names (UW7 = `uw7`, FreeBSD 3.2 = `freebsd3`, Solaris 7 = `solaris7`, \
                Linux 2.2.5 = `linux22`; `tinygram profiles` lists their sources) and the row's \
                client window; Nagle off is the server profile with `nodelay`, the new policy \
                with `doupnik`. The client sends a 120-byte GET; the server answers with two \
                short writes (server id and document description, of sizes the paper does not \
                give: unknowns) and then the file (2.2 KB in one write, 33 KB in 4 KB writes, \
                each size an unknown). `segments` counts the server's data \
                segments per request, `small segments` those under one MSS."
            .into(),
        charts: vec![table1_chart(&t)],
        tables: vec![t],
        findings,
        differences,
        claims,
        ..shell(EXP)
    }
}
