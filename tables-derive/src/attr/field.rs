//! Field attributes of `#[derive(Entity)]`: `rename`, `skip`, `json`, `default`,
//! `with`, `column`.

use proc_macro2::Span;
use syn::spanned::Spanned;

use super::template::UnrawString;
use super::{
    flag, for_each_key, path_value, screaming_snake, shape, string_value, unknown_key, Once,
    RenameRule,
};
use crate::error::Errors;
use crate::model::{Codec, DefaultValue, Field};

/// The keys a field attribute accepts.
const FIELD_KEYS: [&str; 12] = [
    "rename",
    "skip",
    "json",
    "default",
    "with",
    "column",
    "other_properties",
    "series",
    "encrypted",
    "blob",
    "spill",
    "lazy",
];

/// Where each key of a field's attributes was written, for checks that point at
/// the key (conflicts, keys that have no effect on a key field).
#[derive(Default)]
pub(crate) struct FieldAttrs {
    pub(crate) rename: Option<Span>,
    pub(crate) skip: Option<Span>,
    pub(crate) json: Option<Span>,
    pub(crate) default: Option<Span>,
    pub(crate) with: Option<Span>,
    pub(crate) column: Option<Span>,
    pub(crate) others: Option<Span>,
    pub(crate) series: Option<Span>,
    pub(crate) encrypted: Option<Span>,
    pub(crate) blob: Option<Span>,
    pub(crate) spill: Option<Span>,
    pub(crate) lazy: Option<Span>,
}

