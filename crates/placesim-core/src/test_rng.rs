//! The tests' deterministic generator, so they need no random-number crate (core draws no
//! random number itself).

/// A 64-bit linear congruential generator (Knuth's MMIX constants), read from its high bits.
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}
