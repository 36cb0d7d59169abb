//! The timely side: worker 0 feeds the inputs (source versions and identity verdicts) and
//! answers each sealed epoch with its output updates; the other workers only compute (their
//! inputs are closed at once).

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, bounded};
use differential_dataflow::input::{Input, InputSession};
use epigraph_operators::priority::{Now, PriorityConfig, Usage, prioritise};
use epigraph_operators::resolve::Verdict;
use epigraph_operators::{Extractor, GraphElement, SourceVersion, extract_graph_with_verdicts};
use timely::dataflow::ProbeHandle;

/// Updates of one epoch sent to the workers.
#[derive(Debug)]
pub struct EpochInput {
    /// Logical time of the updates.
    pub epoch: u64,
    /// `(version, +1 | -1)`.
    pub updates: Vec<(SourceVersion, isize)>,
    /// `(identity verdict, +1 | -1)`: from the feedback topic.
    pub verdicts: Vec<(Verdict, isize)>,
    /// `(retrieval, +1 | -1)`: from the feedback topic, retracted once old.
    pub usages: Vec<(Usage, isize)>,
    /// The priorities' clock, when it moves (the first epoch must set it).
    pub now: Option<Now>,
}

/// The dataflow's output changes for one sealed epoch.
#[derive(Debug)]
pub struct EpochOutput {
    /// The epoch they belong to.
    pub epoch: u64,
    /// Consolidated `(element, diff)` updates.
    pub updates: Vec<(GraphElement, isize)>,
}

/// A running dataflow.
#[derive(Debug)]
pub struct Dataflow {
    inputs: Option<Sender<EpochInput>>,
    outputs: Receiver<EpochOutput>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

type Captured = Arc<Mutex<Vec<(GraphElement, u64, isize)>>>;

impl Dataflow {
    /// Start `workers` timely worker threads running `extractor` and the priorities of
    /// `priority`.
    pub fn start(workers: usize, extractor: Arc<Extractor>, priority: Arc<PriorityConfig>) -> Self {
        let (input_tx, input_rx) = bounded::<EpochInput>(2);
        let (output_tx, output_rx) = bounded::<EpochOutput>(2);
        let captured: Captured = Arc::default();
        let thread = std::thread::Builder::new()
            .name("timely".into())
            .spawn(move || {
                let config = timely::Config::process(workers.max(1));
                let guards = timely::execute(config, move |worker| {
                    let probe = ProbeHandle::new();
                    let sink = captured.clone();
                    let extractor = extractor.clone();
                    let priority = priority.clone();
                    let mut inputs = worker.dataflow::<u64, _, _>(|scope| {
                        let (input, sources) = scope.new_collection::<SourceVersion, isize>();
                        let (verdict_input, verdicts) = scope.new_collection::<Verdict, isize>();
                        let (usage_input, usages) = scope.new_collection::<Usage, isize>();
                        let (clock_input, clock) = scope.new_collection::<Now, isize>();
                        let graph = extract_graph_with_verdicts(sources, verdicts, extractor);
                        let ranked = prioritise(graph.clone(), usages, clock, &priority);
                        graph
                            .concat(ranked)
                            .consolidate()
                            .inspect_batch(move |_, updates| {
                                let mut sink = sink.lock().expect("capture lock");
                                sink.extend(updates.iter().cloned());
                            })
                            .probe_with(&probe);
                        Inputs {
                            sources: input,
                            verdicts: verdict_input,
                            usages: usage_input,
                            clock: clock_input,
                            now: None,
                        }
                    });
                    if worker.index() != 0 {
                        inputs.close();
                        while worker.step_or_park(None) {}
                        return;
                    }
                    while let Ok(epoch_input) = input_rx.recv() {
                        let epoch = epoch_input.epoch;
                        inputs.feed(epoch_input);
                        let input = &inputs.sources;
                        worker.step_while(|| probe.less_than(input.time()));
                        let updates = {
                            let mut sink = captured.lock().expect("capture lock");
                            std::mem::take(&mut *sink)
                        };
                        let updates = updates
                            .into_iter()
                            .map(|(element, _, diff)| (element, diff))
                            .collect();
                        if output_tx.send(EpochOutput { epoch, updates }).is_err() {
                            break;
                        }
                    }
                    inputs.close();
                    while worker.step() {}
                })?;
                guards.join().into_iter().collect::<Result<Vec<_>, _>>()?;
                Ok(())
            })
            .expect("spawning the timely thread");
        Dataflow {
            inputs: Some(input_tx),
            outputs: output_rx,
            thread: Some(thread),
        }
    }

