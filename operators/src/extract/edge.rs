//! Structural relationship types (besides the vocabulary of `ontology/relations.toml`).

/// Memory object → the source it was read from.
pub const DERIVED_FROM: &str = "DERIVED_FROM";
/// Memory object → an entity it names.
pub const MENTIONS: &str = "MENTIONS";
/// Person → a source they wrote.
pub const AUTHORED: &str = "AUTHORED";
/// Person → a calendar event they attend.
pub const ATTENDS: &str = "ATTENDS";
/// Person → an e-mail or chat message they received or a channel they are in.
pub const PARTICIPATES_IN: &str = "PARTICIPATES_IN";
/// Memory object → a claim it asserts.
pub const ASSERTS: &str = "ASSERTS";
/// Claim → its subject entity.
pub const ABOUT: &str = "ABOUT";
/// Decision → the person who made it.
pub const DECIDED_BY: &str = "DECIDED_BY";

/// Every structural relationship type above.
pub const STRUCTURAL: [&str; 8] = [
    DERIVED_FROM,
    MENTIONS,
    AUTHORED,
    ATTENDS,
    PARTICIPATES_IN,
    ASSERTS,
    ABOUT,
    DECIDED_BY,
];
