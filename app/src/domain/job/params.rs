//! Job parameters: what a run may be started with (a trigger from the API or a trigger URL, or
//! Run now), declared on the job with a type, an optional default and whether it is required.
//! A run keeps the values it was started with; HTTP jobs read them as `${param:NAME}`, command
//! jobs as `BULWARK_PARAM_<NAME>` variables and JSON on standard input, built-in tasks beside
//! their own settings.
//!
//! In the editor a job's parameters are one per line, `name: type [= default] [required]`:
//!
//! ```text
//! region: string = eu-west-1
//! batch_size: number = 500
//! dry_run: bool = false
//! upload_id: string required
//! ```
//!
//! Options follow, each after ` | `, and narrow what a value may be (`choices` and `pattern`
//! make a string an allow-list, which a command needs to take it as an argument:
//! `super::placement`):
//!
//! ```text
//! region: string = eu-west-1 | choices: eu-west-1, us-east-1
//! name: string required | pattern: ^[a-z0-9-]{1,40}$ | max_length: 40
//! limit: number = 100 | min: 1 | max: 1000
//! ```

use crate::domain::Problem;
use crate::domain::problem::Fact;
use crate::problem;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::FieldProblem;

crate::text_enum! {
    /// A parameter's type.
    pub enum ParamType {
        String = "string",
        Number = "number",
        Bool = "bool",
    }
}

/// One declared parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Parameter {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: ParamType,
    /// Used when a run is started without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// A run cannot start without it (and it has no default).
    #[serde(default)]
    pub required: bool,
    /// The only values a string may take.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// A regular expression, written anchored (`^…$`), every string must match whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The most characters a string may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// The least and the most a number may be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

impl Parameter {
    /// Whether every value this parameter may take is one its declaration names or spells
    /// out: a string with `choices` or a `pattern`, a number that cannot be negative (so it
    /// never reads as an option), a boolean. Only such a parameter may be a command's argument.
    pub fn is_allow_listed(&self) -> bool {
        match self.kind {
            ParamType::String => !self.choices.is_empty() || self.pattern.is_some(),
            ParamType::Number => self.min.is_some_and(|min| min >= 0.0),
            ParamType::Bool => true,
        }
    }

    /// Why `value` (of the right type) is not one this parameter takes.
    fn refuses(&self, value: &Value) -> Option<Problem> {
        let name = self.name.clone();
        if let Value::String(text) = value {
            if !self.choices.is_empty() && !self.choices.contains(text) {
                return Some(problem!(
                    "error-param-choice",
                    name = name,
                    choices = self.choices.join(", "),
                    value = text.clone()
                ));
            }
            if let Some(max) = self.max_length
                && text.chars().count() > max as usize
            {
                return Some(problem!("error-param-max-length", name = name, max = max));
            }
            if let Some(pattern) = &self.pattern
                && !whole_match(pattern, text)
            {
                return Some(problem!(
                    "error-param-pattern-mismatch",
                    name = name,
                    pattern = pattern.clone()
                ));
            }
        }
        if let Some(n) = value.as_f64() {
            if let Some(min) = self.min.filter(|min| n < *min) {
                return Some(problem!("error-param-below", name = name, min = min));
            }
            if let Some(max) = self.max.filter(|max| n > *max) {
                return Some(problem!("error-param-above", name = name, max = max));
            }
        }
        None
    }
}

/// The longest pattern a parameter may declare.
pub const MAX_PATTERN_LEN: usize = 256;

/// `pattern` compiled to match a whole value: written anchored, and matched as
/// `^(?:pattern)$` too, so a top-level `|` cannot unanchor one side of it.
fn compile(pattern: &str) -> Result<regex_lite::Regex, Fact> {
    let anchored = pattern.starts_with('^') && pattern.ends_with('$') && !pattern.ends_with("\\$");
    if !anchored || pattern.len() > MAX_PATTERN_LEN {
        return Err(problem!("error-param-pattern-anchored", max = MAX_PATTERN_LEN).into());
    }
    regex_lite::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| Fact::from(e.to_string()))
}

fn whole_match(pattern: &str, text: &str) -> bool {
    compile(pattern).is_ok_and(|regex| regex.is_match(text))
}

/// The most parameters a job declares, and the longest value a run may carry.
pub const MAX_PARAMETERS: usize = 32;
pub const MAX_VALUE_BYTES: usize = 16 * 1024;

