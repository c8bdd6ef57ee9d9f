// Administration → Users: local accounts with their groups and effective priority; create
// (username, email, password, groups), edit (active, email, a new password, groups) and delete.
import { api } from "./api.js";
import { formatDate, t } from "./i18n.js";
import { clearMessage, h, pageAttempt, showError, showStatus } from "./ui.js";
import { showPasswordRefusal } from "./passwords.js";
import { $, actionsCell, badge, cell, checkedValues, clearInvalid, confirmAction, describeError, fillCheckList, markInvalid, priorityName, resetEditor } from "./widgets.js";

const pageAlert = $("page-alert");
const pageStatus = $("page-status");
const attempt = pageAttempt(pageAlert, pageStatus);
const body = $("users-body");

let users = [];
let me = null;
let groups = []; // every group: {name, is_default, priority}

function statusBadges(user) {
  return [
    user.is_active ? badge("active", t("user-badge-active")) : badge("revoked", t("user-badge-inactive")),
    user.is_admin ? badge("admin", t("user-badge-admin")) : null,
  ];
}

// A long address may wrap after its "@" and before each dot, never inside a word.
function emailParts(email) {
  return email.split(/(?=[.@])|(?<=@)/).flatMap((part, i) => (i ? [h("wbr"), part] : [part]));
}

function renderRow(user) {
  return h(
    "tr",
    { dataset: { user: user.username } },
    h(
      "th",
      { scope: "row", "data-label": t("user-username") },
      h("span", { class: "row-title" }, user.username),
      user.id === me ? h("span", { class: "row-sub" }, t("user-is-you")) : null,
    ),
    cell(t("user-email"), user.email ? h("span", { class: "user-email" }, ...emailParts(user.email)) : h("span", { class: "muted" }, t("value-none"))),
    cell(t("user-status"), h("span", { class: "badges" }, statusBadges(user))),
    cell(t("user-groups"), user.groups.length ? h("span", { class: "user-groups" }, user.groups.join(", ")) : h("span", { class: "muted" }, t("value-none"))),
    cell(
      t("user-priority"),
      h(
        "span",
        { class: "user-priority" },
        badge(`class-${user.priority}`, priorityName(user.priority)),
        h("span", { class: "row-sub" }, t("user-max-priority", { priority: priorityName(user.max_priority) })),
      ),
    ),
    cell(t("user-last-login"), formatDate(user.last_login)),
    actionsCell(t("user-actions", { name: user.username }), { onEdit: () => openEditor(user), onDelete: () => remove(user) }),
  );
}

function render() {
  $("users-loading").hidden = true;
  $("users-wrap").hidden = false;
  body.replaceChildren(...users.map(renderRow));
  $("user-new").disabled = false;
}

async function load() {
  const [answer, who, known] = await Promise.all([
    api("GET", "/api/v0/admin/users"),
    me === null ? api("GET", "/api/v0/me") : null,
    api("GET", "/api/v0/admin/groups"),
  ]);
  if (who) me = who.id;
  users = answer.users;
  groups = known.groups;
  render();
}

async function remove(user) {
  if (!(await confirmAction(t("user-delete-confirm", { name: user.username }), t("action-delete")))) return;
  await attempt(async () => {
    await api("DELETE", `/api/v0/admin/users/${user.id}`);
    await load();
    showStatus(pageStatus, t("user-deleted", { name: user.username }));
  });
}

// --- the create / edit dialog ---------------------------------------------------------------

const dialog = $("user-dialog");
const form = $("user-form");
const alert = $("user-alert");
let editing = null;

function openEditor(user) {
  editing = user;
  resetEditor(form, alert);
  $("user-dialog-title").textContent = user ? t("user-edit-title", { name: user.username }) : t("user-new-title");
  $("user-username-field").hidden = Boolean(user);
  $("user-username").value = user ? user.username : "";
  $("user-email").value = user ? user.email : "";
  $("user-active").checked = user ? user.is_active : true;
  $("user-password-label").textContent = user ? t("user-new-password") : t("user-password");
  $("user-password-hint").textContent = user ? t("user-new-password-hint") : t("user-password-hint");
  $("user-submit").textContent = user ? t("action-save") : t("user-create");
  // Default groups hold everyone already: only the others can be chosen.
  const choosable = groups.filter((group) => !group.is_default).map((group) => group.name);
  fillCheckList($("user-groups"), "user-group", choosable, user ? user.groups : []);
  $("user-groups-none").hidden = choosable.length > 0;
  dialog.showModal();
  (user ? $("user-email") : $("user-username")).focus();
}

$("user-new").addEventListener("click", () => openEditor(null));
$("user-cancel").addEventListener("click", () => dialog.close());

const FIELD_OF_PARAM = { username: "user-username", email: "user-email", password: "user-password", is_active: "user-active", groups: "user-group-0" };

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearMessage(alert);
  clearInvalid(form);
  const username = $("user-username").value.trim();
  const password = $("user-password").value;
  const payload = { email: $("user-email").value.trim(), is_active: $("user-active").checked };
  if (password) payload.password = password;
  payload.groups = checkedValues($("user-groups"));
  if (!editing) {
    if (!username) {
      markInvalid($("user-username"), "user-alert");
      showError(alert, t("error-invalid-name"));
      return;
    }
    payload.username = username;
  }
  const submit = $("user-submit");
  submit.disabled = true;
  try {
    if (editing) {
      await api("PUT", `/api/v0/admin/users/${editing.id}`, payload);
    } else {
      await api("POST", "/api/v0/admin/users", payload);
    }
    dialog.close();
    await attempt(load);
    const name = editing ? editing.username : username;
    showStatus(pageStatus, editing ? t("user-saved", { name }) : t("user-created", { name }));
  } catch (error) {
    markInvalid($(FIELD_OF_PARAM[error.param]), "user-alert");
    if (showPasswordRefusal(alert, error)) return;
    const labels = { username: t("user-username"), email: t("user-email"), password: $("user-password-label").textContent };
    showError(alert, describeError(error, labels));
  } finally {
    submit.disabled = false;
  }
});

attempt(load).finally(() => {
  $("users-loading").hidden = true;
});
