//! Rules over names: the kind, `upgrade_from`, index names, generated helper
//! names, stored property names and typed column names.

use proc_macro2::Span;
use quote::ToTokens;

use crate::attr::shape::unwrap_option;
use crate::attr::template::{is_identifier, UnrawString};
use crate::error::Errors;
use crate::model::{Codec, EntityModel, Field, KeyForm, Segment, TagModel, Template};

/// Property names a field can't be stored under: the service's system properties
/// and the ones the typed layer writes itself.
const RESERVED_PROPERTIES: [&str; 10] = [
    "PartitionKey",
    "RowKey",
    "Timestamp",
    "EntityType",
    "EntityVersion",
    "PrimaryPartitionKey",
    "PrimaryRowKey",
    "EntityParts",
    "EntityPart",
    "EntityPartsTag",
];
/// Longest property name the service accepts.
const MAX_PROPERTY_NAME: usize = 255;
/// The most properties of its own a row may hold (255 with the three system ones).
use crate::model::MAX_PROPERTIES;
/// Associated constants of the `Entity` trait a typed column would hide.
const TRAIT_CONSTS: [&str; 2] = ["KIND", "VERSION"];

/// Rule 19: the kind is an identifier-like name (`@`, `#`, `$` mark index copies,
/// index entries and system rows).
pub(crate) fn kind(model: &EntityModel, errors: &mut Errors) {
    let kind = &model.kind;
    let mut chars = kind.chars();
    let valid = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !valid {
        errors.push(
            model.kind_span,
            format!(
                "kind {kind:?} can't be a discriminator: write letters, digits, `_` and `.`, starting with a \
                 letter or `_`, e.g. kind = \"Employee\" (`@`, `#` and `$` mark index and system rows)"
            ),
        );
    }
}

/// `upgrade_from(..)`: each older type once, and not the type itself.
pub(crate) fn upgrade_from(model: &EntityModel, errors: &mut Errors) {
    let mut seen: Vec<String> = Vec::new();
    for path in &model.upgrade_from {
        let text = path.to_token_stream().to_string();
        if path.is_ident("Self") || path.is_ident(&model.ident) {
            errors.push_spanned(
                path,
                "an entity can't upgrade from itself: `upgrade_from` lists the older types whose rows this \
                 type can still read",
            );
        } else if seen.contains(&text) {
            errors.push_spanned(
                path,
                format!("`{text}` is listed twice in `upgrade_from`; list each type once"),
            );
        }
        seen.push(text);
    }
}

/// Rule 13: index names are unique snake_case identifiers.
pub(crate) fn index_names(model: &EntityModel, errors: &mut Errors) {
    for (i, index) in model.indexes.iter().enumerate() {
        let name = &index.name;
        let mut bytes = name.bytes();
        let snake = matches!(bytes.next(), Some(b) if b.is_ascii_lowercase())
            && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !snake {
            errors.push(
                index.name_span,
                format!(
                    "index name {name:?} must be a snake_case identifier (a lowercase letter, then lowercase \
                     letters, digits and `_`): it names the generated helpers, e.g. name = \"by_email\""
                ),
            );
        } else if model.indexes[..i]
            .iter()
            .any(|earlier| earlier.name == *name)
        {
            errors.push(
                index.name_span,
                format!("index name `{name}` is used twice; give each index and index_entity its own name"),
            );
        }
    }
}

/// A generated inherent function.
#[derive(Clone)]
pub(crate) struct Helper {
    /// The function name.
    pub(crate) name: String,
    /// Where a clash is reported: the index name, or the struct / row_key.
    pub(crate) span: Span,
    /// What generates it, for messages.
    pub(crate) origin: String,
    /// The index that generates it (`None`: the primary key).
    pub(crate) index: Option<String>,
}

