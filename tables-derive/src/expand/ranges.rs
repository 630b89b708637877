//! RowKey range helpers: `<field>_range` for a fixed-width placeholder of a RowKey
//! template, `<field>_range` and `<field>_prefix` for a trailing `String` one (index
//! `x`'s helpers are prefixed `x_`).

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};

use super::keys::{param_ref, segment_fields, value_params, with_capacity, write_segments};
use super::names::{field_name, ident, key_type, lit};
use super::Ctx;
use crate::model::{KeyForm, Segment, Template};

/// The range helpers of the primary RowKey and of every index's RowKey.
pub(crate) fn helpers(cx: &Ctx<'_>) -> syn::Result<TokenStream> {
    let mut items = template_helpers(cx, &cx.model.row_key, "", "", Span::call_site())?;
    for index in &cx.model.indexes {
        let what = format!(" of index `{}`", index.name);
        match template_helpers(
            cx,
            &index.row_key,
            &format!("{}_", index.name),
            &what,
            index.name_span,
        ) {
            Ok(helpers) => items.extend(helpers),
            Err(_) if cx.stub => {}
            Err(error) => return Err(error),
        }
    }
    Ok(items)
}

fn template_helpers(
    cx: &Ctx<'_>,
    template: &Template,
    prefix: &str,
    what: &str,
    span: Span,
) -> syn::Result<TokenStream> {
    let mut items = TokenStream::new();
    let mut seen = Vec::new();
    let last = template.segments.len().saturating_sub(1);
    for (position, segment) in template.segments.iter().enumerate() {
        let Segment::Field(placeholder) = segment else {
            continue;
        };
        // A shard bucket is a hash: no range over it (the field's own placeholder
        // gets its helpers).
        if seen.contains(&placeholder.field) || matches!(placeholder.form, KeyForm::Shard(_)) {
            continue;
        }
        seen.push(placeholder.field);
        let helper = Helper {
            cx,
            template,
            position,
            prefix,
            what,
            span,
        };
        let field = &cx.model.fields[placeholder.field];
        let text_tail =
            placeholder.form == KeyForm::Text && position == last && key_type(field)?.is_str();
        if placeholder.form.fixed_width().is_some() || text_tail {
            items.extend(helper.range(placeholder.field, placeholder.form)?);
        }
        if text_tail {
            items.extend(helper.prefix(placeholder.field)?);
        }
    }
    Ok(items)
}

/// One placeholder's helpers.
struct Helper<'a> {
    cx: &'a Ctx<'a>,
    template: &'a Template,
    position: usize,
    /// `""` or `"<index>_"`.
    prefix: &'a str,
    /// `""` or `" of index `x`"`, for docs.
    what: &'a str,
    span: Span,
}

