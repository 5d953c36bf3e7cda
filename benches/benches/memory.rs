//! What an event costs in memory alone at 100,000 flows, on this machine:
//! events visit 200,000 slots of 4 KiB (one per endpoint of the 100,000-flow
//! run: 781 MiB, near that run's 941 MiB peak) in a random order and each
//! reads and writes `lines` cache lines of its slot, the lines of the event
//! after next prefetched as the simulator does. Time per event over `lines` is what one more line of
//! per-event state costs once connections no longer fit in the caches; the
//! README's 100,000-flow section compares it with `bench sim --flows`.
//! `TINYGRAM_MEMORY_SLOTS=20000` sizes it for 10,000 flows instead (1 to
//! 2,000,000 slots).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tinygram_proto::prefetch::prefetch_bytes;

/// Two endpoints per flow at 100,000 flows.
const SLOTS: usize = 200_000;
/// The most slots `TINYGRAM_MEMORY_SLOTS` may ask for (8 GiB).
const MAX_SLOTS: usize = 2_000_000;
const SLOT: usize = 4096;
const LINE: usize = 64;
/// Events per timed batch; each batch walks a fresh stretch of the order.
const EVENTS: usize = 1 << 16;
/// How many events ahead the lines are prefetched (the simulator's distance).
const AHEAD: usize = 2;

/// xorshift64: a fixed visiting order, the same every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// `TINYGRAM_MEMORY_SLOTS`, else [`SLOTS`].
fn slots() -> usize {
    let Ok(v) = std::env::var("TINYGRAM_MEMORY_SLOTS") else {
        return SLOTS;
    };
    match v.parse::<usize>() {
        Ok(n) if (1..=MAX_SLOTS).contains(&n) => n,
        _ => {
            eprintln!("error: TINYGRAM_MEMORY_SLOTS={v:?}: expected a count from 1 to {MAX_SLOTS}");
            std::process::exit(2);
        }
    }
}

fn memory(c: &mut Criterion) {
    let slots = slots();
    let mut mem = vec![1u64; slots * SLOT / 8];
    let mut state = 0x9e37_79b9_7f4a_7c15;
    let order: Vec<usize> = (0..1 << 22)
        .map(|_| (next(&mut state) % slots as u64) as usize * SLOT / 8)
        .collect();
    let mut g = c.benchmark_group("memory");
    g.sample_size(20);
    for lines in [1usize, 8, 16, 32] {
        // Events per second; ns per event is 1e9 over that.
        g.throughput(Throughput::Elements(EVENTS as u64));
        let mut at = 0usize;
        let name = format!(
            "{lines} line{} per event",
            if lines == 1 { "" } else { "s" }
        );
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut acc = 0u64;
                for _ in 0..EVENTS {
                    let ahead = order[(at + AHEAD) % order.len()];
                    prefetch_bytes(mem[ahead..].as_ptr().cast(), lines * LINE);
                    let slot = order[at % order.len()];
                    for l in 0..lines {
                        let w = slot + l * LINE / 8;
                        acc = acc.wrapping_add(mem[w]);
                        mem[w] = acc;
                    }
                    at += 1;
                }
                black_box(acc)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, memory);
criterion_main!(benches);
