//! Sequence numbers: arithmetic and comparison modulo 2^32 (RFC 9293 3.4).

use core::cmp::Ordering;
use core::fmt;
use core::ops::{Add, AddAssign, Sub};

/// A TCP sequence number. Ordering is by signed 32-bit distance, so it is only
/// meaningful for numbers less than 2^31 apart (RFC 9293 3.4).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNumber(pub u32);

impl SeqNumber {
    /// Signed distance `self - other`, correct across the wrap.
    #[inline]
    pub fn diff(self, other: SeqNumber) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }
    /// Bytes from `earlier` to `self`; zero if `self` is before `earlier`.
    #[inline]
    pub fn distance_from(self, earlier: SeqNumber) -> usize {
        let d = self.diff(earlier);
        if d < 0 {
            0
        } else {
            d as usize
        }
    }
    #[inline]
    pub fn max(self, other: SeqNumber) -> SeqNumber {
        if self >= other {
            self
        } else {
            other
        }
    }
    #[inline]
    pub fn min(self, other: SeqNumber) -> SeqNumber {
        if self <= other {
            self
        } else {
            other
        }
    }
    /// `lo <= self < hi` modulo 2^32.
    #[inline]
    pub fn in_range(self, lo: SeqNumber, hi: SeqNumber) -> bool {
        self >= lo && self < hi
    }
}

impl Add<usize> for SeqNumber {
    type Output = SeqNumber;
    #[inline]
    fn add(self, n: usize) -> SeqNumber {
        SeqNumber(self.0.wrapping_add(n as u32))
    }
}
impl AddAssign<usize> for SeqNumber {
    #[inline]
    fn add_assign(&mut self, n: usize) {
        *self = *self + n;
    }
}
impl Sub<usize> for SeqNumber {
    type Output = SeqNumber;
    #[inline]
    fn sub(self, n: usize) -> SeqNumber {
        SeqNumber(self.0.wrapping_sub(n as u32))
    }
}

impl PartialOrd for SeqNumber {
    #[inline]
    fn partial_cmp(&self, other: &SeqNumber) -> Option<Ordering> {
        Some(self.diff(*other).cmp(&0))
    }
}

impl fmt::Debug for SeqNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
impl fmt::Display for SeqNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_across_the_wrap() {
        let a = SeqNumber(u32::MAX - 10);
        let b = a + 20;
        assert_eq!(b.0, 9);
        assert!(a < b);
        assert!(b > a);
        assert_eq!(b.diff(a), 20);
        assert_eq!(a.diff(b), -20);
        assert_eq!(b.distance_from(a), 20);
        assert_eq!(a.distance_from(b), 0);
        assert!((a + 5).in_range(a, b));
        assert!(!b.in_range(a, b));
        assert_eq!(a.max(b), b);
        assert_eq!(b - 20, a);
    }
}
