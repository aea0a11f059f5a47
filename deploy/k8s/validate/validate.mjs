// Checks tune's Kubernetes manifests offline, the way the API server would read them:
//
//   node validate.mjs K8S_DIR                   (npm ci here first: install.sh)
//   node validate.mjs K8S_DIR --print-commands  also prints each container's program and args
//
// 1. kustomization.yaml lists every manifest of K8S_DIR, and each listed file exists.
// 2. Each document (YAML 1.1, as Kubernetes reads it) is checked against the Kubernetes API's
//    JSON schema of its apiVersion and kind (kubernetes-models): types, required fields, enums,
//    formats. The Secrets of secretGenerator are checked as kustomize would make them.
// 3. Unknown fields (a misspelt key), which those schemas allow, are found by TypeScript: each
//    document becomes an object literal of its kind's interface, whose excess properties tsc
//    refuses.
// 4. References inside the set: volume mounts name volumes, Secrets and their keys exist (unless
//    optional), selectors match their pod templates, Services select a workload and name its
//    ports, a StatefulSet's serviceName is a Service.
// Exit status 0 when all hold; 1 with one line per problem otherwise; 2 for bad usage.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import YAML from "yaml";
import ts from "typescript";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const printCommands = args.includes("--print-commands");
const dirs = args.filter((a) => !a.startsWith("--"));
if (dirs.length !== 1) {
  console.error("usage: node validate.mjs K8S_DIR [--print-commands]");
  process.exit(2);
}
const k8sDir = path.resolve(dirs[0]);
const problems = [];
const problem = (where, message) => problems.push(`${where}: ${message}`);

function readYaml(file) {
  const text = fs.readFileSync(file, "utf8");
  const docs = YAML.parseAllDocuments(text, { version: "1.1", prettyErrors: true });
  const values = [];
  docs.forEach((doc, i) => {
    for (const e of [...doc.errors, ...doc.warnings]) {
      problem(`${path.basename(file)} (document ${i + 1})`, `YAML: ${e.message}`);
    }
    const value = doc.toJS();
    if (value !== null && value !== undefined) {
      values.push(value);
    }
  });
  return values;
}

// --- 1. the kustomization and its files ---------------------------------------------------------
const kustomizationFile = path.join(k8sDir, "kustomization.yaml");
if (!fs.existsSync(kustomizationFile)) {
  console.error(`validate: ${kustomizationFile} does not exist`);
  process.exit(1);
}
const [kustomization = {}] = readYaml(kustomizationFile);
if (kustomization.apiVersion !== "kustomize.config.k8s.io/v1beta1" ||
    kustomization.kind !== "Kustomization") {
  problem("kustomization.yaml", "expected apiVersion kustomize.config.k8s.io/v1beta1, kind Kustomization");
}
const listed = kustomization.resources ?? [];
for (const file of listed) {
  if (!fs.existsSync(path.join(k8sDir, file))) {
    problem("kustomization.yaml", `resource ${file} does not exist`);
  }
}
for (const file of fs.readdirSync(k8sDir)) {
  if (/\.ya?ml$/.test(file) && file !== "kustomization.yaml" && !listed.includes(file)) {
    problem("kustomization.yaml", `${file} is not listed in resources`);
  }
}

// Every object with where it came from.
const objects = [];
for (const file of listed.filter((f) => fs.existsSync(path.join(k8sDir, f)))) {
  readYaml(path.join(k8sDir, file)).forEach((obj, i) => objects.push({ obj, where: `${file}#${i + 1}` }));
}
// The Secrets secretGenerator makes: one key per file, named after the file.
for (const [i, gen] of (kustomization.secretGenerator ?? []).entries()) {
  const data = {};
  for (const entry of gen.files ?? []) {
    const [key, file = key] = String(entry).split("=");
    data[path.basename(key)] = Buffer.from(`contents of ${file}`).toString("base64");
  }
  for (const entry of gen.literals ?? []) {
    const [key, ...value] = String(entry).split("=");
    data[key] = Buffer.from(value.join("=")).toString("base64");
  }
  objects.push({
    obj: { apiVersion: "v1", kind: "Secret", metadata: { name: gen.name }, type: gen.type ?? "Opaque", data },
    where: `kustomization.yaml secretGenerator#${i + 1}`,
  });
}
const label = ({ obj, where }) => `${where} ${obj?.kind ?? "?"}/${obj?.metadata?.name ?? "?"}`;

// --- 2. JSON schemas -----------------------------------------------------------------------------
// "apps/v1" -> kubernetes-models/apps/v1/<Kind>; "v1" -> kubernetes-models/v1/<Kind>.
function modelPath(obj) {
  if (typeof obj?.apiVersion !== "string" || typeof obj?.kind !== "string" || !/^[A-Z]\w*$/.test(obj.kind)) {
    return null;
  }
  return `kubernetes-models/${obj.apiVersion}/${obj.kind}`;
}
const typed = [];
for (const entry of objects) {
  const modulePath = modelPath(entry.obj);
  if (modulePath === null) {
    problem(label(entry), "needs apiVersion and kind");
    continue;
  }
  let Model;
  try {
    Model = (await import(modulePath))[entry.obj.kind];
  } catch {
    Model = undefined;
  }
  if (typeof Model !== "function") {
    problem(label(entry), `unknown apiVersion/kind ${entry.obj.apiVersion} ${entry.obj.kind}`);
    continue;
  }
  try {
    new Model(entry.obj).validate();
  } catch (e) {
    for (const err of e.errors ?? [{ instancePath: "", message: e.message }]) {
      problem(label(entry), `${err.instancePath || "/"} ${err.message}${err.params?.allowedValues ? ` (${err.params.allowedValues.join(", ")})` : ""}`);
    }
  }
  typed.push({ ...entry, modulePath });
}

