//! Keys: the private writer function of every template, the public key builders
//! (`key`, `partition_key`, `row_key`, `<index>_key`) and the parse-back of the
//! primary keys into fields.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;

use super::names::{field_name, ident, key_type, lit, local, KeyType};
use super::Ctx;
use crate::model::{Field, Index, KeyForm, Segment, Template};

/// Which key of a row a template builds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Which {
    Partition,
    Row,
}

impl Which {
    fn finish(self) -> &'static str {
        match self {
            Which::Partition => "finish_partition_key",
            Which::Row => "finish_row_key",
        }
    }

    fn reader(self) -> &'static str {
        match self {
            Which::Partition => "partition_key",
            Which::Row => "row_key",
        }
    }
}

/// The distinct fields of the templates' placeholders, in order of first use.
pub(crate) fn template_fields(templates: &[&Template]) -> Vec<usize> {
    let mut fields = Vec::new();
    for template in templates {
        add_fields(&mut fields, &template.segments);
    }
    fields
}

/// The distinct fields of `segments`' placeholders, in order of first use.
pub(crate) fn segment_fields(segments: &[Segment]) -> Vec<usize> {
    let mut fields = Vec::new();
    add_fields(&mut fields, segments);
    fields
}

fn add_fields(fields: &mut Vec<usize>, segments: &[Segment]) {
    for segment in segments {
        if let Segment::Field(placeholder) = segment {
            if !fields.contains(&placeholder.field) {
                fields.push(placeholder.field);
            }
        }
    }
}

/// The name of the private writer of the primary's PartitionKey or RowKey, or of
/// index `index`'s.
pub(crate) fn writer_name(index: Option<usize>, which: Which) -> syn::Ident {
    match index {
        None => format_ident!("__tables_{}", which.reader()),
        Some(i) => format_ident!("__tables_index{}_{}", i, which.reader()),
    }
}

