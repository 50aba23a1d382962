//! One delivery to a platform: the request (URL, headers, JSON body, signature) and the
//! verdict on the answer.
//!
//! | kind       | body                                   | signing                                       | success                         |
//! |------------|----------------------------------------|-----------------------------------------------|---------------------------------|
//! | `wecom`    | `msgtype: markdown`                    | none (the key is in the URL)                  | HTTP 200 and `errcode` 0        |
//! | `dingtalk` | `msgtype: markdown` with a title       | `timestamp` (ms) and `sign` in the URL        | HTTP 200 and `errcode` 0        |
//! | `feishu`   | `msg_type: interactive` card           | `timestamp` (s) and `sign` in the body        | HTTP 200 and `code` 0           |
//! | `slack`    | Block Kit, plain-text `text` fallback  | none (the URL is the credential)              | HTTP 200                        |
//! | `webhook`  | the event JSON (`docs/WEBHOOKS.md`)    | Standard Webhooks headers                     | any 2xx                         |
//!
//! A platform error code in a 200 answer is a failure, final unless it says "too fast".

use app::domain::chat::{ChannelKind, ChatEvent};
use app::i18n::chat::ChatMessage;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

/// DingTalk: Base64 of HMAC-SHA256 over `timestamp + "\n" + secret`, keyed by the secret,
/// URL-encoded; `timestamp` in milliseconds.
pub fn dingtalk_sign(secret: &str, timestamp_ms: i64) -> String {
    let to_sign = format!("{timestamp_ms}\n{secret}");
    let signature = B64.encode(hmac_sha256(secret.as_bytes(), to_sign.as_bytes()));
    form_urlencoded::byte_serialize(signature.as_bytes()).collect()
}

/// Feishu / Lark: Base64 of HMAC-SHA256 keyed by `timestamp + "\n" + secret` over an empty
/// message; `timestamp` in seconds.
pub fn feishu_sign(secret: &str, timestamp_s: i64) -> String {
    let key = format!("{timestamp_s}\n{secret}");
    B64.encode(hmac_sha256(key.as_bytes(), b""))
}

/// Standard Webhooks: `v1,` + Base64 of HMAC-SHA256 over `id.timestamp.body`, keyed by the
/// secret's bytes (`whsec_<base64>`; a secret without the prefix is used as it is).
pub fn webhook_signature(secret: &str, id: &str, timestamp_s: i64, body: &[u8]) -> String {
    let key = secret
        .strip_prefix("whsec_")
        .and_then(|b64| B64.decode(b64).ok())
        .unwrap_or_else(|| secret.as_bytes().to_vec());
    let mut signed = format!("{id}.{timestamp_s}.").into_bytes();
    signed.extend_from_slice(body);
    format!("v1,{}", B64.encode(hmac_sha256(&key, &signed)))
}

/// What one delivery sends.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// The webhook event as receivers get it (documented in `docs/WEBHOOKS.md`).
pub fn webhook_event(event: &ChatEvent, message: &ChatMessage) -> Value {
    json!({
        "version": 1,
        "type": event.event.as_str(),
        "title": message.title,
        "job": event.job,
        "run": event.run_id.map(|id| json!({
            "id": id,
            "status": event.run_status.map(|s| s.as_str()),
            "attempts": event.attempt,
        })),
        "error": event.error_class.map(|class| json!({
            "class": class.as_str(),
            "message": event.message,
        })),
        "failed_runs": event.failed_runs,
        "since": event.since,
        "down_for_s": event.down_for_s,
        "details": event.details.iter().map(|d| json!({ "label": d.label, "value": d.value })).collect::<Vec<_>>(),
        "links": { "run": event.run_url, "failed_queue": event.queue_url, "more": event.more_url },
        "at": event.at,
    })
}

