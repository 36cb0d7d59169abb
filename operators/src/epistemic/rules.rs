//! The configured rules, compiled once: what a statement is about (its topic words), whether it
//! updates earlier ones, what a question asks for, and when two claimed values agree.

use std::collections::BTreeSet;

use epigraph_schemas::calendar::MONTH_NAMES as MONTHS;

use super::citations::CitationRules;
use super::lifecycle::LifecycleRules;
use super::revisions::RevisionRules;
use crate::extract::cues::CueSet;
use crate::extract::dates::period;
use crate::extract::mentions::owner_rank;
use crate::model::{Claim, EpistemicType, MemoryObject, TemporalType};
use crate::ontology::{AnswerKind, EpistemicsSpec, Ontology, OntologyError};

/// Day length in milliseconds.
const DAY_MS: i64 = 86_400_000;

/// `[epistemics]` of the ontology, compiled.
#[derive(Clone, Debug)]
pub struct Rules {
    spec: EpistemicsSpec,
    update: CueSet,
    blocked: CueSet,
    needs: Vec<(CueSet, AnswerKind)>,
    ignore: BTreeSet<String>,
    attributes: BTreeSet<String>,
    /// The words of every attribute's cues, as topic words: they say what a value measures,
    /// not what it is about.
    cue_words: BTreeSet<String>,
    citations: Option<CitationRules>,
    lifecycle: Option<LifecycleRules>,
    revisions: Option<RevisionRules>,
}

impl Rules {
    /// Compiles the rules of `ontology`.
    pub fn new(ontology: &Ontology) -> Result<Self, OntologyError> {
        let spec = ontology.epistemics.clone();
        let compile = |cues: &[String]| {
            CueSet::new(cues).map_err(|e| OntologyError::Invalid(format!("[epistemics] {e}")))
        };
        let update = compile(&spec.update_cues)?;
        let blocked = compile(&spec.blocks.cues)?;
        let needs = spec
            .need
            .iter()
            .map(|n| Ok((compile(&n.cues)?, n.answer)))
            .collect::<Result<Vec<_>, OntologyError>>()?;
        let ignore = spec
            .matter
            .ignore
            .iter()
            .map(|w| w.to_lowercase())
            .collect();
        let attributes = ontology.attributes.iter().map(|a| a.name.clone()).collect();
        let citations = spec
            .citations
            .as_ref()
            .map(CitationRules::new)
            .transpose()?;
        let lifecycle = spec
            .lifecycle
            .as_ref()
            .filter(|l| l.enabled)
            .map(LifecycleRules::new)
            .transpose()?;
        let revisions = spec
            .revisions
            .as_ref()
            .filter(|r| r.enabled)
            .map(RevisionRules::new)
            .transpose()?;
        let mut rules = Rules {
            citations,
            lifecycle,
            revisions,
            attributes,
            spec,
            update,
            blocked,
            needs,
            ignore,
            cue_words: BTreeSet::new(),
        };
        rules.cue_words = ontology
            .attributes
            .iter()
            .flat_map(|a| a.cues.iter())
            .flat_map(|cue| rules.topic(cue))
            .collect();
        Ok(rules)
    }

    /// The rules of the bundled ontology.
    pub fn bundled() -> Self {
        Self::new(&Ontology::bundled()).expect("the bundled rules compile (tested)")
    }

    /// The citation rules, when `[epistemics.citations]` is configured.
    pub fn citations(&self) -> Option<&CitationRules> {
        self.citations.as_ref()
    }

    /// The lifecycle rules, when `[epistemics.lifecycle]` is configured and enabled.
    pub fn lifecycle(&self) -> Option<&LifecycleRules> {
        self.lifecycle.as_ref()
    }

    /// The revision rules, when `[epistemics.revisions]` is configured and enabled.
    pub fn revisions(&self) -> Option<&RevisionRules> {
        self.revisions.as_ref()
    }

    /// The configuration they were compiled from.
    pub fn spec(&self) -> &EpistemicsSpec {
        &self.spec
    }

    /// Whether claims of this attribute are judged: only the configured attributes (a
    /// qualified one with its cue, `growth:churn`), not the bare value kinds (`amount`, `date`),
    /// which say too little about what the value measures to compare two of them.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// assert!(rules.judged("launch_date") && rules.judged("growth:churn"));
    /// assert!(!rules.judged("date") && !rules.judged("amount"));
    /// ```
    pub fn judged(&self, attribute: &str) -> bool {
        let base = attribute.split(':').next().unwrap_or(attribute);
        self.attributes.contains(base)
    }

