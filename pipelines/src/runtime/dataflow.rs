//! The timely side: worker 0 feeds the inputs (source versions and identity verdicts) and
//! answers each sealed epoch with its output updates; the other workers only compute (their
//! inputs are closed at once).

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, bounded};
use differential_dataflow::input::Input;
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
    /// Start `workers` timely worker threads running `extractor`.
    pub fn start(workers: usize, extractor: Arc<Extractor>) -> Self {
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
                    let (mut input, mut verdict_input) = worker.dataflow::<u64, _, _>(|scope| {
                        let (input, sources) = scope.new_collection::<SourceVersion, isize>();
                        let (verdict_input, verdicts) = scope.new_collection::<Verdict, isize>();
                        extract_graph_with_verdicts(sources, verdicts, extractor)
                            .consolidate()
                            .inspect_batch(move |_, updates| {
                                let mut sink = sink.lock().expect("capture lock");
                                sink.extend(updates.iter().cloned());
                            })
                            .probe_with(&probe);
                        (input, verdict_input)
                    });
                    if worker.index() != 0 {
                        input.close();
                        verdict_input.close();
                        while worker.step_or_park(None) {}
                        return;
                    }
                    while let Ok(EpochInput {
                        epoch,
                        updates,
                        verdicts,
                    }) = input_rx.recv()
                    {
                        input.advance_to(epoch);
                        verdict_input.advance_to(epoch);
                        for (version, diff) in updates {
                            input.update(version, diff);
                        }
                        for (verdict, diff) in verdicts {
                            verdict_input.update(verdict, diff);
                        }
                        input.advance_to(epoch + 1);
                        verdict_input.advance_to(epoch + 1);
                        input.flush();
                        verdict_input.flush();
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
                    input.close();
                    verdict_input.close();
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

#[cfg(test)]
mod tests {
    use epigraph_schemas::SourceKind;

    use super::*;

    fn doc(id: &str, body: &str) -> SourceVersion {
        SourceVersion::new("t", id, SourceKind::Document, body)
    }

    #[test]
    fn epochs_come_back_consolidated_across_two_workers() {
        let dataflow = Dataflow::start(2, Arc::new(Extractor::bundled()));
        let first = dataflow
            .process(EpochInput {
                epoch: 0,
                updates: vec![
                    (doc("a", "Atlas ships on June 3."), 1),
                    (doc("b", "Who owns Atlas billing?"), 1),
                ],
                verdicts: vec![],
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
            })
            .unwrap();
        assert_eq!(third.updates.len(), 3);
        assert!(third.updates.iter().all(|(_, diff)| *diff == -1));
        dataflow.shutdown().unwrap();
    }
}
