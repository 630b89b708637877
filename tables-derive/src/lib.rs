//! Derive macros of the `tables` SDK: `#[derive(Entity)]`, `#[derive(EntityUnion)]` and
//! `#[derive(Property)]`.
//!
//! Use them through `tables-client`, which re-exports them next to the traits they
//! implement; generated code names the runtime as `::tables_client::__private::..`, so
//! a crate that depends on `tables-client` alone compiles it.
//!
//! The attribute reference, with runnable examples, is the `entity_attributes` module
//! of `tables-client` (`tables_client::entity_attributes`, in `cargo doc --open`): every
//! key of `#[entity(..)]`, the key template grammar, the field types, what each derive
//! generates and every compile-time check. (This crate can't run examples of its own:
//! the runtime they need depends on it.)

mod attr;
mod error;
mod expand;
mod model;
mod validate;

use proc_macro::TokenStream;

/// Derives `Entity` for a struct with named fields: key builders, range helpers,
/// typed columns, index rows and the discriminator, from `#[entity(..)]`
/// attributes. Reference: `tables_client::entity_attributes`.
#[proc_macro_derive(Entity, attributes(entity))]
pub fn derive_entity(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let (model, errors) = attr::entity_recovering(&input);
    let errors = match (&model, errors) {
        (_, Some(errors)) => errors,
        (Some(model), None) => match validate::entity(model) {
            Ok(()) => return expand::entity(model).into(),
            Err(errors) => errors,
        },
        (None, None) => syn::Error::new(input.ident.span(), "the entity could not be read"),
    };
    expand::entity_with_errors(&input, &attr::krate(&input), model.as_ref(), errors).into()
}

/// Derives `EntityUnion` for an enum whose variants each wrap one entity type,
/// with an optional `#[entity(other)]` catch-all holding the raw row. Reference:
/// `tables_client::entity_attributes`.
#[proc_macro_derive(EntityUnion, attributes(entity))]
pub fn derive_entity_union(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    match attr::union(&input).and_then(|model| validate::union(&model).map(|()| model)) {
        Ok(model) => expand::union(&model).into(),
        Err(errors) => expand::union_stub(&input, &attr::krate(&input), errors).into(),
    }
}

/// Derives `Property` for a unit enum (stored as its variants' texts) or a
/// one-field tuple struct (stored as the inner value). Reference:
/// `tables_client::entity_attributes`.
#[proc_macro_derive(Property, attributes(entity))]
pub fn derive_property(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    match attr::property(&input).and_then(|model| validate::property(&model).map(|()| model)) {
        Ok(model) => expand::property(&model).into(),
        Err(errors) => expand::property_stub(&input, &attr::krate(&input), errors).into(),
    }
}
