//! Key templates: `"empid_{employee_id:06}"` -> literal text and placeholders.
//!
//! [`parse`] reads the syntax on its own (no knowledge of the struct); [`resolve`]
//! then binds placeholder names to fields and picks each placeholder's
//! [`KeyForm`].

use proc_macro2::Span;

use crate::error::{did_you_mean, Errors};
use crate::model::{Field, KeyForm, Placeholder, Segment, Template, TypeShape};

/// The widest zero padding: `u64::MAX` has 20 digits.
pub(crate) const MAX_WIDTH: usize = 20;

/// A placeholder as written, before its name is bound to a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RawSegment {
    Literal(String),
    Field { name: String, form: RawForm },
}

/// The `:form` part of a placeholder as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawForm {
    /// `{f}`
    Plain,
    /// `{f:0N}`
    Padded(usize),
    /// `{f:signed}`
    Signed,
    /// `{f:ticks}`
    Ticks,
    /// `{f:rticks}`
    ReverseTicks,
    /// `{f:iso}` (0 digits), `{f:iso(N)}`
    Iso(u8),
    /// `{f:shard(N)}`
    Shard(usize),
}

/// The most fractional digits of `{f:iso(N)}` (the service's 100 ns).
pub(crate) const MAX_ISO_DIGITS: u8 = 7;

/// The most buckets a shard placeholder may name.
pub(crate) const MAX_SHARDS: usize = 1000;

/// Parses template syntax. Adjacent literals are merged, `{{` and `}}` unescaped.
/// Returns every syntax error found (messages only: they all point at the
/// template's literal).
pub(crate) fn parse(source: &str) -> Result<Vec<RawSegment>, Vec<String>> {
    let (segments, errors) = parse_lenient(source);
    if errors.is_empty() {
        Ok(segments)
    } else {
        Err(errors)
    }
}

/// The segments that parse, and the syntax errors of the others.
fn parse_lenient(source: &str) -> (Vec<RawSegment>, Vec<String>) {
    let mut segments = Vec::new();
    let mut errors = Vec::new();
    let mut literal = String::new();
    let mut chars = source.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        match c {
            '{' if chars.peek().map(|&(_, next)| next) == Some('{') => {
                let _ = chars.next();
                literal.push('{');
            }
            '}' if chars.peek().map(|&(_, next)| next) == Some('}') => {
                let _ = chars.next();
                literal.push('}');
            }
            '}' => errors.push(format!(
                "unmatched `}}` at byte {start} of template \"{source}\"; write `}}}}` for a literal brace"
            )),
            '{' => {
                let mut body = String::new();
                let mut closed = false;
                while let Some(&(_, next)) = chars.peek() {
                    if next == '{' {
                        break;
                    }
                    let _ = chars.next();
                    if next == '}' {
                        closed = true;
                        break;
                    }
                    body.push(next);
                }
                if !closed {
                    errors.push(format!(
                        "unclosed `{{` at byte {start} of template \"{source}\"; close the placeholder with `}}` \
                         or write `{{{{` for a literal brace"
                    ));
                    // Kept for `recover` only (with an error, `parse` returns none).
                    if let Ok(field) = placeholder(&body) {
                        if !literal.is_empty() {
                            segments.push(RawSegment::Literal(std::mem::take(&mut literal)));
                        }
                        segments.push(field);
                    }
                    continue;
                }
                match placeholder(&body) {
                    Ok(field) => {
                        if !literal.is_empty() {
                            segments.push(RawSegment::Literal(std::mem::take(&mut literal)));
                        }
                        segments.push(field);
                    }
                    Err(message) => errors.push(message),
                }
            }
            other => literal.push(other),
        }
    }
    if !literal.is_empty() {
        segments.push(RawSegment::Literal(literal));
    }
    (segments, errors)
}

/// Reads the inside of `{..}`.
fn placeholder(body: &str) -> Result<RawSegment, String> {
    let (name, form) = match body.split_once(':') {
        Some((name, form)) => (name, Some(form)),
        None => (body, None),
    };
    if name.is_empty() {
        return Err(format!(
            "empty placeholder `{{{body}}}`; name a field, e.g. `{{employee_id}}` (write `{{{{` for a literal brace)"
        ));
    }
    if !is_identifier(name) {
        return Err(format!(
            "`{{{body}}}`: `{name}` is not a field name; a placeholder is `{{field}}` or `{{field:form}}`, \
             without spaces"
        ));
    }
    let form = match form {
        None => RawForm::Plain,
        Some(form) => raw_form(name, form)?,
    };
    Ok(RawSegment::Field {
        name: name.to_owned(),
        form,
    })
}

