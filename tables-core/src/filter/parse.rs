//! Parsing OData `$filter` text (the language [`Filter`]'s `Display` writes and the
//! service's documentation uses) into a [`Filter`].
//!
//! Grammar, keywords lowercase as the service requires:
//!
//! ```text
//! filter     = or-expr
//! or-expr    = and-expr *( "or" and-expr )        ; left associative
//! and-expr   = unary *( "and" unary )             ; left associative
//! unary      = "not" unary / primary
//! primary    = "(" or-expr ")" / comparison / "true" / "false"
//! comparison = property op literal / literal op property
//! op         = "eq" / "ne" / "gt" / "ge" / "lt" / "le"
//! ```

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};
use crate::filter::ast::{CmpOp, Filter};
use crate::value::Value;

/// Deepest nesting of parentheses and `not` the parser accepts.
const MAX_DEPTH: usize = 64;
/// Most comparisons and constants the parser accepts (the service allows 15
/// comparisons; [`Filter::validate`] enforces that). Bounds the tree's depth.
const MAX_TERMS: usize = 256;

impl Filter {
    /// Parses OData `$filter` text: the raw-text escape hatch (prefer [`crate::col`]).
    ///
    /// Accepts comparisons `Property op constant` (or `constant op Property`, which
    /// is normalised to the property on the left), `and`, `or`, `not`, parentheses and
    /// a bare `true`/`false`. Constants: `'text'` (with `''` for a quote), `42`
    /// (Int32), `42L` (Int64), `1.5`/`1E+10`/`2.0D` (Double), `true`/`false`,
    /// `datetime'2008-07-10T00:00:00Z'`, `guid'…'`, `X'0A0B'`/`binary'0A0B'`.
    ///
    /// ```
    /// use tables_core::{col, Filter};
    ///
    /// let f = Filter::parse("PartitionKey eq 'Sales' and 30 lt Age")?;
    /// assert_eq!(f, col("PartitionKey").eq("Sales") & col("Age").gt(30));
    /// # Ok::<(), tables_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidFilter`] when the text is not a filter of this language;
    /// the message gives the byte position and what was expected there. An integer
    /// without suffix outside the Int32 range is an error (add `L` for Int64).
    pub fn parse(text: &str) -> Result<Filter> {
        let tokens = lex(text)?;
        let mut parser = Parser {
            tokens,
            pos: 0,
            depth: 0,
            terms: 0,
            end: text.len(),
        };
        let filter = parser.or_expr()?;
        match parser.peek() {
            None => Ok(filter),
            Some(token) => Err(parser.unexpected(token, "`and`, `or` or the end of the filter")),
        }
    }
}

fn error_at(at: usize, message: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::InvalidFilter,
        format!("invalid filter at byte {at}: {message}"),
    )
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open,
    Close,
    Ident(String),
    Literal(Value),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    at: usize,
}

