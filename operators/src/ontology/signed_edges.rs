//! Signed edge types between memory objects (OIDA Appendix B): their coefficients and roles in
//! the priority update.

use serde::Deserialize;

/// A signed edge type between memory objects (OIDA Appendix B).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EdgeSpec {
    /// Name and Neo4j type, e.g. `SUPPORTS`.
    pub name: String,
    /// Signed semantic coefficient.
    pub coefficient: f64,
    /// Meaning of `A -> B`.
    #[serde(default)]
    pub semantics: String,
    /// Counted by the contradiction penalty c.
    #[serde(default)]
    pub penalises: bool,
    /// Counted by the evidence term e.
    #[serde(default)]
    pub evidence: bool,
    /// `A -> B` means A holds B up: counted in B (blocking) of A's open-question urgency h.
    #[serde(default)]
    pub blocking: bool,
}
