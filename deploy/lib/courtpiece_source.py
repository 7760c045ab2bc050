"""What the source tree says a deployment may use (shared by deploy/*_check.py).

env_names(root, service): every COURTPIECE_* variable the service's code reads: the quoted
names in services/<service>/*.cc (not tests), COURTPIECE_LOG_LEVEL when main.cc calls
common::ReadLogLevel (its default argument in libs/common/include/.../log.h), and NAME_FILE
for every NAME read through auth::ReadKeyMaterial-style loaders (libs/auth/src/keys.cc
appends "_FILE" to the name it is given).
"""
import pathlib
import re

SERVICES = ("gateway", "lobby", "moderation", "table", "wallet")


def _code(root, service):
    d = pathlib.Path(root) / "services" / service
    return {p: p.read_text() for p in sorted(d.glob("*.cc")) if not p.name.endswith("_test.cc")}


def env_names(root, service):
    code = _code(root, service)
    names = set()
    for text in code.values():
        names.update(re.findall(r'"(COURTPIECE_[A-Z0-9_]+)"', text))
    names = {n for n in names if not n.startswith("COURTPIECE_TEST_")}
    main = code.get(pathlib.Path(root) / "services" / service / "main.cc", "")
    if "ReadLogLevel(" in main:
        names.add("COURTPIECE_LOG_LEVEL")
    keys_cc = (pathlib.Path(root) / "libs" / "auth" / "src" / "keys.cc").read_text()
    if '"_FILE"' in keys_cc:
        for n in list(names):
            if re.search(r"(SIGNING_KEY|VERIFY_KEYS)$", n):
                names.add(n + "_FILE")
    return names


def retired_env_names(root, service):
    """Names declared with env.Retired(old, new): setting them is a start-up error."""
    names = set()
    for text in _code(root, service).values():
        names.update(re.findall(r'Retired\(\s*"(COURTPIECE_[A-Z0-9_]+)"', text))
    return names
