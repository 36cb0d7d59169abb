//! Entity mentions in a unit of text: people known from the source's headers, names from the
//! ontology gazetteer, and capitalised phrases typed by the ontology's suffixes, trigger words
//! and given names. Capitalised phrases that nothing types become *candidates*, which the
//! dataflow later matches against the entities known anywhere in the tenant.

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, MatchKind};
use epigraph_schemas::Party;
use regex::{Regex, RegexBuilder};

use crate::ontology::Ontology;

/// How a mention was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Evidence {
    /// A header, attendee or chat user of the source itself.
    Party,
    /// The ontology gazetteer.
    Gazetteer,
    /// A name suffix, trigger word or given name of a kind.
    Pattern,
}

/// A typed mention of an entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// Byte offset in the body.
    pub start: usize,
    /// Byte offset after the mention.
    pub end: usize,
    /// The name as written.
    pub surface: String,
    /// Kind from the ontology.
    pub kind: String,
    /// Normalised name: the entity key (for a first-name mention of a party: the key of the
    /// party's full name).
    pub key: String,
    /// How it was recognised.
    pub evidence: Evidence,
}

/// Which kind of entity owns a matter when one name fits several: projects, then products, then
/// organisations, then anything else.
pub fn owner_rank(kind: &str) -> u8 {
    match kind {
        "Project" => 0,
        "Product" => 1,
        "Organization" => 2,
        _ => 3,
    }
}

/// An untyped capitalised phrase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Byte offset in the body.
    pub start: usize,
    /// Byte offset after it.
    pub end: usize,
    /// The phrase as written.
    pub surface: String,
    /// Normalised name, to match known entities.
    pub key: String,
}

/// Capitalised words that are not names on their own.
const STOP: &[&str] = &[
    "A",
    "About",
    "After",
    "All",
    "Also",
    "Although",
    "An",
    "And",
    "Any",
    "Are",
    "As",
    "At",
    "Be",
    "Because",
    "Before",
    "But",
    "By",
    "Can",
    "Could",
    "Currently",
    "Do",
    "Does",
    "Each",
    "Either",
    "Even",
    "Every",
    "For",
    "From",
    "Given",
    "Had",
    "Has",
    "Have",
    "He",
    "Her",
    "Here",
    "His",
    "How",
    "However",
    "I",
    "If",
    "In",
    "Is",
    "It",
    "Its",
    "Just",
    "Let",
    "Many",
    "May",
    "Maybe",
    "More",
    "Most",
    "Much",
    "Must",
    "My",
    "No",
    "Not",
    "Note",
    "Now",
    "Of",
    "On",
    "Once",
    "One",
    "Only",
    "Or",
    "Other",
    "Our",
    "Perhaps",
    "Please",
    "Should",
    "Since",
    "So",
    "Some",
    "Such",
    "That",
    "The",
    "Their",
    "Then",
    "There",
    "These",
    "They",
    "This",
    "Those",
    "Thus",
    "To",
    "Today",
    "Tomorrow",
    "Two",
    "Under",
    "Unless",
    "Until",
    "Was",
    "We",
    "Were",
    "What",
    "When",
    "Where",
    "Whether",
    "Which",
    "While",
    "Who",
    "Why",
    "Will",
    "With",
    "Would",
    "Yes",
    "Yesterday",
    "You",
    "Your",
    "Hi",
    "Hello",
    "Hey",
    "Thanks",
    "Thank",
    "OK",
    "Ok",
    "FYI",
    "TBD",
    "Re",
    "Fwd",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "January",
    "February",
    "March",
    "April",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Q1",
    "Q2",
    "Q3",
    "Q4",
    "EOD",
    "ETA",
    "Status",
    "Open",
    "Action",
    "Decision",
    "Decisions",
    "Question",
    "Questions",
    "Next",
    "See",
    "Use",
    "Don't",
    "Do",
    "Yet",
    "Still",
    "Again",
    "Both",
    "Neither",
    "Nor",
    "Any",
    "Instead",
    "Otherwise",
    "Finally",
    "First",
    "Second",
    "Third",
    "Last",
    "New",
    "Old",
    "Good",
    "Great",
    "Sure",
    "Agreed",
    "Done",
    // Field labels and currency codes: "Date: 7 October", "EUR 40K" are not topics.
    "Date",
    "Notes",
    "Update",
    "Subject",
    "TODO",
    "EUR",
    "USD",
    "GBP",
    "CHF",
    "JPY",
    "CAD",
    "AUD",
    "SEK",
    "NOK",
    "DKK",
    "PLN",
    "INR",
    "CNY",
];

