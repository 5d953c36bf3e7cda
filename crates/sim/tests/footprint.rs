//! The memory estimate that refuses oversized runs, checked against what
//! runs really allocate: a counting allocator measures each run's peak heap,
//! which must stay under the estimate, and the estimate within a small
//! factor of it (an estimate far above the peak would refuse runs that fit).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use tinygram_sim::footprint::estimate;
use tinygram_sim::Scenario;

/// The system allocator, counting bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(p, layout)
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new);
        if !q.is_null() {
            if new >= layout.size() {
                let now =
                    LIVE.fetch_add(new - layout.size(), Ordering::Relaxed) + new - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Peak heap above what was live before, while `f` runs.
fn peak_of(f: impl FnOnce()) -> usize {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed) - base
}

const DUMBBELL: &str = "duration = \"3s\"\n[bottleneck]\nrate = \"1Gbps\"\ndelay = \"1ms\"\n";

// One test, so that no other test's allocations run alongside the measurement.
#[test]
fn the_estimate_bounds_the_peak_within_a_small_factor() {
    let cases: Vec<(&str, String)> = vec![
        (
            "2,000 request-response flows",
            format!("{DUMBBELL}[workload]\nrequests = 10\nthink = \"1s\"\n[[flows]]\ncount = 2000\nclient_hosts = [\"a\", \"b\"]\nspread = \"uniform\"\ninterval = \"500us\"\n"),
        ),
        (
            "20,000 request-response flows",
            format!("{DUMBBELL}[workload]\nrequests = 2\nthink = \"1s\"\n[[flows]]\ncount = 20000\nclient_hosts = [\"a\", \"b\"]\nspread = \"uniform\"\ninterval = \"50us\"\n"),
        ),
        (
            "200 bulk flows of 1 MB",
            format!("{DUMBBELL}[workload]\ntype = \"bulk\"\nbytes = \"1MB\"\n[[flows]]\ncount = 200\n"),
        ),
        (
            "two hosts, 100,000 requests outstanding",
            "duration = \"200ms\"\n[workload]\noutstanding = 100000\nrequests = 100000\n".to_string(),
        ),
        (
            "two hosts, bulk 20 MB with 4 MB buffers",
            "duration = \"2s\"\n[workload]\ntype = \"bulk\"\nbytes = \"20MB\"\n[client]\nsnd_buf = \"4MB\"\n[server]\nrcv_buf = \"4MB\"\noptions = [\"wscale\"]\n".to_string(),
        ),
    ];
    for (what, text) in cases {
        let sc = Scenario::from_str(&text, "s.toml", &[]).unwrap();
        let est = estimate(&sc).total() as usize;
        let peak = peak_of(|| {
            if sc.topology.is_some() {
                drop(tinygram_sim::flows::run(&sc));
            } else {
                drop(tinygram_sim::run(&sc));
            }
        });
        eprintln!(
            "{what}: peak {peak} bytes, estimate {est} ({:.2}x)",
            est as f64 / peak as f64
        );
        assert!(peak <= est, "{what}: peak {peak} above the estimate {est}");
        assert!(
            est <= 4 * peak,
            "{what}: estimate {est} over 4x the peak {peak}"
        );
    }
}
