//! The one delivery loop both worlds run: events pop from one queue ordered
//! by (time, insertion), and every connection end (an [`Endpoint`]) has its
//! engine timer, application wake-ups and servicing handled by the same
//! code. What the wires do (links, a bottleneck, demultiplexing) is the
//! world's part, behind [`Wires`]; the two-host world and the many-flow
//! world differ only there.

use crate::event::CalendarQueue;
use crate::metrics::RunEnd;
use crate::workload::{App, WriteStep};
use tinygram_proto::{Connection, Instant};

/// Something that happens at an instant, in either world.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// Endpoint `ep`'s engine timer; `deferred` once it has yielded to same-time arrivals.
    Timer { ep: u32, deferred: bool },
    /// Endpoint `ep`'s application wants to run (a timed write).
    App { ep: u32 },
    /// The packet reaches its destination host.
    Arrive { pkt: u32 },
    /// The packet at the head of link `link`'s in-flight FIFO arrives.
    LinkHead { link: u8 },
    /// Endpoint `ep`'s receive-coalescing interval ends: its batch reaches TCP.
    RxFlush { ep: u32 },
    /// Flow `flow`'s client opens its connection.
    Open { flow: u32 },
    /// The packet leaves its sender's access link and reaches the bottleneck queue.
    ToBottleneck { pkt: u32 },
    /// Bottleneck direction `dir` finished serializing a frame.
    BottleneckFree { dir: u8 },
    /// The run's SYN flood sends its `n`th SYN ([`crate::flood`]).
    Flood { n: u32 },
}

/// The event queue of a run.
#[cfg(not(test))]
pub(crate) type Queue = CalendarQueue<Ev>;

/// In unit tests the queue can be the plain heap, to check that both give
/// the same run byte for byte.
#[cfg(test)]
#[allow(clippy::large_enum_variant)] // a test-only choice
pub(crate) enum Queue {
    Calendar(CalendarQueue<Ev>),
    Heap(crate::event::EventQueue<Ev>),
}

#[cfg(test)]
impl Queue {
    pub(crate) fn new() -> Queue {
        Queue::Calendar(CalendarQueue::new())
    }
    pub(crate) fn push(&mut self, at: Instant, ev: Ev) {
        match self {
            Queue::Calendar(q) => q.push(at, ev),
            Queue::Heap(q) => q.push(at, ev),
        }
    }
    pub(crate) fn pop(&mut self) -> Option<(Instant, Ev)> {
        match self {
            Queue::Calendar(q) => q.pop(),
            Queue::Heap(q) => q.pop(),
        }
    }
    pub(crate) fn peek_time(&mut self) -> Option<Instant> {
        match self {
            Queue::Calendar(q) => q.peek_time(),
            Queue::Heap(q) => q.peek_time(),
        }
    }
    pub(crate) fn for_upcoming(&self, n: usize, f: impl FnMut(Instant, &Ev)) {
        match self {
            Queue::Calendar(q) => q.for_upcoming(n, f),
            Queue::Heap(q) => q.for_upcoming(n, f),
        }
    }
    /// Moves every scheduled event, in order, to a plain heap.
    pub(crate) fn switch_to_heap(&mut self) {
        let mut heap = crate::event::EventQueue::new();
        while let Some((at, ev)) = self.pop() {
            heap.push(at, ev);
        }
        *self = Queue::Heap(heap);
    }
}

/// One end of a connection: the engine and its application. `#[repr(C)]`:
/// the addressing, then what the application and the engine touch per event
/// (see [`Endpoint::prefetch_hot`]). Aligned to a cache line: a table of
/// them from the allocator (16-byte aligned) would otherwise split every
/// line of state across two.
#[repr(C, align(64))]
pub(crate) struct Endpoint {
    pub host: u32,
    pub peer: u32,
    pub flow: u32,
    /// The other end's endpoint, once both exist ([`NO_EP`] until then).
    pub peer_ep: u32,
    /// The connection's ports, as its flow assigned them.
    pub local_port: u16,
    pub remote_port: u16,
    /// The application has seen the connection established.
    pub established: bool,
    /// Opened by a SYN and counted in its listener's backlog until it
    /// leaves SYN-RECEIVED.
    pub half_open: bool,
    pub app: App,
    pub conn: Connection,
}

