// The status page's HTML shell and style sheet. They carry no data: the script fetches it with the
// status token, so the page itself is served without one (a login form asks for it when needed).
// The token field is no site password (docs/security.md): autocomplete="off" and the password
// managers' own ignore attributes, so none saves the token or fills in another password it holds.

export const PAGE_SCRIPT_PATH = "/ui/status-page.js";
export const PAGE_STYLE_PATH = "/ui/status-page.css";

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>plumb controller</title>
<link rel="stylesheet" href="${PAGE_STYLE_PATH}">
<script type="module" src="${PAGE_SCRIPT_PATH}"></script>
</head>
<body>
<header>
  <h1>plumb controller</h1>
  <p id="live" role="status" aria-live="polite">connecting…</p>
  <p id="environment-picker" hidden>
    <label for="environment">Environment</label>
    <select id="environment"></select>
  </p>
  <dl id="facts"></dl>
</header>
<main>
  <form id="login" hidden>
    <h2>Status token</h2>
    <p>This controller needs the token set in <code>PLUMB_STATUS_TOKEN</code>. It is kept in this tab's session storage only.</p>
    <label for="token">Token</label>
    <input id="token" type="password" autocomplete="off" data-1p-ignore data-lpignore="true" data-bwignore data-form-type="other" required>
    <button type="submit">Show status</button>
    <p id="login-error" role="alert"></p>
  </form>
  <section id="matrix" aria-labelledby="matrix-title" hidden>
    <h2 id="matrix-title">Environments</h2>
    <p id="matrix-count" aria-live="polite"></p>
    <label><input id="matrix-lagging" type="checkbox"> Only deployments where an environment lags</label>
    <table>
      <thead id="matrix-head"></thead>
      <tbody id="matrix-rows"></tbody>
    </table>
  </section>
  <section id="list" aria-labelledby="list-title" hidden>
    <h2 id="list-title">Objects</h2>
    <div id="problems" role="alert"></div>
    <form id="filters" role="search">
      <label for="filter-sync">Sync</label>
      <select id="filter-sync"><option value="">all</option></select>
      <label for="filter-health">Health</label>
      <select id="filter-health"><option value="">all</option></select>
      <label for="search">Search</label>
      <input id="search" type="search" placeholder="name, id, file or error">
    </form>
    <p id="count" aria-live="polite"></p>
    <table>
      <thead><tr><th scope="col">Object</th><th scope="col">Sync</th><th scope="col">Health</th><th scope="col">Revision</th><th scope="col">Manifest</th><th scope="col">Last reconcile</th><th scope="col">Problem</th></tr></thead>
      <tbody id="rows"></tbody>
    </table>
    <nav aria-label="pages">
      <button id="previous" type="button">Previous</button>
      <button id="next" type="button">Next</button>
    </nav>
  </section>
  <section id="detail" aria-labelledby="detail-title" hidden>
    <p><a href="#">← all objects</a></p>
    <h2 id="detail-title"></h2>
    <dl id="detail-facts"></dl>
    <h3>Checks</h3>
    <dl id="detail-checks"></dl>
    <ul id="detail-check-failures"></ul>
    <h3>Last plan</h3>
    <pre id="detail-plan"></pre>
    <h3>Revisions</h3>
    <table>
      <thead><tr><th scope="col">Revision</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Message</th></tr></thead>
      <tbody id="detail-revisions"></tbody>
    </table>
  </section>
</main>
</body>
</html>
`;

// Colours pass WCAG AA against their backgrounds; every state is also spelled out in text.
export const PAGE_CSS = `
:root { font-family: system-ui, sans-serif; color: #1b1f24; background: #fff; }
body { margin: 0 1.5rem 2rem; }
header { border-bottom: 1px solid #d0d7de; padding-bottom: .5rem; }
h1 { font-size: 1.4rem; margin: 1rem 0 .25rem; }
#facts, #detail-facts, #detail-checks { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .5rem 0; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
#live { margin: 0; font-size: .9rem; color: #57606a; }
#live.on::before { content: "● "; color: #1a7f37; }
#live.off::before { content: "● "; color: #cf222e; }
#environment-picker:not([hidden]) { margin: .5rem 0; display: flex; gap: .5rem; align-items: center; }
#filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; margin: .5rem 0; }
#filters input { min-width: 18rem; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; border-bottom: 1px solid #d0d7de; padding: .3rem .5rem; vertical-align: top; }
td code, dd code { font-size: .85rem; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-weight: 600; font-size: .8rem; border: 1px solid; }
.Synced, .Healthy { color: #1a7f37; background: #dafbe1; }
.OutOfSync, .Progressing { color: #7d4e00; background: #fff8c5; }
.Failed, .Refused, .Degraded { color: #a40e26; background: #ffebe9; }
.Unknown { color: #424a53; background: #f6f8fa; }
.error { color: #a40e26; }
#matrix td.lags { background: #fff8c5; border-left: 4px solid #9a6700; }
#matrix td small { color: #57606a; }
pre { background: #f6f8fa; padding: .75rem; overflow-x: auto; }
a:focus, button:focus, input:focus, select:focus { outline: 3px solid #0969da; outline-offset: 1px; }
nav { margin: .75rem 0; display: flex; gap: .5rem; }
`;
