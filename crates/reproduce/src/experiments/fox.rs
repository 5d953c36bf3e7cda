//! Fox, RFC 1106 "TCP Big Window and Nak Options": big windows and NAKs over a noisy satellite link.

use super::*;

// ----- fox-satellite ------------------------------------------------------

/// The profile of RFC 1106's era, for both hosts of every run.
pub(super) const FOX_PROFILE: &str = "bsd43-tahoe";
/// Figure 1's stack: big windows, no NAKs, losses taken as congestion (the profile's).
pub(super) const FIG1: &str = "Figure 1: big windows";
/// Figure 2's stack: big windows and NAKs, losses taken as noise (RFC 1106 4.2).
pub(super) const FIG2: &str = "Figure 2: big windows + NAK, noise";
/// Controlled: as Figure 2 without NAKs.
pub(super) const NOISE: &str = "big windows, noise, no NAK";
/// The 16-bit window, for section 3's claim.
pub(super) const WIN16: &str = "16-bit window";
/// Figure 1 with slow start opening by 2 segments per ACK (RFC 1106 4.2).
pub(super) const DOUBLE: &str = "Figure 1, slow start 2 per ACK";
/// Figure 2 with the retransmission timer set at the round trip (RFC 1106 4.2).
pub(super) const RTO_AT_RTT: &str = "Figure 2, RTO at the round trip";

