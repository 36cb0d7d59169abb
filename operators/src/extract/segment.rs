//! Splitting a source body into units: sentences and list items, each with its byte span and
//! the heading of the section it sits under.
//!
//! Understands Markdown (`#` headings, fenced code, `-`/`*`/`1.` lists), reStructuredText
//! (underlined headings, `::` literal blocks, directives, simple tables: a unit per row, its
//! outline ending with the header row), RFC 822-style header blocks at the top
//! (PEPs, ADRs: `Status: Accepted`) and plain prose.

pub use crate::model::UnitForm;

mod tables;

/// A unit of text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Byte offset of the first character in the body.
    pub start: usize,
    /// Byte offset after the last character.
    pub end: usize,
    /// The text with whitespace runs collapsed to one space.
    pub text: String,
    /// Heading of the enclosing section, if any.
    pub section: Option<String>,
    /// Headings of every enclosing section, outermost first (the last is `section`):
    /// "Removals", then "Classes and methods".
    pub outline: Vec<String>,
    /// Sentence, list item or header line.
    pub form: UnitForm,
}

/// The headings open at a point of a body, outermost first: a heading closes the open ones at
/// its level or deeper. Markdown's level is its number of `#`; reStructuredText's is the order in
/// which its underline characters first appear; a bold line or a label (`Decisions:`) is
/// deeper than both.
#[derive(Clone, Debug, Default)]
struct Outline {
    open: Vec<(usize, String)>,
    /// The underline characters of reStructuredText headings, in the order first seen.
    rst_styles: Vec<char>,
}

/// The level of a bold-line or label heading: below every Markdown and reStructuredText one.
const LABEL_LEVEL: usize = 100;

impl Outline {
    fn enter(&mut self, level: usize, heading: String) {
        while self.open.last().is_some_and(|(open, _)| *open >= level) {
            self.open.pop();
        }
        self.open.push((level, heading));
    }

    /// The level of a reStructuredText heading underlined with `style`.
    fn rst_level(&mut self, style: char) -> usize {
        let at = match self.rst_styles.iter().position(|c| *c == style) {
            Some(at) => at,
            None => {
                self.rst_styles.push(style);
                self.rst_styles.len() - 1
            }
        };
        1 + at
    }

    fn section(&self) -> Option<String> {
        self.open.last().map(|(_, heading)| heading.clone())
    }

    fn headings(&self) -> Vec<String> {
        self.open
            .iter()
            .map(|(_, heading)| heading.clone())
            .collect()
    }
}

/// Header keys whose lines are memory units (the others, like `Author` or `Created`, are
/// metadata).
const HEADER_KEYS: [&str; 10] = [
    "status",
    "created",
    "resolution",
    "superseded-by",
    "replaces",
    "decision",
    "owner",
    "due",
    "deadline",
    "decided",
];

/// The keys a lone header line under a title may have and still be metadata, not a statement
/// (`# Term sheet summary`, a blank line, `Date: 12 October 2026`).
const METADATA_KEYS: [&str; 16] = [
    "date",
    "status",
    "author",
    "authors",
    "owner",
    "from",
    "to",
    "created",
    "updated",
    "last updated",
    "version",
    "deciders",
    "attendees",
    "participants",
    "reviewers",
    "decided",
];

/// Words before a period that do not end a sentence.
const ABBREVIATIONS: [&str; 22] = [
    "e.g", "i.e", "etc", "mr", "mrs", "ms", "dr", "prof", "vs", "cf", "fig", "no", "approx",
    "incl", "al", "st", "jr", "sr", "inc", "ltd", "corp", "u.s",
];

