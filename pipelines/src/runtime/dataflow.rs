//! The timely side: worker 0 feeds the inputs (source versions, identity verdicts and reviews) and
//! answers each sealed epoch with its output updates; the other workers only compute (their
//! inputs are closed at once). Every worker's output is routed to worker 0, so the workers may
//! be threads of this process or of several processes ([`Topology::Cluster`]): the peers of a
//! cluster only compute, and process 0 — the driver — reads Kafka and writes the sinks.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, bounded};
use differential_dataflow::AsCollection;
use differential_dataflow::input::{Input, InputSession};
use epigraph_operators::epistemic::amend::Amendment;
use epigraph_operators::epistemic::review::Review;
use epigraph_operators::priority::{Now, PriorityConfig, Usage, prioritise};
use epigraph_operators::resolve::Verdict;
use epigraph_operators::{Extractor, GraphElement, SourceVersion, extract_graph_governed};
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Exchange, Input as _, Inspect, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};

/// Where the timely workers run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// `workers` threads of this process.
    Process {
        /// Worker threads (at least one).
        workers: usize,
    },
    /// `workers` threads in each of the processes listening at `addresses` (`host:port`, the
    /// same list in the same order everywhere); this process is `addresses[process]`. Process 0
    /// is the driver, the others are compute peers. Every process must load the same ontology
    /// and priority constants: the workers compare `fingerprint`s before anything else runs.
    Cluster {
        /// Worker threads per process.
        workers: usize,
        /// This process's index in `addresses`.
        process: usize,
        /// Every process's `host:port`.
        addresses: Vec<String>,
    },
}

impl Topology {
    /// Where the workers of `run` (`[run]`, `[run.cluster]`) run.
    pub fn of(run: &crate::config::RunConfig) -> Self {
        if run.cluster.addresses.is_empty() {
            Topology::Process {
                workers: run.workers,
            }
        } else {
            Topology::Cluster {
                workers: run.workers,
                process: run.cluster.process,
                addresses: run.cluster.addresses.clone(),
            }
        }
    }
}

impl Topology {
    /// The timely configuration.
    fn config(&self) -> timely::Config {
        match self {
            Topology::Process { workers } => timely::Config::process((*workers).max(1)),
            Topology::Cluster {
                workers,
                process,
                addresses,
            } => timely::Config {
                communication: timely::CommunicationConfig::Cluster {
                    threads: (*workers).max(1),
                    process: *process,
                    addresses: addresses.clone(),
                    report: false,
                    zerocopy: false,
                },
                worker: timely::WorkerConfig::default(),
            },
        }
    }

    /// Whether this process feeds the inputs and receives the outputs.
    pub fn is_driver(&self) -> bool {
        match self {
            Topology::Process { .. } => true,
            Topology::Cluster { process, .. } => *process == 0,
        }
    }
}

/// Updates of one epoch sent to the workers.
#[derive(Debug)]
pub struct EpochInput {
    /// Logical time of the updates.
    pub epoch: u64,
    /// `(version, +1 | -1)`.
    pub updates: Vec<(SourceVersion, isize)>,
    /// `(identity verdict, +1 | -1)`: from the feedback topic.
    pub verdicts: Vec<(Verdict, isize)>,
    /// `(review of a judgement, +1 | -1)`: from the feedback topic.
    pub reviews: Vec<(Review, isize)>,
    /// `(amendment of a memory object, +1 | -1)`: from the feedback topic.
    pub amendments: Vec<(Amendment, isize)>,
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
    thread: Option<JoinHandle<Result<(), DataflowError>>>,
}

/// Why the dataflow cannot take an epoch or did not finish cleanly.
#[derive(Debug, thiserror::Error)]
pub enum DataflowError {
    /// timely could not start the workers (e.g. a cluster address that does not bind).
    #[error("{reason}")]
    Start {
        /// timely's reason.
        reason: String,
    },
    /// A worker of this process panicked (e.g. a peer with another configuration).
    #[error("{reason}")]
    WorkerPanicked {
        /// The worker's index in this process.
        worker: usize,
        /// The panic, as timely reports it.
        reason: String,
    },
    /// The thread driving the workers panicked.
    #[error("a timely worker panicked")]
    ThreadPanicked,
    /// [`Dataflow::process`] after the inputs were closed.
    #[error("dataflow already shut down")]
    ShutDown,
    /// The workers stopped before answering the epoch.
    #[error("the dataflow stopped")]
    Stopped {
        /// The epoch that was not answered.
        epoch: u64,
    },
}

type Captured = Arc<Mutex<Vec<(GraphElement, u64, isize)>>>;

