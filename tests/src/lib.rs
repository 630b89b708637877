//! The conformance suite: one list of scenarios, written once against
//! [`&dyn Engine`](tables_core::Engine), run against every engine.
//!
//! Each scenario is a `pub async fn name(engine: &dyn Engine, ctx: &Ctx) -> Result<()>`
//! in a module per area ([`tables`], [`crud`], [`write_modes`], [`etag`],
//! [`ordering`], [`filters`], [`select_top`], [`paging`], [`batch`], [`limits`]). A
//! scenario checks the Azure Table service's behaviour; where a backend knowingly
//! differs, it declares so in [`Capabilities`] and the scenario branches on that
//! flag, never on which backend it runs on. A failure panics with what was expected.
//!
//! Scenarios read through [`read::query_all`], which follows continuation tokens, so
//! every scenario (except those about paging itself, which follow tokens by hand)
//! also passes on an engine that returns pages of one entity.
//!
//! # Running the suite against an engine
//!
//! [`conformance_suite!`] expands to one `#[tokio::test]` per scenario, so
//! `cargo test` names each one. Invoke it once per engine configuration, each in its
//! own module (see `tests/tests/conformance_mem.rs`):
//!
//! ```
//! mod mem_default {
//!     tables_tests::conformance_suite!(
//!         tables_mem::MemEngine::new(),
//!         tables_tests::Capabilities::azure()
//!     );
//! }
//! # fn main() {}
//! ```
//!
//! The first argument is evaluated inside each (async) test, once per scenario, and
//! must produce a value whose type implements `Engine`; it may `.await`. The second
//! is a [`Capabilities`] value. With `optional:` before it, the first argument is an
//! `Option` of an engine, and `None` ends the test early (it has already said why,
//! as [`azurite::engine_or_skip`] does).
//!
//! # The remote engine
//!
//! `tests/tests/conformance_azurite.rs` runs the same list against the remote engine
//! on the run's Azurite, declaring Azurite's known differences from Azure as
//! [`Capabilities`]:
//!
//! ```text
//! mod azurite {
//!     tables_tests::conformance_suite!(
//!         optional: tables_tests::azurite::engine_or_skip("conformance"),
//!         tables_tests::Capabilities::azurite()
//!     );
//! }
//! ```
//!
//! Every scenario uses table names unique to the run ([`Ctx::table_name`]) and
//! deletes its tables afterwards, so the whole suite can share one endpoint and run
//! in parallel.
//!
//! # The wrappers
//!
//! `tests/tests/conformance_mem.rs` also runs the list through the engine wrappers
//! over the mem engine, which must be invisible: a table-name prefix
//! (`PrefixedEngine`, with the capabilities [`Capabilities::prefixed`] declares)
//! and the fault injector with no fault armed.
//!
//! # The typed tests
//!
//! The typed end-to-end tests (`tests/tests/typed_*.rs`, `derive_guide.rs`) run
//! their scenarios on one engine matrix, [`typed_matrix!`]: the mem engine with
//! default paging, with one-entity pages that end at partition boundaries, and
//! Azurite. What they share (the matrix's [`typed::Backend`], entities, the index
//! checker) is in [`typed`].

pub mod azurite;
pub mod batch;
pub mod blob_suite;
pub mod check;
pub mod crud;
pub mod entra;
pub mod etag;
pub mod fake_server;
pub mod fault_proxy;
pub mod filters;
pub mod forward;
mod harness;
pub mod js_sdk;
pub mod limits;
pub mod memory;
pub mod ordering;
pub mod paging;
pub mod py_sdk;
pub mod read;
pub mod select_top;
pub mod server;
pub mod sizes;
pub mod tables;
pub mod typed;
pub mod write_modes;

pub use forward::{Forward, Forwarding};
pub use harness::{Capabilities, Ctx};

