#!/usr/bin/python3
"""Checks pstrain's deployment files against the schemas in
tests/deploy/schemas (copies of the Compose Specification's and the TFJob
CRD's; see the README there):

  - deploy/compose/docker-compose.yml against the Compose Specification,
  - every TF_CONFIG in the compose file against its services,
  - deploy/kubernetes/tfjob.yaml against the TFJob CRD's v1 openAPIV3Schema,
  - what that schema leaves to the operator (replica types, restart policies,
    containers, ports, probes) and the claim in deploy/kubernetes/pvc.yaml.

Run through validate.sh, which installs Debian's python3-jsonschema and
python3-yaml first (Debian 12: jsonschema 4.10). Prints one line per check;
exits 1 if any fails.

--compose, --tfjob and --pvc check other files in place of the repository's.
"""

import argparse
import copy
import functools
import json
import math
import os
import re
import sys

import jsonschema
import yaml

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCHEMAS = os.path.join(REPO, "tests", "deploy", "schemas")
COMPOSE_SPEC = os.path.join(SCHEMAS, "compose-spec.json")
TFJOB_CRD = os.path.join(SCHEMAS, "kubeflow.org_tfjobs.v1.9.0.yaml")

failures = 0


def check(what, errors):
    global failures
    if not errors:
        print(f"ok    {what}", flush=True)
        return
    failures += 1
    print(f"FAIL  {what}")
    for e in errors:
        print(f"        {e}")
    sys.stdout.flush()


def rel(file):
    file = os.path.abspath(file)
    inside = os.path.commonpath([REPO, os.path.realpath(file)]) == REPO
    return os.path.relpath(os.path.realpath(file), REPO) if inside else file


# ---- YAML as js-yaml 4 (YAML 1.2's core schema) reads it ----
#
# PyYAML implements YAML 1.1: it would read `restart: no` as false, `80:80`
# as the base-60 integer 4880, `0o17` as a string, and keep the last of two
# equal keys. js-yaml (and Compose, and Kubernetes) read YAML 1.2, so this
# loader swaps PyYAML's bool/int/float resolution for js-yaml's and, like
# js-yaml, refuses a mapping that repeats a key. Merge keys (<<) and
# timestamps stay as in both.

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_VALUE = "tag:yaml.org,2002:value"
_MERGE = "tag:yaml.org,2002:merge"


class Yaml12Loader(_BaseLoader):
    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # unhashable: the constructor says so below
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"duplicated mapping key {key!r}", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_BOOL, _INT, _FLOAT, _VALUE)]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
# Integers before floats: "10" is both.
Yaml12Loader.add_implicit_resolver(
    _INT, re.compile(r"^[-+]?(?:0b[01]+|0x[0-9a-fA-F]+|0o[0-7]+|[0-9]+)$"), list("-+0123456789"))