impl Helper<'_> {
    fn before(&self) -> &[Segment] {
        &self.template.segments[..self.position]
    }

    /// The parameters for the fields before the placeholder, and the statements
    /// writing the key text before it into `__key`.
    fn prefix_key(&self) -> syn::Result<(Vec<TokenStream>, Vec<syn::Ident>, TokenStream)> {
        let fields = segment_fields(self.before());
        let params = value_params(self.cx, &fields)?;
        let idents = fields
            .iter()
            .map(|&i| self.cx.model.fields[i].ident.clone())
            .collect();
        let arg = |i: usize| param_ref(self.cx, i);
        let out = format_ident!("__key");
        let body = if self.before().is_empty() {
            quote!(let #out = ::std::string::String::new();)
        } else {
            let capacity = with_capacity(self.cx, self.before(), &arg)?;
            let writes = write_segments(self.cx, self.before(), &out, &arg)?;
            quote! {
                let mut #out = #capacity;
                #writes
            }
        };
        Ok((params, idents, body))
    }

    fn doc(&self, field: &str, text: &str) -> syn::LitStr {
        let model = self.cx.model;
        lit(&format!(
            "A RowKey range of `{}` rows{}: {text} (RowKey template `{}`); the fields \
             written before `{field}` in the template are parameters.\n\n# Errors\n\n\
             `ErrorKind::InvalidKey` naming the field whose value can't be written into \
             the key.",
            model.kind, self.what, self.template.source
        ))
    }

    /// `<field>_range(.., range)`.
    fn range(&self, field_index: usize, form: KeyForm) -> syn::Result<TokenStream> {
        let cx = self.cx;
        let p = &cx.private;
        let vis = &cx.model.vis;
        let field = &cx.model.fields[field_index];
        let name = field_name(field);
        let fn_name = ident(&format!("{}{name}_range", self.prefix), self.span)?;
        let (params, idents, body) = self.prefix_key()?;
        let range = free_name("range", &idents);
        let kt = key_type(field)?;
        let ty = kt.ty;
        let name_lit = lit(&name);
        let codec = super::keys::key_codec_static(field, form);
        let (bound, call) = match form {
            KeyForm::Padded(width) => {
                let width = Literal::usize_unsuffixed(width);
                (
                    quote!(#ty),
                    quote!(#p::range_padded(__key, &#codec, #range, #width, #name_lit)),
                )
            }
            KeyForm::Signed => (
                quote!(#ty),
                quote!(#p::range_signed(__key, &#codec, #range, #name_lit)),
            ),
            KeyForm::Ticks => (
                quote!(#ty),
                quote!(#p::range_ticks(__key, &#codec, #range, #name_lit)),
            ),
            KeyForm::ReverseTicks => (
                quote!(#ty),
                quote!(#p::range_reverse_ticks(__key, &#codec, #range, #name_lit)),
            ),
            KeyForm::Iso(digits) => {
                let digits = Literal::u8_unsuffixed(digits);
                (
                    quote!(#ty),
                    quote!(#p::range_iso(__key, &#codec, #range, #digits, #name_lit)),
                )
            }
            KeyForm::Uuid => (quote!(#ty), quote!(#p::range_uuid(__key, #range))),
            KeyForm::Date => (
                quote!(#ty),
                quote!(#p::range_date(__key, &#codec, #range, #name_lit)),
            ),
            KeyForm::Text => (
                TokenStream::new(),
                quote!(#p::range_str(__key, #range, #name_lit)),
            ),
            KeyForm::Shard(_) => {
                return Err(syn::Error::new(
                    self.span,
                    "a shard bucket has no range: it is a hash",
                ))
            }
        };

        let range_type = if form == KeyForm::Text {
            quote!(impl #p::TextRange)
        } else {
            quote!(impl ::core::ops::RangeBounds<#bound>)
        };
        let doc = self.doc(&name, &format!("the rows whose `{name}` is in `{range}`"));
        let (body, call) = if cx.stub {
            (
                quote!(let _ = (#(#idents,)* #range);),
                super::stub::never_runs(p),
            )
        } else {
            (body, call)
        };
        Ok(quote! {
            #[doc = #doc]
            #vis fn #fn_name(#(#params,)* #range: #range_type) -> #p::Result<#p::KeyRange> {
                #body
                #call
            }
        })
    }

    /// `<field>_prefix(.., prefix)`.
    fn prefix(&self, field_index: usize) -> syn::Result<TokenStream> {
        let cx = self.cx;
        let p = &cx.private;
        let vis = &cx.model.vis;
        let field = &cx.model.fields[field_index];
        let name = field_name(field);
        let fn_name = ident(&format!("{}{name}_prefix", self.prefix), self.span)?;
        let (params, idents, body) = self.prefix_key()?;
        let prefix = free_name("prefix", &idents);
        let name_lit = lit(&name);
        let doc = self.doc(
            &name,
            &format!("the rows whose `{name}` starts with `{prefix}`"),
        );
        let (body, call) = if cx.stub {
            (
                quote!(let _ = (#(#idents,)* #prefix);),
                super::stub::never_runs(p),
            )
        } else {
            (body, quote!(#p::prefix_str(__key, #prefix, #name_lit)))
        };
        Ok(quote! {
            #[doc = #doc]
            #vis fn #fn_name(#(#params,)* #prefix: &str) -> #p::Result<#p::KeyRange> {
                #body
                #call
            }
        })
    }
}

/// `wanted` unless a field parameter already has that name.
fn free_name(wanted: &str, taken: &[syn::Ident]) -> syn::Ident {
    if taken.iter().any(|id| id == wanted) {
        format_ident!("{}_bounds", wanted)
    } else {
        format_ident!("{}", wanted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_parameters_avoid_field_names() {
        let taken = vec![format_ident!("range")];
        assert_eq!(free_name("range", &taken), "range_bounds");
        assert_eq!(free_name("prefix", &taken), "prefix");
    }
}
