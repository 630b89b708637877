//! `#[derive(Property)]`: a unit enum stored as its variants' texts, or a newtype
//! `struct Email(String)` stored as its inner type.

use super::template::UnrawString;
use super::{
    crate_value, for_each_key, no_generics, shape, string_value, unknown_key, Once, RenameRule,
};
use crate::error::{did_you_mean, Errors};
use crate::model::{PropertyBody, PropertyModel};

/// The keys a unit enum's `#[entity(..)]` accepts.
const ENUM_KEYS: [&str; 3] = ["rename_all", "crate", "int"];
/// The keys a newtype's `#[entity(..)]` accepts.
const NEWTYPE_KEYS: [&str; 1] = ["crate"];
/// The keys a variant's `#[entity(..)]` accepts.
const VARIANT_KEYS: [&str; 1] = ["rename"];

/// Parses a `#[derive(Property)]` input into its model, or every error found.
pub(crate) fn property(input: &syn::DeriveInput) -> syn::Result<PropertyModel> {
    let mut errors = Errors::new();
    no_generics(input, "property types", &mut errors);
    let is_enum = matches!(input.data, syn::Data::Enum(_));
    let keys: &[&str] = if is_enum { &ENUM_KEYS } else { &NEWTYPE_KEYS };
    let mut krate = Once::<syn::Path>::default();
    let mut rename_all = Once::<RenameRule>::default();
    let mut int = Once::<proc_macro2::Span>::default();
    for_each_key(&input.attrs, &mut errors, |meta, key, errors| {
        match key {
            "int" if is_enum && int.claim(meta, key, errors) => {
                int.set(super::flag(meta, key, errors)?);
            }
            "crate" if krate.claim(meta, key, errors) => krate.set(crate_value(meta, errors)?),
            "rename_all" if is_enum && rename_all.claim(meta, key, errors) => {
                rename_all.set(rename_rule(meta, errors)?);
            }
            "rename_all" if !is_enum => {
                errors.push_spanned(
                    &meta.path,
                    "`rename_all` renames enum variants; a newtype is stored as its inner value, remove it",
                );
                super::skip_value(meta)?;
            }
            known if keys.contains(&known) => super::skip_value(meta)?,
            unknown => {
                let _ = unknown_key(meta, unknown, "Property attribute", keys, errors)?;
            }
        }
        Ok(())
    });
    if let (Some(rule), Some(_)) = (rename_all.get(), int.get()) {
        let _ = rule;
        errors.push(
            input.ident.span(),
            "`rename_all` renames the stored texts, and `int` stores numbers instead; keep one of them",
        );
    }
    let body = match &input.data {
        syn::Data::Enum(data) if int.get().is_some() => {
            int_variants(data, &mut errors).map(PropertyBody::IntEnum)
        }
        syn::Data::Enum(data) => Some(PropertyBody::UnitEnum(
            data.variants
                .iter()
                .filter_map(|variant| unit_variant(variant, rename_all.get().copied(), &mut errors))
                .collect(),
        )),
        syn::Data::Struct(data) => newtype(input, &data.fields, &mut errors),
        syn::Data::Union(_) => {
            errors.push(input.ident.span(), SHAPES);
            None
        }
    };
    let Some(body) = body else {
        return Err(errors.into_error(input.ident.span(), "the property type could not be read"));
    };
    let model = PropertyModel {
        ident: input.ident.clone(),
        krate: krate.into_inner().unwrap_or_else(super::default_krate),
        body,
    };
    errors.finish_with(model)
}

/// What the derive accepts, for errors on anything else.
const SHAPES: &str =
    "#[derive(Property)] takes a unit enum (`enum Status { Active, Retired }`, stored as \
    text) or a newtype with one field (`struct Email(String)`, stored as the inner value)";

fn rename_rule(
    meta: &syn::meta::ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<Option<RenameRule>> {
    let Some(lit) = string_value(meta, "rename_all", "rename_all = \"snake_case\"", errors)? else {
        return Ok(None);
    };
    let text = lit.value();
    if let Some(rule) = RenameRule::parse(&text) {
        return Ok(Some(rule));
    }
    let names: Vec<&str> = super::case::RULES.iter().map(|(name, _)| *name).collect();
    errors.push(
        lit.span(),
        format!(
            "unsupported rename_all rule {text:?}{}; expected one of: {}",
            did_you_mean(&text, names.iter().copied()),
            names.join(", ")
        ),
    );
    Ok(None)
}

/// The variants of an `#[entity(int)]` enum with their numbers: the explicit
/// discriminant, else one more than the variant before (Rust's rule).
fn int_variants(data: &syn::DataEnum, errors: &mut Errors) -> Option<Vec<(syn::Ident, i32)>> {
    let mut next: i64 = 0;
    let mut variants = Vec::new();
    for variant in &data.variants {
        if !matches!(variant.fields, syn::Fields::Unit) {
            errors.push(
                variant.ident.span(),
                format!(
                    "variant `{}` carries data, but an #[entity(int)] enum is stored as the variant's \
                     number: make it a unit variant",
                    variant.ident
                ),
            );
            continue;
        }
        if let Some(attr) = variant.attrs.iter().find(|a| a.path().is_ident("entity")) {
            errors.push_spanned(
                attr,
                "an #[entity(int)] enum stores numbers: `rename` has no effect on its variants; remove it",
            );
        }
        let number = match &variant.discriminant {
            None => next,
            Some((_, expr)) => match int_literal(expr) {
                Some(n) => n,
                None => {
                    errors.push_spanned(
                        expr,
                        "an #[entity(int)] enum needs integer literal discriminants (`Manager = 1`)",
                    );
                    return None;
                }
            },
        };
        let Ok(number32) = i32::try_from(number) else {
            errors.push(
                variant.ident.span(),
                format!(
                    "variant `{}` is {number}, which doesn't fit the Int32 it is stored as",
                    variant.ident
                ),
            );
            return None;
        };
        variants.push((variant.ident.clone(), number32));
        next = number + 1;
    }
    Some(variants)
}

/// `3` or `-3`.
fn int_literal(expr: &syn::Expr) -> Option<i64> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => int.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => int_literal(expr).map(|n| -n),
        _ => None,
    }
}

