// Personal API tokens: the list with a Priority tile per token, the create dialog (priority,
// expiry, models), the plaintext shown once with ready examples, revoke, rotate and delete.
// Talks to /api/v0/tokens.
import { tokenAllowanceControl } from "./allowances.js";
import { api } from "./api.js";
import { formatDate, t } from "./i18n.js";
import { clearMessage, h, pageAttempt, showError, showStatus } from "./ui.js";
import { $, INHERIT, LEVELS, checkedValues, confirmAction, fillCheckList, revokedText, tokenState } from "./widgets.js";
import { baseUrl, callableModels, example, exampleOptions } from "./connect.js";

const pageAlert = $("page-alert");
const pageStatus = $("page-status");
const attempt = pageAttempt(pageAlert, pageStatus);
const list = $("token-list");

let details = null; // the last GET /api/v0/tokens/details

function priorityName(level) {
  return t(`priority-${level}`);
}

// The values this person may choose: inherit, then every level up to the ceiling. A saved value
// above today's ceiling (groups changed since) stays visible but cannot be chosen again.
function fillPrioritySelect(select, current) {
  select.replaceChildren();
  select.append(
    h("option", { value: INHERIT }, t("priority-inherit-with", { priority: priorityName(details.owner_priority) })),
  );
  const ceiling = LEVELS.indexOf(details.max_priority);
  LEVELS.forEach((level, index) => {
    if (index <= ceiling) {
      select.append(h("option", { value: level }, priorityName(level)));
    } else if (level === current) {
      select.append(h("option", { value: level, disabled: true }, priorityName(level)));
    }
  });
  select.value = current ?? INHERIT;
}

function metaRow(label, value) {
  return [h("dt", {}, label), h("dd", {}, value)];
}

// A class an administrator granted above the owner's ceiling: who set it, and that the owner
// can lower it but not raise it back (their own saves are capped at the ceiling).
function raisedNote(token) {
  if (!details || !token.priority_set_by_admin || !token.priority) return null;
  if (LEVELS.indexOf(token.priority) <= LEVELS.indexOf(details.max_priority)) return null;
  const args = { priority: priorityName(token.priority), admin: token.priority_set_by || "", max: priorityName(details.max_priority) };
  return h("p", { class: "hint raised-by" }, t(token.priority_set_by ? "token-raised-by" : "token-raised-by-unknown", args));
}

function renderToken(token) {
  const state = tokenState(token);
  const selectId = `priority-${token.id}`;
  const select = h("select", { id: selectId, disabled: state === "revoked" });
  fillPrioritySelect(select, token.priority);
  const tileStatus = h("p", { class: "status ok", role: "status", hidden: true });
  const tileAlert = h("p", { class: "alert", role: "alert", tabindex: "-1", hidden: true });
  let saved = select.value; // what the server has: restored when a save fails

  select.addEventListener("change", async () => {
    const wanted = select.value;
    clearMessage(tileAlert);
    clearMessage(tileStatus);
    clearMessage(pageStatus);
    select.disabled = true;
    try {
      const updated = await api("PUT", `/api/v0/tokens/${token.id}/priority`, {
        priority: wanted === INHERIT ? null : wanted,
      });
      Object.assign(token, updated);
      saved = wanted;
      showStatus(tileStatus, t("token-priority-saved"));
    } catch (error) {
      select.value = saved;
      clearMessage(tileStatus);
      showError(tileAlert, error.message);
    } finally {
      select.disabled = false;
    }
  });

  const actions = h("div", { class: "actions", role: "group", "aria-label": t("token-actions", { name: token.name }) });
  if (state !== "revoked") {
    actions.append(
      h("button", { type: "button", class: "secondary small", onclick: () => rotate(token) }, t("token-rotate")),
      h("button", { type: "button", class: "danger small", onclick: () => revoke(token) }, t("token-revoke")),
    );
  }
  actions.append(h("button", { type: "button", class: "danger small", onclick: () => remove(token) }, t("token-delete")));

  const meta = h(
    "dl",
    { class: "meta" },
    metaRow(t("token-prefix"), h("code", {}, `${token.prefix}…`)),
    metaRow(t("token-created"), formatDate(token.created_at)),
    metaRow(t("token-last-used"), formatDate(token.last_used_at)),
    token.expires_at ? metaRow(t("token-expires"), formatDate(token.expires_at)) : [],
    token.model_allowlist ? metaRow(t("activityui-models"), token.model_allowlist.join(", ")) : [],
  );

  return h(
    "li",
    { class: `card token-card is-${state}`, dataset: { tokenId: String(token.id) } },
    h(
      "header",
      {},
      h("h2", { id: `token-name-${token.id}` }, token.name),
      h("span", { class: `badge ${state}` }, t(`token-status-${state}`)),
    ),
    token.revoked ? h("p", { class: "hint revoked-by" }, revokedText(token)) : null,
    meta,
    h(
      "div",
      { class: "tile priority-tile" },
      h("label", { for: selectId }, t("priority-label")),
      select,
      raisedNote(token),
      tileStatus,
      tileAlert,
    ),
    h(
      "div",
      { class: "tile allowance-tile" },
      h("span", { class: "tile-label" }, t("allowance-legend")),
      tokenAllowanceControl({ token, admin: false, ownerAllowance: () => details.owner_allowance, status: tileStatus }),
    ),
    actions,
  );
}

function render() {
  $("tokens-loading").hidden = true;
  $("token-facts").hidden = false;
  $("fact-owner").textContent = t("tokens-owner-priority", { priority: priorityName(details.owner_priority) });
  $("fact-max").textContent = t("tokens-max-priority", { priority: priorityName(details.max_priority) });
  $("priority-disabled").hidden = Boolean(details.priority_enabled);
  $("tokens-empty").hidden = details.tokens.length > 0;
  list.replaceChildren(...details.tokens.map(renderToken));
  $("create-open").disabled = false;
}

