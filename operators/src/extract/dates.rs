//! Dates in claims: relative dates ("tomorrow", "next Friday", "in two weeks", "end of month",
//! "next quarter") resolved against the day the text was written (UTC), so that a chat message
//! saying "the launch slips to Friday" claims a date that can supersede or contradict an
//! absolute one; and the period a date value covers ([`period`]), so that "June 2027" and
//! "June 3, 2027" are not taken for a disagreement.
//!
//! Conventions (one rule each, because the phrases are ambiguous in speech):
//! - a weekday alone, or with `next` / `coming`, is its first occurrence after the day of
//!   writing (1–7 days ahead); with `this`, the same but the day itself when it is that weekday;
//!   with `last` / `past`, or in a sentence told in the past ("we met on Monday": `was`, `met`,
//!   `shipped`, …, and no `will`, `planned`, `slips`, …) and not right after a forward-looking
//!   word (`to`, `until`, `by`, `before`, `due`, `for`, `from`, `after`), its last occurrence
//!   before (1–7 days back);
//! - `in N days | weeks` is a day, `in N months` a month (`YYYY-MM`);
//! - `this | next | last month | quarter | year` is that month (`YYYY-MM`), quarter (`YYYY-Qn`)
//!   or year (`YYYY`); weeks have no value of their own, so `next week` is not read;
//! - `end of (this | next) week | month | quarter | year`, `EOW`, `EOM`, `EOQ`, `EOY` is its last
//!   day (a week ends on Friday), `EOD` the day itself.
//!
//! Values are written like absolute dates (`YYYY-MM-DD`, `YYYY-MM`, `YYYY-Qn`, `YYYY`).

use regex::{Regex, RegexBuilder};

use epigraph_schemas::calendar::WEEKDAY_NAMES as WEEKDAYS;
use epigraph_schemas::calendar::{DAY_MS, add_months, days_from_civil, iso_day as day};
pub use epigraph_schemas::calendar::{civil_date, period, year_of};

/// Finds relative date expressions and resolves them.
#[derive(Debug)]
pub struct RelativeDates {
    phrase: Regex,
    forward: Regex,
    past: Regex,
    future: Regex,
}

impl Default for RelativeDates {
    fn default() -> Self {
        Self::new()
    }
}

impl RelativeDates {
    /// Compiles the patterns.
    pub fn new() -> Self {
        let re = |p: &str| {
            RegexBuilder::new(p)
                .case_insensitive(true)
                .build()
                .expect("relative date pattern compiles")
        };
        let days = WEEKDAYS.join("|");
        RelativeDates {
            phrase: re(&format!(
                r"\b(?:end\s+of\s+(?:the\s+)?(?P<end_which>this\s+|next\s+)?(?P<end_unit>week|month|quarter|year)\b|(?P<eo>eod|eow|eom|eoq|eoy)\b|in\s+(?P<count>\d{{1,3}}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+couple\s+of)\s+(?P<span>day|week|month)s?\b|(?P<which>this|next|last)\s+(?P<period>month|quarter|year)\b|(?:(?P<day_which>next|this|coming|last|past)\s+)?(?P<weekday>{days})\b|(?P<word>today|tonight|tomorrow|yesterday)\b)"
            )),
            forward: re(
                r"\b(?:to|until|till|by|before|due|for|from|after|on or before)\s+(?:on\s+)?$",
            ),
            past: re(
                r"\b(?:was|were|did|had|happened|went|met|came|ago|yesterday|shipped|launched|released|finished|completed)\b",
            ),
            future: re(
                r"\b(?:will|shall|going\s+to|gonna|plan|plans|planned|scheduled|expected|slips?|moves?|pushed|postponed|delayed)\b|'ll\b",
            ),
        }
    }

