// capgate run viewer: vanilla JS, no build step. Every piece of data is put on the page
// with textContent (never innerHTML), and every data request carries the bearer token,
// which comes from the URL fragment and is then removed from the URL.

const TOKEN_KEY = "capgate.token";
const POLL_MS = 2000;

const $ = (id) => document.getElementById(id);

/** Attributes a browser follows or loads as a URL. */
const URL_ATTRIBUTES = new Set([
  "href",
  "src",
  "action",
  "formaction",
  "srcset",
  "poster",
  "ping",
  "xlink:href",
]);

/**
 * The URL as an absolute http(s) address, or null: event data (an MCP server's OAuth
 * authorization URL, a tool's resource link) is untrusted, and a `javascript:` or `data:`
 * link would run in this page, which holds the bearer token.
 */
function safeHttpUrl(value) {
  if (typeof value !== "string") return null;
  let url;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
}

/**
 * Create an element; children are nodes or strings (set as text, never parsed as HTML).
 * A URL attribute is set only to an http(s) URL (see safeHttpUrl); anything else is left
 * off, so no value from event data can become a script link.
 */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "className") node.className = value;
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (URL_ATTRIBUTES.has(key.toLowerCase())) {
      const safe = safeHttpUrl(value);
      if (safe !== null) node.setAttribute(key, safe);
    } else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(
      typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child,
    );
  }
  return node;
}

/** Token and selected run from the fragment; the token leaves the URL at once (kept for this tab only). */
function readFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const fromHash = params.get("token");
  if (fromHash) sessionStorage.setItem(TOKEN_KEY, fromHash);
  const run = params.get("run");
  history.replaceState(
    null,
    "",
    `${location.pathname}${location.search}${run ? `#run=${encodeURIComponent(run)}` : ""}`,
  );
  return { token: sessionStorage.getItem(TOKEN_KEY), run };
}

const state = {
  token: null,
  selected: null,
  follow: null,
  runs: new Map(),
  pending: new Map(),
  ended: false,
};

function setStatus(text, isError = false) {
  const status = $("status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

async function api(path, init = {}) {
  const response = await fetch(path, {
    ...init,
    headers: { authorization: `Bearer ${state.token}`, ...(init.headers ?? {}) },
  });
  if (response.status === 401) {
    $("no-token").hidden = false;
    throw new Error("the token was not accepted; open the link capgate serve printed");
  }
  return response;
}

function formatTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour12: false });
}

function formatDateTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString([], { hour12: false }) : d.toLocaleString([], { hour12: false });
}

function runBadge(run) {
  const label = run.outcome ?? run.status;
  return el("span", { className: `badge ${label}` }, label.replace("_", " "));
}

// ---- runs list ----------------------------------------------------------------------

function renderRuns(list) {
  const ul = $("runs");
  $("runs-empty").hidden = list.length > 0;
  const wanted = new Set(list.map((r) => r.id));
  for (const li of [...ul.children]) if (!wanted.has(li.dataset.runId)) li.remove();
  let previous = null;
  for (const run of list) {
    state.runs.set(run.id, run);
    let li = ul.querySelector(`li[data-run-id="${CSS.escape(run.id)}"]`);
    const button = el(
      "button",
      { type: "button", title: run.goal, onclick: () => select(run.id) },
      el("span", { className: "run-goal" }, run.goal || "(no goal)"),
      el(
        "span",
        { className: "run-meta" },
        runBadge(run),
        el("span", {}, run.profile ?? ""),
        el("span", {}, formatDateTime(run.startedAt ?? run.queuedAt)),
        run.pendingApprovals?.length ? el("span", { className: "badge pending" }, "needs approval") : null,
      ),
    );
    if (!li) {
      li = el("li", { "data-run-id": run.id });
    }
    li.replaceChildren(button);
    li.classList.toggle("selected", run.id === state.selected);
    if (previous ? previous.nextSibling !== li : ul.firstChild !== li) {
      if (previous) previous.after(li);
      else ul.prepend(li);
    }
    previous = li;
  }
  if (state.selected && state.runs.has(state.selected)) renderHeader(state.runs.get(state.selected));
}

