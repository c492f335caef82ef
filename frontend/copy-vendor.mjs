// Copies the browser builds of our npm dependencies into static/vendor/ (run by `npm ci`).
import { copyFileSync, mkdirSync } from "node:fs";

// The source map travels with the script: the manifest storage checks every URL a file names.
const files = [
  ["node_modules/chart.js/dist/chart.umd.js", "static/vendor/chart.umd.js"],
  ["node_modules/chart.js/dist/chart.umd.js.map", "static/vendor/chart.umd.js.map"],
];
mkdirSync("static/vendor", { recursive: true });
for (const [from, to] of files) {
  copyFileSync(from, to);
  console.log(`vendored ${to}`);
}
