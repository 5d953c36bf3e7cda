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

fn find<'a>(done: &'a [Done], key: &[&str]) -> Option<&'a Done> {
    done.iter()
        .find(|d| d.key.iter().map(String::as_str).eq(key.iter().copied()))
}

fn pct(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        (a - b).abs() / b * 100.0
    }
}

// ----- doupnik-web ------------------------------------------------------

const SERVERS: [(&str, &str, &str); 3] = [
    ("FreeBSD-like", "nagle", "200ms"),
    ("Solaris-like", "nagle-liberal", "50ms"),
    ("Linux-2.2-like", "nagle-liberal", "10ms"),
];
const POLICIES: [&str; 3] = ["Nagle on", "Nagle off", "new policy"];
/// How the client counts segments for its ACK-every-second rule: any data
/// segment (BSD) or full-sized ones only (RFC 1122 4.2.3.2's wording). The
/// paper does not say which its clients did, so both are shown.
const COUNTING: [(&str, &str); 2] = [("any", "any segment"), ("full", "full-sized only")];
const FILES: [(&str, &str, f64); 2] = [
    ("2.2 KB", "[40, 150, 2250]", 2250.0),
    ("33 KB", "[40, 150, \"4096x8\", 232]", 33000.0),
];

fn rwnds(server: &str, quick: bool) -> Vec<&'static str> {
    match (server, quick) {
        (_, true) => vec!["16KiB", "4KiB"],
        ("FreeBSD-like", false) => vec!["32KiB", "16KiB", "4KiB"],
        _ => vec!["16KiB", "4KiB"],
    }
}

/// Table 1 rows: (2.2 KB req/s, KB/s, 33 KB req/s, KB/s). The FreeBSD-like
/// server (strict Nagle, 200 ms) matches the UW7 server rows (16 and 4 KB
/// client windows, Nagle on/off only) and the FreeBSD server rows with the
/// UW7 client's 32 KB window (on, off and new policy).
fn published(server: &str, rwnd: &str, policy: &str) -> Option<[f64; 4]> {
    Some(match (server, rwnd, policy) {
        ("FreeBSD-like", "32KiB", "Nagle on") => [5.0, 12.0, 5.0, 165.0],
        ("FreeBSD-like", "32KiB", "Nagle off") => [1249.0, 2914.0, 222.0, 7142.0],
        ("FreeBSD-like", "32KiB", "new policy") => [1247.0, 2909.0, 228.0, 7324.0],
        ("FreeBSD-like", "16KiB", "Nagle on") => [5.0, 12.0, 5.0, 177.0],
        ("FreeBSD-like", "16KiB", "Nagle off") => [1508.0, 3519.0, 264.0, 8478.0],
        ("FreeBSD-like", "4KiB", "Nagle on") => [5.0, 12.0, 5.0, 166.0],
        ("FreeBSD-like", "4KiB", "Nagle off") => [1421.0, 3315.0, 235.0, 7553.0],
        ("Solaris-like", "16KiB", "Nagle on") => [1151.0, 2685.0, 233.0, 7474.0],
        ("Solaris-like", "16KiB", "Nagle off") => [1186.0, 2768.0, 239.0, 7669.0],
        ("Solaris-like", "16KiB", "new policy") => [1206.0, 2813.0, 237.0, 7634.0],
        ("Solaris-like", "4KiB", "Nagle on") => [1104.0, 2575.0, 180.0, 5795.0],
        ("Solaris-like", "4KiB", "Nagle off") => [1090.0, 2544.0, 180.0, 5772.0],
        ("Solaris-like", "4KiB", "new policy") => [1090.0, 2543.0, 165.0, 5290.0],
        ("Linux-2.2-like", "16KiB", "Nagle on") => [1665.0, 3912.0, 277.0, 8876.0],
        ("Linux-2.2-like", "16KiB", "Nagle off") => [1709.0, 3987.0, 279.0, 8970.0],
        ("Linux-2.2-like", "16KiB", "new policy") => [1665.0, 3883.0, 277.0, 8894.0],
        ("Linux-2.2-like", "4KiB", "Nagle on") => [1685.0, 3930.0, 55.0, 1776.0],
        ("Linux-2.2-like", "4KiB", "Nagle off") => [1692.0, 3946.0, 238.0, 7634.0],
        ("Linux-2.2-like", "4KiB", "new policy") => [1699.0, 3964.0, 241.0, 7740.0],
        _ => return None,
    })
}

fn doupnik_jobs(quick: bool) -> Vec<Job> {
    let base = base_of("doupnik-web");
    let mut jobs = Vec::new();
    for (server, nagle, delack) in SERVERS {
        for rwnd in rwnds(server, quick) {
            for (count, _) in COUNTING {
                for policy in POLICIES {
                    let send = match policy {
                        "Nagle on" => nagle,
                        "Nagle off" => "nodelay",
                        _ => "doupnik",
                    };
                    for (file, response, _) in FILES {
                        let ov = vec![
                            o("server.send_policy", format!("\"{send}\"")),
                            o("server.delack", format!("\"{delack}\"")),
                            o("client.rcv_buf", format!("\"{rwnd}\"")),
                            o("client.delack_count", format!("\"{count}\"")),
                            o("workload.response", response),
                            o("duration", if quick { "\"2s\"" } else { "\"10s\"" }),
                        ];
                        jobs.push(Job {
                            key: vec![
                                server.into(),
                                rwnd.into(),
                                count.into(),
                                policy.into(),
                                file.into(),
                            ],
                            scenario: scenario(base, "scenarios/doupnik-web.toml", &ov),
                            capture: false,
                        });
                    }
                }
            }
        }
    }
    jobs
}

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

