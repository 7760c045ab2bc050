#!/usr/bin/env bash
# Checks docker-compose.yml without a Docker engine:
#  1. `docker-compose config` accepts it, and refuses it without the token keys;
#  2. every service that has a main.cc under services/ has a compose service of that name;
#  3. no service sets a retired variable;
#  4. the validator really validates: a copy with an unknown key is refused;
#  5. deploy/compose_check.py: .env.example lists exactly the variables the file reads; every
#     COURTPIECE_* variable a service is given is one its code reads; every long-running
#     service of ours has a health check; images are pinned; Prometheus scrapes every
#     service's metrics address; Grafana's provisioning and the alerting rules are mounted;
#  6. with promtool installed, the Prometheus config, the rules and every dashboard query parse.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
compose="$root/docker-compose.yml"
fail() { echo "compose_test: FAIL: $*" >&2; exit 1; }

# Without the token keys Compose must refuse, naming what to do (the services would exit 2).
unset COURTPIECE_LOBBY_SIGNING_KEY COURTPIECE_LOBBY_VERIFY_KEYS
no_env=$(mktemp)  # an empty env file: a developer's own .env must not hide the refusal
if out=$(docker-compose --env-file "$no_env" -f "$compose" config -q 2>&1); then
  fail "docker-compose config accepted the file without the token keys"
fi
rm -f "$no_env"
grep -q "set the token keys in .env" <<<"$out" || fail "no hint about the token keys: $out"
# The keys' shape does not matter to Compose; the services check them.
export COURTPIECE_LOBBY_SIGNING_KEY="k1:test" COURTPIECE_LOBBY_VERIFY_KEYS="k1:test"
docker-compose -f "$compose" config -q || fail "docker-compose config refused $compose"
defined=$(docker-compose -f "$compose" config --services)
for main in "$root"/services/*/main.cc; do
  [ -f "$main" ] || continue
  name=$(basename "$(dirname "$main")")
  grep -qx "$name" <<<"$defined" || fail "service '$name' has no entry in docker-compose.yml"
done

# A retired variable makes its service exit 2 at start (EnvConfig::Retired).
if grep -n "COURTPIECE_WALLET_METRICS_PORT" "$compose"; then
  fail "docker-compose.yml sets a retired variable"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/^  redis:$/  redis:\n    no_such_key: 1/' "$compose" >"$tmp/docker-compose.yml"
cp -r "$root/deploy" "$tmp/deploy"
if docker-compose -f "$tmp/docker-compose.yml" config -q 2>/dev/null; then
  fail "a compose file with an unknown key was accepted: the check checks nothing"
fi

# The resolved file (anchors merged, ${VAR:-default} substituted) for the structural checks.
docker-compose -f "$compose" config >"$tmp/resolved.yml"
# shellcheck source=deploy/lib/python_yaml.sh
. "$root/deploy/lib/python_yaml.sh"
"$python_yaml" "$root/deploy/compose_check.py" "$root" "$tmp/resolved.yml" ||
  fail "deploy/compose_check.py"
# PromQL syntax of the alerting rules and of every dashboard query, and the Prometheus
# config, when promtool is installed (Debian's `prometheus` package has it; the metric
# names themselves are checked by the grafana_dashboard test either way).
if command -v promtool >/dev/null 2>&1; then
  sed "s#/etc/prometheus/alerts.yml#$root/deploy/prometheus/alerts.yml#" \
    "$root/deploy/prometheus/prometheus.yml" >"$tmp/prometheus.yml"
  promtool check config "$tmp/prometheus.yml" >/dev/null || fail "promtool check config"
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rules = [{"record": "courtpiece:panel_%d_%s" % (p["id"], t["refId"]), "expr": t["expr"]}
         for p in d["panels"] for t in p.get("targets", [])]
print(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}))
' "$root/deploy/grafana/dashboards/courtpiece.json" >"$tmp/dashboard_rules.yml"
  promtool check rules "$tmp/dashboard_rules.yml" >/dev/null || fail "a dashboard query is not PromQL"
  promtool_note="PromQL checked by promtool"
else
  promtool_note="promtool not installed: PromQL syntax not checked"
fi
echo "compose_test: ok ($(wc -l <<<"$defined") services; $promtool_note)"
