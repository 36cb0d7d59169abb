//! PDF: the text of every page with `pdf-extract`, the title from the document information.

use pdf_extract::{Document, Object, PlainTextOutput, output_doc_page};

use super::{DocumentText, Format, FormatError};

/// Read a PDF held in memory.
pub(super) fn read(bytes: &[u8]) -> Result<DocumentText, FormatError> {
    let unreadable = |reason: String| FormatError::Unreadable {
        format: Format::Pdf,
        reason,
    };
    // Readers accept a header anywhere in the first 1024 bytes (PDF 1.7, annex H).
    let head = &bytes[..bytes.len().min(1024)];
    if !head.windows(5).any(|w| w == b"%PDF-") {
        return Err(unreadable("no %PDF- header in the first 1024 bytes".into()));
    }
    let mut document = Document::load_mem(bytes).map_err(|e| unreadable(e.to_string()))?;
    if document.is_encrypted() && document.decrypt("").is_err() {
        return Err(FormatError::Encrypted {
            format: Format::Pdf,
        });
    }
    let pages = document.get_pages();
    let mut text = String::new();
    for &number in pages.keys() {
        let mut page = String::new();
        output_doc_page(&document, &mut PlainTextOutput::new(&mut page), number)
            .map_err(|e| unreadable(format!("page {number}: {e}")))?;
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&reflow(&page));
    }
    let title = info_title(&document);
    // The document's title as its first line is a heading, not a statement (as `# Title` in
    // Markdown): the extractor then takes it as the section, not as a memory object.
    let first_line = text.lines().next().unwrap_or("").trim();
    if title
        .as_deref()
        .is_some_and(|t| !first_line.is_empty() && t.trim().eq_ignore_ascii_case(first_line))
    {
        text.insert_str(0, "# ");
    }
    Ok(DocumentText {
        text,
        title,
        parts: pages.len(),
        truncated: false,
    })
}

/// A page's lines as paragraphs: the reader puts a blank line after every line of the page, so
/// a line continues the previous one's paragraph when that one does not end a sentence or a
/// clause (`.`, `!`, `?`, `:`, `;`) and this one starts in lower case (a wrapped sentence);
/// otherwise it starts a paragraph (a title, a date line, a new sentence). Leading spaces are
/// the reader's rendering of positions, not indentation (which Markdown would read as code).
///
/// ```text
/// "The Crazy Ones\n\nOctober 14, 1998\n\nThey are not fond of rules. And\n\nthey have no respect"
///   → "The Crazy Ones\n\nOctober 14, 1998\n\nThey are not fond of rules. And\nthey have no respect"
/// ```
fn reflow(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut previous: Option<&str> = None;
    for line in page.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(previous) = previous {
            let ends_clause = previous.ends_with(['.', '!', '?', ':', ';']);
            let continues = line.chars().next().is_some_and(char::is_lowercase);
            out.push_str(if !ends_clause && continues {
                "\n"
            } else {
                "\n\n"
            });
        }
        out.push_str(line);
        previous = Some(line);
    }
    out
}

/// `/Title` of the trailer's `/Info` dictionary, decoded (UTF-16 with a byte-order mark, else
/// PDFDocEncoding read as Latin-1).
fn info_title(document: &Document) -> Option<String> {
    let info = match document.trailer.get(b"Info").ok()? {
        Object::Reference(id) => document.get_dictionary(*id).ok()?,
        Object::Dictionary(dictionary) => dictionary,
        _ => return None,
    };
    let Object::String(bytes, _) = info.get(b"Title").ok()? else {
        return None;
    };
    Some(decode_text_string(bytes))
}

/// A PDF text string: UTF-16BE (or LE) after a byte-order mark, UTF-8 after its mark, else
/// PDFDocEncoding, which agrees with Latin-1 on the printable characters titles use.
fn decode_text_string(bytes: &[u8]) -> String {
    let utf16 = |units: Vec<u16>| String::from_utf16_lossy(&units);
    match bytes {
        [0xfe, 0xff, rest @ ..] => utf16(
            rest.chunks_exact(2)
                .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
                .collect(),
        ),
        [0xff, 0xfe, rest @ ..] => utf16(
            rest.chunks_exact(2)
                .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
                .collect(),
        ),
        [0xef, 0xbb, 0xbf, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        _ => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::{decode_text_string, reflow};

    #[test]
    fn wrapped_lines_join_their_paragraph_and_others_stand_alone() {
        let page = "  The Crazy Ones\n\nOctober 14, 1998\n\nThey are not fond of rules. And\n\n\
                    they have no respect.\n\nYou can quote them,\n\n   disagree with them.\n";
        assert_eq!(
            reflow(page),
            "The Crazy Ones\n\nOctober 14, 1998\n\nThey are not fond of rules. And\n\
             they have no respect.\n\nYou can quote them,\ndisagree with them."
        );
    }

    #[test]
    fn text_strings_decode_from_utf16_and_latin1() {
        assert_eq!(decode_text_string(b"\xfe\xff\x00Q\x003"), "Q3");
        assert_eq!(decode_text_string(b"Caf\xe9"), "Café");
        assert_eq!(decode_text_string(b"\xef\xbb\xbfCaf\xc3\xa9"), "Café");
    }
}
