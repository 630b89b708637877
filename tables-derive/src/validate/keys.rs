//! Rules over whole key templates: the literal text, parse-back, size, fields
//! used twice, and collisions between layouts sharing a table.

use std::collections::BTreeMap;

use super::forms::placeholder_text;
use super::{templates, Owner, Site};
use crate::attr::template::UnrawString as _;
use crate::error::Errors;
use crate::model::{EntityModel, IndexKind, KeyForm, KeyUse, Segment, Template};

/// Most UTF-16 code units in a key (1 KiB as UTF-16), as the service and
/// `tables-core` count.
const MAX_KEY_UTF16_UNITS: usize = 512;

/// Whether the service forbids `c` in a key (as `tables_core::key::is_forbidden_key_char`).
pub(crate) fn is_forbidden_key_char(c: char) -> bool {
    matches!(c, '/' | '\\' | '#' | '?' | '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

/// How a forbidden character is shown in messages.
pub(crate) fn show_char(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", u32::from(c))
    } else {
        format!("`{c}`")
    }
}

/// Rule 6: the literal text must not contain characters keys can't hold.
pub(crate) fn literal_characters(site: &Site<'_>, errors: &mut Errors) {
    let forbidden = site
        .template
        .segments
        .iter()
        .find_map(|segment| match segment {
            Segment::Literal(text) => text.chars().find(|c| is_forbidden_key_char(*c)),
            Segment::Field(_) => None,
        });
    if let Some(c) = forbidden {
        errors.push(
            site.template.span,
            format!(
                "{} contains {}, which a key can't hold (keys can't contain `/`, `\\`, `#`, `?` or control \
                 characters); use another separator, such as `_`, `-` or `:`",
                site.describe(),
                show_char(c)
            ),
        );
    }
}

/// Rule 11: at most one variable-width placeholder, so the key splits back into
/// fields.
pub(crate) fn one_variable_placeholder(model: &EntityModel, site: &Site<'_>, errors: &mut Errors) {
    let variable: Vec<String> = site
        .template
        .segments
        .iter()
        .filter_map(|segment| match segment {
            Segment::Field(p) if p.form.fixed_width().is_none() => model.fields.get(p.field),
            _ => None,
        })
        .map(|field| {
            placeholder_text(
                &crate::attr::template::UnrawString::unraw_string(&field.ident),
                KeyForm::Text,
            )
        })
        .collect();
    if let [first, second, ..] = variable.as_slice() {
        errors.push(
            site.template.span,
            format!(
                "{} has two variable-width placeholders, `{first}` and `{second}`, so a key can't be split \
                 back into its fields; give all but one a fixed width (`{{x:0N}}`, `{{x:signed}}`, \
                 `{{x:ticks}}`, a Uuid) or keep one as a plain property",
                site.describe()
            ),
        );
    }
}

/// The UTF-16 code units a template always writes: literal text and fixed widths.
fn fixed_units(template: &Template) -> usize {
    template
        .segments
        .iter()
        .map(|segment| match segment {
            Segment::Literal(text) => text.encode_utf16().count(),
            Segment::Field(p) => p.form.fixed_width().unwrap_or(0),
        })
        .sum()
}

/// Rule 12: the fixed part of a key must fit in a key.
pub(crate) fn fixed_budget(site: &Site<'_>, errors: &mut Errors) {
    let units = fixed_units(site.template);
    if units > MAX_KEY_UTF16_UNITS {
        errors.push(
            site.template.span,
            format!(
                "{} always writes {units} UTF-16 code units (literal text plus fixed-width parts), more \
                 than the {MAX_KEY_UTF16_UNITS} a key holds (1 KiB); shorten the literal text",
                site.describe()
            ),
        );
    }
}

/// Fields placed by a template, in order, with repeats.
fn template_fields(template: &Template) -> impl Iterator<Item = usize> + '_ {
    template
        .segments
        .iter()
        .filter_map(|segment| match segment {
            Segment::Field(p) => Some(p.field),
            Segment::Literal(_) => None,
        })
}

/// The name of field `field` of `model`, for messages.
fn ident_of(model: &EntityModel, field: usize) -> String {
    model
        .fields
        .get(field)
        .map(|f| f.ident.to_string())
        .unwrap_or_default()
}

