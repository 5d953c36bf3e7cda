//! A value read off a capture, with what it rests on: the evidence in words
//! and a confidence. Values a capture bounds but does not give are ranges,
//! which `whatif` sweeps instead of guessing one point.

use serde::Serialize;

/// How far a value can be trusted, from the evidence behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// A default or a guess from little evidence: sweep it.
    Low,
    /// Several consistent samples, or one unambiguous one.
    Medium,
    /// Read directly off the wire (an option, a handshake), or many samples.
    High,
}

/// An inferred value, the evidence it came from and its confidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inferred<T> {
    pub value: T,
    /// One sentence: which segments or samples gave the value.
    pub evidence: String,
    pub confidence: Confidence,
}

impl<T> Inferred<T> {
    pub fn new(value: T, confidence: Confidence, evidence: impl Into<String>) -> Self {
        Inferred {
            value,
            evidence: evidence.into(),
            confidence,
        }
    }

    /// The same evidence and confidence over a transformed value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Inferred<U> {
        Inferred {
            value: f(self.value),
            evidence: self.evidence,
            confidence: self.confidence,
        }
    }
}

/// A closed interval `[lo, hi]` of plausible values the capture cannot narrow
/// further (a think time hidden under a held tail, writes coalesced into one
/// segment); `lo == hi` when the capture shows the value itself.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Span<T> {
    pub lo: T,
    pub hi: T,
}

impl<T: PartialOrd + Copy> Span<T> {
    /// One known value.
    pub fn exact(v: T) -> Self {
        Span { lo: v, hi: v }
    }

    /// The interval between two values in either order.
    pub fn between(a: T, b: T) -> Self {
        if a <= b {
            Span { lo: a, hi: b }
        } else {
            Span { lo: b, hi: a }
        }
    }

    /// Whether the capture left the value open.
    pub fn is_open(&self) -> bool {
        self.lo < self.hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_order_their_ends_and_say_when_open() {
        let s = Span::between(5.0, 2.0);
        assert_eq!((s.lo, s.hi), (2.0, 5.0));
        assert!(s.is_open());
        assert!(!Span::exact(3).is_open());
    }

    #[test]
    fn map_keeps_the_evidence() {
        let v = Inferred::new(40u64, Confidence::Medium, "3 late ACKs").map(|ms| ms * 1000);
        assert_eq!(v.value, 40_000);
        assert_eq!(
            (v.confidence, v.evidence.as_str()),
            (Confidence::Medium, "3 late ACKs")
        );
        assert!(Confidence::High > Confidence::Low);
    }
}
