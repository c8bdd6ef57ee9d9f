// Administration → Backends: the model servers (the complete backend editor, including the
// concurrency limit, fixed or learned from the engine, the priority forwarding mode and what
// detection found, and the reserved headroom kept from the lower classes; live health, in-flight
// and learned limit) and the pools.
// A save error takes keyboard focus and is scrolled into view, in the person's language.
import { api } from "./api.js";
import { formatDate, t } from "./i18n.js";
import { clearMessage, h, pageAttempt, showError, showStatus } from "./ui.js";
import { engineName, explainForwarding } from "./forwarding.js";
import { autoRangeText, capacityLines } from "./capacity.js";
import { watchQueue } from "./live.js";
import {
  $,
  actionsCell,
  badge,
  cell,
  checkedValues,
  clearInvalid,
  confirmAction,
  describeError,
  fillCheckList,
  intOrRaw,
  liveEndedText,
  liveModeText,
  markInvalid,
  resetEditor,
  splitList,
  tOr,
  yesNo,
} from "./widgets.js";

const KINDS = ["chat", "embedding"];
const STRATEGIES = ["least_inflight", "round_robin", "prefix_affinity"];
const PRESETS = {
  vllm: { field: "priority", low: 1, medium: 0, high: -1 },
  sglang: { field: "priority", low: 0, medium: 1, high: 2 },
};

const pageAlert = $("page-alert");
const pageStatus = $("page-status");
const attempt = pageAttempt(pageAlert, pageStatus);
const overview = $("overview");
const list = $("backend-list");

let backends = [];
let pools = [];
let groupNames = [];
const live = new Map(); // backend name -> {inflight, max_inflight, healthy, enabled, capacity}

const SURFACES = ["messages", "responses"];
// A new backend's limits: the fixed default, and auto's bounds (gateway/engines/capacity.py).
const FIXED_DEFAULT = 16;
const FLOOR_DEFAULT = 1;
const CEILING_DEFAULT = 256;
// Reserved headroom is kept from these classes (high is kept from nothing), each 0 to 1000.
const HEADROOM_CLASSES = ["low", "medium"];
const HEADROOM_MAX = 1000;
// Each in words, written out so the catalog drift test sees the ids.
const KEPT_FROM = {
  low: (slots) => t("backend-headroom-kept-low", { slots }),
  medium: (slots) => t("backend-headroom-kept-medium", { slots }),
};

// "Messages: native · Responses: translated to chat"
function servingText(backend) {
  return SURFACES.map((surface) =>
    t(`backend-serving-${backend.serving[surface]}`, { surface: t(`backend-surface-${surface}`) }),
  ).join(" · ");
}

function fillSurfaces(backend) {
  for (const surface of SURFACES) {
    $(`surface-${surface}`).value = backend ? backend.surfaces[surface] : "auto";
    $(`surface-${surface}-now`).textContent = backend
      ? t(`backend-serving-${backend.serving[surface]}`, { surface: t(`backend-surface-${surface}`) })
      : t("backend-surface-new");
  }
  $("backend-store-responses").checked = backend ? backend.store_responses : false;
}

function surfacesFromEditor() {
  return Object.fromEntries(SURFACES.map((surface) => [surface, $(`surface-${surface}`).value]));
}

function modeName(priority) {
  const mode = priority ? priority.mode : "auto";
  if (mode === "custom") return t("backend-priority-custom");
  if (mode === "gateway") return t("backend-priority-gateway");
  return t("backend-priority-auto");
}

function kindName(kind) {
  return tOr(`pool-kind-${kind}`, kind);
}

function strategyName(strategy) {
  return tOr(`pool-strategy-${strategy.replaceAll("_", "-")}`, strategy);
}

function detectedAt(profile) {
  return profile && profile.detected_at ? formatDate(new Date(profile.detected_at * 1000).toISOString()) : t("value-never");
}

function metaRows(rows) {
  return rows.filter(Boolean).flatMap(([label, value]) => [h("dt", {}, label), h("dd", {}, value)]);
}

function detectionRows(profile) {
  if (!profile) return [];
  return metaRows([
    [t("detection-engine"), engineName(profile.kind)],
    [t("detection-version"), profile.version || t("value-not-reported")],
    [t("detection-priority-scheduling"), yesNo(profile.priority_scheduling)],
    [t("detection-schedule-policy"), profile.schedule_policy || t("value-not-reported")],
    [t("detection-low-values-first"), yesNo(profile.low_values_first)],
    [t("detection-detected-at"), detectedAt(profile)],
  ]);
}