/// The units of a body, in order.
///
/// ```
/// use epigraph_operators::extract::segment::{UnitForm, units};
/// let body = "Status: Accepted\nAuthor: Ann\n\n# Decisions\n\nWe ship v2. It is faster.\n\n- Drop v1 by May\n";
/// let found = units(body);
/// let texts: Vec<_> = found.iter().map(|u| u.text.as_str()).collect();
/// assert_eq!(texts, ["Status: Accepted", "We ship v2.", "It is faster.", "Drop v1 by May"]);
/// assert_eq!(found[0].form, UnitForm::Header);
/// assert_eq!(found[1].section.as_deref(), Some("Decisions"));
/// assert_eq!(&body[found[3].start..found[3].end], "Drop v1 by May");
/// // Under a title, the header block is metadata too: only its known keys become units.
/// let adr = "# ADR 004: Managed Kafka\n\nStatus: Accepted\nDate: 2026-06-18\nDeciders: Priya Raman\n\nWe move to a managed service.\n";
/// let texts: Vec<_> = units(adr).into_iter().map(|u| (u.text, u.section)).collect();
/// assert_eq!(texts, [
///     ("Status: Accepted".to_string(), None),
///     ("We move to a managed service.".to_string(), Some("ADR 004: Managed Kafka".to_string())),
/// ]);
/// // One metadata line alone under a title is a header block as well, not a statement.
/// let sheet = "# Term sheet summary\n\nDate: 12 October 2026\n\nInvestment: €320K SAFE.\n";
/// let texts: Vec<_> = units(sheet).into_iter().map(|u| u.text).collect();
/// assert_eq!(texts, ["Investment: €320K SAFE."]);
/// // With another key, without a title, or followed by more text, a lone `Key: value` line
/// // is prose.
/// let note = "# Plan\n\nNote: we ship Monday.\n";
/// assert_eq!(units(note)[0].text, "Note: we ship Monday.");
/// let untitled = "Date: 12 October 2026\n\nWe ship.\n";
/// assert_eq!(units(untitled)[0].text, "Date: 12 October 2026");
/// let dated = "# Plan\n\nDate: we ship Monday\nand then rest.\n";
/// assert_eq!(units(dated)[0].text, "Date: we ship Monday and then rest.");
/// ```
pub fn units(body: &str) -> Vec<Unit> {
    let visible = without_comments(body);
    let body: &str = &visible;
    let lines = lines_with_offsets(body);
    let mut out = Vec::new();
    let (start, title) = header_start(&lines);
    let mut section = Outline::default();
    let mut i = match header_block(&lines, start, &mut out) {
        end if end > start => {
            if let Some(title) = title {
                section.enter(1, title);
            }
            end
        }
        // No header block under the title: the title is read like any heading.
        _ => 0,
    };
    let mut in_fence = false;
    // The content lines of the open fence: (byte offset, text).
    let mut fence: Vec<(usize, &str)> = Vec::new();
    let mut literal_indent: Option<usize> = None;
    // The open literal block is plain text (`.. code-block:: text`): its prose lines are units.
    let mut literal_prose = false;
    let mut block: Option<Block> = None;
    while i < lines.len() {
        let (offset, line) = lines[i];
        let trimmed = line.trim();
        let indent = line.len() - line.trim_start().len();
        let opens_fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        if opens_fence || in_fence {
            flush(&mut block, body, &section, &mut out);
            // Chat pastes put content on the fence lines themselves: "```Traceback …",
            // "… 26.39s```".
            let mut content = (offset + indent, trimmed);
            let mut closes = false;
            if opens_fence {
                let rest = &trimmed[3..];
                content = (offset + indent + 3, rest);
                if in_fence {
                    closes = true;
                    content.1 = "";
                } else {
                    in_fence = true;
                    // A bare language tag ("```rust") is no content.
                    if !rest.contains(char::is_whitespace) && !rest.contains(':') {
                        content.1 = "";
                    }
                    if let Some(inner) = rest.strip_suffix("```").or(rest.strip_suffix("~~~")) {
                        content.1 = inner;
                        closes = true;
                    }
                }
            } else if let Some(inner) = trimmed.strip_suffix("```").or(trimmed.strip_suffix("~~~"))
            {
                content.1 = inner;
                closes = true;
            }
            if !content.1.trim().is_empty() {
                fence.push(content);
            }
            if closes {
                fence_results(&fence, &section, &mut out);
                fence.clear();
                in_fence = false;
            }
            i += 1;
            continue;
        }
        if let Some(min) = literal_indent {
            if trimmed.is_empty() || indent > min {
                if literal_prose && is_prose_line(trimmed) {
                    out.push(Unit {
                        start: offset + indent,
                        end: offset + indent + trimmed.len(),
                        text: collapse(trimmed),
                        section: section.section(),
                        outline: section.headings(),
                        form: UnitForm::Sentence,
                    });
                }
                i += 1;
                continue;
            }
            literal_indent = None;
            literal_prose = false;
        }
        if trimmed.is_empty() {
            flush(&mut block, body, &section, &mut out);
            i += 1;
            continue;
        }
        if let Some(heading) = markdown_heading(trimmed) {
            flush(&mut block, body, &section, &mut out);
            let hashes = trimmed.chars().take_while(|c| *c == '#').count();
            section.enter(if hashes > 0 { hashes } else { LABEL_LEVEL }, heading);
            i += 1;
            continue;
        }
        if is_rule(trimmed) {
            // An RST overline, or an underline of a heading already taken.
            flush(&mut block, body, &section, &mut out);
            i += 1;
            continue;
        }
        if block.is_none()
            && let Some((_, next)) = lines.get(i + 1)
            && is_rule(next.trim())
            && next.trim().chars().count() >= trimmed.chars().count().min(3)
        {
            let level = section.rst_level(next.trim().chars().next().unwrap_or('='));
            section.enter(level, clean_heading(trimmed));
            i += 2;
            continue;
        }
        if block.is_none() && is_label_heading(trimmed) {
            section.enter(LABEL_LEVEL, clean_heading(trimmed.trim_end_matches(':')));
            i += 1;
            continue;
        }
        if let Some(argument) = prose_directive(trimmed) {
            // `.. note:: This PEP is obsolete.`: the argument and the indented body are prose.
            flush(&mut block, body, &section, &mut out);
            if !argument.is_empty() {
                let start = offset + (argument.as_ptr() as usize - line.as_ptr() as usize);
                block = Some(Block {
                    start,
                    end: start + argument.trim_end().len(),
                    indent,
                    form: UnitForm::Sentence,
                });
            }
            i += 1;
            continue;
        }
        if let Some(table) = tables::simple_table(&lines, i) {
            // Each row its own unit, under the table's header row ("Removed  Use instead").
            flush(&mut block, body, &section, &mut out);
            let mut outline = section.headings();
            outline.extend(table.header.clone());
            for (start, end) in table.rows {
                out.push(Unit {
                    start,
                    end,
                    text: collapse(&body[start..end]),
                    section: section.section(),
                    outline: outline.clone(),
                    form: UnitForm::ListItem,
                });
            }
            i = table.end;
            continue;
        }
        if trimmed.starts_with(".. ") || is_table_line(trimmed) {
            flush(&mut block, body, &section, &mut out);
            if trimmed.starts_with(".. ") {
                literal_indent = Some(indent);
                literal_prose = is_plain_text_directive(trimmed);
            }
            i += 1;
            continue;
        }
        if let Some(marker) = list_marker(line) {
            flush(&mut block, body, &section, &mut out);
            block = Some(Block {
                start: offset + marker,
                end: offset + line.trim_end().len(),
                indent,
                form: UnitForm::ListItem,
            });
        } else {
            match &mut block {
                Some(open) if open.form == UnitForm::Sentence || indent > open.indent => {
                    open.end = offset + line.trim_end().len();
                }
                _ => {
                    flush(&mut block, body, &section, &mut out);
                    block = Some(Block {
                        start: offset + indent,
                        end: offset + line.trim_end().len(),
                        indent,
                        form: UnitForm::Sentence,
                    });
                }
            }
        }
        if trimmed.ends_with("::") {
            flush(&mut block, body, &section, &mut out);
            literal_indent = Some(indent);
        }
        i += 1;
    }
    flush(&mut block, body, &section, &mut out);
    if in_fence {
        fence_results(&fence, &section, &mut out);
    }
    out
}

