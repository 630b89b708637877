//! `#[derive(Entity)]`: container keys, then fields, then the templates and
//! indexes bound to the fields.

use syn::spanned::Spanned as _;

use super::field::{self, FieldAttrs};
use super::index::{self, bind_index, Declared, RawIndex};
use super::keys::ENTITY_KEYS;
use super::template::{self, UnrawString};
use super::{
    crate_value, flag, for_each_key, no_generics, path_list, skip_value, string_value, unknown_key,
    Once, RenameRule,
};
use crate::error::{did_you_mean, Errors};
use crate::model::{Codec, EntityModel, Field, KeyUse, Segment, TagModel, TagValueModel, Template};

/// Keys that belong on a field: named in the error when written on the struct.
const FIELD_ONLY: [&str; 6] = ["rename", "skip", "json", "default", "with", "column"];

/// The largest version: `EntityVersion` is stored as an Int32.
const MAX_VERSION: u32 = i32::MAX as u32;

/// The struct's `#[entity(..)]` keys.
#[derive(Default)]
struct ContainerAttrs {
    kind: Once<syn::LitStr>,
    version: Once<u32>,
    upgrade_from: Once<Vec<syn::Path>>,
    tag: Once<RawTag>,
    partition_key: Once<syn::LitStr>,
    row_key: Once<syn::LitStr>,
    rename_all: Once<RenameRule>,
    krate: Once<syn::Path>,
    allow_hot_partition: Once<proc_macro2::Span>,
    wide: Once<proc_macro2::Span>,
    indexes: Vec<RawIndex>,
    /// Keys an unknown key looked like (not reported missing as well).
    misspelled: Vec<&'static str>,
}

/// Parses a `#[derive(Entity)]` input into its model, or every error found.
#[cfg(test)]
pub(crate) fn entity(input: &syn::DeriveInput) -> syn::Result<EntityModel> {
    match entity_recovering(input) {
        (Some(model), None) => Ok(model),
        (_, Some(errors)) => Err(errors),
        (None, None) => Err(syn::Error::new(
            input.ident.span(),
            "the entity could not be read",
        )),
    }
}

