# The chat playground.

playground-title = Playground
playground-intro = Send a chat to a model as yourself, with your inherited priority, and stop it at any time.
playground-model = Model
playground-message = Message
playground-send = Send
playground-stop = Stop
