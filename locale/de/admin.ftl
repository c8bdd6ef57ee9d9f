# Verwaltung: Einstellungen, Gruppen, Benutzer, alle Tokens.

admin-settings-title = Einstellungen
admin-settings-intro = Betriebseinstellungen: Priorisierung von Anfragen, die Standardpriorität des Systems und wie lange Anfragen auf freie Kapazität warten dürfen.
admin-groups-title = Gruppen
admin-groups-intro = Gateway-Gruppen legen fest, wer welche Modelle nutzen darf, wer aiplane verwaltet und welche Priorität ihre Mitglieder haben.
admin-users-title = Benutzer
admin-users-intro = Lokale Konten, die sich bei aiplane anmelden können.
admin-tokens-title = Alle Tokens
admin-tokens-intro = Jedes API-Token mit seinem Besitzer und seiner Priorität.

admin-section-access = Zugriff
admin-section-gateway = Gateway
setting-priority-enabled = Priorisierung von Anfragen einschalten
setting-priority-default = Standardpriorität des Systems
setting-upstream-wait = Wartezeit in Sekunden
