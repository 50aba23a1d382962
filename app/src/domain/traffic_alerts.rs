//! Traffic spike alerts: what one site's last whole hour looks like next to its usual, and
//! which conditions hold. Pure: the counts come from `services::traffic::alerts`, and the
//! episodes (one alert when a condition starts, one recovery when it ends) are the trend
//! alerts' (`super::trends`).
//!
//! - **views**: people's page views in the hour at least [`Rules::views_factor`] times the
//!   usual for that hour of the week (the mean of the same hour in the [`BASELINE_WEEKS`]
//!   weeks before), and at least [`MIN_VIEWS`];
//! - **bots**: bots' share of the hour's hits at least [`Rules::bot_share`], over at least
//!   [`MIN_HITS`] hits;
//! - **not found**: at least [`Rules::not_found_per_hour`] hits answered 404 in the hour.
//!
//! A rule set to 0 is off.

use serde::{Deserialize, Serialize};

/// Weeks of the same hour that make the usual.
pub const BASELINE_WEEKS: i64 = 4;
/// Page views an hour must have before it can be a spike: 8 views against a usual 2 is not one.
pub const MIN_VIEWS: u64 = 50;
/// Hits an hour must have before its bots' share means anything.
pub const MIN_HITS: u64 = 100;

/// The thresholds (`traffic_alerts` in the configuration).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rules {
    /// People's page views at least this many times the usual for the hour of the week.
    pub views_factor: f64,
    /// Bots' share of the hour's hits, from 0 to 1 (0.9: nine hits in ten).
    pub bot_share: f64,
    /// Hits answered 404 in the hour.
    pub not_found_per_hour: u64,
}

impl Default for Rules {
    /// Quiet on an ordinary week (the demo's, a steady site's): three times the usual hour,
    /// nine hits in ten from bots, a hundred 404s.
    fn default() -> Self {
        Rules {
            views_factor: 3.0,
            bot_share: 0.9,
            not_found_per_hour: 100,
        }
    }
}

/// A threshold that cannot mean anything.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BadRule {
    #[error("traffic_alerts.views_factor must be 0 (off) or more than 1, not {0}")]
    ViewsFactor(f64),
    #[error("traffic_alerts.bot_share is a share from 0 (off) to 1 (0.9 = 90 %), not {0}")]
    BotShare(f64),
}

impl Rules {
    pub fn check(self) -> Result<Rules, BadRule> {
        let factor = self.views_factor;
        if !factor.is_finite() || factor < 0.0 || (factor > 0.0 && factor <= 1.0) {
            return Err(BadRule::ViewsFactor(factor));
        }
        if !(0.0..=1.0).contains(&self.bot_share) {
            return Err(BadRule::BotShare(self.bot_share));
        }
        Ok(self)
    }
}

/// One site's hour, and its usual.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hour {
    pub site: String,
    /// People's page views, bots' hits and hits answered 404 in the hour.
    pub views: u64,
    pub bots: u64,
    pub not_found: u64,
    /// People's page views in the same hour of each week before (as many as there are).
    pub usual_views: Vec<u64>,
}

/// Which condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rule {
    Views,
    Bots,
    NotFound,
}

impl Rule {
    pub const ALL: [Rule; 3] = [Rule::Views, Rule::Bots, Rule::NotFound];

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Views => "views",
            Rule::Bots => "bots",
            Rule::NotFound => "not_found",
        }
    }
}

/// The episode key of a rule on a site: `traffic:shop.example:views`.
pub fn key(site: &str, rule: Rule) -> String {
    format!("traffic:{site}:{}", rule.as_str())
}

/// What a condition measured; worded above the domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Seen {
    Views { views: u64, usual: f64 },
    Bots { bots: u64, hits: u64 },
    NotFound { count: u64 },
}

/// A rule and what the hour showed for it; `holds` says whether it crossed the line.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub site: String,
    pub rule: Rule,
    pub holds: bool,
    pub seen: Seen,
}

impl Finding {
    pub fn key(&self) -> String {
        key(&self.site, self.rule)
    }
}

/// The usual views of the hour: the mean of the weeks before; `None` with no week before.
pub fn usual(views: &[u64]) -> Option<f64> {
    (!views.is_empty()).then(|| views.iter().sum::<u64>() as f64 / views.len() as f64)
}

