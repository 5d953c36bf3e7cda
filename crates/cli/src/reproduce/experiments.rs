//! The experiments: which variants each document's experiment needs, the
//! published numbers, and what to read off our results.

use super::{
    document, q, scenario, Cell, Chart, Claim, Column, Done, Experiment, Job, Row, Section, Series,
    Table, Val, Verdict,
};

/// Every experiment, in the order of the report.
pub static EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "doupnik-web",
        title: "Web serving with Nagle on, off and the new policy",
        doc: "doupnik-1999",
        part: "section 3, Table 1",
        base: include_str!("../../../../scenarios/doupnik-web.toml"),
        jobs: doupnik_jobs,
        section: doupnik_section,
    },
    Experiment {
        name: "davids-traces",
        title: "50 writes of 10 bytes: Nagle, NODELAY, naglim and the delayed-ACK time",
        doc: "davids-2001",
        part: "traces 1-7 (Figures 1-7)",
        base: include_str!("../../../../scenarios/davids-traces.toml"),
        jobs: davids_jobs,
        section: davids_section,
    },
    Experiment {
        name: "cheshire-cliff",
        title: "The 99,912 / 99,913-byte cliff",
        doc: "cheshire-2005",
        part: "Case Study: WiFi Performance Testing Program, and the November 2012 update",
        base: include_str!("../../../../scenarios/cheshire-cliff.toml"),
        jobs: cheshire_jobs,
        section: cheshire_section,
    },
    Experiment {
        name: "westfield-ftp",
        title: "FTP into a one-segment window: delayed ACK, interactivity and fuzzball",
        doc: "westfield-mills-1985",
        part: "Westfield's post of 31 October 1985 and Mills' reply of 1 November",
        base: include_str!("../../../../scenarios/westfield-ftp.toml"),
        jobs: westfield_jobs,
        section: westfield_section,
    },
    Experiment {
        name: "fox-satellite",
        title: "Big windows and NAKs over a noisy satellite link",
        doc: "rfc1106",
        part: "appendix, Figures 1 and 2",
        base: include_str!("../../../../scenarios/fox-satellite.toml"),
        jobs: fox_jobs,
        section: fox_section,
    },
];

/// A section with the experiment's name, title and source filled in.
fn shell(name: &str) -> Section {
    let e = EXPERIMENTS
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no experiment {name:?}"));
    Section {
        name: e.name,
        title: e.title,
        doc: document(e.doc),
        part: e.part,
        setup: String::new(),
        tables: Vec::new(),
        charts: Vec::new(),
        findings: Vec::new(),
        differences: Vec::new(),
        claims: Vec::new(),
        plots: Vec::new(),
        live: Default::default(),
    }
}

fn base_of(name: &str) -> &'static str {
    EXPERIMENTS
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.base)
        .unwrap_or("")
}

fn o(k: &str, v: impl std::fmt::Display) -> String {
    format!("{k}={v}")
}

/// Cells that sweep a value the document does not give: when the rules'
/// verdict changes across the sweep, every cell is not testable (the range
/// is context, `missing` says what the document leaves open).
fn sweep_cells(cells: Vec<Cell>, missing: &str) -> Vec<Cell> {
    let mixed = cells.iter().any(|c| c.verdict == Verdict::Reproduced)
        && cells.iter().any(|c| c.verdict != Verdict::Reproduced);
    if !mixed {
        return cells;
    }
    cells
        .into_iter()
        .map(|mut c| {
            let was = c.verdict.label();
            c.verdict = Verdict::NotTestable;
            c.cause = Some(format!("{missing} (this value alone: {was})"));
            c
        })
        .collect()
}

fn find<'a>(done: &'a [Done], key: &[&str]) -> Option<&'a Done> {
    done.iter()
        .find(|d| d.key.iter().map(String::as_str).eq(key.iter().copied()))
}

// ----- doupnik-web ------------------------------------------------------

/// One published row of Doupnik's Table 1: the client and server as the
/// paper names them, the profiles that model them, the client's receive
/// window where the row states one, the server's policy, and the published
/// (2.2 KB req/s, KB/s, 33 KB req/s, KB/s).
struct WebRow {
    client: &'static str,
    client_profile: &'static str,
    /// The row's "rwnd"; UW7 rows take UW7's 32 KB (Doupnik 3.0).
    rwnd: &'static str,
    server: &'static str,
    server_profile: &'static str,
    policy: &'static str,
    published: [f64; 4],
}

