//! chrono date-times as properties and key parts (feature `chrono`).

use chrono::{NaiveDateTime, TimeZone, Utc};

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::model::keypart::KeyTime;
use crate::model::property::{missing, Property};
use crate::value::{EdmType, Value};

fn out_of_range() -> Error {
    Error::new(
        ErrorKind::InvalidValue,
        "the date-time is outside the service's range (1601-01-01 to 9999-12-31)",
    )
}

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
    DateTime::from_unix_nanos(nanos).ok_or_else(out_of_range)
}

impl KeyTime for chrono::DateTime<Utc> {
    fn to_key_datetime(&self) -> Result<DateTime> {
        utc_to_core(self)
    }

    fn from_key_datetime(time: DateTime) -> Result<chrono::DateTime<Utc>> {
        from_core(time)
    }
}

impl KeyTime for NaiveDateTime {
    fn to_key_datetime(&self) -> Result<DateTime> {
        utc_to_core(&self.and_utc())
    }

    fn from_key_datetime(time: DateTime) -> Result<NaiveDateTime> {
        from_core(time).map(|t| t.naive_utc())
    }
}

macro_rules! chrono_property {
    ($($t:ty),*) => {$(
        impl Property for $t {
            type Scalar = $t;
            const EDM_TYPE: EdmType = EdmType::DateTime;

            /// Stored at the service's 100 ns precision (finer digits are dropped).
            fn to_value(&self) -> Result<Option<Value>> {
                self.to_key_datetime().map(|t| Some(Value::DateTime(t)))
            }

            fn from_value(value: Option<Value>) -> Result<$t> {
                match value {
                    Some(value) => <$t>::from_key_datetime(DateTime::try_from(value)?),
                    None => Err(missing(stringify!($t))),
                }
            }
        }
    )*};
}

chrono_property!(chrono::DateTime<Utc>, NaiveDateTime);

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
}