/// The request for one message. `delivery_id` is the outbox row's stable id: a retry of the
/// same delivery carries the same `webhook-id`, so a receiver can drop a repeat.
pub fn prepare(
    kind: ChannelKind,
    url: &str,
    secret: Option<&str>,
    event: &ChatEvent,
    message: &ChatMessage,
    delivery_id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Prepared {
    let json_header = ("content-type".to_string(), "application/json".to_string());
    let body = |value: Value| serde_json::to_vec(&value).unwrap_or_default();
    match kind {
        ChannelKind::Wecom => Prepared {
            url: url.to_string(),
            headers: vec![json_header],
            body: body(json!({
                "msgtype": "markdown",
                "markdown": { "content": message.markdown },
            })),
        },
        ChannelKind::Dingtalk => {
            let mut url = url.to_string();
            if let Some(secret) = secret.filter(|s| !s.is_empty()) {
                let timestamp = now.timestamp_millis();
                let separator = if url.contains('?') { '&' } else { '?' };
                url = format!(
                    "{url}{separator}timestamp={timestamp}&sign={}",
                    dingtalk_sign(secret, timestamp)
                );
            }
            Prepared {
                url,
                headers: vec![json_header],
                body: body(json!({
                    "msgtype": "markdown",
                    "markdown": { "title": message.title, "text": message.markdown },
                })),
            }
        }
        ChannelKind::Feishu => {
            let mut value = json!({
                "msg_type": "interactive",
                "card": {
                    "header": {
                        "title": { "tag": "plain_text", "content": message.title },
                        "template": header_colour(event),
                    },
                    "elements": [ { "tag": "markdown", "content": message.markdown } ],
                },
            });
            if let Some(secret) = secret.filter(|s| !s.is_empty()) {
                let timestamp = now.timestamp();
                value["timestamp"] = json!(timestamp.to_string());
                value["sign"] = json!(feishu_sign(secret, timestamp));
            }
            Prepared {
                url: url.to_string(),
                headers: vec![json_header],
                body: body(value),
            }
        }
        ChannelKind::Slack => Prepared {
            url: url.to_string(),
            headers: vec![json_header],
            body: body(json!({
                "text": message.plain,
                "blocks": [
                    { "type": "header", "text": { "type": "plain_text", "text": trim_chars(&message.title, 150) } },
                    { "type": "section", "text": { "type": "mrkdwn", "text": slack_escape(&message.plain) } },
                ],
            })),
        },
        ChannelKind::Webhook | ChannelKind::Email => {
            let payload = body(webhook_event(event, message));
            let timestamp = now.timestamp();
            let mut headers = vec![
                json_header,
                ("webhook-id".to_string(), delivery_id.to_string()),
                ("webhook-timestamp".to_string(), timestamp.to_string()),
            ];
            if let Some(secret) = secret.filter(|s| !s.is_empty()) {
                headers.push((
                    "webhook-signature".to_string(),
                    webhook_signature(secret, delivery_id, timestamp, &payload),
                ));
            }
            Prepared {
                url: url.to_string(),
                headers,
                body: payload,
            }
        }
    }
}

fn header_colour(event: &ChatEvent) -> &'static str {
    use app::domain::chat::EventType;
    match event.event {
        EventType::FirstFailure | EventType::Escalation => "red",
        EventType::Recovered | EventType::TrafficRecovered => "green",
        EventType::Digest | EventType::TrafficReport | EventType::Summary | EventType::Test => {
            "blue"
        }
        EventType::Trend
        | EventType::TrafficAlert
        | EventType::TooSlow
        | EventType::WaitingForNode => "orange",
    }
}

fn trim_chars(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// Slack's mrkdwn needs `&`, `<` and `>` escaped; everything else is literal.
fn slack_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// What an answer means for the delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Delivered; the platform's answer.
    Accepted(String),
    /// Worth another try later (network, 5xx, 429, "too fast").
    Retry(String),
    /// Refused for good (4xx, a platform error code); resend by hand after fixing the channel.
    Final(String),
}

/// Platform codes that mean "too many messages right now", not "wrong".
const TOO_FAST: &[i64] = &[
    130_101, // DingTalk: send too fast
    45_009,  // WeCom: api freq out of limit
    11_232,  // Feishu: frequency limited
];

