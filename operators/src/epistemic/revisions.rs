//! Statements that revise a value stated earlier, in a later document that never cites the
//! earlier one: the versions of a platform a product supports ("Django 3.0 supports Python
//! 3.6, 3.7, 3.8, and 3.9" after "Django 2.1 supports Python 3.5, 3.6, and 3.7") and a value
//! changed from one figure to another ("The default iteration count for the PBKDF2 password
//! hasher is increased from 600,000 to 720,000").
//!
//! A statement is read for two kinds of **matter**:
//! - **support** of a platform (`[epistemics.revisions] platforms`, whole words): a statement
//!   with a support cue ("supports", "requires", "minimum") that names a platform followed by
//!   versions states those versions (every version after the name, up to another platform's
//!   name). The product is the word before the version in the source's title ("Django 3.0
//!   release notes" → `Django`) or else in its file's name (`django-3.0.txt`); a product is no
//!   platform of itself, and the matter is the (product, platform) pair, so NumPy's and
//!   Django's Python support are two matters.
//! - a **changed value**: "<matter> is increased from A to B" (`change_verbs`), the matter being
//!   the words before the verb, lower-cased, without markup or a leading article.
//!
//! Versions are read as written: a version (`3.7`), a range (`2.6 - 2.7`) or a lower bound
//! (`3.9+`, "2.6.5 or above"); a version "as of 2.2.8" is the product's, not the platform's.
//!
//! A statement that states values **supersedes**, in each earlier source stating other values
//! of the matter (the newest `max_lookback` such sources), the first statement that does
//! (`SUPERSEDES`) — for supported versions, only when it leaves out a version the earlier one
//! supported (adding newer ones changes nothing), and a statement that only adds versions
//! ("introduces support for Python 3.2", `adds`, or one plain version stated alone: "Pillow
//! 5.2 supports Python 3.7.", [`one_version`]) supersedes nothing. A statement that carries
//! a change of support out ("Support for Python 2.5 and below has been dropped") supersedes
//! the earlier statements that supported a version it drops. One that carries a change out **implements** the earlier statement that
//! announced it ("NumPy 1.7 is the last release that supports Python 2.4 - 2.5"; `IMPLEMENTS`),
//! which is not superseded: it came true. An announcement supersedes nothing; a statement with
//! the same values as an earlier one draws nothing.
//!
//! Everything is a function of the statements of one matter, so an edit or a delete retracts
//! exactly what it caused.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, LazyLock};

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use regex::Regex;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use super::earlier;
use super::judge::{Link, LinkKind};
use super::lifecycle::Stance;
use super::rules::Rules;
use crate::extract::cues::CueSet;
use crate::model::{EpistemicType, MemoryObject};
use crate::ontology::{OntologyError, RevisionsSpec};

/// `[epistemics.revisions]`, compiled.
#[derive(Clone, Debug)]
pub struct RevisionRules {
    platforms: Vec<(String, Regex)>,
    support: CueSet,
    adds: CueSet,
    announces: CueSet,
    carries_out: CueSet,
    change: Regex,
    max_lookback: usize,
}

/// One statement stating values of one matter.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Revision {
    /// When the statement was written (first: the input of a matter is sorted by it).
    pub t_valid: Option<i64>,
    /// Its source.
    pub source_id: String,
    /// Where it starts in its source.
    pub start: u32,
    /// The memory object.
    pub memory_id: String,
    /// The values it states, as written (`3.6`, `600,000`).
    pub values: BTreeSet<String>,
    /// Whether it states them, announces a change or carries one out.
    pub stance: Stance,
    /// Whether the change covers every lower version too ("2.5 and below").
    pub or_below: bool,
    /// Whether it adds versions to those supported ("introduces support for Python 3.2")
    /// rather than stating all of them.
    pub adds: bool,
    /// When it was recorded.
    pub recorded_at: Option<i64>,
}

earlier::said_by_fields!(Revision);

/// What a statement states of one matter ([`RevisionRules::read`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stated {
    /// The matter: `support <product> <platform>` or `change <product> <words>`.
    pub matter: String,
    /// The values, as written.
    pub values: BTreeSet<String>,
    /// Whether it states them, announces a change or carries one out.
    pub stance: Stance,
    /// Whether the change covers every lower version too ("2.5 and below").
    pub or_below: bool,
    /// Whether it adds versions to those supported rather than stating all of them.
    pub adds: bool,
}

