//! Tick and shard references in an HTTP job (`crate::domain::tick`) as parameters of their
//! own, so the parameters' placement rules (`super::placement`) write and check them.

use super::JobKind;
use super::params::{ParamType, Parameter};
use crate::domain::tick::{RunTick, SHARD_OPEN, spans, spans_of};

/// The HTTP job with each tick reference turned into a parameter reference of its own, and
/// those parameters with their values (unknown references are left as written). Any other
/// kind is returned as it is: a command reads the tick from its environment.
pub fn as_params(kind: &JobKind, tick: &RunTick) -> (JobKind, Vec<(Parameter, String)>) {
    let JobKind::Http {
        method,
        url,
        headers,
        body,
        expected,
        follow_redirects,
    } = kind
    else {
        return (kind.clone(), Vec::new());
    };
    let mut made: Vec<(Parameter, String)> = Vec::new();
    let mut rewrite = |text: &str| -> String {
        let mut refs: Vec<(std::ops::Range<usize>, Option<String>)> = spans(text)
            .into_iter()
            .map(|(range, reference)| (range, tick.value(reference)))
            .collect();
        refs.extend(
            spans_of(text, SHARD_OPEN)
                .into_iter()
                .map(|(range, name)| (range, tick.shard.and_then(|s| s.value(name)))),
        );
        refs.sort_by_key(|(range, _)| range.start);
        let mut out = String::with_capacity(text.len());
        let mut kept = 0;
        for (range, value) in refs {
            let Some(value) = value else {
                continue;
            };
            out.push_str(&text[kept..range.start]);
            let name = format!(".tick-{}", made.len());
            out.push_str(&format!("${{param:{name}}}"));
            made.push((text_parameter(name), value));
            kept = range.end;
        }
        out.push_str(&text[kept..]);
        out
    };
    let kind = JobKind::Http {
        method: method.clone(),
        url: rewrite(url),
        headers: headers
            .iter()
            .map(|(n, v)| (n.clone(), rewrite(v)))
            .collect(),
        body: rewrite(body),
        expected: expected.clone(),
        follow_redirects: *follow_redirects,
    };
    (kind, made)
}

fn text_parameter(name: String) -> Parameter {
    Parameter {
        name,
        kind: ParamType::String,
        default: None,
        required: true,
        choices: Vec::new(),
        pattern: None,
        max_length: None,
        min: None,
        max: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn tick() -> RunTick {
        RunTick::new(
            "2026-10-08T01:00:00Z".parse().unwrap(),
            &chrono_tz::Asia::Shanghai,
            NaiveDate::from_ymd_opt(2026, 10, 1).unwrap(),
        )
    }

    #[test]
    fn http_tick_references_become_parameters_of_their_own() {
        let kind = JobKind::Http {
            method: "POST".into(),
            url: "https://x.test/d/${tick:business_date:%d/%m/%Y}?at=${tick:scheduled_at}".into(),
            headers: vec![("X-Day".into(), "${tick:business_date}".into())],
            body: "${tick:nope}".into(),
            expected: vec![(200, 299)],
            follow_redirects: Default::default(),
        };
        let (rewritten, params) = as_params(&kind, &tick());
        let JobKind::Http {
            url, headers, body, ..
        } = rewritten
        else {
            panic!()
        };
        assert_eq!(url, "https://x.test/d/${param:.tick-0}?at=${param:.tick-1}");
        assert_eq!(headers[0].1, "${param:.tick-2}");
        assert_eq!(body, "${tick:nope}");
        let values: Vec<&str> = params.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(
            values,
            ["01/10/2026", "2026-10-08T09:00:00+08:00", "2026-10-01"]
        );
    }

    #[test]
    fn a_childs_shard_is_written_where_its_reference_stands() {
        let kind = JobKind::Http {
            method: "GET".into(),
            url: "https://x.test/part/${shard:index}/of/${shard:total}?d=${tick:business_date}"
                .into(),
            headers: Vec::new(),
            body: String::new(),
            expected: vec![(200, 299)],
            follow_redirects: Default::default(),
        };
        let mut child = tick();
        child.shard = Some(crate::domain::job::spread::Shard { index: 1, total: 3 });
        let (rewritten, params) = as_params(&kind, &child);
        let JobKind::Http { url, .. } = rewritten else {
            panic!()
        };
        assert_eq!(
            url,
            "https://x.test/part/${param:.tick-0}/of/${param:.tick-1}?d=${param:.tick-2}"
        );
        let values: Vec<&str> = params.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(values, ["1", "3", "2026-10-01"]);
    }
}