/// The verdict on an HTTP answer (`status`, `body`) from a platform of `kind`.
pub fn judge(kind: ChannelKind, status: u16, body: &str) -> Verdict {
    let answer = format!("HTTP {status}: {}", trim_chars(body.trim(), 500));
    if status == 429 || status >= 500 {
        return Verdict::Retry(answer);
    }
    if !(200..300).contains(&status) {
        return Verdict::Final(answer);
    }
    let code_field = match kind {
        ChannelKind::Wecom | ChannelKind::Dingtalk => Some(("errcode", "errmsg")),
        ChannelKind::Feishu => Some(("code", "msg")),
        _ => None,
    };
    let Some((code_key, message_key)) = code_field else {
        return Verdict::Accepted(answer);
    };
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    // Feishu's older answer format says `StatusCode` / `StatusMessage`.
    let code = parsed.as_ref().and_then(|v| {
        v.get(code_key)
            .or_else(|| v.get("StatusCode"))
            .and_then(Value::as_i64)
    });
    let message = parsed
        .as_ref()
        .and_then(|v| v.get(message_key).or_else(|| v.get("StatusMessage")))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    match code {
        Some(0) => Verdict::Accepted(answer),
        Some(code) if TOO_FAST.contains(&code) => {
            Verdict::Retry(format!("{code_key} {code}: {message}"))
        }
        Some(code) => Verdict::Final(format!("{code_key} {code}: {message}")),
        None => Verdict::Final(format!("not the platform's answer: {answer}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::chat::EventType;
    use app::i18n::Locale;
    use app::i18n::chat::compose;
    use sha2::Digest;

    /// HMAC-SHA256 written out from RFC 2104 over plain SHA-256: the signatures below are
    /// checked against this, not against the `hmac` crate the code uses.
    fn reference_hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
        let mut block = [0u8; 64];
        if key.len() > 64 {
            block[..32].copy_from_slice(&sha2::Sha256::digest(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let ipad: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
        let opad: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
        let inner = sha2::Sha256::digest([ipad.as_slice(), message].concat());
        sha2::Sha256::digest([opad.as_slice(), inner.as_slice()].concat()).to_vec()
    }

    #[test]
    fn dingtalk_signs_timestamp_and_secret_keyed_by_the_secret() {
        let secret = "SEC0123456789abcdef";
        let ts = 1_700_000_000_123;
        let expected = B64.encode(reference_hmac(
            secret.as_bytes(),
            format!("{ts}\n{secret}").as_bytes(),
        ));
        let encoded: String = form_urlencoded::byte_serialize(expected.as_bytes()).collect();
        assert_eq!(dingtalk_sign(secret, ts), encoded);
        assert!(
            !dingtalk_sign(secret, ts).contains(['+', '/', '=']),
            "URL-encoded"
        );
    }

    #[test]
    fn feishu_signs_an_empty_message_keyed_by_timestamp_and_secret() {
        let secret = "feishu-secret";
        let ts = 1_700_000_000;
        let expected = B64.encode(reference_hmac(format!("{ts}\n{secret}").as_bytes(), b""));
        assert_eq!(feishu_sign(secret, ts), expected);
    }

    #[test]
    fn webhook_signatures_match_the_standard_webhooks_test_vector() {
        // The vector the Standard Webhooks reference libraries test against.
        assert_eq!(
            webhook_signature(
                "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                br#"{"test": 2432232314}"#,
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    fn event() -> ChatEvent {
        ChatEvent {
            event: EventType::FirstFailure,
            job: "export".into(),
            run_id: Some(7),
            run_status: None,
            attempt: Some(2),
            error_class: None,
            message: Some("boom".into()),
            failed_runs: 1,
            since: None,
            down_for_s: None,
            run_url: Some("https://b.example/runs/7".into()),
            queue_url: None,
            at: "2026-12-01T00:00:00Z".parse().unwrap(),
            headline: None,
            details: Vec::new(),
            more_url: None,
        }
    }

    fn body(p: &Prepared) -> Value {
        serde_json::from_slice(&p.body).unwrap()
    }

    #[test]
    fn each_platform_gets_its_own_envelope() {
        let now: chrono::DateTime<chrono::Utc> = "2026-12-01T00:00:00Z".parse().unwrap();
        let e = event();
        let m = compose(&e, Locale::english(), 4096);
        let wecom = prepare(
            ChannelKind::Wecom,
            "https://w/send?key=k",
            None,
            &e,
            &m,
            "d1",
            now,
        );
        assert_eq!(body(&wecom)["msgtype"], "markdown");
        assert_eq!(body(&wecom)["markdown"]["content"], m.markdown);

        let ding = prepare(
            ChannelKind::Dingtalk,
            "https://d/robot/send?access_token=t",
            Some("SEC1"),
            &e,
            &m,
            "d1",
            now,
        );
        assert!(
            ding.url
                .starts_with("https://d/robot/send?access_token=t&timestamp=1796083200000&sign="),
            "{}",
            ding.url
        );
        assert_eq!(body(&ding)["markdown"]["title"], m.title);

        let feishu = prepare(
            ChannelKind::Feishu,
            "https://f/hook/x",
            Some("fs"),
            &e,
            &m,
            "d1",
            now,
        );
        let fb = body(&feishu);
        assert_eq!(fb["msg_type"], "interactive");
        assert_eq!(fb["timestamp"], "1796083200");
        assert_eq!(fb["sign"], feishu_sign("fs", 1_796_083_200));
        assert_eq!(fb["card"]["header"]["template"], "red");

        let slack = prepare(
            ChannelKind::Slack,
            "https://hooks.slack.com/services/x",
            None,
            &e,
            &m,
            "d1",
            now,
        );
        let sb = body(&slack);
        assert_eq!(sb["text"], m.plain);
        assert_eq!(sb["blocks"][0]["type"], "header");

        let hook = prepare(
            ChannelKind::Webhook,
            "https://r/in",
            Some("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
            &e,
            &m,
            "dlv_1",
            now,
        );
        let header = |name: &str| {
            hook.headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(header("webhook-id").as_deref(), Some("dlv_1"));
        assert_eq!(
            header("webhook-signature").unwrap(),
            webhook_signature(
                "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                "dlv_1",
                1_796_083_200,
                &hook.body
            )
        );
        let hb = body(&hook);
        assert_eq!(hb["version"], 1);
        assert_eq!(hb["type"], "job.failed");
        assert_eq!(hb["run"]["id"], 7);
    }

    #[test]
    fn answers_are_judged_by_status_and_platform_code() {
        use Verdict::*;
        assert!(matches!(
            judge(ChannelKind::Dingtalk, 200, r#"{"errcode":0,"errmsg":"ok"}"#),
            Accepted(_)
        ));
        assert_eq!(
            judge(
                ChannelKind::Dingtalk,
                200,
                r#"{"errcode":310000,"errmsg":"sign not match"}"#
            ),
            Final("errcode 310000: sign not match".into())
        );
        assert!(matches!(
            judge(
                ChannelKind::Wecom,
                200,
                r#"{"errcode":45009,"errmsg":"api freq out of limit"}"#
            ),
            Retry(_)
        ));
        assert!(matches!(
            judge(
                ChannelKind::Feishu,
                200,
                r#"{"code":19021,"msg":"sign match fail"}"#
            ),
            Final(_)
        ));
        assert!(matches!(
            judge(
                ChannelKind::Feishu,
                200,
                r#"{"StatusCode":0,"StatusMessage":"success"}"#
            ),
            Accepted(_)
        ));
        assert!(matches!(judge(ChannelKind::Slack, 200, "ok"), Accepted(_)));
        assert!(matches!(
            judge(ChannelKind::Slack, 404, "no_service"),
            Final(_)
        ));
        assert!(matches!(judge(ChannelKind::Webhook, 503, ""), Retry(_)));
        assert!(matches!(judge(ChannelKind::Webhook, 429, ""), Retry(_)));
        assert!(matches!(judge(ChannelKind::Wecom, 200, "<html>"), Final(_)));
    }
}