/// Words before a platform's name that make it qualify something else ("the operator *in*
/// Python 3.5").
const QUALIFIED_BY: [&str; 2] = ["in", "under"];

/// "2.5 and below": a change of support that covers the lower versions too.
static OR_BELOW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:and|or)\s+(?:below|earlier|older|lower)")
        .expect("the or-below pattern compiles")
});

/// A version's numbers (`1.11.x` → `[1, 11]`).
fn numbers(version: &str) -> Vec<u64> {
    version
        .split('.')
        .map_while(|part| part.parse().ok())
        .collect()
}

/// Whether a statement carrying a change of support out (`later`) changes what `earlier`
/// stated: they share a version, or the change covers every version up to its highest and
/// `earlier` names one of those.
///
/// ```
/// use std::collections::BTreeSet;
/// use epigraph_operators::epistemic::revisions::covers;
/// let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
/// assert!(covers(&set(&["3.5"]), false, &set(&["3.5", "3.6"])));
/// assert!(covers(&set(&["3.5"]), false, &set(&["3.4-3.7"])));
/// assert!(!covers(&set(&["3.5"]), false, &set(&["3.6", "3.7"])));
/// assert!(covers(&set(&["2.5"]), true, &set(&["2.4"])));
/// assert!(!covers(&set(&["2.5"]), true, &set(&["2.6.5"])));
/// ```
pub fn covers(later: &BTreeSet<String>, or_below: bool, earlier: &BTreeSet<String>) -> bool {
    // A dropped version the earlier statement supported.
    if later
        .iter()
        .any(|dropped| within(&bounds(dropped).0, earlier))
    {
        return true;
    }
    let Some(highest) = later.iter().map(|v| bounds(v).0).max() else {
        return false;
    };
    or_below
        && earlier
            .iter()
            .any(|v| compare(&bounds(v).0, &highest).is_le())
}

/// A version as release notes write it — `3.6`, `2.6.5`, `1.11.x` — with what makes it a
/// range: `2.6 - 2.7`, `3.9+`, `2.6.5 or above`, `>= 0.29.16`; or a version of something
/// else, `(as of 2.2.8)`.
static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(as\s+of\s+)?(>=\s*|≥\s*)?\b(\d+(?:\.(?:\d+|x))+)\b(?:\s*(?:-|–|to)\s*(\d+(?:\.(?:\d+|x))+)\b)?(\+|\s+(?:or|and)\s+(?:above|higher|later|newer|greater|up))?",
    )
    .expect("the version pattern compiles")
});

/// A major version right after a platform's name ("Python 3 support").
static MAJOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(\d+)(?:[^\d.]|$)").expect("the major pattern compiles"));

/// The versions a passage states, each a version (`3.7`), a range (`3.7-3.9`) or a lower
/// bound (`3.9+`); the versions of something else ("as of 2.2.8") are left out.
///
/// ```
/// use epigraph_operators::epistemic::revisions::versions;
/// let v = |text: &str| versions(text).into_iter().collect::<Vec<_>>();
/// assert_eq!(v(" 2.6 -2.7 and 3.2 - 3.3."), ["2.6-2.7", "3.2-3.3"]);
/// assert_eq!(v(" 2.7, 3.4, 3.5 (as of 1.11.17)"), ["2.7", "3.4", "3.5"]);
/// assert_eq!(v(" 3.9+ and"), ["3.9+"]);
/// assert_eq!(v(" 2.6.5 or above"), ["2.6.5+"]);
/// assert_eq!(v(" >= 0.29.16 for"), ["0.29.16+"]);
/// assert_eq!(v(" 3 support"), ["3"]);
/// ```
pub fn versions(passage: &str) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = VERSION
        .captures_iter(passage)
        .filter(|c| c.get(1).is_none())
        .map(
            |c| match (c.get(4), c.get(2).is_some() || c.get(5).is_some()) {
                (Some(to), _) => format!("{}-{}", &c[3], to.as_str()),
                (None, true) => format!("{}+", &c[3]),
                (None, false) => c[3].to_string(),
            },
        )
        .collect();
    if let Some(major) = MAJOR.captures(passage) {
        out.insert(major[1].to_string());
    }
    out
}