/// Every rule that is on, for one site's hour: whether it holds, and what was seen.
pub fn evaluate(rules: &Rules, hour: &Hour) -> Vec<Finding> {
    let finding = |rule, holds, seen| Finding {
        site: hour.site.clone(),
        rule,
        holds,
        seen,
    };
    let mut findings = Vec::new();
    if rules.views_factor > 0.0 {
        // No week before, no usual: nothing to compare with, so no spike.
        let usual = usual(&hour.usual_views);
        let holds = usual.is_some_and(|usual| {
            hour.views >= MIN_VIEWS && hour.views as f64 >= rules.views_factor * usual.max(1.0)
        });
        let usual = usual.unwrap_or(0.0);
        findings.push(finding(
            Rule::Views,
            holds,
            Seen::Views {
                views: hour.views,
                usual,
            },
        ));
    }
    if rules.bot_share > 0.0 {
        let hits = hour.views + hour.bots;
        let holds = hits >= MIN_HITS && hour.bots as f64 >= rules.bot_share * hits as f64;
        let seen = Seen::Bots {
            bots: hour.bots,
            hits,
        };
        findings.push(finding(Rule::Bots, holds, seen));
    }
    if rules.not_found_per_hour > 0 {
        let holds = hour.not_found >= rules.not_found_per_hour;
        let seen = Seen::NotFound {
            count: hour.not_found,
        };
        findings.push(finding(Rule::NotFound, holds, seen));
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hour(views: u64, bots: u64, not_found: u64, usual: &[u64]) -> Hour {
        Hour {
            site: "shop.example".into(),
            views,
            bots,
            not_found,
            usual_views: usual.to_vec(),
        }
    }

    fn holding(rules: &Rules, h: &Hour) -> Vec<Rule> {
        evaluate(rules, h)
            .into_iter()
            .filter(|f| f.holds)
            .map(|f| f.rule)
            .collect()
    }

    #[test]
    fn an_ordinary_hour_raises_nothing() {
        let rules = Rules::default();
        assert!(holding(&rules, &hour(120, 60, 3, &[100, 130, 110, 120])).is_empty());
    }

    #[test]
    fn four_times_the_usual_hour_is_a_spike_and_the_usual_is_the_mean() {
        let rules = Rules::default();
        let h = hour(460, 60, 0, &[100, 130, 110, 120]);
        assert_eq!(holding(&rules, &h), [Rule::Views]);
        assert_eq!(
            evaluate(&rules, &h)[0].seen,
            Seen::Views {
                views: 460,
                usual: 115.0
            }
        );
    }

    #[test]
    fn small_numbers_and_no_history_are_no_spike() {
        let rules = Rules::default();
        assert!(holding(&rules, &hour(12, 0, 0, &[2, 3])).is_empty());
        assert!(holding(&rules, &hour(5000, 0, 0, &[])).is_empty());
    }

    #[test]
    fn bots_and_not_found_have_their_own_lines() {
        let rules = Rules::default();
        assert_eq!(holding(&rules, &hour(10, 200, 0, &[10])), [Rule::Bots]);
        assert_eq!(holding(&rules, &hour(10, 20, 0, &[10])), Vec::<Rule>::new());
        assert_eq!(
            holding(&rules, &hour(100, 0, 150, &[100])),
            [Rule::NotFound]
        );
        let off = Rules {
            views_factor: 0.0,
            bot_share: 0.0,
            not_found_per_hour: 0,
        };
        assert!(evaluate(&off, &hour(9000, 9000, 9000, &[1])).is_empty());
    }

    #[test]
    fn thresholds_that_mean_nothing_are_refused() {
        let bad = |views_factor, bot_share| Rules {
            views_factor,
            bot_share,
            not_found_per_hour: 1,
        };
        assert!(bad(3.0, 0.9).check().is_ok());
        assert!(bad(0.0, 0.0).check().is_ok());
        assert_eq!(bad(0.5, 0.9).check(), Err(BadRule::ViewsFactor(0.5)));
        assert_eq!(bad(3.0, 90.0).check(), Err(BadRule::BotShare(90.0)));
        assert!(bad(f64::NAN, 0.9).check().is_err());
    }
}
