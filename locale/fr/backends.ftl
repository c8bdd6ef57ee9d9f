# Serveurs de modèles et pools.

backends-title = Serveurs de modèles
backends-intro = Les serveurs de modèles derrière la passerelle, leur capacité et la façon dont la priorité des requêtes leur est transmise.
backends-servers = Serveurs enregistrés
backends-empty = Aucun serveur de modèles n’est encore enregistré. Ajoutez-en un pour commencer à servir des requêtes.
backend-new = Ajouter un serveur
backend-new-title = Ajouter un serveur
backend-edit-title = Modifier le serveur « { $name } »
backend-save = Enregistrer le serveur
backend-saved = Serveur « { $name } » enregistré et appliqué.
backend-deleted = Serveur « { $name } » supprimé.
backend-delete-confirm = Supprimer le serveur « { $name } » ? Il ne reçoit plus aucune requête dès maintenant.
backend-actions = Actions pour le serveur { $name }

backend-part-connection = Connexion
backend-part-capacity = Capacité
backend-part-models = Modèles
backend-name = Nom
backend-name-hint = Lettres, chiffres, points, traits de soulignement ou tirets. Le renommer conserve toutes les références.
backend-url = URL de base
backend-url-hint = L’adresse compatible OpenAI, qui se termine en général par /v1.
backend-api-key = Clé d’API
backend-api-key-hint = Stockée chiffrée et plus jamais affichée.
backend-api-key-keep = Laissez vide pour garder la clé enregistrée.
backend-api-key-clear = Retirer la clé enregistrée
backend-key-set = Définie
backend-key-not-set = Non définie
backend-health-path = Chemin du contrôle de santé
backend-health-path-hint = Par exemple /health. Vide : la liste des modèles est interrogée à la place.
backend-max-inflight = Nombre maximal de requêtes en cours
backend-max-inflight-hint = À régler sur la capacité réelle du serveur : la passerelle ne peut pas réordonner les requêtes qu’un serveur a déjà acceptées.
backend-weight = Poids
backend-weight-hint = Avec la stratégie « Le moins de requêtes en cours », un poids plus grand reçoit une plus grande part (1 à 1000).
backend-enabled = Activé
backend-enabled-hint = À désactiver pour une maintenance : aucune nouvelle requête n’est envoyée.
backend-models = Modèles servis
backend-models-hint = Un par ligne ou séparés par des virgules. Vide : tous les modèles que le serveur annonce.
backend-discovered = Le serveur annonce : { $models }
backend-models-all-discovered = Tous ceux annoncés : { $models }
backend-models-none = Aucun annoncé pour l’instant
backend-aliases = Alias
backend-aliases-hint = Un par ligne, sous la forme « alias = modèle servi ».
backend-aliases-invalid = Écrivez chaque alias sur sa propre ligne, sous la forme « alias = modèle servi ».
backend-pools = Pools
backend-engine = Moteur
backend-not-detected = Pas encore identifié
backend-inflight = En cours
backend-inflight-of = { $inflight } sur { $max }
backend-healthy = Joignable
backend-unhealthy = Injoignable
backend-health-unknown = État inconnu
backend-disabled = Désactivé

backend-priority-mode = Transmission de la priorité
backend-priority-intro = La file d’attente de la passerelle ordonne les requêtes par priorité dès que la priorisation est activée. La priorité peut en plus être transmise au serveur de modèles pour qu’il ordonne aussi sa propre file.
backend-priority-auto = Automatique
backend-priority-auto-hint = Ne transmettre que si la détection a prouvé que le serveur ordonnance par priorité, et dans quel sens.
backend-priority-gateway = Passerelle uniquement
backend-priority-gateway-hint = N’envoyer aucune priorité au serveur. Fonctionne avec tous les serveurs.
backend-priority-custom = Correspondance manuelle
backend-priority-custom-hint = Placer un nombre entier par classe dans un paramètre de requête de votre choix. Prime sur la détection.
backend-mapping = Correspondance manuelle
backend-mapping-field = Nom du paramètre
backend-mapping-field-hint = Un paramètre de premier niveau de la requête, par exemple « priority ». Il ne peut remplacer ni model, ni messages, ni tools, ni stream, ni un réglage de génération.
backend-mapping-low = Valeur pour basse
backend-mapping-medium = Valeur pour moyenne
backend-mapping-high = Valeur pour haute
backend-mapping-presets = Modèles prêts à l’emploi :
backend-preset-vllm = vLLM (le plus petit passe d’abord)
backend-preset-sglang = SGLang (le plus grand passe d’abord)

