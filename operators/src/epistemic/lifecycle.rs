//! Statements that change the standing of something named by an identifier: "The ``syncdb``
//! command is removed.", "``syncdb`` has been deprecated and replaced by ``migrate``.", "The
//! ``on_delete`` argument … is now required", "`legacy-billing` is no longer supported".
//!
//! Release notes, changelogs and engineering updates say what replaces what against the name of
//! the thing itself, in a later document that never cites the earlier one and shares no claim
//! subject with it. Such a statement *retires* each identifier it names before a replacement
//! marker ("in favor of ``migrate``", "renamed to", "replaced by"): a code span (``` ``x`` ```,
//! `` `x` ``, a reStructuredText or Sphinx role ``:attr:`~a.B.c` ``, ``:py:meth:`x` ``), or a
//! product named bare after "support for" ("Support for PyQt5 and PySide2 has been removed";
//! one followed by a version is left to [`super::revisions`]), grouped by its last dotted part
//! without call parentheses (`django.conf.urls.url()` → `url`); two paths of one key name the
//! same thing when the shorter ends the longer (`url`, `urls.url`; not `eggs.Loader` and
//! `filesystem.Loader`). Only its subject is retired: not an identifier qualifying another
//! ("the ``on_delete`` argument *of* ``ForeignKey``").
//!
//! A retiring statement either **announces** a change (`announces`: "is deprecated", "will be
//! removed", "will be required") or **carries one out** (`carries_out`: "is removed", "is now
//! required", "is no longer supported", "has been renamed"). Against every earlier statement of
//! another source naming the same identifier (the newest `max_lookback` such sources):
//! - an earlier statement that only names it (introduces, describes, uses it) is **superseded**:
//!   `SUPERSEDES` from the retiring statement, the first such statement of that source;
//! - an earlier statement that announced a change is **implemented** by one that carries a
//!   change out: `IMPLEMENTS` (the announcement is not superseded: it came true), and that source
//!   gets no `SUPERSEDES` from it;
//! - two announcements draw nothing (a restatement);
//! - a statement carrying a change out again, against an earlier source that only carried it
//!   out (no announcement, no mere naming there), **supersedes** that statement: the change was
//!   undone in between ("``PILLOW_VERSION`` has been removed" in 7.0, re-added in 7.1, removed
//!   again in 9.0), so the earlier one no longer says how things stand;
//! - a statement that **cancels** an announced change (`cancels`: "is undeprecated", "the
//!   deprecation is reverted") supersedes the announcement.
//!
//! A statement that continues the one right before it in its section ("The ``box`` parameter is
//! unused. *It will be removed* in Pillow 10.0.0.": it opens with "It" or "They" and names
//! nothing itself) says what it says of that statement's first identifier.
//!
//! A statement that opens with an ellipsis finishes its heading's sentence ("``stem(...,
//! use_line_collection=False)``", then "... is no longer supported."): it says what it says of
//! the heading's identifiers ([`LifecycleRules::finishing`]).
//!
//! A section whose heading itself retires something (matplotlib's "``epoch2num`` and
//! ``num2epoch`` are deprecated", underlined, then "These are unused …") says it through its
//! first statement: that statement names what the heading names, as the heading says it.
//!
//! The entries listed right after a statement that leads them in with a colon and a cue ("Several
//! methods … have been removed in this release:", then "* ``Image.fromstring()``") say what it
//! says ([`LifecycleRules::lead_in`]).
//!
//! A bare entry of a list of identifiers ("- ``legend.Legend.draggable`` (use
//! ``set_draggable()`` instead)": a few words besides its code spans and asides, no cue of its
//! own) says what the headings above it say (`[epistemics.lifecycle.sections]`): under
//! "Removals" it carries out, under "Deprecations" it announces ([`LifecycleRules::said_under`],
//! reading the memory object's outline of headings).
//!
//! Everything is a function of the statements of one source and then of the statements naming
//! one identifier, so an edit or a delete retracts exactly what it caused.

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use regex::Regex;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use super::code::CODE_SPAN;
use super::earlier;
use super::judge::{Link, LinkKind};
use super::rules::Rules;
use crate::extract::cues::CueSet;
use crate::model::{EpistemicType, MemoryObject};
use crate::ontology::{LifecycleSpec, OntologyError};

mod entries;

use entries::{Sections, as_entry};

/// `[epistemics.lifecycle]`, compiled.
#[derive(Clone, Debug)]
pub struct LifecycleRules {
    announces: CueSet,
    carries_out: CueSet,
    cancels: CueSet,
    replacement: CueSet,
    ignore: BTreeSet<String>,
    aliases: Vec<(String, String)>,
    min_length: usize,
    max_lookback: usize,
    /// Characters at most between a statement continuing the one before it and that one.
    continuing_within: u32,
    /// Whether a retiring section heading speaks through its first statement.
    headings: bool,
    /// Headings whose bare entries say what they say (`[epistemics.lifecycle.sections]`).
    sections: Option<Sections>,
}

