//! A cursor over fuzz input that never fails: past the end it yields zeros, so
//! every byte string decodes to some sequence of actions.

/// Reads integers and slices off the front of the fuzzer's bytes.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    /// Nothing left to decode.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_be_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// Up to `n` bytes (fewer at the end of the input).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }
}

#[cfg(test)]
mod tests {
    use super::Input;

    #[test]
    fn reads_big_endian_then_zeros() {
        let mut i = Input::new(&[1, 2, 3]);
        assert_eq!(i.u16(), 0x0102);
        assert_eq!(i.u16(), 0x0300);
        assert!(i.is_empty());
        assert_eq!(i.u32(), 0);
        assert_eq!(i.bytes(4), &[] as &[u8]);
    }
}
