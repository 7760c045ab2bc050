// Prints the first load's size (index.html + the JS and CSS it loads), raw and gzip -9.
import { readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

const dist = new URL('../dist/', import.meta.url).pathname;
const files = ['index.html', ...readdirSync(join(dist, 'assets')).map((f) => `assets/${f}`)];
let raw = 0;
let gz = 0;
for (const f of files) {
  const b = readFileSync(join(dist, f));
  const z = gzipSync(b, { level: 9 }).length;
  raw += b.length;
  gz += z;
  console.log(`${f.padEnd(40)} ${String(b.length).padStart(8)} B  gzip ${String(z).padStart(7)} B`);
}
console.log(`first load: ${(raw / 1024).toFixed(1)} KiB raw, ${(gz / 1024).toFixed(1)} KiB gzip (limit 200 KiB)`);
if (gz > 200 * 1024) {
  console.error('first load over 200 KiB compressed');
  process.exit(1);
}