/// What a statement says of an identifier it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Stance {
    /// It only names it.
    Names,
    /// It announces a change ("is deprecated", "will be removed").
    Announces,
    /// It carries a change out ("is removed", "is now required").
    CarriesOut,
    /// It cancels an announced change ("is undeprecated", "the deprecation is reverted").
    Cancels,
}

/// One statement naming one identifier.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Naming {
    /// When the statement was written (first: the input of a group is sorted by it).
    pub t_valid: Option<i64>,
    /// Its source.
    pub source_id: String,
    /// Where it starts in its source.
    pub start: u32,
    /// The memory object.
    pub memory_id: String,
    /// The identifier's path as this statement writes it (`django.conf.urls.url`).
    pub path: String,
    /// What it says of the identifier.
    pub stance: Stance,
    /// The cue that says it ("is removed"), empty when it only names it.
    pub cue: String,
    /// When it was recorded.
    pub recorded_at: Option<i64>,
}

earlier::said_by_fields!(Naming);

/// One statement of a source as the lifecycle reads it (only those naming an identifier or
/// continuing the statement before them): in reading order, first by where it starts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
struct Read {
    start: u32,
    end: u32,
    section: Option<String>,
    memory_id: String,
    t_valid: Option<i64>,
    recorded_at: Option<i64>,
    said: Said,
    /// What its section's heading says, when the heading itself retires something ("``X``
    /// and ``Y`` are deprecated", underlined, then prose that names neither).
    heading: Option<Said>,
    /// What it says of the entries listed right after it, when it leads them in ("Several
    /// methods … have been removed in this release:").
    lead_in: Option<(Stance, String)>,
    /// When it is a bare entry that says nothing itself: the identifiers it lists (not those
    /// of its asides), which take what a lead-in before it says.
    entry: Vec<String>,
}

/// What a statement says of identifiers ([`LifecycleRules::said`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Said {
    /// The identifiers it names, by path, each with what it says of it and the cue that says it.
    pub named: Vec<(String, Stance, String)>,
    /// When it names none and opens with "It" or "They": what it says of the first identifier
    /// of the statement right before it, and the cue that says it.
    pub continuing: Option<(Stance, String)>,
}

/// Products named bare, listed with commas, "and", "or" (`PyQt5 and PySide2`), up to a version:
/// a name is capitalised, and one followed by a version is a platform's version ("Python 3.8"),
/// read by the revisions rule, not here.
const NAMES: &str = r"([A-Z][\w+-]*(?:\.[\w+-]+)*(?:(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)[A-Z][\w+-]*(?:\.[\w+-]+)*)*)(\s+v?\d)?";

/// Products named bare after "support for": "Support for PyQt5 and PySide2 has been removed
/// from ``ImageQt``".
static SUPPORTED_NAMES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"\b[Ss]upport\s+for\s+{NAMES}"))
        .expect("the supported names pattern compiles")
});

/// Products named bare right after a replacement cue: "Please upgrade to PyQt5 or PySide2."
static NAMES_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^\s+{NAMES}")).expect("the names-after pattern compiles")
});

/// A separator of the names in [`SUPPORTED_NAMES`].
static NAME_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
        .expect("the name list pattern compiles")
});

/// Words before an identifier that make it qualify another ("the argument *of* ``ForeignKey``",
/// "a 3-tuple (*including* ``admin.site.urls``)").
const QUALIFYING: [&str; 11] = [
    "of",
    "to",
    "in",
    "on",
    "from",
    "by",
    "with",
    "into",
    "within",
    "inside",
    "including",
];
/// Pronouns that open a statement continuing the one before it ([`LifecycleRules::continuing`]).
const CONTINUING: [&str; 2] = ["it", "they"];
/// Articles between such a word and the identifier.
const ARTICLES: [&str; 3] = ["the", "a", "an"];
/// Words (and a comma) before an identifier listed with the one before it.
const LISTING: [&str; 4] = ["and", "or", ",", "nor"];

/// Words before an identifier (and an article) that list it with the statement's subject, though
/// they end with a qualifying word: "… are deprecated, *along with* the ``axes.hold`` rcParam".
const LISTED_WITH: [&str; 5] = [
    "along with",
    "together with",
    "alongside",
    "alongside with",
    "as well as",
];

/// The text before an identifier, lower-cased, without a trailing article ("… of the").
fn before_article(before: &str) -> String {
    let lower = before.to_lowercase();
    let lower = lower.trim_end();
    ARTICLES
        .iter()
        .find_map(|article| {
            lower
                .strip_suffix(article)
                .filter(|rest| rest.ends_with(' '))
                .map(str::trim_end)
        })
        .unwrap_or(lower)
        .to_string()
}

