//! DECIMAL/NUMERIC values: an exact `mantissa / 10^scale`.
//!
//! The precision is a property of the column type, not of the value: a value only knows its
//! digits and its scale, and [`Decimal::fits_precision`] / [`Decimal::to_type`] say whether it
//! fits a given `decimal(p,s)`. Parsing is exact (no detour through binary floating point);
//! rescaling rounds half away from zero, as SQL Server does when it converts to a smaller
//! scale (`CAST(2.5 AS decimal(1,0))` is 3, `CAST(-2.5 AS decimal(1,0))` is -3).
//!
//! # Invariant
//!
//! `scale <= 38` and `|mantissa| < 10^38`: at most 38 digits, SQL Server's largest precision.
//! The fields are private so that every value in the engine satisfies it; `10^scale` is then
//! always representable, and no arithmetic here can overflow an `i128` unchecked.

use std::cmp::Ordering;
use std::fmt;

use super::sql_type::MAX_PRECISION;
use super::value::ParseError;

/// `10^0 ..= 10^38`; 10^38 < 2^127, so all fit an `i128`.
const POW10: [i128; 39] = {
    let mut table = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// `10^n` for `n <= 38`; larger `n` saturate at 10^38, which callers rule out beforehand.
pub(crate) fn pow10(n: u8) -> i128 {
    POW10[usize::from(n.min(MAX_PRECISION))]
}

/// An exact decimal number: `mantissa / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    mantissa: i128,
    scale: u8,
}

impl Decimal {
    /// Zero, at scale 0.
    pub const ZERO: Decimal = Decimal { mantissa: 0, scale: 0 };

    /// `mantissa / 10^scale`, if it has at most 38 digits and a scale of at most 38.
    pub fn new(mantissa: i128, scale: u8) -> Option<Decimal> {
        (scale <= MAX_PRECISION && mantissa.unsigned_abs() < POW10[38].unsigned_abs())
            .then_some(Decimal { mantissa, scale })
    }

    /// An integer, at scale 0.
    pub fn from_i64(value: i64) -> Decimal {
        Decimal { mantissa: i128::from(value), scale: 0 }
    }

    /// The unscaled value.
    pub fn mantissa(self) -> i128 {
        self.mantissa
    }

    /// Digits after the point.
    pub fn scale(self) -> u8 {
        self.scale
    }

