# Verwaltung: Feinschliff der Seiten Warteschlange, Backends, Pools, Benutzer und Gruppen, Passwörter, Umbenennen.

queue-order-intro = Jede Zeile ist eine Gruppe von Backends, deren Plätze sich ihre Anfragen teilen; die erste Zeile erhält den nächsten freien Platz. Zuerst entscheidet die Klasse, dann die Reihenfolge des Schedulers: der Punktwert (Scheduler „serial“), der Hinweis und die Wartezeit.
queue-position = Platz
queue-position-value = { $position }.
queue-score = Punktwert
queue-waits-for = Wartet auf
queue-line-heading = { $backends }: { $count ->
    [one] eine Anfrage wartet
   *[other] { $count } Anfragen warten
}
