//! HTML bodies to plain text: what a reader sees, without markup, scripts or styles.
//!
//! A small tolerant scanner, not a DOM: mail HTML is often broken, and all the index needs is
//! the words, the paragraph breaks and which lines were quoted (`<blockquote>` becomes `> `).

/// Elements whose content is never shown to a reader.
/// (`<head>` itself is not one: its title and styles are, and a missing `</head>` must not hide
/// the body.)
const HIDDEN: [&str; 5] = ["script", "style", "title", "noscript", "template"];
/// Elements that start and end a paragraph (a blank line around them).
const PARAGRAPHS: [&str; 14] = [
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "table",
    "pre",
    "blockquote",
    "dl",
    "hr",
];
/// Elements that start and end a line.
const LINES: [&str; 13] = [
    "div", "tr", "li", "dt", "dd", "section", "article", "header", "footer", "address", "nav",
    "aside", "center",
];

/// The text of an HTML document: tags, comments, scripts and styles removed, entities decoded,
/// whitespace collapsed, one line per `<br>`, `<li>` or block, a blank line around paragraphs,
/// list items as `- item` and `<blockquote>` content as `> ` lines.
pub(crate) fn html_to_text(html: &str) -> String {
    let mut writer = TextWriter::default();
    let mut rest = html;
    while !rest.is_empty() {
        let Some(open) = rest.find('<') else {
            writer.text(rest);
            break;
        };
        writer.text(&rest[..open]);
        rest = &rest[open..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        if !rest.contains('>') {
            // No tag can end any more: the rest is text (and the scan stays linear).
            writer.text(rest);
            break;
        }
        let Some((tag, after)) = Tag::parse(rest) else {
            // A lone `<` that opens no tag is text.
            writer.text("<");
            rest = &rest[1..];
            continue;
        };
        rest = after;
        if !tag.closing && !tag.self_closing && HIDDEN.contains(&tag.name.as_str()) {
            rest = skip_element(rest, &tag.name);
            continue;
        }
        writer.tag(&tag);
    }
    writer.finish()
}

/// One tag: its lower-case name and whether it closes or closes itself.
struct Tag {
    name: String,
    closing: bool,
    self_closing: bool,
}

impl Tag {
    /// Parse the tag at the start of `input` (which starts with `<`); returns it and the rest.
    fn parse(input: &str) -> Option<(Tag, &str)> {
        let inner = input.strip_prefix('<')?;
        let (closing, inner) = match inner.strip_prefix('/') {
            Some(after) => (true, after),
            None => (false, inner),
        };
        let name_len = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '!' | '?' | '-')))
            .unwrap_or(inner.len());
        if name_len == 0 {
            return None;
        }
        // An unbalanced quote in an attribute falls back to the first `>`.
        let end = tag_end(inner).or_else(|| inner.find('>'))?;
        let tag = Tag {
            name: inner[..name_len].to_ascii_lowercase(),
            closing,
            self_closing: inner[..end].ends_with('/'),
        };
        Some((tag, &inner[end + 1..]))
    }
}

/// Index of the `>` that ends a tag, skipping quoted attribute values (`title="a>b"`); quotes
/// are only followed for 16 KiB, so unbalanced ones cannot make the scan quadratic.
fn tag_end(inner: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut after_equals = false;
    for (i, c) in inner.char_indices().take_while(|(i, _)| *i < 16 * 1024) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if after_equals => quote = Some(c),
            (None, '>') => return Some(i),
            _ => {}
        }
        if !c.is_whitespace() {
            after_equals = c == '=';
        }
    }
    None
}

/// Skip past the closing tag of a hidden element (`</script>`), or to the end if it has none.
fn skip_element<'a>(input: &'a str, name: &str) -> &'a str {
    let mut from = 0;
    while let Some(found) = input[from..].find("</") {
        let after = &input[from + found + 2..];
        let named = after
            .as_bytes()
            .get(..name.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(name.as_bytes()));
        if named {
            return after.find('>').map_or("", |end| &after[end + 1..]);
        }
        from += found + 2;
    }
    ""
}

