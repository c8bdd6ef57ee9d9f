# Persönliche API-Tokens.

tokens-title = API-Tokens
tokens-intro = Programme rufen das Gateway mit einem dieser Tokens als Bearer-Token auf. Ein Token erbt Ihre Priorität, sofern Sie ihm keine andere zuweisen.
tokens-empty = Sie haben noch keine Tokens.
tokens-create = Token erstellen
tokens-list-label = Ihre Tokens
tokens-owner-priority = Ihre geerbte Priorität: { $priority }
tokens-max-priority = Höchste wählbare Priorität: { $priority }
tokens-priority-disabled = Die Priorisierung von Anfragen ist derzeit ausgeschaltet. Ihre Auswahl wirkt, sobald ein Administrator sie einschaltet.

token-prefix = Beginnt mit
token-created = Erstellt
token-last-used = Zuletzt verwendet
token-expires = Läuft ab
token-status-active = Aktiv
token-status-revoked = Widerrufen
token-status-expired = Abgelaufen
token-priority-saved = Priorität gespeichert.
token-actions = Aktionen für { $name }
token-revoke = Widerrufen
token-rotate = Erneuern
token-delete = Löschen
token-revoke-confirm = „{ $name }“ widerrufen? Programme, die es verwenden, funktionieren sofort nicht mehr.
token-rotate-confirm = „{ $name }“ erneuern? Das bisherige Geheimnis wird ungültig und ein neues wird einmalig angezeigt.
token-delete-confirm = „{ $name }“ endgültig löschen?
token-revoked = Token „{ $name }“ widerrufen.
token-deleted = Token „{ $name }“ gelöscht.
token-revoked-by = Widerrufen von { $name } am { $date }.
token-revoked-on = Widerrufen am { $date }.

create-title = Token erstellen
create-name = Name
create-name-hint = Zum Beispiel das Programm oder der Rechner, der es verwenden wird.
create-priority-hint = „Erben“ folgt Ihren Gruppen. Wählen Sie für Hintergrundarbeit eine niedrigere Priorität.
create-submit = Token erstellen

secret-title = Kopieren Sie Ihr Token jetzt
secret-once = Das Token wird nur dieses eine Mal angezeigt. Bewahren Sie es sicher auf.
secret-label = Neues Token
secret-copy = Kopieren
secret-copied = In die Zwischenablage kopiert.
secret-copy-failed = Kopieren fehlgeschlagen. Markieren Sie das Token und kopieren Sie es von Hand.
secret-done = Fertig