impl Endpoint {
    /// Hints the CPU to fetch the inline state an event touches.
    pub fn prefetch_hot(&self) {
        let app_end = std::mem::offset_of!(Endpoint, app) + App::hot_bytes().end;
        tinygram_proto::prefetch::prefetch_bytes((self as *const Endpoint).cast(), app_end);
        self.conn.prefetch_hot();
    }
}

/// No endpoint (yet).
pub(crate) const NO_EP: u32 = u32::MAX;

/// When an endpoint's queued wake-ups are due, kept apart from the endpoints
/// in one dense table: most queued events are stale by the time they are
/// popped, and checking that must not pull a cold connection into the cache.
#[derive(Clone, Copy, Default)]
pub(crate) struct Wake {
    /// The earliest timer event queued for the endpoint.
    pub timer_at: Option<Instant>,
    pub app_at: Option<Instant>,
    /// The engine's own next deadline as of the last time the simulator
    /// touched it (`poll_timeout`; only the simulator's calls change it): a
    /// queued timer event whose deadline was cancelled or moved later (an
    /// RTO stopped by the ACK) can be dropped or requeued from here, without
    /// fetching the connection.
    pub deadline: Option<Instant>,
}

impl Wake {
    /// A timer event popped at `at` will reach the connection.
    pub fn due(&self, at: Instant) -> bool {
        self.timer_at == Some(at) && self.deadline.is_some_and(|d| d <= at)
    }
}

/// What the loop owns in either world: the clock, the queue, the endpoints
/// and their wake-ups.
pub(crate) struct Core {
    pub now: Instant,
    /// The duration cap.
    pub end: Instant,
    pub queue: Queue,
    pub eps: Vec<Endpoint>,
    /// Each endpoint's wake-ups (same index as `eps`).
    pub wakes: Vec<Wake>,
    /// Events handled.
    pub events: u64,
    /// Timer events dropped or requeued from [`Wake::deadline`] alone.
    pub timers_not_due: u64,
}

impl Core {
    /// A run that starts at time zero and stops at `end`, with `queue` (which may hold events already).
    pub fn new(end: Instant, queue: Queue, endpoints: usize) -> Core {
        Core {
            now: Instant::ZERO,
            end,
            queue,
            eps: Vec::with_capacity(endpoints),
            wakes: Vec::with_capacity(endpoints),
            events: 0,
            timers_not_due: 0,
        }
    }

    /// Adds an endpoint; its index.
    pub fn add(&mut self, ep: Endpoint) -> u32 {
        self.eps.push(ep);
        self.wakes.push(Wake::default());
        (self.eps.len() - 1) as u32
    }
}

/// A world's wires: what the loop cannot do for it.
pub(crate) trait Wires {
    /// Timer events are checked against [`Wake::deadline`] before the
    /// engine is touched (the many-flow world, where connections are cold);
    /// otherwise a timer event that is not due still services its endpoint,
    /// as the two-host world always has (its results keep their event counts).
    fn stale_timers_from_table(&self) -> bool;
    fn core(&mut self) -> &mut Core;
    /// Sends everything endpoint `ep`'s engine has to send now.
    fn drain(&mut self, ep: u32);
    /// After `ep`'s application has acted and before its wake-ups are scheduled.
    fn serviced(&mut self, ep: u32);
    /// A network event (anything but `Timer` and `App`).
    fn network(&mut self, ev: Ev);
    /// Called for each event before it is handled (for prefetching).
    fn before_event(&self) {}
    /// Checked after each handled event: whether the run ends, and how.
    fn stop(&self) -> Option<RunEnd>;
}

