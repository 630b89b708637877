//! Encode and decode helpers that generated code calls: the discriminator, property
//! names, field values with error context, JSON fields.

use std::sync::{Arc, OnceLock};

use crate::entity::DynamicEntity;
use crate::error::{Error, ErrorKind, Result};
use crate::model::property::Property;
use crate::model::{
    role_of, row_role, EntitySchema, RowRole, Tag, ENTITY_TYPE_PROPERTY, ENTITY_VERSION_PROPERTY,
};
pub use crate::properties::{TakenProperties, TakenProperty};
use crate::size::MAX_PROPERTY_VALUE_BYTES;
use crate::value::Value;

/// Interned property names of a derived type: built once, then shared by every
/// entity the type writes (a clone of an `Arc`, not an allocation per property).
#[derive(Debug)]
pub struct PropertyNames {
    names: &'static [&'static str],
    interned: OnceLock<Box<[Arc<str>]>>,
}

impl PropertyNames {
    /// The names, in field order.
    pub const fn new(names: &'static [&'static str]) -> PropertyNames {
        PropertyNames {
            names,
            interned: OnceLock::new(),
        }
    }

    /// The `i`-th name.
    ///
    /// # Panics
    ///
    /// If `i` is out of range (generated code only asks for its own indexes).
    pub fn get(&self, i: usize) -> Arc<str> {
        let interned = self
            .interned
            .get_or_init(|| self.names.iter().map(|n| Arc::from(*n)).collect());
        Arc::clone(&interned[i])
    }
}

fn interned(name: &'static str) -> Arc<str> {
    static TYPE: OnceLock<Arc<str>> = OnceLock::new();
    static VERSION: OnceLock<Arc<str>> = OnceLock::new();
    let cell = if name == ENTITY_TYPE_PROPERTY {
        &TYPE
    } else {
        &VERSION
    };
    Arc::clone(cell.get_or_init(|| Arc::from(name)))
}

/// A new primary row with its tag (by default `EntityType` and `EntityVersion`)
/// and room for `capacity` more properties.
/// Marks a wide type's row for the client's wide layer (`tables_core::wide`).
pub fn mark_wide(entity: &mut DynamicEntity) {
    entity.insert(crate::model::ENTITY_PARTS_PROPERTY, 0i32);
}

/// A primary row with its keys and tag, room for `capacity` more properties.
pub fn new_entity(
    partition_key: String,
    row_key: String,
    tag: &Tag,
    kind: &'static str,
    version: u32,
    capacity: usize,
) -> DynamicEntity {
    let mut entity = DynamicEntity::new(partition_key, row_key);
    entity.reserve(capacity + tag.properties().len());
    match *tag {
        Tag::Kind => {
            entity.push_unchecked(
                interned(ENTITY_TYPE_PROPERTY),
                Value::String(kind.to_owned()),
            );
            entity.push_unchecked(
                interned(ENTITY_VERSION_PROPERTY),
                Value::Int32(i32::try_from(version).unwrap_or(i32::MAX)),
            );
        }
        Tag::Property { name, value } => entity.push_unchecked(Arc::from(name), value.to_value()),
        Tag::RowKeyPrefix(_) | Tag::Untagged => {}
    }
    entity
}

/// Appends a property without looking for one of the same name (the derive
/// guarantees distinct names).
pub fn push_property(entity: &mut DynamicEntity, name: Arc<str>, value: Value) {
    entity.push_unchecked(name, value);
}

/// A field that keeps the properties no other field of the type names
/// (`#[entity(other_properties)]`), so a read-modify-write keeps the columns other
/// programs wrote. Implemented for maps and lists from property name to [`Value`].
pub trait OtherProperties {
    /// The properties, as read.
    fn from_properties(properties: Vec<(Arc<str>, Value)>) -> Self;

    /// Each property, to write.
    fn each(&self) -> Box<dyn Iterator<Item = (&str, &Value)> + '_>;
}

