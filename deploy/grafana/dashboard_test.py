#!/usr/bin/env python3
"""Checks the provisioned Grafana dashboards against the source tree (no network).

A panel on a metric no service exports shows "No data" forever: that is a defect. Metric
names are not literals in the C++ (common::Metrics builds them, docs/common.md), so each
name in a panel's expression is taken apart the way Metrics::FullName puts it together:

    courtpiece_<service>_<name>_total                      Counter("<name>")
    courtpiece_<service>_<name>_seconds[_bucket|_sum|_count] LatencyHistogram("<name>")
    courtpiece_<service>_<name>                            Gauge("<name>")

and the registration must exist in services/<service>/ (not a test) or, for the gRPC
server/client families every service gets, in libs/common/src/. Every label matched in a
selector (`name{label="..."}`) or grouped by (`by (label)`) must be written as a label key
("label" as a C++ string) in a file that defines one of the expression's metrics.
The datasource of every panel and target must be the provisioned one. The metric names in
deploy/prometheus/alerts.yml and docs/operations.md are checked the same way.
"""
import functools
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
GRAFANA = ROOT / "deploy" / "grafana"
SERVICES = ("gateway", "lobby", "moderation", "table", "wallet")
COMMON_FAMILIES = ("grpc_server_handled", "grpc_server_handling", "grpc_client_handled",
                   "grpc_client_handling")
# Series Prometheus itself makes, and label names every series has or PromQL uses.
PROMETHEUS_SERIES = {"up"}
IMPLICIT_LABELS = {"le", "instance", "job", "__name__"}
PROMQL_WORDS = {"sum", "rate", "increase", "histogram_quantile", "max", "min", "avg", "count",
                "by", "without", "irate", "delta", "abs", "clamp_min", "clamp_max", "time",
                "topk", "bottomk", "on", "ignoring", "group_left", "group_right", "and", "or",
                "unless", "offset", "bool", "vector", "scalar", "absent"}


def sources(service):
    files = [p for p in (ROOT / "services" / service).glob("*.cc") if not p.name.endswith("_test.cc")]
    return {p: p.read_text() for p in files}


def common_sources():
    files = [p for p in (ROOT / "libs" / "common" / "src").glob("*.cc")
             if not p.name.endswith("_test.cc")]
    return {p: p.read_text() for p in files}


def registration(metric):
    """(files defining it) for a courtpiece_* series name, or a reason it is unknown."""
    m = re.fullmatch(r"courtpiece_([a-z]+)_([a-z0-9_]+)", metric)
    if not m or m.group(1) not in SERVICES:
        return None, f"{metric}: not courtpiece_<service>_... with a service of {SERVICES}"
    service, rest = m.group(1), m.group(2)
    candidates = []  # (kind, base name)
    if rest.endswith("_total"):
        candidates.append(("Counter", rest[: -len("_total")]))
    for suffix in ("_seconds_bucket", "_seconds_sum", "_seconds_count", "_seconds"):
        if rest.endswith(suffix):
            candidates.append(("LatencyHistogram", rest[: -len(suffix)]))
            break
    candidates.append(("Gauge", rest))
    for kind, base in candidates:
        pool = common_sources() if base in COMMON_FAMILIES else sources(service)
        pattern = re.compile(kind + r'\(\s*"' + re.escape(base) + r'"')
        found = [p for p, text in pool.items() if pattern.search(text)]
        if found:
            return found, None
    tried = " / ".join(f'{k}("{b}")' for k, b in candidates)
    return None, f"{metric}: no {tried} in services/{service}/*.cc or libs/common/src"


@functools.lru_cache(maxsize=None)
def library_source(lib, name):
    """The text of libs/<lib>/src/<name>.cc, or None; read once per run."""
    source = ROOT / "libs" / lib / "src" / f"{name}.cc"
    return (source, source.read_text()) if source.is_file() else None


def included_library_sources(files):
    """The libs/<lib>/src/<name>.cc behind each "courtpiece/<lib>/<name>.h" the files include:
    a label may be written by a shared helper (storage::SetPoolGauges) the service calls."""
    found = {}
    for text in files.values():
        for lib, name in re.findall(r'#include "courtpiece/([a-z_]+)/([a-z0-9_]+)\.h"', text):
            if (hit := library_source(lib, name)) is not None:
                found[hit[0]] = hit[1]
    return found


