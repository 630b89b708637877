//! `#[derive(EntityUnion)]`: an enum whose variants each wrap one entity type, plus
//! an optional `#[entity(other)]` catch-all holding the raw row.

use super::{crate_value, flag, for_each_key, no_generics, unknown_key, Once};
use crate::error::Errors;
use crate::model::{UnionModel, UnionVariant};

/// The keys an `EntityUnion`'s `#[entity(..)]` accepts.
const UNION_KEYS: [&str; 1] = ["crate"];
/// The keys a union variant's `#[entity(..)]` accepts.
const VARIANT_KEYS: [&str; 1] = ["other"];

/// Parses a `#[derive(EntityUnion)]` input into its model, or every error found.
pub(crate) fn union(input: &syn::DeriveInput) -> syn::Result<UnionModel> {
    let mut errors = Errors::new();
    no_generics(input, "entity unions", &mut errors);
    let mut krate = Once::<syn::Path>::default();
    for_each_key(&input.attrs, &mut errors, |meta, key, errors| {
        match key {
            "crate" if krate.claim(meta, key, errors) => krate.set(crate_value(meta, errors)?),
            "crate" => super::skip_value(meta)?,
            unknown => {
                let _ = unknown_key(meta, unknown, "EntityUnion attribute", &UNION_KEYS, errors)?;
            }
        }
        Ok(())
    });
    let syn::Data::Enum(data) = &input.data else {
        errors.push(
            input.ident.span(),
            "#[derive(EntityUnion)] needs an enum with one variant per entity type: \
             `enum SalesPartition { Employee(Employee), Department(Department) }`",
        );
        return Err(errors.into_error(input.ident.span(), "the union could not be read"));
    };
    let mut variants = Vec::new();
    let mut other: Option<syn::Ident> = None;
    for variant in &data.variants {
        let is_other = other_flag(variant, &mut errors);
        let Some(ty) = single_field(variant, is_other, &mut errors) else {
            continue;
        };
        if !is_other {
            variants.push(UnionVariant {
                ident: variant.ident.clone(),
                ty: ty.clone(),
            });
            continue;
        }
        if let Some(first) = &other {
            errors.push(
                variant.ident.span(),
                format!("`{}` is a second `other` variant after `{first}`; a union has at most one, keep one", variant.ident),
            );
        } else if !is_dynamic_entity(ty) {
            errors.push_spanned(
                ty,
                "the `other` variant holds the raw row: its type must be DynamicEntity \
                 (`#[entity(other)] Other(tables_client::DynamicEntity)`)",
            );
        } else {
            other = Some(variant.ident.clone());
        }
    }
    let model = UnionModel {
        ident: input.ident.clone(),
        krate: krate.into_inner().unwrap_or_else(super::default_krate),
        variants,
        other,
    };
    errors.finish_with(model)
}

/// Reads the variant's `#[entity(other)]`.
fn other_flag(variant: &syn::Variant, errors: &mut Errors) -> bool {
    let mut other = Once::<proc_macro2::Span>::default();
    for_each_key(&variant.attrs, errors, |meta, key, errors| {
        match key {
            "other" if other.claim(meta, key, errors) => other.set(flag(meta, key, errors)?),
            "other" => super::skip_value(meta)?,
            unknown => {
                let _ = unknown_key(
                    meta,
                    unknown,
                    "EntityUnion variant attribute",
                    &VARIANT_KEYS,
                    errors,
                )?;
            }
        }
        Ok(())
    });
    other.get().is_some()
}

/// The one unnamed field of `Variant(Type)`.
fn single_field<'a>(
    variant: &'a syn::Variant,
    is_other: bool,
    errors: &mut Errors,
) -> Option<&'a syn::Type> {
    if let syn::Fields::Unnamed(fields) = &variant.fields {
        if fields.unnamed.len() == 1 {
            return fields.unnamed.first().map(|field| &field.ty);
        }
    }
    let name = &variant.ident;
    let form = if is_other {
        format!("`#[entity(other)] {name}(DynamicEntity)`")
    } else {
        format!("`{name}({name})`, where `{name}` is a type with #[derive(Entity)]")
    };
    errors.push(
        name.span(),
        format!("variant `{name}` must wrap exactly one type: write {form}"),
    );
    None
}

/// Whether `ty` is a path ending in `DynamicEntity`.
fn is_dynamic_entity(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .is_some_and(|last| last.ident == "DynamicEntity" && last.arguments.is_none()),
        syn::Type::Group(group) => is_dynamic_entity(&group.elem),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;

    fn errors(input: syn::DeriveInput) -> Vec<String> {
        match union(&input) {
            Ok(_) => panic!("expected errors"),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn reads_variants_and_other() {
        let model = union(&parse_quote! {
            #[entity(crate = "crate")]
            pub enum Sales {
                Employee(Employee),
                #[entity(other)]
                Unknown(tables_client::DynamicEntity),
                Department(model::Department),
            }
        })
        .unwrap();
        let names: Vec<String> = model.variants.iter().map(|v| v.ident.to_string()).collect();
        assert_eq!(names, ["Employee", "Department"]);
        assert_eq!(
            model.other.map(|o| o.to_string()).as_deref(),
            Some("Unknown")
        );
        assert_eq!(
            quote::ToTokens::to_token_stream(&model.krate).to_string(),
            "crate"
        );
    }

    #[test]
    fn mistakes() {
        assert_eq!(
            errors(parse_quote!(enum U { A(A, B) })),
            ["variant `A` must wrap exactly one type: write `A(A)`, where `A` is a type with #[derive(Entity)]"]
        );
        assert_eq!(
            errors(parse_quote!(
                enum U {
                    A { a: A },
                }
            ))
            .len(),
            1
        );
        assert_eq!(
            errors(parse_quote!(
                enum U {
                    A,
                }
            ))
            .len(),
            1
        );
        assert_eq!(
            errors(parse_quote!(enum U { A(A), #[entity(other)] X(Row) })),
            ["the `other` variant holds the raw row: its type must be DynamicEntity (`#[entity(other)] Other(tables_client::DynamicEntity)`)"]
        );
        assert_eq!(
            errors(parse_quote!(
                enum U {
                    #[entity(other)]
                    X(DynamicEntity),
                    #[entity(other)]
                    Y(DynamicEntity),
                }
            )),
            ["`Y` is a second `other` variant after `X`; a union has at most one, keep one"]
        );
        assert_eq!(
            errors(parse_quote!(
                #[entity(kind = "x")]
                enum U {
                    A(A),
                }
            )),
            ["unknown EntityUnion attribute `kind`; expected one of: crate"]
        );
        assert_eq!(
            errors(parse_quote!(enum U { #[entity(others)] A(A) })),
            ["unknown EntityUnion variant attribute `others` (did you mean `other`?); expected one of: other"]
        );
        assert!(errors(parse_quote!(
            struct U(A);
        ))[0]
            .starts_with("#[derive(EntityUnion)] needs an enum"));
        assert!(errors(parse_quote!(
            enum U<T> {
                A(T),
            }
        ))[0]
            .starts_with("generic entity unions are not supported"));
    }
}