backend-detection = Ce que la détection a trouvé
backend-detection-none = Rien de détecté pour l’instant.
backend-detection-after-save = La détection s’exécute une fois le serveur enregistré.
backend-detect-now = Détecter maintenant
backend-detecting = Détection de { $name }…
backend-detected = Détection de { $name } terminée.
detection-engine = Moteur
detection-version = Version
detection-priority-scheduling = Ordonnancement par priorité
detection-schedule-policy = Politique d’ordonnancement
detection-low-values-first = Petites valeurs d’abord
detection-detected-at = Détecté le
engine-generic = Point d’accès compatible OpenAI
engine-unknown = Inconnu

forwarding-custom = Transmise comme « { $field } » : basse { $low }, moyenne { $medium }, haute { $high } (correspondance manuelle).
forwarding-custom-incomplete = Non transmise : la correspondance manuelle demande un nom de paramètre et un nombre entier pour chaque classe.
forwarding-gateway = Non transmise : passerelle uniquement. La file de la passerelle ordonne tout de même les requêtes.
forwarding-auto-unidentified = Non transmise : le serveur n’a pas encore été identifié.
forwarding-auto-vllm = Non transmise : vLLM n’indique pas sa politique d’ordonnancement. S’il tourne avec --scheduling-policy priority, utilisez une correspondance manuelle (paramètre « priority », petites valeurs d’abord).
forwarding-auto-unsupported = Non transmise : { $engine } n’indique pas d’ordonnancement par priorité. Configurez une correspondance manuelle pour la transmettre.
forwarding-sglang-flag-unreported = Non transmise : SGLang n’a pas indiqué si l’ordonnancement par priorité est activé.
forwarding-sglang-flag-off = Non transmise : SGLang tourne sans --enable-priority-scheduling.
forwarding-sglang-policy-unreported = Non transmise : SGLang n’a pas indiqué sa politique d’ordonnancement.
forwarding-sglang-policy-ignored = Non transmise : la politique « { $policy } » de SGLang ignore la priorité (il faut fcfs ou lof).
forwarding-sglang-direction-unreported = Non transmise : SGLang n’a pas indiqué si les petites valeurs passent d’abord.
forwarding-sglang-smaller-first = Transmise comme « priority » (SGLang détecté, petites valeurs d’abord) : basse 2, moyenne 1, haute 0.
forwarding-sglang-larger-first = Transmise comme « priority » (SGLang détecté, grandes valeurs d’abord) : basse 0, moyenne 1, haute 2.

## Pools

pools-title = Pools
pools-intro = Un pool regroupe des serveurs pour un type de requête et décide qui peut les utiliser.
pools-empty = Aucun pool pour l’instant. Les requêtes n’atteignent un serveur qu’à travers un pool.
pool-new = Ajouter un pool
pool-new-title = Ajouter un pool
pool-edit-title = Modifier le pool « { $name } »
pool-save = Enregistrer le pool
pool-saved = Pool « { $name } » enregistré et appliqué.
pool-deleted = Pool « { $name } » supprimé.
pool-delete-confirm = Supprimer le pool « { $name } » ? Ses serveurs sont conservés.
pool-actions = Actions pour le pool { $name }
pool-name = Nom
pool-name-hint = Lettres, chiffres, points, traits de soulignement ou tirets. Le renommer conserve toutes les références.
pool-kind = Type
pool-kind-chat = Conversation et complétion
pool-kind-embedding = Plongements (embeddings)
pool-strategy = Stratégie
pool-strategy-least-inflight = Le moins de requêtes en cours
pool-strategy-least-inflight-hint = Chaque requête va au serveur le moins chargé par rapport à sa capacité et à son poids.
pool-strategy-round-robin = Tourniquet
pool-strategy-round-robin-hint = Les serveurs passent à tour de rôle.
pool-strategy-prefix-affinity = Affinité de préfixe
pool-strategy-prefix-affinity-hint = Les requêtes qui commencent de la même façon vont au même serveur, pour réutiliser son cache d’invite quand la capacité le permet.
pool-groups = Groupes autorisés
pool-groups-hint = Cochez les groupes dont les membres peuvent utiliser ce pool.
pool-groups-everyone = Tout le monde
pool-fallback = Pool de secours
pool-fallback-hint = Utilisé quand tous les serveurs de ce pool sont hors ligne.
pool-fallback-none = Aucun secours
pool-backends = Serveurs
pool-backends-none = Ajoutez d’abord un serveur.

