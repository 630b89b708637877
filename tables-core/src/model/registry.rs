//! Which Rust types write which kinds.
//!
//! Every `#[derive(Entity)]` type registers its schema when the program is linked
//! (through [`inventory`]), so the typed client can refuse, before anything is sent,
//! a write through a type that would leave index rows stale: a projection of a kind
//! that lacks some of the kind's indexes, or an older version of a kind whose newer
//! version is in the program.
//!
//! Two types are versions or projections of one another when they share the kind
//! *and* the key templates; types of the same kind name with other key designs are
//! unrelated and never compared.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, PoisonError, RwLock};

use crate::entity::DynamicEntity;
use crate::error::{Error, ErrorKind, Result};
use crate::model::{row_role, EntitySchema, Row, RowRole, Tag};

/// One derived entity type, as the derive registers it.
#[doc(hidden)]
#[derive(Debug)]
pub struct Registration {
    /// The type's path as written (`my_app::staff::Employee`).
    pub type_name: &'static str,
    /// Its schema.
    pub schema: fn() -> &'static EntitySchema,
}

inventory::collect!(Registration);

type ByKind = HashMap<&'static str, Vec<(&'static str, &'static EntitySchema)>>;

/// Every registered type, by kind.
fn by_kind() -> &'static ByKind {
    static BY_KIND: OnceLock<ByKind> = OnceLock::new();
    BY_KIND.get_or_init(|| {
        let mut map: ByKind = HashMap::new();
        for registration in inventory::iter::<Registration> {
            let schema = (registration.schema)();
            map.entry(schema.kind)
                .or_default()
                .push((registration.type_name, schema));
        }
        map
    })
}

/// Checks that `T` may write rows of its kinds: no other type of the program with
/// the same kind and key templates has a newer version, or, at the same version,
/// an index `T` lacks.
///
/// The verdict is computed once per type.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`] naming the type to write through instead.
pub fn check_writer<T: Row>() -> Result<()> {
    static VERDICTS: OnceLock<RwLock<HashMap<TypeId, Option<String>>>> = OnceLock::new();
    let verdicts = VERDICTS.get_or_init(RwLock::default);
    let id = TypeId::of::<T>();
    let known = verdicts
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
        .cloned();
    let verdict = match known {
        Some(verdict) => verdict,
        None => {
            let verdict = T::schemas()
                .into_iter()
                .find_map(|schema| refusal(std::any::type_name::<T>(), schema));
            verdicts
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id, verdict.clone());
            verdict
        }
    };
    match verdict {
        None => Ok(()),
        Some(message) => Err(Error::new(ErrorKind::InvalidInput, message)),
    }
}

/// Another kind of the program whose tag `row` carries, where that tag can't mark a
/// row of `mine` (an untagged type): `(type name, schema)`.
///
/// An untagged type reads every row of its table, so a row another kind's tag
/// marks would otherwise read as it (or fail to, with a misleading error). A tag
/// counts only where it tells the rows apart: an `EntityType` naming another kind,
/// a tag column `mine` doesn't store, a RowKey prefix `mine`'s own keys can't have.
/// Kinds the program doesn't declare are unknown here; their rows read as `mine`.
pub fn claimant(
    mine: &'static EntitySchema,
    row: &DynamicEntity,
) -> Option<(&'static str, &'static EntitySchema)> {
    let own_prefix = literal_start(mine.row_key);
    by_kind()
        .iter()
        .filter(|(kind, _)| **kind != mine.kind)
        .flat_map(|(_, types)| types.iter())
        .find(|(_, theirs)| match theirs.tag {
            Tag::Kind => row_role(row) == RowRole::Primary { kind: theirs.kind },
            Tag::Property { name, value } => {
                !mine.property_names().any(|own| own == name)
                    && row.get(name).is_some_and(|found| value.is(found))
            }
            Tag::RowKeyPrefix(prefix) => {
                // Ambiguous when either prefix could start the other's keys.
                !own_prefix.starts_with(prefix)
                    && !prefix.starts_with(own_prefix)
                    && row.row_key.starts_with(prefix)
            }
            Tag::Untagged => false,
        })
        .copied()
}

/// Another kind of the program whose mark a row that `mine` failed to decode
/// carries, even where the mark could also be `mine`'s (a RowKey prefix `mine`'s keys
/// may have, a tag column of `mine`'s): the likely cause of the failure, as
/// `(type name, schema)`. `names` are the row's property names.
pub(crate) fn likely_other_kind<'a>(
    mine: &'static EntitySchema,
    row_key: &str,
    names: impl Fn(&str) -> bool + 'a,
) -> Option<(&'static str, &'static EntitySchema)> {
    by_kind()
        .iter()
        .filter(|(kind, _)| **kind != mine.kind)
        .flat_map(|(_, types)| types.iter())
        .find(|(_, theirs)| match theirs.tag {
            Tag::RowKeyPrefix(prefix) => row_key.starts_with(prefix),
            Tag::Property { name, .. } => names(name),
            Tag::Kind | Tag::Untagged => false,
        })
        .copied()
}

