//! time date-times and dates as properties and key parts (feature `time`).
//!
//! `PrimitiveDateTime` has no impl on purpose: it names no instant, and the service
//! stores instants; `#[derive(Entity)]` says which type to use instead.

use time::{Date, Month, OffsetDateTime};

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::model::date::{date_from_value, date_to_value};
use crate::model::keypart::{KeyDate, KeyTime};
use crate::model::property::{missing, Property};
use crate::value::{EdmType, Value};

impl KeyTime for OffsetDateTime {
    fn to_key_datetime(&self) -> Result<DateTime> {
        DateTime::from_unix_nanos_exact(self.unix_timestamp_nanos())
    }

    fn from_key_datetime(time: DateTime) -> Result<OffsetDateTime> {
        OffsetDateTime::from_unix_timestamp_nanos(time.to_unix_nanos()).map_err(|e| {
            Error::new(
                ErrorKind::InvalidValue,
                format!("the date-time doesn't fit time: {e}"),
            )
        })
    }
}

impl Property for OffsetDateTime {
    type Scalar = OffsetDateTime;
    const EDM_TYPE: EdmType = EdmType::DateTime;

    /// Stored in UTC at the service's 100 ns precision; a value finer than that is
    /// refused (it would read back different): truncate it first
    /// ([`TruncateToTicks`](crate::model::TruncateToTicks)).
    fn to_value(&self) -> Result<Option<Value>> {
        self.to_key_datetime().map(|t| Some(Value::DateTime(t)))
    }

    fn from_value(value: Option<Value>) -> Result<OffsetDateTime> {
        match value {
            Some(value) => OffsetDateTime::from_key_datetime(DateTime::try_from(value)?),
            None => Err(missing("OffsetDateTime")),
        }
    }
}

impl crate::model::TruncateToTicks for OffsetDateTime {
    fn truncated_to_ticks(self) -> OffsetDateTime {
        let nanos = self.nanosecond();
        self.replace_nanosecond(nanos - nanos % 100).unwrap_or(self)
    }
}

impl KeyDate for Date {
    fn to_key_ymd(&self) -> (i32, u32, u32) {
        (
            self.year(),
            u32::from(u8::from(self.month())),
            u32::from(self.day()),
        )
    }

    fn from_key_ymd(year: i32, month: u32, day: u32) -> Option<Date> {
        let month = u8::try_from(month)
            .ok()
            .and_then(|m| Month::try_from(m).ok())?;
        let day = u8::try_from(day).ok()?;
        Date::from_calendar_date(year, month, day).ok()
    }
}

/// A calendar date as `yyyy-MM-dd` text (years 0001 to 9999).
impl Property for Date {
    type Scalar = Date;
    const EDM_TYPE: EdmType = EdmType::String;

    fn to_value(&self) -> Result<Option<Value>> {
        date_to_value(self)
    }

    fn from_value(value: Option<Value>) -> Result<Date> {
        date_from_value(value, "time::Date")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_round_trips_at_100ns() {
        let t = OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_123_456_700).unwrap();
        assert_eq!(
            OffsetDateTime::from_value(t.to_value().unwrap()).unwrap(),
            t
        );
    }

    #[test]
    fn dates_are_text() {
        let d = Date::from_calendar_date(1999, Month::December, 31).unwrap();
        assert_eq!(d.to_value().unwrap(), Some(Value::from("1999-12-31")));
        assert_eq!(Date::from_value(d.to_value().unwrap()).unwrap(), d);
        let before = Date::from_calendar_date(0, Month::January, 1).unwrap();
        assert_eq!(
            before.to_value().unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
        assert!(Date::from_key_ymd(2023, 2, 29).is_none());
    }
}
