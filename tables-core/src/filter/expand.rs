//! Typed comparisons written out: the filter that matches exactly the rows a
//! field's reader ([`Reads`]) reads, in the form each engine needs.
//!
//! A typed field reads more than it writes: an `i32` field writes `Edm.Int32` but
//! reads an `Edm.Int64` in range (as .NET's `long` stores it), an `f64` field
//! writes `Edm.Double` but reads `150` (the Python and JS SDKs store whole numbers
//! as `Edm.Int32`). The Table service compares a property with a literal only when
//! both have the same Edm type (docs/protocol.md §6.1), so a filter of the written
//! type alone would leave those rows out without a word. A typed comparison is
//! therefore sent as one comparison per stored type its field reads, ORed:
//!
//! ```text
//! Items gt 0       (u32 field)   Items gt 0L or Items gt 0
//! Total gt 100.5   (f64 field)   Total gt 100.5 or Total ge 101 or Total ge 101L
//! ```
//!
//! Each branch is written so that it also holds on an engine that compares numbers
//! across types (`Total ge 101`, not `Total gt 100`, which a Double of 100.2 would
//! satisfy there): whatever its stored type, a value that satisfies a branch
//! satisfies the comparison. For Azurite, which compares numbers as JavaScript does
//! and fails on an Int64 literal against another type, the comparison is sent in a
//! form of its own ([`FilterDialect::Azurite`]).
//!
//! [`FilterDialect::Azurite`]: crate::filter::FilterDialect::Azurite

use crate::filter::ast::{CmpOp, Filter, ReadComparison};
use crate::filter::reads::{FilterDialect, Reads};
use crate::value::Value;

/// The largest integer magnitude every `f64` holds exactly.
const EXACT_IN_DOUBLE: i64 = 1 << 53;

impl ReadComparison {
    /// The comparison as plain comparisons, in the form `dialect` needs: for an
    /// engine that compares only values of one Edm type, one comparison per stored
    /// type the reader accepts; for Azurite, by number.
    pub fn expand(&self, dialect: FilterDialect) -> Filter {
        let (property, op, operand) = (self.property(), self.op(), self.operand());
        let compared = match dialect {
            FilterDialect::Typed => typed(self.reads(), property, op, operand),
            FilterDialect::Azurite => by_number(self.reads(), property, op, operand),
        };
        // No stored value can satisfy it: a comparison nothing satisfies (the
        // service may not take a bare `false`).
        compared.unwrap_or_else(|| compare(property, CmpOp::Lt, Value::Int64(i64::MIN)))
    }
}

/// An operand beyond `i64::MAX`, as an integer: every such operand compares alike
/// with every stored integer.
const BEYOND_INT64: i128 = i64::MAX as i128 + 1;

/// The comparison for an engine that compares only values of one Edm type.
fn typed(reads: Reads, property: &str, op: CmpOp, operand: Option<&Value>) -> Option<Filter> {
    match (reads, operand) {
        (Reads::Integer, Some(Value::Int32(n))) => integer(
            property,
            op,
            i128::from(*n),
            [IntBranch::INT32, IntBranch::INT64],
        ),
        (Reads::Integer, Some(Value::Int64(n))) => integer(
            property,
            op,
            i128::from(*n),
            [IntBranch::INT64, IntBranch::INT32],
        ),
        (Reads::Integer, None) => integer(
            property,
            op,
            BEYOND_INT64,
            [IntBranch::INT64, IntBranch::INT32],
        ),
        (Reads::Double, Some(Value::Double(x))) if x.is_finite() => double(property, op, *x),
        (Reads::Single, Some(Value::Double(x))) if x.is_finite() => single(property, op, *x),
        // Text and the other single-type values; and a NaN or infinite operand,
        // which has no literal (the query refuses it before sending).
        (_, Some(operand)) => Some(compare(property, op, operand.clone())),
        (_, None) => None,
    }
}

fn integer(property: &str, op: CmpOp, n: i128, branches: [IntBranch; 2]) -> Option<Filter> {
    any(branches.iter().filter_map(|b| b.integer(property, op, n)))
}

/// `property op x` for an `f64` field: the Double itself, and the integers.
fn double(property: &str, op: CmpOp, x: f64) -> Option<Filter> {
    let own = match op {
        // Not `ne`: across types it may hold (docs/protocol.md §6.1), and an Int32
        // equal to x would then pass.
        CmpOp::Ne => compare(property, CmpOp::Lt, Value::Double(x)).or(compare(
            property,
            CmpOp::Gt,
            Value::Double(x),
        )),
        op => compare(property, op, Value::Double(x)),
    };
    let parts = real_parts(op, x, x);
    let ints = [IntBranch::INT32, IntBranch::INT64_EXACT]
        .into_iter()
        .filter_map(|branch| {
            // An integral operand within the branch compares as itself.
            if op != CmpOp::Ne && x.fract() == 0.0 && branch.contains(to_int(x)) {
                Some(compare(property, op, branch.literal(to_int(x))))
            } else {
                branch.reals(property, &parts)
            }
        });
    any(std::iter::once(own).chain(ints))
}