    /// Whether `text` says it updates something said before.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// assert!(rules.is_update("Heads up, the Atlas launch slips to June 3."));
    /// assert!(!rules.is_update("Atlas launch is planned for May 13."));
    /// ```
    pub fn is_update(&self, text: &str) -> bool {
        self.update.any(text)
    }

    /// Whether `text` says it is held up by something still open.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// assert!(rules.is_blocked("The renewal paperwork is blocked until we know who owns it."));
    /// assert!(rules.is_blocked("Invites for the offsite are on hold pending the date."));
    /// assert!(!rules.is_blocked("The reader uses blocking I/O."));
    /// assert!(!rules.is_blocked("The module is in pending deprecation."));
    /// ```
    pub fn is_blocked(&self, text: &str) -> bool {
        self.blocked.any(text)
    }

    /// What a question asks for (`None`: nothing in particular).
    ///
    /// ```
    /// use epigraph_operators::{epistemic::Rules, ontology::AnswerKind};
    /// let rules = Rules::bundled();
    /// assert_eq!(rules.need("Who owns the BlueWave renewal?"), Some(AnswerKind::Person));
    /// assert_eq!(rules.need("Open question: the date for the all-hands."), Some(AnswerKind::Date));
    /// assert_eq!(rules.need("Is SSO in scope?"), None);
    /// ```
    pub fn need(&self, question: &str) -> Option<AnswerKind> {
        self.needs
            .iter()
            .find(|(cues, _)| cues.any(question))
            .map(|(_, kind)| *kind)
    }

