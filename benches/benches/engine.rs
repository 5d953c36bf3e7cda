//! The engine alone: one data segment in, one ACK decision, one segment out,
//! with no simulator around it.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use tinygram_proto::{Config, Connection, Duration, Instant, IsnSeries, SeqNumber};

/// Two connected engines, passing segments by hand.
fn pair() -> (Connection, Connection, Instant) {
    let cfg = Config {
        rcv_buf: 4 << 20,
        snd_buf: 4 << 20,
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
                read
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