// --- live health and in-flight -------------------------------------------------------------

function healthBadge(backend) {
  const state = live.get(backend.name) || {};
  const healthy = state.healthy ?? backend.healthy;
  if (healthy === true) return badge("active", t("backend-healthy"));
  if (healthy === false) return badge("revoked", t("backend-unhealthy"));
  return badge("", t("backend-health-unknown"));
}

function isAuto(backend) {
  return backend.max_inflight === "auto";
}

// An auto backend's learned limit as the live queue or the last load saw it; null until known.
function learnedCapacity(backend) {
  const state = live.get(backend.name);
  return state && state.capacity !== undefined ? state.capacity : backend.capacity;
}

// The limit in force: the fixed one, or the learned one (null until a gateway here learns it).
function limitOf(backend) {
  if (!isAuto(backend)) return backend.max_inflight;
  const capacity = learnedCapacity(backend);
  return capacity ? capacity.limit : (live.get(backend.name)?.max_inflight ?? null);
}

function inflightText(backend) {
  const state = live.get(backend.name) || {};
  const inflight = state.inflight ?? backend.inflight;
  const max = limitOf(backend) ?? t("capacity-auto");
  return t("backend-inflight-of", { inflight: inflight ?? 0, max });
}

function inflightRatio(backend) {
  const state = live.get(backend.name) || {};
  const inflight = state.inflight ?? backend.inflight ?? 0;
  return Math.min(1, inflight / Math.max(1, limitOf(backend) ?? 1));
}

// "2 slots from low, 1 slot from medium": what the backend keeps for higher classes; null for none.
function headroomText(headroom) {
  const kept = HEADROOM_CLASSES.filter((cls) => (headroom || {})[cls] > 0);
  if (!kept.length) return null;
  return kept.map((cls) => KEPT_FROM[cls](headroom[cls])).join(", ");
}

// Under an auto backend's meter: its bounds, and its learned limit and the engine's gauges.
function capacityBlock(backend) {
  const capacity = learnedCapacity(backend);
  return [
    h(
      "span",
      {},
      h("span", { class: "label" }, t("backend-concurrency")),
      " ",
      h("span", { class: "capacity-range" }, autoRangeText(backend.capacity_floor, backend.capacity_ceiling)),
    ),
    ...(capacity ? capacityLines(capacity) : [h("span", { class: "hint capacity-learned" }, t("capacity-not-learned"))]),
  ];
}

function refreshLive() {
  for (const backend of backends) {
    const card = list.querySelector(`[data-backend="${CSS.escape(backend.name)}"]`);
    if (!card) continue;
    card.querySelector(".live-health").replaceChildren(healthBadge(backend));
    card.querySelector(".live-inflight").textContent = inflightText(backend);
    card.querySelector(".meter > span").style.width = `${Math.round(inflightRatio(backend) * 100)}%`;
    card.querySelector(".live-capacity")?.replaceChildren(...capacityBlock(backend));
  }
}

const liveState = $("live-state");
watchQueue(
  (state) => {
    live.clear();
    for (const entry of state.backends || []) live.set(entry.name, entry);
    refreshLive();
  },
  (mode) => {
    if (liveState.dataset.mode === mode) return;
    liveState.dataset.mode = mode;
    liveState.textContent = liveModeText(mode);
    const why = liveEndedText(mode);
    if (why) showError(pageAlert, why);
  },
);

// --- the backend list ----------------------------------------------------------------------

// The last failed "Detect now" per backend, shown in its card until a detection succeeds.
const detectFailures = new Map();

// "GET http://…/v1/models: ConnectError: …" in words: what was probed and what went wrong.
function detectionFailureText(detection) {
  const args = { url: detection.url, error: detection.error || "", status: detection.status ?? 0 };
  return t(`backend-detect-failed-${detection.reason || "unreachable"}`.replaceAll("_", "-"), args);
}

function noteDetection(updated) {
  if (!updated.detection || updated.detection.ok) detectFailures.delete(updated.name);
  else detectFailures.set(updated.name, updated.detection);
}

