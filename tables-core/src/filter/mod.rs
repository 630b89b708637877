//! Filters: an AST with a builder API, OData `$filter` rendering and parsing, an
//! evaluator with the service's semantics, and the query-plan classifier.

mod ast;
mod build;
mod eval;
mod parse;
mod plan;
mod render;

pub use ast::{CmpOp, Filter};
pub use build::{col, Column};
pub use plan::{KeyBound, QueryPlan};

use crate::error::Result;

impl Filter {
    /// Checks the filter against the service's rules. (Being written: helper "core-filter".)
    pub fn validate(&self) -> Result<()> {
        Ok(())
    }
}
