//! Keys that know what they point at: [`Key<T>`] (the primary row of a `T`) and
//! [`IndexKey<T, I>`] (the row index number `I` of `T` keeps), so a key of another
//! type, or of another index, does not compile where a typed call expects one.
//!
//! The derive's builders return them (`Employee::key(..)`, `Employee::email_key(..)`);
//! dynamic code turns either into an [`EntityKey`] with `From`/`into_entity_key`.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

use crate::entity::EntityKey;
use crate::model::{Entity, Row};

/// The key of a `T` row: an [`EntityKey`] the type system ties to `T`.
///
/// Build it with the derive's `T::key(..)` (or `value.entity_key()`); a key read
/// from elsewhere that you know to be a `T`'s becomes one with
/// [`Key::from_entity_key`].
///
/// ```
/// use tables_core::{Entity, EntityKey};
/// # #[derive(tables_derive::Entity)]
/// # #[entity(crate = "tables_core", partition_key = "{department}", row_key = "{id:06}")]
/// # struct Employee { department: String, id: u32 }
///
/// let key = Employee::key("Sales", 7)?;
/// assert_eq!(key.row_key, "000007"); // an `EntityKey` underneath
/// let plain: EntityKey = key.into(); // for the untyped engine API
/// assert_eq!(plain, EntityKey::new("Sales", "000007"));
/// # Ok::<(), tables_core::Error>(())
/// ```
pub struct Key<T> {
    key: EntityKey,
    _of: PhantomData<fn() -> T>,
}

impl<T> Key<T> {
    /// Declares `key` to be the key of a `T` row. Nothing is checked: use it for keys
    /// read from elsewhere (a listing, another program); the derive's builders are
    /// the checked way to make one.
    pub fn from_entity_key(key: EntityKey) -> Key<T> {
        Key {
            key,
            _of: PhantomData,
        }
    }

    /// The untyped key.
    pub fn as_entity_key(&self) -> &EntityKey {
        &self.key
    }

    /// The untyped key, by value.
    pub fn into_entity_key(self) -> EntityKey {
        self.key
    }

    /// The same key, as the key of a row of `U`, a union (or the type itself) that
    /// holds `T` rows.
    pub fn into_key_of<U: Contains<T>>(self) -> Key<U> {
        Key::from_entity_key(self.key)
    }
}

/// The key of the row index `I` of `T` keeps (its `I`-th `index(..)`,
/// `unique_index(..)` or `index_entity(..)`, in declaration order), built by the
/// derive's `T::<index>_key(..)`. [`IndexKey::index_name`] says which index it is.
pub struct IndexKey<T, const I: usize> {
    key: EntityKey,
    _of: PhantomData<fn() -> T>,
}

impl<T: IndexOf<I>, const I: usize> IndexKey<T, I> {
    /// Declares `key` to be the key of a row index `I` of `T` keeps. Nothing is
    /// checked: the derive's builders are the checked way to make one.
    pub fn from_entity_key(key: EntityKey) -> IndexKey<T, I> {
        IndexKey {
            key,
            _of: PhantomData,
        }
    }

    /// The index's name, as declared (`name = ".."`).
    pub fn index_name(&self) -> &'static str {
        T::INDEX_NAME
    }
}

impl<T, const I: usize> IndexKey<T, I> {
    /// The untyped key.
    pub fn as_entity_key(&self) -> &EntityKey {
        &self.key
    }

    /// The untyped key, by value.
    pub fn into_entity_key(self) -> EntityKey {
        self.key
    }
}

/// Index number `I` of an entity type: implemented by `#[derive(Entity)]` for each
/// index it declares.
pub trait IndexOf<const I: usize>: Entity {
    /// The index's name.
    const INDEX_NAME: &'static str;
    /// The stored properties its copies carry: `None` for every one (a full copy),
    /// else the `include(..)`d ones. (Index entities carry none of them.)
    const INCLUDE: Option<&'static [&'static str]>;
}