function renderBackend(backend) {
  const forwarding = explainForwarding(backend.priority, backend.profile);
  const models = backend.models.length
    ? backend.models.join(", ")
    : backend.discovered_models.length
      ? t("backend-models-all-discovered", { models: backend.discovered_models.join(", ") })
      : t("backend-models-none");
  const aliases = Object.entries(backend.aliases).map(([alias, model]) => `${alias} → ${model}`);
  return h(
    "li",
    { class: "card backend-card", dataset: { backend: backend.name } },
    h(
      "header",
      {},
      h("div", {}, h("h3", { id: `backend-title-${backend.name}` }, backend.name), h("code", { class: "url", title: backend.base_url }, backend.base_url)),
      h(
        "span",
        { class: "badges" },
        h("span", { class: "live-health" }, healthBadge(backend)),
        backend.enabled ? null : badge("warn", t("backend-disabled")),
      ),
    ),
    h(
      "div",
      { class: "inflight" },
      h("span", { class: "label" }, t("backend-inflight")),
      h("span", { class: "meter", "aria-hidden": "true" }, h("span", { style: { width: `${Math.round(inflightRatio(backend) * 100)}%` } })),
      h("span", { class: "live-inflight" }, inflightText(backend)),
    ),
    isAuto(backend) ? h("div", { class: "capacity live-capacity" }, ...capacityBlock(backend)) : null,
    h(
      "dl",
      { class: "meta" },
      metaRows([
        [t("backend-models"), models],
        aliases.length ? [t("backend-aliases"), aliases.join(", ")] : null,
        [t("backend-weight"), String(backend.weight)],
        headroomText(backend.headroom) ? [t("backend-headroom-kept"), headroomText(backend.headroom)] : null,
        [t("backend-api-key"), backend.has_api_key ? t("backend-key-set") : t("backend-key-not-set")],
        [t("backend-pools"), backend.pools.length ? backend.pools.join(", ") : t("value-none")],
        [t("backend-priority-mode"), modeName(backend.priority)],
        [t("backend-surfaces"), servingText(backend)],
        [t("backend-engine"), backend.profile ? `${engineName(backend.profile.kind)}${backend.profile.version ? " " + backend.profile.version : ""}` : t("backend-not-detected")],
      ]),
    ),
    h("p", { class: `status ${forwarding.forwarded ? "ok" : "info"} forwarding` }, forwarding.text),
    backend.pools.length ? null : h("p", { class: "status warn no-pool" }, t("backend-no-pool")),
    detectFailures.has(backend.name) ? h("p", { class: "alert detect-failure" }, detectionFailureText(detectFailures.get(backend.name))) : null,
    h(
      "div",
      { class: "actions", role: "group", "aria-label": t("backend-actions", { name: backend.name }) },
      h("button", { type: "button", class: "secondary small", onclick: () => openBackendEditor(backend) }, t("action-edit")),
      h("button", { type: "button", class: "secondary small", onclick: (event) => detect(backend, event.currentTarget) }, t("backend-detect-now")),
      h("button", { type: "button", class: "danger small", onclick: () => removeBackend(backend) }, t("action-delete")),
    ),
  );
}

function renderPool(pool) {
  return h(
    "tr",
    { dataset: { pool: pool.name } },
    h("th", { scope: "row", "data-label": t("pool-name") }, h("span", { class: "row-title" }, pool.name)),
    cell(t("pool-kind"), kindName(pool.kind)),
    cell(t("pool-strategy"), strategyName(pool.strategy)),
    cell(t("pool-groups"), pool.everyone ? t("pool-groups-everyone") : pool.allowed_groups.length ? pool.allowed_groups.join(", ") : t("pool-groups-nobody")),
    cell(t("pool-fallback"), pool.fallback || t("value-none")),
    cell(t("pool-backends"), pool.backends.length ? pool.backends.join(", ") : t("value-none")),
    actionsCell(t("pool-actions", { name: pool.name }), { onEdit: () => openPoolEditor(pool), onDelete: () => removePool(pool) }),
  );
}

function render() {
  $("backends-loading").hidden = true;
  $("backends-empty").hidden = backends.length > 0;
  list.replaceChildren(...backends.map(renderBackend));
  $("pools-empty").hidden = pools.length > 0;
  $("pools-wrap").hidden = pools.length === 0;
  $("pools-body").replaceChildren(...pools.map(renderPool));
  $("backend-new").disabled = false;
  $("pool-new").disabled = false;
}

