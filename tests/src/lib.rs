//! The conformance suite. (Being written: helper "conformance".)
