//! Choices: what a decision picked, for which matter. "We decided to use Postgres as the
//! primary database for Vesper" claims (Vesper, `choice:primary database`, `postgres`); "the
//! Vesper primary database moves from Postgres to CockroachDB" claims the same attribute with
//! `cockroachdb`. With the matter as the attribute, a later decision on the same matter is found
//! by the claim timeline like any other changed value, and a restatement of the same choice
//! agrees with it.

use regex::{Regex, RegexBuilder};

use super::claims::RawClaim;
use super::mentions::{Mention, owner_rank};

/// The attribute family of choices; a claim's attribute is `choice:<matter>`.
pub const CHOICE: &str = "choice";

/// Reads the choice a decision states, if its phrasing names one.
#[derive(Debug)]
pub struct ChoiceReader {
    patterns: Vec<Regex>,
}

/// A choice read from a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The claim: attribute `choice:<matter>`, unit `choice`, the choice as value.
    pub claim: RawClaim,
    /// Said in an idiom only decisions use ("X it is for the Y", "the Y moves from X to Z",
    /// "on the Y: X instead of Z", "scratch X for the Y"), not with a verb any plan or
    /// description could use ("use X as the Y").
    pub idiomatic: bool,
}

/// Patterns before this index are decision idioms.
const IDIOMS: usize = 4;

/// A phrase boundary: end of the clause.
const END: &str = r"\s*(?:[.;!]|,|\s+today\b|\s+this week\b|\s+going forward\b|\s+from now on\b|$)";

impl Default for ChoiceReader {
    fn default() -> Self {
        Self::new()
    }
}

impl ChoiceReader {
    /// Compiles the decision phrasings. Each pattern names the matter (`m`), the choice (`o`)
    /// and, where the phrasing has it, what it replaces (`z`) and whom it is for (`f`).
    pub fn new() -> Self {
        let verbs = r"(?:use|uses|using|adopt|adopts|adopted|go with|goes with|going with|went with|pick|picks|picked|choose|chooses|chose|select|selects|selected|standardi[sz]e on|switch to|switched to|approved:?|approve|settle on|settled on)";
        let np = r"[^.;:,()!?]{2,60}?";
        let choice = r"[^.;:,()!?]{1,60}?";
        let patterns = [
            // "the Vesper primary database moves from Postgres to CockroachDB"
            format!(
                r"\bthe (?P<m>{np}) (?:moves|moved|is moving|switches|switched|changes|changed|goes|went) from (?P<z>{choice}) to (?P<o>{choice}){END}"
            ),
            // "the earlier call on the Vesper primary database: CockroachDB instead of Postgres",
            // "update on the Vesper CI provider: we now go with CircleCI, replacing GitLab CI"
            format!(
                r"\b(?:on|for|about) the (?P<m>{np}):\s*(?:we (?:now |will )?(?:go|are going|will go|went) with |it is now |now )?(?P<o>{choice})(?:,?\s+(?:instead of|replacing|rather than|in place of) (?P<z>{choice}))?{END}"
            ),
            // "scratch Postgres for the Vesper primary database; Ana approved CockroachDB today"
            format!(
                r"\bscratch (?P<z>{choice}) for the (?P<m>{np})[;,.]\s*(?:[^.;]*? )?(?:approved|picked|chose|went with|signed off on) (?P<o>{choice}){END}"
            ),
            // "CockroachDB it is for the Vesper primary database"
            format!(r"(?:^|[,:]\s*)(?P<o>{choice}) it is for (?:the|our) (?P<m>{np}){END}"),
            // "we decided to use Postgres as the primary database for Vesper",
            // "Vesper goes with Postgres for the primary database", "Approved: Postgres as the
            // Vesper primary database"
            format!(
                r"\b{verbs}\s+(?P<o>{choice})\s+(?:as|for) (?:the|our) (?P<m>{np})(?:\s+(?:for|of|on) (?P<f>{np}))?(?:,?\s+(?:instead of|replacing|rather than) (?P<z>{choice}))?{END}"
            ),
        ];
        ChoiceReader {
            patterns: patterns
                .iter()
                .map(|p| {
                    RegexBuilder::new(p)
                        .case_insensitive(true)
                        .build()
                        .expect("choice pattern compiles")
                })
                .collect(),
        }
    }

