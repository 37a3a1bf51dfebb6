//! Exact decimal arithmetic with SQL Server's result precision and scale.
//!
//! A [`Decimal`] value knows its digits and scale but not the precision of the column or
//! expression it came from, so an operand's precision is taken as the digits it has (at least
//! its scale): exactly how SQL Server types a constant (`1.50` is `numeric(3,2)`, `3` as a
//! decimal is `numeric(1,0)`). Results follow SQL Server's rules for `decimal(p1,s1) op
//! decimal(p2,s2)`:
//!
//! | op    | precision                          | scale                 |
//! |-------|------------------------------------|-----------------------|
//! | + -   | max(s1,s2) + max(p1-s1,p2-s2) + 1  | max(s1,s2)            |
//! | *     | p1 + p2 + 1                        | s1 + s2               |
//! | /     | p1 - s1 + s2 + max(6, s1 + p2 + 1) | max(6, s1 + p2 + 1)   |
//! | %     | min(p1-s1, p2-s2) + max(s1,s2)     | max(s1,s2)            |
//!
//! and a precision above 38 is brought back to 38 by shrinking the scale: for `+` and `-` to
//! what the integral part leaves; for `*` and `/` likewise while the integral part is under 32
//! digits, otherwise to 6 (or less if it already was). Digits dropped by a smaller scale are
//! rounded half away from zero, except that division truncates, as SQL Server's does
//! (`2/3.0` is `0.666666`). A result of more than 38 digits is Msg 8115.
//!
//! Intermediate products need up to 77 digits, hence the small unsigned 256-bit integer here.

use walden_engine::types::{Decimal, MAX_PRECISION};

use crate::ast::BinaryOp;
use crate::exec::SqlError;

/// `10^n` for `n <= 38`.
pub(crate) fn pow10(n: u8) -> i128 {
    10i128.pow(u32::from(n.min(MAX_PRECISION)))
}

/// Decimal digits of a magnitude (1 for zero).
pub(crate) fn digits(m: i128) -> u8 {
    let magnitude = m.unsigned_abs();
    if magnitude < 10 {
        return 1;
    }
    // floor(log10(x)) is floor(bits * log10(2)) or one less; 1233 / 4096 is log10(2) to
    // within what 128 bits can tell. Every guess is at most 38, within the table.
    let bits = 128 - magnitude.leading_zeros();
    let guess = (bits * 1233) >> 12;
    let log10 = guess - u32::from(magnitude < POW10[guess as usize]);
    // At most 39 digits: the cast cannot truncate.
    log10 as u8 + 1
}

/// `10^n` as `u128`, `n <= 38`.
const POW10: [u128; 39] = {
    let mut table = [1u128; 39];
    let mut n = 1;
    while n < 39 {
        table[n] = table[n - 1] * 10;
        n += 1;
    }
    table
};

/// `a op b` of two DECIMAL values small enough that SQL Server's result type needs no
/// reduction, without working out their precision: a sum or difference of two values
/// below 10^37 once brought to the larger of their scales (precision at most 37, so the
/// result's is at most 38 at that scale) and a product of two values below 10^18 at
/// scales of at most 18 (precisions at most 18, so the product's is at most 37 at the
/// sum of the scales). These are the values of most columns and running sums, and of an
/// integer meeting one (`1 - l_discount`, the integer at scale 0); [`decimal_op`] gives
/// the same for them, and `None` leaves every other case to it.
pub(crate) fn small_decimal_op(op: BinaryOp, a: Decimal, b: Decimal) -> Option<Decimal> {
    let (x, y) = (a.mantissa(), b.mantissa());
    match op {
        BinaryOp::Add | BinaryOp::Subtract => {
            let scale = a.scale().max(b.scale());
            // Exact: raising the scale multiplies by a power of ten, checked against 10^37.
            let at = |m: i128, s: u8| {
                let m = match scale - s {
                    0 => m,
                    up => m.checked_mul(*POW10.get(usize::from(up))? as i128)?,
                };
                (m.unsigned_abs() < POW10[37]).then_some(m)
            };
            if scale > 37 {
                return None;
            }
            let (x, y) = (at(x, a.scale())?, at(y, b.scale())?);
            Decimal::new(if op == BinaryOp::Add { x + y } else { x - y }, scale)
        }
        BinaryOp::Multiply
            if a.scale() <= 18
                && b.scale() <= 18
                && x.unsigned_abs() < POW10[18]
                && y.unsigned_abs() < POW10[18] =>
        {
            Decimal::new(x * y, a.scale() + b.scale())
        }
        _ => None,
    }
}