async function load() {
  const [b, p, g] = await Promise.all([
    api("GET", "/api/v0/admin/backends"),
    api("GET", "/api/v0/admin/pools"),
    api("GET", "/api/v0/admin/groups"),
  ]);
  backends = b.backends;
  pools = p.pools;
  groupNames = g.groups.map((group) => group.name);
  render();
}

function replaceBackend(updated) {
  const index = backends.findIndex((item) => item.name === updated.name);
  if (index >= 0) backends[index] = updated;
  else backends.push(updated);
}

async function detect(backend, button) {
  clearMessage(pageAlert);
  clearMessage(pageStatus);
  button.disabled = true;
  showStatus(pageStatus, t("backend-detecting", { name: backend.name }));
  try {
    const updated = await api("POST", `/api/v0/admin/backends/${encodeURIComponent(backend.name)}/detect`);
    noteDetection(updated);
    replaceBackend(updated);
    render();
    if (updated.detection && !updated.detection.ok) {
      clearMessage(pageStatus);
      showError(pageAlert, t("backend-detect-failed", { name: backend.name }));
    } else {
      showStatus(pageStatus, t("backend-detected", { name: backend.name }));
    }
    list.querySelector(`[data-backend="${CSS.escape(backend.name)}"] button`)?.focus();
  } catch (error) {
    clearMessage(pageStatus);
    showError(pageAlert, error.message);
  } finally {
    button.disabled = false;
  }
}

async function removeBackend(backend) {
  if (!(await confirmAction(t("backend-delete-confirm", { name: backend.name }), t("action-delete")))) return;
  await attempt(async () => {
    await api("DELETE", `/api/v0/admin/backends/${encodeURIComponent(backend.name)}`);
    await load();
    showStatus(pageStatus, t("backend-deleted", { name: backend.name }));
  });
}

async function removePool(pool) {
  if (!(await confirmAction(t("pool-delete-confirm", { name: pool.name }), t("action-delete")))) return;
  await attempt(async () => {
    await api("DELETE", `/api/v0/admin/pools/${encodeURIComponent(pool.name)}`);
    await load();
    showStatus(pageStatus, t("pool-deleted", { name: pool.name }));
  });
}

// --- editors: one at a time, in place of the overview ----------------------------------------

const headActions = document.querySelector(".head-actions");

function showEditor(editor) {
  clearMessage(pageAlert);
  clearMessage(pageStatus);
  overview.hidden = true;
  headActions.hidden = true;
  $("backend-editor").hidden = editor !== "backend";
  $("pool-editor").hidden = editor !== "pool";
  window.scrollTo(0, 0);
}

function closeEditors(focusName = null, kind = "backend") {
  $("backend-editor").hidden = true;
  $("pool-editor").hidden = true;
  overview.hidden = false;
  headActions.hidden = false;
  const target = focusName
    ? document.querySelector(kind === "backend" ? `[data-backend="${CSS.escape(focusName)}"] button` : `[data-pool="${CSS.escape(focusName)}"] button`)
    : null;
  (target || $("backend-new")).focus();
}

// --- the backend editor --------------------------------------------------------------------

const backendForm = $("backend-form");
const backendAlert = $("backend-alert");
let editingBackend = null;

function selectedMode() {
  const checked = backendForm.querySelector("input[name=priority-mode]:checked");
  return checked ? checked.value : "auto";
}

function mappingFromInputs() {
  return {
    field: $("mapping-field").value.trim(),
    low: intOrRaw($("mapping-low")),
    medium: intOrRaw($("mapping-medium")),
    high: intOrRaw($("mapping-high")),
  };
}

function priorityFromEditor() {
  const mode = selectedMode();
  return mode === "custom" ? { mode, mapping: mappingFromInputs() } : { mode };
}

function updateModeView() {
  $("mapping-part").hidden = selectedMode() !== "custom";
  const forwarding = explainForwarding(priorityFromEditor(), editingBackend ? editingBackend.profile : null);
  const line = $("editor-forwarding");
  line.textContent = forwarding.text;
  line.className = `status ${forwarding.forwarded ? "ok" : "info"} forwarding`;
}

