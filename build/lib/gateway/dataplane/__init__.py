"""The /v1 ASGI app: identity, body, hints, admit-and-retry, the relay and its watchdog, the server
protocol. No Django."""
