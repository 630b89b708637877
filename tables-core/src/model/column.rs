//! [`TypedColumn`]: a property of a derived entity for typed filters and projections,
//! and [`TypedFilter`]: a filter on the columns of one entity type.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{BitAnd, BitOr, Deref, Not};

use crate::filter::Reads;
use crate::filter::{CmpOp, Column, Filter, ReadComparison};
use crate::model::property::Property;
use crate::value::Value;

/// A stored property of entity type `E` holding `T` values, for filters and
/// `$select`.
///
/// `#[derive(Entity)]` generates one per stored field (`Employee::AGE`, a
/// `TypedColumn<Employee, i32>`), under the property's stored name and with the
/// field's type, so a filter compares values encoded as they are written (a renamed
/// field filters under its stored name, a unit enum compares its text) and matches
/// every row the field's reader reads: an integer field's filter also matches the
/// other integer type, a float field's also matches whole numbers stored as integers
/// ([`Reads`](crate::model::Reads); the cost is a longer filter, which counts
/// towards the service's 15 comparisons). Its filters are [`TypedFilter<E>`]s, which
/// a query for `E` (or for a union with an `E` variant) takes and a query for
/// another type refuses at compile time.
///
/// ```
/// use tables_core::model::TypedColumn;
///
/// struct Employee;
/// const AGE: TypedColumn<Employee, i32> = TypedColumn::new("Age");
/// const NAME: TypedColumn<Employee, String> = TypedColumn::new("LastName");
/// let f = AGE.gt(30) & NAME.eq("Jones");
/// assert_eq!(f.to_odata(), "(Age gt 30 or Age gt 30L) and LastName eq 'Jones'");
/// ```
pub struct TypedColumn<E, T> {
    name: &'static str,
    _type: PhantomData<fn() -> (E, T)>,
}

impl<E, T> TypedColumn<E, T> {
    /// A column of the stored property `name`.
    pub const fn new(name: &'static str) -> TypedColumn<E, T> {
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

impl<E, T> Clone for TypedColumn<E, T> {
    fn clone(&self) -> TypedColumn<E, T> {
        *self
    }
}

impl<E, T> Copy for TypedColumn<E, T> {}

impl<E, T> fmt::Debug for TypedColumn<E, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TypedColumn").field(&self.name).finish()
    }
}

/// The points of a data series (`#[entity(series)] hourly: [u32; 24]`) of entity
/// type `E`: one stored property per point, each a [`TypedColumn<E, T>`] of its own.
///
/// ```
/// use tables_core::model::SeriesColumn;
///
/// struct Meter;
/// const HOURLY: SeriesColumn<Meter, u32> = SeriesColumn::new(&["hourly_00", "hourly_01"]);
/// assert_eq!(HOURLY.len(), 2);
/// assert_eq!(HOURLY.point(1).map(|c| c.name()), Some("hourly_01"));
/// assert!(HOURLY.point(2).is_none());
/// ```
pub struct SeriesColumn<E, T> {
    points: &'static [&'static str],
    _type: PhantomData<fn() -> (E, T)>,
}

impl<E, T> SeriesColumn<E, T> {
    /// A series stored under these property names, in point order.
    pub const fn new(points: &'static [&'static str]) -> SeriesColumn<E, T> {
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
    pub fn point(&self, index: usize) -> Option<TypedColumn<E, T>> {
        self.points.get(index).map(|name| TypedColumn::new(name))
    }

    /// The stored property names, in point order (for `$select`).
    pub const fn names(&self) -> &'static [&'static str] {
        self.points
    }
}

impl<E, T> Clone for SeriesColumn<E, T> {
    fn clone(&self) -> SeriesColumn<E, T> {
        *self
    }
}

impl<E, T> Copy for SeriesColumn<E, T> {}