/// `.. code-block:: text` (or `code`, `sourcecode`, with `text`, `none` or `txt`): a literal
/// block of plain text, not code.
fn is_plain_text_directive(trimmed: &str) -> bool {
    let Some((name, arg)) = trimmed[3..].split_once("::") else {
        return false;
    };
    matches!(name.trim(), "code-block" | "code" | "sourcecode")
        && matches!(arg.trim(), "text" | "none" | "txt")
}

/// RST directives whose content is prose: admonitions and the PEP status notices.
const PROSE_DIRECTIVES: [&str; 15] = [
    "note",
    "warning",
    "important",
    "attention",
    "caution",
    "danger",
    "hint",
    "tip",
    "admonition",
    "seealso",
    "topic",
    "sidebar",
    "rejected",
    "withdrawn",
    "deprecated",
];

/// The argument of a prose directive line (`.. note:: Obsolete.` → `Obsolete.`), if it is one.
fn prose_directive(trimmed: &str) -> Option<&str> {
    let (name, argument) = trimmed.strip_prefix(".. ")?.split_once("::")?;
    PROSE_DIRECTIVES
        .contains(&name.trim())
        .then(|| argument.trim_start())
}

/// A line of prose: at least three words, starts with a letter and has no code punctuation.
fn is_prose_line(trimmed: &str) -> bool {
    trimmed.split_whitespace().count() >= 3
        && trimmed.chars().next().is_some_and(char::is_alphabetic)
        && !trimmed.contains(['=', '(', ')', '{', '}', '[', ']', ';', '<', '>'])
}