/// Whether `name` can be a parameter's name: it becomes an environment variable's suffix.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `text` as a value of `kind`, from what a person typed (a default in the editor, a value in
/// Run now).
pub fn from_text(kind: ParamType, text: &str) -> Result<Value, Problem> {
    match kind {
        ParamType::String => Ok(Value::String(text.to_string())),
        ParamType::Number => text
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .and_then(serde_json::Number::from_f64)
            .map(|n| {
                // Whole numbers stay whole (500, not 500.0).
                match text.parse::<i64>() {
                    Ok(i) => Value::from(i),
                    Err(_) => Value::Number(n),
                }
            })
            .ok_or_else(|| problem!("error-param-number", text = text.to_string())),
        ParamType::Bool => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(problem!("error-param-bool", text = text.to_string())),
        },
    }
}

/// Reads the editor's lines; every problem names its line.
pub fn parse_declarations(text: &str) -> Result<Vec<Parameter>, Vec<Problem>> {
    let mut out: Vec<Parameter> = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let n = i + 1;
        match parse_line(n, line) {
            Ok(p) if out.iter().any(|o| o.name == p.name) => {
                problems.push(problem!("error-param-twice", line = n, name = p.name));
            }
            Ok(p) => out.push(p),
            Err(problem) => problems.push(problem),
        }
    }
    if out.len() > MAX_PARAMETERS {
        problems.push(problem!("error-param-too-many", max = MAX_PARAMETERS));
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// One line: `name: type [= default] [required]`, then ` | option: value` for each option.
fn parse_line(n: usize, line: &str) -> Result<Parameter, Problem> {
    let mut segments = line.split(" | ");
    let head = segments.next().unwrap_or_default();
    let Some((name, rest)) = head.split_once(':') else {
        return Err(problem!("error-param-line", line = n));
    };
    let name = name.trim();
    if !valid_name(name) {
        return Err(problem!(
            "error-param-name",
            line = n,
            name = name.to_string()
        ));
    }
    let mut rest = rest.trim();
    let mut required = false;
    if let Some(before) = rest.strip_suffix("required") {
        required = true;
        rest = before.trim_end();
    }
    let (kind_text, default_text) = match rest.split_once('=') {
        Some((k, d)) => (k.trim(), Some(d.trim())),
        None => (rest.trim(), None),
    };
    let Some(kind) = ParamType::parse(kind_text) else {
        return Err(problem!(
            "error-param-type",
            line = n,
            name = name.to_string(),
            types = ParamType::WORDS.join(", ")
        ));
    };
    let mut p = Parameter {
        name: name.to_string(),
        kind,
        default: None,
        required,
        choices: Vec::new(),
        pattern: None,
        max_length: None,
        min: None,
        max: None,
    };
    for segment in segments {
        parse_option(n, &mut p, segment.trim())?;
    }
    if let (Some(min), Some(max)) = (p.min, p.max)
        && min > max
    {
        return Err(problem!(
            "error-param-range",
            line = n,
            name = p.name.clone()
        ));
    }
    let default = default_text.map(|d| from_text(kind, d)).transpose();
    let default = default.and_then(|d| match d.as_ref().and_then(|v| p.refuses(v)) {
        Some(refused) => Err(refused),
        None => Ok(d),
    });
    p.default = default.map_err(|e| {
        problem!(
            "error-param-default",
            line = n,
            name = name.to_string(),
            error = e
        )
    })?;
    Ok(p)
}

/// One ` | option: value` of a declaration's line, into `p`.
fn parse_option(n: usize, p: &mut Parameter, segment: &str) -> Result<(), Problem> {
    let unknown = || problem!("error-param-option", line = n, text = segment.to_string());
    let (option, value) = segment.split_once(':').ok_or_else(unknown)?;
    let (option, value) = (option.trim(), value.trim());
    let applies = match option {
        "choices" | "pattern" | "max_length" => p.kind == ParamType::String,
        "min" | "max" => p.kind == ParamType::Number,
        _ => return Err(unknown()),
    };
    if !applies {
        return Err(problem!(
            "error-param-option-kind",
            line = n,
            option = option.to_string(),
            kind = p.kind.to_string()
        ));
    }
    let number = || option_number(n, option, value);
    match option {
        "choices" => p.choices = parse_choices(n, &p.name, value)?,
        "pattern" => {
            compile(value).map_err(|e| {
                problem!(
                    "error-param-pattern",
                    line = n,
                    name = p.name.clone(),
                    error = e
                )
            })?;
            p.pattern = Some(value.to_string());
        }
        "max_length" => {
            let max = number()?;
            if max < 1.0 || max.fract() != 0.0 || max > f64::from(u32::MAX) {
                return Err(option_number_problem(n, option, value));
            }
            p.max_length = Some(max as u32);
        }
        "min" => p.min = Some(number()?),
        _ => p.max = Some(number()?),
    }
    Ok(())
}

/// `choices: a, b, c`: at least one.
fn parse_choices(n: usize, name: &str, value: &str) -> Result<Vec<String>, Problem> {
    let choices: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    if choices.is_empty() {
        return Err(problem!(
            "error-param-choices-empty",
            line = n,
            name = name.to_string()
        ));
    }
    Ok(choices)
}

/// An option's finite number.
fn option_number(n: usize, option: &str, value: &str) -> Result<f64, Problem> {
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| option_number_problem(n, option, value))
}

