#!/usr/bin/env python3
"""Structural check of deploy/k8s against the source tree (run by deploy/k8s_test.sh).

usage: k8s_check.py ROOT [MANIFEST_DIR]

What a schema cannot know and a cluster would only tell at run time: every COURTPIECE_*
variable a container is given is one its service reads (services/<name>/*.cc); every
configMapKeyRef/secretKeyRef names a key the ConfigMap/Secret here defines; probes are
the gRPC health service on the port the service listens on (its COURTPIECE_<NAME>_ADDR);
Prometheus annotations name the metrics port; Services select pods that exist and target
ports they declare; every service under services/ runs, with 2+ replicas; the table tier
takes its instance id from the pod name and advertises the pod IP; every pod runs
non-root with a read-only root and resource requests and limits; images are named and
tagged; Jobs migrate the schemas that have migrations/. Plus: apiVersion/kind pairs are
the ones this suite uses (a typo'd apiVersion is refused), names are unique.
"""
import pathlib
import re
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import courtpiece_source  # noqa: E402

KNOWN_KINDS = {
    ("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Service"),
    ("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"), ("batch/v1", "Job"),
    ("policy/v1", "PodDisruptionBudget"),
}
WORKLOADS = ("Deployment", "StatefulSet", "Job")


def load(manifest_dir):
    kustomization = yaml.safe_load((manifest_dir / "kustomization.yaml").read_text())
    docs = []
    listed = kustomization.get("resources", [])
    # *.example.yaml (the Secret) is applied by hand, never by `kubectl apply -k`, so that a
    # re-apply cannot overwrite the real values; it is checked all the same.
    examples = sorted(p.name for p in manifest_dir.glob("*.example.yaml"))
    on_disk = sorted(p.name for p in manifest_dir.glob("*.yaml")
                     if p.name != "kustomization.yaml" and p.name not in examples)
    errors = [f"{f}: not listed in kustomization.yaml" for f in on_disk if f not in listed]
    errors += [f"{f}: an example must not be in kustomization.yaml" for f in examples if f in listed]
    for name in listed + examples:
        for i, doc in enumerate(yaml.safe_load_all((manifest_dir / name).read_text())):
            if doc is not None:
                docs.append((f"{name}#{i}", doc))
    return docs, errors


def containers(doc):
    spec = doc["spec"]["template"]["spec"]
    return spec, spec.get("containers", []) + spec.get("initContainers", [])


