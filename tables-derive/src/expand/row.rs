//! `impl Row`: the one trait `Table<T>` needs, delegating to the `Entity` or
//! `EntityUnion` impl the derive also generates.

use proc_macro2::TokenStream;
use quote::quote;

/// Which trait the `Row` impl delegates to, with the `KINDS` and `schemas()`
/// expressions.
pub(crate) struct RowSource {
    /// `Entity` or `EntityUnion`.
    pub(crate) via: TokenStream,
    /// `Option<&'static [&'static str]>`.
    pub(crate) kinds: TokenStream,
    /// A `bool` constant expression.
    pub(crate) has_indexes: TokenStream,
    /// `Vec<&'static EntitySchema>`.
    pub(crate) schemas: TokenStream,
}

/// `impl Row for ident`, delegating every method to `source.via`.
pub(crate) fn row_impl(p: &TokenStream, ident: &syn::Ident, source: &RowSource) -> TokenStream {
    let RowSource {
        via,
        kinds,
        has_indexes,
        schemas,
    } = source;
    quote! {
        #[automatically_derived]
        impl #p::Row for #ident {
            const KINDS: ::core::option::Option<&'static [&'static str]> = #kinds;
            const HAS_INDEXES: bool = #has_indexes;

            fn schemas() -> ::std::vec::Vec<&'static #p::EntitySchema> {
                #schemas
            }

            fn key_of(&self) -> #p::Result<#p::EntityKey> {
                <Self as #p::#via>::entity_key(self).map(#p::Key::into_entity_key)
            }

            fn encode(&self) -> #p::Result<#p::DynamicEntity> {
                <Self as #p::#via>::to_entity(self)
            }

            fn decode(entity: #p::DynamicEntity) -> #p::Result<Self> {
                <Self as #p::#via>::from_entity(entity)
            }

            fn copies_of(
                &self,
                primary: &#p::DynamicEntity,
            ) -> #p::Result<::std::vec::Vec<#p::IndexCopy>> {
                <Self as #p::#via>::index_copies(self, primary)
            }

            fn entries_of(&self) -> #p::Result<::std::vec::Vec<#p::IndexEntry>> {
                <Self as #p::#via>::index_entries(self)
            }
        }
    }
}

/// The `Row` source of an entity.
pub(crate) fn of_entity(p: &TokenStream, has_indexes: bool) -> RowSource {
    RowSource {
        via: quote!(Entity),
        has_indexes: quote!(#has_indexes),
        kinds: quote!(::core::option::Option::Some(&[<Self as #p::Entity>::KIND])),
        schemas: quote!(::std::vec![<Self as #p::Entity>::schema()]),
    }
}

/// The `Row` source of a union over `types`; a union with a catch-all reads every
/// kind.
pub(crate) fn of_union(p: &TokenStream, types: &[&syn::Type], has_other: bool) -> RowSource {
    let kinds = if has_other {
        quote!(::core::option::Option::None)
    } else {
        quote!(::core::option::Option::Some(<Self as #p::EntityUnion>::KINDS))
    };
    RowSource {
        via: quote!(EntityUnion),
        kinds,
        has_indexes: quote!(false #(|| <#types as #p::Row>::HAS_INDEXES)*),
        schemas: quote!(::std::vec![#(<#types as #p::Entity>::schema()),*]),
    }
}