/// The read properties, named by owned strings, in any collection.
fn owned_names<C: FromIterator<(String, Value)>>(properties: Vec<(Arc<str>, Value)>) -> C {
    properties
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
}

/// Name-value pairs to write, as `OtherProperties::each` returns them.
fn named_pairs<'a>(
    pairs: impl Iterator<Item = (&'a String, &'a Value)> + 'a,
) -> Box<dyn Iterator<Item = (&'a str, &'a Value)> + 'a> {
    Box::new(pairs.map(|(name, value)| (name.as_str(), value)))
}

impl OtherProperties for std::collections::BTreeMap<String, Value> {
    fn from_properties(properties: Vec<(Arc<str>, Value)>) -> Self {
        owned_names(properties)
    }

    fn each(&self) -> Box<dyn Iterator<Item = (&str, &Value)> + '_> {
        named_pairs(self.iter())
    }
}

impl<S: std::hash::BuildHasher + Default> OtherProperties
    for std::collections::HashMap<String, Value, S>
{
    fn from_properties(properties: Vec<(Arc<str>, Value)>) -> Self {
        owned_names(properties)
    }

    fn each(&self) -> Box<dyn Iterator<Item = (&str, &Value)> + '_> {
        named_pairs(self.iter())
    }
}

impl OtherProperties for Vec<(String, Value)> {
    fn from_properties(properties: Vec<(Arc<str>, Value)>) -> Self {
        owned_names(properties)
    }

    fn each(&self) -> Box<dyn Iterator<Item = (&str, &Value)> + '_> {
        named_pairs(self.iter().map(|(name, value)| (name, value)))
    }
}

/// Writes the properties of an `other_properties` field after the named fields'.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`] for a name a field of the type stores, the tag's
/// own property, a reserved or system name, or a name given twice. Names and
/// values are then checked like every property's before the write is sent.
pub fn push_other_properties<T: OtherProperties>(
    entity: &mut DynamicEntity,
    others: &T,
    field: &'static str,
    stored: &[&'static str],
    tag: &Tag,
) -> Result<()> {
    for (name, value) in others.each() {
        let why = if stored.contains(&name) {
            Some("a field of the type stores that property")
        } else if tag.properties().contains(&name)
            || crate::model::RESERVED_PROPERTIES.contains(&name)
        {
            Some("the typed layer writes that property itself")
        } else if ["PartitionKey", "RowKey", "Timestamp"].contains(&name) {
            Some("it is a system property")
        } else if entity.get(name).is_some() {
            Some("it is given twice")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "field `{field}` (other properties) holds {name:?}, which can't be written \
                     from there: {why}; remove it from `{field}`"
                ),
            )
            .with_property(name));
        }
        entity.push_unchecked(Arc::from(name), value.clone());
    }
    Ok(())
}

/// Moves the properties out of `entity`, leaving its keys. A value is then moved
/// out, or cloned if `entity` shares its properties (with an engine's store), only
/// when a field takes it.
pub fn take_properties(entity: &mut DynamicEntity) -> TakenProperties {
    entity.take_properties_lazily()
}

fn field_context(error: Error, field: &str, property: &str, action: &str) -> Error {
    let message = format!(
        "{action} field `{field}` (property `{property}`): {}",
        error.message()
    );
    let kind = error.kind();
    Error::new(kind, message)
        .with_property(property)
        .with_source(error)
}

/// A field type's [`Property`] functions, taken once per stored field where the
/// derive checks the type: a field type that is no `Property` is then reported
/// once, at that place, and the encode and decode code that uses the codec adds no
/// errors of its own.
pub struct FieldCodec<T> {
    to_value: fn(&T) -> Result<Option<Value>>,
    from_value: fn(Option<Value>) -> Result<T>,
}

impl<T> std::fmt::Debug for FieldCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldCodec").finish_non_exhaustive()
    }
}

