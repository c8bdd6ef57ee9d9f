"""What the gateway knows of engines: profiles and detection, health, base URLs, priority
forwarding. Imports only gateway.core. How an engine's answer becomes the client's is
gateway/core/answers.py (the dialects need it too)."""
