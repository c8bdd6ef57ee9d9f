# The chat playground.

playground-title = Playground
playground-intro = Send a chat to a model as yourself, with your inherited priority, and stop it at any time.
playground-model = Model
playground-message = Message
playground-send = Send
playground-stop = Stop
playground-conversation = Conversation
playground-clear = New conversation
playground-empty = Nothing sent yet. Choose a model, write a message and press Send.
playground-message-hint = Ctrl+Enter sends.
playground-no-models = No model is available to you.
playground-no-models-option = No models
playground-empty-message = Write a message first.
playground-you = You
playground-assistant = Model
playground-runs-at = Your requests run at priority { $priority }.
playground-one-class = Request prioritization is off: every request shares one class.
playground-waiting = Waiting for a free model server…
playground-streaming = Answering…
playground-done = Answer complete.
playground-stopped = Stopped.
playground-stopped-before = Stopped before the answer began.
playground-stopped-partial = Stopped; the answer is incomplete.
playground-cut-short = The answer was cut short.
playground-ran-at = This answer ran at priority { $priority }.
playground-answered-by = Answered by { $backend } after { $wait } s in the queue ({ $seconds } s in total).
