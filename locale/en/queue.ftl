# The live admission queue.

queue-title = Queue
queue-intro = Requests waiting for a free backend slot, in the order they will be dispatched.
queue-empty = No request is waiting.
queue-priority-off = Request prioritization is switched off: every request waits in one class, in arrival order.
queue-depth = Waiting per class
queue-waiters = Waiting requests
queue-class = Class
queue-model = Model
queue-user = User
queue-token = Token
queue-token-session = Browser (playground)
queue-age = Waiting for
queue-estimate = Estimated wait
queue-estimate-intro = The estimated wait counts the requests before it at the pace its backends took requests lately; it is unknown until they have taken a few.
queue-estimate-unknown = unknown
queue-estimate-under-second = under 1 s
queue-estimate-seconds = about { $seconds } s
queue-estimate-minutes = about { $minutes } min
queue-estimate-hours = about { $hours } h
queue-backends = Backends
queue-backends-empty = No backend is serving.
queue-backend = Backend
queue-health = Health

queue-recent = Recent dispatches
queue-recent-intro = The last 20 requests given a backend slot, newest first.
queue-recent-empty = No request has been dispatched since the gateway started.
queue-recent-time = Time
queue-recent-waited = Queue wait
queue-recent-ago = { $duration } ago

live-connecting = Connecting…
live-connected = Live
live-polling = Updating every 2 seconds
live-offline = Live data unavailable
live-stopped = Stopped
live-not-admin = You are no longer an administrator, so the live queue has stopped. Reload the page once your rights are restored.
live-signed-out = You have been signed out, so the live queue has stopped. Sign in again to watch it.
