//! End-to-end runs on RFC 1106's satellite link (appendix: 1.544 Mb/s, 580 ms
//! round trip), from `examples/satellite.toml`. Qualitative results only:
//! which option set beats which, over the same explicit seeds.

use tinygram_sim::metrics::RunResult;
use tinygram_sim::scenario::Scenario;

const SATELLITE: &str = include_str!("../../../examples/satellite.toml");
/// Bottleneck payload rate: 1.544 Mb/s, 1500-byte frames carrying 1460 bytes.
const LINK_PAYLOAD_BPS: f64 = 1.544e6 / 8.0 * 1460.0 / 1500.0;
const RTT_S: f64 = 0.58;

fn run(overrides: &[String]) -> RunResult {
    let sc = Scenario::from_str(SATELLITE, "satellite", overrides)
        .unwrap_or_else(|e| panic!("{overrides:?}: {e}"));
    let r = tinygram_sim::run(&sc);
    assert!(r.integrity_ok, "{overrides:?}: integrity");
    assert!(r.finished, "{overrides:?}: did not finish");
    r
}

fn set(options: &str, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        format!("client.options={options}"),
        format!("server.options={options}"),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// Median goodput over `seeds` for one option set.
fn median_goodput(options: &str, extra: &[&str], seeds: std::ops::RangeInclusive<u64>) -> f64 {
    let mut g: Vec<f64> = seeds
        .map(|seed| {
            let mut o = set(options, extra);
            o.push(format!("seed={seed}"));
            run(&o).goodput_bytes_per_s
        })
        .collect();
    g.sort_by(f64::total_cmp);
    g[g.len() / 2]
}

#[test]
fn a_64k_window_is_window_limited_and_big_or_scaled_windows_fill_the_link() {
    let small = run(&set("[]", &[]));
    let per_rtt = 65_535.0 / RTT_S;
    let g = small.goodput_bytes_per_s;
    assert!(
        g < 1.05 * per_rtt && g > 0.75 * per_rtt,
        "64 KiB window: {g:.0} B/s, expected near {per_rtt:.0} (64 KiB per RTT)"
    );
    assert_eq!(small.server.rcv_buf, 156 * 1024);
    for opts in [r#"["bigwin"]"#, r#"["wscale"]"#] {
        let r = run(&set(opts, &[]));
        let g = r.goodput_bytes_per_s;
        assert!(
            g > 0.8 * LINK_PAYLOAD_BPS && g > 1.4 * small.goodput_bytes_per_s,
            "{opts}: {g:.0} B/s does not fill the link ({LINK_PAYLOAD_BPS:.0})"
        );
        let name = if opts.contains("bigwin") {
            "bigwin"
        } else {
            "wscale"
        };
        assert!(
            r.client.options.contains(&name),
            "{opts}: {:?}",
            r.client.options
        );
    }
}

#[test]
fn host_memory_caps_the_big_window() {
    // RFC 1106 5: the receiving host has 64 KiB for buffers; the engine offers no more.
    let r = run(&set(r#"["bigwin"]"#, &[r#"server.memory="64KiB""#]));
    assert_eq!(r.server.rcv_buf, 64 * 1024);
    let full = run(&set(r#"["bigwin"]"#, &[]));
    assert!(r.goodput_bytes_per_s < 0.75 * full.goodput_bytes_per_s);
}

/// RFC 1106 appendix: BER 1e-6, where NAKs repair losses without waiting for
/// duplicate ACKs or the RTO. All three treat loss as noise (as the RFC's NAK
/// experiment did, 4.2), so the comparison is of repair alone.
#[test]
fn at_ber_1e6_nak_and_sack_beat_newreno() {
    let noisy = ["link.ber=1e-6", r#"client.loss_is="noise""#];
    let seeds = 1..=7;
    let newreno = median_goodput(r#"["wscale"]"#, &noisy, seeds.clone());
    let sack = median_goodput(r#"["wscale","sack"]"#, &noisy, seeds.clone());
    let nak = median_goodput(r#"["bigwin","nak"]"#, &noisy, seeds);
    assert!(sack > newreno, "SACK {sack:.0} vs NewReno {newreno:.0} B/s");
    assert!(nak > newreno, "NAK {nak:.0} vs NewReno {newreno:.0} B/s");
}

/// RFC 1106 4.2: on a noisy link, not shrinking cwnd for repaired losses wins.
#[test]
fn at_ber_1e6_loss_as_noise_beats_loss_as_congestion() {
    let seeds = 1..=5;
    for opts in [r#"["wscale"]"#, r#"["bigwin","nak"]"#] {
        let congestion = median_goodput(opts, &["link.ber=1e-6"], seeds.clone());
        let noise = median_goodput(
            opts,
            &["link.ber=1e-6", r#"client.loss_is="noise""#],
            seeds.clone(),
        );
        assert!(
            noise > 1.5 * congestion,
            "{opts}: noise {noise:.0} vs congestion {congestion:.0} B/s"
        );
    }
}
