//! The new text of a message: quoted replies and the signature set apart.
//!
//! A reply repeats the message it answers; indexing the quote again under the replier's name
//! would attribute the same words twice. So the quoted lines and the signature are cut from the
//! body, and kept beside it so nothing is lost.

/// A body split into what the author wrote now, what they quoted and their signature.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SplitBody {
    /// The body, tidied, without what was stripped.
    pub body: String,
    /// Quoted lines (with their `> ` and the `On … wrote:` line), when stripped and present.
    pub quoted: Option<String>,
    /// Signature lines (without the `-- ` delimiter), when stripped and present.
    pub signature: Option<String>,
}

/// What one line of a body is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    Text,
    Quoted,
    Signature,
}

/// Split `text` into body, quote and signature; `strip_quotes` and `strip_signatures` say which
/// parts leave the body.
pub(crate) fn split_body(text: &str, strip_quotes: bool, strip_signatures: bool) -> SplitBody {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<&str> = text.lines().collect();
    let mut kinds = vec![Line::Text; lines.len()];
    mark_quotes(&lines, &mut kinds);
    mark_signature(&lines, &mut kinds);
    let keep = |kind: Line| match kind {
        Line::Text => true,
        Line::Quoted => !strip_quotes,
        Line::Signature => !strip_signatures,
    };
    let pick = |wanted: Line, skip_delimiter: bool| {
        let picked: Vec<&str> = lines
            .iter()
            .zip(&kinds)
            .filter(|(line, kind)| {
                **kind == wanted && !(skip_delimiter && is_signature_delimiter(line))
            })
            .map(|(line, _)| *line)
            .collect();
        Some(tidy(&picked.join("\n"))).filter(|s| !s.is_empty())
    };
    let body: Vec<&str> = lines
        .iter()
        .zip(&kinds)
        .filter(|(_, kind)| keep(**kind))
        .map(|(line, _)| *line)
        .collect();
    SplitBody {
        body: tidy(&body.join("\n")),
        quoted: pick(Line::Quoted, false).filter(|_| strip_quotes),
        signature: pick(Line::Signature, true).filter(|_| strip_signatures),
    }
}

/// Mark `>` lines, the attribution that introduces them, and an Outlook original message.
fn mark_quotes(lines: &[&str], kinds: &mut [Line]) {
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with('>') {
            kinds[i] = Line::Quoted;
        } else if is_original_message_marker(line) {
            kinds[i..].fill(Line::Quoted);
            break;
        }
    }
    for i in 0..lines.len() {
        if kinds[i] != Line::Text || !is_attribution(lines[i]) {
            continue;
        }
        let next = (i + 1..lines.len()).find(|&j| !lines[j].trim().is_empty());
        if next.is_some_and(|j| kinds[j] == Line::Quoted) {
            kinds[i] = Line::Quoted;
            // A long attribution wrapped before `wrote:` ("On Tue, …, Ann <a@b>\nwrote:").
            let wrapped = i > 0 && !lines[i].trim_start().starts_with("On ");
            if wrapped && kinds[i - 1] == Line::Text && lines[i - 1].starts_with("On ") {
                kinds[i - 1] = Line::Quoted;
            }
        }
    }
}

/// Mark the lines from the last `-- ` delimiter to the next quoted line (or the end); blank
/// lines before that quote stay text.
fn mark_signature(lines: &[&str], kinds: &mut [Line]) {
    let Some(start) =
        (0..lines.len()).rfind(|&i| kinds[i] == Line::Text && is_signature_delimiter(lines[i]))
    else {
        return;
    };
    let mut end = (start..lines.len())
        .find(|&i| kinds[i] != Line::Text)
        .unwrap_or(lines.len());
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    kinds[start..end].fill(Line::Signature);
}

/// `-- ` on its own line (RFC 3676); clients that trim trailing spaces leave `--`.
fn is_signature_delimiter(line: &str) -> bool {
    line.trim_end() == "--"
}

/// `On Tue, 3 Jun 2025, Ann <ann@example.org> wrote:` and its French and German forms.
fn is_attribution(line: &str) -> bool {
    let line = line.trim().to_lowercase();
    ["wrote:", "a écrit :", "a écrit:", "schrieb:", "escribió:"]
        .iter()
        .any(|end| line.ends_with(end))
}

/// Outlook's `-----Original Message-----`: everything below it is the quoted message.
fn is_original_message_marker(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("--")
        && line
            .trim_matches('-')
            .trim()
            .eq_ignore_ascii_case("original message")
}

/// Trailing spaces cut, runs of blank lines collapsed to one, blank edges removed.
pub(crate) fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            blank_run += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_run > 0 { "\n\n" } else { "\n" });
        }
        blank_run = 0;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bottom_post_with_wrapped_attribution_and_signature() {
        let text = "Agreed.\r\n\r\nOn Tue, 3 Jun 2025 at 09:12, Ann Lee <ann@example.org>\r\n\
                    wrote:\r\n> Ship Friday?\r\n>\r\n\r\nTalk soon\r\n-- \r\nBob\r\nSales\r\n";
        let split = split_body(text, true, true);
        assert_eq!(split.body, "Agreed.\n\nTalk soon");
        assert_eq!(
            split.quoted.as_deref(),
            Some(
                "On Tue, 3 Jun 2025 at 09:12, Ann Lee <ann@example.org>\nwrote:\n> Ship Friday?\n>"
            )
        );
        assert_eq!(split.signature.as_deref(), Some("Bob\nSales"));
    }

    #[test]
    fn top_post_signature_stops_at_the_quote() {
        let text = "Yes.\n--\nBob\n\n-----Original Message-----\nFrom: Ann\nShip Friday?";
        let split = split_body(text, false, true);
        assert_eq!(
            split.body,
            "Yes.\n\n-----Original Message-----\nFrom: Ann\nShip Friday?"
        );
        assert_eq!(split.signature.as_deref(), Some("Bob"));
        assert_eq!(split.quoted, None);
    }

    #[test]
    fn nothing_stripped_when_disabled_and_wrote_without_quote_is_text() {
        let text = "I wrote: the plan.\n> quoted\n--\nsig";
        let split = split_body(text, false, false);
        assert_eq!(split.body, text);
        assert_eq!((split.quoted, split.signature), (None, None));
        let text = "Ann wrote:\nnothing quoted";
        assert_eq!(split_body(text, true, true).body, text);
    }
}