const fn wr(
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
const TABLE1: [WebRow; 22] = [
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

const FILES: [(&str, &str, f64); 2] = [
    ("2.2 KB", "[40, 150, 2250]", 2250.0),
    ("33 KB", "[40, 150, \"4096x8\", 232]", 33000.0),
];

/// The rows `--quick` runs: every UW7-client row and the FreeBSD-client rows
/// at 4 KB (the full run adds the 16 KB rows).
fn table1_rows(quick: bool) -> impl Iterator<Item = &'static WebRow> {
    TABLE1
        .iter()
        .filter(move |r| !quick || r.client == "UW7" || r.rwnd == "4KiB")
}

/// The row's job key: its Table 1 labels.
fn row_key(r: &WebRow, file: &str) -> Vec<String> {
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
fn web_policy_override(policy: &str) -> Option<&'static str> {
    match policy {
        "Nagle off" => Some("nodelay"),
        "new policy" => Some("doupnik"),
        _ => None,
    }
}

/// The overrides that make one published cell: the two profiles, the
/// row's client window and, for Nagle off and the new policy, the server's
/// send policy. Nothing else varies between cells.
fn web_overrides(r: &WebRow, response: &str, quick: bool) -> Vec<String> {
    let mut ov = vec![
        o("client.profile", format!("\"{}\"", r.client_profile)),
        o("server.profile", format!("\"{}\"", r.server_profile)),
        o("client.rcv_buf", format!("\"{}\"", r.rwnd)),
        o("workload.response", response),
        o("duration", if quick { "\"2s\"" } else { "\"10s\"" }),
    ];
    if let Some(p) = web_policy_override(r.policy) {
        ov.push(o("server.send_policy", format!("\"{p}\"")));
    }
    ov
}

/// The configuration of a Table 1 cell in words, for report.json.
fn web_config(r: &WebRow) -> String {
    let mut s = format!(
        "client profile {}, server profile {}, client.rcv_buf {}",
        r.client_profile, r.server_profile, r.rwnd
    );
    if let Some(p) = web_policy_override(r.policy) {
        s += &format!(", server.send_policy {p}");
    }
    s
}

fn doupnik_jobs(quick: bool) -> Vec<Job> {
    let base = base_of("doupnik-web");
    let mut jobs = Vec::new();
    for r in table1_rows(quick) {
        for (file, response, _) in FILES {
            jobs.push(Job {
                key: row_key(r, file),
                scenario: scenario(
                    base,
                    "scenarios/doupnik-web.toml",
                    &web_overrides(r, response, quick),
                ),
                capture: false,
            });
        }
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
    // Context sweep over the pacing of the server's writes, which the paper
    // describes ("the network drains data faster than the application can
    // supply it", 3.0) but does not measure.
    for r in table1_rows(quick).filter(|r| r.published[0] < 10.0) {
        for gap in RESPONSE_GAPS {
            for (file, response, _) in FILES {
                let mut ov = web_overrides(r, response, quick);
                ov.push(o("workload.response_gap", format!("\"{gap}\"")));
                let mut key = row_key(r, file);
                key.push(format!("response gap {gap}"));
                jobs.push(Job {
                    key,
                    scenario: scenario(base, "scenarios/doupnik-web.toml", &ov),
                    capture: false,
                });
            }
        }
    }
    // Context sweep over what the paper does not give: the sizes of the two
    // header writes, on the strict-Nagle cells (whose stall depends on them).
    for r in table1_rows(quick).filter(|r| r.published[0] < 10.0) {
        for (h0, h1) in HEADER_SWEEP {
            for (file, response, _) in FILES {
                let response = response.replacen("40, 150", &format!("{h0}, {h1}"), 1);
                let mut key = row_key(r, file);
                key.push(format!("headers {h0}+{h1}"));
                jobs.push(Job {
                    key,
                    scenario: scenario(
                        base,
                        "scenarios/doupnik-web.toml",
                        &web_overrides(r, &response, quick),
                    ),
                    capture: false,
                });
            }
        }
    }
    jobs
}

/// The patterns of Doupnik 1.4 and 2.2-2.3, written by the client: two short
/// writes then a read; one write of 3.5 MSS; 100 one-byte writes; and
/// 20,000 bytes in one write into an 8 KB window (where Rule 3 differs).
const POLICY_PATTERNS: [(&str, &str); 4] = [
    ("write(small), write(small), read()", "[40, 40]"),
    ("one write of 3.5 MSS", "[5110]"),
    ("100 one-byte writes", "[\"1x100\"]"),
    ("20,000 B through a window", "[20000]"),
];
/// The senders compared, with the receiver's ACK policy where it is not the
/// freebsd3 profile's (the RTT-scaled delay of Doupnik 1.6).
const POLICY_SENDERS: [(&str, Option<&str>); 6] = [
    ("nagle", None),
    ("nagle-liberal", None),
    ("doupnik", None),
    ("doupnik-liberal", None),
    ("nodelay", None),
    ("nagle", Some("adaptive")),
];

fn label_of(policy: &str, ack: Option<&str>) -> String {
    match ack {
        Some(a) => format!("{policy}, receiver {a}"),
        None => policy.to_string(),
    }
}

/// Pauses between the server's writes of one response, swept as context (the
/// verdicts use the profile's instantaneous writes).
const RESPONSE_GAPS: [&str; 3] = ["100us", "1ms", "10ms"];

/// Header write sizes swept as context (the paper gives none; ours are 40 and 150).
const HEADER_SWEEP: [(usize, usize); 4] = [(20, 100), (60, 200), (100, 300), (200, 400)];

/// (req/s, KiB/s of file, server data segments per request, small ones per request).
fn web_figures(d: &Done, file_bytes: f64) -> (f64, f64, f64, f64) {
    let r = &d.result;
    let n = r.transactions.max(1) as f64;
    (
        r.transactions_per_s,
        r.transactions_per_s * file_bytes / 1024.0,
        r.server.data_segments as f64 / n,
        r.server.small_segments as f64 / n,
    )
}

/// Adds `s` unless an identical entry is there (one per cause, not per row).
fn push_once(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// Whether a published rate was bounded by the 1999 hosts' CPUs rather than
/// by a protocol stall: it is within the tolerance of the best published
/// rate for the same client, server, window and file.
fn cpu_bound(r: &WebRow, fi: usize) -> bool {
    let best = TABLE1
        .iter()
        .filter(|x| x.client == r.client && x.rwnd == r.rwnd && x.server == r.server)
        .map(|x| x.published[fi * 2])
        .fold(0.0, f64::max);
    super::within_tolerance(best, r.published[fi * 2])
}

fn doupnik_section(quick: bool, done: &[Done]) -> Section {
    const EXP: &str = "doupnik-web";
    let mut columns = Vec::new();
    for (file, _, _) in FILES {
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
        label_headers: ["client", "client rwnd", "server", "server policy", "profiles"]
            .map(String::from)
            .to_vec(),
        columns,
        rows: Vec::new(),
    };
    let mut findings = Vec::new();
    let mut differences = Vec::new();
    let (mut cells, mut within, mut fewer, mut strict, mut liberal) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let rows: Vec<&WebRow> = table1_rows(quick).collect();
    for r in &rows {
        let mut values = Vec::new();
        for (fi, (file, _, bytes)) in FILES.iter().enumerate() {
            let Some(d) = find(
                done,
                &row_key(r, file)
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            ) else {
                values.extend([Val::default(); 4]);
                continue;
            };
            let (rps, kbs, segs, small) = web_figures(d, *bytes);
            values.push(Val::new(rps, Some(r.published[fi * 2])));
            values.push(Val::new(kbs, Some(r.published[fi * 2 + 1])));
            values.push(Val::new(segs, None));
            values.push(Val::new(small, None));
            let p = r.published[fi * 2];
            let bound = cpu_bound(r, fi);
            // A CPU-bound published rate is a floor for ours (the simulator
            // models no CPU time): reproduced if ours is no lower than the
            // tolerance allows. A stall-bound one is compared both ways.
            let ok = if bound {
                super::at_least(p, rps)
            } else {
                super::within_tolerance(p, rps)
            };
            let labels = [r.client, r.rwnd, r.server, r.policy, *file];
            cells.push(Cell::new(
                &labels,
                q(p, "req/s"),
                q(rps, "req/s"),
                format!(
                    "{rps:.0} req/s ({}; {} to {})",
                    if bound { "published rate CPU-bound: compared as a floor" } else { "published rate stall-bound" },
                    r.client_profile,
                    r.server_profile
                ),
                Verdict::from_holds(ok),
                || {
                    Some(if bound && r.server_profile == "solaris7" {
                        format!(
                            "ours stalls where the paper's {} server did not: {rps:.1} req/s against {p:.0}. \
                             The response's last write (232 bytes) reaches the solaris7 server's send \
                             buffer (8 KB) while earlier data is unacknowledged, so liberal Nagle holds \
                             it (usable data under the Nagle limit, min(MSS, tcp_naglim_def)), and the \
                             {} client's delayed ACK releases it. Later Solaris source (illumos \
                             tcp_output.c tcp_wput_data) also requires the previous segment sent to be \
                             under the limit before holding, which would send this tail after a full \
                             segment; whether Solaris 7 had that clause is not documented, and Davids' \
                             trace 5 (21 packets with naglim 30, which the rule without it gives) \
                             suggests the Solaris of 2001 did not. Not tuned",
                            r.server, r.client_profile
                        )
                    } else if bound {
                        format!(
                            "ours stalls where the paper's {} server did not: {rps:.1} req/s against {p:.0}",
                            r.server
                        )
                    } else if rps > p && r.server == "Linux" {
                        "no lone small segment behind the 4 KB window in our run: see the differences"
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
            ).with_config(web_config(r)));
            if r.policy == "Nagle on" && r.published[fi * 2] < 10.0 {
                strict.push(Cell::new(
                    &[r.client, r.rwnd, r.server, file],
                    q(p, "req/s"),
                    q(rps, "req/s"),
                    format!("{rps:.1} req/s"),
                    Verdict::from_holds(super::within_tolerance(p, rps)),
                    || {
                        Some(format!(
                            "no held tail at {rps:.0} req/s: see the Table 1 cell's cause"
                        ))
                    },
                ));
            }
            if r.server == "Linux" && r.rwnd == "4KiB" && *file == "33 KB" && r.policy == "Nagle on"
            {
                let off = find(
                    done,
                    &row_key(&TABLE1[14], file)
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>(),
                )
                .map(|d| web_figures(d, *bytes).0)
                .unwrap_or(0.0);
                let ok = rps < 0.5 * off;
                liberal.push(Cell::new(
                    &[r.client, r.rwnd],
                    q(55.0 / 238.0, "x Nagle-off's rate"),
                    q(rps / off.max(1e-9), "x Nagle-off's rate"),
                    format!("Nagle on {rps:.0} vs Nagle off {off:.0} req/s (published 55 vs 238)"),
                    Verdict::from_holds(ok),
                    || Some("the linux22 server never leaves a lone small segment behind the 4 KB window: see the differences".into()),
                ));
                if !ok {
                    push_once(
                        &mut differences,
                        "FreeBSD client, 4 KB window, Linux server, 33 KB, Nagle on: the paper's 55 req/s \
                         (238 with Nagle off) is liberal Nagle caught by delayed ACKs when the window leaves \
                         a small segment with no full segment before it (Doupnik 3.0). The linux22 profile \
                         cuts segments from the byte stream and holds window-limited runts (sender SWS \
                         avoidance, RFC 1122 4.2.3.4), so the response's small tail always leaves with a \
                         full segment. Not tuned."
                            .into(),
                    );
                }
            }
        }
        t.rows.push(Row {
            labels: vec![
                r.client.to_string(),
                r.rwnd.to_string(),
                r.server.to_string(),
                r.policy.to_string(),
                format!("{} -> {}", r.client_profile, r.server_profile),
            ],
            values,
        });
    }
    // Policy comparisons within one client/server/window.
    for r in rows.iter().filter(|r| r.policy == "new policy") {
        for (fi, (file, _, bytes)) in FILES.iter().enumerate() {
            let k = |policy: &str| {
                let mut key = row_key(r, file);
                key[3] = policy.into();
                find(done, &key.iter().map(String::as_str).collect::<Vec<_>>())
                    .map(|d| web_figures(d, *bytes))
            };
            let (Some(new), Some(off)) = (k("new policy"), k("Nagle off")) else {
                continue;
            };
            let pub_off = TABLE1
                .iter()
                .find(|x| {
                    x.client == r.client
                        && x.rwnd == r.rwnd
                        && x.server == r.server
                        && x.policy == "Nagle off"
                })
                .map(|x| x.published[fi * 2]);
            within.push(Cell::new(
                &[r.client, r.rwnd, r.server, file],
                pub_off.and_then(|o| q(r.published[fi * 2] / o, "x Nagle-off's rate")),
                q(new.0 / off.0.max(1e-9), "x Nagle-off's rate"),
                format!("new policy {:.0}, Nagle off {:.0} req/s", new.0, off.0),
                Verdict::from_holds(super::within_tolerance(off.0, new.0)),
                || Some("the new policy stalls where Nagle-off does not".into()),
            ));
            if fi == 1 {
                let ok = new.3 < off.3;
                fewer.push(Cell::new(
                    &[r.client, r.rwnd, r.server],
                    None,
                    q(new.3, "small segments per request"),
                    format!("new policy {:.2} vs Nagle off {:.2} small segments per request", new.3, off.3),
                    Verdict::from_holds(ok),
                    || {
                        (new.3 == off.3).then(|| {
                            "by the rules both policies cut these writes into the same segments: each \
                             4 KB write ends an application data set, so Rule 2 (Doupnik 2.1) sends its \
                             tail at once, as Nagle-off does; Doupnik 2.3 joins only interior small \
                             pieces, which these writes do not mark"
                                .to_string()
                        })
                    },
                ));
            }
        }
    }
    // The header-size sweep, as context for the strict-Nagle cells.
    for r in rows.iter().filter(|r| r.published[0] < 10.0) {
        for (file, _, bytes) in FILES {
            let rates: Vec<f64> = HEADER_SWEEP
                .iter()
                .filter_map(|(h0, h1)| {
                    let mut key = row_key(r, file);
                    key.push(format!("headers {h0}+{h1}"));
                    find(done, &key.iter().map(String::as_str).collect::<Vec<_>>())
                        .map(|d| web_figures(d, bytes).0)
                })
                .collect();
            if rates.is_empty() {
                continue;
            }
            let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rates.iter().copied().fold(0.0, f64::max);
            findings.push(format!(
                "{} client ({}) to {} server, Nagle on, {file}: with header writes of {} bytes \
                 (the paper gives no sizes; the verdict uses 40 + 150) the rate ranges from \
                 {lo:.1} to {hi:.1} req/s.",
                r.client,
                r.rwnd,
                r.server,
                HEADER_SWEEP
                    .iter()
                    .map(|(a, b)| format!("{a}+{b}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    for r in rows.iter().filter(|r| r.published[0] < 10.0) {
        for (file, _, bytes) in FILES {
            let rates: Vec<String> = RESPONSE_GAPS
                .iter()
                .filter_map(|gap| {
                    let mut key = row_key(r, file);
                    key.push(format!("response gap {gap}"));
                    find(done, &key.iter().map(String::as_str).collect::<Vec<_>>())
                        .map(|d| format!("{:.1} req/s at {gap}", web_figures(d, bytes).0))
                })
                .collect();
            if !rates.is_empty() {
                findings.push(format!(
                    "{} client ({}) to {} server, Nagle on, {file}, with a pause between the \
                     server's writes (the paper says its application was slower than the network \
                     but gives no figure; the verdict uses none): {}.",
                    r.client,
                    r.rwnd,
                    r.server,
                    rates.join(", ")
                ));
            }
        }
    }
    differences.push(
        "Absolute rates: the 1999 machines (233-400 MHz) bounded the rates where nothing \
         stalled (about 1,000-1,700 requests/s); the simulator models no CPU time, so there \
         our rates are set by the 100 Mb/s wire alone. Such published cells (within the \
         tolerance of the best rate of their client, server and window) are compared as a \
         floor: ours must not be lower than the tolerance allows."
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
        use super::within_tolerance;
        // 2.3: write(small), write(small), read(): Nagle holds the second write.
        let pat = POLICY_PATTERNS[0].0;
        if let Some((nd, _, _)) = pol(pat, "nodelay") {
            let cells: Vec<Cell> = ["nagle", "nagle-liberal", "doupnik"]
                .iter()
                .filter_map(|p| {
                    let (r, _, _) = pol(pat, p)?;
                    let holds = !p.starts_with("doupnik");
                    let ok = if holds {
                        !within_tolerance(nd, r)
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
                 data (a request rate outside the tolerance of Nagle-off's); the new policy does not \
                 (within it)"
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
                Verdict::from_holds(!within_tolerance(nd.0, on.0) && within_tolerance(nd.0, new.0)),
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
                Verdict::from_holds(within_tolerance(nd.1, new.1) && !within_tolerance(nd.1, on.1)),
                || {
                    Some(format!(
                        "new policy {:.1}, Nagle off {:.1}, Nagle {:.1} segments",
                        new.1, nd.1, on.1
                    ))
                },
            ));
        }
        // 2.1-2.2: optional Rule 3 sends small segments from data not at the end.
        let pat = POLICY_PATTERNS[3].0;
        if let (Some(r2), Some(r3)) = (pol(pat, "doupnik"), pol(pat, "doupnik-liberal")) {
            extra_claims.push(Claim::new(
                EXP,
                "rule-3-more-small-segments",
                "section 2.2 (optional Rule 3)",
                format!(
                    "Optional Rule 3 permits small segments from data not at the end of the \
                     application data, which strict Rule 2 retains: {:.1} small segments per \
                     request with Rule 3 against {:.1} with Rules 1-2 (20,000 bytes in one write)",
                    r3.2, r2.2
                ),
                None,
                q(r3.2, "small segments per request"),
                Verdict::from_holds(r3.2 > r2.2),
                || {
                    Some(
                        "both rules sent the same small segments: where the window cuts a partial \
                         segment off data that is not the end of the write, sender SWS avoidance \
                         (RFC 1122 4.2.3.4) holds it under both, so Rule 3 has nothing to release"
                            .into(),
                    )
                },
            ));
        }
        // 1.6: a delay scaled to the round trip ends Nagle's wait sooner.
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
                     {:.0} req/s against {:.1} (more than the tolerance apart)",
                    scaled.0, fixed.0
                ),
                None,
                q(scaled.0, "req/s"),
                Verdict::from_holds(scaled.0 > fixed.0 && !within_tolerance(fixed.0, scaled.0)),
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
            "new-policy-matches-nagle-off",
            "section 3",
            "The new policy works as well as non-Nagle: its request rate is within the tolerance of Nagle-off's".into(),
            &["client", "client rwnd", "server", "file"],
            within,
        ),
        Claim::matrix(
            EXP,
            "new-policy-fewer-small-segments",
            "section 3 (\"without sending small segments gratuitously\")",
            "On the 33 KB file the new policy sends fewer small segments than Nagle-off".into(),
            &["client", "client rwnd", "server"],
            fewer,
        ),
        Claim::matrix(
            EXP,
            "strict-nagle-held-tail",
            "section 3, Table 1",
            "Strict Nagle with a 200 ms delayed ACK (FreeBSD and UW7 servers) gives about 5 requests/s"
                .into(),
            &["client", "client rwnd", "server", "file"],
            strict,
        ),
        Claim::matrix(
            EXP,
            "liberal-nagle-caught-by-delayed-ack",
            "section 3, Table 1",
            "Liberal Nagle (Linux server, 4 KB client window, 33 KB file) is caught by the \
             client's delayed ACKs when the window leaves a small segment with no full segment \
             before it to drag it out: under half of Nagle-off's rate"
                .into(),
            &["client", "client rwnd"],
            liberal,
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
                short writes (40 and 150 bytes: server id and document description; the paper \
                gives no sizes, so they are swept as context) and then the file: 2,250 bytes in \
                one write, or 33,000 bytes in 4 KB writes. `segments` counts the server's data \
                segments per request, `small segments` those under one MSS."
            .into(),
        tables: vec![t],
        charts: Vec::new(),
        findings,
        differences,
        claims,
        ..shell(EXP)
    }
}

// ----- davids-traces ------------------------------------------------------

/// One of Davids' traces: (trace, send policy, write gap, delayed-ACK time,
/// published data packets, published ms to send).
type Trace = (
    u32,
    &'static str,
    &'static str,
    &'static str,
    Option<u32>,
    Option<f64>,
);

const TRACES: [Trace; 7] = [
    (1, "nagle", "10ms", "200ms", Some(5), Some(654.0)),
    (2, "nagle", "0ms", "200ms", Some(2), Some(201.0)),
    (3, "nodelay", "10ms", "200ms", Some(50), None),
    (4, "nodelay", "0ms", "200ms", Some(50), None),
    (5, "naglim:30", "10ms", "200ms", None, None),
    (6, "nagle", "10ms", "50ms", None, None),
    (7, "nagle", "0ms", "50ms", None, None),
];

fn davids_jobs(_quick: bool) -> Vec<Job> {
    let base = base_of("davids-traces");
    // "Instead of the client making 50 writes of 10 bytes each, it could make
    // 1 write of 500 bytes": trace 1's setup with one write.
    let single = Job {
        key: vec!["single write".into()],
        scenario: scenario(
            base,
            "scenarios/davids-traces.toml",
            &[o("workload.request", "[500]")],
        ),
        capture: true,
    };
    TRACES
        .iter()
        .map(|(n, policy, gap, delack, _, _)| {
            let mut ov = vec![
                o("workload.request_gap", format!("\"{gap}\"")),
                o("server.delack", format!("\"{delack}\"")),
            ];
            // Nagle on is the client profile's own send policy.
            if *policy != "nagle" {
                ov.push(o("client.send_policy", format!("\"{policy}\"")));
            }
            Job {
                key: vec![format!("trace {n}")],
                scenario: scenario(base, "scenarios/davids-traces.toml", &ov),
                capture: true,
            }
        })
        .chain([single])
        .collect()
}

/// The hosts of Davids' traces, in words (the document does not name them).
const DAVIDS_HOSTS: &str = "Davids names no machines for his traces; the system whose parameters \
     he changes for them is Solaris (tcp_naglim_def on the client in trace 5, \
     tcp_deferred_ack_interval on the server in traces 6 and 7), so both ends take the solaris7 \
     profile (an assumption), with what his text gives: the server's delayed ACK of 200 ms (50 ms \
     in traces 6 and 7) and an ACK for every second full-sized segment only (his trace 3: 53 \
     packets for 50 data segments). The client's RTO floor is 1 s (assumption: Solaris' RTO starts \
     from 3 s and adapts slowly; the engine's estimator would resend each segment just before the \
     200 ms delayed ACK)";

/// Davids' counts from a trace: client data packets, server packets that
/// acknowledged client data, and the time from the first to the last data packet.
pub(super) fn trace_figures(d: &Done) -> (u32, u32, f64) {
    let mut data = 0;
    let mut acks = 0;
    let (mut first, mut last) = (None, None);
    let mut last_ack = None;
    let mut end = None;
    for w in &d.wire {
        if w.dir == 0 && w.payload_len > 0 {
            data += 1;
            first.get_or_insert(w.at);
            last = Some(w.at);
            end = Some(w.repr.seq + w.payload_len);
        }
    }
    for w in &d.wire {
        if w.dir == 1 && w.repr.flags.ack() && !w.repr.flags.syn() && first.is_some() {
            let advanced = last_ack.is_none_or(|a| w.repr.ack > a);
            if advanced && w.at >= first.unwrap_or_default() {
                acks += 1;
                last_ack = Some(w.repr.ack);
                if end.is_some_and(|e| w.repr.ack >= e) {
                    break;
                }
            } else {
                last_ack = Some(w.repr.ack);
            }
        } else if w.dir == 1 && w.repr.flags.ack() {
            last_ack = Some(w.repr.ack);
        }
    }
    let span = match (first, last) {
        (Some(a), Some(b)) => (b - a).as_secs_f64() * 1e3,
        _ => 0.0,
    };
    (data, acks, span)
}

/// Trace 1 by the rules' arithmetic: 50 writes of 10 bytes every 10 ms under
/// Nagle (a partial segment waits while data is unacknowledged), the server
/// ACKing each segment after a one-shot 200 ms (`tick: None`) or at the next
/// tick of a free-running 200 ms timer whose first tick falls `tick` ms after
/// the first segment; link delays neglected. (data packets, ms from first to last)
pub fn nagle_release_schedule(tick: Option<u32>) -> (usize, u32) {
    let writes: Vec<u32> = (0..50).map(|i| 10 * i).collect();
    let mut sent = 1; // the first write goes at once: nothing is in flight
    let mut packets = vec![0u32];
    let mut out_since = 0u32;
    while sent < writes.len() {
        let ack = match tick {
            None => out_since + 200,
            Some(p) if out_since < p => p,
            Some(p) => p + 200 * ((out_since - p) / 200 + 1),
        };
        let ready = writes[sent..].iter().take_while(|&&w| w <= ack).count();
        if ready > 0 {
            packets.push(ack);
            sent += ready;
            out_since = ack;
        } else {
            // Nothing waiting when the ACK came: the next write goes as written.
            packets.push(writes[sent]);
            out_since = writes[sent];
            sent += 1;
        }
    }
    (packets.len(), packets[packets.len() - 1] - packets[0])
}

/// Davids' ACK counts and overheads for traces 1 and 2 (his text gives no
/// others): (trace, ACK packets, overhead %).
const DAVIDS_ACKS: [(u32, f64, f64); 2] = [(1, 5.0, 162.0), (2, 2.0, 65.0)];

fn davids_section(_quick: bool, done: &[Done]) -> Section {
    const EXP: &str = "davids-traces";
    let mut t = Table {
        title: "Packets and time to send 500 bytes (Davids' figures in brackets)".into(),
        label_headers: ["trace", "client policy", "writes", "server delayed ACK"]
            .map(String::from)
            .to_vec(),
        columns: vec![
            Column::new("data packets", "packets", 0),
            Column::new("ACK packets", "packets", 0),
            Column::new("overhead (Davids' arithmetic)", "% of 500 B", 0),
            Column::new("time to send", "ms", 0),
        ],
        rows: Vec::new(),
    };
    let mut fig = Vec::new();
    for (n, policy, gap, delack, pub_pkts, pub_ms) in TRACES {
        let Some(d) = find(done, &[&format!("trace {n}")]) else {
            continue;
        };
        let (data, acks, span) = trace_figures(d);
        // Davids' arithmetic: 78 bytes of overhead per data frame, 84 per ACK frame.
        let overhead = (data as f64 * 78.0 + acks as f64 * 84.0) / 500.0 * 100.0;
        let pub_acks = DAVIDS_ACKS.iter().find(|a| a.0 == n);
        t.rows.push(Row {
            labels: vec![
                format!("{n}"),
                policy.to_string(),
                if gap == "0ms" {
                    "50 x 10 B back to back".into()
                } else {
                    format!("50 x 10 B every {gap}")
                },
                delack.to_string(),
            ],
            values: vec![
                Val::new(f64::from(data), pub_pkts.map(f64::from)),
                Val::new(f64::from(acks), pub_acks.map(|a| a.1)),
                Val::new(overhead, pub_acks.map(|a| a.2)),
                Val::new(span, pub_ms),
            ],
        });
        fig.push((n, data, acks, span));
    }
    let get = |n: u32| fig.iter().find(|f| f.0 == n).copied();
    let mut claims = Vec::new();
    let differences = vec![DAVIDS_HOSTS.to_string()];
    let mut findings = Vec::new();
    if let Some((_, data, _, span)) = get(1) {
        let ok = data == 5 && (600.0..=700.0).contains(&span);
        let (one_n, one_ms) = nagle_release_schedule(None);
        let phases: Vec<u32> = (1..=200)
            .filter(|&p| nagle_release_schedule(Some(p)).0 == 5)
            .collect();
        let exact: Vec<u32> = (1..=200)
            .filter(|&p| nagle_release_schedule(Some(p)) == (5, 654))
            .collect();
        let (lo, hi) = (
            phases.first().copied().unwrap_or(0),
            phases.last().copied().unwrap_or(0),
        );
        let exact_txt = match exact.as_slice() {
            [p] => format!("exactly a first tick {p} ms after the first segment"),
            [] => "no phase".to_string(),
            ps => format!(
                "first ticks {} to {} ms after the first segment",
                ps[0],
                ps[ps.len() - 1]
            ),
        };
        // Where it misses, the cause is the delayed-ACK timer's phase, which
        // the document does not give: not testable on our runs.
        claims.push(Claim::new(
            EXP,
            "trace-1-nagle-10ms-writes",
            "trace 1 (Figure 1)",
            format!("Trace 1 (Nagle, a write every 10 ms, 200 ms delayed ACK) sends 5 data packets and takes about 650 ms (ours: {data} packets, {span:.0} ms)"),
            q(5.0, "data packets"),
            q(f64::from(data), "data packets"),
            if ok { Verdict::Reproduced } else { Verdict::NotTestable },
            || {
                Some(format!(
                    "the delayed-ACK timer, not the setup. Our server delays each ACK a full 200 ms \
                     after the segment (a one-shot timer), so Nagle releases what the 10 ms writes \
                     piled up in each 200 ms: 10 + 200 + 200 + 90 bytes, {one_n} packets in \
                     {one_ms} ms by the rules' arithmetic, which the engine matches ({data} in \
                     {span:.0} ms). With a free-running 200 ms timer (BSD-style tick; `delack_tick`) \
                     the first ACK comes at the first tick, anywhere up to 200 ms: the same \
                     arithmetic gives 5 packets for first ticks {lo}-{hi} ms after the first \
                     segment and 4 otherwise, and Davids' 5 packets in 654 ms is {exact_txt} \
                     (10 + 50 + 200 + 200 + 40 bytes). Trace 2's 201 ms is a tick a whole 200 ms \
                     away. The timer's phase against the writes is not in the document, and the \
                     simulator starts its tick with the connection, so we do not set it."
                ))
            },
        ));
    }
    let off_cells: Vec<Cell> = [3, 4]
        .into_iter()
        .filter_map(get)
        .map(|(n, data, _, span)| {
            Cell::new(
                &[&format!("trace {n}")],
                q(50.0, "data packets"),
                q(f64::from(data), "data packets"),
                format!("{data} data packets in {span:.0} ms"),
                Verdict::from_holds(data == 50),
                || None,
            )
        })
        .collect();
    if !off_cells.is_empty() {
        claims.push(Claim::matrix(
            EXP,
            "nagle-off-50-packets",
            "traces 3 and 4 (Figures 3 and 4)",
            "With Nagle off (traces 3 and 4) the 50 writes go as 50 data packets".into(),
            &["trace"],
            off_cells,
        ));
    }
    if let (Some(t3), Some(t5)) = (get(3), get(5)) {
        let ok = t5.1 + t5.2 < t3.1 + t3.2 && t5.3 <= t3.3 + 20.0;
        claims.push(Claim::new(
            EXP,
            "naglim-30",
            "trace 5 (Figure 5) and \"Nagle for the Sys Admin\"",
            format!(
                "Solaris' naglim 30 reduces the packets from 53 to 21 without lengthening the send (trace 5: {} packets in {:.0} ms; trace 3: {} in {:.0} ms)",
                t5.1 + t5.2,
                t5.3,
                t3.1 + t3.2,
                t3.3
            ),
            q(21.0, "packets"),
            q(f64::from(t5.1 + t5.2), "packets"),
            Verdict::from_holds(
                ok && super::within_tolerance(21.0, f64::from(t5.1 + t5.2))
                    && super::within_tolerance(53.0, f64::from(t3.1 + t3.2)),
            ),
            || {
                Some(format!(
                    "trace 5: {} packets, trace 3: {} (Davids: 21 and 53)",
                    t5.1 + t5.2,
                    t3.1 + t3.2
                ))
            },
        ));
    }
    {
        use super::within_tolerance;
        // Trace 2: 2 data packets, 201 ms (Figure 2).
        if let Some((_, data, _, span)) = get(2) {
            let ok = within_tolerance(2.0, f64::from(data)) && within_tolerance(201.0, span);
            claims.push(Claim::new(
                EXP,
                "trace-2-nagle-back-to-back",
                "trace 2 (Figure 2)",
                format!(
                    "Trace 2 (Nagle, back-to-back writes, 200 ms delayed ACK) sends 2 data packets \
                     and takes 201 ms (ours: {data} packets, {span:.0} ms)"
                ),
                q(201.0, "ms"),
                q(span, "ms"),
                Verdict::from_holds(ok),
                || {
                    Some(format!(
                        "{data} packets in {span:.0} ms against 2 in 201 ms"
                    ))
                },
            ));
        }
        // Overheads: Davids' arithmetic on our packet counts, beside his.
        let ov_cells: Vec<Cell> = DAVIDS_ACKS
            .iter()
            .filter_map(|&(n, _, p)| {
                let (_, data, acks, _) = get(n)?;
                let ours = (f64::from(data) * 78.0 + f64::from(acks) * 84.0) / 500.0 * 100.0;
                Some(Cell::new(
                    &[&format!("trace {n}")],
                    q(p, "% of 500 B"),
                    q(ours, "% of 500 B"),
                    format!("{ours:.0} % ({data} data, {acks} ACK frames)"),
                    Verdict::from_holds(within_tolerance(p, ours)),
                    || {
                        Some(format!(
                            "{ours:.0} % against {p:.0} %: our packet counts differ"
                        ))
                    },
                ))
            })
            .collect();
        claims.push(Claim::matrix(
            EXP,
            "overhead-percentages",
            "traces 1 and 2, text",
            "Davids' overheads (78 bytes per data frame, 84 per ACK frame, over 500 bytes): 162 % \
             for trace 1 and 65 % for trace 2, on our packet counts"
                .into(),
            &["trace"],
            ov_cells,
        ));
        // Traces 6 and 7: more ACKs, less overhead than Nagle off, less delay.
        let t67: Vec<Cell> = [(6, 1, 3), (7, 2, 4)]
            .iter()
            .filter_map(|&(n, nagle, off)| {
                let (a, b, c) = (get(n)?, get(nagle)?, get(off)?);
                let bytes = |t: (u32, u32, u32, f64)| f64::from(t.1) * 78.0 + f64::from(t.2) * 84.0;
                let ok = a.2 >= b.2 && bytes(a) < bytes(c) && a.3 <= b.3;
                Some(Cell::new(
                    &[&format!("trace {n}")],
                    None,
                    q(a.3, "ms"),
                    format!(
                        "{} ACKs (trace {nagle}: {}), {:.0} overhead bytes (Nagle off, trace {off}: {:.0}), \
                         {:.0} ms (trace {nagle}: {:.0})",
                        a.2, b.2, bytes(a), bytes(c), a.3, b.3
                    ),
                    Verdict::from_holds(ok),
                    || Some(format!("trace {n} against traces {nagle} and {off}: see the figures")),
                ))
            })
            .collect();
        claims.push(Claim::matrix(
            EXP,
            "delack-50ms-traces-6-7",
            "traces 6 and 7 (Figures 6 and 7)",
            "With a 50 ms delayed ACK (traces 6 and 7) there are at least as many ACK packets as \
             with 200 ms, the overhead stays below Nagle-off's, and the data goes no later"
                .into(),
            &["trace"],
            t67,
        ));
        if let Some(d) = find(done, &["single write"]) {
            let (data, _, span) = trace_figures(d);
            claims.push(Claim::new(
                EXP,
                "single-500-byte-write",
                "\"less drastic alternatives\"",
                format!(
                    "With 1 write of 500 bytes the entire packet goes immediately, Nagle on: ours \
                     {data} data packet(s), the last {span:.1} ms after the first"
                ),
                None,
                q(f64::from(data), "data packets"),
                Verdict::from_holds(data == 1),
                || Some(format!("{data} data packets for one 500-byte write")),
            ));
        }
    }
    if let (Some(t1), Some(t6)) = (get(1), get(6)) {
        findings.push(format!(
            "A 50 ms delayed ACK (trace 6) cuts the time to send from {:.0} ms to {:.0} ms at the cost of {} more packets.",
            t1.3,
            t6.3,
            (t6.1 + t6.2) as i64 - (t1.1 + t1.2) as i64
        ));
    }
    if let (Some(t2), Some(t4)) = (get(2), get(4)) {
        findings.push(format!(
            "Back-to-back writes: Nagle sends {} packets but takes {:.0} ms; Nagle off sends {} and takes {:.0} ms.",
            t2.1, t2.3, t4.1, t4.3
        ));
    }
    let chart = Chart {
        title: "Davids' traces: packets on the wire".into(),
        y_label: "packets".into(),
        categories: fig.iter().map(|f| format!("trace {}", f.0)).collect(),
        series: vec![
            Series {
                label: "data".into(),
                values: fig.iter().map(|f| f.1 as f64).collect(),
                published: fig
                    .iter()
                    .map(|f| {
                        TRACES
                            .iter()
                            .find(|t| t.0 == f.0)
                            .and_then(|t| t.4)
                            .map(f64::from)
                    })
                    .collect(),
            },
            Series {
                label: "ACK".into(),
                values: fig.iter().map(|f| f.2 as f64).collect(),
                published: fig
                    .iter()
                    .map(|f| DAVIDS_ACKS.iter().find(|a| a.0 == f.0).map(|a| a.1))
                    .collect(),
            },
        ],
        log: false,
    };
    Section {
        setup: "The client writes 500 bytes as 50 writes of 10 bytes, every 10 ms or back \
                to back, over a 10 Mb/s Ethernet; the server replies only once all 500 \
                bytes are in. `ACK packets` counts the server's segments that acknowledged \
                new client data; overhead uses Davids' arithmetic (78 bytes per data frame, \
                84 per ACK frame, over 500 bytes of data); the time to send runs from the \
                first data packet to the last. Both hosts take the solaris7 profile (Davids \
                names no machines: see the differences); Nagle on is the profile's own send \
                policy."
            .into(),
        tables: vec![t],
        charts: vec![chart],
        findings,
        differences,
        claims,
        ..shell(EXP)
    }
}

// ----- cheshire-cliff ------------------------------------------------------

const BLOCKS: [u32; 3] = [99_912, 99_913, 100_000];
/// The WiFi link's goodput, calibrated to what Cheshire's engineers
/// measured at best: 5.2 Mb/s with 99,912-byte blocks.
const WIFI_MEASURED_MBPS: f64 = 5.2;
/// The WiFi link's label in tables and job keys.
const WIFI: &str = "WiFi (calibrated: 5.2 Mb/s)";

/// The WiFi link's rate: 5.2 Mb/s of TCP payload in 1448-byte segments,
/// plus each frame's TCP/IP headers with timestamps (52 bytes) and
/// Ethernet framing (38 bytes, the scenario's default).
fn wifi_rate_bps() -> f64 {
    WIFI_MEASURED_MBPS * 1e6 * (1448.0 + 52.0 + 38.0) / 1448.0
}

/// (label, one-way delay): gigabit Ethernet and Cheshire's WiFi.
fn cheshire_links() -> [(&'static str, String, &'static str); 2] {
    [
        ("1 Gb/s", "1Gbps".to_string(), "50us"),
        (WIFI, format!("{:.0}bps", wifi_rate_bps()), "1ms"),
    ]
}

/// The client configurations, one per host or practice the page names:
/// (label, profile, the MSS the profile gives, send-policy override, requests outstanding).
const CHESHIRE_CLIENTS: [(&str, &str, u16, Option<&str>, u32); 7] = [
    ("macosx-tiger", "macosx-tiger", 1448, None, 1),
    ("macosx", "macosx", 1448, None, 1),
    ("windows-xp", "windows-xp", 1460, None, 1),
    (
        "macosx-tiger, nodelay",
        "macosx-tiger",
        1448,
        Some("nodelay"),
        1,
    ),
    ("macosx-tiger, 2 outstanding", "macosx-tiger", 1448, None, 2),
    ("macosx-tiger, 3 outstanding", "macosx-tiger", 1448, None, 3),
    ("macosx-tiger, 4 outstanding", "macosx-tiger", 1448, None, 4),
];
/// The receiver: Cheshire describes it only as ACKing every second packet
/// and delaying others 200 ms, which the failing host's own profile does.
const CHESHIRE_SERVER: &str = "macosx-tiger";

fn cheshire_dims(quick: bool) -> Vec<u32> {
    if quick {
        vec![99_912, 99_913]
    } else {
        BLOCKS.to_vec()
    }
}

fn cheshire_jobs(quick: bool) -> Vec<Job> {
    let base = base_of("cheshire-cliff");
    let blocks = cheshire_dims(quick);
    let mut jobs = Vec::new();
    for (link, rate, delay) in cheshire_links() {
        for (label, profile, mss, policy, outstanding) in CHESHIRE_CLIENTS {
            for &block in &blocks {
                let mut ov = vec![
                    o("link.rate", format!("\"{rate}\"")),
                    o("link.delay", format!("\"{delay}\"")),
                    o("client.profile", format!("\"{profile}\"")),
                    o("server.profile", format!("\"{CHESHIRE_SERVER}\"")),
                    o("workload.outstanding", outstanding),
                    o("workload.request", format!("[{block}]")),
                    o("duration", if quick { "\"2s\"" } else { "\"4s\"" }),
                ];
                if let Some(p) = policy {
                    ov.push(o("client.send_policy", format!("\"{p}\"")));
                }
                jobs.push(Job {
                    key: vec![
                        link.into(),
                        mss.to_string(),
                        label.into(),
                        block.to_string(),
                    ],
                    scenario: scenario(base, "scenarios/cheshire-cliff.toml", &ov),
                    capture: false,
                });
            }
        }
    }
    // Minshall still coalesces small writes: 100 back-to-back writes of 10 bytes.
    jobs.push(Job {
        key: vec!["small writes".into(), "macosx".into()],
        scenario: scenario(
            base,
            "scenarios/cheshire-cliff.toml",
            &[
                o("client.profile", "\"macosx\""),
                o("server.profile", format!("\"{CHESHIRE_SERVER}\"")),
                o("workload.request", "[\"10x100\"]"),
                o("workload.requests", 20),
                o("duration", "\"10s\""),
            ],
        ),
        capture: false,
    });
    jobs
}

fn cheshire_section(quick: bool, done: &[Done]) -> Section {
    const EXP: &str = "cheshire-cliff";
    use super::{at_least, at_most, within_tolerance, TOLERANCE};
    let blocks = cheshire_dims(quick);
    let mut columns = Vec::new();
    for b in &blocks {
        columns.push(Column::new(&format!("{b} B rate"), "blocks/s", 1));
        columns.push(Column::new(&format!("{b} B throughput"), "Mb/s", 1));
    }
    let mut t = Table {
        title: "Blocks and megabits per second (Cheshire's figures in brackets)".into(),
        label_headers: ["link", "MSS", "client"].map(String::from).to_vec(),
        columns,
        rows: Vec::new(),
    };
    let links = cheshire_links();
    let rate = |link: &str, client: &str, b: u32| {
        let mss = CHESHIRE_CLIENTS.iter().find(|c| c.0 == client)?.2;
        find(done, &[link, &mss.to_string(), client, &b.to_string()]).map(|d| {
            let r = d.result.transactions_per_s;
            (r, r * b as f64 * 8.0 / 1e6)
        })
    };
    // Cheshire's figures: WiFi Mb/s for the failing host and Windows; on
    // gigabit "at most five transactions per second".
    let published = |link: &str, client: &str, b: u32| -> (Option<f64>, Option<f64>) {
        match (link == WIFI, client, b) {
            (true, "macosx-tiger", 99_912) => (None, Some(5.2)),
            (true, "macosx-tiger", 99_913 | 100_000) => (None, Some(2.7)),
            (true, "windows-xp", 100_000) => (None, Some(3.5)),
            (false, "macosx-tiger", 100_000) => (Some(5.0), None),
            _ => (None, None),
        }
    };
    let mut mss_ok = true;
    for (link, _, _) in &links {
        for (label, _, mss, _, _) in CHESHIRE_CLIENTS {
            let mut values = Vec::new();
            for &b in &blocks {
                let (bps, mbps) = rate(link, label, b).unwrap_or((0.0, 0.0));
                let (pb, pm) = published(link, label, b);
                values.push(Val::new(bps, pb));
                values.push(Val::new(mbps, pm));
                if let Some(d) = find(done, &[link, &mss.to_string(), label, &b.to_string()]) {
                    mss_ok &= d.result.client.mss == usize::from(mss);
                }
            }
            t.rows.push(Row {
                labels: vec![link.to_string(), mss.to_string(), label.to_string()],
                values,
            });
        }
    }
    let mut claims = Vec::new();
    let mut findings = Vec::new();
    let differences = Vec::new();
    // Each published figure, cell by cell, with the tolerance.
    let mut pub_cells = Vec::new();
    for (link, _, _) in &links {
        for (label, _, _, _, _) in CHESHIRE_CLIENTS {
            for &b in &blocks {
                let (pb, pm) = published(link, label, b);
                let Some((bps, mbps)) = rate(link, label, b) else {
                    continue;
                };
                let labels = [*link, label, &b.to_string()];
                let cfg = format!("client profile {label}, server profile {CHESHIRE_SERVER}");
                if let Some(p) = pm {
                    // Windows' 3.5 Mb/s is the test's pass mark it reached: a floor.
                    let floor = label == "windows-xp";
                    let ok = if floor {
                        at_least(p, mbps)
                    } else {
                        within_tolerance(p, mbps)
                    };
                    pub_cells.push(
                        Cell::new(
                            &labels,
                            q(p, "Mb/s"),
                            q(mbps, "Mb/s"),
                            format!(
                                "{mbps:.2} Mb/s{}",
                                if floor { " (published: at least)" } else { "" }
                            ),
                            Verdict::from_holds(ok),
                            || {
                                Some(format!(
                                    "{mbps:.2} Mb/s against {p} Mb/s: outside the tolerance"
                                ))
                            },
                        )
                        .with_config(cfg.clone()),
                    );
                }
                if let Some(p) = pb {
                    // "at most five transactions per second".
                    let ok = at_most(p, bps);
                    pub_cells.push(
                        Cell::new(
                            &labels,
                            q(p, "blocks/s"),
                            q(bps, "blocks/s"),
                            format!("{bps:.1} blocks/s (published: at most)"),
                            Verdict::from_holds(ok),
                            || Some(format!("{bps:.1} blocks/s: no 200 ms stall per block")),
                        )
                        .with_config(cfg),
                    );
                }
            }
        }
    }
    claims.push(Claim::matrix(
        EXP,
        "published-figures",
        "Case Study: WiFi Performance Testing Program",
        "Cheshire's figures, one run each: 5.2 Mb/s at 99,912 bytes and 2.7 Mb/s at 99,913 and \
         100,000 on WiFi for Mac OS X, Windows passing the 3.5 Mb/s test, and at most five \
         transactions per second on gigabit"
            .into(),
        &["link", "client", "block (B)"],
        pub_cells,
    ));
    const UNIT: &str = "x (99,912 B rate / 99,913 B rate)";
    let ratio = |link: &str, client: &str| {
        let a = rate(link, client, 99_912).map(|x| x.0).unwrap_or(0.0);
        let b = rate(link, client, 99_913).map(|x| x.0).unwrap_or(0.0);
        (a, b, a / b.max(1e-9))
    };
    let cliff_cells = links
        .iter()
        .map(|(link, _, _)| {
            let (a, b, r) = ratio(link, "macosx-tiger");
            // WiFi: 5.2 against 2.7 Mb/s; gigabit: "roughly two hundred times slower".
            let p = if *link == WIFI { 5.2 / 2.7 } else { 200.0 };
            Cell::new(
                &[link],
                q(p, UNIT),
                q(r, UNIT),
                format!("99,912 B: {a:.1} blocks/s, 99,913 B: {b:.1}"),
                Verdict::from_holds(within_tolerance(p, r)),
                || Some(format!("a slowdown of {r:.1}x against the page's {p:.1}x")),
            )
        })
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "cliff-under-nagle",
        "Case Study: WiFi Performance Testing Program",
        "On Mac OS X 10.4 (strict Nagle, MSS 1448) one byte more than 69 full segments stalls \
         each block on the delayed ACK: the slowdown matches the page's (1.9x on WiFi, roughly \
         200x on gigabit)"
            .into(),
        &["link"],
        cliff_cells,
    ));
    let per_link = |client: &str, rule: &dyn Fn(f64, f64) -> bool, why: &str| -> Vec<Cell> {
        links
            .iter()
            .map(|(link, _, _)| {
                let (a, b, r) = ratio(link, client);
                Cell::new(
                    &[link],
                    None,
                    q(r, UNIT),
                    format!("{a:.1} vs {b:.1} blocks/s"),
                    Verdict::from_holds(rule(a, b)),
                    || Some(format!("{why}: {a:.1} vs {b:.1} blocks/s")),
                )
            })
            .collect()
    };
    let no_cliff = |a: f64, b: f64| within_tolerance(a, b);
    claims.push(Claim::matrix(
        EXP,
        "minshall-removes-cliff",
        "Update, November 2012",
        "Minshall's modification (Mac OS X 10.5 and later) removes the stall: 99,913-byte \
         blocks run within the tolerance of 99,912-byte ones"
            .into(),
        &["link"],
        per_link("macosx", &no_cliff, "the runt still waits"),
    ));
    claims.push(Claim::matrix(
        EXP,
        "double-buffering-removes-cliff",
        "the double-buffering advice",
        "Double buffering (two requests outstanding) avoids the stall on 99,913-byte blocks".into(),
        &["link"],
        per_link(
            "macosx-tiger, 2 outstanding",
            &no_cliff,
            "the runt still waits",
        ),
    ));
    // Triple and quadruple buffering add little over double.
    let more_cells = links
        .iter()
        .flat_map(|(link, _, _)| {
            ["macosx-tiger, 3 outstanding", "macosx-tiger, 4 outstanding"].map(|c| {
                let two = rate(link, "macosx-tiger, 2 outstanding", 99_913).map_or(0.0, |x| x.0);
                let n = rate(link, c, 99_913).map_or(0.0, |x| x.0);
                Cell::new(
                    &[link, c],
                    None,
                    q(n / two.max(1e-9), "x double buffering's rate"),
                    format!("{n:.1} vs {two:.1} blocks/s (99,913 B)"),
                    Verdict::from_holds(n <= two * TOLERANCE),
                    || {
                        Some(format!(
                            "{n:.1} against {two:.1} blocks/s: more than the tolerance"
                        ))
                    },
                )
            })
        })
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "more-buffering-adds-little",
        "the double-buffering advice",
        "Going from double to triple or quadruple buffering yields little more: within the \
         tolerance of double buffering's rate"
            .into(),
        &["link", "client"],
        more_cells,
    ));
    // NODELAY: "a crude way ... not as efficient as the double-buffering approach".
    let nd_cells = links
        .iter()
        .map(|(link, _, _)| {
            let nd = rate(link, "macosx-tiger, nodelay", 99_913).map_or(0.0, |x| x.0);
            let two = rate(link, "macosx-tiger, 2 outstanding", 99_913).map_or(0.0, |x| x.0);
            Cell::new(
                &[link],
                None,
                q(two / nd.max(1e-9), "x (double buffering / NODELAY)"),
                format!("NODELAY {nd:.1}, double buffering {two:.1} blocks/s (99,913 B)"),
                Verdict::from_holds(two > nd),
                || {
                    let link_blocks = if *link == WIFI {
                        WIFI_MEASURED_MBPS * 1e6 / (99_913.0 * 8.0)
                    } else {
                        1e9 / (99_913.0 * 8.0)
                    };
                    Some(if nd >= 0.9 * link_blocks {
                        format!(
                            "on this link both fill the link ({nd:.1} and {two:.1} blocks/s of at most \
                             {link_blocks:.1}): a block takes far longer to send than the round trip \
                             that double buffering hides, so there is nothing left to gain"
                        )
                    } else {
                        format!("NODELAY {nd:.1} blocks/s is not below double buffering's {two:.1}")
                    })
                },
            )
        })
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "nodelay-less-efficient-than-double-buffering",
        "the TCP_NODELAY workaround",
        "TCP_NODELAY avoids the stall but is not as efficient as double buffering: fewer blocks per second"
            .into(),
        &["link"],
        nd_cells,
    ));
    // Windows avoids it by luck: 100,000 B is 68 full 1460-byte segments plus 720 bytes.
    if let Some(d) = find(done, &["small writes", "macosx"]) {
        let n = d.result.transactions.max(1) as f64;
        let segs = d.result.client.data_segments as f64 / n;
        claims.push(Claim::new(
            EXP,
            "minshall-still-coalesces",
            "Update, November 2012 (Minshall's modification)",
            format!(
                "Under Minshall's modification a badly-written application's back-to-back small \
                 writes are still coalesced: 100 writes of 10 bytes leave in {segs:.1} segments \
                 (fewer than 100 by more than the tolerance)"
            ),
            None,
            q(segs, "data segments per 100 writes"),
            Verdict::from_holds(segs * TOLERANCE < 100.0),
            || {
                Some(format!(
                    "{segs:.1} segments for 100 writes: the writes were not coalesced"
                ))
            },
        ));
    }
    if !mss_ok {
        findings.push(
            "A client's MSS on the wire differs from the MSS label of its row (the profile's \
             options decide it): see the table."
                .into(),
        );
    }
    for (link, _, _) in &links {
        let (_, mbps_a) = rate(link, "macosx-tiger", 99_912).unwrap_or_default();
        let (_, mbps_b) = rate(link, "macosx-tiger", 99_913).unwrap_or_default();
        findings.push(format!(
            "{link}: one more byte (99,913) takes Mac OS X 10.4 from {mbps_a:.1} Mb/s to {mbps_b:.1} Mb/s \
             (Cheshire measured 5.2 and 2.7 Mb/s on his WiFi)."
        ));
    }
    Section {
        setup: format!(
            "The client writes one block, the server answers with 1 byte, repeat. Clients are \
             the profiles of the hosts the page names: `macosx-tiger` (Mac OS X 10.4, strict \
             Nagle, timestamps: MSS 1448, the failing host), `macosx` (10.5 and later: \
             Minshall's modification) and `windows-xp` (MSS 1460, no timestamps); TCP_NODELAY \
             and two to four requests outstanding (double, triple and quadruple buffering) on \
             the failing host. The receiver is `{CHESHIRE_SERVER}` (the page describes it only \
             as ACKing every second packet and delaying others 200 ms). Links: 1 Gb/s with 50 us \
             one-way delay, and the WiFi link calibrated to what Cheshire's engineers measured \
             at best, 5.2 Mb/s of payload ({:.2} Mb/s on the wire with headers and framing, 1 ms \
             one-way; the page gives no nominal rate).",
            wifi_rate_bps() / 1e6
        ),
        charts: links
            .iter()
            .map(|(link, _, _)| Chart {
                title: format!("{link}: blocks per second"),
                y_label: "blocks per second (log)".into(),
                categories: blocks.iter().map(|b| format!("{b} B")).collect(),
                series: CHESHIRE_CLIENTS
                    .iter()
                    .map(|c| Series {
                        label: c.0.to_string(),
                        values: blocks
                            .iter()
                            .map(|&b| rate(link, c.0, b).map_or(0.0, |x| x.0))
                            .collect(),
                        published: blocks.iter().map(|&b| published(link, c.0, b).0).collect(),
                    })
                    .collect(),
                log: true,
            })
            .collect(),
        tables: vec![t],
        findings,
        differences,
        claims,
        plots: cheshire_plots(),
        ..shell(EXP)
    }
}

/// Time-sequence graphs of three 99,913-byte blocks on 1 Gb/s: the held tail
/// on Mac OS X 10.4, and none with Minshall's modification.
fn cheshire_plots() -> Vec<(String, String)> {
    let base = base_of("cheshire-cliff");
    ["macosx-tiger", "macosx"]
        .iter()
        .filter_map(|profile| {
            let sc = scenario(
                base,
                "scenarios/cheshire-cliff.toml",
                &[
                    o("client.profile", format!("\"{profile}\"")),
                    o("server.profile", format!("\"{CHESHIRE_SERVER}\"")),
                    o("workload.request", "[99913]"),
                    o("workload.requests", 3),
                ],
            );
            let mut sim = tinygram_sim::world::Sim::new(&sc);
            sim.enable_capture(false);
            sim.enable_trace();
            sim.run(&mut |_, _| {});
            let ts = crate::capture::time_sequence(&sim, Some(0)).ok()?;
            let svg = tinygram_report::render_svg_string(&ts).ok()?;
            Some((
                format!(
                    "Client to server, three 99,913-byte blocks on 1 Gb/s with the {profile} \
                     client: data segments, the ACK line and the receive window; shaded spans \
                     are the why-trace's holds"
                ),
                svg,
            ))
        })
        .collect()
}

// ----- westfield-ftp ------------------------------------------------------

/// (label, server ACK policy, window updates).
const WESTFIELD: [(&str, &str, &str); 6] = [
    ("delayed 250 ms (Tops-20)", "delayed", "delayed"),
    ("interactivity:1", "interactivity:1", "delayed"),
    ("interactivity:2", "interactivity:2", "delayed"),
    ("interactivity:4", "interactivity:4", "delayed"),
    ("fuzzball (Mills)", "fuzzball", "delayed"),
    ("delayed, immediate window updates", "delayed", "immediate"),
];

/// Receive windows for "BBN/CMU FTP (which advertises much larger
/// windows)": the post gives no size, so several are run.
const WESTFIELD_WINDOWS: [&str; 3] = ["4KiB", "8KiB", "16KiB"];
/// One-way delays for hosts "further away": the post gives none.
const WESTFIELD_DISTANCES: [&str; 3] = ["10ms", "50ms", "100ms"];

fn westfield_jobs(quick: bool) -> Vec<Job> {
    let base = base_of("westfield-ftp");
    let mut extra = Vec::new();
    let run = |ov: Vec<String>| {
        let mut all = vec![
            o("duration", if quick { "\"20s\"" } else { "\"40s\"" }),
            o(
                "workload.bytes",
                if quick { "\"300KB\"" } else { "\"1MB\"" },
            ),
        ];
        all.extend(ov);
        scenario(base, "scenarios/westfield-ftp.toml", &all)
    };
    for w in WESTFIELD_WINDOWS {
        for policy in ["delayed", "interactivity:2", "fuzzball"] {
            extra.push(Job {
                key: vec!["window".into(), w.into(), policy.into()],
                scenario: run(vec![
                    o("server.rcv_buf", format!("\"{w}\"")),
                    o("server.ack_policy", format!("\"{policy}\"")),
                ]),
                capture: false,
            });
        }
    }
    for d in WESTFIELD_DISTANCES {
        for policy in ["delayed", "interactivity:2"] {
            extra.push(Job {
                key: vec!["distance".into(), d.into(), policy.into()],
                scenario: run(vec![
                    o("link.delay", format!("\"{d}\"")),
                    o("server.ack_policy", format!("\"{policy}\"")),
                ]),
                capture: false,
            });
        }
    }
    WESTFIELD
        .iter()
        .map(|(label, policy, wu)| Job {
            key: vec![label.to_string()],
            scenario: scenario(
                base,
                "scenarios/westfield-ftp.toml",
                &[
                    o("server.ack_policy", format!("\"{policy}\"")),
                    o("server.window_update", format!("\"{wu}\"")),
                    o("duration", if quick { "\"8s\"" } else { "\"30s\"" }),
                    o(
                        "workload.bytes",
                        if quick { "\"300KB\"" } else { "\"1MB\"" },
                    ),
                ],
            ),
            capture: false,
        })
        .chain(extra)
        .collect()
}

fn westfield_section(_quick: bool, done: &[Done]) -> Section {
    const EXP: &str = "westfield-ftp";
    let mut t = Table {
        title: "Goodput and ACKs of the small-window transfer (Westfield's figures in brackets)"
            .into(),
        label_headers: vec!["receiver ACK policy".into()],
        columns: vec![
            Column::new("goodput", "kb/s", 0),
            Column::new("ACKs by timer", "", 0),
            Column::new("pure ACKs", "", 0),
            Column::new("sender timeouts", "", 0),
        ],
        rows: Vec::new(),
    };
    let mut kbps = Vec::new();
    // Westfield: "greater than 30K bps was rare" with the 250 ms delay, and
    // "as high as 150kbps" with interactivity.
    let published = |label: &str| match label {
        "delayed 250 ms (Tops-20)" => Some(30.0),
        l if l.starts_with("interactivity") => Some(150.0),
        _ => None,
    };
    for (label, _, _) in WESTFIELD {
        let Some(d) = find(done, &[label]) else {
            continue;
        };
        let r = &d.result;
        let k = r.goodput_bytes_per_s * 8.0 / 1e3;
        kbps.push((label, k));
        t.rows.push(Row {
            labels: vec![label.to_string()],
            values: vec![
                Val::new(k, published(label)),
                Val::new(r.server.delack_timer_fired as f64, None),
                Val::new(r.server.pure_acks as f64, None),
                Val::new(r.client.timeouts as f64, None),
            ],
        });
    }
    let get = |l: &str| kbps.iter().find(|x| x.0 == l).map_or(0.0, |x| x.1);
    let delayed = get("delayed 250 ms (Tops-20)");
    let inter = get("interactivity:2");
    let fuzz = get("fuzzball (Mills)");
    const RATIO: &str = "x (interactivity / fixed delay)";
    let claims = vec![
        Claim::new(
            EXP,
            "interactivity-beats-fixed-delay",
            "Westfield, 31 Oct 1985",
            format!(
                "Interactivity beats the fixed delay on the small-window transfer by more than 5x \
                 (Westfield: 150 against under 30 kb/s; ours {inter:.0} vs {delayed:.0} kb/s)"
            ),
            q(150.0 / 30.0, RATIO),
            q(inter / delayed.max(1e-9), RATIO),
            Verdict::from_holds(super::at_least(150.0 / 30.0, inter / delayed.max(1e-9))),
            || Some("interactivity gains less than the tolerance allows".into()),
        ),
        Claim::new(
            EXP,
            "interactivity-150kbps",
            "Westfield, 31 Oct 1985",
            format!(
                "With interactivity, FTP rates as high as 150 kb/s were seen on the local Ethernet \
                 (ours {inter:.0} kb/s with N = 2)"
            ),
            q(150.0, "kb/s"),
            q(inter, "kb/s"),
            if super::within_tolerance(150.0, inter) {
                Verdict::Reproduced
            } else {
                Verdict::NotTestable
            },
            || {
                Some(
                    "the post does not give what set the 150 kb/s ceiling once the delay was gone: \
                     the DEC-20 hosts' time per packet (the Ethernet's 10 Mb/s is far above it). \
                     The simulator models no host CPU, so ours runs at the wire's \
                     one-segment-per-round-trip limit"
                        .into(),
                )
            },
        ),
        Claim::new(
            EXP,
            "fixed-delay-crawls",
            "Westfield, 31 Oct 1985",
            format!(
                "With the fixed 250 ms delay and a 1456-byte window, FTP rarely exceeds 30 kb/s \
                 (Westfield's own figure, read with the tolerance; ours {delayed:.0} kb/s)"
            ),
            q(30.0, "kb/s"),
            q(delayed, "kb/s"),
            Verdict::from_holds(super::at_most(30.0, delayed)),
            || {
                Some(format!(
                    "ours moves one 1456-byte window per 250 ms ACK delay at most, {:.0} kb/s; \
                     above 30 kb/s the difference is in the window or the delay the run used",
                    1456.0 * 8.0 / 0.25 / 1e3
                ))
            },
        ),
    ];
    let mut claims = claims;
    let get2 = |kind: &str, v: &str, policy: &str| {
        find(done, &[kind, v, policy]).map(|d| d.result.goodput_bytes_per_s * 8.0 / 1e3)
    };
    // Mills: "high-volume traffic with max-size packets is not delayed". His
    // post gives no window, so the Tops-20 JFN's 1456 bytes and larger ones
    // are cells; not delayed = within the tolerance of interactivity's rate.
    let mills_cells: Vec<Cell> = std::iter::once(("1456 B".to_string(), Some(fuzz), Some(inter)))
        .chain(WESTFIELD_WINDOWS.iter().map(|w| {
            (
                w.to_string(),
                get2("window", w, "fuzzball"),
                get2("window", w, "interactivity:2"),
            )
        }))
        .filter_map(|(w, f, i)| {
            let (f, i) = (f?, i?);
            Some(Cell::new(
                &[&w],
                None,
                q(f / i.max(1e-9), "x interactivity's rate"),
                format!("fuzzball {f:.0} vs interactivity {i:.0} kb/s"),
                Verdict::from_holds(super::within_tolerance(i, f)),
                || {
                    Some(format!(
                        "fuzzball {f:.0} kb/s against {i:.0}: in a window of one segment the right \
                         edge moves by exactly one MSS per segment, never more, so the rule as \
                         written forces no ACK and the delay stays"
                    ))
                },
            ))
        })
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "fuzzball-max-size-not-delayed",
        "Mills, 1 Nov 1985",
        "With fuzzball's rule (ACK at once when the right window edge moved more than one MSS) \
         high-volume traffic with max-size packets is not delayed: within the tolerance of \
         interactivity's rate (the post gives no window, so each is a cell)"
            .into(),
        &["receive window"],
        sweep_cells(
            mills_cells,
            "Mills gives no window size, and whether the right edge can move more than one MSS \
             between ACKs depends on it",
        ),
    ));
    // Larger windows: "higher throughputs could be achieved (up to over 300Kbps)".
    let win_cells: Vec<Cell> = WESTFIELD_WINDOWS
        .iter()
        .filter_map(|w| {
            let k = get2("window", w, "delayed")?;
            Some(Cell::new(
                &[w],
                None,
                q(k, "kb/s"),
                format!("{k:.0} kb/s against {delayed:.0} with the 1456-byte window"),
                Verdict::from_holds(k > delayed),
                || {
                    Some(format!(
                        "a {w} window gains nothing over 1456 bytes: {k:.0} kb/s"
                    ))
                },
            ))
        })
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "larger-windows-faster",
        "Westfield, 31 Oct 1985 (BBN/CMU FTP)",
        "With the same 250 ms delayed ACK, an FTP that advertises much larger windows gets higher \
         throughput (the post gives no window size, so each swept size is a cell)"
            .into(),
        &["receive window"],
        win_cells,
    ));
    let far_cells: Vec<Cell> = WESTFIELD_DISTANCES
        .iter()
        .map(|d| ("distance", *d))
        .chain([("window", "16KiB")])
        .filter_map(|(kind, v)| {
            let a = get2(kind, v, "delayed")?;
            let b = get2(kind, v, "interactivity:2")?;
            let label = if kind == "distance" {
                format!("{v} one-way")
            } else {
                format!("{v} window")
            };
            Some(Cell::new(
                &[&label],
                None,
                q(b / a.max(1e-9), "x (interactivity / fixed delay)"),
                format!("interactivity {b:.0} vs fixed delay {a:.0} kb/s"),
                Verdict::from_holds(super::within_tolerance(a, b)),
                || {
                    Some(format!(
                        "interactivity gains {:.1}x here, more than the tolerance",
                        b / a.max(1e-9)
                    ))
                },
            ))
        })
        .collect();
    let far_cells = sweep_cells(
        far_cells,
        "the post gives neither how far away the distant hosts were nor how large the very large \
         windows were, and the verdict changes across the swept values",
    );
    claims.push(Claim::matrix(
        EXP,
        "little-gain-far-or-large-windows",
        "Westfield, 31 Oct 1985",
        "Interactivity gives little increase on connections to hosts further away or with very \
         large windows: within the tolerance of the fixed delay's rate (the post gives no \
         distance or window, so each swept one is a cell)"
            .into(),
        &["path"],
        far_cells,
    ));
    let srtt = |l: &str| find(done, &[l]).and_then(|d| d.result.client.srtt_ms);
    if let (Some(a), Some(b)) = (srtt("delayed 250 ms (Tops-20)"), srtt("interactivity:1")) {
        claims.push(Claim::new(
            EXP,
            "delayed-ack-disturbs-rto",
            "Westfield, 31 Oct 1985 (after Alan Larson)",
            format!(
                "Delaying the ACK disturbs the sender's round-trip estimate, on which its \
                 retransmission interval rests: smoothed RTT {a:.1} ms with the 250 ms delay \
                 against {b:.2} ms with ACKs at once (more than the tolerance apart)"
            ),
            None,
            q(a, "ms (smoothed RTT)"),
            Verdict::from_holds(!super::within_tolerance(b.max(1e-3), a)),
            || {
                Some(
                    "the delay does not move the sender's RTT estimate beyond the tolerance".into(),
                )
            },
        ));
    }
    Section {
        setup: "One-way bulk transfer over a 10 Mb/s Ethernet into a receiver that \
                advertises a 1456-byte window (one segment), delays its ACKs 250 ms \
                and announces window updates only with them, as the sociable Tops-20 \
                TCP did. The sender's RTO floor is 1 s. Variants: Westfield's \
                interactivity (ACK at once when more than N segments arrived since we \
                last sent data), Mills' fuzzball rule (ACK at once when the right edge \
                moved more than one MSS), and a modern receiver that announces window \
                updates at once."
            .into(),
        tables: vec![t],
        charts: vec![Chart {
            title: "Westfield's FTP: goodput".into(),
            y_label: "kb/s (log)".into(),
            categories: kbps.iter().map(|k| k.0.to_string()).collect(),
            series: vec![Series {
                label: "goodput".into(),
                values: kbps.iter().map(|k| k.1).collect(),
                published: kbps.iter().map(|k| published(k.0)).collect(),
            }],
            log: true,
        }],
        findings: vec![format!(
            "Interactivity lifts the transfer from {delayed:.0} to {inter:.0} kb/s; \
             fuzzball stays at {fuzz:.0} kb/s because a one-segment window's right edge never \
             moves by more than one MSS."
        )],
        differences: vec![
            "Westfield saw 150 kb/s at best with interactivity: the DEC-20 hosts, not the \
             Ethernet, set that ceiling. The simulator models no host CPU, so with the delay \
             gone our transfer runs near the 10 Mb/s wire's one-segment-per-round-trip limit."
                .into(),
        ],
        claims,
        ..shell(EXP)
    }
}

// ----- fox-satellite ------------------------------------------------------

/// The profile of RFC 1106's era, for both hosts of every run.
const FOX_PROFILE: &str = "bsd43-tahoe";
/// Figure 1's stack: big windows, no NAKs, losses taken as congestion (the profile's).
const FIG1: &str = "Figure 1: big windows";
/// Figure 2's stack: big windows and NAKs, losses taken as noise (RFC 1106 4.2).
const FIG2: &str = "Figure 2: big windows + NAK, noise";
/// Controlled: as Figure 2 without NAKs.
const NOISE: &str = "big windows, noise, no NAK";
/// The 16-bit window, for section 3's claim.
const WIN16: &str = "16-bit window";
/// Figure 1 with slow start opening by 2 segments per ACK (RFC 1106 4.2).
const DOUBLE: &str = "Figure 1, slow start 2 per ACK";
/// Figure 2 with the retransmission timer set at the round trip (RFC 1106 4.2).
const RTO_AT_RTT: &str = "Figure 2, RTO at the round trip";

/// (label, options, loss_is, further overrides).
const FOX_CONFIGS: [(&str, &str, &str, &[&str]); 6] = [
    (FIG1, "[\"bigwin\"]", "congestion", &[]),
    (FIG2, "[\"bigwin\", \"nak\"]", "noise", &[]),
    (NOISE, "[\"bigwin\"]", "noise", &[]),
    (WIN16, "[]", "congestion", &[]),
    (
        DOUBLE,
        "[\"bigwin\"]",
        "congestion",
        &["slow_start=\"double\""],
    ),
    (
        RTO_AT_RTT,
        "[\"bigwin\", \"nak\"]",
        "noise",
        &[
            "rto_min=\"580ms\"",
            "rto_initial=\"580ms\"",
            "rto_tick=\"none\"",
        ],
    ),
];
/// Every bit error rate either reading of the notation needs.
const FOX_BERS: [&str; 4] = ["0", "1e-7", "1e-6", "1e-5"];
/// The two readings of the figures' "10e-7" and "10e-6" columns: as meant
/// (1e-7, 1e-6) or as written (10 x 10^-7 = 1e-6, 10 x 10^-6 = 1e-5).
const READINGS: [(&str, [&str; 2]); 2] = [
    ("10e-7 read as 1e-7, 10e-6 as 1e-6", ["1e-7", "1e-6"]),
    (
        "10e-7 read as 1e-6, 10e-6 as 1e-5 (as written)",
        ["1e-6", "1e-5"],
    ),
];
/// Published transfer rates in K bytes/s: Figure 1 (big windows, no NAKs)
/// and Figure 2 (big windows and NAKs), by window in KB: no error, 10e-7, 10e-6.
const FOX_FIG1: [(u32, [f64; 3]); 9] = [
    (64, [94.0, 53.0, 14.0]),
    (72, [106.0, 51.0, 15.0]),
    (80, [115.0, 42.0, 14.0]),
    (92, [115.0, 43.0, 14.0]),
    (100, [135.0, 66.0, 15.0]),
    (112, [126.0, 53.0, 17.0]),
    (124, [154.0, 45.0, 14.0]),
    (136, [160.0, 66.0, 15.0]),
    (156, [167.0, 45.0, 14.0]),
];
const FOX_FIG2: [(u32, [f64; 3]); 9] = [
    (64, [95.0, 83.0, 43.0]),
    (72, [104.0, 87.0, 49.0]),
    (80, [117.0, 96.0, 62.0]),
    (92, [124.0, 119.0, 39.0]),
    (100, [140.0, 124.0, 35.0]),
    (112, [151.0, 126.0, 53.0]),
    (124, [160.0, 140.0, 36.0]),
    (136, [167.0, 148.0, 38.0]),
    (156, [167.0, 160.0, 38.0]),
];
/// The satellite's one-way delay (580 ms round trip).
const FOX_ONE_WAY_S: f64 = 0.29;

fn fox_dims(quick: bool) -> (Vec<u32>, Vec<u64>) {
    if quick {
        (vec![64, 156], vec![1, 2, 3])
    } else {
        (FOX_FIG1.iter().map(|x| x.0).collect(), (1..=5).collect())
    }
}

/// Which windows and error rates a configuration runs at: the figures at
/// every window, the others at the largest (the 16-bit window at 64K).
fn fox_runs(label: &str, windows: &[u32]) -> Vec<(u32, &'static str)> {
    let big = *windows.last().unwrap_or(&156);
    let ws: Vec<u32> = match label {
        FIG1 | FIG2 => windows.to_vec(),
        WIN16 => vec![64],
        _ => vec![big],
    };
    let bers: &[&'static str] = match label {
        WIN16 => &["0"],
        RTO_AT_RTT => &["0", "1e-6"],
        _ => &FOX_BERS,
    };
    ws.iter()
        .flat_map(|&w| bers.iter().map(move |&b| (w, b)))
        .collect()
}

fn fox_jobs(quick: bool) -> Vec<Job> {
    let base = base_of("fox-satellite");
    let (windows, seeds) = fox_dims(quick);
    let mut jobs = Vec::new();
    for (label, options, loss_is, extra) in FOX_CONFIGS {
        for (w, ber) in fox_runs(label, &windows) {
            for &seed in &seeds {
                let mut ov = vec![
                    o("seed", seed),
                    o("link.ber", ber),
                    o("workload.bytes", "\"4MB\""),
                ];
                for h in ["client", "server"] {
                    ov.push(o(&format!("{h}.profile"), format!("\"{FOX_PROFILE}\"")));
                    ov.push(o(&format!("{h}.options"), options));
                    ov.push(o(&format!("{h}.loss_is"), format!("\"{loss_is}\"")));
                    ov.push(o(&format!("{h}.rcv_buf"), format!("\"{w}KiB\"")));
                    // The sender must hold a window's data (RFC 1106 5: "both ends ...
                    // need to be able to buffer the data").
                    ov.push(o(&format!("{h}.snd_buf"), "\"1MiB\""));
                    for e in extra {
                        ov.push(format!("{h}.{e}"));
                    }
                }
                jobs.push(Job {
                    key: vec![label.into(), w.to_string(), ber.into(), seed.to_string()],
                    scenario: scenario(base, "scenarios/fox-satellite.toml", &ov),
                    capture: false,
                });
            }
        }
    }
    jobs
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn fox_section(quick: bool, done: &[Done]) -> Section {
    use super::{at_least, within_tolerance};
    const EXP: &str = "fox-satellite";
    let (windows, seeds) = fox_dims(quick);
    let big = *windows.last().unwrap_or(&156);
    let runs = |label: &str, w: u32, ber: &str| -> Vec<&Done> {
        seeds
            .iter()
            .filter_map(|s| find(done, &[label, &w.to_string(), ber, &s.to_string()]))
            .collect()
    };
    let rate = |label: &str, w: u32, ber: &str| {
        median(
            runs(label, w, ber)
                .iter()
                .map(|d| d.result.goodput_bytes_per_s / 1024.0)
                .collect(),
        )
    };
    let figure = |label: &str, w: u32| {
        match label {
            FIG1 => Some(&FOX_FIG1),
            FIG2 => Some(&FOX_FIG2),
            _ => None,
        }
        .and_then(|f| f.iter().find(|x| x.0 == w))
        .map(|x| x.1)
    };
    let mut tables = Vec::new();
    for (reading, bers) in READINGS {
        let mut t = Table {
            title: format!(
                "Transfer rates, median over seeds, reading \"{reading}\" (RFC 1106 Figures 1 and 2 in brackets)"
            ),
            label_headers: vec!["stack".into(), "window".into()],
            columns: ["no error", "10e-7", "10e-6"]
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let name = if i == 0 {
                        c.to_string()
                    } else {
                        format!("\"{c}\" = {}", bers[i - 1])
                    };
                    Column::new(&name, "KB/s", 0)
                })
                .collect(),
            rows: Vec::new(),
        };
        for label in [FIG1, FIG2] {
            for &w in &windows {
                let p = figure(label, w);
                let cols = ["0", bers[0], bers[1]];
                t.rows.push(Row {
                    labels: vec![label.to_string(), format!("{w}K")],
                    values: cols
                        .iter()
                        .enumerate()
                        .map(|(i, b)| Val::new(rate(label, w, b), p.map(|p| p[i])))
                        .collect(),
                });
            }
        }
        tables.push(t);
    }
    let mut claims = Vec::new();
    let mut findings = Vec::new();
    let mut differences = Vec::new();
    // Figures 1 and 2 cell by cell. Where the two readings give different
    // verdicts the notation decides, so the cell is not testable.
    for (label, slug, part) in [
        (
            FIG1,
            "figure-1",
            "appendix, Figure 1 (big windows, no NAKs)",
        ),
        (
            FIG2,
            "figure-2",
            "appendix, Figure 2 (big windows and NAKs)",
        ),
    ] {
        let mut cells = Vec::new();
        for &w in &windows {
            let Some(p) = figure(label, w) else { continue };
            for (i, col) in ["no error", "10e-7", "10e-6"].iter().enumerate() {
                let cfg =
                    format!("client and server profile {FOX_PROFILE}, {label}, window {w}KiB");
                if i == 0 {
                    let r = rate(label, w, "0");
                    cells.push(
                        Cell::new(
                            &[&format!("{w}K"), col],
                            q(p[0], "KB/s"),
                            q(r, "KB/s"),
                            format!("{r:.0} KB/s"),
                            Verdict::from_holds(within_tolerance(p[0], r)),
                            || {
                                Some(format!(
                                    "{r:.0} KB/s against {:.0}: outside the tolerance",
                                    p[0]
                                ))
                            },
                        )
                        .with_config(cfg),
                    );
                    continue;
                }
                let (a, b) = (
                    rate(label, w, READINGS[0].1[i - 1]),
                    rate(label, w, READINGS[1].1[i - 1]),
                );
                let (ok_a, ok_b) = (within_tolerance(p[i], a), within_tolerance(p[i], b));
                let verdict = if ok_a == ok_b {
                    Verdict::from_holds(ok_a)
                } else {
                    Verdict::NotTestable
                };
                cells.push(
                    Cell::new(
                        &[&format!("{w}K"), col],
                        q(p[i], "KB/s"),
                        q(a, "KB/s"),
                        format!(
                            "{a:.0} KB/s at BER {}, {b:.0} KB/s at BER {}",
                            READINGS[0].1[i - 1],
                            READINGS[1].1[i - 1]
                        ),
                        verdict,
                        || {
                            Some(if ok_a != ok_b {
                                format!(
                                    "the notation decides: \"{col}\" read as {} gives {a:.0} KB/s ({}), \
                                     read as {} gives {b:.0} KB/s ({}); the RFC does not say which it means",
                                    READINGS[0].1[i - 1],
                                    if ok_a { "within the tolerance" } else { "outside it" },
                                    READINGS[1].1[i - 1],
                                    if ok_b { "within the tolerance" } else { "outside it" },
                                )
                            } else {
                                format!(
                                    "{a:.0} and {b:.0} KB/s (either reading) against {:.0}: outside the \
                                     tolerance. The RFC's error simulator, its losses of NAKs and the \
                                     SGI Iris hosts are not modelled",
                                    p[i],
                                )
                            })
                        },
                    )
                    .with_config(cfg),
                );
            }
        }
        claims.push(Claim::matrix(
            EXP,
            slug,
            part,
            format!(
                "{label}: each published transfer rate, one run configuration per cell ({FOX_PROFILE} \
                 at both ends, median of {} seeds); \"10e-7\" and \"10e-6\" are ambiguous, so both \
                 readings are run",
                seeds.len()
            ),
            &["window", "error rate"],
            cells,
        ));
    }
    // Section 3: a 16-bit window cannot fill the pipe.
    let r64 = rate(WIN16, 64, "0");
    let link = 1.544e6 / 8.0 / 1024.0;
    claims.push(Claim::new(
        EXP,
        "16-bit-window-cannot-fill-pipe",
        "section 3",
        format!(
            "Even on a perfectly conditioned link a 16-bit window does not fill the satellite's pipe \
             ({r64:.0} KB/s of {link:.0}; the pipe holds {:.0} KB)",
            1.544e6 / 8.0 * 0.58 / 1024.0
        ),
        None,
        q(r64, "KB/s"),
        Verdict::from_holds(r64 < 0.9 * link),
        || Some("the 64K window fills the link".into()),
    ));
    // Section 2: a loss costs at least 3X (X the one-way delay) without NAKs.
    let cost_cells: Vec<Cell> = ["1e-7", "1e-6"]
        .iter()
        .filter_map(|ber| {
            let clean = rate(FIG1, big, "0") * 1024.0;
            let rs = runs(FIG1, big, ber);
            let costs: Vec<f64> = rs
                .iter()
                .filter_map(|d| {
                    let r = &d.result;
                    let losses = (r.client.retransmits + r.server.retransmits) as f64;
                    let bytes = r.goodput_bytes_per_s * r.sim_time_s;
                    (losses > 0.0 && clean > 0.0 && r.goodput_bytes_per_s > 0.0)
                        .then(|| (bytes / r.goodput_bytes_per_s - bytes / clean) / losses)
                })
                .collect();
            if costs.is_empty() {
                return None;
            }
            let c = median(costs);
            let x3 = 3.0 * FOX_ONE_WAY_S;
            Some(Cell::new(
                &[&format!("BER {ber}")],
                q(x3, "s per loss"),
                q(c, "s per loss"),
                format!(
                    "{:.2} s lost per retransmission (at least 3X = {x3:.2} s)",
                    c
                ),
                Verdict::from_holds(at_least(x3, c)),
                || {
                    Some(format!(
                        "a loss costs {c:.2} s, under 3X = {x3:.2} s even with the tolerance"
                    ))
                },
            ))
        })
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "loss-costs-3x-without-nak",
        "section 2",
        format!(
            "Without NAKs a lost packet costs at least 3X of transfer time, X the one-way delay \
             ({FOX_PROFILE}, Figure 1's stack, {big}K window: the time lost against the error-free \
             run, per retransmission)"
        ),
        &["bit error rate"],
        cost_cells,
    ));
    // Section 4.2: opening slow start by 2 segments per ACK wastes less.
    let ss_cells: Vec<Cell> = ["1e-7", "1e-6", "1e-5"]
        .iter()
        .map(|ber| {
            let (one, two) = (rate(FIG1, big, ber), rate(DOUBLE, big, ber));
            Cell::new(
                &[&format!("BER {ber}")],
                None,
                q(two / one.max(1e-9), "x one-per-ACK's rate"),
                format!("2 per ACK {two:.0} vs 1 per ACK {one:.0} KB/s"),
                Verdict::from_holds(two > one),
                || {
                    Some(format!(
                        "opening by 2 per ACK gains nothing here ({two:.0} vs {one:.0} KB/s)"
                    ))
                },
            )
        })
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "slow-start-2-per-ack",
        "section 4.2",
        format!(
            "Opening the window by 2 packets per ACK instead of 1 reduces the bandwidth lost to \
             slow start after each loss ({FOX_PROFILE}, Figure 1's stack, {big}K window)"
        ),
        &["bit error rate"],
        ss_cells,
    ));
    // Section 4.2: a retransmission timer set at the round trip fires early.
    let timeouts = |label: &str, ber: &str| -> f64 {
        median(
            runs(label, big, ber)
                .iter()
                .map(|d| (d.result.client.timeouts + d.result.server.timeouts) as f64)
                .collect(),
        )
    };
    let (t_rtt, t_prof) = (timeouts(RTO_AT_RTT, "0"), timeouts(FIG2, "0"));
    claims.push(Claim::new(
        EXP,
        "rto-at-rtt-fires-early",
        "section 4.2",
        format!(
            "A retransmission timer set at the round-trip delay goes off before the ACK arrives: \
             on the error-free link, {t_rtt:.0} timeouts with the timer at 580 ms against {t_prof:.0} \
             with the profile's (median per run)"
        ),
        None,
        q(t_rtt, "timeouts per run"),
        Verdict::from_holds(t_rtt > t_prof),
        || {
            Some(
                "no timeout fires early: the smoothed round trip plus its variance keeps the timer \
                 above the 580 ms floor on this queue-free path"
                    .into(),
            )
        },
    ));
    // Section 4.3: with NAKs the sender does not count duplicate ACKs.
    let nak_runs: Vec<&Done> = FOX_BERS.iter().flat_map(|b| runs(FIG2, big, b)).collect();
    let fr: u64 = nak_runs
        .iter()
        .map(|d| d.result.client.fast_retransmits + d.result.server.fast_retransmits)
        .sum();
    let sup: u64 = nak_runs
        .iter()
        .map(|d| {
            d.result.client.fast_retransmits_suppressed
                + d.result.server.fast_retransmits_suppressed
        })
        .sum();
    let naks: u64 = nak_runs
        .iter()
        .map(|d| d.result.client.naks_received + d.result.server.naks_received)
        .sum();
    claims.push(Claim::new(
        EXP,
        "nak-suppresses-dupack-retransmit",
        "section 4.3",
        format!(
            "With NAKs in use the sender no longer retransmits on duplicate ACKs: {fr} \
             duplicate-ACK retransmissions, {sup} suppressed, {naks} NAKs received over the \
             {big}K-window NAK runs"
        ),
        None,
        q(fr as f64, "duplicate-ACK retransmissions"),
        Verdict::from_holds(fr == 0 && sup > 0 && naks > 0),
        || {
            Some(if sup == 0 {
                "no duplicate-ACK retransmission was suppressed: none would have fired".into()
            } else {
                format!("{fr} duplicate-ACK retransmissions still fired beside the NAKs")
            })
        },
    ));
    // Section 4.2: treating a loss as noise rather than congestion.
    let nc_cells: Vec<Cell> = ["1e-7", "1e-6", "1e-5"]
        .iter()
        .map(|ber| {
            let (noise, cong) = (rate(NOISE, big, ber), rate(FIG1, big, ber));
            Cell::new(
                &[&format!("BER {ber}")],
                None,
                q(noise / cong.max(1e-9), "x the congestion response's rate"),
                format!("noise {noise:.0} vs congestion {cong:.0} KB/s"),
                Verdict::from_holds(noise > cong),
                || {
                    Some(format!(
                        "treating losses as noise is not faster here ({noise:.0} vs {cong:.0} KB/s)"
                    ))
                },
            )
        })
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "noise-beats-congestion",
        "section 4.2",
        format!(
            "On a lossy link, closing the send window to one packet and slow-starting after every \
             loss limits big windows: treating losses as noise is faster ({big}K window)"
        ),
        &["bit error rate"],
        nc_cells,
    ));
    // The appendix's comparison, as the appendix makes it, per reading.
    let (mut nak_cells, mut controlled_cells) = (Vec::new(), Vec::new());
    for ber in ["1e-7", "1e-6", "1e-5"] {
        let nak = rate(FIG2, big, ber);
        let no = rate(FIG1, big, ber);
        let alone = rate(NOISE, big, ber);
        nak_cells.push(Cell::new(
            &[&format!("BER {ber}")],
            None,
            q(nak / no.max(1e-9), "x Figure 1's rate"),
            format!("NAK {nak:.0} vs no NAK {no:.0} KB/s"),
            Verdict::from_holds(nak > no),
            || {
                Some(format!(
                    "Figure 2's stack is not faster here ({nak:.0} vs {no:.0} KB/s)"
                ))
            },
        ));
        controlled_cells.push(Cell::new(
            &[&format!("BER {ber}")],
            None,
            q(nak / alone.max(1e-9), "x the no-NAK noise stack's rate"),
            format!("NAK {nak:.0} vs duplicate ACKs {alone:.0} KB/s"),
            Verdict::from_holds(nak > alone),
            || {
                Some(format!(
                    "with loss treated as noise on both sides, a lone loss is repaired in one round \
                     trip by a NAK and by duplicate-ACK fast retransmit alike ({nak:.0} vs {alone:.0} KB/s); \
                     NAKs gain only where the timer would otherwise fire"
                ))
            },
        ));
        let gain = nak - no;
        if gain > 0.0 {
            findings.push(format!(
                "BER {ber}, {big}K window: Figure 2's stack beats Figure 1's by {gain:.0} KB/s ({no:.0} -> {nak:.0}); \
                 treating loss as noise accounts for {:.0} KB/s of it ({no:.0} -> {alone:.0} without NAKs) \
                 and the NAKs for {:.0} KB/s.",
                alone - no,
                nak - alone,
            ));
        }
    }
    claims.push(Claim::matrix(
        EXP,
        "nak-beats-no-nak",
        "appendix, Figures 1 and 2; section 4.1",
        format!(
            "With errors, big windows with NAKs (Figure 2's stack) beat big windows alone (Figure 1's), \
             {big}K window; BERs of both readings"
        ),
        &["bit error rate"],
        nak_cells,
    ));
    claims.push(Claim::matrix(
        EXP,
        "nak-beats-dupack-controlled",
        "section 4.1 (\"the nak option bounds the required window\")",
        format!(
            "Controlled, both stacks treating loss as noise: NAKs beat recovery without them ({big}K window)"
        ),
        &["bit error rate"],
        controlled_cells,
    ));
    differences.push(format!(
        "RFC 1106's machines (SGI Iris 2500, 1989) and its error simulator are not modelled; the \
         RFC gives no MSS, so the {FOX_PROFILE} profile's 512 bytes is used. At \"10e-6\" Fox notes \
         that NAKs themselves were often lost, giving Figure 2's wild swings; our losses are \
         independent bit errors on every frame, ACKs and NAKs included. The figures' \"10e-7\" and \
         \"10e-6\" are ambiguous (10 x 10^-7 is 1e-6): both readings are run and a cell whose \
         verdict depends on the reading is not testable."
    ));
    let chart = Chart {
        title: format!("Satellite, {big}K window: transfer rate by bit error rate"),
        y_label: "KB/s".into(),
        categories: FOX_BERS.iter().map(|b| format!("BER {b}")).collect(),
        series: [FIG1, FIG2, NOISE, DOUBLE]
            .iter()
            .map(|label| Series {
                label: label.to_string(),
                values: FOX_BERS.iter().map(|b| rate(label, big, b)).collect(),
                published: vec![None; FOX_BERS.len()],
            })
            .collect(),
        log: false,
    };
    Section {
        setup: format!(
            "Bulk transfer of 4 MB over 1.544 Mb/s with a 580 ms round trip; median over seeds {:?}. \
             Both hosts run the `{FOX_PROFILE}` profile (RFC 1106's implementation was 4.3BSD's: \
             initial window 1, one segment after any loss, no fast recovery, 500 ms timer ticks) \
             with the window as the receive buffer and a 1 MiB send buffer. Figure 1 adds the Big \
             Window option; Figure 2 adds NAKs and treats losses as noise (RFC 1106 4.2 says its NAK \
             runs did). The figures' error-rate columns are run at both readings of their notation. \
             Rates in K bytes/s.",
            seeds
        ),
        tables,
        charts: vec![chart],
        findings,
        differences,
        claims,
        ..shell(EXP)
    }
}