    /// Seal one epoch and wait for its output (blocking: call from a blocking context).
    pub fn process(&self, input: EpochInput) -> Result<EpochOutput, String> {
        let epoch = input.epoch;
        let inputs = self.inputs.as_ref().ok_or("dataflow already shut down")?;
        inputs
            .send(input)
            .map_err(|_| "the dataflow stopped".to_string())?;
        let output = self
            .outputs
            .recv()
            .map_err(|_| "the dataflow stopped".to_string())?;
        debug_assert_eq!(output.epoch, epoch);
        Ok(output)
    }

    /// Close the input and wait for the workers to finish.
    pub fn shutdown(mut self) -> Result<(), String> {
        self.inputs.take();
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .map_err(|_| "a timely worker panicked".to_string())?,
            None => Ok(()),
        }
    }
}

/// The dataflow's inputs on worker 0.
struct Inputs {
    sources: InputSession<u64, SourceVersion, isize>,
    verdicts: InputSession<u64, Verdict, isize>,
    usages: InputSession<u64, Usage, isize>,
    clock: InputSession<u64, Now, isize>,
    now: Option<Now>,
}

impl Inputs {
    /// Feed one epoch and seal it.
    fn feed(&mut self, input: EpochInput) {
        let epoch = input.epoch;
        for (version, diff) in input.updates {
            self.sources.update_at(version, epoch, diff);
        }
        for (verdict, diff) in input.verdicts {
            self.verdicts.update_at(verdict, epoch, diff);
        }
        for (usage, diff) in input.usages {
            self.usages.update_at(usage, epoch, diff);
        }
        if let Some(now) = input.now
            && self.now != Some(now)
        {
            if let Some(old) = self.now.replace(now) {
                self.clock.update_at(old, epoch, -1);
            }
            self.clock.update_at(now, epoch, 1);
        }
        self.sources.advance_to(epoch + 1);
        self.verdicts.advance_to(epoch + 1);
        self.usages.advance_to(epoch + 1);
        self.clock.advance_to(epoch + 1);
        self.sources.flush();
        self.verdicts.flush();
        self.usages.flush();
        self.clock.flush();
    }

    fn close(self) {
        self.sources.close();
        self.verdicts.close();
        self.usages.close();
        self.clock.close();
    }
}

#[cfg(test)]
mod tests {
    use epigraph_schemas::SourceKind;

    use super::*;

    fn doc(id: &str, body: &str) -> SourceVersion {
        SourceVersion::new("t", id, SourceKind::Document, body)
    }

    #[test]
    fn epochs_come_back_consolidated_across_two_workers() {
        let dataflow = Dataflow::start(
            2,
            Arc::new(Extractor::bundled()),
            Arc::new(PriorityConfig::bundled()),
        );
        let first = dataflow
            .process(EpochInput {
                epoch: 0,
                updates: vec![
                    (doc("a", "Atlas ships on June 3."), 1),
                    (doc("b", "Who owns Atlas billing?"), 1),
                ],
                verdicts: vec![],
                usages: vec![],
                now: None,
            })
            .unwrap();
        // Per source: its node, one memory object and its DERIVED_FROM edge; a.md also has a
        // launch-date claim and its ASSERTS edge.
        assert_eq!(first.updates.len(), 8, "{:#?}", first.updates);
        assert!(first.updates.iter().all(|(_, diff)| *diff == 1));
        let second = dataflow
            .process(EpochInput {
                epoch: 1,
                updates: vec![
                    (doc("a", "Atlas ships on June 3."), -1),
                    (doc("a", "Atlas ships on June 3."), 1),
                ],
                verdicts: vec![],
                usages: vec![],
                now: None,
            })
            .unwrap();
        assert!(
            second.updates.is_empty(),
            "a re-sent version changes nothing: {:?}",
            second.updates
        );
        let third = dataflow
            .process(EpochInput {
                epoch: 2,
                updates: vec![(doc("b", "Who owns Atlas billing?"), -1)],
                verdicts: vec![],
                usages: vec![],
                now: None,
            })
            .unwrap();
        assert_eq!(third.updates.len(), 3);
        assert!(third.updates.iter().all(|(_, diff)| *diff == -1));
        dataflow.shutdown().unwrap();
    }
}
