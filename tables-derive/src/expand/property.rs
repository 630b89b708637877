//! `#[derive(Property)]`: a unit enum stored as its variants' texts (and usable as
//! `{field}` in keys), or a newtype stored as its inner type (with the key trait the
//! inner type's shape allows).

use proc_macro2::TokenStream;
use quote::quote;

use super::names::lit;
use crate::model::{PropertyBody, PropertyModel, TypeShape};

/// Everything generated for a `Property` type (without the `const _` wrapper).
pub(crate) fn property_items(model: &PropertyModel) -> TokenStream {
    match &model.body {
        PropertyBody::UnitEnum(variants) => unit_enum(model, variants),
        PropertyBody::IntEnum(variants) => int_enum(model, variants),
        PropertyBody::Newtype { ty, shape } => newtype(model, ty, shape),
    }
}

fn unit_enum(model: &PropertyModel, variants: &[(syn::Ident, String)]) -> TokenStream {
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let ident = &model.ident;
    let name = lit(&ident.to_string());
    let idents: Vec<&syn::Ident> = variants.iter().map(|(id, _)| id).collect();
    let texts: Vec<syn::LitStr> = variants.iter().map(|(_, text)| lit(text)).collect();
    quote! {
        fn __tables_text(value: &#ident) -> &'static str {
            match value {
                #(#ident::#idents => #texts,)*
            }
        }

        fn __tables_parse(text: &str) -> #p::Result<#ident> {
            match text {
                #(#texts => ::core::result::Result::Ok(#ident::#idents),)*
                _ => ::core::result::Result::Err(#p::unknown_variant(text, #name, &[#(#texts),*])),
            }
        }

        #[automatically_derived]
        impl #p::Property for #ident {
            type Scalar = #ident;
            const EDM_TYPE: #p::EdmType = #p::EdmType::String;

            fn to_value(&self) -> #p::Result<::core::option::Option<#p::Value>> {
                ::core::result::Result::Ok(::core::option::Option::Some(#p::Value::String(
                    ::std::string::String::from(__tables_text(self)),
                )))
            }

            fn from_value(value: ::core::option::Option<#p::Value>) -> #p::Result<Self> {
                let text = #p::expect_string(value)?;
                __tables_parse(&text)
            }
        }

        #[automatically_derived]
        impl #p::Filterable for #ident {}

        #[automatically_derived]
        impl #p::KeyText for #ident {
            fn write_key_text(&self, out: &mut ::std::string::String) {
                out.push_str(__tables_text(self));
            }

            fn from_key_text(text: &str) -> #p::Result<Self> {
                __tables_parse(text)
            }
        }
    }
}

fn int_enum(model: &PropertyModel, variants: &[(syn::Ident, i32)]) -> TokenStream {
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let ident = &model.ident;
    let name = lit(&ident.to_string());
    let idents: Vec<&syn::Ident> = variants.iter().map(|(id, _)| id).collect();
    let numbers: Vec<proc_macro2::Literal> = variants
        .iter()
        .map(|(_, n)| proc_macro2::Literal::i32_unsuffixed(*n))
        .collect();
    let allowed: Vec<syn::LitStr> = variants
        .iter()
        .map(|(id, n)| lit(&format!("{n} ({id})")))
        .collect();
    quote! {
        #[automatically_derived]
        impl #p::Property for #ident {
            type Scalar = #ident;
            const EDM_TYPE: #p::EdmType = #p::EdmType::Int32;

            fn to_value(&self) -> #p::Result<::core::option::Option<#p::Value>> {
                let number: i32 = match self {
                    #(#ident::#idents => #numbers,)*
                };
                ::core::result::Result::Ok(::core::option::Option::Some(#p::Value::Int32(number)))
            }

            fn from_value(value: ::core::option::Option<#p::Value>) -> #p::Result<Self> {
                let number = <i32 as #p::Property>::from_value(value)?;
                match number {
                    #(#numbers => ::core::result::Result::Ok(#ident::#idents),)*
                    _ => ::core::result::Result::Err(#p::unknown_variant(
                        &::std::string::ToString::to_string(&number),
                        #name,
                        &[#(#allowed),*],
                    )),
                }
            }
        }

        #[automatically_derived]
        impl #p::Filterable for #ident {}
    }
}

