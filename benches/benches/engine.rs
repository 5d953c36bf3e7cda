//! The engine alone: one data segment in, one ACK decision, one segment out,
//! with no simulator around it; and one data segment through the wire codec
//! (encode with checksum, then parse and verify), as pcap and TUN do.

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use tinygram_proto::wire::ChecksumCtx;
use tinygram_proto::{
    Config, Connection, Duration, Flags, Instant, IsnSeries, OptionSet, SeqNumber, TcpRepr,
};

/// Two connected engines, passing segments by hand. Window scaling is on, so
/// the 4 MiB buffers are offered in full rather than capped at 64 KiB (RFC 7323 2).
fn pair() -> (Connection, Connection, Instant) {
    let cfg = Config {
        rcv_buf: 4 << 20,
        snd_buf: 4 << 20,
        options: OptionSet {
            window_scale: true,
            ..OptionSet::default()
        },
        ..Config::default()
    };
    let mut now = Instant::ZERO;
    let mut a = Connection::connect(cfg.clone(), 1, 2, IsnSeries::new(SeqNumber(7)), now);
    let mut b = Connection::listen(cfg, 2, IsnSeries::new(SeqNumber(9)));
    let mut buf = Vec::new();
    for _ in 0..4 {
        while let Some(r) = a.poll_transmit(now, &mut buf) {
            b.handle_segment(now, &r, &buf);
        }
        while let Some(r) = b.poll_transmit(now, &mut buf) {
            a.handle_segment(now, &r, &buf);
        }
        now += Duration::from_micros(10);
    }
    (a, b, now)
}

fn engine(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    const SEGS: u64 = 1000;
    g.throughput(Throughput::Elements(SEGS));
    g.bench_function("bulk_1000_segments_through_two_engines", |bench| {
        let data = vec![0x5au8; 1448 * SEGS as usize];
        let mut sink = vec![0u8; 1 << 20];
        // Connection setup (4 MiB buffers) is excluded from the measurement.
        bench.iter_batched(
            pair,
            |(mut a, mut b, mut now)| {
                let mut buf = Vec::with_capacity(2048);
                let mut written = 0;
                let mut read = 0;
                let mut max_wnd = 0;
                while read < data.len() {
                    written += a.write(&data[written..], false).unwrap_or(0);
                    let mut moved = false;
                    while let Some(r) = a.poll_transmit(now, &mut buf) {
                        moved = true;
                        b.handle_segment(now, &r, &buf);
                        read += b.read(&mut sink);
                        while let Some(ack) = b.poll_transmit(now, &mut buf) {
                            a.handle_segment(now, &ack, &buf);
                        }
                        max_wnd = max_wnd.max(a.snd_wnd());
                    }
                    if !moved {
                        // Nothing to send: jump virtual time to the next timer.
                        let next = [a.poll_timeout(), b.poll_timeout()]
                            .into_iter()
                            .flatten()
                            .min()
                            .expect("an idle transfer always has a timer armed");
                        now = now.max(next);
                        a.handle_timeout(now);
                        b.handle_timeout(now);
                        while let Some(ack) = b.poll_transmit(now, &mut buf) {
                            a.handle_segment(now, &ack, &buf);
                        }
                    }
                }
                assert!(
                    max_wnd > 65_535,
                    "window scaling did not take: the peer offered at most {max_wnd} bytes"
                );
                read
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

/// One full-sized data segment encoded with its checksum, then parsed and verified.
fn wire(c: &mut Criterion) {
    let mut g = c.benchmark_group("wire");
    g.throughput(Throughput::Elements(1));
    let ctx = ChecksumCtx::V4 {
        src: [10, 0, 0, 1],
        dst: [10, 0, 0, 2],
    };
    let repr = TcpRepr {
        src_port: 40000,
        dst_port: 7,
        seq: SeqNumber(1),
        ack: SeqNumber(2),
        flags: Flags::ACK | Flags::PSH,
        window: 1000,
        ..TcpRepr::default()
    };
    let payload: Vec<u8> = (0..1448u32).map(|i| (i * 31) as u8).collect();
    let mut buf = vec![0u8; repr.buffer_len(payload.len())];
    g.bench_function("encode_and_parse_1448_byte_segment", |bench| {
        bench.iter(|| {
            repr.emit(&mut buf, black_box(&payload), Some(ctx))
                .expect("encodable");
            let (r, body) = TcpRepr::parse(black_box(&buf), Some(ctx)).expect("valid");
            (r.seq, body.len())
        })
    });
    g.finish();
}

criterion_group!(benches, engine, wire);
criterion_main!(benches);
