# Le journal des requêtes.

activity-title = Activité
activity-intro = Les requêtes récentes avec leur priorité, leur temps d’attente et leur résultat.
activity-empty = Aucune requête enregistrée pour l’instant.