/// An exact operand: `m / 10^s`, taken to have precision `p`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exact {
    pub m: i128,
    pub s: u8,
    pub p: u8,
}

impl Exact {
    /// An integer, with the precision of its digits.
    pub(crate) fn int(v: i64) -> Exact {
        let m = i128::from(v);
        Exact { m, s: 0, p: digits(m) }
    }

    /// A decimal value, with the precision of its digits (at least its scale).
    pub(crate) fn decimal(d: Decimal) -> Exact {
        Exact { m: d.mantissa(), s: d.scale(), p: super::types::decimal_precision(d) }
    }
}

/// An unsigned 256-bit integer, `hi * 2^128 + lo`; the field order makes the derived order
/// numeric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct U256 {
    hi: u128,
    lo: u128,
}

impl U256 {
    const ZERO: U256 = U256 { hi: 0, lo: 0 };

    fn from(x: u128) -> U256 {
        U256 { hi: 0, lo: x }
    }

    /// `self * x`, `None` on overflow.
    fn mul(self, x: u128) -> Option<U256> {
        let (lo_hi, lo_lo) = mul_wide(self.lo, x);
        let (hi_hi, hi_lo) = mul_wide(self.hi, x);
        if hi_hi != 0 {
            return None;
        }
        let hi = hi_lo.checked_add(lo_hi)?;
        Some(U256 { hi, lo: lo_lo })
    }

    /// `self * 10^n`, `None` on overflow.
    fn mul_pow10(self, n: u32) -> Option<U256> {
        let mut out = self;
        let mut left = n;
        while left > 0 {
            let step = left.min(38);
            out = out.mul(10u128.pow(step))?;
            left -= step;
        }
        Some(out)
    }

    fn add(self, o: U256) -> Option<U256> {
        let (lo, carry) = self.lo.overflowing_add(o.lo);
        let hi = self.hi.checked_add(o.hi)?.checked_add(u128::from(carry))?;
        Some(U256 { hi, lo })
    }

    /// `self - o` for `self >= o`.
    fn sub(self, o: U256) -> U256 {
        let (lo, borrow) = self.lo.overflowing_sub(o.lo);
        U256 { hi: self.hi - o.hi - u128::from(borrow), lo }
    }

    fn shl1(self) -> U256 {
        U256 { hi: (self.hi << 1) | (self.lo >> 127), lo: self.lo << 1 }
    }

    fn bit(self, i: u32) -> bool {
        if i >= 128 {
            (self.hi >> (i - 128)) & 1 == 1
        } else {
            (self.lo >> i) & 1 == 1
        }
    }

    fn set_bit(&mut self, i: u32) {
        if i >= 128 {
            self.hi |= 1 << (i - 128);
        } else {
            self.lo |= 1 << i;
        }
    }

    /// Quotient and remainder by a non-zero divisor below 2^255 (every divisor here is below
    /// 10^77 < 2^256 / 2, so shifting the running remainder left cannot overflow).
    fn div_rem(self, d: U256) -> (U256, U256) {
        // Most operands fit 128 bits, where the machine's division is exact and far quicker
        // than the bit-by-bit long division below.
        if self.hi == 0 && d.hi == 0 {
            return (U256::from(self.lo / d.lo), U256::from(self.lo % d.lo));
        }
        let mut q = U256::ZERO;
        let mut r = U256::ZERO;
        for i in (0..256).rev() {
            r = r.shl1();
            if self.bit(i) {
                r.lo |= 1;
            }
            if r >= d {
                r = r.sub(d);
                q.set_bit(i);
            }
        }
        (q, r)
    }

