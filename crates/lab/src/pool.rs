//! Runs independent simulations on a few threads; results come back in
//! item order whatever the thread count, so output never depends on it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

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

/// How far past the next item to emit a thread may start one: the most
/// finished items waiting for a slow earlier one, per thread.
const AHEAD_PER_THREAD: usize = 16;

/// Items finished out of order, waiting for the ones before them.
struct Reorder<T> {
    /// The next index to hand to `emit`.
    next: usize,
    ready: BTreeMap<usize, T>,
}

/// `f(0..n)` on `threads` threads, each result handed to `emit` on the
/// calling thread as soon as every earlier one has been: item i is emitted
/// once items 0..i are, so the order never depends on the threads, and no
/// thread starts an item more than `16 x threads` past the next to emit,
/// so at most that many results wait in memory whatever `n` is. The first
/// error of `emit` stops the work and is returned.
pub fn for_each_in_order<T: Send, E>(
    n: usize,
    threads: usize,
    f: &(dyn Fn(usize) -> T + Sync),
    emit: &mut dyn FnMut(usize, T) -> Result<(), E>,
) -> Result<(), E> {
    let threads = threads.clamp(1, n.max(1));
    let window = AHEAD_PER_THREAD * threads;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let state = Mutex::new(Reorder {
        next: 0,
        ready: BTreeMap::new(),
    });
    let changed = Condvar::new();
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let mut st = lock();
                while i >= st.next + window && !stop.load(Ordering::Relaxed) {
                    st = changed.wait(st).unwrap_or_else(|p| p.into_inner());
                }
                drop(st);
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let v = f(i);
                lock().ready.insert(i, v);
                changed.notify_all();
            });
        }
        let mut result = Ok(());
        let mut st = lock();
        while st.next < n {
            let i = st.next;
            let Some(v) = st.ready.remove(&i) else {
                st = changed.wait(st).unwrap_or_else(|p| p.into_inner());
                continue;
            };
            drop(st);
            if let Err(e) = emit(i, v) {
                result = Err(e);
                stop.store(true, Ordering::Relaxed);
                changed.notify_all();
                break;
            }
            st = lock();
            st.next += 1;
            changed.notify_all();
        }
        result
    })
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

    #[test]
    fn items_are_emitted_in_order_with_a_bounded_backlog() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let started = AtomicUsize::new(0);
        let emitted = AtomicUsize::new(0);
        let most_ahead = AtomicUsize::new(0);
        // Item 0 is slow: the others finish first and must wait for it,
        // but no more than the window may start before it is emitted.
        let f = |i: usize| {
            started.fetch_add(1, Ordering::SeqCst);
            let ahead = started.load(Ordering::SeqCst) - emitted.load(Ordering::SeqCst);
            most_ahead.fetch_max(ahead, Ordering::SeqCst);
            if i == 0 {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            i * 3
        };
        let mut seen = Vec::new();
        super::for_each_in_order::<usize, ()>(500, 3, &f, &mut |i, v| {
            emitted.fetch_add(1, Ordering::SeqCst);
            seen.push((i, v));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, (0..500).map(|i| (i, i * 3)).collect::<Vec<_>>());
        let ahead = most_ahead.load(Ordering::SeqCst);
        assert!(
            ahead <= 16 * 3 + 3,
            "{ahead} items started ahead of the writer"
        );
        // The first error stops the work and comes back.
        let mut n = 0;
        let e = super::for_each_in_order(1000, 2, &|i| i, &mut |i, _| {
            n += 1;
            if i == 10 {
                Err(format!("row {i}"))
            } else {
                Ok(())
            }
        });
        assert_eq!(e, Err("row 10".to_string()));
        assert_eq!(n, 11);
        assert!(super::for_each_in_order::<usize, ()>(0, 4, &|i| i, &mut |_, _| Ok(())).is_ok());
    }
}