/// Whether `gap` (text between a platform's mention and a cue) parts two clauses: a semicolon
/// or a sentence's end, and with `comma` a comma too (a comma before a cue may only separate
/// versions: "Python 2.6, 3.2, and 3.3 will be dropped").
fn breaks_clause(gap: &str, comma: bool) -> bool {
    gap.contains(';') || gap.contains(". ") || gap.contains(".\n") || (comma && gap.contains(','))
}

/// Whether supported versions are one plain version: no range, no bound. A release that
/// "supports Python 3.7" in a sentence of its own ("Pillow 5.2 supports Python 3.7.") adds that
/// version; a whole list names several ("Django 3.0 supports Python 3.6, 3.7, 3.8, and 3.9"),
/// and a floor is written as a bound ("3.9+").
///
/// ```
/// use std::collections::BTreeSet;
/// use epigraph_operators::epistemic::revisions::one_version;
/// let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
/// assert!(one_version(&set(&["3.7"])));
/// assert!(!one_version(&set(&["3.6", "3.7"])));
/// assert!(!one_version(&set(&["3.9+"])));
/// assert!(!one_version(&set(&["2.4-2.5"])));
/// ```
pub fn one_version(values: &BTreeSet<String>) -> bool {
    values.len() == 1 && values.iter().all(|v| !v.ends_with('+') && !v.contains('-'))
}

/// Where a version, range or bound starts and ends (`None`: no upper end).
fn bounds(item: &str) -> (Vec<u64>, Option<Vec<u64>>) {
    if let Some(low) = item.strip_suffix('+') {
        (numbers(low), None)
    } else if let Some((low, high)) = item.split_once('-') {
        (numbers(low), Some(numbers(high)))
    } else {
        (numbers(item), Some(numbers(item)))
    }
}

/// `a` against `b` on the parts both have (`3.9.1` is within `3.9`).
fn compare(a: &[u64], b: &[u64]) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    a[..n].cmp(&b[..n])
}

/// Whether `version` is among `items` (versions, ranges, lower bounds).
fn within(version: &[u64], items: &BTreeSet<String>) -> bool {
    items.iter().any(|item| {
        let (low, high) = bounds(item);
        compare(version, &low).is_ge() && high.is_none_or(|high| compare(version, &high).is_le())
    })
}

/// Whether a statement of supported versions (`later`) leaves out a version `earlier` said
/// was supported: the first or the last version of one of its items.
///
/// ```
/// use std::collections::BTreeSet;
/// use epigraph_operators::epistemic::revisions::leaves_out;
/// let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
/// // Newer versions added: nothing left out.
/// assert!(!leaves_out(&set(&["2.6-2.7", "3.2-3.4"]), &set(&["2.6-2.7", "3.2-3.3"])));
/// assert!(leaves_out(&set(&["3.6", "3.7", "3.8"]), &set(&["3.5", "3.6", "3.7"])));
/// assert!(leaves_out(&set(&["2.6.5+"]), &set(&["2.4+"])));
/// assert!(!leaves_out(&set(&["3.9+"]), &set(&["3.10", "3.11"])));
/// ```
pub fn leaves_out(later: &BTreeSet<String>, earlier: &BTreeSet<String>) -> bool {
    earlier.iter().any(|item| {
        let (low, high) = bounds(item);
        !within(&low, later) || high.is_some_and(|high| !within(&high, later))
    })
}

/// The product a title is about: the word before its first version ("Django 3.0 release
/// notes", "NumPy 1.20.0 Release Notes").
static PRODUCT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\W*([A-Za-z][\w+-]*)\s+(?:version\s+)?v?\d+(?:\.\d+)*\b")
        .expect("the product pattern compiles")
});

/// Markup and punctuation dropped from a matter's words.
static NOT_A_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[^\w\s.-]+|\s+").expect("the word pattern compiles"));

/// A file name of a product's version: `django-3.0.txt`, `numpy_1.20.rst`.
static PRODUCT_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z][A-Za-z+]*)[-_ ]v?\d+(?:\.\d+)*\b").expect("the file pattern compiles")
});

