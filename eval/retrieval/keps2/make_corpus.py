#!/usr/bin/env python3
"""Build eval/retrieval/keps2/corpus.jsonl from the KEP fixtures (kubernetes/enhancements keps/).

Usage: make_corpus.py [--src tests/fixtures/keps/keps] [--out eval/retrieval/keps2]

Adapted from eval/retrieval/make_keps.py (same fields, same header, same text preparation);
only the list of KEPs and the output folder differ. If eval/retrieval/keps/corpus.jsonl exists,
its `_id`s are read and the script refuses to write a document that is also in the first set.

Each selected KEP (directory keps/<sig>/<dir>/ with README.md and kep.yaml) becomes one BEIR
document:
  _id   = "<sig>/<dir>" with "/" replaced by "--", e.g. "sig-apps--2214-indexed-job"
  title = the `title` field of kep.yaml
  text  = a short header built from kep.yaml, one "Field: value" line each, in this order and
          only when present and non-empty:
            KEP (kep-number), Title, Status, Stage, Owning SIG, Creation date, Last updated,
            Replaces, Superseded by (lists joined with ", "; "n/a"/"none" entries dropped),
            Latest milestone
          then a blank line and README.md verbatim.

kep.yaml is read with a tiny line parser (stdlib only): top-level "key: value" lines, inline
"# comments" dropped, surrounding quotes stripped, and "- item" lines following an empty
top-level key collected as a list.

queries.jsonl, qrels/*.tsv and state.jsonl are written by hand and are not touched here.
Deterministic: the same fixtures give byte-identical output.
"""
import argparse
import json
import re
from pathlib import Path

# 71 KEPs (about 2.0 MB of README text), none of them in eval/retrieval/keps/corpus.jsonl, in
# topical clusters so that queries have near misses and "current state" questions have an
# older and a newer document: kustomize in kubectl (2377 -> 2386 -> 2384; 4706 rejected removal;
# 993 -> 2953 plugins; 2383, 1802), kubectl plugins (2379 -> 3638), kubectl UX (1441, 4292, 3805,
# 491, 3104, 2229 rejected, 2227, 3895, 1440) and ephemeral containers (sig-node 277), CSI
# service account tokens (1855 -> 5538; 2451 replaced), volume ownership and SELinux (695, 1682,
# 2317, 1710), CSI migration (625, 1487, 2924 withdrawn, 2923), volume expansion (284, 531, 556,
# 1790, 3107), snapshots (177, 1900, 3476), logging (1602 -> 3077, 2845, 1753 deprecated),
# metrics stability and tracing (1209 -> 3498, 2305, 647, 2831), release policy (1498, 2572,
# 3720), CPU manager (3570, 2625, 2902, 4176, 4540), node shutdown (2000 -> 2712, storage's
# 2268), in-place resize (1287, 5419), preStop sleep (3960 -> 4818), gRPC probes (2727 -> 4939),
# gitRepo removal (5040), memory-backed emptyDir (1967 -> 6030), swap (2400), PSI (4205 -> 5394).
KEPS = [
    "sig-cli/2377-Kustomize",
    "sig-cli/2386-kustomize-subcommand-integration",
    "sig-cli/4706-deprecate-and-remove-kustomize",
    "sig-cli/993-kustomize-generators-transformers",
    "sig-cli/2953-kustomize-plugin-graduation",
    "sig-cli/2384-kustomize-file-processing-integration",
    "sig-cli/2383-extend-kustomize-patches-to-multiple-targets",
    "sig-cli/1802-kustomize-components",
    "sig-cli/2379-kubectl-plugins",
    "sig-cli/3638-kubectl-plugin-subcommands",
    "sig-cli/1441-kubectl-debug",
    "sig-cli/4292-kubectl-debug-custom-profile",
    "sig-cli/3805-ssa-default",
    "sig-cli/491-kubectl-diff",
    "sig-cli/3104-introduce-kuberc",
    "sig-cli/2229-kubectl-xdg-base-dir",
    "sig-cli/2227-kubectl-default-container",
    "sig-cli/3895-kubectl-delete-interactivity",
    "sig-cli/1440-kubectl-events",
    "sig-node/277-ephemeral-containers",
    "sig-storage/1855-csi-driver-service-account-token",
    "sig-storage/5538-csi-sa-tokens-secrets-field",
    "sig-storage/2451-service-account-token-volumes",
    "sig-storage/695-skip-permission-change",
    "sig-storage/1682-csi-driver-skip-permission",
    "sig-storage/2317-fsgroup-on-mount",
    "sig-storage/1710-selinux-relabeling",
    "sig-storage/625-csi-migration",
    "sig-storage/1487-csi-migration-aws",
    "sig-storage/2924-csi-migration-cephfs",
    "sig-storage/2923-csi-migration-ceph-rbd",
    "sig-storage/284-enable-volume-expansion",
    "sig-storage/531-online-pv-resizing",
    "sig-storage/556-csi-volume-resizing",
    "sig-storage/1790-recover-resize-failure",
    "sig-storage/3107-csi-nodeexpandsecret",
    "sig-storage/177-volume-snapshot",
    "sig-storage/1900-volume-snapshot-validation-webhook",
    "sig-storage/3476-volume-group-snapshot",
    "sig-instrumentation/1602-structured-logging",
    "sig-instrumentation/3077-contextual-logging",
    "sig-instrumentation/2845-deprecate-klog-specific-flags-in-k8s-components",
    "sig-instrumentation/1753-logs-sanitization",
    "sig-instrumentation/1209-metrics-stability",
    "sig-instrumentation/3498-extending-stability",
    "sig-instrumentation/2305-metrics-cardinality-enforcement",
    "sig-instrumentation/647-apiserver-tracing",
    "sig-instrumentation/2831-kubelet-tracing",
    "sig-release/1498-kubernetes-yearly-support-period",
    "sig-release/2572-release-cadence",
    "sig-release/3720-freezing-k8s-gcr-io",
    "sig-node/3570-cpumanager",
    "sig-node/2625-cpumanager-policies-thread-placement",
    "sig-node/2902-cpumanager-distribute-cpus-policy-option",
    "sig-node/4176-cpumanager-spread-cpus-preferred-policy",
    "sig-node/4540-strict-cpu-reservation",
    "sig-node/2000-graceful-node-shutdown",
    "sig-node/2712-pod-priority-based-graceful-node-shutdown",
    "sig-storage/2268-non-graceful-shutdown",
    "sig-node/1287-in-place-update-pod-resources",
    "sig-node/5419-pod-level-resources-in-place-resize",
    "sig-node/3960-pod-lifecycle-sleep-action",
    "sig-node/4818-allow-zero-value-for-sleep-action-of-prestop-hook",
    "sig-node/2727-grpc-probe",
    "sig-node/4939-grpc-probe-with-tls",
    "sig-storage/5040-remove-gitrepo-driver",
    "sig-node/1967-size-memory-backed-volumes",
    "sig-node/6030-dynamic-resize-of-memory-backed-volumes",
    "sig-node/2400-node-swap",
    "sig-node/4205-psi-metric",
    "sig-node/5394-psi-node-conditions",
]

