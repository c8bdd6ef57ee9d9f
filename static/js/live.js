// The live queue picture for administrators: the /ws/queue websocket, and GET /api/v0/admin/queue
// every 2 s while the websocket is unavailable (it is retried now and then). A session that loses
// the right to watch ends it for good: the server closes the socket with 4403 (no longer an
// administrator) or 4401 (signed out; gateway/admin/consumers.py), the API then answers 403 or 401.
import { api } from "./api.js";

const POLL_MS = 2000;
const RETRY_MS = 15000;
const POLICY_CLOSE = new Set([4403, 4401]);
const FINAL = { 403: "not-admin", 401: "signed-out" };

// onState(state) gets every picture; onMode(mode, error), mode one of "connecting", "live",
// "polling", "offline", and the final "not-admin" and "signed-out" (nothing is tried again).
export function watchQueue(onState, onMode = () => {}) {
  let socket = null;
  let pollTimer = null;
  let retryTimer = null;
  let stopped = false;

  function end(mode) {
    stopped = true;
    stopPolling();
    onMode(mode);
  }

  async function pollOnce() {
    try {
      const state = await api("GET", "/api/v0/admin/queue");
      if (stopped) return;
      onState(state);
      onMode("polling");
    } catch (error) {
      if (stopped) return;
      if (FINAL[error.status]) end(FINAL[error.status]);
      else onMode("offline", error);
    }
  }

  function startPolling() {
    if (stopped || pollTimer !== null) return;
    pollOnce();
    pollTimer = setInterval(pollOnce, POLL_MS);
    retryTimer = setTimeout(connect, RETRY_MS);
  }

  function stopPolling() {
    clearInterval(pollTimer);
    clearTimeout(retryTimer);
    pollTimer = retryTimer = null;
  }

  function connect() {
    if (stopped) return;
    clearTimeout(retryTimer);
    retryTimer = null;
    if (typeof WebSocket !== "function") {
      startPolling();
      return;
    }
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    try {
      socket = new WebSocket(`${scheme}//${location.host}/ws/queue`);
    } catch {
      startPolling();
      return;
    }
    if (pollTimer === null) onMode("connecting");
    socket.addEventListener("open", () => {
      stopPolling();
      onMode("live");
    });
    socket.addEventListener("message", (event) => {
      try {
        onState(JSON.parse(event.data));
      } catch {
        // A malformed frame is skipped; the next one replaces it anyway.
      }
    });
    socket.addEventListener("close", (event) => {
      socket = null;
      if (stopped) return;
      if (POLICY_CLOSE.has(event.code)) {
        // The socket's session lost the right; the API answers at once for the page's session
        // now, which decides (a password change cycles the session key: still signed in).
        stopPolling();
        startPolling();
      } else if (pollTimer === null) startPolling();
      else retryTimer = setTimeout(connect, RETRY_MS);
    });
  }

  connect();
  return {
    stop() {
      stopped = true;
      stopPolling();
      if (socket) socket.close();
    },
  };
}
