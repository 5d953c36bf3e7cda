//! RFC 1106 section 3 Big Window: a 30-bit window carried as the header's
//! 16-bit field plus the upper bits in option C on every segment (3.1).

/// RFC 1106 3: windows are at most 30 bits.
pub const MAX_WINDOW: usize = (1 << 30) - 1;
/// RFC 1106 3.1: the header keeps the lower 16 bits.
pub const UPPER_SHIFT: u32 = 16;
/// Option C takes 8 bytes of option space on every segment (7 + 1 NOP).
pub const UPPER_OPTION_SPACE: usize = 8;

/// RFC 1106 3.1: (header field, option C value) for window `wnd`.
#[inline]
pub fn split(wnd: usize) -> (u16, u16) {
    let w = wnd.min(MAX_WINDOW);
    ((w & 0xffff) as u16, (w >> UPPER_SHIFT) as u16)
}

/// RFC 1106 3.1: "the receiver must first reform the window".
#[inline]
pub fn join(field: u16, upper: u16) -> usize {
    (usize::from(upper) << UPPER_SHIFT) | usize::from(field)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_join_round_trip() {
        for w in [0, 1, 65_535, 65_536, 159_744, MAX_WINDOW] {
            let (f, u) = split(w);
            assert_eq!(join(f, u), w);
        }
        assert_eq!(split(usize::MAX), split(MAX_WINDOW));
    }
}