/// Rule 10: a field lives in one place of the primary key. A shard bucket
/// (`{field:shard(N)}`) is no place: it can't be read back, so its field must also
/// be written in full somewhere in the primary key.
pub(crate) fn primary_fields_once(model: &EntityModel, errors: &mut Errors) {
    let mut seen: Vec<usize> = Vec::new();
    let mut sharded: Vec<(usize, &Site<'_>)> = Vec::new();
    let sites = templates(model);
    for site in sites.iter().filter(|site| site.is_primary()) {
        for segment in &site.template.segments {
            let Segment::Field(placeholder) = segment else {
                continue;
            };
            let field = placeholder.field;
            if matches!(placeholder.form, KeyForm::Shard(_)) {
                if sharded.iter().any(|(f, _)| *f == field) {
                    let name = ident_of(model, field);
                    errors.push(
                        site.template.span,
                        format!("`{name}` has two shard buckets in the primary key; one spreads the rows"),
                    );
                }
                sharded.push((field, site));
                continue;
            }
            if seen.contains(&field) {
                let name = ident_of(model, field);
                errors.push(
                    site.template.span,
                    format!(
                        "`{name}` appears twice in the primary key ({}); a field is written into the key once \
                         and parsed back from there: remove one placeholder",
                        site.describe()
                    ),
                );
            }
            seen.push(field);
        }
    }
    for (field, site) in sharded {
        if !seen.contains(&field) {
            let name = ident_of(model, field);
            errors.push(
                site.template.span,
                format!(
                    "`{{{name}:shard(..)}}` in {} writes only a hash bucket of `{name}`, which can't be \
                     read back: write `{{{name}}}` in the primary key too, e.g. row_key = \"{{{name}}}_..\"",
                    site.describe()
                ),
            );
        }
    }
}

/// A field twice in one index template has one value and adds nothing.
pub(crate) fn field_once_per_template(model: &EntityModel, site: &Site<'_>, errors: &mut Errors) {
    if site.is_primary() {
        return; // `primary_fields_once` covers both primary templates
    }
    let fields: Vec<usize> = template_fields(site.template).collect();
    let repeated = fields
        .iter()
        .enumerate()
        .find(|(i, f)| fields[..*i].contains(f));
    if let Some((_, field)) = repeated {
        let name = model
            .fields
            .get(*field)
            .map(|f| f.ident.to_string())
            .unwrap_or_default();
        errors.push(
            site.template.span,
            format!(
                "`{name}` appears twice in {}; write each field once",
                site.describe()
            ),
        );
    }
}

/// The text a template starts with, and whether anything variable follows.
fn leading_literal(template: &Template) -> (&str, bool) {
    let has_placeholder = template
        .segments
        .iter()
        .any(|s| matches!(s, Segment::Field(_)));
    let leading = match template.segments.first() {
        Some(Segment::Literal(text)) => text.as_str(),
        _ => "",
    };
    (leading, has_placeholder)
}

/// Whether two templates can write the same key, judged by their leading
/// literal texts (conservative: placeholders may write anything).
pub(crate) fn may_overlap(a: &Template, b: &Template) -> bool {
    let (a_text, a_open) = leading_literal(a);
    let (b_text, b_open) = leading_literal(b);
    match (a_open, b_open) {
        (false, false) => a_text == b_text,
        (true, true) => a_text.starts_with(b_text) || b_text.starts_with(a_text),
        (true, false) => b_text.starts_with(a_text),
        (false, true) => a_text.starts_with(b_text),
    }
}

/// The PartitionKey and RowKey templates of a layout.
fn layout_keys<'a>(model: &'a EntityModel, owner: Owner<'a>) -> (&'a Template, &'a Template) {
    match owner {
        Owner::Primary => (&model.partition_key, &model.row_key),
        Owner::Index(index) => (&index.partition_key, &index.row_key),
    }
}

