//! `deploy/k8s/`: the Kubernetes manifests pass the schemas of pinned Kubernetes versions
//! (kubernetes-validate, strict: unknown fields are errors), and they agree with each other and
//! with epigraph's own configuration:
//!
//! - every ConfigMap, Secret (and key), PVC, ServiceAccount, Role and volume a workload names
//!   exists; every `$(VAR)` an env value expands is defined before it; service links are off;
//! - every Service selects pods that declare its target ports; a StatefulSet's `serviceName` is
//!   a headless Service selecting its pods;
//! - the configuration each epigraph pod sees (the image's `ENV`, the ConfigMap's
//!   `epigraph.toml`, the pod's variables with Secrets and the pod ordinal filled in) loads into
//!   `EpigraphConfig`; the pipeline's `[run.cluster]` addresses are exactly the pods of the driver
//!   and peer StatefulSets at their headless DNS names, each pod's process index is its ordinal,
//!   and the listen ports, Kafka, Neo4j, LanceDB and pipeline-metrics addresses match the
//!   manifests;
//! - Prometheus scrapes the driver's and the query service's metrics ports under the job names of
//!   `deploy/prometheus/prometheus.yml`; Grafana's dashboard is `deploy/grafana/epigraph.json`.
//!
//! Negative controls: a deliberately broken copy of a manifest is rejected by the validator, and
//! a kind the validator has no schema for (which it only warns about) fails the check here.
//! Needs the venv of `deploy/local/python.sh` (kubernetes-validate bundles the schemas: no
//! network).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use epigraph::config::EpigraphConfig;
use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use serde::Deserialize;
use serde_json::Value;

/// The Kubernetes versions whose schemas the manifests must pass: the oldest the README asks for
/// (StatefulSet start ordinals and the pod-index label) and the newest kubernetes-validate
/// 1.37.0 bundles.
const KUBERNETES_VERSIONS: [&str; 2] = ["1.32.0", "1.37.0"];

/// The pod label Kubernetes sets to a StatefulSet pod's ordinal.
const POD_INDEX: &str = "metadata.labels['apps.kubernetes.io/pod-index']";

fn repo() -> PathBuf {
    epigraph_schemas::manifest_dir!()
        .parent()
        .expect("the repository")
        .to_path_buf()
}

fn k8s_dir() -> PathBuf {
    repo().join("deploy/k8s")
}

/// One object of a manifest file.
#[derive(Clone, Debug)]
struct Object {
    file: String,
    value: Value,
}

impl Object {
    fn kind(&self) -> &str {
        self.value["kind"].as_str().unwrap_or_default()
    }
    fn name(&self) -> &str {
        self.value["metadata"]["name"].as_str().unwrap_or_default()
    }
    fn spec(&self) -> &Value {
        &self.value["spec"]
    }
    /// The pod template of a workload.
    fn pod(&self) -> Option<&Value> {
        matches!(self.kind(), "StatefulSet" | "Deployment").then_some(&self.spec()["template"])
    }
}

fn yaml_documents(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|document| Value::deserialize(document).expect("YAML"))
        .filter(|value| !value.is_null())
        .collect()
}

/// The manifest files (every `*.yaml` but kustomization.yaml), sorted.
fn manifest_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(k8s_dir())
        .expect("deploy/k8s")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .filter(|path| !path.ends_with("kustomization.yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no manifests in deploy/k8s");
    files
}

fn objects() -> Vec<Object> {
    manifest_files()
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).expect("manifest");
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            yaml_documents(&text).into_iter().map(move |value| Object {
                file: file.clone(),
                value,
            })
        })
        .collect()
}

fn find<'a>(objects: &'a [Object], kind: &str, name: &str) -> Option<&'a Object> {
    objects
        .iter()
        .find(|object| object.kind() == kind && object.name() == name)
}

fn get<'a>(objects: &'a [Object], kind: &str, name: &str) -> &'a Object {
    find(objects, kind, name).unwrap_or_else(|| panic!("no {kind} {name} in deploy/k8s"))
}

