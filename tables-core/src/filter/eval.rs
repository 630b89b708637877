//! Evaluating filters against entities with the service's semantics.

use std::cmp::Ordering;

use crate::datetime::DateTime;
use crate::entity::DynamicEntity;
use crate::filter::ast::{CmpOp, Filter};
use crate::filter::build::{PARTITION_KEY, ROW_KEY, TIMESTAMP};
use crate::filter::reads::FilterDialect;
use crate::key::cmp_ordinal;
use crate::value::Value;

/// A property of an entity as a comparison sees it, borrowed.
enum Prop<'a> {
    Str(&'a str),
    DateTime(DateTime),
    Value(&'a Value),
}

fn lookup<'a>(entity: &'a DynamicEntity, name: &str) -> Option<Prop<'a>> {
    match name {
        PARTITION_KEY => Some(Prop::Str(&entity.partition_key)),
        ROW_KEY => Some(Prop::Str(&entity.row_key)),
        TIMESTAMP => entity.timestamp.map(Prop::DateTime),
        _ => entity.get(name).map(Prop::Value),
    }
}

/// The order of a property and a constant of the same Edm type; `None` when the
/// types differ or the values are unordered (NaN).
fn compare(prop: &Prop<'_>, constant: &Value) -> Option<Ordering> {
    match (prop, constant) {
        (Prop::Str(a), Value::String(b)) => Some(cmp_ordinal(a, b)),
        (Prop::DateTime(a), Value::DateTime(b)) => Some(a.cmp(b)),
        (Prop::Value(a), b) => match (a, b) {
            (Value::String(a), Value::String(b)) => Some(cmp_ordinal(a, b)),
            (Value::Int32(a), Value::Int32(b)) => Some(a.cmp(b)),
            (Value::Int64(a), Value::Int64(b)) => Some(a.cmp(b)),
            (Value::Double(a), Value::Double(b)) => a.partial_cmp(b),
            (Value::Boolean(a), Value::Boolean(b)) => Some(a.cmp(b)),
            (Value::DateTime(a), Value::DateTime(b)) => Some(a.cmp(b)),
            (Value::Guid(a), Value::Guid(b)) => Some(a.cmp(b)),
            (Value::Binary(a), Value::Binary(b)) => Some(a.as_slice().cmp(b.as_slice())),
            _ => None,
        },
        _ => None,
    }
}

