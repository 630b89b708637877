//! `index(..)` and `index_entity(..)` container keys, and their binding to the
//! struct's fields.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::parse::Parse;
use syn::spanned::Spanned;

use super::template::{self, UnrawString};
use super::{key_name, string_value, unknown_key, Once};
use crate::error::{did_you_mean, Errors};
use crate::model::{Codec, Field, Index, IndexKind, KeyUse, Segment, Template};

/// Keys of `index(..)` and `unique_index(..)`.
const INDEX_KEYS: [&str; 5] = ["name", "table", "partition_key", "row_key", "include"];
/// Keys of `index_entity(..)`.
const INDEX_ENTITY_KEYS: [&str; 4] = ["name", "table", "partition_key", "row_key"];

/// An index as written, before its templates and `include` are bound to fields.
pub(crate) struct RawIndex {
    pub(crate) kind: IndexKind,
    pub(crate) name: syn::LitStr,
    pub(crate) table: Option<syn::LitStr>,
    pub(crate) partition_key: Option<syn::LitStr>,
    pub(crate) row_key: syn::LitStr,
    /// The `include` keyword and the field names listed.
    pub(crate) include: Option<(Span, Vec<syn::Ident>)>,
    /// Declared as `unique_index(..)`.
    pub(crate) unique: bool,
}

/// The three ways to declare an index.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Declared {
    /// `index(..)`: copies whose keys hold the primary key.
    Index,
    /// `unique_index(..)`: copies, at most one entity per value.
    UniqueIndex,
    /// `index_entity(..)`: one row per value listing its entities.
    IndexEntity,
}

/// Reads `index(..)`, `unique_index(..)` or `index_entity(..)`; `None` (with errors
/// recorded) when a required key is missing.
pub(crate) fn parse(
    meta: &ParseNestedMeta<'_>,
    declared: Declared,
    errors: &mut Errors,
) -> syn::Result<Option<RawIndex>> {
    let keyword = meta.path.span();
    let (word, keys, example) = match declared {
        Declared::Index => (
            "index",
            &INDEX_KEYS[..],
            "index(name = \"email\", row_key = \"email_{email}_{employee_id:06}\")",
        ),
        Declared::UniqueIndex => (
            "unique_index",
            &INDEX_KEYS[..],
            "unique_index(name = \"email\", row_key = \"email_{email}\")",
        ),
        Declared::IndexEntity => (
            "index_entity",
            &INDEX_ENTITY_KEYS[..],
            "index_entity(name = \"last_name\", row_key = \"lastname_{last_name}\")",
        ),
    };
    let kind = match declared {
        Declared::Index | Declared::UniqueIndex => IndexKind::Copy,
        Declared::IndexEntity => IndexKind::List,
    };
    if !meta.input.peek(syn::token::Paren) {
        errors.push(
            keyword,
            format!("`{word}` takes its keys in parentheses: {example}"),
        );
        super::skip_value(meta)?;
        return Ok(None);
    }
    let mut name = Once::<syn::LitStr>::default();
    let mut table = Once::<syn::LitStr>::default();
    let mut partition_key = Once::<syn::LitStr>::default();
    let mut row_key = Once::<syn::LitStr>::default();
    let mut include = Once::<(Span, Vec<syn::Ident>)>::default();
    let mut misspelled: Vec<&str> = Vec::new();
    meta.parse_nested_meta(|inner| {
        let key = key_name(&inner.path);
        match key.as_str() {
            "name" if name.claim(&inner, &key, errors) => {
                name.set(string_value(&inner, &key, "name = \"email\"", errors)?);
            }
            "table" if table.claim(&inner, &key, errors) => {
                let lit = string_value(&inner, &key, "table = \"EmployeesByEmail\"", errors)?;
                if let Some(lit) = &lit {
                    check_table_name(lit, errors);
                }
                table.set(lit);
            }
            "partition_key" if partition_key.claim(&inner, &key, errors) => {
                partition_key.set(string_value(&inner, &key, "partition_key = \"email_{email}\"", errors)?);
            }
            "row_key" if row_key.claim(&inner, &key, errors) => {
                row_key.set(string_value(&inner, &key, "row_key = \"email_{email}\"", errors)?);
            }
            "include" if kind == IndexKind::List => {
                errors.push_spanned(
                    &inner.path,
                    "`include` applies to `index(..)` copies only: an index entity lists the ids of \
                     its entities and carries no properties; remove `include`",
                );
                super::skip_value(&inner)?;
            }
            "include" if include.claim(&inner, &key, errors) => include.set(include_list(&inner, errors)?),
            "unique" => {
                errors.push_spanned(
                    &inner.path,
                    match declared {
                        Declared::IndexEntity => "`unique` doesn't apply to an index entity, which lists \
                            every entity with a value, however many; for at most one entity per value, \
                            declare `unique_index(name = .., row_key = ..)`",
                        Declared::Index => "`unique` is not a key of `index(..)`: declare a unique index \
                            as `unique_index(name = .., row_key = ..)`",
                        Declared::UniqueIndex => "`unique_index(..)` is unique already: remove `unique`",
                    },
                );
                super::skip_value(&inner)?;
            }
            known if keys.contains(&known) => super::skip_value(&inner)?,
            unknown => misspelled.extend(unknown_key(&inner, unknown, &format!("`{word}` key"), keys, errors)?),
        }
        Ok(())
    })?;
    let missing = |key: &str, errors: &mut Errors| {
        errors.push(
            keyword,
            format!("`{word}(..)` is missing `{key} = \"..\"`: {example}"),
        );
    };
    if !name.seen() && !misspelled.contains(&"name") {
        missing("name", errors);
    }
    if !row_key.seen() && !misspelled.contains(&"row_key") {
        missing("row_key", errors);
    }
    let (Some(name), Some(row_key)) = (name.into_inner(), row_key.into_inner()) else {
        return Ok(None);
    };
    Ok(Some(RawIndex {
        kind,
        name,
        table: table.into_inner(),
        partition_key: partition_key.into_inner(),
        row_key,
        include: include.into_inner(),
        unique: declared == Declared::UniqueIndex,
    }))
}