HEADER = [
    ("kep-number", "KEP"),
    ("title", "Title"),
    ("status", "Status"),
    ("stage", "Stage"),
    ("owning-sig", "Owning SIG"),
    ("creation-date", "Creation date"),
    ("last-updated", "Last updated"),
    ("replaces", "Replaces"),
    ("superseded-by", "Superseded by"),
    ("latest-milestone", "Latest milestone"),
]
EMPTY = {"", "n/a", "na", "none", "[]", "~", "null"}


def unquote(value):
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value.strip()


def strip_comment(value):
    # Drop an inline comment (" #..."), but not a "#" inside quotes.
    value = value.strip()
    if value and value[0] in "\"'":
        end = value.find(value[0], 1)
        if end > 0:
            return value[: end + 1]
    return re.split(r"(?:^|\s)#", value, maxsplit=1)[0].strip()


def parse_kep_yaml(path: Path):
    fields, key = {}, None
    for line in path.read_text(encoding="utf-8").split("\n"):
        top = re.match(r"^([A-Za-z][\w-]*):(.*)$", line)
        if top:
            name, value = top.group(1), strip_comment(top.group(2))
            if value:
                fields[name] = unquote(value)
                key = None
            else:
                fields[name] = []
                key = name
            continue
        item = re.match(r"^\s*-\s+(.*)$", line)
        if key is not None and item:
            fields[key].append(unquote(strip_comment(item.group(1))))
            continue
        if line.strip() == "" or line.lstrip().startswith("#") or line[:1] in " \t":
            continue
        key = None
    return fields


def header_value(value):
    if isinstance(value, list):
        items = [v for v in value if v.lower() not in EMPTY]
        return ", ".join(items)
    return "" if value.lower() in EMPTY else value


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default="tests/fixtures/keps/keps")
    ap.add_argument("--out", default="eval/retrieval/keps2")
    ap.add_argument("--first", default="eval/retrieval/keps/corpus.jsonl",
                    help="first set's corpus, whose ids must not be reused (skipped if missing)")
    args = ap.parse_args()
    out = Path(args.out)
    first = Path(args.first)
    if first.exists():
        taken = {json.loads(line)["_id"] for line in first.read_text(encoding="utf-8").splitlines() if line.strip()}
        overlap = sorted(k.replace("/", "--") for k in KEPS if k.replace("/", "--") in taken)
        if overlap:
            raise SystemExit(f"KEPs already in {first}: {overlap}")
    if len(set(KEPS)) != len(KEPS):
        raise SystemExit("duplicate KEP in KEPS")
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    with open(out / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for kep in KEPS:
            base = Path(args.src) / kep
            fields = parse_kep_yaml(base / "kep.yaml")
            readme = (base / "README.md").read_text(encoding="utf-8")
            lines = []
            for key, label in HEADER:
                value = header_value(fields.get(key, ""))
                if value:
                    lines.append(f"{label}: {value}")
            text = "\n".join(lines) + "\n\n" + readme
            total += len(text.encode("utf-8"))
            doc = {"_id": kep.replace("/", "--"), "title": header_value(fields.get("title", "")), "text": text}
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    print(f"{len(KEPS)} documents, {total} bytes of text -> {out / 'corpus.jsonl'}")


if __name__ == "__main__":
    main()
