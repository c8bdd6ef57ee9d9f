"""Shared admission over every process on Redis: the queue, its Lua scripts and the process's link.
Imports only gateway.core and gateway.admission."""