function fillDetection(backend) {
  const profile = backend ? backend.profile : null;
  $("editor-detection").replaceChildren(...detectionRows(profile));
  $("editor-detection").hidden = !profile;
  $("editor-detection-none").hidden = Boolean(profile);
  $("editor-detection-none").textContent = backend ? t("backend-detection-none") : t("backend-detection-after-save");
  $("editor-detect").hidden = !backend;
  const discovered = backend && backend.discovered_models.length ? backend.discovered_models.join(", ") : "";
  $("backend-discovered").textContent = discovered ? t("backend-discovered", { models: discovered }) : "";
}

function selectedConcurrency() {
  return $("concurrency-auto").checked ? "auto" : "fixed";
}

// Fixed shows its number, auto its floor and ceiling.
function updateConcurrencyView() {
  const auto = selectedConcurrency() === "auto";
  $("backend-max-field").hidden = auto;
  $("backend-floor-field").hidden = !auto;
  $("backend-ceiling-field").hidden = !auto;
}

function fillConcurrency(backend) {
  const auto = Boolean(backend && isAuto(backend));
  $(auto ? "concurrency-auto" : "concurrency-fixed").checked = true;
  // The API does not return an auto backend's stored fixed number: made fixed again, it starts
  // from the limit learned for it (what its engine was found to carry), else the default.
  const fixed = backend ? (auto ? learnedCapacity(backend)?.limit : backend.max_inflight) : null;
  $("backend-max").value = String(fixed ?? FIXED_DEFAULT);
  $("backend-floor").value = String(backend ? backend.capacity_floor : FLOOR_DEFAULT);
  $("backend-ceiling").value = String(backend ? backend.capacity_ceiling : CEILING_DEFAULT);
  updateConcurrencyView();
}

// max_inflight and, for auto, its bounds: what the editor sends for the concurrency limit.
function concurrencyFromEditor() {
  if (selectedConcurrency() === "fixed") return { max_inflight: intOrRaw($("backend-max")) };
  return { max_inflight: "auto", capacity_floor: intOrRaw($("backend-floor")), capacity_ceiling: intOrRaw($("backend-ceiling")) };
}

function fillHeadroom(backend) {
  const headroom = (backend && backend.headroom) || {};
  for (const cls of HEADROOM_CLASSES) $(`backend-headroom-${cls}`).value = String(headroom[cls] ?? 0);
}

// {"low": 2, "medium": 1}, zeros and empty fields left out ({} keeps nothing back); a value that
// is not a whole number goes as typed, for the server to refuse.
function headroomFromEditor() {
  const out = {};
  for (const cls of HEADROOM_CLASSES) {
    const value = intOrRaw($(`backend-headroom-${cls}`));
    if (value !== null && value !== 0) out[cls] = value;
  }
  return out;
}

// The server refuses `headroom` as a whole: mark the count that is out of range, else low's.
function headroomControl() {
  const bad = HEADROOM_CLASSES.find((cls) => {
    const value = intOrRaw($(`backend-headroom-${cls}`));
    return value !== null && !(Number.isInteger(value) && value >= 0 && value <= HEADROOM_MAX);
  });
  return `backend-headroom-${bad || "low"}`;
}

function fillKeyState(backend) {
  const set = Boolean(backend && backend.has_api_key);
  const state = $("backend-key-state");
  state.textContent = set ? t("backend-key-set") : t("backend-key-not-set");
  state.className = `badge ${set ? "active" : ""}`;
  $("backend-key-clear-field").hidden = !set;
  $("backend-key-keep").hidden = !set;
  $("backend-key").disabled = false;
}

function aliasesText(aliases) {
  return Object.entries(aliases || {})
    .map(([alias, model]) => `${alias} = ${model}`)
    .join("\n");
}

function parseAliases(text) {
  const out = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const match = line.match(/^([^=:\s]+)\s*[=:]\s*(\S+)$/);
    if (!match) return null;
    out[match[1]] = match[2];
  }
  return out;
}

