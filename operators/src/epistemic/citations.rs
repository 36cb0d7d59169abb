//! Statements that cite another document and say how they relate to it: "This KEP builds on
//! KEP-753", "as described in PEP 8", "implements ADR 004", "extends
//! keps/sig-scheduling/895-pod-topology-spread".
//!
//! A memory object whose text names a document key (`kep 753`, `pep 8`, `adr 4`: a family of
//! `[epistemics.citations] families` and a number, written `KEP-753`, `PEP 8`, `ADR 004`, or as a
//! link into `keps/<sig>/753-…` or `pep-0008`) next to a cue of one of the configured edges
//! (`BASED_ON`: "builds on", "based on", "as described in"; `REFINES`: "extends", "follow-up";
//! `IMPLEMENTS`: "implements", "graduates") gets that edge to the statement of the cited
//! document it shares most topic words with (at least `min_shared`; the earliest on a tie).
//! The cited document is the tenant's source whose header names the key (`KEP: 753`, `PEP: 8`,
//! see [`crate::extract::doclinks`]). Each edge one of the statement's cues names is drawn ("extends the
//! API defined in KEP-5307": `REFINES` and `BASED_ON`).
//!
//! A statement that names a document without any cue ("In [#2232](…) we added a new flag …")
//! draws the edge of `[epistemics.citations.uncued]` (`BASED_ON`), but only to a document
//! earlier than its own (a lower number of the same family, [`earlier`]): a later document cited
//! that way is one the earlier points forward to. A document without a key draws no uncued
//! edge, and header fields that link documents (`Replaces:`) are the headers' business.
//!
//! Reference-style links count where they are used: `[Composition KEP]` in a statement and
//! `[Composition KEP]: /keps/sig-cli/2299-…` elsewhere in the document cite `kep 2299` there,
//! and a statement that only defines such links cites nothing by itself.
//!
//! Incremental like the rest: a citation is a join of the citing statement, the cited
//! document's header and its statements, so an edit of any of the three retracts exactly what
//! it caused.

use std::sync::{Arc, LazyLock};

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use regex::Regex;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use super::extensions::ExtensionRules;
use super::rules::Rules;
use crate::extract::cues::CueSet;
use crate::extract::doclinks::{DocLink, DocRole};
use crate::model::{GraphElement, MemoryObject, Relation};
use crate::ontology::{CitationsSpec, OntologyError};

/// `[epistemics.citations]`, compiled.
#[derive(Clone, Debug)]
pub struct CitationRules {
    families: Vec<String>,
    edges: Vec<(String, CueSet)>,
    min_shared: usize,
    uncued: Option<String>,
    contrasts: Option<CueSet>,
    aside_sections: Vec<String>,
    question_sections: bool,
    extensions: Option<ExtensionRules>,
}

/// `KEP-753`, `PEP 8`, `ADR 004`, `RFC2616`.
static KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z]{3})[- ]?0*(\d{1,5})\b").expect("the key pattern compiles")
});
/// A link into a KEP folder or a PEP file: `keps/sig-node/753-sidecar-containers`, `pep-0008`.
static LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(kep|pep)s/(?:[a-z0-9-]+/)?0*(\d{1,5})-|\b(pep)-0*(\d{1,5})\b")
        .expect("the link pattern compiles")
});

/// A reStructuredText role naming a document: ``:pep:`8` ``, ``:pep:`the style guide <8>` ``,
/// ``:rfc:`2616#section-3` `` (PEPs cite each other this way).
static ROLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i):([a-z]{3}):`(?:[^`<]*<)?0*(\d{1,5})\b").expect("the role pattern compiles")
});

/// A number that names a document without its family: an issue-style `#4381` or
/// `enhancements#4603`, a tracking issue `…/enhancements/issues/753` (a KEP's issue number is its
/// key), or a relative link to a sibling folder `../3063-dynamic-resource-…`.
/// It resolves in every family; only a document of the tenant with that key is ever cited.
static BARE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:(?:^|[\s(\[])|enhancements)#(\d{3,5})\b|\.\./0*(\d{1,5})-[a-z0-9]|enhancements/issues/0*(\d{1,5})\b",
    )
        .expect("the bare number pattern compiles")
});

