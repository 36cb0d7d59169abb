//! Cue phrases from the ontology, compiled once: literal phrases matched case-insensitively on
//! word boundaries, and `re:` regular expressions.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::{Regex, RegexBuilder};

/// A compiled set of cues.
#[derive(Clone, Debug)]
pub struct CueSet {
    literals: Option<AhoCorasick>,
    /// Index into the original cue list of each literal pattern.
    literal_ids: Vec<usize>,
    regexes: Vec<(usize, Regex)>,
    /// Weight of each cue (`+N ` prefix, default 1).
    weights: Vec<u32>,
}

/// Why a cue list could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CueError {
    /// A `re:` cue is not a valid regular expression.
    #[error("cue {cue:?}: {source}")]
    Regex {
        /// The cue as written (its weight prefix removed, `re:` kept).
        cue: String,
        /// Why the pattern does not compile.
        source: regex::Error,
    },
}

/// A cue found in a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CueMatch {
    /// Index of the cue in the list it was compiled from.
    pub cue: usize,
    /// Byte offset of the match.
    pub start: usize,
    /// Byte offset after it.
    pub end: usize,
}

impl CueSet {
    /// Compiles `cues`; a cue that is an invalid regular expression is reported. A cue may
    /// start with a weight, `+N ` (e.g. `"+2 re:\\?\\s*$"`), counting as N cues.
    ///
    /// ```
    /// use epigraph_operators::extract::cues::CueSet;
    /// let cues = CueSet::new(&["we decided".into(), "re:\\?\\s*$".into(), "must".into()]).unwrap();
    /// assert_eq!(cues.distinct("So We Decided: ship?"), vec![0, 1]);
    /// assert!(cues.distinct("mustard").is_empty());
    /// ```
    pub fn new(cues: &[String]) -> Result<Self, CueError> {
        let mut literals = Vec::new();
        let mut literal_ids = Vec::new();
        let mut regexes = Vec::new();
        let mut weights = Vec::with_capacity(cues.len());
        for (i, cue) in cues.iter().enumerate() {
            let (weight, cue) = split_weight(cue);
            weights.push(weight);
            if let Some(pattern) = cue.strip_prefix("re:") {
                let re = RegexBuilder::new(pattern)
                    .case_insensitive(true)
                    .build()
                    .map_err(|source| CueError::Regex {
                        cue: cue.to_string(),
                        source,
                    })?;
                regexes.push((i, re));
            } else if !cue.trim().is_empty() {
                literals.push(cue.to_lowercase());
                literal_ids.push(i);
            }
        }
        let literals = (!literals.is_empty()).then(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::DFA))
                .build(&literals)
                .or_else(|_| {
                    AhoCorasick::builder()
                        .ascii_case_insensitive(true)
                        .build(&literals)
                })
                .expect("literal patterns build")
        });
        Ok(CueSet {
            literals,
            literal_ids,
            regexes,
            weights,
        })
    }

    /// Every match, overlapping ones included, in no particular order.
    pub fn find_all(&self, text: &str) -> Vec<CueMatch> {
        let mut out = Vec::new();
        if let Some(ac) = &self.literals {
            for m in ac.find_overlapping_iter(text) {
                let (start, end) = (m.start(), m.end());
                if bounded(text, start, end) {
                    out.push(CueMatch {
                        cue: self.literal_ids[m.pattern().as_usize()],
                        start,
                        end,
                    });
                }
            }
        }
        for (cue, re) in &self.regexes {
            for m in re.find_iter(text) {
                out.push(CueMatch {
                    cue: *cue,
                    start: m.start(),
                    end: m.end(),
                });
            }
        }
        out
    }

    /// The distinct cues that occur, sorted.
    pub fn distinct(&self, text: &str) -> Vec<usize> {
        let mut cues: Vec<usize> = self.find_all(text).into_iter().map(|m| m.cue).collect();
        cues.sort_unstable();
        cues.dedup();
        cues
    }

    /// The weight of a cue.
    pub fn weight(&self, cue: usize) -> u32 {
        self.weights.get(cue).copied().unwrap_or(1)
    }

    /// The sum of the weights of the distinct cues that occur.
    pub fn weighted(&self, text: &str) -> u32 {
        self.distinct(text)
            .into_iter()
            .map(|c| self.weight(c))
            .sum()
    }

    /// Whether any cue occurs.
    pub fn any(&self, text: &str) -> bool {
        !self.find_all(text).is_empty()
    }
}

/// `"+3 must"` to `(3, "must")`; `"must"` to `(1, "must")`.
fn split_weight(cue: &str) -> (u32, &str) {
    if let Some(rest) = cue.strip_prefix('+')
        && let Some((n, cue)) = rest.split_once(' ')
        && let Ok(n) = n.parse()
    {
        return (n, cue);
    }
    (1, cue)
}

/// A literal match must not cut a word: the characters just outside it, where the match itself
/// starts or ends with a word character, must not be word characters.
fn bounded(text: &str, start: usize, end: usize) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let inner_first = text[start..].chars().next();
    let inner_last = text[..end].chars().next_back();
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    let left_ok = !(inner_first.is_some_and(word) && before.is_some_and(word));
    let right_ok = !(inner_last.is_some_and(word) && after.is_some_and(word));
    left_ok && right_ok
}
