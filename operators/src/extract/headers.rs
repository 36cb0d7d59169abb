//! People named in a header block (PEPs, ADRs, RFCs): `Author:`, `Owner:`, `Deciders:`, …

use epigraph_schemas::Party;

use super::segment;

/// Header fields that name authors.
const AUTHOR_FIELDS: [&str; 6] = [
    "author",
    "authors",
    "bdfl-delegate",
    "pep-delegate",
    "owner",
    "deciders",
];

/// People named in the header block: `Name <address>`, `address (Name)` or `Name`, separated
/// by commas.
///
/// ```
/// use epigraph_operators::extract::header_parties;
/// let people = header_parties("PEP: 1\nAuthor: Barry Warsaw <barry@python.org>, jeremy@alum.mit.edu (Jeremy Hylton)\n\nBody");
/// assert_eq!(people[0].name.as_deref(), Some("Barry Warsaw"));
/// assert_eq!(people[1].address.as_deref(), Some("jeremy@alum.mit.edu"));
/// assert_eq!(people[1].name.as_deref(), Some("Jeremy Hylton"));
/// ```
pub fn header_parties(body: &str) -> Vec<Party> {
    let mut parties = Vec::new();
    for (key, value) in segment::header_fields(body) {
        if !AUTHOR_FIELDS.contains(&key.as_str()) {
            continue;
        }
        for item in split_outside_brackets(&value) {
            let item = item.trim();
            let (name, address) =
                if let (Some(open), Some(close)) = (item.find('<'), item.rfind('>')) {
                    (
                        item[..open].trim().to_string(),
                        Some(item[open + 1..close].trim().to_string()),
                    )
                } else if let (Some(open), Some(close)) = (item.find('('), item.rfind(')')) {
                    (
                        item[open + 1..close].trim().to_string(),
                        Some(item[..open].trim().to_string()),
                    )
                } else if item.contains('@') {
                    (String::new(), Some(item.to_string()))
                } else {
                    (item.to_string(), None)
                };
            let name = name.trim_matches('"').trim().to_string();
            if name.is_empty() && address.is_none() {
                continue;
            }
            parties.push(Party {
                name: (!name.is_empty()).then_some(name),
                address: address.filter(|a| !a.is_empty()),
            });
        }
    }
    parties
}

fn split_outside_brackets(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in value.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&value[start..]);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}