/// Accumulates text with HTML whitespace rules and block structure.
#[derive(Default)]
struct TextWriter {
    out: String,
    /// Whitespace was seen since the last word.
    space: bool,
    /// Line breaks wanted before the next word (1 = new line, 2 = blank line).
    breaks: usize,
    /// Depth of `<blockquote>` nesting, written as `> ` prefixes.
    quote_depth: usize,
    /// Inside `<pre>`: whitespace is kept.
    pre: usize,
}

impl TextWriter {
    fn tag(&mut self, tag: &Tag) {
        let name = tag.name.as_str();
        match name {
            "br" => self.line_break(),
            "li" if !tag.closing => {
                self.want_break(1);
                self.word("- ");
                self.space = false;
            }
            "blockquote" => {
                self.want_break(2);
                self.quote_depth = match tag.closing {
                    true => self.quote_depth.saturating_sub(1),
                    false => self.quote_depth + 1,
                };
            }
            "pre" => {
                self.want_break(2);
                self.pre = match tag.closing {
                    true => self.pre.saturating_sub(1),
                    false => self.pre + 1,
                };
            }
            "td" | "th" if tag.closing => self.space = true,
            _ if PARAGRAPHS.contains(&name) => self.want_break(2),
            _ if LINES.contains(&name) => self.want_break(1),
            _ => {}
        }
    }

    fn text(&mut self, raw: &str) {
        if raw.is_empty() {
            return;
        }
        let decoded = decode_entities(raw);
        if self.pre > 0 {
            for (i, line) in decoded.split('\n').enumerate() {
                if i > 0 {
                    self.line_break();
                }
                self.word(line);
            }
            return;
        }
        for (i, word) in decoded.split(is_html_space).enumerate() {
            if i > 0 {
                self.space = true;
            }
            if !word.is_empty() {
                self.word(word);
            }
        }
    }

    fn want_break(&mut self, lines: usize) {
        self.breaks = self.breaks.max(lines);
        self.space = false;
    }

    /// A forced break (`<br>`, a new line in `<pre>`): breaks add up, up to a blank line.
    fn line_break(&mut self) {
        self.breaks = (self.breaks + 1).min(2);
        self.space = false;
    }

    fn word(&mut self, word: &str) {
        if !self.out.is_empty() && self.breaks > 0 {
            for _ in 0..self.breaks {
                self.out.push('\n');
            }
        }
        if self.out.is_empty() || self.out.ends_with('\n') {
            for _ in 0..self.quote_depth {
                self.out.push_str("> ");
            }
        } else if self.space {
            self.out.push(' ');
        }
        self.breaks = 0;
        self.space = false;
        self.out.push_str(word);
    }

    fn finish(self) -> String {
        let text = self.out.replace('\u{a0}', " ");
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        lines.join("\n").trim().to_string()
    }
}

/// Whitespace that HTML collapses; the no-break space is not part of it.
fn is_html_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}')
}

/// Decode `&name;`, `&#123;` and `&#x1F;` references; unknown ones are kept as written.
fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest
            .char_indices()
            .take(12)
            .find(|(_, c)| *c == ';')
            .map(|(i, _)| i);
        match end.and_then(|end| entity(&rest[1..end]).map(|c| (c, end))) {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character of one entity name (without `&` and `;`).
fn entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| *c != '\0');
    }
    let c = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        "eacute" => 'é',
        "egrave" => 'è',
        "ecirc" => 'ê',
        "agrave" => 'à',
        "acirc" => 'â',
        "ccedil" => 'ç',
        "ocirc" => 'ô',
        "ucirc" => 'û',
        "ugrave" => 'ù',
        "auml" => 'ä',
        "ouml" => 'ö',
        "uuml" => 'ü',
        "Auml" => 'Ä',
        "Ouml" => 'Ö',
        "Uuml" => 'Ü',
        "Eacute" => 'É',
        "szlig" => 'ß',
        "ntilde" => 'ñ',
        "euro" => '€',
        "pound" => '£',
        "yen" => '¥',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "deg" => '°',
        "hellip" => '…',
        "mdash" => '—',
        "ndash" => '–',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "bull" => '•',
        "middot" => '·',
        "times" => '×',
        "shy" => '\u{ad}',
        "zwnj" => '\u{200c}',
        _ => return None,
    };
    Some(c)
}

