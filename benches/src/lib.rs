//! Benchmarks of epigraph. `cargo bench --workspace --bench <name>` runs a criterion bench of
//! `benches/`; results are written down in `docs/benchmarks.md` with the machine and command.

/// A synthetic document body of about `bytes` bytes, deterministic in `seed`.
///
/// ```
/// let body = epigraph_benches::synthetic_body(7, 200);
/// assert!(body.len() >= 200);
/// assert_eq!(body, epigraph_benches::synthetic_body(7, 200));
/// ```
pub fn synthetic_body(seed: u64, bytes: usize) -> String {
    const WORDS: &[&str] = &[
        "we",
        "decided",
        "budget",
        "launch",
        "moved",
        "to",
        "june",
        "the",
        "board",
        "approved",
        "plan",
        "risk",
        "question",
        "open",
        "customer",
        "team",
        "hire",
        "engineers",
        "deadline",
        "constraint",
        "must",
        "not",
    ];
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out = String::with_capacity(bytes + 16);
    while out.len() < bytes {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push_str(WORDS[(state >> 33) as usize % WORDS.len()]);
        out.push(if (state >> 20).is_multiple_of(11) {
            '.'
        } else {
            ' '
        });
    }
    out
}

/// The upsert events of a generated organisation (`epigraph gen`) as source versions, the input
/// of the extraction benchmarks: realistic chat, e-mail, calendar and document text.
///
/// ```
/// let sources = epigraph_benches::generated_sources(1, 50);
/// assert!(sources.len() > 40);
/// assert!(sources.iter().all(|s| !s.body.is_empty()));
/// ```
pub fn generated_sources(seed: u64, events: u64) -> Vec<epigraph_operators::SourceVersion> {
    use epigraph_schemas::{Party, SourceKind};
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
            let mut version =
                epigraph_operators::SourceVersion::new("bench", &event.source_id, kind, &event.body);
            version.title = Some(event.title);
            version.occurred_at = Some(event.occurred_at);
            version.authors = event.authors.iter().map(party).collect();
            version.participants = event.participants.iter().map(party).collect();
            version
        })
        .collect()
}
