//! Decoding entity bodies: each object is read once with a serde visitor that keeps
//! property names and values borrowed from the input; the `@odata.type` annotations
//! (which may come before or after their value) are then resolved into typed
//! [`Value`]s.
//!
//! Doubles come from serde_json's number parser, which is exact (every shortest
//! round-trip text reads back to its bits) only with its `float_roundtrip` feature;
//! `doubles_round_trip_bit_for_bit` in the parent module checks that it is on.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use serde::de::{self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess};
use serde::Deserialize;

use super::TYPE_SUFFIX;
use crate::datetime::DateTime;
use crate::entity::{DynamicEntity, ETag};
use crate::error::{Error, Result};
use crate::odata::error::Short;
use crate::value::{EdmType, Value};

/// Reads base64 with or without padding (the encoder always pads).
const BASE64_LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// See [`super::decode_entity`].
pub(super) fn entity(json: &[u8]) -> Result<DynamicEntity> {
    let mut ctx = Ctx::default();
    let mut de = serde_json::Deserializer::from_str(text(json, "entity")?);
    let result = with_last_names(&mut ctx, |ctx| de.deserialize_map(EntityVisitor { ctx }));
    finish(&mut de, result, ctx.error, "entity")
}

/// See [`super::decode_request_entity`].
pub(super) fn request_entity(json: &[u8]) -> Result<super::RequestEntity> {
    let mut ctx = Ctx {
        request: Some((false, false)),
        ..Ctx::default()
    };
    let mut de = serde_json::Deserializer::from_str(text(json, "entity")?);
    let result = with_last_names(&mut ctx, |ctx| de.deserialize_map(EntityVisitor { ctx }));
    let entity = finish(&mut de, result, ctx.error.take(), "entity")?;
    let (has_partition_key, has_row_key) = ctx.request.unwrap_or((true, true));
    Ok(super::RequestEntity {
        entity,
        has_partition_key,
        has_row_key,
    })
}

/// See [`super::decode_entity_page`].
pub(super) fn page(json: &[u8]) -> Result<Vec<DynamicEntity>> {
    let mut ctx = Ctx::default();
    let mut de = serde_json::Deserializer::from_str(text(json, "entity page")?);
    let result = with_last_names(&mut ctx, |ctx| de.deserialize_map(PageVisitor { ctx }));
    finish(&mut de, result, ctx.error, "entity page")
}

thread_local! {
    /// The property names of the last entity this thread decoded, carried from one
    /// body to the next: entities of one schema decoded one after another (a
    /// server taking a stream of inserts, a client reading rows one by one, page
    /// after page) share one allocation per name, also where they are kept (a
    /// stored row's names are most of its allocations).
    static LAST_NAMES: RefCell<SharedNames> = RefCell::new(SharedNames::default());
}

/// Runs `decode` with the thread's last names in `ctx`, then keeps the names it
/// ends with for the next body. They are taken out while it runs, so no borrow of
/// the thread-local is held.
fn with_last_names<'de, T>(ctx: &mut Ctx<'de>, decode: impl FnOnce(&mut Ctx<'de>) -> T) -> T {
    ctx.names = LAST_NAMES.with(|names| std::mem::take(&mut *names.borrow_mut()));
    let result = decode(ctx);
    let names = std::mem::take(&mut ctx.names);
    LAST_NAMES.with(|kept| *kept.borrow_mut() = names);
    result
}

/// See [`super::decode_table_names`].
pub(super) fn table_names(json: &[u8]) -> Result<Vec<String>> {
    #[derive(Deserialize)]
    struct Page {
        value: Vec<Row>,
    }
    #[derive(Deserialize)]
    struct Row {
        #[serde(rename = "TableName")]
        name: String,
    }
    serde_json::from_slice::<Page>(json)
        .map(|page| page.value.into_iter().map(|row| row.name).collect())
        .map_err(|e| json_error("table list", &e))
}

