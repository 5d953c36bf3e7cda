//! Virtual time: the engine never reads a clock; callers pass an [`Instant`].

use core::fmt;
use core::num::NonZeroU64;
use core::ops::{Add, AddAssign, Sub};
pub use core::time::Duration;

/// A point in time, in nanoseconds from an arbitrary zero chosen by the driver
/// (at most `u64::MAX - 1`). Held as nanoseconds + 1 so that `Option<Instant>`
/// is eight bytes: a connection keeps a dozen of them among the fields every
/// segment touches, and at scale each cache line of that state costs a fetch.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(NonZeroU64);

impl Instant {
    /// The driver's time zero.
    pub const ZERO: Instant = Instant::from_nanos(0);
    /// Later than any real deadline; used as "no deadline".
    pub const FAR_FUTURE: Instant = Instant::from_nanos(u64::MAX);

    /// `ns` nanoseconds after zero, saturating at [`Self::FAR_FUTURE`].
    pub const fn from_nanos(ns: u64) -> Self {
        Instant(NonZeroU64::MIN.saturating_add(ns))
    }
    pub const fn from_micros(us: u64) -> Self {
        Instant::from_nanos(us.saturating_mul(1_000))
    }
    pub const fn from_millis(ms: u64) -> Self {
        Instant::from_nanos(ms.saturating_mul(1_000_000))
    }
    pub const fn as_nanos(self) -> u64 {
        self.0.get() - 1
    }
    pub const fn as_micros(self) -> u64 {
        self.as_nanos() / 1_000
    }
    pub fn as_secs_f64(self) -> f64 {
        self.as_nanos() as f64 / 1e9
    }
    /// Time since `earlier`, zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.get().saturating_sub(earlier.0.get()))
    }
}

impl Default for Instant {
    fn default() -> Self {
        Instant::ZERO
    }
}

fn dur_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant::from_nanos(self.as_nanos().saturating_add(dur_nanos(d)))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, d: Duration) -> Instant {
        Instant::from_nanos(self.as_nanos().saturating_sub(dur_nanos(d)))
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:06}s",
            self.as_nanos() / 1_000_000_000,
            (self.as_nanos() % 1_000_000_000) / 1_000
        )
    }
}
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_millis(5);
        assert_eq!(t + Duration::from_millis(1), Instant::from_millis(6));
        assert_eq!(t - Duration::from_secs(1), Instant::ZERO);
        assert_eq!(Instant::ZERO - t, Duration::ZERO);
        assert_eq!(
            Instant::FAR_FUTURE + Duration::from_secs(1),
            Instant::FAR_FUTURE
        );
        assert_eq!(format!("{t}"), "0.005000s");
    }

    #[test]
    fn an_optional_instant_is_one_word_and_keeps_every_value() {
        assert_eq!(core::mem::size_of::<Option<Instant>>(), 8);
        assert_eq!(Instant::ZERO.as_nanos(), 0);
        assert_eq!(Instant::default(), Instant::ZERO);
        assert_eq!(Instant::from_nanos(7).as_nanos(), 7);
        assert_eq!(Instant::FAR_FUTURE.as_nanos(), u64::MAX - 1);
        assert_eq!(Instant::from_nanos(u64::MAX), Instant::FAR_FUTURE);
        assert!(Instant::ZERO < Instant::from_nanos(1));
        assert_eq!(
            Instant::FAR_FUTURE - Instant::ZERO,
            Duration::from_nanos(u64::MAX - 1)
        );
    }
}
