//! The rules over the model, one small function per rule, each pushing errors
//! spanned on the user's token (a template literal, an index name, a field).
//!
//! Rules that need the attribute tokens themselves are checked while parsing, in
//! `attr/`: unknown, repeated and mistyped keys (rule 2), missing templates (3),
//! template syntax and unknown fields (4, 5), keys that don't apply to a key field
//! (10), `include(..)` (15), conflicting field keys (18) and the version range
//! (19). Struct shape and generics (1) are checked there too.

mod forms;
mod keys;
mod names;
mod types;

use crate::error::Errors;
use crate::model::{EntityModel, Index, KeyUse, PropertyModel, Template, UnionModel};

/// Checks an entity model.
pub(crate) fn entity(model: &EntityModel) -> syn::Result<()> {
    let mut errors = Errors::new();
    names::kind(model, &mut errors);
    names::upgrade_from(model, &mut errors);
    types::storable_fields(model, &mut errors);
    for site in templates(model) {
        forms::placeholders(model, &site, &mut errors);
        keys::literal_characters(&site, &mut errors);
        keys::one_variable_placeholder(model, &site, &mut errors);
        keys::fixed_budget(&site, &mut errors);
        keys::field_once_per_template(model, &site, &mut errors);
        keys::hot_partition(model, &site, &mut errors);
    }
    keys::primary_fields_once(model, &mut errors);
    names::index_names(model, &mut errors);
    names::helper_clashes(model, &mut errors);
    keys::collisions(model, &mut errors);
    keys::copies_distinct(model, &mut errors);
    names::property_names(model, &mut errors);
    names::column_names(model, &mut errors);
    errors.finish()
}

/// Checks an entity union model.
pub(crate) fn union(model: &UnionModel) -> syn::Result<()> {
    let mut errors = Errors::new();
    types::union_has_variants(model, &mut errors);
    types::union_types_distinct(model, &mut errors);
    errors.finish()
}

/// Checks a `#[derive(Property)]` model.
pub(crate) fn property(model: &PropertyModel) -> syn::Result<()> {
    let mut errors = Errors::new();
    types::enum_has_variants(model, &mut errors);
    types::storable_newtype(model, &mut errors);
    types::texts_distinct(model, &mut errors);
    types::texts_are_key_safe(model, &mut errors);
    errors.finish()
}

/// Which layout a template belongs to.
#[derive(Clone, Copy)]
pub(crate) enum Owner<'a> {
    Primary,
    Index(&'a Index),
}

/// A template to check, with what it belongs to.
pub(crate) struct Site<'a> {
    pub(crate) owner: Owner<'a>,
    pub(crate) key: KeyUse,
    pub(crate) template: &'a Template,
}

impl Site<'_> {
    /// `row_key "empid_{employee_id:06}"` / `the row_key of index `email` ".."`,
    /// for messages.
    pub(crate) fn describe(&self) -> String {
        let key = match self.key {
            KeyUse::PartitionKey => "partition_key",
            KeyUse::RowKey => "row_key",
        };
        let source = shorten(&self.template.source);
        match self.owner {
            Owner::Primary => format!("{key} \"{source}\""),
            Owner::Index(index) => format!("the {key} \"{source}\" of index `{}`", index.name),
        }
    }

    /// Whether the template is one of the primary key's.
    pub(crate) fn is_primary(&self) -> bool {
        matches!(self.owner, Owner::Primary)
    }
}

/// A template's text for messages: long ones are cut in the middle (the span
/// shows the whole literal).
fn shorten(source: &str) -> String {
    const KEEP: usize = 24;
    let chars: Vec<char> = source.chars().collect();
    if chars.len() <= 3 * KEEP {
        return source.to_owned();
    }
    let head: String = chars[..KEEP].iter().collect();
    let tail: String = chars[chars.len() - KEEP..].iter().collect();
    format!("{head}...{tail}")
}

/// Every template written by the user: the primary's two, and each index's
/// row_key and (when given) partition_key. An index's inherited partition_key is
/// the primary's and is checked once, as the primary's.
pub(crate) fn templates(model: &EntityModel) -> Vec<Site<'_>> {
    let mut sites = vec![
        Site {
            owner: Owner::Primary,
            key: KeyUse::PartitionKey,
            template: &model.partition_key,
        },
        Site {
            owner: Owner::Primary,
            key: KeyUse::RowKey,
            template: &model.row_key,
        },
    ];
    for index in &model.indexes {
        if index.partition_key_given {
            sites.push(Site {
                owner: Owner::Index(index),
                key: KeyUse::PartitionKey,
                template: &index.partition_key,
            });
        }
        sites.push(Site {
            owner: Owner::Index(index),
            key: KeyUse::RowKey,
            template: &index.row_key,
        });
    }
    sites
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_templates_are_shortened_in_messages() {
        assert_eq!(
            super::shorten("empid_{employee_id:06}"),
            "empid_{employee_id:06}"
        );
        let long = format!("{}{{a:06}}", "x".repeat(100));
        assert_eq!(
            super::shorten(&long),
            format!("{}...{}{{a:06}}", "x".repeat(24), "x".repeat(18))
        );
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Runs the derive's front half on test inputs.

    /// The messages `attr` then `validate` produce for a `#[derive(Entity)]` input.
    pub(crate) fn entity_errors(input: syn::DeriveInput) -> Vec<String> {
        let result = crate::attr::entity(&input).and_then(|model| super::entity(&model));
        match result {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    /// Asserts exactly one error, containing every fragment.
    pub(crate) fn assert_one_error(input: syn::DeriveInput, fragments: &[&str]) {
        let errors = entity_errors(input);
        assert_eq!(errors.len(), 1, "{errors:#?}");
        for fragment in fragments {
            assert!(
                errors[0].contains(fragment),
                "{:?} lacks {fragment:?}",
                errors[0]
            );
        }
    }
}