fn array(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// `labels` contains every `key: value` of `selector`.
fn selects(selector: &Value, labels: &Value) -> bool {
    let selector = selector.as_object().expect("a selector");
    !selector.is_empty()
        && selector
            .iter()
            .all(|(key, value)| labels.get(key) == Some(value))
}

fn containers(pod: &Value) -> &[Value] {
    array(&pod["spec"]["containers"])
}

/// The port a container declares under `port` (a name or a number), as a number.
fn container_port(container: &Value, port: &Value) -> Option<u64> {
    array(&container["ports"])
        .iter()
        .find(|declared| match port {
            Value::String(name) => declared["name"].as_str() == Some(name),
            number => &declared["containerPort"] == number,
        })
        .and_then(|declared| declared["containerPort"].as_u64())
}

fn named_port(container: &Value, name: &str) -> u64 {
    container_port(container, &Value::from(name))
        .unwrap_or_else(|| panic!("container {} declares no port {name}", container["name"]))
}

/// The venv's python (deploy/local/python.sh), as tests/tests/query_service.rs finds it.
fn python() -> PathBuf {
    let python = epigraph_sinks::embed::default_home().join("venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run deploy/local/python.sh",
        python.display()
    );
    python
}

/// kubernetes-validate in strict mode over `files` for every pinned version: Ok when every
/// object of every file passed (the validator only warns about a kind it has no schema for and
/// exits 0; that is a failure here), else the validator's report.
fn validate(files: &[PathBuf]) -> Result<String, String> {
    let mut command = std::process::Command::new(python());
    command.args(["-m", "kubernetes_validate", "--strict"]);
    for version in KUBERNETES_VERSIONS {
        command.args(["--kubernetes-version", version]);
    }
    let output = command
        .args(files)
        .output()
        .expect("running kubernetes-validate");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let mut expected = 0;
    for file in files {
        let text = std::fs::read_to_string(file).expect("manifest");
        expected += yaml_documents(&text).len() * KUBERNETES_VERSIONS.len();
    }
    let passed = report
        .lines()
        .filter(|l| l.contains(" passed for "))
        .count();
    let complaints = report
        .lines()
        .any(|l| !l.starts_with("INFO ") && !l.trim().is_empty());
    if output.status.success() && !complaints && passed == expected {
        Ok(report)
    } else {
        Err(format!(
            "{} ({passed} of {expected} checks passed)\n{report}",
            output.status
        ))
    }
}

#[test]
fn the_manifests_pass_the_kubernetes_schemas_strictly() {
    let files = manifest_files();
    if let Err(report) = validate(&files) {
        panic!("deploy/k8s does not validate: {report}");
    }
}

#[test]
fn a_broken_manifest_is_rejected() {
    let dir = tempfile::tempdir().expect("temp dir");
    let original = std::fs::read_to_string(k8s_dir().join("epigraph-run.yaml")).expect("manifest");
    // A misspelled field: only strict validation refuses it.
    let misspelled = original.replace("  podManagementPolicy:", "  podManagementPolicies:");
    assert_ne!(misspelled, original);
    let path = dir.path().join("epigraph-run.yaml");
    std::fs::write(&path, misspelled).expect("write");
    let report = validate(std::slice::from_ref(&path)).expect_err("a misspelled field passed");
    assert!(
        report.contains("statefulset/epigraph-run") && report.contains("podManagementPolicies"),
        "{report}"
    );
    // A kind without a schema: the validator warns and exits 0, the check here fails.
    let unknown = original.replace("kind: StatefulSet", "kind: StatefulSett");
    std::fs::write(&path, unknown).expect("write");
    let report = validate(std::slice::from_ref(&path)).expect_err("an unknown kind passed");
    assert!(report.contains("StatefulSett"), "{report}");
    // The original passes in the same place.
    std::fs::write(&path, original).expect("write");
    validate(std::slice::from_ref(&path)).expect("the unbroken copy");
}

#[test]
fn the_kustomization_lists_every_manifest_and_one_namespace() {
    let text = std::fs::read_to_string(k8s_dir().join("kustomization.yaml")).expect("kustomize");
    let kustomization = &yaml_documents(&text)[0];
    let listed: BTreeSet<&str> = array(&kustomization["resources"])
        .iter()
        .map(str_of)
        .collect();
    let files = manifest_files();
    let present: BTreeSet<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let present: BTreeSet<&str> = present.iter().map(String::as_str).collect();
    assert_eq!(listed, present, "kustomization.yaml resources");
    let objects = objects();
    let namespace = str_of(&kustomization["namespace"]);
    get(&objects, "Namespace", namespace);
    for object in &objects {
        let own = &object.value["metadata"]["namespace"];
        assert!(
            own.is_null() || own == namespace,
            "{} {} is in namespace {own}",
            object.kind(),
            object.name()
        );
    }
}

#[test]
fn every_reference_resolves() {
    let objects = objects();
    let exists = |kind: &str, name: &str, what: &str| {
        assert!(
            find(&objects, kind, name).is_some(),
            "{what}: no {kind} {name}"
        );
    };
    let secret_has = |name: &str, key: &str, what: &str| {
        let secret = get(&objects, "Secret", name);
        assert!(
            secret.value["stringData"].get(key).is_some()
                || secret.value["data"].get(key).is_some(),
            "{what}: Secret {name} has no key {key}"
        );
    };
    for object in objects.iter().filter(|o| o.pod().is_some()) {
        let what = format!("{} {} ({})", object.kind(), object.name(), object.file);
        let pod = object.pod().unwrap();
        let labels = &pod["metadata"]["labels"];
        assert!(
            selects(&object.spec()["selector"]["matchLabels"], labels),
            "{what}: the selector does not select the pod template"
        );
        assert_eq!(
            pod["spec"]["enableServiceLinks"],
            Value::Bool(false),
            "{what}: service links must be off (the images read NEO4J_*/KAFKA_* as settings)"
        );
        if let Some(account) = pod["spec"]["serviceAccountName"].as_str() {
            exists("ServiceAccount", account, &what);
        }
        let mut volumes = BTreeSet::new();
        for volume in array(&pod["spec"]["volumes"]) {
            volumes.insert(str_of(&volume["name"]));
            if let Some(name) = volume["configMap"]["name"].as_str() {
                exists("ConfigMap", name, &what);
            }
            if let Some(name) = volume["secret"]["secretName"].as_str() {
                exists("Secret", name, &what);
            }
            if let Some(name) = volume["persistentVolumeClaim"]["claimName"].as_str() {
                exists("PersistentVolumeClaim", name, &what);
            }
        }
        for template in array(&object.spec()["volumeClaimTemplates"]) {
            volumes.insert(str_of(&template["metadata"]["name"]));
        }
        for container in containers(pod) {
            for mount in array(&container["volumeMounts"]) {
                let name = str_of(&mount["name"]);
                assert!(volumes.contains(name), "{what}: no volume {name}");
            }
            let mut defined = BTreeSet::new();
            for var in array(&container["env"]) {
                let name = str_of(&var["name"]);
                if let Some(value) = var["value"].as_str() {
                    for reference in value.split("$(").skip(1) {
                        let used = reference.split(')').next().unwrap_or_default();
                        assert!(
                            defined.contains(used),
                            "{what}: {name} expands $({used}), not defined before it"
                        );
                    }
                }
                let from = &var["valueFrom"];
                if from["secretKeyRef"].is_object() && from["secretKeyRef"]["optional"] != true {
                    let r = &from["secretKeyRef"];
                    secret_has(str_of(&r["name"]), str_of(&r["key"]), &what);
                }
                if let Some(r) = from["configMapKeyRef"].as_object() {
                    let map = get(&objects, "ConfigMap", str_of(&r["name"]));
                    assert!(map.value["data"].get(str_of(&r["key"])).is_some(), "{what}");
                }
                defined.insert(name);
            }
            for from in array(&container["envFrom"]) {
                if let Some(name) = from["secretRef"]["name"].as_str() {
                    exists("Secret", name, &what);
                }
                if let Some(name) = from["configMapRef"]["name"].as_str() {
                    exists("ConfigMap", name, &what);
                }
            }
            for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
                let probe = &container[probe];
                for handler in ["httpGet", "tcpSocket"] {
                    let port = &probe[handler]["port"];
                    if !port.is_null() {
                        assert!(container_port(container, port).is_some(), "{what}: {port}");
                    }
                }
            }
        }
        if object.kind() == "StatefulSet" {
            let service = get(&objects, "Service", str_of(&object.spec()["serviceName"]));
            assert_eq!(
                service.spec()["clusterIP"],
                "None",
                "{what}: serviceName {} is not headless",
                service.name()
            );
            assert!(
                selects(&service.spec()["selector"], labels),
                "{what}: Service {} does not select its pods",
                service.name()
            );
        }
    }
    // Every Service selects pods, and some selected pod declares each target port.
    for service in objects.iter().filter(|o| o.kind() == "Service") {
        let pods: Vec<&Value> = objects
            .iter()
            .filter_map(Object::pod)
            .filter(|pod| selects(&service.spec()["selector"], &pod["metadata"]["labels"]))
            .collect();
        assert!(
            !pods.is_empty(),
            "Service {} selects no pod",
            service.name()
        );
        for port in array(&service.spec()["ports"]) {
            let target = &port["targetPort"];
            assert!(
                pods.iter()
                    .flat_map(|pod| containers(pod))
                    .any(|c| container_port(c, target).is_some()),
                "Service {}: no selected pod serves {target} as {}",
                service.name(),
                port["port"]
            );
        }
    }
    for binding in objects.iter().filter(|o| o.kind() == "RoleBinding") {
        exists(
            "Role",
            str_of(&binding.value["roleRef"]["name"]),
            binding.name(),
        );
        for subject in array(&binding.value["subjects"]) {
            exists("ServiceAccount", str_of(&subject["name"]), binding.name());
        }
    }
    // Neo4j 5 refuses a password shorter than 8 characters at its first start.
    let password = str_of(&get(&objects, "Secret", "neo4j-auth").value["stringData"]["password"]);
    assert!(password.len() >= 8, "neo4j-auth password too short");
    // Kafka: one controller voter per pod, at the pod's DNS name.
    let kafka = get(&objects, "StatefulSet", "kafka");
    let container = &containers(kafka.pod().unwrap())[0];
    let var = |name: &str| {
        array(&container["env"])
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("kafka has no {name}"))
            .clone()
    };
    assert_eq!(
        var("KAFKA_NODE_ID")["valueFrom"]["fieldRef"]["fieldPath"],
        POD_INDEX
    );
    let voters: Vec<String> = (0..kafka.spec()["replicas"].as_u64().unwrap())
        .map(|i| {
            format!(
                "{i}@kafka-{i}.{}.$(POD_NAMESPACE).svc.cluster.local:{}",
                str_of(&kafka.spec()["serviceName"]),
                named_port(container, "controller")
            )
        })
        .collect();
    assert_eq!(
        var("KAFKA_CONTROLLER_QUORUM_VOTERS")["value"],
        voters.join(",")
    );
}

