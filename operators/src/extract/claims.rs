//! Claims: (subject, attribute, value, unit, qualifier) read from amounts, dates, counts,
//! percentages, statuses and assignments in a unit.

use regex::{Regex, RegexBuilder};

use super::cues::CueSet;
use super::dates::RelativeDates;
use super::mentions::{Mention, normalise};
use crate::ontology::{Ontology, OntologyError, ValueKind};

/// A value found in a unit, before it is tied to a subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawClaim {
    /// Byte offset of the value in the body.
    pub start: usize,
    /// Byte offset after it.
    pub end: usize,
    /// Attribute name.
    pub attribute: String,
    /// Normalised value.
    pub value: String,
    /// Unit.
    pub unit: String,
    /// Qualifier (`not`, `about`, `at least`, …).
    pub qualifier: Option<String>,
    /// Index of the subject mention in the unit's mentions, if an entity is named.
    pub subject: Option<usize>,
}

const MONTHS: &str = "January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec";

/// The claim reader.
#[derive(Debug)]
pub struct ClaimReader {
    iso_date: Regex,
    month_day: Regex,
    day_month: Regex,
    month_year: Regex,
    quarter: Regex,
    amount: Regex,
    percent: Regex,
    number: Regex,
    status: Regex,
    owner: Regex,
    qualifier: Regex,
    relative: RelativeDates,
    /// Name, value kind, cues, and the cue phrases when the name is qualified by the cue.
    attributes: Vec<(String, ValueKind, CueSet, Option<Vec<String>>)>,
}

