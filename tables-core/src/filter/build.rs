//! Filter builder API. (Being written: helper "core-filter".)

/// A column to build comparisons on.
#[derive(Debug, Clone)]
pub struct Column {
    /// The property name.
    pub name: String,
}

/// A column by property name.
pub fn col(name: impl Into<String>) -> Column {
    Column { name: name.into() }
}
