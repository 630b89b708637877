//! What a derive emits when the input has errors: the errors, and a minimal impl of
//! the derived trait so that uses of the type don't add "trait not implemented"
//! errors to them. Every stub method returns an `InvalidInput` error.

use proc_macro2::TokenStream;
use quote::quote;

/// The errors, plus `impl Entity` and the given inherent items when the type has
/// no generics.
pub(crate) fn entity(
    ident: &syn::Ident,
    generics: &syn::Generics,
    krate: &syn::Path,
    errors: &syn::Error,
    inherent: TokenStream,
) -> TokenStream {
    let errors = errors.to_compile_error();
    if !generics.params.is_empty() {
        return errors;
    }
    let p = quote!(#krate::__private);
    let codec = failing_codec(&p);
    let row = super::row::row_impl(&p, ident, &super::row::of_entity(&p, false, false, codec));
    quote! {
        #errors
        const _: () = {
            #[automatically_derived]
            impl #p::Entity for #ident {
                const KIND: &'static str = "";
                const VERSION: u32 = 0;
                const PROPERTIES: &'static [&'static str] = &[];
                const KEY_TEMPLATES: [&'static str; 2] = ["", ""];

                fn schema() -> &'static #p::EntitySchema {
                    static __TABLES_SCHEMA: #p::EntitySchema = #p::EntitySchema {
                        kind: "",
                        version: 0,
                        tag: #p::Tag::Kind,
                        partition_key: "",
                        row_key: "",
                        properties: &[],
                        indexes: &[],
                        other_properties: false,
                    };
                    &__TABLES_SCHEMA
                }
            }

            #row
            #inherent
        };
    }
}

/// The `Row` codec of a stub: every method returns an error (and never runs).
fn failing_codec(p: &TokenStream) -> TokenStream {
    let fail = fail(p);
    quote! {
        fn entity_key(&self) -> #p::Result<#p::Key<Self>> {
            #fail
        }

        fn to_entity(&self) -> #p::Result<#p::DynamicEntity> {
            #fail
        }

        fn from_entity(entity: #p::DynamicEntity) -> #p::Result<Self> {
            let _ = entity;
            #fail
        }
    }
}

/// The body of an item generated beside errors: never runs (the crate doesn't
/// compile), and returns an error rather than panicking.
pub(crate) fn never_runs(p: &TokenStream) -> TokenStream {
    fail(p)
}

/// The errors, plus `impl EntityUnion` when the type has no generics.
pub(crate) fn union(
    ident: &syn::Ident,
    generics: &syn::Generics,
    krate: &syn::Path,
    errors: &syn::Error,
) -> TokenStream {
    let errors = errors.to_compile_error();
    if !generics.params.is_empty() {
        return errors;
    }
    let p = quote!(#krate::__private);
    let codec = failing_codec(&p);
    let row = super::row::row_impl(&p, ident, &super::row::of_union(&p, &[], true, codec));
    quote! {
        #errors
        const _: () = {
            #[automatically_derived]
            impl #p::EntityUnion for #ident {
                const VARIANT_KINDS: &'static [&'static str] = &[];

                fn kind(&self) -> ::core::option::Option<&'static str> {
                    ::core::option::Option::None
                }
            }

            #row

            #[automatically_derived]
            impl #p::Contains<#ident> for #ident {}
        };
    }
}

/// The errors, plus `impl Property` (and `impl KeyText` for an enum) when the type
/// has no generics.
pub(crate) fn property(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    errors: &syn::Error,
) -> TokenStream {
    let errors = errors.to_compile_error();
    if !input.generics.params.is_empty() {
        return errors;
    }
    let ident = &input.ident;
    let p = quote!(#krate::__private);
    let fail = fail(&p);
    let key_text = match input.data {
        syn::Data::Enum(_) => quote! {
            #[automatically_derived]
            impl #p::KeyText for #ident {
                fn write_key_text(&self, out: &mut ::std::string::String) {
                    let _ = out;
                }

                fn from_key_text(text: &str) -> #p::Result<Self> {
                    let _ = text;
                    #fail
                }
            }
        },
        syn::Data::Struct(_) | syn::Data::Union(_) => TokenStream::new(),
    };
    quote! {
        #errors
        const _: () = {
            #[automatically_derived]
            impl #p::Property for #ident {
                type Scalar = #ident;
                const EDM_TYPE: #p::EdmType = #p::EdmType::String;

                fn to_value(&self) -> #p::Result<::core::option::Option<#p::Value>> {
                    #fail
                }

                fn from_value(value: ::core::option::Option<#p::Value>) -> #p::Result<Self> {
                    let _ = value;
                    #fail
                }
            }

            #[automatically_derived]
            impl #p::Filterable for #ident {}

            #key_text
        };
    }
}

fn fail(p: &TokenStream) -> TokenStream {
    quote! {
        ::core::result::Result::Err(#p::Error::new(
            #p::ErrorKind::InvalidInput,
            "the derive failed; fix the errors it reported",
        ))
    }
}