/// `property op x` for an `f32` field: a stored value `v` reads as the `f32` nearest
/// to it, so `read(v) op x` holds exactly for the `v` on the right side of the
/// doubles that round to `x`.
fn single(property: &str, op: CmpOp, x: f64) -> Option<Filter> {
    let (low, high) = rounds_to(x as f32)?;
    let double = |op, v| compare(property, op, Value::Double(v));
    let own = match op {
        CmpOp::Eq => double(CmpOp::Ge, low).and(double(CmpOp::Le, high)),
        CmpOp::Ne => double(CmpOp::Lt, low).or(double(CmpOp::Gt, high)),
        CmpOp::Gt => double(CmpOp::Gt, high),
        CmpOp::Ge => double(CmpOp::Ge, low),
        CmpOp::Lt => double(CmpOp::Lt, low),
        CmpOp::Le => double(CmpOp::Le, high),
    };
    let parts = real_parts(op, low, high);
    let ints = [IntBranch::INT32, IntBranch::INT64_EXACT]
        .into_iter()
        .filter_map(|branch| branch.reals(property, &parts));
    any(std::iter::once(own).chain(ints))
}

/// The comparison for Azurite: numbers compare by value whatever their Edm type
/// (its Int64 values are text, which `gt`/`ge`/`lt`/`le` turn into numbers and
/// `eq`/`ne` don't), and an Int64 literal fails against a value of another type. So
/// only literals without `L`, and `eq`/`ne` as ranges.
fn by_number(reads: Reads, property: &str, op: CmpOp, operand: Option<&Value>) -> Option<Filter> {
    let number = |x: f64| {
        if x.fract() == 0.0 && (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&x) {
            Value::Int32(x as i32)
        } else {
            Value::Double(x)
        }
    };
    let (low, high) = match (reads, operand) {
        (Reads::Integer, Some(Value::Int32(n))) => (f64::from(*n), f64::from(*n)),
        // Azurite compares Int64 values as JavaScript numbers: exact within ±2^53.
        (Reads::Integer, Some(Value::Int64(n))) => (*n as f64, *n as f64),
        (Reads::Integer, None) => {
            return integer(
                property,
                op,
                BEYOND_INT64,
                [IntBranch::INT64, IntBranch::INT32],
            );
        }
        (Reads::Double, Some(Value::Double(x))) if x.is_finite() => (*x, *x),
        (Reads::Single, Some(Value::Double(x))) if x.is_finite() => rounds_to(*x as f32)?,
        _ => return typed(reads, property, op, operand),
    };
    let at = |op, x| compare(property, op, number(x));
    Some(match op {
        CmpOp::Eq => at(CmpOp::Ge, low).and(at(CmpOp::Le, high)),
        CmpOp::Ne => at(CmpOp::Lt, low).or(at(CmpOp::Gt, high)),
        CmpOp::Gt => at(CmpOp::Gt, high),
        CmpOp::Ge => at(CmpOp::Ge, low),
        CmpOp::Lt => at(CmpOp::Lt, low),
        CmpOp::Le => at(CmpOp::Le, high),
    })
}

/// An integer Edm type as a branch of a typed comparison: its literal and the values
/// a reader takes from it.
#[derive(Clone, Copy)]
struct IntBranch {
    wide: bool,
    min: i128,
    max: i128,
}

impl IntBranch {
    const INT32: IntBranch = IntBranch {
        wide: false,
        min: i32::MIN as i128,
        max: i32::MAX as i128,
    };
    const INT64: IntBranch = IntBranch {
        wide: true,
        min: i64::MIN as i128,
        max: i64::MAX as i128,
    };
    /// Int64 as a double field reads it: exactly, within ±2^53.
    const INT64_EXACT: IntBranch = IntBranch {
        wide: true,
        min: -(EXACT_IN_DOUBLE as i128),
        max: EXACT_IN_DOUBLE as i128,
    };

    /// The literal of `n`, which lies in the branch's range.
    fn literal(self, n: i128) -> Value {
        let n = n.clamp(self.min, self.max);
        if self.wide {
            Value::Int64(i64::try_from(n).unwrap_or_default())
        } else {
            Value::Int32(i32::try_from(n).unwrap_or_default())
        }
    }

    fn contains(self, n: i128) -> bool {
        (self.min..=self.max).contains(&n)
    }

