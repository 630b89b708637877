//! `impl Row`: the codec `Table<T>` runs, generated beside `impl Entity` or
//! `impl EntityUnion` (which add only what is theirs).

use proc_macro2::TokenStream;
use quote::quote;

/// What an `impl Row` is made of.
pub(crate) struct RowParts {
    /// `Option<&'static [&'static str]>`.
    pub(crate) kinds: TokenStream,
    /// A `bool` constant expression.
    pub(crate) has_indexes: TokenStream,
    /// A `bool` constant expression.
    pub(crate) wide: TokenStream,
    /// `Vec<&'static EntitySchema>`.
    pub(crate) schemas: TokenStream,
    /// The codec methods: `entity_key`, `to_entity`, `from_entity` and, where the
    /// trait's defaults don't do, `index_copies` and `index_entries`.
    pub(crate) codec: TokenStream,
}

/// `impl Row for ident`.
pub(crate) fn row_impl(p: &TokenStream, ident: &syn::Ident, parts: &RowParts) -> TokenStream {
    let RowParts {
        kinds,
        has_indexes,
        wide,
        schemas,
        codec,
    } = parts;
    quote! {
        #[automatically_derived]
        impl #p::Row for #ident {
            const KINDS: ::core::option::Option<&'static [&'static str]> = #kinds;
            const HAS_INDEXES: bool = #has_indexes;
            const WIDE: bool = #wide;

            fn schemas() -> ::std::vec::Vec<&'static #p::EntitySchema> {
                #schemas
            }

            #codec
        }
    }
}

/// The `Row` of an entity with its codec methods.
pub(crate) fn of_entity(
    p: &TokenStream,
    has_indexes: bool,
    wide: bool,
    codec: TokenStream,
) -> RowParts {
    RowParts {
        has_indexes: quote!(#has_indexes),
        wide: quote!(#wide),
        kinds: quote!(::core::option::Option::Some(&[<Self as #p::Entity>::KIND])),
        schemas: quote!(::std::vec![<Self as #p::Entity>::schema()]),
        codec,
    }
}

/// The `Row` of a union over `types` with its codec methods; a union with a
/// catch-all reads every kind.
pub(crate) fn of_union(
    p: &TokenStream,
    types: &[&syn::Type],
    has_other: bool,
    codec: TokenStream,
) -> RowParts {
    let kinds = if has_other {
        quote!(::core::option::Option::None)
    } else {
        quote!(::core::option::Option::Some(<Self as #p::EntityUnion>::VARIANT_KINDS))
    };
    RowParts {
        kinds,
        has_indexes: quote!(false #(|| <#types as #p::Row>::HAS_INDEXES)*),
        wide: quote!(false #(|| <#types as #p::Row>::WIDE)*),
        schemas: quote!(::std::vec![#(<#types as #p::Entity>::schema()),*]),
        codec,
    }
}
