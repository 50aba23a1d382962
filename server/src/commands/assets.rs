//! `bulwark assets`: the site's files built into this binary and what each costs a browser —
//! raw, and as served to one that accepts Brotli or gzip. `make dist` checks the wasm's
//! budget against this.

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
    Ok(())
}

fn kb(bytes: usize) -> String {
    format!("{:.1} KB", bytes as f64 / 1000.0)
}