/// Rule 14: layouts sharing a table must not write the same keys.
pub(crate) fn collisions(model: &EntityModel, errors: &mut Errors) {
    // Layouts by table (`None`: the primary's table), in declaration order.
    let mut tables: BTreeMap<Option<&str>, Vec<Owner<'_>>> = BTreeMap::new();
    tables.entry(None).or_default().push(Owner::Primary);
    for index in &model.indexes {
        tables
            .entry(index.table.as_deref())
            .or_default()
            .push(Owner::Index(index));
    }
    for (table, layouts) in &tables {
        for (i, later) in layouts.iter().enumerate() {
            let Owner::Index(index) = later else { continue };
            let (pk, rk) = layout_keys(model, *later);
            let clash = layouts[..i].iter().find(|earlier| {
                let (other_pk, other_rk) = layout_keys(model, **earlier);
                may_overlap(pk, other_pk) && may_overlap(rk, other_rk)
            });
            let Some(earlier) = clash else { continue };
            let other = match earlier {
                Owner::Primary => "the primary rows".to_owned(),
                Owner::Index(other) => format!("index `{}`", other.name),
            };
            let table = match table {
                None => "the entity's table".to_owned(),
                Some(name) => format!("table `{name}`"),
            };
            errors.push(
                index.name_span,
                format!(
                    "index `{}` can write the same keys as {other} in {table} (their partition_key and row_key \
                     templates start alike); give its row_key a literal prefix no other layout starts with, \
                     e.g. row_key = \"{}_{}\"",
                    index.name, index.name, index.row_key.source
                ),
            );
        }
    }
}

/// Rule 20: a copy index that is not a `unique_index` must not let two entities
/// write one index row, so its templates hold every field of the primary key.
pub(crate) fn copies_distinct(model: &EntityModel, errors: &mut Errors) {
    // The primary key's placeholders, in template order.
    let primary: Vec<(usize, KeyForm)> = [&model.partition_key, &model.row_key]
        .into_iter()
        .flat_map(|template| &template.segments)
        .filter_map(|segment| match segment {
            Segment::Field(p) => Some((p.field, p.form)),
            Segment::Literal(_) => None,
        })
        .collect();
    for index in &model.indexes {
        if index.kind != IndexKind::Copy || index.unique {
            continue;
        }
        let used: Vec<usize> = template_fields(&index.partition_key)
            .chain(template_fields(&index.row_key))
            .collect();
        let missing: Vec<(String, String)> = primary
            .iter()
            .filter(|(field, _)| !used.contains(field))
            .filter_map(|&(field, form)| {
                let name = model.fields.get(field)?.ident.unraw_string();
                let placeholder = placeholder_text(&name, form);
                Some((format!("`{name}`"), format!("`{placeholder}`")))
            })
            .collect();
        if missing.is_empty() {
            continue;
        }
        let (names, placeholders): (Vec<String>, Vec<String>) = missing.into_iter().unzip();
        errors.push(
            index.name_span,
            format!(
                "index `{}` would let two entities write the same index row: its keys lack {} of the \
                 primary key, so two entities with equal indexed values would overwrite each other's \
                 copy. Choose one: make it a `unique_index(name = \"{}\", ..)` (a second entity \
                 with the same value then fails with ErrorKind::UniqueViolation), add {} to its \
                 partition_key or row_key, or keep a list of the entities per value with \
                 `index_entity(..)`",
                index.name,
                names.join(" and "),
                index.name,
                placeholders.join(" and "),
            ),
        );
    }
}

