//! [`typed_matrix!`](crate::typed_matrix): every typed scenario on every
//! configuration of [`Backend`].

use std::fmt::Debug;

use super::Backend;

/// What a typed scenario returns: `()` (it asserts as it goes) or a `Result` whose
/// error fails the test.
pub trait Outcome {
    /// Fails the test (panics) if the outcome is an error.
    fn check(self);
}

impl Outcome for () {
    fn check(self) {}
}

impl<E: Debug> Outcome for Result<(), E> {
    #[track_caller]
    fn check(self) {
        if let Err(err) = self {
            panic!("the scenario failed: {err:?}");
        }
    }
}

/// The configurations, by the name of the module each gets; `None` skips the test
/// (it has said why).
#[doc(hidden)]
pub mod __backend {
    use super::Backend;

    /// [`Backend::Mem`].
    pub fn mem(_test: &str) -> Option<Backend> {
        Some(Backend::Mem)
    }

    /// [`Backend::OneRowPages`].
    pub fn one_row_pages(_test: &str) -> Option<Backend> {
        Some(Backend::OneRowPages)
    }

    /// [`Backend::MemCosmos`], its order seeded by the test's name: each test sees
    /// another order, the same on every run.
    pub fn mem_cosmos(test: &str) -> Option<Backend> {
        let seed = test.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Some(Backend::MemCosmos(seed))
    }

    /// [`Backend::azurite`].
    pub fn azurite(test: &str) -> Option<Backend> {
        Backend::azurite(test)
    }

    /// [`Backend::server`].
    pub fn server(_test: &str) -> Option<Backend> {
        Some(Backend::server())
    }

    /// [`Backend::ServerCosmos`].
    pub fn server_cosmos(_test: &str) -> Option<Backend> {
        Some(Backend::ServerCosmos)
    }
}

/// Expands to one test per scenario and engine configuration, in six modules:
///
/// - `mem`: the mem engine with its default paging ([`Backend::Mem`]);
/// - `one_row_pages`: the mem engine returning one entity per page and ending pages
///   at partition boundaries ([`Backend::OneRowPages`]);
/// - `azurite`: the remote engine on the run's Azurite ([`Backend::Azurite`]), each
///   test in its own table namespace; without Azurite the test prints a loud
///   `SKIPPED` line and passes, except under `CI=true`, where it fails;
/// - `server`: the remote engine on the run's `tables-server`
///   ([`Backend::Server`]), each test in its own table namespace; never skipped;
/// - `mem_cosmos`: the mem engine's Cosmos DB for Table profile
///   ([`Backend::MemCosmos`]: results in any order, Cosmos's limits);
/// - `server_cosmos`: the remote engine on the run's `tables-server --profile
///   cosmos` ([`Backend::ServerCosmos`]); never skipped.
///
/// Every scenario passes on the Cosmos profile too, or checks that the client
/// refuses there with its documented error: never a wrong answer.
///
/// So `cargo test` names each run `file::mem::scenario`,
/// `file::one_row_pages::scenario`, `file::azurite::scenario`,
/// `file::server::scenario`, `file::mem_cosmos::scenario`,
/// `file::server_cosmos::scenario`.
///
/// Each scenario is a function of the invoking module,
/// `async fn name(backend: Backend) -> R`, where `R` is `()` or a `Result` whose
/// error fails the test ([`Outcome`]); it asks `backend` for the engines it needs.
/// A scenario runs under `#[tokio::test]` unless an attribute before its name says
/// otherwise; `runtime: #[..];` first sets another default for the list.
///
/// ```
/// use tables_client::Result;
/// use tables_tests::typed::Backend;
///
/// async fn tables_start_empty(backend: Backend) -> Result<()> {
///     assert!(backend.service().list_tables().await?.is_empty());
///     Ok(())
/// }
///
/// async fn two_services_share_nothing(backend: Backend) {
///     let (a, b) = (backend.service(), backend.service());
///     a.create_table("Orders").await.unwrap();
///     assert!(b.list_tables().await.unwrap().is_empty());
/// }
///
/// tables_tests::typed_matrix!(
///     tables_start_empty,
///     #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
///     two_services_share_nothing,
/// );
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! typed_matrix {
    (runtime: #[$runtime:meta]; $($(#[$attr:meta])? $name:ident),* $(,)?) => {
        $crate::__typed_matrix!([#[$runtime]] { $([$(#[$attr])?] $name)* });
    };
    ($($(#[$attr:meta])? $name:ident),* $(,)?) => {
        $crate::__typed_matrix!([] { $([$(#[$attr])?] $name)* });
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __typed_matrix {
    ($default:tt $scenarios:tt) => {
        $crate::__typed_engine!(mem $default $scenarios);
        $crate::__typed_engine!(one_row_pages $default $scenarios);
        $crate::__typed_engine!(azurite $default $scenarios);
        $crate::__typed_engine!(server $default $scenarios);
        $crate::__typed_engine!(mem_cosmos $default $scenarios);
        $crate::__typed_engine!(server_cosmos $default $scenarios);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __typed_engine {
    ($engine:ident $default:tt { $($attr:tt $name:ident)* }) => {
        mod $engine {
            $($crate::__typed_test!($engine $default $attr $name);)*
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __typed_test {
    (@emit $engine:ident [$runtime:meta] $name:ident) => {
        #[$runtime]
        async fn $name() {
            let test = concat!(module_path!(), "::", stringify!($name));
            let Some(backend) = $crate::typed::__backend::$engine(test) else {
                return;
            };
            $crate::typed::Outcome::check(super::$name(backend).await);
        }
    };
    ($engine:ident $default:tt [#[$runtime:meta]] $name:ident) => {
        $crate::__typed_test!(@emit $engine [$runtime] $name);
    };
    ($engine:ident [#[$runtime:meta]] [] $name:ident) => {
        $crate::__typed_test!(@emit $engine [$runtime] $name);
    };
    ($engine:ident [] [] $name:ident) => {
        $crate::__typed_test!(@emit $engine [::tokio::test] $name);
    };
}