/// Lower-case words allowed inside a name ("Bank of America", "Guido van Rossum").
const CONNECTORS: &[&str] = &[
    "of", "van", "von", "de", "der", "da", "del", "di", "du", "le", "la", "&",
];

/// The people a source names in its headers, as a matcher for its text.
#[derive(Debug)]
pub struct LocalPeople {
    matcher: Option<AhoCorasick>,
    /// Per pattern: (full name, key).
    names: Vec<(String, String)>,
}

impl LocalPeople {
    /// Full names and first names of the parties that have a capitalised name.
    pub fn new(parties: &[&Party]) -> Self {
        let mut patterns = Vec::new();
        let mut names = Vec::new();
        let mut seen = HashSet::new();
        for party in parties {
            let Some(name) = party.name.as_deref().map(str::trim) else {
                continue;
            };
            if !name.chars().next().is_some_and(char::is_uppercase) || name.contains('@') {
                continue;
            }
            let Some((key, _)) = party_key(party) else {
                continue;
            };
            if seen.insert(name.to_string()) {
                patterns.push(name.to_string());
                names.push((name.to_string(), key.clone()));
            }
            let tokens: Vec<&str> = name.split_whitespace().collect();
            if tokens.len() >= 2 && tokens[0].chars().count() >= 3 && seen.insert(tokens[0].into())
            {
                patterns.push(tokens[0].to_string());
                names.push((name.to_string(), key));
            }
        }
        let matcher = (!patterns.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .expect("literal patterns build")
        });
        LocalPeople { matcher, names }
    }
}

/// The key and surface form of a party: its full name when it has one, else its address (also
/// for a one-word name, which does not tell people apart).
pub fn party_key(party: &Party) -> Option<(String, String)> {
    let name = party
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty());
    let address = party
        .address
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty());
    match (name, address) {
        // A one-word display name ("Rafael", "Pat") is ambiguous across people: the address
        // identifies the person, the name stays its surface form.
        (Some(name), Some(address)) if name.split_whitespace().count() < 2 => {
            Some((address.to_lowercase(), name.to_string()))
        }
        (Some(name), _) => Some((normalise(name), name.to_string())),
        (None, Some(address)) => Some((address.to_lowercase(), address.to_string())),
        (None, None) => None,
    }
}

/// Recognises mentions with the ontology's kinds.
#[derive(Debug)]
pub struct Recogniser {
    gazetteer: AhoCorasick,
    gazetteer_kinds: Vec<String>,
    suffixes: HashMap<String, String>,
    after: HashMap<String, String>,
    before: HashMap<String, String>,
    given_names: HashMap<String, String>,
    numbered: Option<(Regex, HashMap<String, String>)>,
    token: Regex,
    user_ref: Regex,
    initials: Regex,
    version: Regex,
}

