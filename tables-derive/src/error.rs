//! Error collection: every check pushes a spanned error and carries on, so one
//! compile reports every mistake of a derive input at once.

use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// Collects spanned errors; [`Errors::finish`] combines them into one `syn::Error`
/// (which renders as one `compile_error!` per message, each at its own span).
#[derive(Default)]
pub(crate) struct Errors {
    combined: Option<syn::Error>,
}

impl Errors {
    /// An empty collector.
    pub(crate) fn new() -> Self {
        Errors::default()
    }

    /// Records `message` at `span`.
    pub(crate) fn push(&mut self, span: Span, message: impl Display) {
        self.combine(syn::Error::new(span, message));
    }

    /// Records `message` spanning all of `tokens` (a path, a type).
    pub(crate) fn push_spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.combine(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error that is already built (e.g. a syn parse error).
    pub(crate) fn combine(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(existing) => existing.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// How many errors were recorded.
    pub(crate) fn count(&self) -> usize {
        self.combined
            .as_ref()
            .map_or(0, |error| error.clone().into_iter().count())
    }

    /// `Ok(())` when nothing was recorded, else every error combined.
    pub(crate) fn finish(self) -> syn::Result<()> {
        match self.combined {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Every error recorded, for a caller that can't go on; `fallback` names the
    /// problem if (against expectation) nothing was recorded.
    pub(crate) fn into_error(self, span: Span, fallback: &str) -> syn::Error {
        self.combined
            .unwrap_or_else(|| syn::Error::new(span, fallback))
    }

    /// `Ok(value)` when nothing was recorded, else every error combined.
    pub(crate) fn finish_with<T>(self, value: T) -> syn::Result<T> {
        self.finish().map(|()| value)
    }
}

/// The candidate closest to `name` within edit distance 2, for "did you mean"
/// hints.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// `" (did you mean `x`?)"` when a close candidate exists, else `""`.
pub(crate) fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    match closest(name, candidates) {
        Some(candidate) => format!(" (did you mean `{candidate}`?)"),
        None => String::new(),
    }
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_insertions_deletions_substitutions() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("kind", "kind"), 0);
        assert_eq!(edit_distance("kin", "kind"), 1);
        assert_eq!(edit_distance("knid", "kind"), 2);
        assert_eq!(edit_distance("employe_id", "employee_id"), 1);
        assert_eq!(edit_distance("abc", ""), 3);
    }

    #[test]
    fn closest_picks_the_nearest_within_two_edits() {
        let fields = ["employee_id", "email", "department"];
        assert_eq!(closest("emial", fields), Some("email"));
        assert_eq!(closest("employe_id", fields), Some("employee_id"));
        assert_eq!(closest("salary", fields), None);
        assert_eq!(did_you_mean("salary", fields), "");
        assert_eq!(did_you_mean("emal", fields), " (did you mean `email`?)");
    }

    #[test]
    fn errors_combine_and_finish() {
        let mut errors = Errors::new();
        assert_eq!(errors.count(), 0);
        errors.push(Span::call_site(), "first");
        errors.push(Span::call_site(), "second");
        assert_eq!(errors.count(), 2);
        let combined = errors
            .finish()
            .err()
            .map(|e| e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>());
        assert_eq!(
            combined,
            Some(vec!["first".to_owned(), "second".to_owned()])
        );
        assert_eq!(Errors::new().finish_with(3).ok(), Some(3));
    }
}