impl CitationRules {
    /// Compiles the spec.
    pub fn new(spec: &CitationsSpec) -> Result<Self, OntologyError> {
        let edges = spec
            .edge
            .iter()
            .map(|e| {
                // An edge drawn from the cited statement is named as a traversal step back.
                let name = if e.cited_first {
                    format!("<{}", e.name)
                } else {
                    e.name.clone()
                };
                CueSet::new(&e.cues)
                    .map(|cues| (name, cues))
                    .map_err(|err| OntologyError::Invalid(format!("[epistemics.citations] {err}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(CitationRules {
            families: spec.families.iter().map(|f| f.to_lowercase()).collect(),
            edges,
            min_shared: spec.min_shared,
            uncued: spec.uncued.as_ref().map(|u| u.edge.clone()),
            contrasts: spec
                .uncued
                .as_ref()
                .filter(|u| !u.contrasts.is_empty())
                .map(|u| CueSet::new(&u.contrasts))
                .transpose()
                .map_err(|err| {
                    OntologyError::Invalid(format!("[epistemics.citations.uncued] {err}"))
                })?,
            aside_sections: spec
                .uncued
                .as_ref()
                .map(|u| u.aside_sections.iter().map(|h| heading(h)).collect())
                .unwrap_or_default(),
            question_sections: spec.uncued.as_ref().is_some_and(|u| u.question_sections),
            extensions: spec
                .extensions
                .as_ref()
                .map(ExtensionRules::new)
                .transpose()?,
        })
    }

    /// Whether a statement under this section heading is an aside, where a reference is no
    /// ground: a section saying what the document does not do or recording its fate
    /// (`aside_sections` of `[epistemics.citations.uncued]`), or one headed by a question (a
    /// questionnaire, an FAQ) when `question_sections` is on.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let cites = rules.citations().unwrap();
    /// assert!(cites.aside(Some("Non-Goals")));
    /// assert!(cites.aside(Some("2.1 Rejection Notice")));
    /// assert!(cites.aside(Some("How can this feature be enabled / disabled in a live cluster?")));
    /// assert!(!cites.aside(Some("Motivation")));
    /// assert!(!cites.aside(None));
    /// ```
    pub fn aside(&self, section: Option<&str>) -> bool {
        section.is_some_and(|s| {
            self.question_sections && s.trim_end().ends_with('?')
                || self.aside_sections.contains(&heading(s))
        })
    }

    /// The rules for statements extending what another document introduced, when
    /// `[epistemics.citations.extensions]` is configured.
    pub fn extensions(&self) -> Option<&ExtensionRules> {
        self.extensions.as_ref()
    }

    /// The document keys a text names, with the byte offset of each.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let cites = rules.citations().unwrap();
    /// assert_eq!(
    ///     cites.keys("See KEP-753, PEP 8 and https://git.k8s.io/enhancements/keps/sig-node/2238-liveness-probe-grace-period."),
    ///     [(4, "kep 753".to_string()), (13, "pep 8".to_string()), (55, "kep 2238".to_string())]
    /// );
    /// // A word that only looks like a family ("the 3 pep talks") is no key.
    /// assert!(cites.keys("uses 100 CPUs at 3 pep talks").is_empty());
    /// // A bare issue number or a sibling folder names the document in every family.
    /// let families = |keys: Vec<(usize, String)>| keys.into_iter().map(|(_, k)| k).collect::<Vec<_>>();
    /// assert!(families(cites.keys("Now #4381 defines the base.")).contains(&"kep 4381".to_string()));
    /// assert!(families(cites.keys("see [DRA](../3063-dynamic-resource-allocation/README.md)")).contains(&"kep 3063".to_string()));
    /// // reStructuredText roles, as PEPs write them.
    /// assert_eq!(
    ///     families(cites.keys("See :pep:`212` and :pep:`the style guide <8>`.")),
    ///     ["pep 212", "pep 8"]
    /// );
    /// // A list number or a year is no key.
    /// assert!(cites.keys("Step #2 runs in 2024.").is_empty());
    /// ```
    pub fn keys(&self, text: &str) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = Vec::new();
        for c in KEY.captures_iter(text) {
            let family = c[1].to_lowercase();
            if self.families.contains(&family)
                && let Ok(n) = c[2].parse::<u64>()
            {
                out.push((c.get(0).map_or(0, |m| m.start()), format!("{family} {n}")));
            }
        }
        for c in LINK.captures_iter(text) {
            let (family, number) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
                (Some(f), Some(n), ..) | (_, _, Some(f), Some(n)) => (f, n),
                _ => continue,
            };
            let family = family.as_str().to_lowercase();
            if self.families.contains(&family)
                && let Ok(n) = number.as_str().parse::<u64>()
            {
                out.push((c.get(0).map_or(0, |m| m.start()), format!("{family} {n}")));
            }
        }
        for c in ROLE.captures_iter(text) {
            let family = c[1].to_lowercase();
            if self.families.contains(&family)
                && let Ok(n) = c[2].parse::<u64>()
            {
                out.push((c.get(0).map_or(0, |m| m.start()), format!("{family} {n}")));
            }
        }
        for c in BARE.captures_iter(text) {
            let Some(number) = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)) else {
                continue;
            };
            if let Ok(n) = number.as_str().parse::<u64>() {
                for family in &self.families {
                    out.push((c.get(0).map_or(0, |m| m.start()), format!("{family} {n}")));
                }
            }
        }
        out.sort();
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|(_, key)| seen.insert(key.clone()));
        out
    }

    /// The documents a statement cites with an edge: `(key, edge)`, each edge a cue of the
    /// statement names; an edge written `<PRECEDES` runs from the cited document to the
    /// statement.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let cites = rules.citations().unwrap();
    /// assert_eq!(
    ///     cites.cited("This KEP builds on the sidecar containers of KEP-753."),
    ///     [("kep 753".to_string(), "BASED_ON".to_string())]
    /// );
    /// assert_eq!(
    ///     cites.cited("KEP-3022 extends KEP-895 with a minDomains field."),
    ///     [("kep 895".to_string(), "REFINES".to_string())]
    /// );
    /// assert_eq!(
    ///     cites.cited("This proposal extends the API defined in KEP-5307 with a new action."),
    ///     [("kep 5307".to_string(), "BASED_ON".to_string()), ("kep 5307".to_string(), "REFINES".to_string())]
    /// );
    /// assert!(cites.cited("KEP-753 was discussed at length.").is_empty());
    /// // One document named twice, by its key and by its issue link, is cited, not the subject.
    /// assert!(cites.cited("This KEP builds on [KEP-2232](https://github.com/kubernetes/enhancements/issues/2232).")
    ///     .contains(&("kep 2232".to_string(), "BASED_ON".to_string())));
    /// assert_eq!(
    ///     cites.cited("Once KEP-4381 has landed, the classic API is removed."),
    ///     [("kep 4381".to_string(), "<PRECEDES".to_string())]
    /// );
    /// assert_eq!(
    ///     cites.cited("The label format is adapted from KEP-2214."),
    ///     [("kep 2214".to_string(), "DERIVES_FROM".to_string())]
    /// );
    /// // Supersession said in words, either way round.
    /// assert_eq!(
    ///     cites.cited("This PEP supersedes PEP 340."),
    ///     [("pep 340".to_string(), "SUPERSEDES".to_string())]
    /// );
    /// assert_eq!(
    ///     cites.cited("This PEP is rejected in favor of PEP 343."),
    ///     [("pep 343".to_string(), "<SUPERSEDES".to_string())]
    /// );
    /// ```
    pub fn cited(&self, text: &str) -> Vec<(String, String)> {
        self.cited_keys(text, self.keys(text))
    }

    /// [`Self::cited`] with the keys found: a text's own and those its reference-style links
    /// name (`[Composition KEP]`, defined elsewhere in the document).
    fn cited_keys(&self, text: &str, keys: Vec<(usize, String)>) -> Vec<(String, String)> {
        if keys.is_empty() {
            return Vec::new();
        }
        let cues = self.cues(text);
        // Documents named, by number: a bare `#2232` names one in every family.
        let named: std::collections::BTreeSet<Option<u64>> = keys
            .iter()
            .map(|(_, k)| parse_key(k).map(|(_, n)| n))
            .collect();
        let mut out = Vec::new();
        for (i, (at, key)) in keys.iter().enumerate() {
            // The key that opens the statement is its subject ("KEP-3022 extends KEP-895"),
            // not what it cites.
            if i == 0 && named.len() > 1 && cues.iter().all(|(start, ..)| start > at) {
                continue;
            }
            // Every edge a cue of the statement names: "extends the API defined in KEP-5307"
            // refines it and is based on it.
            for (.., name) in &cues {
                out.push((key.clone(), name.to_string()));
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

impl CitationRules {
    /// Why a statement cites `key` with `edge`, in words, for the edge's evidence: the cue that
    /// drew it ("cue \"builds on\" naming pep 302"), or that the reference carried none.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let cites = rules.citations().unwrap();
    /// assert_eq!(
    ///     cites.why("This KEP builds on KEP-753.", "kep 753", "BASED_ON", false),
    ///     "cue \"builds on\" naming kep 753"
    /// );
    /// assert_eq!(
    ///     cites.why("With KEP-753 a flag pauses a Job.", "kep 753", "BASED_ON", true),
    ///     "a reference to kep 753 without a cue (an earlier document)"
    /// );
    /// ```
    pub fn why(&self, text: &str, key: &str, edge: &str, uncued: bool) -> String {
        if uncued {
            return format!("a reference to {key} without a cue (an earlier document)");
        }
        let words = self
            .cues(text)
            .into_iter()
            .filter(|(.., name)| *name == edge.trim_start_matches('<'))
            .min_by_key(|(start, ..)| *start)
            .and_then(|(start, end, _)| text.get(start..end));
        match words {
            Some(words) => format!("cue \"{}\" naming {key}", words.to_lowercase()),
            None => format!("a cue of {} naming {key}", edge.trim_start_matches('<')),
        }
    }

    /// The cues of edges in a text, `(start, end, edge)`; a cue inside a longer cue of another
    /// edge is part of it: "a prerequisite for" says `ENABLES`, not the `BASED_ON` of
    /// "prerequisite".
    fn cues<'a>(&'a self, text: &str) -> Vec<(usize, usize, &'a str)> {
        let cues: Vec<(usize, usize, &str)> = self
            .edges
            .iter()
            .flat_map(|(name, set)| {
                set.find_all(text)
                    .into_iter()
                    .map(move |m| (m.start, m.end, name.as_str()))
            })
            .collect();
        cues.iter()
            .filter(|(start, end, _)| {
                !cues
                    .iter()
                    .any(|(s, e, _)| s <= start && end <= e && e - s > end - start)
            })
            .copied()
            .collect()
    }

    /// The documents a statement names without any cue of an edge, each with the edge
    /// `[epistemics.citations.uncued]` gives such a reference ("In [#2232](…) we added a new
    /// flag …": `BASED_ON`). The edge is drawn only to a document earlier than the citing one
    /// (see [`earlier`]); that is checked where both documents are known. A header field that
    /// names documents (`Replaces:`, `Superseded-By:`) is the headers' business, not a
    /// reference.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let cites = rules.citations().unwrap();
    /// assert_eq!(
    ///     cites.uncued("With [suspended Jobs](https://git.k8s.io/enhancements/keps/sig-apps/2232-suspend-jobs) a flag pauses a Job."),
    ///     [("kep 2232".to_string(), "BASED_ON".to_string())]
    /// );
    /// // A cue says how: the cued edge, not the default.
    /// assert!(cites.uncued("This KEP builds on KEP-2232.").is_empty());
    /// assert!(cites.uncued("Replaces: /keps/sig-scheduling/583-coscheduling").is_empty());
    /// // A contrast is no ground.
    /// assert!(cites.uncued("Unlike PEP 343, the templates here are reusable.").is_empty());
    /// ```
    pub fn uncued(&self, text: &str) -> Vec<(String, String)> {
        self.uncued_keys(text, self.keys(text))
    }

    /// [`Self::uncued`] with the keys found (see [`Self::cited_keys`]). A statement that only
    /// defines reference-style links (`[Catalog KEP]: …/pull/2908 [Composition KEP]: …`) says
    /// nothing of its own: its links count where the text uses them.
    fn uncued_keys(&self, text: &str, keys: Vec<(usize, String)>) -> Vec<(String, String)> {
        let Some(edge) = &self.uncued else {
            return Vec::new();
        };
        if names_documents_in_header(text)
            || only_link_definitions(text)
            || !self.cues(text).is_empty()
            || self
                .contrasts
                .as_ref()
                .is_some_and(|c| !c.find_all(text).is_empty())
        {
            return Vec::new();
        }
        let mut out: Vec<(String, String)> = keys
            .into_iter()
            .map(|(_, key)| (key, edge.clone()))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// A section heading as compared: lower case, without its numbering ("2.1") and punctuation.
fn heading(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !w.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A reference-style link definition: `[Composition KEP]: /keps/sig-cli/2299-…`, also written
/// `[KEP 785]:(https://…)`.
static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[([^\[\]]+)\]:\s*\(?\s*(\S+?)\)?(?:\s|$)")
        .expect("the definition pattern compiles")
});
/// A reference-style link in use: `[Composition KEP]`, `[kep-853][]`, `[the KEP][kep-853]`.
static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[([^\[\]]+)\](?:\[([^\[\]]*)\])?").expect("the reference pattern compiles")
});

/// The reference-style link definitions of a text: `(label, target)`, the label lower-cased.
///
/// ```
/// use epigraph_operators::epistemic::citations::link_definitions;
/// assert_eq!(
///     link_definitions("[Catalog KEP]: https://example.org/pull/2908 [KEP 785]:(https://git.k8s.io/enhancements/keps/sig-scheduling/785-config)"),
///     [("catalog kep".to_string(), "https://example.org/pull/2908".to_string()),
///      ("kep 785".to_string(), "https://git.k8s.io/enhancements/keps/sig-scheduling/785-config".to_string())]
/// );
/// ```
pub fn link_definitions(text: &str) -> Vec<(String, String)> {
    DEFINITION
        .captures_iter(text)
        .map(|c| (c[1].trim().to_lowercase(), c[2].to_string()))
        .collect()
}

/// The reference-style links a text uses, `(byte offset, label)`, the label lower-cased: not
/// inline links (`[text](url)`) nor definitions (`[label]: url`).
///
/// ```
/// use epigraph_operators::epistemic::citations::link_references;
/// assert_eq!(
///     link_references("See the [Composition KEP] and [the API][kep-853], not [inline](https://x.org)."),
///     [(8, "composition kep".to_string()), (30, "kep-853".to_string())]
/// );
/// assert!(link_references("[Composition KEP]: /keps/sig-cli/2299-kustomize-plugin-composition").is_empty());
/// ```
pub fn link_references(text: &str) -> Vec<(usize, String)> {
    REFERENCE
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let next = text[whole.end()..].chars().next();
            if c.get(2).is_none() && matches!(next, Some('(' | ':')) {
                return None;
            }
            let label = match c.get(2) {
                Some(l) if !l.as_str().trim().is_empty() => l.as_str(),
                _ => c.get(1)?.as_str(),
            };
            Some((whole.start(), label.trim().to_lowercase()))
        })
        .collect()
}

