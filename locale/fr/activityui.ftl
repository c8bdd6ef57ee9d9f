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
