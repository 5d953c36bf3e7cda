//! Davids, "TCP -- Either Fast or Efficient": traces 1-7.

use super::*;

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

pub(super) const TRACES: [Trace; 7] = [
    (1, "nagle", "10ms", "200ms", Some(5), Some(654.0)),
    (2, "nagle", "0ms", "200ms", Some(2), Some(201.0)),
    (3, "nodelay", "10ms", "200ms", Some(50), None),
    (4, "nodelay", "0ms", "200ms", Some(50), None),
    (5, "naglim:30", "10ms", "200ms", None, None),
    (6, "nagle", "10ms", "50ms", None, None),
    (7, "nagle", "0ms", "50ms", None, None),
];

/// What Davids' article leaves open about his traces.
pub(super) fn davids_unknowns() -> Vec<Unknown> {
    vec![
        Unknown::drawn(
            "link.delay",
            "\"50us\"",
            "\"500us\"",
            "the traces ran over Ethernet between two hosts the article does not name, with no \
             topology: 50 to 500 us each way (a hub or switch or two, the hosts' drivers)",
        ),
        Unknown::drawn(
            "davids.burst_ms",
            "7",
            "11",
            "trace 2's client writes 50 x 10 bytes \"as fast as it can, taking about 9 ms\": \
             7 to 11 ms for the 50 writes, evenly spaced",
        ),
        Unknown {
            key: "davids.delack_timer".into(),
            spec: tinygram_lab::space::Spec::Values(vec!["\"one-shot\"".into(), "\"tick\"".into()]),
            why:
                "the article gives the server's delayed-ACK time (200 ms, 50 ms in traces 6 and 7) \
                  but not its timer: one-shot from the segment it delays (Solaris' \
                  tcp_deferred_ack_interval) or a free-running tick (the BSD fast timer), whose \
                  phase against the first write then decides when each held write leaves"
                    .into(),
        },
        Unknown::drawn(
            "davids.first_write_ms",
            "0",
            "200",
            "the time from the connection's start to the first write, which sets a free-running \
             tick's phase against the writes: anywhere in one 200 ms tick",
        ),
        Unknown::drawn(
            "seed",
            "1",
            "1000000",
            "which frames the congested router drops in the dropped-packet run (the article gives \
             no loss pattern)",
        ),
    ]
}

/// The loss of the dropped-packet run: "if a packet is dropped due to
/// router congestion", one frame in ten lost.
pub(super) const DAVIDS_LOSS: &str = "0.1";

/// Davids' base scenario with its workload as one exchange whose request
/// starts `first_ms` after the connection (the tick's phase).
fn davids_base(first_ms: u64) -> String {
    with_workload(
        base_of("davids-traces"),
        &format!(
            "type = \"exchanges\"\nexchanges = [{{ request = [\"10x50\"], response = [1], \
             pause = \"{first_ms}ms\" }}]"
        ),
    )
}

/// One trace's overrides at a point: the write gap, the delayed-ACK time
/// and timer, the client's send policy.
fn trace_overrides(policy: &str, gap: &str, delack: &str, at: &At) -> Vec<String> {
    let burst_us = at.number("davids.burst_ms", 9.0) * 1000.0;
    let gap = if gap == "0ms" {
        format!("{:.0}us", burst_us / 49.0)
    } else {
        gap.to_string()
    };
    let mut ov = at.overrides();
    ov.extend([
        o("workload.request_gap", format!("\"{gap}\"")),
        o("server.delack", format!("\"{delack}\"")),
    ]);
    if at.get("davids.delack_timer") == Some("\"tick\"") {
        ov.push(o("server.delack_tick", format!("\"{delack}\"")));
    }
    // Nagle on is the client profile's own send policy.
    if policy != "nagle" {
        ov.push(o("client.send_policy", format!("\"{policy}\"")));
    }
    ov
}

