# The live admission queue.

queue-title = Queue
queue-intro = Requests waiting for a free backend slot, highest priority first.
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
queue-backends = Backends
queue-backends-empty = No backend is serving.
queue-backend = Backend
queue-health = Health

live-connecting = Connecting…
live-connected = Live
live-polling = Updating every 2 seconds
live-offline = Live data unavailable