    /// The values in `low..=high` (`None`: unbounded on that side) as comparisons: a
    /// bound is written only where the interval has one, clipped to the branch's
    /// range. `None` when no value of the branch lies in it.
    fn interval(self, property: &str, low: Option<i128>, high: Option<i128>) -> Option<Filter> {
        let from = low.map_or(self.min, |low| low.max(self.min));
        let to = high.map_or(self.max, |high| high.min(self.max));
        if from > to {
            return None;
        }
        let compare = |op, n| compare(property, op, self.literal(n));
        Some(match (low, high) {
            (Some(_), Some(_)) if from == to => compare(CmpOp::Eq, from),
            (Some(_), Some(_)) => compare(CmpOp::Ge, from).and(compare(CmpOp::Le, to)),
            (Some(_), None) => compare(CmpOp::Ge, from),
            (None, Some(_)) => compare(CmpOp::Le, to),
            // Every value: both ends of the branch's range, so that on an engine that
            // compares across types no value beyond it slips in.
            (None, None) => compare(CmpOp::Ge, self.min).and(compare(CmpOp::Le, self.max)),
        })
    }

    /// `property op n` over the integers, on this branch.
    fn integer(self, property: &str, op: CmpOp, n: i128) -> Option<Filter> {
        // `ne` across types may hold (docs/protocol.md §6.1), so it is never sent:
        // an Int64 equal to n would pass `ne n`.
        if op != CmpOp::Ne && self.contains(n) {
            return Some(compare(property, op, self.literal(n)));
        }
        let intervals: &[(Option<i128>, Option<i128>)] = match op {
            CmpOp::Eq => &[(Some(n), Some(n))],
            CmpOp::Ne => &[(None, Some(n - 1)), (Some(n + 1), None)],
            CmpOp::Gt => &[(Some(n + 1), None)],
            CmpOp::Ge => &[(Some(n), None)],
            CmpOp::Lt => &[(None, Some(n - 1))],
            CmpOp::Le => &[(None, Some(n))],
        };
        any(intervals
            .iter()
            .filter_map(|&(low, high)| self.interval(property, low, high)))
    }

    /// The integers of the set of reals `parts`, on this branch.
    fn reals(self, property: &str, parts: &[RealInterval]) -> Option<Filter> {
        any(parts.iter().filter_map(|part| {
            let low = part.low.map(|(x, closed)| {
                if closed {
                    to_int(x.ceil())
                } else {
                    to_int(x.floor()) + 1
                }
            });
            let high = part.high.map(|(x, closed)| {
                if closed {
                    to_int(x.floor())
                } else {
                    to_int(x.ceil()) - 1
                }
            });
            self.interval(property, low, high)
        }))
    }
}

/// A set of reals between two bounds, each `(value, closed)`, or `None` for none.
#[derive(Clone, Copy)]
struct RealInterval {
    low: Option<(f64, bool)>,
    high: Option<(f64, bool)>,
}

/// The reals `v` with `v op [low, high]`, where `[low, high]` is the set of values
/// read as the operand (one point for an `f64`; the doubles that round to it for an
/// `f32`).
fn real_parts(op: CmpOp, low: f64, high: f64) -> Vec<RealInterval> {
    let interval = |low, high| RealInterval { low, high };
    match op {
        CmpOp::Eq => vec![interval(Some((low, true)), Some((high, true)))],
        CmpOp::Ne => vec![
            interval(None, Some((low, false))),
            interval(Some((high, false)), None),
        ],
        CmpOp::Gt => vec![interval(Some((high, false)), None)],
        CmpOp::Ge => vec![interval(Some((low, true)), None)],
        CmpOp::Lt => vec![interval(None, Some((low, false)))],
        CmpOp::Le => vec![interval(None, Some((high, true)))],
    }
}

/// A finite double as an integer (saturating far beyond any branch's range).
fn to_int(x: f64) -> i128 {
    // `as` saturates; every branch's range lies well inside i128.
    x as i128
}

fn compare(property: &str, op: CmpOp, value: Value) -> Filter {
    Filter::Compare {
        property: property.to_owned(),
        op,
        value,
    }
}

/// The branches, ORed; `None` when there are none.
fn any(branches: impl Iterator<Item = Filter>) -> Option<Filter> {
    branches.reduce(Filter::or)
}

/// The doubles that round to the finite `f32` `x` (round to nearest, ties to even):
/// `(lowest, highest)`; `None` for a NaN or an infinity.
fn rounds_to(x: f32) -> Option<(f64, f64)> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        // ±0, and everything up to half the smallest subnormal (a tie rounds to 0,
        // which is even).
        let half = f64::from(f32::from_bits(1)) / 2.0;
        return Some((-half, half));
    }
    let even = x.to_bits() & 1 == 0;
    let here = f64::from(x);
    // Midpoints are exact in f64 (an f32 has 24 significant bits).
    let low_mid = (neighbour(x, false) + here) / 2.0;
    let high_mid = (here + neighbour(x, true)) / 2.0;
    // A tie rounds to the even one: the midpoint is x's when x is even.
    let low = if even {
        low_mid
    } else {
        next_f64(low_mid, true)
    };
    let high = if even {
        high_mid
    } else {
        next_f64(high_mid, false)
    };
    Some((low, high))
}

