# Das Protokoll der einzelnen Anfragen.

activity-title = Aktivität
activity-intro = Die letzten Anfragen mit ihrer Priorität, Wartezeit und ihrem Ergebnis.
activity-empty = Noch keine Anfragen aufgezeichnet.