/// `include(first_name, last_name)`.
fn include_list(
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<Option<(Span, Vec<syn::Ident>)>> {
    let keyword = meta.path.span();
    if !meta.input.peek(syn::token::Paren) {
        errors.push(
            keyword,
            "`include` lists field names in parentheses: include(first_name, last_name)",
        );
        super::skip_value(meta)?;
        return Ok(None);
    }
    let content;
    syn::parenthesized!(content in meta.input);
    let items = content.parse_terminated(syn::Meta::parse, syn::Token![,])?;
    let empty = items.is_empty();
    let mut fields = Vec::with_capacity(items.len());
    for item in items {
        match item.path().get_ident() {
            Some(ident) if matches!(item, syn::Meta::Path(_)) => fields.push(ident.clone()),
            _ => errors.push_spanned(
                &item,
                "`include` lists field names only: include(first_name, last_name)",
            ),
        }
    }
    if empty {
        errors.push(
            keyword,
            "`include()` is empty: list the fields the copy carries, or remove `include` to copy every field",
        );
        return Ok(None);
    }
    Ok((!fields.is_empty()).then_some((keyword, fields)))
}

/// The service's table name rule: `^[A-Za-z][A-Za-z0-9]{2,62}$`, not `tables`.
fn check_table_name(lit: &syn::LitStr, errors: &mut Errors) {
    let name = lit.value();
    let mut bytes = name.bytes();
    let valid = matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric())
        && (3..=63).contains(&name.len())
        && !name.eq_ignore_ascii_case("tables");
    if !valid {
        errors.push(
            lit.span(),
            format!(
                "{name:?} is not a valid table name: a table name has 3 to 63 ASCII letters and digits, \
                 starts with a letter, and is not `tables`; e.g. table = \"EmployeesByEmail\""
            ),
        );
    }
}