/// Whether the text before an identifier ends with a phrase of [`LISTED_WITH`] (and an
/// article).
fn listed_with(before: &str) -> bool {
    let lower = before_article(before);
    LISTED_WITH.iter().any(|phrase| {
        lower
            .strip_suffix(phrase)
            .is_some_and(|rest| rest.is_empty() || rest.ends_with([' ', ',', '(']))
    })
}

/// Whether the text before an identifier ends with the cue (and an article): the identifier is
/// what the cue is said of ("Deprecation of the ``nbagg.transparent`` rcParam").
fn object_of(before: &str, cue: &str) -> bool {
    let cue = cue.trim_start_matches(['-', '*', ' ']);
    if cue.is_empty() {
        return false;
    }
    let lower = before_article(before);
    lower.ends_with(cue)
}

/// The last two words before an identifier, lower-cased, a trailing comma its own word.
fn last_words(before: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in before.split_whitespace().rev() {
        if words.len() >= 2 {
            break;
        }
        let lower = word.to_lowercase();
        if let Some(stem) = lower.strip_suffix(',') {
            words.push(",".into());
            if words.len() < 2 && !stem.is_empty() {
                words.push(
                    stem.trim_matches(|c: char| !c.is_alphanumeric())
                        .to_string(),
                );
            }
        } else {
            words.push(
                lower
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_string(),
            );
        }
    }
    words.reverse();
    words
}

pub use super::code::key;

/// Whether two paths of one key can name the same thing: the shorter one's parts end the
/// longer one's (`url` and `django.conf.urls.url`, not `eggs.Loader` and `filesystem.Loader`).
///
/// ```
/// use epigraph_operators::epistemic::lifecycle::same_thing;
/// assert!(same_thing("url", "django.conf.urls.url"));
/// assert!(same_thing("ForeignKey.on_delete", "django.db.models.ForeignKey.on_delete"));
/// assert!(!same_thing("eggs.Loader", "filesystem.Loader"));
/// ```
pub fn same_thing(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long == short || long.ends_with(&format!(".{short}"))
}

impl LifecycleRules {
    /// Compiles the spec.
    pub fn new(spec: &LifecycleSpec) -> Result<Self, OntologyError> {
        let cues = |list: &[String]| {
            CueSet::new(list)
                .map_err(|err| OntologyError::Invalid(format!("[epistemics.lifecycle] {err}")))
        };
        Ok(LifecycleRules {
            announces: cues(&spec.announces)?,
            carries_out: cues(&spec.carries_out)?,
            cancels: cues(&spec.cancels)?,
            replacement: cues(&spec.replacement)?,
            ignore: spec.ignore.iter().map(|w| w.to_lowercase()).collect(),
            aliases: spec
                .aliases
                .iter()
                .map(|[alias, name]| (alias.clone(), name.clone()))
                .collect(),
            min_length: spec.min_length,
            max_lookback: spec.max_lookback,
            continuing_within: spec.continuing_within,
            headings: spec.headings,
            sections: match &spec.sections {
                Some(sections) => Some(Sections {
                    announces: cues(&sections.announces)?,
                    carries_out: cues(&sections.carries_out)?,
                    cancels: cues(&sections.cancels)?,
                    entry_words: sections.entry_words,
                }),
                None => None,
            },
        })
    }

    /// The path of a code span's text, if it names an identifier: its dotted parts without
    /// call parentheses, a leading `~` or a role's text before its `<target>`. Its key (what
    /// statements are grouped by) is the last part, which has at least `min_length` characters.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// assert_eq!(lifecycle.path("django.conf.urls.url()").as_deref(), Some("django.conf.urls.url"));
    /// assert_eq!(lifecycle.path("~django.db.models.ForeignKey.on_delete").as_deref(), Some("django.db.models.ForeignKey.on_delete"));
    /// assert_eq!(lifecycle.path("the display <Model.display>").as_deref(), Some("Model.display"));
    /// // A known alias of a module is its name.
    /// assert_eq!(lifecycle.path("np.rank").as_deref(), Some("numpy.rank"));
    /// // A snippet, a value and a short name are no identifiers.
    /// assert_eq!(lifecycle.path("{% load url from future %}"), None);
    /// assert_eq!(lifecycle.path("True"), None);
    /// assert_eq!(lifecycle.path("id"), None);
    /// ```
    pub fn path(&self, span: &str) -> Option<String> {
        let span = super::code::identifier(span)?;
        let key = key(span);
        if key.chars().count() < self.min_length || self.ignore.contains(&key.to_lowercase()) {
            return None;
        }
        // A known alias of the first part is written as its name: `np.rank` is `numpy.rank`.
        let (first, rest) = span.split_once('.').unwrap_or((span, ""));
        Some(
            match self.aliases.iter().find(|(alias, _)| alias == first) {
                Some((_, name)) if !rest.is_empty() => format!("{name}.{rest}"),
                _ => span.to_string(),
            },
        )
    }