/// Every inherent function `#[derive(Entity)]` generates, in order: `key`,
/// `partition_key`, `row_key`, the primary row_key's range helpers, then per
/// index `<name>_key` (and for a copy index `<name>_partition`) and its row_key's
/// range helpers (`<name>_<field>_range`, `<name>_<field>_prefix`).
pub(crate) fn helper_names(model: &EntityModel) -> Vec<Helper> {
    let span = model.ident.span();
    let mut helpers: Vec<Helper> = ["key", "partition_key", "row_key"]
        .into_iter()
        .map(|name| Helper {
            name: name.to_owned(),
            span,
            origin: "the primary key".to_owned(),
            index: None,
        })
        .collect();
    let primary = Helper {
        name: String::new(),
        span: model.row_key.span,
        origin: "the primary row_key".to_owned(),
        index: None,
    };
    range_helpers(model, "", &model.row_key, &primary, &mut helpers);
    for index in &model.indexes {
        let key = Helper {
            name: format!("{}_key", index.name),
            span: index.name_span,
            origin: format!("index `{}`", index.name),
            index: Some(index.name.clone()),
        };
        helpers.push(key.clone());
        if index.kind == crate::model::IndexKind::Copy {
            helpers.push(Helper {
                name: format!("{}_partition", index.name),
                ..key.clone()
            });
        }
        range_helpers(
            model,
            &format!("{}_", index.name),
            &index.row_key,
            &key,
            &mut helpers,
        );
    }
    helpers
}

/// The range helpers of a row_key template: `<field>_range` for a fixed-width
/// placeholder, `<field>_range` and `<field>_prefix` for a String placeholder
/// that ends the template.
fn range_helpers(
    model: &EntityModel,
    prefix: &str,
    template: &Template,
    owner: &Helper,
    helpers: &mut Vec<Helper>,
) {
    let mut seen: Vec<usize> = Vec::new();
    let last = template.segments.len().saturating_sub(1);
    for (position, segment) in template.segments.iter().enumerate() {
        let Segment::Field(placeholder) = segment else {
            continue;
        };
        let Some(field) = model.fields.get(placeholder.field) else {
            continue;
        };
        if seen.contains(&placeholder.field) {
            continue; // reported by the "field once" rules
        }
        seen.push(placeholder.field);
        let name = field.ident.unraw_string();
        let trailing_string = placeholder.form == KeyForm::Text
            && position == last
            && crate::attr::shape::is_text(unwrap_option(&field.shape));
        let suffixes: &[&str] = match placeholder.form.fixed_width() {
            Some(_) => &["range"],
            None if trailing_string => &["range", "prefix"],
            None => &[],
        };
        for suffix in suffixes {
            helpers.push(Helper {
                name: format!("{prefix}{name}_{suffix}"),
                span: owner.span,
                origin: format!("{} (placeholder `{{{name}}}`)", owner.origin),
                index: owner.index.clone(),
            });
        }
    }
}

/// Rule 13: two generated functions must not share a name. (Two indexes with one
/// name are reported by [`index_names`] only.)
pub(crate) fn helper_clashes(model: &EntityModel, errors: &mut Errors) {
    let helpers = helper_names(model);
    for (i, helper) in helpers.iter().enumerate() {
        let clash = helpers[..i]
            .iter()
            .find(|earlier| earlier.name == helper.name);
        if let Some(earlier) =
            clash.filter(|earlier| helper.index.is_none() || earlier.index != helper.index)
        {
            errors.push(
                helper.span,
                format!(
                    "{} would generate `{}::{}`, which is already generated for {}; rename the index",
                    helper.origin, model.ident, helper.name, earlier.origin
                ),
            );
        }
    }
}

/// Fields stored as properties: not skipped, not part of the primary key.
fn stored(model: &EntityModel) -> impl Iterator<Item = &Field> {
    model
        .fields
        .iter()
        .filter(|f| !matches!(f.codec, Codec::Skip | Codec::Others) && f.primary_key_use.is_none())
}

