//! Expansion tests on hand-built models: the output parses as Rust and has the
//! expected items and signatures. (End-to-end behaviour is tested on real derives in
//! `tests/tests/derive_expand.rs`.)

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};

use super::*;
use crate::model::{
    DefaultValue, Index, IndexKind, KeyForm, KeyUse, Placeholder, PropertyBody, Segment, Template,
    TypeShape, UnionVariant,
};

fn field(name: &str, ty: &str, shape: TypeShape, property: &str, codec: Codec) -> Field {
    Field {
        ident: format_ident!("{}", name),
        ty: syn::parse_str(ty).unwrap(),
        shape,
        property: property.to_owned(),
        property_span: Span::call_site(),
        codec,
        default: None,
        column: name.to_uppercase(),
        primary_key_use: None,
        encrypted: false,
        blob: false,
        spill: false,
        lazy: false,
    }
}

/// A template from pieces: `Ok(text)` is literal text, `Err((field, form))` a
/// placeholder.
fn template(source: &str, pieces: Vec<Result<&str, (usize, KeyForm)>>) -> Template {
    Template {
        source: source.to_owned(),
        span: Span::call_site(),
        segments: pieces
            .into_iter()
            .map(|piece| match piece {
                Ok(text) => Segment::Literal(text.to_owned()),
                Err((field, form)) => Segment::Field(Placeholder { field, form }),
            })
            .collect(),
    }
}

fn index(name: &str, kind: IndexKind, pk: Template, rk: Template) -> Index {
    Index {
        name: name.to_owned(),
        name_span: Span::call_site(),
        kind,
        table: None,
        partition_key: pk,
        partition_key_given: false,
        row_key: rk,
        include: None,
        unique: kind == IndexKind::Copy,
        same_partition: true,
    }
}

const DEPARTMENT: usize = 0;
const EMPLOYEE_ID: usize = 1;
const FIRST_NAME: usize = 2;
const EMAIL: usize = 3;
const NICKNAME: usize = 8;

/// The design card's `Employee`, with every codec, a default, a sparse index entity
/// and a partial copy in another table.
fn employee() -> EntityModel {
    let mut fields = vec![
        field(
            "department",
            "String",
            TypeShape::String,
            "department",
            Codec::Plain,
        ),
        field(
            "employee_id",
            "u32",
            TypeShape::Int("u32".into()),
            "employee_id",
            Codec::Plain,
        ),
        field(
            "first_name",
            "String",
            TypeShape::String,
            "FirstName",
            Codec::Plain,
        ),
        field("email", "String", TypeShape::String, "Email", Codec::Plain),
        field(
            "age",
            "i32",
            TypeShape::Int("i32".into()),
            "Age",
            Codec::Plain,
        ),
        field(
            "hired",
            "DateTime",
            TypeShape::DateTime,
            "Hired",
            Codec::Plain,
        ),
        field(
            "address",
            "Address",
            TypeShape::Other,
            "Address",
            Codec::Json,
        ),
        field(
            "scratch",
            "Option<String>",
            TypeShape::Option(Box::new(TypeShape::String)),
            "Scratch",
            Codec::Skip,
        ),
        field(
            "nickname",
            "Option<String>",
            TypeShape::Option(Box::new(TypeShape::String)),
            "Nickname",
            Codec::Plain,
        ),
        field(
            "score",
            "f64",
            TypeShape::Float,
            "Score",
            Codec::With(syn::parse_quote!(codec)),
        ),
    ];
    fields[DEPARTMENT].primary_key_use = Some(KeyUse::PartitionKey);
    fields[EMPLOYEE_ID].primary_key_use = Some(KeyUse::RowKey);
    fields[4].default = Some(DefaultValue::Trait);
    let pk = || template("{department}", vec![Err((DEPARTMENT, KeyForm::Text))]);
    let mut by_email = index(
        "by_email",
        IndexKind::Copy,
        template(
            "email_{department}",
            vec![Ok("email_"), Err((DEPARTMENT, KeyForm::Text))],
        ),
        template("{email}", vec![Err((EMAIL, KeyForm::Text))]),
    );
    by_email.table = Some("EmployeesByEmail".into());
    by_email.include = Some(vec![FIRST_NAME]);
    by_email.same_partition = false;
    EntityModel {
        allow_hot_partition: false,
        wide: false,
        ident: format_ident!("Employee"),
        vis: syn::parse_quote!(pub),
        krate: syn::parse_quote!(::tables_client),
        kind: "Employee".into(),
        kind_span: Span::call_site(),
        tag: crate::model::TagModel::Kind,
        version: 2,
        upgrade_from: vec![syn::parse_quote!(EmployeeV1)],
        partition_key: pk(),
        row_key: template(
            "empid_{employee_id:06}",
            vec![Ok("empid_"), Err((EMPLOYEE_ID, KeyForm::Padded(6)))],
        ),
        indexes: vec![
            index(
                "email",
                IndexKind::Copy,
                pk(),
                template(
                    "email_{email}",
                    vec![Ok("email_"), Err((EMAIL, KeyForm::Text))],
                ),
            ),
            by_email,
            index(
                "nick",
                IndexKind::List,
                pk(),
                template(
                    "nick_{nickname}",
                    vec![Ok("nick_"), Err((NICKNAME, KeyForm::Text))],
                ),
            ),
        ],
        fields,
    }
}

