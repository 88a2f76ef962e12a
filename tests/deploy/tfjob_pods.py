#!/usr/bin/python3
"""Runs a TFJob's pods under Docker as Kubeflow's training operator and a
kubelet would, where no Kubernetes control plane can run:

  - one container per replica, named (and reachable by the host names)
    <job>-<type>-<index> and <job>-<type>-<index>.<namespace>.svc, the
    operator's services, on a network of its own;
  - the replica's image, command, args, env, resources (CPU and memory
    limits), security context (user, group, fsGroup, runAsNonRoot) and
    volumes (a PersistentVolumeClaim becomes a Docker volume) from the
    manifest, and the TF_CONFIG the operator computes (chief, ps and worker
    in the cluster, from each replica's "tfjob-port"; the evaluator outside);
  - readiness and liveness probes (httpGet, tcpSocket) run as the kubelet
    runs them: initialDelaySeconds, periodSeconds, timeoutSeconds,
    failureThreshold; a failed liveness probe stops the container
    (SIGTERM, then SIGKILL after terminationGracePeriodSeconds);
  - restartPolicy ExitCode: a pod that exits 128-255 is recreated, 1-127
    fails the job, 0 is done; runPolicy.backoffLimit caps the recreations;
  - the job succeeds when its chief does; cleanPodPolicy Running then deletes
    the pods still running.

--delete_pod=ps-0 --delete_at_step=N deletes that pod (SIGTERM, the grace
period, then removal) once the chief's /metrics shows global_step N and the
chief has saved a checkpoint, and the operator recreates it, as `kubectl
delete pod` would. The deleted pod must exit 143, and a deleted ps must be
restored by the chief.

Prints what it does with timestamps; exits 0 when the job succeeds (and the
deleted pod exited 143), 1 when it fails or a manifest cannot be run.
"""

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate  # noqa: E402  (its YAML loader and kustomization patcher)

REPLICA_ORDER = ["PS", "Chief", "Master", "Worker", "Evaluator"]
STARTED = time.monotonic()


def log(msg):
    print(f"tfjob_pods: {time.strftime('%H:%M:%S')} {msg}", flush=True)


class ManifestError(Exception):
    pass


# Debian's client where it is installed (another on PATH may need plugins).
DOCKER = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else "docker"


def docker(*args, check=True):
    out = subprocess.run([DOCKER, *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args[:2])}: {out.stderr.strip()}")
    return out.stdout.strip()


def cpu_of(quantity):
    q = str(quantity)
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)


def memory_of(quantity):
    q = str(quantity)
    for suffix, scale in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("Ti", 1 << 40),
                          ("k", 10**3), ("M", 10**6), ("G", 10**9), ("T", 10**12)):
        if q.endswith(suffix):
            return int(float(q[: -len(suffix)]) * scale)
    return int(q)


class Probe:
    """One container probe, run as the kubelet runs it."""

    def __init__(self, kind, spec, ports, pod):
        self.kind, self.pod = kind, pod
        self.initial_delay = spec.get("initialDelaySeconds", 0)
        self.period = spec.get("periodSeconds", 10)
        self.timeout = spec.get("timeoutSeconds", 1)
        self.failure_threshold = spec.get("failureThreshold", 3)
        self.success_threshold = spec.get("successThreshold", 1)
        if "httpGet" in spec:
            self.path = spec["httpGet"].get("path", "/")
            self.scheme = spec["httpGet"].get("scheme", "HTTP")
            self.port = self._port(spec["httpGet"]["port"], ports)
        elif "tcpSocket" in spec:
            self.path = None
            self.port = self._port(spec["tcpSocket"]["port"], ports)
        else:
            raise ManifestError(f"{pod}: {kind} probe: only httpGet and tcpSocket are run here")
        self.failures = self.successes = 0
        self.next_at = None
        self.ok = None  # the last verdict: None until decided

    def _port(self, port, ports):
        if isinstance(port, int):
            return port
        if port not in ports:
            raise ManifestError(f"{self.pod}: {self.kind} probe names port {port!r}, which the "
                                f"container does not declare (it has {sorted(ports)})")
        return ports[port]

    def reset(self, started):
        self.failures = self.successes = 0
        self.next_at = started + self.initial_delay
        self.ok = None

    def attempt(self, ip):
        try:
            if self.path is None:
                socket.create_connection((ip, self.port), timeout=self.timeout).close()
                return True
            if self.scheme == "HTTPS":
                import ssl
                conn = http.client.HTTPSConnection(ip, self.port, timeout=self.timeout,
                                                   context=ssl._create_unverified_context())
            else:
                conn = http.client.HTTPConnection(ip, self.port, timeout=self.timeout)
            conn.request("GET", self.path)
            status = conn.getresponse().status
            conn.close()
            return 200 <= status < 400
        except OSError:
            return False

    def due(self, now, ip):
        """Runs the probe when its period has come; returns a verdict that
        changed (True/False), else None."""
        if self.next_at is None or now < self.next_at or not ip:
            return None
        self.next_at = now + self.period
        if self.attempt(ip):
            self.successes, self.failures = self.successes + 1, 0
            if self.successes >= self.success_threshold and self.ok is not True:
                self.ok = True
                return True
        else:
            self.failures, self.successes = self.failures + 1, 0
            if self.failures >= self.failure_threshold and self.ok is not False:
                self.ok = False
                return False
        return None