/// Whether a text is nothing but reference-style link definitions.
fn only_link_definitions(text: &str) -> bool {
    !link_definitions(text).is_empty()
        && DEFINITION
            .replace_all(text, " ")
            .chars()
            .all(|c| !c.is_alphanumeric())
}

/// Whether the document keyed `cited` is earlier than the one keyed `own`: the same family, a
/// lower number (`kep 753` is earlier than `kep 4438`). Numbered families (KEPs, PEPs, ADRs,
/// RFCs) number their documents in the order they were opened.
///
/// ```
/// use epigraph_operators::epistemic::citations::earlier;
/// assert!(earlier("kep 753", "kep 4438"));
/// assert!(!earlier("kep 4438", "kep 753"));
/// assert!(!earlier("pep 8", "kep 4438"));
/// assert!(!earlier("kep 753", "kep 753"));
/// ```
pub fn earlier(cited: &str, own: &str) -> bool {
    matches!((parse_key(cited), parse_key(own)), (Some((f, a)), Some((g, b))) if f == g && a < b)
}

/// A document key's family and number (`"kep 753"` → `("kep", 753)`), if it has both.
fn parse_key(key: &str) -> Option<(&str, u64)> {
    let (family, n) = key.split_once(' ')?;
    Some((family, n.parse().ok()?))
}

