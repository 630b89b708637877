//! Writing key parts into a key, and reading them back (generated code calls these):
//! the glue between a field's codec and its key form in [`crate::key::form`].

use crate::datetime::DateTime;
use crate::entity::DynamicEntity;
use crate::error::{Error, ErrorKind, Result};
use crate::key::form::{date, iso, padded, shard, signed, text, ticks};
use crate::key::{validate_partition_key, validate_row_key};
use crate::model::keypart::{KeyDateCodec, KeyIntCodec, KeyTextCodec, KeyTimeCodec};

fn key_error(field: &str, message: String) -> Error {
    Error::new(ErrorKind::InvalidKey, format!("field `{field}`: {message}"))
}

/// Appends literal template text.
pub fn write_literal(out: &mut String, text: &str) {
    out.push_str(text);
}

/// Appends a text part, refusing characters keys can't hold.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] naming the field and the character.
pub fn write_str_part(out: &mut String, value: &str, field: &'static str) -> Result<()> {
    text::check(value, field)?;
    out.push_str(value);
    Ok(())
}

/// Appends bucket `bucket` among `buckets`, as a shard placeholder writes it.
pub fn write_bucket(out: &mut String, bucket: usize, buckets: usize) {
    shard::write_bucket(out, bucket, buckets);
}

/// Appends the shard bucket of a text value among `buckets` (`{field:shard(N)}`).
///
/// # Errors
///
/// As [`write_str_part`], for the value hashed.
pub fn write_shard(
    out: &mut String,
    value: &str,
    buckets: usize,
    field: &'static str,
) -> Result<()> {
    text::check(value, field)?;
    shard::write_bucket(out, shard::bucket(value, buckets), buckets);
    Ok(())
}

/// Appends a [`KeyText`](crate::model::KeyText) part.
///
/// # Errors
///
/// As [`write_str_part`].
pub fn write_text<T>(
    out: &mut String,
    codec: &KeyTextCodec<T>,
    value: &T,
    field: &'static str,
) -> Result<()> {
    let start = out.len();
    (codec.write)(value, out);
    let part = &out[start..];
    if let Err(e) = text::check(part, field) {
        out.truncate(start);
        return Err(e);
    }
    Ok(())
}

/// Appends `value` zero-padded to `width` digits.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] naming the field for a negative value or one with more
/// than `width` digits.
pub fn write_padded<T>(
    out: &mut String,
    codec: &KeyIntCodec<T>,
    value: &T,
    width: usize,
    field: &'static str,
) -> Result<()> {
    let Some(number) = (codec.to_u64)(value) else {
        return Err(key_error(
            field,
            format!(
                "{} is negative and `{{{field}:0{width}}}` holds only non-negative numbers; use \
                 `{{{field}:signed}}` for signed values",
                (codec.to_i64)(value).unwrap_or_default()
            ),
        ));
    };
    if !padded::write(out, number, width) {
        return Err(key_error(
            field,
            format!(
                "{number} has more than {width} digits and doesn't fit `{{{field}:0{width}}}`; \
                 widen the padding (keys of one width sort like the numbers)"
            ),
        ));
    }
    Ok(())
}

/// Appends the order-preserving 20-digit form of a signed value.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] naming the field for a value above `i64::MAX`.
pub fn write_signed<T>(
    out: &mut String,
    codec: &KeyIntCodec<T>,
    value: &T,
    field: &'static str,
) -> Result<()> {
    let Some(number) = (codec.to_i64)(value) else {
        return Err(key_error(
            field,
            "the value is above i64::MAX and has no signed key form; use `{field:0N}`".to_owned(),
        ));
    };
    signed::write(out, number);
    Ok(())
}

/// Appends a point in time in the form `write` writes.
fn write_time<T>(
    out: &mut String,
    codec: &KeyTimeCodec<T>,
    value: &T,
    field: &str,
    write: fn(&mut String, DateTime),
) -> Result<()> {
    let time = (codec.to)(value).map_err(|e| key_error(field, e.message().to_owned()))?;
    write(out, time);
    Ok(())
}

/// Appends the 19-digit ticks of a point in time.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] naming the field when the time is outside the service's
/// range.
pub fn write_ticks<T>(
    out: &mut String,
    codec: &KeyTimeCodec<T>,
    value: &T,
    field: &'static str,
) -> Result<()> {
    write_time(out, codec, value, field, ticks::write)
}

