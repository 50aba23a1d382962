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

    /// The URL of each file the pages link to: content-addressed when embedded.
    pub fn urls(&self) -> app::state::AssetUrls {
        match self {
            Site::Embedded(files) => app::state::AssetUrls::versioned(
                files
                    .values()
                    .map(|file| (file.path.to_string(), file.hash.to_string()))
                    .collect(),
            ),
            Site::Disk(_) => app::state::AssetUrls::default(),
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
}
