"""Allowance checks before admission, in memory and shared on Redis. Imports only gateway.core (and
the pure accounts.allowances)."""