/// The results of a fenced block, as units: what a pasted traceback or console session reports.
///
/// - a traceback (`Traceback (most recent call last):`) ends in its exception line
///   (`KeyError: 'x'`), the unit;
/// - a console session (a `$ command` line) ends in its output: the last two lines after the
///   last command are one unit.
///
/// Code and data (no traceback, no prompt) yield nothing.
fn fence_results(fence: &[(usize, &str)], section: &Outline, out: &mut Vec<Unit>) {
    let unit = |start: usize, end: usize, text: String| Unit {
        start,
        end,
        text,
        section: section.section(),
        outline: section.headings(),
        form: UnitForm::Sentence,
    };
    if let Some(at) = fence.iter().position(|(_, l)| {
        l.trim_start()
            .starts_with("Traceback (most recent call last)")
    }) {
        if let Some((offset, line)) = fence[at + 1..]
            .iter()
            .rev()
            .find(|(_, l)| is_exception_line(l))
        {
            let lead = line.len() - line.trim_start().len();
            let text = line.trim();
            out.push(unit(
                offset + lead,
                offset + lead + text.len(),
                collapse(text),
            ));
        }
        return;
    }
    let Some(prompt) = fence.iter().rposition(|(_, l)| {
        let t = l.trim_start();
        t.starts_with("$ ") || t.starts_with("% ") || t.starts_with(">>> ")
    }) else {
        return;
    };
    let output = &fence[prompt + 1..];
    let tail = &output[output.len().saturating_sub(2)..];
    if let (Some((first, first_line)), Some((last, last_line))) = (tail.first(), tail.last()) {
        let start = first + (first_line.len() - first_line.trim_start().len());
        let end = last + last_line.trim_end().len();
        let text = tail
            .iter()
            .map(|(_, l)| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        out.push(unit(start, end, collapse(&text)));
    }
}

/// `KeyError: 'x'`, `json.decoder.JSONDecodeError: …`, `KeyboardInterrupt`.
fn is_exception_line(line: &str) -> bool {
    let line = line.trim();
    let name = line.split_once(':').map_or(line, |(n, _)| n);
    !name.is_empty()
        && !name.starts_with(char::is_whitespace)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        && [
            "Error",
            "Exception",
            "Warning",
            "Exit",
            "Interrupt",
            "Iteration",
        ]
        .iter()
        .any(|s| name.ends_with(s))
}

struct Block {
    start: usize,
    end: usize,
    indent: usize,
    form: UnitForm,
}

fn lines_with_offsets(body: &str) -> Vec<(usize, &str)> {
    let mut offset = 0;
    body.split_inclusive('\n')
        .map(|line| {
            let at = offset;
            offset += line.len();
            (at, line.trim_end_matches(['\n', '\r']))
        })
        .collect()
}

/// `body` with its HTML comments (`<!-- … -->`, never shown to a reader: a template's
/// instructions in a Markdown file) blanked out byte for byte, so every offset still points
/// into the original. An unterminated `<!--` is left as it is.
///
/// ```
/// use epigraph_operators::extract::segment::{units, without_comments};
/// let body = "We ship v2.\n<!--\nFill in the goals of this KEP.\n-->\nIt is faster.";
/// assert_eq!(without_comments(body).len(), body.len());
/// let texts: Vec<_> = units(body).into_iter().map(|u| u.text).collect();
/// assert_eq!(texts, ["We ship v2.", "It is faster."]);
/// ```
pub fn without_comments(body: &str) -> std::borrow::Cow<'_, str> {
    if !body.contains("<!--") {
        return std::borrow::Cow::Borrowed(body);
    }
    let mut bytes = body.as_bytes().to_vec();
    let mut from = 0;
    while let Some(open) = body[from..].find("<!--").map(|i| from + i) {
        let Some(close) = body[open + 4..].find("-->").map(|i| open + 4 + i + 3) else {
            break;
        };
        for b in &mut bytes[open..close] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        from = close;
    }
    // Whole characters were replaced by ASCII spaces: still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| body.to_string()))
}

