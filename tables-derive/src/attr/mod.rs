//! Attribute parsing: `syn::DeriveInput` -> the model. Every mistake is collected
//! (spanned on the user's token) and parsing carries on, so one compile reports
//! all of them.
//!
//! Checks that need the attribute tokens themselves (unknown or repeated keys,
//! value types, conflicting keys on one field, what `include(..)` names) live
//! here; rules over the meaning of the model live in `validate.rs`.

mod case;
mod entity;
mod field;
mod index;
mod keys;
mod property;
pub(crate) mod shape;
pub(crate) mod template;
mod union;

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;

use crate::error::{closest, did_you_mean, Errors};

pub(crate) use case::{screaming_snake, RenameRule};
#[cfg(test)]
pub(crate) use entity::entity;
pub(crate) use entity::entity_recovering;
pub(crate) use property::property;
pub(crate) use union::union;

/// Reads one field with no `rename_all`, ignoring errors (tests of other modules).
#[cfg(test)]
pub(crate) fn test_field(field: &syn::Field, ident: &syn::Ident) -> crate::model::Field {
    field::parse(field, ident, None, &mut Errors::new()).0
}

/// The attribute every derive of this crate reads.
pub(crate) const ATTRIBUTE: &str = "entity";

/// The runtime root when no `crate = ".."` is given.
pub(crate) fn default_krate() -> syn::Path {
    syn::parse_quote!(::tables_client)
}

/// The runtime root named by `#[entity(crate = "..")]`, else `::tables_client`.
/// Lenient: it ignores every other key and any malformed attribute (the real
/// parse reports those), so the stub emitted on error can still name the runtime.
pub(crate) fn krate(input: &syn::DeriveInput) -> syn::Path {
    let mut found = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident(ATTRIBUTE)) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                if let Ok(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(lit),
                    ..
                })) = value_expr(&meta)
                {
                    if let Ok(path) = lit.parse::<syn::Path>() {
                        found = Some(path);
                    }
                }
                Ok(())
            } else {
                skip_value(&meta)
            }
        });
    }
    found.unwrap_or_else(default_krate)
}

/// Runs `each` over every key of every `#[entity(..)]` among `attrs`, recording
/// syntax errors and carrying on with the next attribute.
pub(crate) fn for_each_key(
    attrs: &[syn::Attribute],
    errors: &mut Errors,
    mut each: impl FnMut(&ParseNestedMeta<'_>, &str, &mut Errors) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident(ATTRIBUTE)) {
        if let syn::Meta::Path(path) = &attr.meta {
            errors.push_spanned(
                path,
                "empty `#[entity]` attribute; write its keys in parentheses: #[entity(..)]",
            );
            continue;
        }
        let mut local = Errors::new();
        let result = attr.parse_nested_meta(|meta| {
            let key = key_name(&meta.path);
            each(&meta, &key, &mut local)
        });
        if let Err(error) = result {
            local.combine(error);
        }
        if let Err(error) = local.finish() {
            errors.combine(error);
        }
    }
}

/// A key's name as written (`kind`, `crate`, or `a::b` for a path).
pub(crate) fn key_name(path: &syn::Path) -> String {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    segments.join("::")
}

/// Records an unknown key (with a "did you mean" hint and the accepted keys) and
/// skips its value so parsing can continue. Returns the key it is likely a
/// misspelling of, so that the caller doesn't also report that key as missing.
pub(crate) fn unknown_key<'k>(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    what: &str,
    expected: &[&'k str],
    errors: &mut Errors,
) -> syn::Result<Option<&'k str>> {
    errors.push_spanned(
        &meta.path,
        format!(
            "unknown {what} `{key}`{}; expected one of: {}",
            did_you_mean(key, expected.iter().copied()),
            expected.join(", ")
        ),
    );
    skip_value(meta)?;
    Ok(closest(key, expected.iter().copied()))
}

/// Consumes whatever follows a key (`= expr` or `(..)`), so that an unknown or
/// misused key doesn't stop the parse.
pub(crate) fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: proc_macro2::TokenStream = content.parse()?;
    }
    Ok(())
}

/// The expression after `key = `.
fn value_expr(meta: &ParseNestedMeta<'_>) -> syn::Result<syn::Expr> {
    meta.value()?.parse()
}

/// Whether a value (`= ..` or `(..)`) follows the key.
fn has_value(meta: &ParseNestedMeta<'_>) -> bool {
    meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren)
}

/// A key that takes no value (`skip`, `json`, `other`). Returns its span, or `None`
/// after recording an error for `skip = ..`.
pub(crate) fn flag(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    errors: &mut Errors,
) -> syn::Result<Option<Span>> {
    if has_value(meta) {
        errors.push_spanned(
            &meta.path,
            format!("`{key}` takes no value; write just `{key}`"),
        );
        skip_value(meta)?;
        return Ok(None);
    }
    Ok(Some(meta.path.span()))
}

