# Was vom eigenen Kontingent übrig ist, im Nutzungsbereich der Token-Seite.

my-allowance-title = Was von Ihrem Kontingent übrig ist
my-allowance-intro = Gezählt in festen Zeiträumen in UTC: Minute, Tag, Monat. Eine laufende Anfrage hält bis zu ihrem Ende das Höchste zurück, das sie verbrauchen kann.
my-allowance-mine = Ihre Grenzen (alle Ihre Tokens zusammen)
my-allowance-token = Eigene Grenzen des Tokens „{ $name }“
my-allowance-unlimited = Keine Grenzen: Sie dürfen so viel nutzen, wie Sie wollen.
my-allowance-limit = Grenze
my-allowance-used = Verbraucht
my-allowance-remaining = Übrig
my-allowance-resets = Zurückgesetzt um
my-allowance-of = { $used } von { $limit }
my-allowance-held = von laufenden Anfragen zurückgehalten: { $amount }
my-allowance-unknown = derzeit nicht bekannt
