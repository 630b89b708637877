//! What the typed end-to-end tests (`tests/tests/typed_*.rs`, `derive_guide.rs`)
//! share: the engine matrix every typed scenario runs on ([`Backend`] and
//! [`typed_matrix!`](crate::typed_matrix)), the staff entities with every kind of
//! index ([`staff`]), the index checker ([`index_check`]) and an engine wrapper that
//! records calls ([`recorder`]).

mod backend;
pub mod index_check;
mod matrix;
pub mod recorder;
pub mod staff;

pub use backend::{Backend, Fixture};
pub use index_check::{check, intents, is_tombstone, lose_row};
#[doc(hidden)]
pub use matrix::__backend;
pub use matrix::Outcome;
pub use recorder::{Call, Recorder};
pub use staff::{
    create_tables, employee, Clerk, Department, Employee, Tagged, BY_CITY, BY_EMAIL, STAFF,
};