async function refreshRuns() {
  try {
    const response = await api("/runs?limit=200");
    if (!response.ok) throw new Error(`GET /runs answered ${response.status}`);
    renderRuns(await response.json());
    setStatus(`updated ${new Date().toLocaleTimeString([], { hour12: false })}`);
  } catch (error) {
    setStatus(String(error.message ?? error), true);
  }
}

async function pollRuns() {
  await Promise.all([refreshRuns(), refreshMcp()]);
  setTimeout(pollRuns, POLL_MS);
}

// ---- MCP servers' requests: elicitations (forms) and OAuth logins ---------------------

const shownElicitations = new Map();

function fieldInput(field) {
  const name = `field-${field.name}`;
  if (field.choices) {
    const select = el("select", {
      name,
      "data-field": field.name,
      multiple: field.multiple ? "" : undefined,
    });
    if (!field.multiple)
      select.append(
        el("option", { value: "" }, field.default !== undefined ? `(default ${field.default})` : "—"),
      );
    for (const c of field.choices) select.append(el("option", { value: c.value }, c.label));
    return select;
  }
  if (field.type === "boolean") {
    const select = el("select", { name, "data-field": field.name });
    select.append(
      el("option", { value: "" }, field.default !== undefined ? `(default ${field.default})` : "—"),
    );
    select.append(el("option", { value: "true" }, "yes"), el("option", { value: "false" }, "no"));
    return select;
  }
  return el("input", {
    name,
    "data-field": field.name,
    type: field.type === "string" ? "text" : "number",
    placeholder: field.default !== undefined ? `default ${field.default}` : field.required ? "required" : "",
  });
}

function readForm(form, fields) {
  const content = {};
  for (const field of fields) {
    const input = form.querySelector(`[data-field="${CSS.escape(field.name)}"]`);
    if (!input) continue;
    if (field.multiple) {
      const values = [...input.selectedOptions].map((o) => o.value);
      if (values.length) content[field.name] = values;
      continue;
    }
    const raw = input.value.trim();
    // Left empty: the client fills in the schema's default.
    if (raw === "") continue;
    content[field.name] =
      field.type === "boolean"
        ? raw === "true"
        : field.type === "number" || field.type === "integer"
          ? Number(raw)
          : raw;
  }
  return content;
}

