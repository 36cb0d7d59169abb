//! The small corpus several end-to-end tests share, and the event lines that carry it: a plan
//! that slips (Atlas launch May 13 → June 3), a contradiction (term sheet €320K SAFE at a €2.2M
//! cap against a memo's €200K at €2.3M) and an open question.

/// One day in milliseconds.
pub const DAY: i64 = 86_400_000;
/// Day 0 of the corpora (2026-05-28), ms since the Unix epoch.
pub const T0: i64 = 1_780_000_000_000;
/// One side of the contradiction (a document).
pub const SHEET: &str = "Term sheet from Lighthouse Fund: €320K SAFE at a €2.2M cap.";
/// The other side (an e-mail).
pub const MEMO: &str = "Internal memo: the Lighthouse Fund round is €200K with a €2.3M cap.";
/// The plan the slip supersedes.
pub const PLANNED: &str = "Project Atlas launch is planned for May 13, 2027.";
/// The slip.
pub const SLIPPED: &str = "Heads up, the Project Atlas launch slips to June 3, 2027.";
/// An open question nobody answers.
pub const QUESTION: &str = "Who will sign the Lighthouse Fund SAFE for us?";

/// A second tenant's corpus, built to look like the first one's in shape (a plan that slips, an
/// open question, a contradiction between a document and an e-mail) with none of its words: the
/// tenant-isolation and injection tests look for it where it must never be.
///
/// ```
/// let lines = epigraph_tests::corpus::zanzibar();
/// assert_eq!(lines.len(), 5);
/// assert!(lines.iter().all(|l| l.contains("Zanzibar")));
/// ```
pub fn zanzibar() -> [String; 5] {
    [
        event(
            "chat",
            "z/1",
            0,
            "Project Zanzibar launch is planned for May 13, 2027.",
        ),
        event(
            "chat",
            "z/2",
            8,
            "Heads up, the Project Zanzibar launch slips to June 3, 2027.",
        ),
        event(
            "chat",
            "z/3",
            3,
            "Who will sign the Zanzibar wire instructions?",
        ),
        event(
            "document",
            "z-sheet",
            1,
            "Zanzibar Capital offers a €500K SAFE at a €4M valuation cap.",
        ),
        event(
            "email",
            "z-memo",
            2,
            "Zanzibar Capital will invest €300K on a SAFE at a €5M valuation cap.",
        ),
    ]
}

/// A webhook event line (`epigraph ingest events`) upserting `body` as source `id`, written on
/// `day` after [`T0`].
///
/// ```
/// let line = epigraph_tests::corpus::event("chat", "atlas/1", 2, "Hello.");
/// let json: serde_json::Value = serde_json::from_str(&line).unwrap();
/// assert_eq!(json["occurred_at"], epigraph_tests::corpus::T0 + 2 * 86_400_000);
/// assert_eq!((json["kind"].as_str(), json["op"].as_str()), (Some("chat"), Some("upsert")));
/// ```
pub fn event(kind: &str, id: &str, day: i64, body: &str) -> String {
    authored(kind, id, day, body, None)
}

/// [`event`] with an author, whose address is `first.last@acme.example`.
pub fn authored(kind: &str, id: &str, day: i64, body: &str, author: Option<&str>) -> String {
    let authors = match author {
        Some(name) => serde_json::json!([{
            "name": name,
            "address": format!("{}@acme.example", name.to_lowercase().replace(' ', ".")),
        }]),
        None => serde_json::json!([]),
    };
    serde_json::json!({
        "kind": kind, "source_id": id, "op": "upsert", "title": id, "body": body,
        "occurred_at": T0 + day * DAY, "authors": authors,
    })
    .to_string()
}