/// The `EPIGRAPH_*` variables of the image (the `ENV` instruction of deploy/compose/Dockerfile).
fn image_env() -> BTreeMap<String, String> {
    let text =
        std::fs::read_to_string(repo().join("deploy/compose/Dockerfile")).expect("Dockerfile");
    assert!(
        text.contains(r#"ENTRYPOINT ["/usr/local/bin/epigraph"]"#),
        "the manifests pass `run`/`serve` as args to the image's entrypoint"
    );
    let mut vars = BTreeMap::new();
    let mut in_env = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("ENV ") {
            in_env = true;
        }
        if in_env {
            for word in line.trim_start_matches("ENV ").split_whitespace() {
                if let Some((name, value)) = word.split_once('=') {
                    vars.insert(name.to_string(), value.to_string());
                }
            }
            in_env = line.ends_with('\\');
        }
    }
    assert!(vars.contains_key("EPIGRAPH_LANCEDB__DIR"), "{vars:?}");
    vars
}

/// One pod's environment: the image's, then the container's with Secrets and the downward API
/// (name, namespace, ordinal) filled in.
fn pod_env(
    objects: &[Object],
    container: &Value,
    pod_name: &str,
    namespace: &str,
    ordinal: u64,
) -> BTreeMap<String, String> {
    let mut vars = image_env();
    for var in array(&container["env"]) {
        let value = if let Some(value) = var["value"].as_str() {
            value.to_string()
        } else if let Some(r) = var["valueFrom"]["secretKeyRef"].as_object() {
            let secret = get(objects, "Secret", str_of(&r["name"]));
            let value = &secret.value["stringData"][str_of(&r["key"])];
            value
                .as_str()
                .expect("a stringData key of the Secret")
                .to_string()
        } else {
            match str_of(&var["valueFrom"]["fieldRef"]["fieldPath"]) {
                "metadata.name" => pod_name.to_string(),
                "metadata.namespace" => namespace.to_string(),
                POD_INDEX => ordinal.to_string(),
                other => panic!("unhandled env source {other} in {}", var["name"]),
            }
        };
        vars.insert(str_of(&var["name"]).to_string(), value);
    }
    vars
}

