// Checks pstrain's deployment files against the schemas in ../shared/schemas
// (relative to the repository root). Run through validate.sh, which installs
// ajv and js-yaml first. Prints one line per check; exits 1 if any fails.
'use strict';

const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');
const Ajv = require('ajv');

const repo = path.resolve(__dirname, '..', '..');
const schemas = path.resolve(repo, '..', 'shared', 'schemas');
const composeFile = path.join(repo, 'deploy', 'compose', 'docker-compose.yml');
const tfjobFile = path.join(repo, 'deploy', 'kubernetes', 'tfjob.yaml');
const pvcFile = path.join(repo, 'deploy', 'kubernetes', 'pvc.yaml');

let failures = 0;
function check(what, errors) {
  if (errors.length === 0) {
    console.log(`ok    ${what}`);
    return;
  }
  failures++;
  console.log(`FAIL  ${what}`);
  for (const e of errors) console.log(`        ${e}`);
}

function rel(file) {
  return path.relative(repo, file);
}

function loadYaml(file) {
  return yaml.load(fs.readFileSync(file, 'utf8'), { filename: file });
}

function schemaErrors(validate, doc) {
  if (validate(doc)) return [];
  return validate.errors.map(
    (e) => `${e.instancePath || '/'} ${e.message}` + (e.params ? ` ${JSON.stringify(e.params)}` : ''));
}