    /// What a statement says, whatever it names: that it cancels an announced change (which wins:
    /// "is no longer deprecated"), carries one out (which wins over announcing: "is deprecated
    /// and removed"), announces one, or only names, with the cue that says it.
    ///
    /// ```
    /// use epigraph_operators::epistemic::lifecycle::Stance;
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// let stance = |text: &str| lifecycle.stance_of(text).0;
    /// assert_eq!(stance("Setting the pickradius via ``set_picker`` is undeprecated"), Stance::Cancels);
    /// assert_eq!(stance("The following API elements have been un-deprecated:"), Stance::Cancels);
    /// assert_eq!(stance("``getnnz`` is no longer deprecated."), Stance::Cancels);
    /// assert_eq!(stance("Revert deprecation of ``set_zlim3d`` keyword arguments"), Stance::Cancels);
    /// assert_eq!(stance("This cancels the deprecation introduced in Matplotlib 3.3.0."), Stance::Cancels);
    /// assert_eq!(stance("MAINT: sparse: Un-deprecate getnnz()"), Stance::Cancels);
    /// assert_eq!(stance("``getnnz`` was deprecated and has been removed."), Stance::CarriesOut);
    /// assert_eq!(stance("``getnnz`` is deprecated."), Stance::Announces);
    /// ```
    pub fn stance_of(&self, text: &str) -> (Stance, String) {
        // "There is no longer a type error …": the cue's subject is what follows, not a name.
        let said_of_something = |m: &crate::extract::cues::CueMatch| {
            !text[..m.start].trim_end().to_lowercase().ends_with("there")
        };
        let announced: Vec<_> = self
            .announces
            .find_all(text)
            .into_iter()
            .filter(said_of_something)
            .collect();
        let carried: Vec<_> = self
            .carries_out
            .find_all(text)
            .into_iter()
            .filter(said_of_something)
            .collect();
        let cancelled: Vec<_> = self.cancels.find_all(text);
        let first_cue = |found: &[crate::extract::cues::CueMatch]| {
            found
                .iter()
                .min_by_key(|m| m.start)
                .map(|m| text[m.start..m.end].to_lowercase())
        };
        // Cancelling wins ("is no longer deprecated" is no change carried out), and carrying
        // out wins over announcing: "is deprecated and removed".
        if let Some(cue) = first_cue(&cancelled) {
            return (Stance::Cancels, cue);
        }
        match (first_cue(&carried), first_cue(&announced)) {
            (Some(cue), _) => (Stance::CarriesOut, cue),
            (None, Some(cue)) => (Stance::Announces, cue),
            (None, None) => (Stance::Names, String::new()),
        }
    }

    /// What a statement continuing the one before it says of that one's subject: it opens with
    /// "It" or "They", names no identifier itself, and announces or carries out a change ("The
    /// ``box`` parameter is unused. *It will be removed* in Pillow 10.0.0.").
    ///
    /// ```
    /// use epigraph_operators::epistemic::lifecycle::Stance;
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// assert_eq!(
    ///     lifecycle.continuing("It will be removed in Pillow 10.0.0 (2023-07-01)."),
    ///     Some((Stance::Announces, "will be removed".to_string())),
    /// );
    /// assert_eq!(
    ///     lifecycle.continuing("They have been removed."),
    ///     Some((Stance::CarriesOut, "have been removed".to_string())),
    /// );
    /// // It names its own subject, says nothing of a change, or opens otherwise: no.
    /// assert_eq!(lifecycle.continuing("It replaces ``syncdb``, which is removed."), None);
    /// assert_eq!(lifecycle.continuing("It is unused."), None);
    /// assert_eq!(lifecycle.continuing("Italy will be removed."), None);
    /// ```
    pub fn continuing(&self, text: &str) -> Option<(Stance, String)> {
        self.said(text).continuing
    }

    /// What a statement says: of the identifiers it names ([`Self::named`]) and, when it
    /// continues the statement before it, of that one's ([`Self::continuing`]). Its stance and
    /// code spans are read once for both.
    pub fn said(&self, text: &str) -> Said {
        let (stance, cue) = self.stance_of(text);
        let named = self.named_as(text, stance, &cue);
        let opens_continuing = text
            .split_whitespace()
            .next()
            .is_some_and(|first| CONTINUING.contains(&first.to_lowercase().as_str()));
        let continuing = (opens_continuing && named.is_empty() && stance != Stance::Names)
            .then_some((stance, cue));
        Said { named, continuing }
    }