/// What `EpigraphConfig::load` (pipelines/src/config.rs) makes of `toml` and `env`, with the same
/// precedence: defaults < the file < `EPIGRAPH_<SECTION>__<KEY>` variables (values parsed as
/// figment's Env provider parses them), the Neo4j password taken verbatim.
fn load_config(toml: &str, env: &BTreeMap<String, String>) -> EpigraphConfig {
    let mut figment =
        Figment::from(Serialized::defaults(EpigraphConfig::default())).merge(Toml::string(toml));
    for (name, value) in env {
        let Some(key) = name.strip_prefix("EPIGRAPH_") else {
            continue;
        };
        if !key.contains("__") {
            // Not configuration: a variable the binary reads itself.
            assert!(
                ["CONFIG", "HOME"].contains(&key),
                "{name} is no configuration key (a double underscore separates the levels)"
            );
            continue;
        }
        let path = key.to_ascii_lowercase().replace("__", ".");
        figment = if path == "neo4j.password" {
            figment.merge(Serialized::default(&path, value))
        } else {
            let value: figment::value::Value = value.parse().expect("infallible");
            figment.merge(Serialized::default(&path, value))
        };
    }
    figment
        .extract()
        .unwrap_or_else(|error| panic!("the configuration does not load: {error}"))
}