/// "N x slower" with a sensible precision: 1.3x, 12x, 739x.
fn times_slower(fast: f64, slow: f64) -> String {
    let r = fast / slow.max(1e-9);
    if r < 10.0 {
        format!("{r:.1}x slower")
    } else {
        format!("{r:.0}x slower")
    }
}

/// Adds `s` unless an identical entry is there (one per cause, not per row).
fn push_once(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// The server's two header writes (server id, document description). The
/// paper gives no sizes; these are ours.
const HEADERS: [usize; 2] = [40, 150];
/// The server's MSS on the 100 Mb/s Ethernet (no timestamps).
const WEB_MSS: usize = 1460;

/// How strict Nagle cuts one response when the window never binds: the first
/// header write alone (nothing is in flight), then everything else, which
/// piles up behind it, in full segments and one tail. (full segments, tail bytes)
fn strict_nagle_cut(file: usize) -> (usize, usize) {
    let rest = HEADERS[1] + file;
    (rest / WEB_MSS, rest % WEB_MSS)
}

fn doupnik_section(quick: bool, done: &[Done]) -> Section {
    const EXP: &str = "doupnik-web";
    /// The new policy's request rate as a multiple of Nagle-off's.
    const RATIO: &str = "x Nagle-off's rate";
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
        label_headers: ["server", "client rwnd", "client ACKs every 2nd", "server policy"]
            .map(String::from)
            .to_vec(),
        columns,
        rows: Vec::new(),
    };
    let mut charts = Vec::new();
    let mut findings = Vec::new();
    let mut differences = Vec::new();
    let (mut within, mut fewer, mut strict, mut liberal) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (full22, tail22) = strict_nagle_cut(2250);
    let (full33, tail33) = strict_nagle_cut(33_000);
    for (server, _, _) in SERVERS {
        // Per server: the worst gap between the new policy and Nagle-off, and
        // the range of Nagle-on's rate against Nagle-off's.
        let (mut worst_new, mut on_ratios) = (0.0f64, Vec::new());
        for rwnd in rwnds(server, quick) {
            for (count, count_label) in COUNTING {
                let mut series: Vec<Series> = Vec::new();
                for policy in POLICIES {
                    let p = published(server, rwnd, policy);
                    let mut values = Vec::new();
                    let mut vals = Vec::new();
                    for (fi, (file, _, bytes)) in FILES.iter().enumerate() {
                        let Some(d) = find(done, &[server, rwnd, count, policy, file]) else {
                            values.extend([Val::default(); 4]);
                            vals.push(0.0);
                            continue;
                        };
                        let (rps, kbs, segs, small) = web_figures(d, *bytes);
                        values.push(Val::new(rps, p.map(|p| p[fi * 2])));
                        values.push(Val::new(kbs, p.map(|p| p[fi * 2 + 1])));
                        values.push(Val::new(segs, None));
                        values.push(Val::new(small, None));
                        vals.push(rps);
                    }
                    t.rows.push(Row {
                        labels: vec![
                            server.to_string(),
                            rwnd.to_string(),
                            count_label.to_string(),
                            policy.to_string(),
                        ],
                        values,
                    });
                    series.push(Series {
                        label: policy.to_string(),
                        values: vals,
                        published: (0..FILES.len()).map(|fi| p.map(|p| p[fi * 2])).collect(),
                    });
                }
                if rwnd == "16KiB" || rwnd == "4KiB" {
                    charts.push(Chart {
                        title: format!(
                            "{server} server, client window {rwnd}, client ACKs count {count_label}: requests/s"
                        ),
                        y_label: "requests per second (log)".into(),
                        categories: FILES.iter().map(|f| f.0.to_string()).collect(),
                        series,
                        log: true,
                    });
                }
                let get =
                    |policy: &str, file: &str| find(done, &[server, rwnd, count, policy, file]);
                for (fi, (file, _, bytes)) in FILES.iter().enumerate() {
                    let (file, bytes) = (*file, *bytes);
                    let (Some(on_d), Some(off_d), Some(new_d)) = (
                        get("Nagle on", file),
                        get("Nagle off", file),
                        get("new policy", file),
                    ) else {
                        continue;
                    };
                    let (on, off, new) = (
                        web_figures(on_d, bytes),
                        web_figures(off_d, bytes),
                        web_figures(new_d, bytes),
                    );
                    worst_new = worst_new.max(pct(new.0, off.0));
                    on_ratios.push(off.0 / on.0.max(1e-9));
                    let pub_gap = match (
                        published(server, rwnd, "new policy"),
                        published(server, rwnd, "Nagle off"),
                    ) {
                        (Some(n), Some(f)) => q(n[fi * 2] / f[fi * 2], RATIO),
                        _ => None,
                    };
                    within.push(Cell::new(
                        &[server, rwnd, count_label, file],
                        pub_gap,
                        q(new.0 / off.0.max(1e-9), RATIO),
                        format!(
                            "new policy {:.0}, Nagle off {:.0}, Nagle on {:.0} req/s",
                            new.0, off.0, on.0
                        ),
                        Verdict::from_holds(pct(new.0, off.0) <= 10.0),
                        || None,
                    ));
                    if file == "33 KB" {
                        let ok = new.3 < off.3;
                        fewer.push(Cell::new(
                            &[server, rwnd, count_label],
                            None,
                            q(new.3, "small segments per request"),
                            format!(
                                "new policy {:.2} vs Nagle off {:.2} small segments per request",
                                new.3, off.3
                            ),
                            Verdict::from_holds(ok),
                            || {
                                (new.3 == off.3).then(|| {
                                    "by the rules both policies cut these writes into the same \
                                     segments: each 4 KB write ends an application data set, so Rule \
                                     2 sends its tail at once, as Nagle-off does (see the differences)"
                                        .to_string()
                                })
                            },
                        ));
                        if !ok && new.3 == off.3 {
                            push_once(
                                &mut differences,
                                "33 KB file: the new policy sends exactly the segments Nagle-off \
                                 sends, in every configuration. By the rules it must here: each of \
                                 the server's 4 KB writes is a write() with nothing marked to follow, \
                                 so it ends an application data set and Rule 2 (Doupnik 2.1) sends \
                                 its tail (4096 = 2 x 1460 + 1176) at once, as Nagle-off does; data \
                                 that piles up behind the window is cut into full segments by both, \
                                 whatever the write boundaries; and a small segment the window would \
                                 cut off is held by sender SWS avoidance (RFC 1122 4.2.3.4) under \
                                 both. Doupnik 2.3 has the strict new policy join only interior small \
                                 pieces, i.e. data the system marks as not ending the data set \
                                 (section 2.0's indicator for intermediate buffers, like MSG_MORE); \
                                 the experiment's writes carry no such mark, and Table 1 reports no \
                                 segment counts. The paper's \"without sending small segments \
                                 gratuitously\" holds against Nagle-off only for such writes."
                                    .to_string(),
                            );
                        }
                    }
                    if server == "FreeBSD-like" {
                        let ok = (3.0..=7.0).contains(&on.0);
                        let c = &on_d.result.client;
                        let by_window_update = file == "2.2 KB" && c.window_updates > 0;
                        let cause = || -> Option<String> {
                            match (file, count) {
                                ("2.2 KB", _) if by_window_update => Some(format!(
                                    "with a {rwnd} receive buffer the client announces the window its \
                                     read opened (RFC 1122 4.2.3.3 at BSD's threshold, min(half the \
                                     buffer, 2 x MSS)): the previous response's tail was read without \
                                     an update, so reading the next {} + {WEB_MSS} bytes moves the \
                                     window's edge past the threshold, and the update acknowledges the \
                                     data and releases the held {tail22} B tail at once. The paper's UW7 \
                                     client did not do this; its window-update rule is not documented.",
                                    HEADERS[0]
                                )),
                                ("2.2 KB", "any") => Some(format!(
                                    "strict Nagle sends the {} B header alone, then {full22} full \
                                     segment and holds the {tail22} B tail; a client that ACKs every \
                                     second segment of any size ACKs that pair at once, which releases \
                                     the tail: no stall. See the differences: no single counting rule \
                                     gives both of this server's published 5 req/s.",
                                    HEADERS[0]
                                )),
                                ("33 KB", "full") => Some(format!(
                                    "strict Nagle sends the {} B header alone, then {full33} full \
                                     segments and holds the {tail33} B tail; {full33} is even, so a \
                                     client counting only full-sized segments ACKs the last pair at \
                                     once and the tail leaves without a stall. See the differences: \
                                     no single counting rule gives both of this server's published 5 req/s.",
                                    HEADERS[0]
                                )),
                                _ => None,
                            }
                        };
                        // Where a known cause explains the miss, it is one the
                        // document leaves open (the header sizes that set the
                        // counting parity, the client's window-update rule):
                        // our run cannot confirm or refute the claim there.
                        let explained = !ok && cause().is_some();
                        strict.push(Cell::new(
                            &[rwnd, count_label, file],
                            published(server, rwnd, "Nagle on").and_then(|p| q(p[fi * 2], "req/s")),
                            q(on.0, "req/s"),
                            format!("{:.1} req/s (Nagle off {:.0})", on.0, off.0),
                            if explained {
                                Verdict::NotTestable
                            } else {
                                Verdict::from_holds(ok)
                            },
                            cause,
                        ));
                        if !ok && !by_window_update {
                            push_once(
                                &mut differences,
                                format!(
                                    "FreeBSD-like server, Nagle on: no single client ACK-counting rule \
                                     reproduces both published 5 req/s. The stall needs the client to \
                                     have counted an odd number of segments when the server holds the \
                                     tail. Strict Nagle sends the {h0} B header alone and everything \
                                     after it in full segments: {full22} full segment and a {tail22} B \
                                     tail for 2.2 KB, {full33} full segments and a {tail33} B tail for \
                                     33 KB. Counting any segment gives {} and {} (no stall on 2.2 KB, a \
                                     stall on 33 KB); counting full-sized ones only gives {full22} and \
                                     {full33} (the reverse). The parity rests on the sizes of the two \
                                     header writes, which the paper does not give (ours: {h0} and {h1} \
                                     B), and on the exact file sizes; header sizes that made both \
                                     counts odd under one rule would stall both. (With a 4 KB window \
                                     the window cuts the 33 KB response differently and both rules \
                                     stall it.) Not tuned: we keep the sizes we chose.",
                                    full22 + 1,
                                    full33 + 1,
                                    h0 = HEADERS[0],
                                    h1 = HEADERS[1],
                                ),
                            );
                        }
                    }
                    if server == "Linux-2.2-like" && rwnd == "4KiB" && file == "33 KB" {
                        let ok = on.0 < 0.5 * off.0;
                        liberal.push(Cell::new(
                            &[count_label],
                            q(55.0, "req/s"),
                            q(on.0, "req/s"),
                            format!(
                                "Nagle on {:.0} vs Nagle off {:.0} req/s (published 55 vs 238)",
                                on.0, off.0
                            ),
                            Verdict::from_holds(ok),
                            || {
                                Some(
                                    "sender SWS avoidance never lets the 4 KB window leave a lone \
                                     small segment, so liberal Nagle always sends the tail with a full \
                                     one (see the differences)"
                                        .to_string(),
                                )
                            },
                        ));
                        if !ok {
                            push_once(
                                &mut differences,
                                format!(
                                    "Linux-2.2-like server, 4 KB client window, 33 KB, Nagle on: ours \
                                     {:.0} req/s, published 55 (238 with Nagle off). The paper names \
                                     the cause (section 3): liberal Nagle caught by delayed ACKs when \
                                     the window leaves a small segment with no full segment before it \
                                     to drag it out. Our engine's rules never leave one: sender SWS \
                                     avoidance (RFC 1122 4.2.3.4: a window-limited runt goes only if \
                                     it is at least half the largest window offered, 2,048 B here) \
                                     holds every runt the 4 KB window would cut off, so data waiting \
                                     behind the window leaves in full segments, and the response's \
                                     last small segment always leaves in the same burst as a full one, \
                                     which liberal Nagle allows (Doupnik 1.5). `tinygram run \
                                     scenarios/doupnik-web.toml --explain` with this setup shows only \
                                     SWS holds of about one round trip and no Nagle hold waiting for a \
                                     delayed ACK. Likely cause: Linux 2.2 built its segments as the writes \
                                     arrived (buffers of up to one MSS per write), and a 4 KB window \
                                     holding two full segments has room for exactly one write's \
                                     remainder (4,096 = 2 x 1,460 + 1,176), which then goes alone: the \
                                     lone small segment the paper describes. We cut segments from the \
                                     byte stream and hold window-limited runts, as BSD does. Not tuned: we keep BSD's rule.",
                                    on.0
                                ),
                            );
                        }
                    }
                }
            }
        }
        if !on_ratios.is_empty() {
            let lo = on_ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = on_ratios.iter().copied().fold(0.0, f64::max);
            let describe = |r: f64| {
                if r > 1.0 / 0.9 {
                    times_slower(r, 1.0)
                } else {
                    format!("within {:.1} %", (r - 1.0).abs() * 100.0)
                }
            };
            findings.push(format!(
                "{server} server, {} settings: the new policy is never more than {worst_new:.1} % \
                 from Nagle-off; Nagle-on ranges from {} to {} than Nagle-off.",
                on_ratios.len(),
                describe(lo).replace(" slower", ""),
                describe(hi)
            ));
        }
    }
    differences.push(
        "Absolute rates: the 1999 machines (233-400 MHz) were limited to about 1,000-1,700 \
         requests/s by CPU, which the simulator does not model (no server think time is set), \
         so where nothing stalls our rates are set by the 100 Mb/s wire alone and are several \
         times the published ones. The ratios between policies are what to compare."
            .into(),
    );
    let claims = vec![
        Claim::matrix(
            EXP,
            "new-policy-matches-nagle-off",
            "section 3",
            "The new policy works as well as non-Nagle: its request rate is within 10 % of Nagle-off's".into(),
            &["server", "client rwnd", "client ACKs every 2nd", "file"],
            within,
        ),
        Claim::matrix(
            EXP,
            "new-policy-fewer-small-segments",
            "section 3 (\"without sending small segments gratuitously\")",
            "On the 33 KB file the new policy sends fewer small segments than Nagle-off".into(),
            &["server", "client rwnd", "client ACKs every 2nd"],
            fewer,
        ),
        Claim::matrix(
            EXP,
            "strict-nagle-held-tail",
            "section 3, Table 1",
            "Strict Nagle with a 200 ms delayed ACK (FreeBSD-like server) gives about 5 requests/s"
                .into(),
            &["client rwnd", "client ACKs every 2nd", "file"],
            strict,
        ),
        Claim::matrix(
            EXP,
            "liberal-nagle-caught-by-delayed-ack",
            "section 3, Table 1",
            "Liberal Nagle (Linux-2.2-like server, 4 KB client window, 33 KB file) is caught by the \
             client's delayed ACKs when the window leaves a small segment with no full segment \
             before it to drag it out: under half of Nagle-off's rate"
                .into(),
            &["client ACKs every 2nd"],
            liberal,
        ),
    ];
    Section {
        setup: "Keep-alive requests over a 100 Mb/s Ethernet (20 us one-way). The client \
                sends a 120-byte GET and delays its ACKs for 200 ms. The server answers \
                with two short writes (40 and 150 bytes: server id and document \
                description) and then the file: 2,250 bytes in one write, or 33,000 \
                bytes in 4 KB writes. Server stacks: FreeBSD-like (strict Nagle, 200 ms \
                delayed ACK), Solaris-like (liberal Nagle, 50 ms), Linux-2.2-like \
                (liberal Nagle, 10 ms); each with Nagle on, off (`nodelay`) and the new \
                policy (`doupnik`). Published numbers in brackets; `segments` counts the \
                server's data segments per request, `small segments` those under one MSS."
            .into(),
        tables: vec![t],
        charts,
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
    TRACES
        .iter()
        .map(|(n, policy, gap, delack, _, _)| Job {
            key: vec![format!("trace {n}")],
            scenario: scenario(
                base,
                "scenarios/davids-traces.toml",
                &[
                    o("client.send_policy", format!("\"{policy}\"")),
                    o("workload.request_gap", format!("\"{gap}\"")),
                    o("server.delack", format!("\"{delack}\"")),
                ],
            ),
            capture: true,
        })
        .collect()
}

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
    let differences = Vec::new();
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
                "Solaris' naglim 30 cuts packets without lengthening the send (trace 5: {} packets in {:.0} ms; trace 3: {} in {:.0} ms)",
                t5.1 + t5.2,
                t5.3,
                t3.1 + t3.2,
                t3.3
            ),
            None,
            q(f64::from(t5.1 + t5.2), "packets"),
            Verdict::from_holds(ok),
            || None,
        ));
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
                first data packet to the last."
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