/// The f32 after the non-zero `x` upwards (`up`) or downwards, as an f64; the step
/// past f32::MAX is 2^128 (which f64 holds exactly).
fn neighbour(x: f32, up: bool) -> f64 {
    let bits = x.to_bits();
    let positive = x > 0.0;
    // Away from zero is one bit pattern further, for either sign.
    let next = f32::from_bits(if up == positive { bits + 1 } else { bits - 1 });
    if next.is_infinite() {
        let edge = 2f64.powi(128);
        return if positive { edge } else { -edge };
    }
    f64::from(next)
}

/// The f64 after the non-zero `x` upwards (`up`) or downwards.
fn next_f64(x: f64, up: bool) -> f64 {
    let bits = x.to_bits();
    let away = up == (x > 0.0);
    f64::from_bits(if away { bits + 1 } else { bits - 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed_text(reads: Reads, op: CmpOp, operand: Value) -> String {
        ReadComparison::new("P", op, Some(operand), reads)
            .expand(FilterDialect::Typed)
            .to_odata()
    }

    #[test]
    fn integers_compare_as_both_integer_types() {
        assert_eq!(
            typed_text(Reads::Integer, CmpOp::Gt, Value::Int64(0)),
            "P gt 0L or P gt 0"
        );
        assert_eq!(
            typed_text(Reads::Integer, CmpOp::Eq, Value::Int32(7)),
            "P eq 7 or P eq 7L"
        );
        assert_eq!(
            typed_text(Reads::Integer, CmpOp::Ne, Value::Int32(7)),
            "P le 6 or P ge 8 or P le 6L or P ge 8L"
        );
        // Beyond Int32: no Int32 equals it, every Int32 lies below it.
        assert_eq!(
            typed_text(Reads::Integer, CmpOp::Eq, Value::Int64(1 << 40)),
            "P eq 1099511627776L"
        );
        assert_eq!(
            typed_text(Reads::Integer, CmpOp::Lt, Value::Int64(1 << 40)),
            "P lt 1099511627776L or P le 2147483647"
        );
    }

    #[test]
    fn doubles_also_match_the_integers_that_satisfy_them() {
        assert_eq!(
            typed_text(Reads::Double, CmpOp::Gt, Value::Double(100.5)),
            "P gt 100.5 or P ge 101 or P ge 101L"
        );
        assert_eq!(
            typed_text(Reads::Double, CmpOp::Eq, Value::Double(150.0)),
            "P eq 150.0 or P eq 150 or P eq 150L"
        );
        assert_eq!(
            typed_text(Reads::Double, CmpOp::Eq, Value::Double(0.5)),
            "P eq 0.5"
        );
        assert_eq!(
            typed_text(Reads::Double, CmpOp::Le, Value::Double(-0.5)),
            "P le -0.5 or P le -1 or P le -1L"
        );
    }

    #[test]
    fn singles_match_the_doubles_that_round_to_them() {
        let (low, high) = rounds_to(0.1).unwrap();
        assert!((low as f32) == 0.1 && (high as f32) == 0.1);
        assert!((next_f64(low, false) as f32) != 0.1);
        assert!((next_f64(high, true) as f32) != 0.1);
        for x in [
            1.0f32,
            -3.5,
            f32::MAX,
            f32::MIN,
            f32::from_bits(1),
            16_777_217.0,
        ] {
            let (low, high) = rounds_to(x).unwrap();
            assert_eq!(low as f32, x, "{x}: {low}");
            assert_eq!(high as f32, x, "{x}: {high}");
            assert_ne!(next_f64(low, false) as f32, x, "{x}: below {low}");
            assert_ne!(next_f64(high, true) as f32, x, "{x}: above {high}");
        }
    }

    #[test]
    fn azurite_compares_numbers_without_int64_literals() {
        let text = |reads: Reads, op, operand: Value| {
            ReadComparison::new("P", op, Some(operand), reads)
                .expand(FilterDialect::Azurite)
                .to_odata()
        };
        assert_eq!(text(Reads::Integer, CmpOp::Gt, Value::Int64(0)), "P gt 0");
        assert_eq!(
            text(Reads::Integer, CmpOp::Eq, Value::Int64(5)),
            "P ge 5 and P le 5"
        );
        assert_eq!(
            text(Reads::Double, CmpOp::Ne, Value::Double(1.5)),
            "P lt 1.5 or P gt 1.5"
        );
        assert_eq!(
            text(Reads::Written, CmpOp::Eq, Value::from("x")),
            "P eq 'x'"
        );
    }
}
