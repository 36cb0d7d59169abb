//! Tests of the whole dataflow: extraction aggregated across sources, identities and
//! judgements, run incrementally.

mod citations;
mod epistemics;
mod extraction;
mod lifecycle;
mod reviews;
mod revisions;
mod tenure;