    /// What a statement that opens with an ellipsis says of its heading's identifiers: a
    /// heading that names the thing ("``stem(..., use_line_collection=False)``", underlined)
    /// and a first statement that finishes the sentence ("... is no longer supported."). Only
    /// when the statement names nothing itself and announces or carries out a change.
    ///
    /// ```
    /// use epigraph_operators::epistemic::lifecycle::Stance;
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// let heading = "``stem(..., use_line_collection=False)``";
    /// assert_eq!(
    ///     lifecycle.finishing(heading, "... is no longer supported. This was a fallback."),
    ///     [("use_line_collection".to_string(), Stance::CarriesOut, "is no longer".to_string())]
    /// );
    /// assert!(lifecycle.finishing(heading, "... behaves as before.").is_empty());
    /// // Section titles lose the backticks of a heading that was one code span.
    /// assert_eq!(
    ///     lifecycle.finishing("stem(..., use_line_collection=False)", "... is deprecated.")[0].0,
    ///     "use_line_collection"
    /// );
    /// assert!(lifecycle.finishing("Positional arguments", "... is deprecated.").is_empty());
    /// assert!(lifecycle.finishing(heading, "It is no longer supported.").is_empty());
    /// ```
    pub fn finishing(&self, heading: &str, text: &str) -> Vec<(String, Stance, String)> {
        let text = text.trim_start();
        if !(text.starts_with("...") || text.starts_with('…')) {
            return Vec::new();
        }
        let (stance, cue) = self.stance_of(text);
        if stance == Stance::Names || !self.named_as(text, stance, &cue).is_empty() {
            return Vec::new();
        }
        let named: Vec<String> = self
            .named_as(heading, stance, &cue)
            .into_iter()
            .map(|(path, _, _)| path)
            .collect();
        // A heading that was one code span reaches here without its backticks.
        let named = if named.is_empty() {
            self.path(heading.trim()).into_iter().collect()
        } else {
            named
        };
        named
            .into_iter()
            .map(|path| (path, stance, cue.clone()))
            .collect()
    }

    /// The identifiers a text names in code spans, each by its [`key`] lower-cased, read as
    /// [`Self::path`] reads a span (values and short names are none): what the matter judge
    /// compares two statements on, so that it and this rule agree on what one identifier is.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// assert_eq!(lifecycle.keys("``np.rank`` is deprecated; pass ``True`` or ``id``"), ["rank"]);
    /// assert_eq!(lifecycle.keys("the ``Image.open()`` and ``image.Open`` functions"), ["open"]);
    /// ```
    pub fn keys(&self, text: &str) -> Vec<String> {
        let keys: std::collections::BTreeSet<String> = super::code::spans(text)
            .filter_map(|span| self.path(span))
            .map(|path| key(&path).to_lowercase())
            .collect();
        keys.into_iter().collect()
    }

