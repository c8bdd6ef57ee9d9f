// The API reference page: Swagger UI (vendored by drf-spectacular-sidecar) over /api/v0's own
// OpenAPI document. Started from this file because the policy refuses inline scripts.
(function () {
  "use strict";

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function start() {
    const root = document.getElementById("api-reference");
    if (!root) return;
    if (typeof window.SwaggerUIBundle !== "function") {
      document.getElementById("page-alert").hidden = false;
      return;
    }
    window.SwaggerUIBundle({
      url: root.dataset.schemaUrl,
      domNode: root,
      deepLinking: true,
      // Tried out with the signed-in session, as the pages' own scripts call the API.
      requestInterceptor(request) {
        const method = (request.method || "GET").toUpperCase();
        if (!["GET", "HEAD", "OPTIONS"].includes(method)) request.headers["X-CSRFToken"] = csrfToken();
        request.credentials = "same-origin";
        return request;
      },
      // No calls to the public validator: the app must work without the internet.
      validatorUrl: null,
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
