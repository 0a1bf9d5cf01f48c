//! A fixed-width signed integer for matching weights.
//!
//! The Dutch pairer packs every quality criterion of a pairing into one edge weight, one bit
//! field per criterion from the most important down; with a few dozen players and score groups
//! that takes a few hundred bits. No crate in the project's dependency set offers a fixed-width
//! integer that wide, and the matching needs only addition, subtraction, comparison and halving,
//! so this small type does it: `N` 64-bit limbs, little-endian, two's complement.

use std::cmp::Ordering;
use std::ops::{Add, Sub};

/// A signed integer of `64 * N` bits (two's complement, wrapping arithmetic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Wide<const N: usize>([u64; N]);

impl<const N: usize> Default for Wide<N> {
    fn default() -> Self {
        Self([0; N])
    }
}

impl<const N: usize> Wide<N> {
    /// The value `v`.
    pub(crate) fn from_u64(v: u64) -> Self {
        let mut limbs = [0; N];
        limbs[0] = v;
        Self(limbs)
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&l| l == 0)
    }

    fn is_negative(&self) -> bool {
        self.0[N - 1] >> 63 == 1
    }

    /// The value shifted left by `k` bits (bits shifted out are lost).
    #[must_use]
    pub(crate) fn shifted_left(self, k: u32) -> Self {
        let limbs = (k / 64) as usize;
        let bits = k % 64;
        let mut out = [0u64; N];
        for i in (0..N).rev() {
            if i < limbs {
                break;
            }
            let src = i - limbs;
            let mut v = self.0[src] << bits;
            if bits > 0 && src > 0 {
                v |= self.0[src - 1] >> (64 - bits);
            }
            out[i] = v;
        }
        Self(out)
    }

    /// Half the value, rounded towards minus infinity (an arithmetic shift right).
    #[must_use]
    pub fn half(self) -> Self {
        let mut out = [0u64; N];
        let sign = if self.is_negative() { 1u64 << 63 } else { 0 };
        for (i, o) in out.iter_mut().enumerate() {
            let high = if i + 1 < N { self.0[i + 1] << 63 } else { sign };
            *o = (self.0[i] >> 1) | high;
        }
        Self(out)
    }
}

impl<const N: usize> Add for Wide<N> {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        let mut out = [0u64; N];
        let mut carry = false;
        for (i, o) in out.iter_mut().enumerate() {
            let (s, c1) = self.0[i].overflowing_add(rhs.0[i]);
            let (s, c2) = s.overflowing_add(u64::from(carry));
            *o = s;
            carry = c1 || c2;
        }
        Self(out)
    }
}

impl<const N: usize> Sub for Wide<N> {
    type Output = Self;
    fn sub(self, rhs: Self) -> Self {
        let mut out = [0u64; N];
        let mut borrow = false;
        for (i, o) in out.iter_mut().enumerate() {
            let (s, b1) = self.0[i].overflowing_sub(rhs.0[i]);
            let (s, b2) = s.overflowing_sub(u64::from(borrow));
            *o = s;
            borrow = b1 || b2;
        }
        Self(out)
    }
}

impl<const N: usize> Ord for Wide<N> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.is_negative(), other.is_negative()) {
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        for i in (0..N).rev() {
            match self.0[i].cmp(&other.0[i]) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        Ordering::Equal
    }
}

impl<const N: usize> PartialOrd for Wide<N> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::Wide;

    type W = Wide<3>;

    #[test]
    fn arithmetic_carries_across_limbs() {
        let a = W::from_u64(u64::MAX);
        let b = a + W::from_u64(1);
        assert_eq!(b, W::from_u64(1).shifted_left(64));
        assert_eq!(b - W::from_u64(1), a);
        assert!(b > a);
        let minus_one = W::default() - W::from_u64(1);
        assert!(minus_one < W::default());
        assert_eq!(minus_one.half(), minus_one);
        assert_eq!(
            W::from_u64(6).shifted_left(100).half(),
            W::from_u64(3).shifted_left(100)
        );
        assert_eq!(
            W::from_u64(1).shifted_left(130).shifted_left(2),
            W::from_u64(1).shifted_left(132)
        );
        assert!(W::from_u64(1).shifted_left(190) > W::from_u64(u64::MAX).shifted_left(120));
    }
}
