//! Shared by the extraction benches: a generated organisation as source versions.

use epigraph_operators::SourceVersion;
use epigraph_schemas::{Party, SourceKind};

/// The upsert events of a generated organisation (`epigraph gen`) as source versions:
/// realistic chat, e-mail, calendar and document text.
pub fn generated_sources(seed: u64, events: u64) -> Vec<SourceVersion> {
    let generator = epigraph_gen::Generator::new(epigraph_gen::GenConfig {
        seed,
        events,
        ..Default::default()
    });
    let party = |p: &epigraph_gen::labels::Party| Party {
        name: Some(p.name.clone()),
        address: Some(p.address.clone()),
    };
    generator
        .filter(|generated| generated.event.op == "upsert")
        .map(|generated| {
            let event = generated.event;
            let kind = SourceKind::parse(event.kind).unwrap_or(SourceKind::Document);
            let mut version = SourceVersion::new("bench", &event.source_id, kind, &event.body);
            version.title = Some(event.title);
            version.occurred_at = Some(event.occurred_at);
            version.authors = event.authors.iter().map(party).collect();
            version.participants = event.participants.iter().map(party).collect();
            version
        })
        .collect()
}