/// Binds an index's templates and `include` to the fields; `None` (with errors
/// recorded) when they don't bind.
pub(crate) fn bind_index(
    raw: &RawIndex,
    primary_partition_key: Option<&syn::LitStr>,
    primary: &Template,
    fields: &[Field],
    errors: &mut Errors,
) -> Option<Index> {
    let (partition_key, partition_key_given) = match &raw.partition_key {
        Some(lit) => (template::resolve(lit, fields, errors)?, true),
        // The primary's template parsed before, so this parses again, silently.
        None => (
            template::resolve(primary_partition_key?, fields, &mut Errors::new())?,
            false,
        ),
    };
    let row_key = template::resolve(&raw.row_key, fields, errors)?;
    let include = match &raw.include {
        Some((_, names)) => Some(bind_include(names, fields, errors)?),
        None => None,
    };
    Some(index_of(
        raw,
        (partition_key, partition_key_given),
        row_key,
        include,
        primary,
    ))
}

/// The index `raw` declares, with its bound templates and `include`.
fn index_of(
    raw: &RawIndex,
    (partition_key, partition_key_given): (Template, bool),
    row_key: Template,
    include: Option<Vec<usize>>,
    primary: &Template,
) -> Index {
    let same_partition = raw.table.is_none() && same_segments(&partition_key, primary);
    Index {
        name: raw.name.value(),
        name_span: raw.name.span(),
        kind: raw.kind,
        table: raw.table.as_ref().map(syn::LitStr::value),
        partition_key,
        partition_key_given,
        row_key,
        include,
        unique: raw.unique,
        same_partition,
    }
}

/// An index as the user most likely meant it, reporting nothing (see
/// `template::recover`): for the items the derive still generates after an error.
pub(crate) fn recover_index(
    raw: &RawIndex,
    primary_partition_key: Option<&syn::LitStr>,
    primary: &Template,
    fields: &[Field],
) -> Option<Index> {
    let (partition_key, partition_key_given) = match &raw.partition_key {
        Some(lit) => (template::recover(lit, fields), true),
        None => (template::recover(primary_partition_key?, fields), false),
    };
    let row_key = template::recover(&raw.row_key, fields);
    let include = match &raw.include {
        Some((_, names)) => bind_include(names, fields, &mut Errors::new()),
        None => None,
    };
    Some(index_of(
        raw,
        (partition_key, partition_key_given),
        row_key,
        include,
        primary,
    ))
}

/// `include(..)` names: existing, stored, not part of the primary key, each once
/// (rule 15).
fn bind_include(names: &[syn::Ident], fields: &[Field], errors: &mut Errors) -> Option<Vec<usize>> {
    let mut bound: Vec<usize> = Vec::with_capacity(names.len());
    let before = errors.count();
    for ident in names {
        let name = ident.unraw_string();
        let Some(index) = fields.iter().position(|f| f.ident.unraw_string() == name) else {
            let candidates: Vec<String> = fields.iter().map(|f| f.ident.unraw_string()).collect();
            errors.push(
                ident.span(),
                format!(
                    "`include` names no field `{name}`{}",
                    did_you_mean(&name, candidates.iter().map(String::as_str))
                ),
            );
            continue;
        };
        let field = &fields[index];
        if bound.contains(&index) {
            errors.push(
                ident.span(),
                format!("`{name}` is included twice; list each field once"),
            );
        } else if matches!(field.codec, Codec::Skip) {
            errors.push(
                ident.span(),
                format!("`{name}` is `skip`: it isn't stored, so a copy can't carry it; remove it from `include`"),
            );
        } else if let Some(key_use) = field.primary_key_use {
            let key = match key_use {
                KeyUse::PartitionKey => "PrimaryPartitionKey",
                KeyUse::RowKey => "PrimaryRowKey",
            };
            errors.push(
                ident.span(),
                format!(
                    "`{name}` is part of the primary key: every copy already carries it through its \
                     {key} property; remove it from `include`"
                ),
            );
        }
        bound.push(index);
    }
    (errors.count() == before).then_some(bound)
}

