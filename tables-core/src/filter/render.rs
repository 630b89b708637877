//! Rendering filters as OData `$filter` text.
//!
//! The output is what the service expects (before URL encoding) and what
//! [`Filter::parse`] reads back into the same tree: parentheses are added exactly
//! where the left-associative `or` < `and` < `not` grammar needs them.

use std::fmt;

use crate::filter::ast::Filter;
use crate::filter::reads::FilterDialect;
use crate::value::Value;

/// Binding strength of a node, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    /// Unchecked text: its structure is unknown, so it is parenthesised whenever
    /// it is combined.
    Raw,
    Or,
    And,
    Atom,
}

fn prec(filter: &Filter) -> Prec {
    match filter {
        Filter::Read(read) => prec(&read.expand(FilterDialect::Typed)),
        Filter::Unchecked(_) => Prec::Raw,
        Filter::Or(..) => Prec::Or,
        Filter::And(..) => Prec::And,
        // `not` always wraps its operand in parentheses, so it is atomic.
        Filter::Not(_) | Filter::Compare { .. } | Filter::Literal(_) => Prec::Atom,
    }
}

/// Writes `child`, parenthesised if it binds less tightly than `min`.
fn write_child(f: &mut fmt::Formatter<'_>, child: &Filter, min: Prec) -> fmt::Result {
    if prec(child) < min {
        write!(f, "({child})")
    } else {
        write!(f, "{child}")
    }
}

impl fmt::Display for Filter {
    /// The OData `$filter` text, e.g. `PartitionKey eq 'Sales' and Age gt 30`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Filter::Compare {
                property,
                op,
                value,
            } => {
                write!(f, "{property} {} ", op.keyword())?;
                write_literal(f, value)
            }
            // Left-associative: the left child may be of the same operator, the
            // right child must bind tighter.
            Filter::And(left, right) => {
                write_child(f, left, Prec::And)?;
                f.write_str(" and ")?;
                write_child(f, right, Prec::Atom)
            }
            Filter::Or(left, right) => {
                write_child(f, left, Prec::Or)?;
                f.write_str(" or ")?;
                write_child(f, right, Prec::And)
            }
            // Always parenthesised: in OData `not` binds tighter than a comparison.
            Filter::Not(inner) => write!(f, "not ({inner})"),
            Filter::Literal(b) => f.write_str(if *b { "true" } else { "false" }),
            Filter::Unchecked(raw) => f.write_str(raw.text()),
            Filter::Read(read) => write!(f, "{}", read.expand(FilterDialect::Typed)),
        }
    }
}

impl Filter {
    /// The OData `$filter` text (same as `to_string()`).
    ///
    /// ```
    /// use tables_core::col;
    ///
    /// let f = col("LastName").eq("O'Brien") | col("Score").gt(10i64);
    /// assert_eq!(f.to_odata(), "LastName eq 'O''Brien' or Score gt 10L");
    /// ```
    pub fn to_odata(&self) -> String {
        self.to_string()
    }
}

/// Writes a constant in the OData literal syntax of its Edm type.
pub(crate) fn write_literal(f: &mut impl fmt::Write, value: &Value) -> fmt::Result {
    match value {
        Value::String(s) => {
            f.write_char('\'')?;
            for (i, part) in s.split('\'').enumerate() {
                if i > 0 {
                    f.write_str("''")?;
                }
                f.write_str(part)?;
            }
            f.write_char('\'')
        }
        Value::Int32(n) => write!(f, "{n}"),
        Value::Int64(n) => write!(f, "{n}L"),
        Value::Double(x) => write_double(f, *x),
        Value::Boolean(b) => f.write_str(if *b { "true" } else { "false" }),
        Value::DateTime(dt) => write!(f, "datetime'{dt}'"),
        Value::Guid(g) => write!(f, "guid'{}'", g.hyphenated()),
        Value::Binary(bytes) => {
            f.write_str("X'")?;
            for byte in bytes {
                write!(f, "{byte:02x}")?;
            }
            f.write_char('\'')
        }
    }
}

