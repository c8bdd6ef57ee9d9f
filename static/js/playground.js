// The playground: a chat with a model as the signed-in person (their inherited priority) or as
// one of their tokens (its class and allowlist), streamed token by token from
// POST /v1/chat/completions, with a system prompt, temperature and max tokens. Stop aborts the
// fetch at any moment; the gateway sees the disconnect and frees the request's place in the
// queue (or its slot) at once. "Show code" writes what was just run as curl, OpenAI and Anthropic.
import { api, errorMessage } from "./api.js";
import { t } from "./i18n.js";
import { clearMessage, h, showError } from "./ui.js";
import { $, LEVELS, formatNumber, priorityName, tokenState } from "./widgets.js";
import { KEY_VARIABLE, SNIPPETS, baseUrl } from "./playground-code.js";

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
const tokenSelect = $("chat-token");
const systemInput = $("chat-system");
const temperatureInput = $("chat-temperature");
const maxTokensInput = $("chat-max-tokens");
const codeButton = $("chat-code");
const codeCard = $("code-card");

const MAX_TEMPERATURE = 2;
const MAX_TOKENS_LIMIT = 1_000_000;

let history = []; // {role, content} sent with the next message
let controller = null; // the running request's AbortController
let details = null; // GET /api/v0/tokens/details: my tokens, my priority, the switch
let lastRun = null; // what "Show code" writes: the last request sent
let codeLang = "curl";

function setState(text, kind = "") {
  state.textContent = text;
  state.dataset.kind = kind;
}

function setBusy(busy) {
  sendButton.disabled = busy || modelSelect.options.length === 0 || !modelSelect.value;
  stopButton.disabled = !busy;
  modelSelect.disabled = busy || !modelSelect.value;
  tokenSelect.disabled = busy;
  clearButton.disabled = busy || transcript.children.length === 0;
  codeButton.disabled = lastRun === null;
}

// The temperature and max tokens as numbers (null: the engine's default), or an error message
// naming the field; the field is marked invalid.
function readSettings() {
  for (const input of [temperatureInput, maxTokensInput]) input.removeAttribute("aria-invalid");
  const rawTemperature = temperatureInput.value.trim();
  const rawMax = maxTokensInput.value.trim();
  let temperature = null;
  let maxTokens = null;
  if (rawTemperature !== "" || temperatureInput.validity.badInput) {
    temperature = Number(rawTemperature);
    if (rawTemperature === "" || !Number.isFinite(temperature) || temperature < 0 || temperature > MAX_TEMPERATURE) {
      return { invalid: temperatureInput, message: t("playground-temperature-invalid") };
    }
  }
  if (rawMax !== "" || maxTokensInput.validity.badInput) {
    maxTokens = Number(rawMax);
    if (rawMax === "" || !Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > MAX_TOKENS_LIMIT) {
      return { invalid: maxTokensInput, message: t("playground-max-tokens-invalid") };
    }
  }
  return { temperature, maxTokens };
}

