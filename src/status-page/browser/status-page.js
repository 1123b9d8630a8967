// @ts-check
// The status page's script: plain JavaScript the browser runs as served (no bundler, no build step
// for the user), type-checked by tsc (tsconfig.page.json). Data comes from /ui/api/* with the status
// token in a header; live updates from /ui/events (Server-Sent Events, read with fetch so the token
// stays in a header, never in a URL). Every value is set with textContent: nothing is parsed as HTML.
// With environments, a picker chooses the deployment × environment matrix or one environment (its
// header, objects and details: ?env=NAME on the page's URL and on each data route).

const TOKEN_KEY = "plumb-status-token";
const PAGE_SIZE = 50;
const SYNC = ["Synced", "OutOfSync", "Progressing", "Failed", "Refused", "Unknown"];
const HEALTH = ["Healthy", "Progressing", "Degraded", "Unknown"];

/** @typedef {{ at: string, reason: string, result: string, action: string, duration_ms: number }} Reconcile */
/** @typedef {{ kind: string, name: string, sync: string, health: string, id: string|null,
 *   latest_revision_id: string|null, active_revision_id: string|null, revision_status: string|null,
 *   updated_at: string|null, git_commit: string|null, file: string|null, line: number|null,
 *   last_reconcile: Reconcile|null, last_error: string|null, drift_fields: string[], checks: Checks|null,
 *   checks_invalid: string|null }} Row */
/** @typedef {{ revision_id: string, at: string, runs: number, passed: number, pass_ratio: number,
 *   latency_ms: { p50: number, p95: number, max: number }, first_token_ms?: { p50: number, p95: number },
 *   failures?: Array<{ case: string, reason: string }> }} Checks */

/** @typedef {{ environment: string, role: string, invalid?: string }} EnvironmentRole */

/** @typedef {{ name: string, revision_id: string|null, revision_status: string|null, version: string|null,
 *   sync: string, health: string, checks: { passed: number, runs: number, pass_ratio: number, p95_ms: number }|null,
 *   checks_invalid: string|null, lags_behind: string|null }} Cell */
/** @typedef {{ environments: string[], upstream: Array<string|null>, total: number, matched: number,
 *   lagging: number, rows: Array<{ deployment: string, cells: Array<Cell|null>, lagging: boolean }> }} Matrix */

const state = {
  /** The environment shown; "" for the matrix (or, without environments, the one store). */
  env: new URLSearchParams(location.search).get("env") ?? "",
  sync: "",
  health: "",
  q: "",
  offset: 0,
  matched: 0,
  lagging: false,
  refreshing: false,
  again: false,
};

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {string} tag
 * @param {string} [text]
 * @param {string} [className]
 */
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** @param {string} value */
const badge = (value) => el("span", value, `badge ${value}`);
/** @param {string|null} id */
const short = (id) => (id ? id.slice(0, 8) : "—");