/// The product a source's title names, else its file's name (the last part of its id),
/// lower-cased, or `""`.
///
/// ```
/// use epigraph_operators::epistemic::revisions::product;
/// assert_eq!(product(Some("Django 3.0 release notes"), "docs/3.0.txt"), "django");
/// assert_eq!(product(Some("NumPy 1.20.0 Release Notes"), "x"), "numpy");
/// assert_eq!(product(None, "releases/scipy-1.14.txt"), "scipy");
/// assert_eq!(product(Some("Term sheet summary"), "docs/term-sheet.md"), "");
/// ```
pub fn product(title: Option<&str>, source_id: &str) -> String {
    let file = source_id.rsplit('/').next().unwrap_or(source_id);
    title
        .and_then(|t| PRODUCT.captures(t))
        .or_else(|| PRODUCT_FILE.captures(file))
        .map(|c| c[1].to_lowercase())
        .unwrap_or_default()
}

/// Where the product's name stands in `text` as a whole word, case-insensitively (no pattern
/// compiled per statement: `product` is already lower case).
///
/// ```
/// use epigraph_operators::epistemic::revisions::product_mentions;
/// assert_eq!(product_mentions("Django 2.0 and django-admin; Djangonaut", "django"), [0, 15]);
/// assert!(product_mentions("anything", "").is_empty());
/// ```
pub fn product_mentions(text: &str, product: &str) -> Vec<usize> {
    if product.is_empty() {
        return Vec::new();
    }
    let lower = text.to_ascii_lowercase();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    lower
        .match_indices(product)
        .filter(|(at, _)| {
            !word(lower[..*at].chars().next_back())
                && !word(lower[at + product.len()..].chars().next())
        })
        .map(|(at, _)| at)
        .collect()
}

