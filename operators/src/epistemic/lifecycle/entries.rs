//! Bare entries of lists of identifiers, which say what the headings above them or the
//! statement leading them in say ([`LifecycleRules::said_under`], [`LifecycleRules::lead_in`]).

use std::sync::LazyLock;

use regex::Regex;

use super::super::code::CODE_SPAN;
use super::{LifecycleRules, Said, Stance};
use crate::extract::cues::CueSet;

/// `[epistemics.lifecycle.sections]`, compiled.
#[derive(Clone, Debug)]
pub(super) struct Sections {
    pub(super) announces: CueSet,
    pub(super) carries_out: CueSet,
    pub(super) cancels: CueSet,
    pub(super) entry_words: usize,
}

/// A parenthesised aside: "(use ``marker`` instead)".
static ASIDE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\([^()]*\)").expect("the aside pattern compiles"));

/// What a bare entry lists in: all of it, or a table row's first cell (up to the first two code
/// spans with only spaces between them).
fn first_cell(text: &str) -> &str {
    let spans: Vec<_> = CODE_SPAN.find_iter(text).collect();
    spans
        .windows(2)
        .find(|pair| text[pair[0].end()..pair[1].start()].trim().is_empty())
        .map_or(text, |pair| &text[..pair[0].end()])
}

/// `named` with what is said of an entry's listed identifiers (`entry`) said of them, the rest
/// only named.
pub(super) fn as_entry(
    mut named: Vec<(String, Stance, String)>,
    entry: &[String],
    stance: Stance,
    cue: &str,
) -> Vec<(String, Stance, String)> {
    for (path, said, said_cue) in &mut named {
        if entry.contains(path) {
            (*said, *said_cue) = (stance, cue.to_string());
        }
    }
    named
}

impl LifecycleRules {
    /// What the headings enclosing a statement (outermost first) say of the bare entries
    /// under them, and the heading that says it: a heading carrying changes out ("Removals")
    /// wins over one announcing them ("Deprecations"); the nearest of each kind is named.
    ///
    /// ```
    /// use epigraph_operators::epistemic::lifecycle::Stance;
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// let outline = |h: &[&str]| h.iter().map(|h| h.to_string()).collect::<Vec<_>>();
    /// assert_eq!(
    ///     lifecycle.section_stance(&outline(&["API Changes for 3.1.0", "Removals", "Classes and methods"])),
    ///     Some((Stance::CarriesOut, "Removals".to_string())),
    /// );
    /// assert_eq!(
    ///     lifecycle.section_stance(&outline(&["API Changes for 3.0.0", "Removals", "Deprecated APIs"])),
    ///     Some((Stance::CarriesOut, "Removals".to_string())),
    /// );
    /// assert_eq!(
    ///     lifecycle.section_stance(&outline(&["Deprecations", "Modules"])),
    ///     Some((Stance::Announces, "Deprecations".to_string())),
    /// );
    /// assert_eq!(
    ///     lifecycle.section_stance(&outline(&["API Changes", "Undeprecations"])),
    ///     Some((Stance::Cancels, "Undeprecations".to_string())),
    /// );
    /// assert_eq!(lifecycle.section_stance(&outline(&["Behavior changes", "Autoscaling"])), None);
    /// ```
    pub fn section_stance(&self, outline: &[String]) -> Option<(Stance, String)> {
        let sections = self.sections.as_ref()?;
        let nearest = |cues: &CueSet| outline.iter().rev().find(|h| cues.any(h)).cloned();
        nearest(&sections.carries_out)
            .map(|heading| (Stance::CarriesOut, heading))
            .or_else(|| nearest(&sections.cancels).map(|heading| (Stance::Cancels, heading)))
            .or_else(|| nearest(&sections.announces).map(|heading| (Stance::Announces, heading)))
    }

    /// Whether a statement is a bare entry of a list of identifiers: at most `entry_words`
    /// words besides its code spans and parenthesised asides (never without sections). A
    /// table's row is one too (two code spans side by side: what, then what to use instead).
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// assert!(lifecycle.is_entry("``legend.Legend.draggable`` (use `.legend.Legend.set_draggable()` instead)"));
    /// assert!(lifecycle.is_entry("``Legend.draggable()``, in favor of `.Legend.set_draggable()`"));
    /// assert!(lifecycle.is_entry("``Image.ANTIALIAS`` ``Image.LANCZOS`` or ``Image.Resampling.LANCZOS``"));
    /// assert!(!lifecycle.is_entry("Due to technical issues, ``cbook.mplDeprecation`` did not raise deprecation warnings on use."));
    /// ```
    pub fn is_entry(&self, text: &str) -> bool {
        let Some(sections) = &self.sections else {
            return false;
        };
        let bare = CODE_SPAN.replace_all(text, " ");
        let bare = ASIDE.replace_all(&bare, " ");
        bare.split_whitespace()
            .filter(|w| w.chars().any(char::is_alphabetic))
            .count()
            <= sections.entry_words
    }

