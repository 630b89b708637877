//! Rules over one placeholder: what its field may be and which key form its type
//! takes.

use super::Site;
use crate::attr::shape::{describe, is_unsigned, unstorable, unwrap_option};
use crate::error::Errors;
use crate::model::{Codec, EntityModel, Field, KeyForm, Segment, TypeShape};

/// One placeholder being checked.
pub(crate) struct Slot<'a> {
    pub(crate) site: &'a Site<'a>,
    pub(crate) field: &'a Field,
    pub(crate) form: KeyForm,
}

impl Slot<'_> {
    fn name(&self) -> String {
        crate::attr::template::UnrawString::unraw_string(&self.field.ident)
    }

    /// The placeholder as written: `{x}`, `{x:06}`, `{x:signed}`...
    fn written(&self) -> String {
        placeholder_text(&self.name(), self.form)
    }

    /// The shape the key form applies to: an index keys on the inside of an
    /// `Option` (sparse index), the primary key on the field's own shape.
    fn shape(&self) -> &TypeShape {
        if self.site.is_primary() {
            &self.field.shape
        } else {
            unwrap_option(&self.field.shape)
        }
    }

    /// "`{x:06}` in row_key "..": " — how every placeholder message starts.
    fn at(&self) -> String {
        format!("`{}` in {}", self.written(), self.site.describe())
    }
}

/// `{x}` / `{x:06}` / `{x:signed}` ...
pub(crate) fn placeholder_text(name: &str, form: KeyForm) -> String {
    match form {
        KeyForm::Text | KeyForm::Uuid | KeyForm::Date => format!("{{{name}}}"),
        KeyForm::Padded(width) => format!("{{{name}:0{width}}}"),
        KeyForm::Signed => format!("{{{name}:signed}}"),
        KeyForm::Ticks => format!("{{{name}:ticks}}"),
        KeyForm::ReverseTicks => format!("{{{name}:rticks}}"),
        KeyForm::Iso(0) => format!("{{{name}:iso}}"),
        KeyForm::Iso(digits) => format!("{{{name}:iso({digits})}}"),
        KeyForm::Shard(buckets) => format!("{{{name}:shard({buckets})}}"),
    }
}

/// The form a shape should be written with, for "write .. instead" hints.
fn suggested_form(name: &str, shape: &TypeShape) -> String {
    match shape {
        TypeShape::Int(int) if is_unsigned(int) => format!("`{{{name}:0{}}}`", max_digits(int)),
        TypeShape::Int(_) => format!("`{{{name}:signed}}`"),
        TypeShape::DateTime => {
            format!("`{{{name}:ticks}}` (oldest first) or `{{{name}:rticks}}` (newest first)")
        }
        TypeShape::Char => format!(
            "`{{{name}}}` (the character) or `{{{name}:07}}` (its code point, which sorts exactly like char)"
        ),
        _ => format!("`{{{name}}}`"),
    }
}

/// Digits of the largest value of an unsigned integer type.
fn max_digits(int: &str) -> usize {
    match int {
        "u8" => 3,
        "u16" => 5,
        "u32" => 10,
        _ => 20,
    }
}

