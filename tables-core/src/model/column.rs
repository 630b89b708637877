//! [`TypedColumn`]: a property of a derived entity for typed filters and projections.

use std::fmt;
use std::marker::PhantomData;

use crate::filter::{CmpOp, Column, Filter};
use crate::model::property::Property;
use crate::value::Value;

/// A stored property of a derived entity, for filters and `$select`.
///
/// `#[derive(Entity)]` generates one per stored field (`Employee::AGE`), under the
/// property's stored name and with the field's type, so a filter compares values
/// encoded exactly as they are written: a renamed field filters under its stored
/// name, a `u32` or `i64` field renders `L` literals, a unit enum compares its text.
///
/// ```
/// use tables_core::model::TypedColumn;
///
/// const AGE: TypedColumn<i32> = TypedColumn::new("Age");
/// const VISITS: TypedColumn<u32> = TypedColumn::new("Visits");
/// const NAME: TypedColumn<String> = TypedColumn::new("LastName");
/// let f = AGE.gt(30) & VISITS.le(10) & NAME.eq("Jones");
/// assert_eq!(f.to_odata(), "Age gt 30 and Visits le 10L and LastName eq 'Jones'");
/// ```
pub struct TypedColumn<T> {
    name: &'static str,
    _type: PhantomData<fn() -> T>,
}

impl<T> TypedColumn<T> {
    /// A column of the stored property `name`.
    pub const fn new(name: &'static str) -> TypedColumn<T> {
        TypedColumn {
            name,
            _type: PhantomData,
        }
    }

    /// The stored property name (for `$select`).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The untyped column.
    pub fn column(&self) -> Column {
        Column::new(self.name)
    }
}

impl<T> Clone for TypedColumn<T> {
    fn clone(&self) -> TypedColumn<T> {
        *self
    }
}

impl<T> Copy for TypedColumn<T> {}

impl<T> fmt::Debug for TypedColumn<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TypedColumn").field(&self.name).finish()
    }
}

/// The points of a data series (`#[entity(series)] hourly: [u32; 24]`): one stored
/// property per point, each a [`TypedColumn<T>`] of its own.
///
/// ```
/// use tables_core::model::SeriesColumn;
///
/// const HOURLY: SeriesColumn<u32> = SeriesColumn::new(&["hourly_00", "hourly_01"]);
/// assert_eq!(HOURLY.len(), 2);
/// assert_eq!(HOURLY.point(1).map(|c| c.name()), Some("hourly_01"));
/// assert!(HOURLY.point(2).is_none());
/// ```
pub struct SeriesColumn<T> {
    points: &'static [&'static str],
    _type: PhantomData<fn() -> T>,
}

impl<T> SeriesColumn<T> {
    /// A series stored under these property names, in point order.
    pub const fn new(points: &'static [&'static str]) -> SeriesColumn<T> {
        SeriesColumn {
            points,
            _type: PhantomData,
        }
    }

    /// How many points the series has.
    pub const fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the series has no points (never, for a derived one).
    pub const fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The column of point `index`; `None` past the end.
    pub fn point(&self, index: usize) -> Option<TypedColumn<T>> {
        self.points.get(index).map(|name| TypedColumn::new(name))
    }

    /// The stored property names, in point order (for `$select`).
    pub const fn names(&self) -> &'static [&'static str] {
        self.points
    }
}

impl<T> Clone for SeriesColumn<T> {
    fn clone(&self) -> SeriesColumn<T> {
        *self
    }
}

impl<T> Copy for SeriesColumn<T> {}

impl<T> fmt::Debug for SeriesColumn<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SeriesColumn").field(&self.points).finish()
    }
}

/// The column of an `#[entity(encrypted)]` field: its stored name (for `$select`),
/// and no filter. The service stores only ciphertext, a fresh one per write, so no
/// comparison of it means anything; each comparison method is a compile error that
/// says so.
///
/// ```compile_fail
/// use tables_core::model::EncryptedColumn;
///
/// const SSN: EncryptedColumn = EncryptedColumn::new("Ssn");
/// let _ = SSN.eq("123-45-6789"); // error: an encrypted field can't be filtered on
/// ```
#[derive(Debug, Clone, Copy)]
pub struct EncryptedColumn {
    name: &'static str,
}

