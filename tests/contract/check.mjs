// The wire contract checked by the official tools: the AsyncAPI document by @asyncapi/parser
// (diagnostics of severity error or warning fail), every JSON Schema compiled by Ajv in strict
// mode (draft 2020-12, formats from ajv-formats), and each message of the files given on the
// command line (JSON: one object or an array; JSON Lines) validated against the schema its
// `schema` field names.
//
//   npm ci --ignore-scripts && node check.mjs [MESSAGES.json|.jsonl ...]
//
// Prints a JSON report; exit status 0 when everything passes, 1 otherwise.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Parser } from "@asyncapi/parser";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SEVERITY = ["error", "warning", "information", "hint"];
const report = { asyncapi: { diagnostics: [] }, schemas: {}, messages: [] };
let failed = false;

// AsyncAPI: the official parser (document structure, $refs, and the payloads as schemas).
const { document, diagnostics } = await new Parser().parse(
  readFileSync(join(root, "schemas", "asyncapi.json"), "utf8"),
);
for (const d of diagnostics) {
  const severity = SEVERITY[d.severity] ?? String(d.severity);
  report.asyncapi.diagnostics.push({ severity, code: d.code, message: d.message, path: d.path.join(".") });
  if (d.severity <= 1) failed = true;
}
report.asyncapi.parsed = document !== undefined;
if (!document) failed = true;

// JSON Schemas: Ajv strict mode (unknown keywords and formats, strict types, tuples and
// required all refused); a warning Ajv would only log counts as a failure too.
const warnings = [];
const ajv = new Ajv2020({
  strict: true,
  allErrors: true,
  logger: { log() {}, warn: (...args) => warnings.push(args.join(" ")), error: (...args) => warnings.push(args.join(" ")) },
});
addFormats(ajv);
const validators = {};
const schemaDir = join(root, "schemas", "json");
for (const file of readdirSync(schemaDir).filter((f) => f.endsWith(".json")).sort()) {
  const schema = JSON.parse(readFileSync(join(schemaDir, file), "utf8"));
  warnings.length = 0;
  try {
    validators[schema.title] = ajv.compile(schema);
    report.schemas[file] = warnings.length ? { ok: false, warnings: [...warnings] } : { ok: true };
  } catch (error) {
    report.schemas[file] = { ok: false, error: error.message };
  }
  if (!report.schemas[file].ok) failed = true;
}

// Messages: each against its own schema.
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  let messages;
  if (/\.jsonl$/.test(file)) {
    messages = text.split("\n").map((line, i) => [i + 1, line]).filter(([, line]) => line.trim());
    messages = messages.map(([n, line]) => [n, JSON.parse(line)]);
  } else {
    const parsed = JSON.parse(text);
    messages = (Array.isArray(parsed) ? parsed : [parsed]).map((m, i) => [i + 1, m]);
  }
  for (const [n, message] of messages) {
    const validate = validators[message?.schema];
    const entry = { file, item: n, schema: message?.schema ?? null };
    if (!validate) {
      Object.assign(entry, { valid: false, errors: ["no schema of that name"] });
    } else if (validate(message)) {
      entry.valid = true;
    } else {
      entry.valid = false;
      entry.errors = validate.errors.map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
    }
    if (!entry.valid) failed = true;
    report.messages.push(entry);
  }
}

report.ok = !failed;
console.log(JSON.stringify(report, null, 2));
process.exitCode = failed ? 1 : 0;
