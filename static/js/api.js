// fetch for /api/v0: JSON in and out, the CSRF header from the cookie, and every failure thrown
// as an ApiError whose message is already in the person's language.
import { has, t } from "./i18n.js";

export class ApiError extends Error {
  constructor(message, { code, status, param = null, type = null, serverMessage = "", reasons = null }) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.param = param;
    this.type = type;
    this.serverMessage = serverMessage;
    // Every cause of one refusal ({code, message, params}), e.g. each password rule broken.
    this.reasons = reasons;
  }
}

export function cookie(name) {
  for (const part of document.cookie.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return "";
}

const CODE_BY_STATUS = {
  401: "not_authenticated",
  403: "permission_denied",
  404: "not_found",
  405: "method_not_allowed",
  429: "throttled",
};

function fallbackCode(status) {
  if (status >= 500) return "internal_error";
  return CODE_BY_STATUS[status] || "unknown";
}

// The localized text for an API error code: error-<code with dashes>, else the server's words.
export function errorMessage(code, serverMessage = "") {
  const id = "error-" + String(code).replaceAll("_", "-");
  if (has(id)) return t(id);
  return serverMessage || t("error-unknown");
}

export async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  if (!["GET", "HEAD", "OPTIONS"].includes(method)) {
    headers["X-CSRFToken"] = cookie("csrftoken");
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (cause) {
    throw new ApiError(t("error-network"), { code: "network", status: 0, serverMessage: String(cause) });
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const envelope = data && typeof data.error === "object" && data.error !== null ? data.error : {};
    const code = envelope.code || fallbackCode(response.status);
    const serverMessage = envelope.message || "";
    throw new ApiError(errorMessage(code, serverMessage), {
      code,
      status: response.status,
      param: envelope.param ?? null,
      type: envelope.type ?? null,
      serverMessage,
      reasons: Array.isArray(envelope.reasons) ? envelope.reasons : null,
    });
  }
  return data;
}
