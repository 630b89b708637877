//! `tables-mem`: the in-memory engine. (Being written: helper "mem".)

/// The in-memory engine.
#[derive(Debug, Default)]
pub struct MemEngine {}

impl MemEngine {
    /// A new, empty engine.
    pub fn new() -> MemEngine {
        MemEngine::default()
    }
}
