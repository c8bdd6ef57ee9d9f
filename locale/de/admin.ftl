# Verwaltung: Einstellungen, Gruppen, Benutzer, alle Tokens.

admin-settings-title = Einstellungen
admin-settings-intro = Betriebseinstellungen: Priorisierung von Anfragen, die Standardpriorität des Systems und wie lange Anfragen auf freie Kapazität warten dürfen.
admin-groups-title = Gruppen
admin-groups-intro = Gateway-Gruppen legen fest, wer aiplane verwaltet und welche Priorität ihre Mitglieder haben; welche Modelle sie nutzen dürfen, wird an jedem Pool festgelegt (Backends → Pools).
admin-users-title = Benutzer
admin-users-intro = Lokale Konten, die sich bei aiplane anmelden können.
admin-tokens-title = Alle Tokens
admin-tokens-intro = Jedes API-Token mit seinem Besitzer und seiner Priorität.

## Einstellungen

settings-section-access-gateway = Zugriff › Gateway
settings-section-access-gateway-intro = Die Priorisierung von Anfragen und die Warteschlange, die Anfragen ordnet, solange alle Backends ausgelastet sind.
settings-section-observability = Beobachtbarkeit
settings-section-observability-intro = Wie lange die Aktivitätseinträge der einzelnen Anfragen aufbewahrt werden.
settings-save = Einstellungen speichern
settings-save-hint = Alle Werte werden gemeinsam gespeichert; ist einer unzulässig, ändert sich nichts.
settings-saved = Einstellungen gespeichert.
setting-default = Standard: { $value }.
setting-error = { $setting }: { $message }
setting-error-range = { $setting } muss eine ganze Zahl von { $min } bis { $max } sein.

