//! Ordinal (UTF-16 code unit) key order and prefix ranges. (Being written: helper "core-filter".)