    /// Parses `[+|-]digits[.digits]` (either side of the point may be empty, not both),
    /// surrounded by optional whitespace. The scale is the number of digits written after the
    /// point, so `"1.50"` is 150 at scale 2. More than 38 significant digits, or more than 38
    /// after the point, is [`ParseError::OutOfRange`].
    pub fn parse(text: &str) -> Result<Decimal, ParseError> {
        let text = text.trim();
        let (negative, digits) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let (int_part, frac_part) = match digits.split_once('.') {
            Some((i, f)) => (i, f),
            None => (digits, ""),
        };
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (int_part.is_empty() && frac_part.is_empty())
            || !all_digits(int_part)
            || !all_digits(frac_part)
        {
            return Err(ParseError::Invalid);
        }
        let scale = u8::try_from(frac_part.len())
            .ok()
            .filter(|s| *s <= MAX_PRECISION)
            .ok_or(ParseError::OutOfRange)?;
        let mut mantissa: i128 = 0;
        for b in int_part.bytes().chain(frac_part.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(b - b'0')))
                .filter(|m| *m < POW10[38])
                .ok_or(ParseError::OutOfRange)?;
        }
        Ok(Decimal { mantissa: if negative { -mantissa } else { mantissa }, scale })
    }

    /// The number of digits of the mantissa (1 for zero).
    pub fn digits(self) -> u8 {
        let magnitude = self.mantissa.unsigned_abs();
        let mut digits = 1;
        while digits < MAX_PRECISION && magnitude >= POW10[usize::from(digits)].unsigned_abs() {
            digits += 1;
        }
        digits
    }

    /// Whether the value, at its current scale, fits `decimal(precision, scale)`: fewer than
    /// `precision` digits in the mantissa.
    pub fn fits_precision(self, precision: u8) -> bool {
        self.mantissa.unsigned_abs() < pow10(precision).unsigned_abs()
    }

    /// The same number at another scale, rounded half away from zero when digits are dropped;
    /// `None` if the result would have more than 38 digits or `scale` is above 38.
    pub fn rescale(self, scale: u8) -> Option<Decimal> {
        if scale > MAX_PRECISION {
            return None;
        }
        match scale.cmp(&self.scale) {
            Ordering::Equal => Some(self),
            Ordering::Greater => {
                let mantissa = self.mantissa.checked_mul(pow10(scale - self.scale))?;
                Decimal::new(mantissa, scale)
            }
            Ordering::Less => {
                let divisor = pow10(self.scale - scale);
                let quotient = self.mantissa / divisor;
                let remainder = self.mantissa % divisor;
                // divisor is a power of ten >= 10, hence even: half is exact.
                let rounded = if remainder.unsigned_abs() * 2 >= divisor.unsigned_abs() {
                    quotient + self.mantissa.signum()
                } else {
                    quotient
                };
                Decimal::new(rounded, scale)
            }
        }
    }

    /// The value converted to `decimal(precision, scale)`: rescaled with rounding, then
    /// checked against the precision. `None` is SQL Server's arithmetic overflow (Msg 8115).
    pub fn to_type(self, precision: u8, scale: u8) -> Option<Decimal> {
        self.rescale(scale).filter(|d| d.fits_precision(precision) && scale <= precision)
    }

    /// The value exactly at `scale`, or `None` if that would drop a non-zero digit (or
    /// overflow): the check that a value was already converted to a column's scale.
    pub(crate) fn exact_at(self, scale: u8) -> Option<Decimal> {
        if scale < self.scale && self.mantissa % pow10(self.scale - scale) != 0 {
            return None;
        }
        self.rescale(scale)
    }

    /// The nearest `f64` (the conversion SQL Server makes when a decimal meets a float).
    pub fn to_f64(self) -> f64 {
        self.mantissa as f64 / pow10(self.scale) as f64
    }

    /// Numeric order: `1.0` and `1.00` are equal.
    pub fn cmp_value(&self, other: &Decimal) -> Ordering {
        cmp_scaled(self.mantissa, self.scale, other.mantissa, other.scale)
    }
}

/// Compares `m1 / 10^s1` with `m2 / 10^s2` exactly, for scales up to 38, without overflow.
///
/// Bringing both to the larger scale could overflow (10^37 at scale 0 against scale 38), so
/// the integer parts (truncated towards zero) are compared first and then the fractions,
/// scaled to the larger scale; each fraction is below 10^38 in magnitude, so that fits.
/// Truncation maps the reals onto ordered intervals (..., (-2,-1], (-1,1), [1,2), ...) and a
/// fraction has the sign of its number, so the pair order is the numeric order.
pub(crate) fn cmp_scaled(m1: i128, s1: u8, m2: i128, s2: u8) -> Ordering {
    if s1 == s2 {
        return m1.cmp(&m2);
    }
    let (d1, d2) = (pow10(s1), pow10(s2));
    let top = s1.max(s2);
    (m1 / d1)
        .cmp(&(m2 / d2))
        .then_with(|| ((m1 % d1) * pow10(top - s1)).cmp(&((m2 % d2) * pow10(top - s2))))
}

impl fmt::Display for Decimal {
    /// `123.45`, `-0.50`, `7`: every digit of the scale, a leading zero before the point.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let magnitude = self.mantissa.unsigned_abs();
        let sign = if self.mantissa < 0 { "-" } else { "" };
        if self.scale == 0 {
            return write!(f, "{sign}{magnitude}");
        }
        let unit = pow10(self.scale).unsigned_abs();
        let width = usize::from(self.scale);
        write!(f, "{sign}{}.{:0width$}", magnitude / unit, magnitude % unit)
    }
}