/// What an encrypted column would compare with: nothing implements it, so every
/// comparison of an [`EncryptedColumn`] is a compile error naming the reason.
#[diagnostic::on_unimplemented(
    message = "an encrypted field can't be filtered on: the service stores only its ciphertext",
    label = "a filter on an encrypted column",
    note = "filter on another field, or read the entities and compare the decrypted values"
)]
pub trait EncryptedFieldsCannotBeFiltered {
    /// Never called: no type implements the trait.
    fn into_filter(self, column: &'static str) -> Filter;
}

impl EncryptedColumn {
    /// The column of the stored property `name`.
    pub const fn new(name: &'static str) -> EncryptedColumn {
        EncryptedColumn { name }
    }

    /// The stored property name (for `$select`).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Not available: see [`EncryptedColumn`].
    pub fn eq<V: EncryptedFieldsCannotBeFiltered>(&self, value: V) -> Filter {
        value.into_filter(self.name)
    }

    /// Not available: see [`EncryptedColumn`].
    pub fn ne<V: EncryptedFieldsCannotBeFiltered>(&self, value: V) -> Filter {
        value.into_filter(self.name)
    }

    /// Not available: see [`EncryptedColumn`].
    pub fn gt<V: EncryptedFieldsCannotBeFiltered>(&self, value: V) -> Filter {
        value.into_filter(self.name)
    }

    /// Not available: see [`EncryptedColumn`].
    pub fn lt<V: EncryptedFieldsCannotBeFiltered>(&self, value: V) -> Filter {
        value.into_filter(self.name)
    }

    /// Not available: see [`EncryptedColumn`].
    pub fn starts_with<V: EncryptedFieldsCannotBeFiltered>(&self, value: V) -> Filter {
        value.into_filter(self.name)
    }
}

/// A value a [`TypedColumn<T>`] compares with: a `T`, or for text columns a `&str`.
pub trait Operand<T> {
    /// The value as the column stores it; `None` when it has no stored form (a
    /// `u64` above `i64::MAX`, which compares above every stored value).
    fn into_operand(self) -> Option<Value>;
}

impl<T: Property<Scalar = T>> Operand<T> for T {
    fn into_operand(self) -> Option<Value> {
        self.to_value().ok().flatten()
    }
}

/// A column of an optional type compares with the inner value.
impl<T: Property<Scalar = T>> Operand<Option<T>> for T {
    fn into_operand(self) -> Option<Value> {
        self.to_value().ok().flatten()
    }
}

impl Operand<Option<String>> for &str {
    fn into_operand(self) -> Option<Value> {
        Some(Value::String(self.to_owned()))
    }
}

impl Operand<String> for &str {
    fn into_operand(self) -> Option<Value> {
        Some(Value::String(self.to_owned()))
    }
}

impl Operand<String> for &String {
    fn into_operand(self) -> Option<Value> {
        Some(Value::String(self.clone()))
    }
}

/// A property type whose stored values the service compares like the Rust values,
/// so typed filters on it are faithful.
///
/// Every property type is, except `rust_decimal::Decimal`: it is stored as exact
/// text, which the service would compare as text (`"10" < "9"`, `"1.50" ne "1.5"`).
/// `#[derive(Property)]` implements it for enums and for newtypes of a filterable
/// type.
#[diagnostic::on_unimplemented(
    message = "a filter can't compare `{Self}` values: the service would not compare them like the values",
    label = "no typed comparisons for this column",
    note = "rust_decimal::Decimal is stored as exact text (so .NET and Python read it back exactly), and the \
            service compares text as text (\"10\" < \"9\"); filter on another column and compare decimals \
            after reading, or store a scaled integer with #[entity(with = ..)]"
)]
pub trait Filterable: Property {}

macro_rules! filterable {
    ($($t:ty),* $(,)?) => {$( impl Filterable for $t {} )*};
}

filterable!(
    String,
    Box<str>,
    std::sync::Arc<str>,
    std::borrow::Cow<'static, str>,
    char,
    bool,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    f32,
    f64,
    Vec<u8>,
    uuid::Uuid,
    crate::DateTime,
    std::time::Duration,
);

