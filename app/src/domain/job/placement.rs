//! Where a run's parameter may stand in a job's definition, and how its value is written there.
//!
//! Whoever holds a job's trigger URL or a `trigger` token chooses its parameters' values, so a
//! value is data: it is encoded for the place it lands in — percent-encoded in a URL's path and
//! query, JSON-escaped inside a JSON string (a JSON value of its type where it stands bare),
//! form-encoded in a form, refused in a header when it would end the header — and it never
//! stands where it would become an address or code: a URL's scheme, host or port, a header's
//! name, a body of another type, a command's program, or part of a command's argument. A command
//! takes a parameter only as a whole argument, and only one whose values are an allow-list
//! ([`Parameter::is_allow_listed`]); any other value reaches it as `BULWARK_PARAM_*` and on
//! standard input. Secrets (`${secret:…}`) are the administrator's own and go in as written.
//!
//! [`misplaced`] is what saving a job checks; [`fill`] is what an attempt runs, checking again
//! and checking that the filled URL keeps the template's origin.

use std::collections::BTreeMap;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JobKind;
use super::params::{self, Parameter};
use crate::domain::secrets;

/// A place a parameter may not stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// A URL's scheme, user, host or port.
    UrlOrigin,
    /// A header's name.
    HeaderName,
    /// A body that is not JSON, a form or plain text.
    OtherBody,
    /// A command's program.
    Program,
    /// Part of a command's argument, not the whole of it.
    PartOfArgument,
    /// A whole argument, for a parameter whose values are not an allow-list.
    OpenArgument,
}

/// Why a job is held, as the `jobs.params_held` column keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    pub misplaced: Vec<Misplaced>,
    /// The hold paused the job (it was running): lifting the hold resumes it.
    pub paused_it: bool,
}

impl Hold {
    /// The hold a row's column records, if any (an unreadable one counts as none: the job's
    /// own definition is checked again when it runs).
    pub fn from_column(json: Option<&str>) -> Option<Hold> {
        json.and_then(|json| serde_json::from_str(json).ok())
    }
}

/// A parameter where it may not stand: the editor's field, the parameter, the place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Misplaced {
    pub field: String,
    pub param: String,
    pub place: Place,
}

/// Why a definition could not be filled in for an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FillError {
    /// Names without a value: secrets as `NAME`, parameters as `param:NAME`.
    Missing(Vec<String>),
    /// A parameter stands where it may not (a definition saved before the rules).
    Misplaced(Misplaced),
    /// The value would end a header (CR, LF or NUL).
    HeaderBreak { param: String },
    /// The value would be a whole `.` or `..` in a URL's path, which climbs it.
    DotSegment { param: String },
    /// The filled URL does not keep the origin (scheme, host, port) the template has.
    Origin,
}

/// Everything in a URL but the unreserved characters is percent-encoded, so a value cannot end
/// a path segment, start a query or a fragment, or add a query field.
const URL_DATA: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Every parameter that stands where it may not, in the definition's order.
pub fn misplaced(kind: &JobKind, declared: &[Parameter]) -> Vec<Misplaced> {
    let mut out = Vec::new();
    let mut refuse = |field: &str, param: &str, place: Place| {
        out.push(Misplaced {
            field: field.to_string(),
            param: param.to_string(),
            place,
        });
    };
    match kind {
        JobKind::Http {
            url, headers, body, ..
        } => {
            let origin_end = origin_end(url);
            for (at, name) in secrets::param_spans(url) {
                if at < origin_end {
                    refuse("http_url", &name, Place::UrlOrigin);
                }
            }
            for (header, _) in headers {
                for (_, name) in secrets::param_spans(header) {
                    refuse("http_headers", &name, Place::HeaderName);
                }
            }
            if body_kind(headers, body) == BodyKind::Other {
                for (_, name) in secrets::param_spans(body) {
                    refuse("http_body", &name, Place::OtherBody);
                }
            }
        }
        JobKind::Command { program, args, .. } => {
            for (_, name) in secrets::param_spans(program) {
                refuse("command_program", &name, Place::Program);
            }
            for arg in args {
                for (_, name) in secrets::param_spans(arg) {
                    let place = if arg.trim() != format!("${{param:{name}}}") {
                        Place::PartOfArgument
                    } else if declared
                        .iter()
                        .any(|p| p.name == name && p.is_allow_listed())
                    {
                        continue;
                    } else {
                        Place::OpenArgument
                    };
                    refuse("command_args", &name, place);
                }
            }
        }
        // A built-in reads its settings as values, never as code; a watched job runs nothing.
        JobKind::Builtin { .. } | JobKind::Watch(_) => {}
    }
    out
}