pub(super) fn davids_jobs(_quick: bool, at: &At) -> Vec<Job> {
    let base = davids_base(at.bytes("davids.first_write_ms", 0));
    let job = |key: &str, ov: Vec<String>| Job {
        key: vec![key.to_string()],
        scenario: scenario(&base, "scenarios/davids-traces.toml", &ov),
        capture: true,
    };
    let mut jobs: Vec<Job> = TRACES
        .iter()
        .map(|(n, policy, gap, delack, _, _)| {
            job(
                &format!("trace {n}"),
                trace_overrides(policy, gap, delack, at),
            )
        })
        .collect();
    // "Instead of the client making 50 writes of 10 bytes each, it could make
    // 1 write of 500 bytes": trace 1's setup with one write.
    let mut one = trace_overrides("nagle", "10ms", "200ms", at);
    one.push(o(
        "workload.exchanges",
        format!(
            "[{{ request = [500], response = [1], pause = \"{}ms\" }}]",
            at.bytes("davids.first_write_ms", 0)
        ),
    ));
    jobs.push(job("single write", one));
    // "Changing the value of tcp_naglim_def to 1 will have the same effect
    // ... as if each application set the TCP_NODELAY option": trace 1 with naglim 1.
    jobs.push(job(
        "naglim 1",
        trace_overrides("naglim:1", "10ms", "200ms", at),
    ));
    // "If a packet is dropped due to router congestion ... the application
    // must wait for the TCP retransmit timer": trace 3 (Nagle off) with loss.
    let mut lossy = trace_overrides("nodelay", "10ms", "200ms", at);
    lossy.push(o("link.loss", DAVIDS_LOSS));
    lossy.push(o("seed", at.bytes("seed", 1)));
    jobs.push(job("dropped", lossy));
    jobs
}

/// The hosts of Davids' traces, in words (the document does not name them).
pub(super) const DAVIDS_HOSTS: &str =
    "Davids names no machines for his traces; the system whose parameters \
     he changes for them is Solaris (tcp_naglim_def on the client in trace 5, \
     tcp_deferred_ack_interval on the server in traces 6 and 7), so both ends take the solaris7 \
     profile (an assumption), with what his text gives: the server's delayed ACK of 200 ms (50 ms \
     in traces 6 and 7) and an ACK for every second full-sized segment only (his trace 3: 53 \
     packets for 50 data segments). The client's RTO floor is 1 s (assumption: Solaris' RTO starts \
     from 3 s and adapts slowly; the engine's estimator would resend each segment just before the \
     200 ms delayed ACK)";

