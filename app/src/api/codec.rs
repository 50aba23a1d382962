//! The encoding of every server function's answer: JSON, as `server_fn`'s own `Json`, read
//! from a `&str` instead of a byte slice.
//!
//! The browser reads each answer type twice over: a resource rendered on the server arrives in
//! the page and is parsed with `serde_json::from_str` (Leptos's resource codec), and the same
//! answer fetched later by the server function was parsed with `serde_json::from_slice`. Each
//! reader is a different `serde_json::Deserializer` type, so every answer's `Deserialize` was
//! compiled into the wasm twice. Reading both from a `&str` keeps one copy (about 12 KB
//! Brotli off the operations pages' first load). The bytes on the wire are the
//! same JSON with the same content type, so API clients and tests see no difference.

use leptos::server_fn::codec::Post;
use leptos::server_fn::{Bytes, ContentType, Decodes, Encodes, Format, FormatType};
use serde::{Serialize, de::DeserializeOwned};

/// JSON in both directions, decoded from text (see the module's comment for why).
pub struct JsonText;

impl ContentType for JsonText {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl FormatType for JsonText {
    const FORMAT_TYPE: Format = Format::Text;
}

impl<T: Serialize> Encodes<T> for JsonText {
    type Error = serde_json::Error;

    fn encode(output: &T) -> Result<Bytes, Self::Error> {
        serde_json::to_vec(output).map(Bytes::from)
    }
}

impl<T: DeserializeOwned> Decodes<T> for JsonText {
    type Error = serde_json::Error;

    fn decode(bytes: Bytes) -> Result<T, Self::Error> {
        let text = std::str::from_utf8(&bytes).map_err(serde::de::Error::custom)?;
        serde_json::from_str(text)
    }
}

/// A server function's answer (and, where a form sends JSON, its arguments) as JSON in a
/// `POST` body: the `output =` of every `#[server]` in this module's siblings.
pub type Json = Post<JsonText>;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    struct Answer {
        name: String,
        count: u32,
    }

    #[test]
    fn answers_round_trip_as_the_same_json_server_fn_writes() {
        let answer = Answer {
            name: "nightly ✓".into(),
            count: 3,
        };
        let ours = <JsonText as Encodes<Answer>>::encode(&answer).expect("encodes");
        let theirs = <leptos::server_fn::codec::JsonEncoding as Encodes<Answer>>::encode(&answer)
            .expect("encodes");
        assert_eq!(ours, theirs);
        let back: Answer = <JsonText as Decodes<Answer>>::decode(ours).expect("decodes");
        assert_eq!(back, answer);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_an_error_not_a_panic() {
        let result = <JsonText as Decodes<Answer>>::decode(Bytes::from_static(b"\"\xff\""));
        assert!(result.is_err());
    }
}
