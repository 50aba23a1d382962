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

use crate::t;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::FieldError;

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
pub fn from_text(kind: ParamType, text: &str) -> Result<Value, String> {
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
            .ok_or_else(|| t!("error-param-number", text = text.to_string())),
        ParamType::Bool => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(t!("error-param-bool", text = text.to_string())),
        },
    }
}

/// Reads the editor's lines; every problem names its line.
pub fn parse_declarations(text: &str) -> Result<Vec<Parameter>, Vec<String>> {
    let mut out: Vec<Parameter> = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let n = i + 1;
        let Some((name, rest)) = line.split_once(':') else {
            problems.push(t!("error-param-line", line = n));
            continue;
        };
        let name = name.trim();
        if !valid_name(name) {
            problems.push(t!("error-param-name", line = n, name = name.to_string()));
            continue;
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
            problems.push(t!(
                "error-param-type",
                line = n,
                name = name.to_string(),
                types = ParamType::WORDS.join(", ")
            ));
            continue;
        };
        let default = match default_text.map(|d| from_text(kind, d)).transpose() {
            Ok(d) => d,
            Err(e) => {
                problems.push(t!(
                    "error-param-default",
                    line = n,
                    name = name.to_string(),
                    error = e
                ));
                continue;
            }
        };
        if out.iter().any(|p| p.name == name) {
            problems.push(t!("error-param-twice", line = n, name = name.to_string()));
            continue;
        }
        out.push(Parameter {
            name: name.to_string(),
            kind,
            default,
            required,
        });
    }
    if out.len() > MAX_PARAMETERS {
        problems.push(format!(
            "a job declares at most {MAX_PARAMETERS} parameters"
        ));
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
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
) -> Result<BTreeMap<String, Value>, Vec<FieldError>> {
    let mut errors = Vec::new();
    for name in given.keys() {
        if !declared.iter().any(|p| &p.name == name) {
            errors.push(FieldError::new(
                &format!("params.{name}"),
                if declared.is_empty() {
                    t!("error-param-none")
                } else {
                    t!(
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
                    errors.push(FieldError::new(
                        &field,
                        t!(
                            "error-param-kind",
                            name = p.name.clone(),
                            kind = p.kind.to_string(),
                            value = value.to_string()
                        ),
                    ));
                } else if value.to_string().len() > MAX_VALUE_BYTES {
                    errors.push(FieldError::new(
                        &field,
                        t!(
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
                None if p.required => errors.push(FieldError::new(
                    &field,
                    t!("error-param-required", name = p.name.clone()),
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
        assert!(problems[0].starts_with("line 1:"));
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
}