impl Filter {
    /// Whether `entity` satisfies the filter, as the service decides it.
    ///
    /// - `PartitionKey` and `RowKey` are String properties; `Timestamp` is the
    ///   entity's timestamp (a DateTime; absent before the entity was stored).
    /// - Typing is strict, as the service's (docs/protocol.md §6.1): `eq`, `gt`,
    ///   `ge`, `lt` and `le` hold only when the property has the constant's Edm
    ///   type (no coercion between Int32, Int64, Double and String), `ne` holds for
    ///   a property of another type, and a missing property never matches, not even
    ///   with `ne`.
    /// - Strings compare by UTF-16 code units ([`crate::key::cmp_ordinal`]), binary
    ///   bytewise, GUIDs by their 16 bytes in textual order, booleans `false < true`,
    ///   doubles by IEEE 754 (NaN is unordered: only `ne` holds).
    /// - `and`, `or` and `not` are plain boolean logic over those results.
    ///
    /// ```
    /// use tables_core::{col, DynamicEntity};
    ///
    /// let e = DynamicEntity::new("Sales", "1").with("Age", 34);
    /// assert!(col("Age").gt(30).matches(&e));
    /// assert!(!col("Age").gt(30i64).matches(&e)); // Int64 constant, Int32 property
    /// assert!(col("Age").ne(34i64).matches(&e)); // another type: never equal
    /// assert!(!col("Missing").ne(1).matches(&e));
    /// assert!((!col("Missing").eq(1)).matches(&e));
    /// ```
    pub fn matches(&self, entity: &DynamicEntity) -> bool {
        match self {
            Filter::Compare {
                property,
                op,
                value,
            } => {
                let Some(prop) = lookup(entity, property) else {
                    return false;
                };
                match compare(&prop, value) {
                    Some(order) => match op {
                        CmpOp::Eq => order == Ordering::Equal,
                        CmpOp::Ne => order != Ordering::Equal,
                        CmpOp::Gt => order == Ordering::Greater,
                        CmpOp::Ge => order != Ordering::Less,
                        CmpOp::Lt => order == Ordering::Less,
                        CmpOp::Le => order != Ordering::Greater,
                    },
                    // Values of another type, and unordered values of the same type
                    // (NaN), differ.
                    None => *op == CmpOp::Ne,
                }
            }
            Filter::And(left, right) => left.matches(entity) && right.matches(entity),
            Filter::Or(left, right) => left.matches(entity) || right.matches(entity),
            Filter::Not(inner) => !inner.matches(entity),
            // As the service evaluates what is sent for it.
            Filter::Read(read) => read.expand(FilterDialect::Typed).matches(entity),
            Filter::Literal(b) => *b,
            // Text the parser does not read matches nothing here: engines refuse
            // such a filter before evaluating ([`Filter::unparsed_part`]).
            Filter::Unchecked(raw) => raw.parsed().is_some_and(|f| f.matches(entity)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::build::col;

    fn employee() -> DynamicEntity {
        let mut e = DynamicEntity::new("Sales", "empid_000223")
            .with("Age", 34)
            .with("Big", 5_000_000_000i64)
            .with("Ratio", 0.5)
            .with("Active", true)
            .with("LastName", "Jones")
            .with("Photo", vec![1u8, 2, 3])
            .with("Id", uuid::Uuid::from_u128(7))
            .with("Nan", f64::NAN);
        e.timestamp = DateTime::from_ticks(DateTime::UNIX_EPOCH_TICKS);
        e
    }

    #[test]
    fn keys_and_timestamp_are_typed_properties() {
        let e = employee();
        assert!(col("PartitionKey").eq("Sales").matches(&e));
        assert!(col("RowKey").ge("empid_").matches(&e));
        assert!(!col("RowKey").eq(223).matches(&e));
        let epoch = DateTime::from_ticks(DateTime::UNIX_EPOCH_TICKS).expect("in range");
        assert!(col("Timestamp").eq(epoch).matches(&e));
        assert!(!col("Timestamp").eq("1970").matches(&e));
        let mut unsaved = e.clone();
        unsaved.timestamp = None;
        assert!(!col("Timestamp").ne(epoch).matches(&unsaved));
    }

    #[test]
    fn typing_is_strict_and_missing_never_matches() {
        let e = employee();
        assert!(col("Age").eq(34).matches(&e));
        assert!(!col("Age").eq(34i64).matches(&e));
        assert!(!col("Age").eq(34.0).matches(&e));
        assert!(col("Age").ne(34i64).matches(&e));
        assert!(col("Age").ne(34.0).matches(&e));
        assert!(col("Age").ne("34").matches(&e));
        assert!(!col("Age").gt("30").matches(&e));
        assert!(col("Big").gt(4_000_000_000i64).matches(&e));
        assert!(!col("Nope").ne(1).matches(&e));
        assert!(!col("Nope").eq(1).matches(&e));
    }

    #[test]
    fn every_type_orders_as_the_service_does() {
        let e = employee();
        assert!(col("Ratio").lt(0.75).matches(&e));
        assert!(col("Ratio").le(0.5).matches(&e));
        assert!(col("Active").gt(false).matches(&e));
        assert!(!col("Active").lt(true).matches(&e));
        assert!(col("LastName").lt("Jonez").matches(&e));
        assert!(col("Photo").gt(vec![1u8, 2]).matches(&e));
        assert!(col("Photo").lt(vec![1u8, 3]).matches(&e));
        assert!(col("Id").eq(uuid::Uuid::from_u128(7)).matches(&e));
        assert!(col("Id").gt(uuid::Uuid::from_u128(6)).matches(&e));
        // Strings use UTF-16 order, not Rust's str order.
        let odd = DynamicEntity::new("p", "\u{FF01}");
        assert!(col("RowKey").gt("\u{1F600}").matches(&odd));
    }

    #[test]
    fn nan_only_satisfies_ne() {
        let e = employee();
        for op in [CmpOp::Eq, CmpOp::Gt, CmpOp::Ge, CmpOp::Lt, CmpOp::Le] {
            assert!(!col("Nan").compare(op, 1.0).matches(&e), "{op:?}");
            assert!(!col("Ratio").compare(op, f64::NAN).matches(&e), "{op:?}");
        }
        assert!(col("Nan").ne(1.0).matches(&e));
        assert!(col("Nan").ne(f64::NAN).matches(&e));
        assert!(col("Nan").ne(1).matches(&e));
    }

    #[test]
    fn boolean_logic() {
        let e = employee();
        let yes = col("Age").eq(34);
        let no = col("Age").eq(35);
        assert!((yes.clone() & yes.clone()).matches(&e));
        assert!(!(yes.clone() & no.clone()).matches(&e));
        assert!((no.clone() | yes.clone()).matches(&e));
        assert!(!(no.clone() | no.clone()).matches(&e));
        assert!((!no).matches(&e));
        assert!(!(!yes).matches(&e));
        assert!(Filter::Literal(true).matches(&e));
        assert!(!Filter::Literal(false).matches(&e));
    }
}
