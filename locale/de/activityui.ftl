# Aktivitätsfilter, die Detailansicht eines Eintrags, die Verbindungsdaten neuer Tokens und das Farbschema.

activityui-page-of = Seite { $page } von { $pages } · { $count ->
    [one] { $count } Eintrag
   *[other] { $count } Einträge
}
activityui-user-placeholder = Anfang des Namens
activityui-model-placeholder = Teil des Namens
activityui-first-byte = Erstes Byte
activityui-details = Details der Anfrage
activityui-open = Details der Anfrage von { $time }
activityui-close = Schließen
activityui-surface = Schnittstelle
activityui-path = Pfad
activityui-hint = Prioritätshinweis
activityui-score = Punktzahl
activityui-input-tokens = Eingabe-Tokens
activityui-output-tokens = Ausgabe-Tokens
activityui-cached-tokens = Eingabe-Tokens aus dem Cache
activityui-error = Fehler
activityui-record-id = Eintrag

activityui-expiry = Läuft ab
activityui-expiry-never = Nie
activityui-expiry-days = { $days ->
    [one] In { $days } Tag
   *[other] In { $days } Tagen
}
activityui-expiry-hint = Ein abgelaufenes Token funktioniert nicht mehr; Sie können jederzeit ein neues anlegen.
activityui-models = Modelle
activityui-models-hint = Nichts ankreuzen für alle Modelle, die Ihre Gruppen erlauben, oder die Modelle ankreuzen, die dieses Token aufrufen darf.
activityui-models-none = Derzeit sind für Sie keine Modelle aufgeführt; das Token erreicht alle Modelle, die Ihre Gruppen erlauben.
activityui-connect = Ein Programm verbinden
activityui-base-url = Basis-URL
activityui-example = Beispiel
activityui-example-curl = curl
activityui-example-openai = OpenAI-Python-SDK
activityui-example-anthropic = Anthropic-Python-SDK
activityui-example-claude = Claude Code (Umgebungsvariablen)
activityui-example-codex = Codex CLI (~/.codex/config.toml)
activityui-example-copy = Beispiel kopieren
error-empty-allowlist = Wählen Sie mindestens ein Modell oder keines für alle Modelle, die Ihre Gruppen erlauben.

activityui-theme = Farben
activityui-theme-system = System
activityui-theme-light = Hell
activityui-theme-dark = Dunkel