/// Davids' counts from a trace: client data packets, server packets that
/// acknowledged client data, and the time from the first to the last data packet.
pub fn trace_figures(d: &Done) -> (u32, u32, f64) {
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
pub(super) const DAVIDS_ACKS: [(u32, f64, f64); 2] = [(1, 5.0, 162.0), (2, 2.0, 65.0)];

pub(super) fn davids_section(_quick: bool, at: &At, done: &[Done]) -> Section {
    const EXP: &str = "davids-traces";
    use crate::{beats, within_tolerance, Rule};
    let mut t = Table {
        title: "Packets and time to send 500 bytes (Davids' figures in brackets)".into(),
        label_headers: ["trace", "client policy", "writes", "server delayed ACK"]
            .map(String::from)
            .to_vec(),
        columns: vec![
            Column::new("data packets", "packets", 0),
            Column::new("ACK packets", "packets", 0),
            Column::new("overhead", "% of 500 B", 0),
            Column::new("time to send", "ms", 0),
        ],
        rows: Vec::new(),
    };
    // Davids' arithmetic: 78 bytes of overhead per data frame, 84 per ACK frame.
    let overhead =
        |data: u32, acks: u32| (f64::from(data) * 78.0 + f64::from(acks) * 84.0) / 500.0 * 100.0;
    let mut fig = Vec::new();
    for (n, policy, gap, delack, pub_pkts, pub_ms) in TRACES {
        let Some(d) = find(done, &[&format!("trace {n}")]) else {
            continue;
        };
        let (data, acks, span) = trace_figures(d);
        let pub_acks = DAVIDS_ACKS.iter().find(|a| a.0 == n);
        t.rows.push(Row {
            labels: vec![
                format!("{n}"),
                policy.to_string(),
                if gap == "0ms" {
                    "50 x 10 B in about 9 ms".into()
                } else {
                    format!("50 x 10 B every {gap}")
                },
                delack.to_string(),
            ],
            values: vec![
                Val::new(f64::from(data), pub_pkts.map(f64::from)),
                Val::new(f64::from(acks), pub_acks.map(|a| a.1)),
                Val::new(overhead(data, acks), pub_acks.map(|a| a.2)),
                Val::new(span, pub_ms),
            ],
        });
        fig.push((n, data, acks, span, d.config.clone()));
    }
    let get = |n: u32| fig.iter().find(|f| f.0 == n).map(|f| (f.0, f.1, f.2, f.3));
    let config = |n: u32| {
        fig.iter()
            .find(|f| f.0 == n)
            .map(|f| f.4.clone())
            .unwrap_or_default()
    };
    let mut claims = Vec::new();
    let differences = vec![DAVIDS_HOSTS.to_string()];
    let mut findings = Vec::new();
    // One published number of a trace, read within the tolerance.
    let figure = |n: u32, what: &str, p: f64, m: f64, unit: &str| {
        Cell::new(
            &[&format!("trace {n}"), what],
            q(p, unit),
            q(m, unit),
            format!("{m:.0} {unit}"),
            Rule::Within.verdict(p, m),
            || {
                Some(format!(
                    "{m:.0} {unit} against {p:.0}: outside the tolerance"
                ))
            },
        )
        .with_config(config(n))
    };
    // Traces 1 and 2: packets, ACKs, time to send and the delay over the
    // application's own writing time (490 ms; "about 9 ms").
    let burst = at.number("davids.burst_ms", 9.0);
    for (n, slug, part, text, write_ms, delay_pct) in [
        (
            1,
            "trace-1-nagle-10ms-writes",
            "trace 1 (Figure 1) and text",
            "Trace 1 (Nagle, a write every 10 ms, 200 ms delayed ACK): 5 data packets and 5 ACKs, \
             654 ms to send what took 490 ms to write, a delay of 33 %",
            490.0,
            33.0,
        ),
        (
            2,
            "trace-2-nagle-back-to-back",
            "trace 2 (Figure 2) and text",
            "Trace 2 (Nagle, the 50 writes in about 9 ms, 200 ms delayed ACK): 2 data packets and \
             2 ACKs, 201 ms to send, a delay of 2,133 %",
            burst,
            2133.0,
        ),
    ] {
        let Some((_, data, acks, span)) = get(n) else {
            continue;
        };
        let &(_, _, _, _, pub_pkts, pub_ms) = TRACES.iter().find(|x| x.0 == n).expect("trace");
        let pub_acks = DAVIDS_ACKS.iter().find(|a| a.0 == n).map_or(0.0, |a| a.1);
        let delay = (span - write_ms).max(0.0) / write_ms * 100.0;
        let cells = vec![
            figure(
                n,
                "data packets",
                f64::from(pub_pkts.unwrap_or(0)),
                f64::from(data),
                "packets",
            ),
            figure(n, "ACK packets", pub_acks, f64::from(acks), "packets"),
            figure(n, "time to send", pub_ms.unwrap_or(0.0), span, "ms"),
            figure(n, "delay", delay_pct, delay, "%"),
        ];
        claims.push(Claim::matrix(
            EXP,
            slug,
            part,
            text.into(),
            &["trace", "figure"],
            cells,
        ));
    }
    let off_cells: Vec<Cell> = [3, 4]
        .into_iter()
        .filter_map(get)
        .map(|(n, data, _, _)| figure(n, "data packets", 50.0, f64::from(data), "packets"))
        .collect();
    claims.push(Claim::matrix(
        EXP,
        "nagle-off-50-packets",
        "traces 3 and 4 (Figures 3 and 4)",
        "With Nagle off (traces 3 and 4) the 50 writes go as 50 data packets".into(),
        &["trace", "figure"],
        off_cells,
    ));
    if let (Some(t3), Some(t4)) = (get(3), get(4)) {
        claims.push(Claim::new(
            EXP,
            "trace-3-more-acks",
            "traces 3 and 4, text",
            format!(
                "Because trace 3 takes longer to send, there are more acknowledgment frames than \
                 in trace 4 (ours: {} against {})",
                t3.2, t4.2
            ),
            None,
            q(f64::from(t3.2), "ACK packets"),
            Verdict::from_holds(beats(f64::from(t3.2), f64::from(t4.2), true)),
            || {
                Some(format!(
                    "{} ACKs in trace 3 against {} in trace 4",
                    t3.2, t4.2
                ))
            },
        ));
    }
    if let (Some(t3), Some(t5)) = (get(3), get(5)) {
        let cells = vec![
            figure(3, "packets", 53.0, f64::from(t3.1 + t3.2), "packets"),
            figure(5, "packets", 21.0, f64::from(t5.1 + t5.2), "packets"),
            Cell::new(
                &["trace 5", "time to send against trace 3"],
                None,
                q(t5.3, "ms"),
                format!("{:.0} ms against trace 3's {:.0}", t5.3, t3.3),
                Verdict::from_holds(within_tolerance(t3.3, t5.3)),
                || {
                    Some(format!(
                        "{:.0} ms against trace 3's {:.0}: lengthened",
                        t5.3, t3.3
                    ))
                },
            ),
        ];
        claims.push(Claim::matrix(
            EXP,
            "naglim-30",
            "trace 5 (Figure 5) and \"Nagle for the Sys Admin\"",
            "Solaris' naglim 30 reduces the packets from 53 to 21 without lengthening the send"
                .into(),
            &["trace", "figure"],
            cells,
        ));
    }
    if let (Some(d), Some(t3)) = (find(done, &["naglim 1"]), get(3)) {
        let (data, _, span) = trace_figures(d);
        let cells = vec![
            Cell::new(
                &["data packets"],
                None,
                q(f64::from(data), "packets"),
                format!("{data} with naglim 1, {} with TCP_NODELAY (trace 3)", t3.1),
                Verdict::from_holds(within_tolerance(f64::from(t3.1), f64::from(data))),
                || Some(format!("{data} packets against trace 3's {}", t3.1)),
            ),
            Cell::new(
                &["time to send"],
                None,
                q(span, "ms"),
                format!(
                    "{span:.0} ms with naglim 1, {:.0} with TCP_NODELAY (trace 3)",
                    t3.3
                ),
                Verdict::from_holds(within_tolerance(t3.3, span)),
                || Some(format!("{span:.0} ms against trace 3's {:.0}", t3.3)),
            ),
        ];
        claims.push(Claim::matrix(
            EXP,
            "naglim-1-is-nodelay",
            "\"Nagle for the Sys Admin\"",
            "Changing tcp_naglim_def to 1 has the same effect as TCP_NODELAY: trace 1's writes with \
             naglim 1 against trace 3, within the tolerance"
                .into(),
            &["figure"],
            cells,
        ));
    }
    // Traces 6 and 7: "more ACK packets from the server, but the overhead is
    // certainly less than running without the Nagle algorithm", and a
    // shorter timer "speeds things up".
    let mut t67 = Vec::new();
    for (n, nagle, off) in [(6, 1, 3), (7, 2, 4)] {
        let (Some(a), Some(b), Some(c)) = (get(n), get(nagle), get(off)) else {
            continue;
        };
        let tn = format!("trace {n}");
        t67.push(Cell::new(
            &[&tn, &format!("more ACKs than trace {nagle}")],
            None,
            q(f64::from(a.2), "ACK packets"),
            format!("{} ACKs against {}", a.2, b.2),
            Verdict::from_holds(beats(f64::from(a.2), f64::from(b.2), true)),
            || Some(format!("{} ACKs against trace {nagle}'s {}", a.2, b.2)),
        ));
        let (oa, oc) = (overhead(a.1, a.2), overhead(c.1, c.2));
        t67.push(Cell::new(
            &[&tn, &format!("less overhead than trace {off} (Nagle off)")],
            None,
            q(oa, "% of 500 B"),
            format!("{oa:.0} % against {oc:.0} %"),
            Verdict::from_holds(beats(oa, oc, false)),
            || Some(format!("{oa:.0} % overhead against Nagle off's {oc:.0} %")),
        ));
        t67.push(Cell::new(
            &[&tn, &format!("faster than trace {nagle}")],
            None,
            q(a.3, "ms"),
            format!("{:.0} ms against {:.0}", a.3, b.3),
            Verdict::from_holds(beats(a.3, b.3, false)),
            || Some(format!("{:.0} ms against trace {nagle}'s {:.0}", a.3, b.3)),
        ));
    }
    claims.push(Claim::matrix(
        EXP,
        "delack-50ms-traces-6-7",
        "traces 6 and 7 (Figures 6 and 7), \"Delayed Acknowledgement\"",
        "With a 50 ms delayed ACK (traces 6 and 7) there are more ACK packets from the server, the \
         overhead is less than without Nagle, and the shorter timer speeds things up"
            .into(),
        &["trace", "comparison"],
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
            q(1.0, "data packets"),
            q(f64::from(data), "data packets"),
            Rule::Within.verdict(1.0, f64::from(data)),
            || Some(format!("{data} data packets for one 500-byte write")),
        ));
    }
    // "If a packet is dropped ... the application must wait for the TCP
    // retransmit timer. This will typically degrade performance much worse
    // than the delay imposed by using Nagle."
    if let (Some(d), Some(t1)) = (find(done, &["dropped"]), get(1)) {
        let (_, _, span) = trace_figures(d);
        let fired = d.result.client.timeouts;
        let (lost, nagle) = ((span - 490.0).max(0.0), (t1.3 - 490.0).max(0.0));
        claims.push(Claim::new(
            EXP,
            "dropped-packet-worse-than-nagle",
            "traces 3 and 4, text",
            format!(
                "With Nagle off, a dropped packet makes the application wait for the retransmit \
                 timer, which costs much more than Nagle's delay: trace 3 with one frame in ten \
                 lost sends {lost:.0} ms late ({fired} timeouts) against trace 1's {nagle:.0} ms"
            ),
            None,
            q(lost, "ms late"),
            if fired == 0 {
                Verdict::NotTestable
            } else {
                Verdict::from_holds(beats(lost, nagle, true))
            },
            || {
                Some(if fired == 0 {
                    "no retransmission timer fired in the lossy run at this point (fast \
                     retransmit repaired every loss, or none hit the data)"
                        .into()
                } else {
                    format!("{lost:.0} ms late with the drop against Nagle's {nagle:.0} ms")
                })
            },
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
                spread: Vec::new(),
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
                spread: Vec::new(),
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
                to back (in about 9 ms), over a 10 Mb/s Ethernet; the server replies only once \
                all 500 bytes are in. `ACK packets` counts the server's segments that \
                acknowledged new client data; overhead uses Davids' arithmetic (78 bytes per \
                data frame, 84 per ACK frame, over 500 bytes of data); the time to send runs \
                from the first data packet to the last. Both hosts take the solaris7 profile \
                (Davids names no machines: see the differences); Nagle on is the profile's own \
                send policy. The server's delayed-ACK timer is one-shot or a free-running tick \
                (an unknown), the tick's phase set by when the first write comes."
            .into(),
        tables: vec![t],
        charts: vec![chart],
        findings,
        differences,
        claims,
        ..shell(EXP)
    }
}