/// Appends the 19-digit reverse ticks of a point in time (newest first).
///
/// # Errors
///
/// As [`write_ticks`].
pub fn write_reverse_ticks<T>(
    out: &mut String,
    codec: &KeyTimeCodec<T>,
    value: &T,
    field: &'static str,
) -> Result<()> {
    write_time(out, codec, value, field, ticks::write_reverse)
}

/// Appends a point in time as ISO 8601 UTC text with `digits` fractional digits.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] naming the field when the time is outside the service's
/// range or has more precision than `digits` holds.
pub fn write_iso<T>(
    out: &mut String,
    codec: &KeyTimeCodec<T>,
    value: &T,
    digits: u8,
    field: &'static str,
) -> Result<()> {
    let time = (codec.to)(value).map_err(|e| key_error(field, e.message().to_owned()))?;
    iso::write(out, time, digits).map_err(|e| key_error(field, e.message().to_owned()))
}

/// Appends a calendar date as `yyyy-MM-dd`.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] naming the field for a year outside 0001..=9999.
pub fn write_date<T>(
    out: &mut String,
    codec: &KeyDateCodec<T>,
    value: &T,
    field: &'static str,
) -> Result<()> {
    let (year, month, day) = (codec.to)(value);
    date::write_date_text(out, year, month, day)
        .map_err(|e| key_error(field, e.message().to_owned()))
}

/// Checks a built PartitionKey (length, characters) and returns it.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] as [`validate_partition_key`].
pub fn finish_partition_key(key: String) -> Result<String> {
    validate_partition_key(&key)?;
    Ok(key)
}

/// Checks a built RowKey (length, characters) and returns it.
///
/// # Errors
///
/// [`ErrorKind::InvalidKey`] as [`validate_row_key`].
pub fn finish_row_key(key: String) -> Result<String> {
    validate_row_key(&key)?;
    Ok(key)
}

/// A cursor that reads the fields of a key template back out of one key of an
/// entity. Errors are [`ErrorKind::Decode`] naming the key, the template, the field
/// and the entity key.
#[derive(Debug)]
pub struct KeyReader<'a> {
    entity: &'a DynamicEntity,
    which: &'static str,
    template: &'static str,
    key: &'a str,
    pos: usize,
}