function openBackendEditor(backend) {
  editingBackend = backend;
  resetEditor(backendForm, backendAlert);
  $("backend-editor-title").textContent = backend ? t("backend-edit-title", { name: backend.name }) : t("backend-new-title");
  $("backend-name").value = backend ? backend.name : "";
  $("backend-url").value = backend ? backend.base_url : "";
  $("backend-key").value = "";
  $("backend-health").value = backend ? backend.health_path : "";
  fillConcurrency(backend);
  fillHeadroom(backend);
  $("backend-weight").value = String(backend ? backend.weight : 1);
  $("backend-enabled").checked = backend ? backend.enabled : true;
  $("backend-models").value = backend ? backend.models.join("\n") : "";
  $("backend-aliases").value = backend ? aliasesText(backend.aliases) : "";
  const priority = backend ? backend.priority : { mode: "auto" };
  $(`mode-${priority.mode}`).checked = true;
  const mapping = priority.mapping || {};
  $("mapping-field").value = mapping.field ?? "";
  for (const level of ["low", "medium", "high"]) $(`mapping-${level}`).value = mapping[level] ?? "";
  $("editor-detect-status").textContent = "";
  const poolNames = pools.map((pool) => pool.name);
  fillCheckList($("backend-pools"), "backend-pool", poolNames, backend ? backend.pools : []);
  $("backend-pools-none").hidden = poolNames.length > 0;
  updatePoolWarning();
  fillSurfaces(backend);
  fillKeyState(backend);
  fillDetection(backend);
  updateModeView();
  showEditor("backend");
  (backend ? $("backend-url") : $("backend-name")).focus();
}

// In no pool, a backend serves nobody: its models answer 404. Say so while the box is unticked.
function updatePoolWarning() {
  $("backend-pool-warning").hidden = checkedValues($("backend-pools")).length > 0;
}

backendForm.addEventListener("change", (event) => {
  if (event.target.closest("#backend-pools")) updatePoolWarning();
  if (event.target.name === "priority-mode" || event.target.closest("#mapping-part")) updateModeView();
  if (event.target.name === "concurrency") updateConcurrencyView();
});
backendForm.addEventListener("input", (event) => {
  if (event.target.closest("#mapping-part")) updateModeView();
});

for (const [name, preset] of Object.entries(PRESETS)) {
  $(`preset-${name}`).addEventListener("click", () => {
    $("mapping-field").value = preset.field;
    for (const level of ["low", "medium", "high"]) $(`mapping-${level}`).value = String(preset[level]);
    updateModeView();
  });
}

$("editor-detect").addEventListener("click", async () => {
  if (!editingBackend) return;
  const button = $("editor-detect");
  const status = $("editor-detect-status");
  clearMessage(backendAlert);
  button.disabled = true;
  status.textContent = t("backend-detecting", { name: editingBackend.name });
  try {
    const updated = await api("POST", `/api/v0/admin/backends/${encodeURIComponent(editingBackend.name)}/detect`);
    noteDetection(updated);
    replaceBackend(updated);
    editingBackend = updated;
    fillDetection(updated);
    updateModeView();
    if (updated.detection && !updated.detection.ok) {
      status.textContent = "";
      showError(backendAlert, detectionFailureText(updated.detection));
    } else {
      status.textContent = t("backend-detected", { name: updated.name });
    }
  } catch (error) {
    status.textContent = "";
    showError(backendAlert, error.message);
  } finally {
    button.disabled = false;
  }
});

// Removing the stored key and typing a new one at once would be ambiguous.
$("backend-key-clear").addEventListener("change", (event) => {
  $("backend-key").disabled = event.target.checked;
  if (event.target.checked) $("backend-key").value = "";
});

$("backend-new").addEventListener("click", () => openBackendEditor(null));
$("backend-cancel").addEventListener("click", () => closeEditors(editingBackend ? editingBackend.name : null));

const BACKEND_CONTROLS = {
  name: "backend-name",
  base_url: "backend-url",
  api_key: "backend-key",
  max_inflight: "backend-max",
  capacity_floor: "backend-floor",
  capacity_ceiling: "backend-ceiling",
  weight: "backend-weight",
  enabled: "backend-enabled",
  health_path: "backend-health",
  models: "backend-models",
  aliases: "backend-aliases",
  pools: "backend-pool-0",
  priority: "mode-auto",
  "priority.mode": "mode-auto",
  "priority.mapping": "mapping-field",
  "priority.mapping.field": "mapping-field",
  "priority.mapping.low": "mapping-low",
  "priority.mapping.medium": "mapping-medium",
  "priority.mapping.high": "mapping-high",
};

