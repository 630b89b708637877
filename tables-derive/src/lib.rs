//! Derive macros of the `tables` SDK.
//!
//! The `#[derive(Entity)]` and `#[derive(EntityUnion)]` macros arrive with the derive
//! issue; this crate is the workspace's placeholder for them until then and exports
//! nothing yet.