    /// The identifiers a statement names, by path, each with what it says of it and the cue
    /// that says it (see the module docs). A retiring statement retires the identifiers that
    /// are its subject: not those after a replacement cue ("in favor of ``migrate``"), nor
    /// those that qualify another, after a preposition ("the ``on_delete`` argument of
    /// ``ForeignKey``"), before a possessive ("``url()``'s support for inline flags") or right
    /// before another identifier ("the `numpy.histogram` ``normed`` argument"), nor those
    /// listed with such a one.
    ///
    /// ```
    /// use epigraph_operators::epistemic::lifecycle::Stance;
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// let said = |text: &str| -> Vec<(String, Stance)> {
    ///     lifecycle.named(text).into_iter().map(|(path, stance, _)| (path, stance)).collect()
    /// };
    /// let s = |path: &str, stance| (path.to_string(), stance);
    /// assert_eq!(said("The ``syncdb`` command is removed."), [s("syncdb", Stance::CarriesOut)]);
    /// assert_eq!(
    ///     said("The ``syncdb`` command has been deprecated in favor of the new :djadmin:`migrate` command."),
    ///     [s("syncdb", Stance::Announces), s("migrate", Stance::Names)],
    /// );
    /// assert_eq!(
    ///     said("The ``on_delete`` argument of ``ForeignKey`` and ``OneToOneField`` will be required."),
    ///     [s("on_delete", Stance::Announces), s("ForeignKey", Stance::Names), s("OneToOneField", Stance::Names)],
    /// );
    /// assert_eq!(said("Support for ``allow_syncdb`` on database routers is removed."), [s("allow_syncdb", Stance::CarriesOut)]);
    /// assert_eq!(said("``url()``'s support for inline flags is deprecated."), [s("url", Stance::Names)]);
    /// assert_eq!(
    ///     said("The `numpy.histogram` ``normed`` argument is deprecated."),
    ///     [s("numpy.histogram", Stance::Names), s("normed", Stance::Announces)],
    /// );
    /// assert_eq!(
    ///     said("Support for passing a 3-tuple (including ``admin.site.urls``) to ``include()`` is removed."),
    ///     [s("admin.site.urls", Stance::Names), s("include", Stance::Names)],
    /// );
    /// assert_eq!(said("``syncdb`` now queries the database routers."), [s("syncdb", Stance::Names)]);
    /// // A Sphinx domain's role qualifies like any other identifier.
    /// assert_eq!(
    ///     said("The undocumented ``fill`` parameter of :py:meth:`.FreeTypeFont.getmask2` has been removed."),
    ///     [s("fill", Stance::CarriesOut), s("FreeTypeFont.getmask2", Stance::Names)],
    /// );
    /// assert_eq!(
    ///     said("There is no longer a type error thrown when ``numpy.einsum`` is passed an array."),
    ///     [s("numpy.einsum", Stance::Names)],
    /// );
    /// // Products named bare after "support for"; not a platform's version.
    /// assert_eq!(
    ///     said("Support for PyQt5 and PySide2 has been removed from ``ImageQt``."),
    ///     [s("ImageQt", Stance::Names), s("PyQt5", Stance::CarriesOut), s("PySide2", Stance::CarriesOut)],
    /// );
    /// assert_eq!(said("Support for Python 3.8 has been dropped."), []);
    /// assert_eq!(
    ///     said("Please upgrade to PyQt5 or PySide2."),
    ///     [s("PyQt5", Stance::Names), s("PySide2", Stance::Names)],
    /// );
    /// // Written verb first: a changelog's entry, a pull request's title.
    /// assert_eq!(said("- Removed ``stats.itemfreq``."), [s("stats.itemfreq", Stance::CarriesOut)]);
    /// assert_eq!(said("MAINT: remove ``misc.imread``"), [s("misc.imread", Stance::CarriesOut)]);
    /// assert_eq!(said("Remove ``syncdb`` from your scripts."), [s("syncdb", Stance::Names)]);
    /// // Negated: no change.
    /// assert_eq!(said("The ``url`` tag will not be removed."), [s("url", Stance::Names)]);
    /// // Adverbs inside the verb; a cross-reference names no identifier.
    /// assert_eq!(
    ///     said("Setting ``hold`` (:ref:`deprecated in version 2.0<v200_deprecate_hold>`) has now been completely removed."),
    ///     [s("hold", Stance::CarriesOut)],
    /// );
    /// assert_eq!(said("``plot_date`` is now formally deprecated."), [s("plot_date", Stance::Announces)]);
    /// // What the cue itself is said of.
    /// assert_eq!(
    ///     said("Deprecation of the ``nbagg.transparent`` rcParam."),
    ///     [s("nbagg.transparent", Stance::Announces)],
    /// );
    /// // Listed with the subject, though after "with".
    /// assert_eq!(
    ///     said("The 'hold' argument is deprecated, along with the ``axes.hold`` rcParams entry."),
    ///     [s("axes.hold", Stance::Announces)],
    /// );
    /// assert_eq!(said("Use ``foo`` together with ``bar``."), [s("foo", Stance::Names), s("bar", Stance::Names)]);
    /// ```
    pub fn named(&self, text: &str) -> Vec<(String, Stance, String)> {
        let (stance, cue) = self.stance_of(text);
        self.named_as(text, stance, &cue)
    }

    /// [`Self::named`], with the statement's stance and cue already read.
    fn named_as(&self, text: &str, stance: Stance, cue: &str) -> Vec<(String, Stance, String)> {
        let replaced_from = self
            .replacement
            .find_all(text)
            .into_iter()
            .map(|m| m.start)
            .min()
            .unwrap_or(usize::MAX);
        let mut out: Vec<(String, Stance, String)> = Vec::new();
        // Whether the last identifier was a subject (one listed after it shares its role).
        let mut subject = true;
        for captures in CODE_SPAN.captures_iter(text) {
            let (Some(whole), Some(span)) =
                (captures.get(0), captures.get(1).or_else(|| captures.get(2)))
            else {
                continue;
            };
            if super::code::is_reference(whole.as_str()) {
                continue;
            }
            let Some(path) = self.path(span.as_str()) else {
                continue;
            };
            let before = &text[..whole.start()];
            let after = &text[whole.end()..];
            subject = match last_words(before).as_slice() {
                // The object of the cue itself: "Deprecation of the ``x`` rcParam."
                _ if object_of(before, cue) => true,
                // Listed with the subject: "…, along with the ``axes.hold`` rcParam".
                _ if listed_with(before) => true,
                [.., w] if LISTING.contains(&w.as_str()) => subject,
                [.., w] if QUALIFYING.contains(&w.as_str()) => false,
                [.., w, article]
                    if QUALIFYING.contains(&w.as_str()) && ARTICLES.contains(&article.as_str()) =>
                {
                    false
                }
                _ => true,
            } && !after.starts_with("'s")
                // A compound noun's modifier: "the `numpy.histogram` ``normed`` argument".
                && !after.trim_start_matches(' ').starts_with('`');
            let said = if stance != Stance::Names && subject && whole.start() < replaced_from {
                (stance, cue.to_string())
            } else {
                (Stance::Names, String::new())
            };
            match out.iter_mut().find(|(p, ..)| *p == path) {
                // Named twice: what it says of it the first time it retires it counts.
                Some(seen) if seen.1 == Stance::Names && said.0 != Stance::Names => {
                    (seen.1, seen.2) = said;
                }
                Some(_) => {}
                None => out.push((path, said.0, said.1)),
            }
        }
        // Products named bare after "support for": subjects of the statement like the code
        // spans before its replacement cue. Those named right after a replacement cue ("upgrade
        // to PyQt5") are the replacement: named.
        let after_replacement = self
            .replacement
            .find_all(text)
            .into_iter()
            .filter_map(|m| NAMES_AFTER.captures(&text[m.end..]).map(|c| (c, m.end)))
            .collect::<Vec<_>>();
        let bare = SUPPORTED_NAMES
            .captures_iter(text)
            .map(|c| (c, 0))
            .chain(after_replacement);
        for (captures, offset) in bare {
            let (Some(names), None) = (captures.get(1), captures.get(2)) else {
                continue;
            };
            let said = if stance != Stance::Names && offset + names.start() < replaced_from {
                (stance, cue.to_string())
            } else {
                (Stance::Names, String::new())
            };
            for name in NAME_LIST.split(names.as_str()) {
                let Some(path) = self.path(name) else {
                    continue;
                };
                match out.iter_mut().find(|(p, ..)| *p == path) {
                    Some(seen) if seen.1 == Stance::Names && said.0 != Stance::Names => {
                        (seen.1, seen.2) = said.clone();
                    }
                    Some(_) => {}
                    None => out.push((path, said.0, said.1.clone())),
                }
            }
        }
        out
    }

