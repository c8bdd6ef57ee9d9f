# Backends und Pools.

backends-title = Backends
backends-intro = Die Modellserver hinter dem Gateway, ihre Kapazität und wie die Priorität einer Anfrage an sie weitergegeben wird.
backends-servers = Modellserver
backends-empty = Es ist noch kein Modellserver eingetragen. Fügen Sie einen hinzu, um Anfragen zu bedienen.
backend-new = Backend hinzufügen
backend-new-title = Backend hinzufügen
backend-edit-title = Backend „{ $name }“ bearbeiten
backend-save = Backend speichern
backend-saved = Backend „{ $name }“ gespeichert und übernommen.
backend-deleted = Backend „{ $name }“ gelöscht.
backend-delete-confirm = Das Backend „{ $name }“ löschen? Es erhält sofort keine Anfragen mehr.
backend-actions = Aktionen für das Backend { $name }

backend-part-connection = Verbindung
backend-part-capacity = Kapazität
backend-part-models = Modelle
backend-name = Name
backend-name-hint = Buchstaben, Ziffern, Punkte, Unter- oder Bindestriche. Beim Umbenennen bleiben alle Verweise darauf erhalten.
backend-url = Basis-URL
backend-url-hint = Die OpenAI-kompatible Adresse, meist mit /v1 am Ende.
backend-api-key = API-Schlüssel
backend-api-key-hint = Wird verschlüsselt gespeichert und nie wieder angezeigt.
backend-api-key-keep = Leer lassen, um den gespeicherten Schlüssel zu behalten.
backend-api-key-clear = Gespeicherten Schlüssel entfernen
backend-key-set = Gesetzt
backend-key-not-set = Nicht gesetzt
backend-health-path = Pfad der Zustandsprüfung
backend-health-path-hint = Zum Beispiel /health. Leer: Stattdessen wird die Modellliste abgefragt.
backend-max-inflight = Höchstzahl laufender Anfragen
backend-max-inflight-hint = Passend zur tatsächlichen Kapazität des Servers: Was ein Server schon angenommen hat, kann das Gateway nicht mehr umordnen.
backend-weight = Gewicht
backend-weight-hint = Bei der Strategie „Wenigste laufende Anfragen“ erhält ein größeres Gewicht einen größeren Anteil (1 bis 1000).
backend-enabled = Aktiviert
backend-enabled-hint = Zur Wartung ausschalten: Es werden keine neuen Anfragen gesendet.
backend-models = Bediente Modelle
backend-models-hint = Eines pro Zeile oder durch Kommas getrennt. Leer: alle Modelle, die der Server meldet.
backend-discovered = Der Server meldet: { $models }
backend-models-all-discovered = Alle gemeldeten: { $models }
backend-models-none = Noch keine gemeldet
backend-aliases = Aliasse
backend-aliases-hint = Einer pro Zeile als „Alias = bedientes Modell“.
backend-aliases-invalid = Schreiben Sie jeden Alias in eine eigene Zeile als „Alias = bedientes Modell“.
backend-pools = Pools
backend-engine = Engine
backend-not-detected = Noch nicht erkannt
backend-inflight = Laufend
backend-inflight-of = { $inflight } von { $max }
backend-healthy = Erreichbar
backend-unhealthy = Nicht erreichbar
backend-health-unknown = Zustand unbekannt
backend-disabled = Deaktiviert

backend-priority-mode = Weitergabe der Priorität
backend-priority-intro = Die Warteschlange des Gateways ordnet Anfragen nach Priorität, sobald die Priorisierung eingeschaltet ist. Zusätzlich kann die Priorität an den Modellserver weitergegeben werden, damit er auch seine eigene Warteschlange ordnet.
backend-priority-auto = Automatisch
backend-priority-auto-hint = Nur weitergeben, wenn die Erkennung belegt hat, dass der Server nach Priorität plant und in welcher Richtung.
backend-priority-gateway = Nur im Gateway
backend-priority-gateway-hint = Keine Priorität an den Server senden. Funktioniert mit jedem Server.
backend-priority-custom = Manuelle Zuordnung
backend-priority-custom-hint = Für jede Klasse eine ganze Zahl in einen Anfrageparameter Ihrer Wahl schreiben. Hat Vorrang vor der Erkennung.
backend-mapping = Manuelle Zuordnung
backend-mapping-field = Parametername
backend-mapping-field-hint = Ein Parameter auf oberster Ebene der Anfrage, zum Beispiel „priority“. Er darf weder model, messages, tools, stream noch einen Generierungsparameter ersetzen.
backend-mapping-low = Wert für Niedrig
backend-mapping-medium = Wert für Mittel
backend-mapping-high = Wert für Hoch
backend-mapping-presets = Vorlagen:
backend-preset-vllm = vLLM (kleiner läuft zuerst)
backend-preset-sglang = SGLang (größer läuft zuerst)