/// Where a header block may start: the first line, or, under a Markdown title (`# ADR 004:
/// Move to a managed Kafka service`, then `Status: Accepted`, `Date: …`), the first line after
/// the title and the blank lines below it; with the title as the section.
fn header_start(lines: &[(usize, &str)]) -> (usize, Option<String>) {
    let Some(title) = lines
        .first()
        .and_then(|(_, line)| markdown_heading(line.trim()))
        .filter(|_| lines[0].1.trim_start().starts_with('#'))
    else {
        return (0, None);
    };
    let start = 1 + lines[1..]
        .iter()
        .take_while(|(_, l)| l.trim().is_empty())
        .count();
    (start, Some(title))
}

/// The RFC 822-style header block from line `start`, if any; returns the index of the first
/// line after it (`start` when there is none).
fn header_block(lines: &[(usize, &str)], start: usize, out: &mut Vec<Unit>) -> usize {
    let under_title = start > 0;
    let lines = &lines[start..];
    // `Status: Accepted`, `Superseded-By: 345`, and the spaced keys of written-out headers
    // (`Owning SIG: sig-cli`, `Last updated: …`, `Superseded by: …`): up to three words. An
    // empty field (a PEP's `Post-History:`) belongs to the block too, past its first line.
    let is_header = |line: &str| {
        let key = line
            .split_once(": ")
            .map(|(key, _)| key)
            .or_else(|| line.trim_end().strip_suffix(':'));
        key.is_some_and(|key| {
            let words = key.split(' ').count();
            !key.is_empty()
                && key.len() <= 30
                && words <= 3
                && key.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && key.split(' ').all(|word| {
                    !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        })
    };
    let Some(&(_, first)) = lines.first() else {
        return start;
    };
    let second_is_header = lines.get(1).is_some_and(|(_, l)| is_header(l));
    // Under a title, one metadata line alone (`Date: 12 October 2026`, then a blank line) is a
    // header block too; elsewhere a lone `Key: value` line is prose (`Note: we ship Monday`).
    let lone_metadata = under_title
        && lines.get(1).is_none_or(|(_, l)| l.trim().is_empty())
        && first
            .split_once(": ")
            .is_some_and(|(key, _)| METADATA_KEYS.contains(&key.to_ascii_lowercase().as_str()));
    if !(first.contains(": ") && is_header(first) && (second_is_header || lone_metadata)) {
        return start;
    }
    let mut i = 0;
    while i < lines.len() {
        let (offset, line) = lines[i];
        if !is_header(line) {
            break;
        }
        let mut end = offset + line.len();
        let mut j = i + 1;
        while j < lines.len()
            && lines[j].1.starts_with([' ', '\t'])
            && !lines[j].1.trim().is_empty()
        {
            end = lines[j].0 + lines[j].1.len();
            j += 1;
        }
        let key = line.split_once(':').map(|(k, _)| k.to_ascii_lowercase());
        if key.is_some_and(|k| HEADER_KEYS.contains(&k.as_str())) {
            out.push(Unit {
                start: offset,
                end,
                text: collapse(&line_span(lines, offset, end)),
                section: None,
                outline: Vec::new(),
                form: UnitForm::Header,
            });
        }
        i = j;
    }
    start + i
}

/// The `Key: value` fields of the header block at the top of a body (continuation lines
/// joined), e.g. a PEP's `Author:` line.
///
/// ```
/// use epigraph_operators::extract::segment::header_fields;
/// let body = "PEP: 8\nAuthor: Guido van Rossum <guido@python.org>,\n        Barry Warsaw <barry@python.org>\n\nText.";
/// let fields = header_fields(body);
/// assert_eq!(fields[1].0, "author");
/// assert!(fields[1].1.ends_with("Barry Warsaw <barry@python.org>"));
/// // An empty field does not end the block: PEP 101's `Replaces:` comes after one.
/// let pep = "PEP: 101\nStatus: Active\nPost-History:\nReplaces: 102\n\nText.";
/// assert_eq!(header_fields(pep).last().unwrap(), &("replaces".to_string(), "102".to_string()));
/// ```
pub fn header_fields(body: &str) -> Vec<(String, String)> {
    let lines = lines_with_offsets(body);
    let mut sink = Vec::new();
    let (start, _) = header_start(&lines);
    let end = header_block(&lines, start, &mut sink);
    let mut fields: Vec<(String, String)> = Vec::new();
    for (_, line) in &lines[start..end] {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = fields.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
        } else if let Some((key, value)) = line.split_once(':') {
            fields.push((key.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    fields
}

fn line_span(lines: &[(usize, &str)], start: usize, end: usize) -> String {
    let mut text = String::new();
    for (offset, line) in lines {
        if *offset >= start && *offset < end {
            text.push_str(line);
            text.push(' ');
        }
    }
    text
}

fn markdown_heading(trimmed: &str) -> Option<String> {
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
        return Some(clean_heading(&trimmed[hashes..]));
    }
    let bold = trimmed.strip_prefix("**")?.strip_suffix("**")?;
    (!bold.contains("**") && bold.split_whitespace().count() <= 6)
        .then(|| clean_heading(bold.trim_end_matches(':')))
}

/// A heading without its markup: `#`, emphasis, and backticks around the whole of it — not the
/// backticks of a code span that only begins or ends it (``` ``x`` and ``y`` are deprecated ```).
fn clean_heading(text: &str) -> String {
    let text = text.trim().trim_matches(['#', '*', '_', ' ']);
    let bare = text.trim_matches(['`', ' ']);
    collapse(if bare.contains('`') { text } else { bare })
}

/// A line of one repeated punctuation character (RST underline or overline, Markdown rule).
fn is_rule(trimmed: &str) -> bool {
    let mut chars = trimmed.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    "=-~^*+#\"'`:._".contains(first) && trimmed.len() >= 3 && chars.all(|c| c == first)
}

/// A short line ending in a colon that names a section: `Decisions:`, `Open questions:`.
fn is_label_heading(trimmed: &str) -> bool {
    let Some(label) = trimmed.strip_suffix(':') else {
        return false;
    };
    let words = label.split_whitespace().count();
    (1..=4).contains(&words)
        && label.chars().next().is_some_and(|c| c.is_uppercase())
        && label
            .chars()
            .all(|c| c.is_alphanumeric() || " -/&'".contains(c))
}

fn is_table_line(trimmed: &str) -> bool {
    (trimmed.starts_with('+') && trimmed.ends_with('+') && trimmed.contains("--"))
        || (trimmed.starts_with('|') && trimmed.ends_with('|'))
        || (trimmed.starts_with("===") && trimmed.contains(' '))
}

/// Byte length of a list marker and the space after it, if the line is a list item.
fn list_marker(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start().len();
    let rest = &line[indent..];
    let marker = if rest.starts_with(['-', '*', '+', '•']) {
        rest.chars().next().map(char::len_utf8)?
    } else if let Some(stripped) = rest.strip_prefix("#.") {
        rest.len() - stripped.len()
    } else {
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        let after = rest[digits..].chars().next();
        if (1..=3).contains(&digits) && matches!(after, Some('.') | Some(')')) {
            digits + 1
        } else {
            return None;
        }
    };
    let after = &rest[marker..];
    let spaces = after.len() - after.trim_start().len();
    (spaces > 0 && !after.trim().is_empty()).then_some(indent + marker + spaces)
}

fn flush(block: &mut Option<Block>, body: &str, section: &Outline, out: &mut Vec<Unit>) {
    let Some(block) = block.take() else {
        return;
    };
    for (start, end) in sentences(body, block.start, block.end) {
        let text = collapse(&body[start..end]);
        if text.chars().any(char::is_alphanumeric) {
            out.push(Unit {
                start,
                end,
                text,
                section: section.section(),
                outline: section.headings(),
                form: block.form,
            });
        }
    }
}

/// Sentence spans inside `body[start..end]`.
fn sentences(body: &str, start: usize, end: usize) -> Vec<(usize, usize)> {
    let text = &body[start..end];
    let mut spans = Vec::new();
    let mut sentence_start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (at, c) = chars[k];
        if matches!(c, '.' | '!' | '?') {
            let mut close = k + 1;
            while close < chars.len()
                && matches!(chars[close].1, '"' | '\'' | ')' | ']' | '”' | '’')
            {
                close += 1;
            }
            let next_is_space = chars.get(close).is_some_and(|(_, n)| n.is_whitespace());
            let mut next = close;
            while next < chars.len() && chars[next].1.is_whitespace() {
                next += 1;
            }
            let starts_new = chars.get(next).is_some_and(|(_, n)| {
                n.is_uppercase() || n.is_ascii_digit() || "\"'(*`“‘[".contains(*n)
            });
            if next_is_space && starts_new && (c != '.' || !is_abbreviation(text, at)) {
                let end_byte = chars.get(close).map_or(text.len(), |(b, _)| *b);
                spans.push((sentence_start, end_byte));
                sentence_start = chars.get(next).map_or(text.len(), |(b, _)| *b);
                k = next;
                continue;
            }
        }
        k += 1;
    }
    if sentence_start < text.len() {
        spans.push((sentence_start, text.len()));
    }
    spans
        .into_iter()
        .map(|(s, e)| {
            let piece = &text[s..e];
            let lead = piece.len() - piece.trim_start().len();
            (start + s + lead, start + s + piece.trim_end().len())
        })
        .filter(|(s, e)| s < e)
        .collect()
}

/// Whether the period at byte `at` of `text` ends an abbreviation or an initial.
fn is_abbreviation(text: &str, at: usize) -> bool {
    let word: String = text[..at]
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let lower = word.to_lowercase();
    let single_initial = word.chars().count() == 1 && word.chars().all(|c| c.is_uppercase());
    single_initial || ABBREVIATIONS.contains(&lower.as_str())
}

/// Collapses whitespace runs to one space and trims.
///
/// ```
/// assert_eq!(epigraph_operators::extract::segment::collapse(" a \n\t b "), "a b");
/// ```
pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(body: &str) -> Vec<String> {
        units(body).into_iter().map(|u| u.text).collect()
    }

    #[test]
    fn rst_headings_set_the_section_and_literal_blocks_are_skipped() {
        let body = "Open Issues\n===========\n\nShould we also cover bytes? Nobody knows.\n\nExample::\n\n    x = 1\n    y = 2\n\nBack to prose.\n";
        let found = units(body);
        let texts: Vec<_> = found.iter().map(|u| u.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Should we also cover bytes?",
                "Nobody knows.",
                "Example::",
                "Back to prose."
            ]
        );
        assert!(
            found
                .iter()
                .all(|u| u.section.as_deref() == Some("Open Issues"))
        );
    }

    #[test]
    fn the_outline_holds_every_enclosing_heading_and_a_heading_closes_its_level() {
        let body = "Notes 3.1\n=========\n\nRemovals\n--------\n\nClasses\n~~~~~~~\n\n- ``a.b`` (use ``c``)\n\nOther\n-----\n\nMore text here.\n\nDecisions:\nWe ship it now.\n";
        let found = units(body);
        let outline = |i: usize| {
            found[i]
                .outline
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        };
        assert_eq!(outline(0), ["Notes 3.1", "Removals", "Classes"]);
        assert_eq!(found[0].section.as_deref(), Some("Classes"));
        assert_eq!(
            outline(1),
            ["Notes 3.1", "Other"],
            "a heading closes the deeper ones"
        );
        assert_eq!(
            outline(2),
            ["Notes 3.1", "Other", "Decisions"],
            "a label is deepest"
        );
        let md = "# Title\n\n## A\n\n### B\n\nOne two three.\n\n## C\n\nFour five six.\n";
        let found = units(md);
        assert_eq!(found[0].outline, ["Title", "A", "B"]);
        assert_eq!(found[1].outline, ["Title", "C"]);
    }

    #[test]
    fn a_heading_keeps_the_code_spans_that_begin_or_end_it() {
        let body = "``epoch2num`` and ``num2epoch`` are deprecated\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\nThese are unused.\n\n``Figure``\n~~~~~~~~~~\nA class.\n";
        let found = units(body);
        assert_eq!(
            found[0].section.as_deref(),
            Some("``epoch2num`` and ``num2epoch`` are deprecated")
        );
        // A heading that is one code span loses its backticks, as before.
        assert_eq!(found[1].section.as_deref(), Some("Figure"));
    }

    #[test]
    fn wrapped_paragraphs_and_list_items_keep_exact_spans() {
        let body = "We moved the launch\nto June 3. Dr. Chen agrees with J. Singh.\n\n* first item\n  continues here\n* second item\n";
        let found = units(body);
        assert_eq!(
            found.iter().map(|u| u.text.as_str()).collect::<Vec<_>>(),
            [
                "We moved the launch to June 3.",
                "Dr. Chen agrees with J. Singh.",
                "first item continues here",
                "second item"
            ]
        );
        for unit in &found {
            assert_eq!(collapse(&body[unit.start..unit.end]), unit.text);
        }
        assert_eq!(found[2].form, UnitForm::ListItem);
    }

    #[test]
    fn fenced_code_tables_and_directives_are_not_units() {
        let body = "Intro text here.\n\n```\nlet x = 1;\n```\n\n| a | b |\n\n.. code-block:: python\n   hidden = 1\n\nDone now.";
        assert_eq!(texts(body), ["Intro text here.", "Done now."]);
    }

    #[test]
    fn a_pasted_traceback_yields_its_exception_line_and_a_console_session_its_output() {
        let body = "it broke:\n```Traceback (most recent call last):\n  File \"x.py\", line 5, in <module>\n    import y\nImportError: No module named y\n```";
        let found = units(body);
        let found_texts: Vec<_> = found.iter().map(|u| u.text.as_str()).collect();
        assert_eq!(found_texts, ["it broke:", "ImportError: No module named y"]);
        assert_eq!(
            &body[found[1].start..found[1].end],
            "ImportError: No module named y"
        );
        let body = "```\n$ ./run.py\nUsing cache\nBest: 42\nTook 26.39s\n```";
        assert_eq!(texts(body), ["Best: 42 Took 26.39s"]);
        // Code and data yield nothing.
        assert!(units("```{\"a\": [1, 2]}\n```\n```rust\nlet x = 1;\n```").is_empty());
    }

    #[test]
    fn plain_text_literal_blocks_are_prose() {
        let body = "Zen\n===\n\n.. code-block:: text\n\n    Beautiful is better than ugly.\n    x = 1\n\n.. code-block:: python\n\n    Not a unit at all.\n";
        let found = units(body);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "Beautiful is better than ugly.");
        assert_eq!(found[0].section.as_deref(), Some("Zen"));
    }

    #[test]
    fn admonitions_and_status_notices_are_prose() {
        let body = ".. note:: This PEP is obsolete.\n   See the devguide.\n\n.. rejected::\n\n   Rejected by the council.\n\n.. code-block:: python\n\n   x = 1\n";
        assert_eq!(
            texts(body),
            [
                "This PEP is obsolete.",
                "See the devguide.",
                "Rejected by the council."
            ]
        );
    }

    #[test]
    fn label_headings_and_questions() {
        let body = "Open questions:\n- Who owns billing?\n- Is the €2M cap final?";
        let found = units(body);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].section.as_deref(), Some("Open questions"));
    }

    #[test]
    fn arbitrary_text_never_panics_and_spans_are_char_boundaries() {
        let samples = [
            "",
            "\n\n",
            "::",
            "a.b.c. D",
            "é. É? ü!",
            "#",
            "# ",
            "1.",
            "- ",
            "x\n===",
            "“Quote.” Next",
            "Key: v\nK2: w\n  cont\n\nbody",
            "**Bold**\ntext",
            "\u{1F600}. \u{1F600}",
        ];
        for body in samples {
            for unit in units(body) {
                assert!(body.is_char_boundary(unit.start) && body.is_char_boundary(unit.end));
                assert!(unit.start < unit.end);
            }
        }
    }
}