/// Whether a statement is a header field that names documents (`Replaces: …`,
/// `Superseded-By: …`): the documents source reads those as the headers' own links.
fn names_documents_in_header(text: &str) -> bool {
    text.split_once(':').is_some_and(|(key, _)| {
        let key = key.trim().to_ascii_lowercase();
        crate::extract::doclinks::LINK_FIELDS.contains(&key.as_str())
    })
}

/// A statement citing a document key with an edge.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
struct Citation {
    memory_id: String,
    source_id: String,
    /// The cited key.
    key: String,
    edge: String,
    /// Drawn only to an earlier document than the citing one (an uncued reference).
    earlier_only: bool,
    /// Why it was drawn, in words (the edge's evidence).
    why: String,
    topic: Vec<String>,
    t_valid: Option<i64>,
    recorded_at: Option<i64>,
}

/// The citation edges of `memories` to the statements of the documents whose headers name the
/// cited keys (see the module docs).
pub fn citation_edges<'s, T>(
    memories: VecCollection<'s, T, MemoryObject>,
    doc_links: VecCollection<'s, T, DocLink>,
    rules: Arc<Rules>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let Some(citing) = rules.citations().cloned() else {
        return memories.flat_map(|_| None);
    };
    let min_shared = citing.min_shared;
    let citing_extensions = citing.extensions.clone();
    let rules_for_extensions = rules.clone();
    let topic_rules = rules.clone();
    let resolving = citing.clone();
    let cites = with_reference_keys(memories.clone(), resolving).flat_map(move |(m, linked)| {
        let mut keys = citing.keys(&m.text);
        for (at, key) in linked {
            if !keys.iter().any(|(_, k)| *k == key) {
                keys.push((at, key));
            }
        }
        keys.sort();
        let mut found: Vec<(String, String, bool)> = citing
            .cited_keys(&m.text, keys.clone())
            .into_iter()
            .map(|(key, edge)| (key, edge, false))
            .collect();
        if found.is_empty() {
            found = citing
                .uncued_keys(&m.text, keys)
                .into_iter()
                .map(|(key, edge)| (key, edge, true))
                .collect();
        }
        // Under "Non-Goals" or a questionnaire's question, a reference is no ground.
        if citing.aside(m.section.as_deref()) {
            found.retain(|(_, edge, _)| Some(edge) != citing.uncued.as_ref());
        }
        let topic = if found.is_empty() {
            Vec::new()
        } else {
            rules.topic(&m.text)
        };
        found
            .into_iter()
            .map(|(key, edge, earlier_only)| {
                (
                    (m.tenant.clone(), key.clone()),
                    Citation {
                        memory_id: m.id.clone(),
                        source_id: m.source_id.clone(),
                        why: citing.why(&m.text, &key, &edge, earlier_only),
                        key,
                        edge,
                        earlier_only,
                        topic: topic.clone(),
                        t_valid: m.t_valid,
                        recorded_at: m.recorded_at,
                    },
                )
            })
            .collect::<Vec<_>>()
    });
    let own_keys = doc_links
        .clone()
        .filter(|l| l.role == DocRole::Is)
        .map(|l| ((l.tenant, l.source_id), l.key))
        .distinct();
    let owners = own_keys
        .clone()
        .map(|((tenant, source_id), key)| ((tenant, key), source_id));
    let mut all_cites =
        cites
            .clone()
            .filter(|(_, cite)| !cite.earlier_only)
            .concat(cited_by_a_later_document(
                cites.filter(|(_, cite)| cite.earlier_only),
                own_keys.clone(),
            ));
    if let Some(extensions) = citing_extensions {
        all_cites = all_cites.concat(extension_citations(
            memories.clone(),
            doc_links.clone(),
            own_keys,
            extensions,
            rules_for_extensions,
        ));
    }
    let cites = all_cites;
    let targeted = cites
        .join_map(owners, |(tenant, _), cite, cited| {
            ((tenant.clone(), cited.clone()), cite.clone())
        })
        .filter(|((_, cited), cite)| *cited != cite.source_id);
    let statements = memories.map(move |m| {
        (
            (m.tenant.clone(), m.source_id.clone()),
            (m.id.clone(), m.span.0, topic_rules.topic(&m.text)),
        )
    });
    targeted
        .join_map(statements, |(tenant, cited), cite, (id, start, topic)| {
            let shared = topic.iter().filter(|w| cite.topic.contains(w)).count();
            (
                (tenant.clone(), cited.clone(), cite.clone()),
                (shared, std::cmp::Reverse(*start), id.clone()),
            )
        })
        .filter(move |(_, (shared, ..))| *shared >= min_shared)
        .reduce(|_, input, out| {
            if let Some((best, _)) = input.iter().max_by_key(|(candidate, _)| *candidate) {
                out.push(((*best).clone(), 1));
            }
        })
        .map(|((tenant, _, cite), (_, _, target))| {
            let mut edge = match cite.edge.strip_prefix('<') {
                Some(rel_type) => {
                    Relation::structural(&tenant, rel_type, &target, &cite.memory_id, None)
                }
                None => Relation::structural(&tenant, &cite.edge, &cite.memory_id, &target, None),
            };
            edge.t_valid = cite.t_valid;
            edge.recorded_at = cite.recorded_at;
            edge.evidence = vec![cite.why.clone()];
            GraphElement::Relation(edge)
        })
}

