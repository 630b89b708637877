//! `impl Entity` and its `impl Row`: keys, encoding to a `DynamicEntity`, decoding
//! (with upgrades from older versions) and the compile-time checks of `upgrade_from`.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::keys::{call_writer, check_shards, read_back, whole_key_string, writer_name, Which};
use super::names::{field_name, lit, local};
use super::schema::schema_static;
use super::{indexes, is_stored, Ctx};
use crate::model::{Codec, DefaultValue, Field, TypeShape};

/// The `impl Entity for X` and `impl Row for X` blocks.
pub(crate) fn impl_entity(cx: &Ctx<'_>) -> syn::Result<TokenStream> {
    let model = cx.model;
    let p = &cx.private;
    let ident = &model.ident;
    let kind = lit(&model.kind);
    let version = Literal::u32_unsuffixed(model.version);
    let schema = schema_static();
    let entity_key = entity_key(cx);
    let to_entity = to_entity(cx);
    let from_entity = from_entity(cx)?;
    let decodes_version = decodes_version(cx);
    let index_copies = indexes::index_copies(cx)?;
    let index_entries = indexes::index_entries(cx)?;
    let row = super::row::row_impl(
        p,
        ident,
        &super::row::of_entity(
            p,
            !model.indexes.is_empty(),
            model.is_wide(),
            quote! {
                #entity_key
                #to_entity
                #from_entity
                #index_copies
                #index_entries
            },
        ),
    );
    let properties = model
        .fields
        .iter()
        .filter(|f| is_stored(f))
        .flat_map(|field| field.properties())
        .map(lit);
    let templates = [lit(&model.partition_key.source), lit(&model.row_key.source)];
    Ok(quote! {
        #[automatically_derived]
        impl #p::Entity for #ident {
            const KIND: &'static str = #kind;
            const VERSION: u32 = #version;
            const PROPERTIES: &'static [&'static str] = &[#(#properties),*];
            const KEY_TEMPLATES: [&'static str; 2] = [#(#templates),*];

            fn schema() -> &'static #p::EntitySchema {
                &#schema
            }

            #decodes_version
        }

        #row

        // Registered when the program is linked, so a write through another type of
        // this kind that lacks its indexes (a projection, an older version) is refused.
        #p::inventory::submit! {
            #p::Registration {
                type_name: ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#ident)),
                schema: <#ident as #p::Entity>::schema,
            }
        }
    })
}

/// The calls that write the primary PartitionKey and RowKey from `self`'s fields.
fn primary_key_writers(cx: &Ctx<'_>) -> (TokenStream, TokenStream) {
    let model = cx.model;
    let arg = |i: usize| cx.self_field(i);
    let pk = call_writer(
        &writer_name(None, Which::Partition),
        &model.partition_key,
        &arg,
    );
    let rk = call_writer(&writer_name(None, Which::Row), &model.row_key, &arg);
    (pk, rk)
}

/// `fn entity_key`: the primary row's typed key.
fn entity_key(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.private;
    let (pk, rk) = primary_key_writers(cx);
    quote! {
        fn entity_key(&self) -> #p::Result<#p::Key<Self>> {
            ::core::result::Result::Ok(#p::Key::from_entity_key(#p::EntityKey {
                partition_key: #pk?,
                row_key: #rk?,
            }))
        }
    }
}