impl Recogniser {
    /// A recogniser for the ontology's kinds.
    pub fn new(ontology: &Ontology) -> Self {
        let mut patterns = Vec::new();
        let mut gazetteer_kinds = Vec::new();
        let (mut suffixes, mut after, mut before, mut given_names) = (
            HashMap::new(),
            HashMap::new(),
            HashMap::new(),
            HashMap::new(),
        );
        for kind in &ontology.kinds {
            for name in &kind.gazetteer {
                patterns.push(name.clone());
                gazetteer_kinds.push(kind.name.clone());
            }
            for s in &kind.name_suffixes {
                suffixes
                    .entry(s.trim_end_matches('.').to_string())
                    .or_insert(kind.name.clone());
            }
            for a in &kind.after {
                after.entry(a.to_lowercase()).or_insert(kind.name.clone());
            }
            for b in &kind.before {
                before
                    .entry(b.trim_end_matches('.').to_string())
                    .or_insert(kind.name.clone());
            }
            for g in &kind.given_names {
                given_names.entry(g.clone()).or_insert(kind.name.clone());
            }
        }
        let gazetteer = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .expect("literal patterns build");
        let numbered_words: Vec<String> = before
            .keys()
            .filter(|w| w.chars().all(|c| c.is_ascii_uppercase()))
            .map(|w| regex::escape(w))
            .collect();
        let numbered = (!numbered_words.is_empty()).then(|| {
            // `PEP 8`, `ADR-12`, and reStructuredText roles such as :pep:`8`.
            let words = numbered_words.join("|");
            let lower = words.to_lowercase();
            let re = RegexBuilder::new(&format!(r"\b({words})[ -]?(\d+)\b|:({lower}):`(\d+)`"))
                .case_insensitive(false)
                .build()
                .expect("escaped alternation compiles");
            (re, before.clone())
        });
        Recogniser {
            gazetteer,
            gazetteer_kinds,
            suffixes,
            after,
            before,
            given_names,
            numbered,
            token: Regex::new(r"[\p{L}\p{N}][\p{L}\p{N}'’\-+]*|&").expect("token regex compiles"),
            user_ref: Regex::new(r"<@[UW][A-Z0-9]{4,}(\|[^>]*)?>")
                .expect("user ref regex compiles"),
            initials: Regex::new(r"\b\p{Lu}\. \p{Lu}\p{Ll}+(-\p{Lu}\p{Ll}+)?\b")
                .expect("initials regex compiles"),
            version: Regex::new(r"^\s?\d+(\.(\d+|x))+[a-z]*\d*\+?|^\d+(\.(\d+|x))*[a-z]+\d*")
                .expect("version regex compiles"),
        }
    }