impl<T> FieldCodec<T> {
    /// The codec of `T`.
    // The bound sits on the function, not the impl, so a type that is no
    // `Property` gets the trait's own message (E0277), not "method not found".
    pub const fn new() -> FieldCodec<T>
    where
        T: Property,
    {
        FieldCodec {
            to_value: T::to_value,
            from_value: T::from_value,
        }
    }
}

impl<T: Property> Default for FieldCodec<T> {
    fn default() -> FieldCodec<T> {
        FieldCodec::new()
    }
}

/// A field's property value, with the field named in any error.
///
/// # Errors
///
/// The field type's [`Property::to_value`] error, naming the field and property.
pub fn encode_field<T>(
    codec: &FieldCodec<T>,
    value: &T,
    field: &'static str,
    property: &'static str,
) -> Result<Option<Value>> {
    (codec.to_value)(value).map_err(|e| field_context(e, field, property, "can't store"))
}

/// An `#[entity(encrypted)]` field's stored value, sealed for the client's
/// encryption layer ([`crate::sealed`]).
///
/// # Errors
///
/// The encoding's error.
pub fn seal_encoded(encoded: Result<Option<Value>>) -> Result<Option<Value>> {
    encoded.map(|value| value.map(|v| crate::sealed::seal(&v)))
}

/// The stored value of an `#[entity(encrypted)]` field, unsealed: the encryption
/// layer decrypted it on the way up.
///
/// # Errors
///
/// [`crate::ErrorKind::Encryption`] when it is still encrypted (this client holds
/// no key); [`crate::ErrorKind::Decode`] when the property holds a plain value
/// (written by a program that did not encrypt it).
pub fn unseal_slot(
    slot: Option<Value>,
    entity: &DynamicEntity,
    field: &'static str,
    property: &'static str,
) -> Result<Option<Value>> {
    let Some(value) = slot else { return Ok(None) };
    if let Some(unsealed) = crate::sealed::unseal(&value) {
        return unsealed.map(Some);
    }
    if crate::sealed::is_envelope(&value) {
        return Err(Error::new(
            crate::ErrorKind::Encryption,
            format!(
                "field `{field}` (property `{property}`) of {} is encrypted and this client holds \
                 no key to decrypt it: give the service client the key-encryption key \
                 (TableServiceClient::with_encryption)",
                entity.key()
            ),
        )
        .with_property(property)
        .with_entity_key(entity.key()));
    }
    Err(decode_error(
        entity,
        format!(
            "field `{field}` is encrypted, but property `{property}` holds a plain {} (written \
             by a program that did not encrypt it); re-write it through a client with the key",
            value.edm_type()
        ),
    ))
}

/// An `#[entity(blob)]` field's stored value, held for the client's blob layer
/// ([`crate::sealed::hold`]).
///
/// # Errors
///
/// The encoding's error.
pub fn hold_encoded(encoded: Result<Option<Value>>) -> Result<Option<Value>> {
    encoded.map(|value| value.map(|v| crate::sealed::hold(&v)))
}

/// An `#[entity(spill)]` field's stored value, held for the client's blob layer to
/// keep inline while it fits ([`crate::sealed::hold_spill`]).
///
/// # Errors
///
/// The encoding's error.
pub fn hold_spill_encoded(encoded: Result<Option<Value>>) -> Result<Option<Value>> {
    encoded.map(|value| value.map(|v| crate::sealed::hold_spill(&v)))
}