function chosenToken() {
  if (!details || !tokenSelect.value) return null;
  return details.tokens.find((token) => String(token.id) === tokenSelect.value) || null;
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
  const settings = readSettings();
  if (settings.invalid) {
    settings.invalid.setAttribute("aria-invalid", "true");
    showError(alert, settings.message);
    return;
  }
  if (!text) {
    message.setAttribute("aria-invalid", "true");
    showError(alert, t("playground-empty-message"));
    return;
  }
  message.removeAttribute("aria-invalid");
  const token = chosenToken();
  const system = systemInput.value.trim();
  const userTurn = addTurn("user", text);
  const answer = addTurn("assistant", "");
  answer.item.classList.add("pending");
  message.value = "";
  const messages = [...history, { role: "user", content: text }];
  // The system prompt as it is now leads every request; it is not part of the history.
  const sent = system ? [{ role: "system", content: system }, ...messages] : messages;
  const body = { model, messages: sent, stream: true };
  if (settings.temperature !== null) body.temperature = settings.temperature;
  if (settings.maxTokens !== null) body.max_tokens = settings.maxTokens;
  lastRun = { model, messages: sent, temperature: settings.temperature, max_tokens: settings.maxTokens, token };
  if (!codeCard.hidden) renderCode();
  controller = new AbortController();
  setBusy(true);
  setState(t("playground-waiting"), "waiting");
  let received = "";
  const started = performance.now();
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        Accept: "text/event-stream",
        ...SESSION_HEADERS,
        ...(token ? { "X-AIplane-Token": String(token.id) } : {}),
      },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(await errorFrom(response));
    setState(t("playground-streaming"), "streaming");
    answer.item.classList.remove("pending");
    showRanAt(answer, response);
    await readStream(response, (piece) => {
      // Follow the answer as it grows, unless the person scrolled up to read something else.
      const following = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 32;
      received += piece;
      answer.body.textContent = received;
      if (following) transcript.scrollTop = transcript.scrollHeight;
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

// Who the next request runs as, and at which class: me (my groups) or the chosen token.
function showRunsAs() {
  if (!details) return;
  const token = chosenToken();
  const fact = $("playground-class");
  if (!details.priority_enabled) {
    fact.textContent = t("playground-one-class");
    fact.dataset.priority = "";
    return;
  }
  const level = token ? token.effective_priority : details.owner_priority;
  fact.textContent = token
    ? t("playground-runs-as-token", { token: token.name, priority: priorityName(level) })
    : t("playground-runs-at", { priority: priorityName(level) });
  fact.dataset.priority = level;
}

function fillTokens() {
  const usable = details.tokens.filter((token) => tokenState(token) === "active");
  const mine = details.priority_enabled ? t("playground-run-as-me-at", { priority: priorityName(details.owner_priority) }) : t("playground-run-as-me");
  tokenSelect.replaceChildren(
    h("option", { value: "" }, mine),
    ...usable.map((token) =>
      h(
        "option",
        { value: String(token.id) },
        details.priority_enabled
          ? t("playground-run-as-token-at", { token: token.name, priority: priorityName(token.effective_priority) })
          : t("playground-run-as-token", { token: token.name }),
      ),
    ),
  );
}

async function loadClass() {
  details = await api("GET", "/api/v0/tokens/details");
  fillTokens();
  showRunsAs();
}

tokenSelect.addEventListener("change", showRunsAs);

// ----- show code ---------------------------------------------------------------------------------

function renderCode() {
  if (!lastRun) return;
  $("code-text").textContent = SNIPPETS[codeLang](lastRun);
  $("code-copied").textContent = "";
  const key = lastRun.token ? t("playground-code-key-token", { variable: KEY_VARIABLE, token: lastRun.token.name, prefix: lastRun.token.prefix }) : t("playground-code-key", { variable: KEY_VARIABLE });
  $("code-intro").textContent = `${t("playground-code-intro", { url: baseUrl() })} ${key}`;
  for (const tab of codeCard.querySelectorAll("[role=tab]")) {
    const selected = tab.dataset.lang === codeLang;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    if (selected) $("code-panel").setAttribute("aria-labelledby", tab.id);
  }
}

codeButton.addEventListener("click", () => {
  const open = codeCard.hidden;
  codeCard.hidden = !open;
  codeButton.setAttribute("aria-expanded", String(open));
  codeButton.textContent = open ? t("playground-hide-code") : t("playground-show-code");
  if (open) {
    renderCode();
    codeCard.scrollIntoView({ block: "nearest" });
  }
});

const tabs = [...codeCard.querySelectorAll("[role=tab]")];
for (const tab of tabs) {
  tab.addEventListener("click", () => {
    codeLang = tab.dataset.lang;
    renderCode();
  });
  // Arrow keys move between the tabs (the WAI-ARIA tabs pattern).
  tab.addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    event.preventDefault();
    const next = tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length];
    codeLang = next.dataset.lang;
    renderCode();
    next.focus();
  });
}

$("code-copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText($("code-text").textContent);
    $("code-copied").textContent = t("playground-code-copied");
  } catch {
    $("code-copied").textContent = t("playground-code-copy-failed");
  }
});

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
