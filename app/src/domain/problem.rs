//! What the domain found, without words: a refusal, a warning or a policy is a [`Problem`] — the
//! catalogue message that names it and the facts it carries (a field's text, a count, a wait).
//! The domain never picks a language; a problem is worded for its reader above the domain,
//! with the reader's locale passed in. (rustc's diagnostics have the same shape: a Fluent
//! message identifier and its arguments.)
//!
//! Name a problem with [`problem!`](crate::problem):
//! `problem!("job-error-positive", label = problem!("job-label-timeout"))`.

/// A message from the catalogue with its facts, not yet in any language.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    id: &'static str,
    facts: Vec<(&'static str, Fact)>,
}

/// One value a message carries. Numbers stay numbers so a language can choose its plural form;
/// waits stay milliseconds so each language writes its own units.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    Text(String),
    Number(i64),
    /// A number with a fraction (a parameter's bounds).
    Decimal(f64),
    /// A duration in milliseconds, worded as `2 h 5 min` or `2 小时 5 分钟`.
    Wait(f64),
    /// A message inside a message: a field's label, the reason a part was refused.
    Problem(Box<Problem>),
}

impl Problem {
    pub fn new(id: &'static str, facts: Vec<(&'static str, Fact)>) -> Self {
        Self { id, facts }
    }

    /// The catalogue's message identifier (`job-error-name-long`).
    pub fn id(&self) -> &'static str {
        self.id
    }

    pub fn facts(&self) -> &[(&'static str, Fact)] {
        &self.facts
    }
}

impl Fact {
    /// A duration of `ms` milliseconds, for the reader's units.
    pub fn wait(ms: f64) -> Fact {
        Fact::Wait(ms)
    }
}

impl From<String> for Fact {
    fn from(text: String) -> Self {
        Fact::Text(text)
    }
}

impl From<&str> for Fact {
    fn from(text: &str) -> Self {
        Fact::Text(text.to_string())
    }
}

impl From<&String> for Fact {
    fn from(text: &String) -> Self {
        Fact::Text(text.clone())
    }
}

impl From<Problem> for Fact {
    fn from(problem: Problem) -> Self {
        Fact::Problem(Box::new(problem))
    }
}

impl From<f64> for Fact {
    fn from(n: f64) -> Self {
        Fact::Decimal(n)
    }
}

macro_rules! number_facts {
    ($($t:ty),*) => {$(
        impl From<$t> for Fact {
            fn from(n: $t) -> Self {
                Fact::Number(i64::try_from(n).unwrap_or(i64::MAX))
            }
        }
    )*};
}
number_facts!(u8, u16, u32, u64, usize, i32, i64);

/// A problem with one field of a form, file or filter: what is wrong with `field`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldProblem {
    pub field: String,
    pub problem: Problem,
}

impl FieldProblem {
    pub fn new(field: &str, problem: Problem) -> Self {
        Self {
            field: field.to_string(),
            problem,
        }
    }
}

/// A [`Problem`] named by its catalogue message and facts: `problem!("job-error-header-line", line = 3)`.
/// Facts become Fluent variables of the same name.
#[macro_export]
macro_rules! problem {
    ($key:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::domain::problem::Problem::new(
            $key,
            vec![$((stringify!($name), $crate::domain::problem::Fact::from($value))),*],
        )
    };
}