mod prelude {
    pub(crate) use crate::check::*;
    pub(crate) use crate::harness::Ctx;
    pub(crate) use crate::read::*;
    pub(crate) use tables_core::{
        col, CmpOp, Column, ContinuationToken, DateTime, DynamicEntity, ETag, Engine, EntityKey,
        ErrorKind, Filter, IfMatch, ListTablesOptions, Origin, QuerySpec, Result, Value, WriteOp,
        MAX_BATCH_OPERATIONS,
    };
    pub(crate) use uuid::Uuid;
}

/// Support for the macros; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use futures::FutureExt;
    pub use std::panic::AssertUnwindSafe;
    pub use tables_core::{Engine, Result};

    /// Turns a scenario's outcome into a test result: an engine error or a panic
    /// fails the test, naming the scenario.
    pub fn report(scenario: &str, outcome: std::thread::Result<Result<()>>) {
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(err)) => panic!("scenario {scenario} failed with an engine error: {err:?}"),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// Expands to one `#[tokio::test]` per scenario of the suite, each running the
/// scenario against the engine `$engine` with the capabilities `$capabilities`.
///
/// See the [crate documentation](crate) for an example.
#[macro_export]
macro_rules! conformance_suite {
    (optional: $engine:expr, $capabilities:expr $(,)?) => {
        $crate::__for_each_scenario!(__conformance_tests {
            optional $engine,
            $capabilities
        });
    };
    ($engine:expr, $capabilities:expr $(,)?) => {
        $crate::__for_each_scenario!(__conformance_tests {
            required $engine,
            $capabilities
        });
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ($presence:ident $engine:expr, $capabilities:expr; $($module:ident :: $name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                let scenario = concat!(stringify!($module), "::", stringify!($name));
                let engine = $crate::__engine!($presence $engine, scenario);
                let engine: &dyn $crate::__private::Engine = &engine;
                let ctx = $crate::Ctx::new(scenario, $capabilities);
                let outcome = $crate::__private::FutureExt::catch_unwind(
                    $crate::__private::AssertUnwindSafe($crate::$module::$name(engine, &ctx)),
                )
                .await;
                ctx.cleanup(engine).await;
                $crate::__private::report(scenario, outcome);
            }
        )*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __engine {
    (required $engine:expr, $scenario:expr) => {
        $engine
    };
    (optional $engine:expr, $scenario:expr) => {
        match $engine {
            ::std::option::Option::Some(engine) => engine,
            ::std::option::Option::None => return,
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __scenario_names {
    (; $($module:ident :: $name:ident),* $(,)?) => {
        /// The name (`module::function`) of every scenario, in suite order.
        pub const SCENARIOS: &[&str] = &[$(concat!(stringify!($module), "::", stringify!($name))),*];
    };
}

/// The one list of scenarios. Calls `$callback! { $($args)*; module::name, .. }`.
#[doc(hidden)]
#[macro_export]
macro_rules! __for_each_scenario {
    ($callback:ident { $($args:tt)* }) => {
        $crate::$callback! { $($args)*;
            tables::create_table_is_listed_with_its_case,
            tables::create_table_twice_in_any_case_conflicts,
            tables::table_names_are_case_insensitive_for_entities,
            tables::invalid_table_names_are_rejected,
            tables::table_name_of_63_characters_is_accepted,
            tables::list_tables_filters_by_prefix_in_order,
            tables::list_tables_pages_through_every_table,
            tables::list_tables_page_size_out_of_range_is_invalid,
            tables::operations_on_missing_table_fail,
            tables::deleted_table_is_gone,
            tables::table_names_list_in_ordinal_order,
            tables::table_deleted_in_another_case_is_gone,
            crud::insert_then_read_round_trips_every_type,
            crud::insert_existing_entity_conflicts,
            crud::get_missing_entity_returns_none,
            crud::keys_are_case_sensitive_and_exact,
            crud::empty_keys_are_allowed,
            crud::unusual_but_valid_keys_round_trip,
            crud::invalid_key_characters_are_rejected,
            crud::overlong_keys_are_rejected,
            crud::extreme_values_round_trip,
            crud::delete_removes_entity,
            crud::deleted_key_can_be_inserted_again,
            crud::errors_say_whether_they_were_checked_locally,
            crud::entity_errors_name_the_entity,
            write_modes::replace_drops_unmentioned_properties,
            write_modes::merge_keeps_unmentioned_properties,
            write_modes::upsert_replace_inserts_or_replaces,
            write_modes::upsert_merge_inserts_or_merges,
            write_modes::conditional_writes_on_absent_entity_fail,
            write_modes::conditional_writes_with_current_etag_succeed,
            write_modes::conditional_writes_with_stale_etag_fail,
            write_modes::if_match_any_ignores_the_version,
            write_modes::upserts_ignore_concurrent_changes,
            write_modes::etag_of_previous_incarnation_is_stale,
            write_modes::etag_of_another_entity_does_not_match,
            etag::every_write_changes_etag_and_timestamp,
            etag::identical_rewrite_changes_etag,
            etag::query_and_get_agree_on_etag_and_timestamp,
            etag::failed_write_keeps_etag,
            etag::client_timestamp_and_etag_are_ignored,
            ordering::rows_come_in_partition_then_row_order,
            ordering::key_order_is_ordinal,
            ordering::key_order_is_utf16,
            ordering::key_range_filters_use_utf16_order,
            ordering::filtered_queries_keep_key_order,
            filters::filter_string,
            filters::filter_int32,
            filters::filter_int64,
            filters::filter_double,
            filters::filter_boolean,
            filters::filter_datetime,
            filters::filter_guid,
            filters::filter_binary,
            filters::filter_types_are_strict,
            filters::filter_missing_property_never_matches,
            filters::filter_and_or_not,
            filters::filter_on_keys,
            filters::filter_on_timestamp,
            filters::filter_string_constants_are_escaped,
            filters::filter_parsed_from_odata_text,
            filters::filter_with_too_many_comparisons_is_invalid,
            filters::filter_unchecked_text_matches_as_written,
            select_top::select_returns_named_properties_and_system_ones,
            select_top::select_of_missing_property_keeps_the_row,
            select_top::select_on_get_entity,
            select_top::select_with_filter_on_unselected_property,
            select_top::top_bounds_each_page_not_the_total,
            select_top::top_out_of_range_is_invalid,
            select_top::select_empty_or_duplicate_is_invalid,
            select_top::select_on_get_entity_empty_or_duplicate_is_invalid,
            paging::paging_top_1_visits_every_row_once,
            paging::paging_2500_rows_at_page_size_1000,
            paging::paging_default_page_is_at_most_1000,
            paging::paging_sparse_filter_across_pages,
            paging::paging_partition_key_ranges,
            paging::paging_empty_table,
            paging::paging_resume_after_writes_does_not_repeat,
            paging::paging_resume_after_deletes,
            paging::paging_token_resumes_from_its_string_form,
            paging::paging_keeps_select_on_every_page,
            paging::paging_resume_after_the_next_row_is_deleted,
            batch::batch_with_every_mode_commits,
            batch::batch_of_more_than_100_is_rejected,
            batch::empty_batch_is_rejected,
            batch::batch_across_partitions_is_rejected,
            batch::batch_with_duplicate_row_is_rejected,
            batch::batch_failing_insert_rolls_back,
            batch::batch_failing_replace_rolls_back,
            batch::batch_failing_delete_rolls_back,
            batch::batch_failing_etag_rolls_back,
            batch::batch_with_invalid_operation_is_rejected,
            batch::batch_over_4_mib_is_rejected,
            batch::batch_on_missing_table_fails,
            batch::single_operation_batch_behaves_like_write,
            batch::batch_merge_beyond_252_properties_fails_at_its_index,
            batch::every_row_of_a_batch_gets_its_own_etag,
            limits::more_than_252_properties_are_rejected,
            limits::merge_beyond_252_properties_is_rejected,
            limits::oversized_string_is_rejected,
            limits::oversized_binary_is_rejected,
            limits::oversized_entity_is_rejected,
            limits::invalid_property_names_are_rejected,
            limits::limits_apply_to_updates,
        }
    };
}

__for_each_scenario!(__scenario_names {});