fn newtype(model: &PropertyModel, ty: &syn::Type, shape: &TypeShape) -> TokenStream {
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let ident = &model.ident;
    let key_text = quote! {
        #[automatically_derived]
        impl #p::KeyText for #ident {
            fn write_key_text(&self, out: &mut ::std::string::String) {
                <#ty as #p::KeyText>::write_key_text(&self.0, out);
            }

            fn from_key_text(text: &str) -> #p::Result<Self> {
                <#ty as #p::KeyText>::from_key_text(text).map(#ident)
            }
        }
    };
    let key_int = quote! {
        #[automatically_derived]
        impl #p::KeyInt for #ident {
            fn to_key_u64(&self) -> ::core::option::Option<u64> {
                <#ty as #p::KeyInt>::to_key_u64(&self.0)
            }

            fn to_key_i64(&self) -> ::core::option::Option<i64> {
                <#ty as #p::KeyInt>::to_key_i64(&self.0)
            }

            fn from_key_u64(value: u64) -> ::core::option::Option<Self> {
                <#ty as #p::KeyInt>::from_key_u64(value).map(#ident)
            }

            fn from_key_i64(value: i64) -> ::core::option::Option<Self> {
                <#ty as #p::KeyInt>::from_key_i64(value).map(#ident)
            }
        }
    };
    let key_trait = match shape {
        TypeShape::String | TypeShape::Str | TypeShape::Uuid => key_text,
        TypeShape::Int(_) => key_int,
        TypeShape::Char => quote!(#key_text #key_int),
        TypeShape::Date => quote! {
            #[automatically_derived]
            impl #p::KeyDate for #ident {
                fn to_key_ymd(&self) -> (i32, u32, u32) {
                    <#ty as #p::KeyDate>::to_key_ymd(&self.0)
                }

                fn from_key_ymd(year: i32, month: u32, day: u32) -> ::core::option::Option<Self> {
                    <#ty as #p::KeyDate>::from_key_ymd(year, month, day).map(#ident)
                }
            }
        },
        TypeShape::DateTime => quote! {
            #[automatically_derived]
            impl #p::KeyTime for #ident {
                fn to_key_datetime(&self) -> #p::Result<#p::DateTime> {
                    <#ty as #p::KeyTime>::to_key_datetime(&self.0)
                }

                fn from_key_datetime(time: #p::DateTime) -> #p::Result<Self> {
                    <#ty as #p::KeyTime>::from_key_datetime(time).map(#ident)
                }
            }
        },
        TypeShape::Bool
        | TypeShape::Float
        | TypeShape::Bytes
        | TypeShape::Duration
        | TypeShape::Decimal
        | TypeShape::Unstorable(_)
        | TypeShape::Option(_)
        | TypeShape::Other => TokenStream::new(),
    };
    quote! {
        #[automatically_derived]
        impl #p::Property for #ident {
            type Scalar = #ident;
            const EDM_TYPE: #p::EdmType = <#ty as #p::Property>::EDM_TYPE;

            fn to_value(&self) -> #p::Result<::core::option::Option<#p::Value>> {
                <#ty as #p::Property>::to_value(&self.0)
            }

            fn from_value(value: ::core::option::Option<#p::Value>) -> #p::Result<Self> {
                <#ty as #p::Property>::from_value(value).map(#ident)
            }
        }

        // Filters compare a newtype as its inner type, so only when that is faithful.
        #[automatically_derived]
        impl #p::Filterable for #ident where #ty: #p::Filterable {}

        #key_trait
    }
}