/// The items inside the generated `const _: () = { .. };`.
fn block_items(tokens: TokenStream) -> Vec<syn::Item> {
    let file: syn::File = syn::parse2(tokens).unwrap();
    assert_eq!(file.items.len(), 1, "one `const _` block");
    let syn::Item::Const(item) = &file.items[0] else {
        panic!("expected `const _`");
    };
    assert_eq!(item.ident, "_");
    let syn::Expr::Block(block) = &*item.expr else {
        panic!("expected a block");
    };
    block
        .block
        .stmts
        .iter()
        .filter_map(|s| match s {
            syn::Stmt::Item(item) => Some(item.clone()),
            _ => None,
        })
        .collect()
}

fn impls<'a>(items: &'a [syn::Item], trait_name: Option<&str>) -> Vec<&'a syn::ItemImpl> {
    items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(imp) => Some(imp),
            _ => None,
        })
        .filter(|imp| {
            let name = imp
                .trait_
                .as_ref()
                .and_then(|(_, path, _)| path.segments.last())
                .map(|s| s.ident.to_string());
            name.as_deref() == trait_name
        })
        .collect()
}

fn fn_sigs(imp: &syn::ItemImpl) -> Vec<String> {
    imp.items
        .iter()
        .filter_map(|item| match item {
            syn::ImplItem::Fn(f) => Some(f.sig.to_token_stream().to_string()),
            _ => None,
        })
        .collect()
}

fn names<T: AsRef<str>>(sigs: &[T]) -> Vec<String> {
    sigs.iter()
        .map(|s| {
            let s = s.as_ref();
            let start = s.find("fn ").unwrap() + 3;
            s[start..].split([' ', '(', '<']).next().unwrap().to_owned()
        })
        .collect()
}

fn has_attr(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().any(|a| a.path().is_ident(name))
}

#[test]
fn entity_expansion_has_the_generated_api() {
    let items = block_items(entity(&employee()));
    let inherent = impls(&items, None);
    assert_eq!(inherent.len(), 1);
    let sigs = fn_sigs(inherent[0]);
    assert_eq!(
        names(&sigs),
        [
            "key",
            "partition_key",
            "row_key",
            "email_key",
            "email_partition",
            "by_email_key",
            "by_email_partition",
            "nick_key",
            "employee_id_range",
            "email_email_range",
            "email_email_prefix",
            "by_email_email_range",
            "by_email_email_prefix",
            "nick_nickname_range",
            "nick_nickname_prefix",
        ]
    );
    // Parameters are named after the fields; text is `&str`, others by value,
    // `Option<T>` fields of an index by their `T`.
    assert!(
        sigs[0].contains("key (department : & str , employee_id : u32)"),
        "{}",
        sigs[0]
    );
    assert!(
        sigs[4].contains("email_partition (department : & str) -> :: tables_client :: __private :: Result < :: tables_client :: __private :: IndexPartition < Self , 0 > >"),
        "{}",
        sigs[4]
    );
    assert!(
        sigs[7].contains("nick_key (department : & str , nickname : & str)"),
        "{}",
        sigs[7]
    );
    assert!(
        sigs[8].contains("employee_id_range (range : impl :: core :: ops :: RangeBounds < u32 >)"),
        "{}",
        sigs[8]
    );
    assert!(
        sigs[10].contains("email_email_prefix (prefix : & str)"),
        "{}",
        sigs[10]
    );
    for item in &inherent[0].items {
        let attrs = match item {
            syn::ImplItem::Fn(f) => &f.attrs,
            syn::ImplItem::Const(c) => &c.attrs,
            _ => panic!("unexpected item"),
        };
        assert!(has_attr(attrs, "doc"), "every generated item is documented");
    }
    let columns: Vec<String> = inherent[0]
        .items
        .iter()
        .filter_map(|item| match item {
            syn::ImplItem::Const(c) => Some(c.ident.to_string()),
            _ => None,
        })
        .collect();
    // Plain stored fields only: not key fields, json, with or skip.
    assert_eq!(columns, ["FIRST_NAME", "EMAIL", "AGE", "HIRED", "NICKNAME"]);

    let entity_impl = impls(&items, Some("Entity"));
    assert_eq!(entity_impl.len(), 1);
    assert!(has_attr(&entity_impl[0].attrs, "automatically_derived"));
    assert_eq!(
        names(&fn_sigs(entity_impl[0])),
        ["schema", "decodes_version"]
    );
    // The codec is `Row`'s alone: nothing forwards from one trait to the other.
    let row_impl = impls(&items, Some("Row"));
    assert_eq!(row_impl.len(), 1);
    assert!(has_attr(&row_impl[0].attrs, "automatically_derived"));
    assert_eq!(
        names(&fn_sigs(row_impl[0])),
        [
            "schemas",
            "entity_key",
            "to_entity",
            "from_entity",
            "index_copies",
            "index_entries",
        ]
    );
}