#[cfg(feature = "bytes")]
filterable!(bytes::Bytes);
#[cfg(feature = "chrono")]
filterable!(chrono::DateTime<chrono::Utc>, chrono::NaiveDate);
#[cfg(feature = "time")]
filterable!(time::OffsetDateTime, time::Date);

impl<T: Filterable> Filterable for Option<T> {}

// The bound sits on each method, not the impl, so a column of a type that isn't
// `Filterable` gets that trait's message (E0277), not "method not found".
impl<T: Property> TypedColumn<T> {
    /// `self op value`.
    pub fn compare(&self, op: CmpOp, value: impl Operand<T>) -> Filter
    where
        T: Filterable,
    {
        match value.into_operand() {
            Some(value) => Filter::Compare {
                property: self.name.to_owned(),
                op,
                value,
            },
            // Only a u64 beyond i64::MAX has no stored form; it is above every
            // stored value of the column.
            None => {
                let min = Filter::Compare {
                    property: self.name.to_owned(),
                    op: CmpOp::Lt,
                    value: Value::Int64(i64::MIN),
                };
                let any = Filter::Compare {
                    property: self.name.to_owned(),
                    op: CmpOp::Ge,
                    value: Value::Int64(i64::MIN),
                };
                match op {
                    // Nothing stored equals or exceeds it.
                    CmpOp::Eq | CmpOp::Gt | CmpOp::Ge => min,
                    // Every stored value differs from and lies below it.
                    CmpOp::Ne | CmpOp::Lt | CmpOp::Le => any,
                }
            }
        }
    }

    /// `self eq value`.
    pub fn eq(&self, value: impl Operand<T>) -> Filter
    where
        T: Filterable,
    {
        self.compare(CmpOp::Eq, value)
    }

    /// `self ne value` (matches only rows that have the property).
    pub fn ne(&self, value: impl Operand<T>) -> Filter
    where
        T: Filterable,
    {
        self.compare(CmpOp::Ne, value)
    }

    /// `self gt value`.
    pub fn gt(&self, value: impl Operand<T>) -> Filter
    where
        T: Filterable,
    {
        self.compare(CmpOp::Gt, value)
    }

    /// `self ge value`.
    pub fn ge(&self, value: impl Operand<T>) -> Filter
    where
        T: Filterable,
    {
        self.compare(CmpOp::Ge, value)
    }

    /// `self lt value`.
    pub fn lt(&self, value: impl Operand<T>) -> Filter
    where
        T: Filterable,
    {
        self.compare(CmpOp::Lt, value)
    }

    /// `self le value`.
    pub fn le(&self, value: impl Operand<T>) -> Filter
    where
        T: Filterable,
    {
        self.compare(CmpOp::Le, value)
    }

    /// `low le self and self le high`.
    pub fn between(&self, low: impl Operand<T>, high: impl Operand<T>) -> Filter
    where
        T: Filterable,
    {
        self.ge(low).and(self.le(high))
    }
}

impl TypedColumn<String> {
    /// Text starting with `prefix`, as the `ge`/`lt` pair the service understands.
    pub fn starts_with(&self, prefix: &str) -> Filter {
        self.column().starts_with(prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DynamicEntity;

    #[test]
    fn columns_encode_like_properties() {
        const AGE: TypedColumn<u32> = TypedColumn::new("Age");
        let stored = DynamicEntity::new("p", "r").with("Age", 7u32.to_value().unwrap().unwrap());
        assert!(AGE.eq(7).matches(&stored));
        assert!(AGE.gt(6).matches(&stored));
        assert_eq!(AGE.eq(7).to_odata(), "Age eq 7L");
    }

    #[test]
    fn u64_beyond_i64_compares_above_everything() {
        const N: TypedColumn<u64> = TypedColumn::new("N");
        let stored = DynamicEntity::new("p", "r").with("N", i64::MAX);
        assert!(!N.eq(u64::MAX).matches(&stored));
        assert!(!N.ge(u64::MAX).matches(&stored));
        assert!(N.lt(u64::MAX).matches(&stored));
        assert!(N.ne(u64::MAX).matches(&stored));
        assert!(!N.ne(u64::MAX).matches(&DynamicEntity::new("p", "r")));
    }
}