/// Runs `w` until its queue empties, the duration cap, or [`Wires::stop`];
/// `progress` is called now and then with the simulated time.
pub(crate) fn run<W: Wires>(w: &mut W, progress: &mut dyn FnMut(Instant, Instant)) -> RunEnd {
    // An empty queue before the cap means nothing is left to happen.
    let mut end = RunEnd::Idle;
    while let Some((at, ev)) = w.core().queue.pop() {
        let c = w.core();
        if at > c.end {
            c.now = c.end;
            end = RunEnd::DurationCap;
            break;
        }
        c.now = at;
        c.events += 1;
        let events = c.events;
        w.before_event();
        if events & 0xffff == 0 {
            let c = w.core();
            progress(c.now, c.end);
        }
        match ev {
            Ev::Timer { ep, deferred } => {
                if !timer(w, ep, at, deferred) {
                    continue;
                }
            }
            Ev::App { ep } => {
                let wake = &mut w.core().wakes[ep as usize];
                if wake.app_at != Some(at) {
                    continue; // superseded
                }
                wake.app_at = None;
                service(w, ep);
            }
            ev => w.network(ev),
        }
        if let Some(e) = w.stop() {
            end = e;
            break;
        }
    }
    let c = w.core();
    progress(c.now, c.end);
    end
}

/// Endpoint `ep`'s timer event popped at `at`; false when it was stale or
/// yielded (nothing was handled).
fn timer<W: Wires>(w: &mut W, ep: u32, at: Instant, deferred: bool) -> bool {
    let from_table = w.stale_timers_from_table();
    let c = w.core();
    let wake = &mut c.wakes[ep as usize];
    if wake.timer_at != Some(at) {
        return false; // superseded
    }
    if from_table {
        match wake.deadline {
            // Cancelled since it was queued: nothing to do.
            None => {
                wake.timer_at = None;
                c.timers_not_due += 1;
                return false;
            }
            // Moved later: wait for the new deadline.
            Some(d) if d > at => {
                wake.timer_at = Some(d);
                c.timers_not_due += 1;
                c.queue.push(
                    d,
                    Ev::Timer {
                        ep,
                        deferred: false,
                    },
                );
                return false;
            }
            Some(_) => {}
        }
    }
    // Arrivals at the same instant go first: an ACK that lands exactly when
    // the RTO expires wins, as with any real clock tick.
    if !deferred && c.queue.peek_time() == Some(at) {
        c.queue.push(at, Ev::Timer { ep, deferred: true });
        return false;
    }
    c.wakes[ep as usize].timer_at = None;
    let conn = &mut c.eps[ep as usize].conn;
    let due = conn.poll_timeout().is_some_and(|t| t <= at);
    debug_assert!(
        due || !from_table,
        "endpoint {ep}: cached deadline is not the engine's"
    );
    if due {
        conn.handle_timeout(at);
    }
    service(w, ep);
    true
}

/// Lets endpoint `ep`'s application act, sends what its engine emits, and
/// schedules its next wake-ups.
pub(crate) fn service<W: Wires>(w: &mut W, ep: u32) {
    let i = ep as usize;
    let c = w.core();
    let now = c.now;
    let e = &mut c.eps[i];
    if !e.established && e.conn.state().synchronized() {
        e.established = true;
        e.app.on_established(now);
    }
    if e.established {
        e.app.read_all(&mut e.conn, now);
    }
    w.drain(ep);
    let mut wake = None;
    loop {
        let e = &mut w.core().eps[i];
        if !e.established {
            break;
        }
        match e.app.write_next(&mut e.conn, now) {
            WriteStep::Wrote => w.drain(ep),
            WriteStep::Wait(t) => {
                wake = Some(t);
                break;
            }
            WriteStep::Blocked | WriteStep::Idle => break,
        }
    }
    w.serviced(ep);
    let c = w.core();
    let timeout = c.eps[i].conn.poll_timeout();
    let wk = &mut c.wakes[i];
    wk.deadline = timeout;
    if wake != wk.app_at {
        wk.app_at = wake;
        if let Some(t) = wake {
            c.queue.push(t.max(now), Ev::App { ep });
        }
    }
    // Timer events are lazy: one is pushed only when the engine's deadline
    // moves earlier than the event already queued. A later deadline (the
    // RTO restarting on every ACK) is picked up when that event fires, so
    // the queue never fills with superseded timers.
    if let Some(t) = timeout {
        let t = t.max(now);
        if wk.timer_at.is_none_or(|queued| t < queued) {
            wk.timer_at = Some(t);
            c.queue.push(
                t,
                Ev::Timer {
                    ep,
                    deferred: false,
                },
            );
        }
    }
}
