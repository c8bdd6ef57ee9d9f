# Die Chat-Spielwiese.

playground-title = Spielwiese
playground-intro = Senden Sie in Ihrem Namen und mit Ihrer geerbten Priorität einen Chat an ein Modell und brechen Sie ihn jederzeit ab.
playground-model = Modell
playground-message = Nachricht
playground-send = Senden
playground-stop = Stopp
