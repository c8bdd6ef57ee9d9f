"""The vocabulary every layer shares: errors, outcomes, classes and bands, usage, wire JSON, ASGI
types, engine answers, Redis clients, serving. Imports nothing of the project."""
