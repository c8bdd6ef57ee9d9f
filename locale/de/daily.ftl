# Tägliche Administration: Sperre nach falschen Passwörtern auf der Kontoseite.

daily-password-locked = Zu viele falsche Passwörter. Warten Sie einige Minuten und versuchen Sie es erneut.