fn port_of(address: &str) -> u64 {
    let port = address.rsplit(':').next().unwrap_or_default();
    port.trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .unwrap_or_else(|_| panic!("no port in {address}"))
}

/// The route `path` is registered in the Rust source `file` (`.route("/path"`).
fn routed(file: &str, path: &str) -> bool {
    let text = std::fs::read_to_string(repo().join(file)).expect("source");
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    compact.contains(&format!(".route(\"{path}\""))
}

#[test]
fn every_epigraph_pod_loads_its_configuration_and_the_cluster_matches_the_statefulsets() {
    let objects = objects();
    let namespace = objects
        .iter()
        .find(|o| o.kind() == "Namespace")
        .expect("the Namespace")
        .name();
    let config_map = get(&objects, "ConfigMap", "epigraph-config");
    let toml = str_of(&config_map.value["data"]["epigraph.toml"]);
    let driver = get(&objects, "StatefulSet", "epigraph-run");
    let peers = get(&objects, "StatefulSet", "epigraph-run-peer");
    let serve = get(&objects, "Deployment", "epigraph-serve");
    assert_eq!(driver.spec()["replicas"], 1, "process 0 is one pod");
    assert!(driver.spec()["ordinals"]["start"].as_u64().unwrap_or(0) == 0);
    assert_eq!(
        peers.spec()["ordinals"]["start"],
        1,
        "peers are processes 1.."
    );
    let service = str_of(&driver.spec()["serviceName"]);
    assert_eq!(service, str_of(&peers.spec()["serviceName"]));
    let epigraph_containers: Vec<&Value> = [driver, peers, serve]
        .iter()
        .flat_map(|o| containers(o.pod().unwrap()))
        .collect();
    for container in &epigraph_containers {
        assert_eq!(
            container["image"],
            format!("epigraph:{}", env!("CARGO_PKG_VERSION")),
            "one image (one binary, one bundled ontology) everywhere"
        );
        assert!(container["command"].is_null(), "the image's entrypoint");
        let env = pod_env(&objects, container, "pod", namespace, 0);
        let volume = array(&container["volumeMounts"])
            .iter()
            .find(|m| m["name"] == "config")
            .expect("the config volume");
        assert_eq!(
            env["EPIGRAPH_CONFIG"],
            format!("{}/epigraph.toml", str_of(&volume["mountPath"]))
        );
    }

    // Every pipeline pod: its process index is its ordinal, its address is its own DNS name.
    let mut expected_addresses = Vec::new();
    let mut pipeline_pods = Vec::new();
    for set in [driver, peers] {
        let start = set.spec()["ordinals"]["start"].as_u64().unwrap_or(0);
        let replicas = set.spec()["replicas"].as_u64().expect("replicas");
        let container = &containers(set.pod().unwrap())[0];
        for ordinal in start..start + replicas {
            let pod = format!("{}-{ordinal}", set.name());
            let port = named_port(container, "timely");
            expected_addresses.push(format!(
                "{pod}.{service}.{namespace}.svc.cluster.local:{port}"
            ));
            pipeline_pods.push((set, pod, ordinal));
        }
    }
    for (set, pod, ordinal) in &pipeline_pods {
        let container = &containers(set.pod().unwrap())[0];
        assert_eq!(container["args"], serde_json::json!(["run"]));
        let config = load_config(
            toml,
            &pod_env(&objects, container, pod, namespace, *ordinal),
        );
        assert_eq!(config.run.cluster.addresses, expected_addresses, "{pod}");
        assert_eq!(config.run.cluster.process as u64, *ordinal, "{pod}");
    }

    // The driver: metrics where its port, probes and the query service's relay say.
    let (driver_pod, container) = (&pipeline_pods[0].1, &containers(driver.pod().unwrap())[0]);
    let config = load_config(
        toml,
        &pod_env(&objects, container, driver_pod, namespace, 0),
    );
    let metrics_port = named_port(container, "metrics");
    assert_eq!(config.run.metrics_listen, format!("0.0.0.0:{metrics_port}"));
    for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
        let path = str_of(&container[probe]["httpGet"]["path"]);
        assert!(
            routed("pipelines/src/runtime/metrics.rs", path),
            "driver {probe} {path}"
        );
    }
    let lance = |container: &Value| {
        array(&container["volumeMounts"])
            .iter()
            .find(|m| m["name"] == "lancedb")
            .map(|m| str_of(&m["mountPath"]).to_string())
    };
    assert_eq!(
        lance(container).as_deref(),
        Some(config.lancedb.dir.as_str())
    );

    // The query service.
    let container = &containers(serve.pod().unwrap())[0];
    assert_eq!(container["args"], serde_json::json!(["serve"]));
    let config = load_config(toml, &pod_env(&objects, container, "serve", namespace, 0));
    assert!(config.serve.listen.starts_with("0.0.0.0:"));
    assert_eq!(port_of(&config.serve.listen), named_port(container, "http"));
    assert!(
        !config.serve.tokens.is_empty(),
        "without tokens serve stays on loopback"
    );
    assert!(!config.serve.ingest_tokens.is_empty());
    for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
        let path = str_of(&container[probe]["httpGet"]["path"]);
        assert!(
            routed("pipelines/src/serve/mod.rs", path),
            "serve {probe} {path}"
        );
    }
    assert_eq!(
        config.serve.pipeline_metrics,
        format!(
            "http://{}:{metrics_port}/metrics",
            expected_addresses[0].rsplit_once(':').unwrap().0
        )
    );
    // The LanceDB folder: the same ReadWriteMany claim in the driver and the query service.
    assert_eq!(
        lance(container).as_deref(),
        Some(config.lancedb.dir.as_str())
    );
    for set in [driver.pod().unwrap(), serve.pod().unwrap()] {
        let volume = array(&set["spec"]["volumes"])
            .iter()
            .find(|v| v["name"] == "lancedb")
            .expect("lancedb volume");
        let claim = str_of(&volume["persistentVolumeClaim"]["claimName"]);
        let claim = get(&objects, "PersistentVolumeClaim", claim);
        assert!(
            array(&claim.spec()["accessModes"]).contains(&Value::from("ReadWriteMany")),
            "the LanceDB claim must be ReadWriteMany: two pods mount it"
        );
    }
    // Kafka and Neo4j at their Services' ports.
    let service_port = |name: &str, port: u64| {
        let service = get(&objects, "Service", name);
        assert!(
            array(&service.spec()["ports"])
                .iter()
                .any(|p| p["port"] == port),
            "Service {name} has no port {port}"
        );
    };
    for broker in config.kafka.bootstrap.split(',') {
        let (host, port) = broker.rsplit_once(':').expect("host:port");
        service_port(host, port.parse().unwrap());
    }
    let neo4j = config.neo4j.uri.trim_start_matches("bolt://");
    let (host, port) = neo4j.rsplit_once(':').expect("host:port");
    service_port(host, port.parse().unwrap());
    assert_eq!(config.kafka.replication as u64, {
        let kafka = get(&objects, "StatefulSet", "kafka");
        kafka.spec()["replicas"].as_u64().unwrap()
    });
}