/// One partition of index `I` of `T` (a copy index): where `Table::query_index`
/// reads, built by the derive's `T::<index>_partition(..)` from the fields of the
/// index's PartitionKey template, so it knows its index and type.
pub struct IndexPartition<T, const I: usize> {
    partition_key: String,
    _of: PhantomData<fn() -> T>,
}

impl<T: CopyIndex<I>, const I: usize> IndexPartition<T, I> {
    /// Declares `partition_key` to be a partition of index `I` of `T`. Nothing is
    /// checked: the derive's builders are the checked way to make one.
    pub fn from_partition_key(partition_key: impl Into<String>) -> IndexPartition<T, I> {
        IndexPartition {
            partition_key: partition_key.into(),
            _of: PhantomData,
        }
    }

    /// The index's name, as declared.
    pub fn index_name(&self) -> &'static str {
        T::INDEX_NAME
    }

    /// The PartitionKey.
    pub fn partition_key(&self) -> &str {
        &self.partition_key
    }

    /// The PartitionKey, by value.
    pub fn into_partition_key(self) -> String {
        self.partition_key
    }

    /// The partition, read as `P`: a projection of `T` (the same kind and keys) that
    /// names only properties the index's copies carry: how the copies of a partial
    /// index (`include(..)`) are read. The query checks `P` at compile time.
    pub fn project<P: Entity>(self) -> ProjectedPartition<P, T, I> {
        ProjectedPartition {
            partition: self,
            _as: PhantomData,
        }
    }
}

/// One partition of index `I` of `T`, read as the projection `P` of `T`
/// ([`IndexPartition::project`]).
pub struct ProjectedPartition<P, T, const I: usize> {
    partition: IndexPartition<T, I>,
    _as: PhantomData<fn() -> P>,
}

impl<P, T, const I: usize> ProjectedPartition<P, T, I> {
    /// The partition, whatever it is read as.
    pub fn into_partition(self) -> IndexPartition<T, I> {
        self.partition
    }
}

impl<P, T, const I: usize> fmt::Debug for ProjectedPartition<P, T, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProjectedPartition")
            .field("partition", &self.partition)
            .field("as", &std::any::type_name::<P>())
            .finish()
    }
}

impl<T, const I: usize> Clone for IndexPartition<T, I> {
    fn clone(&self) -> IndexPartition<T, I> {
        IndexPartition {
            partition_key: self.partition_key.clone(),
            _of: PhantomData,
        }
    }
}

impl<T, const I: usize> fmt::Debug for IndexPartition<T, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("IndexPartition")
            .field(&self.partition_key)
            .finish()
    }
}

/// Whether a reader of `properties` finds them all on an index copy that carries
/// `include` (`None`: every property): usable in constants, for the compile-time
/// check of a projection read from an index's copies.
pub const fn copy_carries(include: Option<&[&str]>, properties: &[&str]) -> bool {
    let Some(include) = include else {
        return true;
    };
    let mut i = 0;
    while i < properties.len() {
        let mut found = false;
        let mut j = 0;
        while j < include.len() {
            if crate::model::codec::str_eq(properties[i], include[j]) {
                found = true;
            }
            j += 1;
        }
        if !found {
            return false;
        }
        i += 1;
    }
    true
}

/// An index that keeps a copy of each entity: `index(..)` or `unique_index(..)`.
/// Look its keys up with `Table::get_by_index`.
#[diagnostic::on_unimplemented(
    message = "this key is of an index entity of `{Self}`, not of a copy index",
    label = "a key built by an `index_entity(..)`'s builder",
    note = "look index entities up with `get_all_by_index`"
)]
pub trait CopyIndex<const I: usize>: IndexOf<I> {}

/// An index entity: `index_entity(..)`, one row listing many entities. Look its keys
/// up with `Table::get_all_by_index`.
#[diagnostic::on_unimplemented(
    message = "this key is of a copy index of `{Self}`, not of an index entity",
    label = "a key built by an `index(..)` or `unique_index(..)`'s builder",
    note = "look copy indexes up with `get_by_index`"
)]
pub trait ListIndex<const I: usize>: IndexOf<I> {}

