//! The static `EntitySchema` (with its property and index tables) and the typed
//! column constants.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;

use super::names::{field_name, ident, lit, option_inner};
use super::{is_stored, Ctx};
use crate::model::{Codec, IndexKind, TagModel, TagValueModel, TypeShape};

/// The name of the static array of the entity's `IndexSchema`s.
pub(crate) fn indexes_static() -> syn::Ident {
    format_ident!("__TABLES_INDEXES")
}

/// The name of the static `EntitySchema`.
pub(crate) fn schema_static() -> syn::Ident {
    format_ident!("__TABLES_SCHEMA")
}

/// `static __TABLES_INDEXES: [IndexSchema; N]` and `static __TABLES_SCHEMA`.
pub(crate) fn statics(cx: &Ctx<'_>) -> TokenStream {
    let model = cx.model;
    let p = &cx.private;
    let properties = model
        .fields
        .iter()
        .filter(|f| is_stored(f))
        .flat_map(|field| {
            let name = lit(&field_name(field));
            let stored_as = match field.codec {
                Codec::Json => quote!(Json),
                Codec::With(_) => quote!(Custom),
                Codec::Plain | Codec::Skip | Codec::Others | Codec::Series(_) => quote!(Plain),
            };
            field
                .properties()
                .into_iter()
                .map(|property| {
                    let property = lit(property);
                    quote! {
                        #p::PropertySchema {
                            field: #name,
                            name: #property,
                            stored_as: #p::StoredAs::#stored_as,
                        }
                    }
                })
                .collect::<Vec<_>>()
        });
    let indexes = model.indexes.iter().map(|index| {
        let name = lit(&index.name);
        let kind = match index.kind {
            IndexKind::Copy => quote!(Copy),
            IndexKind::List => quote!(List),
        };
        let table = match &index.table {
            Some(table) => {
                let table = lit(table);
                quote!(::core::option::Option::Some(#table))
            }
            None => quote!(::core::option::Option::None),
        };
        let partition_key = lit(&index.partition_key.source);
        let row_key = lit(&index.row_key.source);
        let include = match &index.include {
            Some(fields) => {
                let names = fields
                    .iter()
                    .flat_map(|&i| model.fields[i].properties())
                    .map(lit);
                quote!(::core::option::Option::Some(&[#(#names),*]))
            }
            None => quote!(::core::option::Option::None),
        };
        let same_partition = index.same_partition;
        let unique = index.unique;
        quote! {
            #p::IndexSchema {
                name: #name,
                kind: #p::IndexKind::#kind,
                table: #table,
                partition_key: #partition_key,
                row_key: #row_key,
                include: #include,
                unique: #unique,
                same_partition: #same_partition,
            }
        }
    });
    let count = Literal::usize_unsuffixed(model.indexes.len());
    let kind = lit(&model.kind);
    let version = Literal::u32_unsuffixed(model.version);
    let partition_key = lit(&model.partition_key.source);
    let row_key = lit(&model.row_key.source);
    let indexes_static = indexes_static();
    let schema_static = schema_static();
    let tag = tag(cx);
    let others = model
        .fields
        .iter()
        .any(|f| matches!(f.codec, Codec::Others));
    quote! {
        static #indexes_static: [#p::IndexSchema; #count] = [#(#indexes),*];
        static #schema_static: #p::EntitySchema = #p::EntitySchema {
            kind: #kind,
            version: #version,
            tag: #tag,
            partition_key: #partition_key,
            row_key: #row_key,
            properties: &[#(#properties),*],
            indexes: &#indexes_static,
            other_properties: #others,
        };
    }
}

/// The type's `Tag`, as a constant expression.
pub(crate) fn tag(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.private;
    match &cx.model.tag {
        TagModel::Kind => quote!(#p::Tag::Kind),
        TagModel::Property { name, value, .. } => {
            let name = lit(name);
            let value = match value {
                TagValueModel::Text(text) => {
                    let text = lit(text);
                    quote!(#p::TagValue::Text(#text))
                }
                TagValueModel::Int(n) => {
                    let n = Literal::i32_unsuffixed(*n);
                    quote!(#p::TagValue::Int(#n))
                }
            };
            quote!(#p::Tag::Property { name: #name, value: #value })
        }
        TagModel::RowKeyPrefix(prefix) => {
            let prefix = lit(prefix);
            quote!(#p::Tag::RowKeyPrefix(#prefix))
        }
        TagModel::Untagged => quote!(#p::Tag::Untagged),
    }
}

/// The type a column compares with (`Property::Scalar`), read from the field's type
/// as written, so the column puts no `Property` bound on it (a type that is none is
/// reported once, by the field's codec): `T` of an `Option<T>`, `String` for text.
fn column_scalar(p: &TokenStream, shape: &TypeShape, ty: &syn::Type) -> TokenStream {
    match shape {
        TypeShape::String | TypeShape::Str => quote!(::std::string::String),
        TypeShape::Option(inner) => match (&**inner, option_inner(ty)) {
            (TypeShape::Option(_), _) | (_, None) => quote!(<#ty as #p::Property>::Scalar),
            (inner, Some(inner_ty)) => column_scalar(p, inner, inner_ty),
        },
        _ => quote!(#ty),
    }
}

/// `const AGE: TypedColumn<Self, i32> = TypedColumn::new("Age");` for every plain stored
/// field.
pub(crate) fn columns(cx: &Ctx<'_>) -> syn::Result<TokenStream> {
    let model = cx.model;
    let p = &cx.private;
    let vis = &model.vis;
    let mut items = TokenStream::new();
    for field in model
        .fields
        .iter()
        .filter(|f| is_stored(f) && matches!(f.codec, Codec::Plain))
    {
        let name = match ident(&field.column, field.ident.span()) {
            Ok(name) => name,
            Err(_) if cx.stub => continue,
            Err(error) => return Err(error),
        };
        let ty = &field.ty;
        let property = lit(&field.property);
        if field.blob {
            continue;
        }
        if field.encrypted {
            let doc = lit(&format!(
                "The column of encrypted property `{}` (field `{}`): for projections only; \
                 an encrypted field can't be filtered on.",
                field.property,
                field_name(field)
            ));
            items.extend(quote_spanned! {ty.span()=>
                #[doc = #doc]
                #vis const #name: #p::EncryptedColumn = #p::EncryptedColumn::new(#property);
            });
            continue;
        }
        let scalar = column_scalar(p, &field.shape, ty);
        let doc = lit(&format!(
            "The typed column of property `{}` (field `{}`), for filters and projections; \
             values are encoded as the field stores them.",
            field.property,
            field_name(field)
        ));
        items.extend(quote_spanned! {ty.span()=>
            #[doc = #doc]
            #vis const #name: #p::TypedColumn<Self, #scalar> = <#p::TypedColumn<Self, #scalar>>::new(#property);
        });
    }
    for field in model.fields.iter().filter(|f| is_stored(f)) {
        let Codec::Series(series) = &field.codec else {
            continue;
        };
        let name = match ident(&field.column, field.ident.span()) {
            Ok(name) => name,
            Err(_) if cx.stub => continue,
            Err(error) => return Err(error),
        };
        let element = &series.element;
        let scalar = column_scalar(p, &crate::attr::shape::classify(element), element);
        let points = series.points.iter().map(|point| lit(point));
        let doc = lit(&format!(
            "The series column of field `{}`: {} points stored as `{}` .. `{}`; \
             `point(i)` is the typed column of one point, for filters, projections, \
             patches and `Table::set_point`.",
            field_name(field),
            series.points.len(),
            series.points[0],
            series.points[series.points.len() - 1],
        ));
        items.extend(quote_spanned! {element.span()=>
            #[doc = #doc]
            #vis const #name: #p::SeriesColumn<Self, #scalar> = <#p::SeriesColumn<Self, #scalar>>::new(&[#(#points),*]);
        });
    }
    Ok(items)
}