class Pod:
    def __init__(self, job, rtype, index, replica, tf_config, run):
        self.rtype, self.index = rtype, index
        self.name = f"{job['name']}-{rtype.lower()}-{index}"
        self.restart_policy = replica.get("restartPolicy", "Never")
        spec = replica["template"]["spec"]
        containers = [c for c in spec.get("containers", []) if c.get("name") == "tensorflow"]
        if not containers:
            raise ManifestError(f"{self.name}: no container named tensorflow (the operator needs one)")
        c = containers[0]
        self.grace = spec.get("terminationGracePeriodSeconds", 30)
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", []) if "name" in p}
        self.http_port = ports.get("http")
        self.probes = [Probe(kind, c[key], ports, self.name)
                       for kind, key in (("readiness", "readinessProbe"), ("liveness", "livenessProbe"))
                       if key in c]
        self.ready = False
        args = ["--name", self.name, "--hostname", self.name, "--network", run.network,
                "--network-alias", self.name, "--network-alias", f"{self.name}.{job['namespace']}.svc",
                "--label", f"pstrain-tfjob={run.label}"]
        pod_sc = spec.get("securityContext", {})
        sc = {**pod_sc, **c.get("securityContext", {})}
        if "runAsUser" in sc:
            args += ["--user", f"{sc['runAsUser']}:{sc.get('runAsGroup', sc['runAsUser'])}"]
        if sc.get("runAsNonRoot") and sc.get("runAsUser", None) in (None, 0):
            raise ManifestError(f"{self.name}: runAsNonRoot without a non-root runAsUser")
        if "fsGroup" in pod_sc:
            args += ["--group-add", str(pod_sc["fsGroup"])]
        env = {}
        for e in c.get("env", []):
            if "value" not in e:
                raise ManifestError(f"{self.name}: env {e.get('name')}: only literal values are run here")
            env[e["name"]] = str(e["value"])
        env["TF_CONFIG"] = tf_config
        for k, v in env.items():
            args += ["-e", f"{k}={v}"]
        limits = c.get("resources", {}).get("limits", {})
        if "cpu" in limits:
            args += ["--cpus", str(min(cpu_of(limits["cpu"]), os.cpu_count()))]
        if "memory" in limits:
            args += ["--memory", str(memory_of(limits["memory"]))]
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for m in c.get("volumeMounts", []):
            v = volumes.get(m["name"])
            if v is None:
                raise ManifestError(f"{self.name}: volumeMount {m['name']} names no volume")
            if "persistentVolumeClaim" in v:
                claim = v["persistentVolumeClaim"]["claimName"]
                if claim not in run.claims:
                    raise ManifestError(f"{self.name}: claim {claim} is not in the claims given ({sorted(run.claims)})")
                source = run.claims[claim]
            else:
                raise ManifestError(f"{self.name}: volume {m['name']}: only claims are run here")
            args += ["-v", f"{source}:{m['mountPath']}" + (":ro" if m.get("readOnly") else "")]
        if "command" in c:
            args += ["--entrypoint", c["command"][0]]
            argv = c["command"][1:] + c.get("args", [])
        else:
            argv = c.get("args", [])
        self.run_args = args + [c["image"]] + [str(a) for a in argv]
        self.exits = []  # exit codes of this pod's containers, in order
        self.id = None
        self.done = False

    def create(self):
        docker("rm", "-f", self.name, check=False)
        self.id = docker("run", "-d", *self.run_args)
        self.ready = False
        for p in self.probes:
            p.reset(time.monotonic())
        log(f"pod {self.name} created")

    def state(self):
        s = json.loads(docker("inspect", self.id))[0]
        ip = next(iter(s["NetworkSettings"]["Networks"].values()), {}).get("IPAddress", "")
        return s["State"]["Status"], s["State"]["ExitCode"], ip

    def stop(self, why):
        log(f"pod {self.name}: {why}: SIGTERM, up to {self.grace} s before SIGKILL")
        docker("stop", "-t", str(self.grace), self.id)

    def logs(self):
        out = subprocess.run([DOCKER, "logs", self.id], capture_output=True, text=True)
        return out.stdout + out.stderr