    /// `(start, end, value)` of every relative date in `text` (byte offsets), for a text written
    /// at `written_ms` (ms since the Unix epoch).
    ///
    /// ```
    /// use epigraph_operators::extract::dates::RelativeDates;
    /// let monday = 1_796_601_600_000; // 2026-12-07, a Monday
    /// let found = |text: &str| -> Vec<String> {
    ///     RelativeDates::new().find(text, monday).into_iter().map(|(_, _, v)| v).collect()
    /// };
    /// assert_eq!(found("The launch slips to Friday."), ["2026-12-11"]);
    /// assert_eq!(found("Deadline is tomorrow, review in two weeks."), ["2026-12-08", "2026-12-21"]);
    /// assert_eq!(found("We met on Friday and shipped it yesterday."), ["2026-12-04", "2026-12-06"]);
    /// assert_eq!(found("Budget freeze next quarter, hiring next month, EOY review."), ["2027-Q1", "2027-01", "2026-12-31"]);
    /// assert!(found("Sync next week.").is_empty());
    /// ```
    pub fn find(&self, text: &str, written_ms: i64) -> Vec<(usize, usize, String)> {
        let today = written_ms.div_euclid(DAY_MS);
        let (year, month, _) = civil_date(written_ms);
        // Read only when a bare weekday needs it.
        let past_sentence = std::cell::OnceCell::new();
        let past_sentence = || {
            *past_sentence.get_or_init(|| self.past.is_match(text) && !self.future.is_match(text))
        };
        let mut found = Vec::new();
        for c in self.phrase.captures_iter(text) {
            let whole = c.get(0).expect("group 0");
            let group = |name: &str| c.name(name).map(|m| m.as_str().to_ascii_lowercase());
            let value = if let Some(word) = group("word") {
                Some(day(today
                    + match word.as_str() {
                        "tomorrow" => 1,
                        "yesterday" => -1,
                        _ => 0,
                    }))
            } else if let Some(weekday) = group("weekday") {
                let target = WEEKDAYS
                    .iter()
                    .position(|d| *d == weekday)
                    .expect("a weekday") as i64;
                // 1970-01-01 was a Thursday (index 3, Monday = 0).
                let now = (today + 3).rem_euclid(7);
                let ahead = (target - now).rem_euclid(7);
                let which = group("day_which");
                let forward = self.forward.is_match(&text[..whole.start()]);
                let back = match which.as_deref() {
                    Some("last" | "past") => true,
                    Some(_) => false,
                    None => past_sentence() && !forward,
                };
                let behind = (now - target).rem_euclid(7);
                let offset = if back {
                    if behind == 0 { -7 } else { -behind }
                } else if which.as_deref() == Some("this") && ahead == 0 {
                    0
                } else if ahead == 0 {
                    7
                } else {
                    ahead
                };
                Some(day(today + offset))
            } else if let Some(count) = group("count") {
                let n = number(&count);
                match group("span").as_deref() {
                    Some("day") => Some(day(today + n)),
                    Some("week") => Some(day(today + 7 * n)),
                    _ => {
                        let (y, m) = add_months(year, month, n);
                        Some(format!("{y:04}-{m:02}"))
                    }
                }
            } else if let Some(period) = group("period") {
                let step = match group("which").as_deref() {
                    Some("next") => 1,
                    Some("last") => -1,
                    _ => 0,
                };
                Some(match period.as_str() {
                    "month" => {
                        let (y, m) = add_months(year, month, step);
                        format!("{y:04}-{m:02}")
                    }
                    "quarter" => {
                        let (y, m) = add_months(year, month, 3 * step);
                        format!("{y:04}-Q{}", (m - 1) / 3 + 1)
                    }
                    _ => format!("{:04}", year + step as i32),
                })
            } else {
                let (unit, step) = match group("eo").as_deref() {
                    Some("eod") => ("day", 0),
                    Some("eow") => ("week", 0),
                    Some("eom") => ("month", 0),
                    Some("eoq") => ("quarter", 0),
                    Some("eoy") => ("year", 0),
                    _ => {
                        let step = match group("end_which").as_deref().map(str::trim) {
                            Some("next") => 1,
                            _ => 0,
                        };
                        (
                            match group("end_unit").as_deref() {
                                Some("week") => "week",
                                Some("month") => "month",
                                Some("quarter") => "quarter",
                                _ => "year",
                            },
                            step,
                        )
                    }
                };
                Some(match unit {
                    "day" => day(today),
                    "week" => {
                        let now = (today + 3).rem_euclid(7);
                        day(today + (4 - now).rem_euclid(7) + 7 * step)
                    }
                    "month" => {
                        let (y, m) = add_months(year, month, step);
                        last_day(y, m)
                    }
                    "quarter" => {
                        let (y, m) = add_months(year, month, 3 * step);
                        last_day(y, ((m - 1) / 3 + 1) * 3)
                    }
                    _ => last_day(year + step as i32, 12),
                })
            };
            if let Some(value) = value {
                found.push((whole.start(), whole.end(), value));
            }
        }
        found
    }
}

