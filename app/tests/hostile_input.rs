//! Every parser of outside input, fed what an attacker or a broken client might send: no
//! panic, and what comes out stays within its bounds. (The log-line and hit parsers are fuzzed
//! beside their code in the server crate; the bot rules in `domain/bots.rs`.)

use app::domain::account::{NewPassword, Username, safe_next_path};
use app::domain::cron::CronExpr;
use app::domain::filters::{HitsSelection, QueueCursor, QueueQuery, TrafficFilter};
use app::domain::job::{JobInput, JobSpec};
use app::domain::retry::{RetryInput, RetryPolicy};
use app::domain::{duration, email, run};
use proptest::prelude::*;

/// Text of the kinds that break parsers: any Unicode, control characters, digits in bulk,
/// separators, and the odd huge number.
fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,64}",
        "[0-9]{1,40}",
        "[-+0-9.eE:/ ,smhd]{0,24}",
        "[\\x00-\\x1f/\\\\%.:@?#]{0,24}",
        Just("18446744073709551616".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("9999-99-99".to_string()),
    ]
}

fn opt(s: &str) -> Option<&str> {
    Some(s)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn a_next_path_never_leaves_the_site(next in hostile()) {
        let path = safe_next_path(Some(&next));
        prop_assert!(path.starts_with('/'), "{path}");
        prop_assert!(!path.starts_with("//") && !path.starts_with("/\\"), "{path}");
        prop_assert!(!path.chars().any(|c| c.is_control()), "{path:?}");
    }

    #[test]
    fn cursors_and_filters_refuse_or_parse(a in hostile(), b in hostile(), c in hostile(), d in hostile()) {
        let _ = QueueCursor::parse(&a);
        let _ = QueueQuery::parse(opt(&a), opt(&b), opt(&c), opt(&d), opt(&a));
        if let Ok(traffic) = TrafficFilter::parse(opt(&a), opt(&b), opt(&c), opt(&d), opt(&c), opt(&b)) {
            let _ = HitsSelection::parse(traffic, opt(&a), opt(&b), opt(&c), opt(&d));
        }
    }

    #[test]
    fn durations_cron_and_headers_refuse_or_parse(text in hostile()) {
        if let Ok(ms) = duration::parse_ms(&text) {
            prop_assert!(ms < u64::MAX);
        }
        let _ = CronExpr::parse(&text);
        let _ = run::parse_retry_after(&text, chrono::Utc::now());
        let _ = email::parse_list(&text);
        let _ = Username::parse(&text);
        let _ = NewPassword::parse(&text);
    }

    #[test]
    fn a_retry_policy_from_any_form_is_bounded(
        first in hostile(), multiplier in hostile(), retries in hostile(), cap in hostile(),
    ) {
        let input = RetryInput {
            first,
            multiplier,
            max_retries: retries,
            jitter: "full".into(),
            cap,
        };
        if let Ok(policy) = RetryPolicy::parse(&input) {
            for delay in policy.delays_ms() {
                prop_assert!(delay.is_finite() && delay >= 0.0);
            }
            prop_assert!(policy.total_ms().is_finite());
        }
    }

    #[test]
    fn a_job_form_with_any_fields_is_parsed_or_refused_by_field(fields in prop::collection::vec(hostile(), 24)) {
        let f = |i: usize| fields[i].clone();
        let mut input = JobInput {
            name: f(0),
            description: f(1),
            kind: ["http", "command", "builtin"][fields[2].len() % 3].into(),
            http_method: f(3),
            http_url: f(4),
            http_headers: f(5),
            http_body: f(6),
            http_expected: f(7),
            command_program: f(8),
            command_args: f(9),
            command_transient_codes: f(10),
            builtin_task: f(11),
            builtin_params: f(12),
            cron: f(13),
            timezone: f(14),
            ..JobInput::default()
        };
        input.timeout_static = f(15);
        input.timeout_window = f(16);
        input.timeout_factor = f(17);
        input.timeout_floor = f(18);
        input.timeout_hard_cap = f(19);
        input.timeout_stall = f(20);
        input.alert_to = f(21);
        input.escalate_after = f(22);
        input.dependants = f(23);
        match JobSpec::parse(&input) {
            Ok(_) => {}
            Err(errors) => prop_assert!(errors.iter().all(|e| !e.field.is_empty() && !e.problem.to_string().is_empty())),
        }
        let _ = input.redacted();
    }
}
