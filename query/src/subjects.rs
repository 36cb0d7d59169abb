//! The code a query asks about: "Our resize code still passes `Image.ANTIALIAS` …", "Does
//! `PIL.PILLOW_VERSION` still exist?", "… with `draw.textsize()`?". A user asking whether an
//! identifier still stands names it the way code does — dotted, with an underscore, with call
//! parentheses or in backticks — and the statements that answer name it by its last dotted part
//! (``` ``ANTIALIAS`` ```, `` :py:meth:`~PIL.ImageDraw.ImageDraw.textsize` ``).
//!
//! Document ranking reads a document's statements on these subjects: one of them replaced by a
//! later document's statement (superseded, or an announcement carried out) puts the document
//! below that one, unless the question asks about history ([`crate::fuse::documents`]).

/// The identifiers `query` names, each by its key: the last dotted part, lower-cased, without
/// call parentheses, at least three characters long; a function called with a keyword
/// argument is the keyword's context, not a subject. A word counts when it is written as code:
/// in backticks, with a dot between two identifier characters, with an underscore, or followed
/// by `(`. Plain words, version numbers and sentence ends are not identifiers.
///
/// ```
/// use epigraph_query::subjects::named;
/// assert_eq!(named("Our resize code still passes Image.ANTIALIAS as the filter. Is it there?"), ["antialias"]);
/// assert_eq!(named("Does PIL.PILLOW_VERSION still exist?"), ["pillow_version"]);
/// assert_eq!(named("Can I still use draw.textsize() or font.getsize() in the latest Pillow?"), ["textsize", "getsize"]);
/// assert_eq!(named("Is `hold` still an option?"), ["hold"]);
/// assert_eq!(
///     named("We call ax.stem(..., use_line_collection=False). Is that flag still honoured?"),
///     ["use_line_collection"]
/// );
/// assert_eq!(named("What changed in Pillow 10.0 for PNG files?"), Vec::<String>::new());
/// assert_eq!(named("Is the seed round still at €2.2M?"), Vec::<String>::new());
/// assert_eq!(named("Which formats, e.g. QOI, can it read?"), Vec::<String>::new());
/// ```
pub fn named(query: &str) -> Vec<String> {
    let context = called_with_keywords(query);
    let mut keys: Vec<String> = Vec::new();
    let mut add = |word: &str| {
        let word = word.trim_end_matches("()");
        let key = word.rsplit('.').find(|p| !p.is_empty()).unwrap_or(word);
        let key = key.to_lowercase();
        let identifier = key
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_alphanumeric() || c == '_');
        // "e.g." and "i.e." are not code; a key of one or two letters would match too much.
        if identifier && key.chars().count() >= 3 && !keys.contains(&key) && !context.contains(&key)
        {
            keys.push(key);
        }
    };
    // Backticked spans name code whatever they look like.
    for (i, span) in query.split('`').enumerate() {
        if i % 2 == 1 && !span.trim().is_empty() && !span.contains(' ') {
            add(span.trim());
        }
    }
    for word in query.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '('))) {
        // "ax.stem(..." and "draw.textsize(" are calls: the name is what comes before.
        let (word, call) = match word.split_once('(') {
            Some((name, _)) => (name, true),
            None => (word, false),
        };
        let bare = word.trim_matches('.');
        if !bare
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        {
            continue;
        }
        let dotted = bare
            .as_bytes()
            .windows(3)
            .any(|w| w[1] == b'.' && is_ident(w[0]) && is_ident(w[2]) && !w[2].is_ascii_digit());
        if call || dotted || bare.contains('_') {
            add(bare);
        }
    }
    keys
}

/// The keys of functions called with a keyword argument ("`ax.stem(...,
/// use_line_collection=False)`"): the question is about the keyword, the call is its context.
fn called_with_keywords(query: &str) -> Vec<String> {
    let bytes = query.as_bytes();
    query
        .match_indices('(')
        .filter(|(at, _)| {
            let inside = &query[at + 1..];
            let inside = &inside[..inside.find(')').unwrap_or(inside.len())];
            inside.contains('=')
        })
        .filter_map(|(at, _)| {
            let start = (0..at)
                .rev()
                .take_while(|i| is_ident(bytes[*i]) || bytes[*i] == b'.')
                .last()?;
            let name = &query[start..at];
            let key = name.rsplit('.').find(|p| !p.is_empty())?;
            Some(key.to_lowercase())
        })
        .collect()
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `text` names `key` as a whole word (letters, digits and `_` around it do not count),
/// ignoring case.
///
/// ```
/// use epigraph_query::subjects::mentions;
/// assert!(mentions("Possible values are: ``NEAREST``, ``BICUBIC`` and ``ANTIALIAS``.", "antialias"));
/// assert!(mentions(":py:meth:`~PIL.ImageDraw.ImageDraw.textsize` is deprecated", "textsize"));
/// assert!(!mentions("``multiline_textsize`` is deprecated", "textsize"));
/// ```
pub fn mentions(text: &str, key: &str) -> bool {
    let lower = text.to_lowercase();
    let bytes = lower.as_bytes();
    lower.match_indices(key).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + key.len()).copied();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}