    /// The choice stated in `body[start..end]`, with the unit's entity `mentions`: the
    /// attribute is `choice:<matter>` (the matter without the names of the entities in it), the
    /// value the choice, and the subject the entity the matter belongs to (named in the matter
    /// or after "for"), else any non-person entity outside the choice.
    ///
    /// ```
    /// use epigraph_operators::extract::choice::ChoiceReader;
    /// let reader = ChoiceReader::new();
    /// let read = |t: &str| reader.read(t, 0, t.len(), &[]).map(|c| (c.claim.attribute, c.claim.value));
    /// assert_eq!(read("We decided to use Postgres as the primary database."),
    ///            Some(("choice:primary database".into(), "postgres".into())));
    /// assert_eq!(read("Change of plan: the primary database moves from Postgres to MySQL."),
    ///            Some(("choice:primary database".into(), "mysql".into())));
    /// assert_eq!(read("We are reversing the earlier call on the CI provider: CircleCI instead of GitLab CI."),
    ///            Some(("choice:ci provider".into(), "circleci".into())));
    /// assert_eq!(read("After the bake-off, RabbitMQ it is for the message broker."),
    ///            Some(("choice:message broker".into(), "rabbitmq".into())));
    /// assert_eq!(read("The nightly build failed twice this week."), None);
    /// ```
    pub fn read(
        &self,
        body: &str,
        start: usize,
        end: usize,
        mentions: &[Mention],
    ) -> Option<Choice> {
        let text = &body[start..end];
        let (pattern, caps) = self
            .patterns
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.captures(text).map(|c| (i, c)))?;
        let group = |name: &str| {
            caps.name(name)
                .map(|m| (start + m.start(), start + m.end()))
        };
        let (m_start, m_end) = group("m")?;
        let (o_start, o_end) = group("o")?;
        let inside = |m: &Mention, (s, e): (usize, usize)| m.start >= s && m.end <= e;
        let matter = strip_names(body, (m_start, m_end), mentions)?;
        let value = normalise_choice(&body[o_start..o_end])?;
        if matter == value || value.split_whitespace().count() > 6 {
            return None;
        }
        // The matter's owner: an entity named in the matter, or after "for", else any entity
        // outside the choice and what it replaces.
        let z = group("z");
        let f = group("f");
        // A topic ("pricing") is part of the matter, never its owner.
        let owner = |m: &Mention| m.kind != "Person" && m.kind != "Topic";
        // Where one name fits several kinds, the project (product, organisation) owns it.
        let best = |found: &mut dyn Iterator<Item = (usize, &Mention)>| {
            found
                .min_by_key(|(_, m)| (owner_rank(&m.kind), m.start))
                .map(|(i, _)| i)
        };
        let all = || mentions.iter().enumerate().filter(|(_, m)| owner(m));
        let subject = best(&mut all().filter(|(_, m)| inside(m, (m_start, m_end))))
            .or_else(|| f.and_then(|f| best(&mut all().filter(|(_, m)| inside(m, f)))))
            .or_else(|| {
                best(&mut all().filter(|(_, m)| {
                    m.start >= start
                        && m.end <= end
                        && !inside(m, (o_start, o_end))
                        && z.is_none_or(|z| !inside(m, z))
                }))
            });
        // Without a known owner, the claim's span is where the owner is named, for the dataflow
        // (which knows names this source never introduced) to find it: the matter and what
        // follows "for", else the matter when it holds a name, else the words before the choice.
        let has_name = body[m_start..m_end]
            .split_whitespace()
            .any(|w| w.starts_with(char::is_uppercase) && w.chars().any(char::is_lowercase));
        let (span_start, span_end) = match f {
            Some((_, f_end)) => (m_start, f_end),
            None if has_name => (m_start, m_end),
            None => (start, o_start),
        };
        Some(Choice {
            claim: RawClaim {
                start: span_start,
                end: span_end,
                attribute: format!("{CHOICE}:{matter}"),
                value,
                unit: CHOICE.into(),
                qualifier: None,
                subject,
            },
            idiomatic: pattern < IDIOMS,
        })
    }
}

