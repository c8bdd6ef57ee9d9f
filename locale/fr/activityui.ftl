# Filtres de l’activité, le détail d’un enregistrement, les informations de connexion des jetons et le thème de couleurs.

activityui-page-of = Page { $page } sur { $pages } · { $count ->
    [one] { $count } enregistrement
    [many] { $count } d’enregistrements
   *[other] { $count } enregistrements
}
activityui-user-placeholder = Début du nom
activityui-model-placeholder = Partie du nom
activityui-first-byte = Premier octet
activityui-details = Détails de la requête
activityui-open = Détails de la requête du { $time }
activityui-close = Fermer
activityui-surface = Interface
activityui-path = Chemin
activityui-hint = Indication de priorité
activityui-score = Score
activityui-input-tokens = Jetons en entrée
activityui-output-tokens = Jetons en sortie
activityui-cached-tokens = Jetons d’entrée du cache
activityui-error = Erreur
activityui-record-id = Enregistrement

activityui-expiry = Expiration
activityui-expiry-never = Jamais
activityui-expiry-days = { $days ->
    [one] Dans { $days } jour
   *[other] Dans { $days } jours
}
activityui-expiry-hint = Un jeton expiré cesse de fonctionner ; vous pouvez en créer un autre à tout moment.
activityui-models = Modèles
activityui-models-hint = Ne cochez rien pour tous les modèles que vos groupes autorisent, ou cochez ceux que ce jeton peut appeler.
activityui-models-none = Aucun modèle ne vous est proposé pour l’instant ; le jeton atteindra tous les modèles que vos groupes autorisent.
activityui-connect = Connecter un programme
activityui-base-url = URL de base
activityui-example = Exemple
activityui-example-curl = curl
activityui-example-openai = SDK Python d’OpenAI
activityui-example-anthropic = SDK Python d’Anthropic
activityui-example-claude = Claude Code (variables d’environnement)
activityui-example-codex = Codex CLI (~/.codex/config.toml)
activityui-example-copy = Copier l’exemple
error-empty-allowlist = Choisissez au moins un modèle, ou aucun pour tous les modèles que vos groupes autorisent.

activityui-theme = Couleurs
activityui-theme-system = Système
activityui-theme-light = Clair
activityui-theme-dark = Sombre