/// Parses a `#[derive(Entity)]` input: the model and every error found. With
/// errors, the model (when the struct could be read at all) is the one the user
/// most likely meant, for the items the derive still generates (see
/// `template::recover`); it is never validated or expanded in full.
pub(crate) fn entity_recovering(
    input: &syn::DeriveInput,
) -> (Option<EntityModel>, Option<syn::Error>) {
    let mut errors = Errors::new();
    no_generics(input, "entities", &mut errors);
    let container = container(&input.attrs, &mut errors);
    let named = named_fields(input, &mut errors);
    let rename_all = container.rename_all.get().copied();
    let (mut fields, attrs): (Vec<Field>, Vec<FieldAttrs>) = named
        .iter()
        .flat_map(|named| named.named.iter())
        .filter_map(|f| {
            f.ident
                .as_ref()
                .map(|ident| field::parse(f, ident, rename_all, &mut errors))
        })
        .unzip();

    if named.is_none() {
        return (
            None,
            Some(errors.into_error(input.ident.span(), "the entity could not be read")),
        );
    }
    let partition_key_lit = container.partition_key.get();
    let partition_key = match partition_key_lit {
        Some(lit) => template::resolve(lit, &fields, &mut errors),
        None => missing(
            &container,
            input,
            "partition_key",
            "partition_key = \"{department}\"",
            &mut errors,
        ),
    };
    let row_key = match container.row_key.get() {
        Some(lit) => template::resolve(lit, &fields, &mut errors),
        None => missing(
            &container,
            input,
            "row_key",
            "row_key = \"empid_{employee_id:06}\"",
            &mut errors,
        ),
    };
    // A template with errors is read as the user most likely meant it, for the
    // items generated beside the errors; the rules below that depend on the
    // templates then run without reporting (they would report follow-on errors).
    let templates_ok = partition_key.is_some() && row_key.is_some();
    let partition_key =
        partition_key.or_else(|| partition_key_lit.map(|lit| template::recover(lit, &fields)));
    let row_key = row_key.or_else(|| {
        container
            .row_key
            .get()
            .map(|lit| template::recover(lit, &fields))
    });
    let (Some(partition_key), Some(row_key)) = (partition_key, row_key) else {
        return (
            None,
            Some(errors.into_error(input.ident.span(), "the entity could not be read")),
        );
    };
    let mut reported = errors;
    let mut unreported = Errors::new();
    let errors: &mut Errors = if templates_ok {
        &mut reported
    } else {
        &mut unreported
    };
    mark_key_use(&mut fields, &partition_key, KeyUse::PartitionKey);
    mark_key_use(&mut fields, &row_key, KeyUse::RowKey);
    key_field_attributes(&fields, &attrs, errors);
    if let Some(second) = fields
        .iter()
        .filter(|f| matches!(f.codec, Codec::Others))
        .nth(1)
    {
        errors.push(
            second.ident.span(),
            "only one field can hold the other properties: keep `other_properties` on one field",
        );
    }
    column_without_column(&fields, &attrs, errors);

    let indexes = container
        .indexes
        .iter()
        .filter_map(|raw| {
            bind_index(raw, partition_key_lit, &partition_key, &fields, errors)
                .or_else(|| index::recover_index(raw, partition_key_lit, &partition_key, &fields))
        })
        .collect();

    let (kind, kind_span) = match container.kind.get() {
        Some(lit) => (lit.value(), lit.span()),
        None => (input.ident.unraw_string(), input.ident.span()),
    };
    let tag = match container.tag.get() {
        Some(raw) => bind_tag(raw, &kind, &row_key, &container, errors),
        None => TagModel::Kind,
    };
    let model = EntityModel {
        ident: input.ident.clone(),
        vis: input.vis.clone(),
        krate: container
            .krate
            .into_inner()
            .unwrap_or_else(super::default_krate),
        kind,
        kind_span,
        tag,
        version: container.version.into_inner().unwrap_or(1),
        upgrade_from: container.upgrade_from.into_inner().unwrap_or_default(),
        partition_key,
        row_key,
        indexes,
        fields,
        allow_hot_partition: container.allow_hot_partition.get().is_some(),
        wide: container.wide.get().is_some(),
    };
    (Some(model), reported.finish().err())
}

/// Reports a missing template key, unless it was written with a bad value or
/// misspelled (both reported already).
fn missing(
    container: &ContainerAttrs,
    input: &syn::DeriveInput,
    key: &'static str,
    example: &str,
    errors: &mut Errors,
) -> Option<Template> {
    let given = match key {
        "partition_key" => container.partition_key.seen(),
        _ => container.row_key.seen(),
    };
    if !given && !container.misspelled.contains(&key) {
        errors.push(
            input.ident.span(),
            format!("missing `{key}`: add #[entity({key} = \"..\")], a template over the fields, e.g. {example}"),
        );
    }
    None
}

fn named_fields<'a>(
    input: &'a syn::DeriveInput,
    errors: &mut Errors,
) -> Option<&'a syn::FieldsNamed> {
    match &input.data {
        syn::Data::Struct(syn::DataStruct {
            fields: syn::Fields::Named(named),
            ..
        }) => Some(named),
        syn::Data::Struct(_) => {
            errors.push(
                input.ident.span(),
                "#[derive(Entity)] needs a struct with named fields (`struct Employee { .. }`): templates \
                 name the fields",
            );
            None
        }
        syn::Data::Enum(_) => {
            errors.push(
                input.ident.span(),
                "#[derive(Entity)] needs a struct with named fields; for an enum over several entity \
                 types use #[derive(EntityUnion)], for a unit enum stored as a string #[derive(Property)]",
            );
            None
        }
        syn::Data::Union(_) => {
            errors.push(
                input.ident.span(),
                "#[derive(Entity)] needs a struct with named fields, not a union",
            );
            None
        }
    }
}

