//! Cheshire, "TCP Performance problems caused by interaction between Nagle's Algorithm and Delayed ACK": the 99,912 / 99,913-byte cliff.

use super::*;

// ----- cheshire-cliff ------------------------------------------------------

pub(super) const BLOCKS: [u32; 3] = [99_912, 99_913, 100_000];
/// The WiFi link's goodput, calibrated to what Cheshire's engineers
/// measured at best: 5.2 Mb/s with 99,912-byte blocks.
pub(super) const WIFI_MEASURED_MBPS: f64 = 5.2;
/// The WiFi link's label in tables and job keys.
pub(super) const WIFI: &str = "WiFi (calibrated: 5.2 Mb/s)";

/// The WiFi link's rate: 5.2 Mb/s of TCP payload in 1448-byte segments,
/// plus each frame's TCP/IP headers with timestamps (52 bytes) and
/// Ethernet framing (38 bytes, the scenario's default).
pub(super) fn wifi_rate_bps() -> f64 {
    WIFI_MEASURED_MBPS * 1e6 * (1448.0 + 52.0 + 38.0) / 1448.0
}

/// (label, one-way delay): gigabit Ethernet and Cheshire's WiFi.
pub(super) fn cheshire_links() -> [(&'static str, String, &'static str); 2] {
    [
        ("1 Gb/s", "1Gbps".to_string(), "50us"),
        (WIFI, format!("{:.0}bps", wifi_rate_bps()), "1ms"),
    ]
}

/// The client configurations, one per host or practice the page names:
/// (label, profile, the MSS the profile gives, send-policy override, requests outstanding).
pub(super) const CHESHIRE_CLIENTS: [(&str, &str, u16, Option<&str>, u32); 7] = [
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
pub(super) const CHESHIRE_SERVER: &str = "macosx-tiger";

pub(super) fn cheshire_dims(quick: bool) -> Vec<u32> {
    if quick {
        vec![99_912, 99_913]
    } else {
        BLOCKS.to_vec()
    }
}

pub(super) fn cheshire_jobs(quick: bool, _at: &At) -> Vec<Job> {
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

pub(super) fn cheshire_section(quick: bool, _at: &At, done: &[Done]) -> Section {
    const EXP: &str = "cheshire-cliff";
    use crate::{at_least, at_most, within_tolerance, TOLERANCE};
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
                        spread: Vec::new(),
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
#[cfg(feature = "plots")]
pub(super) fn cheshire_plots() -> Vec<(String, String)> {
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
            let crate::World::TwoHost(mut sim) = crate::World::of(&sc) else {
                return None;
            };
            sim.enable_capture(false);
            sim.enable_trace();
            sim.run(&mut |_, _| {});
            let ts = crate::plot::time_sequence(&sim, Some(0)).ok()?;
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

/// Without the `plots` feature the report has no time-sequence graphs.
#[cfg(not(feature = "plots"))]
pub(super) fn cheshire_plots() -> Vec<(String, String)> {
    Vec::new()
}
