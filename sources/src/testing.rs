//! Test support shared by the connectors' tests.

/// A 64-bit linear congruential generator (Knuth's MMIX constants): deterministic noise for
/// the no-panic tests, so every failure replays from its seed.
#[derive(Debug)]
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    /// The next 31 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// One of `items`.
    pub(crate) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}