function backendLabels() {
  const labels = {};
  for (const [param, id] of Object.entries(BACKEND_CONTROLS)) {
    const label = backendForm.querySelector(`label[for="${id}"]`);
    if (label) labels[param] = label.textContent;
  }
  labels.priority = labels["priority.mode"] = t("backend-priority-mode");
  labels.headroom = t("backend-headroom");
  labels["priority.mapping"] = t("backend-mapping");
  return labels;
}

function backendError(message, param = null) {
  if (param) markInvalid($(param === "headroom" ? headroomControl() : BACKEND_CONTROLS[param]), "backend-alert");
  showError(backendAlert, message);
}

backendForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearMessage(backendAlert);
  clearInvalid(backendForm);
  const name = $("backend-name").value.trim();
  if ((!editingBackend || name !== editingBackend.name) && backends.some((item) => item.name === name)) {
    backendError(t("error-in-field", { field: t("backend-name"), message: t("error-name-taken") }), "name");
    return;
  }
  const aliases = parseAliases($("backend-aliases").value);
  if (aliases === null) {
    backendError(t("error-in-field", { field: t("backend-aliases"), message: t("backend-aliases-invalid") }), "aliases");
    return;
  }
  const concurrency = concurrencyFromEditor();
  const { capacity_floor: floor, capacity_ceiling: ceiling } = concurrency;
  if (Number.isInteger(floor) && Number.isInteger(ceiling) && floor > ceiling) {
    backendError(t("backend-capacity-bounds-invalid", { floor, ceiling }), "capacity_floor");
    return;
  }
  // A lower class is kept from at least as many slots as a higher one (the server says so too).
  const headroom = headroomFromEditor();
  const [low, medium] = HEADROOM_CLASSES.map((cls) => headroom[cls] ?? 0);
  if (Number.isInteger(low) && Number.isInteger(medium) && low < medium) {
    backendError(t("backend-headroom-order-invalid", { low, medium }), "headroom");
    return;
  }
  const key = $("backend-key").value;
  const payload = {
    name,
    base_url: $("backend-url").value.trim(),
    // null keeps the stored key, "" clears it: the key itself is never shown again.
    api_key: $("backend-key-clear").checked ? "" : key ? key : null,
    ...concurrency,
    headroom,
    weight: intOrRaw($("backend-weight")),
    enabled: $("backend-enabled").checked,
    health_path: $("backend-health").value.trim(),
    models: splitList($("backend-models").value),
    aliases,
    priority: priorityFromEditor(),
    surfaces: surfacesFromEditor(),
    store_responses: $("backend-store-responses").checked,
    pools: checkedValues($("backend-pools")),
  };
  const save = $("backend-save");
  save.disabled = true;
  try {
    // A new name first (its pools follow), then the rest of the editor under it.
    if (editingBackend && name !== editingBackend.name) {
      await api("POST", `/api/v0/admin/backends/${encodeURIComponent(editingBackend.name)}/rename`, { name });
      detectFailures.delete(editingBackend.name);
      editingBackend.name = name;
    }
    const saved = await api("PUT", "/api/v0/admin/backends", payload);
    replaceBackend(saved);
    await load();
    closeEditors(saved.name, "backend");
    if (saved.pools.length) {
      showStatus(pageStatus, t("backend-saved", { name: saved.name }));
    } else {
      // Saved, but serving nobody: a warning, not a success.
      showError(pageAlert, t("backend-saved-no-pool", { name: saved.name }));
    }
  } catch (error) {
    backendError(describeError(error, backendLabels()), error.param);
  } finally {
    save.disabled = false;
  }
});

// --- the pool editor -----------------------------------------------------------------------

const poolForm = $("pool-form");
const poolAlert = $("pool-alert");
let editingPool = null;

function updateStrategyHint() {
  const strategy = $("pool-strategy").value;
  $("pool-strategy-hint").textContent = tOr(`pool-strategy-${strategy.replaceAll("_", "-")}-hint`, "");
}

