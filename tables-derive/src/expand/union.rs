//! `#[derive(EntityUnion)]`: `impl EntityUnion`, `From` for every variant, and the
//! compile-time check that the variants' kinds are distinct.

use proc_macro2::TokenStream;
use quote::quote;

use super::names::lit;
use crate::model::UnionModel;

/// Everything generated for a union (without the `const _` wrapper).
pub(crate) fn union_items(model: &UnionModel) -> TokenStream {
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let ident = &model.ident;
    let name = lit(&ident.to_string());
    let variants: Vec<&syn::Ident> = model.variants.iter().map(|v| &v.ident).collect();
    let types: Vec<&syn::Type> = model.variants.iter().map(|v| &v.ty).collect();
    let other = model.other.as_ref();

    // Arms of the catch-all variant, when there is one.
    let other_arm = |body: TokenStream| match other {
        Some(other) => quote!(#ident::#other(__row) => #body,),
        None => TokenStream::new(),
    };
    let kind_other = match other {
        Some(other) => quote!(#ident::#other(_) => ::core::option::Option::None,),
        None => TokenStream::new(),
    };
    let key_other = other_arm(quote!(::core::result::Result::Ok(
        #p::Key::from_entity_key(__row.key())
    )));
    let to_other = other_arm(quote!(::core::result::Result::Ok(
        ::core::clone::Clone::clone(__row)
    )));
    let empty_arm = match other {
        Some(other) => {
            quote!(#ident::#other(_) => ::core::result::Result::Ok(::std::vec::Vec::new()),)
        }
        None => TokenStream::new(),
    };
    let fallback = match other {
        Some(other) => quote!(::core::result::Result::Ok(#ident::#other(entity))),
        None => quote! {
            ::core::result::Result::Err(#p::unknown_kind(
                &entity,
                #name,
                &[#(<#types as #p::Entity>::schema()),*],
            ))
        },
    };
    let from_other = other.map(|other| {
        quote! {
            #[automatically_derived]
            impl ::core::convert::From<#p::DynamicEntity> for #ident {
                fn from(row: #p::DynamicEntity) -> Self {
                    #ident::#other(row)
                }
            }
        }
    });
    let codec = quote! {
            fn entity_key(&self) -> #p::Result<#p::Key<Self>> {
                match self {
                    #(#ident::#variants(__value) => <#types as #p::Row>::entity_key(__value)
                        .map(#p::Key::into_key_of),)*
                    #key_other
                }
            }

            fn to_entity(&self) -> #p::Result<#p::DynamicEntity> {
                match self {
                    #(#ident::#variants(__value) => <#types as #p::Row>::to_entity(__value),)*
                    #to_other
                }
            }

            fn from_entity(entity: #p::DynamicEntity) -> #p::Result<Self> {
                // Index rows and the client's own rows are never a variant.
                #p::check_not_client_row(&entity)?;
                // The first variant whose tag the row carries; untagged variants,
                // which take any row, only after every tagged one.
                #(
                    if <#types as #p::Entity>::schema().tag != #p::Tag::Untagged
                        && <#types as #p::Entity>::schema().is_tagged(&entity)
                    {
                        return <#types as #p::Row>::from_entity(entity).map(#ident::#variants);
                    }
                )*
                #(
                    if <#types as #p::Entity>::schema().tag == #p::Tag::Untagged
                        && <#types as #p::Entity>::schema().is_tagged(&entity)
                    {
                        return <#types as #p::Row>::from_entity(entity).map(#ident::#variants);
                    }
                )*
                #fallback
            }

            fn index_copies(
                &self,
                primary: &#p::DynamicEntity,
            ) -> #p::Result<::std::vec::Vec<#p::IndexCopy>> {
                match self {
                    #(#ident::#variants(__value) => <#types as #p::Row>::index_copies(__value, primary),)*
                    #empty_arm
                }
            }

            fn index_entries(&self) -> #p::Result<::std::vec::Vec<#p::IndexEntry>> {
                match self {
                    #(#ident::#variants(__value) => <#types as #p::Row>::index_entries(__value),)*
                    #empty_arm
                }
            }
    };
    let row = super::row::row_impl(
        &p,
        ident,
        &super::row::of_union(&p, &types, other.is_some(), codec),
    );
    let assert_message = lit(&format!(
        "two variants of `{ident}` have the same kind: each variant's type needs its own #[entity(kind = \"..\")]"
    ));
    quote! {
        #[automatically_derived]
        impl #p::EntityUnion for #ident {
            const VARIANT_KINDS: &'static [&'static str] = &[#(<#types as #p::Entity>::KIND),*];

            fn kind(&self) -> ::core::option::Option<&'static str> {
                match self {
                    #(#ident::#variants(_) => ::core::option::Option::Some(<#types as #p::Entity>::KIND),)*
                    #kind_other
                }
            }
        }

        #(
            #[automatically_derived]
            impl ::core::convert::From<#types> for #ident {
                fn from(value: #types) -> Self {
                    #ident::#variants(value)
                }
            }
        )*

        #from_other

        #row

        // A query for the union takes filters on each variant's columns.
        #(
            #[automatically_derived]
            impl #p::FilterFor<#ident> for #p::TypedFilter<#types> {
                fn into_filter(self) -> #p::Filter {
                    #p::TypedFilter::into_filter(self)
                }
            }
        )*

        // A table of the union holds the union's rows and each variant's.
        #[automatically_derived]
        impl #p::Contains<#ident> for #ident {}
        #(
            #[automatically_derived]
            impl #p::Contains<#types> for #ident {}
        )*

        const _: () = ::core::assert!(
            #p::kinds_distinct(<#ident as #p::EntityUnion>::VARIANT_KINDS),
            #assert_message
        );
    }
}
