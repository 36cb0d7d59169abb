//! Evaluation harnesses: how well the extractor types memory objects and finds entity mentions
//! on labelled text (`epigraph eval extraction`), how well identities are resolved (`eval identity`)
//! and how well supersession, contradiction and answers are judged (`eval epistemics`).

pub mod epistemics;
pub mod extraction;
pub mod identity;
pub mod metrics;