// strict:false lets through keywords ajv does not know (the CRD's
// x-kubernetes-*, OpenAPI's "example", ...). The formats these schemas use
// are defined below rather than ignored.
function newAjv() {
  const ajv = new Ajv({ strict: false, allErrors: true });
  const inRange = (lo, hi) => ({ type: 'number', validate: (x) => Number.isInteger(x) && x >= lo && x <= hi });
  ajv.addFormat('int32', inRange(-(2 ** 31), 2 ** 31 - 1));
  ajv.addFormat('int64', inRange(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
  ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i);
  return ajv;
}

// ---- docker-compose.yml against the Compose Specification ----

const compose = loadYaml(composeFile);
{
  const spec = JSON.parse(fs.readFileSync(path.join(schemas, 'compose-spec.json'), 'utf8'));
  // Its "$schema" (https://json-schema.org/draft-07/schema) is draft-07 under
  // a spelling ajv does not register; ajv's default meta-schema is draft-07.
  delete spec.$schema;
  check(`${rel(composeFile)} matches compose-spec.json`, schemaErrors(newAjv().compile(spec), compose));
}

// ---- every TF_CONFIG in the compose file agrees with the services ----

// The binary each task type runs (the first word of the service's command).
const binaryOf = { chief: 'chief', ps: 'ps_server', worker: 'worker', evaluator: 'evaluator' };

function environmentOf(service) {
  const env = service.environment || {};
  if (!Array.isArray(env)) return env;
  return Object.fromEntries(env.map((kv) => [kv.split('=', 1)[0], kv.slice(kv.indexOf('=') + 1)]));
}

{
  const errors = [];
  const services = compose.services || {};
  let cluster = null;
  const tasks = new Map();  // "type:index" -> service name
  for (const [name, service] of Object.entries(services)) {
    const raw = environmentOf(service).TF_CONFIG;
    if (raw === undefined) {
      errors.push(`${name}: no TF_CONFIG`);
      continue;
    }
    let tf;
    try {
      tf = JSON.parse(raw);
    } catch (e) {
      errors.push(`${name}: TF_CONFIG is not JSON: ${e.message}`);
      continue;
    }
    const task = tf.task || {};
    if (typeof tf.cluster !== 'object' || tf.cluster === null) errors.push(`${name}: TF_CONFIG has no cluster`);
    else if (cluster === null) cluster = tf.cluster;
    else if (JSON.stringify(tf.cluster) !== JSON.stringify(cluster)) errors.push(`${name}: its cluster differs from the other services'`);
    if (!(task.type in binaryOf) || !Number.isInteger(task.index) || task.index < 0) {
      errors.push(`${name}: bad task ${JSON.stringify(task)}`);
      continue;
    }
    const key = `${task.type}:${task.index}`;
    if (tasks.has(key)) errors.push(`${name}: task ${key} is also ${tasks.get(key)}'s`);
    tasks.set(key, name);
    const command = Array.isArray(service.command) ? service.command : String(service.command || '').split(/\s+/);
    if (command[0] !== binaryOf[task.type]) errors.push(`${name}: task type ${task.type} runs ${command[0]}, not ${binaryOf[task.type]}`);
  }
  if (cluster !== null) {
    for (const [job, addresses] of Object.entries(cluster)) {
      if (!Array.isArray(addresses)) {
        errors.push(`cluster.${job} is not a list`);
        continue;
      }
      addresses.forEach((address, index) => {
        const m = /^([^:]+):(\d+)$/.exec(address);
        if (!m) return errors.push(`cluster.${job}[${index}] "${address}" is not host:port`);
        const owner = tasks.get(`${job}:${index}`);
        if (owner === undefined) errors.push(`cluster.${job}[${index}] "${address}": no service runs that task`);
        else if (m[1] !== owner) errors.push(`cluster.${job}[${index}] "${address}": the task runs in service ${owner}`);
        if (job === 'ps' && m[2] !== '2222') errors.push(`cluster.ps[${index}] "${address}": the image's ps port is 2222`);
      });
    }
    for (const [key, name] of tasks) {
      const [job, index] = key.split(':');
      // Like Kubeflow, the evaluator runs beside the cluster, not in it.
      if (job !== 'evaluator' && !(cluster[job] && Number(index) < cluster[job].length)) {
        errors.push(`${name}: task ${key} is not in the cluster`);
      }
    }
    for (const job of ['chief', 'ps', 'worker']) {
      if (!cluster[job] || cluster[job].length === 0) errors.push(`cluster has no ${job} task`);
    }
  }
  check(`${rel(composeFile)}: every TF_CONFIG parses and matches the services (${tasks.size} tasks)`, errors);
}

// ---- tfjob.yaml against the TFJob CRD's openAPIV3Schema ----

// Kubernetes rejects fields a structural schema does not declare (kubectl's
// default --validate=strict); JSON Schema allows them unless told otherwise.
// So every object schema that lists its properties, and neither sets
// additionalProperties nor x-kubernetes-preserve-unknown-fields, gets
// additionalProperties: false, and a misspelt field fails here too.
function closeObjects(schema) {
  if (Array.isArray(schema)) return schema.forEach(closeObjects);
  if (schema === null || typeof schema !== 'object') return;
  if (schema.properties && schema.additionalProperties === undefined &&
      !schema['x-kubernetes-preserve-unknown-fields']) {
    schema.additionalProperties = false;
  }
  for (const [key, value] of Object.entries(schema)) {
    // Under "properties" the keys are field names, the values schemas.
    if (key === 'properties') Object.values(value).forEach(closeObjects);
    else closeObjects(value);
  }
}

const tfjob = loadYaml(tfjobFile);
const pvc = loadYaml(pvcFile);
{
  const crd = loadYaml(path.join(schemas, 'kubeflow.org_tfjobs.v1.9.0.yaml'));
  const version = crd.spec.versions.find((v) => v.name === 'v1');
  const schema = version.schema.openAPIV3Schema;
  closeObjects(schema);
  const errors = schemaErrors(newAjv().compile(schema), tfjob);
  const apiVersion = `${crd.spec.group}/${version.name}`;
  if (tfjob.apiVersion !== apiVersion) errors.push(`apiVersion is ${tfjob.apiVersion}, not ${apiVersion}`);
  if (tfjob.kind !== crd.spec.names.kind) errors.push(`kind is ${tfjob.kind}, not ${crd.spec.names.kind}`);
  check(`${rel(tfjobFile)} matches the TFJob CRD's v1 openAPIV3Schema`, errors);
}

// What the schema leaves to the operator: replica types, restart policies,
// the container and port names the operator looks for, the shared claim.
{
  const errors = [];
  const specs = (tfjob.spec && tfjob.spec.tfReplicaSpecs) || {};
  const expected = { Chief: 1, PS: 2, Worker: 2, Evaluator: 1 };
  for (const [type, replicas] of Object.entries(expected)) {
    if (!specs[type]) errors.push(`no ${type} replica spec`);
    else if (specs[type].replicas !== replicas) errors.push(`${type}: replicas ${specs[type].replicas}, expected ${replicas}`);
  }
  for (const [type, spec] of Object.entries(specs)) {
    if (!(type in expected)) errors.push(`${type}: not a replica type this job uses`);
    if (spec.restartPolicy !== 'ExitCode') errors.push(`${type}: restartPolicy ${spec.restartPolicy}, expected ExitCode`);
    const pod = (spec.template && spec.template.spec) || {};
    const container = (pod.containers || []).find((c) => c.name === 'tensorflow');
    if (!container) {
      errors.push(`${type}: no container named "tensorflow"`);
      continue;
    }
    const binary = binaryOf[type === 'PS' ? 'ps' : type.toLowerCase()];
    if (!container.args || container.args[0] !== binary) errors.push(`${type}: args should start with ${binary}`);
    if (!(container.resources && container.resources.requests)) errors.push(`${type}: no resource requests`);
    const port = (container.ports || []).find((p) => p.name === 'tfjob-port');
    if (type === 'PS' && !(port && port.containerPort === 2222)) errors.push('PS: tfjob-port must be 2222, the port ps_server listens on');
    if (type === 'Chief' || type === 'Evaluator') {
      const mount = (container.volumeMounts || []).find((m) => m.mountPath === '/train');
      const volume = mount && (pod.volumes || []).find((v) => v.name === mount.name);
      const claim = volume && volume.persistentVolumeClaim && volume.persistentVolumeClaim.claimName;
      if (claim !== pvc.metadata.name) errors.push(`${type}: /train is not the claim ${pvc.metadata.name}`);
      if (!container.args.includes('--train_dir=/train')) errors.push(`${type}: no --train_dir=/train`);
    }
    if (type === 'Chief') {
      const http = (container.ports || []).find((p) => p.name === 'http');
      if (!http || !container.args.includes(`--http_port=${http.containerPort}`)) errors.push('Chief: the "http" port is not --http_port');
      for (const probe of ['readinessProbe', 'livenessProbe']) {
        const get = container[probe] && container[probe].httpGet;
        if (!get || get.path !== '/healthz' || get.port !== 'http') errors.push(`Chief: ${probe} is not GET /healthz on "http"`);
      }
    }
  }
  if (pvc.apiVersion !== 'v1' || pvc.kind !== 'PersistentVolumeClaim') errors.push(`${rel(pvcFile)} is not a v1 PersistentVolumeClaim`);
  check(`${rel(tfjobFile)}: replicas, restart policies, containers, probes and the claim in ${rel(pvcFile)}`, errors);
}

process.exit(failures === 0 ? 0 : 1);