impl Token {
    fn describe(&self) -> String {
        match &self.tok {
            Tok::Open => "`(`".to_owned(),
            Tok::Close => "`)`".to_owned(),
            Tok::Ident(name) => format!("`{name}`"),
            Tok::Literal(value) => format!("the constant {value:?}"),
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_continue(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn lex(text: &str) -> Result<Vec<Token>> {
    let mut lexer = Lexer { text, pos: 0 };
    let mut tokens = Vec::new();
    while let Some(token) = lexer.next_token()? {
        tokens.push(token);
    }
    Ok(tokens)
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl Lexer<'_> {
    fn peek_char(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> &str {
        let start = self.pos;
        while self.peek_char().is_some_and(&keep) {
            self.bump();
        }
        &self.text[start..self.pos]
    }

    fn next_token(&mut self) -> Result<Option<Token>> {
        self.take_while(char::is_whitespace);
        let at = self.pos;
        let Some(c) = self.peek_char() else {
            return Ok(None);
        };
        let tok = match c {
            '(' => {
                self.bump();
                return Ok(Some(Token { tok: Tok::Open, at }));
            }
            ')' => {
                self.bump();
                return Ok(Some(Token { tok: Tok::Close, at }));
            }
            '\'' => Tok::Literal(Value::String(self.quoted()?)),
            '-' | '0'..='9' => Tok::Literal(self.number()?),
            c if is_ident_start(c) => {
                let word = self.take_while(is_ident_continue).to_owned();
                if self.peek_char() == Some('\'') {
                    Tok::Literal(self.prefixed(&word, at)?)
                } else {
                    Tok::Ident(word)
                }
            }
            other => {
                return Err(error_at(
                    at,
                    format!("unexpected character {other:?}; expected a property name, a constant, `(` or `)`"),
                ))
            }
        };
        self.after_token(at)?;
        Ok(Some(Token { tok, at }))
    }

    /// A word or constant must be followed by whitespace, a parenthesis or the end.
    fn after_token(&self, start: usize) -> Result<()> {
        match self.peek_char() {
            Some(c) if !c.is_whitespace() && c != '(' && c != ')' => Err(error_at(
                self.pos,
                format!(
                    "unexpected character {c:?} after `{}`; separate tokens with spaces",
                    &self.text[start..self.pos]
                ),
            )),
            _ => Ok(()),
        }
    }

    /// A `'…'` string with `''` for an embedded quote; the lexer sits on the quote.
    fn quoted(&mut self) -> Result<String> {
        let start = self.pos;
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                Some('\'') if self.peek_char() == Some('\'') => {
                    self.bump();
                    out.push('\'');
                }
                Some('\'') => return Ok(out),
                Some(c) => out.push(c),
                None => {
                    return Err(error_at(
                        start,
                        "unterminated string constant; close it with `'` (write `''` for a quote inside)",
                    ))
                }
            }
        }
    }

    /// `datetime'…'`, `guid'…'`, `X'…'` or `binary'…'`; the lexer sits on the quote.
    fn prefixed(&mut self, prefix: &str, at: usize) -> Result<Value> {
        let body_at = self.pos + 1;
        let body = self.quoted()?;
        match prefix {
            "datetime" => body.parse::<DateTime>().map(Value::DateTime).map_err(|e| {
                error_at(
                    body_at,
                    format!("invalid datetime constant {body:?} ({}); expected e.g. datetime'2008-07-10T00:00:00Z'", e.message()),
                )
            }),
            "guid" => uuid::Uuid::parse_str(&body).map(Value::Guid).map_err(|_| {
                error_at(
                    body_at,
                    format!("invalid guid constant {body:?}; expected e.g. guid'a455c695-df98-5678-aaaa-81d3367e5a34'"),
                )
            }),
            "X" | "x" | "binary" => parse_hex(&body)
                .map(Value::Binary)
                .ok_or_else(|| {
                    error_at(
                        body_at,
                        format!("invalid binary constant {body:?}; expected an even number of hex digits, e.g. X'0A0B'"),
                    )
                }),
            other => Err(error_at(
                at,
                format!("unknown constant prefix `{other}`; expected `datetime`, `guid`, `X` or `binary`"),
            )),
        }
    }

    /// An integer (`42`, `42L`) or a double (`1.5`, `1E+10`, `2D`).
    fn number(&mut self) -> Result<Value> {
        let start = self.pos;
        if self.peek_char() == Some('-') {
            self.bump();
        }
        let digits_at = self.pos;
        if self.take_while(|c| c.is_ascii_digit()).is_empty() {
            return Err(error_at(digits_at, "expected a digit"));
        }
        let mut is_double = false;
        if self.peek_char() == Some('.') {
            self.bump();
            let at = self.pos;
            if self.take_while(|c| c.is_ascii_digit()).is_empty() {
                return Err(error_at(at, "expected a digit after the decimal point"));
            }
            is_double = true;
        }
        if matches!(self.peek_char(), Some('e' | 'E')) {
            self.bump();
            if matches!(self.peek_char(), Some('+' | '-')) {
                self.bump();
            }
            let at = self.pos;
            if self.take_while(|c| c.is_ascii_digit()).is_empty() {
                return Err(error_at(at, "expected the exponent's digits"));
            }
            is_double = true;
        }
        let number = &self.text[start..self.pos];
        let suffix = match self.peek_char() {
            Some(c @ ('L' | 'l' | 'D' | 'd')) => {
                self.bump();
                Some(c.to_ascii_uppercase())
            }
            _ => None,
        };
        match (suffix, is_double) {
            (Some('L'), true) => Err(error_at(
                start,
                format!("`{number}` has a fraction or exponent and cannot be an Int64 (`L`) constant"),
            )),
            (Some('L'), false) => number.parse::<i64>().map(Value::Int64).map_err(|_| {
                error_at(start, format!("`{number}L` is outside the Int64 range"))
            }),
            (Some(_), _) | (None, true) => match number.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Value::Double(x)),
                _ => Err(error_at(start, format!("`{number}` is outside the Double range"))),
            },
            (None, false) => number.parse::<i32>().map(Value::Int32).map_err(|_| {
                error_at(
                    start,
                    format!("`{number}` is outside the Int32 range; add the `L` suffix (`{number}L`) for an Int64 constant"),
                )
            }),
        }
    }
}

fn parse_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |b: u8| char::from(b).to_digit(16);
    text.as_bytes()
        .chunks_exact(2)
        .map(|pair| {
            let (hi, lo) = (digit(pair[0])?, digit(pair[1])?);
            u8::try_from(hi * 16 + lo).ok()
        })
        .collect()
}

