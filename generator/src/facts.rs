//! What a step of a matter asserts, disputes or asks: the facts the tracks and the steps share.

/// An attribute/value claim made by a step (`subject` empty: the matter itself).
#[derive(Clone, Debug)]
pub struct Claim {
    /// Entity id, or empty for the matter id.
    pub subject: String,
    /// Attribute name.
    pub attribute: &'static str,
    /// Normalised value.
    pub value: String,
    /// Unit of the value.
    pub unit: &'static str,
}

/// Which two sources disagree about what.
#[derive(Clone, Copy, Debug)]
pub enum Conflict {
    /// Round size and valuation cap (investor).
    Funding,
    /// Team size.
    Headcount,
    /// Project status.
    Status,
    /// Project budget.
    Budget,
}

/// What a question is about.
#[derive(Clone, Copy, Debug)]
pub enum Ask {
    /// Who owns a customer renewal.
    Owner,
    /// When an event happens.
    Date,
    /// Whether a feature of a project has budget.
    Budget,
    /// How long a project keeps logs.
    Retention,
}