backend-detection = Was die Erkennung gefunden hat
backend-detection-none = Noch nichts erkannt.
backend-detection-after-save = Die Erkennung läuft, sobald das Backend gespeichert ist.
backend-detect-now = Jetzt erkennen
backend-detecting = { $name } wird erkannt …
backend-detected = Erkennung von { $name } abgeschlossen.
detection-engine = Engine
detection-version = Version
detection-priority-scheduling = Planung nach Priorität
detection-schedule-policy = Planungsstrategie
detection-low-values-first = Kleinere Werte zuerst
detection-detected-at = Erkannt
engine-generic = OpenAI-kompatibler Endpunkt
engine-unknown = Unbekannt

forwarding-custom = Weitergegeben als „{ $field }“: Niedrig { $low }, Mittel { $medium }, Hoch { $high } (manuelle Zuordnung).
forwarding-custom-incomplete = Nicht weitergegeben: Die manuelle Zuordnung braucht einen Parameternamen und für jede Klasse eine ganze Zahl.
forwarding-gateway = Nicht weitergegeben: nur im Gateway. Die Warteschlange des Gateways ordnet die Anfragen trotzdem.
forwarding-auto-unidentified = Nicht weitergegeben: Der Server wurde noch nicht erkannt.
forwarding-auto-vllm = Nicht weitergegeben: vLLM meldet seine Planungsstrategie nicht. Läuft es mit --scheduling-policy priority, verwenden Sie eine manuelle Zuordnung (Parameter „priority“, kleinere Werte zuerst).
forwarding-auto-unsupported = Nicht weitergegeben: { $engine } meldet keine Planung nach Priorität. Richten Sie eine manuelle Zuordnung ein, um sie weiterzugeben.
forwarding-sglang-flag-unreported = Nicht weitergegeben: SGLang hat nicht gemeldet, ob die Planung nach Priorität eingeschaltet ist.
forwarding-sglang-flag-off = Nicht weitergegeben: SGLang läuft ohne --enable-priority-scheduling.
forwarding-sglang-policy-unreported = Nicht weitergegeben: SGLang hat seine Planungsstrategie nicht gemeldet.
forwarding-sglang-policy-ignored = Nicht weitergegeben: Die Planungsstrategie „{ $policy }“ von SGLang beachtet keine Priorität (nötig ist fcfs oder lof).
forwarding-sglang-direction-unreported = Nicht weitergegeben: SGLang hat nicht gemeldet, ob kleinere Werte zuerst laufen.
forwarding-sglang-smaller-first = Weitergegeben als „priority“ (SGLang erkannt, kleinere Werte zuerst): Niedrig 2, Mittel 1, Hoch 0.
forwarding-sglang-larger-first = Weitergegeben als „priority“ (SGLang erkannt, größere Werte zuerst): Niedrig 0, Mittel 1, Hoch 2.

## Pools

pools-title = Pools
pools-intro = Ein Pool fasst Backends für eine Art von Anfragen zusammen und legt fest, wer sie nutzen darf.
pools-empty = Noch kein Pool. Anfragen erreichen ein Backend nur über einen Pool.
pool-new = Pool hinzufügen
pool-new-title = Pool hinzufügen
pool-edit-title = Pool „{ $name }“ bearbeiten
pool-save = Pool speichern
pool-saved = Pool „{ $name }“ gespeichert und übernommen.
pool-deleted = Pool „{ $name }“ gelöscht.
pool-delete-confirm = Den Pool „{ $name }“ löschen? Seine Backends bleiben erhalten.
pool-actions = Aktionen für den Pool { $name }
pool-name = Name
pool-name-hint = Buchstaben, Ziffern, Punkte, Unter- oder Bindestriche. Beim Umbenennen bleiben alle Verweise darauf erhalten.
pool-kind = Art
pool-kind-chat = Chat und Vervollständigung
pool-kind-embedding = Embeddings
pool-strategy = Strategie
pool-strategy-least-inflight = Wenigste laufende Anfragen
pool-strategy-least-inflight-hint = Jede Anfrage geht an das Backend mit der geringsten Last im Verhältnis zu Kapazität und Gewicht.
pool-strategy-round-robin = Reihum
pool-strategy-round-robin-hint = Die Backends kommen abwechselnd an die Reihe.
pool-strategy-prefix-affinity = Präfix-Affinität
pool-strategy-prefix-affinity-hint = Anfragen mit gleichem Anfang gehen an dasselbe Backend, damit dessen Prompt-Cache genutzt wird, soweit die Kapazität es zulässt.
pool-groups = Zugelassene Gruppen
pool-groups-hint = Kreuzen Sie die Gruppen an, deren Mitglieder diesen Pool nutzen dürfen.
pool-groups-everyone = Alle
pool-fallback = Ausweich-Pool
pool-fallback-hint = Wird genutzt, wenn alle Backends dieses Pools ausgefallen sind.
pool-fallback-none = Kein Ausweich-Pool
pool-backends = Backends
pool-backends-none = Fügen Sie zuerst ein Backend hinzu.