/// The matter phrase, lower case, without the names of the entities in it, a leading
/// "project" and articles: "Project Vesper primary database" → "primary database".
fn strip_names(body: &str, (s, e): (usize, usize), mentions: &[Mention]) -> Option<String> {
    let mut text = String::new();
    let mut at = s;
    // Topics ("pricing") are part of what the matter is; names are whose matter it is.
    let mut names: Vec<&Mention> = mentions
        .iter()
        .filter(|m| m.start >= s && m.end <= e && m.kind != "Topic")
        .collect();
    names.sort_by_key(|m| m.start);
    for m in names {
        if m.start >= at {
            text.push_str(&body[at..m.start]);
            text.push(' ');
            at = m.end;
        }
    }
    text.push_str(&body[at..e]);
    // A capitalised word the recogniser did not know is a name too ("the Vesper CI provider"
    // from a source that never introduced Vesper); acronyms ("CI") are kept.
    let title_case = |w: &str| {
        let mut chars = w.chars();
        chars.next().is_some_and(char::is_uppercase) && chars.any(char::is_lowercase)
    };
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-'))
        .filter(|w| !w.is_empty() && !title_case(w))
        .map(str::to_lowercase)
        .collect();
    let skip = |w: &str| {
        matches!(
            w,
            "the" | "a" | "an" | "our" | "project" | "team" | "'s" | "s"
        )
    };
    let words: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .skip_while(|w| skip(w))
        .collect();
    let matter = words.join(" ");
    (!matter.is_empty() && matter.len() <= 60).then_some(matter)
}

/// A choice as compared: lower case, without a leading article or "the new".
fn normalise_choice(raw: &str) -> Option<String> {
    let lower = raw.trim().to_lowercase();
    let lower = ["a ", "an ", "the ", "our "]
        .iter()
        .find_map(|a| lower.strip_prefix(a))
        .unwrap_or(&lower)
        .trim()
        .to_string();
    (!lower.is_empty()).then_some(lower)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::mentions::Evidence;

    fn mention(body: &str, name: &str, kind: &str) -> Mention {
        let start = body.find(name).expect("name in body");
        Mention {
            start,
            end: start + name.len(),
            surface: name.into(),
            kind: kind.into(),
            key: name.to_lowercase(),
            evidence: Evidence::Gazetteer,
        }
    }

    fn read(body: &str, names: &[(&str, &str)]) -> Option<(String, String, Option<String>)> {
        let mentions: Vec<Mention> = names
            .iter()
            .filter(|(n, _)| body.contains(n))
            .map(|(n, k)| mention(body, n, k))
            .collect();
        ChoiceReader::new()
            .read(body, 0, body.len(), &mentions)
            .map(|c| {
                (
                    c.claim.attribute,
                    c.claim.value,
                    c.claim.subject.map(|i| mentions[i].surface.clone()),
                )
            })
    }

    #[test]
    fn every_decision_phrasing_names_the_same_matter_and_owner() {
        let expect = |choice: &str| {
            Some((
                "choice:primary database".to_string(),
                choice.to_string(),
                Some("Vesper".to_string()),
            ))
        };
        let vesper = [("Vesper", "Project"), ("Ana", "Person")];
        for (text, choice) in [
            (
                "We decided to use DynamoDB as the primary database for Vesper.",
                "dynamodb",
            ),
            (
                "Decision: Vesper goes with Postgres for the primary database.",
                "postgres",
            ),
            ("Approved: MySQL as the Vesper primary database.", "mysql"),
            (
                "After the bake-off, Postgres it is for the Vesper primary database.",
                "postgres",
            ),
            (
                "Change of plan: the Vesper primary database moves from DynamoDB to MySQL.",
                "mysql",
            ),
            (
                "We are reversing the earlier call on the Vesper primary database: CockroachDB instead of Postgres.",
                "cockroachdb",
            ),
            (
                "Update on the Vesper primary database: we now go with MySQL, replacing Postgres.",
                "mysql",
            ),
            (
                "Scratch Postgres for the Vesper primary database; Ana approved MySQL today.",
                "mysql",
            ),
        ] {
            assert_eq!(read(text, &vesper), expect(choice), "{text}");
        }
    }

    #[test]
    fn the_owner_is_not_the_chosen_product_and_project_words_are_not_the_matter() {
        let text = "We decided to use GitHub Actions as the CI provider for Project Vortex.";
        assert_eq!(
            read(
                text,
                &[("GitHub Actions", "Product"), ("Vortex", "Project")]
            ),
            Some((
                "choice:ci provider".into(),
                "github actions".into(),
                Some("Vortex".into())
            ))
        );
    }

    #[test]
    fn statements_without_a_choice_have_none() {
        for text in [
            "We will roll out SSO to GreenGate next sprint.",
            "Headcount for the Sales team is capped at 12 until Q3.",
            "The plan is to cut the release cadence to every two weeks after the all-hands.",
            "Let's go ahead and outsource the translation work.",
        ] {
            assert_eq!(read(text, &[]), None, "{text}");
        }
    }
}
