//! The layers, tested: every `crate::` path in `app/src` and `server/src` is checked against
//! the floor order written in `docs/ARCHITECTURE.md` §2. A folder (or a file at the top of
//! `src`) may use what stands on a lower floor, never a higher one and never a neighbour on
//! its own floor, so no two folders can import each other. Test modules are left out (a
//! test may reach across to build its data), and so are comments.
//!
//! Inside a folder the same holds between files: no two modules use each other, however far
//! round (`services/notifications/`: settings ← channels ← channel outbox ← digest).
//!
//! A new top-level module gets its floor here and a line in the architecture; a failure names
//! the file, the line and the two floors, or the modules that go round.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{root, rust_files};
use regex::Regex;

/// Macros exported at the crate root, and the folder that defines each.
const MACROS: &[(&str, &str)] = &[
    ("t", "i18n"),
    ("key", "i18n"),
    ("problem", "domain"),
    ("text_enum", "domain"),
];

/// `app/src`, from the bottom up.
const APP: &[(&str, u8)] = &[
    ("clock", 0),
    ("domain", 1),
    ("i18n", 2),
    ("views", 3),
    ("entities", 3),
    // What services call to signal, send and count, implemented by the server.
    ("wake", 4),
    ("live", 4),
    ("mailer", 4),
    ("services", 5),
    ("state", 6),
    ("api", 7),
    ("components", 8),
    ("pages", 9),
    ("app", 10),
    ("lib", 11),
];

/// `server/src`, from the bottom up.
const SERVER: &[(&str, u8)] = &[
    // `app::clock`, re-exported at the crate root.
    ("clock", 0),
    ("version", 0),
    ("db", 0),
    ("shutdown", 0),
    ("duties", 1),
    ("outbound", 1),
    ("jobs_file", 1),
    // Counting only; the scrape handler is the web's (`web/metrics.rs`).
    ("metrics", 1),
    ("system_jobs", 2),
    ("upkeep", 2),
    ("mail", 2),
    ("traffic", 2),
    ("demo", 3),
    ("cluster", 3),
    ("engine", 4),
    ("config", 5),
    ("auth", 6),
    ("telemetry", 6),
    ("channels", 6),
    ("rest", 7),
    ("web", 8),
    ("startup", 9),
    ("bench", 10),
    ("commands", 11),
    ("cli", 12),
    ("main", 13),
    ("lib", 13),
];

/// The code a file ships: its test module and every comment taken out.
fn shipped(text: &str) -> Vec<(usize, String)> {
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..end]
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let code = match line.trim_start() {
                l if l.starts_with("//") => "",
                _ => line.split(" // ").next().unwrap_or(line),
            };
            (i + 1, code.to_string())
        })
        .collect()
}

/// The folder a file under `src` belongs to: `services/jobs.rs` → `services`, `state.rs` →
/// `state`.
fn folder(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("under src");
    let first = relative.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

/// Every `crate::NAME` a crate's files use: (from, to, where).
fn edges(src: &Path) -> Vec<(String, String, String)> {
    let path = Regex::new(r"\bcrate::([a-z_][a-z0-9_]*)").expect("pattern");
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let from = folder(src, &file);
        for (n, line) in shipped(&text) {
            for m in path.captures_iter(&line) {
                let name = &m[1];
                let to = MACROS
                    .iter()
                    .find(|(mac, _)| *mac == name)
                    .map_or(name, |(_, home)| home)
                    .to_string();
                if to != from {
                    let at = format!(
                        "{}:{n}",
                        file.strip_prefix(root()).unwrap_or(&file).display()
                    );
                    out.push((from.clone(), to, at));
                }
            }
        }
    }
    out
}

fn check(src: &str, floors: &[(&str, u8)]) -> Vec<String> {
    let floors: BTreeMap<&str, u8> = floors.iter().copied().collect();
    let src = root().join(src);
    let mut problems = BTreeSet::new();
    for (from, to, at) in edges(&src) {
        let floor = |name: &str| floors.get(name).copied();
        match (floor(&from), floor(&to)) {
            (None, _) => {
                problems.insert(format!("{from} has no floor in app/tests/layers.rs ({at})"));
            }
            (_, None) => {
                problems.insert(format!("{to} has no floor in app/tests/layers.rs ({at})"));
            }
            (Some(a), Some(b)) if b >= a => {
                problems.insert(format!(
                    "{at}: {from} (floor {a}) uses {to} (floor {b}), which is not below it"
                ));
            }
            _ => {}
        }
    }
    problems.into_iter().collect()
}

