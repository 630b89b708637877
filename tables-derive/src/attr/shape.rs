//! A syntactic reading of field types ([`TypeShape`]): enough to check key forms
//! before the type checker runs. The generated code's trait bounds have the final
//! word on what a type supports.

use crate::model::TypeShape;

/// Last path segments read as a date-time.
const DATE_TIMES: [&str; 2] = ["DateTime", "OffsetDateTime"];
/// Types with no faithful storage: the derive refuses them, saying what to use.
const UNSTORABLE: [&str; 4] = ["i128", "u128", "NaiveDateTime", "PrimitiveDateTime"];
/// Integer types a key can hold (Edm.Int32 / Edm.Int64 and narrower).
const INTS: [&str; 8] = ["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"];

/// Classifies `ty`.
pub(crate) fn classify(ty: &syn::Type) -> TypeShape {
    match ty {
        syn::Type::Group(group) => classify(&group.elem),
        syn::Type::Paren(paren) => classify(&paren.elem),
        syn::Type::Path(path) if path.qself.is_none() => classify_path(&path.path),
        _ => TypeShape::Other,
    }
}

fn classify_path(path: &syn::Path) -> TypeShape {
    let Some(last) = path.segments.last() else {
        return TypeShape::Other;
    };
    let name = last.ident.to_string();
    // `time::Date`, not any `Date` (a user type may have that name).
    let after_time =
        path.segments.len() >= 2 && path.segments[path.segments.len() - 2].ident == "time";
    match &last.arguments {
        syn::PathArguments::None => match name.as_str() {
            "String" => TypeShape::String,
            "char" => TypeShape::Char,
            "bool" => TypeShape::Bool,
            "f32" | "f64" => TypeShape::Float,
            "Uuid" => TypeShape::Uuid,
            "NaiveDate" => TypeShape::Date,
            "Date" if after_time => TypeShape::Date,
            "Duration" => TypeShape::Duration,
            "Decimal" => TypeShape::Decimal,
            "Bytes"
                if path.segments.len() >= 2
                    && path.segments[path.segments.len() - 2].ident == "bytes" =>
            {
                TypeShape::Bytes
            }
            int if INTS.contains(&int) => TypeShape::Int(name),
            time if DATE_TIMES.contains(&time) => TypeShape::DateTime,
            bad if UNSTORABLE.contains(&bad) => TypeShape::Unstorable(name),
            _ => TypeShape::Other,
        },
        syn::PathArguments::AngleBracketed(arguments) => {
            let mut types = arguments.args.iter().filter_map(|argument| match argument {
                syn::GenericArgument::Type(ty) => Some(ty),
                _ => None,
            });
            let only = match (types.next(), types.next()) {
                (Some(ty), None) => Some(ty),
                _ => None,
            };
            match (name.as_str(), only) {
                ("Option", Some(inner)) => TypeShape::Option(Box::new(classify(inner))),
                ("Vec", Some(inner)) if classify(inner) == TypeShape::Int("u8".to_owned()) => {
                    TypeShape::Bytes
                }
                ("Box" | "Arc" | "Cow", Some(inner)) if is_str(inner) => TypeShape::Str,
                // chrono's `DateTime<Utc>`.
                (time, _) if DATE_TIMES.contains(&time) => TypeShape::DateTime,
                _ => TypeShape::Other,
            }
        }
        syn::PathArguments::Parenthesized(_) => TypeShape::Other,
    }
}

/// Whether `ty` is `str`.
fn is_str(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.qself.is_none() && path.path.is_ident("str"))
}

/// Whether values of the shape are text that builders take as `&str`.
pub(crate) fn is_text(shape: &TypeShape) -> bool {
    matches!(shape, TypeShape::String | TypeShape::Str)
}

/// The type a field holds that has no faithful storage, if any (also inside an
/// `Option`).
pub(crate) fn unstorable(shape: &TypeShape) -> Option<&str> {
    match shape {
        TypeShape::Unstorable(name) => Some(name),
        TypeShape::Option(inner) => unstorable(inner),
        _ => None,
    }
}

/// Why a type can't be stored, and what to use instead.
pub(crate) fn unstorable_message(name: &str) -> String {
    match name {
        "i128" | "u128" => format!(
            "`{name}` can't be stored faithfully: the widest integer the service stores is Edm.Int64, and .NET \
             and Python readers could not read a wider one back. Use i64 or u64 if the values fit; otherwise \
             store it as text with #[entity(with = module)] (a fixed-width digit string also sorts in a key, \
             through a #[derive(Property)] newtype of String), or as JSON with #[entity(json)]"
        ),
        _ => format!(
            "`{name}` can't be stored faithfully: it has no time zone, so it names no instant, and the service \
             stores instants (Edm.DateTime, UTC); every reader in another zone would see another time. Use a \
             UTC instant (tables DateTime, chrono::DateTime<Utc> or time::OffsetDateTime, converting with the \
             zone the value was meant in), a date alone (chrono::NaiveDate or time::Date, stored yyyy-MM-dd), or \
             your own text form with #[entity(with = module)]"
        ),
    }
}

/// The shape a key placeholder works with: the inner shape of an `Option<T>`
/// (sparse index keys), else the shape itself.
pub(crate) fn unwrap_option(shape: &TypeShape) -> &TypeShape {
    match shape {
        TypeShape::Option(inner) => inner,
        other => other,
    }
}

/// Whether an integer shape is unsigned (`u8`..`u64`).
pub(crate) fn is_unsigned(int: &str) -> bool {
    int.starts_with('u')
}

