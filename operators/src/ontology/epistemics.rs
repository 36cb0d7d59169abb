//! `[epistemics]`: how statements relate over time — supersession, contradiction, answered and
//! blocking questions, matters, boilerplate, restatements and citations.

use serde::{Deserialize, Serialize};

/// `[epistemics]`: how statements relate over time (see `ontology/epistemics.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EpistemicsSpec {
    /// Disagreeing claims of different sources within this many days contradict each other.
    pub contradiction_window_days: u32,
    /// Relative tolerance under which two numbers agree.
    pub tolerance: f64,
    /// Phrases that mark a statement as an update of earlier ones.
    pub update_cues: Vec<String>,
    /// Units whose later claim always replaces an earlier different one, cue or not (a later
    /// decision on the same matter is the organisation's current choice).
    #[serde(default)]
    pub latest_wins: Vec<String>,
    /// When two statements are on the same matter.
    pub matter: MatterSpec,
    /// Answering questions.
    pub answers: AnswersSpec,
    /// Statements held up by an open question.
    #[serde(default)]
    pub blocks: BlocksSpec,
    /// Claims compared across sources by the matter they are about, not only by a named subject.
    #[serde(default)]
    pub matters: MattersSpec,
    /// What many sources say in the same words takes part in no judgement.
    #[serde(default)]
    pub boilerplate: BoilerplateSpec,
    /// The same statement in two sources is linked to the earlier one.
    #[serde(default)]
    pub restated: RestatedSpec,
    /// The decisions, plans and constraints of a document that a later one's header replaces
    /// are superseded by the later one's statements on the same topic.
    #[serde(default)]
    pub replaced: ReplacedSpec,
    /// Statements citing another document with a relation ("builds on KEP-753").
    #[serde(default)]
    pub citations: Option<CitationsSpec>,
    /// Statements retiring something named by an identifier ("``syncdb`` is removed").
    #[serde(default)]
    pub lifecycle: Option<LifecycleSpec>,
    /// Statements revising a stated value: the versions of a platform supported, "increased
    /// from A to B".
    #[serde(default)]
    pub revisions: Option<RevisionsSpec>,
    /// What questions ask for.
    #[serde(default)]
    pub need: Vec<NeedSpec>,
}

/// `[epistemics.matter]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MatterSpec {
    /// Words ignored when comparing topics.
    pub ignore: Vec<String>,
    /// Shared topic words that make a matter.
    pub min_shared: usize,
    /// Jaccard overlap that makes a matter.
    pub min_jaccard: f64,
    /// Earlier statements compared per entity.
    pub max_lookback: usize,
    /// Only a statement that says it changes something ("instead of", "change of plan", …)
    /// supersedes an earlier decision or plan; without it, a later one on the same matter
    /// stands next to it.
    #[serde(default)]
    pub require_update_cue: bool,
}

/// `[epistemics.answers]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AnswersSpec {
    /// Later statements tried per question and entity.
    pub max_candidates: usize,
    /// Topic words a question and its answer share.
    pub min_shared: usize,
    /// Topic words a question and an answer from another source share (defaults to
    /// `min_shared`): another document shares a word with a question far more easily than the
    /// thread it was asked in.
    #[serde(default)]
    pub min_shared_across_sources: Option<usize>,
    /// How sure an answer must be to close the question (see
    /// [`crate::epistemic::judge::answer_confidence`]); below it the question stays open.
    /// 0 (the default) draws every answer the word rules allow.
    #[serde(default)]
    pub min_confidence: f64,
    /// The weight of an answer to a statement typed as a question that does not ask (no
    /// question mark, no "open question": a risk or an issue written as a sentence).
    #[serde(default = "whole")]
    pub unasked_weight: f64,
}

fn whole() -> f64 {
    1.0
}

/// `[epistemics.blocks]`: a statement that says it is held up ("blocked until", "on hold
/// pending", "waiting on") by an open question on its matter. Without the section nothing is
/// blocked.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BlocksSpec {
    /// Phrases saying the statement is held up.
    pub cues: Vec<String>,
    /// Topic words the question and the blocked statement share, besides the entity's own.
    pub min_shared: usize,
    /// Earlier statements of one entity tried, newest first, for one blocked statement.
    pub max_candidates: usize,
}

