//! Office Open XML (DOCX, PPTX, XLSX): zip archives of XML parts, read with `zip` and
//! `roxmltree` against an unpacked-size budget.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};

use roxmltree::{Document, Node};
use zip::ZipArchive;

use super::{DocumentText, Format, FormatError};

/// An Office file's archive and what may still be unpacked from it.
struct Package {
    format: Format,
    archive: ZipArchive<Cursor<Vec<u8>>>,
    budget: u64,
    limit: u64,
}

impl Package {
    fn open(format: Format, bytes: &[u8], limit: u64) -> Result<Package, FormatError> {
        if bytes.starts_with(&[0xd0, 0xcf, 0x11, 0xe0]) {
            return Err(FormatError::Unreadable {
                format,
                reason: "an OLE compound file, not a zip archive: a password-protected Office \
                         document or a legacy .doc/.ppt/.xls, which are not read"
                    .into(),
            });
        }
        let archive =
            ZipArchive::new(Cursor::new(bytes.to_vec())).map_err(|e| FormatError::Unreadable {
                format,
                reason: format!("not a zip archive: {e}"),
            })?;
        Ok(Package {
            format,
            archive,
            budget: limit,
            limit,
        })
    }

    fn unreadable(&self, reason: String) -> FormatError {
        FormatError::Unreadable {
            format: self.format,
            reason,
        }
    }

    /// The names of the archive's parts.
    fn names(&self) -> Vec<String> {
        self.archive.file_names().map(str::to_string).collect()
    }

    /// A part as text, or `None` when the archive has no such part.
    fn part(&mut self, name: &str) -> Result<Option<String>, FormatError> {
        let format = self.format;
        let unreadable = |reason: String| FormatError::Unreadable { format, reason };
        let mut bytes = Vec::new();
        match self.archive.by_name(name) {
            Ok(entry) => entry
                .take(self.budget.saturating_add(1))
                .read_to_end(&mut bytes)
                .map_err(|e| unreadable(format!("part {name}: {e}")))?,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(unreadable(format!("part {name}: {e}"))),
        };
        let size = bytes.len() as u64;
        if size > self.budget {
            return Err(FormatError::TooLarge {
                format,
                limit: self.limit,
            });
        }
        self.budget -= size;
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| self.unreadable(format!("part {name} is not UTF-8 XML: {e}")))
    }

    /// A part that must be there.
    fn required(&mut self, name: &str, what: &str) -> Result<String, FormatError> {
        self.part(name)?
            .ok_or_else(|| self.unreadable(format!("no {name}: not {what}")))
    }

    fn parse<'x>(&self, name: &str, xml: &'x str) -> Result<Document<'x>, FormatError> {
        Document::parse(xml).map_err(|e| self.unreadable(format!("part {name}: {e}")))
    }

    /// `dc:title` of `docProps/core.xml`.
    fn title(&mut self) -> Result<Option<String>, FormatError> {
        let Some(xml) = self.part("docProps/core.xml")? else {
            return Ok(None);
        };
        let Ok(core) = Document::parse(&xml) else {
            return Ok(None);
        };
        Ok(core
            .descendants()
            .find(|n| n.has_tag_name("title"))
            .map(|n| n.text().unwrap_or("").to_string()))
    }
}

fn named(node: &Node<'_, '_>, name: &str) -> bool {
    node.is_element() && node.tag_name().name() == name
}

/// The value of an attribute by its local name, whatever its namespace.
fn attribute<'a>(node: &Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.attributes()
        .find(|a| a.name() == name)
        .map(|a| a.value())
}

/// The text of a paragraph (`w:p` or `a:p`): its runs' text, tabs and breaks, in order.
fn paragraph_text(paragraph: Node<'_, '_>) -> String {
    let mut text = String::new();
    for node in paragraph.descendants() {
        if named(&node, "t") {
            text.push_str(node.text().unwrap_or(""));
        } else if named(&node, "tab") && node.parent().is_some_and(|p| named(&p, "r")) {
            text.push('\t');
        } else if named(&node, "br") || named(&node, "cr") {
            text.push('\n');
        }
    }
    text
}

