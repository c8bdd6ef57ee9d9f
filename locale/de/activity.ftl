# Das Protokoll der einzelnen Anfragen.

activity-title = Aktivität
activity-intro = Die letzten Anfragen mit ihrer Priorität, Wartezeit und ihrem Ergebnis.
activity-empty = Noch keine Anfragen aufgezeichnet.
activity-filters = Filter
activity-caption = Aktivitätseinträge, neueste zuerst
activity-user = Benutzer
activity-model = Modell
activity-class = Klasse
activity-outcome = Ergebnis
activity-since = Von
activity-until = Bis
activity-any = Alle
activity-apply = Filter anwenden
activity-reset = Zurücksetzen
activity-time = Zeit
activity-backend = Backend
activity-queue-wait = Wartezeit
activity-status = Status
activity-duration = Dauer
activity-token = Token { $name }
activity-browser = Browsersitzung
activity-hint = Hinweis: { $hint }
activity-pages = Seiten
activity-previous = Zurück
activity-next = Weiter
activity-page-of = Seite { $page } von { $pages } · { $count } Einträge

outcome-immediate = Sofort
outcome-waited = Gewartet
outcome-expired = Abgelaufen
outcome-cancelled = Abgebrochen
outcome-rejected = Abgewiesen
outcome-client-closed = Client getrennt
outcome-upstream-error = Server-Fehler
outcome-error = Fehler
outcome-unknown = Unbekannt