/// A double that always reads back as a Double: it has a `.` or an exponent
/// (`1.0`, `2.5E+20`, `1E-7`). The shortest text that round-trips is used.
/// NaN and the infinities have no literal the service accepts;
/// [`Filter::validate`] rejects them, and they render as OData's `NaN`, `INF`,
/// `-INF` only so that `Display` is total.
fn write_double(f: &mut impl fmt::Write, x: f64) -> fmt::Result {
    if x.is_nan() {
        return f.write_str("NaN");
    }
    if x.is_infinite() {
        return f.write_str(if x > 0.0 { "INF" } else { "-INF" });
    }
    // `Debug` prints the shortest round-tripping form, always with a `.` or an `e`.
    let text = format!("{x:?}");
    match text.split_once('e') {
        Some((mantissa, exponent)) => match exponent.strip_prefix('-') {
            Some(digits) => write!(f, "{mantissa}E-{digits}"),
            None => write!(f, "{mantissa}E+{exponent}"),
        },
        None => f.write_str(&text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::DateTime;
    use crate::filter::build::col;

    fn literal(value: Value) -> String {
        let mut out = String::new();
        write_literal(&mut out, &value).expect("writing to a String cannot fail");
        out
    }

    #[test]
    fn literals_use_the_service_syntax() {
        assert_eq!(literal(Value::String("O'Brien".into())), "'O''Brien'");
        assert_eq!(literal(Value::String("''".into())), "''''''");
        assert_eq!(literal(Value::Int32(-42)), "-42");
        assert_eq!(literal(Value::Int64(42)), "42L");
        assert_eq!(literal(Value::Boolean(false)), "false");
        assert_eq!(literal(Value::Binary(vec![0x0a, 0x0b])), "X'0a0b'");
        let guid = uuid::Uuid::from_u128(0xa455c695_df98_5678_aaaa_81d3367e5a34);
        assert_eq!(
            literal(Value::Guid(guid)),
            "guid'a455c695-df98-5678-aaaa-81d3367e5a34'"
        );
        let dt: DateTime = "2008-07-10T00:00:00Z".parse().expect("valid datetime");
        assert_eq!(
            literal(Value::DateTime(dt)),
            "datetime'2008-07-10T00:00:00.0000000Z'"
        );
    }

    #[test]
    fn doubles_always_read_back_as_doubles() {
        assert_eq!(literal(Value::Double(1.0)), "1.0");
        assert_eq!(literal(Value::Double(-2.5)), "-2.5");
        assert_eq!(literal(Value::Double(2.5e20)), "2.5E+20");
        assert_eq!(literal(Value::Double(1e-7)), "1E-7");
        assert_eq!(literal(Value::Double(f64::NAN)), "NaN");
        for x in [0.1, 1e16, 123456.789, f64::MAX, f64::MIN_POSITIVE, -0.0] {
            let text = literal(Value::Double(x));
            assert!(text.contains('.') || text.contains('E'), "{text}");
        }
    }

    #[test]
    fn parentheses_keep_the_tree_shape() {
        let (a, b, c) = (col("A").eq(1), col("B").eq(2), col("C").eq(3));
        assert_eq!(
            (a.clone() & b.clone() & c.clone()).to_odata(),
            "A eq 1 and B eq 2 and C eq 3"
        );
        let and = |x: &Filter, y: &Filter| Filter::And(Box::new(x.clone()), Box::new(y.clone()));
        let or = |x: &Filter, y: &Filter| Filter::Or(Box::new(x.clone()), Box::new(y.clone()));
        assert_eq!(
            and(&a, &and(&b, &c)).to_odata(),
            "A eq 1 and (B eq 2 and C eq 3)"
        );
        assert_eq!(
            or(&a, &or(&b, &c)).to_odata(),
            "A eq 1 or (B eq 2 or C eq 3)"
        );
        assert_eq!(
            ((a.clone() | b.clone()) & c.clone()).to_odata(),
            "(A eq 1 or B eq 2) and C eq 3"
        );
        assert_eq!(
            (a.clone() | (b.clone() & c.clone())).to_odata(),
            "A eq 1 or B eq 2 and C eq 3"
        );
        assert_eq!(
            (!(a.clone() & b) | !a).to_odata(),
            "not (A eq 1 and B eq 2) or not (A eq 1)"
        );
        assert_eq!(Filter::Literal(true).to_odata(), "true");
    }
}