function renderElicitation(item) {
  const form = el("form", { className: "elicitation", "data-elicitation-id": item.elicitationId });
  const send = async (action) => {
    const body = action === "accept" ? { action, content: readForm(form, item.fields) } : { action };
    const response = await api(`/elicitations/${encodeURIComponent(item.elicitationId)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const answer = await response.json().catch(() => ({}));
      setStatus(answer.error?.message ?? `answer refused (${response.status})`, true);
      return;
    }
    form.remove();
    shownElicitations.delete(item.elicitationId);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void send("accept");
  });
  form.append(
    el("div", { className: "event-title" }, `${item.server} asks: `, item.message),
    ...item.fields.map((field) =>
      el("label", {}, el("span", {}, field.label, field.required ? " *" : ""), fieldInput(field)),
    ),
    el("button", { type: "submit", className: "approve" }, "Send"),
    el("button", { type: "button", className: "deny", onclick: () => send("decline") }, "Decline"),
  );
  return form;
}

function renderLogin(login) {
  const start = async () => {
    const response = await api(`/mcp-logins/${encodeURIComponent(login.server)}`, { method: "POST" });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) setStatus(body.error?.message ?? `login refused (${response.status})`, true);
    void refreshMcp();
  };
  const authorizationUrl = login.pending ? safeHttpUrl(login.pending.authorizationUrl) : null;
  const pending = login.pending
    ? authorizationUrl
      ? el(
          "p",
          {},
          "Open on this machine: ",
          el(
            "a",
            { href: authorizationUrl, target: "_blank", rel: "noreferrer noopener" },
            "authorization page",
          ),
        )
      : el(
          "p",
          { className: "dim" },
          "The server's authorization address is not an http(s) URL; it is not shown as a link.",
        )
    : null;
  return el(
    "li",
    { className: "mcp-login", "data-server": login.server },
    el("span", { className: "run-goal" }, login.server),
    el(
      "span",
      { className: `badge ${login.auth.state === "logged_in" ? "ok" : "pending"}` },
      login.auth.state.replace("_", " "),
    ),
    login.last && !login.last.ok ? el("span", { className: "dim" }, login.last.message) : null,
    pending ??
      el(
        "button",
        { type: "button", onclick: start },
        login.auth.state === "logged_in" ? "Log in again" : "Log in",
      ),
  );
}

async function refreshMcp() {
  try {
    const [e, l] = await Promise.all([api("/elicitations"), api("/mcp-logins")]);
    if (!e.ok || !l.ok) return;
    const { elicitations } = await e.json();
    const { logins } = await l.json();
    const list = $("elicitations");
    const live = new Set(elicitations.map((item) => item.elicitationId));
    for (const [id, node] of shownElicitations)
      if (!live.has(id)) {
        node.remove();
        shownElicitations.delete(id);
      }
    for (const item of elicitations) {
      if (shownElicitations.has(item.elicitationId)) continue;
      const node = el("li", {}, renderElicitation(item));
      shownElicitations.set(item.elicitationId, node);
      list.append(node);
    }
    $("mcp-logins").replaceChildren(...logins.map(renderLogin));
    $("mcp-pane").hidden = elicitations.length === 0 && logins.length === 0;
  } catch {
    // The runs list reports connection trouble; this pane just waits for the next poll.
  }
}

// ---- one run ------------------------------------------------------------------------

function renderHeader(run) {
  const header = $("run-header");
  header.replaceChildren(
    el("h2", {}, run.goal || "(no goal)"),
    el(
      "div",
      { className: "run-meta" },
      runBadge(run),
      el("span", {}, run.profile ?? ""),
      el("span", {}, run.id),
      run.steps !== undefined ? el("span", {}, `${run.steps} steps`) : null,
    ),
  );
}

function select(id) {
  if (state.follow) state.follow.abort();
  state.selected = id;
  state.pending.clear();
  state.ended = false;
  history.replaceState(null, "", `${location.pathname}${location.search}#run=${encodeURIComponent(id)}`);
  for (const li of $("runs").children) li.classList.toggle("selected", li.dataset.runId === id);
  $("timeline").replaceChildren();
  const run = state.runs.get(id);
  if (run) renderHeader(run);
  else $("run-header").replaceChildren(el("h2", {}, id));
  const controller = new AbortController();
  state.follow = controller;
  follow(id, controller.signal).catch((error) => {
    if (!controller.signal.aborted) setStatus(`events: ${error.message ?? error}`, true);
  });
}

/** Read the SSE stream with fetch (EventSource cannot send the Authorization header); resume with Last-Event-ID. */
async function follow(id, signal) {
  let lastId = 0;
  while (!signal.aborted && !state.ended) {
    const headers = lastId > 0 ? { "last-event-id": String(lastId) } : {};
    const response = await api(`/runs/${encodeURIComponent(id)}/events`, { headers, signal });
    if (!response.ok) {
      setStatus(`events: ${response.status}`, true);
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut = buffer.indexOf("\n\n");
      while (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = parseBlock(block);
        if (event && id === state.selected) {
          lastId = event.seq;
          addEvent(event);
        }
        cut = buffer.indexOf("\n\n");
      }
    }
    if (state.ended || signal.aborted) return;
    // The stream closed without run_ended: the run is not live here, or the connection dropped.
    const run = state.runs.get(id);
    if (run && (run.status === "interrupted" || run.status === "ended")) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

function parseBlock(block) {
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (data.length === 0) return null;
  try {
    return JSON.parse(data.join("\n"));
  } catch {
    return null;
  }
}

// Control, bidi and invisible format characters, shown escaped (\u202e) wherever the page
// shows text from a run: nothing a model wrote may reverse a line or hide part of it. The
// browser's copy of `visibleText` in @capgate/schema (the page loads no package code).
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\u115f\u1160\u3164\uffa0]/gu;
function visible(text) {
  return text.replace(INVISIBLE, (c) =>
    c === "\n" || c === "\t" ? c : `\\u${c.codePointAt(0).toString(16).padStart(4, "0")}`,
  );
}

function pre(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return el("pre", {}, visible(text ?? ""));
}

/**
 * What an approval would run: every top-level argument on a line of its own, short ones (the
 * path, the command) first, each value whole — the order `approvalText` of @capgate/schema
 * gives the terminal and MCP clients — so a long argument cannot push another out of view.
 */
function approvalArguments(args) {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return pre(args ?? null);
  const rows = Object.entries(args).map(([key, value], order) => ({
    key,
    value: JSON.stringify(value) ?? "",
    order,
  }));
  const short = (row) => row.value.length <= 120;
  rows.sort((a, b) => Number(!short(a)) - Number(!short(b)) || a.order - b.order);
  return el(
    "pre",
    { className: "approval-arguments" },
    visible(
      rows
        .map(
          (row) =>
            `${/^[A-Za-z_$][\w$.-]*$/.test(row.key) ? row.key : JSON.stringify(row.key)}: ${row.value}`,
        )
        .join("\n"),
    ),
  );
}

function folded(label, value) {
  return el("details", {}, el("summary", {}, label), pre(value));
}

/** Title, tone and body for one event. */
function describe(e) {
  switch (e.type) {
    case "run_started":
      return {
        title: `Run started: ${e.goal}`,
        body: [
          el(
            "div",
            { className: "dim" },
            `${e.profile} · ${e.model} · up to ${e.maxSteps} steps${e.mcp ? " · MCP on" : ""}`,
          ),
        ],
      };
    case "profile_changed":
      return {
        tone: "profile",
        title: `Profile ${e.from} → ${e.to} (${e.reason})`,
        body: [
          el(
            "div",
            { className: "dim" },
            e.loaded.length ? `loaded: ${e.loaded.join(", ")}` : "nothing preloaded",
          ),
        ],
      };
    case "model_request":
      return {
        tone: "minor",
        title: `Model request (${e.totalChars} chars${e.droppedSteps ? `, ${e.droppedSteps} steps dropped` : ""})`,
      };
    case "model_response":
      return { tone: "minor", title: `Model replied in ${e.durationMs} ms`, body: [folded("reply", e.text)] };
    case "action_rejected":
      return {
        tone: "bad",
        title: `Action rejected: ${e.code}${e.property ? ` at ${e.property}` : ""}`,
        body: [pre(e.message)],
      };
    case "capability_searched":
      return {
        title: `Searched “${e.query}”`,
        body: [el("div", { className: "dim" }, e.hits.map((h) => h.capability).join(", ") || "no hits")],
      };
    case "capability_loaded":
      return e.ok
        ? {
            title: `Loaded ${e.name}`,
            body: [folded(`${e.signatures.length} tools`, e.signatures.join("\n"))],
          }
        : { tone: "bad", title: `Could not load ${e.name}`, body: [pre(e.error ?? "")] };
    case "tool_called":
      return {
        title: `${e.parent ? `↳ ${e.parent.tool} call ${e.parent.index}: ` : ""}Call ${e.tool} (${e.risk})`,
        body: [pre(e.arguments ?? {})],
      };
    case "tool_progress":
      return {
        title: `${e.tool}: ${e.total ? `${e.progress}/${e.total}` : e.progress}${e.message ? ` ${e.message}` : ""}`,
        body: [],
      };
    case "tool_result": {
      const how = e.rejected ? `rejected: ${e.rejected}` : e.success ? "ok" : "failed";
      const via = e.via === "mcp" ? ` via MCP ${e.server ?? ""}` : "";
      return {
        tone: e.rejected || !e.success ? "bad" : "good",
        title: `${e.parent ? `↳ ${e.parent.tool} call ${e.parent.index}: ` : ""}${e.tool} → ${how}${via} (${e.durationMs} ms)`,
        body: [pre(e.summary)],
      };
    }
    case "goal_updated":
      return { title: "Goal updated", body: [pre(e.update)] };
    case "memory_searched":
      return { title: `Memory search “${e.query}” (${e.hits.length} hits)` };
    case "verified":
      return {
        tone: e.passed ? "good" : "bad",
        title: `Verify ${e.passed ? "passed" : "failed"}: ${e.claim}`,
        body: [
          el(
            "div",
            { className: "dim" },
            `$ ${e.command} → exit ${e.exitCode ?? "none"}${e.denied ? ` (refused: ${e.denied})` : ""}`,
          ),
          e.outputTail ? pre(e.outputTail) : null,
        ],
      };
    case "finish_refused":
      return { tone: "bad", title: "Finish refused", body: [pre(e.reason)] };
    case "finished":
      return {
        tone: "good",
        title: "Finished",
        body: [pre(e.summary), e.evidence ? folded("evidence", e.evidence) : null],
      };
    case "marked_impossible":
      return { tone: "bad", title: "Marked impossible", body: [pre(e.reason)] };
    case "worker_spawned":
      return {
        title: `Worker ${e.workerId} (${e.profile}): ${e.goal}`,
        body: [el("div", { className: "dim" }, `run ${e.childRunId}`)],
      };
    case "approval_requested":
      return {
        tone: "bad",
        title: `Approval needed: ${e.tool} (${e.risk})`,
        body: [pre(e.description), approvalArguments(e.arguments), approvalActions(e)],
      };
    case "approval_resolved": {
      const grant = typeof e.decidedBy === "string" && e.decidedBy.startsWith("grant:");
      const verdict = grant
        ? `${e.tool ?? "Tool"} allowed for this run`
        : `Approval ${e.approved ? (e.scope === "run" ? "granted for the rest of the run" : "granted") : "denied"}`;
      return {
        tone: e.approved ? "good" : "bad",
        title: `${verdict}${e.decidedBy ? ` by ${e.decidedBy}` : ""}${e.reason ? `: ${e.reason}` : ""}`,
      };
    }
    case "run_ended":
      return {
        tone: e.outcome === "finished" ? "good" : "bad",
        title: `Run ended: ${e.outcome} after ${e.steps} steps`,
        body: [e.summary ? pre(e.summary) : null, e.error ? pre(e.error) : null],
      };
    default:
      return { title: e.type, body: [pre(e)] };
  }
}

function approvalActions(e) {
  const box = el("div", { className: "approval-actions", "data-approval-id": e.approvalId });
  // The answer names the arguments it was shown (argumentsHash): if the request is not the
  // one on the page, the server approves nothing.
  const answer = async (approve, scope = "once") => {
    for (const b of box.querySelectorAll("button")) b.disabled = true;
    try {
      const response = await api(
        `/runs/${encodeURIComponent(state.selected)}/approvals/${encodeURIComponent(e.approvalId)}`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            approve,
            ...(approve ? { scope } : {}),
            ...(e.argumentsHash ? { argumentsHash: e.argumentsHash } : {}),
          }),
        },
      );
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        setStatus(body.error?.message ?? `approval answered ${response.status}`, true);
      }
    } catch (error) {
      setStatus(String(error.message ?? error), true);
    }
  };
  box.append(
    el("button", { type: "button", className: "approve", onclick: () => answer(true) }, "Approve"),
    el(
      "button",
      {
        type: "button",
        className: "approve-run",
        title: `Allow ${e.tool} without asking for the rest of this run`,
        onclick: () => answer(true, "run"),
      },
      "Allow for this run",
    ),
    el("button", { type: "button", className: "deny", onclick: () => answer(false) }, "Deny"),
  );
  state.pending.set(e.approvalId, box);
  return box;
}

