#!/usr/bin/env python3
"""Checks a Kubernetes manifest holds an Indexed Job as the API server would accept it and as podsim's sharded sweep
needs it. Usage: check_k8s_indexed_job.py MANIFEST.yaml. Prints "ok N" (N = completions) or each problem, exit 1.

The rules are Kubernetes' own (kubernetes.io/docs/concepts/workloads/controllers/job/ and the batch/v1 API reference):
apiVersion batch/v1, kind Job; metadata.name a DNS-1123 subdomain, at most 63 characters for an Indexed Job (its pods'
hostnames are NAME-INDEX); completionMode Indexed needs completions (1..100000); parallelism between 0 and
completions; the pod template's restartPolicy Never or OnFailure (a Job may not use Always); containers non-empty,
each with a DNS-1123 label name (unique) and an image; volume mounts naming declared volumes. podsim's: the shell
command passes --shard "${JOB_COMPLETION_INDEX}/N" with N = completions, and writes --json per index."""
import re
import sys

import yaml

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def problems(doc):
    out = []
    if not isinstance(doc, dict):
        return ["the document is not a mapping"]
    if doc.get("apiVersion") != "batch/v1":
        out.append("apiVersion must be batch/v1")
    if doc.get("kind") != "Job":
        out.append("kind must be Job")
    name = (doc.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not DNS1123_SUBDOMAIN.match(name) or len(name) > 63:
        out.append("metadata.name must be a DNS-1123 subdomain of at most 63 characters (Indexed Job)")
    spec = doc.get("spec") or {}
    if spec.get("completionMode") != "Indexed":
        out.append("spec.completionMode must be Indexed")
    completions = spec.get("completions")
    if not isinstance(completions, int) or isinstance(completions, bool) or not 1 <= completions <= 100000:
        out.append("spec.completions must be an integer in 1..100000 for an Indexed Job")
        completions = None
    parallelism = spec.get("parallelism", 1)
    if not isinstance(parallelism, int) or parallelism < 0 or (completions and parallelism > completions):
        out.append("spec.parallelism must be an integer in 0..completions")
    pod = ((spec.get("template") or {}).get("spec")) or {}
    if pod.get("restartPolicy") not in ("Never", "OnFailure"):
        out.append("spec.template.spec.restartPolicy must be Never or OnFailure for a Job")
    volumes = {v.get("name") for v in pod.get("volumes") or [] if isinstance(v, dict)}
    containers = pod.get("containers")
    if not isinstance(containers, list) or not containers:
        out.append("spec.template.spec.containers must be a non-empty list")
        containers = []
    names = set()
    shard_ok = False
    for i, c in enumerate(containers):
        at = f"spec.template.spec.containers[{i}]"
        if not isinstance(c, dict):
            out.append(f"{at} must be a mapping")
            continue
        if not isinstance(c.get("name"), str) or not DNS1123_LABEL.match(c["name"]) or c["name"] in names:
            out.append(f"{at}.name must be a unique DNS-1123 label")
        names.add(c.get("name"))
        if not isinstance(c.get("image"), str) or not c["image"]:
            out.append(f"{at}.image must be set")
        for m in c.get("volumeMounts") or []:
            if m.get("name") not in volumes:
                out.append(f"{at}.volumeMounts: {m.get('name')} is not a declared volume")
        line = " ".join(str(x) for x in (c.get("command") or []) + (c.get("args") or []))
        m = re.search(r'--shard\s+"?\$\{JOB_COMPLETION_INDEX\}/(\d+)"?', line)
        if m:
            shard_ok = True
            if completions and int(m.group(1)) != completions:
                out.append(f"{at}: --shard .../{m.group(1)} but completions is {completions}")
            if "${JOB_COMPLETION_INDEX}" not in line.split("--json", 1)[-1]:
                out.append(f"{at}: each index must write its own --json file")
    if not shard_ok:
        out.append('no container runs podsim sweep --shard "${JOB_COMPLETION_INDEX}/N"')
    return out


def main():
    with open(sys.argv[1]) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    jobs = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Job"] or docs[:1]
    if len(jobs) != 1:
        print("expected exactly one Job in the manifest")
        return 1
    found = problems(jobs[0])
    for p in found:
        print(p)
    if not found:
        print("ok", jobs[0]["spec"]["completions"])
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
