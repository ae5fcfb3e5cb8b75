// Validates Kubernetes objects against the OpenAPI schemas shipped in `kubernetes-models` (ESM only,
// so jest runs this as a child process). stdin: a JSON array of objects; stdout: a JSON array with
// one entry per object: null when valid, the validation message otherwise.
import { readFileSync } from 'node:fs';

const objects = JSON.parse(readFileSync(0, 'utf8'));
const results = [];
for (const obj of objects) {
  try {
    const mod = await import(`kubernetes-models/${obj.apiVersion}`);
    const Model = mod[obj.kind];
    if (typeof Model !== 'function') throw new Error(`kubernetes-models has no ${obj.apiVersion} ${obj.kind}`);
    new Model(obj).validate();
    results.push(null);
  } catch (error) {
    results.push(`${obj.kind}/${obj.metadata?.name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
process.stdout.write(JSON.stringify(results));