/// (label, options, loss_is, further overrides).
pub(super) const FOX_CONFIGS: [(&str, &str, &str, &[&str]); 6] = [
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
pub(super) const FOX_BERS: [&str; 4] = ["0", "1e-7", "1e-6", "1e-5"];
/// The two readings of the figures' "10e-7" and "10e-6" columns: as meant
/// (1e-7, 1e-6) or as written (10 x 10^-7 = 1e-6, 10 x 10^-6 = 1e-5).
pub(super) const READINGS: [(&str, [&str; 2]); 2] = [
    ("10e-7 read as 1e-7, 10e-6 as 1e-6", ["1e-7", "1e-6"]),
    (
        "10e-7 read as 1e-6, 10e-6 as 1e-5 (as written)",
        ["1e-6", "1e-5"],
    ),
];
/// Published transfer rates in K bytes/s: Figure 1 (big windows, no NAKs)
/// and Figure 2 (big windows and NAKs), by window in KB: no error, 10e-7, 10e-6.
pub(super) const FOX_FIG1: [(u32, [f64; 3]); 9] = [
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
pub(super) const FOX_FIG2: [(u32, [f64; 3]); 9] = [
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
pub(super) const FOX_ONE_WAY_S: f64 = 0.29;

/// Z, the satellite's pipe (1.544 Mb/s x 580 ms), in KiB, rounded to the
/// figures' window of 112K; and 2Z, the window RFC 1106 4.1 says a loss needs.
pub(super) const Z_K: u32 = 112;
pub(super) const TWO_Z_K: u32 = 224;

/// What RFC 1106 leaves open about its runs.
pub(super) fn fox_unknowns() -> Vec<Unknown> {
    vec![
        Unknown::drawn(
            "seed",
            "1",
            "1000000",
            "which frames the RFC's error simulator corrupted: each point runs one seeded \
             pattern of bit errors, so a result that depends on where the errors fall spreads",
        ),
        Unknown::drawn(
            "fox.mss",
            "512",
            "1460",
            "the RFC gives no segment size: from 4.3BSD's 512 bytes off the local net to an \
             Ethernet's 1460 (the SGI Iris hosts' interfaces); with a bit error rate the size \
             sets how many segments are lost",
        ),
    ]
}

/// The windows each run set covers (the figures' rows).
pub(super) fn fox_dims(quick: bool) -> Vec<u32> {
    if quick {
        vec![64, Z_K, 156]
    } else {
        FOX_FIG1.iter().map(|x| x.0).collect()
    }
}

/// Which windows and error rates a configuration runs at: the figures at
/// every window, the others at the largest (the 16-bit window at 64K).
pub(super) fn fox_runs(label: &str, windows: &[u32]) -> Vec<(u32, &'static str)> {
    let big = *windows.last().unwrap_or(&156);
    let ws: Vec<u32> = match label {
        FIG1 => windows.to_vec(),
        FIG2 => windows.iter().copied().chain([TWO_Z_K]).collect(),
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

pub(super) fn fox_jobs(quick: bool, at: &At) -> Vec<Job> {
    let base = base_of("fox-satellite");
    let windows = fox_dims(quick);
    let seed = at.bytes("seed", 1);
    let mss = at.bytes("fox.mss", 512);
    let mut jobs = Vec::new();
    for (label, options, loss_is, extra) in FOX_CONFIGS {
        for (w, ber) in fox_runs(label, &windows) {
            {
                let mut ov = vec![
                    o("seed", seed),
                    o("link.ber", ber),
                    o("workload.bytes", "\"4MB\""),
                ];
                for h in ["client", "server"] {
                    ov.push(o(&format!("{h}.profile"), format!("\"{FOX_PROFILE}\"")));
                    ov.push(o(&format!("{h}.mss"), mss));
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
                    key: vec![label.into(), w.to_string(), ber.into()],
                    scenario: scenario(base, "scenarios/fox-satellite.toml", &ov),
                    capture: false,
                });
            }
        }
    }
    jobs
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
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

pub(super) fn fox_section(quick: bool, at: &At, done: &[Done]) -> Section {
    use crate::{at_least, beats, within_tolerance};
    const EXP: &str = "fox-satellite";
    let windows = fox_dims(quick);
    let big = *windows.last().unwrap_or(&156);
    let runs = |label: &str, w: u32, ber: &str| -> Vec<&Done> {
        find(done, &[label, &w.to_string(), ber])
            .into_iter()
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
                "Transfer rates, reading \"{reading}\" (RFC 1106 Figures 1 and 2 in brackets)"
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
                let cfg = runs(label, w, "0").first().map_or_else(
                    || format!("client and server profile {FOX_PROFILE}, {label}, window {w}KiB"),
                    |d| format!("{label}: {}", d.config),
                );
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
                // The two readings are two points of what the RFC leaves
                // open: read by the one rule.
                let mut readings = crate::Tally::default();
                readings.add(Verdict::from_holds(ok_a));
                readings.add(Verdict::from_holds(ok_b));
                let verdict = crate::open::verdict_over(readings);
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
                 at both ends); \"10e-7\" and \"10e-6\" are ambiguous, so both \
                 readings are run"
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
                Verdict::from_holds(beats(two, one, true)),
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
        Verdict::from_holds(beats(t_rtt, t_prof, true)),
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
                Verdict::from_holds(beats(noise, cong, true)),
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
            Verdict::from_holds(beats(nak, no, true)),
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
            Verdict::from_holds(beats(nak, alone, true)),
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
    // "... performance in the face of errors went up some but not to the
    // level that was expected": at the figures' highest error rate (either
    // reading) the NAK stack stays below its error-free rate by more than
    // the tolerance.
    let clean = rate(FIG2, big, "0");
    {
        // The figures' "10e-6" column at both readings: two points of what
        // the RFC leaves open, read by the one rule.
        let (a, b) = (rate(FIG2, big, "1e-6"), rate(FIG2, big, "1e-5"));
        let below = |x: f64| !within_tolerance(clean, x);
        let mut readings = crate::Tally::default();
        readings.add(Verdict::from_holds(below(a)));
        readings.add(Verdict::from_holds(below(b)));
        nak_cells.push(Cell::new(
            &["\"10e-6\", against error-free"],
            None,
            q(a / clean.max(1e-9), "x the error-free rate"),
            format!("NAK {a:.0} KB/s at BER 1e-6, {b:.0} at 1e-5, against {clean:.0} without errors"),
            crate::open::verdict_over(readings),
            || {
                Some(if below(a) == below(b) {
                    format!(
                        "the NAK stack keeps {a:.0} (BER 1e-6) and {b:.0} (1e-5) of its error-free \
                         {clean:.0} KB/s: within the tolerance, the level one would expect"
                    )
                } else {
                    format!(
                        "the notation decides: at BER 1e-6 the NAK stack keeps {a:.0} of {clean:.0} \
                         KB/s, at 1e-5 {b:.0}"
                    )
                })
            },
        ));
    }
    claims.push(Claim::matrix(
        EXP,
        "nak-helps-not-as-expected",
        "section 4; appendix, Figures 1 and 2",
        format!(
            "When NAKs were added to big windows, performance in the face of errors went up some \
             (Figure 2's stack beats Figure 1's) but not to the level expected (below the error-free \
             rate by more than the tolerance at the figures' highest error rate); {big}K window, \
             BERs of both readings"
        ),
        &["bit error rate"],
        nak_cells,
    ));
    // Section 4.1: "the nak option bounds the required window to 2Z such
    // that in the event of an error there is no lost bandwidth".
    let mut z_cells = Vec::new();
    for ber in ["1e-7", "1e-6"] {
        let (z, two) = (rate(FIG2, Z_K, ber), rate(FIG2, TWO_Z_K, ber));
        let clean = rate(FIG2, Z_K, "0");
        z_cells.push(Cell::new(
            &[&format!("BER {ber}"), "2Z beats Z"],
            None,
            q(two / z.max(1e-9), "x the rate with window Z"),
            format!("window 2Z ({TWO_Z_K}K) {two:.0} against Z ({Z_K}K) {z:.0} KB/s"),
            Verdict::from_holds(beats(two, z, true)),
            || {
                Some(format!(
                    "a 2Z window gains nothing over Z here ({two:.0} vs {z:.0} KB/s)"
                ))
            },
        ));
        z_cells.push(Cell::new(
            &[&format!("BER {ber}"), "2Z loses no bandwidth"],
            None,
            q(two / clean.max(1e-9), "x the error-free rate"),
            format!("window 2Z {two:.0} KB/s against {clean:.0} error-free"),
            Verdict::from_holds(within_tolerance(clean, two)),
            || {
                Some(format!(
                    "window 2Z runs at {two:.0} against {clean:.0} KB/s error-free"
                ))
            },
        ));
    }
    claims.push(Claim::matrix(
        EXP,
        "nak-window-2z",
        "section 4.1",
        format!(
            "With NAKs a window of 2Z (Z the pipe, {Z_K}K) keeps the pipe full through a loss: \
             faster than a window of Z, and within the tolerance of the error-free rate"
        ),
        &["bit error rate", "comparison"],
        z_cells,
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
    differences.push(
        "RFC 1106's machines (SGI Iris 2500, 1989) and its error simulator are not modelled; the \
         RFC gives no MSS, so it is an unknown (512 to 1460 bytes). At \"10e-6\" Fox notes \
         that NAKs themselves were often lost, giving Figure 2's wild swings; our losses are \
         independent bit errors on every frame, ACKs and NAKs included. The figures' \"10e-7\" and \
         \"10e-6\" are ambiguous (10 x 10^-7 is 1e-6): both readings are run and a cell whose \
         verdict depends on the reading is not testable."
            .to_string(),
    );
    let chart = Chart {
        title: format!("Satellite, {big}K window: transfer rate by bit error rate"),
        y_label: "KB/s".into(),
        categories: FOX_BERS.iter().map(|b| format!("BER {b}")).collect(),
        series: [FIG1, FIG2, NOISE, DOUBLE]
            .iter()
            .map(|label| Series {
                spread: Vec::new(),
                label: label.to_string(),
                values: FOX_BERS.iter().map(|b| rate(label, big, b)).collect(),
                published: vec![None; FOX_BERS.len()],
            })
            .collect(),
        log: false,
    };
    Section {
        setup: format!(
            "Bulk transfer of 4 MB over 1.544 Mb/s with a 580 ms round trip; one seeded error pattern \
             and segment size per point (at this report's first point: seed {}, MSS {}). \
             Both hosts run the `{FOX_PROFILE}` profile (RFC 1106's implementation was 4.3BSD's: \
             initial window 1, one segment after any loss, no fast recovery, 500 ms timer ticks) \
             with the window as the receive buffer and a 1 MiB send buffer. Figure 1 adds the Big \
             Window option; Figure 2 adds NAKs and treats losses as noise (RFC 1106 4.2 says its NAK \
             runs did). The figures' error-rate columns are run at both readings of their notation. \
             Rates in K bytes/s.",
            at.bytes("seed", 1),
            at.bytes("fox.mss", 512)
        ),
        tables,
        charts: vec![chart],
        findings,
        differences,
        claims,
        ..shell(EXP)
    }
}
