//! Shared set-up of the example programs.
