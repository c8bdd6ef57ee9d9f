// Administration → Models: every model and alias people can call (GET /api/v0/admin/models),
// the pools and backends behind each with their health, requests in flight (and for an auto
// backend its learned limit and the engine's gauges), engine, priority forwarding and last
// failure, refreshed every few seconds; "Try it" sends one short request
// through the gateway as the signed-in administrator and shows the answer, time and class.
import { api, errorMessage } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, showError } from "./ui.js";
import { engineName, explainForwarding } from "./forwarding.js";
import { capacityLines } from "./capacity.js";
import { $, LEVELS, badge, cell, formatInstant, formatMs, priorityName } from "./widgets.js";

const REFRESH_MS = 5000;
// The session cookie authenticates /v1 with this header (as in the playground).
const SESSION_HEADERS = { "X-AIplane-Session": "1" };
const STATUS_BADGES = { ok: "active", degraded: "warn", down: "revoked" };

const pageAlert = $("page-alert");
const list = $("model-list");
const cards = new Map(); // "kind:name" -> { item, status, body }
let timer = null;

function keyOf(model) {
  return `${model.kind}:${model.name}`;
}

function healthBadge(route) {
  if (!route.enabled) return badge("warn", t("backend-disabled"));
  if (route.healthy === null) return badge("info", t("backend-health-unknown"));
  return route.healthy ? badge("active", t("backend-healthy")) : badge("revoked", t("backend-unhealthy"));
}

function inflightCell(route) {
  if (route.inflight === null) return cell(t("models-column-inflight"), t("value-none"));
  const ratio = Math.min(1, route.inflight / Math.max(1, route.max_inflight));
  const meter = h(
    "span",
    { class: "inflight" },
    h("span", { class: "meter", "aria-hidden": "true" }, h("span", { style: { width: `${Math.round(ratio * 100)}%` } })),
    h("span", {}, t("backend-inflight-of", { inflight: route.inflight, max: route.max_inflight })),
  );
  if (!route.capacity) return cell(t("models-column-inflight"), meter);
  return cell(t("models-column-inflight"), h("div", { class: "capacity" }, meter, ...capacityLines(route.capacity)));
}

function engineText(profile) {
  if (!profile || profile.kind === "unknown") return t("backend-not-detected");
  const name = engineName(profile.kind);
  return profile.version ? t("models-engine-version", { engine: name, version: profile.version }) : name;
}

function errorCell(route) {
  const error = route.last_error;
  if (!error) return cell(t("models-column-last-error"), h("span", { class: "muted" }, t("models-no-error")));
  const when = formatInstant(error.at);
  return cell(
    t("models-column-last-error"),
    h(
      "div",
      { class: "last-error" },
      h("span", { class: "last-error-when" }, error.source === "health" ? t("models-error-health", { time: when }) : t("models-error-request", { time: when })),
      h("code", { class: "last-error-text" }, error.message),
    ),
  );
}

function poolCell(route) {
  const access = route.allowed_groups.length ? t("models-access-groups", { groups: route.allowed_groups.join(", ") }) : t("models-access-everyone");
  return cell(
    t("models-column-pool"),
    h(
      "div",
      { class: "stack" },
      h("span", { class: "name" }, route.pool),
      h("span", { class: "hint" }, access),
      route.pool_fallback ? h("span", { class: "hint" }, t("models-fallback", { pool: route.pool_fallback })) : null,
    ),
  );
}

function routeRow(model, route) {
  const forwarding = explainForwarding(route.priority, route.profile);
  return h(
    "tr",
    { dataset: { backend: route.backend, pool: route.pool } },
    h(
      "th",
      { scope: "row", "data-label": t("models-column-backend") },
      h("span", { class: "name" }, route.backend),
      route.backend_model !== model.name ? h("span", { class: "hint alias-of" }, t("models-alias-of", { model: route.backend_model })) : null,
    ),
    poolCell(route),
    cell(t("models-column-health"), healthBadge(route)),
    inflightCell(route),
    cell(t("models-column-engine"), engineText(route.profile)),
    cell(
      t("models-column-priority"),
      h(
        "div",
        { class: "stack" },
        route.priority_forwarded ? badge("active", t("models-forwarded")) : badge("info", t("models-not-forwarded")),
        h("span", { class: "hint forwarding" }, forwarding.text),
      ),
    ),
    errorCell(route),
  );
}

// ----- Try it ----------------------------------------------------------------------------------

async function errorFrom(response) {
  let envelope = {};
  try {
    const data = await response.json();
    if (data && typeof data.error === "object" && data.error !== null) envelope = data.error;
  } catch {
    // Not JSON: the status decides.
  }
  const code = envelope.code || (response.status === 401 ? "not_authenticated" : response.status >= 500 ? "internal_error" : "unknown");
  return errorMessage(code, envelope.message || "");
}