#[test]
fn entity_expansion_uses_only_absolute_runtime_paths() {
    let text = entity(&employee()).to_string();
    for helper in [
        "new_entity",
        "push_property",
        "encode_field",
        "encode_json",
        "check_tag",
        "take_properties",
        "decode_field",
        "decode_json",
        "decode_with",
        "missing_is_default",
        "write_str_part",
        "write_padded",
        "finish_partition_key",
        "finish_row_key",
        "range_padded",
        "range_str",
        "prefix_str",
        "index_copy",
        "index_entry_for",
        "str_eq",
        "unknown_version",
    ] {
        assert!(
            text.contains(&format!(":: tables_client :: __private :: {helper}")),
            "{helper} is called through the runtime path"
        );
    }
    // The key writers size the key once: literal + fixed widths (+ text lengths).
    assert!(text.contains("with_capacity (12)"), "empid_ + 6 digits");
    assert!(text.contains("with_capacity (0 + department . len ())"));
    // The properties are sorted into slots in one `match`, skip decodes as Default.
    assert_eq!(
        text.matches(" for __property in __taken . iter_mut ()")
            .count(),
        1
    );
    assert!(text.contains("\"Age\" => __slot_age ="));
    assert!(!text.contains("__slot_scratch"));
    // The sparse index writes no entry for a `None` nickname.
    assert!(text.contains(
        "if let :: core :: option :: Option :: Some (__some_nickname) = & self . nickname"
    ));
}

#[test]
fn schema_statics_describe_properties_and_indexes() {
    let items = block_items(entity(&employee()));
    let statics: Vec<String> = items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Static(s) => Some(s.to_token_stream().to_string()),
            _ => None,
        })
        .collect();
    // The index and entity schemas, one codec per plain stored field (5), then one
    // per key field and key trait (`employee_id` as an integer; text fields are
    // written as `&str`).
    assert_eq!(statics.len(), 8, "{statics:#?}");
    assert!(statics[2..7]
        .iter()
        .all(|codec| codec.contains("FieldCodec")));
    assert!(statics[7].contains(
        "static __TABLES_KEYINT_employee_id : :: tables_client :: __private :: KeyIntCodec < u32 >"
    ));
    let (indexes, schema) = (&statics[0], &statics[1]);
    assert!(indexes.contains("[:: tables_client :: __private :: IndexSchema ; 3]"));
    assert!(indexes.contains("table : :: core :: option :: Option :: Some (\"EmployeesByEmail\")"));
    assert!(indexes.contains("include : :: core :: option :: Option :: Some (& [\"FirstName\"])"));
    assert!(indexes.contains("kind : :: tables_client :: __private :: IndexKind :: List"));
    assert!(schema.contains("version : 2"));
    assert!(schema.contains("row_key : \"empid_{employee_id:06}\""));
    // Key fields and skipped fields are not properties.
    assert!(!schema.contains("field : \"department\""));
    assert!(!schema.contains("field : \"scratch\""));
    assert!(schema.contains(
        "name : \"Address\" , stored_as : :: tables_client :: __private :: StoredAs :: Json"
    ));
    assert!(schema.contains(
        "name : \"Score\" , stored_as : :: tables_client :: __private :: StoredAs :: Custom"
    ));
}