/// Whether two templates write the same key from the same fields.
pub(crate) fn same_segments(a: &Template, b: &Template) -> bool {
    a.segments.len() == b.segments.len()
        && a.segments.iter().zip(&b.segments).all(|pair| match pair {
            (Segment::Literal(x), Segment::Literal(y)) => x == y,
            (Segment::Field(x), Segment::Field(y)) => x.field == y.field && x.form == y.form,
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    fn one_error(input: syn::DeriveInput, fragments: &[&str]) {
        let errors: Vec<String> = match crate::attr::entity(&input) {
            Ok(_) => panic!("expected errors"),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        };
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
    fn index_mistakes() {
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r", index(row_key = "i_{a:03}"))]
                struct E {
                    a: u8,
                }
            ),
            &["`index(..)` is missing `name = \"..\"`"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r", index_entity(name = "i"))]
                struct E {
                    a: u8,
                }
            ),
            &["`index_entity(..)` is missing `row_key = \"..\"`"],
        );
        one_error(
            parse_quote!(
                #[entity(
                    partition_key = "p",
                    row_key = "r",
                    index(name = "i", rowkey = "i_{a:03}")
                )]
                struct E {
                    a: u8,
                }
            ),
            &["unknown `index` key `rowkey` (did you mean `row_key`?)"],
        );
        one_error(
            parse_quote!(#[entity(partition_key = "p", row_key = "r", index(name = "i", row_key = "i_{a:03}", tabel = "T"))] struct E { a: u8 }),
            &["unknown `index` key `tabel` (did you mean `table`?); expected one of: name, table, partition_key, row_key, include"],
        );
        one_error(
            parse_quote!(
                #[entity(
                    partition_key = "p",
                    row_key = "r",
                    index_entity(name = "i", row_key = "i_{a:03}", include(a))
                )]
                struct E {
                    a: u8,
                }
            ),
            &["`include` applies to `index(..)` copies only"],
        );
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r", index = "x")]
                struct E {
                    a: u8,
                }
            ),
            &["`index` takes its keys in parentheses"],
        );
        for (declaration, message) in [
            (
                quote::quote!(index_entity(name = "i", row_key = "i_{a:03}", unique)),
                "`unique` doesn't apply to an index entity",
            ),
            (
                quote::quote!(index(name = "i", row_key = "i_{a:03}", unique)),
                "`unique` is not a key of `index(..)`: declare a unique index as `unique_index(",
            ),
            (
                quote::quote!(unique_index(name = "i", row_key = "i_{a:03}", unique)),
                "`unique_index(..)` is unique already",
            ),
        ] {
            one_error(
                parse_quote!(
                    #[entity(partition_key = "p", row_key = "r", #declaration)]
                    struct E {
                        a: u8,
                    }
                ),
                &[message],
            );
        }
        one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "r", unique_index(row_key = "i_{a:03}"))]
                struct E {
                    a: u8,
                }
            ),
            &["`unique_index(..)` is missing `name = \"..\"`"],
        );
        for table in ["my-table", "ab", "1abc", "tables"] {
            one_error(
                parse_quote!(
                    #[entity(partition_key = "p", row_key = "r", index(name = "i", table = #table, row_key = "{a:03}"))]
                    struct E {
                        a: u8,
                    }
                ),
                &["is not a valid table name"],
            );
        }
    }

    #[test]
    fn include_mistakes() {
        let input = |include: proc_macro2::TokenStream| -> syn::DeriveInput {
            parse_quote!(
                #[entity(partition_key = "{d}", row_key = "r_{id:03}")]
                #[entity(index(name = "i", table = "Copies", row_key = "{a}", include(#include)))]
                struct E {
                    d: String,
                    id: u8,
                    a: String,
                    b: u8,
                    #[entity(skip)]
                    s: u8,
                }
            )
        };
        one_error(input(quote::quote!()), &["`include()` is empty"]);
        one_error(
            input(quote::quote!(bb)),
            &["`include` names no field `bb` (did you mean `b`?)"],
        );
        one_error(input(quote::quote!(b, b)), &["`b` is included twice"]);
        one_error(input(quote::quote!(s)), &["`s` is `skip`: it isn't stored"]);
        one_error(
            input(quote::quote!(d)),
            &["`d` is part of the primary key", "PrimaryPartitionKey"],
        );
        one_error(input(quote::quote!(id)), &["PrimaryRowKey"]);
        one_error(
            input(quote::quote!(b = 1)),
            &["`include` lists field names only"],
        );
    }
}
