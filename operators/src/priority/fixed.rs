//! Arithmetic on fixed-point numbers in millionths ([`crate::model::Fixed`]), with
//! explicit rounding directions, and the two transcendental functions the priority update needs
//! (tanh and 2^-x) as integer tables.
//!
//! Every priority is computed with these integers only, so a result is bit-identical on every
//! machine and in every run. The tables are built by `const` evaluation, which uses the
//! compiler's software IEEE arithmetic (basic operations only, no libm): the same bits
//! everywhere.

use crate::model::SCALE;

/// Which way a division rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    /// Towards −∞.
    Down,
    /// Towards +∞.
    Up,
}

/// `n / d` rounded as asked (`d > 0`).
pub(crate) fn div(n: i128, d: i128, round: Round) -> i128 {
    debug_assert!(d > 0);
    match round {
        Round::Down => n.div_euclid(d),
        Round::Up => -(-n).div_euclid(d),
    }
}

/// `a · b` in fixed point, rounded as asked.
pub(crate) fn mul(a: i64, b: i64, round: Round) -> i64 {
    narrow(div(a as i128 * b as i128, SCALE as i128, round))
}

/// Saturating conversion back to `i64` (values never come close; this only rules out overflow).
pub(crate) fn narrow(x: i128) -> i64 {
    x.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Table resolution: both tables have one entry per 1/250 (4 000 millionths).
const STEPS_PER_UNIT: i64 = 250;
const STEP: i64 = SCALE / STEPS_PER_UNIT;
/// tanh is tabulated on [0, 8]; tanh(8) rounds to 1.0 in millionths.
const TANH_MAX: i64 = 8;
const TANH_LEN: usize = (TANH_MAX * STEPS_PER_UNIT) as usize + 1;

/// e^x for |x| ≤ 16 with basic operations only: a Taylor series of e^(x/64), squared 6 times.
const fn exp(x: f64) -> f64 {
    let y = x / 64.0;
    let (mut term, mut sum, mut i) = (1.0, 1.0, 1);
    while i < 24 {
        term = term * y / i as f64;
        sum += term;
        i += 1;
    }
    let mut j = 0;
    while j < 6 {
        sum *= sum;
        j += 1;
    }
    sum
}

const fn tanh_table() -> [i64; TANH_LEN] {
    let mut table = [0i64; TANH_LEN];
    let mut i = 0;
    while i < TANH_LEN {
        let x = i as f64 / STEPS_PER_UNIT as f64;
        let e = exp(-2.0 * x);
        table[i] = ((1.0 - e) / (1.0 + e) * SCALE as f64 + 0.5) as i64;
        i += 1;
    }
    table
}

const fn pow2_table() -> [i64; STEPS_PER_UNIT as usize + 1] {
    let mut table = [0i64; STEPS_PER_UNIT as usize + 1];
    let mut i = 0;
    while i <= STEPS_PER_UNIT as usize {
        let x = i as f64 / STEPS_PER_UNIT as f64;
        table[i] = (exp(-x * std::f64::consts::LN_2) * SCALE as f64 + 0.5) as i64;
        i += 1;
    }
    table
}

/// tanh(i / 250) in millionths, i = 0..=2000.
pub(crate) static TANH: [i64; TANH_LEN] = tanh_table();
/// 2^(−i / 250) in millionths, i = 0..=250.
pub(crate) static POW2: [i64; STEPS_PER_UNIT as usize + 1] = pow2_table();

/// Linear interpolation in a table at `x ≥ 0` (millionths), rounded as asked; past the end,
/// the last entry.
fn interpolate(table: &[i64], x: i64, round: Round) -> i64 {
    let x = x.max(0);
    let i = (x / STEP) as usize;
    if i + 1 >= table.len() {
        return table[table.len() - 1];
    }
    let frac = (x % STEP) as i128;
    let rise = (table[i + 1] - table[i]) as i128;
    table[i] + div(rise * frac, STEP as i128, round) as i64
}

/// T(x): tanh of `x ≥ 0` (millionths), the piecewise-linear interpolant of [`TANH`], rounded
/// as asked. Non-decreasing in `x` for either rounding, with slope at most 1.
///
/// Within 3.1·10⁻⁶ of tanh on [0, 8]: interpolation error h²/8 · max|tanh''| ≤ 1.6·10⁻⁶
/// (h = 0.004), table rounding 0.5·10⁻⁶, directed rounding 10⁻⁶.
pub(crate) fn tanh(x: i64, round: Round) -> i64 {
    interpolate(&TANH, x, round)
}

/// 2^(−x) for `x ≥ 0` (millionths), rounded down: the integer part is a shift, the fraction
/// is interpolated in [`POW2`]. Zero from x = 40 on.
pub(crate) fn pow2_neg(x: i64) -> i64 {
    let x = x.max(0);
    let whole = x / SCALE;
    if whole >= 40 {
        return 0;
    }
    // The fraction, in table steps: POW2 covers [0, 1] in 250 steps of 4 000 millionths.
    interpolate(&POW2, x % SCALE, Round::Down) >> whole
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_agree_with_the_floats_within_one_millionth_and_are_monotone() {
        for (i, value) in TANH.iter().enumerate() {
            let exact = (i as f64 / 250.0).tanh() * 1e6;
            assert!((*value as f64 - exact).abs() <= 1.0, "tanh at {i}");
        }
        assert!(TANH.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!((TANH[0], TANH[TANH_LEN - 1]), (0, SCALE));
        for (i, value) in POW2.iter().enumerate() {
            let exact = (-(i as f64) / 250.0).exp2() * 1e6;
            assert!((*value as f64 - exact).abs() <= 1.0, "2^-x at {i}");
        }
        assert_eq!((POW2[0], POW2[250]), (SCALE, SCALE / 2));
    }

    #[test]
    fn interpolation_rounds_in_the_asked_direction_and_stays_close() {
        for x in (0..9_000_000).step_by(7_919) {
            let (down, up) = (tanh(x, Round::Down), tanh(x, Round::Up));
            assert!(down <= up && up - down <= 1, "at {x}");
            let exact = (x as f64 / 1e6).tanh() * 1e6;
            assert!(
                (down as f64 - exact).abs() <= 3.1,
                "at {x}: {down} vs {exact}"
            );
            assert!(tanh(x + 1, Round::Down) >= down);
        }
        for x in (0..12_000_000).step_by(6_007) {
            let exact = (-(x as f64) / 1e6).exp2() * 1e6;
            assert!((pow2_neg(x) as f64 - exact).abs() <= 2.5, "at {x}");
        }
        assert_eq!(pow2_neg(1_000_000), 500_000);
        assert_eq!(pow2_neg(45_000_000), 0);
    }

    #[test]
    fn division_rounds_towards_the_named_side() {
        assert_eq!(div(7, 2, Round::Down), 3);
        assert_eq!(div(7, 2, Round::Up), 4);
        assert_eq!(div(-7, 2, Round::Down), -4);
        assert_eq!(div(-7, 2, Round::Up), -3);
        assert_eq!(mul(-600_000, 500_000, Round::Down), -300_000);
        assert_eq!(mul(1, 1, Round::Up), 1);
        assert_eq!(mul(1, 1, Round::Down), 0);
    }
}
