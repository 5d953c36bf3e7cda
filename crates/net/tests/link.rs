//! `tun link` against what it was asked (root; skipped with the reason
//! otherwise, required when TINYGRAM_REAL_WIRE=require): the round trip
//! through a 10 ms link, the rate of a bulk transfer through a 10 Mbit/s
//! one, seeded loss, and the kernel's Nagle x delayed ACK stall on
//! Cheshire's pattern across a 10 ms link, gone with TCP_NODELAY.
//!
//! Tolerances were measured on a shared 2-core machine under load (see
//! docs/real-network.md); every bound is a property of the link the test
//! set, never of tinygram's own speed.

mod common;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tinygram_net::kernel_apps::{run_exchanges, Pattern, RunSpec, SideOptions, Tcpdump};
use tinygram_net::link::{Dir, LinkEnds, LinkOptions, LinkReport, LinkRun, LinkSetup, Shaper};
use tinygram_net::netns::Netns;
use tinygram_sim::link::{DropReason, Fate, Framing, LinkConfig};

const LEFT: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
const RIGHT: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);

fn config(rate_bps: f64, delay: Duration, loss: f64) -> LinkConfig {
    LinkConfig {
        rate_bps,
        delay,
        loss,
        framing: Framing::Ethernet,
        ..LinkConfig::default()
    }
}

/// Two fresh namespaces joined by a link of `configs`, forwarding.
fn link(configs: [LinkConfig; 2], seed: u64) -> LinkRun {
    let ends = LinkEnds::open(LinkSetup {
        left: Netns::new("kl").expect("left namespace"),
        right: Netns::new("kr").expect("right namespace"),
        left_addr: LEFT,
        prefix: 24,
        mtu: 1500,
    })
    .expect("open the link's devices");
    LinkRun::start(
        ends,
        LinkOptions {
            configs,
            seed,
            duration: Some(Duration::from_secs(120)),
            stop: Arc::new(AtomicBool::new(false)),
            realtime: true,
        },
    )
}

macro_rules! require_link {
    ($name:expr) => {
        if let Some(why) = tinygram_net::netns::unavailable() {
            common::skip($name, &why);
            return;
        }
    };
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// A UDP echo on the right side; the left side's round trips for `n` probes
/// of `size` bytes, `gap` apart.
fn udp_rtts(l: &LinkRun, n: usize, size: usize, gap: Duration) -> Vec<f64> {
    let echo = l
        .ends
        .right
        .ns
        .run(|| UdpSocket::bind((RIGHT, 7000)))
        .unwrap()
        .expect("bind the echo");
    echo.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let echo_thread = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while let Ok((k, from)) = echo.recv_from(&mut buf) {
            if echo.send_to(&buf[..k], from).is_err() {
                break;
            }
        }
    });
    let probe = l
        .ends
        .left
        .ns
        .run(|| UdpSocket::bind((LEFT, 0)))
        .unwrap()
        .expect("bind the probe");
    probe
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut rtts = Vec::new();
    let mut buf = vec![0u8; 2048];
    for i in 0..n as u32 {
        let mut msg = vec![0u8; size];
        msg[..4].copy_from_slice(&i.to_be_bytes());
        let t = Instant::now();
        probe.send_to(&msg, (RIGHT, 7000)).unwrap();
        loop {
            let (k, _) = probe.recv_from(&mut buf).expect("an echo within 2 s");
            if k == size && buf[..4] == i.to_be_bytes() {
                break;
            }
        }
        rtts.push(ms(t.elapsed()));
        std::thread::sleep(gap);
    }
    drop(probe);
    let _ = echo_thread.join();
    rtts
}

/// Ping through `--delay 10ms` both ways (no rate limit): every round trip
/// is at least the 20 ms asked (the link never delivers early), and the
/// median is within 1 ms above it.
#[test]
fn round_trip_is_twice_the_one_way_delay() {
    require_link!("round_trip_is_twice_the_one_way_delay");
    let _one = common::serial();
    let d = Duration::from_millis(10);
    let l = link([config(0.0, d, 0.0), config(0.0, d, 0.0)], 1);
    let rtts = sorted(udp_rtts(&l, 100, 64, Duration::from_millis(10)));
    let r = l.stop().unwrap();
    let (min, med, p90, max) = (rtts[0], rtts[50], rtts[90], rtts[99]);
    common::say(&format!(
        "\nlink accuracy, ping through 10 ms each way: RTT min {min:.3} ms, median {med:.3} ms, \
         p90 {p90:.3} ms, max {max:.3} ms; delivery lateness mean {:.0} us, max {} us",
        r.dirs[0].lateness.mean_us(),
        r.dirs[0].lateness.max_ns.max(r.dirs[1].lateness.max_ns) / 1000
    ));
    assert!(
        min >= 20.0,
        "a round trip of {min:.3} ms beat the 20 ms asked"
    );
    assert!(med <= 21.0, "median round trip {med:.3} ms, asked 20 ms");
    assert_eq!(r.dirs[0].delivered, 100);
    assert_eq!(r.dirs[1].delivered, 100);
}