setting-gateway-priority-enabled = Priorisierung von Anfragen einschalten
setting-gateway-priority-enabled-hint = Ausgeschaltet gehören alle Anfragen zu einer Klasse und werden in der Reihenfolge ihres Eintreffens bedient.
setting-gateway-priority-default = Standardpriorität des Systems
setting-gateway-priority-default-hint = Die Priorität aller Personen, deren Gruppen keine festlegen.
setting-gateway-upstream-wait-secs = Wartebudget (Sekunden)
setting-gateway-upstream-wait-secs-hint = Wie lange eine Anfrage auf ein freies Backend warten darf, bevor sie mit „Kapazität erschöpft“ scheitert. Bei 0 gibt es trotzdem einen Versuch.
setting-gateway-scheduler = Planer
setting-gateway-scheduler-hint = Strikt: Hoch vor Mittel vor Niedrig, innerhalb einer Klasse nach Eintreffen. Mit Punkten: berücksichtigt zusätzlich Wartezeit und Cache-Affinität. Wer zuerst kommt: die Priorität wirkt als Vorsprung. Gewichtet kürzester Prompt: kurze Prompts zuerst, gewichtet nach Priorität. Früheste Frist zuerst: innerhalb einer Klasse geht eine Anfrage vor, die kürzer warten wollte (X-AIplane-Max-Wait).
setting-gateway-scheduler-strict = Strikte Priorität
setting-gateway-scheduler-serial = Mit Punkten (Wartezeit, Affinität)
setting-gateway-scheduler-fcfs = Wer zuerst kommt, mahlt zuerst
setting-gateway-scheduler-wspt = Gewichtet kürzester Prompt
setting-gateway-scheduler-edf = Früheste Frist zuerst
setting-gateway-aging-divisor-secs = Alterungsteiler (Sekunden)
setting-gateway-aging-divisor-secs-hint = Planer mit Punkten: Nach so langer Wartezeit erhält eine Anfrage einen Punkt mehr. 0 schaltet die Alterung ab.
setting-gateway-affinity-bonus = Bonus für Cache-Affinität
setting-gateway-affinity-bonus-hint = Planer mit Punkten: Punkte für eine Anfrage, deren Backend mit passendem Cache den freien Platz hat (0 bis 99).
setting-gateway-max-waiters = Höchstzahl wartender Anfragen
setting-gateway-max-waiters-hint = Darüber hinaus werden neue Anfragen sofort mit 429 abgewiesen. 0 bedeutet unbegrenzt.
setting-gateway-fair-share = Faire Verteilung innerhalb einer Klasse
setting-gateway-fair-share-hint = Strikter Planer: Innerhalb einer Klasse kommen die Personen abwechselnd an die Reihe, damit die vielen Anfragen einer Person die der anderen nicht verdrängen.
setting-gateway-fair-share-by = Faire Verteilung zählt
setting-gateway-fair-share-by-hint = Anfragen: jede Anfrage ist ein Zug. Tokens: Personen werden nach den Tokens bedient, die sie verbraucht haben (Prompt plus doppelte Ausgabe, wie die Engine sie meldet), damit lange Prompts einer Person die kurzen anderer nicht verdrängen.
setting-gateway-fair-share-by-requests = Anfragen
setting-gateway-fair-share-by-tokens = Tokens
setting-gateway-fair-share-half-life-secs = Faire Verteilung vergisst nach (Halbwertszeit, Sekunden)
setting-gateway-fair-share-half-life-secs-hint = Nach Tokens: was eine Person über die anderen hinaus verbraucht hat, halbiert sich alle so viele Sekunden. 0 vergisst nie.
setting-gateway-headroom-secs = Reservierte Reserve gilt für (Sekunden)
setting-gateway-headroom-secs-hint = Die reservierte Reserve eines Backends hält seine letzten Plätze von einer Klasse frei, solange innerhalb dieser Zeit eine Anfrage einer höheren Klasse kam; kam lange keine, darf jede Klasse alle nutzen.
setting-gateway-preemption = Niedrigere Klassen im Prefill verdrängen
setting-gateway-preemption-hint = Muss eine Anfrage einer höheren Klasse auf ein Backend warten, bricht sie dort einen Stream einer niedrigeren Klasse ab, der noch kein erstes Ereignis gesendet hat (die Engine liest noch den Prompt): Dieser kommt an die Spitze seiner Klasse zurück und wartet erneut; sein Client sieht nur eine längere Wartezeit. Jede Anfrage wird höchstens einmal abgebrochen; ganze (nicht gestreamte) Antworten nie.
setting-gateway-connect-timeout-secs = Verbindungs-Timeout (Sekunden)
setting-gateway-connect-timeout-secs-hint = Wie lange auf die Annahme einer Verbindung durch einen Modellserver gewartet wird, bevor ein anderes Replikat versucht wird.
setting-gateway-first-byte-timeout-secs = Zeit bis zum ersten Byte (Sekunden)
setting-gateway-first-byte-timeout-secs-hint = Wie lange ein Modellserver brauchen darf, bis er zu antworten beginnt (das Prefill eines langen Prompts dauert, also großzügig wählen); danach schlägt die Anfrage mit 504 fehl.
setting-gateway-idle-timeout-secs = Leerlauf-Timeout zwischen Teilen (Sekunden)
setting-gateway-idle-timeout-secs-hint = Wie lange eine begonnene Antwort zwischen zwei Teilen pausieren darf; danach endet sie mit einem Fehler und der Platz wird frei.
setting-gateway-media-urls = Medien-URLs, die Engines abrufen dürfen
setting-gateway-media-urls-hint = Engines rufen die Bild-, Audio- und Video-URLs einer Anfrage selbst ab, aus Ihrem Netz heraus. „Nur öffentliche“ weist (400) file: und andere Schemata ab sowie Hosts, die Loopback-, private, Link-Local- oder Cloud-Metadaten-Adressen oder -Namen sind; data:-URLs sind immer erlaubt. Hostnamen werden nicht aufgelöst: Halten Sie den ausgehenden Verkehr der Engines per Firewall begrenzt.
setting-gateway-media-urls-public = Nur öffentliche Hosts und data:-URLs
setting-gateway-media-urls-any = Jede URL (Engines rufen ab, was Aufrufer senden)
setting-activity-retention-days = Aktivitätseinträge aufbewahren (Tage)
setting-activity-retention-days-hint = Ältere Einträge werden stündlich gelöscht.

## Gruppen