/// The definition an attempt runs: secrets filled in as written, each parameter encoded for
/// its place. `declared` are the job's parameters, `values` the run's.
pub fn fill(
    kind: &JobKind,
    secret: impl Fn(&str) -> Option<String>,
    values: &BTreeMap<String, Value>,
    declared: &[Parameter],
) -> Result<JobKind, FillError> {
    if let Some(first) = misplaced(kind, declared).into_iter().next() {
        return Err(FillError::Misplaced(first));
    }
    let mut filler = Filler {
        secret: &secret,
        values,
        missing: Vec::new(),
        refused: None,
    };
    let filled = match kind {
        JobKind::Http {
            method,
            url,
            headers,
            body,
            expected,
            follow_redirects,
        } => JobKind::Http {
            method: method.clone(),
            url: filler.url(url),
            headers: headers
                .iter()
                .map(|(n, v)| (filler.text(n), filler.header(v)))
                .collect(),
            body: filler.body(body_kind(headers, body), body),
            expected: expected.clone(),
            follow_redirects: *follow_redirects,
        },
        JobKind::Command {
            program,
            args,
            transient_codes,
        } => JobKind::Command {
            program: filler.text(program),
            args: args.iter().map(|a| filler.text(a)).collect(),
            transient_codes: transient_codes.clone(),
        },
        JobKind::Builtin { task, params } => JobKind::Builtin {
            task: task.clone(),
            params: params
                .iter()
                .map(|(k, v)| (k.clone(), filler.text(v)))
                .collect(),
        },
        JobKind::Watch(watch) => JobKind::Watch(*watch),
    };
    if let Some(refused) = filler.refused {
        return Err(refused);
    }
    if !filler.missing.is_empty() {
        return Err(FillError::Missing(filler.missing));
    }
    if let (JobKind::Http { url: template, .. }, JobKind::Http { url: filled, .. }) =
        (kind, &filled)
    {
        keeps_origin(template, filled, &secret)?;
    }
    Ok(filled)
}

/// One attempt's filling: what is missing and the first refusal, gathered across the texts.
struct Filler<'a, S> {
    secret: &'a S,
    values: &'a BTreeMap<String, Value>,
    missing: Vec<String>,
    refused: Option<FillError>,
}

impl<S: Fn(&str) -> Option<String>> Filler<'_, S> {
    /// `text` with each parameter written by `encode(name, value, offset)`.
    fn with(
        &mut self,
        text: &str,
        mut encode: impl FnMut(&str, &Value, usize) -> Result<String, FillError>,
    ) -> String {
        let values = self.values;
        let mut refused = None;
        let param = |name: &str, at: usize| {
            let value = values.get(name)?;
            match encode(name, value, at) {
                Ok(text) => Some(text),
                Err(e) => {
                    refused.get_or_insert(e);
                    Some(String::new())
                }
            }
        };
        let filled = match secrets::substitute_placed(text, self.secret, Some(param)) {
            Ok(filled) => filled,
            Err(names) => {
                for name in names {
                    if !self.missing.contains(&name) {
                        self.missing.push(name);
                    }
                }
                text.to_string()
            }
        };
        if let Some(e) = refused {
            self.refused.get_or_insert(e);
        }
        filled
    }

    /// A value as it is: in a command's whole argument (an allow-listed value), a built-in's
    /// setting, a header's name (which holds none).
    fn text(&mut self, text: &str) -> String {
        self.with(text, |_, value, _| Ok(params::as_text(value)))
    }

    fn url(&mut self, url: &str) -> String {
        let path = origin_end(url)..query_start(url);
        self.with(url, |name, value, at| {
            let text = params::as_text(value);
            if path.contains(&at) && (text == "." || text == "..") {
                return Err(FillError::DotSegment {
                    param: name.to_string(),
                });
            }
            Ok(utf8_percent_encode(&text, URL_DATA).to_string())
        })
    }

    fn header(&mut self, value: &str) -> String {
        self.with(value, |name, value, _| {
            let text = params::as_text(value);
            if text.contains(['\r', '\n', '\0']) {
                return Err(FillError::HeaderBreak {
                    param: name.to_string(),
                });
            }
            Ok(text)
        })
    }

    fn body(&mut self, kind: BodyKind, body: &str) -> String {
        match kind {
            BodyKind::Json => {
                let strings = json_string_spans(body);
                self.with(body, |_, value, at| {
                    Ok(if within(&strings, at) {
                        json_escaped(&params::as_text(value))
                    } else {
                        value.to_string()
                    })
                })
            }
            BodyKind::Form => self.with(body, |_, value, _| {
                Ok(
                    url::form_urlencoded::byte_serialize(params::as_text(value).as_bytes())
                        .collect(),
                )
            }),
            BodyKind::Text => self.text(body),
            // Refused by `misplaced` before any filling.
            BodyKind::Other => body.to_string(),
        }
    }
}

