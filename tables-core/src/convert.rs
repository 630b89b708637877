//! Conversions between `Value` and Rust types. (Being written: helper "core-data".)