## How Messages and Responses are served

backend-surfaces = Comment Messages et Responses sont servis
backend-surfaces-intro = Claude Code et le SDK anthropic parlent l’API Messages ; Codex et les responses du SDK openai parlent l’API Responses. Un moteur qui les sert lui-même les reçoit tels quels ; tout autre les reçoit traduits en chat completions et retour.
backend-surface-messages = Anthropic Messages
backend-surface-responses = OpenAI Responses
backend-surface-auto = Automatique (natif là où le moteur la sert)
backend-surface-native = Natif : transmis tel quel au moteur
backend-surface-translate = Traduire en chat completions
backend-serving-native = { $surface } : transmis tel quel
backend-serving-translated = { $surface } : traduit en chat
backend-surface-new = Détecté à l’enregistrement.
backend-store-responses = Conserver l’état Responses pour les appelants
backend-store-responses-hint = Permet à un moteur qui sert lui-même l’API Responses de conserver les réponses et conversations enregistrées (store, previous_response_id). Chaque identifiant enregistré reste à l’appelant qui l’a créé ; le stockage du moteur contient malgré tout les textes de tous les appelants : ne l’activez que pour un moteur dont vous faites confiance au stockage. Désactivé, la passerelle envoie store: false et refuse les requêtes qui ont besoin d’un état.

## La limite de requêtes simultanées : fixe, ou apprise du moteur (max_inflight auto)

backend-concurrency = Limite de requêtes simultanées
backend-concurrency-fixed = Fixe
backend-concurrency-fixed-hint = Vous fixez combien de requêtes le serveur reçoit à la fois.
backend-concurrency-auto = Apprise du moteur (auto)
backend-concurrency-auto-hint = La limite suit la file d’attente propre du moteur, son cache KV et la latence, toujours entre le plancher et le plafond.
backend-capacity-floor = Plancher
backend-capacity-floor-hint = Le mode auto ne descend jamais en dessous, même quand le moteur est plein ou que ses métriques sont périmées.
backend-capacity-ceiling = Plafond
backend-capacity-ceiling-hint = Le mode auto ne monte jamais au-dessus, quelle que soit la place que le moteur annonce.
backend-capacity-bounds-invalid = Le plancher ({ $floor }) ne doit pas dépasser le plafond ({ $ceiling }).
capacity-auto = automatique
capacity-auto-range = automatique ({ $floor }–{ $ceiling })
capacity-not-learned = Limite apprise pas encore connue.
capacity-learned = Limite apprise { $limit }, { $reason }
capacity-reason-metrics = d’après les métriques du moteur
capacity-reason-latency = d’après la latence (sans métriques)
capacity-reason-stale = métriques périmées : limite maintenue
capacity-reason-floor = au plancher
capacity-reason-ceiling = au plafond
capacity-engine = Moteur : en cours { $running }, en attente { $waiting }, cache KV { $kv }
capacity-engine-unread = Les métriques du moteur n’ont pas encore été lues.
capacity-kv-unreported = non indiqué
capacity-kv-percent = { $percent } %
capacity-metrics-error = Métriques inutilisables : { $error }

## Réserve : les dernières places refusées aux classes inférieures quand une classe supérieure arrive

backend-headroom = Réserve
backend-headroom-hint = Tant qu’une requête d’une classe supérieure est arrivée récemment pour ce serveur (Paramètres : « Durée de la réserve »), ses dernières places sont refusées aux classes inférieures ; sinon, chaque classe peut toutes les utiliser.
backend-headroom-low = Places refusées à la classe basse
backend-headroom-medium = Places refusées à la classe moyenne
backend-headroom-order-invalid = Les places refusées à la classe basse ({ $low }) doivent être au moins aussi nombreuses que celles refusées à la classe moyenne ({ $medium }) : une classe inférieure cède la première.
backend-headroom-kept = Gardé pour les classes supérieures
backend-headroom-kept-low = { $slots ->
    [one] { $slots } place refusée à la classe basse
   *[other] { $slots } places refusées à la classe basse
}
backend-headroom-kept-medium = { $slots ->
    [one] { $slots } place refusée à la classe moyenne
   *[other] { $slots } places refusées à la classe moyenne
}