/// The stored value of an `#[entity(blob)]` or `#[entity(spill)]` field: the blob
/// layer fetched the blob on the way up (or, for `spill`, it was inline).
///
/// # Errors
///
/// [`crate::ErrorKind::InvalidInput`] when it is still a reference (this client has
/// no blob store); [`crate::ErrorKind::Decode`] for a property that is neither.
pub fn unhold_slot(
    slot: Option<Value>,
    entity: &DynamicEntity,
    field: &'static str,
    property: &'static str,
    spill: bool,
) -> Result<Option<Value>> {
    let Some(value) = slot else { return Ok(None) };
    if let Some(held) = crate::sealed::unhold(&value) {
        return held.map(Some);
    }
    // A spilling field's value stays inline while it fits.
    if spill && !crate::sealed::is_blob_ref(&value) {
        return Ok(Some(value));
    }
    if crate::sealed::is_blob_ref(&value) {
        return Err(Error::new(
            crate::ErrorKind::InvalidInput,
            format!(
                "field `{field}` (property `{property}`) of {} lives in a blob and this client has \
                 no blob store to fetch it from: give the service client one \
                 (TableServiceClient::with_blob_store)",
                entity.key()
            ),
        )
        .with_property(property)
        .with_entity_key(entity.key()));
    }
    Err(decode_error(
        entity,
        format!(
            "field `{field}` lives in a blob, but property `{property}` holds a plain {} (written \
             by a program that did not use the blob store)",
            value.edm_type()
        ),
    ))
}

/// The index of the point `name` names in a series whose point names are `points`,
/// when they are a common prefix and a fixed-width number (`daily_000`, ..): found
/// without comparing `name` with every point, which a series of hundreds of points
/// would make the cost of a read. `None` otherwise (the caller then matches by name).
pub fn series_point(name: &str, points: &[&str]) -> Option<usize> {
    let first = points.first()?;
    let digits = first.len() - first.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let prefix = &first[..first.len() - digits];
    let number = name.strip_prefix(prefix)?;
    if digits == 0 || number.len() != digits || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let i: usize = number.parse().ok()?;
    (points.get(i) == Some(&name)).then_some(i)
}

/// The points of a `#[entity(series)]` field, decoded in order, as its array.
///
/// # Errors
///
/// [`crate::ErrorKind::Decode`] if the count is not the array's (never, for the
/// derive's code, which decodes one point per name).
pub fn series_array<T, const N: usize>(
    points: Vec<T>,
    entity: &DynamicEntity,
    field: &'static str,
) -> Result<[T; N]> {
    let count = points.len();
    points.try_into().map_err(|_| {
        decode_error(
            entity,
            format!("field `{field}`: {count} points decoded for a series of {N}"),
        )
    })
}

/// A `#[entity(json)]` field as JSON text; JSON `null` writes no property.
///
/// # Errors
///
/// [`ErrorKind::InvalidValue`] if serialization fails;
/// [`ErrorKind::PropertyValueTooLarge`] if the text exceeds the service's 64 KiB.
pub fn encode_json<T: serde::Serialize>(
    value: &T,
    field: &'static str,
    property: &'static str,
) -> Result<Option<Value>> {
    let text = serde_json::to_string(value).map_err(|e| {
        Error::new(
            ErrorKind::InvalidValue,
            format!("can't store field `{field}` (property `{property}`) as JSON: {e}"),
        )
        .with_property(property)
    })?;
    if text == "null" {
        return Ok(None);
    }
    let size = crate::size::utf16_units(&text) * 2;
    if size > MAX_PROPERTY_VALUE_BYTES {
        return Err(Error::new(
            ErrorKind::PropertyValueTooLarge,
            format!(
                "field `{field}` (property `{property}`) is {size} bytes of JSON as UTF-16; a \
                 property holds at most {MAX_PROPERTY_VALUE_BYTES}: split the value or keep it in \
                 a blob and store its address"
            ),
        )
        .with_property(property));
    }
    Ok(Some(Value::String(text)))
}

fn decode_context(error: Error, entity: &DynamicEntity, field: &str, property: &str) -> Error {
    let message = format!(
        "can't read field `{field}` (property `{property}`) of entity ({:?}, {:?}): {}",
        entity.partition_key,
        entity.row_key,
        error.message()
    );
    Error::new(ErrorKind::Decode, message)
        .with_property(property)
        .with_entity_key(entity.key())
        .with_source(error)
}