## How Messages and Responses are served

backend-surfaces = Wie Messages und Responses bedient werden
backend-surfaces-intro = Claude Code und das anthropic-SDK sprechen die Messages-API, Codex und die Responses des openai-SDK die Responses-API. Eine Engine, die sie selbst anbietet, erhält sie unverändert; jede andere erhält sie in Chat Completions übersetzt und zurück.
backend-surface-messages = Anthropic Messages
backend-surface-responses = OpenAI Responses
backend-surface-auto = Automatisch (nativ, wo die Engine sie anbietet)
backend-surface-native = Nativ: unverändert an die Engine
backend-surface-translate = In Chat Completions übersetzen
backend-serving-native = { $surface }: unverändert weitergereicht
backend-serving-translated = { $surface }: in Chat übersetzt
backend-surface-new = Wird beim Speichern erkannt.
backend-store-responses = Responses-Zustand für Aufrufer speichern
backend-store-responses-hint = Lässt eine Engine, die die Responses-API selbst bedient, gespeicherte Antworten und Unterhaltungen behalten (store, previous_response_id). Jede gespeicherte ID bleibt beim Aufrufer, der sie erzeugt hat; der Speicher der Engine enthält trotzdem die Texte aller Aufrufer, also nur für eine Engine einschalten, deren Speicher Sie vertrauen. Aus: Das Gateway sendet store: false und lehnt Anfragen ab, die Zustand brauchen.

## Das Limit gleichzeitiger Anfragen: fest oder von der Engine gelernt (max_inflight auto)

backend-concurrency = Limit gleichzeitiger Anfragen
backend-concurrency-fixed = Fest
backend-concurrency-fixed-hint = Sie legen fest, wie viele Anfragen der Server gleichzeitig erhält.
backend-concurrency-auto = Von der Engine gelernt (auto)
backend-concurrency-auto-hint = Das Limit folgt der eigenen Warteschlange der Engine, ihrem KV-Cache und der Latenz, immer zwischen Untergrenze und Obergrenze.
backend-capacity-floor = Untergrenze
backend-capacity-floor-hint = Auto geht nie darunter, auch wenn die Engine voll ist oder ihre Metriken veraltet sind.
backend-capacity-ceiling = Obergrenze
backend-capacity-ceiling-hint = Auto geht nie darüber, wie viel Platz die Engine auch meldet.
backend-capacity-bounds-invalid = Die Untergrenze ({ $floor }) darf nicht über der Obergrenze ({ $ceiling }) liegen.
capacity-auto = automatisch
capacity-auto-range = automatisch ({ $floor }–{ $ceiling })
capacity-not-learned = Gelerntes Limit noch nicht bekannt.
capacity-learned = Gelerntes Limit { $limit }, { $reason }
capacity-reason-metrics = aus den Metriken der Engine
capacity-reason-latency = aus der Latenz (ohne Metriken)
capacity-reason-stale = Metriken veraltet: wird gehalten
capacity-reason-floor = an der Untergrenze
capacity-reason-ceiling = an der Obergrenze
capacity-engine = Engine: laufend { $running }, wartend { $waiting }, KV-Cache { $kv }
capacity-engine-unread = Die Metriken der Engine wurden noch nicht gelesen.
capacity-kv-unreported = nicht gemeldet
capacity-kv-percent = { $percent } %
capacity-metrics-error = Metriken unbrauchbar: { $error }

## Reservierte Reserve: die letzten Plätze, freigehalten vor niedrigeren Klassen

backend-headroom = Reservierte Reserve
backend-headroom-hint = Kam zuletzt eine Anfrage einer höheren Klasse für dieses Backend (Einstellungen: „Reservierte Reserve gilt für“), bleiben seine letzten Plätze den niedrigeren Klassen verwehrt; sonst darf jede Klasse alle nutzen.
backend-headroom-low = Plätze freigehalten vor Niedrig
backend-headroom-medium = Plätze freigehalten vor Mittel
backend-headroom-order-invalid = Vor Niedrig müssen mindestens so viele Plätze freigehalten werden ({ $low }) wie vor Mittel ({ $medium }): Eine niedrigere Klasse weicht zuerst.
backend-headroom-kept = Für höhere Klassen freigehalten
backend-headroom-kept-low = { $slots ->
    [one] { $slots } Platz vor Niedrig
   *[other] { $slots } Plätze vor Niedrig
}
backend-headroom-kept-medium = { $slots ->
    [one] { $slots } Platz vor Mittel
   *[other] { $slots } Plätze vor Mittel
}
