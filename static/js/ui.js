// Small DOM helpers shared by the page scripts: element building, alerts and status lines.

// h("button", { class: "small", onclick: fn }, "Save") -> <button class="small">Save</button>
// Handlers are listeners and `style: { width: "40%" }` sets style properties, never attributes:
// the Content-Security-Policy refuses inline handlers and style attributes.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "style") {
      Object.assign(el.style, value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key in el && typeof value !== "string") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : value);
    }
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// Show an error in a role="alert" region, move keyboard focus to it and bring it into view.
export function showError(region, message) {
  region.textContent = message;
  region.hidden = false;
  if (!region.hasAttribute("tabindex")) region.setAttribute("tabindex", "-1");
  region.focus({ preventScroll: true });
  region.scrollIntoView({ block: "nearest", behavior: "smooth" });
}

export function clearMessage(region) {
  if (!region) return;
  region.textContent = "";
  region.hidden = true;
}

// A polite success or progress line (role="status"); never steals focus.
export function showStatus(region, message) {
  region.textContent = message;
  region.hidden = false;
}

// A page's way to run an action: the alert and the status line are cleared first, and a failure
// is shown in the alert (the API's message is already in the person's language).
//   const attempt = pageAttempt(pageAlert, pageStatus);
//   await attempt(load);
export function pageAttempt(alertRegion, statusRegion) {
  return async function attempt(action) {
    clearMessage(alertRegion);
    clearMessage(statusRegion);
    try {
      await action();
    } catch (error) {
      showError(alertRegion, error.message);
    }
  };
}
