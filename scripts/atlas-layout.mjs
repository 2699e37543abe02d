// Checks the atlas's layout in headless Chromium at a phone width (390 px) and a desktop width
// (1400 px), and takes a screenshot at each. Fails (exit 1) when the page scrolls sideways
// (only a wide table or drawing may, inside its own box), or when two edge labels of a drawing
// overlap (drawings are measured unfolded), when the verdict (is HEAD verified?) is not on the
// first screen, or when, at the phone width, a table cell is squeezed narrower than a card
// (tables turn into cards below 600 px). Needs playwright-core (npm) and a Chromium.
// Usage: PLAYWRIGHT_MODULES=DIR node scripts/atlas-layout.mjs ATLAS.html DESKTOP.png PHONE.png CHROMIUM
// (DIR: a node_modules directory holding playwright-core)
import { createRequire } from "node:module";

const require = createRequire(process.env.PLAYWRIGHT_MODULES + "/");
const { chromium } = require("playwright-core");

const [page_path, desktop_png, phone_png, executable] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: executable, args: ["--no-sandbox"] });
let failed = false;
for (const [name, width, shot] of [["desktop", 1400, desktop_png], ["phone", 390, phone_png]]) {
  const page = await browser.newPage({ viewport: { width, height: 1000 } });
  await page.goto("file://" + page_path);
  const found = await page.evaluate((width) => {
    const problems = [];
    const doc = document.documentElement;
    const verdict = document.querySelector("#verdict li") || document.querySelector("#verdict");
    if (!verdict) {
      problems.push("the page has no verdict section");
    } else if (verdict.getBoundingClientRect().bottom > window.innerHeight) {
      problems.push(`the verdict ends at ${verdict.getBoundingClientRect().bottom} px, below the first screen`);
    }
    if (doc.scrollWidth > doc.clientWidth + 1) {
      problems.push(`the page is ${doc.scrollWidth} px wide in a ${doc.clientWidth} px viewport`);
    }
    // Folded drawings are measured open.
    const folded = [...document.querySelectorAll("details")].filter((d) => !d.open);
    for (const d of folded) d.open = true;
    if (doc.scrollWidth > doc.clientWidth + 1) {
      problems.push(`unfolded, the page is ${doc.scrollWidth} px wide in a ${doc.clientWidth} px viewport`);
    }
    if (width < 600) {
      for (const td of document.querySelectorAll("td")) {
        const w = td.getBoundingClientRect().width;
        if (td.textContent.trim() && w > 0 && w < 200) {
          problems.push(`a table cell is ${Math.round(w)} px wide: "${td.textContent.trim().slice(0, 30)}"`);
          break;
        }
      }
    }
    for (const svg of document.querySelectorAll("svg")) {
      const boxes = [...svg.querySelectorAll("text.edge")].map((t) => t.getBBox());
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const a = boxes[i], b = boxes[j];
          if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) {
            problems.push(`two edge labels overlap in "${svg.querySelector("title")?.textContent}"`);
          }
        }
      }
    }
    for (const d of folded) d.open = false;
    return problems;
  }, width);
  await page.screenshot({ path: shot, fullPage: false });
  for (const problem of found) {
    console.error(`atlas-layout (${name}, ${width} px): ${problem}`);
    failed = true;
  }
  console.log(`atlas-layout: ${name} ${width} px: ${found.length ? "FAILED" : "ok"} (${shot})`);
  await page.close();
}
await browser.close();
process.exit(failed ? 1 : 0);
