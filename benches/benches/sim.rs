//! Simulator throughput: a bulk transfer over a fast, long link, as
//! `tinygram bench sim` measures, at a size criterion can repeat.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tinygram_sim::scenario::Scenario;

const BULK: &str = r#"
name = "bench"
duration = "600s"
[link]
rate = "10Gbps"
delay = "1ms"
queue = "64MiB"
[client]
mss = 1448
rcv_buf = "4MiB"
snd_buf = "4MiB"
options = ["wscale"]
[server]
mss = 1448
rcv_buf = "4MiB"
snd_buf = "4MiB"
options = ["wscale"]
[workload]
type = "bulk"
bytes = "50MB"
write_size = "64KiB"
"#;

const CHESHIRE: &str = r#"
name = "cheshire"
duration = "60s"
[client]
mss = 1448
[server]
mss = 1448
[workload]
request = [100000]
response = [1]
requests = 20
"#;

fn sim(c: &mut Criterion) {
    let bulk = Scenario::from_str(BULK, "<bench>", &[]).expect("valid");
    // 50 MB / 1448 B per segment.
    let mut g = c.benchmark_group("sim");
    g.sample_size(10);
    g.throughput(Throughput::Elements(50_000_000 / 1448));
    g.bench_function("bulk_50MB_10Gbps_data_segments", |b| {
        b.iter(|| {
            let r = tinygram_sim::run(&bulk);
            assert!(r.finished && r.integrity_ok);
            r.client.data_segments
        })
    });
    let ches = Scenario::from_str(CHESHIRE, "<bench>", &[]).expect("valid");
    g.throughput(Throughput::Elements(20));
    g.bench_function("cheshire_20_requests", |b| {
        b.iter(|| tinygram_sim::run(&ches).transactions)
    });
    g.finish();
}

criterion_group!(benches, sim);
criterion_main!(benches);
