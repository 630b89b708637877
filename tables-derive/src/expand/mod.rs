//! Code generation: from the model only (attributes are parsed and checked before
//! this runs). Generated code sits in `const _: () = { .. };`, reaches the runtime
//! only through `<krate>::__private`, spells every other path absolutely and carries
//! `#[automatically_derived]` on its impls.
//!
//! For an entity the block holds: the static schema, one private writer function per
//! key template (`__tables_partition_key`, `__tables_index0_row_key`, ..), an
//! inherent impl with the key builders, range helpers and typed columns, the
//! `Entity` impl and the `upgrade_from` checks.

mod entity;
mod indexes;
mod keys;
mod names;
mod property;
mod ranges;
mod row;
mod schema;
mod stub;
#[cfg(test)]
mod tests;
mod union;

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Codec, EntityModel, Field, PropertyModel, UnionModel};

/// What the generators of one entity share.
pub(crate) struct Ctx<'a> {
    model: &'a EntityModel,
    /// `<krate>::__private`.
    private: TokenStream,
    /// Generating beside errors: the inherent items keep their signatures, their
    /// bodies only return an error (they never run: the crate doesn't compile), so
    /// they add no errors of their own; an item that can't be generated is left out.
    stub: bool,
}

impl Ctx<'_> {
    /// `&self.<field>` for the entity's field number `i`.
    fn self_field(&self, i: usize) -> TokenStream {
        let id = &self.model.fields[i].ident;
        quote!(&self.#id)
    }
}

/// Whether a field is stored as a property: not a primary key field, not skipped.
fn is_stored(field: &Field) -> bool {
    field.primary_key_use.is_none() && !matches!(field.codec, Codec::Skip | Codec::Others)
}

/// Everything `#[derive(Entity)]` generates for a valid model.
pub(crate) fn entity(model: &EntityModel) -> TokenStream {
    match entity_items(model) {
        Ok(items) => items,
        Err(error) => stub::entity(
            &model.ident,
            &syn::Generics::default(),
            &model.krate,
            &error,
            stub_inherent_items(model),
        ),
    }
}

fn entity_items(model: &EntityModel) -> syn::Result<TokenStream> {
    let krate = &model.krate;
    let cx = Ctx {
        model,
        private: quote!(#krate::__private),
        stub: false,
    };
    let ident = &model.ident;
    let statics = schema::statics(&cx);
    let codecs = entity::codec_statics(&cx);
    let key_codecs = keys::key_codec_statics(&cx)?;
    let writers = keys::writers(&cx)?;
    let builders = keys::builders(&cx)?;
    let ranges = ranges::helpers(&cx)?;
    let columns = schema::columns(&cx)?;
    let impl_entity = entity::impl_entity(&cx)?;
    let impl_indexes = keys::index_impls(&cx);
    let upgrade_asserts = entity::upgrade_asserts(&cx);
    Ok(quote! {
        const _: () = {
            #statics
            #codecs
            #key_codecs
            #writers

            // Builders take one parameter per template field, however many that is.
            #[automatically_derived]
            #[allow(dead_code, clippy::too_many_arguments)]
            impl #ident {
                #builders
                #ranges
                #columns
            }

            #impl_entity
            #impl_indexes
            #upgrade_asserts
        };
    })
}

/// The derive's errors, a stub `impl Entity` (see [`stub`]) and, when the struct
/// could be read (`model`), its inherent items (key builders, range helpers,
/// typed columns) with bodies that only return an error: uses of the type then add
/// no errors to the derive's own.
pub(crate) fn entity_with_errors(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    model: Option<&EntityModel>,
    errors: syn::Error,
) -> TokenStream {
    let inherent = match model {
        Some(model) if input.generics.params.is_empty() => stub_inherent_items(model),
        _ => TokenStream::new(),
    };
    stub::entity(&input.ident, &input.generics, krate, &errors, inherent)
}

/// The inherent items of a model that has errors, each name once.
fn stub_inherent_items(model: &EntityModel) -> TokenStream {
    let krate = &model.krate;
    let cx = Ctx {
        model,
        private: quote!(#krate::__private),
        stub: true,
    };
    let ident = &model.ident;
    let (Ok(writers), Ok(builders), Ok(ranges), Ok(columns)) = (
        keys::writers(&cx),
        keys::builders(&cx),
        ranges::helpers(&cx),
        schema::columns(&cx),
    ) else {
        return TokenStream::new();
    };
    let items = quote!(impl #ident { #builders #ranges #columns });
    let Ok(mut block) = syn::parse2::<syn::ItemImpl>(items) else {
        return TokenStream::new();
    };
    // Rules broken by the input may make two helpers share a name.
    let mut seen = std::collections::HashSet::new();
    block.items.retain(|item| {
        let name = match item {
            syn::ImplItem::Fn(f) => f.sig.ident.to_string(),
            syn::ImplItem::Const(c) => c.ident.to_string(),
            _ => return true,
        };
        seen.insert(name)
    });
    let items = block.items;
    // The index builders return keys that name their index.
    let index_impls = keys::index_impls(&cx);
    quote! {
        #writers
        #index_impls

        #[automatically_derived]
        #[allow(dead_code, unused_variables, clippy::too_many_arguments)]
        impl #ident {
            #(#items)*
        }
    }
}

/// Everything `#[derive(EntityUnion)]` generates for a valid model.
pub(crate) fn union(model: &UnionModel) -> TokenStream {
    let items = union::union_items(model);
    quote!(const _: () = { #items };)
}

/// The derive's errors and a stub `impl EntityUnion`.
pub(crate) fn union_stub(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    errors: syn::Error,
) -> TokenStream {
    stub::union(&input.ident, &input.generics, krate, &errors)
}

/// Everything `#[derive(Property)]` generates for a valid model.
pub(crate) fn property(model: &PropertyModel) -> TokenStream {
    let items = property::property_items(model);
    quote!(const _: () = { #items };)
}

/// The derive's errors and a stub `impl Property`.
pub(crate) fn property_stub(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    errors: syn::Error,
) -> TokenStream {
    stub::property(input, krate, &errors)
}
