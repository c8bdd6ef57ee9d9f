// A refused password in words: each validator's reason in the person's language (Django's
// validator codes mapped to password-reason-<code>), the server's words for a rule we do not know.
import { has, t } from "./i18n.js";
import { h } from "./ui.js";

export function passwordReasons(error) {
  return (error.reasons || []).map((reason) => {
    const id = `password-reason-${String(reason.code).replaceAll("_", "-")}`;
    return has(id) ? t(id, reason.params || {}) : reason.message;
  });
}

// Fill an alert region with the refusal and a list of every reason; false when the error is
// not a password refusal with reasons (the caller shows it its usual way).
export function showPasswordRefusal(region, error) {
  const reasons = passwordReasons(error);
  if (error.code !== "invalid_password" || reasons.length === 0) return false;
  region.replaceChildren(
    h("p", {}, t("password-refused")),
    h("ul", { class: "password-reasons" }, ...reasons.map((text) => h("li", {}, text))),
  );
  region.hidden = false;
  if (!region.hasAttribute("tabindex")) region.setAttribute("tabindex", "-1");
  region.focus({ preventScroll: true });
  region.scrollIntoView({ block: "nearest", behavior: "smooth" });
  return true;
}
