# Anmelden und Abmelden.

login-title = Anmelden
login-intro = Melden Sie sich mit Ihrem aiplane-Konto an.
login-username = Benutzername
login-password = Passwort
login-submit = Anmelden
login-failed = Benutzername oder Passwort ist falsch, oder das Konto ist deaktiviert.
login-missing = Geben Sie Benutzername und Passwort ein.
login-signed-out = Sie wurden abgemeldet.
login-too-many = { $minutes ->
    [one] Zu viele fehlgeschlagene Anmeldeversuche. Versuchen Sie es in einer Minute erneut.
   *[other] Zu viele fehlgeschlagene Anmeldeversuche. Versuchen Sie es in { $minutes } Minuten erneut.
}