/** @param {string|null} iso */
function age(iso) {
  if (!iso) return "—";
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

/** @param {string} iso */
function until(iso) {
  const minutes = Math.round((Date.parse(iso) - Date.now()) / 60000);
  return minutes < 1
    ? "in less than a minute"
    : minutes < 120
      ? `in ${minutes} min`
      : `in ${Math.round(minutes / 60)} h`;
}

/** A data route of the environment shown. @param {string} path */
function ofEnv(path) {
  if (!state.env) return path;
  return `${path}${path.includes("?") ? "&" : "?"}env=${encodeURIComponent(state.env)}`;
}

/** @param {string} path */
async function api(path) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const response = await fetch(path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (response.status === 401) {
    showLogin(token ? "That token was not accepted." : "");
    throw new Error("unauthorized");
  }
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return response.json();
}

/** @param {string} message */
function showLogin(message) {
  $("login").hidden = false;
  $("list").hidden = true;
  $("detail").hidden = true;
  $("login-error").textContent = message;
  $("token").focus();
}

/**
 * @param {HTMLElement} list
 * @param {Array<[string, string | Node]>} facts
 */
function renderFacts(list, facts) {
  list.replaceChildren();
  for (const [term, value] of facts) {
    const dd = el("dd");
    dd.append(value);
    list.append(el("dt", term), dd);
  }
}

/**
 * The picker: the matrix, or one environment (with its role here when it is not led here).
 * @param {EnvironmentRole[]} environments
 */
function renderPicker(environments) {
  const picker = $("environment-picker");
  picker.hidden = environments.length < 2;
  const select = /** @type {HTMLSelectElement} */ ($("environment"));
  const matrix = /** @type {HTMLOptionElement} */ (el("option", "all environments (matrix)"));
  matrix.value = "";
  select.replaceChildren(matrix);
  for (const e of environments) {
    const role = e.role === "leader" ? "" : ` (${e.role} here)`;
    const option = /** @type {HTMLOptionElement} */ (el("option", `${e.environment}${role}`));
    option.value = e.environment;
    select.append(option);
  }
  select.value = state.env;
}

/** Whether the matrix is shown instead of one environment's objects. @param {{ environments?: EnvironmentRole[] }} h */
const matrixChosen = (h) => state.env === "" && (h.environments?.length ?? 0) > 1;

async function loadHeader() {
  const h = await api(ofEnv("/ui/api/header"));
  /** @type {EnvironmentRole[]} */
  const environments = h.environments ?? [];
  renderPicker(environments);
  const source = `${h.source.kind === "git" ? "git" : "directory"} ${h.source.location}`;
  if (matrixChosen(h)) {
    renderFacts($("facts"), [
      ["Source", source + (h.source.commit ? ` @ ${h.source.commit.slice(0, 12)}` : "")],
      ["Environments", environments.map((e) => `${e.environment}: ${e.role}`).join(", ")],
    ]);
    return h;
  }
  const budget = `${h.rate_limit.used} of ${h.rate_limit.limit} requests per ${h.rate_limit.window_seconds} s`;
  renderFacts($("facts"), [
    ...(h.environment ? [/** @type {[string, string]} */ (["Environment", h.environment])] : []),
    ["Source", source + (h.source.commit ? ` @ ${h.source.commit.slice(0, 12)}` : "")],
    ["Control plane", h.control_plane],
    ["Role", h.role === "standby" ? `standby (${h.leader} leads)` : h.role],
    [
      "API",
      h.api === "up"
        ? "reachable"
        : h.api === "down"
          ? "refuses the key or is unreachable"
          : "not checked yet",
    ],
    ["Rate limit", budget],
    [
      "Next drift check",
      h.next_drift_check ? `${h.next_drift_check} (${until(h.next_drift_check)})` : "no schedule",
    ],
    ["Ready", h.ready ? "yes" : "no: first reconcile of every object not finished"],
    ["Queue", `${h.queue.pending} pending, ${h.queue.running} running, ${h.queue.backingOff} backing off`],
  ]);
  const problems = $("problems");
  problems.replaceChildren();
  if (h.role === "standby")
    problems.append(
      el(
        "p",
        `Standby: ${h.leader} holds the state lock and reconciles; this controller takes over when it stops.`,
      ),
    );
  const shown = environments.find((e) => e.environment === h.environment);
  if (shown?.invalid)
    problems.append(
      el("p", `Environment ${shown.environment} runs its last valid document: ${shown.invalid}`, "error"),
    );
  for (const file of h.invalid) {
    for (const p of file.problems)
      problems.append(el("p", `${file.file}:${p.line}:${p.column}: ${p.message}`, "error"));
  }
  if (h.invalid_more)
    problems.append(el("p", `… and ${h.invalid_more} more problems (GET /status lists them all)`, "error"));
  return h;
}

/** @param {Row} row */
function renderRow(row) {
  const tr = el("tr");
  const link = /** @type {HTMLAnchorElement} */ (el("a", row.name));
  link.href = `#/object/${encodeURIComponent(row.kind)}/${encodeURIComponent(row.name)}`;
  const object = el("td");
  object.append(link, el("br"), el("small", row.kind + (row.id ? ` · ${row.id}` : "")));
  const revision = el("td");
  revision.append(
    `${short(row.latest_revision_id)} ${row.revision_status ?? ""}`,
    el("br"),
    el(
      "small",
      row.active_revision_id && row.active_revision_id !== row.latest_revision_id
        ? `active ${short(row.active_revision_id)} · ${age(row.updated_at)}`
        : age(row.updated_at),
    ),
  );
  const manifest = el("td");
  manifest.append(
    row.file ? `${row.file}:${row.line}` : "not in git",
    el("br"),
    el("small", row.git_commit ? `commit ${row.git_commit.slice(0, 12)}` : ""),
  );
  const last = row.last_reconcile;
  const reconcile = el(
    "td",
    last ? `${age(last.at)} · ${last.reason} · ${last.result} · ${last.duration_ms} ms` : "not yet",
  );
  const problem = row.last_error
    ? el("td", row.last_error, "error")
    : el("td", row.drift_fields.length ? `drifted: ${row.drift_fields.join(", ")}` : "");
  const sync = el("td");
  sync.append(badge(row.sync));
  const health = el("td");
  health.append(badge(row.health));
  tr.append(object, sync, health, revision, manifest, reconcile, problem);
  return tr;
}

/**
 * @param {HTMLSelectElement} select
 * @param {string[]} names
 * @param {Record<string, number>} counts
 */
function renderOptions(select, names, counts) {
  const chosen = select.value;
  select.replaceChildren(el("option", "all"));
  /** @type {HTMLOptionElement} */ (select.firstChild).value = "";
  for (const name of names) {
    const option = /** @type {HTMLOptionElement} */ (el("option", `${name} (${counts[name] ?? 0})`));
    option.value = name;
    select.append(option);
  }
  select.value = chosen;
}

async function loadList() {
  const query = new URLSearchParams({ offset: String(state.offset), limit: String(PAGE_SIZE) });
  if (state.sync) query.set("sync", state.sync);
  if (state.health) query.set("health", state.health);
  if (state.q) query.set("q", state.q);
  if (state.env) query.set("env", state.env);
  const page = await api(`/ui/api/objects?${query}`);
  state.matched = page.matched;
  renderOptions(/** @type {HTMLSelectElement} */ ($("filter-sync")), SYNC, page.counts.sync);
  renderOptions(/** @type {HTMLSelectElement} */ ($("filter-health")), HEALTH, page.counts.health);
  $("rows").replaceChildren(.../** @type {Row[]} */ (page.rows).map(renderRow));
  const first = page.matched === 0 ? 0 : page.offset + 1;
  const last = page.offset + page.rows.length;
  $("count").textContent = `${first}–${last} of ${page.matched} shown (${page.total} objects)`;
  /** @type {HTMLButtonElement} */ ($("previous")).disabled = page.offset === 0;
  /** @type {HTMLButtonElement} */ ($("next")).disabled = last >= page.matched;
}

/**
 * One cell of the matrix: version (a link to the object in its environment), revision, sync and
 * health, checks, and whether it lags.
 * @param {Cell|null} c
 * @param {string} environment
 */
function renderCell(c, environment) {
  if (!c) return el("td", "not deployed here");
  const td = el("td");
  const link = /** @type {HTMLAnchorElement} */ (el("a"));
  link.href = `?env=${encodeURIComponent(environment)}#/object/Deployment/${encodeURIComponent(c.name)}`;
  link.append(el("strong", c.version ?? "unknown version"));
  td.append(link, el("br"));
  td.append(el("small", `${short(c.revision_id)} ${c.revision_status ?? ""}`), el("br"));
  td.append(badge(c.sync), " ", badge(c.health));
  if (c.checks_invalid)
    td.append(el("br"), el("small", `checks record invalid: ${c.checks_invalid}`, "error"));
  else if (c.checks)
    td.append(
      el("br"),
      el("small", `checks ${c.checks.passed}/${c.checks.runs} · p95 ${c.checks.p95_ms} ms`),
    );
  if (c.lags_behind) {
    td.className = "lags";
    td.append(el("br"), el("small", `behind ${c.lags_behind}`));
  }
  return td;
}

/** The deployment × environment matrix, shown when the controller has more than one environment. */
async function loadMatrix() {
  const section = $("matrix");
  const token = sessionStorage.getItem(TOKEN_KEY);
  const response = await fetch(`/ui/api/matrix?limit=200${state.lagging ? "&lagging=1" : ""}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  // A controller without environments has no matrix (404): the page is the object list alone.
  if (!response.ok) {
    section.hidden = true;
    return;
  }
  const m = /** @type {Matrix} */ (await response.json());
  section.hidden = m.environments.length < 2;
  if (section.hidden) return;
  const head = el("tr");
  head.append(el("th", "Deployment"));
  m.environments.forEach((name, i) => {
    const th = el("th", name);
    th.setAttribute("scope", "col");
    const from = m.upstream[i];
    if (from) th.append(el("br"), el("small", `promoted from ${from}`));
    head.append(th);
  });
  $("matrix-head").replaceChildren(head);
  $("matrix-rows").replaceChildren(
    ...m.rows.map((row) => {
      const tr = el("tr");
      const name = el("th", row.deployment);
      name.setAttribute("scope", "row");
      tr.append(name, ...row.cells.map((cell, i) => renderCell(cell, m.environments[i] ?? "")));
      return tr;
    }),
  );
  $("matrix-count").textContent =
    `${m.rows.length} of ${m.matched} deployments shown (${m.total} in all); ${m.lagging} with an environment behind the one it is promoted from`;
}

/** @param {string} kind @param {string} name */
async function loadDetail(kind, name) {
  const d = await api(ofEnv(`/ui/api/objects/${encodeURIComponent(kind)}/${encodeURIComponent(name)}`));
  const o = /** @type {Row} */ (d.object);
  $("detail-title").textContent = `${o.kind} ${o.name}`;
  const sync = el("span");
  sync.append(badge(o.sync));
  const health = el("span");
  health.append(badge(o.health));
  const last = o.last_reconcile;
  renderFacts($("detail-facts"), [
    ["Sync", sync],
    ["Health", health],
    ["Id", o.id ?? "not created"],
    ["Latest revision", `${o.latest_revision_id ?? "—"} ${o.revision_status ?? ""}`],
    ["Active revision", o.active_revision_id ?? "—"],
    ["Manifest", o.file ? `${o.file}:${o.line}` : "not in git"],
    ["Commit", o.git_commit ?? "—"],
    [
      "Last reconcile",
      last
        ? `${last.at} (${age(last.at)}): ${last.reason}, ${last.action}, ${last.result}, ${last.duration_ms} ms`
        : "not yet",
    ],
    ["Last error", o.last_error ?? "none"],
    ["Drifted fields", o.drift_fields.join(", ") || "none"],
  ]);
  renderChecks(o);
  $("detail-plan").textContent = d.last_plan.length
    ? d.last_plan.map((/** @type {{mark: string, text: string}} */ l) => `${l.mark} ${l.text}`).join("\n")
    : "no changes";
  const revisions = $("detail-revisions");
  revisions.replaceChildren();
  if (d.revisions_error) revisions.append(row4(d.revisions_error, "", "", ""));
  for (const r of d.revisions ?? [])
    revisions.append(row4(r.id, r.status, `${r.created_at} (${age(r.created_at)})`, r.status_message ?? ""));
}

/** The agent's checks of one revision: pass ratio, latency, and why runs failed. @param {Row} o */
function renderChecks(o) {
  const c = o.checks;
  const failures = $("detail-check-failures");
  failures.replaceChildren();
  if (o.checks_invalid) {
    renderFacts($("detail-checks"), [["Checks", `record invalid: ${o.checks_invalid}`]]);
    return;
  }
  if (!c) {
    renderFacts($("detail-checks"), [["Checks", "none recorded (spec.verify runs them after DEPLOYED)"]]);
    return;
  }
  const stale = c.revision_id !== o.active_revision_id ? " (not the active revision)" : "";
  renderFacts($("detail-checks"), [
    ["Revision", `${c.revision_id}${stale}`],
    ["Checked", `${c.at} (${age(c.at)})`],
    ["Passed", `${c.passed} of ${c.runs} runs (${Math.round(c.pass_ratio * 100)}%)`],
    ["Latency", `p50 ${c.latency_ms.p50} ms, p95 ${c.latency_ms.p95} ms, max ${c.latency_ms.max} ms`],
    [
      "First token",
      c.first_token_ms ? `p50 ${c.first_token_ms.p50} ms, p95 ${c.first_token_ms.p95} ms` : "—",
    ],
  ]);
  for (const f of c.failures ?? []) failures.append(el("li", `${f.case}: ${f.reason}`, "error"));
}

/** @param {string[]} cells */
function row4(...cells) {
  const tr = el("tr");
  for (const cell of cells) tr.append(el("td", cell));
  return tr;
}

function route() {
  const match = /^#\/object\/([^/]+)\/(.+)$/.exec(location.hash);
  return match
    ? { kind: decodeURIComponent(match[1] ?? ""), name: decodeURIComponent(match[2] ?? "") }
    : null;
}

/** Shows what the URL asks for; refreshes run one at a time, and one more if asked meanwhile. */
async function refresh() {
  if (state.refreshing) {
    state.again = true;
    return;
  }
  state.refreshing = true;
  try {
    $("login").hidden = true;
    const header = await loadHeader();
    const target = route();
    const matrix = target === null && matrixChosen(header);
    $("list").hidden = target !== null || matrix;
    $("detail").hidden = target === null;
    if (target || !matrix) $("matrix").hidden = true;
    if (target) await loadDetail(target.kind, target.name);
    else if (matrix) await loadMatrix();
    else await loadList();
  } catch (error) {
    if (String(error) !== "Error: unauthorized") $("live").textContent = `could not load: ${String(error)}`;
  } finally {
    state.refreshing = false;
    if (state.again) {
      state.again = false;
      void refresh();
    }
  }
}

/** Ends the pause before the next connection attempt (set while listen() waits). */
let wakeListener = () => {};

/** Reads /ui/events; each "changed" event refreshes what is shown. Reconnects after a pause. */
async function listen() {
  const live = $("live");
  for (;;) {
    try {
      const token = sessionStorage.getItem(TOKEN_KEY);
      const response = await fetch("/ui/events", {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      if (response.ok && response.body) {
        live.className = "on";
        live.textContent = "live";
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            // hello: a new connection, after which what changed while it was down is not sent.
            if (/^event: (changed|hello)$/m.test(block)) void refresh();
          }
        }
      }
    } catch {
      // dropped connection: fall through to reconnect
    }
    live.className = "off";
    live.textContent = "reconnecting…";
    await new Promise((resolve) => {
      wakeListener = () => resolve(undefined);
      setTimeout(resolve, 2000);
    });
  }
}

function start() {
  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, /** @type {HTMLInputElement} */ ($("token")).value);
    void refresh();
    wakeListener();
  });
  for (const [id, key] of /** @type {const} */ ([
    ["filter-sync", "sync"],
    ["filter-health", "health"],
  ])) {
    $(id).addEventListener("change", (event) => {
      state[key] = /** @type {HTMLSelectElement} */ (event.target).value;
      state.offset = 0;
      void refresh();
    });
  }
  /** @type {number | undefined} */
  let typing;
  $("search").addEventListener("input", (event) => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      state.q = /** @type {HTMLInputElement} */ (event.target).value;
      state.offset = 0;
      void refresh();
    }, 200);
  });
  $("filters").addEventListener("submit", (event) => event.preventDefault());
  $("previous").addEventListener("click", () => {
    state.offset = Math.max(0, state.offset - PAGE_SIZE);
    void refresh();
  });
  $("next").addEventListener("click", () => {
    if (state.offset + PAGE_SIZE < state.matched) state.offset += PAGE_SIZE;
    void refresh();
  });
  $("matrix-lagging").addEventListener("change", (event) => {
    state.lagging = /** @type {HTMLInputElement} */ (event.target).checked;
    void refresh();
  });
  $("environment").addEventListener("change", (event) => {
    state.env = /** @type {HTMLSelectElement} */ (event.target).value;
    state.offset = 0;
    // The page's own path with ?env=NAME, no object open (a relative URL: same origin).
    window.history.pushState(
      null,
      "",
      state.env ? `?env=${encodeURIComponent(state.env)}` : location.pathname,
    );
    void refresh();
  });
  window.addEventListener("popstate", () => {
    state.env = new URLSearchParams(location.search).get("env") ?? "";
    void refresh();
  });
  window.addEventListener("hashchange", () => void refresh());
  void refresh();
  void listen();
}

start();