    /// The topic words of a statement: lower-cased words of two or more letters that are
    /// neither ignored words nor numbers, crudely singularised, sorted and unique.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// assert_eq!(
    ///     rules.topic("Update on the Tidewater primary database: we now go with MySQL."),
    ///     ["database", "mysql", "primary", "tidewater"]
    /// );
    /// ```
    pub fn topic(&self, text: &str) -> Vec<String> {
        let mut words = BTreeSet::new();
        for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\'')) {
            let word = raw
                .trim_matches(|c: char| c == '-' || c == '\'')
                .to_lowercase();
            if word.chars().count() < 2
                || !word.chars().any(char::is_alphabetic)
                || self.ignore.contains(&word)
            {
                continue;
            }
            let word = singular(&word);
            if !self.ignore.contains(&word) && !MONTHS.contains(&word.as_str()) {
                words.insert(word);
            }
        }
        words.into_iter().collect()
    }

    /// What a claim is about beyond its named subject: the topic words of its statement, and of
    /// its document's title when no entity is named as its subject, less the attributes' cue
    /// words and values (see `[epistemics.matters]`).
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// assert_eq!(
    ///     rules.context("Investment: €320K SAFE with a €2.2M valuation cap.", Some("Term sheet summary (Fjord Ventures)")),
    ///     ["fjord", "summary", "venture"]
    /// );
    /// ```
    pub fn context(&self, text: &str, title: Option<&str>) -> Vec<String> {
        self.context_of(&self.topic(text), title)
    }

    /// [`Rules::context`] of a statement whose topic words are known.
    pub fn context_of(&self, topic: &[String], title: Option<&str>) -> Vec<String> {
        let mut words: BTreeSet<String> = topic.iter().cloned().collect();
        words.extend(title.map(|t| self.topic(t)).unwrap_or_default());
        // Values ("320k", "2m") are what is claimed, not what it is about.
        words
            .into_iter()
            .filter(|w| !self.cue_words.contains(w) && !w.starts_with(|c: char| c.is_ascii_digit()))
            .collect()
    }

    /// Whether two topics are on the same matter, the words in `besides` (the shared entity's
    /// name) not counting.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let a = rules.topic("After the bake-off, CockroachDB it is for the Tidewater primary database.");
    /// let b = rules.topic("Update on the Tidewater primary database: we now go with MySQL, replacing CockroachDB.");
    /// let c = rules.topic("Decision: Tidewater goes with eu-west-1 for the hosting region.");
    /// let tidewater = ["tidewater".to_string()];
    /// assert!(rules.same_matter(&a, &b, &tidewater));
    /// assert!(!rules.same_matter(&a, &c, &tidewater));
    /// ```
    pub fn same_matter(&self, a: &[String], b: &[String], besides: &[String]) -> bool {
        let (shared, union) = overlap(a, b, besides);
        let matter = &self.spec.matter;
        shared > 0
            && (shared >= matter.min_shared
                || (union > 0 && shared as f64 / union as f64 >= matter.min_jaccard))
    }

    /// Whether `newer` only restates `older`: the same topic words, besides the entity's own.
    pub fn restates(&self, newer: &[String], older: &[String], besides: &[String]) -> bool {
        let (shared, union) = overlap(newer, older, besides);
        shared == union
    }

    /// Topic words two statements share, besides the entity's own.
    pub fn shared_words(&self, a: &[String], b: &[String], besides: &[String]) -> usize {
        overlap(a, b, besides).0
    }

    /// The topic words two statements share besides the entity's own, sorted: what
    /// [`Rules::shared_words`] counts.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    /// assert_eq!(rules.shared_topic(&words(&["atlas", "launch", "date"]), &words(&["launch", "atlas"]),
    ///     &words(&["atlas"])), ["launch"]);
    /// ```
    pub fn shared_topic(&self, a: &[String], b: &[String], besides: &[String]) -> Vec<String> {
        let b: BTreeSet<&String> = b.iter().collect();
        let shared: BTreeSet<&String> = a
            .iter()
            .filter(|w| b.contains(w) && !besides.contains(w))
            .collect();
        shared.into_iter().cloned().collect()
    }

    /// Whether two claimed values in `unit` agree: amounts, counts and percentages within the
    /// tolerance; dates when one period holds the other (`2027-06` and `2027-06-03`: one is
    /// only vaguer); anything else (statuses, names) equal; a negated value never agrees with
    /// an affirmed one.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// assert!(rules.agree("EUR", ("250000", None), ("251000", None)));
    /// assert!(!rules.agree("EUR", ("320000", None), ("200000", None)));
    /// assert!(!rules.agree("date", ("2019", None), ("2020", None)));
    /// assert!(rules.agree("date", ("2027-Q2", None), ("2027-06-03", None)));
    /// assert!(!rules.agree("date", ("2027-06-03", None), ("2027-06-10", None)));
    /// assert!(!rules.agree("status", ("shipped", Some("not")), ("shipped", None)));
    /// ```
    pub fn agree(&self, unit: &str, a: (&str, Option<&str>), b: (&str, Option<&str>)) -> bool {
        let negated = |q: Option<&str>| q == Some("not");
        if negated(a.1) != negated(b.1) {
            return false;
        }
        if unit == "date"
            && let (Some(x), Some(y)) = (period(a.0), period(b.0))
        {
            return (x.0 <= y.0 && y.1 <= x.1) || (y.0 <= x.0 && x.1 <= y.1);
        }
        let exact = matches!(unit, "date" | "status" | "person" | "choice");
        match (a.0.parse::<f64>(), b.0.parse::<f64>()) {
            (Ok(x), Ok(y)) if !exact => {
                let scale = x.abs().max(y.abs());
                scale == 0.0 || (x - y).abs() <= self.spec.tolerance * scale
            }
            _ => a.0.eq_ignore_ascii_case(b.0),
        }
    }

    /// Whether a later claim in `unit` always replaces an earlier different one
    /// (`latest_wins`).
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// assert!(rules.latest_wins("choice") && !rules.latest_wins("EUR"));
    /// ```
    pub fn latest_wins(&self, unit: &str) -> bool {
        self.spec.latest_wins.iter().any(|u| u == unit)
    }

    /// The contradiction window in milliseconds.
    pub fn window_ms(&self) -> i64 {
        i64::from(self.spec.contradiction_window_days) * DAY_MS
    }

    /// What the rules need to know about a memory object, with what its claims and mentions
    /// add.
    ///
    /// `mentions` are the entities it names: `(span start, entity id, kind)`.
    pub fn facts(
        &self,
        memory: &MemoryObject,
        mentions: &[(u32, String, String)],
        claims: &[&Claim],
    ) -> Facts {
        let names_person = mentions.iter().any(|(_, _, kind)| kind == "Person");
        let mut mentions = mentions.to_vec();
        mentions.sort();
        let carries = |kind: AnswerKind| match kind {
            AnswerKind::Person => names_person || claims.iter().any(|c| c.unit == "person"),
            AnswerKind::Date => claims.iter().any(|c| c.unit == "date"),
            AnswerKind::Amount => claims
                .iter()
                .any(|c| c.unit.len() == 3 && c.unit.chars().all(|ch| ch.is_ascii_uppercase())),
            AnswerKind::Number => memory.text.chars().any(|c| c.is_ascii_digit()),
            AnswerKind::Statement => memory.memory_type != EpistemicType::Question,
        };
        let answer_kinds = [
            AnswerKind::Person,
            AnswerKind::Date,
            AnswerKind::Amount,
            AnswerKind::Number,
            AnswerKind::Statement,
        ]
        .into_iter()
        .filter(|k| carries(*k))
        .collect();
        Facts {
            tenant: memory.tenant.clone(),
            id: memory.id.clone(),
            memory_type: memory.memory_type,
            temporal_type: memory.temporal_type,
            source_id: memory.source_id.clone(),
            title: memory.title.clone(),
            t_valid: memory.t_valid,
            recorded_at: memory.recorded_at,
            topic: self.topic(&memory.text),
            update: self.is_update(&memory.text),
            blocked: memory.memory_type != EpistemicType::Question && self.is_blocked(&memory.text),
            need: (memory.memory_type == EpistemicType::Question)
                .then(|| self.need(&memory.text).unwrap_or(AnswerKind::Statement)),
            carries: answer_kinds,
            asks: memory.memory_type == EpistemicType::Question && asks(&memory.text),
            chooses: claims.iter().any(|c| c.unit == "choice"),
            mentions,
            identifiers: match self.lifecycle() {
                Some(lifecycle) => lifecycle.keys(&memory.text),
                None => super::code::keys(&memory.text).into_iter().collect(),
            },
        }
    }
}

