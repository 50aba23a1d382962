//! The built site's files (wasm, its JS glue, CSS, ECharts, `collect.js`, the icon): embedded in
//! the binary by `server/build.rs` when built with the `embed-site` feature, else read from
//! `site_root` on disk (development, `cargo leptos watch`).
//!
//! Embedded files are served two ways. Under `/assets/{hash}/{path}` — the URLs the pages use —
//! the content can never change, so browsers keep it a year without asking again. Under their
//! plain path (`/collect.js`, which other sites embed, and `/pkg/…` for older pages) browsers
//! revalidate each time and get 304 while the hash is the same. Either way a client that
//! accepts Brotli or gzip gets the copy compressed at build time.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;

/// One file of the site, as `server/build.rs` wrote it into the binary.
pub struct Embedded {
    /// Relative to the site's root, with `/` separators.
    pub path: &'static str,
    /// The first 16 hex digits of its SHA-256 (the glue and its wasm share theirs).
    pub hash: &'static str,
    pub raw: &'static [u8],
    pub br: Option<&'static [u8]>,
    pub gzip: Option<&'static [u8]>,
}

static EMBEDDED: &[Embedded] = include!(concat!(env!("OUT_DIR"), "/site.rs"));

/// Every file built into this binary; empty without the `embed-site` feature.
pub fn embedded() -> &'static [Embedded] {
    EMBEDDED
}

/// A year: what "immutable" means to caches that ignore the directive.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
const REVALIDATE: &str = "no-cache";

/// Where this process serves the site from.
#[derive(Clone)]
pub enum Site {
    Embedded(Arc<HashMap<&'static str, &'static Embedded>>),
    Disk(PathBuf),
}

impl Site {
    /// The embedded site unless `site_root` names a directory to use instead; a binary built
    /// without one reads `target/site`, where `make site` puts it.
    pub fn choose(site_root: Option<&std::path::Path>) -> Site {
        match site_root {
            Some(dir) => Site::Disk(dir.to_path_buf()),
            None if !EMBEDDED.is_empty() => Site::Embedded(Arc::new(
                EMBEDDED.iter().map(|file| (file.path, file)).collect(),
            )),
            None => Site::Disk(PathBuf::from("target/site")),
        }
    }

    /// The URL of each file the pages link to (content-addressed when embedded), and the
    /// chunks each group of pages loads.
    pub fn urls(&self) -> app::state::AssetUrls {
        let urls = match self {
            Site::Embedded(files) => app::state::AssetUrls::versioned(
                files
                    .values()
                    .map(|file| (file.path.to_string(), file.hash.to_string()))
                    .collect(),
            ),
            Site::Disk(_) => app::state::AssetUrls::default(),
        };
        let loader = match self {
            Site::Embedded(files) => files
                .get(SPLIT_LOADER)
                .map(|file| String::from_utf8_lossy(file.raw).into_owned()),
            Site::Disk(dir) => std::fs::read_to_string(dir.join(SPLIT_LOADER)).ok(),
        };
        match loader {
            Some(loader) => {
                let chunks = page_chunks(&loader);
                if chunks.is_empty() {
                    tracing::warn!(
                        file = SPLIT_LOADER,
                        "no page groups found in the split loader: pages will load their chunks \
                         only after the main module"
                    );
                }
                urls.with_page_chunks(chunks)
            }
            None => urls,
        }
    }

    /// What the startup log says about it; `None` when nothing would make pages interactive.
    pub fn describe(&self) -> Option<String> {
        match self {
            Site::Embedded(files) => Some(format!("embedded ({} files)", files.len())),
            Site::Disk(dir) => dir
                .join("pkg")
                .join("bulwark.js")
                .exists()
                .then(|| dir.display().to_string()),
        }
    }

    /// The file at `path` (no leading `/`), or `None` so the caller renders its 404 page.
    /// `request` is the client's, without its body.
    pub async fn serve(&self, path: &str, request: Request) -> Option<Response> {
        match self {
            Site::Embedded(files) => {
                let file = files.get(path)?;
                Some(respond(file, request.headers(), REVALIDATE))
            }
            Site::Disk(dir) => {
                // tower-http guards against `..` and serves `.br`/`.gz` siblings when present.
                let response = tower_http::services::ServeDir::new(dir)
                    .precompressed_br()
                    .precompressed_gzip()
                    .oneshot(request)
                    .await
                    .ok()?;
                (response.status() != StatusCode::NOT_FOUND).then(|| {
                    let mut response = response.into_response();
                    response
                        .headers_mut()
                        .insert(header::CACHE_CONTROL, HeaderValue::from_static(REVALIDATE));
                    response
                })
            }
        }
    }
}