function openPoolEditor(pool) {
  editingPool = pool;
  resetEditor(poolForm, poolAlert);
  $("pool-editor-title").textContent = pool ? t("pool-edit-title", { name: pool.name }) : t("pool-new-title");
  $("pool-name").value = pool ? pool.name : "";
  $("pool-kind").replaceChildren(...KINDS.map((kind) => h("option", { value: kind }, kindName(kind))));
  $("pool-kind").value = pool ? pool.kind : "chat";
  $("pool-strategy").replaceChildren(...STRATEGIES.map((s) => h("option", { value: s }, strategyName(s))));
  $("pool-strategy").value = pool ? pool.strategy : "least_inflight";
  updateStrategyHint();
  const others = pools.map((item) => item.name).filter((name) => !pool || name !== pool.name);
  $("pool-fallback").replaceChildren(
    h("option", { value: "" }, t("pool-fallback-none")),
    ...others.map((name) => h("option", { value: name }, name)),
  );
  $("pool-fallback").value = pool && pool.fallback ? pool.fallback : "";
  const backendNames = backends.map((item) => item.name);
  fillCheckList($("pool-backends"), "pool-backend", backendNames, pool ? pool.backends : []);
  $("pool-backends-none").hidden = backendNames.length > 0;
  fillCheckList($("pool-groups"), "pool-group", groupNames, pool ? pool.allowed_groups : []);
  $(pool && !pool.everyone ? "pool-access-groups" : "pool-access-everyone").checked = true;
  updateAccessView();
  showEditor("pool");
  (pool ? $("pool-kind") : $("pool-name")).focus();
}

// Everyone, or only the checked groups (none checked: nobody, said in a warning).
function updateAccessView() {
  const everyone = $("pool-access-everyone").checked;
  for (const box of $("pool-groups").querySelectorAll("input")) box.disabled = everyone;
  $("pool-nobody").hidden = everyone || checkedValues($("pool-groups")).length > 0;
}

$("pool-access").addEventListener("change", updateAccessView);
$("pool-strategy").addEventListener("change", updateStrategyHint);
$("pool-new").addEventListener("click", () => openPoolEditor(null));
$("pool-cancel").addEventListener("click", () => closeEditors(editingPool ? editingPool.name : null, "pool"));

const POOL_CONTROLS = {
  name: "pool-name",
  kind: "pool-kind",
  strategy: "pool-strategy",
  fallback: "pool-fallback",
  backends: "pool-backend-0",
  allowed_groups: "pool-group-0",
  everyone: "pool-access-everyone",
};

poolForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearMessage(poolAlert);
  clearInvalid(poolForm);
  const name = $("pool-name").value.trim();
  if ((!editingPool || name !== editingPool.name) && pools.some((item) => item.name === name)) {
    markInvalid($("pool-name"), "pool-alert");
    showError(poolAlert, t("error-in-field", { field: t("pool-name"), message: t("error-name-taken") }));
    return;
  }
  const payload = {
    name,
    kind: $("pool-kind").value,
    strategy: $("pool-strategy").value,
    fallback: $("pool-fallback").value || null,
    backends: checkedValues($("pool-backends")),
    everyone: $("pool-access-everyone").checked,
    allowed_groups: $("pool-access-everyone").checked ? [] : checkedValues($("pool-groups")),
  };
  // Opening a pool that was for some groups to everyone widens access: ask first.
  if (editingPool && !editingPool.everyone && payload.everyone) {
    if (!(await confirmAction(t("pool-widen-confirm", { name }), t("pool-widen-action")))) return;
  }
  const save = $("pool-save");
  save.disabled = true;
  try {
    if (editingPool && name !== editingPool.name) {
      await api("POST", `/api/v0/admin/pools/${encodeURIComponent(editingPool.name)}/rename`, { name });
      editingPool.name = name;
    }
    await api("PUT", "/api/v0/admin/pools", payload);
    await load();
    closeEditors(name, "pool");
    showStatus(pageStatus, t("pool-saved", { name }));
  } catch (error) {
    markInvalid($(POOL_CONTROLS[error.param]), "pool-alert");
    const labels = { name: t("pool-name"), kind: t("pool-kind"), strategy: t("pool-strategy"), fallback: t("pool-fallback"), backends: t("pool-backends"), allowed_groups: t("pool-groups"), everyone: t("pool-access") };
    showError(poolAlert, describeError(error, labels));
  } finally {
    save.disabled = false;
  }
});

attempt(load).finally(() => {
  $("backends-loading").hidden = true;
});