/// `[epistemics.matters]`: claims whose subject is not a named entity (a document's title stands
/// in for it) are also compared with the claims of other sources on the same attribute and unit
/// when their contexts (the statement's words, and the title's for an unnamed subject) share
/// at least `min_shared` words besides the attributes' own cue words ("€320K SAFE with a €2.2M
/// valuation cap" in "Term sheet summary (Fjord Ventures)" and "The seed round is €200K on a
/// SAFE at a €2.3M valuation cap, led by Fjord Ventures"). Two claims that each name a different
/// entity are never compared this way. Without the section (or with `enabled = false`) claims
/// meet only by subject.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MattersSpec {
    /// Whether claims are compared by matter at all.
    pub enabled: bool,
    /// Context words two claims must share, besides cue words.
    pub min_shared: usize,
    /// Earlier claims compared per blocking group (one attribute, unit and context word), newest
    /// first.
    pub max_lookback: usize,
}

impl Default for MattersSpec {
    fn default() -> Self {
        MattersSpec {
            enabled: false,
            min_shared: 2,
            max_lookback: 32,
        }
    }
}

/// `[epistemics.boilerplate]`: a statement whose normalised text, or whose field (a
/// `Field: value` line with a field of at least `min_field_words` words), is found in more than
/// `max_sources` sources of its tenant is a template's, and takes part in no judgement.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BoilerplateSpec {
    /// Whether boilerplate is recognised at all.
    pub enabled: bool,
    /// Sources a text or field may be in and still be an author's own.
    pub max_sources: usize,
    /// Words a field has at least to count as a form's field.
    pub min_field_words: usize,
}

impl Default for BoilerplateSpec {
    fn default() -> Self {
        BoilerplateSpec {
            enabled: false,
            max_sources: 3,
            min_field_words: 4,
        }
    }
}

/// `[epistemics.restated]`: a memory object whose normalised text is that of a memory object of
/// another, earlier source gets a `SAME_STATEMENT` edge to the earliest one, unless the text is
/// in more than `max_sources` sources (boilerplate) or has fewer than `min_words` words.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RestatedSpec {
    /// Whether restatements are linked at all.
    pub enabled: bool,
    /// Words a restated text has at least.
    pub min_words: usize,
    /// Sources a text may be in and still count as restated rather than boilerplate.
    pub max_sources: usize,
}

impl Default for RestatedSpec {
    fn default() -> Self {
        RestatedSpec {
            enabled: false,
            min_words: 6,
            max_sources: 3,
        }
    }
}

/// `[epistemics.replaced]`: when a document's header says it replaces another (`Supersedes:
/// ADR 001`, `Replaces: 241`, the older one's `Superseded-By: 345`), each decision, plan and
/// constraint of the older document is superseded by the statement of those kinds in the newer
/// one it shares most topic words with, at least `min_shared` (see `epistemic::replaced`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReplacedSpec {
    /// Whether a replacing document retires the statements of the one it replaces.
    pub enabled: bool,
    /// Topic words a statement of the newer document shares at least with the one it retires.
    pub min_shared: usize,
}

impl Default for ReplacedSpec {
    fn default() -> Self {
        ReplacedSpec {
            enabled: false,
            min_shared: 1,
        }
    }
}