    /// [`Self::said`] of a statement under `outline`: a bare entry with no cue of its own says
    /// of what it names what its sections say ([`Self::section_stance`]), the cue being
    /// "under <heading>".
    ///
    /// ```
    /// use epigraph_operators::epistemic::lifecycle::Stance;
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// let outline = ["Removals".to_string(), "Classes and methods".to_string()];
    /// let said = lifecycle.said_under("``legend.Legend.draggable`` (use `.legend.Legend.set_draggable()` instead)", &outline);
    /// assert_eq!(said.named, [
    ///     ("legend.Legend.draggable".to_string(), Stance::CarriesOut, "under Removals".to_string()),
    ///     ("legend.Legend.set_draggable".to_string(), Stance::Names, String::new()),
    /// ]);
    /// // What an aside names is a remark: named.
    /// let said = lifecycle.said_under("``backend.qt4`` (set the :envvar:`QT_API` environment variable instead)", &outline);
    /// assert_eq!(said.named, [
    ///     ("backend.qt4".to_string(), Stance::CarriesOut, "under Removals".to_string()),
    ///     ("QT_API".to_string(), Stance::Names, String::new()),
    /// ]);
    /// // Prose under the same heading says only what its own words say.
    /// let said = lifecycle.said_under("The ``foo`` helper was never used by ``bar`` and behaves oddly.", &outline);
    /// assert!(said.named.iter().all(|(_, stance, _)| *stance == Stance::Names));
    /// ```
    pub fn said_under(&self, text: &str, outline: &[String]) -> Said {
        let said = self.said(text);
        let entry = self.entry_paths(text, &said);
        if entry.is_empty() {
            return said;
        }
        let Some((stance, heading)) = self.section_stance(outline) else {
            return said;
        };
        Said {
            named: as_entry(said.named, &entry, stance, &format!("under {heading}")),
            continuing: None,
        }
    }

    /// The identifiers a bare entry lists ([`Self::is_entry`], saying nothing itself), which
    /// take what its headings or a lead-in before it say: not those of its asides ("(set
    /// ``QT_API`` instead)": a remark or a replacement). Empty for anything else.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// let entry = |text: &str| lifecycle.entry_paths(text, &lifecycle.said(text));
    /// assert_eq!(entry("``backend.qt4`` (set the :envvar:`QT_API` environment variable instead)"), ["backend.qt4"]);
    /// assert_eq!(entry("``Image.fromstring()``"), ["Image.fromstring"]);
    /// assert!(entry("``Image.fromstring()`` has been removed.").is_empty());
    /// assert!(entry("Use ``ImageFile.raise_oserror`` instead.").is_empty());
    /// // A table's row lists what its first cell names; the other cells say what to use instead.
    /// assert_eq!(entry("``Image.ANTIALIAS`` ``Image.LANCZOS`` or ``Image.Resampling.LANCZOS``"), ["Image.ANTIALIAS"]);
    /// assert_eq!(entry("``numpy.float`` ``float`` `numpy.float64`, `numpy.double` (equivalent)"), ["numpy.float"]);
    /// ```
    pub fn entry_paths(&self, text: &str, said: &Said) -> Vec<String> {
        if said.continuing.is_some()
            || said
                .named
                .iter()
                .any(|(_, stance, _)| *stance != Stance::Names)
            || !self.is_entry(text)
        {
            return Vec::new();
        }
        let outside = ASIDE.replace_all(first_cell(text), |aside: &regex::Captures| {
            " ".repeat(aside[0].len())
        });
        // Those a stance would fall on: subjects, not qualifiers or replacements.
        self.named_as(&outside, Stance::Announces, "listed")
            .into_iter()
            .filter(|(_, stance, _)| *stance != Stance::Names)
            .map(|(path, ..)| path)
            .collect()
    }

    /// What a statement leading a list in says of the entries under it: it ends with a colon and
    /// announces or carries out a change, naming nothing it retires itself ("Several methods
    /// that have been marked as deprecated … have been removed in this release:").
    ///
    /// ```
    /// use epigraph_operators::epistemic::lifecycle::Stance;
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let lifecycle = rules.lifecycle().unwrap();
    /// assert_eq!(
    ///     lifecycle.lead_in("Several methods that have been marked as deprecated for many releases have been removed in this release:"),
    ///     Some((Stance::CarriesOut, "have been removed".to_string())),
    /// );
    /// assert_eq!(lifecycle.lead_in("The ``foo`` method has been removed:"), None);
    /// assert_eq!(lifecycle.lead_in("The following methods have been removed."), None);
    /// assert_eq!(lifecycle.lead_in("The following methods exist:"), None);
    /// ```
    pub fn lead_in(&self, text: &str) -> Option<(Stance, String)> {
        if !text.trim_end().ends_with(':') {
            return None;
        }
        let said = self.said(text);
        if said
            .named
            .iter()
            .any(|(_, stance, _)| *stance != Stance::Names)
        {
            return None;
        }
        let (stance, cue) = self.stance_of(text);
        (stance != Stance::Names).then_some((stance, cue))
    }
}
