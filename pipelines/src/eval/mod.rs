//! Evaluation harnesses: how well the extractor types memory objects and finds entity mentions
//! on labelled text (`epigraph eval extraction`).

pub mod extraction;
pub mod identity;
pub mod metrics;