// --- 3. unknown fields, through TypeScript's excess property checks ------------------------------
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "tune-k8s-validate-"));
try {
  const files = new Map();
  typed.forEach((entry, i) => {
    const dts = require.resolve(entry.modulePath).replace(/\.js$/, "");
    const file = path.join(scratch, `doc${i}.ts`);
    fs.writeFileSync(file, `import type { I${entry.obj.kind} as T } from ${JSON.stringify(dts)};\n` +
                           `export const doc: T = ${JSON.stringify(entry.obj, null, 2)};\n`);
    files.set(file, entry);
  });
  const program = ts.createProgram([...files.keys()], {
    noEmit: true, strict: true, skipLibCheck: true, target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, types: [],
  });
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const entry = d.file && files.get(path.resolve(d.file.fileName));
    const message = ts.flattenDiagnosticMessageText(d.messageText, " ");
    if (!entry) {
      problem("typescript", message);
      continue;
    }
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    const text = d.file.text.split("\n")[line].trim();
    problem(label(entry), `${message} (at ${text})`);
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}

// --- 4. references inside the set ---------------------------------------------------------------
const byKind = (kind) => objects.filter((e) => e.obj?.kind === kind);
const secrets = new Map(byKind("Secret").map((e) => [e.obj.metadata?.name,
  new Set([...Object.keys(e.obj.data ?? {}), ...Object.keys(e.obj.stringData ?? {})])]));
const workloads = objects.filter((e) => ["Deployment", "StatefulSet", "DaemonSet"].includes(e.obj?.kind));
const matches = (selector, labels) => Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);
function secretRef(entry, name, key, optional) {
  if (optional) {
    return;
  }
  if (!secrets.has(name)) {
    problem(label(entry), `Secret ${name} is not defined here (resources or secretGenerator)`);
  } else if (key !== undefined && !secrets.get(name).has(key)) {
    problem(label(entry), `Secret ${name} has no key ${key}`);
  }
}
const commands = [];
for (const entry of workloads) {
  const spec = entry.obj.spec ?? {};
  const pod = spec.template?.spec ?? {};
  if (!matches(spec.selector?.matchLabels, spec.template?.metadata?.labels)) {
    problem(label(entry), "spec.selector.matchLabels does not match the pod template's labels");
  }
  if (entry.obj.kind === "StatefulSet" && !byKind("Service").some((s) => s.obj.metadata?.name === spec.serviceName)) {
    problem(label(entry), `serviceName ${spec.serviceName} is not a Service here`);
  }
  const volumes = new Set([...(pod.volumes ?? []).map((v) => v.name),
                           ...(spec.volumeClaimTemplates ?? []).map((c) => c.metadata?.name)]);
  for (const v of pod.volumes ?? []) {
    if (v.secret) {
      secretRef(entry, v.secret.secretName, undefined, v.secret.optional);
      for (const item of v.secret.items ?? []) {
        secretRef(entry, v.secret.secretName, item.key, v.secret.optional);
      }
    }
  }
  for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
    for (const m of c.volumeMounts ?? []) {
      if (!volumes.has(m.name)) {
        problem(label(entry), `container ${c.name} mounts volume ${m.name}, which the pod does not have`);
      }
    }
    for (const env of c.env ?? []) {
      const ref = env.valueFrom?.secretKeyRef;
      if (ref) {
        secretRef(entry, ref.name, ref.key, ref.optional);
      }
    }
    // Without a command the image's entrypoint runs: tune-daemon (deploy/container/Dockerfile).
    const argv = [...(c.command ?? ["tune-daemon"]), ...(c.args ?? [])];
    const program = argv.findIndex((a) => /(^|\/)tune-[a-z]+$/.test(a));
    if (program >= 0) {
      commands.push(argv.slice(program).join(" "));
    }
  }
}
for (const entry of byKind("Service")) {
  const selected = workloads.filter((w) => matches(entry.obj.spec?.selector, w.obj.spec?.template?.metadata?.labels));
  if (selected.length === 0) {
    problem(label(entry), "selects no pod template here");
  }
  const portNames = new Set(selected.flatMap((w) => (w.obj.spec.template.spec?.containers ?? [])
    .flatMap((c) => (c.ports ?? []).map((p) => p.name))));
  for (const port of entry.obj.spec?.ports ?? []) {
    if (typeof port.targetPort === "string" && !portNames.has(port.targetPort)) {
      problem(label(entry), `targetPort ${port.targetPort} is no named port of the pods it selects`);
    }
  }
}

if (problems.length > 0) {
  console.error(problems.join("\n"));
  console.error(`validate: ${problems.length} problem(s) in ${k8sDir}`);
  process.exit(1);
}
if (printCommands) {
  console.log(commands.join("\n"));
}
console.error(`validate: ${objects.length} objects in ${k8sDir} are valid`);