    fn to_u128(self) -> Option<u128> {
        (self.hi == 0).then_some(self.lo)
    }
}

/// The full 256-bit product of two `u128`s, as (high, low).
fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    const MASK: u128 = u64::MAX as u128;
    let (a1, a0) = (a >> 64, a & MASK);
    let (b1, b0) = (b >> 64, b & MASK);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 & MASK) + (p10 & MASK);
    let lo = (p00 & MASK) | (mid << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (hi, lo)
}

/// `x / 10^k` rounded half away from zero (on the magnitude), `None` if `10^k` overflows.
fn round_div_pow10(x: U256, k: u32) -> Option<U256> {
    if k == 0 {
        return Some(x);
    }
    let divisor = U256::from(1).mul_pow10(k)?;
    let half = U256::from(5).mul_pow10(k - 1)?;
    Some(x.add(half)?.div_rem(divisor).0)
}

fn overflow() -> SqlError {
    SqlError::overflow("numeric")
}

/// A signed result at `scale`, if it has at most 38 digits.
fn finish(negative: bool, magnitude: U256, scale: u8) -> Result<Decimal, SqlError> {
    let m = magnitude.to_u128().and_then(|m| i128::try_from(m).ok()).ok_or_else(overflow)?;
    Decimal::new(if negative { -m } else { m }, scale).ok_or_else(overflow)
}

/// The scale of a `*` or `/` result whose precision exceeds 38 (see the module documentation).
fn reduce_scale(precision: u32, scale: u32) -> u32 {
    if precision <= 38 {
        return scale;
    }
    let integral = precision - scale;
    if integral < 32 {
        scale.min(38 - integral)
    } else {
        scale.min(6)
    }
}