/// What a body is, which decides how a value is written in it: from its `Content-Type`, or,
/// without one, JSON when it starts like JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    Json,
    Form,
    Text,
    Other,
}

fn body_kind(headers: &[(String, String)], body: &str) -> BodyKind {
    let content_type = headers
        .iter()
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| {
            let essence = value.split(';').next().unwrap_or_default();
            essence.trim().to_ascii_lowercase()
        });
    match content_type.as_deref() {
        Some(t) if t == "application/json" || t.ends_with("+json") => BodyKind::Json,
        Some("application/x-www-form-urlencoded") => BodyKind::Form,
        Some("text/plain") => BodyKind::Text,
        Some(_) => BodyKind::Other,
        None if body.trim_start().starts_with(['{', '[']) => BodyKind::Json,
        None => BodyKind::Text,
    }
}

/// Where a URL's origin ends: the first `/`, `?` or `#` after `scheme://` (the whole text when
/// it has no such part, or no `://`).
fn origin_end(url: &str) -> usize {
    let Some(scheme_end) = url.find("://") else {
        return url.len();
    };
    let start = scheme_end + 3;
    url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i)
}

/// Where a URL's query (or fragment) starts, after its origin.
fn query_start(url: &str) -> usize {
    let from = origin_end(url);
    url[from..].find(['?', '#']).map_or(url.len(), |i| from + i)
}

/// The byte ranges of a JSON text's string literals, quotes included.
fn json_string_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut open: Option<usize> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match (open, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(start), '"') => {
                spans.push(start..i + 1);
                open = None;
            }
            (None, '"') => open = Some(i),
            _ => {}
        }
    }
    if let Some(start) = open {
        spans.push(start..text.len());
    }
    spans
}

fn within(spans: &[std::ops::Range<usize>], at: usize) -> bool {
    spans.iter().any(|span| span.contains(&at))
}

