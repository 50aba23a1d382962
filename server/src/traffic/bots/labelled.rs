//! Measuring the recogniser against a labelled set of User-Agents (the format written by
//! `server/data/bots/build_labelled_set.py` and `build_people_set.py`: `bot` or `person`, then a
//! bot's expected source or a person's device type or nothing, then the User-Agent, separated by
//! tabs).

use std::collections::BTreeMap;

use super::Recogniser;

/// One labelled User-Agent.
#[derive(Debug, Clone)]
pub struct Labelled {
    pub is_bot: bool,
    /// A bot's operator (its source), or a person's device type, when the set knows it.
    pub source: Option<String>,
    pub user_agent: String,
}

/// A line that is not `label<TAB>source<TAB>user agent`.
#[derive(Debug, thiserror::Error)]
#[error("line {line} of the labelled set is not `bot|person<TAB>source<TAB>user agent`")]
pub struct BadLine {
    pub line: usize,
}

pub fn parse(text: &str) -> Result<Vec<Labelled>, BadLine> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            let mut fields = l.splitn(3, '\t');
            let (Some(label), Some(source), Some(ua)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(BadLine { line: i + 1 });
            };
            let is_bot = match label {
                "bot" => true,
                "person" => false,
                _ => return Err(BadLine { line: i + 1 }),
            };
            Ok(Labelled {
                is_bot,
                source: (!source.is_empty()).then(|| source.to_string()),
                user_agent: ua.to_string(),
            })
        })
        .collect()
}

/// How the recogniser did, with what it got wrong.
#[derive(Debug, Default)]
pub struct Score {
    pub bots: usize,
    pub bots_found: usize,
    pub people: usize,
    pub people_flagged: usize,
    /// Bots whose source the set knows.
    pub named: usize,
    pub named_right: usize,
    pub missed: Vec<String>,
    pub flagged: Vec<String>,
    /// (expected, got, user agent)
    pub misnamed: Vec<(String, String, String)>,
    /// People and people flagged per device type (`unlabelled` where the set names none).
    pub by_device: BTreeMap<String, Tally>,
}

/// People of one device type, and how many of them were taken for bots.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub people: usize,
    pub flagged: usize,
}

impl Tally {
    pub fn share(&self) -> f64 {
        ratio(self.flagged, self.people)
    }
}

impl Score {
    pub fn recall(&self) -> f64 {
        ratio(self.bots_found, self.bots)
    }
    pub fn people_flagged_share(&self) -> f64 {
        ratio(self.people_flagged, self.people)
    }
    pub fn named_right_share(&self) -> f64 {
        ratio(self.named_right, self.named)
    }
}

fn ratio(n: usize, of: usize) -> f64 {
    if of == 0 { 1.0 } else { n as f64 / of as f64 }
}

pub fn score(recogniser: &Recogniser, set: &[Labelled]) -> Score {
    let mut s = Score::default();
    for item in set {
        let verdict = recogniser.classify(&item.user_agent);
        if item.is_bot {
            s.bots += 1;
            if verdict.is_bot {
                s.bots_found += 1;
            } else {
                s.missed.push(item.user_agent.clone());
            }
            if let Some(expected) = &item.source {
                s.named += 1;
                let got = verdict.source.unwrap_or("(person)");
                if got == expected {
                    s.named_right += 1;
                } else {
                    s.misnamed
                        .push((expected.clone(), got.to_string(), item.user_agent.clone()));
                }
            }
        } else {
            s.people += 1;
            let device = item.source.as_deref().unwrap_or("unlabelled");
            let tally = s.by_device.entry(device.to_string()).or_default();
            tally.people += 1;
            if verdict.is_bot {
                tally.flagged += 1;
                s.people_flagged += 1;
                s.flagged.push(item.user_agent.clone());
            }
        }
    }
    s
}