impl ClaimReader {
    /// Compiles the patterns and the ontology's attribute cues.
    pub fn new(ontology: &Ontology) -> Result<Self, OntologyError> {
        let re = |p: &str| Regex::new(p).expect("claim pattern compiles");
        let statuses: Vec<String> = ontology.statuses.iter().map(|s| regex::escape(s)).collect();
        let status = RegexBuilder::new(&format!(
            r"(?:\b(?:is|are|was|were|remains|remain|now|status:?|status is|marked as|marked|moved to|set to|went|gone|as)\s+|\bstatus (?:for|of) [^:.]{{1,60}}:\s*)(?:now\s+|currently\s+|still\s+|officially\s+)?(not\s+)?({})\b",
            statuses.join("|")
        ))
        .case_insensitive(true)
        .build()
        .map_err(|e| OntologyError::Invalid(format!("status words: {e}")))?;
        let attributes = ontology
            .attributes
            .iter()
            .map(|a| {
                CueSet::new(&a.cues)
                    .map(|cues| {
                        let phrases = a
                            .qualified
                            .then(|| a.cues.iter().map(|c| c.to_lowercase()).collect());
                        (a.name.clone(), a.value, cues, phrases)
                    })
                    .map_err(|e| OntologyError::Invalid(e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        Ok(ClaimReader {
            iso_date: re(r"\b(\d{4})-(\d{2})-(\d{2})\b"),
            month_day: re(&format!(
                r"\b({MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?"
            )),
            day_month: re(&format!(
                r"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({MONTHS})\b(?:,?\s+(\d{{4}})\b)?"
            )),
            month_year: re(&format!(r"\b({MONTHS})\s+(\d{{4}})\b")),
            quarter: re(r"\bQ([1-4])\s*(\d{4})\b"),
            amount: RegexBuilder::new(
                r"(?:(€|\$|£|\bEUR|\bUSD|\bGBP)\s?(\d[\d,]*(?:\.\d+)?)\s?(k|m|mm|bn|b|million|thousand|billion)?\b|\b(\d[\d,]*(?:\.\d+)?)\s?(k|m|mm|bn|million|thousand|billion)?\s?(€|EUR|USD|GBP|euros?|dollars?)\b)",
            )
            .case_insensitive(true)
            .build()
            .expect("amount pattern compiles"),
            percent: re(r"\b(\d+(?:\.\d+)?)\s?(?:%|percent\b|per cent\b)"),
            number: re(r"\b\d[\d,]*\b"),
            status,
            owner: RegexBuilder::new(r"\b(?:owner|owned by|assigned to|assignee|led by|dri)\s*:?\s+")
                .case_insensitive(true)
                .build()
                .expect("owner pattern compiles"),
            qualifier: RegexBuilder::new(
                r"\b(not|about|around|approximately|approx\.?|roughly|at least|at most|up to|over|under|more than|less than|nearly|almost)\s*$|~\s*$",
            )
            .case_insensitive(true)
            .build()
            .expect("qualifier pattern compiles"),
            relative: RelativeDates::new(),
            attributes,
        })
    }

    /// The claims of `body[start..end]`, for a body written at `written_ms` (ms since the Unix
    /// epoch, if known): its year completes dates written without one, and its day resolves
    /// relative dates ([`super::dates`]).
    ///
    /// ```
    /// use epigraph_operators::{Ontology, extract::claims::ClaimReader};
    /// let reader = ClaimReader::new(&Ontology::bundled()).unwrap();
    /// let written = Some(1_780_000_000_000); // 2026-05-28, a Thursday
    /// let text = "UrbanFlow ask: €250K; launch moved to June 3.";
    /// let claims = reader.read(text, 0, text.len(), &[], written);
    /// let found: Vec<_> = claims.iter().map(|c| (c.attribute.as_str(), c.value.as_str(), c.unit.as_str())).collect();
    /// assert_eq!(found, [("ask_amount", "250000", "EUR"), ("launch_date", "2026-06-03", "date")]);
    /// let text = "Heads up: the launch slips to next Tuesday.";
    /// let claims = reader.read(text, 0, text.len(), &[], written);
    /// assert_eq!((claims[0].attribute.as_str(), claims[0].value.as_str()), ("launch_date", "2026-06-02"));
    /// ```
    pub fn read(
        &self,
        body: &str,
        start: usize,
        end: usize,
        mentions: &[Mention],
        written_ms: Option<i64>,
    ) -> Vec<RawClaim> {
        let text = &body[start..end];
        let mut values: Vec<(usize, usize, String, String, ValueKind)> = Vec::new();
        let free = |s: usize, e: usize, values: &Vec<(usize, usize, String, String, ValueKind)>| {
            !values.iter().any(|(a, b, ..)| s < *b && *a < e)
        };
        self.dates(text, written_ms, &mut values);
        for c in self.amount.captures_iter(text) {
            let whole = c.get(0).expect("group 0");
            if !free(whole.start(), whole.end(), &values) {
                continue;
            }
            let (currency, number, scale) = match c.get(2) {
                Some(n) => (c.get(1), n.as_str(), c.get(3)),
                None => (c.get(6), c.get(4).map_or("", |m| m.as_str()), c.get(5)),
            };
            let Some(amount) = scaled(number, scale.map(|m| m.as_str())) else {
                continue;
            };
            let unit = currency_code(currency.map_or("", |m| m.as_str()));
            values.push((whole.start(), whole.end(), amount, unit, ValueKind::Amount));
        }
        for c in self.percent.captures_iter(text) {
            let whole = c.get(0).expect("group 0");
            if free(whole.start(), whole.end(), &values) {
                let value = c.get(1).map_or("", |m| m.as_str()).to_string();
                values.push((
                    whole.start(),
                    whole.end(),
                    value,
                    "%".into(),
                    ValueKind::Percentage,
                ));
            }
        }
        for c in self.status.captures_iter(text) {
            let word = c.get(2).expect("status group");
            let negated = c.get(1).is_some();
            let value = word.as_str().to_lowercase();
            let unit = if negated { "status:not" } else { "status" };
            values.push((
                word.start(),
                word.end(),
                value,
                unit.into(),
                ValueKind::Status,
            ));
        }
        for m in self.owner.find_iter(text) {
            let at = start + m.end();
            if let Some(person) = mentions
                .iter()
                .find(|p| p.kind == "Person" && p.start == at)
            {
                values.push((
                    person.start - start,
                    person.end - start,
                    person.key.clone(),
                    "person".into(),
                    ValueKind::Person,
                ));
            }
        }
        for m in self.number.find_iter(text) {
            let (s, e) = (m.start(), m.end());
            let glued = text[e..].starts_with(['.', '-', ':', '/'])
                && text[e + 1..].starts_with(|c: char| c.is_ascii_digit());
            let after_letter = text[..s].ends_with(|c: char| c.is_alphabetic() || c == '.');
            if free(s, e, &values) && !glued && !after_letter {
                let value = m.as_str().replace(',', "");
                values.push((s, e, value, "count".into(), ValueKind::Count));
            }
        }
        values.sort_by_key(|v| v.0);
        let mut claims = Vec::new();
        for (s, e, value, unit, kind) in values.iter().cloned() {
            let attribute = self.attribute(text, s, e, kind, &values);
            if kind == ValueKind::Count && attribute.is_none() {
                continue; // a bare number without a counted thing is not a claim
            }
            if kind == ValueKind::Status && !status_of_a_name(text, s) {
                continue; // the status of something else ("work on SSO for Onyx is on hold")
            }
            let subject = subject_of(mentions, start + s, kind);
            let qualifier = self
                .qualifier
                .captures(&text[..s])
                .and_then(|c| c.get(1).map(|m| m.as_str().to_lowercase()))
                .or_else(|| unit.ends_with(":not").then(|| "not".to_string()));
            let unit = unit.trim_end_matches(":not").to_string();
            claims.push(RawClaim {
                start: start + s,
                end: start + e,
                attribute: attribute.unwrap_or_else(|| kind.as_str().to_string()),
                value,
                unit,
                qualifier,
                subject,
            });
        }
        claims
    }

    fn dates(
        &self,
        text: &str,
        written_ms: Option<i64>,
        values: &mut Vec<(usize, usize, String, String, ValueKind)>,
    ) {
        let year = written_ms.map(super::year_of);
        let mut push = |s: usize, e: usize, value: String| {
            if !values.iter().any(|(a, b, ..)| s < *b && *a < e) {
                values.push((s, e, value, "date".into(), ValueKind::Date));
            }
        };
        let num = |m: Option<regex::Match>| m.and_then(|m| m.as_str().parse::<i32>().ok());
        for c in self.iso_date.captures_iter(text) {
            let whole = c.get(0).expect("group 0");
            if let (Some(y), Some(mo), Some(d)) = (num(c.get(1)), num(c.get(2)), num(c.get(3)))
                && (1..=12).contains(&mo)
                && (1..=31).contains(&d)
            {
                push(whole.start(), whole.end(), format!("{y:04}-{mo:02}-{d:02}"));
            }
        }
        for (re, month_group, day_group) in [(&self.month_day, 1, 2), (&self.day_month, 2, 1)] {
            for c in re.captures_iter(text) {
                let whole = c.get(0).expect("group 0");
                let month = c.get(month_group).and_then(|m| month_number(m.as_str()));
                let day = num(c.get(day_group)).filter(|d| (1..=31).contains(d));
                let year = num(c.get(3)).or(year);
                if let (Some(mo), Some(d)) = (month, day) {
                    let value = match year {
                        Some(y) => format!("{y:04}-{mo:02}-{d:02}"),
                        None => format!("--{mo:02}-{d:02}"),
                    };
                    push(whole.start(), whole.end(), value);
                }
            }
        }
        for c in self.month_year.captures_iter(text) {
            let whole = c.get(0).expect("group 0");
            if let (Some(mo), Some(y)) = (
                c.get(1).and_then(|m| month_number(m.as_str())),
                num(c.get(2)),
            ) {
                push(whole.start(), whole.end(), format!("{y:04}-{mo:02}"));
            }
        }
        for c in self.quarter.captures_iter(text) {
            let whole = c.get(0).expect("group 0");
            if let (Some(q), Some(y)) = (num(c.get(1)), num(c.get(2))) {
                push(whole.start(), whole.end(), format!("{y:04}-Q{q}"));
            }
        }
        if let Some(written) = written_ms {
            for (s, e, value) in self.relative.find(text, written) {
                push(s, e, value);
            }
        }
    }

    /// The attribute whose cue is closest to the value, not across another value.
    fn attribute(
        &self,
        text: &str,
        s: usize,
        e: usize,
        kind: ValueKind,
        values: &[(usize, usize, String, String, ValueKind)],
    ) -> Option<String> {
        const WINDOW: usize = 60;
        let mut best: Option<(usize, String)> = None;
        for (name, value_kind, cues, phrases) in &self.attributes {
            if *value_kind != kind {
                continue;
            }
            for m in cues.find_all(text) {
                let (gap_start, gap_end, distance) = if m.end <= s {
                    (m.end, s, s - m.end)
                } else if m.start >= e {
                    (e, m.start, m.start - e)
                } else {
                    continue;
                };
                let crosses = values
                    .iter()
                    .any(|(a, b, ..)| *a >= gap_start && *b <= gap_end && (*a, *b) != (s, e));
                if distance <= WINDOW
                    && !crosses
                    && best.as_ref().is_none_or(|(d, _)| distance < *d)
                {
                    let name = match phrases {
                        Some(phrases) => qualified(
                            name,
                            &phrases[m.cue],
                            &text[..m.start],
                            &text[gap_start..gap_end],
                            kind,
                        ),
                        None => name.clone(),
                    };
                    best = Some((distance, name));
                }
            }
        }
        best.map(|(_, name)| name)
    }
}

/// The name of a qualified attribute: the family, the cue with the word that modifies it
/// ("signup conversion" and "trial-to-paid conversion" are two measures), and for a percentage
/// said as a change ("improved by 14%", "up 14%") a `:change` suffix, since a change and a
/// level are never the same measure.
///
/// ```
/// use epigraph_operators::{Ontology, extract::claims::ClaimReader};
/// let reader = ClaimReader::new(&Ontology::bundled()).unwrap();
/// let attribute = |t: &str| reader.read(t, 0, t.len(), &[], None)[0].attribute.clone();
/// assert_eq!(attribute("Signup conversion is at 25% this week."), "growth:signup conversion");
/// assert_eq!(attribute("The trial-to-paid conversion improved by 14%."), "growth:trial-to-paid conversion:change");
/// assert_eq!(attribute("Churn is 3%."), "growth:churn");
/// assert_eq!(attribute("This month churn came in at 3%."), "growth:churn");
/// ```
fn qualified(family: &str, cue: &str, before: &str, gap: &str, kind: ValueKind) -> String {
    const NOT_MODIFIERS: &[&str] = &[
        "the",
        "a",
        "an",
        "our",
        "their",
        "its",
        "this",
        "that",
        "of",
        "in",
        "on",
        "for",
        "and",
        "or",
        "to",
        "is",
        "was",
        "with",
        "by",
        "at",
        "from",
        "new",
        "overall",
        "total",
        "monthly",
        "weekly",
        "daily",
        "month",
        "week",
        "quarter",
        "year",
        "day",
        "today",
        "yesterday",
        "current",
        "latest",
        "last",
        "next",
        "this",
    ];
    let before = before.trim_end();
    let modifier = before
        .rsplit(|c: char| c.is_whitespace())
        .next()
        .filter(|w| {
            // A capitalised word is a name ("BrightBridge conversion"), unless it only starts
            // the sentence.
            let at_start = w.len() == before.len();
            !w.is_empty()
                && w.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
                && w.chars().skip(1).all(|c| !c.is_ascii_uppercase())
                && (at_start || !w.starts_with(|c: char| c.is_ascii_uppercase()))
                && !NOT_MODIFIERS.contains(&w.to_ascii_lowercase().as_str())
        })
        .map(|w| format!("{} ", w.to_ascii_lowercase()))
        .unwrap_or_default();
    let gap = gap.to_ascii_lowercase();
    let words: Vec<&str> = gap.split(|c: char| !c.is_alphanumeric()).collect();
    let has = |w: &str| words.contains(&w);
    // "improved by 14%", "up 14%" are changes; "fell to 4.5%" is the level it fell to.
    let change = kind == ValueKind::Percentage
        && (has("by")
            || (!has("to")
                && [
                    "up",
                    "down",
                    "grew",
                    "rose",
                    "fell",
                    "dropped",
                    "improved",
                    "increased",
                    "decreased",
                    "declined",
                    "jumped",
                ]
                .iter()
                .any(|w| has(w))));
    format!(
        "{family}:{modifier}{cue}{}",
        if change { ":change" } else { "" }
    )
}

/// The subject mention of a value: for an assignment the nearest non-person entity, otherwise
/// the nearest entity before the value (preferring non-persons), else the first after it.
/// Whether the status at byte `at` of `text` is stated of a name: the clause reads "<Name>
/// <verb> <status>" ("Atlas is on hold", "Project Atlas is now blocked", "Atlas's status is at
/// risk", "lists Atlas as on track") or "<…>: <status>" ("Status for Atlas: at risk"), and the
/// name is not attached to another noun by a preposition. "Work on SSO for Atlas is on hold",
/// "Purging old Atlas logs is on hold" and "… until the budget is settled; it is blocked" state
/// the status of something else, which is no claim on Atlas.
fn status_of_a_name(text: &str, at: usize) -> bool {
    let before = text[..at].trim_end();
    if before.ends_with(':') {
        return true;
    }
    let words: Vec<&str> = before
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let mut i = words.len();
    while i > 0 && is_verb_word(words[i - 1]) {
        i -= 1;
    }
    let is_name = |w: &str| w.starts_with(|c: char| c.is_uppercase());
    if i == 0 || !is_name(words[i - 1]) {
        return false;
    }
    while i > 0 && is_name(words[i - 1]) {
        i -= 1;
    }
    while i > 0
        && matches!(
            words[i - 1].to_lowercase().as_str(),
            "the" | "our" | "project"
        )
    {
        i -= 1;
    }
    i == 0
        || !matches!(
            words[i - 1].to_lowercase().as_str(),
            "for"
                | "on"
                | "of"
                | "to"
                | "with"
                | "at"
                | "from"
                | "by"
                | "about"
                | "in"
                | "into"
                | "behind"
                | "under"
                | "over"
        )
}

/// The words that may stand between a name and its status: the verb and its adverbs.
fn is_verb_word(word: &str) -> bool {
    let word = word.to_lowercase();
    let word = word.trim_end_matches("'s").trim_end_matches('\'');
    matches!(
        word,
        "is" | "are"
            | "was"
            | "were"
            | "remains"
            | "remain"
            | "now"
            | "currently"
            | "still"
            | "officially"
            | "not"
            | "marked"
            | "as"
            | "set"
            | "to"
            | "moved"
            | "went"
            | "gone"
            | "status"
            | "s"
            | "project"
            | "team"
    )
}

fn subject_of(mentions: &[Mention], at: usize, kind: ValueKind) -> Option<usize> {
    let candidates: Vec<(usize, &Mention)> = mentions
        .iter()
        .enumerate()
        .filter(|(_, m)| m.end <= at || m.start > at)
        .filter(|(_, m)| !(kind == ValueKind::Person && m.kind == "Person"))
        .collect();
    let before = |non_person: bool| {
        candidates
            .iter()
            .filter(|(_, m)| m.end <= at && (!non_person || m.kind != "Person"))
            .max_by_key(|(_, m)| m.end)
            .map(|(i, _)| *i)
    };
    before(true).or_else(|| before(false)).or_else(|| {
        candidates
            .iter()
            .find(|(_, m)| m.start > at)
            .map(|(i, _)| *i)
    })
}

fn month_number(name: &str) -> Option<i32> {
    let lower = name.to_lowercase();
    let months = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    months
        .iter()
        .position(|m| lower.starts_with(m))
        .map(|i| i as i32 + 1)
}

fn currency_code(symbol: &str) -> String {
    match symbol.to_lowercase().as_str() {
        "€" | "eur" | "euro" | "euros" => "EUR",
        "$" | "usd" | "dollar" | "dollars" => "USD",
        "£" | "gbp" => "GBP",
        _ => "money",
    }
    .to_string()
}

/// `2.2` and `m` to `2200000`; `1,250` to `1250`.
fn scaled(number: &str, scale: Option<&str>) -> Option<String> {
    let plain = number.replace(',', "");
    let factor: u64 = match scale.map(str::to_lowercase).as_deref() {
        None => 1,
        Some("k" | "thousand") => 1_000,
        Some("m" | "mm" | "million") => 1_000_000,
        Some("b" | "bn" | "billion") => 1_000_000_000,
        Some(_) => 1,
    };
    let (whole, fraction) = plain.split_once('.').unwrap_or((&plain, ""));
    let whole: u64 = whole.parse().ok()?;
    let mut value = whole.checked_mul(factor)?;
    if !fraction.is_empty() {
        let digits = fraction.len().min(9) as u32;
        let fraction: u64 = fraction[..digits as usize].parse().ok()?;
        value = value.checked_add(fraction.checked_mul(factor)? / 10u64.pow(digits))?;
    }
    Some(value.to_string())
}

/// The subject key of a claim without an entity: the source title.
pub fn title_subject(title: Option<&str>, source_id: &str) -> (String, String) {
    let name = title.unwrap_or(source_id).to_string();
    (format!("title:{}", normalise(&name)), name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<(String, String, String, Option<String>)> {
        let reader = ClaimReader::new(&Ontology::bundled()).unwrap();
        reader
            .read(text, 0, text.len(), &[], Some(1_780_000_000_000))
            .into_iter()
            .map(|c| (c.attribute, c.value, c.unit, c.qualifier))
            .collect()
    }

    #[test]
    fn term_sheet_amounts_get_their_attributes() {
        let claims = read("The term sheet says €320K SAFE at a €2.2M cap.");
        assert_eq!(
            claims,
            [
                ("ask_amount".into(), "320000".into(), "EUR".into(), None),
                ("valuation_cap".into(), "2200000".into(), "EUR".into(), None),
            ]
        );
    }

    #[test]
    fn a_status_is_claimed_of_the_clause_subject_only() {
        let reader = ClaimReader::new(&Ontology::bundled()).unwrap();
        let statuses = |text: &str, name: &str| -> Vec<(String, Option<String>)> {
            let at = text.find(name).expect("the name is in the text");
            let atlas = Mention {
                start: at,
                end: at + name.len(),
                surface: name.into(),
                kind: "Project".into(),
                key: "atlas".into(),
                evidence: super::super::mentions::Evidence::Pattern,
            };
            reader
                .read(text, 0, text.len(), &[atlas], Some(1_780_000_000_000))
                .into_iter()
                .filter(|c| c.unit == "status")
                .map(|c| (c.value, c.subject.map(|_| "atlas".to_string())))
                .collect()
        };
        let of_atlas = |v: &str| vec![(v.to_string(), Some("atlas".to_string()))];
        assert_eq!(statuses("Atlas is on hold.", "Atlas"), of_atlas("on hold"));
        assert_eq!(
            statuses("Project Atlas is blocked.", "Atlas"),
            of_atlas("blocked")
        );
        assert_eq!(
            statuses("Status for Atlas: at risk.", "Atlas"),
            of_atlas("at risk")
        );
        assert_eq!(
            statuses("The steering deck lists Atlas as on track.", "Atlas"),
            of_atlas("on track")
        );
        assert_eq!(
            statuses("Atlas's status is now blocked.", "Atlas"),
            of_atlas("blocked")
        );
        // Another thing's status, or one stated in a later clause.
        assert!(statuses("Purging old Atlas logs is on hold.", "Atlas").is_empty());
        assert!(statuses("Work on SSO for Atlas is on hold until we know.", "Atlas").is_empty());
        assert!(
            statuses(
                "We can't start SSO for Atlas until the budget is settled; it is blocked for now.",
                "Atlas"
            )
            .is_empty()
        );
    }

    #[test]
    fn status_lines_and_listings_are_status_claims() {
        for text in [
            "Status for Project Onyx: at risk.",
            "The steering deck lists Onyx as at risk.",
        ] {
            assert_eq!(
                read(text),
                [("status".into(), "at risk".into(), "status".into(), None)],
                "{text}"
            );
        }
    }

    #[test]
    fn counts_percentages_statuses_and_quarters() {
        assert_eq!(
            read(
                "Headcount is 12 engineers; churn fell to 4.5% and Atlas is now on hold until Q3 2026."
            ),
            [
                (
                    "headcount".to_string(),
                    "12".to_string(),
                    "count".to_string(),
                    None
                ),
                ("growth:churn".into(), "4.5".into(), "%".into(), None),
                ("status".into(), "on hold".into(), "status".into(), None),
                ("date".into(), "2026-Q3".into(), "date".into(), None),
            ]
        );
        assert_eq!(
            read("Borealis is not blocked."),
            [(
                "status".to_string(),
                "blocked".to_string(),
                "status".to_string(),
                Some("not".to_string())
            )]
        );
        assert!(read("See PEP 8 and Python 3.").is_empty());
    }

    #[test]
    fn scaling_is_exact() {
        assert_eq!(scaled("2.2", Some("M")).as_deref(), Some("2200000"));
        assert_eq!(scaled("1,250", None).as_deref(), Some("1250"));
        assert_eq!(scaled("0.5", Some("k")).as_deref(), Some("500"));
        assert_eq!(scaled("99999999999999999999", None), None);
    }
}
