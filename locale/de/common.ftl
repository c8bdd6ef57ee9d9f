# Layout, Navigation, gemeinsame Schaltflächen und Wörter, Sprachnamen.

product-name = aiplane
product-tagline = LLM-Gateway
page-title = { $page } · aiplane
skip-to-content = Zum Inhalt springen
nav-label = Hauptnavigation
nav-menu = Menü
nav-tokens = Tokens
nav-playground = Spielwiese
nav-admin = Verwaltung
nav-admin-settings = Einstellungen
nav-admin-groups = Gruppen
nav-admin-users = Benutzer
nav-admin-tokens = Tokens
nav-admin-backends = Backends
nav-admin-queue = Warteschlange
nav-admin-activity = Aktivität

language-label = Sprache
language-name-en = Englisch
language-name-de = Deutsch
language-name-fr = Französisch
language-name-es = Spanisch
language-name-ru = Russisch
language-name-zh = Chinesisch
signed-in-as = Angemeldet als { $username }
sign-out = Abmelden

action-save = Speichern
action-cancel = Abbrechen
action-close = Schließen
action-create = Erstellen
action-delete = Löschen
action-dismiss = Ausblenden
action-edit = Bearbeiten
column-actions = Aktionen
status-loading = Wird geladen …
status-saving = Wird gespeichert …
status-saved = Gespeichert.
value-never = Nie
value-none = —
value-yes = Ja
value-no = Nein
value-on = Ein
value-off = Aus
value-not-reported = Nicht gemeldet
duration-seconds = { $seconds } s
duration-minutes = { $minutes } min { $seconds } s
duration-hours = { $hours } h { $minutes } min
duration-ms = { $ms } ms

priority-label = Priorität
priority-inherit = Erben
priority-inherit-with = Erben ({ $priority })
priority-low = Niedrig
priority-medium = Mittel
priority-high = Hoch

shell-pending = Die Bedienelemente dieser Seite sind noch nicht verfügbar.

forbidden-title = Zugriff verweigert
forbidden-body = Diese Seite ist Administratoren vorbehalten. Wenden Sie sich an einen Administrator, wenn Sie Zugriff benötigen.
not-found-title = Seite nicht gefunden
not-found-body = Unter dieser Adresse gibt es keine Seite.
back-home = Zurück zu Ihren Tokens