/// Decodes a field from its property (absent: `None`), naming the field, property
/// and entity key in any error.
///
/// # Errors
///
/// [`ErrorKind::Decode`] wrapping the type's [`Property::from_value`] error.
pub fn decode_field<T>(
    codec: &FieldCodec<T>,
    value: Option<Value>,
    entity: &DynamicEntity,
    field: &'static str,
    property: &'static str,
) -> Result<T> {
    (codec.from_value)(value).map_err(|e| decode_context(e, entity, field, property))
}

/// Decodes a `#[entity(json)]` field; an absent property reads as JSON `null` (so an
/// `Option` field is `None`).
///
/// # Errors
///
/// [`ErrorKind::Decode`] for a non-string value, bad JSON, or an absent property of
/// a type without a `null` form.
pub fn decode_json<T: serde::de::DeserializeOwned>(
    value: Option<Value>,
    entity: &DynamicEntity,
    field: &'static str,
    property: &'static str,
) -> Result<T> {
    let result = match &value {
        None => serde_json::from_str("null").map_err(|_| {
            Error::new(
                ErrorKind::Decode,
                "the property is missing; make the field an Option or give it #[entity(default)]",
            )
        }),
        Some(Value::String(text)) => serde_json::from_str(text)
            .map_err(|e| Error::new(ErrorKind::Decode, format!("bad JSON: {e}"))),
        Some(other) => Err(Error::new(
            ErrorKind::Decode,
            format!(
                "expected JSON text in an Edm.String, found {}",
                other.edm_type()
            ),
        )),
    };
    result.map_err(|e| decode_context(e, entity, field, property))
}

/// Adds field context to a custom (`with = ..`) codec's encoding error.
///
/// # Errors
///
/// The codec's error, naming the field and property.
pub fn encode_with(
    result: Result<Option<Value>>,
    field: &'static str,
    property: &'static str,
) -> Result<Option<Value>> {
    result.map_err(|e| field_context(e, field, property, "can't store"))
}

/// Adds field context to a custom (`with = ..`) codec's error.
///
/// # Errors
///
/// [`ErrorKind::Decode`] wrapping the codec's error.
pub fn decode_with<T>(
    result: Result<T>,
    entity: &DynamicEntity,
    field: &'static str,
    property: &'static str,
) -> Result<T> {
    result.map_err(|e| decode_context(e, entity, field, property))
}

/// `default()` when the property is absent, else `decode(value)`.
///
/// # Errors
///
/// `decode`'s error.
pub fn missing_is_default<T>(
    value: Option<Value>,
    default: impl FnOnce() -> T,
    decode: impl FnOnce(Option<Value>) -> Result<T>,
) -> Result<T> {
    match value {
        None => Ok(default()),
        some => decode(some),
    }
}

fn decode_error(entity: &DynamicEntity, message: String) -> Error {
    Error::new(
        ErrorKind::Decode,
        format!(
            "entity ({:?}, {:?}) {message}",
            entity.partition_key, entity.row_key
        ),
    )
    .with_entity_key(entity.key())
}

/// The `EntityType` of a primary row.
///
/// # Errors
///
/// [`ErrorKind::Decode`] when the property is missing or not a string, or the row is
/// an index copy, an index entry or a client row.
pub fn entity_type(entity: &DynamicEntity) -> Result<&str> {
    let text = match entity.get(ENTITY_TYPE_PROPERTY) {
        Some(Value::String(text)) => text.as_str(),
        Some(other) => {
            return Err(decode_error(
                entity,
                format!(
                    "has an {ENTITY_TYPE_PROPERTY} of type {} where a string naming its kind \
                     was expected",
                    other.edm_type()
                ),
            ))
        }
        None => {
            return Err(decode_error(
                entity,
                format!(
                    "has no {ENTITY_TYPE_PROPERTY} property, so it wasn't written by a derived \
                     entity type; read it as a DynamicEntity, or give the union an \
                     #[entity(other)] variant"
                ),
            ))
        }
    };
    match role_of(text) {
        RowRole::Primary { kind } => Ok(kind),
        RowRole::IndexCopy { kind, index } => Err(decode_error(
            entity,
            format!("is a copy kept by index `{index}` of {kind}, not a primary row"),
        )),
        RowRole::IndexEntry { kind, index } => Err(decode_error(
            entity,
            format!("is an entry of index entity `{index}` of {kind}, not a primary row"),
        )),
        RowRole::System(_) | RowRole::Untyped => Err(decode_error(
            entity,
            format!("is a row the client keeps for itself ({text}), not an entity"),
        )),
    }
}

