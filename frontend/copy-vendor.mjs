// Copies the browser builds of our npm dependencies into static/vendor/ (run by `npm ci`).
import { copyFileSync, mkdirSync } from "node:fs";

const files = [["node_modules/chart.js/dist/chart.umd.js", "static/vendor/chart.umd.js"]];
mkdirSync("static/vendor", { recursive: true });
for (const [from, to] of files) {
  copyFileSync(from, to);
  console.log(`vendored ${to}`);
}