/// Statements appending `segments` to the `String` named `out`; `arg(field)` is the
/// expression giving a reference to the field's key value (`&str` for text).
pub(crate) fn write_segments(
    cx: &Ctx<'_>,
    segments: &[Segment],
    out: &syn::Ident,
    arg: &dyn Fn(usize) -> TokenStream,
) -> syn::Result<TokenStream> {
    let p = &cx.private;
    let mut statements = TokenStream::new();
    for segment in segments {
        let statement = match segment {
            Segment::Literal(text) => {
                let text = lit(text);
                quote!(#p::write_literal(&mut #out, #text);)
            }
            Segment::Field(placeholder) => {
                let field = &cx.model.fields[placeholder.field];
                let kt = key_type(field)?;
                let name = lit(&field_name(field));
                let value = arg(placeholder.field);
                match placeholder.form {
                    KeyForm::Shard(buckets) => {
                        let buckets = Literal::usize_unsuffixed(buckets);
                        quote!(#p::write_shard(&mut #out, #value, #buckets, #name)?;)
                    }
                    KeyForm::Text if kt.is_str() => {
                        quote!(#p::write_str_part(&mut #out, #value, #name)?;)
                    }
                    form => {
                        let codec = key_codec_static(field, form);
                        match form {
                            KeyForm::Padded(width) => {
                                let width = Literal::usize_unsuffixed(width);
                                quote!(#p::write_padded(&mut #out, &#codec, #value, #width, #name)?;)
                            }
                            KeyForm::Signed => {
                                quote!(#p::write_signed(&mut #out, &#codec, #value, #name)?;)
                            }
                            KeyForm::Ticks => {
                                quote!(#p::write_ticks(&mut #out, &#codec, #value, #name)?;)
                            }
                            KeyForm::ReverseTicks => {
                                quote!(#p::write_reverse_ticks(&mut #out, &#codec, #value, #name)?;)
                            }
                            KeyForm::Iso(digits) => {
                                let digits = Literal::u8_unsuffixed(digits);
                                quote!(#p::write_iso(&mut #out, &#codec, #value, #digits, #name)?;)
                            }
                            KeyForm::Date => {
                                quote!(#p::write_date(&mut #out, &#codec, #value, #name)?;)
                            }
                            KeyForm::Text | KeyForm::Uuid | KeyForm::Shard(_) => {
                                quote!(#p::write_text(&mut #out, &#codec, #value, #name)?;)
                            }
                        }
                    }
                }
            }
        };
        statements.extend(statement);
    }
    Ok(statements)
}

/// The byte length of a segment when it doesn't depend on the value.
fn fixed_len(segment: &Segment) -> Option<usize> {
    match segment {
        Segment::Literal(text) => Some(text.len()),
        Segment::Field(placeholder) => placeholder.form.fixed_width(),
    }
}

/// `String::with_capacity(..)` for `segments`: literal text and fixed widths, plus
/// the length of each `&str` value.
pub(crate) fn with_capacity(
    cx: &Ctx<'_>,
    segments: &[Segment],
    arg: &dyn Fn(usize) -> TokenStream,
) -> syn::Result<TokenStream> {
    let fixed: usize = segments.iter().filter_map(fixed_len).sum();
    let fixed = Literal::usize_unsuffixed(fixed);
    let mut lengths = Vec::new();
    for segment in segments {
        if let Segment::Field(placeholder) = segment {
            let field = &cx.model.fields[placeholder.field];
            if placeholder.form == KeyForm::Text && key_type(field)?.is_str() {
                let value = arg(placeholder.field);
                lengths.push(quote!(#value.len()));
            }
        }
    }
    Ok(quote!(::std::string::String::with_capacity(#fixed #(+ #lengths)*)))
}

/// The private writer of one template: `fn name(field: &T, ..) -> Result<String>`,
/// parameters in order of first use, `&str` for text.
pub(crate) fn writer_fn(
    cx: &Ctx<'_>,
    name: &syn::Ident,
    template: &Template,
    which: Which,
) -> syn::Result<TokenStream> {
    let p = &cx.private;
    let mut params = Vec::new();
    for i in template_fields(&[template]) {
        let field = &cx.model.fields[i];
        let id = &field.ident;
        let ty = key_type(field)?.ref_type();
        params.push(quote!(#id: #ty));
    }
    let finish = format_ident!("{}", which.finish());
    let body = if cx.stub {
        let names = template_fields(&[template])
            .into_iter()
            .map(|i| &cx.model.fields[i].ident);
        let fail = super::stub::never_runs(p);
        quote! {
            let _ = (#(#names,)*);
            #fail
        }
    } else if template.segments.is_empty() {
        quote!(#p::#finish(::std::string::String::new()))
    } else {
        let out = format_ident!("__key");
        let arg = |i: usize| {
            let id = &cx.model.fields[i].ident;
            quote!(#id)
        };
        let capacity = with_capacity(cx, &template.segments, &arg)?;
        let writes = write_segments(cx, &template.segments, &out, &arg)?;
        quote! {
            let mut #out = #capacity;
            #writes
            #p::#finish(#out)
        }
    };
    Ok(quote! {
        #[allow(clippy::too_many_arguments)]
        fn #name(#(#params),*) -> #p::Result<::std::string::String> {
            #body
        }
    })
}

/// `T::shard_partitions(..)`, when the PartitionKey holds a shard bucket: every
/// PartitionKey the buckets spread the rows over, given the template's other fields.
fn shard_partitions(cx: &Ctx<'_>, errors: &str) -> syn::Result<TokenStream> {
    let model = cx.model;
    let p = &cx.private;
    let vis = &model.vis;
    let template = &model.partition_key;
    let Some(buckets) = template.segments.iter().find_map(|s| match s {
        Segment::Field(placeholder) => match placeholder.form {
            KeyForm::Shard(n) => Some(n),
            _ => None,
        },
        Segment::Literal(_) => None,
    }) else {
        return Ok(TokenStream::new());
    };
    let mut fields: Vec<usize> = Vec::new();
    for segment in &template.segments {
        if let Segment::Field(placeholder) = segment {
            if !matches!(placeholder.form, KeyForm::Shard(_))
                && !fields.contains(&placeholder.field)
            {
                fields.push(placeholder.field);
            }
        }
    }
    let params = value_params(cx, &fields)?;
    let arg = |i: usize| param_ref(cx, i);
    let out = format_ident!("__key");
    let mut writes = TokenStream::new();
    for segment in &template.segments {
        if let Segment::Field(placeholder) = segment {
            if let KeyForm::Shard(n) = placeholder.form {
                let n = Literal::usize_unsuffixed(n);
                writes.extend(quote!(#p::write_bucket(&mut #out, __bucket, #n);));
                continue;
            }
        }
        writes.extend(write_segments(
            cx,
            std::slice::from_ref(segment),
            &out,
            &arg,
        )?);
    }
    let count = Literal::usize_unsuffixed(buckets);
    let doc = lit(&format!(
        "Every PartitionKey the shard buckets spread `{}` rows over, bucket 0 to {} \
         (template `{}`), given its other fields: the partitions a query over all \
         buckets reads (`Query::across_partitions`).{errors}",
        model.kind,
        buckets - 1,
        template.source
    ));
    let body = if cx.stub {
        let names = fields.iter().map(|&i| &cx.model.fields[i].ident);
        let fail = super::stub::never_runs(p);
        quote! {
            let _ = (#(#names,)*);
            #fail
        }
    } else {
        quote! {
            let mut __keys = ::std::vec::Vec::with_capacity(#count);
            for __bucket in 0..#count {
                let mut #out = ::std::string::String::new();
                #writes
                __keys.push(#p::finish_partition_key(#out)?);
            }
            ::core::result::Result::Ok(__keys)
        }
    };
    Ok(quote! {
        #[doc = #doc]
        #vis fn shard_partitions(#(#params),*) -> #p::Result<::std::vec::Vec<::std::string::String>> {
            #body
        }
    })
}

/// A call of a writer with the fields' references from `arg`.
pub(crate) fn call_writer(
    name: &syn::Ident,
    template: &Template,
    arg: &dyn Fn(usize) -> TokenStream,
) -> TokenStream {
    let args = template_fields(&[template]).into_iter().map(arg);
    quote!(#name(#(#args),*))
}

/// One public builder parameter per field, `&str` for text and the value otherwise.
pub(crate) fn value_params(cx: &Ctx<'_>, fields: &[usize]) -> syn::Result<Vec<TokenStream>> {
    fields
        .iter()
        .map(|&i| {
            let field = &cx.model.fields[i];
            let id = &field.ident;
            let ty = key_type(field)?.value_type();
            Ok(quote!(#id: #ty))
        })
        .collect()
}

/// The reference a writer takes, from a public builder's parameter.
pub(crate) fn param_ref(cx: &Ctx<'_>, i: usize) -> TokenStream {
    let field = &cx.model.fields[i];
    let id = &field.ident;
    match key_type(field) {
        Ok(kt) if kt.is_str() => quote!(#id),
        _ => quote!(&#id),
    }
}

/// `key`, `partition_key`, `row_key` and every `<index>_key`.
pub(crate) fn builders(cx: &Ctx<'_>) -> syn::Result<TokenStream> {
    let model = cx.model;
    let p = &cx.private;
    let vis = &model.vis;
    let kind = &model.kind;
    let arg = |i: usize| param_ref(cx, i);
    let errors = "\n\n# Errors\n\n`ErrorKind::InvalidKey` naming the field whose value can't be \
                  written into the key (a forbidden character, a number wider than its \
                  padding, a key over 1 KiB).";

    let pk_fields = template_fields(&[&model.partition_key]);
    let rk_fields = template_fields(&[&model.row_key]);
    let all_fields = template_fields(&[&model.partition_key, &model.row_key]);
    let pk_params = value_params(cx, &pk_fields)?;
    let rk_params = value_params(cx, &rk_fields)?;
    let all_params = value_params(cx, &all_fields)?;
    let pk_call = call_writer(
        &writer_name(None, Which::Partition),
        &model.partition_key,
        &arg,
    );
    let rk_call = call_writer(&writer_name(None, Which::Row), &model.row_key, &arg);
    let pk_doc = lit(&format!(
        "The PartitionKey of `{kind}` rows with these values (template `{}`).{errors}",
        model.partition_key.source
    ));
    let rk_doc = lit(&format!(
        "The RowKey of the `{kind}` row with these values (template `{}`).{errors}",
        model.row_key.source
    ));
    let key_doc = lit(&format!(
        "The key of the `{kind}` row with these values (PartitionKey `{}`, RowKey `{}`).{errors}",
        model.partition_key.source, model.row_key.source
    ));
    let mut items = quote! {
        #[doc = #key_doc]
        #vis fn key(#(#all_params),*) -> #p::Result<#p::Key<Self>> {
            ::core::result::Result::Ok(#p::Key::from_entity_key(#p::EntityKey {
                partition_key: #pk_call?,
                row_key: #rk_call?,
            }))
        }
        #[doc = #pk_doc]
        #vis fn partition_key(#(#pk_params),*) -> #p::Result<::std::string::String> {
            #pk_call
        }
        #[doc = #rk_doc]
        #vis fn row_key(#(#rk_params),*) -> #p::Result<::std::string::String> {
            #rk_call
        }
    };
    items.extend(shard_partitions(cx, errors)?);
    for (i, index) in model.indexes.iter().enumerate() {
        match index_builder(cx, i, index, errors) {
            Ok(builder) => items.extend(builder),
            Err(_) if cx.stub => {}
            Err(error) => return Err(error),
        }
    }
    Ok(items)
}

fn index_builder(cx: &Ctx<'_>, i: usize, index: &Index, errors: &str) -> syn::Result<TokenStream> {
    let p = &cx.private;
    let vis = &cx.model.vis;
    let name = ident(&format!("{}_key", index.name), index.name_span)?;
    let fields = template_fields(&[&index.partition_key, &index.row_key]);
    let params = value_params(cx, &fields)?;
    let arg = |i: usize| param_ref(cx, i);
    let pk_call = call_writer(
        &writer_name(Some(i), Which::Partition),
        &index.partition_key,
        &arg,
    );
    let rk_call = call_writer(&writer_name(Some(i), Which::Row), &index.row_key, &arg);
    let (what, lookup) = match index.kind {
        crate::model::IndexKind::Copy => ("index", "get_by_index"),
        crate::model::IndexKind::List => ("index entity", "get_all_by_index"),
    };
    let doc = lit(&format!(
        "The key of {what} `{}`'s row for these values (PartitionKey `{}`, RowKey `{}`{}): \
         the key knows its index, pass it to `Table::{lookup}`.{errors}",
        index.name,
        index.partition_key.source,
        index.row_key.source,
        match &index.table {
            Some(table) => format!(", table `{table}`"),
            None => String::new(),
        },
    ));
    let position = Literal::usize_unsuffixed(i);
    let mut items = quote! {
        #[doc = #doc]
        #vis fn #name(#(#params),*) -> #p::Result<#p::IndexKey<Self, #position>> {
            ::core::result::Result::Ok(#p::IndexKey::from_entity_key(#p::EntityKey {
                partition_key: #pk_call?,
                row_key: #rk_call?,
            }))
        }
    };
    if index.kind == crate::model::IndexKind::Copy {
        let partition = ident(&format!("{}_partition", index.name), index.name_span)?;
        let pk_fields = template_fields(&[&index.partition_key]);
        let pk_params = value_params(cx, &pk_fields)?;
        let doc = lit(&format!(
            "The partition of index `{}` for these values (PartitionKey `{}`{}): pass it to \
             `Table::query_index` to read the index's copies in the index's order.{errors}",
            index.name,
            index.partition_key.source,
            match &index.table {
                Some(table) => format!(", table `{table}`"),
                None => String::new(),
            },
        ));
        items.extend(quote! {
            #[doc = #doc]
            #vis fn #partition(#(#pk_params),*) -> #p::Result<#p::IndexPartition<Self, #position>> {
                ::core::result::Result::Ok(#p::IndexPartition::from_partition_key(#pk_call?))
            }
        });
    }
    Ok(items)
}

/// `IndexOf<i>` for each index, with `CopyIndex<i>` or `ListIndex<i>` by its kind:
/// what ties the `IndexKey`s the builders return to their lookups.
pub(crate) fn index_impls(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.private;
    let ident = &cx.model.ident;
    let mut items = TokenStream::new();
    for (i, index) in cx.model.indexes.iter().enumerate() {
        let position = Literal::usize_unsuffixed(i);
        let name = lit(&index.name);
        let kind = match index.kind {
            crate::model::IndexKind::Copy => quote!(CopyIndex),
            crate::model::IndexKind::List => quote!(ListIndex),
        };
        let include = match &index.include {
            Some(fields) => {
                let names = fields
                    .iter()
                    .flat_map(|&f| cx.model.fields[f].properties())
                    .map(lit);
                quote!(::core::option::Option::Some(&[#(#names),*]))
            }
            None => quote!(::core::option::Option::None),
        };
        items.extend(quote! {
            #[automatically_derived]
            impl #p::IndexOf<#position> for #ident {
                const INDEX_NAME: &'static str = #name;
                const INCLUDE: ::core::option::Option<&'static [&'static str]> = #include;
            }
            #[automatically_derived]
            impl #p::#kind<#position> for #ident {}
        });
    }
    items
}

/// The private writers of every template (primary and indexes).
pub(crate) fn writers(cx: &Ctx<'_>) -> syn::Result<TokenStream> {
    let model = cx.model;
    let mut items = writer_fn(
        cx,
        &writer_name(None, Which::Partition),
        &model.partition_key,
        Which::Partition,
    )?;
    items.extend(writer_fn(
        cx,
        &writer_name(None, Which::Row),
        &model.row_key,
        Which::Row,
    )?);
    for (i, index) in model.indexes.iter().enumerate() {
        items.extend(writer_fn(
            cx,
            &writer_name(Some(i), Which::Partition),
            &index.partition_key,
            Which::Partition,
        )?);
        items.extend(writer_fn(
            cx,
            &writer_name(Some(i), Which::Row),
            &index.row_key,
            Which::Row,
        )?);
    }
    Ok(items)
}

/// Statements reading the fields of a primary template back out of `entity`'s key
/// into locals `__k_<field>`.
pub(crate) fn read_back(
    cx: &Ctx<'_>,
    template: &Template,
    which: Which,
) -> syn::Result<TokenStream> {
    let p = &cx.private;
    let source = lit(&template.source);
    let open = format_ident!("{}", which.reader());
    if whole_key_string(cx, template).is_some() {
        // Any key text is a valid value; `from_entity` moves the key into the field.
        return Ok(TokenStream::new());
    }
    if template.segments.is_empty() {
        return Ok(quote!(#p::KeyReader::#open(&entity, #source).finish()?;));
    }
    let reader = format_ident!("__reader");
    let mut statements = quote!(let mut #reader = #p::KeyReader::#open(&entity, #source););
    for (position, segment) in template.segments.iter().enumerate() {
        let statement = match segment {
            Segment::Literal(text) => {
                let text = lit(text);
                quote!(#reader.literal(#text)?;)
            }
            Segment::Field(placeholder) => {
                let field = &cx.model.fields[placeholder.field];
                if let KeyForm::Shard(buckets) = placeholder.form {
                    // The bucket's digits; the field comes from its other placeholder
                    // or its property, and is checked against them once decoded
                    // (`check_shards`).
                    let buckets = Literal::usize_unsuffixed(buckets);
                    let name = lit(&field_name(field));
                    let bucket = bucket_local(which, position);
                    statements.extend(quote!(let #bucket = #reader.shard(#buckets, #name)?;));
                    continue;
                }
                let kt = key_type(field)?;
                let value = read_part(
                    &reader,
                    field,
                    &kt,
                    placeholder.form,
                    tail_len(template, position),
                );
                let target = local("k", field);
                quote!(let #target = #value?;)
            }
        };
        statements.extend(statement);
    }
    statements.extend(quote!(#reader.finish()?;));
    Ok(statements)
}

/// The local [`read_back`] keeps the bucket of the shard placeholder at `position`
/// of a template in.
fn bucket_local(which: Which, position: usize) -> syn::Ident {
    format_ident!("__bucket_{}_{}", which.reader(), position)
}

/// Statements checking each shard bucket [`read_back`] read against the bucket of
/// its field's decoded value (locals `__v_<field>`, or the whole other key, which
/// is still in `entity`).
pub(crate) fn check_shards(cx: &Ctx<'_>, template: &Template, which: Which) -> TokenStream {
    let p = &cx.private;
    let model = cx.model;
    let source = lit(&template.source);
    let open = format_ident!("{}", which.reader());
    let mut checks = TokenStream::new();
    for (position, segment) in template.segments.iter().enumerate() {
        let Segment::Field(placeholder) = segment else {
            continue;
        };
        let KeyForm::Shard(buckets) = placeholder.form else {
            continue;
        };
        let field = &model.fields[placeholder.field];
        let value =
            if whole_key_string(cx, &model.partition_key).is_some_and(|f| std::ptr::eq(f, field)) {
                quote!(&entity.partition_key)
            } else if whole_key_string(cx, &model.row_key).is_some_and(|f| std::ptr::eq(f, field)) {
                quote!(&entity.row_key)
            } else {
                let local = local("v", field);
                quote!(&#local)
            };
        let buckets = Literal::usize_unsuffixed(buckets);
        let name = lit(&field_name(field));
        let bucket = bucket_local(which, position);
        checks.extend(quote! {
            #p::KeyReader::#open(&entity, #source).check_shard(#bucket, #value, #buckets, #name)?;
        });
    }
    checks
}

/// The field a template consists of when it is exactly one `{field}` of a `String`
/// field: the whole key is the value, so decoding moves the key instead of copying.
pub(crate) fn whole_key_string<'m>(cx: &Ctx<'m>, template: &Template) -> Option<&'m Field> {
    match template.segments.as_slice() {
        [Segment::Field(placeholder)] if placeholder.form == KeyForm::Text => {
            let field = &cx.model.fields[placeholder.field];
            key_type(field).ok().filter(KeyType::is_str).map(|_| field)
        }
        _ => None,
    }
}

/// The bytes a template writes after segment `position` (variable parts count 0:
/// validation allows one per template, the one being read).
fn tail_len(template: &Template, position: usize) -> usize {
    template.segments[position + 1..]
        .iter()
        .filter_map(fixed_len)
        .sum()
}

fn read_part(
    reader: &syn::Ident,
    field: &Field,
    kt: &KeyType<'_>,
    form: KeyForm,
    tail: usize,
) -> TokenStream {
    let ty = kt.ty;
    let name = lit(&field_name(field));
    let tail = Literal::usize_unsuffixed(tail);
    let codec = key_codec_static(field, form);
    match form {
        KeyForm::Text if kt.converts_from_string() => quote!(#reader
            .string(#tail, #name)
            .map(<#ty as ::core::convert::From<::std::string::String>>::from)),
        KeyForm::Text if kt.is_str() => quote!(#reader.string(#tail, #name)),
        KeyForm::Text => quote!(#reader.text(&#codec, ::core::option::Option::None, #tail, #name)),
        KeyForm::Uuid => {
            let width = Literal::usize_unsuffixed(form.fixed_width().unwrap_or_default());
            quote!(#reader.text(&#codec, ::core::option::Option::Some(#width), 0, #name))
        }
        KeyForm::Padded(width) => {
            let width = Literal::usize_unsuffixed(width);
            quote!(#reader.padded(&#codec, #width, #name))
        }
        KeyForm::Signed => quote!(#reader.signed(&#codec, #name)),
        KeyForm::Ticks => quote!(#reader.ticks(&#codec, #name)),
        KeyForm::ReverseTicks => quote!(#reader.reverse_ticks(&#codec, #name)),
        KeyForm::Iso(digits) => {
            let digits = Literal::u8_unsuffixed(digits);
            quote!(#reader.iso(&#codec, #digits, #name))
        }
        KeyForm::Date => quote!(#reader.date(&#codec, #name)),
        KeyForm::Shard(buckets) => {
            let buckets = Literal::usize_unsuffixed(buckets);
            quote!(#reader.shard(#buckets, #name))
        }
    }
}

/// Which key trait a form writes a value through.
fn key_trait(form: KeyForm) -> &'static str {
    match form {
        KeyForm::Text | KeyForm::Uuid | KeyForm::Shard(_) => "TEXT",
        KeyForm::Padded(_) | KeyForm::Signed => "INT",
        KeyForm::Ticks | KeyForm::ReverseTicks | KeyForm::Iso(_) => "TIME",
        KeyForm::Date => "DATE",
    }
}

/// The name of the static codec through which `field` is written in `form`.
pub(crate) fn key_codec_static(field: &Field, form: KeyForm) -> syn::Ident {
    format_ident!("__TABLES_KEY{}_{}", key_trait(form), field_name(field))
}

/// One static key codec per field and key trait its placeholders use (all
/// templates): the only place the generated code needs the field's type to have
/// that trait, so a type that hasn't is reported once.
pub(crate) fn key_codec_statics(cx: &Ctx<'_>) -> syn::Result<TokenStream> {
    let p = &cx.private;
    let model = cx.model;
    let mut templates = vec![&model.partition_key, &model.row_key];
    for index in &model.indexes {
        templates.push(&index.partition_key);
        templates.push(&index.row_key);
    }
    let mut seen: Vec<(usize, &'static str)> = Vec::new();
    let mut items = TokenStream::new();
    for template in templates {
        for segment in &template.segments {
            let Segment::Field(placeholder) = segment else {
                continue;
            };
            let field = &model.fields[placeholder.field];
            let kt = key_type(field)?;
            if (placeholder.form == KeyForm::Text && kt.is_str())
                || matches!(placeholder.form, KeyForm::Shard(_))
            {
                continue; // written as `&str`, no trait
            }
            let which = key_trait(placeholder.form);
            if seen.contains(&(placeholder.field, which)) {
                continue;
            }
            seen.push((placeholder.field, which));
            let codec_type = match which {
                "TEXT" => quote!(KeyTextCodec),
                "INT" => quote!(KeyIntCodec),
                "TIME" => quote!(KeyTimeCodec),
                _ => quote!(KeyDateCodec),
            };
            let name = key_codec_static(field, placeholder.form);
            let ty = kt.ty;
            // Spanned on the field's type: a type without the trait is reported there.
            items.extend(quote_spanned! {ty.span()=>
                #[allow(non_upper_case_globals)]
                static #name: #p::#codec_type<#ty> = <#p::#codec_type<#ty>>::new();
            });
        }
    }
    Ok(items)
}
