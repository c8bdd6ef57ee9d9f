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
