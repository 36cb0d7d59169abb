//! The cost of absorbing one edited source into a large state, next to recomputing everything
//! from scratch, in one run: the whole graph (`extract_graph`: extraction, entity aggregation,
//! identity resolution, supersession, contradiction and answers).
//!
//! ```text
//! EPIGRAPH_BENCH_SOURCES=100000 cargo bench --workspace --bench incremental
//! ```
//! The state is the live versions of a generated organisation (`epigraph gen`, one version per
//! source id). Timed, with one worker: the initial load; each of `EPIGRAPH_BENCH_EDITS` (5)
//! edits, one at a time (retract the old version of one source, insert an edited one, seal the
//! epoch, wait until the output is complete); then a from-scratch run on the final inputs.
//! Prints one JSON line.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use common::generated_sources;
use differential_dataflow::input::Input;
use epigraph_operators::{Extractor, SourceVersion, extract_graph};
use timely::dataflow::ProbeHandle;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Live versions of at least `n` sources (the generator writes edits and deletes too).
fn state(n: usize) -> Vec<SourceVersion> {
    let mut live: BTreeMap<String, SourceVersion> = BTreeMap::new();
    for version in generated_sources(7, (n as f64 * 1.25) as u64) {
        live.insert(version.source_id.clone(), version);
    }
    live.into_values().take(n).collect()
}

/// Seconds to compute the graph of `sources` from nothing.
fn from_scratch(sources: &[SourceVersion]) -> f64 {
    let sources = sources.to_vec();
    let started = Instant::now();
    timely::execute_directly(move |worker| {
        let probe = ProbeHandle::new();
        let mut input = worker.dataflow::<u64, _, _>(|scope| {
            let (input, docs) = scope.new_collection::<SourceVersion, isize>();
            extract_graph(docs, Arc::new(Extractor::bundled())).probe_with(&probe);
            input
        });
        for source in sources {
            input.insert(source);
        }
        input.advance_to(1);
        input.flush();
        worker.step_while(|| probe.less_than(input.time()));
    });
    started.elapsed().as_secs_f64()
}

fn main() {
    let n = env("EPIGRAPH_BENCH_SOURCES", 100_000);
    let edits = env("EPIGRAPH_BENCH_EDITS", 5);
    let sources = state(n);
    let bytes: usize = sources.iter().map(|s| s.body.len()).sum();
    let initial_sources = sources.clone();
    let (initial, edit_seconds, final_sources) = timely::execute_directly(move |worker| {
        let probe = ProbeHandle::new();
        let mut input = worker.dataflow::<u64, _, _>(|scope| {
            let (input, docs) = scope.new_collection::<SourceVersion, isize>();
            extract_graph(docs, Arc::new(Extractor::bundled())).probe_with(&probe);
            input
        });
        let mut live = initial_sources;
        let started = Instant::now();
        for source in &live {
            input.insert(source.clone());
        }
        input.advance_to(1);
        input.flush();
        worker.step_while(|| probe.less_than(input.time()));
        let initial = started.elapsed().as_secs_f64();
        let mut seconds = Vec::new();
        for e in 0..edits {
            // Edit a source in the middle of the state: a slipped date appended to its text.
            let at = (live.len() / (edits + 1)) * (e + 1);
            let old = live[at].clone();
            let mut new = old.clone();
            new.body = format!(
                "{}\n\nUpdate: the launch moved to June {}, 2027.",
                old.body,
                e + 1
            );
            new.version = epigraph_operators::stable_id(&[&new.body]);
            let started = Instant::now();
            input.remove(old);
            input.insert(new.clone());
            input.advance_to(2 + e as u64);
            input.flush();
            worker.step_while(|| probe.less_than(input.time()));
            seconds.push(started.elapsed().as_secs_f64());
            live[at] = new;
        }
        (initial, seconds, live)
    });
    let scratch = from_scratch(&final_sources);
    let mut sorted = edit_seconds.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
    println!(
        "{{\"sources\": {}, \"mb_text\": {}, \"workers\": 1, \"initial_seconds\": {}, \"edit_seconds\": {:?}, \"edit_median_seconds\": {}, \"scratch_seconds\": {}, \"scratch_over_edit\": {}}}",
        final_sources.len(),
        round(bytes as f64 / 1e6),
        round(initial),
        edit_seconds.iter().map(|s| round(*s)).collect::<Vec<_>>(),
        round(median),
        round(scratch),
        round(scratch / median),
    );
}
