//! Throughput of the extraction dataflow (`extract_graph`: per-source extraction plus the
//! cross-source aggregation of entities, relations and mentions) per timely worker, on a
//! generated organisation.
//!
//! ```text
//! EPIGRAPH_BENCH_EVENTS=20000 cargo bench --workspace --bench extract_dataflow
//! ```
//! Prints one JSON line per worker count (1 and 2): events, MB of text, seconds, MB/s and MB/s
//! per worker. Loading and generating the corpus is not timed.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use common::generated_sources;
use differential_dataflow::input::Input;
use epigraph_operators::{Extractor, SourceVersion, extract_graph};
use timely::dataflow::ProbeHandle;

fn main() {
    let events: u64 = std::env::var("EPIGRAPH_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let sources = Arc::new(generated_sources(7, events));
    let bytes: usize = sources.iter().map(|s| s.body.len()).sum();
    for workers in [1usize, 2] {
        let outputs = Arc::new(Mutex::new(0usize));
        let (shared, counter) = (sources.clone(), outputs.clone());
        let started = Instant::now();
        timely::execute(timely::Config::process(workers), move |worker| {
            let extractor = Arc::new(Extractor::bundled());
            let probe = ProbeHandle::new();
            let counter = counter.clone();
            let mut input = worker.dataflow::<u64, _, _>(|scope| {
                let (input, docs) = scope.new_collection::<SourceVersion, isize>();
                extract_graph(docs, extractor)
                    .inspect_batch(move |_, updates| {
                        *counter.lock().expect("counter") += updates.len();
                    })
                    .probe_with(&probe);
                input
            });
            // Each worker feeds its share; the dataflow exchanges what it aggregates.
            for (i, source) in shared.iter().enumerate() {
                if i % worker.peers() == worker.index() {
                    input.insert(source.clone());
                }
            }
            input.advance_to(1);
            input.flush();
            worker.step_while(|| probe.less_than(input.time()));
        })
        .expect("timely runs");
        let seconds = started.elapsed().as_secs_f64();
        let mb = bytes as f64 / 1e6;
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        println!(
            "{{\"events\": {}, \"workers\": {workers}, \"mb_text\": {}, \"seconds\": {}, \"mb_per_s\": {}, \"mb_per_s_per_worker\": {}, \"output_updates\": {}}}",
            sources.len(),
            round(mb),
            round(seconds),
            round(mb / seconds),
            round(mb / seconds / workers as f64),
            *outputs.lock().expect("counter"),
        );
    }
}