/// The `keep` rule of a job: its source labels and literal regex.
fn kept(job: &Value) -> (Vec<String>, String) {
    let rule = array(&job["relabel_configs"])
        .iter()
        .find(|r| r["action"] == "keep")
        .expect("a keep rule");
    let labels = array(&rule["source_labels"])
        .iter()
        .map(|l| str_of(l).to_string())
        .collect();
    (labels, str_of(&rule["regex"]).to_string())
}

/// Every (pod, port) a `keep` rule keeps, as `kind/name:port`.
fn scraped(objects: &[Object], job: &Value) -> BTreeSet<String> {
    let (labels, regex) = kept(job);
    assert!(
        regex
            .chars()
            .all(|c| c.is_alphanumeric() || "-_;".contains(c)),
        "a literal regex is expected: {regex}"
    );
    let mut targets = BTreeSet::new();
    for object in objects.iter().filter(|o| o.pod().is_some()) {
        let pod = object.pod().unwrap();
        for container in containers(pod) {
            for port in array(&container["ports"]) {
                let values: Vec<&str> = labels
                    .iter()
                    .map(|label| {
                        if label == "__meta_kubernetes_pod_container_port_name" {
                            str_of(&port["name"])
                        } else {
                            let key = label
                                .strip_prefix("__meta_kubernetes_pod_label_")
                                .unwrap_or_else(|| panic!("unhandled label {label}"));
                            pod["metadata"]["labels"]
                                .as_object()
                                .unwrap()
                                .iter()
                                .find(|(k, _)| k.replace(['.', '/', '-'], "_") == key)
                                .map(|(_, v)| str_of(v))
                                .unwrap_or_default()
                        }
                    })
                    .collect();
                if values.join(";") == regex {
                    let port = str_of(&port["name"]);
                    targets.insert(format!("{}/{}:{port}", object.kind(), object.name()));
                }
            }
        }
    }
    targets
}