#[test]
fn the_app_imports_only_downwards() {
    let problems = check("app/src", APP);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_server_imports_only_downwards() {
    let problems = check("server/src", SERVER);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The domain and the services never read the reader's language from the air: they are handed
/// a locale, or return a `Problem` for the layers above to word.
#[test]
fn the_domain_and_the_services_pick_no_language() {
    let ambient = Regex::new(r#"\bt!\(\s*"|i18n::current\(|i18n::duration\(|\.explain\(\)"#)
        .expect("pattern");
    let open = Regex::new(r"\bt!\(\s*$").expect("pattern");
    let mut found = Vec::new();
    for dir in [
        "app/src/domain",
        "app/src/services",
        "app/src/views",
        "app/src/i18n",
    ] {
        let mut files = Vec::new();
        rust_files(&root().join(dir), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable");
            let shipped = shipped(&text);
            for (n, line) in &shipped {
                // `t!(` alone on its line is followed by `in locale,` or by a key.
                let next = shipped.get(*n).map(|(_, l)| l.trim()).unwrap_or("");
                let bare_open = open.is_match(line) && next.starts_with('"');
                if ambient.is_match(line) || bare_open {
                    found.push(format!("{}:{n}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    // i18n itself defines the ambient forms the pages use.
    found.retain(|f| !f.contains("app/src/i18n/mod.rs") && !f.contains("app/src/i18n/words.rs"));
    assert!(found.is_empty(), "{found:#?}");
}

/// A module's path from its file: `services/notifications/mod.rs` → `services::notifications`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    if path
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        path.pop();
    }
    path
}

/// Which modules each module uses (`crate::`, `super::` and `self::` paths, resolved to the
/// longest module they name), its own ancestors and descendants left out.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let path = Regex::new(r"\b(crate|super|self)((?:::[a-z_][a-z0-9_]*)+)").expect("pattern");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).expect("readable");
        for (_, line) in shipped(&text) {
            for m in path.captures_iter(&line) {
                let mut target: Vec<String> = match &m[1] {
                    "crate" => Vec::new(),
                    "self" => module.clone(),
                    _ => module[..module.len().saturating_sub(1)].to_vec(),
                };
                target.extend(m[2].trim_start_matches("::").split("::").map(String::from));
                let found = (1..=target.len())
                    .rev()
                    .map(|k| target[..k].to_vec())
                    .find(|t| modules.contains_key(t));
                if let Some(t) = found
                    && !t.starts_with(module)
                    && !module.starts_with(&t)
                {
                    graph
                        .entry(module.join("::"))
                        .or_default()
                        .insert(t.join("::"));
                }
            }
        }
    }
    graph
}

/// Modules that use each other, directly or round several: each such group, sorted.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Two modules are in one cycle when each reaches the other.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, from_m) in &reached {
        if !from_m.contains(*m) {
            continue;
        }
        let group: Vec<String> = from_m
            .iter()
            .filter(|o| reached.get(o).is_some_and(|r| r.contains(*m)))
            .cloned()
            .collect();
        groups.insert(group);
    }
    groups.into_iter().collect()
}

#[test]
fn no_two_modules_use_each_other() {
    for src in ["app/src", "server/src"] {
        let mut graph = module_graph(&root().join(src));
        // sea-orm's relations name both ends (a user has sessions, a session belongs to a
        // user): the tables may know each other, nothing else may.
        graph.retain(|module, _| !module.starts_with("entities::"));
        let found = cycles(&graph);
        assert!(
            found.is_empty(),
            "{src}: modules that use each other: {found:#?}"
        );
    }
}

/// The domain does not even name what stands above it, in code or in its comments: what it
/// returns is worded and stored by layers it does not know.
#[test]
fn the_domain_names_nothing_above_it() {
    let above = Regex::new(
        r"crate::(i18n|views|entities|services|state|api|components|pages|t\b)|app/src/(i18n|views|entities|services|state|api|components|pages)",
    )
    .expect("pattern");
    let mut files = Vec::new();
    rust_files(&root().join("app/src/domain"), &mut files);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
        for (n, line) in text[..end].lines().enumerate() {
            if above.is_match(line) {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_check_sees_a_cycle() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&graph), [["a", "b", "c"]]);
}

#[test]
fn the_check_sees_an_upward_import() {
    let floors: BTreeMap<&str, u8> = APP.iter().copied().collect();
    assert!(floors["domain"] < floors["i18n"] && floors["services"] < floors["api"]);
    let lines = shipped("use crate::api::AppError;\n// crate::pages in a comment\n");
    assert_eq!(lines.len(), 2);
    assert!(lines[0].1.contains("crate::api") && lines[1].1.is_empty());
    let lines = shipped("fn a() {}\n#[cfg(test)]\nmod tests {\n    use crate::pages;\n}\n");
    assert!(lines.iter().all(|(_, l)| !l.contains("crate::pages")));
}
