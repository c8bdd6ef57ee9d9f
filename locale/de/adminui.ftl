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

backend-no-pool = In keinem Pool: Niemand kann seine Modelle aufrufen (sie antworten mit 404), bis ein Pool dieses Backend enthält.
backend-saved-no-pool = Backend „{ $name }“ gespeichert, aber es ist in keinem Pool: Seine Modelle antworten mit 404, bis ein Pool es enthält.
backend-detect-failed = Die Erkennung von { $name } ist fehlgeschlagen: Seine Karte nennt den Grund.
backend-detect-failed-unreachable = Erkennung fehlgeschlagen: { $url } hat nicht geantwortet ({ $error }).
backend-detect-failed-status = Erkennung fehlgeschlagen: { $url } hat mit { $status } geantwortet ({ $error }).
backend-detect-failed-not-models = Erkennung fehlgeschlagen: { $url } hat geantwortet, aber nicht mit einer Liste von Modellen ({ $error }).
backend-part-pools = Pools
backend-pools-hint = Die Pools, in denen dieses Backend dient; jeder Pool legt fest, wer seine Modelle aufrufen darf.
backend-pools-none = Es gibt noch keinen Pool: Legen Sie unter „Pools“ einen an und fügen Sie dieses Backend hinzu.

pool-access = Wer ihn nutzen darf
pool-access-everyone = Alle
pool-access-everyone-hint = Jede Person und jedes Token, unabhängig von ihren Gruppen.
pool-access-groups = Nur Mitglieder dieser Gruppen
pool-access-nobody = Keine Gruppe angekreuzt: Niemand darf diesen Pool nutzen.
pool-groups-nobody = Niemand
pool-widen-confirm = Den Pool „{ $name }“ für alle öffnen? Jede Person und jedes Token kann dann seine Modelle nutzen, nicht nur die jetzt zugelassenen Gruppen.
pool-widen-action = Für alle öffnen

error-access-widening = Alle Gruppen zu entfernen würde den Pool für alle öffnen: Wählen Sie „Alle“, um das zu erlauben.

account-title = Konto
account-intro = Angemeldet als { $username }. Hier ändern Sie Ihr Passwort.
account-link = Ihr Konto: Passwort ändern
account-password = Passwort ändern
account-current-password = Aktuelles Passwort
account-new-password = Neues Passwort
account-new-password-hint = Andere Browser, in denen Sie angemeldet sind, werden abgemeldet; dieser bleibt angemeldet.
account-confirm-password = Neues Passwort wiederholen
account-password-save = Passwort ändern
account-password-changed = Ihr Passwort wurde geändert.
account-password-mismatch = Die beiden neuen Passwörter stimmen nicht überein.
password-refused = Das Passwort wird nicht akzeptiert:
password-reason-password-too-short = Es ist zu kurz: Verwenden Sie mindestens { $min_length } Zeichen.
password-reason-password-too-similar = Es ähnelt zu sehr dem Benutzernamen oder der E-Mail-Adresse.
password-reason-password-too-common = Es ist zu verbreitet: Es steht in Listen häufig benutzter Passwörter.
password-reason-password-entirely-numeric = Es besteht nur aus Ziffern.
error-wrong-password = Das aktuelle Passwort ist falsch.
user-priority = Priorität
user-max-priority = Tokens bis { $priority }
user-groups-hint = Die Gruppen, in denen diese Person Mitglied ist; Standardgruppen umfassen ohnehin alle.
user-groups-none = Es gibt noch keine Gruppen zur Auswahl (Standardgruppen umfassen alle).

token-raised-by = Der Administrator { $admin } hat dieses Token auf { $priority } gesetzt. Sie können es senken, aber nicht wieder anheben: Sie können höchstens { $max } wählen.
token-raised-by-unknown = Ein Administrator hat dieses Token auf { $priority } gesetzt. Sie können es senken, aber nicht wieder anheben: Sie können höchstens { $max } wählen.
