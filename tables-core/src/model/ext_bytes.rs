//! `bytes::Bytes` as a property (feature `bytes`).

use crate::error::Result;
use crate::model::property::{missing, Property};
use crate::value::{EdmType, Value};

/// Stored as `Edm.Binary`, like `Vec<u8>` (at most 64 KiB, as every property).
impl Property for bytes::Bytes {
    type Scalar = bytes::Bytes;
    const EDM_TYPE: EdmType = EdmType::Binary;

    fn to_value(&self) -> Result<Option<Value>> {
        Ok(Some(Value::Binary(self.to_vec())))
    }

    fn from_value(value: Option<Value>) -> Result<bytes::Bytes> {
        match value {
            Some(value) => Vec::<u8>::try_from(value).map(bytes::Bytes::from),
            None => Err(missing("Bytes")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_binary() {
        let b = bytes::Bytes::from_static(&[0, 1, 255]);
        let v = b.to_value().unwrap();
        assert_eq!(v, Some(Value::Binary(vec![0, 1, 255])));
        assert_eq!(bytes::Bytes::from_value(v).unwrap(), b);
        assert!(bytes::Bytes::from_value(Some(Value::from("x"))).is_err());
    }
}