impl<E, T> fmt::Debug for SeriesColumn<E, T> {
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

/// A value a [`TypedColumn`] of `T` values compares with: a `T`, or for text
/// columns a `&str`.
#[diagnostic::on_unimplemented(
    message = "a column of `{T}` values can't be compared with a `{Self}`",
    label = "expected a `{T}` here",
    note = "write the value as the column's type (`100.0` for an f64 column, `100u32` for a u32 column) \
            or convert it (`f64::from(n)`, `u32::try_from(n)?`); text columns also take a &str"
)]
pub trait Operand<T> {
    /// The value as the column stores it.
    ///
    /// # Errors
    ///
    /// The type's reason when the value has no stored form (a `u64` above
    /// `i64::MAX`, a date outside the service's range).
    fn into_operand(self) -> crate::Result<Option<Value>>;
}

impl<T: Property<Scalar = T>> Operand<T> for T {
    fn into_operand(self) -> crate::Result<Option<Value>> {
        self.to_value()
    }
}

/// A column of an optional type compares with the inner value.
impl<T: Property<Scalar = T>> Operand<Option<T>> for T {
    fn into_operand(self) -> crate::Result<Option<Value>> {
        self.to_value()
    }
}

impl Operand<Option<String>> for &str {
    fn into_operand(self) -> crate::Result<Option<Value>> {
        Ok(Some(Value::String(self.to_owned())))
    }
}

impl Operand<String> for &str {
    fn into_operand(self) -> crate::Result<Option<Value>> {
        Ok(Some(Value::String(self.to_owned())))
    }
}

