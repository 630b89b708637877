//! Rules over field types, and over `#[derive(EntityUnion)]` and
//! `#[derive(Property)]` models.

use quote::ToTokens;

use super::keys::{is_forbidden_key_char, show_char};
use crate::attr::shape::{unstorable, unstorable_message};
use crate::error::Errors;
use crate::model::{Codec, EntityModel, PropertyBody, PropertyModel, UnionModel};

/// A field stored through its own type needs a type with a faithful storage:
/// reported once per field, at its type (key placeholders of the field add nothing).
pub(crate) fn storable_fields(model: &EntityModel, errors: &mut Errors) {
    for field in &model.fields {
        if !matches!(field.codec, Codec::Plain) {
            continue; // `json`, `with`, `skip` choose their own storage
        }
        if let Some(name) = unstorable(&field.shape) {
            errors.push_spanned(&field.ty, unstorable_message(name));
        }
    }
}

/// A newtype stores its inner type, which needs a faithful storage too.
pub(crate) fn storable_newtype(model: &PropertyModel, errors: &mut Errors) {
    if let PropertyBody::Newtype { ty, shape } = &model.body {
        if let Some(name) = unstorable(shape) {
            errors.push_spanned(ty, unstorable_message(name));
        }
    }
}

/// Rule 20: a union has at least one entity variant.
pub(crate) fn union_has_variants(model: &UnionModel, errors: &mut Errors) {
    if model.variants.is_empty() {
        errors.push(
            model.ident.span(),
            format!(
                "`{}` has no entity variants; add one per entity type that shares the table, e.g. \
                 `Employee(Employee)`",
                model.ident
            ),
        );
    }
}

/// Two variants wrapping one type could never both be decoded.
pub(crate) fn union_types_distinct(model: &UnionModel, errors: &mut Errors) {
    for (i, variant) in model.variants.iter().enumerate() {
        let ty = variant.ty.to_token_stream().to_string();
        if let Some(earlier) = model.variants[..i]
            .iter()
            .find(|v| v.ty.to_token_stream().to_string() == ty)
        {
            errors.push_spanned(
                &variant.ty,
                format!(
                    "variants `{}` and `{}` both wrap `{ty}`; a row decodes into the variant of its kind, so \
                     each entity type appears once: remove one",
                    earlier.ident, variant.ident
                ),
            );
        }
    }
}

/// Rule 21: a unit enum has at least one variant.
pub(crate) fn enum_has_variants(model: &PropertyModel, errors: &mut Errors) {
    if let PropertyBody::UnitEnum(variants) = &model.body {
        if variants.is_empty() {
            errors.push(
                model.ident.span(),
                format!(
                    "`{}` has no variants, so no value can be stored; add at least one",
                    model.ident
                ),
            );
        }
    }
}

/// Rule 21: variant texts are distinct, so each decodes to one variant.
pub(crate) fn texts_distinct(model: &PropertyModel, errors: &mut Errors) {
    let PropertyBody::UnitEnum(variants) = &model.body else {
        return;
    };
    for (i, (ident, text)) in variants.iter().enumerate() {
        if let Some((earlier, _)) = variants[..i].iter().find(|(_, t)| t == text) {
            errors.push(
                ident.span(),
                format!(
                    "variants `{earlier}` and `{ident}` are both stored as {text:?}; give one another text with \
                     #[entity(rename = \"..\")]"
                ),
            );
        }
    }
}

/// Rule 21: variant texts can be key parts, so they avoid forbidden key characters.
pub(crate) fn texts_are_key_safe(model: &PropertyModel, errors: &mut Errors) {
    let PropertyBody::UnitEnum(variants) = &model.body else {
        return;
    };
    for (ident, text) in variants {
        if let Some(c) = text.chars().find(|c| is_forbidden_key_char(*c)) {
            errors.push(
                ident.span(),
                format!(
                    "variant `{ident}` is stored as {text:?}, which contains {}; enum texts can be key parts, \
                     and keys can't hold `/`, `\\`, `#`, `?` or control characters: choose another text with \
                     #[entity(rename = \"..\")]",
                    show_char(c)
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    fn union_errors(input: syn::DeriveInput) -> Vec<String> {
        match crate::attr::union(&input).and_then(|model| super::super::union(&model)) {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    fn property_errors(input: syn::DeriveInput) -> Vec<String> {
        match crate::attr::property(&input).and_then(|model| super::super::property(&model)) {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn unions() {
        assert!(union_errors(parse_quote!(
            enum U {
                A(A),
                B(b::B),
                #[entity(other)]
                O(DynamicEntity),
            }
        ))
        .is_empty());
        assert_eq!(
            union_errors(parse_quote!(enum U { #[entity(other)] O(DynamicEntity) })),
            ["`U` has no entity variants; add one per entity type that shares the table, e.g. `Employee(Employee)`"]
        );
        assert_eq!(
            union_errors(parse_quote!(
                enum U {}
            ))
            .len(),
            1
        );
        assert_eq!(
            union_errors(parse_quote!(enum U { A(x::A), B(x::A) })),
            ["variants `A` and `B` both wrap `x :: A`; a row decodes into the variant of its kind, so each entity type appears once: remove one"]
        );
    }

    #[test]
    fn unstorable_types_are_refused_once_with_the_ways_out() {
        use super::super::test_support::{assert_one_error, entity_errors};
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{n:signed}_{m:020}")]
                struct E {
                    n: i128,
                    m: u64,
                }
            ),
            &[
                "`i128` can't be stored faithfully",
                "Edm.Int64",
                "#[entity(with = module)]",
                "#[entity(json)]",
            ],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{at:ticks}")]
                struct E {
                    at: chrono::NaiveDateTime,
                }
            ),
            &[
                "`NaiveDateTime` can't be stored faithfully",
                "chrono::DateTime<Utc>",
                "chrono::NaiveDate",
            ],
        );
        assert_eq!(
            entity_errors(parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E {
                    at: Option<PrimitiveDateTime>,
                    n: u128,
                }
            ))
            .len(),
            2
        );
        // Stored through JSON or a codec of the user's: their choice.
        assert!(entity_errors(parse_quote!(
            #[entity(partition_key = "p", row_key = "r")]
            struct E {
                #[entity(json)]
                n: i128,
                #[entity(with = m)]
                at: NaiveDateTime,
            }
        ))
        .is_empty());
        assert_eq!(
            property_errors(parse_quote!(
                struct Big(u128);
            ))
            .len(),
            1
        );
    }

    #[test]
    fn properties() {
        assert!(property_errors(parse_quote!(
            enum S {
                A,
                B,
            }
        ))
        .is_empty());
        assert!(property_errors(parse_quote!(
            struct S(String);
        ))
        .is_empty());
        assert_eq!(
            property_errors(parse_quote!(
                enum S {}
            )),
            ["`S` has no variants, so no value can be stored; add at least one"]
        );
        assert_eq!(
            property_errors(parse_quote!(#[entity(rename_all = "lowercase")] enum S { Ab, AB })),
            ["variants `Ab` and `AB` are both stored as \"ab\"; give one another text with #[entity(rename = \"..\")]"]
        );
        let errors = property_errors(parse_quote!(
            enum S {
                #[entity(rename = "a/b")]
                A,
            }
        ));
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].starts_with("variant `A` is stored as \"a/b\", which contains `/`"),
            "{errors:?}"
        );
    }
}