/// Whether a text is written as a question: a question mark, or a line that opens with
/// "open question", "TBD", "TBC" or "Q:".
///
/// ```
/// use epigraph_operators::epistemic::asks;
/// assert!(asks("Should Python allow lone surrogates?"));
/// assert!(asks("Open question: the date for the all-hands."));
/// assert!(asks("TBD: owner for the AquaNest renewal."));
/// assert!(!asks("Ephemeral container is added to Pod, but not created by kubelet for unknown reason."));
/// ```
pub fn asks(text: &str) -> bool {
    let opening = text.trim_start().to_lowercase();
    text.contains('?')
        || ["open question", "tbd", "tbc", "q:"]
            .iter()
            .any(|o| opening.starts_with(o))
}

/// What the rules know about one memory object.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Facts {
    /// Tenant.
    pub tenant: String,
    /// Memory object id.
    pub id: String,
    /// Its type.
    pub memory_type: EpistemicType,
    /// Its temporal type.
    pub temporal_type: TemporalType,
    /// Its source.
    pub source_id: String,
    /// Its source's title.
    #[serde(default)]
    pub title: Option<String>,
    /// When it was written.
    pub t_valid: Option<i64>,
    /// When it was recorded.
    pub recorded_at: Option<i64>,
    /// Topic words.
    pub topic: Vec<String>,
    /// It says it updates something.
    pub update: bool,
    /// It says it is held up by something still open (never a question).
    #[serde(default)]
    pub blocked: bool,
    /// For a question: what it asks for.
    pub need: Option<AnswerKind>,
    /// What it carries, as an answer.
    pub carries: Vec<AnswerKind>,
    /// For a question: it is written as one (a question mark, "open question:", "TBD:"), not
    /// a risk or an issue the typer read as open.
    #[serde(default)]
    pub asks: bool,
    /// It states a choice on a matter (a `choice` claim): its supersession is judged by the
    /// claim timeline.
    #[serde(default)]
    pub chooses: bool,
    /// The entities it names: `(span start, entity id, kind)`, in text order.
    pub mentions: Vec<(u32, String, String)>,
    /// The identifiers it names in code spans, by key, sorted: read as the lifecycle rule
    /// reads them (`LifecycleRules::keys`), or by [`super::code::keys`] where it is off.
    #[serde(default)]
    pub identifiers: Vec<String>,
}