/// The body as text. Checked as UTF-8 once, here, the parser reads each string
/// without checking it again (reading from bytes, it checks every string it keeps:
/// a tenth of the time spent decoding a page).
fn text<'a>(json: &'a [u8], what: &str) -> Result<&'a str> {
    std::str::from_utf8(json).map_err(|e| {
        Error::decode(format!(
            "malformed {what} JSON: not UTF-8 (an invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// Turns the outcome of a visitor into the crate's result: the visitor's own error
/// first (it carries the property), then serde's, then trailing input.
fn finish<T>(
    de: &mut serde_json::Deserializer<serde_json::de::StrRead<'_>>,
    result: std::result::Result<T, serde_json::Error>,
    error: Option<Error>,
    what: &str,
) -> Result<T> {
    if let Some(error) = error {
        return Err(error);
    }
    let value = result.map_err(|e| json_error(what, &e))?;
    de.end().map_err(|e| json_error(what, &e))?;
    Ok(value)
}

/// A decode error for malformed JSON. serde's messages can quote the input (a string
/// of the wrong type), so they are cut short.
fn json_error(what: &str, err: &serde_json::Error) -> Error {
    Error::decode(format!(
        "malformed {what} JSON: {}",
        Short(&err.to_string(), 120)
    ))
}

/// A decode error about one property.
fn property_error(name: &str, why: impl fmt::Display) -> Error {
    Error::decode(format!("property {:?}: {why}", Short(name, 48))).with_property(name)
}

/// A JSON value as read, before its type is resolved.
#[derive(Debug)]
enum Raw<'de> {
    Str(Cow<'de, str>),
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    Null,
    /// An object or an array (consumed, then rejected when resolving).
    Nested,
}

impl Raw<'_> {
    fn json_kind(&self) -> &'static str {
        match self {
            Raw::Str(_) => "a string",
            Raw::U64(_) | Raw::I64(_) => "an integer",
            Raw::F64(_) => "a number",
            Raw::Bool(_) => "a boolean",
            Raw::Null => "null",
            Raw::Nested => "an object or array",
        }
    }
}

/// Decoding state shared by the entities of one response: the first error raised by
/// the crate's own rules (serde only carries strings), reusable buffers, and the
/// property names of the previous entity (of this body or, through
/// [`with_last_names`], of the thread's previous one), so that entities that share
/// a schema allocate each name once.
#[derive(Default)]
struct Ctx<'de> {
    error: Option<Error>,
    /// Name, value and (once resolved) annotated type of each property.
    props: Vec<(Cow<'de, str>, Raw<'de>, Option<EdmType>)>,
    /// Property name and type name of each `@odata.type` annotation.
    annotations: Vec<(Cow<'de, str>, Raw<'de>)>,
    names: SharedNames,
    /// Reading a request body: keys may be missing (set here to whether each was
    /// given), and `Timestamp` and `odata.etag` are ignored.
    request: Option<(bool, bool)>,
}

impl Ctx<'_> {
    /// Records a rule violation and returns the serde error that stops the parse.
    fn fail<E: de::Error>(&mut self, error: Error) -> E {
        self.error = Some(error);
        E::custom("rejected")
    }
}

/// The property names of the previous entity, by position.
#[derive(Default)]
struct SharedNames(Vec<Arc<str>>);

impl SharedNames {
    /// A shared name for the property at `index`, reusing the previous entity's.
    fn get(&mut self, index: usize, name: &str) -> Arc<str> {
        match self.0.get_mut(index) {
            Some(known) if **known == *name => Arc::clone(known),
            Some(slot) => {
                *slot = Arc::from(name);
                Arc::clone(slot)
            }
            None => {
                let shared: Arc<str> = Arc::from(name);
                self.0.push(Arc::clone(&shared));
                shared
            }
        }
    }
}

/// Reads an object key, borrowed when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_str(KeySeed)
    }
}

impl<'de> de::Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// Reads any JSON value into a [`Raw`].
struct RawSeed;

impl<'de> DeserializeSeed<'de> for RawSeed {
    type Value = Raw<'de>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(RawSeed)
    }
}