#[test]
fn prometheus_scrapes_the_driver_and_the_query_service_and_grafana_shows_the_dashboard() {
    let objects = objects();
    let config = get(&objects, "ConfigMap", "prometheus-config");
    let prometheus = &yaml_documents(str_of(&config.value["data"]["prometheus.yml"]))[0];
    let local = std::fs::read_to_string(repo().join("deploy/prometheus/prometheus.yml")).unwrap();
    let local = &yaml_documents(&local)[0];
    let names = |config: &Value| -> BTreeSet<String> {
        array(&config["scrape_configs"])
            .iter()
            .map(|job| str_of(&job["job_name"]).to_string())
            .collect()
    };
    assert_eq!(
        names(prometheus),
        names(local),
        "the job names of deploy/prometheus"
    );
    let job = |name: &str| {
        array(&prometheus["scrape_configs"])
            .iter()
            .find(|job| job["job_name"] == name)
            .unwrap()
            .clone()
    };
    let run = job("epigraph-run");
    assert_eq!(
        scraped(&objects, &run),
        BTreeSet::from(["StatefulSet/epigraph-run:metrics".to_string()]),
        "the driver's metrics port only (the peers export nothing)"
    );
    let serve = job("epigraph-serve");
    assert_eq!(
        scraped(&objects, &serve),
        BTreeSet::from(["Deployment/epigraph-serve:http".to_string()])
    );
    for job in [&run, &serve] {
        assert_eq!(job["metrics_path"], "/metrics");
        for sd in array(&job["kubernetes_sd_configs"]) {
            assert_eq!(sd["role"], "pod");
        }
    }
    // Pod discovery needs the Role to list pods, bound to the pod's ServiceAccount.
    let deployment = get(&objects, "Deployment", "prometheus");
    let account = str_of(&deployment.pod().unwrap()["spec"]["serviceAccountName"]);
    let binding = objects
        .iter()
        .find(|o| {
            o.kind() == "RoleBinding"
                && array(&o.value["subjects"])
                    .iter()
                    .any(|s| s["name"] == account)
        })
        .expect("a RoleBinding of Prometheus's account");
    let role = get(&objects, "Role", str_of(&binding.value["roleRef"]["name"]));
    assert!(array(&role.value["rules"]).iter().any(|rule| {
        array(&rule["resources"]).contains(&Value::from("pods"))
            && array(&rule["verbs"]).contains(&Value::from("list"))
            && array(&rule["verbs"]).contains(&Value::from("watch"))
    }));
    // Prometheus reads the file the ConfigMap mounts.
    let container = &containers(deployment.pod().unwrap())[0];
    let mount = array(&container["volumeMounts"])
        .iter()
        .find(|m| m["name"] == "config")
        .unwrap();
    assert!(array(&container["args"]).contains(&Value::from(format!(
        "--config.file={}/prometheus.yml",
        str_of(&mount["mountPath"])
    ))));

    // Grafana: the data source is the Prometheus Service, the dashboard is deploy/grafana's.
    let datasources = get(&objects, "ConfigMap", "grafana-datasources");
    let datasources = &yaml_documents(str_of(&datasources.value["data"]["prometheus.yaml"]))[0];
    let url = str_of(&datasources["datasources"][0]["url"]);
    let web = named_port(container, "web");
    assert_eq!(
        url,
        format!(
            "http://{}:{web}",
            get(&objects, "Service", "prometheus").name()
        )
    );
    let dashboard = get(&objects, "ConfigMap", "grafana-dashboard-epigraph");
    let file = std::fs::read_to_string(repo().join("deploy/grafana/epigraph.json")).unwrap();
    assert!(
        dashboard.value["data"]["epigraph.json"] == file.as_str(),
        "deploy/k8s/grafana-dashboard.yaml is not deploy/grafana/epigraph.json: regenerate it \
         (deploy/k8s/README.md)"
    );
    let provider = get(&objects, "ConfigMap", "grafana-dashboard-provider");
    let provider = &yaml_documents(str_of(&provider.value["data"]["epigraph.yaml"]))[0];
    let grafana = get(&objects, "Deployment", "grafana").pod().unwrap();
    let volume = array(&grafana["spec"]["volumes"])
        .iter()
        .find(|v| v["configMap"]["name"] == dashboard.name())
        .expect("the dashboard volume");
    let mount = array(&containers(grafana)[0]["volumeMounts"])
        .iter()
        .find(|m| m["name"] == volume["name"])
        .expect("the dashboard mount");
    assert_eq!(
        provider["providers"][0]["options"]["path"],
        mount["mountPath"]
    );
}
