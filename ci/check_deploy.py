#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Check the deployment files against each other and against the binary:

  ci/check_deploy.py [EBPF_PROFILER_BINARY]

- ci/daemonset.yaml parses as YAML: a Namespace and a DaemonSet with
  hostPID, the capabilities of the systemd unit (no more, none missing, ALL
  dropped), not privileged, the BTF, cgroup and cache volumes mounted, and
  the OTLP endpoint in the environment;
- ci/ebpf-profiler.service: the same capabilities, ambient and bounding,
  the cache directory writable under ProtectSystem=strict, and, where
  systemd-analyze exists, `systemd-analyze verify` has nothing to say;
- every EBPF_PROFILER_<FLAG> either file sets names a flag of the binary
  (its -help), when a binary is given.
Prints "ERROR: ..." lines; exit 1 if any.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

CI = os.path.dirname(os.path.abspath(__file__))
errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond


def unit_settings(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", "[")) and "=" in line:
                k, v = line.split("=", 1)
                out.setdefault(k, []).append(v)
    return out


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    flags = None
    if binary:
        helptext = subprocess.run([binary, "-help"], capture_output=True,
                                  text=True).stdout
        flags = set(re.findall(r"^\s+-([a-z0-9-]+)", helptext, re.M))
        check(flags, "no flags in %s -help" % binary)

    # the systemd unit
    unit_path = os.path.join(CI, "ebpf-profiler.service")
    unit = unit_settings(unit_path)
    bounding = set(" ".join(unit.get("CapabilityBoundingSet", [])).split())
    ambient = set(" ".join(unit.get("AmbientCapabilities", [])).split())
    check(bounding and bounding == ambient,
          "unit: ambient %s != bounding %s" % (sorted(ambient), sorted(bounding)))
    check("CAP_SYS_ADMIN" not in bounding, "unit: CAP_SYS_ADMIN")
    check(unit.get("ProtectSystem") == ["strict"], "unit: ProtectSystem=strict")
    check(unit.get("CacheDirectory") == ["ebpf-profiler"],
          "unit: CacheDirectory=ebpf-profiler (the only writable place)")
    for pre in unit.get("ExecStartPre", []):
        check(not re.search(r">\s*/(etc|usr)", pre),
              "unit: ExecStartPre writes a read-only path: " + pre)
    unit_env = set()
    with open(unit_path) as f:
        unit_env = set(re.findall(r"\b(EBPF_PROFILER_[A-Z_]+)=", f.read()))
    analyze = shutil.which("systemd-analyze")
    if analyze:
        with tempfile.TemporaryDirectory() as d:
            # verify wants the ExecStart binary to exist
            text = open(unit_path).read()
            if binary:
                text = text.replace("/usr/local/bin/ebpf-profiler",
                                    os.path.abspath(binary))
            copy = os.path.join(d, "ebpf-profiler.service")
            with open(copy, "w") as f:
                f.write(text)
            r = subprocess.run([analyze, "verify", copy], capture_output=True,
                               text=True)
            said = "\n".join(l for l in (r.stdout + r.stderr).splitlines()
                             if "ebpf-profiler.service" in l)
            check(r.returncode == 0 and not said,
                  "unit: systemd-analyze verify: " + said)

    # the DaemonSet
    with open(os.path.join(CI, "daemonset.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = {d.get("kind"): d for d in docs}
    check(set(kinds) == {"Namespace", "DaemonSet"},
          "daemonset.yaml: kinds %s" % sorted(kinds))
    ds = kinds.get("DaemonSet", {})
    spec = ds.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    check(ds.get("apiVersion") == "apps/v1", "DaemonSet apiVersion apps/v1")
    labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    sel = spec.get("selector", {}).get("matchLabels", {})
    check(sel and all(labels.get(k) == v for k, v in sel.items()),
          "DaemonSet: the selector matches the template's labels")
    check(ds.get("metadata", {}).get("namespace") ==
          kinds.get("Namespace", {}).get("metadata", {}).get("name"),
          "DaemonSet in the Namespace of the file")
    check(pod.get("hostPID") is True, "DaemonSet: hostPID")
    ctrs = pod.get("containers", [])
    if not check(len(ctrs) == 1, "DaemonSet: one container"):
        ctrs = [{}]
    c = ctrs[0]
    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    check(caps.get("drop") == ["ALL"], "DaemonSet: drop ALL capabilities")
    check({"CAP_" + x for x in caps.get("add", [])} == bounding,
          "DaemonSet capabilities %s != the unit's %s" % (
              sorted(caps.get("add", [])), sorted(bounding)))
    check(sc.get("privileged") is False, "DaemonSet: not privileged")
    check(sc.get("allowPrivilegeEscalation") is False,
          "DaemonSet: allowPrivilegeEscalation false")
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    for path, ro in (("/sys/kernel/btf", True), ("/sys/fs/cgroup", True),
                     ("/var/cache/ebpf-profiler", False)):
        m = mounts.get(path)
        if check(m, "DaemonSet: nothing mounted at " + path):
            v = vols.get(m["name"], {})
            check(v.get("hostPath", {}).get("path") == path,
                  "DaemonSet: %s is not the host's %s" % (m["name"], path))
            check(bool(m.get("readOnly")) == ro,
                  "DaemonSet: %s readOnly should be %s" % (path, ro))
    env = {e["name"]: e for e in c.get("env", [])}
    check("OTEL_EXPORTER_OTLP_ENDPOINT" in env,
          "DaemonSet: OTEL_EXPORTER_OTLP_ENDPOINT in the environment")
    cache = env.get("EBPF_PROFILER_CACHE_DIR", {}).get("value")
    check(cache in (None, "/var/cache/ebpf-profiler"),
          "DaemonSet: the cache directory is the mounted one")
    ports = {p.get("containerPort") for p in c.get("ports", [])}
    addr = env.get("EBPF_PROFILER_METRICS_ADDRESS", {}).get("value", "")
    check(addr and int(addr.rsplit(":", 1)[-1]) in ports,
          "DaemonSet: the metrics port is a container port")
    if flags is not None:
        for name in sorted(set(env) | unit_env):
            if name.startswith("EBPF_PROFILER_"):
                flag = name[len("EBPF_PROFILER_"):].lower().replace("_", "-")
                check(flag in flags, "%s: no flag -%s" % (name, flag))

    for e in errors:
        print("ERROR: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