Yaml12Loader.add_implicit_resolver(
    _FLOAT,
    re.compile(r"^(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
               r"|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)"
               r"|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def _construct_int(loader, node):
    text = loader.construct_scalar(node)
    sign = -1 if text[:1] == "-" else 1
    digits = text[1:] if text[:1] in "+-" else text
    for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
        if digits.startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits, 10)


def _construct_float(loader, node):
    text = loader.construct_scalar(node).lower()
    sign = -1.0 if text[:1] == "-" else 1.0
    digits = text[1:] if text[:1] in "+-" else text
    if digits == ".inf":
        return sign * math.inf
    if digits == ".nan":
        return math.nan
    return sign * float(digits)


Yaml12Loader.add_constructor(_INT, _construct_int)
Yaml12Loader.add_constructor(_FLOAT, _construct_float)


def load_yaml(file):
    with open(file, encoding="utf-8") as f:
        return yaml.load(f, Loader=Yaml12Loader)


NOT_LOADED = object()


def load(file):
    """The file's YAML document, or NOT_LOADED after a FAIL line saying why."""
    try:
        return load_yaml(file)
    except (OSError, ValueError, yaml.YAMLError) as e:
        check(f"{rel(file)} loads", [str(e).replace("\n", "\n        ")])
        return NOT_LOADED


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def is_integer(x):  # JavaScript's Number.isInteger
    return is_number(x) and math.isfinite(x) and x == int(x)


# ---- JSON Schema, read the way validate.js's ajv (draft-07) read it ----

# The formats these schemas use, defined rather than ignored; a value of
# another type passes (the schema's "type" judges it). No other format is
# checked: ajv without ajv-formats knows none.
FORMATS = jsonschema.FormatChecker(formats=())


def _in_range(lo, hi):
    return lambda x: not is_number(x) or (is_integer(x) and lo <= x <= hi)


FORMATS.checks("int32")(_in_range(-(2 ** 31), 2 ** 31 - 1))
FORMATS.checks("int64")(_in_range(-(2 ** 53 - 1), 2 ** 53 - 1))  # JavaScript's safe integers
_DATE_TIME = re.compile(r"[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](\.[0-9]+)?(Z|[+-][0-9][0-9]:[0-9][0-9])",
                        re.IGNORECASE)
FORMATS.checks("date-time")(lambda x: not isinstance(x, str) or _DATE_TIME.fullmatch(x) is not None)


@functools.lru_cache(maxsize=None)
def js_regex(pattern):
    """pattern, compiled as an ECMAScript regex without flags reads it: there
    "$" is the end of the string; in Python it also matches before a final
    newline, which "\\Z" does not."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return re.compile("".join(out))


Draft7 = jsonschema.Draft7Validator


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not js_regex(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _with_js_pattern_properties(keyword):
    """Draft 7's patternProperties / additionalProperties, with the patterns
    of patternProperties read as ECMAScript regexes."""
    original = Draft7.VALIDATORS[keyword]

    def validate(validator, value, instance, schema):
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict):
            translated = {js_regex(p).pattern: s for p, s in patterns.items()}
            if keyword == "patternProperties":
                value = translated
            schema = dict(schema, patternProperties=translated)
        yield from original(validator, value, instance, schema)

    return validate


JsDraft7 = jsonschema.validators.extend(Draft7, {
    "pattern": _pattern,
    "patternProperties": _with_js_pattern_properties("patternProperties"),
    "additionalProperties": _with_js_pattern_properties("additionalProperties"),
})


def pointer(path):
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def schema_errors(schema, doc):
    """Every error, as ajv's allErrors lists them: the path in the document,
    the message and the keyword; under anyOf/oneOf, each branch's errors."""
    try:
        JsDraft7.check_schema(schema)
    except jsonschema.SchemaError as e:
        return [f"the schema itself is invalid: {e.message} at {pointer(e.absolute_path)}"]
    lines = []

    def add(error, depth):
        lines.append("  " * depth + f"{pointer(error.absolute_path)} {error.message} [{error.validator}]")
        for sub in sorted(error.context, key=lambda e: (list(e.schema_path)[:1], list(e.absolute_path))):
            add(sub, depth + 1)

    validator = JsDraft7(schema, format_checker=FORMATS)
    for error in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        add(error, 0)
    return lines


# ---- docker-compose.yml against the Compose Specification ----

def check_compose_schema(compose, compose_file):
    with open(COMPOSE_SPEC, encoding="utf-8") as f:
        spec = json.load(f)
    # Its "$schema" (https://json-schema.org/draft-07/schema) is draft-07
    # under a spelling jsonschema does not know: Draft7Validator, named.
    spec.pop("$schema", None)
    check(f"{rel(compose_file)} matches compose-spec.json", schema_errors(spec, compose))


# ---- every TF_CONFIG in the compose file agrees with the services ----

# The binary each task type runs (the first word of the service's command).
BINARY_OF = {"chief": "chief", "ps": "ps_server", "worker": "worker", "evaluator": "evaluator"}


def environment_of(service):
    env = service.get("environment") or {}
    if not isinstance(env, list):
        return env if isinstance(env, dict) else {}
    out = {}
    for kv in env:
        kv = str(kv)
        if "=" in kv:  # a bare NAME passes the host's value through: unset here
            name, value = kv.split("=", 1)
            out[name] = value
    return out


def shown(x):
    """A value in a message: as JSON (so "2" and 2 differ), or "missing"."""
    return "missing" if x is None else json.dumps(x, default=str)


def js_string(x):
    """String(x) in JavaScript, for the scalars YAML gives."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float) and x == int(x) and math.isfinite(x):
        return str(int(x))
    return str(x)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def first_word(command):
    """The binary a service's command runs (its first word)."""
    if isinstance(command, list):
        return command[0] if command else None
    return re.split(r"\s+", js_string(command) if command else "")[0]


def check_tf_configs(compose, compose_file):
    errors = []
    services = compose.get("services") if isinstance(compose, dict) else None
    services = services if isinstance(services, dict) else {}
    cluster = None
    tasks = {}  # "type:index" -> service name
    for name, service in services.items():
        service = service if isinstance(service, dict) else {}
        raw = environment_of(service).get("TF_CONFIG")
        if raw is None:
            # The evaluator is outside the cluster, as in a TFJob: it needs none.
            if first_word(service.get("command")) != "evaluator":
                errors.append(f"{name}: no TF_CONFIG")
            continue
        try:
            tf = json.loads(raw if isinstance(raw, str) else js_string(raw), parse_constant=_no_constant)
        except ValueError as e:
            errors.append(f"{name}: TF_CONFIG is not JSON: {e}")
            continue
        tf = tf if isinstance(tf, dict) else {}
        task = tf.get("task") or {}
        task = task if isinstance(task, dict) else {}
        if not isinstance(tf.get("cluster"), dict):
            errors.append(f"{name}: TF_CONFIG has no cluster")
        elif cluster is None:
            cluster = tf["cluster"]
        elif json.dumps(tf["cluster"]) != json.dumps(cluster):  # like JSON.stringify: order counts
            errors.append(f"{name}: its cluster differs from the other services'")
        task_type, index = task.get("type"), task.get("index")
        if not (isinstance(task_type, str) and task_type in BINARY_OF) or not is_integer(index) or index < 0:
            errors.append(f"{name}: bad task {json.dumps(task)}")
            continue
        key = f"{task_type}:{int(index)}"
        if key in tasks:
            errors.append(f"{name}: task {key} is also {tasks[key]}'s")
        tasks[key] = name
        first = first_word(service.get("command"))
        if first != BINARY_OF[task_type]:
            errors.append(f"{name}: task type {task_type} runs {first}, not {BINARY_OF[task_type]}")
    if cluster is not None:
        for job, addresses in cluster.items():
            if not isinstance(addresses, list):
                errors.append(f"cluster.{job} is not a list")
                continue
            for index, address in enumerate(addresses):
                m = re.fullmatch(r"([^:]+):([0-9]+)", js_string(address))
                if not m:
                    errors.append(f'cluster.{job}[{index}] "{js_string(address)}" is not host:port')
                    continue
                owner = tasks.get(f"{job}:{index}")
                if owner is None:
                    errors.append(f'cluster.{job}[{index}] "{address}": no service runs that task')
                elif m.group(1) != owner:
                    errors.append(f'cluster.{job}[{index}] "{address}": the task runs in service {owner}')
                if job == "ps" and m.group(2) != "2222":
                    errors.append(f'cluster.ps[{index}] "{address}": the image\'s ps port is 2222')
        for key, name in tasks.items():
            job, index = key.split(":")
            # Like Kubeflow, the evaluator runs beside the cluster, not in it.
            if job != "evaluator" and not (isinstance(cluster.get(job), list) and int(index) < len(cluster[job])):
                errors.append(f"{name}: task {key} is not in the cluster")
        for job in ("chief", "ps", "worker"):
            addresses = cluster.get(job)
            if not addresses or (isinstance(addresses, list) and len(addresses) == 0):
                errors.append(f"cluster has no {job} task")
    check(f"{rel(compose_file)}: every TF_CONFIG parses and matches the services ({len(tasks)} tasks)", errors)


# ---- tfjob.yaml against the TFJob CRD's openAPIV3Schema ----

def close_objects(schema):
    """Kubernetes rejects fields a structural schema does not declare
    (kubectl's default --validate=strict); JSON Schema allows them unless
    told otherwise. So every object schema that lists its properties, and
    neither sets additionalProperties nor x-kubernetes-preserve-unknown-fields,
    gets additionalProperties: false, and a misspelt field fails here too.
    The other x-kubernetes-* keywords (int-or-string, which the CRD spells
    out with anyOf too, list-type, map-type, CEL validations) are ignored,
    like every keyword JSON Schema does not define."""
    if isinstance(schema, list):
        for item in schema:
            close_objects(item)
        return
    if not isinstance(schema, dict):
        return
    if (schema.get("properties") is not None and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")):
        schema["additionalProperties"] = False
    for key, value in list(schema.items()):
        # Under "properties" the keys are field names, the values schemas.
        if key == "properties" and isinstance(value, dict):
            for field_schema in value.values():
                close_objects(field_schema)
        else:
            close_objects(value)


def check_tfjob_schema(tfjob, tfjob_file):
    crd = load_yaml(TFJOB_CRD)
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])
    close_objects(schema)
    errors = schema_errors(schema, tfjob)
    api_version = f"{crd['spec']['group']}/{version['name']}"
    kind = crd["spec"]["names"]["kind"]
    doc = tfjob if isinstance(tfjob, dict) else {}
    if doc.get("apiVersion") != api_version:
        errors.append(f"apiVersion is {shown(doc.get('apiVersion'))}, not {api_version}")
    if doc.get("kind") != kind:
        errors.append(f"kind is {shown(doc.get('kind'))}, not {kind}")
    check(f"{rel(tfjob_file)} matches the TFJob CRD's v1 openAPIV3Schema", errors)


