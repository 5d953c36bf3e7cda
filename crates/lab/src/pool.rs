//! Runs independent simulations on a few threads; results come back in
//! item order whatever the thread count, so output never depends on it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f(0..n)` on `threads` threads, in index order; `done()` after each item.
pub fn map<T: Send>(
    n: usize,
    threads: usize,
    f: &(dyn Fn(usize) -> T + Sync),
    done: &(dyn Fn() + Sync),
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let v = f(i);
                *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(v);
                done();
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .expect("every item ran")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn order_does_not_depend_on_threads() {
        let f = |i: usize| i * i;
        let one = super::map(50, 1, &f, &|| {});
        let four = super::map(50, 4, &f, &|| {});
        assert_eq!(one, four);
        assert_eq!(one[7], 49);
        assert!(super::map(0, 3, &f, &|| {}).is_empty());
    }
}
