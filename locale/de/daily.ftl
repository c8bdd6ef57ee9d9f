# Tägliche Administration: Sperre nach falschen Passwörtern, Aufbewahrung des Audit-Protokolls, Tooltip des Farbschalters.

daily-password-locked = Zu viele falsche Passwörter. Warten Sie einige Minuten und versuchen Sie es erneut.

setting-audit-retention-days = Audit-Einträge aufbewahren (Tage)
setting-audit-retention-days-hint = Ältere Einträge des Audit-Protokolls werden stündlich gelöscht.

daily-theme-tooltip = Farben der Seiten: hell, dunkel oder wie Ihr System es vorgibt