fn container(attrs: &[syn::Attribute], errors: &mut Errors) -> ContainerAttrs {
    let mut c = ContainerAttrs::default();
    for_each_key(attrs, errors, |meta, key, errors| {
        match key {
            "kind" if c.kind.claim(meta, key, errors) => {
                c.kind
                    .set(string_value(meta, key, "kind = \"Employee\"", errors)?);
            }
            "version" if c.version.claim(meta, key, errors) => {
                c.version.set(version(meta, errors)?)
            }
            "upgrade_from" if c.upgrade_from.claim(meta, key, errors) => {
                c.upgrade_from.set(Some(path_list(
                    meta,
                    key,
                    "upgrade_from(EmployeeV1)",
                    errors,
                )?));
            }
            "tag" | "untagged" if c.tag.claim(meta, "tag", errors) => {
                c.tag.set(raw_tag(meta, key, errors)?);
            }
            "partition_key" if c.partition_key.claim(meta, key, errors) => {
                c.partition_key.set(string_value(
                    meta,
                    key,
                    "partition_key = \"{department}\"",
                    errors,
                )?);
            }
            "row_key" if c.row_key.claim(meta, key, errors) => {
                c.row_key.set(string_value(
                    meta,
                    key,
                    "row_key = \"empid_{employee_id:06}\"",
                    errors,
                )?);
            }
            "rename_all" if c.rename_all.claim(meta, key, errors) => {
                c.rename_all.set(rename_all(meta, errors)?);
            }
            "crate" if c.krate.claim(meta, key, errors) => c.krate.set(crate_value(meta, errors)?),
            "allow_hot_partition" if c.allow_hot_partition.claim(meta, key, errors) => {
                c.allow_hot_partition.set(flag(meta, key, errors)?);
            }
            "wide" if c.wide.claim(meta, key, errors) => {
                c.wide.set(flag(meta, key, errors)?);
            }
            "index" => c
                .indexes
                .extend(index::parse(meta, Declared::Index, errors)?),
            "unique_index" => c
                .indexes
                .extend(index::parse(meta, Declared::UniqueIndex, errors)?),
            "index_entity" => c
                .indexes
                .extend(index::parse(meta, Declared::IndexEntity, errors)?),
            known if ENTITY_KEYS.contains(&known) => skip_value(meta)?,
            misplaced if FIELD_ONLY.contains(&misplaced) => {
                errors.push_spanned(
                    &meta.path,
                    format!("`{misplaced}` goes on a field, not on the struct: #[entity({misplaced})] above the field"),
                );
                skip_value(meta)?;
            }
            unknown => c.misspelled.extend(unknown_key(
                meta,
                unknown,
                "entity attribute",
                &ENTITY_KEYS,
                errors,
            )?),
        }
        Ok(())
    });
    c
}

/// A `tag(..)` or `untagged` as written.
enum RawTag {
    Property {
        name: syn::LitStr,
        value: Option<(TagValueModel, proc_macro2::Span)>,
    },
    RowKeyPrefix(proc_macro2::Span),
    Untagged(proc_macro2::Span),
}

const TAG_FORMS: &str = "tag(property = \"Type\", value = \"Employee\") (a column naming the type; \
                         `value` is a string or an Int32, the kind by default), tag(row_key_prefix) \
                         (the RowKey template's literal start, e.g. \"EMPLOYEE_\"), or untagged";

