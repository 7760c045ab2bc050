#!/usr/bin/env python3
"""Structural checks of docker-compose.yml (run by deploy/compose_test.sh).

usage: compose_check.py ROOT RESOLVED_YML   (RESOLVED_YML: `docker-compose config` output)
"""
import pathlib
import re
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
import courtpiece_source  # noqa: E402

root = pathlib.Path(sys.argv[1])
resolved = yaml.safe_load(pathlib.Path(sys.argv[2]).read_text())
raw = (root / "docker-compose.yml").read_text()
errors = []

# .env.example lists exactly what the compose file reads.
read = set(re.findall(r"\$\{([A-Z0-9_]+)", raw))
example = set(re.findall(r"^([A-Z0-9_]+)=", (root / ".env.example").read_text(), re.M))
for v in sorted(read - example):
    errors.append(f"docker-compose.yml reads ${{{v}}} but .env.example does not list it")
for v in sorted(example - read):
    errors.append(f".env.example lists {v} but docker-compose.yml never reads it")

services = resolved["services"]
prometheus = (root / "deploy" / "prometheus" / "prometheus.yml").read_text()
ours = 0
for name, svc in sorted(services.items()):
    image = svc.get("image", "")
    if ":" not in image and not image.startswith("courtpiece-"):
        errors.append(f"{name}: image '{image}' is not pinned to a tag")
    if image.endswith(":latest"):
        errors.append(f"{name}: image '{image}' is :latest")
    m = re.fullmatch(r"courtpiece-([a-z]+)", image)
    if not m:
        continue
    source = m.group(1)
    if source not in courtpiece_source.SERVICES:
        errors.append(f"{name}: image {image} names no service under services/")
        continue
    entry = svc.get("entrypoint") or []
    if entry and entry[0].endswith("/courtpiece-migrate"):
        args = dict(zip(entry[1::2], entry[2::2]))
        if args.get("--schema") != source:
            errors.append(f"{name}: migrates schema {args.get('--schema')} with image {image}")
        d = args.get("--dir", "")
        if d != f"/opt/courtpiece/services/{source}/migrations" or \
                not (root / "services" / source / "migrations").is_dir():
            errors.append(f"{name}: --dir {d} is not services/{source}/migrations in the image")
        if not args.get("--pg-url", "").startswith("postgresql://"):
            errors.append(f"{name}: no --pg-url")
        continue
    ours += 1
    env = svc.get("environment") or {}
    known = courtpiece_source.env_names(root, source)
    retired = courtpiece_source.retired_env_names(root, source)
    for var in sorted(env):
        if var in retired:
            errors.append(f"{name}: sets {var}, retired (the service exits 2)")
        elif var.startswith("COURTPIECE_") and var not in known:
            errors.append(f"{name}: sets {var}, which services/{source} never reads")
    test = (svc.get("healthcheck") or {}).get("test")
    if not test:
        errors.append(f"{name}: no healthcheck")
    metrics = env.get(f"COURTPIECE_{source.upper()}_METRICS_ADDR", "")
    port = metrics.rsplit(":", 1)[-1]
    if not metrics.startswith("0.0.0.0:"):
        errors.append(f"{name}: metrics address '{metrics}' is not reachable by Prometheus")
    elif f'"{name}:{port}"' not in prometheus:
        errors.append(f"{name}: Prometheus does not scrape {name}:{port}")
    grpc = env.get(f"COURTPIECE_{source.upper()}_ADDR", "")
    if test and grpc and source != "gateway" and not any(
            f"/dev/tcp/127.0.0.1/{grpc.rsplit(':', 1)[-1]}" in t for t in test):
        errors.append(f"{name}: the healthcheck does not probe the gRPC port of {grpc}")
if ours < 6:
    errors.append(f"expected at least 6 services of ours (two tables), found {ours}")

grafana = services.get("grafana")
if not grafana:
    errors.append("no grafana service")
else:
    vols = " ".join(str(v) for v in grafana.get("volumes", []))
    for want in ("deploy/grafana/provisioning", "deploy/grafana/dashboards"):
        if want not in vols:
            errors.append(f"grafana does not mount {want}")

prom = services.get("prometheus") or {}
prom_vols = " ".join(str(v) for v in prom.get("volumes", []))
if "deploy/prometheus/alerts.yml" not in prom_vols or "/etc/prometheus/alerts.yml" not in prometheus:
    errors.append("prometheus: deploy/prometheus/alerts.yml is not mounted and loaded")

if errors:
    for e in errors:
        print(f"compose_check: FAIL: {e}", file=sys.stderr)
    sys.exit(1)
print(f"compose_check: ok ({ours} services of ours, {len(read)} variables from .env)")