fn comparison_op(word: &str) -> Option<CmpOp> {
    Some(match word {
        "eq" => CmpOp::Eq,
        "ne" => CmpOp::Ne,
        "gt" => CmpOp::Gt,
        "ge" => CmpOp::Ge,
        "lt" => CmpOp::Lt,
        "le" => CmpOp::Le,
        _ => return None,
    })
}

/// Words that cannot name a property.
pub(crate) fn is_keyword(word: &str) -> bool {
    matches!(word, "and" | "or" | "not" | "true" | "false") || comparison_op(word).is_some()
}

/// Whether `name` can be written as a property in filter text.
pub(crate) fn is_property_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(is_ident_start) && chars.all(is_ident_continue) && !is_keyword(name)
}

/// `a op b` is `b op' a`.
fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Eq,
        CmpOp::Ne => CmpOp::Ne,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
    terms: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_word(&self, offset: usize) -> Option<&str> {
        match self.tokens.get(self.pos + offset) {
            Some(Token {
                tok: Tok::Ident(word),
                ..
            }) => Some(word),
            _ => None,
        }
    }

    fn next(&mut self, expected: &str) -> Result<Token> {
        match self.tokens.get(self.pos) {
            Some(token) => {
                self.pos += 1;
                Ok(token.clone())
            }
            None => Err(error_at(
                self.end,
                format!("expected {expected}, found the end of the filter"),
            )),
        }
    }

    fn unexpected(&self, token: &Token, expected: &str) -> Error {
        error_at(
            token.at,
            format!("expected {expected}, found {}", token.describe()),
        )
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if self.peek_word(0) == Some(word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn enter(&mut self, at: usize) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(error_at(
                at,
                format!("nesting deeper than {MAX_DEPTH} levels of parentheses and `not`"),
            ));
        }
        Ok(())
    }

    fn or_expr(&mut self) -> Result<Filter> {
        let mut left = self.and_expr()?;
        while self.eat_word("or") {
            left = Filter::Or(Box::new(left), Box::new(self.and_expr()?));
        }
        Ok(left)
    }

    fn and_expr(&mut self) -> Result<Filter> {
        let mut left = self.unary()?;
        while self.eat_word("and") {
            left = Filter::And(Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Filter> {
        let at = self.peek().map_or(self.end, |t| t.at);
        if self.peek_word(0) == Some("not") {
            self.pos += 1;
            self.enter(at)?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(inner.negate());
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Filter> {
        const START: &str = "a comparison, `not`, `(`, `true` or `false`";
        let token = self.next(START)?;
        if token.tok == Tok::Open {
            self.enter(token.at)?;
            let inner = self.or_expr()?;
            self.depth -= 1;
            let close = self.next("`)`")?;
            return match close.tok {
                Tok::Close => Ok(inner),
                _ => Err(self.unexpected(&close, "`and`, `or` or `)`")),
            };
        }
        self.terms += 1;
        if self.terms > MAX_TERMS {
            return Err(error_at(
                token.at,
                format!("more than {MAX_TERMS} terms (the service allows 15 comparisons)"),
            ));
        }
        let next_is_op = self.peek_word(0).and_then(comparison_op).is_some();
        match &token.tok {
            Tok::Ident(word) if !next_is_op && (word == "true" || word == "false") => {
                return Ok(Filter::Literal(word == "true"));
            }
            Tok::Close => return Err(self.unexpected(&token, START)),
            _ => {}
        }
        let left = self.operand(&token)?;
        let op_token = self.next("a comparison operator (eq, ne, gt, ge, lt, le)")?;
        let op = match &op_token.tok {
            Tok::Ident(word) => comparison_op(word),
            _ => None,
        }
        .ok_or_else(|| {
            self.unexpected(&op_token, "a comparison operator (eq, ne, gt, ge, lt, le)")
        })?;
        let right_token = self.next("a constant or a property name")?;
        let right = self.operand(&right_token)?;
        match (left, right) {
            (Operand::Property(property), Operand::Constant(value)) => Ok(Filter::Compare { property, op, value }),
            (Operand::Constant(value), Operand::Property(property)) => Ok(Filter::Compare {
                property,
                op: flip(op),
                value,
            }),
            (Operand::Property(_), Operand::Property(_)) => Err(error_at(
                right_token.at,
                "a comparison needs a constant on one side; the service cannot compare two properties",
            )),
            (Operand::Constant(_), Operand::Constant(_)) => Err(error_at(
                right_token.at,
                "a comparison needs a property name on one side; both sides are constants",
            )),
        }
    }

    fn operand(&self, token: &Token) -> Result<Operand> {
        match &token.tok {
            Tok::Literal(value) => Ok(Operand::Constant(value.clone())),
            Tok::Ident(word) if word == "true" || word == "false" => {
                Ok(Operand::Constant(Value::Boolean(word == "true")))
            }
            Tok::Ident(word) if !is_keyword(word) => Ok(Operand::Property(word.clone())),
            _ => Err(self.unexpected(token, "a property name or a constant")),
        }
    }
}

enum Operand {
    Property(String),
    Constant(Value),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::build::col;

    fn parse(text: &str) -> Filter {
        match Filter::parse(text) {
            Ok(f) => f,
            Err(e) => panic!("{text:?} did not parse: {e}"),
        }
    }

    fn kind(text: &str) -> ErrorKind {
        match Filter::parse(text) {
            Ok(f) => panic!("{text:?} parsed as {f:?}"),
            Err(e) => e.kind(),
        }
    }

    #[test]
    fn precedence_and_associativity() {
        let (a, b, c) = (col("A").eq(1), col("B").eq(2), col("C").eq(3));
        assert_eq!(
            parse("A eq 1 or B eq 2 and C eq 3"),
            a.clone() | (b.clone() & c.clone())
        );
        assert_eq!(
            parse("A eq 1 and B eq 2 or C eq 3"),
            (a.clone() & b.clone()) | c.clone()
        );
        assert_eq!(
            parse("A eq 1 and B eq 2 and C eq 3"),
            (a.clone() & b.clone()) & c.clone()
        );
        assert_eq!(
            parse("A eq 1 and (B eq 2 and C eq 3)"),
            Filter::And(Box::new(a.clone()), Box::new(b.clone() & c.clone()))
        );
        assert_eq!(parse("not A eq 1 and B eq 2"), !a.clone() & b.clone());
        assert_eq!(parse("not (A eq 1 or B eq 2)"), !(a.clone() | b.clone()));
        assert_eq!(parse(" ((A eq 1))\t"), a);
        assert_eq!(parse("true"), Filter::Literal(true));
        assert_eq!(parse("not false"), !Filter::Literal(false));
    }

    #[test]
    fn constant_on_the_left_is_normalised() {
        assert_eq!(parse("30 lt Age"), col("Age").gt(30));
        assert_eq!(parse("30 ge Age"), col("Age").le(30));
        assert_eq!(parse("'x' ne Name"), col("Name").ne("x"));
        assert_eq!(parse("true eq Active"), col("Active").eq(true));
    }

    #[test]
    fn every_literal_form() {
        assert_eq!(parse("N eq 'O''Brien'"), col("N").eq("O'Brien"));
        assert_eq!(parse("N eq ''"), col("N").eq(""));
        assert_eq!(parse("N eq -42"), col("N").eq(-42));
        assert_eq!(parse("N eq 42L"), col("N").eq(42i64));
        assert_eq!(parse("N eq 42l"), col("N").eq(42i64));
        assert_eq!(parse("N eq 2147483648L"), col("N").eq(2_147_483_648i64));
        assert_eq!(parse("N eq 1.5"), col("N").eq(1.5));
        assert_eq!(parse("N eq 1e10"), col("N").eq(1e10));
        assert_eq!(parse("N eq 2.5E+20"), col("N").eq(2.5e20));
        assert_eq!(parse("N eq -2.0"), col("N").eq(-2.0));
        assert_eq!(parse("N eq 2D"), col("N").eq(2.0));
        assert_eq!(parse("N eq 2.5d"), col("N").eq(2.5));
        assert_eq!(parse("N eq false"), col("N").eq(false));
        assert_eq!(parse("N eq X'0A0b'"), col("N").eq(vec![0x0a_u8, 0x0b]));
        assert_eq!(parse("N eq binary'ff'"), col("N").eq(vec![0xff_u8]));
        let guid = uuid::Uuid::from_u128(0xa455c695_df98_5678_aaaa_81d3367e5a34);
        assert_eq!(
            parse("N eq guid'a455c695-df98-5678-aaaa-81d3367e5a34'"),
            col("N").eq(guid)
        );
        let dt: DateTime = "2008-07-10T00:00:00Z".parse().expect("valid datetime");
        assert_eq!(
            parse("Timestamp ge datetime'2008-07-10T00:00:00Z'"),
            col("Timestamp").ge(dt)
        );
        assert_eq!(parse("Größe gt 1"), col("Größe").gt(1));
    }

    #[test]
    fn malformed_filters_are_invalid_filter_errors() {
        for text in [
            "",
            "   ",
            "A eq",
            "A eq 1 and",
            "A 1",
            "A eq B",
            "1 eq 1",
            "A eq 2147483648",
            "A eq 9223372036854775808L",
            "A eq 1.5L",
            "A eq 1e999",
            "A eq 1.",
            "A eq .5",
            "A eq 'open",
            "A eq X'0'",
            "A eq X'zz'",
            "A eq guid'nope'",
            "A eq datetime'yesterday'",
            "A eq foo'1'",
            "(A eq 1",
            "A eq 1)",
            "A EQ 1",
            "A eq 1 AND B eq 2",
            "A eq True",
            "A eq 1 B eq 2",
            "A eq 1x",
            "A eq 'a'b",
            "and eq 1",
            "startswith(RowKey,'r')",
            "A eq 1 # 2",
        ] {
            assert_eq!(kind(text), ErrorKind::InvalidFilter, "{text:?}");
        }
    }

    #[test]
    fn int32_overflow_points_at_the_l_suffix() {
        let err = Filter::parse("A eq 3000000000").expect_err("out of Int32 range");
        assert_eq!(err.kind(), ErrorKind::InvalidFilter);
        assert!(err.message().contains("3000000000L"));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}A eq 1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert_eq!(kind(&deep), ErrorKind::InvalidFilter);
        let nots = format!("{}A eq 1", "not ".repeat(10_000));
        assert_eq!(kind(&nots), ErrorKind::InvalidFilter);
        let long = vec!["A eq 1"; 10_000].join(" and ");
        assert_eq!(kind(&long), ErrorKind::InvalidFilter);
        let ok = format!("{}A eq 1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(parse(&ok), col("A").eq(1));
    }
}