impl FieldAttrs {
    /// The keys that say how the field is stored, with their spans: none of them
    /// applies to a field that lives in the primary key.
    pub(crate) fn storage_keys(&self) -> impl Iterator<Item = (&'static str, Span)> + '_ {
        [
            ("rename", self.rename),
            ("json", self.json),
            ("with", self.with),
            ("default", self.default),
        ]
        .into_iter()
        .filter_map(|(key, span)| span.map(|span| (key, span)))
    }
}

/// Reads one named field.
pub(crate) fn parse(
    field: &syn::Field,
    ident: &syn::Ident,
    rename_all: Option<RenameRule>,
    errors: &mut Errors,
) -> (Field, FieldAttrs) {
    let mut rename = Once::<syn::LitStr>::default();
    let mut skip = Once::<Span>::default();
    let mut json = Once::<Span>::default();
    let mut default = Once::<(Span, DefaultValue)>::default();
    let mut with = Once::<(Span, syn::Path)>::default();
    let mut column = Once::<syn::LitStr>::default();
    let mut others = Once::<Span>::default();
    let mut series = Once::<Span>::default();
    let mut encrypted = Once::<Span>::default();
    let mut blob = Once::<Span>::default();
    let mut spill = Once::<Span>::default();
    let mut lazy = Once::<Span>::default();
    for_each_key(&field.attrs, errors, |meta, key, errors| {
        match key {
            "rename" if rename.claim(meta, key, errors) => {
                rename.set(string_value(meta, key, "rename = \"Hired\"", errors)?);
            }
            "skip" if skip.claim(meta, key, errors) => skip.set(flag(meta, key, errors)?),
            "other_properties" if others.claim(meta, key, errors) => {
                others.set(flag(meta, key, errors)?);
            }
            "json" if json.claim(meta, key, errors) => json.set(flag(meta, key, errors)?),
            "series" if series.claim(meta, key, errors) => series.set(flag(meta, key, errors)?),
            "blob" if blob.claim(meta, key, errors) => blob.set(flag(meta, key, errors)?),
            "spill" if spill.claim(meta, key, errors) => spill.set(flag(meta, key, errors)?),
            "lazy" if lazy.claim(meta, key, errors) => lazy.set(flag(meta, key, errors)?),
            "encrypted" if encrypted.claim(meta, key, errors) => {
                encrypted.set(flag(meta, key, errors)?);
            }
            "default" if default.claim(meta, key, errors) => {
                let span = meta.path.span();
                if meta.input.peek(syn::Token![=]) {
                    let path = path_value(meta, key, "default = path::to::function", errors)?;
                    default.set(path.map(|path| (span, DefaultValue::Path(path))));
                } else {
                    default.set(flag(meta, key, errors)?.map(|span| (span, DefaultValue::Trait)));
                }
            }
            "with" if with.claim(meta, key, errors) => {
                let span = meta.path.span();
                with.set(
                    path_value(meta, key, "with = path::to::codec_module", errors)?
                        .map(|path| (span, path)),
                );
            }
            "column" if column.claim(meta, key, errors) => {
                column.set(string_value(meta, key, "column = \"HIRED_AT\"", errors)?);
            }
            known if FIELD_KEYS.contains(&known) => super::skip_value(meta)?,
            misplaced if super::keys::ENTITY_KEYS.contains(&misplaced) => {
                errors.push_spanned(
                    &meta.path,
                    format!("`{misplaced}` goes on the struct, not on a field: move it to the struct's #[entity(..)]"),
                );
                super::skip_value(meta)?;
            }
            unknown => {
                let _ = unknown_key(meta, unknown, "field attribute", &FIELD_KEYS, errors)?;
            }
        }
        Ok(())
    });
    let attrs = FieldAttrs {
        rename: rename.get().map(syn::LitStr::span),
        skip: skip.get().copied(),
        json: json.get().copied(),
        default: default.get().map(|(span, _)| *span),
        with: with.get().map(|(span, _)| *span),
        column: column.get().map(syn::LitStr::span),
        others: others.get().copied(),
        series: series.get().copied(),
        encrypted: encrypted.get().copied(),
        blob: blob.get().copied(),
        spill: spill.get().copied(),
        lazy: lazy.get().copied(),
    };
    conflicts(&attrs, errors);
    if let Some(lit) = column.get() {
        check_column_name(lit, errors);
    }

    let name = ident.unraw_string();
    let (property, property_span) = match rename.into_inner() {
        Some(lit) => (lit.value(), lit.span()),
        None => (
            rename_all.map_or_else(|| name.clone(), |rule| rule.apply_to_field(&name)),
            ident.span(),
        ),
    };
    let codec = if attrs.series.is_some() {
        series_codec(&field.ty, &property, default.get().map(|(_, d)| d), errors)
    } else if attrs.others.is_some() {
        Codec::Others
    } else if attrs.skip.is_some() {
        Codec::Skip
    } else if attrs.json.is_some() {
        Codec::Json
    } else if let Some((_, path)) = with.into_inner() {
        Codec::With(path)
    } else {
        Codec::Plain
    };
    let model = Field {
        ident: ident.clone(),
        ty: field.ty.clone(),
        shape: shape::classify(&field.ty),
        property,
        property_span,
        codec,
        default: default.into_inner().map(|(_, value)| value),
        column: column
            .into_inner()
            .map_or_else(|| screaming_snake(&name), |lit| lit.value()),
        primary_key_use: None,
        encrypted: attrs.encrypted.is_some(),
        blob: attrs.blob.is_some() || attrs.spill.is_some(),
        spill: attrs.spill.is_some(),
        lazy: attrs.lazy.is_some(),
    };
    (model, attrs)
}

/// The codec of a `series` field: its type must be `[T; N]` with a literal `N`.
fn series_codec(
    ty: &syn::Type,
    property: &str,
    default: Option<&DefaultValue>,
    errors: &mut Errors,
) -> Codec {
    if let Some(DefaultValue::Path(path)) = default {
        errors.push(
            path.span(),
            "a `series` field takes `default` (each missing point reads as the element's \
             Default::default()), not `default = path`",
        );
    }
    let syn::Type::Array(array) = ty else {
        errors.push(
            ty.span(),
            "`series` stores an array `[T; N]` as one property per point: make the field an \
             array such as `[u32; 24]`",
        );
        return Codec::Skip;
    };
    let len = match &array.len {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => n.base10_parse::<usize>().ok(),
        _ => None,
    };
    match len {
        Some(len) if len > 0 => Codec::Series(crate::model::Series::new(
            (*array.elem).clone(),
            property,
            len,
        )),
        _ => {
            errors.push(
                array.len.span(),
                "a `series` array needs a literal length of at least 1 (such as `[u32; 24]`): \
                 the derive names one property per point",
            );
            Codec::Skip
        }
    }
}

/// Reports each of `keys` that is present, with the message `why` gives for it.
fn refuse_with(keys: &[(&str, Option<Span>)], why: impl Fn(&str) -> String, errors: &mut Errors) {
    for (key, span) in keys {
        if let Some(span) = span {
            errors.push(*span, why(key));
        }
    }
}

/// Keys that contradict each other on one field.
fn conflicts(attrs: &FieldAttrs, errors: &mut Errors) {
    if attrs.skip.is_some() {
        let with_skip = [
            ("rename", attrs.rename),
            ("json", attrs.json),
            ("with", attrs.with),
            ("default", attrs.default),
            ("column", attrs.column),
        ];
        refuse_with(
            &with_skip,
            |key| {
                format!(
                    "`{key}` has no effect on a `skip` field (it is not stored and decodes as \
                     Default::default()); remove `{key}` or `skip`"
                )
            },
            errors,
        );
    }
    if attrs.others.is_some() {
        let with_others = [
            ("rename", attrs.rename),
            ("skip", attrs.skip),
            ("json", attrs.json),
            ("with", attrs.with),
            ("default", attrs.default),
            ("column", attrs.column),
        ];
        refuse_with(
            &with_others,
            |key| {
                format!(
                    "`{key}` has no effect on an `other_properties` field (it holds every \
                     property no other field names, under their own names); remove `{key}`"
                )
            },
            errors,
        );
    }
    if attrs.series.is_some() {
        let with_series = [
            ("skip", attrs.skip),
            ("json", attrs.json),
            ("with", attrs.with),
            ("other_properties", attrs.others),
        ];
        refuse_with(
            &with_series,
            |key| {
                format!(
                    "`{key}` and `series` both choose how the field is stored (`series`: one \
                     property per point, each through the element's Property); keep one"
                )
            },
            errors,
        );
    }
    if attrs.encrypted.is_some() {
        let with_encrypted = [
            ("skip", attrs.skip),
            ("other_properties", attrs.others),
            ("series", attrs.series),
        ];
        refuse_with(
            &with_encrypted,
            |key| {
                format!(
                    "`{key}` can't be combined with `encrypted` (an encrypted field is one \
                     stored value, encrypted as a whole); remove one of them"
                )
            },
            errors,
        );
    }
    if let (Some(_), Some(spill)) = (attrs.blob, attrs.spill) {
        errors.push(
            spill,
            "`spill` and `blob` both keep the value in a blob (`spill` only when it outgrows a \
             property); keep one",
        );
    }
    if let Some(lazy) = attrs.lazy {
        if attrs.blob.is_none() && attrs.spill.is_none() {
            errors.push(
                lazy,
                "`lazy` applies to a `blob` field (reads leave its blob unfetched, a \
                 `LazyBlob<T>` handle); write `#[entity(blob, lazy)]`",
            );
        }
        let with_lazy = [
            ("spill", attrs.spill),
            ("json", attrs.json),
            ("with", attrs.with),
            ("default", attrs.default),
        ];
        refuse_with(
            &with_lazy,
            |key| {
                format!(
                    "`{key}` can't be combined with `lazy` (a lazy blob field is a \
                     `LazyBlob<T>`, T a property type, always kept in a blob); remove one of \
                     them"
                )
            },
            errors,
        );
    }
    if attrs.blob.is_some() || attrs.spill.is_some() {
        let with_blob = [
            ("skip", attrs.skip),
            ("other_properties", attrs.others),
            ("series", attrs.series),
            ("encrypted", attrs.encrypted),
            ("column", attrs.column),
        ];
        refuse_with(
            &with_blob,
            |key| {
                format!(
                    "`{key}` can't be combined with `blob` (a blob field is one value kept in a \
                     blob, with no typed column); remove one of them"
                )
            },
            errors,
        );
    }
    if let (Some(_), Some(with)) = (attrs.json, attrs.with) {
        errors.push(
            with,
            "`json` and `with` both choose how the field is stored; keep one of them",
        );
    }
}

/// A typed column is a constant: its name must be SCREAMING_SNAKE_CASE.
fn check_column_name(lit: &syn::LitStr, errors: &mut Errors) {
    let name = lit.value();
    let mut bytes = name.bytes();
    let valid = matches!(bytes.next(), Some(b) if b.is_ascii_uppercase() || b == b'_')
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && name != "_";
    if !valid {
        errors.push(
            lit.span(),
            format!(
                "column name {name:?} is not a constant name; typed columns are associated constants, \
                 write SCREAMING_SNAKE_CASE such as column = \"HIRED_AT\""
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;
    use crate::model::TypeShape;

    fn parse_field(
        field: syn::Field,
        rename_all: Option<RenameRule>,
    ) -> Result<(Field, FieldAttrs), Vec<String>> {
        let mut errors = Errors::new();
        let ident = field.ident.clone().unwrap_or_else(|| parse_quote!(unnamed));
        let parsed = parse(&field, &ident, rename_all, &mut errors);
        match errors.finish() {
            Ok(()) => Ok(parsed),
            Err(error) => Err(error.into_iter().map(|e| e.to_string()).collect()),
        }
    }

    fn field_errors(field: syn::Field) -> Vec<String> {
        match parse_field(field, None) {
            Ok(_) => panic!("expected errors"),
            Err(errors) => errors,
        }
    }

    fn named(tokens: proc_macro2::TokenStream) -> syn::Field {
        let fields: syn::FieldsNamed = parse_quote!({ #tokens });
        fields
            .named
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("no field"))
    }

    #[test]
    fn plain_field_defaults() {
        let (field, attrs) = parse_field(named(quote::quote!(hired_at: u32)), None).unwrap();
        assert_eq!(field.property, "hired_at");
        assert_eq!(field.column, "HIRED_AT");
        assert!(matches!(field.codec, Codec::Plain));
        assert!(field.default.is_none());
        assert_eq!(field.shape, TypeShape::Int("u32".to_owned()));
        assert_eq!(attrs.storage_keys().count(), 0);
        let (field, _) = parse_field(
            named(quote::quote!(r#type: String)),
            Some(RenameRule::Pascal),
        )
        .unwrap();
        assert_eq!(field.property, "Type");
        assert_eq!(field.column, "TYPE");
    }

    #[test]
    fn every_key() {
        let (field, attrs) = parse_field(
            named(quote::quote!(#[entity(rename = "Hired", default = crate::x, column = "HIRED")] #[entity(json)] h: u8)),
            Some(RenameRule::Pascal),
        )
        .unwrap();
        assert_eq!(field.property, "Hired");
        assert_eq!(field.column, "HIRED");
        assert!(matches!(field.codec, Codec::Json));
        assert!(matches!(field.default, Some(DefaultValue::Path(_))));
        assert_eq!(
            attrs.storage_keys().map(|(k, _)| k).collect::<Vec<_>>(),
            ["rename", "json", "default"]
        );
        let (field, _) = parse_field(
            named(quote::quote!(#[entity(with = "codec::money", default)] m: u8)),
            None,
        )
        .unwrap();
        assert!(matches!(field.codec, Codec::With(_)));
        assert!(matches!(field.default, Some(DefaultValue::Trait)));
        let (field, _) = parse_field(named(quote::quote!(#[entity(skip)] s: u8)), None).unwrap();
        assert!(matches!(field.codec, Codec::Skip));
    }

    #[test]
    fn key_errors() {
        let errors = field_errors(named(quote::quote!(#[entity(renam = "X")] f: u8)));
        assert_eq!(
            errors,
            ["unknown field attribute `renam` (did you mean `rename`?); expected one of: rename, skip, json, default, with, column, other_properties, series, encrypted, blob, spill, lazy"]
        );
        let errors = field_errors(named(quote::quote!(#[entity(row_key = "x")] f: u8)));
        assert_eq!(errors, ["`row_key` goes on the struct, not on a field: move it to the struct's #[entity(..)]"]);
        let errors = field_errors(named(quote::quote!(#[entity(skip, skip)] f: u8)));
        assert_eq!(errors, ["`skip` is given twice; keep one"]);
        let errors = field_errors(named(quote::quote!(#[entity(json = true)] f: u8)));
        assert_eq!(errors, ["`json` takes no value; write just `json`"]);
        let errors = field_errors(named(quote::quote!(#[entity(rename = Hired)] f: u8)));
        assert_eq!(
            errors,
            ["`rename` takes a string literal: rename = \"Hired\""]
        );
        let errors = field_errors(named(quote::quote!(#[entity(rename)] f: u8)));
        assert_eq!(errors, ["`rename` needs a value: rename = \"Hired\""]);
        let errors = field_errors(named(quote::quote!(#[entity(with = 3)] f: u8)));
        assert_eq!(
            errors,
            ["`with` takes a path: with = path::to::codec_module"]
        );
        let errors = field_errors(named(
            quote::quote!(#[entity(default = "not a path")] f: u8),
        ));
        assert_eq!(errors, ["`default` takes a path, and \"not a path\" is not one: default = path::to::function"]);
        let errors = field_errors(named(quote::quote!(#[entity] f: u8)));
        assert_eq!(
            errors,
            ["empty `#[entity]` attribute; write its keys in parentheses: #[entity(..)]"]
        );
    }

    #[test]
    fn conflicting_keys() {
        let errors = field_errors(named(
            quote::quote!(#[entity(skip, rename = "X", default)] f: u8),
        ));
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with("`rename` has no effect on a `skip` field"),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("`default` has no effect on a `skip` field"),
            "{errors:?}"
        );
        let errors = field_errors(named(quote::quote!(#[entity(json, with = m)] f: u8)));
        assert_eq!(
            errors,
            ["`json` and `with` both choose how the field is stored; keep one of them"]
        );
    }

    #[test]
    fn column_names_are_constants() {
        for bad in ["hired", "Hired", "1X", "_", "A-B", ""] {
            let errors = field_errors(named(quote::quote!(#[entity(column = #bad)] f: u8)));
            assert!(
                errors[0].contains("is not a constant name"),
                "{bad}: {errors:?}"
            );
        }
        assert!(parse_field(named(quote::quote!(#[entity(column = "_A1")] f: u8)), None).is_ok());
    }
}