fn to_entity(cx: &Ctx<'_>) -> TokenStream {
    let model = cx.model;
    let p = &cx.private;
    let (pk, rk) = primary_key_writers(cx);
    let kind = lit(&model.kind);
    let version = Literal::u32_unsuffixed(model.version);
    let stored: Vec<&Field> = model.fields.iter().filter(|f| is_stored(f)).collect();
    let all_names: Vec<&str> = stored.iter().flat_map(|f| f.properties()).collect();
    let count = Literal::usize_unsuffixed(all_names.len());
    let tag = super::schema::tag(cx);
    let new_entity = quote!(#p::new_entity(#pk?, #rk?, &#tag, #kind, #version, #count));
    let others = others_field(cx).map(|field| {
        let id = &field.ident;
        let name = lit(&field_name(field));
        let names = all_names.iter().map(|name| lit(name));
        quote! {
            #p::push_other_properties(
                &mut __entity,
                &self.#id,
                #name,
                &[#(#names),*],
                &#tag,
            )?;
        }
    });
    let wide = model
        .is_wide()
        .then(|| quote!(#p::mark_wide(&mut __entity);));
    if stored.is_empty() && others.is_none() {
        let body = match wide {
            Some(wide) => quote! {
                let mut __entity = #new_entity;
                #wide
                ::core::result::Result::Ok(__entity)
            },
            None => quote!(::core::result::Result::Ok(#new_entity)),
        };
        return quote! {
            fn to_entity(&self) -> #p::Result<#p::DynamicEntity> {
                #body
            }
        };
    }
    let names = all_names.iter().map(|name| lit(name));
    let mut base = 0;
    let pushes: Vec<TokenStream> = stored
        .iter()
        .map(|field| {
            let at = Literal::usize_unsuffixed(base);
            base += field.properties().len();
            if let Codec::Series(_) = &field.codec {
                let id = &field.ident;
                let name = lit(&field_name(field));
                let codec = codec_static(field);
                let points = points_static(field);
                return quote! {
                    for (__i, __point) in self.#id.iter().enumerate() {
                        if let ::core::option::Option::Some(__value) =
                            #p::encode_field(&#codec, __point, #name, #points[__i])?
                        {
                            #p::push_property(&mut __entity, __TABLES_NAMES.get(#at + __i), __value);
                        }
                    }
                };
            }
            let encode = encode(cx, field);
            let encode = if field.lazy {
                let id = &field.ident;
                quote!(#p::lazy_blob_encoded(&self.#id))
            } else if field.encrypted {
                quote!(#p::seal_encoded(#encode))
            } else if field.spill {
                quote!(#p::hold_spill_encoded(#encode))
            } else if field.blob {
                quote!(#p::hold_encoded(#encode))
            } else {
                encode
            };
            quote! {
                if let ::core::option::Option::Some(__value) = #encode? {
                    #p::push_property(&mut __entity, __TABLES_NAMES.get(#at), __value);
                }
            }
        })
        .collect();
    quote! {
        fn to_entity(&self) -> #p::Result<#p::DynamicEntity> {
            static __TABLES_NAMES: #p::PropertyNames = #p::PropertyNames::new(&[#(#names),*]);
            let mut __entity = #new_entity;
            #(#pushes)*
            #others
            #wide
            ::core::result::Result::Ok(__entity)
        }
    }
}

/// The name of the static array of a series field's point names.
pub(crate) fn points_static(field: &Field) -> syn::Ident {
    format_ident!("__TABLES_POINTS_{}", field_name(field))
}

/// The name of the static `FieldCodec` of a plain stored field.
pub(crate) fn codec_static(field: &Field) -> syn::Ident {
    format_ident!("__TABLES_CODEC_{}", field_name(field))
}

/// One static `FieldCodec` per plain stored field: the only place the generated
/// code needs the field type to be a `Property`, so a type that is none is reported
/// once, at the field's type.
pub(crate) fn codec_statics(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.private;
    let mut items = TokenStream::new();
    // A lazy blob field is a `LazyBlob<T>`, encoded by its own functions.
    for field in cx.model.fields.iter().filter(|f| is_stored(f) && !f.lazy) {
        let name = codec_static(field);
        let ty = match &field.codec {
            Codec::Plain => &field.ty,
            Codec::Series(series) => {
                let points_name = points_static(field);
                let count = Literal::usize_unsuffixed(series.points.len());
                let points = series.points.iter().map(|point| lit(point));
                items.extend(quote! {
                    #[allow(non_upper_case_globals)]
                    static #points_name: [&str; #count] = [#(#points),*];
                });
                &series.element
            }
            _ => continue,
        };
        items.extend(quote_spanned! {ty.span()=>
            #[allow(non_upper_case_globals)]
            static #name: #p::FieldCodec<#ty> = <#p::FieldCodec<#ty>>::new();
        });
    }
    items
}

/// The expression encoding a stored field: a `Result<Option<Value>>`.
fn encode(cx: &Ctx<'_>, field: &Field) -> TokenStream {
    let p = &cx.private;
    let id = &field.ident;
    let ty = &field.ty;
    let name = lit(&field_name(field));
    let property = lit(&field.property);
    match &field.codec {
        Codec::Json => quote!(#p::encode_json::<#ty>(&self.#id, #name, #property)),
        Codec::With(path) => {
            quote!(#p::encode_with(#path::to_value(&self.#id), #name, #property))
        }
        Codec::Plain | Codec::Skip | Codec::Others | Codec::Series(_) => {
            let codec = codec_static(field);
            quote!(#p::encode_field(&#codec, &self.#id, #name, #property))
        }
    }
}

fn from_entity(cx: &Ctx<'_>) -> syn::Result<TokenStream> {
    let model = cx.model;
    let p = &cx.private;
    let kind = lit(&model.kind);
    let version = Literal::u32_unsuffixed(model.version);
    let upgrades = model.upgrade_from.iter().map(|older| {
        quote! {
            if <#older as #p::Entity>::decodes_version(__version) {
                return <#older as #p::Row>::from_entity(entity)
                    .map(::core::convert::Into::into);
            }
        }
    });
    let read_pk = read_back(cx, &model.partition_key, Which::Partition)?;
    let read_rk = read_back(cx, &model.row_key, Which::Row)?;
    let check_pk = check_shards(cx, &model.partition_key, Which::Partition);
    let check_rk = check_shards(cx, &model.row_key, Which::Row);
    let stored: Vec<&Field> = model.fields.iter().filter(|f| is_stored(f)).collect();
    let take = take_properties(cx, &stored, others_field(cx).is_some());
    let whole_pk = whole_key_string(cx, &model.partition_key).map(|f| &f.ident);
    let whole_rk = whole_key_string(cx, &model.row_key).map(|f| &f.ident);
    let mutability = if stored.is_empty()
        && whole_pk.is_none()
        && whole_rk.is_none()
        && others_field(cx).is_none()
    {
        TokenStream::new()
    } else {
        quote!(mut)
    };
    // Every other field is decoded first (its errors name the entity's keys); a key
    // that is one whole `String` field is then moved, not copied, into the value.
    let mut decoded = Vec::new();
    let mut targets = Vec::new();
    let values: Vec<TokenStream> = model
        .fields
        .iter()
        .map(|field| {
            let id = &field.ident;
            if matches!(field.codec, Codec::Others) {
                quote!(#id: #p::OtherProperties::from_properties(__others))
            } else if whole_pk == Some(id) {
                let value =
                    from_key_string(field, quote!(::std::mem::take(&mut entity.partition_key)));
                quote!(#id: #value)
            } else if whole_rk == Some(id) {
                let value = from_key_string(field, quote!(::std::mem::take(&mut entity.row_key)));
                quote!(#id: #value)
            } else {
                let value = decode(cx, field);
                let target = local("v", field);
                decoded.push(quote!(let #target = #value;));
                let ty = &field.ty;
                targets.push((target.clone(), quote!(#ty)));
                quote!(#id: #target)
            }
        })
        .collect();
    // With stored fields, their errors get the row's likely cause first (another
    // kind's row, a property under another case), from the names `__taken` keeps.
    let decode_fields = if stored.is_empty() {
        quote!(#(#decoded)*)
    } else {
        let names: Vec<&syn::Ident> = targets.iter().map(|(name, _)| name).collect();
        let types: Vec<&TokenStream> = targets.iter().map(|(_, ty)| ty).collect();
        quote! {
            #[allow(clippy::redundant_closure_call)]
            let (#(#names,)*) = match (|| -> #p::Result<(#(#types,)*)> {
                #(#decoded)*
                ::core::result::Result::Ok((#(#names,)*))
            })() {
                ::core::result::Result::Ok(__values) => __values,
                ::core::result::Result::Err(__error) => {
                    return ::core::result::Result::Err(#p::explain_decode(
                        __error,
                        &entity,
                        &__taken,
                        <Self as #p::Entity>::schema(),
                    ));
                }
            };
        }
    };
    Ok(quote! {
        fn from_entity(#mutability entity: #p::DynamicEntity) -> #p::Result<Self> {
            let __version = #p::check_tag(&entity, <Self as #p::Entity>::schema())?;
            if __version != #version {
                #(#upgrades)*
                return ::core::result::Result::Err(
                    #p::unknown_version(&entity, #kind, __version, #version),
                );
            }
            #read_pk
            #read_rk
            #take
            #decode_fields
            #check_pk
            #check_rk
            ::core::result::Result::Ok(Self { #(#values),* })
        }
    })
}

/// A whole key (a `String`) as the value of a text field: itself for a `String`,
/// converted for `Box<str>`, `Arc<str>` and `Cow<str>`.
fn from_key_string(field: &Field, key: TokenStream) -> TokenStream {
    if field.shape == TypeShape::Str {
        let ty = &field.ty;
        quote!(<#ty as ::core::convert::From<::std::string::String>>::from(#key))
    } else {
        key
    }
}

/// The field holding the other properties, if any.
fn others_field<'a>(cx: &Ctx<'a>) -> Option<&'a Field> {
    cx.model
        .fields
        .iter()
        .find(|f| matches!(f.codec, Codec::Others))
}

/// Moves the properties out and sorts them into one `Option<Value>` slot per stored
/// field, in one pass. Names the type doesn't know are dropped, or, with an
/// `other_properties` field, kept in `__others` (except the tag's own properties).
fn take_properties(cx: &Ctx<'_>, stored: &[&Field], keep_others: bool) -> TokenStream {
    let p = &cx.private;
    // One slot per field: an `Option<Value>`, or an array of them for a series.
    let slots: Vec<TokenStream> = stored
        .iter()
        .map(|f| {
            let slot = local("slot", f);
            match &f.codec {
                Codec::Series(series) => {
                    let count = Literal::usize_unsuffixed(series.points.len());
                    quote! {
                        let mut #slot: [::core::option::Option<#p::Value>; #count] =
                            ::core::array::from_fn(|_| ::core::option::Option::None);
                    }
                }
                _ => quote!(let mut #slot: ::core::option::Option<#p::Value> = ::core::option::Option::None;),
            }
        })
        .collect();
    // Each stored name, and the slot it goes into.
    let mut names: Vec<syn::LitStr> = Vec::new();
    let mut targets: Vec<TokenStream> = Vec::new();
    for field in stored {
        let slot = local("slot", field);
        if let Codec::Series(series) = &field.codec {
            for (i, point) in series.points.iter().enumerate() {
                let i = Literal::usize_unsuffixed(i);
                names.push(lit(point));
                targets.push(quote!(#slot[#i]));
            }
        } else {
            names.push(lit(&field.property));
            targets.push(quote!(#slot));
        }
    }
    // A series' points are found by their number first: matching a name against
    // hundreds of arms is quadratic in the series' length.
    let by_number: Vec<TokenStream> = stored
        .iter()
        .filter(|f| matches!(f.codec, Codec::Series(_)))
        .map(|field| {
            let slot = local("slot", field);
            let points = points_static(field);
            quote! {
                if let ::core::option::Option::Some(__i) = #p::series_point(__property.name(), &#points) {
                    #slot[__i] = ::core::option::Option::Some(__property.take());
                    continue;
                }
            }
        })
        .collect();
    if keep_others {
        let tag = super::schema::tag(cx);
        return quote! {
            #(#slots)*
            let mut __others = ::std::vec::Vec::new();
            let mut __taken = #p::take_properties(&mut entity);
            for __property in __taken.iter_mut() {
                #(#by_number)*
                match __property.name() {
                    #(#names => #targets = ::core::option::Option::Some(__property.take()),)*
                    __other if #tag.properties().contains(&__other)
                        || #p::RESERVED_PROPERTIES.contains(&__other) => {}
                    _ => __others.push(__property.take_named()),
                }
            }
        };
    }
    if stored.is_empty() {
        return TokenStream::new();
    }
    // A value no field takes (the tag's, a column the type doesn't know) is left
    // alone: never copied out of a row the engine shares.
    let sort = if let ([target], [name]) = (targets.as_slice(), names.as_slice()) {
        quote! {
            if __property.name() == #name {
                #target = ::core::option::Option::Some(__property.take());
            }
        }
    } else {
        quote! {
            match __property.name() {
                #(#names => #targets = ::core::option::Option::Some(__property.take()),)*
                _ => {}
            }
        }
    };
    quote! {
        #(#slots)*
        let mut __taken = #p::take_properties(&mut entity);
        for __property in __taken.iter_mut() {
            #(#by_number)*
            #sort
        }
    }
}

/// The expression giving a field's value in `from_entity`.
fn decode(cx: &Ctx<'_>, field: &Field) -> TokenStream {
    let p = &cx.private;
    if field.primary_key_use.is_some() {
        let local = local("k", field);
        return quote!(#local);
    }
    if matches!(field.codec, Codec::Skip) {
        // Spanned on the field's type: a type without `Default` is reported there.
        let ty = &field.ty;
        return quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default());
    }
    let slot = local("slot", field);
    let name = lit(&field_name(field));
    if field.lazy {
        let property = lit(&field.property);
        return quote!(#p::lazy_blob_slot(#slot, &entity, #name, #property)?);
    }
    if let Codec::Series(series) = &field.codec {
        let codec = codec_static(field);
        let points = points_static(field);
        let element = &series.element;
        let decode_point = match &field.default {
            None => quote!(#p::decode_field(&#codec, __value, &entity, #name, #points[__i])?),
            Some(_) => quote!(#p::missing_is_default(
                __value,
                <#element as ::core::default::Default>::default,
                |__present| #p::decode_field(&#codec, __present, &entity, #name, #points[__i]),
            )?),
        };
        return quote! {{
            let mut __points = ::std::vec::Vec::with_capacity(#points.len());
            for (__i, __value) in #slot.into_iter().enumerate() {
                __points.push(#decode_point);
            }
            #p::series_array(__points, &entity, #name)?
        }};
    }
    let ty = &field.ty;
    let property = lit(&field.property);
    let slot = if field.encrypted {
        quote!(#p::unseal_slot(#slot, &entity, #name, #property)?)
    } else if field.blob {
        let spill = field.spill;
        quote!(#p::unhold_slot(#slot, &entity, #name, #property, #spill)?)
    } else {
        quote!(#slot)
    };
    let with_value = |value: TokenStream| match &field.codec {
        Codec::Json => quote!(#p::decode_json::<#ty>(#value, &entity, #name, #property)),
        Codec::With(path) => {
            quote!(#p::decode_with(#path::from_value(#value), &entity, #name, #property))
        }
        Codec::Plain | Codec::Skip | Codec::Others | Codec::Series(_) => {
            let codec = codec_static(field);
            quote!(#p::decode_field(&#codec, #value, &entity, #name, #property))
        }
    };
    match &field.default {
        None => {
            let decode = with_value(quote!(#slot));
            quote!(#decode?)
        }
        Some(default) => {
            let default = match default {
                DefaultValue::Trait => quote!(<#ty as ::core::default::Default>::default),
                DefaultValue::Path(path) => quote!(#path),
            };
            let value = format_ident!("__present");
            let decode = with_value(quote!(#value));
            quote!(#p::missing_is_default(#slot, #default, |#value| #decode)?)
        }
    }
}

fn decodes_version(cx: &Ctx<'_>) -> TokenStream {
    let model = cx.model;
    if model.upgrade_from.is_empty() {
        return TokenStream::new();
    }
    let p = &cx.private;
    let version = Literal::u32_unsuffixed(model.version);
    let older = &model.upgrade_from;
    quote! {
        fn decodes_version(version: u32) -> bool {
            version == #version #(|| <#older as #p::Entity>::decodes_version(version))*
        }
    }
}

/// Compile-time checks that every `upgrade_from` type has the same kind and a lower
/// version.
pub(crate) fn upgrade_asserts(cx: &Ctx<'_>) -> TokenStream {
    let model = cx.model;
    let p = &cx.private;
    let kind = lit(&model.kind);
    let version = Literal::u32_unsuffixed(model.version);
    let mut items = TokenStream::new();
    for older in &model.upgrade_from {
        let older_name = quote!(#older).to_string().replace(' ', "");
        let same_kind = lit(&format!(
            "`{older_name}` in upgrade_from of `{}` must have the same kind (\"{}\"): give it #[entity(kind = \"{}\")]",
            model.ident, model.kind, model.kind
        ));
        let lower_version = lit(&format!(
            "`{older_name}` in upgrade_from of `{}` must have a version below {}",
            model.ident, model.version
        ));
        // Spanned on the listed path: a failed check points at it.
        items.extend(quote_spanned! {older.span()=>
            const _: () = ::core::assert!(
                #p::str_eq(<#older as #p::Entity>::KIND, #kind),
                #same_kind
            );
            const _: () = ::core::assert!(<#older as #p::Entity>::VERSION < #version, #lower_version);
        });
    }
    items
}
