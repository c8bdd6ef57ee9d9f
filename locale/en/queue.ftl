# The live admission queue.

queue-title = Queue
queue-intro = Requests waiting for a free backend slot, highest priority first.
queue-empty = No request is waiting.