impl Operand<String> for &String {
    fn into_operand(self) -> crate::Result<Option<Value>> {
        Ok(Some(Value::String(self.clone())))
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
impl<E, T: Property> TypedColumn<E, T> {
    /// `self op value`, over every stored value the field's reader reads
    /// ([`Property::READS`]): one comparison per stored type it accepts, ORed.
    pub fn compare(&self, op: CmpOp, value: impl Operand<T>) -> TypedFilter<E>
    where
        T: Filterable,
    {
        let filter = match (T::READS, value.into_operand()) {
            (Reads::Written, Ok(Some(value))) => Filter::Compare {
                property: self.name.to_owned(),
                op,
                value,
            },
            (reads, Ok(Some(value))) => {
                Filter::Read(ReadComparison::new(self.name, op, Some(value), reads))
            }
            // An integer too large for Int64 (a u64, a Duration): above every stored
            // value, and compared as such.
            (Reads::Integer, Err(_) | Ok(None)) => {
                Filter::Read(ReadComparison::new(self.name, op, None, Reads::Integer))
            }
            // No stored form: the query fails before sending, saying why.
            (reads, Err(error)) => Filter::Read(ReadComparison::refused(
                self.name,
                op,
                reads,
                error.message().to_owned(),
            )),
            (reads, Ok(None)) => Filter::Read(ReadComparison::refused(
                self.name,
                op,
                reads,
                "the value is absent (None); compare with a value, or filter for rows without \
                 the property by reading them"
                    .to_owned(),
            )),
        };
        TypedFilter::new(filter)
    }

    /// `self eq value`.
    pub fn eq(&self, value: impl Operand<T>) -> TypedFilter<E>
    where
        T: Filterable,
    {
        self.compare(CmpOp::Eq, value)
    }

    /// `self ne value` (matches only rows that have the property).
    pub fn ne(&self, value: impl Operand<T>) -> TypedFilter<E>
    where
        T: Filterable,
    {
        self.compare(CmpOp::Ne, value)
    }

    /// `self gt value`.
    pub fn gt(&self, value: impl Operand<T>) -> TypedFilter<E>
    where
        T: Filterable,
    {
        self.compare(CmpOp::Gt, value)
    }

    /// `self ge value`.
    pub fn ge(&self, value: impl Operand<T>) -> TypedFilter<E>
    where
        T: Filterable,
    {
        self.compare(CmpOp::Ge, value)
    }

    /// `self lt value`.
    pub fn lt(&self, value: impl Operand<T>) -> TypedFilter<E>
    where
        T: Filterable,
    {
        self.compare(CmpOp::Lt, value)
    }

    /// `self le value`.
    pub fn le(&self, value: impl Operand<T>) -> TypedFilter<E>
    where
        T: Filterable,
    {
        self.compare(CmpOp::Le, value)
    }

    /// `low le self and self le high`.
    pub fn between(&self, low: impl Operand<T>, high: impl Operand<T>) -> TypedFilter<E>
    where
        T: Filterable,
    {
        self.ge(low).and(self.le(high))
    }
}

impl<E> TypedColumn<E, String> {
    /// Text starting with `prefix`, as the `ge`/`lt` pair the service understands.
    pub fn starts_with(&self, prefix: &str) -> TypedFilter<E> {
        TypedFilter::new(self.column().starts_with(prefix))
    }
}

/// A filter on the columns of entity type `E`, as [`TypedColumn`] comparisons build
/// it. It reads as the [`Filter`] it holds (`to_odata`, `matches`), combines with
/// `&`, `|` and `!`, and a query for `E` takes it ([`FilterFor`]); a query for
/// another type refuses it at compile time, so a column of one type never filters
/// the rows of another.
///
/// ```
/// use tables_core::model::{TypedColumn, TypedFilter};
///
/// struct Order;
/// const STATUS: TypedColumn<Order, String> = TypedColumn::new("Status");
/// let open: TypedFilter<Order> = STATUS.eq("open") | STATUS.eq("held");
/// assert_eq!(open.to_odata(), "Status eq 'open' or Status eq 'held'");
/// ```
pub struct TypedFilter<E> {
    filter: Filter,
    _owner: PhantomData<fn() -> E>,
}

impl<E> TypedFilter<E> {
    /// `filter`, vouched for as a filter on `E`'s columns.
    pub fn new(filter: Filter) -> TypedFilter<E> {
        TypedFilter {
            filter,
            _owner: PhantomData,
        }
    }

    /// The untyped filter.
    pub fn into_filter(self) -> Filter {
        self.filter
    }

    /// `self and other`.
    #[must_use]
    pub fn and(self, other: impl Into<Filter>) -> TypedFilter<E> {
        TypedFilter::new(self.filter.and(other.into()))
    }

    /// `self or other`.
    #[must_use]
    pub fn or(self, other: impl Into<Filter>) -> TypedFilter<E> {
        TypedFilter::new(self.filter.or(other.into()))
    }

    /// `not self`.
    #[must_use]
    pub fn negate(self) -> TypedFilter<E> {
        TypedFilter::new(self.filter.negate())
    }

    /// The same filter as one on `U`, which takes it: a variant's filter as its
    /// union's, so that filters on two variants combine
    /// (`a.within::<Partition>() | b.within::<Partition>()`).
    pub fn within<U>(self) -> TypedFilter<U>
    where
        TypedFilter<E>: FilterFor<U>,
    {
        TypedFilter::new(self.filter)
    }
}

impl<E> Clone for TypedFilter<E> {
    fn clone(&self) -> TypedFilter<E> {
        TypedFilter::new(self.filter.clone())
    }
}

impl<E> PartialEq for TypedFilter<E> {
    fn eq(&self, other: &TypedFilter<E>) -> bool {
        self.filter == other.filter
    }
}

impl<E> fmt::Debug for TypedFilter<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TypedFilter")
            .field(&std::any::type_name::<E>())
            .field(&self.filter)
            .finish()
    }
}

impl<E> fmt::Display for TypedFilter<E> {
    /// The OData `$filter` text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.filter, f)
    }
}

impl<E> Deref for TypedFilter<E> {
    type Target = Filter;

    fn deref(&self) -> &Filter {
        &self.filter
    }
}

impl<E> From<TypedFilter<E>> for Filter {
    fn from(filter: TypedFilter<E>) -> Filter {
        filter.filter
    }
}