/// How a shape is named in messages.
pub(crate) fn describe(shape: &TypeShape) -> String {
    match shape {
        TypeShape::String => "a String".to_owned(),
        TypeShape::Str => "text".to_owned(),
        TypeShape::Char => "a char".to_owned(),
        TypeShape::Bool => "a bool".to_owned(),
        TypeShape::Int(name) => format!("an integer ({name})"),
        TypeShape::Float => "a float".to_owned(),
        TypeShape::Bytes => "bytes".to_owned(),
        TypeShape::Uuid => "a Uuid".to_owned(),
        TypeShape::DateTime => "a date-time".to_owned(),
        TypeShape::Date => "a date".to_owned(),
        TypeShape::Duration => "a Duration".to_owned(),
        TypeShape::Decimal => "a Decimal".to_owned(),
        TypeShape::Unstorable(name) => format!("`{name}`"),
        TypeShape::Option(inner) => format!("an Option of {}", describe(inner)),
        TypeShape::Other => "a type with #[derive(Property)]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;

    #[test]
    fn classifies_the_supported_shapes() {
        assert_eq!(classify(&parse_quote!(String)), TypeShape::String);
        assert_eq!(
            classify(&parse_quote!(::std::string::String)),
            TypeShape::String
        );
        assert_eq!(classify(&parse_quote!(bool)), TypeShape::Bool);
        assert_eq!(
            classify(&parse_quote!(u32)),
            TypeShape::Int("u32".to_owned())
        );
        assert_eq!(
            classify(&parse_quote!(core::primitive::i64)),
            TypeShape::Int("i64".to_owned())
        );
        assert_eq!(classify(&parse_quote!(f64)), TypeShape::Float);
        assert_eq!(classify(&parse_quote!(Vec<u8>)), TypeShape::Bytes);
        assert_eq!(classify(&parse_quote!(uuid::Uuid)), TypeShape::Uuid);
        assert_eq!(classify(&parse_quote!(DateTime)), TypeShape::DateTime);
        assert_eq!(
            classify(&parse_quote!(chrono::DateTime<chrono::Utc>)),
            TypeShape::DateTime
        );
        assert_eq!(
            classify(&parse_quote!(time::OffsetDateTime)),
            TypeShape::DateTime
        );
        assert_eq!(
            classify(&parse_quote!(chrono::NaiveDateTime)),
            TypeShape::Unstorable("NaiveDateTime".to_owned())
        );
        assert_eq!(
            classify(&parse_quote!(PrimitiveDateTime)),
            TypeShape::Unstorable("PrimitiveDateTime".to_owned())
        );
        assert_eq!(
            classify(&parse_quote!(i128)),
            TypeShape::Unstorable("i128".to_owned())
        );
        assert_eq!(classify(&parse_quote!(char)), TypeShape::Char);
        assert_eq!(classify(&parse_quote!(Box<str>)), TypeShape::Str);
        assert_eq!(classify(&parse_quote!(std::sync::Arc<str>)), TypeShape::Str);
        assert_eq!(classify(&parse_quote!(Cow<'static, str>)), TypeShape::Str);
        assert_eq!(classify(&parse_quote!(chrono::NaiveDate)), TypeShape::Date);
        assert_eq!(classify(&parse_quote!(time::Date)), TypeShape::Date);
        assert_eq!(
            classify(&parse_quote!(std::time::Duration)),
            TypeShape::Duration
        );
        assert_eq!(
            classify(&parse_quote!(rust_decimal::Decimal)),
            TypeShape::Decimal
        );
        assert_eq!(classify(&parse_quote!(bytes::Bytes)), TypeShape::Bytes);
        assert_eq!(
            classify(&parse_quote!(Option<u8>)),
            TypeShape::Option(Box::new(TypeShape::Int("u8".to_owned())))
        );
        assert_eq!(
            classify(&parse_quote!(std::option::Option<Option<String>>)),
            TypeShape::Option(Box::new(TypeShape::Option(Box::new(TypeShape::String))))
        );
        assert_eq!(classify(&parse_quote!((String))), TypeShape::String);
    }

    #[test]
    fn everything_else_is_other() {
        assert_eq!(classify(&parse_quote!(Vec<u16>)), TypeShape::Other);
        assert_eq!(classify(&parse_quote!(Vec<String>)), TypeShape::Other);
        assert_eq!(classify(&parse_quote!(usize)), TypeShape::Other);
        assert_eq!(classify(&parse_quote!(Status)), TypeShape::Other);
        // A user's own `Date` or `Bytes` is no library type.
        assert_eq!(classify(&parse_quote!(Date)), TypeShape::Other);
        assert_eq!(classify(&parse_quote!(Bytes)), TypeShape::Other);
        assert_eq!(classify(&parse_quote!(Box<String>)), TypeShape::Other);
        assert_eq!(classify(&parse_quote!(Rc<str>)), TypeShape::Other);
        assert_eq!(classify(&parse_quote!(&'static str)), TypeShape::Other);
        assert_eq!(classify(&parse_quote!(<T as Tr>::Out)), TypeShape::Other);
        assert_eq!(
            classify(&parse_quote!(Result<u8, String>)),
            TypeShape::Other
        );
        assert_eq!(classify(&parse_quote!(dyn Fn(u8))), TypeShape::Other);
        assert_eq!(classify(&parse_quote!((u8, u8))), TypeShape::Other);
    }

    #[test]
    fn option_unwraps_once_for_keys() {
        let shape = classify(&parse_quote!(Option<Uuid>));
        assert_eq!(unwrap_option(&shape), &TypeShape::Uuid);
        assert_eq!(unwrap_option(&TypeShape::String), &TypeShape::String);
        assert!(is_unsigned("u64"));
        assert!(!is_unsigned("i8"));
        assert_eq!(describe(&shape), "an Option of a Uuid");
    }
}
