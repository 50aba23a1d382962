//! The build script: the git commit `bulwark --version` reports, and — with the `embed-site`
//! feature, which the Makefile turns on — the built site (`make site`) embedded in the binary,
//! each file with its content hash and its Brotli and gzip copies made here, once, so the
//! server never compresses a static file at request time.
//!
//! Without the feature the table is empty and the server reads the site from `site_root`; that
//! keeps `cargo clippy` and `cargo test` working in a clean clone where no site exists yet.

use std::error::Error;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use vergen_gitcl::{Emitter, GitclBuilder};

/// Files worth compressing; images and fonts are compressed already.
const COMPRESSIBLE: &[&str] = &[
    "js", "mjs", "css", "wasm", "svg", "json", "html", "txt", "map",
];

/// The wasm-bindgen glue, the module it loads, the split loader (`__wasm_split.js`) and the
/// pages' wasm chunks change together and find each other by relative URLs (Leptos's hydration
/// script takes one root for the glue and its module), so they share one hash.
fn in_unit(relative: &str) -> bool {
    relative.strip_prefix("pkg/").is_some_and(|name| {
        !name.contains('/') && (name.ends_with(".js") || name.ends_with(".wasm"))
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let git = GitclBuilder::default().sha(true).dirty(false).build()?;
    Emitter::default().add_instructions(&git)?.emit()?;

    println!("cargo:rerun-if-env-changed=BULWARK_EMBED_SITE");
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let table = if std::env::var_os("CARGO_FEATURE_EMBED_SITE").is_some() {
        let site = match std::env::var_os("BULWARK_EMBED_SITE") {
            Some(dir) => PathBuf::from(dir),
            None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/site"),
        };
        if !site.join("pkg").join("bulwark_bg.wasm").is_file() {
            return Err(format!(
                "the embed-site feature needs the built site in {} (run `make site`, or set \
                 BULWARK_EMBED_SITE to where it is)",
                site.display()
            )
            .into());
        }
        embed(&site, &out)?
    } else {
        "&[]".to_string()
    };
    std::fs::write(out.join("site.rs"), table)?;
    Ok(())
}

/// Writes the compressed copies into `out` and returns the table's Rust source.
fn embed(site: &Path, out: &Path) -> Result<String, Box<dyn Error>> {
    println!("cargo:rerun-if-changed={}", site.display());
    let mut files = Vec::new();
    collect(site, site, &mut files)?;
    files.sort();
    // A release build spends seconds on the smallest copies; a debug build (a 20 MB wasm) keeps
    // the build quick with faster settings.
    let release = std::env::var("PROFILE").as_deref() == Ok("release");
    let (brotli_quality, gzip_level) = if release { (11, 9) } else { (5, 6) };

    let mut hashes = Vec::new();
    for relative in &files {
        let bytes = std::fs::read(site.join(relative))?;
        hashes.push(hex(&Sha256::digest(&bytes)));
    }
    let unit = {
        let mut hasher = Sha256::new();
        for name in files.iter().filter(|name| in_unit(name)) {
            hasher.update(name.as_bytes());
            hasher.update(std::fs::read(site.join(name))?);
        }
        hex(&hasher.finalize())
    };

    let dir = out.join("site");
    std::fs::create_dir_all(&dir)?;
    let mut table = String::from("&[\n");
    for (index, (relative, hash)) in files.iter().zip(hashes).enumerate() {
        let source = site.join(relative);
        println!("cargo:rerun-if-changed={}", source.display());
        let bytes = std::fs::read(&source)?;
        let hash = if in_unit(relative) {
            unit.clone()
        } else {
            hash
        };
        let extension = relative.rsplit('.').next().unwrap_or_default();
        let (mut br, mut gzip) = ("None".to_string(), "None".to_string());
        if COMPRESSIBLE.contains(&extension) {
            let mut compressed = Vec::new();
            {
                let params = brotli::enc::BrotliEncoderParams {
                    quality: brotli_quality,
                    lgwin: 22,
                    ..Default::default()
                };
                let mut writer =
                    brotli::CompressorWriter::with_params(&mut compressed, 1 << 16, &params);
                writer.write_all(&bytes)?;
            }
            if worth_it(&compressed, &bytes) {
                let path = dir.join(format!("{index}.br"));
                std::fs::write(&path, &compressed)?;
                br = format!("Some(include_bytes!({:?}))", path.display().to_string());
            }
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(gzip_level));
            encoder.write_all(&bytes)?;
            let compressed = encoder.finish()?;
            if worth_it(&compressed, &bytes) {
                let path = dir.join(format!("{index}.gz"));
                std::fs::write(&path, &compressed)?;
                gzip = format!("Some(include_bytes!({:?}))", path.display().to_string());
            }
        }
        writeln!(
            table,
            "    Embedded {{ path: {relative:?}, hash: {hash:?}, raw: include_bytes!({:?}), \
             br: {br}, gzip: {gzip} }},",
            source.display().to_string()
        )?;
    }
    table.push(']');
    Ok(table)
}

/// A compressed copy smaller by less than a tenth costs the client a decode for nothing.
fn worth_it(compressed: &[u8], raw: &[u8]) -> bool {
    compressed.len() * 10 < raw.len() * 9
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) -> Result<(), Box<dyn Error>> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(root, &path, files)?;
        } else {
            let relative = path
                .strip_prefix(root)?
                .to_string_lossy()
                .replace('\\', "/");
            // Pre-compressed copies a proxy might have left beside the files are not assets.
            if !relative.ends_with(".br") && !relative.ends_with(".gz") {
                files.push(relative);
            }
        }
    }
    Ok(())
}

/// The first 16 hex digits: 64 bits tell a site's files apart and keep URLs short.
fn hex(digest: &[u8]) -> String {
    digest.iter().take(8).fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
