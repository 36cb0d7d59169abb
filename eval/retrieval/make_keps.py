#!/usr/bin/env python3
"""Build eval/retrieval/keps/corpus.jsonl from the KEP fixtures (kubernetes/enhancements keps/).

Usage: make_keps.py [--src tests/fixtures/keps/keps] [--out eval/retrieval/keps]

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

# About 2.3 MB of README text in 63 KEPs, in topical clusters so that queries have near misses:
# CronJob (19, 3140, 4026), Job (592, 2214, 2232, 2307, 2879, 3329, 3850, 3998, 3939, 3715,
# 4443), PodDisruptionBudget (85, 3017, 981, and scheduling's 3280), DaemonSet/StatefulSet
# rollout (1591, 961, 2599, 1847, 3541, and scheduling's 548), HPA (853, 4951, 2702, 117, 1610,
# 2021, 5679), pod topology spread (895, 1258, 3022, 3094, 3243), priority and preemption
# (268, 902, 4832), gang scheduling (583 -> 5832 -> 4671), taints (166, 382, 3902), sidecars
# and restart policy (753, 4438, 5307), DRA (3063 withdrawn -> 4381), cgroups (2254 -> 4569 ->
# 5573), kubelet configuration (281 removed -> 3983), CrashLoopBackOff (4603, 5593), dockershim
# (1547, 2221), seccomp (135, 2413) and slow-starting containers (950, 2238).
KEPS = [
    "sig-apps/19-Graduate-CronJob-to-Stable",
    "sig-apps/3140-TimeZone-support-in-CronJob",
    "sig-apps/4026-crojob-scheduled-timestamp-annotation",
    "sig-apps/592-ttl-after-finish",
    "sig-apps/2214-indexed-job",
    "sig-apps/2232-suspend-jobs",
    "sig-apps/2307-job-tracking-without-lingering-pods",
    "sig-apps/2879-ready-pods-job-status",
    "sig-apps/3329-retriable-and-non-retriable-failures",
    "sig-apps/3850-backoff-limits-per-index-for-indexed-jobs",
    "sig-apps/3998-job-success-completion-policy",
    "sig-apps/3939-allow-replacement-when-fully-terminated",
    "sig-apps/3715-elastic-indexed-job",
    "sig-apps/4443-configurable-pod-failure-policy-reasons",
    "sig-apps/85-Graduate-PDB-to-Stable",
    "sig-apps/3017-pod-healthy-policy-for-pdb",
    "sig-apps/981-poddisruptionbudget-for-custom-resources",
    "sig-apps/1591-daemonset-surge",
    "sig-apps/961-maxunavailable-for-statefulset",
    "sig-apps/2599-minreadyseconds-for-statefulsets",
    "sig-apps/1847-autoremove-statefulset-pvcs",
    "sig-apps/3541-add-recreate-strategy-to-statefulset",
    "sig-autoscaling/853-configurable-hpa-scale-velocity",
    "sig-autoscaling/4951-configurable-hpa-tolerance",
    "sig-autoscaling/2702-graduate-hpa-api-to-GA",
    "sig-autoscaling/117-hpa-metrics-specificity",
    "sig-autoscaling/1610-container-resource-autoscaling",
    "sig-autoscaling/2021-scale-from-zero",
    "sig-autoscaling/5679-external-metric-fallback",
    "sig-scheduling/895-pod-topology-spread",
    "sig-scheduling/1258-default-pod-topology-spread",
    "sig-scheduling/3022-min-domains-in-pod-topology-spread",
    "sig-scheduling/3094-pod-topology-spread-considering-taints",
    "sig-scheduling/3243-respect-pod-topology-spread-after-rolling-upgrades",
    "sig-scheduling/548-schedule-daemonset-pods",
    "sig-scheduling/268-priority-preemption",
    "sig-scheduling/902-non-preempting-priorityclass",
    "sig-scheduling/4832-async-preemption",
    "sig-scheduling/3280-guarantee-pdb-when-preemption-happens",
    "sig-scheduling/583-coscheduling",
    "sig-scheduling/5832-decouple-podgroup-api",
    "sig-scheduling/4671-gang-scheduling",
    "sig-node/166-taint-based-eviction",
    "sig-scheduling/382-taint-node-by-condition",
    "sig-scheduling/3902-decoupled-taint-manager",
    "sig-node/753-sidecar-containers",
    "sig-node/4438-container-restart-termination",
    "sig-node/5307-container-restart-policy",
    "sig-node/3063-dynamic-resource-allocation",
    "sig-node/4381-dra-structured-parameters",
    "sig-node/2254-cgroup-v2",
    "sig-node/4569-cgroup-v1-maintenance-mode",
    "sig-node/5573-remove-cgroup-v1",
    "sig-node/281-dynamic-kubelet-configuration",
    "sig-node/3983-drop-in-configuration",
    "sig-node/4603-tune-crashloopbackoff",
    "sig-node/5593-configure-the-max-crashloopbackoff-delay",
    "sig-node/2221-remove-dockershim",
    "sig-node/1547-building-kubelet-without-docker",
    "sig-node/135-seccomp",
    "sig-node/2413-seccomp-by-default",
    "sig-node/950-liveness-probe-holdoff",
    "sig-node/2238-liveness-probe-grace-period",
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
    ap.add_argument("--out", default="eval/retrieval/keps")
    args = ap.parse_args()
    out = Path(args.out)
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
