//! `bulwark assets`: the site's files built into this binary and what each costs a browser —
//! raw, and as served to one that accepts Brotli or gzip — and what a first visit to each group
//! of pages downloads. `make dist` checks the wasm's budget against this.

use crate::web::assets::embedded;

pub fn list(tsv: bool) -> anyhow::Result<()> {
    let files = embedded();
    if files.is_empty() {
        anyhow::bail!(
            "this binary was built without its site (it serves one from site_root): build it \
             with `make build` or `make dist`"
        );
    }
    let size = |bytes: Option<&[u8]>| bytes.map_or(0, <[u8]>::len);
    if tsv {
        println!("path\traw\tbr\tgzip\thash");
        for f in files {
            println!(
                "{}\t{}\t{}\t{}\t{}",
                f.path,
                f.raw.len(),
                size(f.br),
                size(f.gzip),
                f.hash
            );
        }
        for (group, bytes, files) in first_loads(files) {
            println!("first-load:{group}\t-\t{bytes}\t-\t{files} files");
        }
        return Ok(());
    }
    println!(
        "{:<28} {:>12} {:>12} {:>12}",
        "file", "raw", "brotli", "gzip"
    );
    let (mut raw, mut br) = (0, 0);
    for f in files {
        let shown = |bytes: Option<&[u8]>| bytes.map_or("-".to_string(), |b| kb(b.len()));
        println!(
            "{:<28} {:>12} {:>12} {:>12}",
            f.path,
            kb(f.raw.len()),
            shown(f.br),
            shown(f.gzip)
        );
        raw += f.raw.len();
        br += f.br.map_or(f.raw.len(), <[u8]>::len);
    }
    println!("{:<28} {:>12} {:>12}", "all", kb(raw), kb(br));
    println!();
    println!(
        "what a first visit to a page downloads, Brotli (wasm, its glue and the split loader):"
    );
    for (group, bytes, files) in first_loads(files) {
        println!("  {group:<26} {:>12}  ({files} files)", kb(bytes));
    }
    Ok(())
}

/// For each group of pages (`app/src/pages/routes.rs`): the Brotli bytes of the wasm and
/// JavaScript a browser with an empty cache downloads before one of its pages is interactive —
/// the main module, its glue, the split loader and the group's chunks — and how many files
/// that is. Largest first.
pub fn first_loads(files: &[crate::web::assets::Embedded]) -> Vec<(String, usize, usize)> {
    use crate::web::assets::{SPLIT_LOADER, page_chunks};
    let served = |path: &str| {
        files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.br.map_or(f.raw.len(), <[u8]>::len))
    };
    let shell = ["pkg/bulwark_bg.wasm", "pkg/bulwark.js", SPLIT_LOADER];
    let shell_bytes: usize = shell.iter().filter_map(|path| served(path)).sum();
    let Some(loader) = files.iter().find(|f| f.path == SPLIT_LOADER) else {
        return vec![("every page".to_string(), shell_bytes, shell.len() - 1)];
    };
    let mut loads: Vec<(String, usize, usize)> = page_chunks(&String::from_utf8_lossy(loader.raw))
        .into_iter()
        .map(|(group, chunks)| {
            let bytes = chunks
                .iter()
                .filter_map(|chunk| served(&format!("pkg/{chunk}.wasm")))
                .sum::<usize>();
            (group, shell_bytes + bytes, shell.len() + chunks.len())
        })
        .collect();
    loads.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    loads
}

fn kb(bytes: usize) -> String {
    format!("{:.1} KB", bytes as f64 / 1000.0)
}