class Run:
    def __init__(self, label, network, claims):
        self.label, self.network, self.claims = label, network, claims


def tf_configs(job, replicas, namespace):
    """TF_CONFIG per (type, index), as the training operator computes it."""
    cluster = {}
    for rtype in REPLICA_ORDER:
        if rtype not in replicas or rtype == "Evaluator":
            continue
        spec = replicas[rtype]
        c = next(c for c in spec["template"]["spec"]["containers"] if c.get("name") == "tensorflow")
        port = next((p["containerPort"] for p in c.get("ports", []) if p.get("name") == "tfjob-port"), 2222)
        cluster[rtype.lower()] = [f"{job}-{rtype.lower()}-{i}.{namespace}.svc:{port}"
                                  for i in range(spec.get("replicas", 1))]
    return {(rtype, i): json.dumps({"cluster": cluster, "task": {"type": rtype.lower(), "index": i},
                                    "environment": "cloud"})
            for rtype in replicas for i in range(replicas[rtype].get("replicas", 1))}


def global_step(pod, ip):
    """The chief's global_step from /metrics on its "http" port, or None."""
    if pod.http_port is None:
        return None
    try:
        conn = http.client.HTTPConnection(ip, pod.http_port, timeout=2)
        conn.request("GET", "/metrics")
        body = conn.getresponse().read().decode()
        conn.close()
    except OSError:
        return None
    for line in body.splitlines():
        if line.startswith("pstrain_global_step "):
            return int(float(line.split()[1]))
    return None


def main():
    repo = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tfjob", default=os.path.join(repo, "deploy", "kubernetes", "tfjob.yaml"))
    parser.add_argument("--overlay", help="a kustomization of the TFJob to apply first (its patch)")
    parser.add_argument("--pvc", default=os.path.join(repo, "deploy", "kubernetes", "pvc.yaml"))
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--subnet", default="10.213.72.0/24", help="the pods' network")
    parser.add_argument("--delete_pod", help="a pod to delete mid-run, e.g. ps-0")
    parser.add_argument("--delete_at_step", type=int, default=300)
    parser.add_argument("--timeout_secs", type=int, default=1800)
    parser.add_argument("--min_accuracy", type=float, default=0,
                        help="fail unless the chief's final test accuracy reaches this")
    args = parser.parse_args()

    tfjob = validate.load_yaml(args.tfjob)
    if args.overlay:
        errors = []
        tfjob = validate.patched_tfjob(tfjob, args.overlay, errors)
        if errors or tfjob is None:
            raise ManifestError(f"{args.overlay}: {'; '.join(errors)}")
    pvc = validate.load_yaml(args.pvc)
    name = tfjob["metadata"]["name"]
    replicas = tfjob["spec"]["tfReplicaSpecs"]
    run_policy = tfjob["spec"].get("runPolicy", {})
    backoff_limit = run_policy.get("backoffLimit")
    label = f"{name}-{os.getpid()}"
    network = f"pstrain-tfjob-{os.getpid()}"
    claim = pvc["metadata"]["name"]
    volume = f"{label}-{claim}"
    run = Run(label, network, {claim: volume})

    docker("network", "create", "--subnet", args.subnet, network)
    docker("volume", "create", volume)
    pods = []
    try:
        configs = tf_configs(name, replicas, args.namespace)
        job = {"name": name, "namespace": args.namespace}
        for rtype in REPLICA_ORDER:
            if rtype in replicas:
                for i in range(replicas[rtype].get("replicas", 1)):
                    pods.append(Pod(job, rtype, i, replicas[rtype], configs[(rtype, i)], run))
        return supervise(pods, args, backoff_limit, run_policy.get("cleanPodPolicy", "Running"))
    finally:
        for p in pods:
            if p.id:
                docker("rm", "-f", p.id, check=False)
        docker("network", "rm", network, check=False)
        docker("volume", "rm", volume, check=False)
        log(f"removed the pods, the network {network} and the volume {volume}")


