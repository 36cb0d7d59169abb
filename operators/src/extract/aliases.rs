//! Aliases stated in text and in configuration: "Jasminder Singh (Jas)", "Kestrel, a.k.a.
//! Project K", "also known as"; and the `[[alias]]` groups of the ontology. Each becomes a
//! same-as link between two entities of one kind, which identity resolution merges (and a
//! `distinct` verdict can still separate).

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::mentions::Mention;

/// Two entity ids that name the same thing, from a stated alias.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AliasLink {
    /// Tenant.
    pub tenant: String,
    /// The named entity.
    pub a: String,
    /// Its alias.
    pub b: String,
}

/// Finds aliases written right after a mention.
#[derive(Clone, Debug)]
pub struct AliasReader {
    after: Regex,
}

impl Default for AliasReader {
    fn default() -> Self {
        let name = r"\p{Lu}[\p{L}\p{N}.'’-]*(?:\s\p{Lu}[\p{L}\p{N}.'’-]*){0,2}";
        AliasReader {
            after: Regex::new(&format!(
                r#"^(?:\s*\(\s*(?:a\.?k\.?a\.?\s+|aka\s+|also known as\s+)?["“]?({name})["”]?\s*\)|,?\s+(?:a\.k\.a\.?|aka|also known as)\s+["“]?({name})["”]?)"#
            ))
            .expect("alias pattern compiles"),
        }
    }
}

impl AliasReader {
    /// `(mention index, alias start, alias end, alias surface)` for each mention of `body`
    /// followed by an alias.
    ///
    /// ```
    /// use epigraph_operators::extract::{aliases::AliasReader, mentions::{Evidence, Mention}};
    /// let body = "Jasminder Singh (Jas) and Kestrel, a.k.a. Project K, met Maya (Engineering).";
    /// let mention = |start: usize, end: usize, kind: &str| Mention {
    ///     start, end, surface: body[start..end].into(), kind: kind.into(),
    ///     key: body[start..end].to_lowercase(), evidence: Evidence::Pattern };
    /// let mentions = [mention(0, 15, "Person"), mention(26, 33, "Project"), mention(57, 61, "Person")];
    /// let found: Vec<_> = AliasReader::default().read(body, &mentions)
    ///     .into_iter().map(|(i, _, _, s)| (i, s)).collect();
    /// assert_eq!(found, [(0, "Jas".to_string()), (1, "Project K".to_string())]);
    /// ```
    pub fn read(&self, body: &str, mentions: &[Mention]) -> Vec<(usize, usize, usize, String)> {
        let mut out = Vec::new();
        for (i, m) in mentions.iter().enumerate() {
            let Some(rest) = body.get(m.end..) else {
                continue;
            };
            let Some(c) = self.after.captures(rest) else {
                continue;
            };
            let Some(alias) = c.get(1).or_else(|| c.get(2)) else {
                continue;
            };
            let surface = alias.as_str().trim_end_matches(['.', ',']).to_string();
            if surface.eq_ignore_ascii_case(&m.surface) {
                continue;
            }
            // A bare parenthesis after a name is often a role or a team ("Maya Chen
            // (Engineering)"): without "a.k.a." it must look like a short form of the name.
            let stated = c.get(0).is_some_and(|all| {
                let lower = all.as_str().to_lowercase();
                lower.contains("aka") || lower.contains("a.k.a") || lower.contains("known as")
            });
            if !stated && !short_form(&surface, &m.surface) {
                continue;
            }
            let start = m.end + alias.start();
            out.push((i, start, start + surface.len(), surface));
        }
        out
    }
}

/// Whether `alias` can be a short form of `name`: a nickname starting like one of its words
/// ("Jas" of "Jasminder Singh") or its initials ("PV" of "Project Vesper").
///
/// ```
/// use epigraph_operators::extract::aliases::short_form;
/// assert!(short_form("Jas", "Jasminder Singh") && short_form("PV", "Project Vesper"));
/// assert!(!short_form("Engineering", "Maya Chen"));
/// ```
pub fn short_form(alias: &str, name: &str) -> bool {
    let lower = |s: &str| s.to_lowercase();
    let initials: String = name
        .split_whitespace()
        .filter_map(|w| w.chars().next())
        .collect();
    let alias_lower = lower(alias);
    alias_lower == lower(&initials)
        || name.split_whitespace().any(|word| {
            let word = lower(word);
            let prefix: String = alias_lower.chars().take(2).collect();
            prefix.chars().count() == 2 && word.starts_with(&prefix)
        })
}