/// Checks that `entity` is a primary row of `kind` and returns the version that
/// wrote it.
///
/// # Errors
///
/// As [`entity_type`]; [`ErrorKind::Decode`] for another kind, or a missing or
/// mistyped `EntityVersion`.
pub fn check_kind(entity: &DynamicEntity, kind: &'static str) -> Result<u32> {
    // The common case without parsing the tag: a kind holds no mark (the derive
    // checks), so an `EntityType` equal to it names a primary row of it.
    let found = match entity.get(ENTITY_TYPE_PROPERTY) {
        Some(Value::String(text)) if text == kind => kind,
        _ => entity_type(entity)?,
    };
    if found != kind {
        return Err(decode_error(
            entity,
            format!(
                "is a {found}, not a {kind}; read rows of several kinds through an \
                 #[derive(EntityUnion)] enum"
            ),
        ));
    }
    match entity.get(ENTITY_VERSION_PROPERTY) {
        Some(Value::Int32(v)) if *v >= 0 => Ok(v.unsigned_abs()),
        Some(Value::Int64(v)) if *v >= 0 => u32::try_from(*v).map_err(|_| {
            decode_error(
                entity,
                format!("has an out-of-range {ENTITY_VERSION_PROPERTY} {v}"),
            )
        }),
        Some(other) => Err(decode_error(
            entity,
            format!("has an {ENTITY_VERSION_PROPERTY} of {other:?}, expected a non-negative Int32"),
        )),
        None => Err(decode_error(
            entity,
            format!("is a {kind} with no {ENTITY_VERSION_PROPERTY} property"),
        )),
    }
}

/// Checks that `entity` is a primary row of the type `schema` describes, by its
/// tag, and returns the version that wrote it (the type's own when the tag has
/// none).
///
/// # Errors
///
/// As [`check_kind`] for [`Tag::Kind`]; otherwise [`ErrorKind::Decode`] for a row
/// without the tag, a row the client keeps for itself, or (for an untagged type) a
/// row another kind of the program claims by its tag.
pub fn check_tag(entity: &DynamicEntity, schema: &'static EntitySchema) -> Result<u32> {
    let (tag, kind) = (&schema.tag, schema.kind);
    if *tag == Tag::Kind {
        return check_kind(entity, kind);
    }
    if tag.matches(entity, kind) {
        if *tag == Tag::Untagged {
            if let Some((type_name, theirs)) = crate::model::registry::claimant(schema, entity) {
                return Err(decode_error(
                    entity,
                    format!(
                        "is a row of kind {} (marked by {}, as {type_name} writes it), not of \
                         kind {kind}: {kind} is untagged, so it reads every row of its table except \
                         those another kind of the program marks; read the table through an \
                         #[derive(EntityUnion)] with a variant for each kind, or give {kind} a tag \
                         (#[entity(tag(..))])",
                        theirs.kind,
                        theirs.tag.describe(theirs.kind),
                    ),
                ));
            }
        }
        return Ok(schema.version);
    }
    check_not_client_row(entity)?;
    let found = match *tag {
        Tag::Property { name, .. } => match entity.get(name) {
            Some(value) => format!("its {name} is {value:?}"),
            None => format!("it has no {name} property"),
        },
        Tag::RowKeyPrefix(_) => "its RowKey doesn't start so".to_owned(),
        Tag::Kind | Tag::Untagged => "it is not".to_owned(),
    };
    Err(decode_error(
        entity,
        format!(
            "is not a {kind}: a {kind} is marked by {}, and {found}; read rows of several \
             types through an #[derive(EntityUnion)] enum",
            tag.describe(kind)
        ),
    ))
}