    /// Mentions and candidates in `body[start..end]`.
    pub fn scan(
        &self,
        body: &str,
        start: usize,
        end: usize,
        people: &LocalPeople,
    ) -> (Vec<Mention>, Vec<Candidate>) {
        let text = &body[start..end];
        let mut mentions: Vec<Mention> = Vec::new();
        let taken =
            |s: usize, e: usize, list: &Vec<Mention>| list.iter().any(|m| s < m.end && m.start < e);
        if let Some(matcher) = &people.matcher {
            for m in matcher.find_iter(text) {
                let (s, e) = (start + m.start(), start + m.end());
                if word_bounded(body, s, e) {
                    let (_, key) = &people.names[m.pattern().as_usize()];
                    mentions.push(Mention {
                        start: s,
                        end: e,
                        surface: body[s..e].to_string(),
                        kind: "Person".into(),
                        key: key.clone(),
                        evidence: Evidence::Party,
                    });
                }
            }
        }
        // Gazetteer names are soft: a longer typed phrase around them wins ("Bank of America
        // Group" is one organisation, not a location inside one).
        let mut gazetteer: Vec<Mention> = Vec::new();
        for m in self.gazetteer.find_iter(text) {
            let (s, e) = (start + m.start(), start + m.end());
            if word_bounded(body, s, e) && !taken(s, e, &mentions) {
                let surface = &body[s..e];
                gazetteer.push(Mention {
                    start: s,
                    end: e,
                    surface: surface.to_string(),
                    kind: self.gazetteer_kinds[m.pattern().as_usize()].clone(),
                    key: normalise(surface),
                    evidence: Evidence::Gazetteer,
                });
            }
        }
        if let Some((re, kinds)) = &self.numbered {
            for c in re.captures_iter(text) {
                let whole = c.get(0).expect("group 0");
                let (s, e) = (start + whole.start(), start + whole.end());
                if !taken(s, e, &mentions) {
                    let word = c.get(1).or(c.get(3)).map_or("", |m| m.as_str());
                    let number = c.get(2).or(c.get(4)).map_or("", |m| m.as_str());
                    let word = word.to_ascii_uppercase();
                    let Some(kind) = kinds.get(&word) else {
                        continue;
                    };
                    let surface = format!("{word} {number}");
                    mentions.push(Mention {
                        start: s,
                        end: e,
                        key: normalise(&surface),
                        surface,
                        kind: kind.clone(),
                        evidence: Evidence::Pattern,
                    });
                }
            }
        }
        // Chat user references (`<@U0BMYT2FL>`) and initials with a surname (`H. Schmidt`).
        for m in self.user_ref.find_iter(text) {
            let (s, e) = (start + m.start(), start + m.end());
            if !taken(s, e, &mentions) {
                let id = m.as_str().trim_start_matches("<@").trim_end_matches('>');
                let id = id.split('|').next().unwrap_or(id);
                mentions.push(Mention {
                    start: s,
                    end: e,
                    surface: m.as_str().to_string(),
                    kind: "Person".into(),
                    key: id.to_lowercase(),
                    evidence: Evidence::Pattern,
                });
            }
        }
        for m in self.initials.find_iter(text) {
            let (s, e) = (start + m.start(), start + m.end());
            if !taken(s, e, &mentions) && !STOP.contains(&&body[s + 3..e]) {
                mentions.push(Mention {
                    start: s,
                    end: e,
                    surface: m.as_str().to_string(),
                    kind: "Person".into(),
                    key: normalise(m.as_str()),
                    evidence: Evidence::Pattern,
                });
            }
        }
        let tokens: Vec<(usize, usize)> = self
            .token
            .find_iter(text)
            .map(|m| (start + m.start(), start + m.end()))
            .collect();
        let mut candidates = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            let (s, e) = tokens[i];
            if !is_capitalised(&body[s..e]) || taken(s, e, &mentions) {
                i += 1;
                continue;
            }
            // Extend over capitalised tokens and inner connectors, separated by one space.
            let mut j = i;
            while j + 1 < tokens.len() {
                let gap = &body[tokens[j].1..tokens[j + 1].0];
                if gap != " " || taken(tokens[j + 1].0, tokens[j + 1].1, &mentions) {
                    break;
                }
                let next = &body[tokens[j + 1].0..tokens[j + 1].1];
                if is_capitalised(next) {
                    j += 1;
                } else if CONNECTORS.contains(&next)
                    && j + 2 < tokens.len()
                    && &body[tokens[j + 1].1..tokens[j + 2].0] == " "
                    && is_capitalised(&body[tokens[j + 2].0..tokens[j + 2].1])
                {
                    j += 2;
                } else {
                    break;
                }
            }
            // A trailing acronym that modifies the next, lower-case word belongs to it, not to
            // the name: "the Onyx CI provider", "the Apollo API gateway" name Onyx and Apollo.
            let mut skip = 0;
            if j > i {
                let last = &body[tokens[j].0..tokens[j].1];
                let acronym =
                    (2..=5).contains(&last.len()) && last.chars().all(|c| c.is_ascii_uppercase());
                let then_lower = tokens.get(j + 1).is_some_and(|(a, b)| {
                    &body[tokens[j].1..*a] == " "
                        && body[*a..*b].starts_with(|c: char| c.is_ascii_lowercase())
                });
                if acronym && then_lower {
                    j -= 1;
                    skip = 1;
                }
            }
            let mut first = i;
            while first <= j && STOP.contains(&&body[tokens[first].0..tokens[first].1]) {
                first += 1;
            }
            // A trigger word opening the phrase types the rest ("Project Granite" -> Granite).
            if first < j
                && self
                    .before
                    .contains_key(&body[tokens[first].0..tokens[first].1])
            {
                first += 1;
            }
            let next_i = j + 1 + skip;
            if first > j {
                i = next_i;
                continue;
            }
            let (ps, pe) = (tokens[first].0, tokens[j].1);
            let surface = &body[ps..pe];
            let previous = (first > 0).then(|| &body[tokens[first - 1].0..tokens[first - 1].1]);
            let following = tokens.get(j + 1).map(|(a, b)| &body[*a..*b]);
            let last_word = &body[tokens[j].0..tokens[j].1];
            let first_word = &body[tokens[first].0..tokens[first].1];
            let words = j + 1 - first;
            let kind = self
                .suffixes
                .get(last_word)
                .filter(|_| words >= 2)
                .or_else(|| following.and_then(|f| self.after.get(&f.to_lowercase())))
                .or_else(|| previous.and_then(|p| self.before.get(p.trim_end_matches('.'))))
                .or_else(|| {
                    self.given_names
                        .get(first_word)
                        .filter(|_| (2..=3).contains(&words))
                });
            let inside = |m: &Mention| m.start >= ps && m.end <= pe;
            let covers_gazetteer = gazetteer.iter().any(|m| m.start < pe && ps < m.end);
            match kind {
                Some(kind) => {
                    gazetteer.retain(|m| !inside(m));
                    mentions.push(Mention {
                        start: ps,
                        end: pe,
                        surface: surface.to_string(),
                        kind: kind.clone(),
                        key: normalise(surface),
                        evidence: Evidence::Pattern,
                    })
                }
                None if covers_gazetteer => {}
                None if surface.chars().count() >= 2 => candidates.push(Candidate {
                    start: ps,
                    end: pe,
                    surface: surface.to_string(),
                    key: normalise(surface),
                }),
                None => {}
            }
            i = next_i;
        }
        mentions.extend(gazetteer);
        // Versions stay with the product they number: "Python 2.7", "Py2.4".
        for m in &mut mentions {
            if (m.kind == "Product" || m.kind == "Project")
                && m.end < end
                && let Some(v) = self.version.find(&body[m.end..end])
            {
                m.end += v.end();
            }
        }
        mentions.sort_by_key(|m| (m.start, m.end));
        (mentions, candidates)
    }
}

