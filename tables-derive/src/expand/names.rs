//! Names and types the generated code spells: identifiers made from model strings
//! (checked, never panicking), field names for messages, and the parameter types of
//! key builders.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt as _;

use crate::model::{Field, TypeShape};

/// An identifier from model text (an index name, a column name); an error instead
/// of the panic `Ident::new` gives on text that is no identifier.
pub(crate) fn ident(text: &str, span: Span) -> syn::Result<syn::Ident> {
    let mut chars = text.chars();
    let valid = match chars.next() {
        Some(first) => {
            (first == '_' || first.is_ascii_alphabetic())
                && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
                && text != "_"
        }
        None => false,
    };
    if valid {
        Ok(syn::Ident::new(text, span))
    } else {
        Err(syn::Error::new(
            span,
            format!("`{text}` is not a Rust identifier, so no item can be named after it; use letters, digits and `_`"),
        ))
    }
}

/// The field's name as users write it (`r#type` is `type`): used in messages, the
/// schema and generated item names.
pub(crate) fn field_name(field: &Field) -> String {
    field.ident.unraw().to_string()
}

/// A local variable for a field in generated function bodies; prefixed so it never
/// collides with the body's own locals.
pub(crate) fn local(prefix: &str, field: &Field) -> syn::Ident {
    format_ident!("__{}_{}", prefix, field.ident.unraw())
}

/// The type inside `Option<..>` as written, when the type is one.
pub(crate) fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    if args.args.len() != 1 {
        return None;
    }
    match args.args.first() {
        Some(syn::GenericArgument::Type(inner)) => Some(inner),
        _ => None,
    }
}

/// The type and shape a field has inside a key: the field's own, or `T` of an
/// `Option<T>` field (index templates only; a `None` writes no index row).
pub(crate) struct KeyType<'a> {
    /// The value's type in the key.
    pub(crate) ty: &'a syn::Type,
    /// Its shape.
    pub(crate) shape: &'a TypeShape,
    /// Whether the field is an `Option` around it.
    pub(crate) optional: bool,
}

impl KeyType<'_> {
    /// Whether builder parameters are `&str` (a `String` value).
    pub(crate) fn is_str(&self) -> bool {
        crate::attr::shape::is_text(self.shape)
    }

    /// Whether a `String` read from a key must be converted into the type
    /// (`Box<str>`, `Arc<str>`, `Cow<str>`).
    pub(crate) fn converts_from_string(&self) -> bool {
        *self.shape == TypeShape::Str
    }

    /// The type of a by-reference parameter (private key writers): `&str` or `&T`.
    pub(crate) fn ref_type(&self) -> TokenStream {
        if self.is_str() {
            quote!(&str)
        } else {
            let ty = self.ty;
            quote!(&#ty)
        }
    }

    /// The type of a public builder parameter: `&str` or `T` by value.
    pub(crate) fn value_type(&self) -> TokenStream {
        if self.is_str() {
            quote!(&str)
        } else {
            let ty = self.ty;
            quote!(#ty)
        }
    }
}

/// The key type of a field; an error (never expected after validation) when an
/// `Option` shape has no readable inner type.
pub(crate) fn key_type(field: &Field) -> syn::Result<KeyType<'_>> {
    match &field.shape {
        TypeShape::Option(inner) => match option_inner(&field.ty) {
            Some(ty) => Ok(KeyType {
                ty,
                shape: inner,
                optional: true,
            }),
            None => Err(syn::Error::new_spanned(
                &field.ty,
                "can't read the type inside this Option; write it as `Option<T>`",
            )),
        },
        shape => Ok(KeyType {
            ty: &field.ty,
            shape,
            optional: false,
        }),
    }
}

/// A string literal token for text (the doc attribute and `"..."` arguments).
pub(crate) fn lit(text: &str) -> syn::LitStr {
    syn::LitStr::new(text, Span::call_site())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_checked_not_panicked() {
        assert!(ident("email_key", Span::call_site()).is_ok());
        assert!(ident("AGE", Span::call_site()).is_ok());
        assert!(ident("", Span::call_site()).is_err());
        assert!(ident("1x", Span::call_site()).is_err());
        assert!(ident("a-b", Span::call_site()).is_err());
        assert!(ident("_", Span::call_site()).is_err());
    }

    #[test]
    fn option_inner_reads_the_written_type() {
        let ty: syn::Type = syn::parse_quote!(::core::option::Option<String>);
        let inner = option_inner(&ty).map(|t| quote!(#t).to_string());
        assert_eq!(inner.as_deref(), Some("String"));
        let ty: syn::Type = syn::parse_quote!(Vec<String>);
        assert!(option_inner(&ty).is_none());
    }
}