function addEvent(e) {
  if (e.type === "approval_resolved") state.pending.get(e.approvalId)?.remove();
  if (e.type === "run_ended") state.ended = true;
  // The list shows outcome and pending approvals: bring it up to date now, not at the next poll.
  if (e.type === "run_ended" || e.type.startsWith("approval_")) void refreshRuns();
  const { title, tone, body = [] } = describe(e);
  const timeline = $("timeline");
  const pane = timeline.parentElement;
  const atBottom = pane.scrollHeight - pane.scrollTop - pane.clientHeight < 80;
  timeline.append(
    el(
      "li",
      {
        // A call a tool made (a script.run's nested calls) sits indented under its enclosing call.
        className: `event ${tone ?? ""}${e.parent ? " nested" : ""}`,
        "data-type": e.type,
        "data-seq": e.seq,
        ...(e.parent ? { "data-parent-step": e.parent.step, "data-parent-index": e.parent.index } : {}),
      },
      el("span", { className: "event-time" }, formatTime(e.time)),
      el("span", { className: "event-step" }, e.step !== undefined ? `#${e.step}` : ""),
      el("div", {}, el("div", { className: "event-title" }, title), ...body),
    ),
  );
  if (atBottom) pane.scrollTop = pane.scrollHeight;
}

// ---- start --------------------------------------------------------------------------

const { token, run } = readFragment();
state.token = token;
if (!token) {
  $("no-token").hidden = false;
  setStatus("no token", true);
} else {
  pollRuns();
  if (run) select(run);
}
