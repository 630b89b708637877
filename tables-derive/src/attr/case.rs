//! `rename_all = ".."`: the case conventions property names and variant texts can
//! be converted to. Field names are read as snake_case and variant names as
//! PascalCase, as serde does.

/// A `rename_all` rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RenameRule {
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Lower,
    Upper,
}

/// The accepted spellings, for parsing and messages.
pub(crate) const RULES: [(&str, RenameRule); 6] = [
    ("PascalCase", RenameRule::Pascal),
    ("camelCase", RenameRule::Camel),
    ("snake_case", RenameRule::Snake),
    ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
    ("lowercase", RenameRule::Lower),
    ("UPPERCASE", RenameRule::Upper),
];

impl RenameRule {
    /// The rule spelled `text`, if any.
    pub(crate) fn parse(text: &str) -> Option<RenameRule> {
        RULES
            .iter()
            .find(|(name, _)| *name == text)
            .map(|&(_, rule)| rule)
    }

    /// Converts a snake_case field name.
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Snake | RenameRule::Lower => field.to_owned(),
            RenameRule::ScreamingSnake | RenameRule::Upper => field.to_ascii_uppercase(),
            RenameRule::Pascal | RenameRule::Camel => {
                let mut out = String::with_capacity(field.len());
                let mut upper_next = self == RenameRule::Pascal;
                for c in field.chars() {
                    if c == '_' {
                        upper_next = !out.is_empty() || self == RenameRule::Pascal;
                    } else if upper_next {
                        out.extend(c.to_uppercase());
                        upper_next = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }

    /// Converts a PascalCase variant name.
    pub(crate) fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_lowercase().chain(chars).collect(),
                    None => String::new(),
                }
            }
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Snake | RenameRule::ScreamingSnake => {
                let mut snake = String::with_capacity(variant.len() + 4);
                for (i, c) in variant.char_indices() {
                    if c.is_uppercase() && i > 0 {
                        snake.push('_');
                    }
                    snake.extend(c.to_lowercase());
                }
                if self == RenameRule::ScreamingSnake {
                    snake.make_ascii_uppercase();
                }
                snake
            }
        }
    }
}

/// SCREAMING_SNAKE_CASE of a snake_case field name: the default typed column name.
pub(crate) fn screaming_snake(field: &str) -> String {
    RenameRule::ScreamingSnake.apply_to_field(field)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let cases = [
            (RenameRule::Pascal, "employee_id", "EmployeeId"),
            (RenameRule::Camel, "employee_id", "employeeId"),
            (RenameRule::Snake, "employee_id", "employee_id"),
            (RenameRule::ScreamingSnake, "employee_id", "EMPLOYEE_ID"),
            (RenameRule::Lower, "employee_id", "employee_id"),
            (RenameRule::Upper, "employee_id", "EMPLOYEE_ID"),
            (RenameRule::Pascal, "age", "Age"),
            (RenameRule::Camel, "age", "age"),
            (RenameRule::Pascal, "_private", "Private"),
            (RenameRule::Camel, "_private_x", "privateX"),
            (RenameRule::Pascal, "a__b", "AB"),
        ];
        for (rule, field, expected) in cases {
            assert_eq!(rule.apply_to_field(field), expected, "{rule:?} {field}");
        }
    }

    #[test]
    fn variants() {
        let cases = [
            (RenameRule::Pascal, "InProgress", "InProgress"),
            (RenameRule::Camel, "InProgress", "inProgress"),
            (RenameRule::Snake, "InProgress", "in_progress"),
            (RenameRule::ScreamingSnake, "InProgress", "IN_PROGRESS"),
            (RenameRule::Lower, "InProgress", "inprogress"),
            (RenameRule::Upper, "InProgress", "INPROGRESS"),
            (RenameRule::Snake, "A", "a"),
        ];
        for (rule, variant, expected) in cases {
            assert_eq!(
                rule.apply_to_variant(variant),
                expected,
                "{rule:?} {variant}"
            );
        }
    }

    #[test]
    fn parse_knows_every_spelling() {
        for (name, rule) in RULES {
            assert_eq!(RenameRule::parse(name), Some(rule));
        }
        assert_eq!(RenameRule::parse("kebab-case"), None);
        assert_eq!(RenameRule::parse("pascalcase"), None);
        assert_eq!(screaming_snake("hired_at"), "HIRED_AT");
    }
}