fn raw_form(name: &str, form: &str) -> Result<RawForm, String> {
    match form {
        "signed" => return Ok(RawForm::Signed),
        "ticks" => return Ok(RawForm::Ticks),
        "rticks" => return Ok(RawForm::ReverseTicks),
        "iso" => return Ok(RawForm::Iso(0)),
        _ => {}
    }
    if let Some(digits) = form.strip_prefix("iso(").and_then(|f| f.strip_suffix(')')) {
        return match digits.parse::<u8>() {
            Ok(n) if n <= MAX_ISO_DIGITS => Ok(RawForm::Iso(n)),
            _ => Err(format!(
                "`{{{name}:{form}}}`: the fractional digits must be a number from 0 to {MAX_ISO_DIGITS}, \
                 e.g. `{{{name}:iso(3)}}` for milliseconds"
            )),
        };
    }
    if let Some(count) = form
        .strip_prefix("shard(")
        .and_then(|f| f.strip_suffix(')'))
    {
        return match count.parse::<usize>() {
            Ok(n) if (2..=MAX_SHARDS).contains(&n) => Ok(RawForm::Shard(n)),
            _ => Err(format!(
                "`{{{name}:{form}}}`: the bucket count must be a number from 2 to {MAX_SHARDS}, \
                 e.g. `{{{name}:shard(16)}}`"
            )),
        };
    }
    let digits = form
        .strip_prefix('0')
        .filter(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()));
    let Some(digits) = digits else {
        let hint = if !form.is_empty() && form.bytes().all(|b| b.is_ascii_digit()) {
            format!(" (zero padding starts with 0: `{{{name}:0{form}}}`)")
        } else {
            String::new()
        };
        return Err(format!(
            "unknown key form `{form}` in `{{{name}:{form}}}`{hint}; the forms are `{{{name}}}` (text, or a Uuid), \
             `{{{name}:0N}}` (unsigned integer zero-padded to N digits, 1 to {MAX_WIDTH}), `{{{name}:signed}}` \
             (signed integer), `{{{name}:ticks}}` and `{{{name}:rticks}}` (date-time, oldest or newest first), \
             `{{{name}:iso}}` and `{{{name}:iso(N)}}` (date-time as ISO 8601 UTC text with N fractional \
             digits), `{{{name}:shard(N)}}` (a stable hash bucket of text, 0 to N-1)"
        ));
    };
    match digits.parse::<usize>() {
        Ok(width) if (1..=MAX_WIDTH).contains(&width) => Ok(RawForm::Padded(width)),
        _ => Err(format!(
            "zero padding `{{{name}:{form}}}` is out of range: the width must be 1 to {MAX_WIDTH} digits \
             (u64::MAX has 20), e.g. `{{{name}:06}}`"
        )),
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_identifier(text: &str) -> bool {
    let mut bytes = text.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Parses `literal` as a template over `fields`, reporting syntax errors and unknown
/// field names at the literal. `None` when anything was wrong.
pub(crate) fn resolve(
    literal: &syn::LitStr,
    fields: &[Field],
    errors: &mut Errors,
) -> Option<Template> {
    let source = literal.value();
    let span = literal.span();
    let raw = match parse(&source) {
        Ok(raw) => raw,
        Err(messages) => {
            for message in messages {
                errors.push(span, message);
            }
            return None;
        }
    };
    let mut segments = Vec::with_capacity(raw.len());
    let mut ok = true;
    for segment in raw {
        match segment {
            RawSegment::Literal(text) => segments.push(Segment::Literal(text)),
            RawSegment::Field { name, form } => match bind(&name, form, fields, span) {
                Ok(placeholder) => segments.push(Segment::Field(placeholder)),
                Err(error) => {
                    errors.combine(error);
                    ok = false;
                }
            },
        }
    }
    ok.then_some(Template {
        source,
        span,
        segments,
    })
}

/// The template as the user most likely meant it, reporting nothing: placeholders
/// that don't parse are left out, and an unknown field name is read as the field
/// it is closest to (or left out). Only for the items the derive still generates
/// after an error, so that uses of them add no errors of their own.
pub(crate) fn recover(literal: &syn::LitStr, fields: &[Field]) -> Template {
    let source = literal.value();
    let (raw, _) = parse_lenient(&source);
    let names: Vec<String> = fields.iter().map(|f| f.ident.unraw_string()).collect();
    let mut segments: Vec<Segment> = Vec::with_capacity(raw.len());
    for segment in raw {
        match segment {
            RawSegment::Literal(text) => match segments.last_mut() {
                Some(Segment::Literal(previous)) => previous.push_str(&text),
                _ => segments.push(Segment::Literal(text)),
            },
            RawSegment::Field { name, form } => {
                let meant = if names.contains(&name) {
                    Some(name.as_str())
                } else {
                    crate::error::closest(&name, names.iter().map(String::as_str))
                };
                if let Some(Ok(placeholder)) =
                    meant.map(|name| bind(name, form, fields, literal.span()))
                {
                    segments.push(Segment::Field(placeholder));
                }
            }
        }
    }
    Template {
        source,
        span: literal.span(),
        segments,
    }
}

fn bind(name: &str, form: RawForm, fields: &[Field], span: Span) -> syn::Result<Placeholder> {
    let Some(index) = fields.iter().position(|f| f.ident.unraw_string() == name) else {
        let names: Vec<String> = fields.iter().map(|f| f.ident.unraw_string()).collect();
        let hint = did_you_mean(name, names.iter().map(String::as_str));
        let hint = if hint.is_empty() {
            format!("; the fields are: {}", names.join(", "))
        } else {
            hint
        };
        return Err(syn::Error::new(
            span,
            format!("no field `{name}` in this struct for placeholder `{{{name}}}`{hint}"),
        ));
    };
    let form = match form {
        RawForm::Plain => match super::shape::unwrap_option(&fields[index].shape) {
            TypeShape::Uuid => KeyForm::Uuid,
            TypeShape::Date => KeyForm::Date,
            _ => KeyForm::Text,
        },
        RawForm::Padded(width) => KeyForm::Padded(width),
        RawForm::Signed => KeyForm::Signed,
        RawForm::Ticks => KeyForm::Ticks,
        RawForm::ReverseTicks => KeyForm::ReverseTicks,
        RawForm::Iso(digits) => KeyForm::Iso(digits),
        RawForm::Shard(n) => KeyForm::Shard(n),
    };
    Ok(Placeholder { field: index, form })
}

/// `ident.to_string()` without a raw `r#` prefix.
pub(crate) trait UnrawString {
    fn unraw_string(&self) -> String;
}

impl UnrawString for syn::Ident {
    fn unraw_string(&self) -> String {
        let text = self.to_string();
        match text.strip_prefix("r#") {
            Some(rest) => rest.to_owned(),
            None => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(text: &str) -> RawSegment {
        RawSegment::Literal(text.to_owned())
    }

    fn field(name: &str, form: RawForm) -> RawSegment {
        RawSegment::Field {
            name: name.to_owned(),
            form,
        }
    }

    fn first_error(source: &str) -> String {
        match parse(source) {
            Ok(segments) => panic!("{source:?} parsed as {segments:?}"),
            Err(errors) => errors.into_iter().next().unwrap_or_default(),
        }
    }

    #[test]
    fn literal_and_placeholders() {
        assert_eq!(
            parse("empid_{employee_id:06}").unwrap(),
            vec![lit("empid_"), field("employee_id", RawForm::Padded(6))]
        );
        assert_eq!(
            parse("{submitted:rticks}_{expense_id}").unwrap(),
            vec![
                field("submitted", RawForm::ReverseTicks),
                lit("_"),
                field("expense_id", RawForm::Plain)
            ]
        );
        assert_eq!(
            parse("{a:signed}{b:ticks}{c:020}{d:01}").unwrap(),
            vec![
                field("a", RawForm::Signed),
                field("b", RawForm::Ticks),
                field("c", RawForm::Padded(20)),
                field("d", RawForm::Padded(1)),
            ]
        );
        assert_eq!(parse("").unwrap(), vec![]);
        assert_eq!(parse("meta").unwrap(), vec![lit("meta")]);
    }

    #[test]
    fn escaped_braces_are_literal_text_and_merge() {
        assert_eq!(parse("a{{b}}c").unwrap(), vec![lit("a{b}c")]);
        assert_eq!(
            parse("{{{x}}}").unwrap(),
            vec![lit("{"), field("x", RawForm::Plain), lit("}")]
        );
    }

    #[test]
    fn syntax_errors_say_what_and_how() {
        let e = first_error("a_{x");
        assert!(e.starts_with("unclosed `{` at byte 2"), "{e}");
        assert!(e.contains("close the placeholder with `}`"), "{e}");
        let e = first_error("a}b");
        assert!(e.starts_with("unmatched `}` at byte 1"), "{e}");
        assert!(e.contains("write `}}`"), "{e}");
        let e = first_error("a{}b");
        assert!(e.starts_with("empty placeholder `{}`"), "{e}");
        let e = first_error("{x:abc}");
        assert!(e.starts_with("unknown key form `abc` in `{x:abc}`"), "{e}");
        assert!(
            e.contains("`{x:0N}`") && e.contains("`{x:signed}`") && e.contains("`{x:rticks}`"),
            "{e}"
        );
        let e = first_error("{x:6}");
        assert!(e.contains("(zero padding starts with 0: `{x:06}`)"), "{e}");
        let e = first_error("{x:}");
        assert!(e.starts_with("unknown key form `` in `{x:}`"), "{e}");
        assert!(first_error("{x:0}").starts_with("unknown key form `0`"));
        assert!(first_error("{x:00}").starts_with("zero padding `{x:00}` is out of range"));
        assert!(first_error("{x:021}").starts_with("zero padding `{x:021}` is out of range"));
        assert!(first_error("{x:099999999999999999999999999}").contains("out of range"));
        assert!(first_error("{ x }").starts_with("`{ x }`: ` x ` is not a field name"));
        assert!(first_error("{1x}").contains("is not a field name"));
        // `{` inside a placeholder: the first one is unclosed, the second parses.
        let errors = parse("{a{b}").unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with("unclosed `{` at byte 0"));
    }

    #[test]
    fn every_error_is_reported() {
        assert_eq!(parse("}{}{x:zz}{y").unwrap_err().len(), 4);
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("employee_id"));
        assert!(is_identifier("_x1"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("1x"));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier("é"));
    }
}
