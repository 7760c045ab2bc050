# Sourced: sets $python_yaml to a python3 that can `import yaml` (Debian's python3-yaml, for
# /usr/bin/python3, is what deploy/local/install-deps.sh's machine has; a pyenv python3 first
# on PATH may lack it), or fails.
python_yaml=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import yaml' 2>/dev/null; then
    python_yaml=$(command -v "$candidate")
    break
  fi
done
if [ -z "$python_yaml" ]; then
  echo "no python3 with the yaml module: apt-get install python3-yaml" >&2
  exit 1
fi