def supervise(pods, args, backoff_limit, clean_pod_policy):
    chief = next((p for p in pods if p.rtype in ("Chief", "Master")), None)
    if chief is None:
        raise ManifestError("no Chief replica: this runner ends the job with its chief")
    victim = None
    if args.delete_pod:
        victim = next((p for p in pods if p.name.endswith("-" + args.delete_pod)), None)
        if victim is None:
            raise ManifestError(f"--delete_pod={args.delete_pod}: no such pod in {[p.name for p in pods]}")
    for p in pods:
        p.create()
    recreations = 0
    deleted_exit = None
    deadline = time.monotonic() + args.timeout_secs
    while True:
        if time.monotonic() > deadline:
            log(f"FAIL: the job did not end within {args.timeout_secs} s")
            return 1
        now = time.monotonic()
        for p in pods:
            if p.done:
                continue
            status, code, ip = p.state()
            if status == "running":
                for probe in p.probes:
                    verdict = probe.due(now, ip)
                    if verdict is None:
                        continue
                    if probe.kind == "readiness":
                        p.ready = verdict
                        log(f"pod {p.name} {'ready' if verdict else 'not ready'} (readiness probe)")
                    elif verdict:
                        log(f"pod {p.name} live (liveness probe)")
                    else:
                        p.stop("liveness probe failed")
                if p is chief and victim is not None and deleted_exit is None:
                    step = global_step(p, ip)
                    # Once there is a checkpoint to restore the victim from.
                    if (step is not None and step >= args.delete_at_step and
                            "saved checkpoint" in p.logs()):
                        log(f"global_step {step}: deleting pod {victim.name}")
                        victim.stop("pod deleted")
                        deleted_exit = victim.state()[1]
                        victim.exits.append(deleted_exit)
                        log(f"pod {victim.name} exited {deleted_exit}; the operator recreates it")
                        docker("rm", "-f", victim.id)
                        victim.create()
                continue
            if status not in ("exited", "dead"):
                continue
            p.exits.append(code)
            if code == 0:
                p.done = True
                log(f"pod {p.name} succeeded")
            elif p.restart_policy == "ExitCode" and code >= 128 or p.restart_policy in ("Always", "OnFailure"):
                recreations += 1
                if backoff_limit is not None and recreations > backoff_limit:
                    log(f"FAIL: pod {p.name} exited {code}; backoffLimit {backoff_limit} reached")
                    return 1
                log(f"pod {p.name} exited {code} (retryable): recreating it")
                p.create()
            else:
                log(f"FAIL: pod {p.name} exited {code} (permanent under restartPolicy "
                    f"{p.restart_policy}): the job failed\n{p.logs()[-3000:]}")
                return 1
        if chief.done:
            break
        time.sleep(1)

    log(f"the job succeeded (its chief did) after {time.monotonic() - STARTED:.0f} s")
    lines = [l for l in chief.logs().splitlines() if "final: step" in l]
    print(lines[-1] if lines else "no final line from the chief", flush=True)
    for p in pods:
        if not p.done and clean_pod_policy in ("Running", "All"):
            p.stop(f"cleanPodPolicy {clean_pod_policy}")
            p.exits.append(p.state()[1])
    failures = []
    for p in pods:
        log(f"pod {p.name}: exit codes {p.exits}")
        # Every task ends with 0 once the job is done, the evaluator too
        # when cleanPodPolicy stops it.
        if p.exits[-1:] != [0]:
            failures.append(f"{p.name} did not end with exit 0")
    if victim is not None:
        if deleted_exit != 143:
            failures.append(f"the deleted pod {victim.name} exited {deleted_exit}, not 143")
        if "restored every ps from" not in chief.logs() and victim.rtype == "PS":
            failures.append("the chief never restored the recreated ps")
    if args.min_accuracy and lines:
        accuracy = float(lines[-1].split("test accuracy ")[1].split()[0])
        if accuracy < args.min_accuracy:
            failures.append(f"final accuracy {accuracy} < {args.min_accuracy}")
    for f in failures:
        log(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ManifestError as e:
        log(f"FAIL: the manifest cannot run: {e}")
        sys.exit(1)