const BLOCKS: [u32; 4] = [99_900, 99_912, 99_913, 100_000];
const LINKS: [(&str, &str, &str); 2] = [
    ("1 Gb/s", "1Gbps", "50us"),
    ("WiFi-like 20 Mb/s", "20Mbps", "1ms"),
];
const CHESHIRE_POLICIES: [(&str, &str, u32); 5] = [
    ("nagle", "nagle", 1),
    ("minshall", "minshall", 1),
    ("doupnik", "doupnik", 1),
    ("nodelay", "nodelay", 1),
    ("nagle, 2 outstanding", "nagle", 2),
];

fn cheshire_dims(quick: bool) -> (Vec<u32>, Vec<u16>) {
    if quick {
        (vec![99_912, 99_913], vec![1448])
    } else {
        (BLOCKS.to_vec(), vec![1448, 1460])
    }
}

fn cheshire_jobs(quick: bool) -> Vec<Job> {
    let base = base_of("cheshire-cliff");
    let (blocks, msss) = cheshire_dims(quick);
    let mut jobs = Vec::new();
    for (link, rate, delay) in LINKS {
        for &mss in &msss {
            for (label, policy, outstanding) in CHESHIRE_POLICIES {
                for &block in &blocks {
                    jobs.push(Job {
                        key: vec![
                            link.into(),
                            mss.to_string(),
                            label.into(),
                            block.to_string(),
                        ],
                        scenario: scenario(
                            base,
                            "scenarios/cheshire-cliff.toml",
                            &[
                                o("link.rate", format!("\"{rate}\"")),
                                o("link.delay", format!("\"{delay}\"")),
                                o("client.mss", mss),
                                o("server.mss", mss),
                                o("client.send_policy", format!("\"{policy}\"")),
                                o("workload.outstanding", outstanding),
                                o("workload.request", format!("[{block}]")),
                                o("duration", if quick { "\"2s\"" } else { "\"4s\"" }),
                            ],
                        ),
                        capture: false,
                    });
                }
            }
        }
    }
    jobs
}

