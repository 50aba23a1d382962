//! `bulwark traffic classify`: User-Agents on stdin, one verdict per line on stdout.

use std::io::{BufRead, Write};

use anyhow::Context;
use app::domain::bots::classify;

/// Reads until end of input; invalid UTF-8 is read lossily rather than refused, as the capture
/// pipeline does.
pub fn classify_stdin(json: bool) -> anyhow::Result<()> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input
            .read_until(b'\n', &mut line)
            .context("could not read standard input")?
            == 0
        {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let verdict = classify(text.trim_end_matches(['\n', '\r']));
        if json {
            serde_json::to_writer(&mut out, &verdict)?;
            writeln!(out)?;
        } else {
            match verdict.source {
                Some(source) => writeln!(out, "bot\t{source}")?,
                None => writeln!(out, "human")?,
            }
        }
    }
    out.flush()?;
    Ok(())
}