    /// The links between the statements naming one identifier (see the module docs); `namings`
    /// sorted by valid time.
    ///
    /// ```
    /// use epigraph_operators::epistemic::{judge::LinkKind, lifecycle::{Naming, Stance}};
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// let naming = |id: &str, day: i64, stance: Stance, cue: &str| Naming {
    ///     t_valid: Some(day), source_id: format!("notes-{day}"), start: 0, memory_id: id.into(),
    ///     path: "syncdb".into(), stance, cue: cue.into(), recorded_at: None,
    /// };
    /// let namings = [
    ///     naming("described", 1, Stance::Names, ""),
    ///     naming("deprecated", 2, Stance::Announces, "has been deprecated"),
    ///     naming("removed", 3, Stance::CarriesOut, "is removed"),
    /// ];
    /// let links = lifecycle.links("t", "syncdb", &namings);
    /// let links: Vec<(LinkKind, &str, &str)> =
    ///     links.iter().map(|l| (l.kind, l.from.as_str(), l.to.as_str())).collect();
    /// assert_eq!(links, [
    ///     (LinkKind::Supersedes, "deprecated", "described"),
    ///     (LinkKind::Implements, "removed", "deprecated"),
    ///     (LinkKind::Supersedes, "removed", "described"),
    /// ]);
    /// // Removed, put back (said elsewhere), removed again: the first removal no longer holds.
    /// let namings = [
    ///     naming("removed", 1, Stance::CarriesOut, "has been removed"),
    ///     naming("again", 3, Stance::CarriesOut, "has been removed"),
    /// ];
    /// let links = lifecycle.links("t", "syncdb", &namings);
    /// assert_eq!((links[0].kind, links[0].from.as_str(), links[0].to.as_str()),
    ///     (LinkKind::Supersedes, "again", "removed"));
    /// ```
    pub fn links(&self, tenant: &str, key: &str, namings: &[Naming]) -> Vec<Link> {
        let mut out = Vec::new();
        for (at, later) in namings.iter().enumerate() {
            if later.stance == Stance::Names || later.t_valid.is_none() {
                continue;
            }
            // The earlier statements of each other source, newest sources first.
            let met = earlier::by_source(
                namings,
                at,
                |earlier| same_thing(&earlier.path, &later.path),
                self.max_lookback,
            );
            for namings in met {
                let first = |stance: Stance| earlier::first(&namings, |n| n.stance == stance);
                let announced = first(Stance::Announces);
                // What a later change supersedes: a statement that only named it, or one that
                // cancelled an earlier change of it (it is changed after all).
                let named = first(Stance::Names).or_else(|| first(Stance::Cancels));
                let (kind, to, why) = match (later.stance, announced, named) {
                    // A cancelled change: the announcement no longer holds.
                    (Stance::Cancels, Some(announced), _) => (
                        LinkKind::Supersedes,
                        announced,
                        format!(
                            "`{key}`: announced (\"{}\"), later cancelled (\"{}\")",
                            announced.cue, later.cue
                        ),
                    ),
                    // Nothing announced: nothing to cancel.
                    (Stance::Cancels, None, _) => continue,
                    (Stance::CarriesOut, Some(announced), _) => (
                        LinkKind::Implements,
                        announced,
                        format!(
                            "`{key}`: announced (\"{}\") and carried out (\"{}\")",
                            announced.cue, later.cue
                        ),
                    ),
                    (_, None, Some(named)) => (
                        LinkKind::Supersedes,
                        named,
                        format!("`{key}`: named here, later \"{}\"", later.cue),
                    ),
                    // Carried out again: the earlier change was undone in between ("removed"
                    // in 7.0, "re-added but deprecated" in 7.1, "removed" in 9.0), so the
                    // earlier statement no longer says how things stand.
                    (Stance::CarriesOut, None, None) => match first(Stance::CarriesOut) {
                        Some(done) => (
                            LinkKind::Supersedes,
                            done,
                            format!(
                                "`{key}`: carried out (\"{}\"), later carried out again (\"{}\")",
                                done.cue, later.cue
                            ),
                        ),
                        None => continue,
                    },
                    _ => continue,
                };
                out.push(earlier::link(kind, tenant, later, to, why));
            }
        }
        out
    }
}