/// Whether a table of `Self` holds `T` rows: every entity type holds its own, a
/// `#[derive(EntityUnion)]` enum those of its variants. Typed calls on a `Table<Self>`
/// take keys of any `T` it holds.
#[diagnostic::on_unimplemented(
    message = "a `Table<{Self}>` holds no `{T}` rows",
    label = "a key of a `{T}`",
    note = "use the table of `{T}` (`service.table::<{T}>(..)`), or add `{T}` as a variant of the union `{Self}`"
)]
pub trait Contains<T>: Row {}

impl<T: Entity + Row> Contains<T> for T {}

/// A key a `Table<T>` call accepts: a [`Key`] (or a reference to one) of a type `T`
/// holds.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a key of a row a `Table<{T}>` holds",
    label = "expected a `Key` of a type the table holds",
    note = "build keys with the derive's `key(..)` or `value.entity_key()?`; a key read from elsewhere becomes typed with `Key::from_entity_key(key)`"
)]
pub trait KeyOf<T> {
    /// The untyped key.
    fn into_entity_key(self) -> EntityKey;

    /// The untyped key, borrowed when `self` is a reference (a read needs no copy
    /// of the key it was lent).
    fn into_key_cow<'k>(self) -> Cow<'k, EntityKey>
    where
        Self: Sized + 'k,
    {
        Cow::Owned(self.into_entity_key())
    }
}

impl<T: Contains<E>, E> KeyOf<T> for Key<E> {
    fn into_entity_key(self) -> EntityKey {
        self.key
    }
}

impl<T: Contains<E>, E> KeyOf<T> for &Key<E> {
    fn into_entity_key(self) -> EntityKey {
        self.key.clone()
    }

    fn into_key_cow<'k>(self) -> Cow<'k, EntityKey>
    where
        Self: 'k,
    {
        Cow::Borrowed(&self.key)
    }
}

/// What names the partition of a `Table<T>` transaction: a [`Key`] of a type `T`
/// holds (or a reference to one), or a reference to such a value, whose key gives
/// the PartitionKey.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not name a partition of a `Table<{T}>`",
    label = "expected a `Key` of a type the table holds, or a reference to such a value",
    note = "start a transaction from a value (`table.transaction(&value)`) or a key (`table.transaction(T::key(..)?)`)"
)]
pub trait PartitionOf<T> {
    /// The PartitionKey.
    ///
    /// # Errors
    ///
    /// A value's key encoding error.
    fn into_partition_key(self) -> crate::Result<String>;
}

impl<T: Contains<E>, E> PartitionOf<T> for Key<E> {
    fn into_partition_key(self) -> crate::Result<String> {
        Ok(self.key.partition_key)
    }
}

impl<T: Contains<E>, E> PartitionOf<T> for &Key<E> {
    fn into_partition_key(self) -> crate::Result<String> {
        Ok(self.key.partition_key.clone())
    }
}

impl<T: Contains<E>, E: Row> PartitionOf<T> for &E {
    fn into_partition_key(self) -> crate::Result<String> {
        self.entity_key()
            .map(|key| key.into_entity_key().partition_key)
    }
}

/// A key `Table<T>::get_by_index` accepts: an [`IndexKey`] of a copy index
/// (`index(..)`, `unique_index(..)`) of a type `T` holds.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a key of a copy index of a type a `Table<{T}>` holds",
    label = "expected a key built by an `index(..)` or `unique_index(..)`'s builder",
    note = "keys of an index entity (`index_entity(..)`) are looked up with `get_all_by_index`"
)]
pub trait CopyIndexKeyOf<T> {
    /// The index's name and the untyped key.
    fn into_parts(self) -> (&'static str, EntityKey);
}

impl<T: Contains<E>, E: CopyIndex<I>, const I: usize> CopyIndexKeyOf<T> for IndexKey<E, I> {
    fn into_parts(self) -> (&'static str, EntityKey) {
        (E::INDEX_NAME, self.key)
    }
}

/// A key `Table<T>::get_all_by_index` accepts: an [`IndexKey`] of an index entity
/// (`index_entity(..)`) of a type `T` holds.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a key of an index entity of a type a `Table<{T}>` holds",
    label = "expected a key built by an `index_entity(..)`'s builder",
    note = "keys of a copy index (`index(..)`, `unique_index(..)`) are looked up with `get_by_index`"
)]
pub trait ListIndexKeyOf<T> {
    /// The index's name and the untyped key.
    fn into_parts(self) -> (&'static str, EntityKey);
}

impl<T: Contains<E>, E: ListIndex<I>, const I: usize> ListIndexKeyOf<T> for IndexKey<E, I> {
    fn into_parts(self) -> (&'static str, EntityKey) {
        (E::INDEX_NAME, self.key)
    }
}

impl<T> From<Key<T>> for EntityKey {
    fn from(key: Key<T>) -> EntityKey {
        key.key
    }
}

impl<T, const I: usize> From<IndexKey<T, I>> for EntityKey {
    fn from(key: IndexKey<T, I>) -> EntityKey {
        key.key
    }
}

// A typed key is an `EntityKey` with a type attached: its parts read as fields.
impl<T> std::ops::Deref for Key<T> {
    type Target = EntityKey;