/// `error`, from decoding a field of a row of the type `schema` describes, with its
/// likely cause first when the row tells it: the row carries another kind's mark, a
/// missing property is on the row under another case, or the row has none of the
/// type's properties. `names` are the row's property names.
pub fn explain_decode(
    error: Error,
    entity: &DynamicEntity,
    names: &TakenProperties,
    schema: &'static EntitySchema,
) -> Error {
    if error.kind() != ErrorKind::Decode {
        return error;
    }
    let has = |wanted: &str| names.names().any(|name| name == wanted);
    let kind = schema.kind;
    let cause = if let Some((type_name, theirs)) =
        crate::model::registry::likely_other_kind(schema, &entity.row_key, has)
    {
        Some(format!(
            "the row carries the mark of kind {} ({}, as {type_name} writes it), so it is likely \
             a {} and not a {kind}; read the table through an #[derive(EntityUnion)] with a \
             variant for each kind",
            theirs.kind,
            theirs.tag.describe(theirs.kind),
            theirs.kind
        ))
    } else if has(ENTITY_TYPE_PROPERTY) && schema.tag != Tag::Kind {
        Some(format!(
            "the row has an {ENTITY_TYPE_PROPERTY} property, which this SDK writes on the rows of \
             a kind, so it is likely a row of another kind than {kind}; read the table through an \
             #[derive(EntityUnion)] with a variant for each kind"
        ))
    } else if let Some(other_case) = error.property().and_then(|wanted| {
        names
            .names()
            .find(|name| *name != wanted && name.eq_ignore_ascii_case(wanted))
    }) {
        let wanted = error.property().unwrap_or_default();
        Some(format!(
            "the row has `{other_case}`, which differs from `{wanted}` only in case, and property \
             names are case-sensitive; name the field's property as stored \
             (#[entity(rename = \"{other_case}\")])"
        ))
    } else if !schema.properties.is_empty() && !schema.property_names().any(&has) {
        Some(format!(
            "the row has none of {kind}'s properties ({}), so it is likely a row of another kind",
            schema.property_names().collect::<Vec<_>>().join(", ")
        ))
    } else {
        None
    };
    match cause {
        Some(cause) => {
            let message = format!(
                "entity ({:?}, {:?}): {cause}. {}",
                entity.partition_key,
                entity.row_key,
                error.message()
            );
            error.with_message(message)
        }
        None => error,
    }
}

/// The error for a row of `kind` written by a version this type can't read.
pub fn unknown_version(
    entity: &DynamicEntity,
    kind: &'static str,
    found: u32,
    current: u32,
) -> Error {
    let hint = if found > current {
        "it was written by newer code; deploy the newer version of the type before reading it"
            .to_owned()
    } else {
        format!(
            "declare how to read it: keep the old struct (with #[entity(kind = \"{kind}\", \
             version = {found})]) and add #[entity(upgrade_from(OldType))] with \
             `impl From<OldType> for` the current type"
        )
    };
    decode_error(
        entity,
        format!("is {kind} version {found}, and this type reads version {current}: {hint}"),
    )
}

/// Checks that `entity` is not a row the client keeps for itself (an index copy or
/// entry, an intent): those are never a union's variant.
///
/// # Errors
///
/// [`ErrorKind::Decode`] naming what the row is.
pub fn check_not_client_row(entity: &DynamicEntity) -> Result<()> {
    match row_role(entity) {
        RowRole::Primary { .. } | RowRole::Untyped => Ok(()),
        _ => entity_type(entity).map(|_| ()),
    }
}

