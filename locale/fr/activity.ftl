# Le journal de chaque requête.

activity-title = Activité
activity-intro = Les requêtes récentes avec leur priorité, leur temps d’attente et leur résultat.
activity-empty = Aucune requête enregistrée pour l’instant.
activity-filters = Filtres
activity-caption = Enregistrements d’activité, les plus récents d’abord
activity-user = Utilisateur
activity-model = Modèle
activity-class = Classe
activity-outcome = Résultat
activity-since = Depuis
activity-until = Jusqu’à
activity-any = Tous
activity-apply = Appliquer les filtres
activity-reset = Réinitialiser
activity-time = Heure
activity-backend = Serveur
activity-queue-wait = Attente en file
activity-status = Statut
activity-duration = Durée
activity-token = Jeton { $name }
activity-browser = Session du navigateur
activity-hint = Indication : { $hint }
activity-pages = Pages
activity-previous = Précédente
activity-next = Suivante
activity-page-of = Page { $page } sur { $pages } · { $count } enregistrements

outcome-immediate = Immédiat
outcome-waited = Après attente
outcome-expired = Expiré
outcome-cancelled = Annulé
outcome-rejected = Refusé
outcome-client-closed = Client parti
outcome-upstream-error = Échec du serveur
outcome-error = Erreur
outcome-unknown = Inconnu
