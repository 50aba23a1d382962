//! `bulwark bench bots`: how well and how fast the bot recogniser does on a labelled set.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;

use crate::traffic::bots::{self, labelled};

#[derive(Debug, clap::Args)]
pub struct BotsBenchArgs {
    /// A labelled set to score instead of the repository's (repeat to score several, each
    /// on its own and then together).
    #[arg(long, value_name = "FILE")]
    set: Vec<PathBuf>,
    /// Timed passes over the sets; the spread of their rates is printed.
    #[arg(long, default_value_t = 7)]
    passes: usize,
    /// Print every miss, false alarm and wrong name.
    #[arg(long)]
    verbose: bool,
}

/// The repository's labelled sets (`server/data/bots/`'s scripts build them): bots and the
/// `isbot` browsers, people by device type the rules may be tuned on, and people they never
/// are. Read from the checkout this binary was built in.
const REPOSITORY_SETS: [(&str, &str); 3] = [
    (
        "bots and browsers",
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/user_agents.tsv"),
    ),
    (
        "people by device",
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/people.tsv"),
    ),
    (
        "people held out",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/people_held_out.tsv"
        ),
    ),
];

pub fn bots(args: &BotsBenchArgs) -> anyhow::Result<()> {
    let sets = read_sets(args)?;
    let recogniser = bots::recogniser();
    let scores: Vec<labelled::Score> = sets
        .iter()
        .map(|(_, set)| labelled::score(recogniser, set))
        .collect();
    let all: Vec<labelled::Labelled> = sets.iter().flat_map(|(_, s)| s.iter().cloned()).collect();
    let total = labelled::score(recogniser, &all);
    if args.verbose {
        print_mistakes(&total);
    }
    for ((name, _), score) in sets.iter().zip(&scores) {
        println!("{name}:");
        print_score(score);
    }
    if sets.len() > 1 {
        println!("all together:");
        print_score(&total);
    }
    print_by_device(&sets, &scores);
    speed(recogniser, &all, args.passes)
}

fn read_sets(args: &BotsBenchArgs) -> anyhow::Result<Vec<(String, Vec<labelled::Labelled>)>> {
    let chosen: Vec<(String, PathBuf)> = if args.set.is_empty() {
        REPOSITORY_SETS
            .iter()
            .map(|(name, path)| (name.to_string(), PathBuf::from(path)))
            .collect()
    } else {
        args.set
            .iter()
            .map(|p| (p.display().to_string(), p.clone()))
            .collect()
    };
    chosen
        .into_iter()
        .map(|(name, path)| {
            let text = std::fs::read_to_string(&path).with_context(|| {
                format!(
                    "cannot read the labelled set {} (run from a checkout, or pass --set FILE)",
                    path.display()
                )
            })?;
            let set = labelled::parse(&text)
                .with_context(|| format!("the labelled set {} is malformed", path.display()))?;
            Ok((name, set))
        })
        .collect()
}

fn print_mistakes(score: &labelled::Score) {
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

fn print_score(score: &labelled::Score) {
    println!(
        "  user agents        {} ({} bots, {} people, {} bots with a known source)",
        score.bots + score.people,
        score.bots,
        score.people,
        score.named
    );
    if score.bots > 0 {
        println!(
            "  bot recall         {:.4}  ({} of {})",
            score.recall(),
            score.bots_found,
            score.bots
        );
    }
    println!(
        "  people flagged     {:.4}  ({} of {})",
        score.people_flagged_share(),
        score.people_flagged,
        score.people
    );
    if score.named > 0 {
        println!(
            "  source named right {:.4}  ({} of {})",
            score.named_right_share(),
            score.named_right,
            score.named
        );
    }
}

/// People flagged per device type, one column per set.
fn print_by_device(sets: &[(String, Vec<labelled::Labelled>)], scores: &[labelled::Score]) {
    let devices: std::collections::BTreeSet<&String> =
        scores.iter().flat_map(|s| s.by_device.keys()).collect();
    println!("people flagged by device type:");
    let header: Vec<String> = sets.iter().map(|(n, _)| format!("{n:>24}")).collect();
    println!("  {:<16}{}", "device", header.join(""));
    for device in devices {
        let cells: Vec<String> = scores
            .iter()
            .map(|s| match s.by_device.get(device) {
                Some(t) => format!(
                    "{:>24}",
                    format!("{:.2} % ({}/{})", t.share() * 100.0, t.flagged, t.people)
                ),
                None => format!("{:>24}", "–"),
            })
            .collect();
        println!("  {device:<16}{}", cells.join(""));
    }
}

/// Speed: one thread, every set per pass, after a warm-up pass that fills the lazy DFA's cache
/// the way a running server's would be.
fn speed(
    recogniser: &bots::Recogniser,
    set: &[labelled::Labelled],
    passes: usize,
) -> anyhow::Result<()> {
    let agents: Vec<&str> = set.iter().map(|l| l.user_agent.as_str()).collect();
    let mut bots_seen = 0usize;
    for ua in &agents {
        bots_seen += usize::from(recogniser.classify(ua).is_bot);
    }
    let mut rates = Vec::with_capacity(passes);
    for _ in 0..passes.max(1) {
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