def _get(d, *keys):
    """d[k1][k2]..., or None where a level is missing or not a mapping."""
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _find(items, key, value):
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get(key) == value:
            return item
    return None


def check_tfjob_operator(tfjob, tfjob_file, pvc, pvc_file):
    """What the schema leaves to the operator: replica types, restart
    policies, the container and port names the operator looks for, the
    shared claim."""
    errors = []
    specs = _get(tfjob, "spec", "tfReplicaSpecs") or {}
    specs = specs if isinstance(specs, dict) else {}
    claim_name = _get(pvc, "metadata", "name")
    expected = {"Chief": 1, "PS": 2, "Worker": 2, "Evaluator": 1}
    for type_, replicas in expected.items():
        if not specs.get(type_):
            errors.append(f"no {type_} replica spec")
        elif not (is_number(_get(specs[type_], "replicas")) and specs[type_]["replicas"] == replicas):
            errors.append(f"{type_}: replicas {shown(_get(specs[type_], 'replicas'))}, expected {replicas}")
    for type_, spec in specs.items():
        if type_ not in expected:
            errors.append(f"{type_}: not a replica type this job uses")
        if _get(spec, "restartPolicy") != "ExitCode":
            errors.append(f"{type_}: restartPolicy {shown(_get(spec, 'restartPolicy'))}, expected ExitCode")
        pod = _get(spec, "template", "spec") or {}
        container = _find(_get(pod, "containers"), "name", "tensorflow")
        if container is None:
            errors.append(f'{type_}: no container named "tensorflow"')
            continue
        binary = BINARY_OF.get("ps" if type_ == "PS" else str(type_).lower())
        args = container.get("args")
        args = args if isinstance(args, list) else []
        if binary is None:
            errors.append(f"{type_}: no binary runs this replica type")
        elif not args or args[0] != binary:
            errors.append(f"{type_}: args should start with {binary}")
        if not _get(container, "resources", "requests"):
            errors.append(f"{type_}: no resource requests")
        port = _find(container.get("ports"), "name", "tfjob-port")
        if type_ == "PS" and not (port and is_number(port.get("containerPort")) and port["containerPort"] == 2222):
            errors.append("PS: tfjob-port must be 2222, the port ps_server listens on")
        if type_ in ("Chief", "Evaluator"):
            mount = _find(container.get("volumeMounts"), "mountPath", "/train")
            volume = mount and _find(_get(pod, "volumes"), "name", mount.get("name"))
            claim = _get(volume, "persistentVolumeClaim", "claimName")
            if claim is None or claim != claim_name:
                errors.append(f"{type_}: /train is not the claim {claim_name}")
            if "--train_dir=/train" not in args:
                errors.append(f"{type_}: no --train_dir=/train")
        if type_ == "Chief":
            http = _find(container.get("ports"), "name", "http")
            if not http or f"--http_port={js_string(http.get('containerPort'))}" not in args:
                errors.append('Chief: the "http" port is not --http_port')
            for probe in ("readinessProbe", "livenessProbe"):
                get = _get(container, probe, "httpGet")
                if not get or get.get("path") != "/healthz" or get.get("port") != "http":
                    errors.append(f'Chief: {probe} is not GET /healthz on "http"')
    if _get(pvc, "apiVersion") != "v1" or _get(pvc, "kind") != "PersistentVolumeClaim":
        errors.append(f"{rel(pvc_file)} is not a v1 PersistentVolumeClaim")
    check(f"{rel(tfjob_file)}: replicas, restart policies, containers, probes and the claim in {rel(pvc_file)}",
          errors)