/// Rule 16: stored property names are valid, not reserved, and distinct (the tag's
/// property too).
pub(crate) fn property_names(model: &EntityModel, errors: &mut Errors) {
    let fields: Vec<&Field> = stored(model).collect();
    if let TagModel::Property { name, span, .. } = &model.tag {
        if !is_identifier(name) || RESERVED_PROPERTIES.contains(&name.as_str()) {
            errors.push(
                *span,
                format!(
                    "{name:?} can't be the tag's property: it must be a valid property name that is \
                     not reserved ({}), e.g. \"Type\"",
                    RESERVED_PROPERTIES.join(", ")
                ),
            );
        } else if let Some(field) = fields.iter().find(|f| f.property == *name) {
            errors.push(
                *span,
                format!(
                    "field `{}` is stored as `{name}`, the tag's property: the tag writes that \
                     property itself, so remove the field (or store it under another name)",
                    field.ident
                ),
            );
        }
    }
    // Every stored name with its field: a series stores one per point.
    let names: Vec<(&Field, &str)> = fields
        .iter()
        .flat_map(|field| {
            field
                .properties()
                .into_iter()
                .map(move |name| (*field, name))
        })
        .collect();
    for (i, &(field, name)) in names.iter().enumerate() {
        let fix = "choose another with #[entity(rename = \"..\")]";
        if !is_identifier(name) {
            errors.push(
                field.property_span,
                format!(
                    "property name {name:?} is not allowed: property names are ASCII letters, digits and `_`, \
                     starting with a letter or `_`; {fix}"
                ),
            );
        } else if name.len() > MAX_PROPERTY_NAME {
            errors.push(
                field.property_span,
                format!("property name is {} characters long, over the service's {MAX_PROPERTY_NAME}; {fix}", name.len()),
            );
        } else if RESERVED_PROPERTIES.contains(&name) {
            errors.push(
                field.property_span,
                format!(
                    "property name `{name}` is reserved (it is a system property or one the typed layer writes \
                     itself: {}); {fix}",
                    RESERVED_PROPERTIES.join(", ")
                ),
            );
        } else if let Some((earlier, _)) = names[..i].iter().find(|(_, earlier)| *earlier == name) {
            errors.push(
                field.property_span,
                format!(
                    "fields `{}` and `{}` would both be stored as property `{name}`; give one of them \
                     another name with #[entity(rename = \"..\")]",
                    earlier.ident, field.ident
                ),
            );
        }
    }
    property_count(model, errors);
}

/// Rule 16b: a row holds at most 252 properties of its own; a series counts one per
/// point, and the tag's properties count too. A wide type (marked, or with a series
/// too long for one row) spreads them over several rows.
fn property_count(model: &EntityModel, errors: &mut Errors) {
    let total = model.property_count();
    if total <= MAX_PROPERTIES || model.is_wide() {
        return;
    }
    errors.push(
        model.ident.span(),
        format!(
            "the type stores {total} properties per row, over the {MAX_PROPERTIES} a row of the \
             Table service may hold; mark it #[entity(wide)] to spread each entity over several \
             rows of its partition, or store some fields together (`json`)"
        ),
    );
}