def check(root, manifest_dir):
    docs, errors = load(manifest_dir)
    err = errors.append
    seen, namespaces, config_keys, secret_keys = set(), set(), {}, {}
    for where, d in docs:
        if (d.get("apiVersion"), d.get("kind")) not in KNOWN_KINDS:
            err(f"{where}: unknown apiVersion/kind {d.get('apiVersion')}/{d.get('kind')}")
            continue
        meta = d.get("metadata") or {}
        key = (d["kind"], meta.get("namespace"), meta.get("name"))
        if not meta.get("name"):
            err(f"{where}: no metadata.name")
        if key in seen:
            err(f"{where}: {d['kind']} {meta.get('name')} defined twice")
        seen.add(key)
        if d["kind"] == "Namespace":
            namespaces.add(meta["name"])
        elif d["kind"] == "ConfigMap":
            config_keys[meta["name"]] = set((d.get("data") or {}).keys())
        elif d["kind"] == "Secret":
            secret_keys[meta["name"]] = set((d.get("stringData") or {}).keys()) | \
                set((d.get("data") or {}).keys())
    for where, d in docs:
        ns = (d.get("metadata") or {}).get("namespace")
        if d.get("kind") != "Namespace" and ns not in namespaces:
            err(f"{where}: namespace {ns!r} is not one defined here ({sorted(namespaces)})")

    pods = {}  # workload name -> (labels, {port name: number})
    running, migrated = {}, set()
    for where, d in docs:
        if d.get("kind") not in WORKLOADS:
            continue
        name = d["metadata"]["name"]
        spec, ctrs = containers(d)
        labels = d["spec"]["template"]["metadata"].get("labels", {})
        if d["kind"] != "Job":
            selector = d["spec"]["selector"]["matchLabels"]
            if any(labels.get(k) != v for k, v in selector.items()):
                err(f"{where}: selector {selector} does not match the pod labels {labels}")
        psc = spec.get("securityContext") or {}
        if psc.get("runAsNonRoot") is not True or not isinstance(psc.get("runAsUser"), int) \
                or psc.get("runAsUser") == 0:
            err(f"{where}: pod must set runAsNonRoot: true and a numeric non-zero runAsUser")
        if not ctrs:
            err(f"{where}: no containers")
        declared = {}
        for c in ctrs:
            cw = f"{where} container {c.get('name')}"
            image = c.get("image", "")
            m = re.fullmatch(r"courtpiece-([a-z]+):([A-Za-z0-9_.-]+)", image)
            if not m or m.group(1) not in courtpiece_source.SERVICES:
                err(f"{cw}: image {image!r} is not courtpiece-<service>:<tag>")
                continue
            if m.group(2) == "latest":
                err(f"{cw}: image tag latest")
            source = m.group(1)
            csc = c.get("securityContext") or {}
            if csc.get("readOnlyRootFilesystem") is not True:
                err(f"{cw}: readOnlyRootFilesystem is not true")
            if csc.get("allowPrivilegeEscalation") is not False:
                err(f"{cw}: allowPrivilegeEscalation is not false")
            res = c.get("resources") or {}
            for part in ("requests", "limits"):
                if not {"cpu", "memory"} <= set((res.get(part) or {}).keys()):
                    err(f"{cw}: resources.{part} needs cpu and memory")
            env = {}
            known = courtpiece_source.env_names(root, source)
            retired = courtpiece_source.retired_env_names(root, source)
            for e in c.get("env", []):
                var = e["name"]
                if var in env:
                    err(f"{cw}: {var} set twice")
                env[var] = e
                if var.startswith("COURTPIECE_") and (var not in known or var in retired):
                    err(f"{cw}: {var} is not read by services/{source}")
                ref = e.get("valueFrom") or {}
                if "configMapKeyRef" in ref:
                    r = ref["configMapKeyRef"]
                    if r.get("key") not in config_keys.get(r.get("name"), set()):
                        err(f"{cw}: {var} refers to ConfigMap {r.get('name')} key {r.get('key')}, not defined")
                if "secretKeyRef" in ref:
                    r = ref["secretKeyRef"]
                    if r.get("key") not in secret_keys.get(r.get("name"), set()):
                        err(f"{cw}: {var} refers to Secret {r.get('name')} key {r.get('key')}, not defined")
            ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
            declared.update(ports)
            command = c.get("command") or []
            if d["kind"] == "Job":
                args = c.get("args") or []
                if not command or not command[0].endswith("/courtpiece-migrate"):
                    err(f"{cw}: a Job here runs courtpiece-migrate")
                flags = dict(zip(args[::2], args[1::2]))
                schema = flags.get("--schema")
                if schema != source or flags.get("--dir") != \
                        f"/opt/courtpiece/services/{source}/migrations":
                    err(f"{cw}: migrates {schema} from {flags.get('--dir')} with image {image}")
                for ref in re.findall(r"\$\(([A-Z0-9_]+)\)", " ".join(args)):
                    if ref not in env:
                        err(f"{cw}: args use $({ref}), which is not in env")
                migrated.add(source)
                continue
            if command:
                err(f"{cw}: a service container keeps the image's entrypoint")
            running[source] = running.get(source, 0) + int(d["spec"].get("replicas", 1))
            addr_var = f"COURTPIECE_{source.upper()}_ADDR"
            addr = (env.get(addr_var) or {}).get("value", "")
            grpc_port = int(addr.rsplit(":", 1)[1]) if re.fullmatch(r"0\.0\.0\.0:\d+", addr) else None
            if grpc_port is None:
                err(f"{cw}: {addr_var} must be 0.0.0.0:<port> (got {addr!r})")
            elif ports.get("grpc") != grpc_port:
                err(f"{cw}: containerPort 'grpc' {ports.get('grpc')} != {addr_var} {addr}")
            for probe in ("readinessProbe", "livenessProbe"):
                p = c.get(probe) or {}
                if "grpc" not in p:
                    err(f"{cw}: {probe} is not a gRPC health probe")
                elif p["grpc"].get("port") != grpc_port:
                    err(f"{cw}: {probe} probes port {p['grpc'].get('port')}, the gRPC port is {grpc_port}")
                elif p["grpc"].get("service", "") != "":
                    err(f"{cw}: {probe} asks for service {p['grpc']['service']!r}; only the "
                        "server-wide name \"\" is registered (docs/common.md)")
            maddr = (env.get(f"COURTPIECE_{source.upper()}_METRICS_ADDR") or {}).get("value", "")
            ann = d["spec"]["template"]["metadata"].get("annotations", {})
            if not maddr.startswith("0.0.0.0:") or ports.get("metrics") != int(maddr.rsplit(":", 1)[1]) \
                    or ann.get("prometheus.io/port") != str(ports.get("metrics")):
                err(f"{cw}: metrics address {maddr!r}, port 'metrics' {ports.get('metrics')} and "
                    f"annotation {ann.get('prometheus.io/port')!r} disagree")
            if source == "table":
                iid = env.get("COURTPIECE_TABLE_INSTANCE_ID", {})
                if (iid.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath") != "metadata.name":
                    err(f"{cw}: COURTPIECE_TABLE_INSTANCE_ID must come from metadata.name")
                adv = env.get("COURTPIECE_TABLE_ADVERTISE_ADDR", {}).get("value", "")
                m2 = re.fullmatch(r"\$\(([A-Z_]+)\):(\d+)", adv)
                src = env.get(m2.group(1), {}) if m2 else {}
                if not m2 or int(m2.group(2)) != grpc_port or \
                        (src.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath") != "status.podIP":
                    err(f"{cw}: COURTPIECE_TABLE_ADVERTISE_ADDR must be $(<pod IP var>):<grpc port>")
                order = list(env)
                if m2 and m2.group(1) in env and \
                        order.index(m2.group(1)) > order.index("COURTPIECE_TABLE_ADVERTISE_ADDR"):
                    # $(VAR) expands only from variables listed earlier.
                    err(f"{cw}: the pod IP variable must come before COURTPIECE_TABLE_ADVERTISE_ADDR")
        pods[name] = (labels, declared)

    for where, d in docs:
        if d.get("kind") != "Service":
            continue
        sel = d["spec"].get("selector") or {}
        match = [n for n, (labels, _) in pods.items()
                 if sel and all(labels.get(k) == v for k, v in sel.items())]
        if not match:
            err(f"{where}: Service selects no pod ({sel})")
        for p in d["spec"].get("ports", []):
            target = p.get("targetPort", p.get("port"))
            for n in match:
                ports = pods[n][1]
                if target not in ports and target not in ports.values():
                    err(f"{where}: targetPort {target} is not declared by {n}")
    for where, d in docs:
        if d.get("kind") == "PodDisruptionBudget":
            sel = d["spec"]["selector"]["matchLabels"]
            if not any(all(labels.get(k) == v for k, v in sel.items()) for labels, _ in pods.values()):
                err(f"{where}: PodDisruptionBudget selects no pod")

    for service in courtpiece_source.SERVICES:
        if running.get(service, 0) < 2:
            err(f"services/{service}: runs {running.get(service, 0)} replicas here (want 2+)")
        if (root / "services" / service / "migrations").is_dir() and service not in migrated:
            err(f"services/{service}/migrations: no Job migrates it")
    return errors, len(docs)


def main():
    root = pathlib.Path(sys.argv[1])
    manifest_dir = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else root / "deploy" / "k8s"
    errors, count = check(root, manifest_dir)
    if errors:
        for e in errors:
            print(f"k8s_check: FAIL: {e}", file=sys.stderr)
        return 1
    print(f"k8s_check: ok ({count} objects)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