impl RevisionRules {
    /// Compiles the spec.
    pub fn new(spec: &RevisionsSpec) -> Result<Self, OntologyError> {
        let invalid = |e: String| OntologyError::Invalid(format!("[epistemics.revisions] {e}"));
        let cues = |list: &[String]| CueSet::new(list).map_err(|e| invalid(e.to_string()));
        let platforms = spec
            .platforms
            .iter()
            .map(|name| {
                let pattern = format!(r"(?:^|[^\w.]){}(?:$|[^\w])", regex::escape(name));
                Regex::new(&pattern)
                    .map(|re| (name.clone(), re))
                    .map_err(|e| invalid(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let verbs = spec
            .change_verbs
            .iter()
            .map(|v| regex::escape(v))
            .collect::<Vec<_>>()
            .join("|");
        let change = Regex::new(&format!(
            r"(?is)^(?:.*?[.;:]\s+)?(?P<matter>[^.;:]{{3,160}}?)\s+(?:is|are|was|were|has\s+been|have\s+been)\s+(?:now\s+)?(?:{verbs})\s+from\s+(?P<from>[^\s]+)\s+to\s+(?P<to>\d[\d,.]*\d|\d|[^\s,;]+)"
        ))
        .map_err(|e| invalid(e.to_string()))?;
        Ok(RevisionRules {
            platforms,
            support: cues(&spec.support)?,
            adds: cues(&spec.adds)?,
            announces: cues(&spec.announces)?,
            carries_out: cues(&spec.carries_out)?,
            change,
            max_lookback: spec.max_lookback,
        })
    }

    /// The matters a statement states values of, each with the values and what it says of
    /// them (see the module docs); `product` is the source's ([`product`]).
    ///
    /// ```
    /// use epigraph_operators::epistemic::lifecycle::Stance;
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let revisions = rules.revisions().unwrap();
    /// let read = |text: &str, product: &str| -> Vec<(String, Vec<String>, Stance)> {
    ///     revisions.read(text, product).into_iter()
    ///         .map(|s| (s.matter, s.values.into_iter().collect(), s.stance)).collect()
    /// };
    /// let v = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    /// assert_eq!(
    ///     read("Django 3.0 supports Python 3.6, 3.7, 3.8, and 3.9 (as of 3.0.11).", "django"),
    ///     [("support django python".to_string(), v(&["3.6", "3.7", "3.8", "3.9"]), Stance::Names)],
    /// );
    /// assert_eq!(
    ///     read("Support for Python 2.5 and below has been dropped.", "django"),
    ///     [("support django python".to_string(), v(&["2.5"]), Stance::CarriesOut)],
    /// );
    /// assert_eq!(
    ///     read("This release requires Python 3.9+ and NumPy 1.22.4 or greater.", "scipy"),
    ///     [("support scipy numpy".to_string(), v(&["1.22.4+"]), Stance::Names),
    ///      ("support scipy python".to_string(), v(&["3.9+"]), Stance::Names)],
    /// );
    /// assert_eq!(
    ///     read("It supports Python 2.4 - 2.7 and 3.1 - 3.3 and is the last\nrelease that supports Python 2.4 - 2.5.", "numpy"),
    ///     [("support numpy python".to_string(), v(&["2.4-2.7", "3.1-3.3"]), Stance::Names),
    ///      ("support numpy python".to_string(), v(&["2.4-2.5"]), Stance::Announces)],
    /// );
    /// assert_eq!(
    ///     read("The default iteration count for the PBKDF2 password hasher is increased from\n  600,000 to 720,000.", "django"),
    ///     [("change django default iteration count for the pbkdf2 password hasher".to_string(), v(&["600,000", "720,000"]), Stance::Names)],
    /// );
    /// // A change written verb first, as a pull request's title.
    /// assert_eq!(
    ///     read("MAINT: drop Python 2.7 and 3.4", "scipy"),
    ///     [("support scipy python".to_string(), v(&["2.7", "3.4"]), Stance::CarriesOut)],
    /// );
    /// assert_eq!(
    ///     read("Support for Python 2.6, 3.2, and 3.3 will be dropped.", "numpy"),
    ///     [("support numpy python".to_string(), v(&["2.6", "3.2", "3.3"]), Stance::Announces)],
    /// );
    /// // A cue that ends the clause of the mention before it speaks of that mention.
    /// assert_eq!(
    ///     read("Support for Python 3.4 been dropped, the supported Python versions are 2.7 and 3.5-3.7.", "numpy"),
    ///     [("support numpy python".to_string(), v(&["2.7", "3.5-3.7"]), Stance::Names),
    ///      ("support numpy python".to_string(), v(&["3.4"]), Stance::CarriesOut)],
    /// );
    /// // One plain version stated on its own adds it; a list states them all.
    /// assert!(revisions.read("Pillow 5.2 supports Python 3.7.", "pillow")[0].adds);
    /// assert!(!revisions.read("Django 4.0 supports Python 3.8, 3.9, and 3.10.", "django")[0].adds);
    /// assert!(!revisions.read("Django 1.5 requires Python 2.6.5 or above.", "django")[0].adds);
    /// // Support of something else in a version of the platform: nothing.
    /// assert!(read("Support for the '@' operator in Python 3.5.", "numpy").is_empty());
    /// // No support cue, or no version after the platform: nothing.
    /// assert!(read("The Python 3.6 syntax is used in examples.", "django").is_empty());
    /// assert!(read("Django supports Python.", "django").is_empty());
    /// // A product is no platform of itself.
    /// assert!(read("NumPy 1.17 requires NumPy 1.16 headers.", "numpy").is_empty());
    /// ```
    pub fn read(&self, text: &str, product: &str) -> Vec<Stated> {
        let mut out: BTreeMap<(String, Stance), BTreeSet<String>> = BTreeMap::new();
        let announced: Vec<(usize, usize)> = self
            .announces
            .find_all(text)
            .iter()
            .map(|m| (m.start, m.end))
            .collect();
        // A cue inside an announcement ("will be *dropped*") carries nothing out.
        let carried: Vec<(usize, usize)> = self
            .carries_out
            .find_all(text)
            .iter()
            .map(|m| (m.start, m.end))
            .filter(|&(s, e)| !announced.iter().any(|&(a, b)| a <= s && e <= b))
            .collect();
        // A support cue, or a drop carried out ("MAINT: drop Python 2.7 and 3.4").
        if !self.support.find_all(text).is_empty() || !carried.is_empty() {
            // Every platform mention, in order: a platform's versions run up to the next one.
            let mut mentions: Vec<(usize, usize, &str)> = self
                .platforms
                .iter()
                .filter(|(name, _)| !name.eq_ignore_ascii_case(product))
                .flat_map(|(name, re)| {
                    re.find_iter(text).map(move |m| {
                        let start = m.start() + m.as_str().find(name.as_str()).unwrap_or(0);
                        (start, start + name.len(), name.as_str())
                    })
                })
                .collect();
            mentions.sort();
            // A version the platform qualifies is not its support: "the '@' operator *in*
            // Python 3.5".
            mentions.retain(|(start, ..)| {
                let before = text[..*start].trim_end().to_lowercase();
                !QUALIFIED_BY.iter().any(|word| {
                    before.strip_suffix(word).is_some_and(|rest| {
                        rest.is_empty() || rest.ends_with(|c: char| !c.is_alphanumeric())
                    })
                })
            });
            // Each cue says something of the mention it comes before, or of the last one when
            // none follows ("Support for Python 2.6, 3.2, and 3.3 will be dropped"), or when it
            // ends the clause of the mention before it ("Support for Python 3.4 been dropped,
            // the supported Python versions are 2.7 and 3.5-3.7").
            let target = |(start, end): (usize, usize)| {
                let before = mentions.iter().rposition(|m| m.1 <= start);
                let next = mentions.iter().position(|m| m.0 >= end);
                match (before, next) {
                    (Some(b), Some(n))
                        if !breaks_clause(&text[mentions[b].1..start], false)
                            && breaks_clause(&text[end..mentions[n].0], true) =>
                    {
                        Some(b)
                    }
                    (_, Some(n)) => Some(n),
                    (before, None) => before,
                }
            };
            let announcing: BTreeSet<usize> = announced.iter().filter_map(|&m| target(m)).collect();
            let carrying: BTreeSet<usize> = carried.iter().filter_map(|&m| target(m)).collect();
            // The product's own name ends a platform's versions too ("… Python 3.4 beyond the
            // end-of-life for Django 2.0").
            let stops = product_mentions(text, product);
            for (i, (_, end, name)) in mentions.iter().enumerate() {
                // What is said of this mention: "… and is the last release that supports
                // Python 2.4 - 2.5" announces, "Support for Python 2.5 … has been dropped"
                // carries a change out, anything else states what is supported.
                let stance = if announcing.contains(&i) {
                    Stance::Announces
                } else if carrying.contains(&i) {
                    Stance::CarriesOut
                } else {
                    Stance::Names
                };
                let until = mentions
                    .get(i + 1)
                    .map(|m| m.0)
                    .into_iter()
                    .chain(stops.iter().copied().filter(|at| at > end))
                    .min()
                    .unwrap_or(text.len());
                let versions = versions(&text[*end..until]);
                if versions.is_empty() {
                    continue;
                }
                let matter = format!("support {product} {}", name.to_lowercase())
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                out.entry((matter, stance)).or_default().extend(versions);
            }
        }
        if let Some(c) = self.change.captures(text) {
            let words = NOT_A_WORD.replace_all(&c["matter"], " ").to_lowercase();
            let words: Vec<&str> = words
                .split_whitespace()
                .skip_while(|w| ["the", "a", "an"].contains(w))
                .collect();
            if words.len() >= 2 {
                let trim = |v: &str| v.trim_end_matches(['.', ',']).to_string();
                let values = [trim(&c["from"]), trim(&c["to"])].into_iter().collect();
                let matter = format!("change {product} {}", words.join(" "))
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                out.insert((matter, Stance::Names), values);
            }
        }
        let or_below = OR_BELOW.is_match(text);
        let adds = !self.adds.find_all(text).is_empty();
        out.into_iter()
            .map(|((matter, stance), values)| {
                let support = matter.starts_with("support ");
                Stated {
                    or_below: or_below && support,
                    adds: support && (adds || (stance == Stance::Names && one_version(&values))),
                    matter,
                    values,
                    stance,
                }
            })
            .collect()
    }

    /// The links between the statements of one matter (see the module docs); `revisions`
    /// sorted by valid time.
    ///
    /// ```
    /// use std::collections::BTreeSet;
    /// use epigraph_operators::epistemic::{judge::LinkKind, lifecycle::Stance, revisions::Revision};
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let revisions = rules.revisions().unwrap();
    /// let said = |id: &str, day: i64, values: &[&str], stance: Stance| Revision {
    ///     t_valid: Some(day), source_id: format!("notes-{day}"), start: 0, memory_id: id.into(),
    ///     values: values.iter().map(|v| v.to_string()).collect::<BTreeSet<_>>(), stance,
    ///     or_below: false, adds: false, recorded_at: None,
    /// };
    /// let said = [
    ///     said("3.5-3.7", 1, &["3.5", "3.6", "3.7"], Stance::Names),
    ///     said("last for 3.5", 2, &["3.5"], Stance::Announces),
    ///     said("3.6-3.9", 3, &["3.6", "3.7", "3.8", "3.9"], Stance::Names),
    ///     said("3.5 dropped", 4, &["3.5"], Stance::CarriesOut),
    ///     said("3.6-3.9 again", 5, &["3.6", "3.7", "3.8", "3.9"], Stance::Names),
    /// ];
    /// let links = revisions.links("t", "support django python", &said);
    /// let links: Vec<(LinkKind, &str, &str)> =
    ///     links.iter().map(|l| (l.kind, l.from.as_str(), l.to.as_str())).collect();
    /// assert_eq!(links, [
    ///     (LinkKind::Supersedes, "3.6-3.9", "3.5-3.7"),
    ///     // Dropping 3.5 changes nothing 3.6-3.9 said.
    ///     (LinkKind::Implements, "3.5 dropped", "last for 3.5"),
    ///     (LinkKind::Supersedes, "3.5 dropped", "3.5-3.7"),
    ///     (LinkKind::Supersedes, "3.6-3.9 again", "3.5-3.7"),
    /// ]);
    /// ```
    pub fn links(&self, tenant: &str, matter: &str, revisions: &[Revision]) -> Vec<Link> {
        let mut out = Vec::new();
        for (at, later) in revisions.iter().enumerate() {
            if later.stance == Stance::Announces || later.adds || later.t_valid.is_none() {
                continue;
            }
            let met = earlier::by_source(revisions, at, |_| true, self.max_lookback);
            let values = |r: &Revision| r.values.iter().cloned().collect::<Vec<_>>().join(", ");
            for said in met {
                let announced = earlier::first(&said, |r| r.stance == Stance::Announces);
                // Another value: for supported versions, one that is left out; for a change
                // carried out, one of the versions it changes.
                let support = matter.starts_with("support ");
                // For supported versions, only a statement of what is supported (a drop stays
                // true when later statements leave the version out too).
                let other = earlier::first(&said, |r| {
                    r.stance != Stance::Announces
                        && (!support || r.stance == Stance::Names)
                        && r.values != later.values
                        && match (support, later.stance) {
                            (false, _) => true,
                            (true, Stance::CarriesOut) => {
                                covers(&later.values, later.or_below, &r.values)
                            }
                            (true, _) => leaves_out(&later.values, &r.values),
                        }
                });
                let (kind, to, why) = match (later.stance, announced, other) {
                    (Stance::CarriesOut, Some(announced), _) => (
                        LinkKind::Implements,
                        announced,
                        format!(
                            "{matter}: a change of {} announced here, carried out later",
                            values(announced)
                        ),
                    ),
                    (_, _, Some(stated)) => (
                        LinkKind::Supersedes,
                        stated,
                        format!("{matter}: {} here, later {}", values(stated), values(later)),
                    ),
                    _ => continue,
                };
                out.push(earlier::link(kind, tenant, later, to, why));
            }
        }
        out
    }
}

/// The revision links of `memories` (see the module docs): each statement stating values of a
/// matter meets the other statements of it, grouped by (tenant, matter).
pub fn links<'s, T>(
    memories: VecCollection<'s, T, MemoryObject>,
    rules: Arc<Rules>,
) -> VecCollection<'s, T, Link>
where
    T: Timestamp + Lattice,
{
    let Some(revisions) = rules.revisions().cloned() else {
        return memories.flat_map(|_| None);
    };
    let revisions = Arc::new(revisions);
    let reading = revisions.clone();
    memories
        .filter(|m| !m.header && m.memory_type != EpistemicType::Question)
        .flat_map(move |m| {
            let product = product(m.title.as_deref(), &m.source_id);
            reading
                .read(&m.text, &product)
                .into_iter()
                .map(|stated| {
                    (
                        (m.tenant.clone(), stated.matter),
                        Revision {
                            t_valid: m.t_valid,
                            source_id: m.source_id.clone(),
                            start: m.span.0,
                            memory_id: m.id.clone(),
                            values: stated.values,
                            stance: stated.stance,
                            or_below: stated.or_below,
                            adds: stated.adds,
                            recorded_at: m.recorded_at,
                        },
                    )
                })
                .collect::<Vec<_>>()
        })
        .reduce(move |(tenant, matter), input, out| {
            if input.len() < 2 {
                return;
            }
            let said: Vec<Revision> = input.iter().map(|(r, _)| (*r).clone()).collect();
            for link in revisions.links(tenant, matter, &said) {
                out.push((link, 1));
            }
        })
        .map(|(_, link)| link)
}