impl<'de> de::Visitor<'de> for RawSeed {
    type Value = Raw<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> std::result::Result<Raw<'de>, E> {
        Ok(Raw::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Raw<'de>, E> {
        Ok(Raw::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<Raw<'de>, E> {
        Ok(Raw::Str(Cow::Owned(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Raw<'de>, E> {
        Ok(Raw::U64(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Raw<'de>, E> {
        Ok(Raw::I64(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Raw<'de>, E> {
        Ok(Raw::F64(v))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Raw<'de>, E> {
        Ok(Raw::Bool(v))
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<Raw<'de>, E> {
        Ok(Raw::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Raw<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Raw::Nested)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Raw<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Raw::Nested)
    }
}

/// Reads `odata.etag`: a string straight into an [`ETag`] (the service escapes its
/// quotes, so serde hands over unescaped text that would otherwise be copied into a
/// `String` first, then into the ETag), anything else as a [`Raw`] for
/// [`resolve`] to accept (`null`) or refuse.
struct EtagSeed;

impl<'de> DeserializeSeed<'de> for EtagSeed {
    type Value = std::result::Result<ETag, Raw<'de>>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(EtagSeed)
    }
}

impl<'de> de::Visitor<'de> for EtagSeed {
    type Value = std::result::Result<ETag, Raw<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an ETag string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Ok(ETag::new(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
        RawSeed.visit_u64(v).map(Err)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Self::Value, E> {
        RawSeed.visit_i64(v).map(Err)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Self::Value, E> {
        RawSeed.visit_f64(v).map(Err)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Self::Value, E> {
        RawSeed.visit_bool(v).map(Err)
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        RawSeed.visit_unit().map(Err)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
        RawSeed.visit_map(map).map(Err)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Self::Value, A::Error> {
        RawSeed.visit_seq(seq).map(Err)
    }
}

/// Reads one entity object.
struct EntityVisitor<'c, 'de> {
    ctx: &'c mut Ctx<'de>,
}

impl<'de> DeserializeSeed<'de> for EntityVisitor<'_, 'de> {
    type Value = DynamicEntity;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<DynamicEntity, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> de::Visitor<'de> for EntityVisitor<'_, 'de> {
    type Value = DynamicEntity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an entity object")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<DynamicEntity, A::Error> {
        let ctx = self.ctx;
        let mut fields = SystemFields::default();
        ctx.props.clear();
        ctx.annotations.clear();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let slot = match &*key {
                "PartitionKey" => &mut fields.partition_key,
                "RowKey" => &mut fields.row_key,
                "Timestamp" => &mut fields.timestamp,
                "odata.etag" => {
                    if fields.etag.is_some() {
                        return Err(ctx.fail(property_error(&key, "given twice")));
                    }
                    fields.etag = Some(map.next_value_seed(EtagSeed)?);
                    continue;
                }
                k if k.starts_with("odata.") => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                k if k.ends_with(TYPE_SUFFIX) => {
                    let value = map.next_value_seed(RawSeed)?;
                    let name = match key {
                        Cow::Borrowed(k) => Cow::Borrowed(&k[..k.len() - TYPE_SUFFIX.len()]),
                        Cow::Owned(mut k) => {
                            k.truncate(k.len() - TYPE_SUFFIX.len());
                            Cow::Owned(k)
                        }
                    };
                    ctx.annotations.push((name, value));
                    continue;
                }
                _ => {
                    let value = map.next_value_seed(RawSeed)?;
                    ctx.props.push((key, value, None));
                    continue;
                }
            };
            if slot.is_some() {
                return Err(ctx.fail(property_error(&key, "given twice")));
            }
            *slot = Some(map.next_value_seed(RawSeed)?);
        }
        resolve(ctx, fields).map_err(|e| ctx.fail(e))
    }
}

/// The system keys of one entity object, as read.
#[derive(Default)]
struct SystemFields<'de> {
    partition_key: Option<Raw<'de>>,
    row_key: Option<Raw<'de>>,
    timestamp: Option<Raw<'de>>,
    etag: Option<std::result::Result<ETag, Raw<'de>>>,
}

/// A system property that must be a string (or `null`, meaning absent).
fn system_string<'de>(name: &str, raw: Option<Raw<'de>>) -> Result<Option<Cow<'de, str>>> {
    match raw {
        None | Some(Raw::Null) => Ok(None),
        Some(Raw::Str(s)) => Ok(Some(s)),
        Some(other) => Err(property_error(
            name,
            format_args!("expected a string, got {}", other.json_kind()),
        )),
    }
}

/// Builds the entity from what the visitor collected.
fn resolve(ctx: &mut Ctx<'_>, mut fields: SystemFields<'_>) -> Result<DynamicEntity> {
    let partition_key = system_string("PartitionKey", fields.partition_key)?;
    let row_key = system_string("RowKey", fields.row_key)?;
    if let Some(given) = &mut ctx.request {
        *given = (partition_key.is_some(), row_key.is_some());
        fields.timestamp = None;
        fields.etag = None;
    }
    let optional = ctx.request.is_some();
    let partition_key = match partition_key {
        Some(key) => key.into_owned(),
        None if optional => String::new(),
        None => {
            return Err(property_error(
                "PartitionKey",
                "missing; every entity has one",
            ))
        }
    };
    let row_key = match row_key {
        Some(key) => key.into_owned(),
        None if optional => String::new(),
        None => return Err(property_error("RowKey", "missing; every entity has one")),
    };
    let timestamp = system_string("Timestamp", fields.timestamp)?
        .map(|text| {
            text.parse::<DateTime>().map_err(|_| {
                property_error(
                    "Timestamp",
                    format_args!("not an Edm.DateTime: {:?}", Short(&text, 40)),
                )
            })
        })
        .transpose()?;
    let etag = match fields.etag {
        Some(Ok(etag)) => Some(etag),
        // `null` is absent; another JSON type is refused as for every system string.
        Some(Err(raw)) => system_string("odata.etag", Some(raw))?.map(ETag::new),
        None => None,
    }
    .or_else(|| timestamp.map(ETag::from_timestamp));

    let Ctx {
        props,
        annotations,
        names,
        ..
    } = ctx;
    if let Some(name) = duplicate_name(props) {
        return Err(property_error(name, "given twice"));
    }
    for (name, raw) in annotations.iter() {
        let edm = match raw {
            Raw::Str(text) => EdmType::from_odata_name(text).ok_or_else(|| {
                property_error(
                    name,
                    format_args!("unknown type annotation {:?}", Short(text, 40)),
                )
            })?,
            other => {
                return Err(property_error(
                    name,
                    format_args!(
                        "type annotation must be a string, got {}",
                        other.json_kind()
                    ),
                ))
            }
        };
        match &**name {
            "Timestamp" => continue,
            "PartitionKey" | "RowKey" if edm == EdmType::String => continue,
            "PartitionKey" | "RowKey" => {
                return Err(property_error(
                    name,
                    format_args!("annotated {edm}; keys are Edm.String"),
                ))
            }
            _ => {}
        }
        let slot = props
            .iter_mut()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, edm)| edm)
            .ok_or_else(|| property_error(name, "has a type annotation but no value"))?;
        if slot.replace(edm).is_some() {
            return Err(property_error(name, "type annotation given twice"));
        }
    }

    let mut entity = DynamicEntity::new(partition_key, row_key);
    entity.timestamp = timestamp;
    entity.etag = etag;
    // Built whole and then handed over: pushing one by one checks whether the
    // shared list is shared on every push.
    let mut list = Vec::with_capacity(props.len());
    for (name, raw, edm) in props.drain(..) {
        if matches!(raw, Raw::Null) {
            continue;
        }
        let value = typed_value(&name, raw, edm)?;
        list.push((names.get(list.len(), &name), value));
    }
    entity.set_properties(list);
    Ok(entity)
}

/// A name that occurs twice among the properties, if any.
fn duplicate_name<'a>(props: &'a [(Cow<'_, str>, Raw<'_>, Option<EdmType>)]) -> Option<&'a str> {
    if props.len() <= 16 {
        return props.iter().enumerate().find_map(|(i, (name, _, _))| {
            props[..i]
                .iter()
                .any(|(n, _, _)| n == name)
                .then_some(&**name)
        });
    }
    let mut names: Vec<&str> = props.iter().map(|(n, _, _)| &**n).collect();
    names.sort_unstable();
    names.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

/// The typed value of a property from its JSON value and annotation.
fn typed_value(name: &str, raw: Raw<'_>, edm: Option<EdmType>) -> Result<Value> {
    let mismatch = |raw: &Raw<'_>, expected: &str| {
        property_error(
            name,
            format_args!("expected {expected}, got {}", raw.json_kind()),
        )
    };
    let bad_text = |edm: EdmType, text: &str| {
        property_error(
            name,
            format_args!("not a valid {edm}: {:?}", Short(text, 40)),
        )
    };
    let out_of_range =
        |edm: EdmType| property_error(name, format_args!("integer out of range of {edm}"));
    Ok(match (edm, raw) {
        (_, raw @ (Raw::Nested | Raw::Null)) => return Err(mismatch(&raw, "a flat value")),
        // Unannotated: inferred from the JSON type.
        (None | Some(EdmType::String), Raw::Str(s)) => Value::String(s.into_owned()),
        (None, Raw::U64(n)) => match (i32::try_from(n), i64::try_from(n)) {
            (Ok(n), _) => Value::Int32(n),
            (_, Ok(n)) => Value::Int64(n),
            // Beyond Int64 a number can only be a double.
            _ => Value::Double(n as f64),
        },
        (None, Raw::I64(n)) => match i32::try_from(n) {
            Ok(n) => Value::Int32(n),
            Err(_) => Value::Int64(n),
        },
        (None, Raw::F64(x)) => Value::Double(x),
        (None | Some(EdmType::Boolean), Raw::Bool(b)) => Value::Boolean(b),
        (Some(EdmType::String), raw) => return Err(mismatch(&raw, "a string for Edm.String")),
        (Some(edm @ EdmType::Int32), Raw::U64(n)) => {
            Value::Int32(i32::try_from(n).map_err(|_| out_of_range(edm))?)
        }
        (Some(edm @ EdmType::Int32), Raw::I64(n)) => {
            Value::Int32(i32::try_from(n).map_err(|_| out_of_range(edm))?)
        }
        // An annotated number may come as a string (the JS SDK writes
        // `{ value: "-2147483648", type: "Int32" }` so).
        (Some(edm @ EdmType::Int32), Raw::Str(s)) => {
            Value::Int32(s.trim().parse().map_err(|_| bad_text(edm, &s))?)
        }
        (Some(EdmType::Int32), raw) => return Err(mismatch(&raw, "an integer for Edm.Int32")),
        (Some(edm @ EdmType::Int64), Raw::Str(s)) => {
            Value::Int64(s.parse().map_err(|_| bad_text(edm, &s))?)
        }
        (Some(edm @ EdmType::Int64), Raw::U64(n)) => {
            Value::Int64(i64::try_from(n).map_err(|_| out_of_range(edm))?)
        }
        (Some(EdmType::Int64), Raw::I64(n)) => Value::Int64(n),
        (Some(EdmType::Int64), raw) => {
            return Err(mismatch(&raw, "a decimal string for Edm.Int64"))
        }
        (Some(EdmType::Double), Raw::F64(x)) => Value::Double(x),
        (Some(EdmType::Double), Raw::U64(n)) => Value::Double(n as f64),
        (Some(EdmType::Double), Raw::I64(n)) => Value::Double(n as f64),
        (Some(edm @ EdmType::Double), Raw::Str(s)) => Value::Double(match &*s {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            text => match text.trim().parse::<f64>() {
                // A finite number written as a string (Rust's parser takes `inf`
                // and `nan` spellings the service doesn't: those are refused).
                Ok(x) if x.is_finite() => x,
                _ => return Err(bad_text(edm, &s)),
            },
        }),
        (Some(EdmType::Double), raw) => return Err(mismatch(&raw, "a number for Edm.Double")),
        (Some(edm @ EdmType::Boolean), Raw::Str(s)) => Value::Boolean(match &*s {
            "true" => true,
            "false" => false,
            _ => return Err(bad_text(edm, &s)),
        }),
        (Some(EdmType::Boolean), raw) => return Err(mismatch(&raw, "a boolean for Edm.Boolean")),
        (Some(edm @ EdmType::DateTime), Raw::Str(s)) => {
            Value::DateTime(s.parse().map_err(|_| bad_text(edm, &s))?)
        }
        (Some(edm @ EdmType::Guid), Raw::Str(s)) => {
            Value::Guid(uuid::Uuid::try_parse(&s).map_err(|_| bad_text(edm, &s))?)
        }
        (Some(edm @ EdmType::Binary), Raw::Str(s)) => {
            Value::Binary(BASE64_LENIENT.decode(&*s).map_err(|_| bad_text(edm, &s))?)
        }
        (Some(edm), raw) => return Err(mismatch(&raw, &format!("a string for {edm}"))),
    })
}

/// Reads `{"value":[...], ...}`.
struct PageVisitor<'c, 'de> {
    ctx: &'c mut Ctx<'de>,
}

impl<'de> de::Visitor<'de> for PageVisitor<'_, 'de> {
    type Value = Vec<DynamicEntity>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with a `value` array")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut items = None;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key != "value" {
                map.next_value::<IgnoredAny>()?;
            } else if items.is_some() {
                return Err(de::Error::duplicate_field("value"));
            } else {
                items = Some(map.next_value_seed(EntitiesSeed {
                    ctx: &mut *self.ctx,
                })?);
            }
        }
        items.ok_or_else(|| de::Error::missing_field("value"))
    }
}

