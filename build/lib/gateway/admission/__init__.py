"""Who gets the next free backend slot, and when: waiters, schedulers, the queue, route_or_wait.
Imports only gateway.core."""