def json_patch(doc, ops):
    """doc with RFC 6902 add and replace operations applied (what the GPU
    overlay uses); a ValueError names an operation that does not apply."""
    doc = copy.deepcopy(doc)
    for op in ops:
        keys = [k.replace("~1", "/").replace("~0", "~") for k in op["path"].split("/")[1:]]
        parent = doc
        for k in keys[:-1]:
            parent = parent[int(k)] if isinstance(parent, list) else parent.get(k)
            if parent is None:
                raise ValueError(f"{op['path']}: no {k}")
        last = keys[-1]
        if op["op"] not in ("add", "replace"):
            raise ValueError(f"{op['path']}: op {op['op']} is not add or replace")
        if isinstance(parent, list) and last == "-" and op["op"] == "add":
            parent.append(op["value"])  # "-": after the last element
            continue
        exists = int(last) < len(parent) if isinstance(parent, list) else last in parent
        if op["op"] == "replace" and not exists:
            raise ValueError(f"{op['path']}: nothing to replace")
        if isinstance(parent, list) and op["op"] == "add":
            parent.insert(int(last), op["value"])
        elif isinstance(parent, list):
            parent[int(last)] = op["value"]
        else:
            parent[last] = op["value"]
    return doc


def patched_tfjob(tfjob, overlay_file, errors):
    """The TFJob as the kustomization in overlay_file patches it, checked
    against the CRD; None (with errors) when the patch does not apply."""
    overlay = load(overlay_file)
    if overlay is NOT_LOADED:
        return None
    patches = _get(overlay, "patches") or []
    if overlay.get("resources") != [".."] or len(patches) != 1:
        errors.append("expected the parent kustomization as its one resource and one patch")
    patched = None
    for patch in patches:
        target = patch.get("target", {})
        if target.get("kind") != "TFJob" or target.get("name") != _get(tfjob, "metadata", "name"):
            errors.append(f"the patch targets {shown(target)}, not the TFJob "
                          f"{shown(_get(tfjob, 'metadata', 'name'))}")
            continue
        try:
            patched = json_patch(tfjob, yaml.safe_load(patch["patch"]))
        except (ValueError, KeyError, IndexError, TypeError) as e:
            errors.append(f"the patch does not apply: {e}")
    if patched is not None:
        check_tfjob_schema(patched, overlay_file)
    return patched