/// The last day of a month, as `YYYY-MM-DD`.
fn last_day(year: i32, month: u32) -> String {
    let (y, m) = add_months(year, month, 1);
    let first_of_next = days_from_civil(y, m, 1);
    day(first_of_next - 1)
}

fn number(word: &str) -> i64 {
    let word: String = word.split_whitespace().collect::<Vec<_>>().join(" ");
    match word.as_str() {
        "a" | "an" | "one" => 1,
        "two" | "a couple of" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        digits => digits.parse().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-07 (a Monday), noon UTC.
    const MONDAY: i64 = 1_796_601_600_000 + 12 * 3_600_000;

    fn values(text: &str, at: i64) -> Vec<String> {
        RelativeDates::new()
            .find(text, at)
            .into_iter()
            .map(|(_, _, v)| v)
            .collect()
    }

    #[test]
    fn civil_days_round_trip() {
        for days in [-800_000, -1, 0, 59, 365, 10_957, 20_794, 2_000_000] {
            let (y, m, d) = civil_date(days * DAY_MS);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(day(days_from_civil(2026, 12, 7)), "2026-12-07");
        assert_eq!(last_day(2028, 2), "2028-02-29");
        assert_eq!(last_day(2026, 2), "2026-02-28");
    }

    #[test]
    fn weekdays_look_ahead_unless_told_in_the_past() {
        let tuesday = MONDAY + DAY_MS;
        assert_eq!(values("Ship it Friday.", tuesday), ["2026-12-11"]);
        assert_eq!(values("Ship it next Friday.", tuesday), ["2026-12-11"]);
        assert_eq!(values("Ship it Tuesday.", tuesday), ["2026-12-15"]);
        assert_eq!(values("Ship it this Tuesday.", tuesday), ["2026-12-08"]);
        assert_eq!(values("Retro was last Tuesday.", tuesday), ["2026-12-01"]);
        assert_eq!(values("We launched on Monday.", tuesday), ["2026-12-07"]);
        // Told in the past, but moved *to* a day: ahead.
        assert_eq!(
            values("The launch was moved to Thursday.", tuesday),
            ["2026-12-10"]
        );
    }

    #[test]
    fn spans_periods_and_ends() {
        assert_eq!(values("in 3 days", MONDAY), ["2026-12-10"]);
        assert_eq!(values("in a week", MONDAY), ["2026-12-14"]);
        assert_eq!(values("in two months", MONDAY), ["2027-02"]);
        assert_eq!(values("this month", MONDAY), ["2026-12"]);
        assert_eq!(values("last quarter", MONDAY), ["2026-Q3"]);
        assert_eq!(values("next year", MONDAY), ["2027"]);
        assert_eq!(values("by end of the month", MONDAY), ["2026-12-31"]);
        assert_eq!(values("end of next quarter", MONDAY), ["2027-03-31"]);
        assert_eq!(values("EOW", MONDAY), ["2026-12-11"]);
        assert_eq!(values("by EOD", MONDAY), ["2026-12-07"]);
        assert_eq!(values("end of next week", MONDAY), ["2026-12-18"]);
    }

    #[test]
    fn words_that_only_look_like_dates_are_left_alone() {
        assert!(values("Sync next week; the sun sat low on a wed.", MONDAY).is_empty());
        assert!(values("Sundays are quiet. Mondays are not.", MONDAY).is_empty());
    }
}