/// `key = "text"`. Records an error (with `example` as the fix) for any other value.
pub(crate) fn string_value(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    example: &str,
    errors: &mut Errors,
) -> syn::Result<Option<syn::LitStr>> {
    if !meta.input.peek(syn::Token![=]) {
        errors.push_spanned(&meta.path, format!("`{key}` needs a value: {example}"));
        skip_value(meta)?;
        return Ok(None);
    }
    match value_expr(meta)? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) => Ok(Some(lit)),
        other => {
            errors.push_spanned(other, format!("`{key}` takes a string literal: {example}"));
            Ok(None)
        }
    }
}

/// `key = path` or `key = "path"` (serde's spelling).
pub(crate) fn path_value(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    example: &str,
    errors: &mut Errors,
) -> syn::Result<Option<syn::Path>> {
    if !meta.input.peek(syn::Token![=]) {
        errors.push_spanned(&meta.path, format!("`{key}` needs a value: {example}"));
        skip_value(meta)?;
        return Ok(None);
    }
    match value_expr(meta)? {
        syn::Expr::Path(syn::ExprPath {
            path, qself: None, ..
        }) => Ok(Some(path)),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) => match lit.parse::<syn::Path>() {
            Ok(path) => Ok(Some(path)),
            Err(_) => {
                errors.push_spanned(
                    &lit,
                    format!(
                        "`{key}` takes a path, and {:?} is not one: {example}",
                        lit.value()
                    ),
                );
                Ok(None)
            }
        },
        other => {
            errors.push_spanned(other, format!("`{key}` takes a path: {example}"));
            Ok(None)
        }
    }
}

/// A list of paths in parentheses: `upgrade_from(A, v1::B)`.
pub(crate) fn path_list(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    example: &str,
    errors: &mut Errors,
) -> syn::Result<Vec<syn::Path>> {
    if !meta.input.peek(syn::token::Paren) {
        errors.push_spanned(
            &meta.path,
            format!("`{key}` takes a list in parentheses: {example}"),
        );
        skip_value(meta)?;
        return Ok(Vec::new());
    }
    let content;
    syn::parenthesized!(content in meta.input);
    let paths = content.parse_terminated(syn::Path::parse_mod_style, syn::Token![,])?;
    Ok(paths.into_iter().collect())
}

/// `crate = "path"`.
pub(crate) fn crate_value(
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<Option<syn::Path>> {
    let Some(lit) = string_value(meta, "crate", "crate = \"::tables_client\"", errors)? else {
        return Ok(None);
    };
    match lit.parse::<syn::Path>() {
        Ok(path) => Ok(Some(path)),
        Err(_) => {
            errors.push_spanned(
                &lit,
                format!(
                    "`crate` takes a path, and {:?} is not one: crate = \"::tables_client\"",
                    lit.value()
                ),
            );
            Ok(None)
        }
    }
}

/// A key given at most once: the second occurrence is an error at its key.
pub(crate) struct Once<T> {
    seen: bool,
    value: Option<T>,
}

impl<T> Default for Once<T> {
    fn default() -> Self {
        Once {
            seen: false,
            value: None,
        }
    }
}

impl<T> Once<T> {
    /// Whether the key may be read now (its first occurrence); records a "given
    /// twice" error otherwise, and the caller skips the value.
    pub(crate) fn claim(
        &mut self,
        meta: &ParseNestedMeta<'_>,
        key: &str,
        errors: &mut Errors,
    ) -> bool {
        if self.seen {
            errors.push_spanned(&meta.path, format!("`{key}` is given twice; keep one"));
            return false;
        }
        self.seen = true;
        true
    }

    /// Stores the value the first occurrence produced (`None` after a bad value).
    pub(crate) fn set(&mut self, value: Option<T>) {
        self.value = value;
    }

    /// The value, if given and well-formed.
    pub(crate) fn get(&self) -> Option<&T> {
        self.value.as_ref()
    }

    /// Whether the key was written at all (even with a bad value).
    pub(crate) fn seen(&self) -> bool {
        self.seen
    }

    /// The value, if given and well-formed.
    pub(crate) fn into_inner(self) -> Option<T> {
        self.value
    }
}

/// Rejects generic parameters (types, lifetimes, consts) and where clauses.
pub(crate) fn no_generics(input: &syn::DeriveInput, what: &str, errors: &mut Errors) {
    if let Some(param) = input.generics.params.first() {
        errors.push_spanned(
            &input.generics,
            format!(
                "generic {what} are not supported: the derive writes one static schema per type; \
                 remove the parameter `{}` or derive on a concrete wrapper type",
                quote::ToTokens::to_token_stream(param)
            ),
        );
    } else if let Some(clause) = &input.generics.where_clause {
        errors.push_spanned(
            clause,
            format!("generic {what} are not supported; remove the where clause"),
        );
    }
}
