//! The documentation stays true to the repository: every relative link in the README,
//! CONTRIBUTING and the book under `docs/` reaches a file (and a heading, when it names one),
//! and the command-line reference is what the binary's own help says.
//!
//! `make docs` writes the command-line reference again after a command changes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository's root")
}

/// The Markdown a reader meets: the front door, the contributors' guide, the book, the notes
/// beside vendored code.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![
        root.join("README.md"),
        root.join("CONTRIBUTING.md"),
        root.join("vendor/README.md"),
    ];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/ is readable") {
            let path = entry.expect("a docs/ entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A heading's anchor as GitHub and mdBook make it: lower case, letters, digits, `-` and `_`
/// kept, spaces become `-`, everything else dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// What a Markdown file links to, and the anchors of its headings.
struct Page {
    links: Vec<String>,
    anchors: BTreeSet<String>,
}

fn read_page(path: &Path) -> Page {
    let text = std::fs::read_to_string(path).expect("a Markdown file is readable");
    let mut page = Page {
        links: Vec::new(),
        anchors: BTreeSet::new(),
    };
    let mut heading: Option<String> = None;
    for event in Parser::new(&text) {
        match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                page.links.push(dest_url.to_string());
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    page.anchors.insert(anchor(&h));
                }
            }
            _ => {}
        }
    }
    page
}

/// Why `link`, written in `from`, reaches nothing; `None` when it does (or leaves the
/// repository, which this test cannot judge).
fn broken(from: &Path, link: &str, pages: &BTreeMap<PathBuf, Page>) -> Option<String> {
    if link.contains("://") || link.starts_with("mailto:") {
        return None;
    }
    let (file, fragment) = match link.split_once('#') {
        Some((file, fragment)) => (file, Some(fragment)),
        None => (link, None),
    };
    let target = if file.is_empty() {
        from.to_path_buf()
    } else {
        from.parent()?.join(file)
    };
    let Ok(target) = target.canonicalize() else {
        return Some("no such file".into());
    };
    match (fragment, pages.get(&target)) {
        (Some(f), Some(page)) if !page.anchors.contains(f) => {
            Some(format!("no heading #{f} there"))
        }
        (Some(_), None) => Some("an anchor into a file that is not Markdown".into()),
        _ => None,
    }
}

#[test]
fn every_relative_link_resolves() {
    let root = root();
    let pages: BTreeMap<PathBuf, Page> = markdown_files(&root)
        .into_iter()
        .map(|path| {
            let page = read_page(&path);
            (path.canonicalize().expect("a listed file exists"), page)
        })
        .collect();
    assert!(pages.len() > 20, "the book is found: {:?}", pages.keys());
    let mut wrong = Vec::new();
    for (path, page) in &pages {
        for link in &page.links {
            if let Some(why) = broken(path, link, &pages) {
                let file = path.strip_prefix(&root).unwrap_or(path);
                wrong.push(format!("{}: {link}: {why}", file.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "broken links:\n{}", wrong.join("\n"));
}

#[test]
fn the_anchor_rule_matches_the_forges() {
    assert_eq!(
        anchor("2. Layers, and which way imports run"),
        "2-layers-and-which-way-imports-run"
    );
    assert_eq!(
        anchor("Page chunks (app/src/pages/routes.rs)"),
        "page-chunks-appsrcpagesroutesrs"
    );
    assert_eq!(anchor("bulwark user add"), "bulwark-user-add");
}

/// The line in `docs/reference/cli.md` after which everything is generated.
const GENERATED: &str =
    "<!-- Generated from the binary's --help by `make docs`: do not edit below. -->\n";

/// The command-line reference is the binary's own help: a command or option added, renamed or
/// explained differently changes it, and this fails until `make docs` has written it again.
#[test]
fn the_cli_reference_is_current() {
    let path = root().join("docs/reference/cli.md");
    let text = std::fs::read_to_string(&path).expect("docs/reference/cli.md exists");
    let (written, generated_now) = text
        .split_once(GENERATED)
        .expect("docs/reference/cli.md has its generated part");
    let current = clap_markdown::help_markdown_custom::<server::cli::Cli>(
        &clap_markdown::MarkdownOptions::new()
            .title("Every command".into())
            .show_footer(false),
    )
    .replacen("# Every command", "## Every command", 1);
    if std::env::var_os("BULWARK_WRITE_DOCS").is_some() {
        std::fs::write(&path, format!("{written}{GENERATED}{current}"))
            .expect("write docs/reference/cli.md");
        return;
    }
    assert!(
        generated_now == current,
        "docs/reference/cli.md is not what `bulwark --help` says: run `make docs`"
    );
}
