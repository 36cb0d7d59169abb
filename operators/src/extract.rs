//! From source versions to graph elements.
//!
//! This is the first, deliberately simple extractor: each source version yields its source node,
//! one memory object holding the whole text, and a `DERIVED_FROM` edge between them. Because it
//! is a pure `flat_map` inside differential dataflow, retracting a source version retracts exactly
//! these elements.

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use timely::progress::Timestamp;

use crate::model::{
    EpistemicType, GraphElement, MemoryObject, Relation, SourceNode, SourceVersion, stable_id,
};

/// Name and version written into every element's provenance.
pub const EXTRACTOR: &str = "epigraph.document/0.1";

/// The graph elements one source version yields.
///
/// ```
/// use epigraph_operators::{GraphElement, SourceVersion, elements_of};
/// use epigraph_schemas::SourceKind;
/// let doc = SourceVersion { tenant: "acme".into(), source_id: "a.md".into(), kind: SourceKind::Document,
///     version: "v1".into(), title: Some("A".into()), body: "We ship in June.".into(), occurred_at: None };
/// let elements = elements_of(&doc);
/// assert_eq!(elements.len(), 3);
/// assert!(matches!(&elements[1], GraphElement::Memory(m) if m.text == "We ship in June." && m.span == (0, 16)));
/// ```
pub fn elements_of(source: &SourceVersion) -> Vec<GraphElement> {
    let node = SourceNode {
        id: source.node_id(),
        tenant: source.tenant.clone(),
        source_id: source.source_id.clone(),
        kind: source.kind,
        version: source.version.clone(),
        title: source.title.clone(),
        occurred_at: source.occurred_at,
    };
    let text = source.body.trim();
    if text.is_empty() {
        return vec![GraphElement::Source(node)];
    }
    let start = source.body.find(text).unwrap_or(0);
    let span = (
        char_offset(&source.body, start),
        char_offset(&source.body, start + text.len()),
    );
    let memory = MemoryObject {
        id: stable_id(&["memory", &source.tenant, &source.source_id, "document"]),
        tenant: source.tenant.clone(),
        memory_type: EpistemicType::Narrative,
        text: text.to_string(),
        title: source.title.clone(),
        source_id: source.source_id.clone(),
        source_version: source.version.clone(),
        span,
        extractor: EXTRACTOR.to_string(),
        t_valid: source.occurred_at,
    };
    let edge = Relation {
        id: stable_id(&["DERIVED_FROM", &memory.id, &node.id]),
        tenant: source.tenant.clone(),
        rel_type: "DERIVED_FROM".to_string(),
        from: memory.id.clone(),
        to: node.id.clone(),
    };
    vec![
        GraphElement::Source(node),
        GraphElement::Memory(memory),
        GraphElement::Relation(edge),
    ]
}

fn char_offset(text: &str, byte: usize) -> u32 {
    text[..byte].chars().count() as u32
}

/// The dataflow stage: every live source version to its graph elements.
///
/// ```
/// use differential_dataflow::input::Input;
/// use epigraph_operators::{SourceVersion, document_memory};
/// use epigraph_schemas::SourceKind;
/// use timely::dataflow::operators::capture::{Capture, Extract};
///
/// let doc = SourceVersion { tenant: "t".into(), source_id: "a".into(), kind: SourceKind::Document,
///     version: "v".into(), title: None, body: "text".into(), occurred_at: None };
/// let captured = timely::example(move |scope| {
///     let docs = scope.new_collection_from(vec![doc]).1;
///     document_memory(docs).inner.capture()
/// });
/// let updates: Vec<_> = captured.extract().into_iter().flat_map(|(_, v)| v).collect();
/// assert_eq!(updates.len(), 3);
/// assert!(updates.iter().all(|(_, _, diff)| *diff == 1));
/// ```
pub fn document_memory<'s, T>(
    sources: VecCollection<'s, T, SourceVersion>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    sources.flat_map(|source| elements_of(&source))
}

#[cfg(test)]
mod tests {
    use differential_dataflow::input::Input;
    use epigraph_schemas::SourceKind;
    use timely::dataflow::operators::capture::{Capture, Extract};

    use super::*;

    fn version(body: &str, version: &str) -> SourceVersion {
        SourceVersion {
            tenant: "acme".into(),
            source_id: "plan.md".into(),
            kind: SourceKind::Document,
            version: version.into(),
            title: None,
            body: body.into(),
            occurred_at: None,
        }
    }

    #[test]
    fn an_edit_retracts_exactly_the_old_version_elements() {
        let (old, new) = (
            version("launch in May", "v1"),
            version("launch in June", "v2"),
        );
        let (old_c, new_c) = (old.clone(), new.clone());
        let captured = timely::execute_directly(move |worker| {
            let (mut input, captured) = worker.dataflow::<u64, _, _>(|scope| {
                let (input, docs) = scope.new_collection::<SourceVersion, isize>();
                (input, document_memory(docs).consolidate().inner.capture())
            });
            input.insert(old_c.clone());
            input.advance_to(1);
            input.remove(old_c);
            input.insert(new_c);
            input.close();
            while worker.step() {}
            captured
        });
        let mut at_1: Vec<_> = captured
            .extract()
            .into_iter()
            .flat_map(|(_, v)| v)
            .filter(|(_, t, _)| *t == 1)
            .map(|(d, _, r)| (d, r))
            .collect();
        at_1.sort();
        let mut expected: Vec<_> = elements_of(&old).into_iter().map(|e| (e, -1)).collect();
        expected.extend(elements_of(&new).into_iter().map(|e| (e, 1)));
        // The DERIVED_FROM edge has the same id and content in both versions: it cancels out.
        expected.retain(|(e, _)| !matches!(e, GraphElement::Relation(_)));
        expected.sort();
        assert_eq!(at_1, expected);
    }

    #[test]
    fn blank_documents_yield_only_their_source_node() {
        assert!(matches!(
            elements_of(&version("  \n", "v")).as_slice(),
            [GraphElement::Source(_)]
        ));
    }
}
