//! Statements that extend something another document introduced, naming it by an identifier
//! rather than by the document: "A new field `minDomains` is introduced to
//! `PodSpec.TopologySpreadConstraint[*]`" extends Pod Topology Spread (KEP-895), "We propose to
//! add a new `CPUManager` policy option" extends the CPU Manager (KEP-3570), though neither
//! names the KEP.
//!
//! A statement *extends* when it says so — a verb of `[epistemics.citations.extensions] verbs`
//! ("introduces", "extends", "enhances") or "new" followed within three words by one of
//! `new_things` ("a new field", "a new `CPUManager` policy option") — and does not mention a
//! switch (`skip`: "feature gate"). What it extends is each identifier it names — a code span
//! or a CamelCase word, each part of a dotted one (`ResourceClaim.Status`) — except a path or a
//! flag (`k8s.io/dynamic-resource-allocation`, `--kustomize`), a name it gives ("an option
//! called `distribute-cpus-across-cores`") and one it compares with ("analogous to the
//! `distribute-cpus-across-numa` policy option").
//!
//! The document an identifier belongs to is the one whose title *names* it: they share at least
//! `min_shared` words that are not `generic` (`TopologySpreadConstraint` and "Pod Topology
//! Spread" share *topology* and *spread*), or a one-word identifier is a word of a title of at
//! most two (`kubectl` and "kubectl debug"). The earliest such document earlier than the
//! statement's own gets the edge (see `citations::citation_edges`, which draws it).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::extract::cues::CueSet;
use crate::ontology::{ExtensionsSpec, OntologyError};

/// `[epistemics.citations.extensions]`, compiled.
#[derive(Clone, Debug)]
pub struct ExtensionRules {
    edge: String,
    verbs: CueSet,
    new_things: BTreeSet<String>,
    generic: BTreeSet<String>,
    comparisons: Vec<String>,
    naming: Vec<String>,
    skip: CueSet,
    min_shared: usize,
}

/// A code span, or a CamelCase word (`TopologySpreadConstraint`, `CPUManager`).
static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"`([^`]{2,60})`|\b([A-Z][a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z]{2,}[a-z]+\w*)\b")
        .expect("the identifier pattern compiles")
});

/// "new", as a word.
static NEW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\bnew\b").expect("the new pattern compiles"));

impl ExtensionRules {
    /// Compiles the spec.
    pub fn new(spec: &ExtensionsSpec) -> Result<Self, OntologyError> {
        let cues = |list: &[String]| {
            CueSet::new(list).map_err(|err| {
                OntologyError::Invalid(format!("[epistemics.citations.extensions] {err}"))
            })
        };
        let lower =
            |list: &[String]| -> Vec<String> { list.iter().map(|w| w.to_lowercase()).collect() };
        Ok(ExtensionRules {
            edge: spec.edge.clone(),
            verbs: cues(&spec.verbs)?,
            new_things: lower(&spec.new_things).into_iter().collect(),
            generic: lower(&spec.generic).into_iter().collect(),
            comparisons: lower(&spec.comparisons),
            naming: lower(&spec.naming),
            skip: cues(&spec.skip)?,
            min_shared: spec.min_shared,
        })
    }

    /// The edge drawn (`REFINES`).
    pub fn edge(&self) -> &str {
        &self.edge
    }

    /// Whether a statement says it extends something: a verb, or "new" and what is new.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let ext = rules.citations().unwrap().extensions().unwrap();
    /// assert!(ext.says_it_extends("This KEP introduces an option for end-users."));
    /// assert!(ext.says_it_extends("We propose to add a new `CPUManager` policy option."));
    /// // "new" of something that is not a part of an API.
    /// assert!(!ext.says_it_extends("One new Pod when initiated by a user."));
    /// ```
    pub fn says_it_extends(&self, text: &str) -> bool {
        self.verbs.any(text) || self.names_something_new(text)
    }

    fn names_something_new(&self, text: &str) -> bool {
        NEW.find_iter(text).any(|m| {
            let words: Vec<String> = text[m.end()..]
                .split_whitespace()
                .take(5)
                .map(|w| {
                    w.trim_matches(|c: char| !c.is_alphanumeric())
                        .to_lowercase()
                })
                .collect();
            (0..words.len().min(4)).any(|i| {
                self.new_things.contains(&words[i])
                    || words.get(i + 1).is_some_and(|next| {
                        self.new_things.contains(&format!("{} {next}", words[i]))
                    })
            })
        })
    }

