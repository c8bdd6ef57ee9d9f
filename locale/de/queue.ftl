# Die Warteschlange in Echtzeit.

queue-title = Warteschlange
queue-intro = Anfragen, die auf einen freien Platz bei einem Backend warten, in der Reihenfolge, in der sie zugeteilt werden.
queue-empty = Keine Anfrage wartet.
queue-priority-off = Die Priorisierung von Anfragen ist ausgeschaltet: Alle Anfragen warten in einer Klasse, in der Reihenfolge ihres Eintreffens.
queue-depth = Wartende je Klasse
queue-waiters = Wartende Anfragen
queue-class = Klasse
queue-model = Modell
queue-user = Benutzer
queue-token = Token
queue-token-session = Browser (Spielwiese)
queue-age = Wartet seit
queue-estimate = Geschätzte Wartezeit
queue-estimate-intro = Die geschätzte Wartezeit zählt die Anfragen davor im Tempo, in dem ihre Backends zuletzt Anfragen angenommen haben; sie ist unbekannt, bis diese einige angenommen haben.
queue-estimate-unknown = unbekannt
queue-estimate-under-second = unter 1 s
queue-estimate-seconds = etwa { $seconds } s
queue-estimate-minutes = etwa { $minutes } min
queue-estimate-hours = etwa { $hours } h
queue-backends = Backends
queue-backends-empty = Kein Backend ist in Betrieb.
queue-backend = Backend
queue-health = Zustand

queue-recent = Letzte Zuteilungen
queue-recent-intro = Die letzten 20 Anfragen, die einen Platz bei einem Backend erhalten haben, die neueste zuerst.
queue-recent-empty = Seit dem Start des Gateways wurde noch keine Anfrage zugeteilt.
queue-recent-time = Zeit
queue-recent-waited = Wartezeit
queue-recent-ago = vor { $duration }

live-connecting = Verbindung wird aufgebaut …
live-connected = Live
live-polling = Aktualisierung alle 2 Sekunden
live-offline = Live-Daten nicht verfügbar
live-stopped = Angehalten
live-not-admin = Sie sind kein Administrator mehr, daher wurde die Live-Warteschlange angehalten. Laden Sie die Seite neu, sobald Ihre Rechte wiederhergestellt sind.
live-signed-out = Sie wurden abgemeldet, daher wurde die Live-Warteschlange angehalten. Melden Sie sich erneut an, um sie zu verfolgen.