/// Bytes a kernel client sends through the link to a kernel server, timed
/// by the server from the first byte; the rate after the first `skip`
/// bytes (slow start), in bit/s of TCP payload.
fn bulk_rate(l: &LinkRun, bytes: usize, skip: usize) -> f64 {
    let listener = l
        .ends
        .right
        .ns
        .run(|| TcpListener::bind((RIGHT, 9000)))
        .unwrap()
        .expect("bind the sink");
    let sink = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut buf = vec![0u8; 65536];
        let (mut got, mut t0) = (0usize, None);
        loop {
            let k = s.read(&mut buf).expect("sink read");
            if k == 0 {
                break;
            }
            got += k;
            if t0.is_none() && got >= skip {
                t0 = Some((Instant::now(), got));
            }
        }
        let (t0, at) = t0.expect("enough bytes");
        (got, (got - at) as f64 * 8.0 / t0.elapsed().as_secs_f64())
    });
    let to = SocketAddrV4::new(RIGHT, 9000);
    l.ends
        .left
        .ns
        .run(move || {
            let mut s = TcpStream::connect(to).expect("connect");
            s.write_all(&vec![7u8; bytes]).expect("write");
        })
        .unwrap();
    let (got, rate) = sink.join().unwrap();
    assert_eq!(got, bytes);
    rate
}

/// A bulk transfer through `--rate 10Mbps` (5 ms each way, the default
/// queue, Ethernet framing) moves TCP payload at the rate the model's
/// framing leaves: 1448 of every 1538 wire bytes (timestamps on) =
/// 9.415 Mbit/s, within 3 %.
#[test]
fn bulk_transfer_reaches_the_rate() {
    require_link!("bulk_transfer_reaches_the_rate");
    let _one = common::serial();
    let d = Duration::from_millis(5);
    let l = link([config(10e6, d, 0.0), config(10e6, d, 0.0)], 1);
    let rate = bulk_rate(&l, 3_000_000, 500_000);
    let r = l.stop().unwrap();
    let expected = 10e6 * 1448.0 / 1538.0;
    common::say(&format!(
        "\nlink accuracy, bulk through 10 Mbit/s: {:.3} Mbit/s of payload ({:+.2} % of the {:.3} \
         the framing leaves); {} queue drops; lateness mean {:.0} us, max {} us",
        rate / 1e6,
        (rate / expected - 1.0) * 100.0,
        expected / 1e6,
        r.dirs[0].link.dropped_queue,
        r.dirs[0].lateness.mean_us(),
        r.dirs[0].lateness.max_ns / 1000
    ));
    assert!(
        (rate / expected - 1.0).abs() <= 0.03,
        "{:.3} Mbit/s of payload, expected {:.3}",
        rate / 1e6,
        expected / 1e6
    );
}

/// `--loss 0.1` left to right drops the packets the direction's seeded
/// stream says, exactly (the same shaper offline, offered the same count),
/// and that is about a tenth; the other direction loses nothing.
#[test]
fn seeded_loss_drops_the_fraction_asked() {
    require_link!("seeded_loss_drops_the_fraction_asked");
    let _one = common::serial();
    let (n, p, seed) = (2000usize, 0.1, 42);
    let cfgs = [
        config(0.0, Duration::from_millis(1), p),
        config(0.0, Duration::from_millis(1), 0.0),
    ];
    let l = link(cfgs.clone(), seed);
    let sink = l
        .ends
        .right
        .ns
        .run(|| UdpSocket::bind((RIGHT, 7001)))
        .unwrap()
        .unwrap();
    sink.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let counter = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut got = 0;
        while sink.recv_from(&mut buf).is_ok() {
            got += 1;
        }
        got
    });
    l.ends
        .left
        .ns
        .run(|| {
            let s = UdpSocket::bind((LEFT, 0)).unwrap();
            for _ in 0..n {
                s.send_to(&[1u8; 100], (RIGHT, 7001)).unwrap();
                std::thread::sleep(Duration::from_micros(200));
            }
        })
        .unwrap();
    let got: usize = counter.join().unwrap();
    let r: LinkReport = l.stop().unwrap();
    let mut offline = Shaper::new(cfgs, seed);
    let expected_lost = (0..n)
        .filter(|_| {
            let mut pkt = vec![0u8; 128];
            pkt[0] = 0x45;
            matches!(
                offline.offer(
                    Dir::LeftToRight,
                    tinygram_proto::Instant::from_millis(1),
                    &pkt
                ),
                Some(Fate::Dropped(DropReason::Loss))
            )
        })
        .count();
    common::say(&format!(
        "\nlink accuracy, loss 0.1 seeded {seed}: {} of {n} dropped ({:.3}), {} expected from the stream",
        n - got,
        (n - got) as f64 / n as f64,
        expected_lost
    ));
    assert_eq!(r.dirs[0].link.frames, n as u64, "only the probes crossed");
    assert_eq!(r.dirs[0].link.dropped_loss, expected_lost as u64);
    assert_eq!(n - got, expected_lost, "delivered {got} of {n}");
    // Binomial(2000, 0.1): sd 13.4; 5 sd either side.
    assert!((133..=267).contains(&expected_lost), "{expected_lost}");
    assert_eq!(r.dirs[1].link.dropped_loss, 0);
}