/// The lifecycle links of `memories` (see the module docs): each statement naming an
/// identifier meets the other statements naming it, grouped by (tenant, identifier).
pub fn links<'s, T>(
    memories: VecCollection<'s, T, MemoryObject>,
    rules: Arc<Rules>,
) -> VecCollection<'s, T, Link>
where
    T: Timestamp + Lattice,
{
    let Some(lifecycle) = rules.lifecycle().cloned() else {
        return memories.flat_map(|_| None);
    };
    let continuing_within = lifecycle.continuing_within;
    let lifecycle = Arc::new(lifecycle);
    let reading = lifecycle.clone();
    memories
        .filter(|m| !m.header && m.memory_type != EpistemicType::Question)
        .flat_map(move |m| {
            let heading = m
                .section
                .as_deref()
                .filter(|_| reading.headings)
                .map(|heading| reading.said(heading))
                .filter(|said| said.named.iter().any(|(_, s, _)| *s != Stance::Names));
            let mut said = reading.said_under(&m.text, &m.outline);
            if said.named.is_empty()
                && let Some(heading) = m.section.as_deref()
            {
                said.named = reading.finishing(heading, &m.text);
            }
            let entry = reading.entry_paths(&m.text, &said);
            let read = Read {
                start: m.span.0,
                end: m.span.1,
                section: m.section.clone(),
                memory_id: m.id.clone(),
                t_valid: m.t_valid,
                recorded_at: m.recorded_at,
                said,
                heading,
                lead_in: reading.lead_in(&m.text),
                entry,
            };
            (!read.said.named.is_empty()
                || read.said.continuing.is_some()
                || read.heading.is_some()
                || read.lead_in.is_some())
            .then(|| ((m.tenant.clone(), m.source_id.clone()), read))
        })
        // A statement continuing the one right before it, in its section, speaks of that one's
        // first identifier; the entries listed right after a lead-in say what it says.
        .reduce(move |(_, source), input, out| {
            let mut before: Option<&Read> = None;
            // The section whose retiring heading was last given to its first statement.
            let mut headed: Option<&Option<String>> = None;
            // What the lead-in of the list being read says.
            let mut leading: Option<&(Stance, String)> = None;
            for (read, _) in input {
                let mut named = read.said.named.clone();
                let follows = before.is_some_and(|previous| {
                    previous.section == read.section
                        && read.start.saturating_sub(previous.end) <= continuing_within
                });
                leading = match (&read.lead_in, leading) {
                    (Some(lead), _) => Some(lead),
                    (None, Some(lead)) if follows && !read.entry.is_empty() => {
                        named = as_entry(
                            named,
                            &read.entry,
                            lead.0,
                            &format!("listed after \"{}\"", lead.1),
                        );
                        Some(lead)
                    }
                    _ => None,
                };
                if let Some(heading) = &read.heading
                    && headed != Some(&read.section)
                {
                    named.extend(heading.named.iter().cloned());
                    headed = Some(&read.section);
                }
                if let (Some((stance, cue)), Some(previous)) = (&read.said.continuing, before)
                    && previous.section == read.section
                    && read.start.saturating_sub(previous.end) <= continuing_within
                    && let Some((path, ..)) = previous.said.named.first()
                {
                    named.push((path.clone(), *stance, cue.clone()));
                }
                for (path, stance, cue) in named {
                    let naming = Naming {
                        t_valid: read.t_valid,
                        source_id: source.clone(),
                        start: read.start,
                        memory_id: read.memory_id.clone(),
                        path,
                        stance,
                        cue,
                        recorded_at: read.recorded_at,
                    };
                    out.push(((key(&naming.path).to_string(), naming), 1));
                }
                before = Some(*read);
            }
        })
        .map(|((tenant, _), (key, naming))| ((tenant, key), naming))
        .reduce(move |(tenant, key), input, out| {
            if input.iter().all(|(n, _)| n.stance == Stance::Names) {
                return;
            }
            let namings: Vec<Naming> = input.iter().map(|(n, _)| (*n).clone()).collect();
            for link in lifecycle.links(tenant, key, &namings) {
                out.push((link, 1));
            }
        })
        .map(|(_, link)| link)
}
