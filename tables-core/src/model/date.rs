//! Calendar dates (`chrono::NaiveDate`, `time::Date` behind their features) as
//! properties: `yyyy-MM-dd` text, the form [`crate::key::form::date`] owns (it is
//! the key form too).

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::key::form::date::{date_of_day, parse_date_text, write_date_text, DATE_KEY_WIDTH};
use crate::model::keypart::KeyDate;
use crate::model::property::missing;
use crate::value::Value;

const TICKS_PER_DAY: i64 = 86_400 * DateTime::TICKS_PER_SECOND;

/// The property value of a date: `yyyy-MM-dd` text.
#[cfg(any(feature = "chrono", feature = "time"))]
pub(crate) fn date_to_value<T: KeyDate>(date: &T) -> Result<Option<Value>> {
    let (year, month, day) = date.to_key_ymd();
    let mut text = String::with_capacity(DATE_KEY_WIDTH);
    write_date_text(&mut text, year, month, day)?;
    Ok(Some(Value::String(text)))
}

/// A date from its property: `yyyy-MM-dd` text, or (rows other programs wrote) an
/// `Edm.DateTime` at exactly midnight UTC.
#[cfg(any(feature = "chrono", feature = "time"))]
pub(crate) fn date_from_value<T: KeyDate>(value: Option<Value>, type_name: &str) -> Result<T> {
    let (year, month, day) = match value {
        None => return Err(missing(type_name)),
        Some(Value::String(text)) => parse_date_text(&text)?,
        Some(Value::DateTime(time)) if time.ticks() % TICKS_PER_DAY == 0 => {
            date_of_day(time.ticks() / TICKS_PER_DAY)
        }
        Some(Value::DateTime(time)) => {
            return Err(Error::new(
                ErrorKind::InvalidValue,
                format!(
                    "the DateTime {time} has a time of day, so it is no date; read it into a date-time field"
                ),
            ))
        }
        Some(other) => {
            return Err(Error::new(
                ErrorKind::InvalidValue,
                format!(
                    "expected a date (yyyy-MM-dd text), found Edm.{:?}",
                    other.edm_type()
                ),
            ))
        }
    };
    T::from_key_ymd(year, month, day).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidValue,
            format!("the date {year:04}-{month:02}-{day:02} doesn't fit {type_name}"),
        )
    })
}