/// A rule over one placeholder: the message when it is broken.
type PlaceholderRule = fn(&Slot<'_>) -> Option<String>;

/// In order; a placeholder reports the first rule it breaks only.
const PLACEHOLDER_RULES: [PlaceholderRule; 9] = [
    stored_field,
    shard_of_text_in_primary,
    present_in_primary,
    keyable_shape,
    integer_has_width,
    date_time_has_ticks,
    ticks_on_date_time,
    padding_on_integer,
    signed_on_signed,
];

/// Runs [`PLACEHOLDER_RULES`] over every placeholder of a template.
pub(crate) fn placeholders(model: &EntityModel, site: &Site<'_>, errors: &mut Errors) {
    for segment in &site.template.segments {
        let Segment::Field(placeholder) = segment else {
            continue;
        };
        let Some(field) = model.fields.get(placeholder.field) else {
            continue;
        };
        if unstorable(&field.shape).is_some() {
            continue; // reported once, at the field's type (types::storable_fields)
        }
        let slot = Slot {
            site,
            field,
            form: placeholder.form,
        };
        if let Some(message) = PLACEHOLDER_RULES.iter().find_map(|rule| rule(&slot)) {
            errors.push(site.template.span, message);
        }
    }
}

/// A shard bucket hashes a `String` and spreads the primary rows.
fn shard_of_text_in_primary(slot: &Slot<'_>) -> Option<String> {
    if !matches!(slot.form, KeyForm::Shard(_)) {
        return None;
    }
    let name = slot.name();
    if !slot.site.is_primary() {
        return Some(format!(
            "{}: a shard bucket spreads the primary rows over partitions; an index key can't \
             hold one (write `{{{name}}}`)",
            slot.at()
        ));
    }
    if !matches!(slot.field.shape, TypeShape::String) {
        return Some(format!(
            "{}: a shard bucket hashes text, and `{name}` is {}: shard by a `String` field",
            slot.at(),
            describe(&slot.field.shape)
        ));
    }
    None
}

/// Rule 5: a key field needs a value and a key form: not `skip`, `json` or `with`.
fn stored_field(slot: &Slot<'_>) -> Option<String> {
    let name = slot.name();
    if slot.field.blob {
        return Some(format!(
            "{}: `{name}` lives in a blob (`blob`), which has no key form: key on another \
             field, or remove `blob`",
            slot.at()
        ));
    }
    if slot.field.encrypted {
        return Some(format!(
            "{}: `{name}` is encrypted (`encrypted`), and keys are stored and compared in \
             plaintext: an encrypted field can't be part of a key or an index key; key on another \
             field, or remove `encrypted`",
            slot.at()
        ));
    }
    let why = match slot.field.codec {
        Codec::Plain => return None,
        Codec::Skip => format!("`{name}` is `skip`, so it has no value to write into the key; remove `skip` or the placeholder"),
        Codec::Json => format!(
            "`{name}` is stored as JSON (`json`), which has no key form; remove `json` to key on the field's \
             own type, or remove the placeholder"
        ),
        Codec::With(_) => format!(
            "`{name}` has a custom codec (`with`), which has no key form; remove `with` to key on the field's \
             own type, or remove the placeholder"
        ),
        Codec::Others => format!(
            "`{name}` holds the other properties (`other_properties`), which have no key form; remove \
             the placeholder"
        ),
        Codec::Series(_) => format!(
            "`{name}` is a data series (`series`), many properties with no key form; key on another \
             field, or remove the placeholder"
        ),
    };
    Some(format!("{}: {why}", slot.at()))
}

/// Rule 9: a primary key part can't be absent.
fn present_in_primary(slot: &Slot<'_>) -> Option<String> {
    (slot.site.is_primary() && matches!(slot.field.shape, TypeShape::Option(_))).then(|| {
        format!(
            "{}: `{}` is an Option, but a primary key part can't be absent; make the field non-optional \
             (an Option may key an index: no index row is written while it is None)",
            slot.at(),
            slot.name()
        )
    })
}

/// Rule 9: floats, bools and bytes have no key form.
fn keyable_shape(slot: &Slot<'_>) -> Option<String> {
    let shape = slot.shape();
    matches!(
        shape,
        TypeShape::Float
            | TypeShape::Bool
            | TypeShape::Bytes
            | TypeShape::Duration
            | TypeShape::Decimal
            | TypeShape::Option(_)
    )
    .then(|| {
        let name = slot.name();
        format!(
            "{}: `{name}` is {}, which can't be part of a key (keys hold text, chars, integers, Uuids, \
             dates and date-times); remove the placeholder and keep `{name}` as a plain property",
            slot.at(),
            describe(shape)
        )
    })
}

/// Rule 7: an integer written as plain text sorts wrongly.
fn integer_has_width(slot: &Slot<'_>) -> Option<String> {
    let TypeShape::Int(int) = slot.shape() else {
        return None;
    };
    if slot.form != KeyForm::Text {
        return None;
    }
    let name = slot.name();
    let fix = if is_unsigned(int) {
        format!(
            "write `{{{name}:0N}}` with N digits, e.g. `{{{name}:0{}}}` (wide enough for any {int})",
            max_digits(int)
        )
    } else {
        format!("write `{{{name}:signed}}` (negatives sort first), or `{{{name}:0N}}` if it is never negative")
    };
    Some(format!(
        "{}: `{name}` is an integer ({int}), and written as plain text it would sort as text (10 before 9); {fix}",
        slot.at()
    ))
}

/// Rule 8: a date-time is written as ticks.
fn date_time_has_ticks(slot: &Slot<'_>) -> Option<String> {
    let needs_ticks = *slot.shape() == TypeShape::DateTime
        && matches!(
            slot.form,
            KeyForm::Text | KeyForm::Padded(_) | KeyForm::Signed
        );
    needs_ticks.then(|| {
        let name = slot.name();
        format!(
            "{}: `{name}` is a date-time; write `{{{name}:ticks}}` (oldest first) or `{{{name}:rticks}}` (newest first)",
            slot.at()
        )
    })
}

/// Rule 8: `:ticks` / `:rticks` are for date-times.
fn ticks_on_date_time(slot: &Slot<'_>) -> Option<String> {
    let shape = slot.shape();
    let misused = matches!(
        slot.form,
        KeyForm::Ticks | KeyForm::ReverseTicks | KeyForm::Iso(_)
    ) && matches!(
        shape,
        TypeShape::Int(_)
            | TypeShape::String
            | TypeShape::Str
            | TypeShape::Uuid
            | TypeShape::Char
            | TypeShape::Date
    );
    misused.then(|| {
        let name = slot.name();
        let form = if matches!(slot.form, KeyForm::Iso(_)) {
            "ISO 8601 instants"
        } else {
            "ticks"
        };
        format!(
            "{}: {form} are for date-times, and `{name}` is {}; write {}",
            slot.at(),
            describe(shape),
            suggested_form(&name, shape)
        )
    })
}

/// Rule 8: zero padding is for integers.
fn padding_on_integer(slot: &Slot<'_>) -> Option<String> {
    let shape = slot.shape();
    let misused = matches!(slot.form, KeyForm::Padded(_))
        && matches!(
            shape,
            TypeShape::String | TypeShape::Str | TypeShape::Uuid | TypeShape::Date
        );
    misused.then(|| {
        let name = slot.name();
        format!(
            "{}: zero padding is for integers, and `{name}` is {}; write {}",
            slot.at(),
            describe(shape),
            suggested_form(&name, shape)
        )
    })
}

/// Rule 8: `:signed` is for signed integers.
fn signed_on_signed(slot: &Slot<'_>) -> Option<String> {
    if slot.form != KeyForm::Signed {
        return None;
    }
    let shape = slot.shape();
    let name = slot.name();
    match shape {
        TypeShape::Int(int) if is_unsigned(int) => Some(format!(
            "{}: `:signed` is for signed integers, and `{name}` is a {int} (never negative); write {}",
            slot.at(),
            suggested_form(&name, shape)
        )),
        TypeShape::String
        | TypeShape::Str
        | TypeShape::Uuid
        | TypeShape::Char
        | TypeShape::Date => Some(format!(
            "{}: `:signed` is for signed integers, and `{name}` is {}; write {}",
            slot.at(),
            describe(shape),
            suggested_form(&name, shape)
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::super::test_support::{assert_one_error, entity_errors};

    #[test]
    fn a_good_entity_passes() {
        let errors = entity_errors(parse_quote! {
                    #[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
                    #[entity(unique_index(name = "email", row_key = "email_{email}"))]
                    #[entity(unique_index(name = "by_email", table = "EmployeesByEmail", partition_key = "email_{department}",
                                   row_key = "{email}", include(first_name)
        ))]
                    #[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
                    #[entity(index(name = "by_boss", table = "ByBoss", partition_key = "{boss}",
                                   row_key = "{department}_{employee_id:06}"))]
                    struct Employee {
                        department: String,
                        employee_id: u32,
                        first_name: String,
                        last_name: String,
                        email: String,
                        boss: Option<uuid::Uuid>,
                        #[entity(json)] address: Address,
                        #[entity(skip)] scratch: Option<String>,
                    }
                });
        assert_eq!(errors, Vec::<String>::new());
        let errors = entity_errors(parse_quote! {
            #[entity(partition_key = "{employee_id}", row_key = "{submitted:rticks}_{expense_id}")]
            struct Expense { employee_id: String, submitted: DateTime, expense_id: Uuid, amount: f64, when: Option<i64> }
        });
        assert_eq!(errors, Vec::<String>::new());
        let errors = entity_errors(parse_quote! {
            #[entity(partition_key = "{n:signed}", row_key = "{status}_{at:ticks}_{d:06}")]
            struct Other { n: i64, status: Status, at: DateTime, d: Newtype }
        });
        assert_eq!(errors, Vec::<String>::new());
    }

    #[test]
    fn key_field_must_be_stored() {
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "{a}", row_key = "x")]
                struct E {
                    #[entity(skip)]
                    a: String,
                }
            ),
            &[
                "`{a}` in partition_key \"{a}\": `a` is `skip`",
                "remove `skip` or the placeholder",
            ],
        );
        assert_one_error(
            parse_quote!(
                #[entity(
                    partition_key = "p",
                    row_key = "x",
                    index(name = "i", row_key = "i_{a}")
                )]
                struct E {
                    #[entity(json)]
                    a: String,
                }
            ),
            &["`{a}` in the row_key \"i_{a}\" of index `i`: `a` is stored as JSON"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(
                    partition_key = "p",
                    row_key = "x",
                    index(name = "i", row_key = "i_{a}")
                )]
                struct E {
                    #[entity(with = m)]
                    a: String,
                }
            ),
            &["custom codec (`with`)"],
        );
    }

    #[test]
    fn options_key_indexes_only() {
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{a}")]
                struct E {
                    a: Option<String>,
                }
            ),
            &[
                "`a` is an Option, but a primary key part can't be absent",
                "make the field non-optional",
            ],
        );
        assert_one_error(
            parse_quote!(
                #[entity(
                    partition_key = "p",
                    row_key = "x",
                    index(name = "i", row_key = "i_{a}")
                )]
                struct E {
                    a: Option<u8>,
                }
            ),
            &["`a` is an integer (u8)", "`{a:03}`"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(
                    partition_key = "p",
                    row_key = "x",
                    index(name = "i", row_key = "i_{a}")
                )]
                struct E {
                    a: Option<Option<String>>,
                }
            ),
            &["`a` is an Option of a String, which can't be part of a key"],
        );
    }

    #[test]
    fn unkeyable_shapes() {
        for ty in [
            quote::quote!(f64),
            quote::quote!(bool),
            quote::quote!(Vec<u8>),
        ] {
            assert_one_error(
                parse_quote!(#[entity(partition_key = "p", row_key = "{a}")] struct E { a: #ty }),
                &[
                    "which can't be part of a key",
                    "keep `a` as a plain property",
                ],
            );
        }
    }

    #[test]
    fn integers_need_a_width() {
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "id_{a}")]
                struct E {
                    a: u32,
                }
            ),
            &[
                "`a` is an integer (u32)",
                "10 before 9",
                "`{a:0N}`",
                "`{a:010}`",
            ],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{a}")]
                struct E {
                    a: i16,
                }
            ),
            &["`{a:signed}`"],
        );
    }

    #[test]
    fn date_times_need_ticks_and_ticks_need_date_times() {
        for form in ["{t}", "{t:06}", "{t:signed}"] {
            assert_one_error(
                parse_quote!(#[entity(partition_key = "p", row_key = #form)] struct E { t: DateTime }),
                &["`t` is a date-time; write `{t:ticks}` (oldest first) or `{t:rticks}` (newest first)"],
            );
        }
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{t:ticks}")]
                struct E {
                    t: u64,
                }
            ),
            &["ticks are for date-times, and `t` is an integer (u64); write `{t:020}`"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{t:rticks}")]
                struct E {
                    t: String,
                }
            ),
            &["write `{t}`"],
        );
    }

    #[test]
    fn new_types_take_their_key_forms() {
        let errors = entity_errors(parse_quote! {
            #[entity(partition_key = "{c}_{d}", row_key = "{n:07}_{day}_{b:signed}_{s}")]
            struct E {
                c: char, d: chrono::NaiveDate, n: char, day: time::Date, b: i8, s: Box<str>,
                since: std::time::Duration, price: rust_decimal::Decimal,
            }
        });
        assert_eq!(errors, Vec::<String>::new());
        assert_one_error(
            parse_quote!(#[entity(partition_key = "p", row_key = "{c:signed}")] struct E { c: char }),
            &["`:signed` is for signed integers, and `c` is a char; write `{c}` (the character) or `{c:07}`"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{d:ticks}")]
                struct E {
                    d: chrono::NaiveDate,
                }
            ),
            &["ticks are for date-times, and `d` is a date; write `{d}`"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{d:08}")]
                struct E {
                    d: time::Date,
                }
            ),
            &["zero padding is for integers, and `d` is a date; write `{d}`"],
        );
        for ty in [
            quote::quote!(std::time::Duration),
            quote::quote!(Decimal),
            quote::quote!(bytes::Bytes),
        ] {
            assert_one_error(
                parse_quote!(#[entity(partition_key = "p", row_key = "{a}")] struct E { a: #ty }),
                &["which can't be part of a key"],
            );
        }
    }

    #[test]
    fn padding_and_signed_need_integers() {
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{s:06}")]
                struct E {
                    s: String,
                }
            ),
            &["zero padding is for integers, and `s` is a String; write `{s}`"],
        );
        assert_one_error(
            parse_quote!(
                #[entity(partition_key = "p", row_key = "{s:signed}")]
                struct E {
                    s: Uuid,
                }
            ),
            &["`:signed` is for signed integers, and `s` is a Uuid"],
        );
        assert_one_error(
            parse_quote!(#[entity(partition_key = "p", row_key = "{n:signed}")] struct E { n: u16 }),
            &["`{n:signed}` in row_key \"{n:signed}\": `:signed` is for signed integers, and `n` is a u16 (never negative); write `{n:05}`"],
        );
    }
}