impl<'a> KeyReader<'a> {
    /// A reader over the entity's PartitionKey.
    pub fn partition_key(entity: &'a DynamicEntity, template: &'static str) -> KeyReader<'a> {
        KeyReader {
            entity,
            which: "PartitionKey",
            template,
            key: &entity.partition_key,
            pos: 0,
        }
    }

    /// A reader over the entity's RowKey.
    pub fn row_key(entity: &'a DynamicEntity, template: &'static str) -> KeyReader<'a> {
        KeyReader {
            entity,
            which: "RowKey",
            template,
            key: &entity.row_key,
            pos: 0,
        }
    }

    fn error(&self, what: String) -> Error {
        Error::new(
            ErrorKind::Decode,
            format!(
                "the {} {:?} doesn't match the template {:?}: {what}",
                self.which, self.key, self.template
            ),
        )
        .with_entity_key(self.entity.key())
    }

    fn rest(&self) -> &'a str {
        &self.key[self.pos..]
    }

    /// Expects literal text.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the key doesn't continue with `text`.
    pub fn literal(&mut self, text: &str) -> Result<()> {
        if self.rest().starts_with(text) {
            self.pos += text.len();
            Ok(())
        } else {
            Err(self.error(format!(
                "expected {text:?} at byte {}, found {:?}",
                self.pos,
                self.rest()
            )))
        }
    }

    fn take_fixed(&mut self, width: usize, field: &str) -> Result<&'a str> {
        let rest = self.rest();
        match rest.get(..width) {
            Some(part) => {
                self.pos += width;
                Ok(part)
            }
            None => Err(self.error(format!(
                "field `{field}` needs {width} characters, found {rest:?}"
            ))),
        }
    }

    fn take_variable(&mut self, tail_len: usize, field: &str) -> Result<&'a str> {
        let rest = self.rest();
        let end = rest.len().checked_sub(tail_len);
        match end.and_then(|end| rest.get(..end)) {
            Some(part) => {
                self.pos += part.len();
                Ok(part)
            }
            None => Err(self.error(format!(
                "field `{field}`: the key is too short for the rest of the template"
            ))),
        }
    }

    fn field<T>(&self, field: &str, part: &str, result: Result<T>) -> Result<T> {
        result.map_err(|e| self.error(format!("field `{field}` from {part:?}: {}", e.message())))
    }

    /// Reads a shard bucket (`{field:shard(N)}`): its digits, which must name a
    /// bucket among `buckets`. The field's value is read from its other placeholder
    /// in the key.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the part is not a bucket number.
    pub fn shard(&mut self, buckets: usize, field: &'static str) -> Result<usize> {
        let part = self.take_fixed(shard::width(buckets), field)?;
        let bucket = part
            .parse::<usize>()
            .ok()
            .filter(|b| *b < buckets && part.bytes().all(|c| c.is_ascii_digit()))
            .ok_or_else(|| Error::new(ErrorKind::Decode, format!("not a bucket among {buckets}")));
        self.field(field, part, bucket)
    }

    /// Checks a bucket [`KeyReader::shard`] read against the bucket of the field's
    /// value. A key written by other code, or with another bucket count, would
    /// otherwise read back as a value whose own key is another row: its updates
    /// would miss the row read, and an upsert would make a second one.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the value hashes to another bucket.
    pub fn check_shard(
        &self,
        read: usize,
        value: &str,
        buckets: usize,
        field: &'static str,
    ) -> Result<()> {
        let expected = shard::bucket(value, buckets);
        if read == expected {
            return Ok(());
        }
        Err(self.error(format!(
            "field `{field}` is {value:?}, which this type puts in bucket {expected} of \
             {buckets}, not {read}: the row was written by other code or with another bucket \
             count, and this type would write it back to another row. Read it as a \
             DynamicEntity and write it again under this type's key"
        )))
    }

    /// Reads a variable-width `String` part: all but the last `tail_len` bytes of
    /// what is left.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the key is too short.
    pub fn string(&mut self, tail_len: usize, field: &'static str) -> Result<String> {
        self.take_variable(tail_len, field).map(str::to_owned)
    }

    /// Reads a [`KeyText`] part of `width` bytes, or of variable width (all but the
    /// last `tail_len` bytes) when `width` is `None`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the key is too short or the part isn't a key text of
    /// `T`.
    pub fn text<T>(
        &mut self,
        codec: &KeyTextCodec<T>,
        width: Option<usize>,
        tail_len: usize,
        field: &'static str,
    ) -> Result<T> {
        let part = match width {
            Some(width) => self.take_fixed(width, field)?,
            None => self.take_variable(tail_len, field)?,
        };
        self.field(field, part, (codec.read)(part))
    }

    /// Reads a zero-padded number of `width` digits.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the part isn't `width` digits or doesn't fit `T`.
    pub fn padded<T>(
        &mut self,
        codec: &KeyIntCodec<T>,
        width: usize,
        field: &'static str,
    ) -> Result<T> {
        let part = self.take_fixed(width, field)?;
        let number = padded::parse_padded(part, width).and_then(|n| {
            (codec.from_u64)(n).ok_or_else(|| {
                Error::new(
                    ErrorKind::Decode,
                    format!("{n} is out of the field's range"),
                )
            })
        });
        self.field(field, part, number)
    }

    /// Reads a 20-digit signed number.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the part isn't a signed key or doesn't fit `T`.
    pub fn signed<T>(&mut self, codec: &KeyIntCodec<T>, field: &'static str) -> Result<T> {
        let part = self.take_fixed(signed::SIGNED_KEY_WIDTH, field)?;
        let number = signed::decode_signed(part).and_then(|n| {
            (codec.from_i64)(n).ok_or_else(|| {
                Error::new(
                    ErrorKind::Decode,
                    format!("{n} is out of the field's range"),
                )
            })
        });
        self.field(field, part, number)
    }

    /// Reads 19-digit ticks.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the part isn't a ticks key or `T` can't hold it.
    pub fn ticks<T>(&mut self, codec: &KeyTimeCodec<T>, field: &'static str) -> Result<T> {
        let part = self.take_fixed(ticks::TICKS_KEY_WIDTH, field)?;
        let time = ticks::decode_ticks_key(part).and_then(codec.from);
        self.field(field, part, time)
    }

    /// Reads 19-digit reverse ticks.
    ///
    /// # Errors
    ///
    /// As [`KeyReader::ticks`].
    pub fn reverse_ticks<T>(&mut self, codec: &KeyTimeCodec<T>, field: &'static str) -> Result<T> {
        let part = self.take_fixed(ticks::TICKS_KEY_WIDTH, field)?;
        let time = ticks::decode_reverse_ticks_key(part).and_then(codec.from);
        self.field(field, part, time)
    }

    /// Reads an ISO 8601 UTC instant with `digits` fractional digits.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the part isn't such an instant or `T` can't hold it.
    pub fn iso<T>(
        &mut self,
        codec: &KeyTimeCodec<T>,
        digits: u8,
        field: &'static str,
    ) -> Result<T> {
        let part = self.take_fixed(iso::iso_key_width(digits), field)?;
        let time = iso::decode_iso_key(part, digits).and_then(codec.from);
        self.field(field, part, time)
    }

    /// Reads a `yyyy-MM-dd` date.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the part isn't such a date or `T` can't hold it.
    pub fn date<T>(&mut self, codec: &KeyDateCodec<T>, field: &'static str) -> Result<T> {
        let part = self.take_fixed(date::DATE_KEY_WIDTH, field)?;
        let date = date::parse_date_text(part).and_then(|(y, m, d)| {
            (codec.from)(y, m, d).ok_or_else(|| {
                Error::new(ErrorKind::Decode, "the date is out of the field's range")
            })
        });
        self.field(field, part, date)
    }

    /// Checks that the whole key was read.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when text is left over.
    pub fn finish(self) -> Result<()> {
        if self.pos == self.key.len() {
            Ok(())
        } else {
            Err(self.error(format!("unexpected trailing text {:?}", self.rest())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_parts_read_back() {
        let mut key = String::new();
        write_literal(&mut key, "empid_");
        write_padded(&mut key, &KeyIntCodec::new(), &223u32, 6, "employee_id").unwrap();
        write_literal(&mut key, "_");
        write_signed(&mut key, &KeyIntCodec::new(), &-5i32, "delta").unwrap();
        write_literal(&mut key, "_");
        let t = DateTime::from_ymd_hms(2024, 5, 6, 7, 8, 9).unwrap();
        write_reverse_ticks(&mut key, &KeyTimeCodec::new(), &t, "at").unwrap();
        write_literal(&mut key, "_");
        write_str_part(&mut key, "Jo_nes", "name").unwrap();
        write_literal(&mut key, "_");
        write_ticks(&mut key, &KeyTimeCodec::new(), &t, "at2").unwrap();
        let entity = DynamicEntity::new("p", finish_row_key(key).unwrap());

        let mut r = KeyReader::row_key(&entity, "template");
        r.literal("empid_").unwrap();
        assert_eq!(
            r.padded::<u32>(&KeyIntCodec::new(), 6, "employee_id")
                .unwrap(),
            223
        );
        r.literal("_").unwrap();
        assert_eq!(r.signed::<i32>(&KeyIntCodec::new(), "delta").unwrap(), -5);
        r.literal("_").unwrap();
        assert_eq!(
            r.reverse_ticks::<DateTime>(&KeyTimeCodec::new(), "at")
                .unwrap(),
            t
        );
        r.literal("_").unwrap();
        assert_eq!(r.string(1 + 19, "name").unwrap(), "Jo_nes");
        r.literal("_").unwrap();
        assert_eq!(r.ticks::<DateTime>(&KeyTimeCodec::new(), "at2").unwrap(), t);
        r.finish().unwrap();
    }

    #[test]
    fn bad_parts_are_refused_naming_the_field() {
        let mut key = String::from("x");
        let ints = KeyIntCodec::new();
        let err = write_padded(&mut key, &ints, &1_000_000u32, 6, "employee_id").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidKey);
        assert!(err.message().contains("employee_id"));
        assert_eq!(key, "x", "nothing half-written");
        assert!(write_padded(&mut key, &KeyIntCodec::new(), &-1i32, 6, "n").is_err());
        assert!(write_str_part(&mut key, "a/b", "dept").is_err());
        assert!(write_signed(&mut key, &KeyIntCodec::new(), &u64::MAX, "n").is_err());
    }

    #[test]
    fn reader_errors_name_key_template_and_field() {
        let entity = DynamicEntity::new("Sales", "empid_12x456");
        let mut r = KeyReader::row_key(&entity, "empid_{employee_id:06}");
        r.literal("empid_").unwrap();
        let err = r
            .padded::<u32>(&KeyIntCodec::new(), 6, "employee_id")
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        assert!(err.message().contains("employee_id"), "{}", err.message());
        assert!(err.message().contains("empid_{employee_id:06}"));
        assert_eq!(err.entity_key().unwrap().row_key, "empid_12x456");

        let mut r = KeyReader::row_key(&entity, "t");
        assert!(r.literal("email_").is_err());
        let mut r = KeyReader::row_key(&entity, "t");
        r.literal("empid_").unwrap();
        assert!(r.finish().is_err());
        let short = DynamicEntity::new("", "ab");
        let mut r = KeyReader::row_key(&short, "t");
        assert!(r.string(3, "x").is_err());
    }
}