/// `[epistemics.lifecycle]`: a statement that retires something it names by an identifier
/// (a code span: "The ``syncdb`` command is removed", "``on_delete`` … will be required")
/// supersedes the earlier statements of other sources that only name it, and one that carries
/// a change out implements the earlier one that announced it (see `epistemic::lifecycle`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LifecycleSpec {
    /// Whether such statements are judged at all.
    pub enabled: bool,
    /// Cues of a statement announcing a change of what it names ("is deprecated", "will be
    /// removed").
    pub announces: Vec<String>,
    /// Cues of a statement carrying a change out ("is removed", "is now required", "has been
    /// renamed").
    pub carries_out: Vec<String>,
    /// Cues of a statement cancelling an announced change ("is undeprecated", "the deprecation
    /// is reverted"): it supersedes the earlier announcement of what it names. It wins over
    /// both other stances ("is no longer deprecated").
    #[serde(default)]
    pub cancels: Vec<String>,
    /// Cues after which an identifier is the replacement, not what is retired ("in favor of",
    /// "replaced by").
    pub replacement: Vec<String>,
    /// Code spans that name no identifier (values: `True`, `None`).
    #[serde(default)]
    pub ignore: Vec<String>,
    /// Short names of modules and their full names (`["np", "numpy"]`): an identifier whose
    /// first dotted part is the short name is read with the full one (`np.rank` is
    /// `numpy.rank`).
    #[serde(default)]
    pub aliases: Vec<[String; 2]>,
    /// Characters an identifier's key has at least.
    pub min_length: usize,
    /// Earlier sources naming the identifier compared per retiring statement, newest first.
    pub max_lookback: usize,
    /// Characters at most between the end of a statement and the start of one continuing it
    /// ("The ``box`` parameter is unused. It will be removed."): a space, or a line break and
    /// a list item's indentation. Both must also sit in the same section.
    #[serde(default = "continuing_within")]
    pub continuing_within: u32,
    /// Whether a section heading that itself retires something ("``X`` is deprecated",
    /// underlined) speaks through the first statement under it.
    #[serde(default = "headings")]
    pub headings: bool,
    /// Sections whose heading says what their bare entries say (see [`SectionStances`]).
    #[serde(default)]
    pub sections: Option<SectionStances>,
}

/// `[epistemics.lifecycle.sections]`: release notes list what they deprecate and remove as bare
/// entries under a heading that says which ("Removals" › "Classes and methods" ›
/// "- ``legend.Legend.draggable`` (use ``set_draggable()`` instead)"). An entry — a statement of
/// at most `entry_words` words besides its code spans and parentheses, with no cue of its own —
/// says of the identifiers it names what the nearest enclosing heading with a cue says; a
/// heading that carries out wins over one that announces ("Removals" › "Deprecated APIs").
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SectionStances {
    /// Words of a heading announcing the changes listed under it ("Deprecations").
    pub announces: Vec<String>,
    /// Words of a heading carrying them out ("Removals", "Expired deprecations").
    pub carries_out: Vec<String>,
    /// Words of a heading cancelling announced changes ("Undeprecations").
    #[serde(default)]
    pub cancels: Vec<String>,
    /// Words at most, besides code spans and parenthesised asides, of an entry.
    pub entry_words: usize,
}

/// `[epistemics.revisions]`: a later statement that states another value of the same matter
/// supersedes the earlier ones (see `epistemic::revisions`): the versions of a platform a
/// product supports ("Django 3.0 supports Python 3.6, 3.7, 3.8") and a value changed "from A to
/// B" ("The default iteration count … is increased from 600,000 to 720,000").
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RevisionsSpec {
    /// Whether such statements are judged at all.
    pub enabled: bool,
    /// Platforms whose supported versions a statement can state (`Python`, `PostgreSQL`),
    /// matched as whole words, case-sensitively.
    pub platforms: Vec<String>,
    /// Cues of a statement about support ("supports", "requires", "minimum").
    pub support: Vec<String>,
    /// Cues of a statement that adds versions to those supported rather than stating all of
    /// them ("introduces support for Python 3.2"): it supersedes nothing.
    pub adds: Vec<String>,
    /// Cues of a statement announcing a change of support ("will drop support", "is the last
    /// release to support").
    pub announces: Vec<String>,
    /// Cues of a statement carrying one out ("has been dropped", "no longer supports").
    pub carries_out: Vec<String>,
    /// Verbs of a changed value: "<matter> is <verb> from A to B" (`increased`, `raised`).
    pub change_verbs: Vec<String>,
    /// Earlier sources compared per revising statement, newest first.
    pub max_lookback: usize,
}

/// `[epistemics.citations]`: a statement naming a document key (`KEP-753`, `PEP 8`, `ADR 004`,
/// a link into `keps/<sig>/753-…`) next to a cue of one of the edges gets that edge to the
/// statement of the cited document it shares most topic words with (see
/// `epistemic::citations`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CitationsSpec {
    /// Document families whose keys are recognised in text (`kep`, `pep`, `adr`, `rfc`).
    pub families: Vec<String>,
    /// Topic words the citing statement and the cited one must share.
    pub min_shared: usize,
    /// The edges, each with the cues that draw it.
    pub edge: Vec<CitationEdgeSpec>,
    /// The edge a reference without any cue draws to an earlier document of its family.
    #[serde(default)]
    pub uncued: Option<UncuedSpec>,
    /// The edge a statement extending an API object, option or component draws to the earlier
    /// document whose title names it.
    #[serde(default)]
    pub extensions: Option<ExtensionsSpec>,
}

