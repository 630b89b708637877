//! The marks a move leaves on its two rows while it runs, and the rule they
//! enforce: no other write changes a marked row.

use tables_core::model::{MOVED_FROM_PROPERTY, MOVING_TO_PROPERTY};
use tables_core::{DynamicEntity, Error, ErrorKind, Origin, Result, Value};

/// Refuses a write over `row` when a move has marked it: the row belongs to the
/// move until it finishes.
///
/// # Errors
///
/// [`ErrorKind::PreconditionFailed`] naming the move and how it finishes.
pub(crate) fn refuse_marked(row: &DynamicEntity) -> Result<()> {
    let (property, what) = if row.contains(MOVING_TO_PROPERTY) {
        (MOVING_TO_PROPERTY, "is being moved to another key")
    } else if row.contains(MOVED_FROM_PROPERTY) {
        (
            MOVED_FROM_PROPERTY,
            "is the new row of a move that is not finished",
        )
    } else {
        return Ok(());
    };
    let mark = row
        .get(property)
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(Error::new(
        ErrorKind::PreconditionFailed,
        format!(
            "the entity {} {what} ({property} {mark:?}): it can't be written until the move \
             finishes; retry after it, or run reconcile() on the table it moves from to finish \
             a move a crash interrupted",
            row.key()
        ),
    )
    .with_origin(Origin::Service)
    .with_entity_key(row.key()))
}
