//! [`Reads`]: which stored values a field type's reader accepts, and
//! [`FilterDialect`]: how an engine compares values of different types.

/// Which stored values a field type's reader accepts ([`Property::READS`]), so that
/// its typed filters match every row it reads.
///
/// [`Property::READS`]: crate::model::Property::READS
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reads {
    /// Only values of the Edm type the field writes (text, booleans, dates, GUIDs,
    /// binary).
    Written,
    /// `Edm.Int32` or `Edm.Int64`, as the number they hold (integer fields, integer
    /// enums, durations); a value out of the field's range is a read error.
    Integer,
    /// `Edm.Double` as it is, `Edm.Int32` and `Edm.Int64` as the number they hold
    /// (`f64` fields; an `Int64` beyond 2^53 has no exact double and is a read error).
    Double,
    /// As [`Reads::Double`], then rounded to the nearest `f32` (`f32` fields).
    Single,
}

/// How an engine compares a property with a literal, so that a typed comparison
/// ([`ReadComparison`](crate::filter::ReadComparison)) is sent in a form it evaluates exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum FilterDialect {
    /// A comparison holds only between a property and a literal of the same Edm
    /// type: the Azure Table service, and the engines of this crate.
    #[default]
    Typed,
    /// Azurite: numbers compare by value as JavaScript compares them (Int64 values
    /// are text there, which `eq` and `ne` don't turn into numbers), and an Int64
    /// literal compared with a value of another type fails the request.
    Azurite,
}
