//! The catalogues against the code: every key the code names exists in English (and so, by
//! `i18n::tests::catalogues_have_the_same_keys`, in every language), every key in the
//! catalogue is named somewhere, and the pages and components show no text that bypasses the
//! catalogue.
//!
//! The code names a key with `t!("key")`, `t!(in locale, "key")`, `problem!("key")` (the domain's
//! facts, worded later) or `key!("key")` (for keys
//! chosen at run time); see `app/src/i18n/mod.rs`. The text scan is deliberately simple: it
//! reads the `view!` macros of `app/src/pages` and `app/src/components` and flags string
//! literals that are text nodes, a whole `{ "…" }` block, or the value of an attribute a person
//! reads (`title`, `placeholder`, `aria-label`, `alt`).

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{root, rust_files};
use fluent_syntax::ast::Entry;
use regex::Regex;

fn english_keys() -> BTreeSet<String> {
    let path = root().join("app/locales/en/bulwark.ftl");
    let text = std::fs::read_to_string(&path).expect("the English catalogue");
    let resource = fluent_syntax::parser::parse(text.as_str())
        .unwrap_or_else(|(_, errors)| panic!("the English catalogue does not parse: {errors:?}"));
    resource
        .body
        .iter()
        .filter_map(|entry| match entry {
            Entry::Message(m) => Some(m.id.name.to_string()),
            _ => None,
        })
        .collect()
}

fn used_keys() -> BTreeSet<(String, String)> {
    let pattern =
        Regex::new(r#"(?:\b(?:t|problem)!\(\s*(?:in\s+[^,]+,\s*)?|\bkey!\(\s*)"([A-Za-z0-9_-]+)""#)
            .expect("pattern");
    let mut files = Vec::new();
    rust_files(&root().join("app/src"), &mut files);
    rust_files(&root().join("server/src"), &mut files);
    let mut used = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("source file");
        for capture in pattern.captures_iter(&text) {
            used.insert((capture[1].to_string(), file.display().to_string()));
        }
    }
    used
}

#[test]
fn every_key_named_in_the_code_is_in_the_catalogue() {
    let keys = english_keys();
    let missing: Vec<String> = used_keys()
        .into_iter()
        .filter(|(key, _)| !keys.contains(key))
        .map(|(key, file)| format!("{key} (in {file})"))
        .collect();
    assert!(
        missing.is_empty(),
        "keys missing from app/locales/en/bulwark.ftl: {missing:#?}"
    );
}

#[test]
fn every_key_in_the_catalogue_is_used() {
    let used: BTreeSet<String> = used_keys().into_iter().map(|(key, _)| key).collect();
    let unused: Vec<String> = english_keys().difference(&used).cloned().collect();
    assert!(unused.is_empty(), "keys no code uses: {unused:#?}");
}

/// The byte ranges of each `view! { … }` in `text`: braces counted, string literals skipped.
fn view_macros(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("view! {") {
        let start = from + found + "view! {".len();
        let (mut depth, mut i, mut in_string) = (1, start, false);
        while i < bytes.len() && depth > 0 {
            match (in_string, bytes[i]) {
                (true, b'\\') => i += 1,
                (true, b'"') => in_string = false,
                (false, b'"') => in_string = true,
                (false, b'{') => depth += 1,
                (false, b'}') => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        ranges.push((start, i));
        from = i;
    }
    ranges
}

/// String literals in `view!` macros that a person would read and that do not come from the
/// catalogue, as `file:line: "text"`.
fn bare_texts(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("source file");
    let literal = Regex::new(r#""((?:[^"\\]|\\.)*)""#).expect("pattern");
    let words = Regex::new(r"[A-Za-z]{2,}").expect("pattern");
    let visible_attribute =
        Regex::new(r"(?:\btitle|placeholder|aria-label|\balt)\s*=\s*$").expect("pattern");
    let mut found = Vec::new();
    for (start, end) in view_macros(&text) {
        let body = &text[start..end];
        for m in literal.captures_iter(body) {
            let whole = m.get(0).expect("match");
            let content = &m[1];
            if !words.is_match(content) {
                continue;
            }
            if NAMES.contains(&content.trim()) {
                continue;
            }
            let before = body[..whole.start()].trim_end();
            let after = body[whole.end()..].trim_start();
            // After an element, a `}` or another text; not a `match` arm's `=>`.
            let text_node = (before.ends_with('>') && !before.ends_with("=>"))
                || before.ends_with('"')
                || before.ends_with('}');
            // `{if … { "pill ok" } else { … }}` picks a class: lowercase words only. Text for
            // people has capitals, punctuation or other scripts.
            let reads_as_text = content
                .chars()
                .any(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || " _-".contains(c)));
            let whole_block = before.ends_with('{') && after.starts_with('}') && reads_as_text;
            // A placeholder that is an example value (`you@example.com`, `08:00`) is the same in
            // every language; one with words is not.
            let attribute = visible_attribute.is_match(before)
                && (content.contains(' ') || content.chars().any(|c| c.is_ascii_uppercase()));
            if text_node || whole_block || attribute {
                let line = text[..start + whole.start()].lines().count();
                found.push(format!("{}:{line}: \"{content}\"", file.display()));
            }
        }
    }
    found
}

/// Text that is the same in every language: the product's name and addresses.
const NAMES: &[&str] = &["Bulwark", "/api/v1/openapi.json", "(OpenAPI 3.1)"];

#[test]
fn pages_show_no_text_outside_the_catalogue() {
    let mut files = Vec::new();
    rust_files(&root().join("app/src/pages"), &mut files);
    rust_files(&root().join("app/src/components"), &mut files);
    files.sort();
    let bare: Vec<String> = files.iter().flat_map(|file| bare_texts(file)).collect();
    assert!(bare.is_empty(), "text not from the catalogue: {bare:#?}");
}

#[test]
fn the_scan_sees_bare_text() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("page.rs");
    std::fs::write(
        &file,
        r#"fn page() { view! { <h1>"Jobs"</h1> <p class=if b { "pill ok" } else { "pill" }>{t!("ok")}</p>
            <input placeholder="Search jobs" /> <input placeholder="you@example.com" />
            {if a { "Saving…" } else { "Save" }} <b>"Bulwark"</b> } }"#,
    )
    .expect("write");
    let found = bare_texts(&file);
    assert_eq!(found.len(), 4, "{found:#?}");
}