def labels_used(expr):
    used = set()
    for body in re.findall(r"\{([^}]*)\}", expr):
        used.update(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", body))
    for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        used.update(x.strip() for x in group.split(",") if x.strip())
    return used - IMPLICIT_LABELS


def check_expr(where, expr, errors):
    # Names outside selectors and strings: drop quoted strings, {...}, [..] and legend text.
    bare = re.sub(r'"[^"]*"', '""', expr)
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", bare)
    bare = re.sub(r"\b(?:by|without)\s*\([^)]*\)", " ", bare)
    names = set(re.findall(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*\b", bare)) - PROMQL_WORDS
    names = {n for n in names if not re.fullmatch(r"[0-9.]+|e[0-9]+", n)}
    if not names:
        errors.append(f"{where}: no metric in {expr!r}")
    defining = {}
    for name in sorted(names):
        if name in PROMETHEUS_SERIES:
            continue
        files, why = registration(name)
        if why:
            errors.append(f"{where}: {why}")
        else:
            defining.update({p: p.read_text() for p in files})
    if not defining:
        return
    defining.update(included_library_sources(defining))
    for label in sorted(labels_used(expr)):
        if not any(f'"{label}"' in text for text in defining.values()):
            errors.append(f"{where}: label '{label}' is set by none of "
                          f"{sorted(str(p.relative_to(ROOT)) for p in defining)}")


def main():
    datasource_uids = set(re.findall(r"^\s*uid:\s*(\S+)",
                                     (GRAFANA / "provisioning" / "datasources" /
                                      "prometheus.yml").read_text(), re.M))
    errors, exprs = [], 0
    dashboards = sorted((GRAFANA / "dashboards").glob("*.json"))
    if not dashboards:
        errors.append("no dashboard under deploy/grafana/dashboards")
    for path in dashboards:
        dash = json.loads(path.read_text())
        for key in ("uid", "title", "panels"):
            if key not in dash:
                errors.append(f"{path.name}: no '{key}'")
        ids = [p.get("id") for p in dash.get("panels", [])]
        if len(ids) != len(set(ids)):
            errors.append(f"{path.name}: panel ids repeat")
        for panel in dash.get("panels", []):
            if panel.get("type") == "row":
                continue
            where = f"{path.name}: panel '{panel.get('title')}'"
            targets = panel.get("targets", [])
            if not targets:
                errors.append(f"{where}: no query")
            for item in [panel] + targets:
                uid = (item.get("datasource") or {}).get("uid")
                if uid not in datasource_uids:
                    errors.append(f"{where}: datasource uid {uid!r} is not provisioned "
                                  f"({sorted(datasource_uids)})")
            for target in targets:
                exprs += 1
                check_expr(where, target.get("expr", ""), errors)
    # Prometheus' alerting rules: every expression checked like a panel's (the file is
    # kept to one `expr:` line per rule, so no YAML parser is needed here).
    rules = (ROOT / "deploy" / "prometheus" / "alerts.yml").read_text()
    alerts = re.findall(r"^\s*- alert:\s*(\S+)\s*$", rules, re.M)
    alert_exprs = re.findall(r"^\s*expr:\s*(.+?)\s*$", rules, re.M)
    if not alerts or len(alerts) != len(alert_exprs) or len(set(alerts)) != len(alerts):
        errors.append(f"alerts.yml: {len(alerts)} alerts (unique: {len(set(alerts))}) "
                      f"and {len(alert_exprs)} one-line exprs")
    for name, expr in zip(alerts, alert_exprs):
        check_expr(f"alerts.yml: {name}", expr, errors)
    # docs/operations.md names metrics in its alerts: they must exist too.
    ops = ROOT / "docs" / "operations.md"
    doc_names = set()
    if ops.exists():
        doc_names = set(re.findall(r"\b(courtpiece_[a-z0-9_]*[a-z0-9])\b(?![<-])", ops.read_text()))
        for name in sorted(doc_names):
            _, why = registration(name)
            if why:
                errors.append(f"docs/operations.md: {why}")
    # The check checks: a made-up metric, a made-up label and a wrong suffix are refused.
    probe = []
    check_expr("self-test", "sum(rate(courtpiece_table_no_such_thing_total[1m]))", probe)
    check_expr("self-test", 'sum by (flavour) (courtpiece_table_live_tables)', probe)
    check_expr("self-test", "courtpiece_wallet_transfers_seconds_bucket", probe)
    check_expr("self-test", "courtpiece_wallet_grpc_server_handled_total", probe)
    if len(probe) != 3:
        errors.append(f"self-test: expected exactly 3 refusals, got {probe}")
    if errors:
        for e in errors:
            print(f"dashboard_test: FAIL: {e}", file=sys.stderr)
        return 1
    print(f"dashboard_test: ok ({len(dashboards)} dashboards, {exprs} queries, "
          f"{len(alerts)} alerting rules, {len(doc_names)} metric names in docs/operations.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