groups-caption = Gateway-Gruppen
groups-empty = Es gibt noch keine Gruppen.
group-new = Neue Gruppe
group-new-title = Neue Gruppe
group-edit-title = Gruppe „{ $name }“ bearbeiten
group-name = Name
group-name-hint = Buchstaben, Ziffern, Punkte, Unter- oder Bindestriche. Beim Umbenennen bleiben alle Verweise darauf erhalten.
group-description = Beschreibung
group-roles = Rollen
group-members = Mitglieder
group-members-filter = Benutzer filtern
group-members-none = Es gibt noch keine Benutzer.
group-members-everyone = Alle (Standardgruppe)
group-members-nobody = Keine Mitglieder
group-priority-hint = Mitglieder erben die höchste Priorität all ihrer Gruppen. „Nicht festgelegt“ überlässt sie den anderen Gruppen oder dem Systemstandard.
group-priority-none = Nicht festgelegt
group-priority-of = Priorität der Gruppe { $name }
group-priority-saved = Priorität der Gruppe „{ $name }“ gespeichert.
group-is-admin = Administratoren
group-is-admin-hint = Mitglieder dürfen aiplane verwalten.
group-is-default = Standardgruppe
group-is-default-hint = Alle Benutzer gehören dazu, ohne eingetragen zu sein.
group-badge-admin = Administratoren
group-badge-default = Standard
group-actions = Aktionen für die Gruppe { $name }
group-delete-confirm = Die Gruppe „{ $name }“ löschen? Ihre Mitglieder verlieren, was sie ihnen gewährt hat.
group-deleted = Gruppe „{ $name }“ gelöscht.
group-saved = Gruppe „{ $name }“ gespeichert.
group-created = Gruppe „{ $name }“ angelegt.

## Benutzer

users-caption = Lokale Konten
user-new = Neuer Benutzer
user-new-title = Neuer Benutzer
user-edit-title = Benutzer „{ $name }“ bearbeiten
user-create = Benutzer anlegen
user-username = Benutzername
user-username-hint = Nur Buchstaben, Ziffern und @ . + - _.
user-email = E-Mail
user-password = Passwort
user-password-hint = Ohne Passwort kann sich das Konto erst anmelden, wenn eines gesetzt ist.
user-new-password = Neues Passwort
user-new-password-hint = Leer lassen, um das bisherige Passwort zu behalten.
user-active = Aktiv
user-active-hint = Inaktive Konten können sich nicht anmelden, und ihre Tokens funktionieren nicht mehr.
user-status = Status
user-groups = Gruppen
user-last-login = Letzte Anmeldung
user-badge-active = Aktiv
user-badge-inactive = Inaktiv
user-badge-admin = Administrator
user-is-you = Das sind Sie
user-actions = Aktionen für den Benutzer { $name }
user-delete-confirm = Das Konto „{ $name }“ und alle seine Tokens löschen?
user-deleted = Benutzer „{ $name }“ gelöscht.
user-saved = Benutzer „{ $name }“ gespeichert.
user-created = Benutzer „{ $name }“ angelegt.

## Alle Tokens

admin-tokens-caption = Alle API-Tokens
admin-tokens-empty = Noch niemand hat ein Token erstellt.
admin-tokens-filter = Nach Token oder Besitzer filtern
admin-tokens-count = { $shown } von { $total } Tokens werden angezeigt
admin-tokens-priority-disabled = Die Priorisierung von Anfragen ist ausgeschaltet: Diese Einstellungen wirken erst, wenn sie unter Einstellungen eingeschaltet wird.
admin-token-name = Token
admin-token-owner = Besitzer
admin-token-state = Zustand
admin-token-effective = Wirksam
admin-token-priority-of = Priorität des Tokens { $name } von { $owner }
admin-token-inherits = Erbt { $priority } von den Gruppen des Besitzers.
admin-token-set-by-admin = Festgelegt von { $name } (Administrator).
admin-token-set-by-owner = Festgelegt von { $name } (Besitzer).
admin-token-actions = Aktionen für Token { $name } von { $owner }
admin-token-revoke-confirm = „{ $name }“ von { $owner } widerrufen? Programme, die es verwenden, funktionieren sofort nicht mehr, und { $owner } sieht, dass Sie es widerrufen haben.
admin-token-delete-confirm = „{ $name }“ von { $owner } endgültig löschen? Programme, die es verwenden, funktionieren sofort nicht mehr.
admin-token-revoked = Token „{ $name }“ von { $owner } widerrufen.
admin-token-deleted = Token „{ $name }“ von { $owner } gelöscht.
