// Validates Kubernetes manifests offline (run by deploy/k8s_test.sh, which copies this file
// beside the node_modules that `npm ci` installed from package-lock.json):
//   node validate.mjs MANIFEST.yaml...
// 1. Schema: each object through kubernetes-models' validator for its apiVersion/kind (the
//    Kubernetes OpenAPI schemas compiled to JSON-schema checks: required fields, types,
//    formats, enums). Those schemas let unknown fields through, so:
// 2. Unknown fields: each object is written into work/manifests.ts (beside this file) as an object literal
//    typed with the package's interface for its kind, and TypeScript's excess property check
//    (tsc --noEmit --strict) refuses any field Kubernetes does not define ("replicass",
//    a probe's "grcp", a misplaced "securityContext" key) and any wrong type.
// Exit 0 when every object passes both; 1 with every problem on stderr otherwise.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
const workDir = path.join(here, "work");
const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node validate.mjs MANIFEST.yaml...");
  process.exit(2);
}

// "apps/v1" -> "apps/v1", "v1" (the core group) -> "v1": the package's module layout.
function modulePath(apiVersion, kind) {
  return `kubernetes-models/${apiVersion}/${kind}`;
}

const problems = [];
const typed = [];
let count = 0;
for (const file of files) {
  let docs;
  try {
    docs = yaml.loadAll(readFileSync(file, "utf8")).filter((d) => d != null);
  } catch (e) {
    problems.push(`${file}: not YAML: ${e.reason} (line ${e.mark?.line + 1})`);
    continue;
  }
  for (const [i, doc] of docs.entries()) {
    const where = `${path.basename(file)}#${i} ${doc.kind}/${doc.metadata?.name}`;
    count++;
    let model;
    try {
      model = await import(modulePath(doc.apiVersion, doc.kind));
    } catch (e) {
      problems.push(`${where}: no schema for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    const Model = model[doc.kind];
    try {
      new Model(doc).validate();
    } catch (e) {
      problems.push(`${where}: ${e.message}`);
    }
    typed.push(
      `// ${where}\nimport type { I${doc.kind} as T${count} } from "${modulePath(doc.apiVersion, doc.kind)}";\n` +
        `export const m${count}: T${count} = ${JSON.stringify(doc, null, 1)};\n`,
    );
  }
}

mkdirSync(workDir, { recursive: true });
const ts = path.join(workDir, "manifests.ts");
writeFileSync(ts, typed.join("\n"));
// tsc finds the imports in ../node_modules, as node does.
writeFileSync(
  path.join(workDir, "tsconfig.json"),
  JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      module: "nodenext",
      moduleResolution: "nodenext",
      types: [],
    },
    files: ["manifests.ts"],
  }),
);
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
try {
  execFileSync(process.execPath, [tsc, "-p", workDir], { stdio: "pipe" });
} catch (e) {
  const out = `${e.stdout ?? ""}${e.stderr ?? ""}`.trim();
  for (const line of out.split("\n")) problems.push(`unknown field or wrong type: ${line}`);
  problems.push(`(the objects with their line numbers: ${ts})`);
}

if (problems.length > 0) {
  for (const p of problems) console.error(`k8s validate: FAIL: ${p}`);
  process.exit(1);
}
console.log(`k8s validate: ok (${count} objects: schema and unknown fields)`);
