//! (Being written: helper "core-filter".)
