//! The property list of a [`DynamicEntity`](crate::DynamicEntity): shared between
//! clones, copied on the first change while shared (copy-on-write), and
//! [`TakenProperties`], which moves values out of a decoded row or clones them
//! when the row shares its list.
//!
//! An engine that stores entities (the in-memory one) hands a reader a clone of
//! the stored entity: the reader's copy shares the list, so a read copies no name
//! or value. A reader that changes its copy gets a list of its own.
//!
//! The shared list also keeps its JSON as a server's answer writes it, made on the
//! first answer that needs it ([`Properties::answer_json`]): a row read again and
//! again (a scan's page, a hot row) is encoded once, not on every read. Every
//! change goes through [`Properties::make_mut`], which drops it.

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::value::Value;

/// One property: its shared name and its value.
pub(crate) type Property = (Arc<str>, Value);

/// The list: `None` while empty (a new entity allocates nothing for it).
#[derive(Clone, Default)]
pub(crate) struct Properties(Option<Arc<Shared>>);

/// What the entities sharing a list share.
#[derive(Default)]
struct Shared {
    list: Vec<Property>,
    /// The list's members as a server's answer writes them (see
    /// [`Properties::answer_json`]); empty until an answer asks.
    answer_json: OnceLock<Box<[u8]>>,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.list).finish()
    }
}

impl Clone for Shared {
    /// A copy about to be changed: the list, not its JSON.
    fn clone(&self) -> Shared {
        Shared {
            list: self.list.clone(),
            answer_json: OnceLock::new(),
        }
    }
}

impl Properties {
    pub(crate) fn as_slice(&self) -> &[Property] {
        self.0
            .as_deref()
            .map_or(&[], |shared| shared.list.as_slice())
    }

    /// A list built whole (one allocation for the shared list, none when empty).
    pub(crate) fn from_vec(list: Vec<Property>) -> Properties {
        Properties((!list.is_empty()).then(|| {
            Arc::new(Shared {
                list,
                answer_json: OnceLock::new(),
            })
        }))
    }

    /// The list to change: copied first if another entity shares it. Its answer
    /// JSON, if made, is dropped: the change is about to make it stale.
    pub(crate) fn make_mut(&mut self) -> &mut Vec<Property> {
        let shared = Arc::make_mut(self.0.get_or_insert_with(Arc::default));
        shared.answer_json.take();
        &mut shared.list
    }

    /// The list's JSON members as `encode` writes them, made by the first call and
    /// kept with the list (every entity sharing it, and every later read of a
    /// stored one, gets the same bytes); empty for an empty list. Only one encoding
    /// is kept: every caller must pass the same `encode`.
    pub(crate) fn answer_json(&self, encode: impl FnOnce(&[Property], &mut Vec<u8>)) -> &[u8] {
        let Some(shared) = self.0.as_deref() else {
            return &[];
        };
        shared.answer_json.get_or_init(|| {
            let mut out = Vec::new();
            encode(&shared.list, &mut out);
            out.into_boxed_slice()
        })
    }

    /// The list moved out (empty left behind), to take values from.
    pub(crate) fn take(&mut self) -> TakenProperties {
        TakenProperties(match self.0.take().map(Arc::try_unwrap) {
            None => Taken::Owned(Vec::new()),
            Some(Ok(owned)) => Taken::Owned(owned.list),
            Some(Err(shared)) => Taken::Shared(shared),
        })
    }