#[test]
fn upgrades_are_checked_at_compile_time() {
    let items = block_items(entity(&employee()));
    let asserts: Vec<String> = items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Const(c) => Some(c.to_token_stream().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(asserts.len(), 2);
    assert!(asserts[0].contains(
        "str_eq (< EmployeeV1 as :: tables_client :: __private :: Entity > :: KIND , \"Employee\")"
    ));
    assert!(asserts[1]
        .contains("< EmployeeV1 as :: tables_client :: __private :: Entity > :: VERSION < 2"));
}

#[test]
fn a_minimal_entity_overrides_no_index_methods() {
    let mut model = employee();
    model.indexes.clear();
    model.upgrade_from.clear();
    model.fields.truncate(2);
    model.partition_key = template("", vec![]);
    let items = block_items(entity(&model));
    let row_impl = impls(&items, Some("Row"));
    assert_eq!(
        names(&fn_sigs(row_impl[0])),
        ["schemas", "entity_key", "to_entity", "from_entity"]
    );
    let text = quote!(#(#items)*).to_string();
    // No properties: no slots, no `mut entity`, no name cache.
    assert!(!text.contains("take_properties"));
    assert!(!text.contains("mut entity"));
    assert!(!text.contains("PropertyNames"));
    assert!(text.contains("fn partition_key () ->"));
}

#[test]
fn a_bad_column_name_is_an_error_not_a_panic() {
    let mut model = employee();
    model.fields[4].column = "not-an-ident".into();
    let text = entity(&model).to_string();
    assert!(text.contains("compile_error"));
    assert!(text.contains("impl :: tables_client :: __private :: Entity for Employee"));
}

fn union_model(other: bool) -> UnionModel {
    UnionModel {
        ident: format_ident!("Sales"),
        krate: syn::parse_quote!(::tables_client),
        variants: vec![
            UnionVariant {
                ident: format_ident!("Employee"),
                ty: syn::parse_quote!(Employee),
            },
            UnionVariant {
                ident: format_ident!("Department"),
                ty: syn::parse_quote!(crate::Department),
            },
        ],
        other: other.then(|| format_ident!("Other")),
    }
}

#[test]
fn union_expansion() {
    let items = block_items(union(&union_model(true)));
    let union_impl = impls(&items, Some("EntityUnion"));
    assert_eq!(union_impl.len(), 1);
    assert_eq!(names(&fn_sigs(union_impl[0])), ["kind"]);
    let row_impl = impls(&items, Some("Row"));
    assert_eq!(
        names(&fn_sigs(row_impl[0])),
        [
            "schemas",
            "entity_key",
            "to_entity",
            "from_entity",
            "index_copies",
            "index_entries"
        ]
    );
    assert_eq!(
        impls(&items, Some("From")).len(),
        3,
        "two variants and the catch-all"
    );
    let text = quote!(#(#items)*).to_string();
    assert!(text.contains("kinds_distinct"));
    assert!(text.contains("Ok (Sales :: Other (entity))"));

    let text = union(&union_model(false)).to_string();
    assert!(text.contains("unknown_kind"));
    assert!(!text.contains("Other"));
}

fn property_model(body: PropertyBody) -> PropertyModel {
    PropertyModel {
        ident: format_ident!("Level"),
        krate: syn::parse_quote!(crate),
        body,
    }
}

fn trait_impls(tokens: TokenStream) -> Vec<String> {
    let items = block_items(tokens);
    items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(imp) => imp
                .trait_
                .as_ref()
                .map(|(_, path, _)| path.segments.last().unwrap().ident.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn property_expansion_by_shape() {
    let unit = PropertyBody::UnitEnum(vec![
        (format_ident!("Junior"), "junior".into()),
        (format_ident!("Senior"), "senior".into()),
    ]);
    let tokens = property(&property_model(unit));
    assert!(tokens
        .to_string()
        .contains("\"junior\" => :: core :: result :: Result :: Ok (Level :: Junior)"));
    assert_eq!(trait_impls(tokens), ["Property", "Filterable", "KeyText"]);
    let newtype = |ty: &str, shape| PropertyBody::Newtype {
        ty: Box::new(syn::parse_str(ty).unwrap()),
        shape,
    };
    for (ty, shape, traits) in [
        (
            "String",
            TypeShape::String,
            vec!["Property", "Filterable", "KeyText"],
        ),
        (
            "Box<str>",
            TypeShape::Str,
            vec!["Property", "Filterable", "KeyText"],
        ),
        (
            "Uuid",
            TypeShape::Uuid,
            vec!["Property", "Filterable", "KeyText"],
        ),
        (
            "u32",
            TypeShape::Int("u32".into()),
            vec!["Property", "Filterable", "KeyInt"],
        ),
        (
            "char",
            TypeShape::Char,
            vec!["Property", "Filterable", "KeyText", "KeyInt"],
        ),
        (
            "NaiveDate",
            TypeShape::Date,
            vec!["Property", "Filterable", "KeyDate"],
        ),
        (
            "DateTime",
            TypeShape::DateTime,
            vec!["Property", "Filterable", "KeyTime"],
        ),
        ("f64", TypeShape::Float, vec!["Property", "Filterable"]),
        (
            "Decimal",
            TypeShape::Decimal,
            vec!["Property", "Filterable"],
        ),
        ("Other", TypeShape::Other, vec!["Property", "Filterable"]),
    ] {
        assert_eq!(
            trait_impls(property(&property_model(newtype(ty, shape)))),
            traits,
            "{ty}"
        );
    }
}

#[test]
fn beside_errors_the_inherent_items_keep_their_signatures_and_never_run() {
    let krate: syn::Path = syn::parse_quote!(::tables_client);
    // `employe_id` is a typo: the derive reports it, and still generates `key`,
    // `row_key`, the range helper and the columns as the user meant them.
    let input: syn::DeriveInput = syn::parse_quote!(
        #[entity(partition_key = "{department}", row_key = "empid_{employe_id:06}")]
        #[entity(unique_index(name = "email", row_key = "email_{emial}"))]
        struct Employee {
            department: String,
            employee_id: u32,
            email: String,
            age: i32,
        }
    );
    let (model, errors) = crate::attr::entity_recovering(&input);
    let errors = errors.expect("the typos are errors");
    assert_eq!(
        errors.clone().into_iter().count(),
        1,
        "one error: the row_key's"
    );
    let tokens = entity_with_errors(&input, &krate, model.as_ref(), errors);
    let file: syn::File = syn::parse2(quote::quote!(#tokens)).unwrap_or_else(|e| panic!("{e}"));
    let text = quote::quote!(#file).to_string();
    for item in [
        "fn key (department : & str , employee_id : u32)",
        "fn row_key (employee_id : u32)",
        "fn employee_id_range",
        "fn email_key (department : & str , email : & str)",
        "const AGE : :: tables_client :: __private :: TypedColumn < Self , i32 >",
    ] {
        assert!(text.contains(item), "{item} missing from {text}");
    }
    // The bodies write no key: they return the derive's error.
    assert!(!text.contains("write_padded"), "{text}");
    assert!(text.contains("the derive failed"));
}

#[test]
fn stubs_carry_the_errors_and_an_impl() {
    let krate: syn::Path = syn::parse_quote!(::tables_client);
    let error = || syn::Error::new(Span::call_site(), "bad");
    let input: syn::DeriveInput = syn::parse_quote!(
        struct Employee {
            a: u32,
        }
    );
    let text = entity_with_errors(&input, &krate, None, error()).to_string();
    assert!(text.contains("compile_error"));
    assert!(text.contains("impl :: tables_client :: __private :: Entity for Employee"));

    let generic: syn::DeriveInput = syn::parse_quote!(
        struct Employee<T> {
            a: T,
        }
    );
    let text = entity_with_errors(&generic, &krate, None, error()).to_string();
    assert!(text.contains("compile_error"));
    assert!(!text.contains("impl"), "no impl for a generic type");

    let input: syn::DeriveInput = syn::parse_quote!(
        enum Sales {
            A(A),
        }
    );
    let tokens = union_stub(&input, &krate, error());
    assert!(tokens.to_string().contains("EntityUnion for Sales"));

    let input: syn::DeriveInput = syn::parse_quote!(
        enum Level {
            A,
        }
    );
    let text = property_stub(&input, &krate, error()).to_string();
    assert!(text.contains("Property for Level") && text.contains("KeyText for Level"));
    let input: syn::DeriveInput = syn::parse_quote!(
        struct Email(String);
    );
    let text = property_stub(&input, &krate, error()).to_string();
    assert!(text.contains("Property for Email") && !text.contains("KeyText"));
}
