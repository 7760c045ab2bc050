#!/usr/bin/env bash
# Checks deploy/k8s without a cluster (docs/operations.md "Kubernetes"):
#  1. `kubectl kustomize deploy/k8s` renders it (what `kubectl apply -k` would send);
#  2. deploy/k8s/k8s_check.py: the manifests against the source tree (env names each
#     service reads, probe and metrics ports, ConfigMap/Secret keys, selectors, security
#     context, replicas, migration Jobs);
#  3. deploy/k8s/validate: the rendered objects against Kubernetes' schemas
#     (kubernetes-models) and TypeScript's excess property check (unknown fields), both
#     from npm, pinned by deploy/k8s/validate/package-lock.json and installed with `npm ci`
#     into VALIDATOR_DIR on first use (the only step that needs the network);
#  4. each check refuses a broken copy (it checks something).
# usage: deploy/k8s_test.sh [VALIDATOR_DIR]   (default: build/k8s-validate)
# A real cluster validates more (admission, quotas): kubectl apply -k deploy/k8s --dry-run=server
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
validator=${1:-$root/build/k8s-validate}
fail() { echo "k8s_test: FAIL: $*" >&2; exit 1; }

command -v node >/dev/null && command -v npm >/dev/null || fail "node and npm are needed"
# shellcheck source=deploy/lib/python_yaml.sh
. "$root/deploy/lib/python_yaml.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if command -v kubectl >/dev/null; then
  kubectl kustomize "$root/deploy/k8s" >"$tmp/rendered.yaml" || fail "kubectl kustomize deploy/k8s"
else
  # Debian 12 packages no kubectl: render what this kustomization uses (resources + image
  # tags) ourselves; anything else in it is refused, so the fallback cannot drift silently.
  "$python_yaml" - "$root/deploy/k8s" >"$tmp/rendered.yaml" <<'PY' || fail "render deploy/k8s without kubectl"
import os, sys, yaml
d = sys.argv[1]
k = yaml.safe_load(open(os.path.join(d, "kustomization.yaml")))
extra = set(k) - {"apiVersion", "kind", "resources", "images"}
if extra:
    sys.exit("kustomization uses %s: install kubectl to render it" % sorted(extra))
tags = {i["name"]: i.get("newTag") for i in k.get("images", [])}
docs = []
for r in k["resources"]:
    for doc in yaml.safe_load_all(open(os.path.join(d, r))):
        if not doc:
            continue
        spec = doc.get("spec", {})
        pod = spec.get("template", {}).get("spec") or spec.get("jobTemplate", {}).get("spec", {}).get("template", {}).get("spec") or {}
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            name = c.get("image", "").split(":")[0]
            if tags.get(name):
                c["image"] = "%s:%s" % (name, tags[name])
        docs.append(doc)
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
PY
fi

"$python_yaml" "$root/deploy/k8s/k8s_check.py" "$root" || fail "k8s_check.py"

# The structural check refuses each of these breakages.
mutate() {  # NAME FILE SED-EXPRESSION
  rm -rf "$tmp/bad" && cp -r "$root/deploy/k8s" "$tmp/bad"
  sed -i "$3" "$tmp/bad/$2"
  cmp -s "$root/deploy/k8s/$2" "$tmp/bad/$2" && fail "mutation '$1' changed nothing"
  if "$python_yaml" "$root/deploy/k8s/k8s_check.py" "$root" "$tmp/bad" >/dev/null 2>&1; then
    fail "k8s_check.py accepted $1"
  fi
}
mutate "a variable the wallet never reads" 10-wallet.yaml 's/COURTPIECE_WALLET_PG_POOL_SIZE/COURTPIECE_WALLET_POOL_SIZE/'
mutate "a probe on the metrics port" 11-lobby.yaml '0,/grpc: {port: 7001}/s//grpc: {port: 9102}/'
mutate "a ConfigMap key that does not exist" 14-gateway.yaml 's/key: verify-keys/key: verify-key/'
mutate "a fixed table instance id" 13-table.yaml 's/fieldPath: metadata.name/fieldPath: metadata.namespace/'
mutate "a writable root" 12-moderation.yaml 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: false/'
mutate "a Secret key that does not exist" secret.example.yaml 's/^  signing-key:/  signing-keys:/'

# Schemas and unknown fields, with the pinned npm packages.
src="$root/deploy/k8s/validate"
if ! cmp -s "$src/package-lock.json" "$validator/package-lock.json" || [ ! -d "$validator/node_modules" ]; then
  rm -rf "$validator" && mkdir -p "$validator"
  cp "$src/package.json" "$src/package-lock.json" "$validator/"
  (cd "$validator" && npm ci --no-audit --no-fund --loglevel=error) ||
    fail "npm ci in $validator (the npm registry is needed once)"
fi
cp "$src/validate.mjs" "$validator/"
node "$validator/validate.mjs" "$tmp/rendered.yaml" "$root"/deploy/k8s/*.example.yaml ||
  fail "deploy/k8s/validate"
sed 's/^\(\s*\)readinessProbe:$/\1readinessProbe:\n\1  grcp: {port: 1}/' "$tmp/rendered.yaml" >"$tmp/unknown.yaml"
if node "$validator/validate.mjs" "$tmp/unknown.yaml" >/dev/null 2>&1; then
  fail "the validator accepted an unknown field (readinessProbe.grcp)"
fi
sed '0,/replicas: 2/s//replicas: two/' "$tmp/rendered.yaml" >"$tmp/type.yaml"
if node "$validator/validate.mjs" "$tmp/type.yaml" >/dev/null 2>&1; then
  fail "the validator accepted replicas: two"
fi
echo "k8s_test: ok"
