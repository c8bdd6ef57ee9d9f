// Administration → Access → Groups: list, create, edit (description, roles, priority, members)
// and delete gateway groups. A group's priority can also be changed right in the list.
import { allowanceEditor } from "./allowances.js";
import { api } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, pageAttempt, showError, showStatus } from "./ui.js";
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
  fillPrioritySelect,
  markInvalid,
  resetEditor,
  priorityValue,
} from "./widgets.js";

const pageAlert = $("page-alert");
const pageStatus = $("page-status");
const attempt = pageAttempt(pageAlert, pageStatus);
const body = $("groups-body");

let groups = [];
let usernames = [];

function roles(group) {
  const out = [];
  if (group.is_admin) out.push(badge("admin", t("group-badge-admin")));
  if (group.is_default) out.push(badge("info", t("group-badge-default")));
  return out.length ? out : [h("span", { class: "muted" }, t("value-none"))];
}

function membersText(group) {
  if (group.is_default) return t("group-members-everyone");
  if (!group.members.length) return t("group-members-nobody");
  return group.members.join(", ");
}

// The inline priority select: saves at once; a failure restores the saved value.
function prioritySelect(group) {
  const select = h("select", { id: `priority-${group.name}`, "aria-label": t("group-priority-of", { name: group.name }) });
  fillPrioritySelect(select, group.priority);
  select.options[0].textContent = t("group-priority-none");
  let saved = select.value;
  select.addEventListener("change", async () => {
    clearMessage(pageAlert);
    clearMessage(pageStatus);
    select.disabled = true;
    try {
      const updated = await api("PUT", "/api/v0/admin/groups", { name: group.name, priority: priorityValue(select) });
      Object.assign(group, updated);
      saved = select.value;
      showStatus(pageStatus, t("group-priority-saved", { name: group.name }));
    } catch (error) {
      select.value = saved;
      showError(pageAlert, error.message);
    } finally {
      select.disabled = false;
    }
  });
  return select;
}

function renderRow(group) {
  return h(
    "tr",
    { dataset: { group: group.name } },
    h(
      "th",
      { scope: "row", "data-label": t("group-name") },
      h("span", { class: "row-title" }, group.name),
      group.description ? h("span", { class: "row-sub" }, group.description) : null,
    ),
    cell(t("group-roles"), h("span", { class: "badges" }, roles(group))),
    cell(t("priority-label"), prioritySelect(group)),
    cell(t("group-members"), h("span", { class: "members" }, membersText(group))),
    actionsCell(t("group-actions", { name: group.name }), { onEdit: () => openEditor(group), onDelete: () => remove(group) }),
  );
}

function render() {
  $("groups-loading").hidden = true;
  $("groups-empty").hidden = groups.length > 0;
  $("groups-wrap").hidden = groups.length === 0;
  body.replaceChildren(...groups.map(renderRow));
  $("group-new").disabled = false;
}

async function load() {
  const [groupAnswer, userAnswer] = await Promise.all([
    api("GET", "/api/v0/admin/groups"),
    api("GET", "/api/v0/admin/users"),
  ]);
  groups = groupAnswer.groups;
  usernames = userAnswer.users.map((user) => user.username).sort();
  render();
}

async function remove(group) {
  if (!(await confirmAction(t("group-delete-confirm", { name: group.name }), t("action-delete")))) return;
  await attempt(async () => {
    await api("DELETE", `/api/v0/admin/groups/${encodeURIComponent(group.name)}`);
    await load();
    showStatus(pageStatus, t("group-deleted", { name: group.name }));
  });
}

// --- the editor dialog ---------------------------------------------------------------------

const dialog = $("group-dialog");
const form = $("group-form");
const alert = $("group-alert");
const memberList = $("group-members");
const allowance = allowanceEditor({ kind: "group", alertId: "group-alert" });
$("group-members-set").before(allowance.element);
let editing = null; // the group being edited, null when creating

function openEditor(group) {
  editing = group;
  resetEditor(form, alert);
  $("group-dialog-title").textContent = group ? t("group-edit-title", { name: group.name }) : t("group-new-title");
  $("group-name").value = group ? group.name : "";
  $("group-description").value = group ? group.description : "";
  $("group-admin").checked = Boolean(group && group.is_admin);
  $("group-default").checked = Boolean(group && group.is_default);
  fillPrioritySelect($("group-priority"), group ? group.priority : null);
  $("group-priority").options[0].textContent = t("group-priority-none");
  allowance.set(group ? group.allowance : null);
  fillCheckList(memberList, "member", usernames, group ? group.members : []);
  $("group-members-none").hidden = usernames.length > 0;
  $("group-members-filter").value = "";
  syncMembersState();
  dialog.showModal();
  (group ? $("group-description") : $("group-name")).focus();
}

$("group-members-filter").addEventListener("input", (event) => {
  const wanted = event.target.value.trim().toLowerCase();
  for (const item of memberList.children) {
    item.hidden = wanted !== "" && !item.textContent.toLowerCase().includes(wanted);
  }
});

// Everyone belongs to a default group: its member list would change nothing.
function syncMembersState() {
  $("group-members-set").disabled = $("group-default").checked;
}
$("group-default").addEventListener("change", syncMembersState);

$("group-new").addEventListener("click", () => openEditor(null));
$("group-cancel").addEventListener("click", () => dialog.close());

const FIELD_OF_PARAM = { name: "group-name", description: "group-description", priority: "group-priority", members: "group-members-filter" };

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearMessage(alert);
  clearInvalid(form);
  const name = $("group-name").value.trim();
  if (!name) {
    markInvalid($("group-name"), "group-alert");
    showError(alert, t("error-invalid-name"));
    return;
  }
  if ((!editing || name !== editing.name) && groups.some((group) => group.name === name)) {
    markInvalid($("group-name"), "group-alert");
    showError(alert, t("error-name-taken"));
    return;
  }
  let limits;
  try {
    limits = allowance.value();
  } catch (error) {
    showError(alert, error.message);
    return;
  }
  const payload = {
    name,
    allowance: limits,
    description: $("group-description").value.trim(),
    is_admin: $("group-admin").checked,
    is_default: $("group-default").checked,
    priority: priorityValue($("group-priority")),
    members: checkedValues(memberList),
  };
  const submit = $("group-submit");
  submit.disabled = true;
  try {
    // A new name first (pools that allow the group follow), then the rest under it.
    if (editing && name !== editing.name) {
      await api("POST", `/api/v0/admin/groups/${encodeURIComponent(editing.name)}/rename`, { name });
      editing.name = name;
    }
    await api("PUT", "/api/v0/admin/groups", payload);
    dialog.close();
    await attempt(load);
    showStatus(pageStatus, editing ? t("group-saved", { name }) : t("group-created", { name }));
  } catch (error) {
    if (String(error.param).startsWith("allowance")) allowance.markParam(error.param);
    markInvalid($(FIELD_OF_PARAM[error.param]), "group-alert");
    const labels = { name: t("group-name"), description: t("group-description"), members: t("group-members") };
    showError(alert, describeError(error, labels));
  } finally {
    submit.disabled = false;
  }
});

attempt(load).finally(() => {
  $("groups-loading").hidden = true;
});