    /// The identifiers a statement extends, each as its words that are not generic, in text
    /// order (see the module docs).
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let ext = rules.citations().unwrap().extensions().unwrap();
    /// assert_eq!(
    ///     ext.extended("A new field `minDomains` is introduced to `PodSpec.TopologySpreadConstraint[*]`."),
    ///     [vec!["min", "domains"], vec!["topology", "spread", "constraint"]]
    /// );
    /// assert_eq!(ext.extended("We propose to add a new `CPUManager` policy option."), [vec!["cpu", "manager"]]);
    /// // A name the statement gives, a flag, a path, a comparison, a feature gate: nothing.
    /// assert!(ext.extended("A new policy option called `distribute-cpus-across-cores`.").is_empty());
    /// assert!(ext.extended("This new policy is analogous to the `spread-numa` option.").is_empty());
    /// assert!(ext.extended("A new staging repo `k8s.io/dynamic-resource-allocation` is introduced.").is_empty());
    /// assert!(ext.extended("A new feature gate `PodLevelResources` guards the new field.").is_empty());
    /// // No word of extension: nothing extended.
    /// assert!(ext.extended("The `TopologySpreadConstraint` is evaluated per zone.").is_empty());
    /// ```
    pub fn extended(&self, text: &str) -> Vec<Vec<String>> {
        if text.trim_start().starts_with('#') || self.skip.any(text) || !self.says_it_extends(text)
        {
            return Vec::new();
        }
        let mut out: Vec<Vec<String>> = Vec::new();
        for c in IDENTIFIER.captures_iter(text) {
            let (Some(whole), Some(identifier)) = (c.get(0), c.get(1).or_else(|| c.get(2))) else {
                continue;
            };
            let identifier = identifier.as_str();
            if c.get(1).is_some() && (identifier.contains('/') || identifier.starts_with('-')) {
                continue;
            }
            let before = text[..whole.start()].trim_end().to_lowercase();
            let before = ["the", "a", "an"]
                .iter()
                .find_map(|article| {
                    before
                        .strip_suffix(article)
                        .filter(|rest| rest.is_empty() || rest.ends_with(char::is_whitespace))
                })
                .map_or(before.as_str(), str::trim_end);
            let ends_with_word = |phrase: &String| {
                before.strip_suffix(phrase.as_str()).is_some_and(|rest| {
                    rest.is_empty() || !rest.ends_with(|c: char| c.is_alphanumeric())
                })
            };
            if self.naming.iter().any(ends_with_word) || self.comparisons.iter().any(ends_with_word)
            {
                continue;
            }
            for segment in identifier.split(|c: char| c == '.' || c == '/' || c.is_whitespace()) {
                let words: Vec<String> = identifier_words(segment)
                    .into_iter()
                    .filter(|w| !self.generic.contains(w))
                    .collect();
                if !words.is_empty() && !out.contains(&words) {
                    out.push(words);
                }
            }
        }
        out
    }

    /// A title's words that are not generic, lower-cased.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let ext = rules.citations().unwrap().extensions().unwrap();
    /// assert_eq!(ext.title_words("Pod Topology Spread"), ["topology", "spread"]);
    /// ```
    pub fn title_words(&self, title: &str) -> Vec<String> {
        title
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .filter(|w| !self.generic.contains(w))
            .collect()
    }

    /// Whether a title (its [`Self::title_words`]) names an identifier (its words).
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let ext = rules.citations().unwrap().extensions().unwrap();
    /// let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    /// assert!(ext.names(&words("topology spread constraint"), &ext.title_words("Pod Topology Spread")));
    /// assert!(ext.names(&words("kubectl"), &ext.title_words("kubectl debug")));
    /// assert!(!ext.names(&words("topology"), &ext.title_words("Pod Topology Spread Defaults")));
    /// assert!(!ext.names(&words("cpu manager"), &ext.title_words("Memory Manager")));
    /// ```
    pub fn names(&self, identifier: &[String], title: &[String]) -> bool {
        let shared = identifier.iter().filter(|w| title.contains(w)).count();
        shared >= self.min_shared || (identifier.len() == 1 && shared == 1 && title.len() <= 2)
    }
}

/// The words of an identifier, lower-cased: CamelCase and acronyms split
/// (`CPUManager` → `cpu`, `manager`), anything not a letter or digit separates.
///
/// ```
/// use epigraph_operators::epistemic::extensions::identifier_words;
/// assert_eq!(identifier_words("CPUManager"), ["cpu", "manager"]);
/// assert_eq!(identifier_words("TopologySpreadConstraint[*]"), ["topology", "spread", "constraint"]);
/// assert_eq!(identifier_words("topology-manager-policy-options"), ["topology", "manager", "policy", "options"]);
/// assert_eq!(identifier_words("minDomains"), ["min", "domains"]);
/// ```
pub fn identifier_words(identifier: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in identifier.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = part.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, here) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = (prev.is_lowercase() && here.is_uppercase())
                || (prev.is_uppercase() && here.is_uppercase() && next_lower)
                || (prev.is_alphabetic() != here.is_alphabetic());
            if boundary {
                words.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        if start < chars.len() {
            words.push(chars[start..].iter().collect::<String>().to_lowercase());
        }
    }
    words
}