/// The error for a row that carries the tag of none of an entity union's variants.
pub fn unknown_kind(
    entity: &DynamicEntity,
    union: &'static str,
    variants: &[&'static EntitySchema],
) -> Error {
    let expected: Vec<String> = variants
        .iter()
        .map(|schema| format!("{} ({})", schema.kind, schema.tag.describe(schema.kind)))
        .collect();
    let found = match entity.get(ENTITY_TYPE_PROPERTY) {
        Some(Value::String(kind)) => format!("is a {kind}, which"),
        _ => "is a row that".to_owned(),
    };
    decode_error(
        entity,
        format!(
            "{found} no variant of {union} takes (it has {}); add a variant for it or an \
             #[entity(other)] variant holding a DynamicEntity",
            expected.join(", ")
        ),
    )
}

/// The error for a text that names no variant of a `#[derive(Property)]` enum.
pub fn unknown_variant(
    text: &str,
    type_name: &'static str,
    allowed: &'static [&'static str],
) -> Error {
    Error::new(
        ErrorKind::InvalidValue,
        format!(
            "{text:?} is not a {type_name}; expected one of: {}",
            allowed.join(", ")
        ),
    )
}

/// A string property (for `#[derive(Property)]` enums).
///
/// # Errors
///
/// [`ErrorKind::Decode`] when absent, [`ErrorKind::InvalidValue`] for another type.
pub fn expect_string(value: Option<Value>) -> Result<String> {
    String::from_value(value)
}

/// `a == b`, usable in constants.
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether all strings differ, usable in constants.
pub const fn kinds_distinct(kinds: &[&str]) -> bool {
    let mut i = 0;
    while i < kinds.len() {
        let mut j = i + 1;
        while j < kinds.len() {
            if str_eq(kinds[i], kinds[j]) {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discriminator_checks() {
        let e = new_entity("p".into(), "r".into(), &Tag::Kind, "Employee", 2, 0);
        assert_eq!(check_kind(&e, "Employee").unwrap(), 2);
        let err = check_kind(&e, "Department").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        assert!(err.message().contains("is a Employee, not a Department"));
        let copy = DynamicEntity::new("p", "r").with(ENTITY_TYPE_PROPERTY, "Employee@email");
        assert!(entity_type(&copy)
            .unwrap_err()
            .message()
            .contains("index `email`"));
        assert!(entity_type(&DynamicEntity::new("p", "r")).is_err());
    }

    #[test]
    fn json_null_is_absent_and_size_is_checked() {
        assert_eq!(encode_json(&None::<u8>, "f", "F").unwrap(), None);
        let big = "x".repeat(40_000);
        assert_eq!(
            encode_json(&big, "f", "F").unwrap_err().kind(),
            ErrorKind::PropertyValueTooLarge
        );
        let e = DynamicEntity::new("p", "r");
        let v: Option<Vec<u8>> = decode_json(None, &e, "f", "F").unwrap();
        assert_eq!(v, None);
        let err = decode_json::<Vec<u8>>(None, &e, "f", "F").unwrap_err();
        assert!(err.message().contains("field `f`"), "{}", err.message());
        assert_eq!(err.entity_key().unwrap().row_key, "r");
    }

    #[test]
    fn const_string_helpers() {
        assert!(str_eq("a", "a") && !str_eq("a", "b") && !str_eq("a", "ab"));
        assert!(kinds_distinct(&["a", "b", "c"]));
        assert!(!kinds_distinct(&["a", "b", "a"]));
    }

    #[test]
    fn property_names_are_interned() {
        static NAMES: PropertyNames = PropertyNames::new(&["A", "B"]);
        assert!(Arc::ptr_eq(&NAMES.get(1), &NAMES.get(1)));
        assert_eq!(&*NAMES.get(0), "A");
    }

    #[test]
    fn series_points_are_found_by_number_and_checked() {
        let points = ["daily_000", "daily_001", "daily_002"];
        assert_eq!(series_point("daily_002", &points), Some(2));
        assert_eq!(series_point("daily_003", &points), None, "past the end");
        assert_eq!(series_point("daily_02", &points), None, "another width");
        assert_eq!(series_point("daily_0x1", &points), None);
        assert_eq!(series_point("hourly_001", &points), None);
        // Names that are no prefix and number are left to the match by name.
        assert_eq!(series_point("Low", &["Low", "High"]), None);
    }
}