async function load() {
  details = await api("GET", "/api/v0/tokens/details");
  render();
}

// --- revoke, delete, rotate (each confirmed first) --------------------------------------------

async function revoke(token) {
  if (!(await confirmAction(t("token-revoke-confirm", { name: token.name }), t("token-revoke")))) return;
  await attempt(async () => {
    await api("POST", `/api/v0/tokens/${token.id}/revoke`);
    await load();
    showStatus(pageStatus, t("token-revoked", { name: token.name }));
  });
}

async function remove(token) {
  if (!(await confirmAction(t("token-delete-confirm", { name: token.name }), t("token-delete")))) return;
  await attempt(async () => {
    await api("DELETE", `/api/v0/tokens/${token.id}`);
    await load();
    showStatus(pageStatus, t("token-deleted", { name: token.name }));
  });
}

async function rotate(token) {
  if (!(await confirmAction(t("token-rotate-confirm", { name: token.name }), t("token-rotate")))) return;
  await attempt(async () => {
    const rotated = await api("POST", `/api/v0/tokens/${token.id}/rotate`);
    await load();
    showSecret(rotated.plaintext, rotated.model_allowlist);
  });
}

// --- create and the plaintext shown once ----------------------------------------------------

const createDialog = $("create-dialog");
const createForm = $("create-form");
const createAlert = $("create-alert");

const EXPIRY_DAYS = [7, 30, 90, 365];
let models = []; // what /v1/models lists for this person: the choices of the allowlist

$("create-expiry").replaceChildren(
  h("option", { value: "" }, t("activityui-expiry-never")),
  ...EXPIRY_DAYS.map((days) => h("option", { value: String(days) }, t("activityui-expiry-days", { days }))),
);

async function loadModels() {
  try {
    models = await callableModels();
  } catch {
    models = []; // the token can still be made for every model; the hint says none are listed
  }
  fillCheckList($("create-models"), "create-model", models, []);
  $("create-models-none").hidden = models.length > 0;
}

function expiresAt() {
  const days = Number($("create-expiry").value);
  return days ? new Date(Date.now() + days * 86_400_000).toISOString() : null;
}

$("create-open").addEventListener("click", () => {
  createForm.reset();
  clearMessage(createAlert);
  fillPrioritySelect($("create-priority"), null);
  fillCheckList($("create-models"), "create-model", models, []);
  createDialog.showModal();
  $("create-name").focus();
});
$("create-cancel").addEventListener("click", () => createDialog.close());

createForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearMessage(createAlert);
  const name = $("create-name").value.trim();
  if (!name) {
    showError(createAlert, t("error-invalid-name"));
    $("create-name").setAttribute("aria-invalid", "true");
    return;
  }
  $("create-name").removeAttribute("aria-invalid");
  const priority = $("create-priority").value;
  const submit = $("create-submit");
  submit.disabled = true;
  try {
    const chosen = checkedValues($("create-models"));
    const created = await api("POST", "/api/v0/tokens", {
      name,
      priority: priority === INHERIT ? null : priority,
      expires_at: expiresAt(),
      model_allowlist: chosen.length ? chosen : null, // none checked: every model of the groups
    });
    createDialog.close();
    await attempt(load);
    showSecret(created.plaintext, created.model_allowlist);
  } catch (error) {
    showError(createAlert, error.message);
  } finally {
    submit.disabled = false;
  }
});

const secretDialog = $("secret-dialog");
const secretValue = $("secret-value");
const secretStatus = $("secret-status");

const connectKind = $("connect-kind");
const connectExample = $("connect-example");
let connection = null; // { base, key, model } while the secret dialog is open
exampleOptions(connectKind);

function showExample() {
  connectExample.textContent = connection ? example(connectKind.value, connection) : "";
}
connectKind.addEventListener("change", () => {
  clearMessage($("connect-status"));
  showExample();
});

// The examples name a model the token may call: its first allowed one, else the first listed.
function showSecret(plaintext, allowlist = null) {
  secretValue.value = plaintext;
  clearMessage(secretStatus);
  clearMessage($("connect-status"));
  const model = (allowlist && allowlist[0]) || models[0] || "MODEL";
  connection = { base: baseUrl(), key: plaintext, model };
  $("connect-base").textContent = `${connection.base}/v1`;
  showExample();
  secretDialog.showModal();
  secretValue.focus();
  secretValue.select();
}

async function copyText(text, source, status) {
  try {
    await navigator.clipboard.writeText(text);
    showStatus(status, t("secret-copied"));
  } catch {
    const range = document.createRange();
    range.selectNodeContents(source);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    const copied = document.execCommand && document.execCommand("copy");
    showStatus(status, t(copied ? "secret-copied" : "secret-copy-failed"));
  }
}

$("connect-copy").addEventListener("click", () => copyText(connectExample.textContent, connectExample, $("connect-status")));

$("secret-copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(secretValue.value);
    showStatus(secretStatus, t("secret-copied"));
  } catch {
    secretValue.select();
    // The old API still works where the asynchronous clipboard is not allowed.
    const copied = document.execCommand && document.execCommand("copy");
    showStatus(secretStatus, t(copied ? "secret-copied" : "secret-copy-failed"));
  }
});

// The plaintext must not linger in the page once the dialog is gone.
secretDialog.addEventListener("close", () => {
  secretValue.value = "";
  connection = null;
  showExample();
});
$("secret-done").addEventListener("click", () => secretDialog.close());

loadModels();
attempt(load).finally(() => {
  $("tokens-loading").hidden = true;
});
