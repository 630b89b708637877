//! `{field}` on text: written verbatim, variable width (at most one variable part
//! per template, so keys parse back). Only characters keys can hold.

use std::ops::{Bound, RangeBounds};

use crate::error::{Error, ErrorKind, Result};
use crate::key::validate::first_forbidden_char;
use crate::key::{prefix_range, KeyRange};

/// Checks that a text part holds no character keys can't hold.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] naming `field`, the character and where it is.
pub(crate) fn check(value: &str, field: &str) -> Result<()> {
    if let Some((position, c)) = first_forbidden_char(value) {
        return Err(Error::new(
            ErrorKind::InvalidKey,
            format!(
                "field `{field}`: {value:?} contains {c:?} (U+{:04X}) at character {position}, \
                 which keys can't hold (`/`, `\\`, `#`, `?` and control characters); store such \
                 values as a property, or encode them before building the key",
                u32::from(c)
            ),
        ));
    }
    Ok(())
}

/// The keys `prefix` + a text of `range` (text sorts as the service orders keys).
pub(crate) fn range<'r>(prefix: &str, range: impl RangeBounds<&'r str>) -> KeyRange {
    let join = |text: &str| format!("{prefix}{text}");
    let start = match range.start_bound() {
        Bound::Included(v) => Bound::Included(join(v)),
        Bound::Excluded(v) => Bound::Excluded(join(v)),
        Bound::Unbounded => Bound::Included(prefix.to_owned()),
    };
    let end = match range.end_bound() {
        Bound::Included(v) => Bound::Included(join(v)),
        Bound::Excluded(v) => Bound::Excluded(join(v)),
        Bound::Unbounded => prefix_range(prefix).end,
    };
    KeyRange::new(start, end)
}
