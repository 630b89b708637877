//! chrono date-times and dates as properties and key parts (feature `chrono`).
//!
//! `NaiveDateTime` has no impl on purpose: it names no instant, and the service
//! stores instants; `#[derive(Entity)]` says which type to use instead.

use chrono::{Datelike, NaiveDate, TimeZone, Timelike, Utc};

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::model::date::{date_from_value, date_to_value};
use crate::model::keypart::{KeyDate, KeyTime};
use crate::model::property::{missing, Property};
use crate::value::{EdmType, Value};

fn from_core(time: DateTime) -> Result<chrono::DateTime<Utc>> {
    let nanos = time.to_unix_nanos();
    let seconds = i64::try_from(nanos.div_euclid(1_000_000_000)).ok();
    let subsec = u32::try_from(nanos.rem_euclid(1_000_000_000)).ok();
    seconds
        .zip(subsec)
        .and_then(|(s, n)| Utc.timestamp_opt(s, n).single())
        .ok_or_else(|| Error::new(ErrorKind::InvalidValue, "the date-time doesn't fit chrono"))
}

fn utc_to_core(value: &chrono::DateTime<Utc>) -> Result<DateTime> {
    // Nanoseconds overflow i64 outside 1677..2262; go through seconds instead.
    let seconds = i128::from(value.timestamp());
    let nanos = seconds * 1_000_000_000 + i128::from(value.timestamp_subsec_nanos());
    DateTime::from_unix_nanos_exact(nanos)
}

impl crate::model::TruncateToTicks for chrono::DateTime<Utc> {
    fn truncated_to_ticks(self) -> chrono::DateTime<Utc> {
        let nanos = self.timestamp_subsec_nanos();
        self.with_nanosecond(nanos - nanos % 100).unwrap_or(self)
    }
}

impl KeyTime for chrono::DateTime<Utc> {
    fn to_key_datetime(&self) -> Result<DateTime> {
        utc_to_core(self)
    }

    fn from_key_datetime(time: DateTime) -> Result<chrono::DateTime<Utc>> {
        from_core(time)
    }
}

impl Property for chrono::DateTime<Utc> {
    type Scalar = chrono::DateTime<Utc>;
    const EDM_TYPE: EdmType = EdmType::DateTime;

    /// Stored at the service's 100 ns precision; a value finer than that is refused
    /// (it would read back different): truncate it first
    /// ([`TruncateToTicks`](crate::model::TruncateToTicks)).
    fn to_value(&self) -> Result<Option<Value>> {
        self.to_key_datetime().map(|t| Some(Value::DateTime(t)))
    }

    fn from_value(value: Option<Value>) -> Result<chrono::DateTime<Utc>> {
        match value {
            Some(value) => <chrono::DateTime<Utc>>::from_key_datetime(DateTime::try_from(value)?),
            None => Err(missing("chrono::DateTime<Utc>")),
        }
    }
}

impl KeyDate for NaiveDate {
    fn to_key_ymd(&self) -> (i32, u32, u32) {
        (self.year(), self.month(), self.day())
    }

    fn from_key_ymd(year: i32, month: u32, day: u32) -> Option<NaiveDate> {
        NaiveDate::from_ymd_opt(year, month, day)
    }
}

/// A calendar date as `yyyy-MM-dd` text (years 0001 to 9999).
impl Property for NaiveDate {
    type Scalar = NaiveDate;
    const EDM_TYPE: EdmType = EdmType::String;

    fn to_value(&self) -> Result<Option<Value>> {
        date_to_value(self)
    }

    fn from_value(value: Option<Value>) -> Result<NaiveDate> {
        date_from_value(value, "NaiveDate")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chrono_round_trips_at_100ns() {
        let t = Utc
            .timestamp_opt(1_700_000_000, 123_456_700)
            .single()
            .unwrap();
        let v = t.to_value().unwrap();
        assert_eq!(<chrono::DateTime<Utc>>::from_value(v).unwrap(), t);
        let old = Utc.with_ymd_and_hms(1700, 1, 1, 0, 0, 0).single().unwrap();
        assert_eq!(
            <chrono::DateTime<Utc>>::from_key_datetime(old.to_key_datetime().unwrap()).unwrap(),
            old
        );
        let too_old = Utc.with_ymd_and_hms(1500, 1, 1, 0, 0, 0).single().unwrap();
        assert!(too_old.to_value().is_err());
    }

    #[test]
    fn finer_than_100ns_is_refused_and_truncates_on_request() {
        use crate::model::TruncateToTicks;
        let fine = Utc
            .timestamp_opt(1_700_000_000, 123_456_789)
            .single()
            .unwrap();
        let err = fine.to_value().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidValue);
        assert!(err.message().contains("89 ns below"), "{err}");
        assert!(fine.to_key_datetime().is_err());
        let stored = fine.truncated_to_ticks();
        assert_eq!(stored.timestamp_subsec_nanos(), 123_456_700);
        let v = stored.to_value().unwrap();
        assert_eq!(<chrono::DateTime<Utc>>::from_value(v).unwrap(), stored);
    }

    #[test]
    fn dates_are_text() {
        let d = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
        assert_eq!(d.to_value().unwrap(), Some(Value::from("2024-02-29")));
        assert_eq!(NaiveDate::from_value(d.to_value().unwrap()).unwrap(), d);
        let midnight = DateTime::from_ymd_hms(2024, 2, 29, 0, 0, 0).unwrap();
        assert_eq!(
            NaiveDate::from_value(Some(Value::DateTime(midnight))).unwrap(),
            d
        );
        let noon = DateTime::from_ymd_hms(2024, 2, 29, 12, 0, 0).unwrap();
        assert!(NaiveDate::from_value(Some(Value::DateTime(noon))).is_err());
        assert!(NaiveDate::from_ymd_opt(0, 1, 1)
            .unwrap()
            .to_value()
            .is_err());
        assert!(NaiveDate::from_ymd_opt(10_000, 1, 1)
            .unwrap()
            .to_value()
            .is_err());
        assert_eq!(
            NaiveDate::from_value(Some(Value::from("0001-01-01"))).unwrap(),
            NaiveDate::MIN
                .with_year(1)
                .unwrap()
                .with_ordinal(1)
                .unwrap()
        );
    }
}