fn is_capitalised(token: &str) -> bool {
    token.chars().next().is_some_and(char::is_uppercase)
}

/// Whether `body[start..end]` is not glued to letters or digits on either side.
fn word_bounded(body: &str, start: usize, end: usize) -> bool {
    let before = body[..start].chars().next_back();
    let after = body[end..].chars().next();
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
}

/// The entity key of a name: lower case, whitespace collapsed, possessive and edge punctuation
/// removed.
///
/// ```
/// use epigraph_operators::extract::mentions::normalise;
/// assert_eq!(normalise("  Maya  Chen's "), "maya chen");
/// assert_eq!(normalise("Kestrel Capital,"), "kestrel capital");
/// ```
pub fn normalise(name: &str) -> String {
    let collapsed = name.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = collapsed.trim_matches(|c: char| !c.is_alphanumeric() && c != '+');
    let without = trimmed
        .strip_suffix("'s")
        .or_else(|| trimmed.strip_suffix("’s"))
        .unwrap_or(trimmed);
    without.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str, parties: &[Party]) -> (Vec<Mention>, Vec<Candidate>) {
        let recogniser = Recogniser::new(&Ontology::bundled());
        let people = LocalPeople::new(&parties.iter().collect::<Vec<_>>());
        recogniser.scan(text, 0, text.len(), &people)
    }

    fn kinds(mentions: &[Mention]) -> Vec<(String, String)> {
        mentions
            .iter()
            .map(|m| (m.surface.clone(), m.kind.clone()))
            .collect()
    }

    #[test]
    fn parties_gazetteer_and_patterns() {
        let maya = Party {
            name: Some("Maya Chen".into()),
            address: Some("maya@northwind.example".into()),
        };
        let (mentions, candidates) = scan(
            "Maya said the Atlas project moves to Berlin; Kestrel Capital and PEP 8 agree, ask Borealis.",
            &[maya],
        );
        assert_eq!(
            kinds(&mentions),
            [
                ("Maya".to_string(), "Person".to_string()),
                ("Atlas".into(), "Project".into()),
                ("Berlin".into(), "Location".into()),
                ("Kestrel Capital".into(), "Organization".into()),
                ("PEP 8".into(), "Document".into()),
            ]
        );
        assert_eq!(mentions[0].key, "maya chen");
        assert_eq!(
            candidates
                .iter()
                .map(|c| c.surface.as_str())
                .collect::<Vec<_>>(),
            ["Borealis"]
        );
    }

    #[test]
    fn an_acronym_modifying_the_next_word_is_not_part_of_the_name() {
        let (mentions, _) = scan(
            "Update on the Project Onyx CI provider: we stay on the AWS account.",
            &[],
        );
        assert_eq!(
            kinds(&mentions)[0],
            ("Onyx".to_string(), "Project".to_string())
        );
    }

    #[test]
    fn stop_words_are_not_names_and_connectors_join() {
        let (mentions, candidates) = scan("The Bank of America Group and We met in New York.", &[]);
        assert_eq!(
            kinds(&mentions),
            [
                (
                    "Bank of America Group".to_string(),
                    "Organization".to_string()
                ),
                ("New York".into(), "Location".into())
            ]
        );
        assert!(candidates.is_empty(), "{candidates:?}");
    }

    #[test]
    fn field_labels_and_currency_codes_are_not_candidates() {
        let (_, candidates) = scan(
            "Date: 7 October. Note: the round is EUR 200K, USD 215K at today's rate, per Fjord.",
            &[],
        );
        assert_eq!(
            candidates
                .iter()
                .map(|c| c.surface.as_str())
                .collect::<Vec<_>>(),
            ["Fjord"]
        );
    }
}