def check_gpu_overlay(tfjob, overlay_file):
    """The GPU kustomization: its patch applies to the TFJob, the result still
    matches the CRD, and each worker asks for as many GPUs as --num_gpus."""
    errors = []
    patched = patched_tfjob(tfjob, overlay_file, errors)
    if patched is not None:
        worker = _find(_get(patched, "spec", "tfReplicaSpecs", "Worker", "template", "spec",
                            "containers"), "name", "tensorflow") or {}
        gpus = _get(worker, "resources", "limits", "nvidia.com/gpu")
        flag = next((a for a in worker.get("args", []) if str(a).startswith("--num_gpus=")), None)
        if not is_integer(gpus) or gpus < 1:
            errors.append(f"Worker: nvidia.com/gpu limit {shown(gpus)}, expected a count")
        elif flag != f"--num_gpus={gpus}":
            errors.append(f"Worker: {shown(flag)} does not match its {gpus} GPU(s)")
    check(f"{rel(overlay_file)}: the patch applies and each worker runs a tower per GPU it asks for",
          errors)


def check_tls_overlay(tfjob, overlay_file):
    """The TLS kustomization: every task gets --tls_cert, --tls_key and
    --tls_ca, each a file of the Secret mounted where the flag points, and
    the chief's probes speak HTTPS."""
    errors = []
    patched = patched_tfjob(tfjob, overlay_file, errors)
    for type_, spec in (_get(patched, "spec", "tfReplicaSpecs") or {}).items():
        pod = _get(spec, "template", "spec") or {}
        container = _find(_get(pod, "containers"), "name", "tensorflow") or {}
        flags = dict(str(a)[2:].split("=", 1) for a in container.get("args", [])
                     if str(a).startswith("--tls_") and "=" in str(a))
        for flag in ("tls_cert", "tls_key", "tls_ca"):
            path = flags.get(flag)
            if path is None:
                errors.append(f"{type_}: no --{flag}")
                continue
            mount = next((m for m in container.get("volumeMounts", [])
                          if path.startswith(m.get("mountPath", "?") + "/")), None)
            volume = mount and _find(_get(pod, "volumes"), "name", mount.get("name"))
            secret = _get(volume, "secret") or {}
            items = [i.get("path") for i in secret.get("items", [])]
            if secret.get("secretName") != "pstrain-tls":
                errors.append(f"{type_}: --{flag}={path} is not in the Secret pstrain-tls")
            elif path[len(mount["mountPath"]) + 1:] not in items:
                errors.append(f"{type_}: --{flag}={path} is not an item of the Secret")
        if type_ == "Chief":
            for probe in ("readinessProbe", "livenessProbe"):
                if _get(container, probe, "httpGet", "scheme") != "HTTPS":
                    errors.append(f"Chief: {probe} does not use HTTPS")
    check(f"{rel(overlay_file)}: the patch applies and every task has its certificate, key and CA",
          errors)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compose", default=os.path.join(REPO, "deploy", "compose", "docker-compose.yml"),
                        help="the compose file (default: %(default)s)")
    parser.add_argument("--tfjob", default=os.path.join(REPO, "deploy", "kubernetes", "tfjob.yaml"),
                        help="the TFJob (default: %(default)s)")
    parser.add_argument("--pvc", default=os.path.join(REPO, "deploy", "kubernetes", "pvc.yaml"),
                        help="the train dir's PersistentVolumeClaim (default: %(default)s)")
    parser.add_argument("--tls_overlay",
                        default=os.path.join(REPO, "deploy", "kubernetes", "tls", "kustomization.yaml"),
                        help="the TLS kustomization of the TFJob (default: %(default)s)")
    parser.add_argument("--gpu_overlay",
                        default=os.path.join(REPO, "deploy", "kubernetes", "gpu", "kustomization.yaml"),
                        help="the GPU kustomization of the TFJob (default: %(default)s)")
    args = parser.parse_args()

    compose = load(args.compose)
    if compose is not NOT_LOADED:
        check_compose_schema(compose, args.compose)
        check_tf_configs(compose, args.compose)
    tfjob = load(args.tfjob)
    pvc = load(args.pvc)
    if tfjob is not NOT_LOADED:
        check_tfjob_schema(tfjob, args.tfjob)
        if pvc is not NOT_LOADED:
            check_tfjob_operator(tfjob, args.tfjob, pvc, args.pvc)
        check_gpu_overlay(tfjob, args.gpu_overlay)
        check_tls_overlay(tfjob, args.tls_overlay)
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