/// Cheshire's own figures, by (link, client, block): (blocks/s, Mb/s). His
/// engineers measured 5.2 Mb/s at 99,912 bytes and 2.7 at 99,913 and 100,000
/// on WiFi; on gigabit he gives "at most five transactions per second".
fn cheshire_published(link: &str, client: &str, block: u32) -> (Option<f64>, Option<f64>) {
    match (link, client, block) {
        ("WiFi-like 20 Mb/s", "nagle", 99_912) => (None, Some(5.2)),
        ("WiFi-like 20 Mb/s", "nagle", 99_913 | 100_000) => (None, Some(2.7)),
        ("1 Gb/s", "nagle", 99_913 | 100_000) => (Some(5.0), None),
        _ => (None, None),
    }
}

fn cheshire_section(quick: bool, done: &[Done]) -> Section {
    const EXP: &str = "cheshire-cliff";
    let (blocks, msss) = cheshire_dims(quick);
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
    let rate = |link: &str, mss: u16, p: &str, b: u32| {
        find(done, &[link, &mss.to_string(), p, &b.to_string()]).map(|d| {
            let r = d.result.transactions_per_s;
            (r, r * b as f64 * 8.0 / 1e6)
        })
    };
    let mut charts = Vec::new();
    for (link, _, _) in LINKS {
        for &mss in &msss {
            let mut series = Vec::new();
            for (label, _, _) in CHESHIRE_POLICIES {
                let mut values = Vec::new();
                let mut vals = Vec::new();
                let mut published = Vec::new();
                for &b in &blocks {
                    let (bps, mbps) = rate(link, mss, label, b).unwrap_or((0.0, 0.0));
                    // His MSS was 1448 (Mac OS X with timestamps).
                    let (pb, pm) = if mss == 1448 {
                        cheshire_published(link, label, b)
                    } else {
                        (None, None)
                    };
                    values.push(Val::new(bps, pb));
                    values.push(Val::new(mbps, pm));
                    vals.push(bps);
                    // On the chart, in blocks/s: his Mb/s over the block size.
                    published.push(pb.or(pm.map(|m| m * 1e6 / (f64::from(b) * 8.0))));
                }
                t.rows.push(Row {
                    labels: vec![link.to_string(), mss.to_string(), label.to_string()],
                    values,
                });
                series.push(Series {
                    label: label.to_string(),
                    values: vals,
                    published,
                });
            }
            if mss == 1448 {
                charts.push(Chart {
                    title: format!("{link}, MSS {mss}: blocks per second"),
                    y_label: "blocks per second (log)".into(),
                    categories: blocks.iter().map(|b| format!("{b} B")).collect(),
                    series,
                    log: true,
                });
            }
        }
    }
    let mut cliff_cells = Vec::new();
    let mut fix_cells = Vec::new();
    let mut findings = Vec::new();
    for (link, _, _) in LINKS {
        let cliff = |p: &str| {
            let a = rate(link, 1448, p, 99_912).map(|x| x.0).unwrap_or(0.0);
            let b = rate(link, 1448, p, 99_913).map(|x| x.0).unwrap_or(0.0);
            (a, b)
        };
        const UNIT: &str = "x (99,912 B rate / 99,913 B rate)";
        let (a, b) = cliff("nagle");
        cliff_cells.push(Cell::new(
            &[link],
            // WiFi: 5.2 against 2.7 Mb/s; gigabit: "roughly two hundred times slower".
            if link.starts_with("WiFi") {
                q(5.2 / 2.7, UNIT)
            } else {
                q(200.0, UNIT)
            },
            q(a / b.max(1e-9), UNIT),
            format!("99,912 B: {a:.1} blocks/s, 99,913 B: {b:.1}"),
            Verdict::from_holds(a > 2.0 * b),
            || None,
        ));
        for p in ["minshall", "doupnik", "nagle, 2 outstanding"] {
            let (a, b) = cliff(p);
            fix_cells.push(Cell::new(
                &[link, p],
                None,
                q(a / b.max(1e-9), UNIT),
                format!("{a:.1} vs {b:.1} blocks/s"),
                Verdict::from_holds(b > 0.8 * a),
                || None,
            ));
        }
        let (_, mbps_a) = rate(link, 1448, "nagle", 99_912).unwrap_or_default();
        let (_, mbps_b) = rate(link, 1448, "nagle", 99_913).unwrap_or_default();
        findings.push(format!(
            "{link}: one more byte (99,913) takes nagle from {mbps_a:.1} Mb/s to {mbps_b:.1} Mb/s \
             (Cheshire measured 5.2 and 2.7 Mb/s on his WiFi)."
        ));
    }
    let claims = vec![
        Claim::matrix(
            EXP,
            "cliff-under-nagle",
            "Case Study: WiFi Performance Testing Program",
            "With MSS 1448 one byte more than 69 full segments (99,913 B) stalls each block on \
             the delayed ACK under Nagle: the block rate falls by more than half"
                .into(),
            &["link"],
            cliff_cells,
        ),
        Claim::matrix(
            EXP,
            "no-cliff-under-fixes",
            "Update, November 2012 (Minshall's modification) and the double-buffering advice",
            "Minshall's modification, the new policy and two requests outstanding remove the \
             cliff: 99,913-byte blocks run at least 80 % as fast as 99,912-byte ones"
                .into(),
            &["link", "client"],
            fix_cells,
        ),
    ];
    let mut differences = Vec::new();
    if let (Some((_, a)), Some((_, b))) = (
        rate("WiFi-like 20 Mb/s", 1448, "nagle", 99_912),
        rate("WiFi-like 20 Mb/s", 1448, "nagle", 99_913),
    ) {
        // What a 200 ms stall does to a block at Cheshire's measured rate.
        let his_block_s = 99_912.0 * 8.0 / 5.2e6;
        let his_stalled = 99_913.0 * 8.0 / (his_block_s + 0.2) / 1e6;
        let our_block_s = 99_912.0 * 8.0 / (a * 1e6);
        differences.push(format!(
            "WiFi-like link: one more byte takes nagle from {a:.1} to {b:.1} Mb/s, Cheshire from \
             5.2 to 2.7 Mb/s. The likely cause is our nominal link rate: Cheshire does not give \
             his WiFi's rate, and ours (20 Mb/s) moves a block in {:.0} ms where his 5.2 Mb/s \
             means {:.0} ms. The stall is the same fixed delayed-ACK wait on both, so it costs a \
             fast link more: adding 200 ms to his {:.0} ms per block gives {his_stalled:.1} Mb/s, \
             near his 2.7 (his ACK delay may have been shorter than 200 ms).",
            our_block_s * 1e3,
            his_block_s * 1e3,
            his_block_s * 1e3
        ));
    }
    if let Some((r, _)) = rate("1 Gb/s", 1448, "nagle", 99_913) {
        findings.push(format!(
            "On 1 Gb/s, nagle manages {r:.1} blocks/s with the runt (Cheshire: about 5, \
             where the link could do a thousand)."
        ));
    }
    Section {
        setup: "The client writes one block, the server answers with 1 byte, repeat. \
                With MSS 1448 (1460 less the timestamps option), 99,912 bytes is exactly \
                69 segments; 99,913 leaves a 1-byte runt that strict Nagle holds until the \
                69th segment is acknowledged, which the server delays 200 ms because 69 is \
                odd. Links: 1 Gb/s with 50 us one-way delay, and a WiFi-like 20 Mb/s with \
                1 ms (Cheshire's WiFi rate is not given; ours is a nominal 802.11g-class \
                rate, so compare ratios, not Mb/s). `2 outstanding` is Cheshire's double \
                buffering."
            .into(),
        tables: vec![t],
        charts,
        findings,
        differences,
        claims,
        plots: cheshire_plots(),
        ..shell(EXP)
    }
}