impl Dataflow {
    /// Start the timely workers of `topology` running `extractor` and the priorities of
    /// `priority`. `fingerprint` identifies the configuration they were loaded from: in a
    /// cluster, worker 0 refuses to go on when a peer's differs.
    pub fn start(
        topology: Topology,
        fingerprint: u64,
        extractor: Arc<Extractor>,
        priority: Arc<PriorityConfig>,
    ) -> Self {
        let (input_tx, input_rx) = bounded::<EpochInput>(2);
        let (output_tx, output_rx) = bounded::<EpochOutput>(2);
        let captured: Captured = Arc::default();
        let thread = std::thread::Builder::new()
            .name("timely".into())
            .spawn(move || {
                let guards = timely::execute(topology.config(), move |worker| {
                    check_fingerprints(worker, fingerprint);
                    let probe = ProbeHandle::new();
                    let sink = captured.clone();
                    let extractor = extractor.clone();
                    let priority = priority.clone();
                    let mut inputs = worker.dataflow::<u64, _, _>(|scope| {
                        let (input, sources) = scope.new_collection::<SourceVersion, isize>();
                        let (verdict_input, verdicts) = scope.new_collection::<Verdict, isize>();
                        let (review_input, reviews) = scope.new_collection::<Review, isize>();
                        let (amendment_input, amendments) =
                            scope.new_collection::<Amendment, isize>();
                        let (usage_input, usages) = scope.new_collection::<Usage, isize>();
                        let (clock_input, clock) = scope.new_collection::<Now, isize>();
                        let graph = extract_graph_governed(
                            sources, verdicts, reviews, amendments, extractor,
                        );
                        let ranked = prioritise(graph.clone(), usages, clock, &priority);
                        // Consolidated per worker is consolidated overall (an element lives on
                        // one worker); worker 0 collects everything.
                        graph
                            .concat(ranked)
                            .consolidate()
                            .inner
                            .exchange(|_| 0)
                            .as_collection()
                            .inspect_batch(move |_, updates| {
                                let mut sink = sink.lock().expect("capture lock");
                                sink.extend(updates.iter().cloned());
                            })
                            .probe_with(&probe);
                        Inputs {
                            sources: input,
                            verdicts: verdict_input,
                            reviews: review_input,
                            amendments: amendment_input,
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
                })
                .map_err(|reason| DataflowError::Start { reason })?;
                for (worker, joined) in guards.join().into_iter().enumerate() {
                    joined.map_err(|reason| DataflowError::WorkerPanicked { worker, reason })?;
                }
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
    pub fn process(&self, input: EpochInput) -> Result<EpochOutput, DataflowError> {
        let epoch = input.epoch;
        let inputs = self.inputs.as_ref().ok_or(DataflowError::ShutDown)?;
        inputs
            .send(input)
            .map_err(|_| DataflowError::Stopped { epoch })?;
        let output = self
            .outputs
            .recv()
            .map_err(|_| DataflowError::Stopped { epoch })?;
        debug_assert_eq!(output.epoch, epoch);
        Ok(output)
    }

    /// Wait for the workers to finish: on a compute peer, until the driver closes the inputs.
    pub fn join(mut self) -> Result<(), DataflowError> {
        self.inputs.take();
        self.shutdown()
    }

    /// Close the input and wait for the workers to finish.
    pub fn shutdown(mut self) -> Result<(), DataflowError> {
        self.inputs.take();
        match self.thread.take() {
            Some(thread) => thread.join().map_err(|_| DataflowError::ThreadPanicked)?,
            None => Ok(()),
        }
    }
}

/// Every worker sends its configuration's fingerprint to every worker, and all of them panic
/// (failing the whole cluster) when they differ: workers running different ontologies would
/// compute a graph that no single configuration describes.
fn check_fingerprints(worker: &mut timely::worker::Worker, fingerprint: u64) {
    let seen: Rc<RefCell<Vec<(usize, u64)>>> = Rc::default();
    let mut input = InputHandle::new();
    let probe = ProbeHandle::new();
    worker.dataflow::<u64, _, _>(|scope| {
        let seen = seen.clone();
        scope
            .input_from(&mut input)
            .container::<Vec<(usize, u64)>>()
            .broadcast()
            .inspect(move |entry| seen.borrow_mut().push(*entry))
            .probe_with(&probe);
    });
    input.send((worker.index(), fingerprint));
    input.advance_to(1);
    while probe.less_than(&1) {
        worker.step();
    }
    drop(input);
    let differing: Vec<usize> = seen
        .borrow()
        .iter()
        .filter(|(_, theirs)| *theirs != fingerprint)
        .map(|(index, _)| *index)
        .collect();
    assert!(
        differing.is_empty(),
        "workers {differing:?} run another configuration (ontology, priority constants or \
         version) than worker {}: every process of a cluster must load the same files",
        worker.index()
    );
}

/// The dataflow's inputs on worker 0.
struct Inputs {
    sources: InputSession<u64, SourceVersion, isize>,
    verdicts: InputSession<u64, Verdict, isize>,
    reviews: InputSession<u64, Review, isize>,
    amendments: InputSession<u64, Amendment, isize>,
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
        for (review, diff) in input.reviews {
            self.reviews.update_at(review, epoch, diff);
        }
        for (amendment, diff) in input.amendments {
            self.amendments.update_at(amendment, epoch, diff);
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
        self.reviews.advance_to(epoch + 1);
        self.amendments.advance_to(epoch + 1);
        self.usages.advance_to(epoch + 1);
        self.clock.advance_to(epoch + 1);
        self.sources.flush();
        self.verdicts.flush();
        self.reviews.flush();
        self.amendments.flush();
        self.usages.flush();
        self.clock.flush();
    }

    fn close(self) {
        self.sources.close();
        self.verdicts.close();
        self.reviews.close();
        self.amendments.close();
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
            Topology::Process { workers: 2 },
            0,
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
                reviews: vec![],
                amendments: vec![],
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
                reviews: vec![],
                amendments: vec![],
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
                reviews: vec![],
                amendments: vec![],
                usages: vec![],
                now: None,
            })
            .unwrap();
        assert_eq!(third.updates.len(), 3);
        assert!(third.updates.iter().all(|(_, diff)| *diff == -1));
        dataflow.shutdown().unwrap();
    }

    /// Two free local ports for a two-process cluster.
    fn two_addresses() -> Vec<String> {
        let listeners: Vec<std::net::TcpListener> = (0..2)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        listeners
            .iter()
            .map(|l| l.local_addr().unwrap().to_string())
            .collect()
    }

    fn cluster(process: usize, addresses: &[String]) -> Topology {
        Topology::Cluster {
            workers: 2,
            process,
            addresses: addresses.to_vec(),
        }
    }

    fn epochs() -> Vec<EpochInput> {
        let versions = [
            doc(
                "a",
                "We decided that Atlas ships on June 3. Maya Chen owns the Atlas launch.",
            ),
            doc("b", "Who owns Atlas billing? The budget is €250K."),
            doc("c", "Atlas launch moved to June 10. Maya Chen approved it."),
        ];
        vec![
            EpochInput {
                epoch: 0,
                updates: versions[..2].iter().map(|v| (v.clone(), 1)).collect(),
                verdicts: vec![],
                reviews: vec![],
                amendments: vec![],
                usages: vec![],
                now: Some(Now(1_780_000_000_000)),
            },
            EpochInput {
                epoch: 1,
                updates: vec![(versions[2].clone(), 1), (versions[1].clone(), -1)],
                verdicts: vec![],
                reviews: vec![],
                amendments: vec![],
                usages: vec![],
                now: None,
            },
        ]
    }

    fn sorted(mut updates: Vec<(GraphElement, isize)>) -> Vec<String> {
        updates.sort_by_key(|u| format!("{u:?}"));
        updates.iter().map(|u| format!("{u:?}")).collect()
    }

    #[test]
    fn a_two_process_cluster_computes_what_one_process_does() {
        let extractor = Arc::new(Extractor::bundled());
        let priority = Arc::new(PriorityConfig::bundled());
        let single = Dataflow::start(
            Topology::Process { workers: 1 },
            7,
            extractor.clone(),
            priority.clone(),
        );
        let expected: Vec<Vec<String>> = epochs()
            .into_iter()
            .map(|input| sorted(single.process(input).unwrap().updates))
            .collect();
        single.shutdown().unwrap();
        assert!(expected[0].len() > 10, "{:?}", expected[0]);

        let addresses = two_addresses();
        let peer = {
            let (extractor, priority) = (extractor.clone(), priority.clone());
            let topology = cluster(1, &addresses);
            std::thread::spawn(move || Dataflow::start(topology, 7, extractor, priority).join())
        };
        let driver = Dataflow::start(cluster(0, &addresses), 7, extractor, priority);
        for (input, expected) in epochs().into_iter().zip(&expected) {
            assert_eq!(&sorted(driver.process(input).unwrap().updates), expected);
        }
        driver.shutdown().unwrap();
        peer.join().unwrap().unwrap();
    }

    #[test]
    fn a_peer_with_another_configuration_stops_the_cluster() {
        let extractor = Arc::new(Extractor::bundled());
        let priority = Arc::new(PriorityConfig::bundled());
        let addresses = two_addresses();
        let peer = {
            let (extractor, priority) = (extractor.clone(), priority.clone());
            let topology = cluster(1, &addresses);
            std::thread::spawn(move || Dataflow::start(topology, 8, extractor, priority).join())
        };
        let driver = Dataflow::start(cluster(0, &addresses), 7, extractor, priority);
        let mut inputs = epochs().into_iter();
        assert!(driver.process(inputs.next().unwrap()).is_err());
        assert!(
            driver.shutdown().is_err(),
            "the driver's workers refused the peer"
        );
        assert!(
            peer.join().unwrap().is_err(),
            "the peer's workers refused the driver"
        );
    }
}
