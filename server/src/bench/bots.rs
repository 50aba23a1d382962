//! `bulwark bench bots`: how well and how fast the bot recogniser does on a labelled set.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;

use crate::traffic::bots::{self, labelled};

#[derive(Debug, clap::Args)]
pub struct BotsBenchArgs {
    /// The labelled set (default: the one in the repository, compiled into the binary).
    #[arg(long, value_name = "FILE")]
    set: Option<PathBuf>,
    /// Timed passes over the set; the spread of their rates is printed.
    #[arg(long, default_value_t = 7)]
    passes: usize,
    /// Print every miss, false alarm and wrong name.
    #[arg(long)]
    verbose: bool,
}

const BUILT_IN_SET: &str = include_str!("../../tests/data/user_agents.tsv");

pub fn bots(args: &BotsBenchArgs) -> anyhow::Result<()> {
    let text = match &args.set {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the labelled set {}", path.display()))?,
        None => BUILT_IN_SET.to_string(),
    };
    let set = labelled::parse(&text).context("the labelled set is malformed")?;
    let recogniser = bots::recogniser();
    let score = labelled::score(recogniser, &set);
    if args.verbose {
        for ua in &score.missed {
            println!("missed\t{ua}");
        }
        for ua in &score.flagged {
            println!("flagged\t{ua}");
        }
        for (expected, got, ua) in &score.misnamed {
            println!("misnamed\t{expected}\t{got}\t{ua}");
        }
    }
    println!(
        "labelled set       {} user agents ({} bots, {} people, {} bots with a known source)",
        set.len(),
        score.bots,
        score.people,
        score.named
    );
    println!(
        "bot recall         {:.4}  ({} of {})",
        score.recall(),
        score.bots_found,
        score.bots
    );
    println!(
        "people flagged     {:.4}  ({} of {})",
        score.people_flagged_share(),
        score.people_flagged,
        score.people
    );
    println!(
        "source named right {:.4}  ({} of {})",
        score.named_right_share(),
        score.named_right,
        score.named
    );

    // Speed: one thread, the whole set per pass, after a warm-up pass that fills the lazy DFA's
    // cache the way a running server's would be.
    let agents: Vec<&str> = set.iter().map(|l| l.user_agent.as_str()).collect();
    let mut bots_seen = 0usize;
    for ua in &agents {
        bots_seen += usize::from(recogniser.classify(ua).is_bot);
    }
    let mut rates = Vec::with_capacity(args.passes);
    for _ in 0..args.passes.max(1) {
        let start = Instant::now();
        let mut n = 0usize;
        for ua in &agents {
            n += usize::from(std::hint::black_box(recogniser.classify(ua)).is_bot);
        }
        let elapsed = start.elapsed().as_secs_f64();
        anyhow::ensure!(
            n == bots_seen,
            "the recogniser answered differently on a rerun"
        );
        rates.push(agents.len() as f64 / elapsed);
    }
    rates.sort_by(f64::total_cmp);
    let mean_len = agents.iter().map(|a| a.len()).sum::<usize>() as f64 / agents.len() as f64;
    println!(
        "classify speed     {:.2} M user agents/s on one core (median of {} passes; spread {:.2}–{:.2}; mean length {:.0} bytes)",
        rates[rates.len() / 2] / 1e6,
        rates.len(),
        rates[0] / 1e6,
        rates[rates.len() - 1] / 1e6,
        mean_len
    );
    Ok(())
}