/// `untagged`, `tag(property = "..", value = ..)` or `tag(row_key_prefix)`.
fn raw_tag(
    meta: &syn::meta::ParseNestedMeta<'_>,
    key: &str,
    errors: &mut Errors,
) -> syn::Result<Option<RawTag>> {
    let span = meta.path.span();
    if key == "untagged" {
        if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
            errors.push(span, "`untagged` takes no value: #[entity(untagged)]");
            skip_value(meta)?;
            return Ok(None);
        }
        return Ok(Some(RawTag::Untagged(span)));
    }
    if !meta.input.peek(syn::token::Paren) {
        errors.push(span, format!("`tag` needs its form: {TAG_FORMS}"));
        skip_value(meta)?;
        return Ok(None);
    }
    let mut property: Option<syn::LitStr> = None;
    let mut value: Option<(TagValueModel, proc_macro2::Span)> = None;
    let mut prefix: Option<proc_macro2::Span> = None;
    let mut bad = false;
    meta.parse_nested_meta(|inner| {
        let name = inner
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        match name.as_str() {
            "property" => {
                property = string_value(&inner, "property", "property = \"Type\"", errors)?
            }
            "value" => {
                let expr: syn::Expr = inner.value()?.parse()?;
                value = tag_value(&expr, errors).map(|v| (v, expr.span()));
                bad |= value.is_none();
            }
            "row_key_prefix" => prefix = Some(inner.path.span()),
            _ => {
                errors.push(
                    inner.path.span(),
                    format!("unknown key in `tag`: {TAG_FORMS}"),
                );
                bad = true;
                skip_value(&inner)?;
            }
        }
        Ok(())
    })?;
    Ok(match (property, prefix) {
        _ if bad => None,
        (Some(name), None) => Some(RawTag::Property { name, value }),
        (None, Some(span)) if value.is_none() => Some(RawTag::RowKeyPrefix(span)),
        _ => {
            errors.push(span, format!("`tag` takes one form: {TAG_FORMS}"));
            None
        }
    })
}

/// `value = "Employee"` or `value = 3` (Int32).
fn tag_value(expr: &syn::Expr, errors: &mut Errors) -> Option<TagValueModel> {
    let lit = match expr {
        syn::Expr::Lit(syn::ExprLit { lit, .. }) => Some(lit.clone()),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) => match format!("-{}", int.base10_digits()).parse::<i32>() {
                Ok(n) => return Some(TagValueModel::Int(n)),
                Err(_) => None,
            },
            _ => None,
        },
        _ => None,
    };
    match lit {
        Some(syn::Lit::Str(text)) => Some(TagValueModel::Text(text.value())),
        Some(syn::Lit::Int(int)) if int.base10_parse::<i32>().is_ok() => {
            int.base10_parse::<i32>().ok().map(TagValueModel::Int)
        }
        _ => {
            errors.push_spanned(
                expr,
                "a tag's `value` is a string literal or an integer that fits an Int32, e.g. value = \"Employee\" or value = 2",
            );
            None
        }
    }
}

/// The tag, checked against the RowKey template and the version keys.
fn bind_tag(
    raw: &RawTag,
    kind: &str,
    row_key: &Template,
    container: &ContainerAttrs,
    errors: &mut Errors,
) -> TagModel {
    let span = match raw {
        RawTag::Property { name, .. } => name.span(),
        RawTag::RowKeyPrefix(span) | RawTag::Untagged(span) => *span,
    };
    if container.version.seen() || container.upgrade_from.seen() {
        errors.push(
            span,
            "`version` and `upgrade_from` need the default tag: the version is stored in \
             EntityVersion, which only that tag writes; remove them, or the tag",
        );
    }
    match raw {
        RawTag::Property { name, value } => TagModel::Property {
            name: name.value(),
            span: name.span(),
            value: match value {
                Some((TagValueModel::Text(text), _)) => TagValueModel::Text(text.clone()),
                Some((TagValueModel::Int(n), _)) => TagValueModel::Int(*n),
                None => TagValueModel::Text(kind.to_owned()),
            },
        },
        RawTag::RowKeyPrefix(span) => match row_key.segments.first() {
            Some(Segment::Literal(prefix)) if !prefix.is_empty() => {
                TagModel::RowKeyPrefix(prefix.clone())
            }
            _ => {
                errors.push(
                    *span,
                    "tag(row_key_prefix) needs a RowKey template that starts with literal text, \
                     e.g. row_key = \"EMPLOYEE_{employee_id:06}\"",
                );
                TagModel::Kind
            }
        },
        RawTag::Untagged(_) => TagModel::Untagged,
    }
}