/// The statements that extend an identifier the title of an earlier document names (see
/// [`super::extensions`]), each as a citation of the earliest such document: the identifier's
/// words meet the titles' through an index by word, so only titles sharing a word are compared.
fn extension_citations<'s, T>(
    memories: VecCollection<'s, T, MemoryObject>,
    doc_links: VecCollection<'s, T, DocLink>,
    own_keys: VecCollection<'s, T, ((String, String), String)>,
    extensions: ExtensionRules,
    rules: Arc<Rules>,
) -> VecCollection<'s, T, ((String, String), Citation)>
where
    T: Timestamp + Lattice,
{
    let edge = extensions.edge().to_string();
    let titling = extensions.clone();
    let judging = extensions.clone();
    let titles = doc_links
        .filter(|l| l.role == DocRole::Is)
        .flat_map(move |l| {
            let words = l
                .title
                .as_deref()
                .map(|t| titling.title_words(t))
                .unwrap_or_default();
            let mut index: Vec<String> = words.clone();
            index.sort();
            index.dedup();
            index
                .into_iter()
                .map(|w| ((l.tenant.clone(), w), (l.key.clone(), words.clone())))
                .collect::<Vec<_>>()
        })
        .distinct();
    let mentions = memories.flat_map(move |m| {
        let extended = extensions.extended(&m.text);
        if extended.is_empty() {
            return Vec::new();
        }
        let cite = Citation {
            memory_id: m.id.clone(),
            source_id: m.source_id.clone(),
            key: String::new(),
            edge: edge.clone(),
            earlier_only: false,
            why: String::new(),
            topic: rules.topic(&m.text),
            t_valid: m.t_valid,
            recorded_at: m.recorded_at,
        };
        let mut out = Vec::new();
        for words in extended {
            let mut index = words.clone();
            index.sort();
            index.dedup();
            for w in index {
                out.push(((m.tenant.clone(), w), (words.clone(), cite.clone())));
            }
        }
        out
    });
    mentions
        .join_map(titles, |(tenant, _), (words, cite), (key, title)| {
            (
                tenant.clone(),
                words.clone(),
                cite.clone(),
                key.clone(),
                title.clone(),
            )
        })
        .filter(move |(_, words, _, _, title)| judging.names(words, title))
        .map(|(tenant, words, cite, key, _)| ((tenant, cite.source_id.clone()), (words, cite, key)))
        // Only an earlier document than the statement's own introduced what it extends.
        .join_map(own_keys, |(tenant, _), (words, cite, key), own| {
            (
                (tenant.clone(), cite.memory_id.clone(), words.clone()),
                (key.clone(), cite.clone(), earlier(key, own)),
            )
        })
        .filter(|(_, (.., earlier))| *earlier)
        .map(|(mention, (key, cite, _))| (mention, (key, cite)))
        .distinct()
        // The earliest of them introduced it.
        .reduce(|_, input, out| {
            if let Some(((key, cite), _)) = input.iter().min_by_key(|((key, _), _)| key_order(key))
            {
                out.push(((key.clone(), cite.clone()), 1));
            }
        })
        .map(|((tenant, _, words), (key, cite))| {
            let why = format!("extends {} that the title of {key} names", words.join(" "));
            ((tenant, key.clone()), Citation { key, why, ..cite })
        })
        .distinct()
}