fn option_number_problem(n: usize, option: &str, value: &str) -> Problem {
    problem!(
        "error-param-option-number",
        line = n,
        option = option.to_string(),
        text = value.to_string()
    )
}

/// The declarations as the editor shows them (what [`parse_declarations`] reads back).
pub fn format_declarations(params: &[Parameter]) -> String {
    params
        .iter()
        .map(|p| {
            let mut line = format!("{}: {}", p.name, p.kind);
            if let Some(default) = &p.default {
                let shown = match default {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                line.push_str(&format!(" = {shown}"));
            }
            if p.required {
                line.push_str(" required");
            }
            if !p.choices.is_empty() {
                line.push_str(&format!(" | choices: {}", p.choices.join(", ")));
            }
            let options = [
                ("pattern", p.pattern.clone()),
                ("max_length", p.max_length.map(|v| v.to_string())),
                ("min", p.min.map(|v| v.to_string())),
                ("max", p.max.map(|v| v.to_string())),
            ];
            for (option, value) in options {
                if let Some(value) = value {
                    line.push_str(&format!(" | {option}: {value}"));
                }
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The values a run starts with: each given value checked against its declaration, defaults
/// for the rest. Every problem is a field error named `params.NAME`.
pub fn resolve(
    declared: &[Parameter],
    given: &serde_json::Map<String, Value>,
) -> Result<BTreeMap<String, Value>, Vec<FieldProblem>> {
    let mut errors = Vec::new();
    for name in given.keys() {
        if !declared.iter().any(|p| &p.name == name) {
            errors.push(FieldProblem::new(
                &format!("params.{name}"),
                if declared.is_empty() {
                    problem!("error-param-none")
                } else {
                    problem!(
                        "error-param-unknown",
                        name = name.clone(),
                        known = declared
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
            ));
        }
    }
    let mut values = BTreeMap::new();
    for p in declared {
        let field = format!("params.{}", p.name);
        match given.get(&p.name).filter(|v| !v.is_null()) {
            Some(value) => {
                let ok = match p.kind {
                    ParamType::String => value.is_string(),
                    ParamType::Number => value.is_number(),
                    ParamType::Bool => value.is_boolean(),
                };
                if !ok {
                    errors.push(FieldProblem::new(
                        &field,
                        problem!(
                            "error-param-kind",
                            name = p.name.clone(),
                            kind = p.kind.to_string(),
                            value = value.to_string()
                        ),
                    ));
                } else if let Some(refused) = p.refuses(value) {
                    errors.push(FieldProblem::new(&field, refused));
                } else if value.to_string().len() > MAX_VALUE_BYTES {
                    errors.push(FieldProblem::new(
                        &field,
                        problem!(
                            "error-param-long",
                            name = p.name.clone(),
                            max = MAX_VALUE_BYTES
                        ),
                    ));
                } else {
                    values.insert(p.name.clone(), value.clone());
                }
            }
            None => match &p.default {
                Some(default) => {
                    values.insert(p.name.clone(), default.clone());
                }
                None if p.required => errors.push(FieldProblem::new(
                    &field,
                    problem!("error-param-required", name = p.name.clone()),
                )),
                None => {}
            },
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(errors)
    }
}

/// A value as text: what `${param:NAME}` becomes and an environment variable holds (a string
/// as it is, numbers and booleans as JSON writes them).
pub fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The environment variable a parameter reaches a command as.
pub fn env_name(name: &str) -> String {
    format!("BULWARK_PARAM_{}", name.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn declared() -> Vec<Parameter> {
        parse_declarations(
            "region: string = eu-west-1\nbatch_size: number = 500\ndry_run: bool = false\nupload_id: string required\n",
        )
        .unwrap()
    }

    #[test]
    fn declarations_read_and_write_back() {
        let d = declared();
        assert_eq!(d.len(), 4);
        assert_eq!(d[1].default, Some(json!(500)));
        assert!(d[3].required);
        assert_eq!(parse_declarations(&format_declarations(&d)).unwrap(), d);
        let problems =
            parse_declarations("1x: string\nok: text\nn: number = many\nok2 string").unwrap_err();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].to_string().starts_with("line 1:"));
    }

    #[test]
    fn values_are_checked_and_defaults_filled() {
        let d = declared();
        let given = json!({"upload_id": "u-42", "batch_size": 10});
        let values = resolve(&d, given.as_object().unwrap()).unwrap();
        assert_eq!(values["region"], json!("eu-west-1"));
        assert_eq!(values["batch_size"], json!(10));
        assert_eq!(values["dry_run"], json!(false));

        let bad = json!({"batch_size": "ten", "colour": "red"});
        let errors = resolve(&d, bad.as_object().unwrap()).unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["params.colour", "params.batch_size", "params.upload_id"]
        );
    }

    #[test]
    fn values_become_text_and_variables() {
        assert_eq!(as_text(&json!("a b")), "a b");
        assert_eq!(as_text(&json!(1.5)), "1.5");
        assert_eq!(as_text(&json!(true)), "true");
        assert_eq!(env_name("upload_id"), "BULWARK_PARAM_UPLOAD_ID");
    }

    #[test]
    fn options_read_and_write_back() {
        let text = "region: string = eu | choices: eu, us\nname: string required | pattern: ^[a-z]+$ | max_length: 8\nlimit: number = 10 | min: 0 | max: 100";
        let d = parse_declarations(text).unwrap();
        assert_eq!(d[0].choices, ["eu", "us"]);
        assert_eq!(d[1].pattern.as_deref(), Some("^[a-z]+$"));
        assert_eq!(d[1].max_length, Some(8));
        assert_eq!((d[2].min, d[2].max), (Some(0.0), Some(100.0)));
        assert_eq!(parse_declarations(&format_declarations(&d)).unwrap(), d);
        assert!(d.iter().all(Parameter::is_allow_listed));
        let open = parse_declarations("p: string\nn: number | min: -1\nm: number").unwrap();
        assert!(open.iter().all(|p| !p.is_allow_listed()));
    }

    #[test]
    fn bad_options_name_their_line() {
        for text in [
            "p: string | colour: red",
            "p: string | pattern: [a-z]+",
            "p: string | pattern: ^[a-z$",
            "p: number | choices: a, b",
            "p: string | min: 1",
            "p: string | choices: ,",
            "p: string | max_length: 0",
            "p: number | min: 5 | max: 1",
            "p: string = fr | choices: eu, us",
            "p: number = 500 | max: 100",
        ] {
            let problems = parse_declarations(text).unwrap_err();
            assert!(
                problems[0].to_string().starts_with("line 1:"),
                "{text}: {problems:?}"
            );
        }
    }

    #[test]
    fn values_outside_the_options_are_refused() {
        let d = parse_declarations(
            "region: string | choices: eu, us\nname: string | pattern: ^a|b$ | max_length: 3\nn: number | min: 1 | max: 5",
        )
        .unwrap();
        let ok = json!({"region": "eu", "name": "b", "n": 5});
        assert!(resolve(&d, ok.as_object().unwrap()).is_ok());
        for (bad, field) in [
            (json!({"region": "fr"}), "params.region"),
            // Matched whole: a top-level | does not unanchor either side.
            (json!({"name": "xxb"}), "params.name"),
            (json!({"name": "abcd"}), "params.name"),
            (json!({"n": 0}), "params.n"),
            (json!({"n": 5.5}), "params.n"),
        ] {
            let errors = resolve(&d, bad.as_object().unwrap()).unwrap_err();
            assert_eq!(errors.len(), 1, "{bad}: {errors:?}");
            assert_eq!(errors[0].field, field, "{bad}");
        }
    }
}
