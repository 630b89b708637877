//! time date-times as properties and key parts (feature `time`).

use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::model::keypart::KeyTime;
use crate::model::property::{missing, Property};
use crate::value::{EdmType, Value};

impl KeyTime for OffsetDateTime {
    fn to_key_datetime(&self) -> Result<DateTime> {
        DateTime::from_unix_nanos(self.unix_timestamp_nanos()).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidValue,
                "the date-time is outside the service's range (1601-01-01 to 9999-12-31)",
            )
        })
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

impl KeyTime for PrimitiveDateTime {
    fn to_key_datetime(&self) -> Result<DateTime> {
        self.assume_utc().to_key_datetime()
    }

    fn from_key_datetime(time: DateTime) -> Result<PrimitiveDateTime> {
        OffsetDateTime::from_key_datetime(time).map(|t| {
            let t = t.to_offset(UtcOffset::UTC);
            PrimitiveDateTime::new(t.date(), t.time())
        })
    }
}

macro_rules! time_property {
    ($($t:ty),*) => {$(
        impl Property for $t {
            type Scalar = $t;
            const EDM_TYPE: EdmType = EdmType::DateTime;

            /// Stored in UTC at the service's 100 ns precision (finer digits are dropped).
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

time_property!(OffsetDateTime, PrimitiveDateTime);

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
        let p = PrimitiveDateTime::new(t.date(), t.time());
        assert_eq!(
            PrimitiveDateTime::from_value(p.to_value().unwrap()).unwrap(),
            p
        );
    }
}