/// `version = N`, 1 <= N <= i32::MAX.
fn version(meta: &syn::meta::ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Option<u32>> {
    let rule = format!(
        "`version` is an integer from 1 to {MAX_VERSION} (stored as Int32), e.g. version = 2"
    );
    if !meta.input.peek(syn::Token![=]) {
        errors.push_spanned(&meta.path, &rule);
        skip_value(meta)?;
        return Ok(None);
    }
    let expr: syn::Expr = meta.value()?.parse()?;
    let parsed = match &expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => int.base10_parse::<u32>().ok(),
        _ => None,
    };
    match parsed {
        Some(version) if (1..=MAX_VERSION).contains(&version) => Ok(Some(version)),
        _ => {
            errors.push_spanned(&expr, rule);
            Ok(None)
        }
    }
}

fn rename_all(
    meta: &syn::meta::ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<Option<RenameRule>> {
    let Some(lit) = string_value(meta, "rename_all", "rename_all = \"PascalCase\"", errors)? else {
        return Ok(None);
    };
    let text = lit.value();
    if let Some(rule) = RenameRule::parse(&text) {
        return Ok(Some(rule));
    }
    let names: Vec<&str> = super::case::RULES.iter().map(|(name, _)| *name).collect();
    let why = if text.contains('-') {
        " (property names can't contain `-`)".to_owned()
    } else {
        did_you_mean(&text, names.iter().copied())
    };
    errors.push(
        lit.span(),
        format!(
            "unsupported rename_all rule {text:?}{why}; expected one of: {}",
            names.join(", ")
        ),
    );
    Ok(None)
}

fn mark_key_use(fields: &mut [Field], template: &Template, key_use: KeyUse) {
    for segment in &template.segments {
        if let Segment::Field(placeholder) = segment {
            if let Some(field) = fields.get_mut(placeholder.field) {
                field.primary_key_use.get_or_insert(key_use);
            }
        }
    }
}

/// A field of the primary key lives in the key, not in a property: keys that say
/// how it is stored don't apply (rule 10).
fn key_field_attributes(fields: &[Field], attrs: &[FieldAttrs], errors: &mut Errors) {
    for (field, attrs) in fields.iter().zip(attrs) {
        let Some(key_use) = field.primary_key_use else {
            continue;
        };
        if matches!(field.codec, Codec::Skip) {
            continue; // reported by the template rules
        }
        let key = match key_use {
            KeyUse::PartitionKey => "PartitionKey",
            KeyUse::RowKey => "RowKey",
        };
        let name = field.ident.unraw_string();
        for (attribute, span) in attrs
            .storage_keys()
            .chain(attrs.column.map(|span| ("column", span)))
        {
            errors.push(
                span,
                format!(
                    "`{attribute}` doesn't apply to `{name}`: it is part of the {key} template, so it is \
                     written into the key and not stored as a property; remove `{attribute}`"
                ),
            );
        }
    }
}

/// `column = ".."` on a field that gets no typed column (json, with).
fn column_without_column(fields: &[Field], attrs: &[FieldAttrs], errors: &mut Errors) {
    for (field, attrs) in fields.iter().zip(attrs) {
        let codec = match field.codec {
            Codec::Json => "json",
            Codec::With(_) => "with",
            Codec::Plain | Codec::Skip | Codec::Others | Codec::Series(_) => continue,
        };
        if let Some(span) = attrs.column {
            errors.push(
                span,
                format!(
                    "`column` has no effect on a `{codec}` field: typed columns exist for fields stored \
                     through their Property type only; remove `column`"
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;
    use crate::model::{DefaultValue, IndexKind, KeyForm, TypeShape};

    fn errors(input: syn::DeriveInput) -> Vec<String> {
        match entity(&input) {
            Ok(_) => panic!("expected errors"),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    fn one_error(input: syn::DeriveInput, fragments: &[&str]) {
        let errors = errors(input);
        assert_eq!(errors.len(), 1, "{errors:#?}");
        for fragment in fragments {
            assert!(
                errors[0].contains(fragment),
                "{:?} lacks {fragment:?}",
                errors[0]
            );
        }
    }

    #[test]
    fn reads_the_design_example() {
        let model = entity(&parse_quote! {
            #[entity(kind = "Employee", version = 2, upgrade_from(v1::Employee))]
            #[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}", rename_all = "PascalCase")]
            #[entity(index(name = "email", row_key = "email_{email}"))]
            #[entity(index(name = "by_email", table = "EmployeesByEmail", partition_key = "email_{department}",
                           row_key = "{email}", include(first_name, last_name)))]
            #[entity(index_entity(name = "last_name", partition_key = "{department}", row_key = "lastname_{last_name}"))]
            pub struct Employee {
                department: String,
                employee_id: u32,
                first_name: String,
                last_name: String,
                email: String,
                #[entity(rename = "Hired", default)] hired: DateTime,
                #[entity(json)] address: Address,
                #[entity(skip)] scratch: Option<String>,
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(model.kind, "Employee");
        assert_eq!(model.version, 2);
        assert_eq!(model.upgrade_from.len(), 1);
        assert_eq!(
            quote::ToTokens::to_token_stream(&model.krate).to_string(),
            ":: tables_client"
        );
        assert_eq!(model.partition_key.source, "{department}");
        assert!(matches!(
            model.row_key.segments.as_slice(),
            [Segment::Literal(lit), Segment::Field(p)] if lit == "empid_" && p.field == 1 && p.form == KeyForm::Padded(6)
        ));
        let uses: Vec<Option<KeyUse>> = model.fields.iter().map(|f| f.primary_key_use).collect();
        assert_eq!(
            uses[..3],
            [Some(KeyUse::PartitionKey), Some(KeyUse::RowKey), None]
        );
        let properties: Vec<&str> = model.fields.iter().map(|f| f.property.as_str()).collect();
        assert_eq!(
            properties,
            [
                "Department",
                "EmployeeId",
                "FirstName",
                "LastName",
                "Email",
                "Hired",
                "Address",
                "Scratch"
            ]
        );
        assert!(matches!(model.fields[5].default, Some(DefaultValue::Trait)));
        assert_eq!(model.fields[5].shape, TypeShape::DateTime);

        let [email, by_email, last_name] = model.indexes.as_slice() else {
            panic!("three indexes")
        };
        assert_eq!(
            (email.name.as_str(), email.kind, email.same_partition),
            ("email", IndexKind::Copy, true)
        );
        assert!(!email.partition_key_given);
        assert_eq!(email.partition_key.source, "{department}");
        assert_eq!(by_email.table.as_deref(), Some("EmployeesByEmail"));
        assert!(!by_email.same_partition);
        assert_eq!(by_email.include.as_deref(), Some(&[2, 3][..]));
        assert_eq!(
            (
                last_name.kind,
                last_name.same_partition,
                last_name.partition_key_given
            ),
            (IndexKind::List, true, true)
        );
    }

    #[test]
    fn crate_path_and_defaults() {
        let model = entity(&parse_quote!(
            #[entity(crate = "crate", partition_key = "", row_key = "r")]
            struct E {
                a: u8,
            }
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            quote::ToTokens::to_token_stream(&model.krate).to_string(),
            "crate"
        );
        assert_eq!((model.kind.as_str(), model.version), ("E", 1));
        assert!(model.partition_key.segments.is_empty());
        let input: syn::DeriveInput = parse_quote!(
            #[entity(bogus, crate = "my::rt")]
            #[entity(oops(1))]
            struct E;
        );
        assert_eq!(
            quote::ToTokens::to_token_stream(&crate::attr::krate(&input)).to_string(),
            "my :: rt"
        );
        let input: syn::DeriveInput = parse_quote!(
            #[entity(crate = 5)]
            struct E;
        );
        assert_eq!(
            quote::ToTokens::to_token_stream(&crate::attr::krate(&input)).to_string(),
            ":: tables_client"
        );
    }

    #[test]
    fn container_mistakes() {
        one_error(
            parse_quote!(#[entity(partition_key = "p", row_key = "r", paritition_key = "x")] struct E { a: u8 }),
            &["unknown entity attribute `paritition_key` (did you mean `partition_key`?); expected one of: kind, version"],
        );
        one_error(
            parse_quote!(
                #[entity(kind = "A", kind = "B", partition_key = "p", row_key = "r")]
                struct E {
                    a: u8,
                }
            ),
            &["`kind` is given twice; keep one"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r", skip)]
                struct E {
                    a: u8,
                }
            ),
            &["`skip` goes on a field, not on the struct"],
        );
        one_error(
            parse_quote!(
                #[entity(row_key = "r")]
                struct E {
                    a: u8,
                }
            ),
            &["missing `partition_key`: add #[entity(partition_key = \"..\")]"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p")]
                struct E {
                    a: u8,
                }
            ),
            &["missing `row_key`"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = 1, row_key = "r")]
                struct E {
                    a: u8,
                }
            ),
            &["`partition_key` takes a string literal"],
        );
        for version in [
            quote::quote!("2"),
            quote::quote!(0),
            quote::quote!(2147483648),
            quote::quote!(-1),
        ] {
            one_error(
                parse_quote!(#[entity(version = #version, partition_key = "p", row_key = "r")] struct E { a: u8 }),
                &["`version` is an integer from 1 to 2147483647 (stored as Int32), e.g. version = 2"],
            );
        }
        one_error(
            parse_quote!(
                #[entity(rename_all = "kebab-case", partition_key = "p", row_key = "r")]
                struct E {
                    a: u8,
                }
            ),
            &["unsupported rename_all rule \"kebab-case\" (property names can't contain `-`)"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r", crate = "a b")]
                struct E {
                    a: u8,
                }
            ),
            &["`crate` takes a path"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E(u8);
            ),
            &["needs a struct with named fields"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                enum E {
                    A,
                }
            ),
            &["#[derive(EntityUnion)]"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E<'a> {
                    a: &'a str,
                }
            ),
            &["generic entities are not supported", "`'a`"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E
                where
                    u8: Copy,
                {
                    a: u8,
                }
            ),
            &["generic entities are not supported; remove the where clause"],
        );
    }

    #[test]
    fn every_mistake_is_reported_together() {
        let errors = errors(parse_quote!(
            #[entity(kin = "x", row_key = "{nope}")]
            struct E {
                #[entity(json, with = m)]
                a: u8,
                #[entity(skip, rename = "B")]
                b: u8,
            }
        ));
        assert_eq!(errors.len(), 5, "{errors:#?}");
    }

    #[test]
    fn template_fields_must_exist() {
        one_error(
            parse_quote!(#[entity(partition_key = "p", row_key = "{employe_id:06}")] struct E { employee_id: u32 }),
            &["no field `employe_id` in this struct for placeholder `{employe_id}` (did you mean `employee_id`?)"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{salary}")]
                struct E {
                    a: u8,
                    b: u8,
                }
            ),
            &["no field `salary`", "; the fields are: a, b"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{a")]
                struct E {
                    a: u8,
                }
            ),
            &["unclosed `{`"],
        );
    }

    #[test]
    fn key_fields_take_no_storage_keys() {
        for attribute in [
            quote::quote!(rename = "D"),
            quote::quote!(json),
            quote::quote!(with = m),
            quote::quote!(default),
            quote::quote!(column = "D"),
        ] {
            one_error(
                parse_quote!(
                    #[entity(partition_key = "{d}", row_key = "r")]
                    struct E {
                        #[entity(#attribute)]
                        d: String,
                    }
                ),
                &["doesn't apply to `d`: it is part of the PartitionKey template"],
            );
        }
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r")]
                struct E {
                    #[entity(json, column = "X")]
                    d: String,
                }
            ),
            &["`column` has no effect on a `json` field"],
        );
    }
}