function answerText(model, data) {
  if (model.kind === "embedding") {
    const vector = data && data.data && data.data[0] && data.data[0].embedding;
    return t("models-try-embedding", { dimensions: Array.isArray(vector) ? vector.length : 0 });
  }
  const choice = data && data.choices && data.choices[0];
  const text = choice && choice.message ? choice.message.content : "";
  return typeof text === "string" && text ? text : t("value-none");
}

async function tryModel(model, card) {
  const { button, result } = card;
  button.disabled = true;
  result.hidden = false;
  result.dataset.state = "pending";
  result.replaceChildren(h("p", { class: "try-status", role: "status" }, t("models-trying", { model: model.name })));
  const chat = model.kind !== "embedding";
  const path = chat ? "/v1/chat/completions" : "/v1/embeddings";
  const body = chat
    ? { model: model.name, messages: [{ role: "user", content: t("models-try-prompt") }], max_tokens: 24 }
    : { model: model.name, input: t("models-try-input") };
  const started = performance.now();
  try {
    const response = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", ...SESSION_HEADERS },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(await errorFrom(response));
    const data = await response.json();
    const elapsed = performance.now() - started;
    const cls = response.headers.get("x-aiplane-class");
    const backend = response.headers.get("x-aiplane-backend") || t("value-none");
    result.dataset.state = "done";
    result.replaceChildren(
      h("p", { class: "try-answer" }, h("span", { class: "try-label" }, t("models-try-answer")), " ", h("span", { class: "try-text" }, answerText(model, data))),
      h(
        "p",
        { class: "try-meta", role: "status", dataset: { class: LEVELS.includes(cls) ? cls : "" } },
        t("models-try-result", { backend, time: formatMs(Math.round(elapsed)), priority: priorityName(LEVELS.includes(cls) ? cls : null) }),
      ),
    );
  } catch (error) {
    result.dataset.state = "failed";
    const message = error instanceof TypeError ? t("error-network") : error.message;
    const alert = h("p", { class: "alert try-error", role: "alert", tabindex: "-1" }, t("models-try-failed", { message }));
    result.replaceChildren(alert);
    alert.focus({ preventScroll: true });
  } finally {
    button.disabled = false;
  }
}

// ----- the list --------------------------------------------------------------------------------

function newCard(model) {
  const id = `model-${cards.size}`;
  const status = h("span", { class: "model-status" });
  const body = h("tbody");
  const result = h("div", { class: "try-result", hidden: true, "aria-live": "polite" });
  const button = h("button", { type: "button", class: "small try-it", "aria-label": t("models-try-label", { model: model.name }) }, t("models-try"));
  const card = { item: null, status, body, result, button, model };
  button.addEventListener("click", () => tryModel(card.model, card));
  card.item = h(
    "li",
    { class: "card model-card", dataset: { model: model.name, kind: model.kind }, "aria-labelledby": `${id}-title` },
    h(
      "div",
      { class: "section-head model-head" },
      h(
        "div",
        { class: "model-title" },
        h("h2", { id: `${id}-title` }, h("code", { class: "name" }, model.name)),
        badge("info", model.kind === "embedding" ? t("models-kind-embedding") : t("models-kind-chat")),
        status,
      ),
      button,
    ),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "data-table compact model-routes" },
        h("caption", { class: "visually-hidden" }, t("models-routes", { model: model.name })),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["backend", "pool", "health", "inflight", "engine", "priority", "last-error"].map((column) => h("th", { scope: "col" }, t(`models-column-${column}`))),
          ),
        ),
        body,
      ),
    ),
    result,
  );
  return card;
}

function render(data) {
  $("models-loading").hidden = true;
  $("models-not-running").hidden = data.running;
  $("models-empty").hidden = data.models.length > 0;
  const seen = new Set();
  const items = [];
  for (const model of data.models) {
    const key = keyOf(model);
    seen.add(key);
    let card = cards.get(key);
    if (!card) {
      card = newCard(model);
      cards.set(key, card);
    }
    card.model = model;
    card.status.replaceChildren(badge(STATUS_BADGES[model.status] || "info", t(`models-status-${model.status}`)));
    card.item.dataset.status = model.status;
    card.body.replaceChildren(...model.routes.map((route) => routeRow(model, route)));
    items.push(card.item);
  }
  for (const key of [...cards.keys()]) {
    if (!seen.has(key)) cards.delete(key);
  }
  // Kept in place (a running "Try it" and its result stay), in the server's order.
  list.replaceChildren(...items);
  $("models-updated").textContent = t("models-updated", { time: formatInstant(new Date()) });
}

async function refresh() {
  clearTimeout(timer);
  try {
    render(await api("GET", "/api/v0/admin/models"));
    clearMessage(pageAlert);
  } catch (error) {
    $("models-loading").hidden = true;
    showError(pageAlert, error.message);
  } finally {
    timer = setTimeout(refresh, REFRESH_MS);
  }
}

$("models-refresh").addEventListener("click", refresh);
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") refresh();
});

refresh();