/// Cheshire's pattern (2,000 + 1,000 bytes, 100-byte answer) across 10 ms
/// each way. Linux's Nagle (Minshall's variant) sends the 2,000-byte write
/// as 1448 + a 552-byte runt, then holds the 1,000 bytes while the runt is
/// unacknowledged: the server's ACK for the runt (delayed or not) must come
/// back first, so an exchange takes two round trips or more. With
/// TCP_NODELAY on the client all 3,000 bytes leave at once: one round trip.
#[test]
fn cheshire_stalls_with_nagle_and_nodelay_removes_it() {
    require_link!("cheshire_stalls_with_nagle_and_nodelay_removes_it");
    if !std::process::Command::new("tcpdump")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        common::skip(
            "cheshire_stalls_with_nagle_and_nodelay_removes_it",
            "tcpdump is not installed (apt package tcpdump)",
        );
        return;
    }
    let _one = common::serial();
    let d = Duration::from_millis(10);
    let mut medians = Vec::new();
    let dir = tempdir();
    for (label, client) in [
        ("nagle", SideOptions::default()),
        (
            "nodelay",
            SideOptions {
                nodelay: true,
                quickack: false,
            },
        ),
    ] {
        let l = link([config(0.0, d, 0.0), config(0.0, d, 0.0)], 1);
        let pcap = dir.join(format!("cheshire-{label}.pcap"));
        let cap = Tcpdump::start(&l.ends.left.ns, "tgl0", &pcap).expect("tcpdump");
        let mut spec = RunSpec::new(Pattern::cheshire(), 20);
        spec.client = client;
        let ex =
            run_exchanges(&l.ends.left.ns, &l.ends.right.ns, RIGHT, &spec).expect("the exchanges");
        let counts = cap
            .stop(Duration::from_millis(50))
            .expect("tcpdump's counts");
        l.stop().unwrap();
        let times = sorted(ex.completions.iter().map(|&t| ms(t)).collect());
        common::say(&format!(
            "\ncheshire over 10 ms each way, client {label}: completion min {:.1} ms, median {:.1} ms, \
             max {:.1} ms; client data segments {}, server {}; {} packets captured",
            times[0], times[10], times[19], ex.client_data_segs, ex.server_data_segs, counts.captured
        ));
        assert!(counts.captured > 0 && pcap.metadata().unwrap().len() > 24);
        medians.push(times[10]);
    }
    let (nagle, nodelay) = (medians[0], medians[1]);
    assert!(
        (20.0..24.0).contains(&nodelay),
        "with TCP_NODELAY an exchange should take one round trip (20 ms), took {nodelay:.1} ms"
    );
    assert!(
        nagle >= 40.0,
        "with Nagle an exchange should take two round trips or more, took {nagle:.1} ms"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tg-link-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every pattern of the harness completes across 5 ms each way, with and
/// without TCP_NODELAY and per-read TCP_QUICKACK; no exchange beats one
/// round trip plus the server's think time (the link never delivers early,
/// and the client's clock covers the whole exchange).
#[test]
fn every_pattern_completes_across_the_link() {
    require_link!("every_pattern_completes_across_the_link");
    let _one = common::serial();
    let d = Duration::from_millis(5);
    let l = link([config(0.0, d, 0.0), config(0.0, d, 0.0)], 1);
    let plain = SideOptions::default();
    let nodelay = SideOptions {
        nodelay: true,
        quickack: false,
    };
    let quickack = SideOptions {
        nodelay: false,
        quickack: true,
    };
    let mut port = 8100;
    for pattern in [
        Pattern::cheshire(),
        Pattern::doupnik_web(),
        Pattern::rpc(),
        Pattern::ping_pong(),
    ] {
        for (label, client, server) in [
            ("defaults", plain, plain),
            ("nodelay both", nodelay, nodelay),
            ("quickack server", plain, quickack),
            ("quickack both", quickack, quickack),
        ] {
            let mut spec = RunSpec::new(pattern.clone(), 10);
            (spec.client, spec.server, spec.port) = (client, server, port);
            port += 1;
            let ex = run_exchanges(&l.ends.left.ns, &l.ends.right.ns, RIGHT, &spec)
                .unwrap_or_else(|e| panic!("{} {label}: {e}", pattern.name));
            let times = sorted(ex.completions.iter().map(|&t| ms(t)).collect());
            common::say(&format!(
                "\n{} over 5 ms each way, {label}: completion min {:.1} ms, median {:.1} ms, max {:.1} ms",
                pattern.name,
                times[0],
                times[5],
                times[9]
            ));
            let floor = 10.0 + ms(pattern.think);
            assert_eq!(times.len(), 10);
            assert!(
                times[0] >= floor,
                "{} {label}: an exchange took {:.2} ms, under the {floor} ms floor",
                pattern.name,
                times[0]
            );
        }
    }
    l.stop().unwrap();
}