impl Facts {
    /// The subject of a claim of this statement whose value starts at `at`: the nearest entity
    /// named before it, preferring organisations, projects and products to topics and topics
    /// to people, else the first named after it. The dataflow knows more names than one source
    /// does (names learnt elsewhere in the tenant), so this can improve on the extractor's
    /// choice.
    ///
    /// ```
    /// use epigraph_operators::epistemic::Facts;
    /// let mut f: Facts = serde_json::from_str(r#"{"tenant":"t","id":"m","memory_type":"Evidence",
    ///   "temporal_type":"static","source_id":"s","t_valid":null,"recorded_at":null,"topic":[],
    ///   "update":false,"need":null,"carries":[],"mentions":[]}"#).unwrap();
    /// f.mentions = vec![(0, "churn".into(), "Topic".into()), (9, "bb".into(), "Organization".into())];
    /// assert_eq!(f.subject_at(30).as_deref(), Some("bb"));
    /// assert_eq!(f.subject_at(5).as_deref(), Some("churn"));
    /// ```
    pub fn subject_at(&self, at: u32) -> Option<String> {
        self.subject_mention(at).map(|(_, id, _)| id.clone())
    }

    /// The first entity this statement names within `span` that can own a matter (not a
    /// person, not a topic).
    ///
    /// ```
    /// use epigraph_operators::epistemic::Facts;
    /// let mut f: Facts = serde_json::from_str(r#"{"tenant":"t","id":"m","memory_type":"Decision",
    ///   "temporal_type":"static","source_id":"s","t_valid":null,"recorded_at":null,"topic":[],
    ///   "update":false,"need":null,"carries":[],"mentions":[]}"#).unwrap();
    /// f.mentions = vec![(10, "vesper".into(), "Project".into()), (30, "pricing".into(), "Topic".into())];
    /// assert_eq!(f.owner_within((0, 20)).as_deref(), Some("vesper"));
    /// assert_eq!(f.owner_within((25, 40)), None);
    /// // "Onyx" names a project and a team: the project owns the matter.
    /// f.mentions = vec![(10, "onyx-team".into(), "Team".into()), (10, "onyx".into(), "Project".into())];
    /// assert_eq!(f.owner_within((0, 20)).as_deref(), Some("onyx"));
    /// ```
    pub fn owner_within(&self, (start, end): (u32, u32)) -> Option<String> {
        self.mentions
            .iter()
            .filter(|(at, _, kind)| {
                *at >= start && *at < end && kind != "Person" && kind != "Topic"
            })
            .min_by_key(|(at, _, kind)| (owner_rank(kind), *at))
            .map(|(_, id, _)| id.clone())
    }

    /// The kind of an entity this statement names.
    pub fn kind_of(&self, entity: &str) -> Option<&str> {
        self.mentions
            .iter()
            .find(|(_, id, _)| id == entity)
            .map(|(_, _, kind)| kind.as_str())
    }

    fn subject_mention(&self, at: u32) -> Option<&(u32, String, String)> {
        let rank = |kind: &str| match kind {
            "Person" => 2,
            "Topic" => 1,
            _ => 0,
        };
        let before = self
            .mentions
            .iter()
            .filter(|(start, ..)| *start < at)
            .min_by_key(|(start, _, kind)| {
                // One name that fits a project and a team ("Vesper"): the project.
                (rank(kind), std::cmp::Reverse(*start), owner_rank(kind))
            });
        before.or_else(|| {
            self.mentions
                .iter()
                .filter(|(start, ..)| *start >= at)
                .min_by_key(|(start, _, kind)| (*start, owner_rank(kind)))
        })
    }
}

/// A crude singular: `owns` → `own`, `renewals` → `renewal`, `process` stays.
fn singular(word: &str) -> String {
    if word.len() > 3
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        word[..word.len() - 1].to_string()
    } else {
        word.to_string()
    }
}

/// `(shared, union)` of two sorted word lists, the words of `besides` removed from both.
fn overlap(a: &[String], b: &[String], besides: &[String]) -> (usize, usize) {
    let keep = |w: &&String| !besides.contains(w);
    let a: BTreeSet<&String> = a.iter().filter(keep).collect();
    let b: BTreeSet<&String> = b.iter().filter(keep).collect();
    let shared = a.intersection(&b).count();
    (shared, a.len() + b.len() - shared)
}

/// Whether a claim can be replaced by a newer one.
pub fn replaceable(temporal_type: TemporalType) -> bool {
    temporal_type == TemporalType::Dynamic
}
