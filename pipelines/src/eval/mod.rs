//! Evaluation harnesses: how well the extractor types memory objects and finds entity mentions
//! on labelled text (`epigraph eval extraction`), how well identities are resolved (`eval identity`),
//! how well vocabulary relations are read (`eval relations`),
//! how well supersession, contradiction and answers are judged (`eval epistemics`, on a
//! generated corpus or on blind-labelled KEPs), and how
//! well the query service retrieves on BEIR-format sets (`eval retrieval`).

pub mod epistemics;
pub mod extraction;
pub mod identity;
pub mod keps;
pub mod llm;
pub mod metrics;
pub mod relations;
pub mod retrieval;