/// `a op b` for the arithmetic operators, with SQL Server's result scale.
pub(crate) fn decimal_op(op: BinaryOp, a: Exact, b: Exact) -> Result<Decimal, SqlError> {
    let (p1, s1, p2, s2) = (u32::from(a.p), u32::from(a.s), u32::from(b.p), u32::from(b.s));
    let (i1, i2) = (p1.saturating_sub(s1), p2.saturating_sub(s2));
    let (ma, mb) = (U256::from(a.m.unsigned_abs()), U256::from(b.m.unsigned_abs()));
    match op {
        BinaryOp::Add | BinaryOp::Subtract => {
            let integral = i1.max(i2);
            let scale = s1.max(s2);
            let scale = if integral + scale + 1 > 38 { 38 - integral.min(38) } else { scale };
            // Each operand at the result scale has at most 38 digits (its integral part is at
            // most `integral`), so i128 holds it and the sum.
            let at = |e: Exact| -> Result<i128, SqlError> {
                // An operand's mantissa is always below 10^38 (a DECIMAL's, a MONEY's or an
                // integer's), so at its own scale it is its mantissa.
                if u32::from(e.s) == scale {
                    return Ok(e.m);
                }
                let d = Decimal::new(e.m, e.s).ok_or_else(overflow)?;
                // scale <= 38 here.
                d.rescale(scale as u8).map(Decimal::mantissa).ok_or_else(overflow)
            };
            let (x, y) = (at(a)?, at(b)?);
            let sum = if op == BinaryOp::Add { x.checked_add(y) } else { x.checked_sub(y) };
            Decimal::new(sum.ok_or_else(overflow)?, scale as u8).ok_or_else(overflow)
        }
        // Operands of p1 and p2 digits make a product of at most p1 + p2 digits: within 38,
        // i128 holds it and the scale is s1 + s2 with nothing to round, what the general
        // path below gives.
        BinaryOp::Multiply if p1 + p2 < 38 => {
            Decimal::new(a.m * b.m, (s1 + s2) as u8).ok_or_else(overflow)
        }
        BinaryOp::Multiply => {
            let scale = reduce_scale(p1 + p2 + 1, s1 + s2);
            let product = ma.mul(b.m.unsigned_abs()).ok_or_else(overflow)?;
            let rounded = round_div_pow10(product, s1 + s2 - scale).ok_or_else(overflow)?;
            finish((a.m < 0) != (b.m < 0), rounded, scale as u8)
        }
        BinaryOp::Divide => {
            if b.m == 0 {
                return Err(SqlError::divide_by_zero());
            }
            let scale = (s1 + p2 + 1).max(6);
            let scale = reduce_scale(i1 + s2 + scale, scale);
            // q = (a.m / 10^s1) / (b.m / 10^s2) * 10^scale = a.m * 10^e / b.m.
            let e = scale as i32 + s2 as i32 - s1 as i32;
            let num = ma.mul_pow10(e.max(0) as u32).ok_or_else(overflow)?;
            let den = mb.mul_pow10((-e).max(0) as u32).ok_or_else(overflow)?;
            finish((a.m < 0) != (b.m < 0), num.div_rem(den).0, scale as u8)
        }
        BinaryOp::Modulo => {
            if b.m == 0 {
                return Err(SqlError::divide_by_zero());
            }
            let scale = s1.max(s2);
            let x = ma.mul_pow10(scale - s1).ok_or_else(overflow)?;
            let y = mb.mul_pow10(scale - s2).ok_or_else(overflow)?;
            finish(a.m < 0, x.div_rem(y).1, scale as u8)
        }
        _ => Err(overflow()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_counted_at_every_power_of_ten() {
        let naive = |m: i128| m.unsigned_abs().to_string().len() as u8;
        for n in 0..=38u32 {
            let p = 10i128.pow(n);
            // 2 * 10^38 is past i128: left out, as are values past 38 digits.
            let twice = p.checked_mul(2).map(|t| t - 1);
            for m in [Some(p - 1), Some(p), Some(p + 1), Some(-p), twice, Some((p - 1) / 3)]
                .into_iter()
                .flatten()
            {
                if m.unsigned_abs() < 10u128.pow(38) {
                    assert_eq!(digits(m), naive(m), "{m}");
                }
            }
        }
        assert_eq!(digits(0), 1);
    }

    #[test]
    fn small_operations_are_the_general_ones() {
        let values = [0i128, 1, -1, 7, 99_999, -123_456_789, 10i128.pow(17) - 1, 10i128.pow(36)];
        let mut taken = 0;
        for &x in &values {
            for &y in &values {
                for (sx, sy) in [(0u8, 0u8), (2, 2), (2, 4), (0, 2), (4, 0), (18, 18), (37, 37)] {
                    let (Some(a), Some(b)) = (Decimal::new(x, sx), Decimal::new(y, sy)) else {
                        continue;
                    };
                    for op in [BinaryOp::Add, BinaryOp::Subtract, BinaryOp::Multiply] {
                        let general = decimal_op(op, Exact::decimal(a), Exact::decimal(b));
                        if let Some(small) = small_decimal_op(op, a, b) {
                            let general = general.map(|d| (d.mantissa(), d.scale())).ok();
                            assert_eq!(Some((small.mantissa(), small.scale())), general);
                            taken += 1;
                        }
                    }
                }
            }
        }
        assert!(taken > 100, "{taken}");
    }

    #[test]
    fn wide_multiplication_and_division_are_exact() {
        assert_eq!(mul_wide(u128::MAX, u128::MAX), (u128::MAX - 1, 1));
        let x = U256::from(10u128.pow(38)).mul(10u128.pow(38));
        let (q, r) = x.map(|x| x.div_rem(U256::from(7))).unwrap_or((U256::ZERO, U256::ZERO));
        // 10^76 mod 7, by repeated multiplication.
        let expected = (0..76).fold(1u128, |acc, _| acc * 10 % 7);
        assert_eq!(r, U256::from(expected));
        assert!(q > U256::from(u128::MAX));
        assert_eq!(U256::from(1).mul_pow10(78), None);
    }
}