impl<E, R: Into<Filter>> BitAnd<R> for TypedFilter<E> {
    type Output = TypedFilter<E>;

    /// `self and rhs`.
    fn bitand(self, rhs: R) -> TypedFilter<E> {
        self.and(rhs)
    }
}

impl<E, R: Into<Filter>> BitOr<R> for TypedFilter<E> {
    type Output = TypedFilter<E>;

    /// `self or rhs`.
    fn bitor(self, rhs: R) -> TypedFilter<E> {
        self.or(rhs)
    }
}

impl<E> Not for TypedFilter<E> {
    type Output = TypedFilter<E>;

    /// `not self`.
    fn not(self) -> TypedFilter<E> {
        self.negate()
    }
}

/// A filter a query for `Q` takes: a [`TypedFilter<Q>`] on `Q`'s own columns, a
/// filter on a variant's columns when `Q` is an `EntityUnion` (the derive implements
/// it), or an untyped [`Filter`] (`col(..)`, [`Filter::parse`]: the caller names the
/// stored properties and vouches for them).
#[diagnostic::on_unimplemented(
    message = "a query for `{Q}` can't take `{Self}`: it filters on another type's columns",
    label = "a filter on the columns of another entity type",
    note = "filter on the queried type's columns (for a union, on a variant's columns); to filter by a \
            property name on purpose, pass an untyped filter (`Filter::from(..)`, `col(..)`)"
)]
pub trait FilterFor<Q> {
    /// The filter to send.
    fn into_filter(self) -> Filter;
}

impl<Q> FilterFor<Q> for Filter {
    fn into_filter(self) -> Filter {
        self
    }
}

impl<E> FilterFor<E> for TypedFilter<E> {
    fn into_filter(self) -> Filter {
        self.filter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DynamicEntity;

    struct Order;

    #[test]
    fn columns_match_every_stored_type_their_field_reads() {
        const AGE: TypedColumn<Order, u32> = TypedColumn::new("Age");
        let written = DynamicEntity::new("p", "r").with("Age", 7u32.to_value().unwrap().unwrap());
        let elsewhere = DynamicEntity::new("p", "r").with("Age", Value::Int32(7));
        for stored in [&written, &elsewhere] {
            assert!(AGE.eq(7).matches(stored));
            assert!(AGE.gt(6).matches(stored));
            assert!(!AGE.ne(7).matches(stored));
        }
        assert_eq!(AGE.eq(7).to_odata(), "Age eq 7L or Age eq 7");
        const NAME: TypedColumn<Order, String> = TypedColumn::new("Name");
        assert_eq!(NAME.eq("x").to_odata(), "Name eq 'x'");
    }

    #[cfg(feature = "chrono")]
    #[test]
    fn a_value_with_no_stored_form_fails_the_filter_before_sending() {
        use chrono::TimeZone;
        const AT: TypedColumn<Order, chrono::DateTime<chrono::Utc>> = TypedColumn::new("At");
        let before_1601 = chrono::Utc.with_ymd_and_hms(1500, 1, 1, 0, 0, 0).unwrap();
        let filter = AT.gt(before_1601);
        let err = filter.validate().unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidFilter);
        assert!(err.message().contains("\"At\""), "{err}");
        assert!(
            err.message().contains("outside the service's range"),
            "{err}"
        );
    }

    #[test]
    fn u64_beyond_i64_compares_above_everything() {
        const N: TypedColumn<Order, u64> = TypedColumn::new("N");
        let stored = DynamicEntity::new("p", "r").with("N", i64::MAX);
        assert!(!N.eq(u64::MAX).matches(&stored));
        assert!(!N.ge(u64::MAX).matches(&stored));
        assert!(N.lt(u64::MAX).matches(&stored));
        assert!(N.ne(u64::MAX).matches(&stored));
        assert!(!N.ne(u64::MAX).matches(&DynamicEntity::new("p", "r")));
    }
}