/// Rule 20: a PartitionKey that starts with a time (`{at:ticks}`, `{at:rticks}`, a
/// date) sends every write of a moment to one partition: the design guide's
/// prepend/append anti-pattern, which caps the table at one partition's throughput.
/// Refused unless the type opts out with `allow_hot_partition`.
pub(crate) fn hot_partition(model: &EntityModel, site: &Site<'_>, errors: &mut Errors) {
    if model.allow_hot_partition || site.key != KeyUse::PartitionKey {
        return;
    }
    let Some(Segment::Field(first)) = site.template.segments.first() else {
        return;
    };
    if !matches!(
        first.form,
        KeyForm::Ticks | KeyForm::ReverseTicks | KeyForm::Iso(_) | KeyForm::Date
    ) {
        return;
    }
    let field = &model.fields[first.field];
    errors.push(
        site.template.span,
        format!(
            "{} starts with the time `{}`: every write of a moment goes to one partition, \
             which then limits the whole table (the design guide's prepend/append \
             anti-pattern). Lead with a value that spreads writes (an id, a user, a device) \
             and put the time in the RowKey, or add #[entity(allow_hot_partition)] if the \
             write rate is low",
            site.describe(),
            field.ident
        ),
    );
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::super::test_support::{assert_one_error, entity_errors};
    use super::*;

    #[test]
    fn forbidden_literal_characters() {
        for (template, shown) in [
            ("a/{x}", "`/`"),
            ("{x}#", "`#`"),
            ("a\\b{x}", "`\\`"),
            ("?{x}", "`?`"),
            ("\t{x}", "U+0009"),
            ("\u{85}{x}", "U+0085"),
        ] {
            assert_one_error(
                parse_quote!(
                    #[entity(partition_key = "p", row_key = #template)]
                    struct E {
                        x: String,
                    }
                ),
                &[
                    &format!("contains {shown}, which a key can't hold"),
                    "use another separator",
                ],
            );
        }
    }

    #[test]
    fn one_variable_placeholder_per_template() {
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{a}_{b}_{c}")]
                struct E {
                    a: String,
                    b: Status,
                    c: String,
                }
            ),
            &[
                "has two variable-width placeholders, `{a}` and `{b}`",
                "give all but one a fixed width",
            ],
        );
        assert!(entity_errors(parse_quote!(
            #[entity(partition_key = "p", row_key = "{a}_{b}_{c:04}")]
            struct E {
                a: String,
                b: Uuid,
                c: u16,
            }
        ))
        .is_empty());
    }

    #[test]
    fn fixed_part_fits_in_a_key() {
        let long = format!("{}{{a:020}}", "x".repeat(493));
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = #long)]
                struct E {
                    a: u64,
                }
            ),
            &["always writes 513 UTF-16 code units", "the 512 a key holds"],
        );
        let fits = format!("{}{{a:020}}", "x".repeat(492));
        assert!(entity_errors(parse_quote!(
            #[entity(partition_key = "p", row_key = #fits)]
            struct E {
                a: u64,
            }
        ))
        .is_empty());
    }

    #[test]
    fn fields_once() {
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "{a}", row_key = "{a}")]
                struct E {
                    a: String,
                }
            ),
            &["`a` appears twice in the primary key (row_key \"{a}\")"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(
                    partition_key = "p",
                    row_key = "r",
                    index(name = "i", row_key = "i_{a:02}{a:03}")
                )]
                struct E {
                    a: u8,
                }
            ),
            &["`a` appears twice in the row_key \"i_{a:02}{a:03}\" of index `i`"],
        );
        // An index may key its partition and its rows on one field.
        assert!(entity_errors(parse_quote!(
            #[entity(
                partition_key = "p",
                row_key = "r",
                index(name = "i", table = "ByA", partition_key = "{a}", row_key = "{a}")
            )]
            struct E {
                a: String,
            }
        ))
        .is_empty());
    }

    fn template(source: &str) -> Template {
        let fields: syn::FieldsNamed = parse_quote!({ x: String, y: u8 });
        let fields: Vec<crate::model::Field> = fields
            .named
            .iter()
            .filter_map(|f| {
                f.ident
                    .as_ref()
                    .map(|ident| crate::attr::test_field(f, ident))
            })
            .collect();
        let lit = syn::LitStr::new(source, proc_macro2::Span::call_site());
        match crate::attr::template::resolve(&lit, &fields, &mut Errors::new()) {
            Some(template) => template,
            None => panic!("bad template {source}"),
        }
    }

    #[test]
    fn overlap_by_leading_literal() {
        let overlap = |a: &str, b: &str| may_overlap(&template(a), &template(b));
        assert!(overlap("{x}", "email_{x}"));
        assert!(overlap("email_{x}", "{x}"));
        assert!(overlap("em{x}", "email_{x}"));
        assert!(!overlap("empid_{y:06}", "email_{x}"));
        assert!(overlap("meta", "meta"));
        assert!(!overlap("meta", "data"));
        assert!(overlap("me{x}", "meta"));
        assert!(overlap("meta", "me{x}"));
        assert!(!overlap("meta", "meta_{x}"));
        assert!(!overlap("meta_{x}", "meta"));
        assert!(overlap("", "{x}"));
    }

    #[test]
    fn layouts_in_one_table_must_not_collide() {
        assert_one_error(
            parse_quote!(
                #[entity(
                    partition_key = "{d}",
                    row_key = "{id:06}",
                    unique_index(name = "email", row_key = "{email}")
                )]
                struct E {
                    d: String,
                    id: u32,
                    email: String,
                }
            ),
            &[
                "index `email` can write the same keys as the primary rows in the entity's table",
                "row_key = \"email_{email}\"",
            ],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "{d}", row_key = "id_{id:06}")]
                #[entity(unique_index(
                    name = "a",
                    table = "Other",
                    partition_key = "{email}",
                    row_key = "x_{id:06}"
                ))]
                #[entity(unique_index(
                    name = "b",
                    table = "Other",
                    partition_key = "{d}",
                    row_key = "x{email}"
                ))]
                struct E {
                    d: String,
                    id: u32,
                    email: String,
                }
            ),
            &["index `b` can write the same keys as index `a` in table `Other`"],
        );
        // Different tables, or row keys with distinct literal prefixes: no clash.
        assert!(entity_errors(parse_quote!(
            #[entity(partition_key = "{d}", row_key = "id_{id:06}")]
            #[entity(unique_index(
                name = "a",
                table = "Other",
                partition_key = "{email}",
                row_key = "{id:06}"
            ))]
            #[entity(index(name = "b", partition_key = "by_{email}", row_key = "b_{d}_{id:06}"))]
            struct E {
                d: String,
                id: u32,
                email: String,
            }
        ))
        .is_empty());
    }

    #[test]
    fn copy_indexes_hold_the_primary_key_or_are_unique() {
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "{d}", row_key = "empid_{id:06}")]
                #[entity(index(name = "email", row_key = "email_{email}"))]
                struct E {
                    d: String,
                    id: u32,
                    email: String,
                }
            ),
            &[
                "index `email` would let two entities write the same index row: its keys lack `id` of the primary key",
                "make it a `unique_index(name = \"email\", ..)`",
                "add `{id:06}` to its partition_key or row_key",
                "`index_entity(..)`",
            ],
        );
        // Another partition and table: both key fields are missing.
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "{d}", row_key = "empid_{id:06}")]
                #[entity(index(
                    name = "badge",
                    table = "Badges",
                    partition_key = "b",
                    row_key = "{badge}"
                ))]
                struct E {
                    d: String,
                    id: u32,
                    badge: String,
                }
            ),
            &["its keys lack `d` and `id`", "add `{d}` and `{id:06}`"],
        );
        // Unique, holding the key fields, or an index entity: fine.
        for index in [
            quote::quote!(unique_index(name = "email", row_key = "email_{email}")),
            quote::quote!(index(name = "email", row_key = "email_{email}_{id:06}")),
            quote::quote!(index(
                name = "email",
                table = "Emails",
                partition_key = "{id:06}_{email}",
                row_key = "{d}"
            )),
            quote::quote!(index_entity(name = "email", row_key = "email_{email}")),
        ] {
            let errors = entity_errors(parse_quote!(
                #[entity(partition_key = "{d}", row_key = "empid_{id:06}")]
                #[entity(#index)]
                struct E {
                    d: String,
                    id: u32,
                    email: String,
                }
            ));
            assert_eq!(errors, Vec::<String>::new(), "{index}");
        }
    }

    #[test]
    fn a_partition_key_that_starts_with_a_time_is_refused() {
        assert_one_error(
            parse_quote! {
                #[entity(partition_key = "{day}_{device}", row_key = "{id}")]
                struct Reading { day: chrono::NaiveDate, device: String, id: String }
            },
            &["starts with the time `day`", "allow_hot_partition"],
        );
        assert_one_error(
            parse_quote! {
                #[entity(partition_key = "{device}", row_key = "r_{id:06}")]
                #[entity(index(name = "by_time", partition_key = "{at:rticks}", row_key = "by_time_{device}_{id:06}"))]
                struct Reading { device: String, id: u32, at: DateTime }
            },
            &["index `by_time`", "starts with the time `at`"],
        );
        for fine in [
            quote::quote! {
                #[entity(partition_key = "{device}_{at:ticks}", row_key = "{id}")]
                struct Reading { device: String, id: String, at: DateTime }
            },
            quote::quote! {
                #[entity(allow_hot_partition, partition_key = "{at:ticks}", row_key = "{id}")]
                struct Reading { id: String, at: DateTime }
            },
        ] {
            let input: syn::DeriveInput = syn::parse2(fine).unwrap();
            assert!(entity_errors(input).is_empty());
        }
    }
}