/// `[epistemics.citations.extensions]`: a statement that says it extends something named by an
/// identifier ("a new field `minDomains` is introduced to `PodSpec.TopologySpreadConstraint`",
/// "a new `CPUManager` policy option") draws `edge` to the earliest earlier document whose title
/// names that identifier ("Pod Topology Spread", "CPU Manager"), without citing it by its key
/// (see `epistemic::extensions`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExtensionsSpec {
    /// The relationship type (an edge of `edges.toml`), usually `REFINES`.
    pub edge: String,
    /// Words that say a statement extends something by themselves ("introduces", "extends").
    pub verbs: Vec<String>,
    /// What "new" says is added when one of these follows it within three words ("a new
    /// `CPUManager` policy option", "a new field").
    pub new_things: Vec<String>,
    /// Words that name nothing by themselves (`pod`, `api`, `spec`): ignored when an identifier
    /// is compared with a title.
    pub generic: Vec<String>,
    /// Words before an identifier that compare with it rather than extend it ("analogous to").
    pub comparisons: Vec<String>,
    /// Words before an identifier that make it the statement's own new name ("called").
    pub naming: Vec<String>,
    /// A statement mentioning one of these is about a switch, not an extension ("feature gate").
    pub skip: Vec<String>,
    /// Words an identifier and a title must share (an identifier of one word may also be one of
    /// the words of a title of at most two).
    pub min_shared: usize,
}

/// `[epistemics.citations.uncued]`: a statement that names another document without saying how
/// it relates ("In #2232 we added a new flag …") draws `edge` to it when the cited document is
/// earlier than the citing one (a lower number of the same family). A later document cited
/// without a cue ("a separate KEP, #4438, will enable …") draws nothing.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UncuedSpec {
    /// The relationship type (an edge of `edges.toml`), usually `BASED_ON`.
    pub edge: String,
    /// Phrases that make the reference a contrast, not a ground ("Unlike PEP 343, …", "PEP 310
    /// uses 'with' instead"): a statement with one draws no uncued edge.
    #[serde(default)]
    pub contrasts: Vec<String>,
    /// Section headings under which a document says what it does not do or records its fate
    /// ("Non-Goals", "Rejection Notice"): a reference there is no ground, cued or not (no
    /// `edge` is drawn from it). Compared case-insensitively, without numbering or punctuation.
    #[serde(default)]
    pub aside_sections: Vec<String>,
    /// A section whose heading is a question ("How can this feature be enabled / disabled in a
    /// live cluster?", "FAQ: why not use admission controllers?": a questionnaire or an FAQ)
    /// is aside too.
    #[serde(default)]
    pub question_sections: bool,
}

/// `[[epistemics.citations.edge]]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CitationEdgeSpec {
    /// The relationship type (an edge of `edges.toml`).
    pub name: String,
    /// Phrases that say how the statement relates to what it cites.
    pub cues: Vec<String>,
    /// The edge runs from the cited document's statement to the citing one ("once KEP-753
    /// lands, …": KEP-753 `PRECEDES` this); by default from the citing statement.
    #[serde(default)]
    pub cited_first: bool,
}

/// `[[epistemics.need]]`: what a question asks for.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NeedSpec {
    /// Name, e.g. `owner`.
    pub name: String,
    /// Phrases of the question that reveal the need.
    pub cues: Vec<String>,
    /// What an answer carries.
    pub answer: AnswerKind,
}

/// What an answer must carry.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerKind {
    /// It names a person.
    Person,
    /// It has a date claim.
    Date,
    /// It has a money claim.
    Amount,
    /// It contains a digit.
    Number,
    /// Any statement that is not a question.
    Statement,
}

/// A space, or a line break and up to eleven characters of indentation.
fn continuing_within() -> u32 {
    12
}

fn headings() -> bool {
    true
}