/// Read a Word document.
pub(super) fn read_docx(bytes: &[u8], limit: u64) -> Result<DocumentText, FormatError> {
    let mut package = Package::open(Format::Docx, bytes, limit)?;
    let name = "word/document.xml";
    let xml = package.required(name, "a Word document")?;
    let document = package.parse(name, &xml)?;
    let body = document
        .descendants()
        .find(|n| named(n, "body"))
        .ok_or_else(|| package.unreadable(format!("{name} has no w:body")))?;
    let mut lines = Vec::new();
    docx_blocks(body, &mut lines);
    Ok(DocumentText {
        text: lines.join("\n"),
        title: package.title()?,
        parts: 1,
        truncated: false,
    })
}

/// Paragraphs and tables of a block container, in order.
fn docx_blocks(container: Node<'_, '_>, lines: &mut Vec<String>) {
    for node in container.children().filter(Node::is_element) {
        match node.tag_name().name() {
            "p" => {
                let text = paragraph_text(node);
                if text.trim().is_empty() {
                    lines.push(String::new());
                } else {
                    lines.push(format!("{}{}", docx_prefix(node), text.trim()));
                }
            }
            "tbl" => {
                for row in node.children().filter(|n| named(n, "tr")) {
                    let cells: Vec<String> = row
                        .children()
                        .filter(|n| named(n, "tc"))
                        .map(|cell| {
                            cell.descendants()
                                .filter(|n| named(n, "p"))
                                .map(paragraph_text)
                                .map(|t| t.trim().to_string())
                                .filter(|t| !t.is_empty())
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .collect();
                    if cells.iter().any(|c| !c.is_empty()) {
                        lines.push(cells.join(" | "));
                    }
                }
                lines.push(String::new());
            }
            // Content controls and custom XML wrap ordinary blocks.
            "sdt" | "sdtContent" | "customXml" => docx_blocks(node, lines),
            _ => {}
        }
    }
}

/// `# ` for a title, `## ` for Heading 1 and so on, `- ` for a list paragraph.
fn docx_prefix(paragraph: Node<'_, '_>) -> String {
    let properties = paragraph.children().find(|n| named(n, "pPr"));
    let style = properties
        .and_then(|p| p.children().find(|n| named(n, "pStyle")))
        .and_then(|s| attribute(&s, "val"))
        .unwrap_or("");
    let lower = style.to_ascii_lowercase();
    if lower == "title" {
        return "# ".into();
    }
    if let Some(level) = lower
        .strip_prefix("heading")
        .and_then(|n| n.trim().parse::<usize>().ok())
    {
        return format!("{} ", "#".repeat((level + 1).min(6)));
    }
    let listed = properties.is_some_and(|p| p.children().any(|n| named(&n, "numPr")));
    if listed || lower.starts_with("listparagraph") || lower.starts_with("listbullet") {
        return "- ".into();
    }
    String::new()
}

/// The number in a part name such as `ppt/slides/slide12.xml`.
fn part_number(name: &str, prefix: &str) -> Option<u32> {
    name.strip_prefix(prefix)?
        .strip_suffix(".xml")?
        .parse()
        .ok()
}

/// Read a PowerPoint presentation.
pub(super) fn read_pptx(bytes: &[u8], limit: u64) -> Result<DocumentText, FormatError> {
    let mut package = Package::open(Format::Pptx, bytes, limit)?;
    let mut slides: Vec<(u32, String)> = package
        .names()
        .into_iter()
        .filter_map(|name| Some((part_number(&name, "ppt/slides/slide")?, name)))
        .collect();
    if slides.is_empty() && package.part("ppt/presentation.xml")?.is_none() {
        return Err(package.unreadable("no ppt/presentation.xml: not a presentation".into()));
    }
    slides.sort();
    let mut lines = Vec::new();
    for (number, name) in &slides {
        let xml = package.required(name, "a slide")?;
        let slide = package.parse(name, &xml)?;
        lines.push(format!("## Slide {number}"));
        for paragraph in slide.descendants().filter(|n| named(n, "p")) {
            let text = paragraph_text(paragraph);
            if !text.trim().is_empty() {
                lines.push(text.trim().to_string());
            }
        }
        lines.push(String::new());
    }
    Ok(DocumentText {
        text: lines.join("\n"),
        title: package.title()?,
        parts: slides.len(),
        truncated: false,
    })
}

/// Read an Excel workbook.
pub(super) fn read_xlsx(bytes: &[u8], limit: u64) -> Result<DocumentText, FormatError> {
    let mut package = Package::open(Format::Xlsx, bytes, limit)?;
    let workbook_name = "xl/workbook.xml";
    let workbook_xml = package.required(workbook_name, "an Excel workbook")?;
    let workbook = package.parse(workbook_name, &workbook_xml)?;
    let targets = relationship_targets(&mut package, "xl/_rels/workbook.xml.rels", "xl/")?;
    let sheets: Vec<(String, String)> = workbook
        .descendants()
        .filter(|n| named(n, "sheet"))
        .filter_map(|sheet| {
            let name = attribute(&sheet, "name").unwrap_or("Sheet").to_string();
            let target = targets.get(attribute(&sheet, "id")?)?.clone();
            Some((name, target))
        })
        .collect();
    let shared = shared_strings(&mut package)?;
    let mut lines = Vec::new();
    for (name, part) in &sheets {
        let Some(xml) = package.part(part)? else {
            continue;
        };
        let sheet = package.parse(part, &xml)?;
        lines.push(format!("## {name}"));
        for row in sheet.descendants().filter(|n| named(n, "row")) {
            let values: Vec<String> = row
                .children()
                .filter(|n| named(n, "c"))
                .filter_map(|cell| cell_value(cell, &shared))
                .collect();
            if !values.is_empty() {
                lines.push(values.join(" | "));
            }
        }
        lines.push(String::new());
    }
    Ok(DocumentText {
        text: lines.join("\n"),
        title: package.title()?,
        parts: sheets.len(),
        truncated: false,
    })
}

/// Relationship id → part name.
type Relationships = BTreeMap<String, String>;

/// Relationship id → part name, from a `.rels` part; targets are relative to `base` unless
/// absolute.
fn relationship_targets(
    package: &mut Package,
    name: &str,
    base: &str,
) -> Result<Relationships, FormatError> {
    let Some(xml) = package.part(name)? else {
        return Ok(BTreeMap::new());
    };
    let rels = package.parse(name, &xml)?;
    Ok(rels
        .descendants()
        .filter(|n| named(n, "Relationship"))
        .filter_map(|rel| {
            let id = attribute(&rel, "Id")?;
            let target = attribute(&rel, "Target")?;
            let part = match target.strip_prefix('/') {
                Some(absolute) => absolute.to_string(),
                None => format!("{base}{target}"),
            };
            Some((id.to_string(), part))
        })
        .collect())
}

/// The shared strings of a workbook, in index order.
fn shared_strings(package: &mut Package) -> Result<Vec<String>, FormatError> {
    let name = "xl/sharedStrings.xml";
    let Some(xml) = package.part(name)? else {
        return Ok(Vec::new());
    };
    let strings = package.parse(name, &xml)?;
    Ok(strings
        .root_element()
        .children()
        .filter(|n| named(n, "si"))
        .map(|item| {
            // Phonetic runs (`rPh`) are readings of East Asian text, not more text.
            item.descendants()
                .filter(|n| named(n, "t") && !n.ancestors().any(|a| named(&a, "rPh")))
                .filter_map(|n| n.text())
                .collect()
        })
        .collect())
}

/// The displayed value of a cell, if it has one.
fn cell_value(cell: Node<'_, '_>, shared: &[String]) -> Option<String> {
    let value = || {
        cell.children()
            .find(|n| named(n, "v"))
            .and_then(|v| v.text())
            .map(str::to_string)
    };
    let text = match attribute(&cell, "t").unwrap_or("n") {
        "s" => shared.get(value()?.trim().parse::<usize>().ok()?)?.clone(),
        "inlineStr" => cell
            .descendants()
            .filter(|n| named(n, "t"))
            .filter_map(|n| n.text())
            .collect(),
        "b" => match value()?.trim() {
            "1" => "TRUE".into(),
            _ => "FALSE".into(),
        },
        _ => value()?,
    };
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}