#[cfg(test)]
mod tests {
    /// 100,000 random and mutated pages (`EPIGRAPH_FUZZ_CASES` overrides the count): the
    /// converter never panics and never inflates its input beyond line breaks and list marks.
    #[test]
    fn html_to_text_never_panics_on_100k_cases() {
        let seed = "<html><head><title>T</title><style>p{x}</style></head><body><h1>Head</h1>\
                    <p>A &amp; B&#39;s <b>bold</b><br>line</p><ul><li>one</li></ul>\
                    <blockquote>quoted</blockquote><!-- c --><script>x<y</script></body></html>";
        let alphabet: Vec<char> = "<>/!-=\"'&#;abhlpiuscrt éü\n".chars().collect();
        let mut rng = crate::testing::Lcg(0x417e1);
        let cases: usize = std::env::var("EPIGRAPH_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100_000);
        for case in 0..cases {
            let mut text: Vec<char> = if case % 2 == 0 {
                seed.chars().collect()
            } else {
                Vec::new()
            };
            for _ in 0..1 + rng.below(if case % 2 == 0 { 4 } else { 80 }) {
                let c = alphabet[rng.below(alphabet.len())];
                if text.is_empty() || rng.below(2) == 0 {
                    let at = rng.below(text.len() + 1);
                    text.insert(at, c);
                } else {
                    let at = rng.below(text.len());
                    text[at] = c;
                }
            }
            let html: String = text.into_iter().collect();
            let out = super::html_to_text(&html);
            let (chars_in, chars_out) = (html.chars().count(), out.chars().count());
            assert!(chars_out <= 3 * chars_in + 4, "{html:?} -> {out:?}");
        }
    }

    use super::*;

    #[test]
    fn blocks_lists_and_entities() {
        let text = html_to_text(
            "<p>Caf&eacute;<br>bar</p><ul><li>one</li><li>two</li></ul><script>x</script>",
        );
        assert_eq!(text, "Café\nbar\n\n- one\n- two");
        assert_eq!(
            decode_entities("a &amp; b &#233;&#x20AC; &bogus; & &#0;"),
            "a & b é€ &bogus; & &#0;"
        );
    }

    #[test]
    fn blockquotes_become_quoted_lines() {
        let html = "<div>Yes.</div><div>On Monday, Ann wrote:</div>\
                    <blockquote><p>Shall we?</p><p>Soon &gt; never</p></blockquote>";
        assert_eq!(
            html_to_text(html),
            "Yes.\nOn Monday, Ann wrote:\n\n> Shall we?\n\n> Soon > never"
        );
    }

    #[test]
    fn broken_markup_is_still_text() {
        assert_eq!(html_to_text("a < b and <unclosed"), "a < b and <unclosed");
        assert_eq!(html_to_text("<b title='x>y'>bold</b> <!-- open"), "bold");
        assert_eq!(html_to_text("<style>p{}"), "");
        assert_eq!(html_to_text("<pre>  keep\n  this</pre>"), "keep\n  this");
        assert_eq!(html_to_text("<a title='x>link</a> done"), "link done");
        assert_eq!(html_to_text("<Script>a</SCRIPT >b"), "b");
        let endless = "<x y='".repeat(20_000);
        assert_eq!(html_to_text(&endless).len(), endless.len());
    }
}
