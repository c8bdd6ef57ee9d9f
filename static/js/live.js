// The live queue picture for administrators: the /ws/queue websocket, and GET /api/v0/admin/queue
// every 2 s while the websocket is unavailable (it is retried now and then).
import { api } from "./api.js";

const POLL_MS = 2000;
const RETRY_MS = 15000;

// onState(state) gets every picture; onMode("connecting" | "live" | "polling" | "offline", error).
export function watchQueue(onState, onMode = () => {}) {
  let socket = null;
  let pollTimer = null;
  let retryTimer = null;
  let stopped = false;

  async function pollOnce() {
    try {
      onState(await api("GET", "/api/v0/admin/queue"));
      onMode("polling");
    } catch (error) {
      onMode("offline", error);
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
    socket.addEventListener("close", () => {
      socket = null;
      if (stopped) return;
      if (pollTimer === null) startPolling();
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
