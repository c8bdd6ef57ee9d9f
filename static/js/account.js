// My account: change my own password with the current one (POST /api/v0/me/password); a
// refused new password lists every reason in the person's language.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { showPasswordRefusal } from "./passwords.js";
import { clearMessage, showError, showStatus } from "./ui.js";
import { $, clearInvalid, markInvalid } from "./widgets.js";

const form = $("password-form");
const alertRegion = $("password-alert");
const status = $("page-status");
const FIELDS = { current_password: "current-password", new_password: "new-password" };

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearMessage(alertRegion);
  clearMessage(status);
  clearInvalid(form);
  const current = $("current-password").value;
  const fresh = $("new-password").value;
  if (fresh !== $("confirm-password").value) {
    markInvalid($("confirm-password"), "password-alert");
    showError(alertRegion, t("account-password-mismatch"));
    return;
  }
  const save = $("password-save");
  save.disabled = true;
  try {
    await api("POST", "/api/v0/me/password", { current_password: current, new_password: fresh });
    form.reset();
    showStatus(status, t("account-password-changed"));
  } catch (error) {
    if (error.param && FIELDS[error.param]) markInvalid($(FIELDS[error.param]), "password-alert");
    if (error.code === "too_many_attempts") {
      // Wrong current passwords lock out as failed sign-ins do: say it in this form's words.
      showError(alertRegion, t("daily-password-locked"));
    } else if (!showPasswordRefusal(alertRegion, error)) {
      showError(alertRegion, error.message);
    }
  } finally {
    save.disabled = false;
  }
});
