//! Code spans: how release notes, changelogs and engineering updates name the things they
//! change (``` ``syncdb`` ```, `` `np.rank` ``, a reStructuredText role ``:attr:`~a.B.c` ``).
//!
//! [`CODE_SPAN`] finds them; [`keys`] is what two statements are compared on when the matter
//! judge asks whether they speak of the same thing.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

/// A code span, or a reStructuredText role's target: ``` ``x`` ```, `` `x` ``, ``:attr:`~a.b` ``,
/// a Sphinx domain's ``:py:meth:`x` `` (the whole role, so that the words before it are the
/// words before the identifier: "the ``fill`` parameter *of* ``:py:meth:`getmask2` ``").
pub static CODE_SPAN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"``([^`]{1,80})``|(?::[a-z]+(?::[a-z]+)*:)?`([^`]{1,80})`")
        .expect("the code span pattern compiles")
});

/// The identifier a code span's text names, if it names one: a role's `<target>` when it has
/// one, without a leading `~`, `!` or `.` and without call parentheses. A snippet, a URL or a
/// sentence names none. The lifecycle rule and the matter judge both read spans with it, so
/// they agree on what one identifier is.
///
/// ```
/// use epigraph_operators::epistemic::code::identifier;
/// assert_eq!(identifier("django.conf.urls.url()"), Some("django.conf.urls.url"));
/// assert_eq!(identifier("~a.B.c"), Some("a.B.c"));
/// assert_eq!(identifier("the display <Model.display>"), Some("Model.display"));
/// assert_eq!(identifier("{% load url from future %}"), None);
/// assert_eq!(identifier("PyQt6 <https://example.org/>"), None);
/// // One keyword argument passed: the keyword.
/// assert_eq!(identifier("stem(..., use_line_collection=False)"), Some("use_line_collection"));
/// assert_eq!(identifier("use_line_collection=True"), Some("use_line_collection"));
/// assert_eq!(identifier("f(a=1, b=2)"), None);
/// assert_eq!(identifier("x == 1"), None);
/// ```
pub fn identifier(span: &str) -> Option<&str> {
    let span = span.trim();
    // A role with an explicit target: `text <target>`.
    let span = match (span.rfind('<'), span.strip_suffix('>')) {
        (Some(at), Some(_)) => &span[at + 1..span.len() - 1],
        _ => span,
    };
    let span = span
        .trim_start_matches(['~', '!', '.'])
        .trim_end_matches("()");
    if let Some(keyword) = keyword(span) {
        return Some(keyword);
    }
    IDENTIFIER.is_match(span).then_some(span)
}

/// A call or a setting that passes one keyword argument names that keyword: what a release
/// note retires when it says "``stem(..., use_line_collection=False)`` is no longer supported",
/// or changes when it says "now defaults to ``use_line_collection=True``".
static KEYWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[A-Za-z_][A-Za-z0-9_.]*\((?:[^=()]*,\s*)?)?([A-Za-z_][A-Za-z0-9_]*)\s*=[^=,()]+\)?$",
    )
    .expect("the keyword pattern compiles")
});

fn keyword(span: &str) -> Option<&str> {
    let captures = KEYWORD.captures(span)?;
    let whole = captures.get(0)?.as_str();
    // A call must close; a bare setting must not.
    if whole.contains('(') != whole.ends_with(')') {
        return None;
    }
    captures.get(1).map(|m| m.as_str())
}

/// An identifier written as code: a letter or `_`, then letters, digits, `_`, `.` and `-`.
static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z_][A-Za-z0-9_.\-]*$").expect("the identifier pattern compiles")
});

/// The key of an identifier's path: its last dotted part, what statements about it are grouped
/// by.
///
/// ```
/// use epigraph_operators::epistemic::code::key;
/// assert_eq!(key("django.conf.urls.url"), "url");
/// assert_eq!(key("syncdb"), "syncdb");
/// ```
pub fn key(path: &str) -> &str {
    path.rsplit('.')
        .find(|part| !part.is_empty())
        .unwrap_or(path)
}

/// The identifiers a text names in code spans ([`identifier`]), each by its [`key`]
/// lower-cased: what two statements share when they speak of the same thing. Where the
/// lifecycle rule is configured, the matter judge asks it instead
/// (`LifecycleRules::keys`), which also leaves out values and short names.
///
/// ```
/// use epigraph_operators::epistemic::code::keys;
/// let k = |text: &str| keys(text).into_iter().collect::<Vec<_>>();
/// assert_eq!(k("``im.category`` is deprecated, use ``getattr(im, \"is_animated\")``"), ["category"]);
/// assert_eq!(k(":py:mod:`!PyAccess` has been deprecated"), ["pyaccess"]);
/// assert_eq!(k("The ``convert_dict_qtables()`` method"), ["convert_dict_qtables"]);
/// assert!(k("`PyQt6 <https://example.org/>`_ instead").is_empty());
/// let roles: Vec<&str> = epigraph_operators::epistemic::code::CODE_SPAN
///     .find_iter("the ``fill`` parameter of :py:meth:`.FreeTypeFont.getmask2`")
///     .map(|m| m.as_str())
///     .collect();
/// assert_eq!(roles, ["``fill``", ":py:meth:`.FreeTypeFont.getmask2`"]);
/// ```
pub fn keys(text: &str) -> BTreeSet<String> {
    spans(text)
        .filter_map(identifier)
        .map(|path| key(path).to_lowercase())
        .collect()
}

/// The text of every code span of `text`, in order; not a cross-reference
/// ([`is_reference`]).
///
/// ```
/// use epigraph_operators::epistemic::code::spans;
/// let text = "``hold`` (:ref:`deprecated in 2.0<v200_hold>`) is removed; see :doc:`api` and :rc:`axes.hold`";
/// assert_eq!(spans(text).collect::<Vec<_>>(), ["hold", "axes.hold"]);
/// ```
pub fn spans(text: &str) -> impl Iterator<Item = &str> {
    CODE_SPAN
        .captures_iter(text)
        .filter(|c| c.get(0).is_some_and(|whole| !is_reference(whole.as_str())))
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
        .map(|span| span.as_str())
}

/// Roles that point at a part of the documentation (a section label, a document, a term, a
/// figure), not at the code: ``:ref:`deprecated in version 2.0 <v200_deprecate_hold>` `` names
/// no identifier.
const REFERENCE_ROLES: [&str; 5] = [":ref:", ":doc:", ":numref:", ":term:", ":download:"];

/// Whether a matched code span (the whole match of [`CODE_SPAN`]) is a cross-reference
/// ([`REFERENCE_ROLES`]).
///
/// ```
/// use epigraph_operators::epistemic::code::is_reference;
/// assert!(is_reference(":ref:`deprecated in version 2.0<v200_deprecate_hold>`"));
/// assert!(!is_reference(":meth:`~.axes.Axes.cla`"));
/// assert!(!is_reference("``hold``"));
/// ```
pub fn is_reference(whole: &str) -> bool {
    REFERENCE_ROLES.iter().any(|role| whole.starts_with(role))
}