/// The literal text a key template starts with (`"EMPLOYEE_"` of
/// `"EMPLOYEE_{id:06}"`; `""` when it starts with a placeholder).
fn literal_start(template: &str) -> &str {
    let end = template.find('{').unwrap_or(template.len());
    &template[..end]
}

/// Why `writer` (whose schema is `mine`) must not write its kind, if it must not.
fn refusal(writer: &str, mine: &'static EntitySchema) -> Option<String> {
    let others = by_kind().get(mine.kind)?;
    let related = others.iter().filter(|(_, theirs)| {
        !std::ptr::eq(*theirs, mine)
            && theirs.partition_key == mine.partition_key
            && theirs.row_key == mine.row_key
    });
    // The type to write through: the newest version, then the most indexes.
    let best = related
        .filter(|(_, theirs)| {
            theirs.version > mine.version
                || (theirs.version == mine.version && !missing(mine, theirs).is_empty())
        })
        .max_by_key(|(_, theirs)| (theirs.version, theirs.indexes.len()))?;
    let (name, theirs) = *best;
    let kind = mine.kind;
    Some(if theirs.version > mine.version {
        format!(
            "{writer} can't write rows of kind {kind:?}: it is version {} of the kind, and {name} \
             writes version {} in this program; writing through the older version would drop \
             what only the newer one stores and leave the newer version's index rows stale. \
             Write through {name}",
            mine.version, theirs.version
        )
    } else {
        let lacking = missing(mine, theirs);
        format!(
            "{writer} can't write rows of kind {kind:?}: {name} declares {} for that kind, which \
             {writer} doesn't keep, so writing through it would leave those index rows stale. \
             Write through {name} (read through {writer} with `select`, as a projection), or \
             declare the same indexes on {writer}",
            describe(&lacking)
        )
    })
}

/// The names of `theirs`' indexes that `mine` doesn't declare identically.
fn missing(mine: &EntitySchema, theirs: &EntitySchema) -> Vec<&'static str> {
    theirs
        .indexes
        .iter()
        .filter(|index| !mine.indexes.contains(index))
        .map(|index| index.name)
        .collect()
}

fn describe(names: &[&str]) -> String {
    let listed: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match listed.as_slice() {
        [one] => format!("index {one}"),
        _ => format!("indexes {}", listed.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Three types of one kind and key design, and one of the same kind name with
    // another key design.
    #[derive(tables_derive::Entity, Debug, Clone, PartialEq)]
    #[entity(crate = "crate", kind = "Staffer", version = 2)]
    #[entity(partition_key = "{team}", row_key = "s_{id:04}")]
    #[entity(unique_index(name = "email", row_key = "email_{email}"))]
    struct Staffer {
        team: String,
        id: u16,
        email: String,
    }

    #[derive(tables_derive::Entity, Debug, Clone, PartialEq)]
    #[entity(crate = "crate", kind = "Staffer", version = 2)]
    #[entity(partition_key = "{team}", row_key = "s_{id:04}")]
    struct StafferName {
        team: String,
        id: u16,
    }

    #[derive(tables_derive::Entity, Debug, Clone, PartialEq)]
    #[entity(crate = "crate", kind = "Staffer", version = 1)]
    #[entity(partition_key = "{team}", row_key = "s_{id:04}")]
    #[entity(unique_index(name = "email", row_key = "email_{email}"))]
    struct StafferV1 {
        team: String,
        id: u16,
        email: String,
    }

    #[derive(tables_derive::Entity, Debug, Clone, PartialEq)]
    #[entity(crate = "crate", kind = "Staffer")]
    #[entity(partition_key = "elsewhere", row_key = "{id:04}")]
    struct OtherStaffer {
        id: u16,
    }

    #[test]
    fn the_full_newest_type_writes() {
        check_writer::<Staffer>().unwrap();
        check_writer::<OtherStaffer>().unwrap();
    }

    #[test]
    fn a_projection_lacking_indexes_is_refused_naming_the_full_type() {
        let err = check_writer::<StafferName>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        let text = err.to_string();
        assert!(
            text.contains("StafferName can't write rows of kind \"Staffer\""),
            "{text}"
        );
        assert!(text.contains("index `email`"), "{text}");
        assert!(
            text.contains("Write through tables_core::model::registry::tests::Staffer"),
            "{text}"
        );
        // The verdict is cached, and stays the same.
        assert_eq!(check_writer::<StafferName>().unwrap_err().to_string(), text);
    }

    #[test]
    fn an_older_version_is_refused_naming_the_newer() {
        let text = check_writer::<StafferV1>().unwrap_err().to_string();
        assert!(text.contains("it is version 1 of the kind"), "{text}");
        assert!(text.contains("writes version 2"), "{text}");
    }
}
