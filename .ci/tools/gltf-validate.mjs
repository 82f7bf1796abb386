// Validate glTF/GLB files with the Khronos glTF-Validator (npm `gltf-validator`).
// Usage: node gltf-validate.mjs FILE...  — prints one line per file; exits 1 when any file has
// an error or a warning (infos and hints are allowed).
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';
const require = createRequire(import.meta.url);
const validator = require(process.env.GLTF_VALIDATOR || 'gltf-validator');

let bad = 0;
for (const file of process.argv.slice(2)) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const report = await validator.validateBytes(bytes, {
    uri: path.basename(file),
    maxIssues: 100,
    externalResourceFunction: (uri) =>
      new Promise((resolve, reject) => {
        try { resolve(new Uint8Array(fs.readFileSync(path.join(path.dirname(file), decodeURIComponent(uri))))); }
        catch (e) { reject(e.toString()); }
      }),
  });
  const i = report.issues;
  const line = `${file}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos`;
  console.log(line);
  if (i.numErrors > 0 || i.numWarnings > 0) {
    bad++;
    for (const m of i.messages.filter((m) => m.severity <= 1).slice(0, 20)) {
      console.log(`  ${m.severity === 0 ? 'error' : 'warning'} ${m.code} ${m.pointer || ''}: ${m.message}`);
    }
  }
}
process.exit(bad ? 1 : 0);