/// Reads the `value` array of a page.
struct EntitiesSeed<'c, 'de> {
    ctx: &'c mut Ctx<'de>,
}

impl<'de> DeserializeSeed<'de> for EntitiesSeed<'_, 'de> {
    type Value = Vec<DynamicEntity>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> de::Visitor<'de> for EntitiesSeed<'_, 'de> {
    type Value = Vec<DynamicEntity>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of entities")
    }

    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        // Cap the hint: it comes from the input.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1000));
        loop {
            let next = seq.next_element_seed(EntityVisitor {
                ctx: &mut *self.ctx,
            });
            match next {
                Ok(Some(entity)) => items.push(entity),
                Ok(None) => return Ok(items),
                Err(e) => {
                    let index = items.len();
                    if let Some(error) = self.ctx.error.take() {
                        let message = format!("entity {index} of the page: {}", error.message());
                        self.ctx.error = Some(error.with_message(message));
                    }
                    return Err(e);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::odata::decode_entity;

    /// An entity as Azurite returned it with minimalmetadata (docs/protocol.md §4).
    const AZURITE: &str = r#"{"odata.metadata":"http://127.0.0.1:10712/devstoreaccount1/$metadata#probe1/@Element",
 "odata.etag":"W/\"datetime'2026-11-21T22%3A27%3A39.1328500Z'\"",
 "PartitionKey":"pk1","RowKey":"rk1","S":"hello","I":42,
 "L@odata.type":"Edm.Int64","L":"9007199254740993","D":1.5,
 "DN@odata.type":"Edm.Double","DN":"NaN",
 "B":true,"T@odata.type":"Edm.DateTime","T":"2024-01-02T03:04:05.1234567Z",
 "G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833",
 "Bin@odata.type":"Edm.Binary","Bin":"AQID","Timestamp":"2026-11-21T22:27:39.1328500Z"}"#;

    fn entity(json: &str) -> DynamicEntity {
        decode_entity(json.as_bytes()).unwrap()
    }

    fn decode_err(json: &str) -> Error {
        let err = decode_entity(json.as_bytes()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
        err
    }

    #[test]
    fn entities_decoded_one_after_another_share_their_names() {
        let first = entity(r#"{"PartitionKey":"p","RowKey":"1","Name":"a","Age":1}"#);
        let second = entity(r#"{"PartitionKey":"p","RowKey":"2","Name":"b","Age":2}"#);
        let request = super::request_entity(br#"{"Name":"c","Age":3}"#).unwrap();
        let page =
            super::page(br#"{"value":[{"PartitionKey":"p","RowKey":"3","Name":"d"}]}"#).unwrap();
        let name_of = |e: &DynamicEntity, i: usize| e.properties().nth(i).unwrap().0.as_ptr();
        for (other, what) in [
            (&second, "entity"),
            (&request.entity, "request"),
            (&page[0], "page"),
        ] {
            assert_eq!(name_of(&first, 0), name_of(other, 0), "{what}: Name");
        }
        assert_eq!(name_of(&first, 1), name_of(&second, 1), "Age");
        // A name in another place, or another name, is its own.
        let moved = entity(r#"{"PartitionKey":"p","RowKey":"4","Age":4,"Name":"e"}"#);
        assert_eq!(
            moved.properties().map(|(n, _)| n).collect::<Vec<_>>(),
            ["Age", "Name"]
        );
        assert_ne!(name_of(&moved, 1), name_of(&first, 0));
    }

    #[test]
    fn annotated_numbers_may_come_as_strings() {
        // As the JS SDK sends `{ value: "..", type: "Int32" | "Double" }`.
        let e = entity(
            r#"{"PartitionKey":"p","RowKey":"r","I@odata.type":"Edm.Int32","I":"-2147483648","D@odata.type":"Edm.Double","D":"1.7976931348623157e308"}"#,
        );
        assert_eq!(e.get("I"), Some(&Value::Int32(i32::MIN)));
        assert_eq!(e.get("D"), Some(&Value::Double(f64::MAX)));
    }

    #[test]
    fn azurite_entity_decodes_to_typed_values() {
        let e = entity(AZURITE);
        let stamp: DateTime = "2026-11-21T22:27:39.13285Z".parse().unwrap();
        assert_eq!(
            (e.partition_key.as_str(), e.row_key.as_str()),
            ("pk1", "rk1")
        );
        assert_eq!(e.timestamp, Some(stamp));
        assert_eq!(e.etag, Some(ETag::from_timestamp(stamp)));
        let names: Vec<_> = e.properties().map(|(n, _)| n).collect();
        assert_eq!(names, ["S", "I", "L", "D", "DN", "B", "T", "G", "Bin"]);
        assert_eq!(e.get("S"), Some(&Value::String("hello".into())));
        assert_eq!(e.get("I"), Some(&Value::Int32(42)));
        assert_eq!(e.get("L"), Some(&Value::Int64(9_007_199_254_740_993)));
        assert_eq!(e.get("D"), Some(&Value::Double(1.5)));
        assert!(e.get("DN").and_then(Value::as_f64).is_some_and(f64::is_nan));
        assert_eq!(e.get("B"), Some(&Value::Boolean(true)));
        let t: DateTime = "2024-01-02T03:04:05.1234567Z".parse().unwrap();
        assert_eq!(e.get("T"), Some(&Value::DateTime(t)));
        let g = uuid::Uuid::parse_str("c9da6455-213d-42c9-9a79-3e9149a57833").unwrap();
        assert_eq!(e.get("G"), Some(&Value::Guid(g)));
        assert_eq!(e.get("Bin"), Some(&Value::Binary(vec![1, 2, 3])));
    }

    #[test]
    fn fullmetadata_and_annotation_order_and_inference() {
        let e = entity(
            r#"{"odata.type":"acct.t","odata.id":"x","odata.editLink":"t(..)",
                "Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-01-02T03:04:05Z",
                "PartitionKey":"p","RowKey":"r","L":"-5","L@odata.type":"Edm.Int64",
                "Big":3000000000,"Neg":-3000000000,"Three":3.0,"Exp":1e2,"N":null,
                "X@odata.type":"Edm.String","X":"s","Q@odata.type":"Edm.Boolean","Q":"false",
                "DI@odata.type":"Edm.Double","DI":7,"I64N@odata.type":"Edm.Int64","I64N":12}"#,
        );
        let t: DateTime = "2024-01-02T03:04:05Z".parse().unwrap();
        assert_eq!(
            e.etag,
            Some(ETag::from_timestamp(t)),
            "derived from Timestamp"
        );
        assert_eq!(e.get("L"), Some(&Value::Int64(-5)));
        assert_eq!(e.get("Big"), Some(&Value::Int64(3_000_000_000)));
        assert_eq!(e.get("Neg"), Some(&Value::Int64(-3_000_000_000)));
        assert_eq!(e.get("Three"), Some(&Value::Double(3.0)));
        assert_eq!(e.get("Exp"), Some(&Value::Double(100.0)));
        assert_eq!(e.get("N"), None, "null is absent");
        assert_eq!(e.get("X"), Some(&Value::String("s".into())));
        assert_eq!(e.get("Q"), Some(&Value::Boolean(false)));
        assert_eq!(e.get("DI"), Some(&Value::Double(7.0)));
        assert_eq!(e.get("I64N"), Some(&Value::Int64(12)));
        assert_eq!(e.len(), 9);
        let bare = entity(r#"{"PartitionKey":"p","RowKey":"r"}"#);
        assert_eq!((bare.timestamp, &bare.etag, bare.len()), (None, &None, 0));
        let unversioned = entity(r#"{"PartitionKey":"p","RowKey":"r","odata.etag":null}"#);
        assert_eq!(unversioned.etag, None, "a null ETag is absent");
    }

    #[test]
    fn malformed_entities_are_decode_errors_naming_the_property() {
        for (json, property) in [
            (
                r#"{"PartitionKey":"p","RowKey":"r","A":{"x":1}}"#,
                Some("A"),
            ),
            (r#"{"PartitionKey":"p","RowKey":"r","A":[1]}"#, Some("A")),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Single","A":1.5}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64"}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64","A":true}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int32","A":3000000000}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int32","A":1.5}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Guid","A":"nope"}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Binary","A":"!!"}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.DateTime","A":"2024"}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Double","A":"1.5x"}"#,
                Some("A"),
            ),
            (
                // Rust's spellings of the special values are not the service's.
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Double","A":"inf"}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int32","A":"1e3"}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":5,"A":1}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A":1,"A":2}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int32","A@odata.type":"Edm.Int32","A":2}"#,
                Some("A"),
            ),
            (
                r#"{"PartitionKey":"p","PartitionKey":"p","RowKey":"r"}"#,
                Some("PartitionKey"),
            ),
            (r#"{"PartitionKey":1,"RowKey":"r"}"#, Some("PartitionKey")),
            (r#"{"PartitionKey":"p"}"#, Some("RowKey")),
            (
                r#"{"PartitionKey":"p","RowKey":"r","RowKey@odata.type":"Edm.Int32"}"#,
                Some("RowKey"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","Timestamp":"yesterday"}"#,
                Some("Timestamp"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","odata.etag":7}"#,
                Some("odata.etag"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","odata.etag":{"a":1}}"#,
                Some("odata.etag"),
            ),
            (
                r#"{"PartitionKey":"p","RowKey":"r","odata.etag":"W/\"1\"","odata.etag":"W/\"2\""}"#,
                Some("odata.etag"),
            ),
            (r#"{"PartitionKey":"p","RowKey":"r"} x"#, None),
            (r#"{"PartitionKey":"p","RowKey":"r""#, None),
            ("[]", None),
            ("", None),
        ] {
            let err = decode_err(json);
            assert_eq!(err.property(), property, "{json}: {err}");
        }
    }
}