/// Rule 17: typed column constants are distinct and don't hide `KIND` / `VERSION`.
pub(crate) fn column_names(model: &EntityModel, errors: &mut Errors) {
    let fields: Vec<&Field> = stored(model)
        .filter(|f| matches!(f.codec, Codec::Plain))
        .collect();
    for (i, field) in fields.iter().enumerate() {
        let column = &field.column;
        if TRAIT_CONSTS.contains(&column.as_str()) {
            errors.push(
                field.ident.span(),
                format!(
                    "field `{}` would get the typed column `{}::{column}`, which clashes with the entity's \
                     `{column}` constant; name the column with #[entity(column = \"..\")]",
                    field.ident, model.ident
                ),
            );
        } else if let Some(earlier) = fields[..i].iter().find(|earlier| earlier.column == *column) {
            errors.push(
                field.ident.span(),
                format!(
                    "fields `{}` and `{}` would both get the typed column `{column}`; name one of them with \
                     #[entity(column = \"..\")]",
                    earlier.ident, field.ident
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::super::test_support::{assert_one_error, entity_errors};
    use super::*;

    #[test]
    fn kinds() {
        for bad in ["", "1x", "Employee@x", "a#b", "$x", "a b", "a-b"] {
            assert_one_error(
                parse_quote!(
                    #[entity(kind = #bad, partition_key = "p", row_key = "r")]
                    struct E {
                        a: u8,
                    }
                ),
                &["can't be a discriminator", "kind = \"Employee\""],
            );
        }
        assert!(entity_errors(parse_quote!(
            #[entity(kind = "hr.Employee_2", partition_key = "p", row_key = "r")]
            struct E {
                a: u8,
            }
        ))
        .is_empty());
        assert!(entity_errors(parse_quote!(
            #[entity(partition_key = "p", row_key = "r")]
            struct r#E {
                a: u8,
            }
        ))
        .is_empty());
    }

    #[test]
    fn upgrades() {
        assert_one_error(
            parse_quote!(
                #[entity(upgrade_from(v1::E, v1::E), partition_key = "p", row_key = "r")]
                struct E {
                    a: u8,
                }
            ),
            &["`v1 :: E` is listed twice in `upgrade_from`"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(upgrade_from(E), partition_key = "p", row_key = "r")]
                struct E {
                    a: u8,
                }
            ),
            &["can't upgrade from itself"],
        );
    }

    #[test]
    fn index_names_are_snake_case_and_distinct() {
        for bad in ["Email", "1a", "", "by-email", "_a"] {
            assert_one_error(
                parse_quote!(
                    #[entity(partition_key = "p", row_key = "r", index(name = #bad, row_key = "i_{a:03}"))]
                    struct E {
                        a: u8,
                    }
                ),
                &["must be a snake_case identifier"],
            );
        }
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                #[entity(
                    index(name = "i", row_key = "i_{a:03}"),
                    index_entity(name = "i", row_key = "j_{a:03}")
                )]
                struct E {
                    a: u8,
                }
            ),
            &["index name `i` is used twice"],
        );
    }

    #[test]
    fn helper_names_follow_the_templates() {
        let model = crate::attr::entity(&parse_quote!(
            #[entity(partition_key = "{d}", row_key = "{a}_{b:06}_{c}")]
            #[entity(
                index(name = "by", row_key = "by_{t:rticks}_{u}"),
                index(name = "x", row_key = "x_{e}")
            )]
            struct E {
                d: String,
                a: Status,
                b: u32,
                c: String,
                t: DateTime,
                u: Uuid,
                e: Option<Status>,
            }
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<String> = helper_names(&model).into_iter().map(|h| h.name).collect();
        assert_eq!(
            names,
            [
                "key",
                "partition_key",
                "row_key",
                "b_range",
                "c_range",
                "c_prefix",
                "by_key",
                "by_partition",
                "by_t_range",
                "by_u_range",
                "x_key",
                "x_partition"
            ]
        );
    }

    #[test]
    fn helper_clashes_are_reported_at_the_index() {
        assert_one_error(
            parse_quote!(#[entity(partition_key = "p", row_key = "r", index(name = "partition", row_key = "i_{a:03}"))] struct E { a: u8 }),
            &["index `partition` would generate `E::partition_key`, which is already generated for the primary key; rename the index"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r_{a_b:03}", unique_index(name = "a", row_key = "i_{b:03}"))]
                struct E { a_b: u8, b: u8 }
            ),
            &["index `a` (placeholder `{b}`) would generate `E::a_b_range`, which is already generated for the primary row_key (placeholder `{a_b}`)"],
        );
    }

    #[test]
    fn property_names_rules() {
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E {
                    #[entity(rename = "a-b")]
                    a: u8,
                }
            ),
            &["property name \"a-b\" is not allowed"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E {
                    #[entity(rename = "odata.etag")]
                    a: u8,
                }
            ),
            &["property name \"odata.etag\" is not allowed"],
        );
        let long = "a".repeat(256);
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E {
                    #[entity(rename = #long)]
                    a: u8,
                }
            ),
            &["property name is 256 characters long"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E {
                    #[entity(rename = "Timestamp")]
                    a: u8,
                }
            ),
            &["property name `Timestamp` is reserved"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(rename_all = "PascalCase", partition_key = "p", row_key = "r")]
                struct E {
                    entity_type: u8,
                }
            ),
            &["property name `EntityType` is reserved"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E {
                    age: u8,
                    #[entity(rename = "age")]
                    years: u8,
                }
            ),
            &["fields `age` and `years` would both be stored as property `age`"],
        );
        // Key fields and skipped fields are not stored: their names don't matter.
        assert!(entity_errors(parse_quote!(
            #[entity(partition_key = "{RowKey}", row_key = "r")]
            #[allow(non_snake_case)]
            struct E {
                RowKey: String,
                #[entity(skip)]
                Timestamp: u8,
            }
        ))
        .is_empty());
    }

    #[test]
    fn column_names_rules() {
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E {
                    kind: u8,
                }
            ),
            &[
                "field `kind` would get the typed column `E::KIND`",
                "#[entity(column = \"..\")]",
            ],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E {
                    a: u8,
                    #[entity(column = "A")]
                    b: u8,
                }
            ),
            &["fields `a` and `b` would both get the typed column `A`"],
        );
        // json fields get no column, so no clash.
        assert!(entity_errors(parse_quote!(
            #[entity(partition_key = "p", row_key = "r")]
            struct E {
                #[entity(json)]
                version: u8,
            }
        ))
        .is_empty());
    }
}