/// `text` as it goes between a JSON string's quotes.
fn json_escaped(text: &str) -> String {
    let quoted = Value::String(text.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// The filled URL has the origin the template has with its secrets filled in and every
/// parameter empty.
fn keeps_origin(
    template: &str,
    filled: &str,
    secret: &impl Fn(&str) -> Option<String>,
) -> Result<(), FillError> {
    let bare = secrets::substitute_placed(template, secret, Some(|_: &str, _| Some(String::new())))
        .unwrap_or_default();
    let origin = |text: &str| {
        url::Url::parse(text)
            .ok()
            .map(|u| u.origin().ascii_serialization())
    };
    match (origin(&bare), origin(filled)) {
        // A template that is not a URL at all fails as the HTTP call it makes.
        (None, _) => Ok(()),
        (Some(want), Some(got)) if want == got => Ok(()),
        _ => Err(FillError::Origin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn declared(lines: &str) -> Vec<Parameter> {
        params::parse_declarations(lines).unwrap()
    }

    fn http(url: &str, headers: &[(&str, &str)], body: &str) -> JobKind {
        JobKind::Http {
            method: "POST".into(),
            url: url.into(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: body.into(),
            expected: vec![(200, 299)],
            follow_redirects: Default::default(),
        }
    }

    fn command(program: &str, args: &[&str]) -> JobKind {
        JobKind::Command {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            transient_codes: vec![75],
        }
    }

    fn secret(name: &str) -> Option<String> {
        (name == "API").then(|| "tok-123456".to_string())
    }

    fn values(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn url_of(kind: &JobKind) -> &str {
        match kind {
            JobKind::Http { url, .. } => url,
            _ => unreachable!("an HTTP job"),
        }
    }

    fn body_of(kind: &JobKind) -> &str {
        match kind {
            JobKind::Http { body, .. } => body,
            _ => unreachable!("an HTTP job"),
        }
    }

    #[test]
    fn each_forbidden_place_is_refused_with_its_field() {
        let d = declared("p: string\nregion: string | choices: eu, us");
        let cases = [
            (
                http("https://api.example.com${param:p}", &[], ""),
                "http_url",
                Place::UrlOrigin,
            ),
            (
                http("https://${param:p}.example.com/", &[], ""),
                "http_url",
                Place::UrlOrigin,
            ),
            (
                http("${param:p}://x/", &[], ""),
                "http_url",
                Place::UrlOrigin,
            ),
            (
                http("https://x/", &[("X-${param:p}", "1")], ""),
                "http_headers",
                Place::HeaderName,
            ),
            (
                http(
                    "https://x/",
                    &[("Content-Type", "application/xml")],
                    "<a>${param:p}</a>",
                ),
                "http_body",
                Place::OtherBody,
            ),
            (
                command("${param:p}", &[]),
                "command_program",
                Place::Program,
            ),
            (
                command("sh", &["-c", "tar czf /b/${param:p}.tgz"]),
                "command_args",
                Place::PartOfArgument,
            ),
            (
                command("tar", &["--file=${param:region}"]),
                "command_args",
                Place::PartOfArgument,
            ),
            (
                command("rm", &["${param:p}"]),
                "command_args",
                Place::OpenArgument,
            ),
        ];
        for (kind, field, place) in cases {
            let found = misplaced(&kind, &d);
            assert_eq!(found.len(), 1, "{kind:?}");
            assert_eq!(
                (found[0].field.as_str(), found[0].place),
                (field, place),
                "{kind:?}"
            );
            assert!(matches!(
                fill(
                    &kind,
                    secret,
                    &values(&[("p", json!("x")), ("region", json!("eu"))]),
                    &d
                ),
                Err(FillError::Misplaced(_))
            ));
        }
    }

    #[test]
    fn allowed_places_are_accepted() {
        let d = declared(
            "p: string\nregion: string | choices: eu, us\nname: string | pattern: ^[a-z]+$\nn: number | min: 0\nyes: bool",
        );
        let kinds = [
            http(
                "https://x/a/${param:p}?q=${param:p}#${param:p}",
                &[("X-Id", "${param:p}")],
                "{\"q\": \"${param:p}\"}",
            ),
            http(
                "https://x/",
                &[("Content-Type", "application/x-www-form-urlencoded")],
                "a=${param:p}",
            ),
            http("https://x/", &[], "plain ${param:p}"),
            command(
                "tar",
                &[
                    "czf",
                    "${param:region}",
                    "${param:name}",
                    "${param:n}",
                    "${param:yes}",
                ],
            ),
            JobKind::Builtin {
                task: "demo".into(),
                params: [("sleep".to_string(), "${param:p}".to_string())].into(),
            },
        ];
        for kind in kinds {
            assert_eq!(misplaced(&kind, &d), [], "{kind:?}");
        }
    }

    #[test]
    fn the_issue_attacks_stay_data() {
        let d = declared("path: string\nq: string");
        // `@attacker.net/` in a path stays in the path, on the template's host.
        let kind = http(
            "https://api.example.com/v1/${param:path}",
            &[("Authorization", "Bearer ${secret:API}")],
            "{\"query\": \"${param:q}\"}",
        );
        let v = values(&[
            ("path", json!("@attacker.net/")),
            ("q", json!("x\", \"admin\": true, \"y\": \"")),
        ]);
        let filled = fill(&kind, secret, &v, &d).unwrap();
        assert_eq!(
            url_of(&filled),
            "https://api.example.com/v1/%40attacker.net%2F"
        );
        let body: serde_json::Map<String, Value> = serde_json::from_str(body_of(&filled)).unwrap();
        assert_eq!(body.keys().collect::<Vec<_>>(), ["query"]);
        assert_eq!(body["query"], json!("x\", \"admin\": true, \"y\": \""));
    }

    #[test]
    fn values_that_would_break_their_place_are_refused() {
        let d = declared("p: string");
        let header = http("https://x/", &[("X-Id", "${param:p}")], "");
        let v = values(&[("p", json!("a\r\nX-Admin: 1"))]);
        assert_eq!(
            fill(&header, secret, &v, &d),
            Err(FillError::HeaderBreak { param: "p".into() })
        );
        let path = http("https://x/files/${param:p}/raw", &[], "");
        assert_eq!(
            fill(&path, secret, &values(&[("p", json!(".."))]), &d),
            Err(FillError::DotSegment { param: "p".into() })
        );
        // In a query `..` is only text.
        let query = http("https://x/files?name=${param:p}", &[], "");
        assert!(fill(&query, secret, &values(&[("p", json!(".."))]), &d).is_ok());
    }

    #[test]
    fn bare_json_values_keep_their_type_and_forms_are_encoded() {
        let d = declared("n: number\ns: string");
        let kind = http("https://x/", &[], "{\"n\": ${param:n}, \"s\": ${param:s}}");
        let filled = fill(
            &kind,
            secret,
            &values(&[("n", json!(5)), ("s", json!("a\"b"))]),
            &d,
        )
        .unwrap();
        assert_eq!(body_of(&filled), "{\"n\": 5, \"s\": \"a\\\"b\"}");
        let form = http(
            "https://x/",
            &[(
                "content-type",
                "application/x-www-form-urlencoded; charset=utf-8",
            )],
            "a=${param:s}&b=2",
        );
        let filled = fill(&form, secret, &values(&[("s", json!("1&b=3"))]), &d).unwrap();
        assert_eq!(body_of(&filled), "a=1%26b%3D3&b=2");
    }

    #[test]
    fn a_missing_value_is_named() {
        let kind = http("https://x/${param:p}?k=${secret:NOPE}", &[], "");
        assert_eq!(
            fill(&kind, secret, &BTreeMap::new(), &declared("p: string")),
            Err(FillError::Missing(vec!["param:p".into(), "NOPE".into()]))
        );
    }

    proptest! {
        #[test]
        fn any_value_keeps_the_origin_and_the_keys(value in ".{0,60}") {
            let d = declared("p: string\nq: string");
            let kind = http(
                "https://api.example.com/a/${param:p}?x=${param:q}",
                &[("Authorization", "Bearer ${secret:API}")],
                "{\"q\": \"${param:q}\", \"n\": [\"${param:p}\", 1]}",
            );
            let v = values(&[("p", json!(value.clone())), ("q", json!(value.clone()))]);
            match fill(&kind, secret, &v, &d) {
                Ok(filled) => {
                    let url = url::Url::parse(url_of(&filled)).unwrap();
                    prop_assert_eq!(url.origin().ascii_serialization(), "https://api.example.com");
                    prop_assert_eq!(url.query_pairs().count(), 1);
                    let body: serde_json::Map<String, Value> =
                        serde_json::from_str(body_of(&filled)).unwrap();
                    prop_assert_eq!(body.keys().collect::<Vec<_>>(), ["n", "q"]);
                    prop_assert_eq!(&body["q"], &json!(value));
                }
                Err(e) => prop_assert!(
                    matches!(e, FillError::DotSegment { .. }) && (value == "." || value == ".."),
                    "{:?} for {:?}", e, value
                ),
            }
        }

        #[test]
        fn any_value_in_a_form_stays_one_field(value in ".{0,60}") {
            let d = declared("p: string");
            let kind = http(
                "https://x/",
                &[("Content-Type", "application/x-www-form-urlencoded")],
                "a=${param:p}&b=2",
            );
            let filled = fill(&kind, secret, &values(&[("p", json!(value.clone()))]), &d).unwrap();
            let pairs: Vec<(String, String)> =
                url::form_urlencoded::parse(body_of(&filled).as_bytes()).into_owned().collect();
            prop_assert_eq!(pairs, vec![("a".to_string(), value), ("b".to_string(), "2".to_string())]);
        }
    }
}
