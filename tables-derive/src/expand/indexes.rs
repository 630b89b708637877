//! `index_copies` and `index_entries`: one row per `index(..)` / `index_entity(..)`,
//! none for an index whose template uses an `Option` field that is `None` (a sparse
//! index).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::keys::{call_writer, template_fields, writer_name, Which};
use super::names::{key_type, local};
use super::schema::indexes_static;
use super::Ctx;
use crate::model::{Index, IndexKind};

/// `fn index_copies` when the entity has copies (else the trait's default).
pub(crate) fn index_copies(cx: &Ctx<'_>) -> syn::Result<TokenStream> {
    let p = &cx.private;
    let rows = rows(cx, IndexKind::Copy, &|i, pk, rk| {
        let statics = indexes_static();
        let i = Literal::usize_unsuffixed(i);
        quote!(__rows.push(#p::index_copy(primary, &#statics[#i], #pk?, #rk?));)
    })?;
    let Some((count, rows)) = rows else {
        return Ok(TokenStream::new());
    };
    Ok(quote! {
        fn index_copies(
            &self,
            primary: &#p::DynamicEntity,
        ) -> #p::Result<::std::vec::Vec<#p::IndexCopy>> {
            let mut __rows = ::std::vec::Vec::with_capacity(#count);
            #rows
            ::core::result::Result::Ok(__rows)
        }
    })
}

/// `fn index_entries` when the entity has index entities (else the trait's default).
pub(crate) fn index_entries(cx: &Ctx<'_>) -> syn::Result<TokenStream> {
    let p = &cx.private;
    let rows = rows(cx, IndexKind::List, &|i, pk, rk| {
        let statics = indexes_static();
        let i = Literal::usize_unsuffixed(i);
        quote!(__rows.push(#p::index_entry_for(&__primary, &#statics[#i], #pk?, #rk?));)
    })?;
    let Some((count, rows)) = rows else {
        return Ok(TokenStream::new());
    };
    Ok(quote! {
        fn index_entries(&self) -> #p::Result<::std::vec::Vec<#p::IndexEntry>> {
            let __primary = <Self as #p::Row>::entity_key(self)?.into_entity_key();
            let mut __rows = ::std::vec::Vec::with_capacity(#count);
            #rows
            ::core::result::Result::Ok(__rows)
        }
    })
}

/// The statements pushing the rows of every index of `kind` (with the count), or
/// `None` when there is no such index. `push(i, pk, rk)` is the statement for index
/// `i` given its key writer calls.
fn rows(
    cx: &Ctx<'_>,
    kind: IndexKind,
    push: &dyn Fn(usize, TokenStream, TokenStream) -> TokenStream,
) -> syn::Result<Option<(Literal, TokenStream)>> {
    let mut count = 0;
    let mut statements = TokenStream::new();
    for (i, index) in cx.model.indexes.iter().enumerate() {
        if index.kind != kind {
            continue;
        }
        count += 1;
        statements.extend(index_row(cx, i, index, push)?);
    }
    if count == 0 {
        return Ok(None);
    }
    Ok(Some((Literal::usize_unsuffixed(count), statements)))
}

/// One index's row, inside `if let Some(..)` for each `Option` field its templates
/// use.
fn index_row(
    cx: &Ctx<'_>,
    i: usize,
    index: &Index,
    push: &dyn Fn(usize, TokenStream, TokenStream) -> TokenStream,
) -> syn::Result<TokenStream> {
    let fields = template_fields(&[&index.partition_key, &index.row_key]);
    let mut optional = Vec::new();
    for &f in &fields {
        if key_type(&cx.model.fields[f])?.optional {
            optional.push(f);
        }
    }
    let arg = |f: usize| {
        if optional.contains(&f) {
            let local = local("some", &cx.model.fields[f]);
            quote!(#local)
        } else {
            cx.self_field(f)
        }
    };
    let pk = call_writer(
        &writer_name(Some(i), Which::Partition),
        &index.partition_key,
        &arg,
    );
    let rk = call_writer(&writer_name(Some(i), Which::Row), &index.row_key, &arg);
    let mut row = push(i, pk, rk);
    for &f in optional.iter().rev() {
        let field = &cx.model.fields[f];
        let id = &field.ident;
        let local = local("some", field);
        row = quote! {
            if let ::core::option::Option::Some(#local) = &self.#id {
                #row
            }
        };
    }
    Ok(row)
}