/// A document key in the order its family numbers documents: `(family, number)`, a key
/// without a number last.
fn key_order(key: &str) -> (String, u64) {
    let (family, number) = parse_key(key).unwrap_or((key, u64::MAX));
    (family.to_string(), number)
}

/// The citations of `cites` whose citing document is later than the cited key by one of its own
/// keys (see [`earlier`]): an uncued reference to a later document ("a separate KEP will
/// enable …") is no grounding.
fn cited_by_a_later_document<'s, T>(
    cites: VecCollection<'s, T, ((String, String), Citation)>,
    own_keys: VecCollection<'s, T, ((String, String), String)>,
) -> VecCollection<'s, T, ((String, String), Citation)>
where
    T: Timestamp + Lattice,
{
    cites
        .map(|((tenant, _), cite)| ((tenant, cite.source_id.clone()), cite))
        .join_map(own_keys, |(tenant, _), cite, own| {
            (tenant.clone(), cite.clone(), earlier(&cite.key, own))
        })
        .filter(|(.., later)| *later)
        .map(|(tenant, cite, _)| ((tenant, cite.key.clone()), cite))
        .distinct()
}

/// Each memory with the document keys its reference-style links name: `[Composition KEP]` in
/// a statement and `[Composition KEP]: /keps/sig-cli/2299-…` anywhere in the same source give
/// the statement `kep 2299` at the offset of the link.
fn with_reference_keys<'s, T>(
    memories: VecCollection<'s, T, MemoryObject>,
    citing: CitationRules,
) -> VecCollection<'s, T, (MemoryObject, Vec<(usize, String)>)>
where
    T: Timestamp + Lattice,
{
    let defining = citing.clone();
    let definitions = memories
        .clone()
        .flat_map(move |m| {
            link_definitions(&m.text)
                .into_iter()
                .flat_map(|(label, target)| {
                    defining
                        .keys(&target)
                        .into_iter()
                        .map(move |(_, key)| (label.clone(), key))
                })
                .map(|(label, key)| ((m.tenant.clone(), m.source_id.clone(), label), key))
                .collect::<Vec<_>>()
        })
        .distinct();
    let uses = memories.clone().flat_map(|m| {
        link_references(&m.text)
            .into_iter()
            .map(|(at, label)| {
                (
                    (m.tenant.clone(), m.source_id.clone(), label),
                    (m.id.clone(), at),
                )
            })
            .collect::<Vec<_>>()
    });
    let linked = uses
        .join_map(definitions, |_, (id, at), key| {
            (id.clone(), (*at, key.clone()))
        })
        .reduce(|_, input, out| {
            let keys: Vec<(usize, String)> = input.iter().map(|(k, _)| (*k).clone()).collect();
            out.push((keys, 1));
        });
    let by_id = memories.map(|m| (m.id.clone(), m));
    let with = by_id
        .clone()
        .join_map(linked.clone(), |_, m, keys| (m.clone(), keys.clone()));
    let without = by_id
        .antijoin(linked.map(|(id, _)| id))
        .map(|(_, m)| (m, Vec::new()));
    with.concat(without)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules::bundled()
    }

    #[test]
    fn a_reference_without_a_cue_gets_the_default_edge_and_a_cued_one_does_not() {
        let rules = rules();
        let cites = rules.citations().expect("citations are configured");
        let uncued = |text: &str| -> Vec<String> {
            cites.uncued(text).into_iter().map(|(key, _)| key).collect()
        };
        // A link to a sibling KEP's folder, nothing said about how they relate.
        assert_eq!(
            uncued(
                "This mirrors the [controller tracing work](https://github.com/kubernetes/enhancements/tree/master/keps/sig-instrumentation/1234-controller-tracing)."
            ),
            ["kep 1234"]
        );
        // A tracking issue named in passing (a bare number names a document of every family).
        assert!(
            uncued(
                "With [#3001](https://github.com/kubernetes/enhancements/issues/3001) the quota is counted per claim."
            )
            .contains(&"kep 3001".to_string())
        );
        // A cue of any edge makes it a cued citation.
        assert!(uncued("This KEP depends on KEP-1287 for the resize status.").is_empty());
        assert!(uncued("The label format is adapted from KEP-2214.").is_empty());
        // Header fields that link documents, and text without a key.
        assert!(uncued("Superseded-By: 4671").is_empty());
        assert!(uncued("The suspend field pauses a Job.").is_empty());
    }

    #[test]
    fn a_feature_that_moved_between_documents_is_a_relation_change() {
        let rules = rules();
        let cites = rules.citations().expect("citations are configured");
        // This document took the feature over from the cited one.
        assert_eq!(
            cites
                .cited("Originally, this KEP was part of the broader KEP-4100 on restart backoff."),
            [("kep 4100".to_string(), "RELATION_CHANGE".to_string())]
        );
        assert!(
            cites
                .cited("- 2024-03-01: KEP split from [the pod resources KEP](https://github.com/kubernetes/enhancements/issues/2043)")
                .contains(&("kep 2043".to_string(), "RELATION_CHANGE".to_string()))
        );
        // The cited document took it over from this one.
        assert_eq!(
            cites.cited("The per-node maximum has been split into KEP-5100 to ship it sooner."),
            [("kep 5100".to_string(), "<RELATION_CHANGE".to_string())]
        );
        assert_eq!(
            cites.cited("Restarting during termination is left to a separate KEP, KEP-4500."),
            [("kep 4500".to_string(), "<RELATION_CHANGE".to_string())]
        );
        // A later step of a plan the cited document started.
        assert_eq!(
            cites.cited(
                "After the deprecation in KEP-4000, removing the code is the next logical step."
            ),
            [
                ("kep 4000".to_string(), "<PRECEDES".to_string()),
                ("kep 4000".to_string(), "IMPLEMENTS".to_string())
            ]
        );
    }

    #[test]
    fn reference_style_links_are_resolved_and_their_definitions_are_no_statement() {
        let rules = rules();
        let cites = rules.citations().expect("citations are configured");
        let definitions = "[Plugin KEP]: /keps/sig-cli/2000-plugins [Catalog KEP]: https://github.com/kubernetes/enhancements/pull/2908";
        assert!(cites.uncued(definitions).is_empty());
        assert_eq!(
            link_definitions(definitions)
                .into_iter()
                .flat_map(|(label, target)| cites
                    .keys(&target)
                    .into_iter()
                    .map(move |(_, k)| (label.clone(), k)))
                .collect::<Vec<_>>(),
            [("plugin kep".to_string(), "kep 2000".to_string())]
        );
        let usage = "Plugins are orchestrated through the [Plugin KEP] pipeline.";
        let (at, label) = link_references(usage).pop().expect("a reference");
        assert_eq!(label, "plugin kep");
        assert_eq!(
            cites.uncued_keys(usage, vec![(at, "kep 2000".to_string())]),
            [("kep 2000".to_string(), "BASED_ON".to_string())]
        );
    }

    #[test]
    fn only_an_earlier_document_of_the_same_family_is_a_ground() {
        assert!(earlier("kep 2232", "kep 5440"));
        assert!(!earlier("kep 5440", "kep 2232"));
        assert!(!earlier("adr 3", "kep 5440"));
        assert!(!earlier("kep x", "kep 5440"));
    }
}