/// Time-sequence graphs of three 99,913-byte blocks on 1 Gb/s: the held tail
/// under nagle, and none under minshall.
fn cheshire_plots() -> Vec<(String, String)> {
    let base = base_of("cheshire-cliff");
    ["nagle", "minshall"]
        .iter()
        .filter_map(|policy| {
            let sc = scenario(
                base,
                "scenarios/cheshire-cliff.toml",
                &[
                    o("client.send_policy", format!("\"{policy}\"")),
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
                    "Client to server, three 99,913-byte blocks on 1 Gb/s under {policy}: \
                     data segments, the ACK line and the receive window; shaded spans are \
                     the why-trace's holds"
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

fn westfield_jobs(quick: bool) -> Vec<Job> {
    let base = base_of("westfield-ftp");
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
            Verdict::from_holds(inter > 5.0 * delayed),
            || None,
        ),
        Claim::new(
            EXP,
            "fixed-delay-crawls",
            "Westfield, 31 Oct 1985",
            format!(
                "The fixed 250 ms delay crawls at one window per timer, under 100 kb/s ({delayed:.0} kb/s; Westfield: under 30 kb/s)"
            ),
            q(30.0, "kb/s"),
            q(delayed, "kb/s"),
            Verdict::from_holds(delayed < 100.0),
            || None,
        ),
        Claim::new(
            EXP,
            "fuzzball-keeps-delaying",
            "Mills, 1 Nov 1985",
            format!(
                "Fuzzball keeps delaying in a one-segment window, as Mills' rule is written: the right \
                 edge never moves more than one MSS ({fuzz:.0} kb/s, under twice the fixed delay's)"
            ),
            None,
            q(fuzz, "kb/s"),
            Verdict::from_holds(fuzz < 2.0 * delayed),
            || None,
        ),
    ];
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

/// (label, options on both ends, loss_is).
const FOX_CONFIGS: [(&str, &str, &str); 5] = [
    ("16-bit window", "[]", "congestion"),
    ("big windows", "[\"bigwin\"]", "congestion"),
    ("big windows, noise", "[\"bigwin\"]", "noise"),
    ("big windows + NAK, noise", "[\"bigwin\", \"nak\"]", "noise"),
    (
        "window scale + SACK",
        "[\"wscale\", \"sack\"]",
        "congestion",
    ),
];
const FOX_BERS: [&str; 3] = ["0", "1e-7", "1e-6"];
/// Published transfer rates in K bytes/s: Figure 1 (big windows, no NAKs)
/// and Figure 2 (big windows and NAKs), by window in KB.
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

fn fox_dims(quick: bool) -> (Vec<u32>, Vec<u64>) {
    if quick {
        (vec![64, 156], vec![1, 2, 3])
    } else {
        (FOX_FIG1.iter().map(|x| x.0).collect(), (1..=5).collect())
    }
}

fn fox_jobs(quick: bool) -> Vec<Job> {
    let base = base_of("fox-satellite");
    let (windows, seeds) = fox_dims(quick);
    let mut jobs = Vec::new();
    for (label, options, loss_is) in FOX_CONFIGS {
        for &w in &windows {
            if label == "16-bit window" && w != 64 {
                continue; // a 16-bit window cannot exceed 64K
            }
            for ber in FOX_BERS {
                for &seed in &seeds {
                    jobs.push(Job {
                        key: vec![label.into(), w.to_string(), ber.into(), seed.to_string()],
                        scenario: scenario(
                            base,
                            "scenarios/fox-satellite.toml",
                            &[
                                o("seed", seed),
                                o("link.ber", ber),
                                o("client.options", options),
                                o("server.options", options),
                                o("client.loss_is", format!("\"{loss_is}\"")),
                                o("server.rcv_buf", format!("\"{w}KiB\"")),
                                o("client.rcv_buf", format!("\"{w}KiB\"")),
                                o("workload.bytes", "\"4MB\""),
                            ],
                        ),
                        capture: false,
                    });
                }
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
    let (windows, seeds) = fox_dims(quick);
    let rate = |label: &str, w: u32, ber: &str| {
        median(
            seeds
                .iter()
                .filter_map(|s| find(done, &[label, &w.to_string(), ber, &s.to_string()]))
                .map(|d| d.result.goodput_bytes_per_s / 1024.0)
                .collect(),
        )
    };
    // Figure 1 (no NAKs) and Figure 2 (NAKs), K bytes/s by window and BER.
    let figure = |label: &str, w: u32| {
        let fig = match label {
            "big windows" => Some(&FOX_FIG1),
            "big windows + NAK, noise" => Some(&FOX_FIG2),
            _ => None,
        };
        fig.and_then(|f| f.iter().find(|x| x.0 == w)).map(|x| x.1)
    };
    let mut t = Table {
        title: "Transfer rates, median over seeds (RFC 1106 Figures 1 and 2 in brackets)".into(),
        label_headers: vec!["options".into(), "window".into()],
        columns: FOX_BERS
            .iter()
            .map(|b| {
                let name = if *b == "0" {
                    "no error".to_string()
                } else {
                    format!("BER {b}")
                };
                Column::new(&name, "KB/s", 0)
            })
            .collect(),
        rows: Vec::new(),
    };
    for (label, _, _) in FOX_CONFIGS {
        for &w in &windows {
            if label == "16-bit window" && w != 64 {
                continue;
            }
            let published = figure(label, w);
            t.rows.push(Row {
                labels: vec![label.to_string(), format!("{w}K")],
                values: FOX_BERS
                    .iter()
                    .enumerate()
                    .map(|(i, ber)| Val::new(rate(label, w, ber), published.map(|p| p[i])))
                    .collect(),
            });
        }
    }
    let big = *windows.last().unwrap_or(&156);
    const EXP: &str = "fox-satellite";
    let mut claims = Vec::new();
    let r64 = rate("16-bit window", 64, "0");
    // 64 KiB per 580 ms round trip is the window limit.
    let limit = 65_535.0 / 0.58 / 1024.0;
    claims.push(Claim::new(
        EXP,
        "64k-window-limited",
        "appendix, Figure 1 (64K row)",
        format!(
            "A 64K window is window-limited near 64K per round trip ({r64:.0} KB/s; limit {limit:.0}; Figure 1 at 64K: 94)"
        ),
        q(94.0, "KB/s"),
        q(r64, "KB/s"),
        Verdict::from_holds(r64 <= limit * 1.02 && r64 >= limit * 0.7),
        || None,
    ));
    let link = 1.544e6 / 8.0 / 1024.0;
    let fill_cells = ["big windows", "window scale + SACK"]
        .into_iter()
        .map(|label| {
            let r = rate(label, big, "0");
            Cell::new(
                &[label],
                figure(label, big).and_then(|p| q(p[0], "KB/s")),
                q(r, "KB/s"),
                format!("{r:.0} KB/s of {link:.0} KB/s"),
                Verdict::from_holds(r >= link * 0.8),
                || None,
            )
        })
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "big-window-fills-link",
        "appendix, Figure 1",
        format!("A {big}K window fills the error-free 1.544 Mb/s link (at least 80 % of it)"),
        &["options"],
        fill_cells,
    ));
    let mut findings = Vec::new();
    let mut differences = Vec::new();
    let (mut nak_cells, mut controlled_cells) = (Vec::new(), Vec::new());
    for (bi, ber) in FOX_BERS.iter().enumerate().skip(1) {
        let ber = *ber;
        // As the appendix compares them: Figure 2's NAK stack treated losses
        // as noise (RFC 1106 4.2); Figure 1's is a standard stack.
        let nak = rate("big windows + NAK, noise", big, ber);
        let no = rate("big windows", big, ber);
        let alone = rate("big windows, noise", big, ber);
        let (f2, f1) = (
            figure("big windows + NAK, noise", big).map(|p| p[bi]),
            figure("big windows", big).map(|p| p[bi]),
        );
        nak_cells.push(Cell::new(
            &[&format!("BER {ber}")],
            f2.and_then(|v| q(v, "KB/s")),
            q(nak, "KB/s"),
            format!(
                "NAK {nak:.0} vs no NAK {no:.0} KB/s{}",
                match (f2, f1) {
                    (Some(a), Some(b)) => format!(" (Figures 2 and 1: {a:.0} vs {b:.0})"),
                    _ => String::new(),
                }
            ),
            Verdict::from_holds(nak > no),
            || None,
        ));
        // Controlled: the same loss response on both sides, only NAK differs.
        let lone_loss = 1.0 - (1.0 - ber.parse::<f64>().unwrap_or(0.0)).powf(1500.0 * 8.0);
        controlled_cells.push(Cell::new(
            &[&format!("BER {ber}")],
            None,
            q(nak, "KB/s"),
            format!("NAK {nak:.0} vs duplicate ACKs {alone:.0} KB/s"),
            Verdict::from_holds(nak > alone * 1.02),
            || {
                Some(format!(
                    "at BER {ber} a full frame is lost with probability {:.2} %, so a {big}K window \
                     of about {:.0} segments sees {:.1} losses per round trip. With loss treated as \
                     noise neither side shrinks its window, and a lone loss is repaired in one round \
                     trip by a NAK and by duplicate-ACK fast retransmit alike; NAKs gain only where \
                     several losses share a window (NewReno repairs one per round trip), and a NAK \
                     lost to a bit error is never repeated (RFC 1106 2.1), leaving that repair to the timer.",
                    lone_loss * 100.0,
                    f64::from(big) * 1024.0 / 1452.0,
                    lone_loss * f64::from(big) * 1024.0 / 1452.0
                ))
            },
        ));
        let gain = nak - no;
        if gain > 0.0 {
            findings.push(format!(
                "BER {ber}, {big}K window: Figure 2's setup beats Figure 1's by {gain:.0} KB/s ({no:.0} -> {nak:.0}); \
                 treating loss as noise accounts for {:.0} KB/s ({:.0} %) of it ({no:.0} -> {alone:.0} without NAKs) \
                 and the NAKs for {:.0} KB/s ({:.0} %).",
                alone - no,
                100.0 * (alone - no) / gain,
                nak - alone,
                100.0 * (nak - alone) / gain
            ));
        }
    }
    claims.push(Claim::matrix(
        EXP,
        "nak-beats-no-nak",
        "appendix, Figures 1 and 2",
        format!(
            "NAKs beat no NAKs on a noisy link (Figure 2's setup against Figure 1's, as the appendix \
             compares them; {big}K window, median of {} seeds)",
            seeds.len()
        ),
        &["bit error rate"],
        nak_cells,
    ));
    claims.push(Claim::matrix(
        EXP,
        "nak-beats-dupack-controlled",
        "appendix and section 4.2",
        format!(
            "Controlled, both sides treating loss as noise: NAKs beat duplicate-ACK recovery by \
             more than 2 % ({big}K window)"
        ),
        &["bit error rate"],
        controlled_cells,
    ));
    let noise = rate("big windows, noise", big, "1e-6");
    let cong = rate("big windows", big, "1e-6");
    claims.push(Claim::new(
        EXP,
        "noise-beats-congestion",
        "section 4.2",
        format!(
            "Treating loss as noise beats treating it as congestion at BER 1e-6 ({noise:.0} vs {cong:.0} KB/s, {big}K window)"
        ),
        None,
        q(noise, "KB/s"),
        Verdict::from_holds(noise > cong),
        || None,
    ));
    let chart = Chart {
        title: format!("Satellite, {big}K window: transfer rate by bit error rate"),
        y_label: "KB/s".into(),
        categories: FOX_BERS.iter().map(|b| format!("BER {b}")).collect(),
        series: FOX_CONFIGS
            .iter()
            .filter(|c| c.0 != "16-bit window")
            .map(|(label, _, _)| Series {
                label: label.to_string(),
                values: FOX_BERS.iter().map(|b| rate(label, big, b)).collect(),
                published: (0..FOX_BERS.len())
                    .map(|i| figure(label, big).map(|p| p[i]))
                    .collect(),
            })
            .collect(),
        log: false,
    };
    Section {
        setup: format!(
            "Bulk transfer of {} over 1.544 Mb/s with a 580 ms round trip and bit error \
             rates 0, 1e-7 and 1e-6; median over seeds {:?}. Published Figure 1 is shown \
             beside `big windows` and Figure 2 beside `big windows + NAK, noise`: RFC 1106 \
             4.2 says the NAK experiment treated losses as noise. Rates in K bytes/s.",
            "4 MB", seeds
        ),
        tables: vec![t],
        charts: vec![chart],
        findings: {
            findings.push(format!(
                "At BER 1e-6 with a {big}K window: NAK + noise {:.0} KB/s, big windows + noise \
                 {noise:.0}, big windows with standard congestion response {cong:.0}, window \
                 scale + SACK {:.0}.",
                rate("big windows + NAK, noise", big, "1e-6"),
                rate("window scale + SACK", big, "1e-6")
            ));
            findings
        },
        differences: {
            differences.push(
                "RFC 1106's machines (SGI Iris 2500, 1989) and its error simulator are not \
                 modelled; at BER 1e-6 Fox notes that NAKs themselves were often lost, giving \
                 the wild swings of Figure 2. Our losses are independent bit errors on every \
                 frame, ACKs and NAKs included, so the shape should match better than the \
                 individual numbers."
                    .into(),
            );
            differences
        },
        claims,
        ..shell(EXP)
    }
}
