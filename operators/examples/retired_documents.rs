//! How much the retired-document penalty (a_r, `ontology/priority.toml`) moves priorities on a
//! folder of real documents, e.g. the PEP fixtures:
//!
//! ```text
//! cargo run --release -p epigraph-operators --example retired_documents -- tests/fixtures/peps
//! ```
//!
//! Extracts every file of the folder as one tenant's documents, computes K for every memory
//! object with the bundled configuration and with a_r = 0, and prints how many documents are
//! retired and how many of the top DECISION objects come from a retired document with each.

use std::collections::BTreeMap;
use std::sync::Arc;

use differential_dataflow::input::Input;
use epigraph_operators::priority::{Now, PriorityConfig, Usage, prioritise};
use epigraph_operators::{
    EpistemicType, GraphElement, SourceVersion, extract::Extractor, extract_graph,
};
use epigraph_schemas::SourceKind;
use timely::dataflow::operators::capture::{Capture, Extract};

/// (memory id → (source id, type, K)) for one configuration.
fn priorities(
    docs: Vec<SourceVersion>,
    config: PriorityConfig,
) -> BTreeMap<String, (String, EpistemicType, i64)> {
    let captured = timely::example(move |scope| {
        let sources = scope.new_collection_from(docs).1;
        let usages = scope.new_collection_from(Vec::<Usage>::new()).1;
        let now = scope.new_collection_from(vec![Now(0)]).1;
        let graph = extract_graph(sources, Arc::new(Extractor::bundled()));
        graph
            .clone()
            .concat(prioritise(graph, usages, now, &config))
            .inner
            .capture()
    });
    let (mut memories, mut ks) = (BTreeMap::new(), BTreeMap::new());
    for (element, _, diff) in captured.extract().into_iter().flat_map(|(_, v)| v) {
        assert_eq!(diff, 1);
        match element {
            GraphElement::Memory(m) => {
                memories.insert(m.id, (m.source_id, m.memory_type));
            }
            GraphElement::Priority(p) => {
                ks.insert(p.node, p.priority.k.0);
            }
            _ => {}
        }
    }
    memories
        .into_iter()
        .filter_map(|(id, (source, t))| ks.get(&id).map(|k| (id, (source, t, *k))))
        .collect()
}

fn main() {
    let dir = std::env::args().nth(1).expect("a folder of documents");
    let mut docs = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("readable folder") {
        let path = entry.expect("entry").path();
        let Ok(body) = std::fs::read_to_string(&path) else {
            continue;
        };
        let id = path.file_name().unwrap().to_string_lossy().to_string();
        docs.push(SourceVersion::new("t", &id, SourceKind::Document, &body));
    }
    let with = priorities(docs.clone(), PriorityConfig::bundled());
    let mut settings = PriorityConfig::bundled_settings();
    settings.penalty.retired_source_weight = 0.0;
    let ontology = epigraph_operators::Ontology::bundled();
    let without = priorities(
        docs.clone(),
        PriorityConfig::from_settings(&settings, &ontology).expect("valid"),
    );
    let a_r = PriorityConfig::bundled().retired_source_weight.0;
    // A document is retired when its objects pay a_r: their K moved between the two runs, or
    // they sit at K = 0 in both (not the case for DECISION, whose prior is 1).
    let mut retired_sources = std::collections::BTreeSet::new();
    for (id, (source, _, k)) in &with {
        if without.get(id).is_some_and(|(_, _, k0)| k0 != k) {
            retired_sources.insert(source.clone());
        }
    }
    let demoted = with
        .iter()
        .filter(|(id, (_, _, k))| without[*id].2 != *k)
        .count();
    println!(
        "documents: {}, memory objects: {}, a_r = {a_r}",
        docs.len(),
        with.len()
    );
    println!(
        "retired documents (objects moved): {}, objects demoted: {demoted}",
        retired_sources.len()
    );
    for (name, ks) in [("without a_r", &without), ("with a_r", &with)] {
        let mean = |retired: bool| {
            let k: Vec<i64> = ks
                .values()
                .filter(|(s, t, _)| {
                    *t == EpistemicType::Decision && retired_sources.contains(s) == retired
                })
                .map(|(_, _, k)| *k)
                .collect();
            (
                k.len(),
                k.iter().sum::<i64>() as f64 / k.len().max(1) as f64 / 1e6,
            )
        };
        let ((n_cur, k_cur), (n_ret, k_ret)) = (mean(false), mean(true));
        println!(
            "{name}: mean K of DECISIONs, current documents {k_cur:.3} (n = {n_cur}), retired documents {k_ret:.3} (n = {n_ret})"
        );
    }
    for top in [20, 50, 100] {
        let count = |ks: &BTreeMap<String, (String, EpistemicType, i64)>| {
            let mut decisions: Vec<_> = ks
                .iter()
                .filter(|(_, (_, t, _))| *t == EpistemicType::Decision)
                .collect();
            decisions.sort_by_key(|(id, (_, _, k))| (-*k, (*id).clone()));
            decisions
                .iter()
                .take(top)
                .filter(|(_, (s, _, _))| retired_sources.contains(s))
                .count()
        };
        println!(
            "top {top} DECISIONs by K from retired documents: {} without a_r, {} with",
            count(&without),
            count(&with)
        );
    }
}
