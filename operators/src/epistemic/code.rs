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

/// The identifiers a text names in code spans, each by its last dotted part, lower-cased,
/// without call parentheses or a role's `~`: what two statements share when they speak of
/// the same thing. A span that is no identifier (a URL, a sentence, a link's text with its
/// target) is left out.
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
    CODE_SPAN
        .captures_iter(text)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
        .filter_map(|span| {
            let span = span
                .as_str()
                .trim()
                .trim_start_matches(['~', '!', '.'])
                .trim_end_matches("()");
            let identifier = !span.is_empty()
                && span
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
                && !span.starts_with(|c: char| c.is_ascii_digit());
            let last = span.rsplit('.').find(|part| !part.is_empty())?;
            identifier.then(|| last.to_lowercase())
        })
        .collect()
}
