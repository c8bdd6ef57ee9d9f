# Die Chat-Spielwiese.

playground-title = Spielwiese
playground-intro = Senden Sie in Ihrem Namen und mit Ihrer geerbten Priorität einen Chat an ein Modell und brechen Sie ihn jederzeit ab.
playground-model = Modell
playground-message = Nachricht
playground-send = Senden
playground-stop = Stopp
playground-conversation = Unterhaltung
playground-clear = Neue Unterhaltung
playground-empty = Noch nichts gesendet. Wählen Sie ein Modell, schreiben Sie eine Nachricht und drücken Sie auf Senden.
playground-message-hint = Strg+Eingabe sendet.
playground-no-models = Ihnen steht kein Modell zur Verfügung.
playground-no-models-option = Keine Modelle
playground-empty-message = Schreiben Sie zuerst eine Nachricht.
playground-you = Sie
playground-assistant = Modell
playground-runs-at = Ihre Anfragen laufen mit der Priorität { $priority }.
playground-one-class = Die Priorisierung von Anfragen ist ausgeschaltet: Alle Anfragen teilen sich eine Klasse.
playground-waiting = Warten auf einen freien Modellserver …
playground-streaming = Antwort läuft …
playground-done = Antwort vollständig.
playground-stopped = Gestoppt.
playground-stopped-before = Gestoppt, bevor die Antwort begann.
playground-stopped-partial = Gestoppt; die Antwort ist unvollständig.
playground-cut-short = Die Antwort wurde abgebrochen.
playground-ran-at = Diese Antwort lief mit der Priorität { $priority }.
playground-answered-by = Beantwortet von { $backend } nach { $wait } s in der Warteschlange ({ $seconds } s insgesamt).