/// `GET /assets/{hash}/{*path}`: an embedded file at the version its URL names. Another hash
/// is a 404, never this build's content, since a browser would keep that a year.
pub async fn versioned(
    axum::extract::State(site): axum::extract::State<Site>,
    Path((hash, path)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    match &site {
        Site::Embedded(files) => match files.get(path.as_str()) {
            Some(file) if file.hash == hash => respond(file, &headers, IMMUTABLE),
            _ => StatusCode::NOT_FOUND.into_response(),
        },
        Site::Disk(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

fn respond(file: &Embedded, headers: &HeaderMap, cache: &'static str) -> Response {
    let etag = format!("\"{}\"", file.hash);
    let mut response = if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| {
            tags.split(',')
                .any(|tag| tag.trim() == etag || tag.trim() == "*")
        }) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let accepted = accepted_encodings(headers);
        let (body, encoding) = match (file.br, file.gzip) {
            (Some(br), _) if accepted.br => (br, Some("br")),
            (_, Some(gzip)) if accepted.gzip => (gzip, Some("gzip")),
            _ => (file.raw, None),
        };
        let mut response = Response::new(Body::from(body));
        let mime = mime_guess::from_path(file.path).first_or_octet_stream();
        if let Ok(value) = HeaderValue::from_str(mime.essence_str()) {
            response.headers_mut().insert(header::CONTENT_TYPE, value);
        }
        if let Some(encoding) = encoding {
            response
                .headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
        }
        response
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if file.br.is_some() || file.gzip.is_some() {
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    response
}

#[derive(Debug, Default, PartialEq)]
struct Accepted {
    br: bool,
    gzip: bool,
}

/// Which of our two encodings `Accept-Encoding` allows: named (or `*`) with a quality above 0.
fn accepted_encodings(headers: &HeaderMap) -> Accepted {
    let mut star = None;
    let (mut br, mut gzip) = (None, None);
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let quality = parts
                .filter_map(|p| p.trim().strip_prefix("q=").map(str::trim))
                .find_map(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            let allowed = quality > 0.0;
            match name.as_str() {
                "br" => br = Some(allowed),
                "gzip" | "x-gzip" => gzip = Some(allowed),
                "*" => star = Some(allowed),
                _ => {}
            }
        }
    }
    Accepted {
        br: br.or(star).unwrap_or(false),
        gzip: gzip.or(star).unwrap_or(false),
    }
}

/// The loader `wasm-split-cli` writes beside the main module (`make site`).
pub const SPLIT_LOADER: &str = "pkg/__wasm_split.js";

/// For each group of pages (the first argument of `wasm_split` in `app/src/pages/routes.rs`),
/// the wasm files in `pkg/` its pages need besides the main module, without `.wasm`: the
/// group's own file first, then the chunks it shares with other groups.
///
/// Read from the loader wasm-split-cli 0.2 writes, where each file is a `makeLoad` entry:
///
/// ```text
/// const __chunk_17 = makeLoad(() => { const src = fetch(new URL("./chunk_17.wasm", …)); … }
/// , [__chunk_3]);
/// export const __wasm_split_load_traffic = wrapAsyncCb(makeLoad(() => { … "./split_traffic.wasm" … }
/// , [__chunk_17, __chunk_18]));
/// ```
///
/// A loader in another shape gives an empty map (the caller warns): the chunks then load as
/// before, only later.
pub fn page_chunks(loader: &str) -> HashMap<String, Vec<String>> {
    const GROUP: &str = "export const __wasm_split_load_";
    const CHUNK: &str = "const __chunk_";
    // Each entry: its name, its file and the entries it depends on.
    let mut entries: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    let mut rest = loader;
    while let Some((at, marker)) = [GROUP, CHUNK]
        .iter()
        .filter_map(|marker| rest.find(marker).map(|at| (at, *marker)))
        .min()
    {
        let entry = &rest[at..];
        let declared = entry.strip_prefix("export ").unwrap_or(entry);
        let Some(name) = declared["const ".len()..].split(' ').next() else {
            break;
        };
        let file = entry
            .split_once("new URL(\"./")
            .and_then(|(_, after)| after.split_once(".wasm\""))
            .map(|(file, _)| file);
        let deps = entry
            .split_once("\n, [")
            .and_then(|(_, after)| after.split_once(']'));
        let (Some(file), Some((deps, _))) = (file, deps) else {
            break;
        };
        let deps = deps
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .collect();
        entries.push((name, file, deps));
        rest = &entry[marker.len()..];
    }
    let by_name: HashMap<&str, (&str, &Vec<&str>)> = entries
        .iter()
        .map(|(name, file, deps)| (*name, (*file, deps)))
        .collect();
    let mut groups = HashMap::new();
    for (name, file, deps) in &entries {
        let Some(group) = name.strip_prefix("__wasm_split_load_") else {
            continue;
        };
        let mut files = vec![file.to_string()];
        let mut pending: Vec<&str> = deps.clone();
        while let Some(dep) = pending.pop() {
            if let Some((file, deps)) = by_name.get(dep)
                && !files.iter().any(|known| known == file)
            {
                files.push(file.to_string());
                pending.extend(deps.iter());
            }
        }
        files[1..].sort();
        groups.insert(group.to_string(), files);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(value: &str) -> Accepted {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(value).unwrap(),
        );
        accepted_encodings(&headers)
    }

    #[test]
    fn accept_encoding_is_read_with_its_qualities() {
        let both = Accepted {
            br: true,
            gzip: true,
        };
        assert_eq!(accepted("gzip, deflate, br, zstd"), both);
        assert_eq!(
            accepted("gzip;q=1.0, br;q=0"),
            Accepted {
                br: false,
                gzip: true
            }
        );
        assert_eq!(accepted("*"), both);
        assert_eq!(
            accepted("br, *;q=0"),
            Accepted {
                br: true,
                gzip: false
            }
        );
        assert_eq!(accepted("identity"), Accepted::default());
        assert_eq!(
            accepted("GZIP ; q=0.5"),
            Accepted {
                br: false,
                gzip: true
            }
        );
        assert_eq!(accepted_encodings(&HeaderMap::new()), Accepted::default());
    }

    /// The shape wasm-split-cli 0.2.4 writes (abridged from a real `make site`).
    const LOADER: &str = r#"import { initSync } from "./bulwark.js";
function makeLoad(fetcher, deps) { }
/* __a, __b */
const __chunk_17 = makeLoad(() => {
    const src = fetch(new URL("./chunk_17.wasm", import.meta.url));
    src.catch(() => {});
    return async (imports) => debugWrap(WebAssembly.instantiateStreaming(src, imports));
}
, []);
const __chunk_18 = makeLoad(() => {
    const src = fetch(new URL("./chunk_18.wasm", import.meta.url));
    return async (imports) => debugWrap(WebAssembly.instantiateStreaming(src, imports));
}
, [__chunk_17]);
export const __wasm_split_load_traffic = wrapAsyncCb(makeLoad(() => {
    const src = fetch(new URL("./split_traffic.wasm", import.meta.url));
    return async (imports) => debugWrap(WebAssembly.instantiateStreaming(src, imports));
}
, [__chunk_18]));
export const __wasm_split_load_sign_in = wrapAsyncCb(makeLoad(() => {
    const src = fetch(new URL("./split_sign_in.wasm", import.meta.url));
    return async (imports) => debugWrap(WebAssembly.instantiateStreaming(src, imports));
}
, []));
"#;

    #[test]
    fn page_groups_and_their_chunks_are_read_from_the_loader() {
        let groups = page_chunks(LOADER);
        assert_eq!(groups.len(), 2);
        // A chunk's own dependencies count too.
        assert_eq!(groups["traffic"], ["split_traffic", "chunk_17", "chunk_18"]);
        assert_eq!(groups["sign_in"], ["split_sign_in"]);
        assert!(page_chunks("export default {};").is_empty());
    }
}