fn unit_variant(
    variant: &syn::Variant,
    rename_all: Option<RenameRule>,
    errors: &mut Errors,
) -> Option<(syn::Ident, String)> {
    let mut rename = Once::<syn::LitStr>::default();
    for_each_key(&variant.attrs, errors, |meta, key, errors| {
        match key {
            "rename" if rename.claim(meta, key, errors) => {
                rename.set(string_value(meta, key, "rename = \"in_progress\"", errors)?);
            }
            "rename" => super::skip_value(meta)?,
            unknown => {
                let _ = unknown_key(
                    meta,
                    unknown,
                    "Property variant attribute",
                    &VARIANT_KEYS,
                    errors,
                )?;
            }
        }
        Ok(())
    });
    if !matches!(variant.fields, syn::Fields::Unit) {
        errors.push(
            variant.ident.span(),
            format!(
                "variant `{}` carries data, but a #[derive(Property)] enum is stored as the variant's \
                 text: make it a unit variant, or store the enum with #[entity(json)] on the field instead",
                variant.ident
            ),
        );
        return None;
    }
    let name = variant.ident.unraw_string();
    let text = match rename.into_inner() {
        Some(lit) => lit.value(),
        None => rename_all.map_or_else(|| name.clone(), |rule| rule.apply_to_variant(&name)),
    };
    Some((variant.ident.clone(), text))
}

fn newtype(
    input: &syn::DeriveInput,
    fields: &syn::Fields,
    errors: &mut Errors,
) -> Option<PropertyBody> {
    match fields {
        syn::Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
            let field = unnamed.unnamed.first()?;
            Some(PropertyBody::Newtype {
                ty: Box::new(field.ty.clone()),
                shape: shape::classify(&field.ty),
            })
        }
        _ => {
            errors.push(input.ident.span(), SHAPES);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;
    use crate::model::TypeShape;

    fn errors(input: syn::DeriveInput) -> Vec<String> {
        match property(&input) {
            Ok(_) => panic!("expected errors"),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    fn texts(input: syn::DeriveInput) -> Vec<String> {
        match property(&input).map(|model| model.body) {
            Ok(PropertyBody::UnitEnum(variants)) => {
                variants.into_iter().map(|(_, text)| text).collect()
            }
            _ => panic!("not a unit enum"),
        }
    }

    #[test]
    fn unit_enums() {
        assert_eq!(
            texts(parse_quote!(
                enum S {
                    Active,
                    InProgress,
                }
            )),
            ["Active", "InProgress"]
        );
        assert_eq!(
            texts(parse_quote!(
                #[entity(rename_all = "snake_case")]
                enum S {
                    Active,
                    #[entity(rename = "wip")]
                    InProgress,
                    Done,
                }
            )),
            ["active", "wip", "done"]
        );
    }

    #[test]
    fn newtypes() {
        let model = property(&parse_quote!(
            pub struct Email(String);
        ))
        .unwrap();
        assert!(matches!(
            model.body,
            PropertyBody::Newtype {
                shape: TypeShape::String,
                ..
            }
        ));
        let model = property(&parse_quote!(
            #[entity(crate = "crate")]
            struct Id(u64);
        ))
        .unwrap();
        assert!(matches!(
            model.body,
            PropertyBody::Newtype {
                shape: TypeShape::Int(_),
                ..
            }
        ));
    }

    #[test]
    fn mistakes() {
        assert!(errors(parse_quote!(
            enum S {
                A(u8),
            }
        ))[0]
            .starts_with("variant `A` carries data"));
        assert!(errors(parse_quote!(
            struct E {
                value: String,
            }
        ))[0]
            .starts_with("#[derive(Property)] takes a unit enum"));
        assert!(errors(parse_quote!(
            struct E(String, u8);
        ))[0]
            .starts_with("#[derive(Property)] takes a unit enum"));
        assert!(errors(parse_quote!(
            struct E;
        ))[0]
            .starts_with("#[derive(Property)] takes a unit enum"));
        assert_eq!(
            errors(parse_quote!(#[entity(rename_all = "PascalCase")] struct E(String);)),
            ["`rename_all` renames enum variants; a newtype is stored as its inner value, remove it"]
        );
        assert_eq!(
            errors(parse_quote!(#[entity(rename_all = "snakecase")] enum S { A })),
            ["unsupported rename_all rule \"snakecase\" (did you mean `snake_case`?); expected one of: PascalCase, camelCase, snake_case, SCREAMING_SNAKE_CASE, lowercase, UPPERCASE"]
        );
        assert_eq!(
            errors(parse_quote!(
                enum S {
                    #[entity(skip)]
                    A,
                }
            )),
            ["unknown Property variant attribute `skip`; expected one of: rename"]
        );
        assert!(errors(parse_quote!(
            struct E<T>(T);
        ))[0]
            .starts_with("generic property types are not supported"));
    }
}