    fn deref(&self) -> &EntityKey {
        &self.key
    }
}

impl<T, const I: usize> std::ops::Deref for IndexKey<T, I> {
    type Target = EntityKey;

    fn deref(&self) -> &EntityKey {
        &self.key
    }
}

impl<T> AsRef<EntityKey> for Key<T> {
    fn as_ref(&self) -> &EntityKey {
        &self.key
    }
}

impl<T, const I: usize> AsRef<EntityKey> for IndexKey<T, I> {
    fn as_ref(&self) -> &EntityKey {
        &self.key
    }
}

// By hand: derives would demand `T: Clone` etc. of the phantom type.
impl<T> Clone for Key<T> {
    fn clone(&self) -> Key<T> {
        Key::from_entity_key(self.key.clone())
    }
}

impl<T, const I: usize> Clone for IndexKey<T, I> {
    fn clone(&self) -> IndexKey<T, I> {
        IndexKey {
            key: self.key.clone(),
            _of: PhantomData,
        }
    }
}

impl<T> PartialEq for Key<T> {
    fn eq(&self, other: &Key<T>) -> bool {
        self.key == other.key
    }
}

impl<T> Eq for Key<T> {}

impl<T> PartialOrd for Key<T> {
    fn partial_cmp(&self, other: &Key<T>) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// In the service's order: PartitionKey, then RowKey.
impl<T> Ord for Key<T> {
    fn cmp(&self, other: &Key<T>) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl<T> Hash for Key<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

impl<T, const I: usize> PartialEq for IndexKey<T, I> {
    fn eq(&self, other: &IndexKey<T, I>) -> bool {
        self.key == other.key
    }
}

impl<T, const I: usize> Eq for IndexKey<T, I> {}

impl<T> PartialEq<EntityKey> for Key<T> {
    fn eq(&self, other: &EntityKey) -> bool {
        self.key == *other
    }
}

impl<T, const I: usize> PartialEq<EntityKey> for IndexKey<T, I> {
    fn eq(&self, other: &EntityKey) -> bool {
        self.key == *other
    }
}

impl<T> PartialEq<Key<T>> for EntityKey {
    fn eq(&self, other: &Key<T>) -> bool {
        *self == other.key
    }
}

impl<T, const I: usize> PartialEq<IndexKey<T, I>> for EntityKey {
    fn eq(&self, other: &IndexKey<T, I>) -> bool {
        *self == other.key
    }
}

impl<T> fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key")
            .field("of", &std::any::type_name::<T>())
            .field("partition_key", &self.key.partition_key)
            .field("row_key", &self.key.row_key)
            .finish()
    }
}

impl<T, const I: usize> fmt::Debug for IndexKey<T, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexKey")
            .field("of", &std::any::type_name::<T>())
            .field("index", &I)
            .field("partition_key", &self.key.partition_key)
            .field("row_key", &self.key.row_key)
            .finish()
    }
}

impl<T> fmt::Display for Key<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.key, f)
    }
}

impl<T, const I: usize> fmt::Display for IndexKey<T, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.key, f)
    }
}
