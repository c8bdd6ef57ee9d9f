// Administration → Tokens: every token with its owner; an administrator may give any token any
// priority or restore inheritance, and revoke or delete any token (a leaked key stops at once,
// and its owner sees who revoked it). A failed save restores the previous selection and clears
// an earlier success message, as on the personal page.
import { tokenAllowanceControl } from "./allowances.js";
import { api } from "./api.js";
import { formatDate, t } from "./i18n.js";
import { clearMessage, h, pageAttempt, showError, showStatus } from "./ui.js";
import { $, badge, cell, confirmAction, fillPrioritySelect, priorityName, priorityValue, revokedText, tokenState } from "./widgets.js";

const pageAlert = $("page-alert");
const pageStatus = $("page-status");
const attempt = pageAttempt(pageAlert, pageStatus);
const body = $("tokens-body");
const filter = $("tokens-filter");

let tokens = [];

function setByText(token) {
  if (token.priority === null) return t("admin-token-inherits", { priority: priorityName(token.owner_priority) });
  if (!token.priority_set_by) return "";
  return token.priority_set_by_admin
    ? t("admin-token-set-by-admin", { name: token.priority_set_by })
    : t("admin-token-set-by-owner", { name: token.priority_set_by });
}

function renderRow(token) {
  const state = tokenState(token);
  const selectId = `priority-${token.id}`;
  const select = h("select", { id: selectId, "aria-label": t("admin-token-priority-of", { name: token.name, owner: token.owner.username }) });
  fillPrioritySelect(select, token.priority, token.owner_priority);
  const setBy = h("p", { class: "hint" }, setByText(token));
  const status = h("p", { class: "status ok", role: "status", hidden: true });
  const alert = h("p", { class: "alert", role: "alert", tabindex: "-1", hidden: true });
  const effective = h("span", {}, priorityName(token.effective_priority));
  let saved = select.value; // what the server has: restored when a save fails

  select.addEventListener("change", async () => {
    clearMessage(alert);
    clearMessage(status);
    clearMessage(pageAlert);
    select.disabled = true;
    try {
      const updated = await api("PUT", `/api/v0/admin/tokens/${token.id}/priority`, { priority: priorityValue(select) });
      Object.assign(token, updated);
      saved = select.value;
      setBy.textContent = setByText(token);
      effective.textContent = priorityName(token.effective_priority);
      showStatus(status, t("token-priority-saved"));
    } catch (error) {
      select.value = saved;
      clearMessage(status);
      showError(alert, error.message);
    } finally {
      select.disabled = false;
    }
  });

  const names = { name: token.name, owner: token.owner.username };
  const actions = h("div", { class: "actions row-actions", role: "group", "aria-label": t("admin-token-actions", names) });
  if (state !== "revoked") {
    actions.append(h("button", { type: "button", class: "danger small", onclick: () => revoke(token) }, t("token-revoke")));
  }
  actions.append(h("button", { type: "button", class: "danger small", onclick: () => remove(token) }, t("token-delete")));

  return h(
    "tr",
    { dataset: { tokenId: String(token.id), search: `${token.name} ${token.owner.username} ${token.prefix}`.toLowerCase() } },
    h(
      "th",
      { scope: "row", "data-label": t("admin-token-name") },
      h("span", { class: "row-title" }, token.name),
      h("code", { class: "row-sub" }, `${token.prefix}…`),
    ),
    cell(t("admin-token-owner"), token.owner.username),
    cell(
      t("admin-token-state"),
      h("div", { class: "cell-stack" }, badge(state, t(`token-status-${state}`)), token.revoked ? h("p", { class: "hint" }, revokedText(token)) : null),
    ),
    cell(t("priority-label"), h("div", { class: "cell-control" }, select, setBy, status, alert)),
    cell(t("admin-token-effective"), effective),
    cell(
      t("allowance-legend"),
      h("div", { class: "cell-control" }, tokenAllowanceControl({ token, admin: true, ownerAllowance: () => token.owner_allowance, status })),
    ),
    cell(t("token-last-used"), formatDate(token.last_used_at)),
    cell(t("column-actions"), actions),
  );
}

// --- revoke and delete (each confirmed first) -------------------------------------------------

async function revoke(token) {
  const names = { name: token.name, owner: token.owner.username };
  if (!(await confirmAction(t("admin-token-revoke-confirm", names), t("token-revoke")))) return;
  await attempt(async () => {
    await api("POST", `/api/v0/admin/tokens/${token.id}/revoke`);
    await load();
    showStatus(pageStatus, t("admin-token-revoked", names));
  });
}

async function remove(token) {
  const names = { name: token.name, owner: token.owner.username };
  if (!(await confirmAction(t("admin-token-delete-confirm", names), t("token-delete")))) return;
  await attempt(async () => {
    await api("DELETE", `/api/v0/admin/tokens/${token.id}`);
    await load();
    showStatus(pageStatus, t("admin-token-deleted", names));
  });
}

function applyFilter() {
  const wanted = filter.value.trim().toLowerCase();
  let shown = 0;
  for (const row of body.children) {
    row.hidden = wanted !== "" && !row.dataset.search.includes(wanted);
    if (!row.hidden) shown += 1;
  }
  $("tokens-count").textContent = t("admin-tokens-count", { shown, total: tokens.length });
}

function render() {
  $("tokens-loading").hidden = true;
  $("tokens-empty").hidden = tokens.length > 0;
  $("tokens-wrap").hidden = tokens.length === 0;
  $("tokens-toolbar").hidden = tokens.length === 0;
  body.replaceChildren(...tokens.map(renderRow));
  applyFilter();
}

filter.addEventListener("input", applyFilter);

async function load() {
  const [answer, settings] = await Promise.all([api("GET", "/api/v0/admin/tokens"), api("GET", "/api/v0/admin/settings")]);
  tokens = answer.tokens;
  const enabled = settings.settings.find((spec) => spec.key === "gateway.priority_enabled");
  $("priority-disabled").hidden = !enabled || Boolean(enabled.value);
  render();
}

attempt(load).finally(() => {
  $("tokens-loading").hidden = true;
});
