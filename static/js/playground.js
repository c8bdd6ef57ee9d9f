// The playground: a chat with a model as the signed-in person (their inherited priority), streamed
// token by token from POST /v1/chat/completions. Stop aborts the fetch at any moment; the gateway
// sees the disconnect and frees the request's place in the queue (or its slot) at once.
import { api, errorMessage } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, showError } from "./ui.js";
import { $, LEVELS, formatNumber, priorityName } from "./widgets.js";

// The session cookie authenticates /v1 when this header is present (the gateway's CSRF guard:
// a custom header cannot be sent cross-site without a preflight, which /v1 never grants).
const SESSION_HEADERS = { "X-AIplane-Session": "1" };

const form = $("chat-form");
const modelSelect = $("chat-model");
const message = $("chat-message");
const sendButton = $("chat-send");
const stopButton = $("chat-stop");
const clearButton = $("chat-clear");
const alert = $("chat-alert");
const state = $("chat-state");
const transcript = $("transcript");

let history = []; // {role, content} sent with the next message
let controller = null; // the running request's AbortController

function setState(text, kind = "") {
  state.textContent = text;
  state.dataset.kind = kind;
}

function setBusy(busy) {
  sendButton.disabled = busy || modelSelect.options.length === 0 || !modelSelect.value;
  stopButton.disabled = !busy;
  modelSelect.disabled = busy || !modelSelect.value;
  clearButton.disabled = busy || transcript.children.length === 0;
}

function addTurn(role, text) {
  const ranAt = h("p", { class: "turn-class", hidden: true });
  const body = h("div", { class: "turn-text" }, text);
  const note = h("p", { class: "turn-note", hidden: true });
  const item = h(
    "li",
    { class: `turn ${role}` },
    h("span", { class: "turn-role" }, role === "user" ? t("playground-you") : t("playground-assistant")),
    ranAt,
    body,
    note,
  );
  transcript.append(item);
  $("transcript-empty").hidden = true;
  item.scrollIntoView({ block: "nearest" });
  return { item, ranAt, body, note };
}

// The class the gateway actually ran the request at (x-aiplane-class), shown once the reply starts.
function showRanAt(answer, response) {
  const cls = response.headers.get("x-aiplane-class");
  if (!LEVELS.includes(cls)) return;
  answer.ranAt.textContent = t("playground-ran-at", { priority: priorityName(cls) });
  answer.ranAt.dataset.class = cls;
  answer.ranAt.hidden = false;
}

async function errorFrom(response) {
  let envelope = {};
  try {
    const data = await response.json();
    if (data && typeof data.error === "object" && data.error !== null) envelope = data.error;
  } catch {
    // Not JSON: the status decides.
  }
  const code = envelope.code || (response.status === 401 ? "not_authenticated" : response.status >= 500 ? "internal_error" : "unknown");
  return errorMessage(code, envelope.message || "");
}

// Reads an SSE body and calls onDelta(text) for each content piece until [DONE].
async function readStream(response, onDelta) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") {
        reader.cancel().catch(() => {});
        return;
      }
      let chunk;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue;
      }
      if (chunk.error) throw new Error(errorMessage(chunk.error.code || "upstream_error", chunk.error.message || ""));
      const choice = chunk.choices && chunk.choices[0];
      const piece = choice && choice.delta ? choice.delta.content : choice ? choice.text : null;
      if (piece) onDelta(piece);
    }
  }
}

async function send() {
  clearMessage(alert);
  const text = message.value.trim();
  const model = modelSelect.value;
  if (!text) {
    message.setAttribute("aria-invalid", "true");
    showError(alert, t("playground-empty-message"));
    return;
  }
  message.removeAttribute("aria-invalid");
  const userTurn = addTurn("user", text);
  const answer = addTurn("assistant", "");
  answer.item.classList.add("pending");
  message.value = "";
  const messages = [...history, { role: "user", content: text }];
  controller = new AbortController();
  setBusy(true);
  setState(t("playground-waiting"), "waiting");
  let received = "";
  const started = performance.now();
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...SESSION_HEADERS },
      body: JSON.stringify({ model, messages, stream: true }),
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(await errorFrom(response));
    setState(t("playground-streaming"), "streaming");
    answer.item.classList.remove("pending");
    showRanAt(answer, response);
    await readStream(response, (piece) => {
      received += piece;
      answer.body.textContent = received;
    });
    history = [...messages, { role: "assistant", content: received }];
    const backend = response.headers.get("x-aiplane-backend");
    const queueMs = Number(response.headers.get("x-aiplane-queue-ms") || "0");
    answer.note.textContent = backend
      ? t("playground-answered-by", { backend, wait: formatNumber(queueMs / 1000), seconds: formatNumber((performance.now() - started) / 1000) })
      : "";
    answer.note.hidden = !backend;
    setState(t("playground-done"), "done");
  } catch (error) {
    answer.item.classList.remove("pending");
    if (error.name === "AbortError") {
      answer.item.classList.add("stopped");
      answer.note.textContent = received ? t("playground-stopped-partial") : t("playground-stopped-before");
      answer.note.hidden = false;
      if (received) history = [...messages, { role: "assistant", content: received }];
      setState(t("playground-stopped"), "stopped");
    } else {
      if (received) {
        // Cut short mid-stream: keep what arrived, marked as incomplete.
        answer.item.classList.add("stopped");
        answer.note.textContent = t("playground-cut-short");
        answer.note.hidden = false;
      } else {
        // Nothing was answered: take the turn back and leave the text for another try.
        answer.item.remove();
        userTurn.item.remove();
        message.value = text;
      }
      $("transcript-empty").hidden = transcript.children.length > 0;
      setState("");
      showError(alert, error instanceof TypeError ? t("error-network") : error.message);
    }
  } finally {
    controller = null;
    setBusy(false);
    if (document.activeElement === stopButton || document.activeElement === document.body) message.focus();
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  if (!controller) send();
});

message.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    if (!controller && !sendButton.disabled) send();
  }
});

stopButton.addEventListener("click", () => {
  if (controller) controller.abort();
});

clearButton.addEventListener("click", () => {
  history = [];
  transcript.replaceChildren();
  $("transcript-empty").hidden = false;
  setState("");
  setBusy(false);
  message.focus();
});

async function loadModels() {
  const response = await fetch("/v1/models", { credentials: "same-origin", headers: { Accept: "application/json", ...SESSION_HEADERS } });
  if (!response.ok) throw new Error(await errorFrom(response));
  const data = await response.json();
  return data.data.map((item) => item.id);
}

async function loadClass() {
  const details = await api("GET", "/api/v0/tokens/details");
  $("playground-class").textContent = details.priority_enabled
    ? t("playground-runs-at", { priority: priorityName(details.owner_priority) })
    : t("playground-one-class");
  $("playground-class").dataset.priority = details.priority_enabled ? details.owner_priority : "";
}

async function start() {
  const [models, klass] = await Promise.allSettled([loadModels(), loadClass()]);
  if (klass.status === "rejected") {
    $("playground-class").textContent = "";
    showError($("page-alert"), klass.reason.message);
  }
  if (models.status === "rejected") {
    modelSelect.replaceChildren();
    showError(alert, models.reason instanceof TypeError ? t("error-network") : models.reason.message);
  } else {
    modelSelect.replaceChildren(...models.value.map((id) => h("option", { value: id }, id)));
    $("chat-model-hint").hidden = models.value.length > 0;
    if (models.value.length === 0) {
      modelSelect.append(h("option", { value: "" }, t("playground-no-models-option")));
    }
  }
  setBusy(false);
}

start();
