//! The blob conformance suite on the in-memory blob store, alone and behind the
//! fault injector with no fault armed (a wrapper must be invisible).

use tables_mem::{FaultInjector, MemBlobStore};

mod mem {
    use super::*;

    tables_tests::blob_suite!(MemBlobStore::new());
}

mod fault_injector {
    use super::*;

    tables_tests::blob_suite!(FaultInjector::new(MemBlobStore::new()));
}