    /// The list moved out as a vector, copied if shared.
    pub(crate) fn into_vec(mut self) -> Vec<Property> {
        match self.take().0 {
            Taken::Owned(owned) => owned,
            Taken::Shared(shared) => shared.list.to_vec(),
        }
    }
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// The properties of a row, moved out of it for decoding (generated code). A value
/// is taken only when asked for: moved out when the row owned its list, cloned when
/// the list is shared (with an engine's store), so a value no field reads is never
/// copied.
#[derive(Debug)]
pub struct TakenProperties(Taken);

#[derive(Debug)]
enum Taken {
    Owned(Vec<Property>),
    Shared(Arc<Shared>),
}

impl TakenProperties {
    /// The properties' names (every one, taken or not).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let list: &[Property] = match &self.0 {
            Taken::Owned(list) => list,
            Taken::Shared(shared) => &shared.list,
        };
        list.iter().map(|(name, _)| &**name)
    }

    /// Each property, once.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = TakenProperty<'_>> {
        let (owned, shared) = match &mut self.0 {
            Taken::Owned(list) => (Some(list.iter_mut().map(TakenProperty::Owned)), None),
            Taken::Shared(shared) => (None, Some(shared.list.iter().map(TakenProperty::Shared))),
        };
        owned
            .into_iter()
            .flatten()
            .chain(shared.into_iter().flatten())
    }
}

/// One property of [`TakenProperties`].
#[derive(Debug)]
pub enum TakenProperty<'a> {
    #[doc(hidden)]
    Owned(&'a mut Property),
    #[doc(hidden)]
    Shared(&'a Property),
}

impl TakenProperty<'_> {
    /// The property's name.
    pub fn name(&self) -> &str {
        match self {
            TakenProperty::Owned((name, _)) => name,
            TakenProperty::Shared((name, _)) => name,
        }
    }

    /// The value: moved out of an owned list, cloned from a shared one.
    pub fn take(self) -> Value {
        match self {
            TakenProperty::Owned((_, value)) => std::mem::replace(value, Value::Boolean(false)),
            TakenProperty::Shared((_, value)) => value.clone(),
        }
    }

    /// The name (shared) and the value, as [`TakenProperty::take`] gives it.
    pub fn take_named(self) -> (Arc<str>, Value) {
        match self {
            TakenProperty::Owned((name, value)) => (
                Arc::clone(name),
                std::mem::replace(value, Value::Boolean(false)),
            ),
            TakenProperty::Shared((name, value)) => (Arc::clone(name), value.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> Properties {
        let mut properties = Properties::default();
        properties
            .make_mut()
            .push((Arc::from("a"), Value::String("x".to_owned())));
        properties
            .make_mut()
            .push((Arc::from("b"), Value::Int32(2)));
        properties
    }

    #[test]
    fn clones_share_until_one_changes() {
        let original = list();
        let mut copy = original.clone();
        assert!(std::ptr::eq(original.as_slice(), copy.as_slice()));
        copy.make_mut()[1].1 = Value::Int32(3);
        assert!(!std::ptr::eq(original.as_slice(), copy.as_slice()));
        assert_eq!(original.as_slice()[1].1, Value::Int32(2));
        assert_eq!(copy.as_slice()[1].1, Value::Int32(3));
    }

    #[test]
    fn an_empty_list_allocates_nothing() {
        let empty = Properties::default();
        assert!(empty.0.is_none());
        assert!(empty.as_slice().is_empty());
        assert!(empty.into_vec().is_empty());
    }

    #[test]
    fn taking_moves_owned_values_and_clones_shared_ones() {
        for shared in [false, true] {
            let mut properties = list();
            let other = shared.then(|| properties.clone());
            let mut taken = properties.take();
            assert!(properties.as_slice().is_empty());
            assert_eq!(matches!(taken.0, Taken::Shared(_)), shared);
            let values: Vec<(String, Value)> = taken
                .iter_mut()
                .map(|p| (p.name().to_owned(), p.take()))
                .collect();
            assert_eq!(
                values,
                [
                    ("a".to_owned(), Value::String("x".to_owned())),
                    ("b".to_owned(), Value::Int32(2))
                ]
            );
            // The entity that shared the list keeps its values.
            if let Some(other) = other {
                assert_eq!(other.as_slice()[0].1, Value::String("x".to_owned()));
            }
        }
    }
}
